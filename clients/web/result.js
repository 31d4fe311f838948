// The result panel under a finished game: who won or lost, in what time, the game's stats
// (3BV, 3BV/s, clicks, efficiency), whether hints made it assisted, and where a ranked win
// stands on its leaderboard. It owns that rank, looked up once per game, and the words
// said when a game ends.

import { formatTime } from "./format.js";
import { shortWindow } from "./boardview.js";

const plural = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;

/** How the panel names a board: "the expert board", "today's daily expert board", … */
export function boardName(g) {
  if (g.daily) return `today's daily ${g.preset} board`;
  return g.preset ? `the ${g.preset} board` : `a ${g.width} × ${g.height} board with ${g.mines} mines`;
}

/**
 * The stats as the panel lists them: [term, value, key]. `time` and `timeTerm`: the time
 * to show instead of the game's clock, and its name (a match's, with its penalties).
 */
export function statRows(g, { time = null, timeTerm = "Time" } = {}) {
  const won = g.status === "won";
  const s = g.stats || {};
  // A shared board's start (a daily board's, a match's) opened some 3BV for the player:
  // 3BV/s and efficiency leave it out, so the 3BV shown is the player's own too (the
  // note under the stats names the start's, see `givenWords`).
  return [
    [timeTerm, time ?? formatTime(g.elapsedMs), "time"],
    ["3BV", s.bbbv == null ? "—" : ownBbbv(g, won), "bbbv"],
    ["3BV/s", s.bbbv_per_second == null ? "—" : s.bbbv_per_second.toFixed(2), "bbbv-per-second"],
    ["Clicks", s.clicks ? String(s.clicks.total) : "—", "clicks"],
    ["Efficiency", s.efficiency == null ? "—" : `${Math.round(s.efficiency * 100)}%`, "efficiency"],
  ];
}

/** The player's own 3BV of a game with a board's 3BV (`s.bbbv`): "11", or "0 of 11". */
export function ownBbbv(g, won) {
  const s = g.stats;
  const given = givenBbbv(g);
  return won ? String(s.bbbv - given) : `${Math.max(0, s.bbbv_done - given)} of ${s.bbbv - given}`;
}

/** The 3BV a shared board's start opened for the player (0 when none). */
function givenBbbv(g) {
  const s = g.stats || {};
  return s.bbbv == null ? 0 : Math.min(s.bbbv_given || 0, s.bbbv);
}

/** What the stats leave out of the 3BV: what the start opened, in words; null when none. */
export function givenWords(g) {
  const given = givenBbbv(g);
  return given ? `Not counted here: the ${given} 3BV the start opened for you.` : null;
}

// Why a player's game that is not assisted and not held is still not ranked, in words.
const UNRANKED = {
  paused: "Paused, so this game is not ranked.",
  daily: (whose) => `Not ranked: only ${whose} first game of today's board is.`,
  seed: "A chosen seed's board can be known beforehand, so it is not ranked.",
  dailyOrPaused: (whose) => `Not ranked: paused on its clock, or not ${whose} first game of today's board.`,
  seedOrPaused: "Not ranked: paused on its clock, or its seed was chosen.",
};

/**
 * Why game `g`, a player's preset game the service says is not ranked (`ranked` false),
 * is not, when no hint did it: null when it is ranked, not a player's preset game, or
 * assisted (the hints say why). Before its clock ran only its board could unrank it (a
 * daily board played before, a chosen seed); after, a pause on its clock.
 */
export function unrankedWhy(g, { mine = true } = {}) {
  const whose = mine ? "your" : "the player's";
  if (g.ranked !== false || !g.playerId || !g.preset) return null;
  if (g.stats && g.stats.assisted) return null;
  if (g.rankedAtStart === false) return g.daily ? UNRANKED.daily(whose) : UNRANKED.seed;
  if (g.rankedAtStart === true || g.pausedOnClock) return UNRANKED.paused;
  return g.daily ? UNRANKED.dailyOrPaused(whose) : UNRANKED.seedOrPaused;
}

