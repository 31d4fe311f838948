// The replay viewer: a finished game played again on a read-only board from the cells the
// service recorded for each move, step by step or in time with the server's clock (faster
// if wished), with the mines shown at the end and, for a loss, whether the fatal click was
// a forced guess or a mistake.
//
// Keys: Left/Right step, Page Up/Down ten steps, Home/End the start and the end,
// Space (or K) plays and pauses, Escape closes.

import { Board } from "./board.js";
import { MIN_END_CELL, roomFor } from "./boardview.js";
import { SevenSegment } from "./digits.js";
import { formatClock, formatTime } from "./format.js";
import { playIcon, pauseIcon, stepBackIcon, stepForwardIcon, toEndIcon, toStartIcon } from "./icons.js";
import { writeText } from "./notices.js";
import { ReplayGame } from "./replay.js";
import { ownBbbv } from "./result.js";

const SPEEDS = [1, 2, 4, 8, 16];

const where = (x, y) => `row ${y + 1}, column ${x + 1}`;
const plural = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;

function boardName(g) {
  const what = g.preset ? `the ${g.preset} board` : `a ${g.width} × ${g.height} board with ${g.mines} mines`;
  return g.daily ? `${what} of ${g.daily} (daily)` : what;
}

/** What one step of a replay did, in words: "opened row 2, column 3 (6 cells)". */
export function stepWords(step) {
  const { action, x, y } = step.move;
  const { opened } = step;
  if (action === "reveal") {
    return step.exploded ? `opened ${where(x, y)}: a mine` : `opened ${where(x, y)}${opened > 1 ? ` (${opened} cells)` : ""}`;
  }
  if (action === "chord") {
    return step.exploded ? `chorded on ${where(x, y)} and hit a mine` : `chorded on ${where(x, y)} (${plural(opened, "cell")} opened)`;
  }
  if (action === "flag") {
    const ch = step.shows ?? "F";
    return ch === "F" ? `flagged ${where(x, y)}` : ch === "?" ? `question-marked ${where(x, y)}` : `took the mark off ${where(x, y)}`;
  }
  if (action === "pause") return "paused the game";
  if (action === "resume") return "resumed the game";
  // "end": the match ended with this board not cleared (time up, or the seat resigned),
  // or, after a race seat's loss, showed the mines the other seats were still playing.
  if (step.afterLoss) return "the match ended: the other mines show";
  return "the match ended before the board was cleared";
}

export class ReplayViewer {
  /**
   * `root`: the viewer's section; `onClose()` leaves it. The line describing the move
   * on show is a polite live region, quiet while the replay plays.
   */
  constructor(root, { api, onClose }) {
    this.root = root;
    this.api = api;
    this.onClose = onClose;
    const $ = (id) => root.querySelector(`#${id}`);
    this.els = {
      title: $("replay-title"),
      sub: $("replay-sub"),
      verdict: $("replay-verdict"),
      status: $("replay-status"),
      body: $("replay-body"),
      frame: $("replay-frame"),
      area: $("replay-area"),
      canvas: $("replay-canvas"),
      scroller: $("replay-scroller"),
      space: $("replay-space"),
      grid: $("replay-board"),
      step: $("replay-step"),
      timeline: $("replay-timeline"),
      ticks: $("replay-ticks"),
      timeNow: $("replay-time-now"),
      timeTotal: $("replay-time-total"),
      start: $("replay-start"),
      back: $("replay-back"),
      play: $("replay-play"),
      forward: $("replay-forward"),
      end: $("replay-end"),
      speed: $("replay-speed"),
      showMines: $("replay-show-mines"),
      move: $("replay-move"),
      close: $("replay-close"),
    };
    const nothing = () => {};
    const { area, canvas, scroller, space, grid } = this.els;
    this.board = new Board({ area, canvas, scroller, space, grid }, {
      primary: nothing, secondary: nothing, chord: nothing, pressing: nothing,
    });
    this.minesDisplay = new SevenSegment($("replay-mines"), (v) => `Mines left: ${v}`);
    this.timerDisplay = new SevenSegment($("replay-timer"), (v) => `Time: ${v} second${v === 1 ? "" : "s"}`);
    this.game = null;
    this.loading = 0;
    this.playing = false;
    this.frame = 0;
    this.clock = 0;
    this.wire();
  }

