// The minefield: painted on a canvas (boardview.js), named for assistive technology by an
// ARIA grid laid over it, and the translation of mouse, touch and keyboard input into
// three intents: `primary` (reveal, or chord on a satisfied number), `secondary` (flag)
// and `chord`.
//
// The grid's cells are transparent elements exactly over the cells they name, with a
// label such as "2 mines around, row 3, column 5" and a roving tabindex. A board of up to
// FULL_GRID cells has an element for every cell; a bigger one has elements for the cells
// in view (at most WINDOW_CELLS of them) and for the focused cell, with aria-rowindex and
// aria-colindex saying where they are, so any board the service accepts can be played.
//
// Mouse: left press shows the cell pressed and acts on release over the same cell
// (moving away cancels); right press flags at once; both buttons, or the middle button,
// press the 3x3 block and chord on release; Ctrl + wheel zooms.
// Touch: a tap is primary, a long press is secondary (swapped in flag mode); a drag pans
// the board, two fingers pinch-zoom it. Cells too small to hit: a click or tap zooms in.
// Keyboard: arrows, Home/End, PageUp/PageDown, Ctrl+Home/End move; Space/Enter is
// primary, F is secondary, C chords; + and - zoom.
//
// The rest of the page uses only: show, fit, clear, update (the cells a change touched),
// refreshAll, mark / unmark, setPending, nudge, focus, cursorTo, and the flagMode and
// readonly fields.

import { BoardView, MANY_CELLS, minPlayableCell } from "./boardview.js";
import { cellPlace, cellStateText } from "./cellwords.js";

export const FULL_GRID = 2500;
const WINDOW_CELLS = 1600;
// The view rests when it has not moved for this long (ms): the grid's elements follow it.
const WINDOW_REST_MS = 100;
const LONG_PRESS_MS = 420;
const TAP_SLOP_PX = 10;
const NUDGE_MS = 320;

const CLASS_OF = {
  "#": "hidden",
  F: "hidden flag",
  "?": "hidden question",
  "*": "open mine",
  X: "open mine exploded",
  "!": "open wrong",
};

const reducedMotion = () => matchMedia("(prefers-reduced-motion: reduce)").matches;
const attr = (text) => text.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;");

/**
 * The box of the opened cells (a daily board's open start), in cells: [x0, y0, x1, y1]
 * inclusive, or null when every cell is hidden. `game`: { width, height, isHidden(i) }.
 */
export function openedBox(game) {
  const { width, height } = game;
  let x0 = width;
  let y0 = height;
  let x1 = -1;
  let y1 = -1;
  for (let y = 0, i = 0; y < height; y++) {
    for (let x = 0; x < width; x++, i++) {
      if (game.isHidden(i)) continue;
      if (x < x0) x0 = x;
      if (x > x1) x1 = x;
      if (y < y0) y0 = y;
      if (y > y1) y1 = y;
    }
  }
  return x1 < 0 ? null : [x0, y0, x1, y1];
}

export class Board {
  /**
   * `els`: the elements of the board (see BoardView) with `grid` the role=grid element.
   * `intents`: { primary(i), secondary(i), chord(i), pressing(active) }.
   * `onZoom(cell)`: the player chose a cell size.
   */
  constructor(els, intents, { onZoom = () => {} } = {}) {
    this.grid = els.grid;
    this.scroller = els.scroller;
    this.intents = intents;
    this.game = null;
    this.focusIndex = 0;
    this.startView = null; // where a new board's view starts, [x, y] in cells (its open start)
    this.readonly = false;
    this.flagMode = false;
    this.pressed = new Set();
    this.pending = new Set();
    // Named marks over some cells (a hint, a replay's last move): a class and words.
    this.marks = new Map();
    this.nudges = new Map(); // cell -> its offset now, in cells
    this.mouse = null;
    this.touch = null;
    this.touches = new Map(); // pointer id -> { x, y }, for pans and pinches
    this.pinch = null;
    this.glide = 0;
    // The grid's elements: a rectangle of cells [x0, y0, x1, y1], and the focused cell's
    // own when it lies outside.
    this.window = null;
    this.elements = [];
    this.extra = null;
    this.windowTimer = 0;
    this.rebuild = 0;
    this.view = new BoardView(els, this, { onView: () => this.viewMoved(), onZoom });

    const sc = this.scroller;
    sc.addEventListener("mousedown", (e) => this.onMouseDown(e));
    window.addEventListener("mousemove", (e) => this.onMouseMove(e));
    window.addEventListener("mouseup", (e) => this.onMouseUp(e));
    window.addEventListener("blur", () => {
      this.endMouse();
      this.cancelTouch();
    });
    sc.addEventListener("contextmenu", (e) => e.preventDefault());
    sc.addEventListener("dragstart", (e) => e.preventDefault());
    sc.addEventListener("pointerdown", (e) => this.onPointerDown(e));
    sc.addEventListener("pointermove", (e) => this.onPointerMove(e));
    sc.addEventListener("pointerup", (e) => this.onPointerUp(e));
    sc.addEventListener("pointercancel", (e) => this.onPointerUp(e, { cancel: true }));
    this.grid.addEventListener("keydown", (e) => this.onKeyDown(e));
    this.grid.addEventListener("focusin", (e) => {
      const i = this.indexOf(e.target);
      if (i >= 0 && i !== this.focusIndex) this.setFocusIndex(i);
    });
  }

