// The minefield: one element per cell in an ARIA grid with a roving tabindex, and the
// translation of mouse, touch and keyboard input into three intents: `primary` (reveal,
// or chord on a satisfied number), `secondary` (flag) and `chord`.
//
// Mouse: left press shows the cell pressed and acts on release over the same board
// (moving away cancels); right press flags at once; both buttons, or the middle
// button, press the 3x3 block and chord on release.
// Touch: a tap is primary, a long press is secondary (swapped in flag mode); a drag
// scrolls the board and does nothing.
// Keyboard: arrows, Home/End, PageUp/PageDown, Ctrl+Home/End move; Space/Enter is
// primary, F is secondary, C chords.
//
// The rest of the page uses only: show, clear, update (the cells a change touched), mark /
// unmark, setPending, nudge, focus, cursorTo, and the flagMode and readonly
// fields. A renderer for boards too big for one element per cell can stand in for this one
// by offering the same.

// The most cells this board draws (one element each); bigger boards need another renderer.
export const MAX_BOARD_CELLS = 62_500;
const LONG_PRESS_MS = 420;
const TAP_SLOP_PX = 10;

const STATE_TEXT = {
  "#": "hidden",
  F: "flagged",
  "?": "question mark",
  "0": "empty",
  "*": "mine",
  X: "exploded mine",
  "!": "wrong flag, no mine",
};

/** The cell size (px) that fits a board in the window: as large as comfortable, never too small to hit. */
export function fitCells(width, height) {
  const vw = document.documentElement.clientWidth;
  const coarse = matchMedia("(pointer: coarse)").matches;
  const minCell = coarse ? 30 : 22;
  const maxCell = 40;
  const chrome = 28; // frame border and padding
  const availW = Math.min(vw, 1600) - (vw < 600 ? 12 : 48) - chrome;
  const availH = Math.max(260, window.innerHeight - 200);
  const cell = Math.floor(Math.min(availW / width, availH / height));
  return Math.max(minCell, Math.min(maxCell, cell));
}

export function cellStateText(ch) {
  if (ch >= "1" && ch <= "8") return ch === "1" ? "1 mine around" : `${ch} mines around`;
  return STATE_TEXT[ch] ?? ch;
}

const CLASS_OF = {
  "#": "hidden",
  F: "hidden flag",
  "?": "hidden question",
  "*": "open mine",
  X: "open mine exploded",
  "!": "open wrong",
};

export class Board {
  constructor(grid, scroller, intents) {
    this.grid = grid;
    this.scroller = scroller;
    this.intents = intents;
    this.game = null;
    this.cells = [];
    this.focusIndex = 0;
    this.readonly = false;
    this.flagMode = false;
    this.pressed = new Set();
    this.pending = new Set();
    // Named marks over some cells (a hint, a replay's last move): a class and words.
    this.marks = new Map();
    this.mouse = null;
    this.touch = null;

    grid.addEventListener("mousedown", (e) => this.onMouseDown(e));
    grid.addEventListener("mouseover", (e) => this.onMouseOver(e));
    grid.addEventListener("mouseleave", () => this.onMouseLeave());
    window.addEventListener("mouseup", (e) => this.onMouseUp(e));
    window.addEventListener("mousemove", (e) => {
      if (this.mouse && (e.buttons & 7) === 0) this.endMouse();
    });
    window.addEventListener("blur", () => {
      this.endMouse();
      this.cancelTouch();
    });
    grid.addEventListener("contextmenu", (e) => e.preventDefault());
    grid.addEventListener("dragstart", (e) => e.preventDefault());
    grid.addEventListener("pointerdown", (e) => this.onPointerDown(e));
    grid.addEventListener("pointermove", (e) => this.onPointerMove(e));
    grid.addEventListener("pointerup", (e) => this.onPointerUp(e));
    grid.addEventListener("pointercancel", () => this.cancelTouch());
    grid.addEventListener("keydown", (e) => this.onKeyDown(e));
    grid.addEventListener("focusin", (e) => {
      const i = this.indexOf(e.target);
      if (i >= 0 && i !== this.focusIndex) this.setFocusIndex(i);
    });
  }

  // ---- building and painting ------------------------------------------------------------

