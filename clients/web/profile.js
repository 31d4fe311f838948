// A player's profile page (#/player/<id>): the name (renamed here on one's own profile),
// the stats per preset, classic and no-guess (played, won, best time, best 3BV/s, streaks),
// the ratings once there are any, and the recent games, each opening its replay. The pure
// functions at the top say what the page shows; the class puts it on screen.

import { formatTime } from "./format.js";
import { NAME_HELP, nameProblem, renameMessage } from "./player.js";

export const PRESETS = ["beginner", "intermediate", "expert"];
const KINDS = [["classic", false], ["no_guess", true]];

const capital = (s) => s.charAt(0).toUpperCase() + s.slice(1);
const plural = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;

/** A board's name: "Beginner" or "Beginner, no guessing". */
export function boardLabel(preset, noGuess) {
  return `${capital(preset)}${noGuess ? ", no guessing" : ""}`;
}

/**
 * The stats table: one row per preset and kind, as `{ key, label, won, best, rate, streak }`
 * (text, "—" for none): five columns fit a phone's width.
 */
export function statRows(stats) {
  const rows = [];
  for (const preset of PRESETS) {
    for (const [kind, noGuess] of KINDS) {
      const s = (stats && stats[preset] && stats[preset][kind]) || {};
      rows.push({
        key: `${preset}-${noGuess ? "noguess" : "classic"}`,
        label: boardLabel(preset, noGuess),
        won: `${s.won || 0} of ${s.played || 0}`,
        best: s.best_ms == null ? "—" : formatTime(s.best_ms),
        rate: s.best_bbbv_per_s == null ? "—" : s.best_bbbv_per_s.toFixed(2),
        streak: `${s.streak || 0} (best ${s.best_streak || 0})`,
      });
    }
  }
  return rows;
}

/** The totals over every board: games played and won. */
export function totals(stats) {
  let played = 0;
  let won = 0;
  for (const preset of PRESETS) {
    for (const [kind] of KINDS) {
      const s = (stats && stats[preset] && stats[preset][kind]) || {};
      played += s.played || 0;
      won += s.won || 0;
    }
  }
  return { played, won };
}

/**
 * The summary of what the stats count, said as what it is: the preset boards' games only
 * (a custom board's game is in the recent games, not in these stats).
 */
export function totalsWords(stats) {
  const { played, won } = totals(stats);
  return `${plural(played, "game")} finished on the standard boards, ${won} won`;
}

/**
 * One line of the recent list, for a game or a match of the player's: a game opens its
 * replay, a match its page (the result table, with every seat's replay).
 */
export function recentWords(r) {
  const match = r.kind === "match";
  const outcome = r.result === "won" ? "Won" : "Lost";
  const board = r.preset ? boardLabel(r.preset, r.no_guess) : r.no_guess ? "Custom, no guessing" : "Custom";
  const where = r.daily ? `${board}, daily ${r.daily}` : match ? `Match, ${board.toLowerCase()}` : board;
  const parts = [where, formatTime(r.elapsed_ms)];
  if (r.result === "won" && r.bbbv_per_second != null) parts.push(`${r.bbbv_per_second.toFixed(2)} 3BV/s`);
  if (r.assisted) parts.push("assisted");
  return { outcome, detail: parts.join(" · "), replayable: r.kind === "game", match };
}

/** The ratings, one line each (there are none before the first rated match). */
export function ratingLines(ratings) {
  return Object.entries(ratings || {}).map(
    ([mode, r]) =>
      `${capital(mode)}: ${Math.round(r.rating)} ± ${Math.round(r.deviation)} ` +
      `(${plural(r.games, "game")}${r.provisional ? ", provisional" : ""})`,
  );
}

const el = (tag, props = {}, ...children) => {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (k === "dataset") Object.assign(node.dataset, v);
    else if (k in node && !k.includes("-")) node[k] = v;
    else node.setAttribute(k, v);
  }
  node.append(...children);
  return node;
};