  // ---- showing a game ---------------------------------------------------------------------

  /**
   * Show `game`; true when the page fits it anew: its size changed, or it is a new board
   * whose start is open already (a daily board), which the view starts on.
   */
  show(game, { readonly, label = null }) {
    const resized = this.view.setBoard(game.width, game.height);
    const sameGame = this.game && this.game.id === game.id;
    this.game = game;
    this.readonly = readonly;
    this.pressed.clear();
    this.pending.clear();
    this.marks.clear();
    this.nudges.clear();
    this.mouse = null;
    this.cancelTouch();
    this.grid.hidden = false;
    this.grid.setAttribute("aria-readonly", readonly ? "true" : "false");
    const what = `${game.width} by ${game.height}, ${game.mines} mines`;
    const name = label || (readonly ? "Minefield (watching)" : "Minefield");
    this.grid.setAttribute("aria-label", `${name}, ${what}`);
    const focused = this.grid.contains(document.activeElement);
    let startOpen = false;
    if (!sameGame) this.startView = null;
    if (resized || (!sameGame && !focused) || this.focusIndex >= game.size) {
      // Start near the middle, where a first click is most useful; on a board whose start
      // is open already (not played yet), the view starts on what is open, in its middle.
      const box = game.startedAt == null && !game.finished ? openedBox(game) : null;
      if (box && !sameGame) {
        const [x0, y0, x1, y1] = box;
        startOpen = true;
        this.startView = [(x0 + x1 + 1) / 2, (y0 + y1 + 1) / 2];
        this.focusIndex = Math.floor((y0 + y1) / 2) * game.width + Math.floor((x0 + x1) / 2);
      } else {
        this.focusIndex = Math.floor(game.height / 2) * game.width + Math.floor(game.width / 2);
      }
    }
    this.view.refreshAll();
    this.renderWindow({ force: true });
    // The focused cell was replaced: give the focus to the new one, not to the page.
    if (focused) this.elementOf(this.focusIndex)?.focus({ preventScroll: true });
    return resized || startOpen;
  }

  /**
   * Size the board for `room`, at the player's cell size (null: fit the room; `least`:
   * the smallest cell that fit may choose).
   */
  fit(room, preferred, { keep = false, least = undefined } = {}) {
    // A board's open start is in view at first; after that, the cell with the focus.
    this.view.layout(room, preferred, { keep, least, start: this.startView ?? this.focusIndex });
    if (!keep) this.startView = null;
    this.renderWindow({ force: true });
  }

  /** Show no board at all. */
  clear() {
    this.grid.replaceChildren();
    this.elements = [];
    this.extra = null;
    this.window = null;
    this.game = null;
    this.grid.hidden = true;
    this.view.requestDraw();
  }

  /** The cells `indices` changed. */
  update(indices) {
    // Only while cells wait: a cascade lists a million cells, and none may be waiting.
    for (let k = 0; k < indices.length && this.pending.size; k++) this.pending.delete(indices[k]);
    this.view.refresh(indices);
    this.repaint(indices);
  }

  /** Every cell may have changed. */
  refreshAll() {
    this.view.refreshAll();
    this.repaint(null);
  }