  wire() {
    const e = this.els;
    e.start.innerHTML = toStartIcon;
    e.back.innerHTML = stepBackIcon;
    e.forward.innerHTML = stepForwardIcon;
    e.end.innerHTML = toEndIcon;
    e.speed.replaceChildren(...SPEEDS.map((s) => new Option(`${s}×`, String(s))));
    e.start.addEventListener("click", () => this.goTo(0));
    e.back.addEventListener("click", () => this.step(-1));
    e.forward.addEventListener("click", () => this.step(1));
    e.end.addEventListener("click", () => this.goTo(Infinity));
    e.play.addEventListener("click", () => this.toggle());
    e.close.addEventListener("click", () => this.onClose());
    e.speed.addEventListener("change", () => {
      // Keep the position: the clock goes on from here at the new pace.
      if (this.playing) this.lastFrame = performance.now();
    });
    e.showMines.addEventListener("change", () => this.game && this.renderLayout());
    this.renderPlay();
    e.timeline.addEventListener("input", () => {
      const g = this.game;
      if (!g) return;
      this.stop();
      const t = Number(e.timeline.value);
      this.seek(g.positionAt(t), t);
    });
    e.timeline.addEventListener("keydown", (ev) => {
      // From the keyboard the timeline moves by moves, not by milliseconds.
      const by = { ArrowLeft: -1, ArrowDown: -1, ArrowRight: 1, ArrowUp: 1, PageUp: 10, PageDown: -10 }[ev.key];
      if (by) {
        ev.preventDefault();
        ev.stopPropagation();
        this.step(by);
      } else if (ev.key === "Home" || ev.key === "End") {
        ev.preventDefault();
        ev.stopPropagation();
        this.goTo(ev.key === "Home" ? 0 : Infinity);
      }
    });
    this.root.addEventListener("keydown", (ev) => this.onKey(ev));
  }

  onKey(ev) {
    if (!this.game || ev.defaultPrevented || ev.altKey || ev.ctrlKey || ev.metaKey) return;
    const t = ev.target;
    if (t.closest("select, input, [role=grid]")) {
      if (ev.key === "Escape" && !t.closest("select")) this.onClose();
      return;
    }
    const key = ev.key.length === 1 ? ev.key.toLowerCase() : ev.key;
    const onButton = Boolean(t.closest("button"));
    let handled = true;
    if (key === "ArrowLeft") this.step(-1);
    else if (key === "ArrowRight") this.step(1);
    else if (key === "PageUp") this.step(-10);
    else if (key === "PageDown") this.step(10);
    else if (key === "Home") this.goTo(0);
    else if (key === "End") this.goTo(Infinity);
    else if (key === "k" || (key === " " && !onButton)) this.toggle();
    else if (key === "Escape") this.onClose();
    else handled = false;
    if (handled) ev.preventDefault();
  }

  // ---- opening -----------------------------------------------------------------------

  /** `outcome`: how the game ended in words, when the page knows better (a match's place). */
  async open(id, { outcome = null } = {}) {
    const gen = ++this.loading;
    this.stop();
    this.outcome = outcome;
    if (this.game && this.game.id === id) {
      this.describe(this.game);
      this.fit();
      return;
    }
    this.game = null;
    this.els.body.hidden = true;
    this.els.verdict.hidden = true;
    this.els.title.textContent = "Replay";
    this.els.sub.textContent = "";
    this.setStatus("Loading the replay…");
    let data;
    try {
      data = await this.api.replay(id);
    } catch (err) {
      if (gen !== this.loading) return;
      if (err.code === "game_in_progress") {
        this.setStatus("This game is still being played: its replay is ready once it ends.", {
          label: "Watch it live", href: `#/watch/${id}`,
        });
      } else if (err.status === 404) {
        this.setStatus("That game does not exist any more (games expire after a week without moves).");
      } else {
        this.setStatus(`Could not load the replay: ${err.message}`, { label: "Retry", run: () => this.open(id) });
      }
      return;
    }
    if (gen !== this.loading) return;
    if (!data.complete) {
      // Playing from a later move would show a board that never was.
      this.setStatus("This game is too long for a replay: its first moves are no longer kept.", {
        label: "See the game", href: `#/watch/${id}`,
      });
      return;
    }
    const game = new ReplayGame(data);
    this.game = game;
    this.setStatus("");
    this.els.body.hidden = false;
    this.describe(game);
    this.board.show(game, { readonly: true, label: "Replay" });
    this.fit();
    this.buildTimeline(game);
    this.seek(0);
    this.renderLayout();
    this.els.play.focus();
  }