export class ResultPanel {
  /**
   * `root`: the panel. `api` for the leaderboard and the final view, `leaderboards` to
   * open on the game's board, `notices` to announce the end. `onAgain()`, `onReplay(id)`,
   * `onShare(id)`: its buttons. `matchEnd(c)`: how a match's board ended, in the match's
   * words ({ won, title, sub, time, timeTerm }), or null for a game of no match.
   */
  constructor(root, { api, leaderboards, notices, onAgain, onReplay, onShare, matchEnd = () => null }) {
    this.root = root;
    this.api = api;
    this.leaderboards = leaderboards;
    this.notices = notices;
    this.matchEnd = matchEnd;
    const $ = (id) => root.querySelector(`#${id}`);
    this.els = {
      title: $("result-title"),
      sub: $("result-sub"),
      stats: $("result-stats"),
      clicks: $("result-clicks"),
      assisted: $("result-assisted"),
      note: $("result-note"),
      again: $("again"),
    };
    this.shown = null; // the game on screen: { c, rank, statsAsked }
    this.els.again.addEventListener("click", () => onAgain());
    $("result-replay").addEventListener("click", () => this.shown && onReplay(this.shown.c.id));
    $("result-share").addEventListener("click", () => this.shown && onShare(this.shown.c.id));
  }

  /** Game `c` (the screen's current game) ended, just now (`fresh`) or before it was opened. */
  finished(c, { fresh }) {
    const entry = this.entryFor(c);
    const g = c.game;
    if (entry.rank == null) this.lookUpRank(entry);
    const s = g.stats;
    // A player's win may be held off the people's leaderboard: the view says so.
    const heldUnknown = g.status === "won" && g.playerId && !g.held;
    if ((!s || s.bbbv == null || s.efficiency == null || heldUnknown) && !entry.statsAsked) {
      // The final stats, and whether a rule held the win back, come with the view; ask
      // for it once.
      entry.statsAsked = true;
      this.api.getGame(c.id).then((view) => c.session.offerView(view)).catch(() => {});
    }
    this.render(c);
    if (fresh && !c.match && !this.root.hidden && shortWindow()) {
      // In a short window the result may be under the board: the page brings it into view
      // once the board has made room for it (at the next frames). A taller window keeps
      // it in view by fitting the board, and its page stays where it is.
      requestAnimationFrame(() => requestAnimationFrame(() => {
        if (this.shown?.c === c && !this.root.hidden) this.root.scrollIntoView({ block: "nearest" });
      }));
    }
    if (fresh) {
      const time = formatTime(g.elapsedMs);
      const mine = c.mode === "play";
      // A match's board: the room's status, a live region, says how it ended (the place
      // comes with the match's end, which may be a moment after the board's).
      if (c.match && this.matchEnd(c)) return;
      if (g.status === "won") this.notices.announce(mine ? `You won in ${time}.` : `The player won in ${time}.`);
      else if (g.endedByMatch) this.notices.announce(`The match is over: the board was not cleared in ${time}.`);
      else this.notices.announce(mine ? `Boom. You hit a mine after ${time}. Game over.` : "The player hit a mine. Game over.");
    }
  }

  entryFor(c) {
    if (!this.shown || this.shown.c !== c) this.shown = { c, rank: null, statsAsked: false };
    return this.shown;
  }

  /** Where a won game ranks: found in its leaderboard (a win is entered as it commits). */
  async lookUpRank(entry, attempt = 0) {
    const g = entry.c.game;
    // Only a player's unassisted win that no rule held back is on a leaderboard.
    if (g.status !== "won" || !g.preset || !g.playerId || g.held || g.ranked === false || (g.stats && g.stats.assisted)) return;
    let entries;
    try {
      ({ entries } = await this.api.leaderboard(g.preset, { noGuess: g.noGuess, date: g.daily, limit: 100 }));
    } catch {
      return; // the rank is a nicety
    }
    if (this.shown !== entry) return;
    // A daily board's entries name no game until the day is over; a player has one entry
    // there, their first game's, so it is this game's if it ended when this one did.
    const ours = (e) => e.game_id === entry.c.id
      || (e.game_id == null && e.player_id === g.playerId && Date.parse(e.ended_at) === g.endedAt);
    const found = entries.find(ours);
    if (found) {
      entry.rank = found.rank;
      this.render(entry.c);
    } else if (attempt === 0) {
      setTimeout(() => this.lookUpRank(entry, 1), 1000);
    }
  }

