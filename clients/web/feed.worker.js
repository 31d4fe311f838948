// The worker behind feed.js: it reads big messages off the page's main thread, and holds
// the sockets of big boards, whose messages (a whole-board cascade is megabytes of text)
// never reach the main thread as text at all. What it reads goes back with its cells in
// typed arrays that are moved, not copied.
//
// From the page: { op: "decode", id, text }, { op: "open", id, url }, { op: "send", id,
// data }, { op: "close", id, code }. To the page: { id, message } for a decode, and
// { id, event: "open" | "message" | "close", message, code } for a socket.

import { readMessage, transferables } from "./diffs.js";

const sockets = new Map();

function read(text) {
  try {
    return readMessage(text);
  } catch {
    return null; // not JSON: the session drops what it cannot read
  }
}

self.onmessage = (event) => {
  const { op, id } = event.data;
  if (op === "decode") {
    const message = read(event.data.text);
    self.postMessage({ id, message }, transferables(message));
  } else if (op === "open") {
    const ws = new WebSocket(event.data.url);
    sockets.set(id, ws);
    ws.onopen = () => self.postMessage({ id, event: "open" });
    ws.onmessage = (e) => {
      const message = typeof e.data === "string" ? read(e.data) : null;
      self.postMessage({ id, event: "message", message }, transferables(message));
    };
    ws.onclose = (e) => {
      sockets.delete(id);
      self.postMessage({ id, event: "close", code: e.code });
    };
  } else if (op === "send") {
    sockets.get(id)?.send(event.data.data);
  } else if (op === "close") {
    const ws = sockets.get(id);
    sockets.delete(id);
    try {
      ws?.close(event.data.code);
    } catch {
      // Closing a socket that never opened can throw; it is gone either way.
    }
  }
};