  setStatus(text, action = null) {
    const el = this.els.status;
    el.replaceChildren();
    el.hidden = !text;
    if (!text) return;
    const p = document.createElement("span");
    p.textContent = text;
    el.append(p);
    if (action) {
      const link = document.createElement(action.href ? "a" : "button");
      link.className = "link-button";
      link.textContent = action.label;
      if (action.href) link.href = action.href;
      else {
        link.type = "button";
        link.addEventListener("click", action.run);
      }
      el.append(" ", link);
    }
  }

  describe(g) {
    const won = g.outcome === "won";
    const who = g.player || "The player";
    this.els.title.textContent = `Replay: ${this.outcome || `${who} ${won ? "won" : "lost"}`}`;
    const s = g.stats || {};
    const parts = [
      won ? `Cleared ${boardName(g)} in ${formatTime(g.elapsedMs)}` : `Hit a mine after ${formatTime(g.elapsedMs)} on ${boardName(g)}`,
    ];
    if (g.noGuess) parts.push("no-guess board");
    // The player's own 3BV, as the result counts it; the start's given 3BV apart.
    if (s.bbbv != null) {
      const given = Math.min(s.bbbv_given || 0, s.bbbv);
      parts.push(`3BV ${ownBbbv(g, won)}${given ? ` (and ${given} opened at the start)` : ""}`);
    }
    if (s.clicks) parts.push(plural(s.clicks.total, "click"));
    if (s.assisted) parts.push(`assisted (${plural(s.hints, "hint")})`);
    this.els.sub.textContent = `${parts.join(" · ")}.`;
    const f = g.fatal;
    const v = this.els.verdict;
    if (g.outcome === "lost" && f) {
      v.dataset.verdict = f.forced_guess ? "forced-guess" : "mistake";
      const badge = document.createElement("strong");
      badge.className = "verdict-badge";
      badge.textContent = f.forced_guess ? "Forced guess" : "Mistake";
      const text = f.forced_guess
        ? ` The fatal click, ${where(f.x, f.y)}, was a forced guess: no cell was certainly safe at that point.`
        : ` The fatal click, ${where(f.x, f.y)}, was a mistake: logic could still find a safe cell.`;
      v.replaceChildren(badge, text);
      v.hidden = false;
    } else {
      v.hidden = true;
    }
  }

  /**
   * The board as large as comfortable in the room the window leaves it: a replay is only
   * looked at, so its cells may be as small as a finished game's, to show all of it.
   */
  fit() {
    if (!this.game) return;
    this.board.fit(roomFor(this.els.area, this.root), null, { least: MIN_END_CELL });
  }

  buildTimeline(g) {
    const e = this.els;
    const total = Math.max(1, g.duration);
    e.timeline.max = String(total);
    e.timeline.step = "1";
    e.timeTotal.textContent = formatClock(g.duration);
    // One tick per move along the track, coloured by kind; the fatal one stands out.
    const paths = { reveal: "", flag: "", other: "", end: "" };
    g.steps.forEach((s, k) => {
      const x = ((s.t / total) * 1000).toFixed(1);
      const kind = k === g.total - 1 ? "end" : s.move.action === "flag" ? "flag" : s.move.action === "reveal" || s.move.action === "chord" ? "reveal" : "other";
      paths[kind] += `M${x} 0v10`;
    });
    e.ticks.innerHTML = Object.entries(paths)
      .filter(([, d]) => d)
      .map(([kind, d]) => `<path class="tick-${kind}" d="${d}"/>`)
      .join("");
  }

  // ---- moving ------------------------------------------------------------------------

  step(by) {
    if (!this.game) return;
    this.stop();
    this.seek(this.game.position + by);
  }

  goTo(position) {
    if (!this.game) return;
    this.stop();
    this.seek(position === Infinity ? this.game.total : position);
  }

  /** Show `position`; `clock` is the game time to show (the move's own by default). */
  seek(position, clock = null) {
    const g = this.game;
    const changed = g.seek(position);
    this.board.update(changed);
    this.clock = clock ?? g.timeNow();
    this.renderMarks();
    this.render();
  }