  /** Mark cells as waiting for the server's answer. */
  setPending(indices, on) {
    for (const i of indices) {
      if (on) this.pending.add(i);
      else this.pending.delete(i);
    }
    this.repaint(indices);
    this.view.requestDraw();
  }

  /**
   * Mark some cells under `name` with a class and words for their label (replacing
   * that mark's cells); `unmark(name)` takes it off again.
   */
  mark(name, indices, { cls, text = "" }) {
    const before = this.marks.get(name);
    const cells = new Set(indices);
    this.marks.set(name, { cells, cls, text });
    this.repaint([...(before ? before.cells : []), ...cells]);
    this.view.requestDraw();
  }

  unmark(name) {
    const before = this.marks.get(name);
    if (!before) return;
    this.marks.delete(name);
    this.repaint(before.cells);
    this.view.requestDraw();
  }

  /** A short shake on a cell whose action was refused (e.g. revealing a flag). */
  nudge(i) {
    if (reducedMotion()) return;
    const el = this.elementOf(i);
    el?.classList.add("nudge");
    const start = performance.now();
    const step = (now) => {
      const t = (now - start) / NUDGE_MS;
      if (t >= 1 || !this.game) {
        this.nudges.delete(i);
        this.elementOf(i)?.classList.remove("nudge");
      } else {
        this.nudges.set(i, Math.sin(t * Math.PI * 4) * 0.1);
        requestAnimationFrame(step);
      }
      this.view.requestDraw();
    };
    requestAnimationFrame(step);
  }

  // ---- the grid's elements ----------------------------------------------------------------

  /** The rectangle of cells that has elements now: the whole board, or around the view. */
  wanted() {
    const { width, height, size } = this.game;
    if (size <= FULL_GRID) return [0, 0, width - 1, height - 1];
    const [vx0, vy0, vx1, vy1] = this.view.visible();
    const w = this.window;
    // Still covering the view: no need to build again.
    if (w && w[0] <= vx0 && w[1] <= vy0 && w[2] >= vx1 && w[3] >= vy1) return w;
    let cols = vx1 - vx0 + 1;
    let rows = vy1 - vy0 + 1;
    const mx = Math.max(2, Math.floor(cols / 4));
    const my = Math.max(2, Math.floor(rows / 4));
    let x0 = Math.max(0, vx0 - mx);
    let y0 = Math.max(0, vy0 - my);
    let x1 = Math.min(width - 1, vx1 + mx);
    let y1 = Math.min(height - 1, vy1 + my);
    cols = x1 - x0 + 1;
    rows = y1 - y0 + 1;
    if (cols * rows > WINDOW_CELLS) {
      // Cells this small are not clicked one by one: keep the middle of the view.
      const k = Math.sqrt(WINDOW_CELLS / (cols * rows));
      const nc = Math.max(1, Math.floor(cols * k));
      const nr = Math.max(1, Math.floor(rows * k));
      const cx = Math.floor((vx0 + vx1) / 2);
      const cy = Math.floor((vy0 + vy1) / 2);
      x0 = Math.max(0, Math.min(width - nc, cx - Math.floor(nc / 2)));
      y0 = Math.max(0, Math.min(height - nr, cy - Math.floor(nr / 2)));
      x1 = x0 + nc - 1;
      y1 = y0 + nr - 1;
      if (w && w[0] <= vx0 + mx && w[2] >= vx1 - mx && w[1] <= vy0 + my && w[3] >= vy1 - my) return w;
    }
    return [x0, y0, x1, y1];
  }

  /**
   * The part of the board in view moved. On a big board the grid's elements follow once
   * the view rests, so a pan stays smooth (clicks find their cell by where they land,
   * and the keyboard brings its own cell's element at once).
   */
  viewMoved() {
    clearTimeout(this.windowTimer);
    if (this.view.zooming) return; // the view calls again once the zoom rests
    if (this.game && this.game.size > FULL_GRID) {
      this.windowTimer = setTimeout(() => this.renderWindow(), WINDOW_REST_MS);
      return;
    }
    this.renderWindow();
  }