export class ProfilePage {
  /**
   * `root`: the page's (empty) section. `me`: this browser's player (player.js).
   * `onReplay(id)`: a game's replay. `onClose()`: back to the game.
   */
  constructor(root, { api, me, onReplay, onClose }) {
    this.root = root;
    this.api = api;
    this.me = me;
    this.onReplay = onReplay;
    this.onClose = onClose;
    this.loading = 0;
    this.shownId = null;
    this.build();
  }

  build() {
    const e = (this.els = {});
    e.title = el("h2", { id: "profile-title" });
    e.badges = el("span", { className: "profile-badges" });
    e.sub = el("p", { className: "profile-sub", id: "profile-sub" });
    e.status = el("p", { className: "profile-status", id: "profile-status", role: "status" });
    e.name = el("input", {
      type: "text", id: "rename-input", name: "name", maxLength: 20, autocomplete: "nickname",
      spellcheck: false, required: true, "aria-describedby": "rename-help rename-error",
    });
    e.error = el("p", { className: "form-error", id: "rename-error", role: "alert" });
    e.saved = el("p", { className: "hint", id: "rename-saved", role: "status" });
    e.form = el(
      "form", { className: "rename", id: "rename-form", noValidate: true },
      el("label", { htmlFor: "rename-input" }, "Your name"),
      el("div", { className: "inline-field" }, e.name, el("button", { type: "submit", id: "rename-save" }, "Rename")),
      el("p", { className: "hint", id: "rename-help" }, `Shown on the leaderboards and to anyone watching: ${NAME_HELP}.`),
      e.error, e.saved,
    );
    e.rows = el("tbody");
    const head = ["Board", "Won", "Best time", "Best 3BV/s", "Wins in a row"];
    e.stats = el(
      "table", { className: "profile-stats", id: "profile-stats" },
      el("caption", {}, "Finished games per board. Bests count ranked wins only: no hints, no chosen seed."),
      el("thead", {}, el("tr", {}, ...head.map((h, i) => el("th", { scope: "col", className: i ? "num" : "" }, h)))),
      e.rows,
    );
    e.ratings = el("ul", { className: "profile-ratings", id: "profile-ratings" });
    e.recent = el("ol", { className: "recent", id: "profile-recent", "aria-labelledby": "profile-recent-title" });
    e.recentEmpty = el("p", { className: "hint" }, "No finished games yet.");
    e.body = el(
      "div", { className: "profile-body" },
      e.form,
      el("h3", { id: "profile-stats-title" }, "Stats"),
      el("div", { className: "table-wrap profile-table", tabIndex: 0, role: "region", "aria-labelledby": "profile-stats-title" }, e.stats),
      e.ratings,
      el("h3", { id: "profile-recent-title" }, "Recent games"),
      e.recent, e.recentEmpty,
    );
    e.close = el("button", { type: "button", className: "primary", id: "profile-close" }, "Back to the game");
    this.root.replaceChildren(
      el("div", { className: "profile-head" }, el("div", { className: "profile-name" }, e.title, e.badges), e.sub),
      e.status, e.body,
      el("div", { className: "profile-actions" }, e.close),
    );
    e.close.addEventListener("click", () => this.onClose());
    e.form.addEventListener("submit", (ev) => {
      ev.preventDefault();
      this.rename();
    });
    e.name.addEventListener("input", () => {
      e.error.textContent = "";
      e.saved.textContent = "";
      e.name.removeAttribute("aria-invalid");
    });
  }

  /** Show player `id` (this browser's player when it is theirs); `rename` focuses the name. */
  async open(id, { rename = false } = {}) {
    const gen = ++this.loading;
    const e = this.els;
    const fresh = this.shownId !== id;
    this.shownId = id;
    if (fresh) {
      e.title.textContent = "Player";
      e.badges.replaceChildren();
      e.sub.textContent = "";
      e.body.hidden = true;
      e.error.textContent = "";
      e.saved.textContent = "";
    }
    e.status.textContent = "Loading the profile…";
    e.status.hidden = false;
    let view;
    try {
      view = await this.api.player(id);
    } catch (err) {
      if (gen !== this.loading) return;
      e.status.textContent = err.status === 404 ? "There is no such player." : `Could not load the profile: ${err.message}`;
      return;
    }
    if (gen !== this.loading) return;
    e.status.hidden = true;
    this.render(view);
    if (rename && this.isMe(view)) {
      e.name.focus();
      e.name.select();
    } else if (fresh) {
      e.title.tabIndex = -1;
      e.title.focus();
    }
  }