  /** Show `game`; rebuilds the cells only when the board's size changes. */
  show(game, { readonly, label = null }) {
    const rebuild = !this.game || this.game.width !== game.width || this.game.height !== game.height;
    const sameGame = this.game && this.game.id === game.id;
    this.game = game;
    this.readonly = readonly;
    this.pressed.clear();
    this.pending.clear();
    this.marks.clear();
    this.mouse = null;
    this.cancelTouch();
    this.grid.hidden = false;
    this.grid.setAttribute("aria-readonly", readonly ? "true" : "false");
    this.grid.setAttribute("aria-rowcount", String(game.height));
    this.grid.setAttribute("aria-colcount", String(game.width));
    const what = `${game.width} by ${game.height}, ${game.mines} mines`;
    const name = label || (readonly ? "Minefield (watching)" : "Minefield");
    this.grid.setAttribute("aria-label", `${name}, ${what}`);
    const focused = this.indexOf(document.activeElement);
    if (rebuild) this.build();
    if (!rebuild && focused >= 0) {
      // Same size: the keyboard cursor stays where it was.
      this.focusIndex = focused;
    } else if (!sameGame || this.focusIndex >= game.size) {
      // Start near the middle, where a first click is most useful.
      this.focusIndex = Math.floor(game.height / 2) * game.width + Math.floor(game.width / 2);
    }
    this.paintAll();
    this.cells.forEach((el, i) => (el.tabIndex = i === this.focusIndex ? 0 : -1));
    // The focused cell was replaced: give the focus to the new board, not to the page.
    if (rebuild && focused >= 0) this.focusCell(this.focusIndex, { scroll: false });
  }

  /** Show no board at all. */
  clear() {
    this.grid.replaceChildren();
    this.cells = [];
    this.game = null;
    this.grid.hidden = true;
  }

  build() {
    const { width, height } = this.game;
    // One string and one parse: far quicker than element by element on big boards.
    const rows = [];
    for (let y = 0; y < height; y++) {
      const cells = [];
      for (let x = 0; x < width; x++) {
        cells.push(
          `<div role="gridcell" tabindex="-1" aria-colindex="${x + 1}" data-i="${y * width + x}" data-x="${x}" data-y="${y}"></div>`,
        );
      }
      rows.push(`<div class="row" role="row" aria-rowindex="${y + 1}">${cells.join("")}</div>`);
    }
    this.grid.innerHTML = rows.join("");
    this.cells = Array.from(this.grid.querySelectorAll("[data-i]"));
    // Rows out of view skip rendering on big boards (they stay in the accessibility tree).
    this.grid.classList.toggle("big", width * height > 4000);
    this.grid.style.setProperty("--cols", String(width));
  }

  paintAll() {
    for (let i = 0; i < this.cells.length; i++) this.paint(i);
  }

  paint(i) {
    const el = this.cells[i];
    const game = this.game;
    if (!el || !game) return;
    const ch = game.char(i);
    let cls = CLASS_OF[ch];
    let text = "";
    if (!cls) {
      const n = game.number(i);
      cls = n > 0 ? `open n${n}` : "open";
      if (n > 0) text = ch;
    }
    if (this.pressed.has(i)) cls += " pressed";
    if (this.pending.has(i)) cls += " pending";
    let marked = "";
    for (const mark of this.marks.values()) {
      if (!mark.cells.has(i)) continue;
      cls += ` ${mark.cls}`;
      if (mark.text) marked += `, ${mark.text}`;
    }
    const className = `cell ${cls}`;
    if (el.className !== className) el.className = className;
    if (el.textContent !== text) el.textContent = text;
    const [x, y] = game.xy(i);
    const label = `${cellStateText(ch)}, row ${y + 1}, column ${x + 1}${marked}`;
    if (el.getAttribute("aria-label") !== label) el.setAttribute("aria-label", label);
    el.dataset.state = ch;
  }

  update(indices) {
    for (const i of indices) {
      this.pending.delete(i);
      this.paint(i);
    }
  }

  /** Mark cells as waiting for the server's answer. */
  setPending(indices, on) {
    for (const i of indices) {
      if (on) this.pending.add(i);
      else this.pending.delete(i);
      this.paint(i);
    }
  }

  /**
   * Mark some cells under `name` with a class and words for their label (replacing
   * that mark's cells); `unmark(name)` takes it off again.
   */
  mark(name, indices, { cls, text = "" }) {
    const before = this.marks.get(name);
    const cells = new Set(indices);
    this.marks.set(name, { cells, cls, text });
    for (const i of new Set([...(before ? before.cells : []), ...cells])) this.paint(i);
  }

  unmark(name) {
    const before = this.marks.get(name);
    if (!before) return;
    this.marks.delete(name);
    before.cells.forEach((i) => this.paint(i));
  }

  /** A short shake on a cell whose action was refused (e.g. revealing a flag). */
  nudge(i) {
    const el = this.cells[i];
    if (!el) return;
    el.classList.remove("nudge");
    void el.offsetWidth;
    el.classList.add("nudge");
    setTimeout(() => el.classList.remove("nudge"), 400);
  }

  // ---- focus ----------------------------------------------------------------------------

  indexOf(target) {
    const el = target && target.closest ? target.closest("[data-i]") : null;
    return el && this.grid.contains(el) ? Number(el.dataset.i) : -1;
  }

  setFocusIndex(i) {
    const old = this.cells[this.focusIndex];
    if (old) old.tabIndex = -1;
    this.focusIndex = i;
    const el = this.cells[i];
    if (el) el.tabIndex = 0;
  }

