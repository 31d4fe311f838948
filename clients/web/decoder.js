// How the page reads what its game's socket brings: small messages at once, big ones
// (a whole-board cascade is megabytes of cells) in a worker, so the page keeps painting
// while they are read. The session keeps the order messages came in either way.

import { BIG_MESSAGE, readMessage } from "./diffs.js";

let worker = null;
let lastId = 0;
const waiting = new Map();

function startWorker() {
  if (worker !== null) return worker;
  try {
    worker = new Worker(new URL("./decode.worker.js", import.meta.url), { type: "module" });
    worker.onmessage = (event) => {
      const { id, message } = event.data;
      waiting.get(id)?.(message);
      waiting.delete(id);
    };
    worker.onerror = () => {
      // The worker could not start (or died): read everything here from now on.
      worker = false;
      for (const resolve of waiting.values()) resolve(undefined);
      waiting.clear();
    };
  } catch {
    worker = false;
  }
  return worker;
}

function readHere(text) {
  try {
    return readMessage(text);
  } catch {
    return null;
  }
}

/** A message from its text: the message itself, or a promise of it for a big one (null: unreadable). */
export function decode(text) {
  if (typeof text !== "string" || text.length < BIG_MESSAGE) return readHere(text);
  const w = startWorker();
  if (!w) return readHere(text);
  const id = ++lastId;
  return new Promise((resolve) => {
    waiting.set(id, (message) => resolve(message === undefined ? readHere(text) : message));
    w.postMessage({ id, text });
  });
}