  /** Build the grid's elements for the cells that need them (unless they have them). */
  renderWindow({ force = false } = {}) {
    if (!this.game) return;
    const want = this.wanted();
    const w = this.window;
    const same = w && w.every((v, k) => v === want[k]);
    if (same && !force) {
      this.renderExtra();
      return;
    }
    const hadFocus = this.grid.contains(document.activeElement);
    const [x0, y0, x1, y1] = want;
    const width = this.game.width;
    const html = [];
    for (let y = y0; y <= y1; y++) {
      html.push(`<div class="row" role="row" aria-rowindex="${y + 1}" style="--y:${y};--x:${x0}">`);
      for (let x = x0; x <= x1; x++) html.push(this.cellHtml(y * width + x, x, y));
      html.push("</div>");
    }
    this.grid.innerHTML = html.join("");
    this.window = want;
    this.elements = Array.from(this.grid.querySelectorAll("[data-i]"));
    this.extra = null;
    this.renderExtra();
    if (hadFocus) this.elementOf(this.focusIndex)?.focus({ preventScroll: true });
  }

  /** The focused cell's element when it lies outside the rectangle. */
  renderExtra() {
    const i = this.focusIndex;
    if (this.inWindow(i)) {
      if (this.extra) {
        this.extra.parentElement.remove();
        this.extra = null;
      }
      return;
    }
    if (this.extra && Number(this.extra.dataset.i) === i) return;
    this.extra?.parentElement.remove();
    const [x, y] = this.game.xy(i);
    const row = document.createElement("div");
    row.className = "row";
    row.setAttribute("role", "row");
    row.setAttribute("aria-rowindex", String(y + 1));
    row.style.cssText = `--y:${y};--x:${x}`;
    row.innerHTML = this.cellHtml(i, x, y);
    this.grid.append(row);
    this.extra = row.firstElementChild;
  }

  inWindow(i) {
    const w = this.window;
    if (!w || !this.game) return false;
    const [x, y] = this.game.xy(i);
    return x >= w[0] && x <= w[2] && y >= w[1] && y <= w[3];
  }

  /** The element of cell `i`, if it has one now. */
  elementOf(i) {
    if (i < 0 || !this.game) return null;
    if (this.inWindow(i)) {
      const [x0, y0, x1] = this.window;
      const [x, y] = this.game.xy(i);
      return this.elements[(y - y0) * (x1 - x0 + 1) + (x - x0)] ?? null;
    }
    return this.extra && Number(this.extra.dataset.i) === i ? this.extra : null;
  }

  /** What cell `i`'s element says: [class, label, state]. */
  describe(i) {
    const game = this.game;
    const ch = game.char(i);
    let cls = CLASS_OF[ch];
    if (!cls) cls = ch > "0" && ch <= "8" ? `open n${ch}` : "open";
    if (this.pressed.has(i)) cls += " pressed";
    if (this.pending.has(i)) cls += " pending";
    let marked = "";
    for (const mark of this.marks.values()) {
      if (!mark.cells.has(i)) continue;
      cls += ` ${mark.cls}`;
      if (mark.text) marked += `, ${mark.text}`;
    }
    const [x, y] = game.xy(i);
    return [`cell ${cls}`, `${cellStateText(ch)}, ${cellPlace(x, y)}${marked}`, ch];
  }

  cellHtml(i, x, y) {
    const [cls, label, ch] = this.describe(i);
    const tab = i === this.focusIndex ? 0 : -1;
    return `<div role="gridcell" class="${cls}" tabindex="${tab}" aria-colindex="${x + 1}" aria-label="${attr(label)}" data-i="${i}" data-x="${x}" data-y="${y}" data-state="${attr(ch)}"></div>`;
  }

  paintElement(el, i) {
    const [cls, label, ch] = this.describe(i);
    if (el.className !== cls) el.className = this.nudges.has(i) ? `${cls} nudge` : cls;
    if (el.getAttribute("aria-label") !== label) el.setAttribute("aria-label", label);
    if (el.dataset.state !== ch) el.dataset.state = ch;
  }

  /** Bring the elements of `indices` (null: all of them) up to date. */
  repaint(indices) {
    if (!this.game) return;
    const count = indices == null ? Infinity : indices.length ?? indices.size;
    if (count > MANY_CELLS) {
      // Many cells (a cascade): the elements are made again in one go, far quicker than
      // one by one, at the next frame, so the work is not all in one task.
      cancelAnimationFrame(this.rebuild);
      this.rebuild = requestAnimationFrame(() => this.renderWindow({ force: true }));
      return;
    }
    for (const i of indices) {
      const el = this.elementOf(i);
      if (el) this.paintElement(el, i);
    }
  }

