// The cells a change lists, in every form the page gets them: the service's `cells`
// ([x, y, chars] entries, in a diff, a replay's move or a replay's start, where `chars` is
// one cell's character or, in a big change, a run of them along row y from x), or
// `packed` (one entry a cell as three typed arrays, made off the main thread from a big
// message's text). This is the one place that reads those forms: everything that applies
// or counts a change's cells goes through `changedCells`. A view's board (rows of
// characters) may come packed too, as one array of character codes (`boardCodes`).
//
// No DOM here: the worker that reads big messages (feed.worker.js) and node's test
// runner load this module as the page does.

/** A message this long (in characters) is decoded off the main thread. */
export const BIG_MESSAGE = 256 * 1024;

const OPEN = "[".charCodeAt(0);
const CLOSE = "]".charCodeAt(0);
const COMMA = ",".charCodeAt(0);
const QUOTE = '"'.charCodeAt(0);
const BACKSLASH = "\\".charCodeAt(0);
const ZERO = "0".charCodeAt(0);
const NINE = "9".charCodeAt(0);
const CELLS_KEY = '"cells":[';

/** How many cells the entries `cells` list (a run lists several). */
function countCells(cells) {
  let n = 0;
  for (const entry of cells) n += entry[2].length;
  return n;
}

/** `cells` as [x, y, chars] entries, packed a cell each as { x, y, code, length }. */
export function pack(cells) {
  const n = countCells(cells);
  const packed = { x: new Int32Array(n), y: new Int32Array(n), code: new Uint8Array(n), length: n };
  let k = 0;
  for (const [x, y, chars] of cells) {
    for (let j = 0; j < chars.length; j++, k++) {
      packed.x[k] = x + j;
      packed.y[k] = y;
      packed.code[k] = chars.charCodeAt(j);
    }
  }
  return packed;
}

/** The cells `change` lists, packed: columns, rows and view characters' codes. */
export function changedCells(change) {
  return change.packed ?? pack(change.cells);
}

/** How many cells `change` lists. */
export function cellCount(change) {
  return change.packed ? change.packed.length : countCells(change.cells);
}

/** The view character of the first cell `change` lists, or null when it lists none. */
export function firstChar(change) {
  if (change.packed) return change.packed.length ? String.fromCharCode(change.packed.code[0]) : null;
  return change.cells.length ? change.cells[0][2][0] : null;
}

/** A view's board as one array of character codes, row after row. */
export function boardCodes(view) {
  if (view.packed) return view.packed;
  const { width, height } = view;
  const codes = new Uint8Array(width * height);
  view.board.forEach((row, y) => {
    for (let x = 0, i = y * width; x < width; x++, i++) codes[i] = row.charCodeAt(x);
  });
  return codes;
}

/**
 * Read the `[[x,y,"chars"],...]` list that starts at `from` in `text`, as the service
 * writes it, a cell per character of a run. Returns { packed, end } (`end` just past its
 * closing bracket), or null when the text is not in that exact shape.
 */
function scanCells(text, from) {
  let capacity = 1024;
  let xs = new Int32Array(capacity);
  let ys = new Int32Array(capacity);
  let codes = new Uint8Array(capacity);
  let n = 0;
  let i = from;
  const number = () => {
    let c = text.charCodeAt(i);
    if (c < ZERO || c > NINE) return -1;
    let v = 0;
    while (c >= ZERO && c <= NINE) {
      v = v * 10 + (c - ZERO);
      c = text.charCodeAt(++i);
    }
    return v;
  };
  const grow = (a, T) => {
    const b = new T(capacity);
    b.set(a);
    return b;
  };
  if (text.charCodeAt(i) === CLOSE) return { packed: { x: xs.subarray(0, 0), y: ys.subarray(0, 0), code: codes.subarray(0, 0), length: 0 }, end: i + 1 };
  for (;;) {
    if (text.charCodeAt(i++) !== OPEN) return null;
    const x = number();
    if (x < 0 || text.charCodeAt(i++) !== COMMA) return null;
    const y = number();
    if (y < 0 || text.charCodeAt(i++) !== COMMA) return null;
    if (text.charCodeAt(i++) !== QUOTE) return null;
    const start = i;
    for (let c = text.charCodeAt(i); c !== QUOTE; c = text.charCodeAt(++i)) {
      if (c === BACKSLASH || Number.isNaN(c)) return null; // escapes: the slow way
    }
    const run = i - start;
    if (run === 0 || text.charCodeAt(i + 1) !== CLOSE) return null;
    while (n + run > capacity) {
      capacity *= 2;
      xs = grow(xs, Int32Array);
      ys = grow(ys, Int32Array);
      codes = grow(codes, Uint8Array);
    }
    for (let j = 0; j < run; j++, n++) {
      xs[n] = x + j;
      ys[n] = y;
      codes[n] = text.charCodeAt(start + j);
    }
    i += 2;
    const next = text.charCodeAt(i++);
    if (next === CLOSE) break;
    if (next !== COMMA) return null;
  }
  return { packed: { x: xs.slice(0, n), y: ys.slice(0, n), code: codes.slice(0, n), length: n }, end: i };
}

/**
 * A message from the game's socket, read from its text. A diff's cells (also inside a
 * `result`) come back `packed`, with `cells` left empty: reading a million small arrays
 * with JSON.parse takes seconds, scanning them takes a fraction of that.
 */
export function readMessage(text) {
  if (text.startsWith('{"type":"snapshot"')) {
    const message = JSON.parse(text);
    const view = message.game;
    if (view && Array.isArray(view.board) && view.width * view.height >= 4096) {
      view.packed = boardCodes(view);
      view.board = [];
    }
    return message;
  }
  const at = text.indexOf(CELLS_KEY);
  if (at >= 0) {
    const scanned = scanCells(text, at + CELLS_KEY.length);
    if (scanned) {
      const message = JSON.parse(`${text.slice(0, at)}"cells":[]${text.slice(scanned.end)}`);
      const diff = message.type === "result" ? message.diff : message;
      if (diff && Array.isArray(diff.cells)) {
        diff.packed = scanned.packed;
        return message;
      }
    }
  }
  return JSON.parse(text);
}

/** The buffers of a read message's packed cells: moved, not copied, between threads. */
export function transferables(message) {
  if (message && message.type === "snapshot") return message.game?.packed ? [message.game.packed.buffer] : [];
  const diff = message && (message.type === "result" ? message.diff : message);
  const p = diff && diff.packed;
  return p ? [p.x.buffer, p.y.buffer, p.code.buffer] : [];
}
