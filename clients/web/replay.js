// A finished game, played again from its replay (GET /games/{id}/replay): the mine
// layout, the cells open at the start (a daily board) and every move with its server
// time. The rules are the service's: a reveal opens a cell and a zero opens its area
// (never a marked cell), a flag cycles the mark, a chord opens the unmarked neighbours
// of a number with as many flags around it; the end shows the board as players see it.
//
// Each move is kept as the cells it changed (index, before, after), so the board can
// step both ways from any position without keeping every board along the way.

import { Cells, FINISHED } from "./game.js";

const code = (ch) => ch.charCodeAt(0);
const HIDDEN = code("#");
const FLAG = code("F");
const QUESTION = code("?");
const MINE = code("*");
const EXPLODED = code("X");
const WRONG = code("!");
const ZERO = code("0");

const parseTime = (value) => (value == null ? null : Date.parse(value));
const isFlag = (c) => (c === FLAG || c === WRONG ? 1 : 0);

/** Whether a replay holds every move from the first: its versions run 1, 2, 3… */
export function isComplete(replay) {
  return replay.moves.every((m, k) => m.version === k + 1);
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
    const size = this.width * this.height;
    this.mine = new Uint8Array(size);
    replay.layout.forEach((row, y) => {
      for (let x = 0; x < this.width; x++) this.mine[y * this.width + x] = row[x] === "*" ? 1 : 0;
    });
    this.around = new Uint8Array(size);
    for (let i = 0; i < size; i++) {
      if (this.mine[i]) for (const n of this.neighbours(i)) this.around[n] += 1;
    }
    for (const [x, y, ch] of replay.opened || []) this.cells[y * this.width + x] = code(ch);
    this.steps = this.build();
    // The board starts before the first move; `seek` moves it.
    this.position = 0;
    this.flags = 0;
    this.statusNow = this.startStatus;
  }

  get size() {
    return this.width * this.height;
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

  // ---- the board, as the Board class reads it ----------------------------------------

  canChord() {
    return false;
  }

  minesLeft() {
    return this.statusNow === "won" ? 0 : this.mines - this.flags;
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
    this.statusNow = this.position > 0 ? this.steps[this.position - 1].status : this.startStatus;
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

  // ---- building the steps -----------------------------------------------------------

  build() {
    const replay = this.replay;
    const steps = [];
    const board = this.cells.slice();
    const started = parseTime(replay.started_at);
    let paused = 0;
    let pausedAt = null;
    let status = "ready";
    let safeLeft = 0;
    for (let i = 0; i < board.length; i++) {
      if (!this.mine[i] && !(board[i] >= ZERO && board[i] <= ZERO + 8)) safeLeft += 1;
    }
    if (replay.opened && replay.opened.length) status = "playing";
    this.startStatus = status;
    let last = 0;
    for (const move of replay.moves) {
      const at = parseTime(move.at);
      let t = 0;
      if (started != null && at >= started) {
        // Time spent paused does not count, as on the game's own clock.
        if (move.action === "pause") pausedAt = at;
        if (move.action === "resume" && pausedAt != null) {
          paused += at - pausedAt;
          pausedAt = null;
        }
        t = at - started - paused;
      }
      t = Math.min(Math.max(t, last), replay.elapsed_ms);
      last = t;
      const changes = [];
      const set = (i, ch) => {
        if (board[i] === ch) return;
        changes.push([i, board[i], ch]);
        board[i] = ch;
      };
      const i = move.x == null ? -1 : move.y * this.width + move.x;
      const exploded = [];
      const open = (start) => {
        // Iterative flood fill: a zero opens its neighbours, marks stay shut.
        const todo = [start];
        while (todo.length) {
          const c = todo.pop();
          if (board[c] !== HIDDEN) continue;
          if (this.mine[c]) {
            set(c, EXPLODED);
            exploded.push(c);
            continue;
          }
          set(c, ZERO + this.around[c]);
          safeLeft -= 1;
          if (this.around[c] === 0) {
            for (const n of this.neighbours(c)) if (board[n] === HIDDEN) todo.push(n);
          }
        }
      };
      if (move.action === "reveal" && i >= 0) {
        if (board[i] === HIDDEN) {
          if (status === "ready") status = "playing";
          open(i);
        }
      } else if (move.action === "flag" && i >= 0) {
        const ch = board[i];
        if (ch === HIDDEN) set(i, FLAG);
        else if (ch === FLAG) set(i, replay.question_marks ? QUESTION : HIDDEN);
        else if (ch === QUESTION) set(i, HIDDEN);
      } else if (move.action === "chord" && i >= 0) {
        const n = board[i] - ZERO;
        const around = this.neighbours(i);
        if (n > 0 && n <= 8 && around.filter((c) => board[c] === FLAG).length === n) {
          for (const c of around) if (board[c] === HIDDEN) open(c);
        }
      }
      if (exploded.length) {
        status = "lost";
        for (let c = 0; c < board.length; c++) {
          if (this.mine[c] && board[c] !== FLAG && board[c] !== EXPLODED) set(c, MINE);
          else if (!this.mine[c] && board[c] === FLAG) set(c, WRONG);
        }
      } else if (safeLeft === 0 && !FINISHED.has(status)) {
        status = "won";
        for (let c = 0; c < board.length; c++) if (this.mine[c]) set(c, FLAG);
      }
      steps.push({ move, t, changes, status, cell: i, exploded });
    }
    return steps;
  }
}