  toggle() {
    if (this.playing) this.stop();
    else this.play();
  }

  play() {
    const g = this.game;
    if (!g || g.total === 0) return;
    if (g.position >= g.total) this.seek(0);
    this.playing = true;
    this.clock = g.timeNow();
    this.lastFrame = performance.now();
    this.els.move.setAttribute("aria-live", "off");
    this.renderPlay();
    const frame = (now) => {
      if (!this.playing || this.game !== g) return;
      this.clock += (now - this.lastFrame) * Number(this.els.speed.value || 1);
      this.lastFrame = now;
      const target = Math.max(g.position, g.positionAt(this.clock));
      if (target !== g.position) this.seek(target, this.clock);
      else this.render();
      if (g.position >= g.total && this.clock >= g.duration) {
        this.stop();
        return;
      }
      this.frame = requestAnimationFrame(frame);
    };
    this.frame = requestAnimationFrame(frame);
  }

  stop() {
    cancelAnimationFrame(this.frame);
    if (!this.playing) return;
    this.playing = false;
    this.els.move.setAttribute("aria-live", "polite");
    if (this.game) {
      this.clock = Math.min(this.clock, this.game.duration);
      this.render();
    }
    this.renderPlay();
  }

  /** Leave the viewer: nothing runs in the background. */
  hide() {
    this.stop();
    this.loading += 1;
  }

  // ---- rendering ---------------------------------------------------------------------

  renderMarks() {
    const g = this.game;
    const b = this.board;
    const s = g.position > 0 ? g.steps[g.position - 1] : null;
    if (s && s.cell >= 0) b.mark("last", [s.cell], { cls: "replay-last", text: "last move" });
    else b.unmark("last");
    const f = g.fatal;
    if (f && g.position === g.total) {
      b.mark("fatal", [f.y * g.width + f.x], { cls: "fatal", text: f.forced_guess ? "the fatal click, a forced guess" : "the fatal click, a mistake" });
    } else {
      b.unmark("fatal");
    }
  }

  /** The mines laid over the board, on demand: they stay put while the replay moves. */
  renderLayout() {
    const g = this.game;
    if (this.els.showMines.checked) {
      const mines = [];
      for (let i = 0; i < g.size; i++) if (g.mine[i]) mines.push(i);
      this.board.mark("layout", mines, { cls: "layout-mine", text: "a mine" });
    } else {
      this.board.unmark("layout");
    }
  }

  render() {
    const g = this.game;
    const e = this.els;
    const clock = Math.min(this.clock, g.duration);
    this.minesDisplay.set(g.minesLeft());
    this.timerDisplay.set(Math.floor(clock / 1000));
    e.frame.dataset.status = g.statusNow;
    e.frame.dataset.position = String(g.position);
    e.step.textContent = `Move ${g.position} of ${g.total}`;
    e.timeline.value = String(Math.round(clock));
    e.timeNow.textContent = formatClock(clock);
    e.timeline.setAttribute("aria-valuetext", `Move ${g.position} of ${g.total}, ${formatClock(clock)}`);
    const focused = document.activeElement;
    e.start.disabled = e.back.disabled = g.position === 0;
    e.forward.disabled = e.end.disabled = g.position === g.total;
    // A button that just went off would drop the keyboard focus on the page: keep it here.
    if (focused && focused.disabled && this.root.contains(focused)) e.play.focus();
    const text = this.moveText();
    writeText(e.move, text);
  }

  renderPlay() {
    const b = this.els.play;
    b.innerHTML = `${this.playing ? pauseIcon : playIcon}<span>${this.playing ? "Pause" : "Play"}</span>`;
    b.setAttribute("aria-label", this.playing ? "Pause the replay (Space)" : "Play the replay (Space)");
  }

  moveText() {
    const g = this.game;
    if (g.position === 0) {
      return g.daily
        ? "Start: today's board, its start area already open."
        : "Start: every cell hidden.";
    }
    const s = g.steps[g.position - 1];
    const what = stepWords(s);
    let end = "";
    if (g.position === g.total) end = g.outcome === "won" ? " The game is won." : " The game is lost.";
    return `Move ${g.position} of ${g.total}, at ${formatClock(s.t)}: ${what}.${end}`;
  }
}
