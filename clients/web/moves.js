// The player's intents on the board (board.js) turned into moves: which move a press on
// a cell asks for (a marked cell never opens by accident, a number chords only when its
// flags are all placed), sending it on the game's session with its cells shown pending,
// and saying what it did. What a move does is the service's to say: the page shows the
// cells of its diff.

import { cellStateText } from "./cellwords.js";
import { cellCount, firstChar } from "./diffs.js";
import { FINISHED, FLAG, HIDDEN, QUESTION } from "./game.js";

/** What the page says after a move of its own, from the move's diff ("" for nothing). */
export function moveWords(diff) {
  if (FINISHED.has(diff.status)) return ""; // the end is announced on its own
  const ch = firstChar(diff);
  if (diff.move.action === "flag") {
    if (ch === null) return "";
    return ch === FLAG ? "Flagged." : ch === QUESTION ? "Question mark." : "Mark removed.";
  }
  const opened = cellCount(diff);
  if (opened === 1) return cellStateText(ch);
  return opened > 1 ? `${opened.toLocaleString("en")} cells opened.` : "";
}

/**
 * How to play, in the line under the controls, for the input in use ("keyboard", "touch"
 * or "mouse"): the keys are otherwise only under "How to play", closed. A match's board
 * has no hint and no pause.
 */
export function howToPlay(input, { flagMode = false, match = false } = {}) {
  if (input === "keyboard") {
    return `Space or Enter opens, F flags, C chords${match ? "" : ", H hint, P pause"}; arrows move, + and − zoom.`;
  }
  const [open, flag] = flagMode ? ["flags", "opens"] : ["opens", "flags"];
  return input === "touch"
    ? `Tap ${open}, long press ${flag}; drag to move around, pinch to zoom.`
    : `Click ${open}, right click ${flag}; Ctrl + wheel zooms.`;
}

export class Moves {
  /** `screen`: the game on screen (and what to do with a refusal); `board`: the grid. */
  constructor({ screen, board, notices }) {
    this.screen = screen;
    this.board = board;
    this.notices = notices;
  }

  /** The game on screen, if the player may move in it now. */
  playable() {
    const c = this.screen.current;
    if (!c || c.mode !== "play" || c.game.finished) return null;
    if (c.game.paused) {
      this.notices.announce("The game is paused.");
      return null;
    }
    return c;
  }

  /** A click, tap, Space or Enter: open a hidden cell, or chord a satisfied number. */
  primary(i) {
    const c = this.playable();
    if (!c) return;
    const g = c.game;
    const ch = g.char(i);
    if (ch === HIDDEN) return this.play(c, "reveal", i);
    if (ch === FLAG || ch === QUESTION) {
      // A marked cell never opens by accident: unmark it first.
      this.board.nudge(i);
      this.notices.announce("This cell is marked. Remove the mark before opening it.");
      return;
    }
    if (g.canChord(i)) return this.play(c, "chord", i);
    const n = g.number(i);
    if (n > 0 && g.hiddenAround(i).length > 0) {
      this.notices.announce(`${n} ${n === 1 ? "mine" : "mines"} around, ${g.flagsAround(i)} flagged.`);
    }
  }

  /** A right click, long press or F: flag (or cycle the mark of) a hidden cell. */
  secondary(i, input = null) {
    const c = this.playable();
    if (!c) return;
    const ch = c.game.char(i);
    if (ch === HIDDEN || ch === FLAG || ch === QUESTION) return this.play(c, "flag", i);
    // Only for F: a right press on an open number is how a two-button chord starts.
    if (input === "keyboard") {
      this.board.nudge(i);
      this.notices.announce("This cell is open: only hidden cells take a flag.");
    }
  }

  /** Both buttons, the middle one or C: chord, if the number's flags are all placed. */
  chord(i) {
    const c = this.playable();
    if (!c) return;
    const g = c.game;
    if (g.canChord(i)) return this.play(c, "chord", i);
    const n = g.number(i);
    if (n > 0) {
      const flags = g.flagsAround(i);
      this.board.nudge(i);
      if (flags <= n && g.hiddenAround(i).length === 0) {
        this.notices.announce("Nothing left to open around this cell.");
        return;
      }
      this.notices.announce(`Chord needs exactly ${n} ${n === 1 ? "flag" : "flags"} around; there ${flags === 1 ? "is" : "are"} ${flags}.`);
    }
  }

  /** Send a move on game `c`'s session; its cells show pending until the answer. */
  async play(c, action, i) {
    const g = c.game;
    const [x, y] = g.xy(i);
    const targets = action === "chord" ? g.hiddenAround(i) : [i];
    this.board.setPending(targets, true);
    try {
      const diff = await c.session.move(action, x, y);
      if (c !== this.screen.current) return;
      const words = moveWords(diff);
      if (words) this.notices.announce(words);
    } catch (err) {
      if (c === this.screen.current) this.screen.refused(c, err);
    } finally {
      if (c === this.screen.current) this.board.setPending(targets, false);
    }
  }
}
