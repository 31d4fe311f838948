// How the page gets a game's live messages without holding up its main thread. Small
// boards keep their socket on the page (a move's answer comes back without a thread hop),
// and a big message that reaches the page is read in a worker. Big boards' sockets live in
// the worker itself: their messages (a whole-board cascade is megabytes of cells) are read
// there and reach the page as messages with their cells in typed arrays. Either way the
// session gets every message in the order it came.

import { BIG_MESSAGE, readMessage } from "./diffs.js";

/** Boards at least this big have their socket in the worker. */
export const BIG_BOARD = 250_000;

let worker = null;
let lastId = 0;
const waiting = new Map(); // decode id -> resolve
const sockets = new Map(); // socket id -> WorkerSocket

function startWorker() {
  if (worker !== null) return worker;
  try {
    worker = new Worker(new URL("./feed.worker.js", import.meta.url), { type: "module" });
    worker.onmessage = ({ data }) => {
      if (data.event) {
        sockets.get(data.id)?.take(data);
        return;
      }
      waiting.get(data.id)?.(data.message);
      waiting.delete(data.id);
    };
    worker.onerror = () => {
      // The worker could not start (or died): read everything here from now on.
      worker = false;
      for (const resolve of waiting.values()) resolve(undefined);
      waiting.clear();
      for (const socket of sockets.values()) socket.take({ event: "close", code: 1006 });
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

/**
 * A message from what a socket delivered: already read (a worker's socket), read here
 * (small), or a promise of it, read in the worker (big). Null: unreadable.
 */
export function decode(data) {
  if (typeof data !== "string") return data && typeof data === "object" && data.type ? data : null;
  if (data.length < BIG_MESSAGE) return readHere(data);
  const w = startWorker();
  if (!w) return readHere(data);
  const id = ++lastId;
  return new Promise((resolve) => {
    waiting.set(id, (message) => resolve(message === undefined ? readHere(data) : message));
    w.postMessage({ op: "decode", id, text: data });
  });
}

/** A socket held by the worker, used as the session uses a WebSocket. */
class WorkerSocket {
  constructor(w, url) {
    this.worker = w;
    this.id = ++lastId;
    this.closed = false;
    this.onopen = this.onmessage = this.onclose = this.onerror = null;
    sockets.set(this.id, this);
    w.postMessage({ op: "open", id: this.id, url });
  }

  send(data) {
    if (this.closed) throw new Error("the socket is closed");
    this.worker.postMessage({ op: "send", id: this.id, data });
  }

  close(code = 1000) {
    if (this.closed) return;
    this.closed = true;
    sockets.delete(this.id);
    this.worker.postMessage({ op: "close", id: this.id, code });
  }

  take({ event, message, code }) {
    if (event === "open") this.onopen?.();
    else if (event === "message") this.onmessage?.({ data: message });
    else if (event === "close") {
      this.closed = true;
      sockets.delete(this.id);
      this.onclose?.({ code });
    }
  }
}

/** How a board of `size` cells opens its socket: in the worker when it is big. */
export function connectFor(size) {
  return (url) => {
    const w = size >= BIG_BOARD ? startWorker() : false;
    return w ? new WorkerSocket(w, url) : new WebSocket(url);
  };
}
