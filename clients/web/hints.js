// Hints: asking the service for the next cell (POST /games/{id}/hint), asking the player
// first when the hint would cost a preset game its place on the leaderboards, and showing
// the answer: the cell and the numbers its reason names marked on the board, the reason in
// words, and "Open it" / "Flag it" (or, on a safe cell the player flagged, "Unflag and
// open"). It owns the hint on show and the request under way.

import { formatPercent } from "./format.js";

const KIND = { safe: "Safe:", mine: "Mine:", guess: "Best guess:" };

/** The reason in words, with the service's (x, y) as the row and column a player sees. */
export function readableReason(reason, width, height) {
  const sources = [];
  const text = reason.replace(/\((\d+), (\d+)\)/g, (_, x, y) => {
    const cx = Number(x);
    const cy = Number(y);
    if (cx < width && cy < height) sources.push(cy * width + cx);
    return `row ${cy + 1}, column ${cx + 1}`;
  });
  return { text: text.charAt(0).toUpperCase() + text.slice(1), sources };
}

/**
 * What the hint's button does to a cell showing `ch` ("#" hidden, "F" flagged, "?"
 * question mark, else open), for a hint of `kind`: { label, steps, note }, `steps` the
 * moves it plays in turn ("flag" takes a mark off, one step of its cycle at a time; the
 * last is the hint's own move) and `note` what the hint says of the mark there; null when
 * there is nothing to do (an open cell, a mine already flagged).
 */
export function hintAction(kind, ch) {
  if (ch === "#") return kind === "mine" ? { label: "Flag it", steps: ["flag"], note: "" } : { label: "Open it", steps: ["reveal"], note: "" };
  if (kind === "mine" || (ch !== "F" && ch !== "?")) return null;
  // A flag goes, with question marks on, by way of a question mark: both are taken off.
  const steps = ["unmark", "reveal"];
  if (ch === "?") return { label: "Clear the mark and open", steps, note: "Your question mark is on it." };
  return kind === "safe"
    ? { label: "Unflag and open", steps, note: "Your flag there is wrong." }
    : { label: "Unflag and open", steps, note: "Your flag is on it." };
}

/**
 * Whether a change to the game ends the hint on show: its cell was played, the game
 * changed status (the first click placed the mines, or it ended), or, for a guess whose
 * odds any newly opened cell changes, the board opened further.
 */
export function outlives(hint, { diff, changed, before, status }) {
  if (changed.includes(hint.i) || status !== before.status) return false;
  const opened = changed.length > 0 && !(diff && diff.move.action === "flag");
  return !(hint.kind === "guess" && opened);
}

export class Hints {
  /**
   * `screen`: the game on screen. `board`: where the marks go. `prefs`/`savePrefs`: the
   * "don't ask again" choice. `play(c, action, i)`: play the hinted cell.
   */
  constructor({ screen, api, board, prefs, savePrefs, notices, play }) {
    this.screen = screen;
    this.api = api;
    this.board = board;
    this.prefs = prefs;
    this.savePrefs = savePrefs;
    this.notices = notices;
    this.play = play;
    const $ = (id) => document.getElementById(id);
    this.els = {
      button: $("hint"),
      panel: $("hint-panel"),
      kind: $("hint-kind"),
      where: $("hint-where"),
      reason: $("hint-reason"),
      act: $("hint-act"),
      dialog: $("hint-dialog"),
      dontAsk: $("hint-dont-ask"),
      confirm: $("hint-confirm"),
    };
    this.shown = null; // { c, i, kind, ... }: the hint on show, for game c
    this.asking = null; // the game whose hint is being asked for
    this.els.button.addEventListener("click", () => this.ask());
    this.els.act.addEventListener("click", () => this.playShown());
    $("hint-dismiss").addEventListener("click", () => this.dismiss());
  }

  async ask() {
    const c = this.screen.current;
    if (!c || c.mode !== "play" || c.game.finished || this.asking === c) return;
    if (c.game.paused) {
      this.notices.announce("The game is paused.");
      return;
    }
    const assisted = Boolean(c.game.stats && c.game.stats.assisted);
    // Only presets are ranked; the first hint there costs the game its place.
    if (c.game.preset && !assisted && this.prefs.confirmHints) {
      if (!(await this.confirm()) || c !== this.screen.current) return;
    }
    this.asking = c;
    this.screen.render();
    // The game's feed may tell of this hint before its answer comes: count it once.
    const counted = (c.game.stats && c.game.stats.hints) || 0;
    try {
      const hint = await this.api.hint(c.id, c.token);
      if (c !== this.screen.current) return;
      c.game.noteHints(counted + 1);
      this.show(c, hint);
    } catch (err) {
      if (c !== this.screen.current) return;
      if (err.code === "game_over") this.notices.toast("No hint: this game is over.", { about: c.id });
      else this.screen.refused(c, err);
    } finally {
      if (this.asking === c) this.asking = null;
      if (c === this.screen.current) this.screen.render();
    }
  }

