// Reads the big messages of a game's socket off the main thread (see diffs.js), so a
// whole-board change never holds up the page: the text comes in, the message goes back
// with its cells in typed arrays that are moved, not copied.

import { readMessage, transferables } from "./diffs.js";

self.onmessage = (event) => {
  const { id, text } = event.data;
  let message = null;
  try {
    message = readMessage(text);
  } catch {
    // Not JSON: the session drops what it cannot read.
  }
  self.postMessage({ id, message }, transferables(message));
};