  /** Show the panel for `c` when its game is over, hide it otherwise. */
  render(c) {
    const g = c && c.game;
    // A match's board ends as its match says: a place, a time with penalties, a
    // resignation, the time running out; never "won" for a second place.
    const m = g && g.finished && c.match ? this.matchEnd(c) : null;
    // A game its match's end stopped, shown outside its match, has nothing to say.
    if (!g || !g.finished || (!m && g.endedByMatch && document.body.dataset.match)) {
      this.root.hidden = true;
      return;
    }
    const e = this.els;
    const won = m ? m.won : g.status === "won";
    const mine = c.mode === "play";
    const who = g.player || "The player";
    this.root.className = `result ${won ? "won" : "lost"}`;
    e.title.textContent = m ? m.title
      : won ? mine ? "You won!" : `${who} won!`
      : g.endedByMatch ? "The match is over."
      : mine ? "Boom! You hit a mine." : `${who} hit a mine.`;
    e.sub.textContent = m ? m.sub
      : won ? `Cleared ${boardName(g)} in ${formatTime(g.elapsedMs)}.`
      : `Game over after ${formatTime(g.elapsedMs)} on ${boardName(g)}.`;
    const s = g.stats || {};
    const clicks = s.clicks || null;
    e.clicks.textContent = clicks
      ? `Clicks: ${plural(clicks.reveal, "open")}, ${plural(clicks.flag, "flag")}, ${plural(clicks.chord, "chord")}; ${clicks.useful} changed the board.`
      : "";
    e.stats.replaceChildren(
      ...statRows(g, { time: m?.time, timeTerm: m?.timeTerm }).map(([term, value, key]) => {
        const div = document.createElement("div");
        div.dataset.stat = key;
        const dt = document.createElement("dt");
        dt.textContent = term;
        const dd = document.createElement("dd");
        dd.textContent = value;
        div.append(dt, dd);
        return div;
      }),
    );
    e.assisted.hidden = !s.assisted;
    this.renderNote(c);
    // After a match, a game of one's own is not the match again (its Rematch is above).
    e.again.textContent = c.match ? "New solo game" : mine ? "Play again" : "Play your own game";
    this.root.hidden = false;
  }

  /** Below the stats: why the game is not ranked, or where it ranks. */
  renderNote(c) {
    const g = c.game;
    const s = g.stats || {};
    const rank = this.shown && this.shown.c === c ? this.shown.rank : null;
    const parts = [];
    const link = (label, run) => {
      const b = document.createElement("button");
      b.type = "button";
      b.className = "link-button";
      b.textContent = label;
      b.addEventListener("click", run);
      return b;
    };
    const openBoard = () => this.leaderboards.open({
      preset: g.preset, noGuess: g.noGuess, daily: Boolean(g.daily),
    });
    // Today's board is everybody's still: the service shows its other mines tomorrow.
    const hidden = g.status === "lost" && g.daily && !c.match && !g.cells.includes(42); // 42: "*"
    if (hidden) parts.push("Today's board is everybody's: its other mines show once the day is over (UTC). ");
    const given = givenWords(g);
    if (given) parts.push(`${given} `);
    if (s.assisted) {
      parts.push(`Assisted: ${plural(s.hints, "hint")} used, so this game is not ranked.`);
    } else if (g.held) {
      parts.push(`Not on the people's leaderboard: ${g.held.detail}.`);
    } else if (g.status === "won" && !c.match && unrankedWhy(g, { mine: c.mode === "play" })) {
      parts.push(unrankedWhy(g, { mine: c.mode === "play" }));
    } else if (rank != null) {
      const where = g.daily ? `today's daily ${g.preset}` : `the ${g.preset}`;
      parts.push(`Ranked #${rank} on ${where}${g.noGuess ? " no-guess" : ""} leaderboard. `,
        link("See the leaderboard", openBoard));
    }
    this.els.note.replaceChildren(...parts);
    this.els.note.hidden = parts.length === 0;
  }
}
