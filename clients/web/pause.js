// Pause and resume (POST /games/{id}/pause, /resume, or P): the Pause button, the cover
// over a paused board, and what a pause does to the page: the board hidden and inert, the
// keyboard focus taken to Resume and given back to the board after, a word for screen
// readers. It owns the request under way and where the focus goes back to.

import { pauseIcon, playIcon } from "./icons.js";

const TEXT = {
  play: "The clock is stopped and the board is hidden.",
  watch: "The player has paused this game: the clock is stopped and the board hidden.",
};

// What a pause does to the leaderboards, said where it is true: for a game whose win could
// be ranked, and for one a pause has just taken off them.
const UNRANKS = "a game paused once its clock runs is not ranked";

/**
 * The Pause button's tooltip for game `g` (`covered`: it shows Resume): a game that could
 * be ranked is told a pause unranks it; one a pause unranked is told that is why.
 */
export function pauseTitle(g, covered) {
  const why = g.ranked ? `; ${UNRANKS}` : g.unrankedByPause ? "; paused on its clock, this game is no longer ranked" : "";
  return covered
    ? `Resume (P): show the board and start the clock again${why}`
    : `Pause (P): stop the clock and hide the board${why}`;
}

export class Pause {
  /** `screen`: the game on screen; `board`: the grid to cover. */
  constructor({ screen, api, board, notices }) {
    this.screen = screen;
    this.api = api;
    this.board = board;
    this.notices = notices;
    const $ = (id) => document.getElementById(id);
    this.els = {
      game: $("game"),
      frame: $("frame"),
      grid: $("board"),
      button: $("pause"),
      icon: $("pause-icon"),
      label: $("pause-label"),
      cover: $("paused"),
      text: $("paused-text"),
      resume: $("paused-resume"),
    };
    this.els.icon.innerHTML = pauseIcon;
    this.pausing = null; // the game whose pause or resume is under way
    this.next = null; // { c, action }: asked for while that was under way
    this.focusBack = false;
    this.toldUnranked = new WeakSet(); // the games told a pause unranked them
    this.els.button.addEventListener("click", () => this.toggle());
    this.els.resume.addEventListener("click", () => this.toggle());
  }

  async toggle() {
    const c = this.screen.current;
    if (!c || c.mode !== "play" || c.game.finished) return;
    const g = c.game;
    const action = g.paused ? "resume" : "pause";
    if (this.pausing === c) {
      // The last request's answer is on its way (its diff may have come already: the
      // cover and its Resume show): this one follows it rather than being lost.
      this.next = { c, action };
      return;
    }
    if (action === "pause" && g.status !== "playing") {
      this.notices.announce("The clock has not started yet.");
      return;
    }
    this.pausing = c;
    this.screen.render();
    try {
      // The answer is the diff the socket brings too: whichever comes first is applied.
      c.session.offer(await this.api.pause(c.id, action, c.token));
    } catch (err) {
      if (c === this.screen.current) this.screen.refused(c, err);
    } finally {
      if (this.pausing === c) this.pausing = null;
      if (c === this.screen.current) this.screen.render();
      const next = this.next;
      this.next = null;
      // Only what still makes sense: a resume of a paused game, a pause of a running one.
      if (next && next.c === c && c === this.screen.current && (next.action === "resume") === c.game.paused) {
        this.toggle();
      }
    }
  }

  /**
   * The game on screen changed (called before the page renders it): when it was covered or
   * shown again, move the keyboard focus and say so. A player whose focus was on the game
   * (the board, the Pause button, or nowhere: a button disabled while the pause was asked
   * for drops it) lands on Resume, and back on the board's cursor cell after.
   */
  afterChange(c, before) {
    const covered = c.game.covered;
    if (covered === before.covered) return;
    const playing = c.mode === "play";
    const focused = document.activeElement;
    const lost = !focused || focused === document.body;
    if (covered) {
      const onGame = this.els.grid.contains(focused) || (playing && (lost || this.els.game.contains(focused)));
      this.focusBack = onGame && this.screen.visible;
      this.render(c);
      if (this.focusBack && playing) this.els.resume.focus();
      this.notices.announce(playing ? "Game paused: the clock is stopped. Press P to resume." : "The player paused the game.");
      // The pause took a win that could be ranked off the leaderboards: said once, as it
      // happens (a pause before the clock runs costs nothing, and is not one).
      if (playing && c.game.unrankedByPause && !this.toldUnranked.has(c)) {
        this.toldUnranked.add(c);
        this.notices.toast("Paused on its clock, this game is no longer ranked.", { about: c.id, timeout: 10000 });
      }
    } else {
      // Resume, now hidden, had the focus: it is dropped as the cover goes.
      const back = this.focusBack || (playing && this.screen.visible && (lost || focused === this.els.resume));
      this.render(c);
      if (back) this.board.focus();
      this.focusBack = false;
      this.notices.announce(playing ? "Game resumed." : "The player resumed the game.");
    }
  }

  /** A game was put on screen: nothing to give the focus back to. */
  reset() {
    this.focusBack = false;
  }

  /** The cover, the board's inertness and the Pause button, for game `c`. */
  render(c) {
    const e = this.els;
    const covered = Boolean(c && c.game.covered);
    const watching = !c || c.mode !== "play";
    e.cover.hidden = !covered;
    e.frame.dataset.paused = String(covered);
    e.grid.inert = covered;
    e.text.textContent = watching ? TEXT.watch : TEXT.play;
    e.resume.hidden = watching;
    const playing = Boolean(c && c.mode === "play" && !c.match);
    e.button.hidden = !playing;
    if (!playing) return;
    const g = c.game;
    e.button.disabled = g.finished || this.pausing === c || (g.status !== "playing" && !g.paused);
    const label = covered ? "Resume" : "Pause";
    if (e.label.textContent !== label) {
      e.label.textContent = label;
      e.icon.innerHTML = covered ? playIcon : pauseIcon;
    }
    const title = pauseTitle(g, covered);
    if (e.button.title !== title) e.button.title = title;
  }
}