  // ---- focus ----------------------------------------------------------------------------

  indexOf(target) {
    const el = target && target.closest ? target.closest("[data-i]") : null;
    return el && this.grid.contains(el) ? Number(el.dataset.i) : -1;
  }

  setFocusIndex(i) {
    const old = this.elementOf(this.focusIndex);
    if (old) old.tabIndex = -1;
    this.focusIndex = i;
    this.renderExtra();
    const el = this.elementOf(i);
    if (el) el.tabIndex = 0;
  }

  focusCell(i, { scroll = true } = {}) {
    if (!this.game || i < 0 || i >= this.game.size) return;
    if (scroll) {
      this.view.reveal(i);
      this.renderWindow();
    }
    this.setFocusIndex(i);
    this.elementOf(i)?.focus({ preventScroll: true });
  }

  focus() {
    this.focusCell(this.focusIndex);
  }

  /** Put the keyboard cursor on cell `i` (focusing it only if the board has the focus), in view. */
  cursorTo(i) {
    if (this.grid.contains(document.activeElement)) {
      this.focusCell(i);
      return;
    }
    this.view.reveal(i);
    this.renderWindow();
    this.setFocusIndex(i);
  }

  // ---- pressed-cell feedback ------------------------------------------------------------

  /** The cells a press on `i` would act on. */
  pressTargets(i, kind) {
    const game = this.game;
    if (!game || i < 0 || game.finished) return [];
    const hiddenBlock = () => game.hiddenAround(i).concat(game.isHidden(i) ? [i] : []);
    if (kind === "chord") return hiddenBlock();
    if (kind === "primary") {
      if (game.isHidden(i)) return [i];
      if (game.canChord(i)) return game.hiddenAround(i);
    }
    return [];
  }

  setPressed(indices) {
    const next = new Set(indices);
    const changed = [];
    for (const i of this.pressed) if (!next.has(i)) changed.push(i);
    for (const i of next) if (!this.pressed.has(i)) changed.push(i);
    this.pressed = next;
    if (changed.length) {
      this.repaint(changed);
      this.view.requestDraw();
    }
  }

  refreshPress() {
    const m = this.mouse;
    const t = this.touch;
    let targets = [];
    if (m && !m.spent && m.hover >= 0) {
      if (m.mode === "chord") targets = this.pressTargets(m.hover, "chord");
      else if (m.mode === "primary") targets = this.pressTargets(m.hover, "primary");
    } else if (t && !t.done && !t.panning && !this.flagMode) {
      targets = this.pressTargets(t.i, "primary");
    }
    this.setPressed(targets);
    const active = Boolean((m && !m.spent && m.mode !== "right") || (t && !t.done && !t.panning));
    this.intents.pressing(active);
  }

  /** Cells too small to hit: a press there zooms in on it instead of playing it. */
  zoomInstead(e) {
    if (!this.view.small) return false;
    this.view.zoomTo(minPlayableCell(), { x: e.clientX, y: e.clientY });
    return true;
  }

  // ---- mouse ----------------------------------------------------------------------------

  /** The cell under the mouse, if the point is on the board's cells (not a scroll bar). */
  cellUnder(e) {
    const sc = this.scroller;
    const r = sc.getBoundingClientRect();
    // Mouse events give whole pixels: a point on the edge may fall just short of it.
    const x = Math.min(Math.max(e.clientX - r.left - sc.clientLeft, 0), sc.clientWidth);
    const y = Math.min(Math.max(e.clientY - r.top - sc.clientTop, 0), sc.clientHeight);
    if (e.clientX < r.left - 1 || e.clientY < r.top - 1 || x >= sc.clientWidth || y >= sc.clientHeight) return -1;
    return this.view.cellAt(r.left + sc.clientLeft + x, r.top + sc.clientTop + y);
  }

