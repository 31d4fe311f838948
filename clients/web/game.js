// The page's copy of one game: the board as the server shows it, and what its views and
// diffs say about the game. It owns version order: a diff is applied only when it is the
// next version, a view only when it is not older than what is held. Nothing here knows
// the rules: cells change only as the server's diffs and views say.

import { boardCodes, changedCells } from "./diffs.js";

export const HIDDEN = "#";
export const FLAG = "F";
export const QUESTION = "?";
export const MINE = "*";
export const EXPLODED = "X";
export const WRONG_FLAG = "!";

const HIDDEN_CODE = HIDDEN.charCodeAt(0);
const FLAG_CODE = FLAG.charCodeAt(0);
const ZERO_CODE = "0".charCodeAt(0);

export const FINISHED = new Set(["won", "lost"]);

const parseTime = (value) => (value == null ? null : Date.parse(value));

/** A board's cells as view characters, and the questions every board answers. */
export class Cells {
  constructor(width, height) {
    this.width = width;
    this.height = height;
    this.cells = new Uint8Array(width * height).fill(HIDDEN_CODE);
  }

  get size() {
    return this.width * this.height;
  }

  char(i) {
    return String.fromCharCode(this.cells[i]);
  }

  isHidden(i) {
    return this.cells[i] === HIDDEN_CODE;
  }

  /** The number on a revealed cell, or -1. */
  number(i) {
    const n = this.cells[i] - ZERO_CODE;
    return n >= 0 && n <= 8 ? n : -1;
  }

  xy(i) {
    return [i % this.width, Math.floor(i / this.width)];
  }

  /** The index of cell (x, y), or -1 off the board. */
  index(x, y) {
    return x >= 0 && y >= 0 && x < this.width && y < this.height ? y * this.width + x : -1;
  }

  neighbours(i) {
    const [x, y] = this.xy(i);
    const out = [];
    for (let ny = Math.max(0, y - 1); ny <= Math.min(this.height - 1, y + 1); ny++) {
      for (let nx = Math.max(0, x - 1); nx <= Math.min(this.width - 1, x + 1); nx++) {
        if (nx !== x || ny !== y) out.push(ny * this.width + nx);
      }
    }
    return out;
  }

  flagsAround(i) {
    return this.neighbours(i).filter((n) => this.cells[n] === FLAG_CODE).length;
  }

  hiddenAround(i) {
    return this.neighbours(i).filter((n) => this.cells[n] === HIDDEN_CODE);
  }
}

export class Game extends Cells {
  endedByMatch = false;
  haltedMs = null;
  rankedAtStart = null;
  // The game was paused while its clock ran (seen here: a view cannot tell after the
  // resume); `unrankedByPause`: that pause took a win that could be ranked off the boards.
  pausedOnClock = false;
  unrankedByPause = false;

  constructor(view) {
    super(view.width, view.height);
    this.id = view.id;
    this.load(view);
  }

  /** Take a whole view (a snapshot): the board and everything about the game; the cells that changed. */
  load(view) {
    if (view.width !== this.width || view.height !== this.height) {
      throw new Error("a game never changes size");
    }
    this.version = view.version;
    this.status = view.status;
    this.mines = view.mines;
    this.minesLeft = view.mines_left;
    this.preset = view.preset;
    this.firstClick = view.first_click;
    this.noGuess = view.no_guess;
    this.questionMarks = view.question_marks;
    this.paused = Boolean(view.paused);
    // A paused game's view shows every cell as "#": the cells held are the cover, not the
    // game's, until a view of the running game comes (the service sends one on resume).
    this.blind = this.paused && !FINISHED.has(view.status);
    this.player = view.player ?? null;
    this.playerId = view.player_id ?? null;
    // Why a win stays off the people's leaderboards, as the service judged it.
    this.held = view.held ?? null;
    // Whether a win would go on a leaderboard (a player's preset game, no chosen seed, no
    // hint, no pause on its clock, a daily board's first game of the day); null: not said.
    this.ranked = view.ranked ?? null;
    // What the view said before the clock ran: only the board's own rules (a chosen seed,
    // a daily board played before) unrank a game then.
    if (view.started_at == null && view.ranked != null) this.rankedAtStart = view.ranked;
    // A paused view of a running clock: the pause was on its clock.
    if (view.paused && view.started_at != null && !FINISHED.has(view.status)) this.pausedOnClock = true;
    this.daily = view.daily ?? null;
    this.createdAt = parseTime(view.created_at);
    this.startedAt = parseTime(view.started_at);
    this.endedAt = parseTime(view.ended_at);
    this.elapsedMs = view.elapsed_ms;
    this.stats = view.stats ?? null;
    // The timer runs from this reference: elapsed_ms as of the server time `at`.
    this.timeRef = { elapsed: view.elapsed_ms, at: parseTime(view.server_time) };
    const cells = this.cells;
    const codes = boardCodes(view);
    // A game its match's end stopped (a seat out of time or resigned) says so in its
    // view; a diff says it by its move.
    this.endedByMatch = view.ended_by === "match";
    // A million cells: the indices go in a typed array, filled in one pass.
    const changed = new Int32Array(cells.length);
    let n = 0;
    for (let i = 0; i < codes.length; i++) {
      if (cells[i] !== codes[i]) {
        cells[i] = codes[i];
        changed[n++] = i;
      }
    }
    return changed.subarray(0, n);
  }

