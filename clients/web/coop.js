// Co-op cursors: where this player points on the shared board goes to the teammates (on
// the match socket, throttled, only when the cell changes), and each teammate's pointer
// is drawn over the board as a labelled marker on their cell. Markers are placed from the
// board element's box and the game's size, so they follow scrolling and any way the
// cells are drawn; a marker fades once its teammate stops pointing. A teammate's move
// puts their marker on the cell they played, saying what it did ("opened 12").

import { cellAt, Throttle } from "./match.js";

const SEND_MS = 120;
const STALE_MS = 8000;
const COLOURS = 6;

export class CoopCursors {
  /** `send(x, y)`: to the match socket; `nameOf(playerId)`: a teammate's name. */
  constructor({ board, screen, send, nameOf }) {
    Object.assign(this, { board, screen, nameOf });
    this.gameId = null;
    this.marks = new Map(); // player id -> { el, x, y, timer }
    this.throttle = new Throttle((c) => send(c.x, c.y), SEND_MS);
    this.layer = document.createElement("div");
    this.layer.className = "coop-layer";
    this.layer.setAttribute("aria-hidden", "true"); // the board's cells say what is where
    document.body.append(this.layer);
    const point = (e) => this.point(cellAt(this.board.getBoundingClientRect(), ...this.size(), e.clientX, e.clientY));
    board.addEventListener("pointermove", point);
    board.addEventListener("pointerdown", point);
    board.addEventListener("focusin", (e) => {
      if (this.quiet) return; // the page, not the player, moved the focus
      const x = Number(e.target?.dataset?.x);
      const y = Number(e.target?.dataset?.y);
      if (Number.isInteger(x) && Number.isInteger(y)) this.point({ x, y });
    });
    const place = () => this.placeAll();
    window.addEventListener("scroll", place, { capture: true, passive: true });
    window.addEventListener("resize", place);
  }

  size() {
    const g = this.game();
    return g ? [g.width, g.height] : [0, 0];
  }

  /** The shared game while it is on screen. */
  game() {
    const c = this.screen.current;
    return this.gameId && c && c.id === this.gameId ? c.game : null;
  }

  /** Run `move` (which moves the keyboard focus onto the board) without telling the teammates. */
  quietly(move) {
    this.quiet = true;
    try {
      move();
    } finally {
      this.quiet = false;
    }
  }

  /** Share pointers for co-op game `gameId` (null: none). */
  follow(gameId) {
    if (gameId === this.gameId) return;
    this.stop();
    this.gameId = gameId;
  }

  stop() {
    this.gameId = null;
    this.throttle.stop();
    for (const m of this.marks.values()) clearTimeout(m.timer);
    this.marks.clear();
    this.layer.replaceChildren();
  }

  point(cell) {
    if (cell && this.game()) this.throttle.offer(cell);
  }

  /** A teammate's pointer arrived. */
  show({ by, x, y }, did = "") {
    if (!this.gameId) return;
    let m = this.marks.get(by);
    if (!m) {
      const el = document.createElement("div");
      el.className = `coop-cursor c${this.marks.size % COLOURS}`;
      el.dataset.player = by;
      const name = Object.assign(document.createElement("span"), { className: "coop-name" });
      name.append(this.nameOf(by), Object.assign(document.createElement("span"), { className: "coop-did" }));
      el.append(name);
      this.layer.append(el);
      m = { el, x, y, timer: 0 };
      this.marks.set(by, m);
    }
    // The pointer resting on the cell just played keeps saying what the move did, in
    // whichever order the move and the pointer arrive.
    if (did || m.x !== x || m.y !== y) m.el.querySelector(".coop-did").textContent = did ? `: ${did}` : "";
    Object.assign(m, { x, y });
    m.el.dataset.x = String(x);
    m.el.dataset.y = String(y);
    m.el.classList.remove("stale");
    clearTimeout(m.timer);
    m.timer = setTimeout(() => {
      m.el.classList.add("stale");
      m.el.querySelector(".coop-did").textContent = "";
    }, STALE_MS);
    this.place(m);
  }

  /** A teammate's move (a diff with `by`) that changed `count` cells. */
  moved(diff, count) {
    const move = diff.move;
    if (!move || move.x == null || !diff.by) return; // a pause names no cell
    this.show({ by: diff.by, x: move.x, y: move.y }, didWords(move.action, count));
  }

  placeAll() {
    for (const m of this.marks.values()) this.place(m);
  }

  place(m) {
    const g = this.game();
    const r = this.board.getBoundingClientRect();
    if (!g || !r.width) {
      m.el.hidden = true;
      return;
    }
    const w = r.width / g.width;
    const h = r.height / g.height;
    const left = r.left + m.x * w;
    const top = r.top + m.y * h;
    // A cell panned out of the board's window has no marker over the page around it.
    const view = (this.board.closest("#board-area") ?? this.board).getBoundingClientRect();
    m.el.hidden = left + w <= view.left || left >= view.right || top + h <= view.top || top >= view.bottom;
    m.el.style.left = `${left}px`;
    m.el.style.top = `${top}px`;
    m.el.style.width = `${w}px`;
    m.el.style.height = `${h}px`;
  }
}

/** What a teammate's move did, in a few words. */
export function didWords(action, count) {
  if (action === "flag") return "marked";
  if (!count) return "no change";
  return `opened ${count} cell${count === 1 ? "" : "s"}`;
}