  onMouseDown(e) {
    if (e.sourceCapabilities && e.sourceCapabilities.firesTouchEvents) return;
    const i = this.cellUnder(e);
    if (i < 0 || !this.game) return;
    e.preventDefault();
    this.focusCell(i, { scroll: false });
    // Zooming in is for watchers and finished boards too.
    if (e.button === 0 && !this.mouse && this.zoomInstead(e)) return;
    if (this.readonly || this.game.finished) return;
    const m = this.mouse || (this.mouse = { hover: i, mode: null, spent: false });
    m.hover = i;
    if (m.spent) return;
    const both = (e.buttons & 3) === 3;
    if (e.button === 1 || both) {
      m.mode = "chord";
    } else if (e.button === 2) {
      m.mode = "right";
      // Classic behaviour: the flag goes up on the press, not the release.
      if (!this.view.small) this.intents.secondary(i, "mouse");
    } else if (e.button === 0) {
      m.mode = this.flagMode ? "flag" : "primary";
    }
    this.refreshPress();
  }

  onMouseMove(e) {
    const m = this.mouse;
    if (!m) return;
    if ((e.buttons & 7) === 0) {
      this.endMouse();
      return;
    }
    const i = this.cellUnder(e);
    if (i !== m.hover) {
      m.hover = i;
      this.refreshPress();
    }
  }

  onMouseUp(e) {
    const m = this.mouse;
    if (!m) return;
    const i = m.hover;
    if (!m.spent && i >= 0) {
      if (m.mode === "chord") {
        m.spent = true;
        this.intents.chord(i, "mouse");
      } else if (m.mode === "primary" && e.button === 0) {
        m.spent = true;
        this.intents.primary(i, "mouse");
      } else if (m.mode === "flag" && e.button === 0) {
        m.spent = true;
        this.intents.secondary(i, "mouse");
      }
    }
    if ((e.buttons & 7) === 0) this.mouse = null;
    else m.spent = true;
    this.refreshPress();
  }

  endMouse() {
    if (!this.mouse) return;
    this.mouse = null;
    this.refreshPress();
  }

  // ---- touch and pen: taps, long presses, pans and pinches ---------------------------------

  onPointerDown(e) {
    if (e.pointerType === "mouse") return;
    // Keeps the browser from sending emulated mouse events for this touch.
    e.preventDefault();
    cancelAnimationFrame(this.glide);
    this.scroller.setPointerCapture?.(e.pointerId);
    this.touches.set(e.pointerId, { x: e.clientX, y: e.clientY, t: e.timeStamp, vx: 0, vy: 0 });
    if (this.touches.size === 2) {
      this.cancelTouch();
      this.startPinch();
      return;
    }
    if (this.touches.size > 2) return;
    const i = this.cellUnder(e);
    if (i < 0 || !this.game) return;
    this.focusCell(i, { scroll: false });
    this.cancelTouch();
    const touch = { id: e.pointerId, i, x: e.clientX, y: e.clientY, done: false, panning: false, timer: 0 };
    if (!this.readonly && !this.game.finished && !this.view.small) {
      touch.timer = setTimeout(() => {
        if (this.touch !== touch || touch.panning) return;
        touch.done = true;
        if (navigator.vibrate) navigator.vibrate(15);
        if (this.flagMode) this.intents.primary(i, "touch");
        else this.intents.secondary(i, "touch");
        this.refreshPress();
      }, LONG_PRESS_MS);
    }
    this.touch = touch;
    this.refreshPress();
  }

  onPointerMove(e) {
    const p = this.touches.get(e.pointerId);
    if (!p) return;
    const dx = e.clientX - p.x;
    const dy = e.clientY - p.y;
    const dt = Math.max(1, e.timeStamp - p.t);
    p.vx = dx / dt;
    p.vy = dy / dt;
    p.x = e.clientX;
    p.y = e.clientY;
    p.t = e.timeStamp;
    if (this.pinch) {
      this.movePinch();
      return;
    }
    const t = this.touch;
    if (t && t.id === e.pointerId && !t.panning) {
      if (Math.hypot(e.clientX - t.x, e.clientY - t.y) <= TAP_SLOP_PX) return;
      // A drag: the board pans, and the press is off.
      clearTimeout(t.timer);
      t.panning = true;
      this.view.panBy(t.x - e.clientX, t.y - e.clientY);
      this.refreshPress();
      return;
    }
    if (t && t.panning) this.view.panBy(-dx, -dy);
  }