  /** Where a version stands against the one held: "old" (held already), "next", or "ahead". */
  place(version) {
    if (version <= this.version) return "old";
    return version === this.version + 1 ? "next" : "ahead";
  }

  /** A view of this game: taken unless it is older than what is held; the cells that changed. */
  take(view) {
    if (view.id !== this.id || view.version < this.version) return null;
    return this.load(view);
  }

  /** Apply the diff of the next version; returns the indices of the cells that changed (an Int32Array). */
  apply(diff) {
    if (this.place(diff.version) !== "next") {
      throw new Error(`diff ${diff.version} does not follow version ${this.version}`);
    }
    const { x, y, code, length } = changedCells(diff);
    const { width, height, cells } = this;
    const changed = new Int32Array(length);
    let n = 0;
    for (let k = 0; k < length; k++) {
      const cx = x[k];
      const cy = y[k];
      if (cx < 0 || cy < 0 || cx >= width || cy >= height) continue;
      const i = cy * width + cx;
      cells[i] = code[k];
      changed[n++] = i;
    }
    // A match's end ends a game still on; after a race seat's loss it only shows the
    // mines the loss held back.
    if (diff.move.action === "end" && !FINISHED.has(this.status)) this.endedByMatch = true;
    this.version = diff.version;
    this.status = diff.status;
    this.minesLeft = diff.mines_left;
    this.startedAt = parseTime(diff.started_at);
    this.endedAt = parseTime(diff.ended_at);
    this.elapsedMs = diff.elapsed_ms;
    this.timeRef = { elapsed: diff.elapsed_ms, at: parseTime(diff.move.at) };
    // A pause or a resume changes no cell: the page hides the board while `paused`.
    if (diff.paused && !this.paused && this.startedAt != null && !this.finished) {
      // Diffs do not carry `ranked`: a pause on the clock unranks the game, as the
      // service's views say from then on.
      this.pausedOnClock = true;
      if (this.ranked) {
        this.ranked = false;
        this.unrankedByPause = true;
      }
    }
    this.paused = diff.paused;
    if (diff.stats) this.stats = diff.stats;
    return changed.subarray(0, n);
  }

  /** What a change is measured against: the game's state before it. */
  phase() {
    return { version: this.version, status: this.status, finished: this.finished, covered: this.covered };
  }

  /**
   * The server has counted `count` hints (from the game's feed, or the answer to this
   * page's own): counts only grow, so a smaller one changes nothing. True if it changed.
   */
  noteHints(count) {
    const s = this.stats || {};
    const hints = count;
    if (hints <= (s.hints || 0)) return false;
    this.stats = { ...s, hints, assisted: true };
    return true;
  }

  get finished() {
    return FINISHED.has(this.status);
  }

  /** Paused and not over, or the cells held are a paused view's cover: the board is not shown. */
  get covered() {
    return (this.paused || this.blind) && !this.finished;
  }

  /** The version a live feed resumes from: none when the cells held are a cover, for a view. */
  get resumeFrom() {
    return this.blind ? null : this.version;
  }

  /**
   * A match seat that resigned moves no more, though its game goes on until the match
   * ends it: its clock stops on the page at server time `serverNow`.
   */
  halt(serverNow) {
    if (this.haltedMs == null && !this.finished) this.haltedMs = this.elapsedAt(serverNow);
  }

  /** Milliseconds on the clock, given the server's current time. */
  elapsedAt(serverNow) {
    if (this.status === "ready" || this.startedAt == null) return 0;
    if (this.finished || this.paused || this.timeRef.at == null) return this.elapsedMs;
    if (this.haltedMs != null) return this.haltedMs;
    // A match's game is taken before its start (started_at ahead, in the countdown):
    // its clock runs from the start, not from when it was taken.
    const from = Math.max(this.timeRef.at, this.startedAt);
    return Math.max(0, this.timeRef.elapsed + Math.max(0, serverNow - from));
  }

  /** A number with exactly that many flags around it and something left to open. */
  canChord(i) {
    const n = this.number(i);
    return n > 0 && this.flagsAround(i) === n && this.hiddenAround(i).length > 0;
  }
}
