// A finished game, played again from its replay (GET /games/{id}/replay): the mine layout,
// the cells open at the start (a daily board) and every move with its server time and the
// cells it changed, as the service recorded them. Nothing is worked out here: the board at
// any point is the recorded cells applied in order from the start.
//
// Each move is kept as the cells it changed (index, before, after), so the board can step
// both ways from any position without keeping every board along the way.

import { changedCells } from "./diffs.js";
import { Cells, EXPLODED, FLAG, WRONG_FLAG } from "./game.js";

const code = (ch) => ch.charCodeAt(0);
const FLAG_CODE = code(FLAG);
const WRONG_CODE = code(WRONG_FLAG);
const EXPLODED_CODE = code(EXPLODED);
const DIGIT_0 = code("0");
const DIGIT_8 = code("8");

const parseTime = (value) => (value == null ? null : Date.parse(value));
const isFlag = (c) => (c === FLAG_CODE || c === WRONG_CODE ? 1 : 0);

/**
 * The game's clock at each move: server time since the start, less the time spent paused,
 * never going back and never past the end (moves before the first reveal are at 0).
 */
export function moveTimes(replay) {
  const started = parseTime(replay.started_at);
  let paused = 0;
  let pausedAt = null;
  let last = 0;
  return replay.moves.map((move) => {
    const at = parseTime(move.at);
    let t = 0;
    if (started != null && at >= started) {
      if (move.action === "pause") pausedAt = at;
      if (move.action === "resume" && pausedAt != null) {
        paused += at - pausedAt;
        pausedAt = null;
      }
      t = at - started - paused;
    }
    last = Math.min(Math.max(t, last), replay.elapsed_ms);
    return last;
  });
}

export class ReplayGame extends Cells {
  constructor(replay) {
    super(replay.width, replay.height);
    this.replay = replay;
    this.id = replay.id;
    this.mines = replay.mines;
    this.preset = replay.preset;
    this.noGuess = replay.no_guess;
    this.daily = replay.daily ?? null;
    this.player = replay.player ?? null;
    this.outcome = replay.status;
    this.elapsedMs = replay.elapsed_ms;
    this.stats = replay.stats;
    this.fatal = replay.fatal ?? null;
    this.mine = new Uint8Array(this.size);
    replay.layout.forEach((row, y) => {
      for (let x = 0; x < this.width; x++) this.mine[y * this.width + x] = row[x] === "*" ? 1 : 0;
    });
    const opened = changedCells({ cells: replay.opened });
    for (let k = 0; k < opened.length; k++) this.cells[this.index(opened.x[k], opened.y[k])] = opened.code[k];
    this.opensAtStart = replay.opened.length > 0;
    this.steps = this.build();
    // The board starts before the first move; `seek` moves it.
    this.position = 0;
    this.flags = 0;
  }

  get finished() {
    // A replay is never played: the board treats it as over (no pressed cells).
    return true;
  }

  get total() {
    return this.steps.length;
  }

  /** The game's clock at the end, as the server measured it. */
  get duration() {
    return Math.max(this.elapsedMs, this.steps.length ? this.steps[this.steps.length - 1].t : 0);
  }

  /** The status at the current position: the game's own at the end, under way before. */
  get statusNow() {
    if (this.position === this.total && this.total > 0) return this.outcome;
    return this.position > 0 || this.opensAtStart ? "playing" : "ready";
  }

  // ---- the board, as the Board class reads it ----------------------------------------

  canChord() {
    return false;
  }

  minesLeft() {
    return this.mines - this.flags;
  }

  // ---- moving through the game -------------------------------------------------------

  /** Go to `position` (0: before the first move, total: the end); the cells that changed. */
  seek(position) {
    const target = Math.max(0, Math.min(this.steps.length, position));
    const changed = new Set();
    while (this.position < target) {
      for (const [i, before, after] of this.steps[this.position].changes) {
        this.cells[i] = after;
        this.flags += isFlag(after) - isFlag(before);
        changed.add(i);
      }
      this.position += 1;
    }
    while (this.position > target) {
      this.position -= 1;
      const changes = this.steps[this.position].changes;
      for (let k = changes.length - 1; k >= 0; k--) {
        const [i, before, after] = changes[k];
        this.cells[i] = before;
        this.flags += isFlag(before) - isFlag(after);
        changed.add(i);
      }
    }
    return [...changed];
  }

  /** The last position whose move happened at or before game time `t`. */
  positionAt(t) {
    if (t <= 0) return 0;
    let lo = 0;
    let hi = this.steps.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.steps[mid].t <= t) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** The game's clock at the current position. */
  timeNow() {
    return this.position > 0 ? this.steps[this.position - 1].t : 0;
  }

  // ---- the steps ---------------------------------------------------------------------

  /** Each move as the cells it changed, from the board before it: walked once, forward. */
  build() {
    const board = this.cells.slice();
    const times = moveTimes(this.replay);
    return this.replay.moves.map((move, k) => {
      const changes = [];
      const cells = changedCells(move);
      for (let n = 0; n < cells.length; n++) {
        const i = this.index(cells.x[n], cells.y[n]);
        if (i < 0) continue;
        changes.push([i, board[i], cells.code[n]]);
        board[i] = cells.code[n];
      }
      const cell = move.x == null ? -1 : this.index(move.x, move.y);
      const own = changes.findLast(([i]) => i === cell);
      return {
        move,
        t: times[k],
        changes,
        cell,
        opened: changes.filter(([, , a]) => a >= DIGIT_0 && a <= DIGIT_8).length,
        exploded: changes.some(([, , a]) => a === EXPLODED_CODE),
        // What the moved cell shows after the move (for a flag: the mark it now has).
        shows: own ? String.fromCharCode(own[2]) : null,
        // A match's end after a race seat's loss shows the mines the loss held back.
        afterLoss: move.action === "end" && this.replay.fatal != null,
      };
    });
  }
}