  hide() {
    this.loading += 1;
  }

  isMe(view) {
    return Boolean(this.me.id) && view.id === this.me.id;
  }

  render(view) {
    const e = this.els;
    const mine = this.isMe(view);
    this.view = view;
    e.title.textContent = view.name;
    document.title = `${view.name} — Minesweeper`; // the game's title comes back with the game
    const badges = [];
    if (mine) badges.push(el("span", { className: "badge" }, "You"));
    if (view.bot) badges.push(el("span", { className: "badge bot" }, "Bot"));
    e.badges.replaceChildren(...badges);
    const since = new Date(Date.parse(view.created_at)).toLocaleDateString(undefined, { day: "numeric", month: "short", year: "numeric" });
    e.sub.textContent = `Playing since ${since} · ${totalsWords(view.stats)}`;
    e.form.hidden = !mine;
    if (mine && document.activeElement !== e.name) e.name.value = view.name;
    e.rows.replaceChildren(
      ...statRows(view.stats).map((r) => el(
        "tr", { dataset: { board: r.key } },
        el("th", { scope: "row" }, r.label),
        ...[r.won, r.best, r.rate, r.streak].map((t) => el("td", { className: "num" }, t)),
      )),
    );
    const ratings = ratingLines(view.ratings);
    e.ratings.replaceChildren(...ratings.map((line) => el("li", {}, line)));
    e.ratings.hidden = ratings.length === 0;
    e.recent.replaceChildren(...view.recent.map((r) => this.recentItem(r, view)));
    e.recent.hidden = view.recent.length === 0;
    e.recentEmpty.hidden = view.recent.length > 0;
    e.body.hidden = false;
  }

  recentItem(r, view) {
    const words = recentWords(r);
    const when = new Date(Date.parse(r.ended_at)).toLocaleString(undefined, {
      day: "numeric", month: "short", hour: "2-digit", minute: "2-digit",
    });
    const li = el(
      "li", { className: `recent-${r.result}`, dataset: { gameId: r.id } },
      el("span", { className: "recent-outcome" }, words.outcome),
      el("span", { className: "recent-detail" }, words.detail),
      el("time", { className: "recent-when", dateTime: r.ended_at }, when),
    );
    if (words.replayable) {
      const b = el("button", { type: "button", className: "link-button" }, "Replay");
      b.setAttribute("aria-label", `Replay: ${words.outcome.toLowerCase()}, ${words.detail}, ${when}`);
      b.addEventListener("click", () => this.onReplay(r.id));
      li.append(b);
    } else if (words.match) {
      const a = el("a", { href: `#/match/${r.id}` }, "Result");
      a.setAttribute("aria-label", `Result of the match: ${words.outcome.toLowerCase()}, ${words.detail}, ${when}`);
      li.append(a);
    }
    return li;
  }

  async rename() {
    const e = this.els;
    const name = e.name.value.trim();
    e.saved.textContent = "";
    const problem = nameProblem(name);
    const fail = (text) => {
      e.error.textContent = text;
      e.name.setAttribute("aria-invalid", "true");
      e.name.focus();
    };
    if (problem) return fail(problem);
    if (this.view && name === this.view.name) {
      e.saved.textContent = `You are already called ${name}.`;
      return;
    }
    let view;
    try {
      view = await this.me.rename(name);
    } catch (err) {
      return fail(renameMessage(err, name));
    }
    this.render(view);
    e.name.value = view.name;
    e.saved.textContent = `Renamed: you are ${view.name} now, on every game and leaderboard entry.`;
  }
}