  focusCell(i, { scroll = true } = {}) {
    if (i < 0 || i >= this.cells.length) return;
    this.setFocusIndex(i);
    const el = this.cells[i];
    el.focus({ preventScroll: true });
    if (scroll) el.scrollIntoView({ block: "nearest", inline: "nearest" });
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
    this.setFocusIndex(i);
    this.cells[i]?.scrollIntoView({ block: "nearest", inline: "nearest" });
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
    changed.forEach((i) => this.paint(i));
  }

  refreshPress() {
    const m = this.mouse;
    const t = this.touch;
    let targets = [];
    if (m && !m.spent && m.hover >= 0) {
      if (m.mode === "chord") targets = this.pressTargets(m.hover, "chord");
      else if (m.mode === "primary") targets = this.pressTargets(m.hover, "primary");
      else if (m.mode === "flag" && this.game.isHidden(m.hover)) targets = [];
    } else if (t && !t.done && !this.flagMode) {
      targets = this.pressTargets(t.i, "primary");
    }
    this.setPressed(targets);
    const active = Boolean((m && !m.spent && m.mode !== "right") || (t && !t.done));
    this.intents.pressing(active);
  }

  // ---- mouse ----------------------------------------------------------------------------

  onMouseDown(e) {
    if (e.sourceCapabilities && e.sourceCapabilities.firesTouchEvents) return;
    const i = this.indexOf(e.target);
    if (i < 0) return;
    e.preventDefault();
    this.focusCell(i, { scroll: false });
    if (this.readonly || !this.game || this.game.finished) return;
    const m = this.mouse || (this.mouse = { hover: i, mode: null, spent: false });
    m.hover = i;
    if (m.spent) return;
    const both = (e.buttons & 3) === 3;
    if (e.button === 1 || both) {
      m.mode = "chord";
    } else if (e.button === 2) {
      m.mode = "right";
      // Classic behaviour: the flag goes up on the press, not the release.
      this.intents.secondary(i, "mouse");
    } else if (e.button === 0) {
      m.mode = this.flagMode ? "flag" : "primary";
    }
    this.refreshPress();
  }

  onMouseOver(e) {
    if (!this.mouse) return;
    const i = this.indexOf(e.target);
    if (i >= 0 && i !== this.mouse.hover) {
      this.mouse.hover = i;
      this.refreshPress();
    }
  }

  onMouseLeave() {
    if (!this.mouse) return;
    this.mouse.hover = -1;
    this.refreshPress();
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

  // ---- touch and pen --------------------------------------------------------------------

  onPointerDown(e) {
    if (e.pointerType === "mouse") return;
    const i = this.indexOf(e.target);
    if (i < 0) return;
    // Keeps the browser from sending emulated mouse events for this touch.
    e.preventDefault();
    this.focusCell(i, { scroll: false });
    if (this.readonly || !this.game || this.game.finished) return;
    this.cancelTouch();
    const touch = { id: e.pointerId, i, x: e.clientX, y: e.clientY, done: false, timer: 0 };
    touch.timer = setTimeout(() => {
      if (this.touch !== touch) return;
      touch.done = true;
      if (navigator.vibrate) navigator.vibrate(15);
      if (this.flagMode) this.intents.primary(i, "touch");
      else this.intents.secondary(i, "touch");
      this.refreshPress();
    }, LONG_PRESS_MS);
    this.touch = touch;
    this.refreshPress();
  }

  onPointerMove(e) {
    const t = this.touch;
    if (!t || e.pointerId !== t.id) return;
    if (Math.hypot(e.clientX - t.x, e.clientY - t.y) > TAP_SLOP_PX) this.cancelTouch();
  }

  onPointerUp(e) {
    const t = this.touch;
    if (!t || e.pointerId !== t.id) return;
    clearTimeout(t.timer);
    this.touch = null;
    if (!t.done) {
      if (this.flagMode) this.intents.secondary(t.i, "touch");
      else this.intents.primary(t.i, "touch");
    }
    this.refreshPress();
  }

  cancelTouch() {
    if (!this.touch) return;
    clearTimeout(this.touch.timer);
    this.touch = null;
    this.refreshPress();
  }

  // ---- keyboard -------------------------------------------------------------------------

  onKeyDown(e) {
    const game = this.game;
    if (!game || e.altKey || e.metaKey) return;
    const { width, height } = game;
    const i = this.focusIndex;
    const x = i % width;
    const y = Math.floor(i / width);
    const page = Math.max(1, Math.floor(this.scroller.clientHeight / (this.cellSize() || 24)) - 1);
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
    if (key === " " || key === "Enter") {
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

  cellSize() {
    const el = this.cells[0];
    return el ? el.getBoundingClientRect().height : 0;
  }
}
