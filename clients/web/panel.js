// The classic panel above the board: the mines-left counter, the face and the timer. It
// owns the face's "oh" while a cell is pressed and the timer's tick, which runs on the
// server's clock (clock.js) from the game's last time reference.

import { SevenSegment } from "./digits.js";
import { faceSvg } from "./icons.js";

export class Panel {
  /** `frame`: the game's frame, which carries the elapsed time for scripts. */
  constructor({ frame, mines, face, timer, clock }) {
    this.frame = frame;
    this.face = face;
    this.clock = clock;
    this.mines = new SevenSegment(mines, (v) => `Mines left: ${v}`);
    this.timer = new SevenSegment(timer, (v) => `Time: ${v} second${v === 1 ? "" : "s"}`);
    this.game = null;
    this.watching = false;
    this.isPressing = false;
    this.tickTimer = 0;
  }

  /** Show `game` (a Game, or null before any). */
  render(game, { watching }) {
    this.game = game;
    this.watching = watching;
    if (game) this.mines.set(game.minesLeft);
    this.renderFace();
    this.tick();
  }

  /** A cell is pressed (or no longer): the face holds its breath. */
  pressing(active) {
    this.isPressing = active;
    this.renderFace();
  }

  renderFace() {
    const status = this.game ? this.game.status : "ready";
    let kind = "smile";
    if (status === "won") kind = "win";
    // A game its match's end stopped (out of time, resigned) hit no mine.
    else if (status === "lost" && !this.game.endedByMatch) kind = "dead";
    else if (this.isPressing) kind = "oh";
    if (this.face.dataset.face !== kind) {
      this.face.innerHTML = faceSvg(kind);
      this.face.dataset.face = kind;
    }
    const label = this.watching ? "Play your own game (F2)" : "New game (F2)";
    this.face.setAttribute("aria-label", label);
    this.face.title = label;
  }

  /** Show the time now, and come back when the next second begins while the clock runs. */
  tick() {
    clearTimeout(this.tickTimer);
    const g = this.game;
    if (!g) return;
    const ms = g.elapsedAt(this.clock.now());
    this.timer.set(Math.floor(ms / 1000));
    this.frame.dataset.elapsed = String(Math.floor(ms));
    if (g.status === "playing" && !g.paused) {
      this.tickTimer = setTimeout(() => this.tick(), 1000 - (ms % 1000) + 10);
    }
  }
}