  confirm() {
    const { dialog: d, dontAsk, confirm } = this.els;
    dontAsk.checked = false;
    d.returnValue = "";
    return new Promise((resolve) => {
      d.addEventListener("close", () => {
        const ok = d.returnValue === "hint";
        if (ok && dontAsk.checked) {
          this.prefs.confirmHints = false;
          this.savePrefs(this.prefs);
        }
        resolve(ok);
      }, { once: true });
      d.showModal();
      confirm.focus();
    });
  }

  show(c, hint) {
    const g = c.game;
    const e = this.els;
    const i = hint.y * g.width + hint.x;
    const { text, sources } = readableReason(hint.reason || "", g.width, g.height);
    const chance = formatPercent(hint.mine_probability);
    const action = hintAction(hint.kind, g.char(i));
    this.shown = { ...hint, c, i, action };
    // The hint was asked for after any notice on show: it takes their place, uncovered.
    this.notices.clear();
    const where = `row ${hint.y + 1}, column ${hint.x + 1}`;
    const kind = KIND[hint.kind] || "Hint:";
    let label = { safe: "hint: safe", mine: "hint: a mine", guess: `hint: best guess, ${chance} chance of a mine` }[hint.kind];
    if (hint.kind === "safe" && g.char(i) === "F") label += ", wrongly flagged";
    this.board.mark("hint-source", sources.filter((s) => s !== i), { cls: "hint-source", text: "a reason for the hint" });
    this.board.mark("hint", [i], { cls: `hint hint-${hint.kind}`, text: label });
    e.panel.dataset.kind = hint.kind;
    e.kind.textContent = kind;
    const note = action?.note ? ` ${action.note}` : "";
    e.where.textContent = hint.kind === "guess" ? `${where}, a ${chance} chance of a mine.${note}` : `${where}.${note}`;
    e.reason.textContent = ` ${text}.`;
    e.act.textContent = action?.label ?? "";
    e.act.hidden = !action;
    e.panel.hidden = false;
    // The keyboard cursor goes to the cell: Space (or F) plays it. The panel is no live
    // region (it holds buttons, and comes out of hiding): the announcer says it, once.
    this.board.cursorTo(i);
    this.notices.announce(`${kind} ${e.where.textContent}${e.reason.textContent}`);
  }

  /** Dismiss, or Escape: the hint goes, and the keys go back to the board. */
  dismiss() {
    this.hide();
    if (!this.board.readonly) this.board.focus();
  }

  hide() {
    this.shown = null;
    this.board.unmark("hint");
    this.board.unmark("hint-source");
    this.els.panel.hidden = true;
  }

  /** The game on screen changed: the hint stays only while it still holds. */
  afterChange(c, change) {
    const h = this.shown;
    if (!h) return;
    if (h.c !== c || c.game.covered || c.game.finished || !outlives(h, { ...change, status: c.game.status })) this.hide();
  }

  async playShown() {
    const h = this.shown;
    const c = this.screen.current;
    if (!h || h.c !== c || !h.action) return;
    const g = c.game;
    const action = hintAction(h.kind, g.char(h.i));
    if (!action) return;
    // "Open it" goes with the hint once the cell is played: the focus goes to that cell
    // first, where the player plays on, instead of being dropped with the button.
    this.board.focusCell(h.i);
    for (const step of action.steps) {
      if (step === "unmark") {
        // A flag's cycle may pass a question mark: at most two steps to a bare cell.
        for (let k = 0; k < 2 && !g.isHidden(h.i) && "F?".includes(g.char(h.i)); k++) {
          await this.play(c, "flag", h.i);
          if (c !== this.screen.current || c.game !== g) return;
        }
        if (!g.isHidden(h.i)) return;
      } else {
        await this.play(c, step, h.i);
      }
    }
  }

  /** The Hint button: for the player, while the game runs. */
  render(c) {
    const b = this.els.button;
    const playing = Boolean(c && c.mode === "play" && !c.match);
    b.hidden = !playing;
    if (!playing) return;
    const asking = this.asking === c;
    b.disabled = c.game.finished || c.game.paused || asking;
    b.setAttribute("aria-busy", String(asking));
  }
}