  onPointerUp(e, { cancel = false } = {}) {
    const p = this.touches.get(e.pointerId);
    if (!p) return;
    this.touches.delete(e.pointerId);
    if (this.pinch) {
      if (this.touches.size < 2) this.endPinch();
      return;
    }
    const t = this.touch;
    if (!t || e.pointerId !== t.id) return;
    clearTimeout(t.timer);
    this.touch = null;
    if (t.panning) {
      this.coast(p.vx, p.vy);
    } else if (!t.done && !cancel && this.game) {
      if (this.zoomInstead(e)) {
        // nothing else: the tap was a request to come closer
      } else if (!this.readonly && !this.game.finished) {
        if (this.flagMode) this.intents.secondary(t.i, "touch");
        else this.intents.primary(t.i, "touch");
      }
    }
    this.refreshPress();
  }

  cancelTouch() {
    if (!this.touch) return;
    clearTimeout(this.touch.timer);
    this.touch = null;
    this.refreshPress();
  }

  /** After a flick the board glides on, slowing down. */
  coast(vx, vy) {
    let last = performance.now();
    const step = (now) => {
      const dt = now - last;
      last = now;
      vx *= 0.95 ** (dt / 16);
      vy *= 0.95 ** (dt / 16);
      if (Math.hypot(vx, vy) < 0.02) return;
      this.view.panBy(-vx * dt, -vy * dt);
      this.glide = requestAnimationFrame(step);
    };
    if (Math.hypot(vx, vy) > 0.2) this.glide = requestAnimationFrame(step);
  }

  pinchState() {
    const [a, b] = [...this.touches.values()];
    return { dist: Math.hypot(a.x - b.x, a.y - b.y), x: (a.x + b.x) / 2, y: (a.y + b.y) / 2 };
  }

  startPinch() {
    this.pinch = { ...this.pinchState(), cell: this.view.cell };
  }

  movePinch() {
    const p = this.pinch;
    const now = this.pinchState();
    if (p.dist < 1) return;
    this.view.zoomTo(p.cell * (now.dist / p.dist), { x: now.x, y: now.y }, { continuous: true });
    this.view.panBy(p.x - now.x, p.y - now.y);
    p.x = now.x;
    p.y = now.y;
  }

  endPinch() {
    const p = this.pinch;
    this.pinch = null;
    if (p && Math.abs(this.view.cell - p.cell) > 0.5) this.view.zoomTo(this.view.cell, null, { choose: true });
  }

  // ---- keyboard -------------------------------------------------------------------------

  onKeyDown(e) {
    const game = this.game;
    if (!game || e.altKey || e.metaKey) return;
    const { width, height } = game;
    const i = this.focusIndex;
    const x = i % width;
    const y = Math.floor(i / width);
    const page = Math.max(1, Math.floor(this.scroller.clientHeight / this.view.cell) - 1);
    let next = -1;
    switch (e.key) {
      case "ArrowLeft": next = x > 0 ? i - 1 : i; break;
      case "ArrowRight": next = x < width - 1 ? i + 1 : i; break;
      case "ArrowUp": next = y > 0 ? i - width : i; break;
      case "ArrowDown": next = y < height - 1 ? i + width : i; break;
      case "Home": next = e.ctrlKey ? 0 : y * width; break;
      case "End": next = e.ctrlKey ? game.size - 1 : y * width + width - 1; break;
      case "PageUp": next = Math.max(0, y - page) * width + x; break;
      case "PageDown": next = Math.min(height - 1, y + page) * width + x; break;
      default: break;
    }
    if (next >= 0) {
      e.preventDefault();
      this.focusCell(next);
      return;
    }
    if (e.ctrlKey) return;
    const key = e.key.length === 1 ? e.key.toLowerCase() : e.key;
    if (key === "+" || key === "=" || key === "-") {
      e.preventDefault();
      const box = this.elementOf(i)?.getBoundingClientRect();
      const at = box ? { x: box.left + box.width / 2, y: box.top + box.height / 2 } : null;
      this.view.zoomBy(key === "-" ? 0.8 : 1.25, at, { choose: true });
      this.focusCell(i);
    } else if (key === " " || key === "Enter") {
      e.preventDefault();
      if (!e.repeat && !this.readonly) this.intents.primary(i, "keyboard");
    } else if (key === "f") {
      e.preventDefault();
      if (!e.repeat && !this.readonly) this.intents.secondary(i, "keyboard");
    } else if (key === "c") {
      e.preventDefault();
      if (!e.repeat && !this.readonly) this.intents.chord(i, "keyboard");
    }
  }
}
