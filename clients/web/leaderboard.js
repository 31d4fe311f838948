// The leaderboards dialog: best times per preset (tabs), classic or no-guess boards, all
// time or today's daily board, people's or bots', with each entry's player (their name
// now, opening their profile) and the replay of every ranked game.

import { formatTime } from "./format.js";

const PRESETS = ["beginner", "intermediate", "expert"];
const LIMIT = 50;

export class Leaderboards {
  /**
   * `dialog`: the <dialog>. `isMine(entry)`: an entry of this browser's player.
   * `today()`: the server's date (YYYY-MM-DD, UTC). `onReplay(id)`: show a game's
   * replay. `onPlayer(id)`: show a player's profile.
   */
  constructor(dialog, { api, isMine, today, onReplay, onPlayer }) {
    this.dialog = dialog;
    this.api = api;
    this.isMine = isMine;
    this.today = today;
    this.onReplay = onReplay;
    this.onPlayer = onPlayer;
    const $ = (id) => dialog.querySelector(`#${id}`);
    this.els = {
      tabs: [...dialog.querySelectorAll('[role="tab"]')],
      panel: $("leaders-panel"),
      modes: [...dialog.querySelectorAll("[data-mode]")],
      periods: [...dialog.querySelectorAll("[data-period]")],
      kinds: [...dialog.querySelectorAll("[data-players]")],
      caption: $("leaders-caption"),
      table: $("leaders-table"),
      rows: $("leaders-rows"),
      empty: $("leaders-empty"),
    };
    this.state = { preset: "beginner", noGuess: false, daily: false, bot: false };
    this.loading = 0;
    this.wire();
  }

  wire() {
    const e = this.els;
    e.tabs.forEach((tab, k) => {
      tab.addEventListener("click", () => this.select({ preset: tab.dataset.preset }));
      tab.addEventListener("keydown", (ev) => {
        const n = e.tabs.length;
        const to = { ArrowLeft: (k + n - 1) % n, ArrowRight: (k + 1) % n, Home: 0, End: n - 1 }[ev.key];
        if (to === undefined) return;
        ev.preventDefault();
        e.tabs[to].focus();
        this.select({ preset: e.tabs[to].dataset.preset });
      });
    });
    for (const b of e.modes) b.addEventListener("click", () => this.select({ noGuess: b.dataset.mode === "noguess" }));
    for (const b of e.periods) b.addEventListener("click", () => this.select({ daily: b.dataset.period === "today" }));
    for (const b of e.kinds) b.addEventListener("click", () => this.select({ bot: b.dataset.players === "bots" }));
    this.dialog.querySelector("#leaders-close").addEventListener("click", () => this.dialog.close());
  }

  /** Open on a board: `preset`, `noGuess`, `daily` (today's); the people's board. */
  open({ preset, noGuess = false, daily = false } = {}) {
    this.state = {
      preset: PRESETS.includes(preset) ? preset : "beginner",
      noGuess: Boolean(noGuess),
      daily: Boolean(daily),
      bot: false,
    };
    this.dialog.showModal();
    this.load();
    this.els.tabs.find((t) => t.dataset.preset === this.state.preset).focus();
  }

  select(change) {
    this.state = { ...this.state, ...change };
    this.load();
  }

  renderControls() {
    const { preset, noGuess, daily, bot } = this.state;
    for (const tab of this.els.tabs) {
      const on = tab.dataset.preset === preset;
      tab.setAttribute("aria-selected", String(on));
      tab.tabIndex = on ? 0 : -1;
      if (on) this.els.panel.setAttribute("aria-labelledby", tab.id);
    }
    for (const b of this.els.modes) b.setAttribute("aria-pressed", String((b.dataset.mode === "noguess") === noGuess));
    for (const b of this.els.periods) b.setAttribute("aria-pressed", String((b.dataset.period === "today") === daily));
    for (const b of this.els.kinds) b.setAttribute("aria-pressed", String((b.dataset.players === "bots") === bot));
  }

  caption() {
    const { preset, noGuess, daily, bot } = this.state;
    const kind = noGuess ? "no-guess" : "classic";
    const text = daily
      ? `Today's daily ${preset} board (${kind}), ${this.today()}, best times`
      : `Best times on ${preset} (${kind}), all time`;
    return bot ? `${text}, bots` : text;
  }

  async load() {
    const gen = ++this.loading;
    const e = this.els;
    const { preset, noGuess, daily, bot } = this.state;
    this.renderControls();
    e.caption.textContent = this.caption();
    e.table.setAttribute("aria-busy", "true");
    e.empty.hidden = true;
    let board;
    try {
      board = await this.api.leaderboard(preset, { noGuess, date: daily ? this.today() : null, limit: LIMIT, bot });
    } catch (err) {
      if (gen !== this.loading) return;
      e.table.setAttribute("aria-busy", "false");
      e.rows.replaceChildren();
      e.table.hidden = true;
      e.empty.textContent = `Could not load this leaderboard: ${err.message}`;
      e.empty.hidden = false;
      return;
    }
    if (gen !== this.loading) return;
    e.table.setAttribute("aria-busy", "false");
    const entries = board.entries || [];
    e.table.hidden = entries.length === 0;
    e.empty.hidden = entries.length > 0;
    e.empty.textContent = bot
      ? "No bot has a win on this board yet."
      : daily
        ? "No wins on today's board yet. Start it from the Daily menu."
        : "No ranked wins on this board yet.";
    e.rows.replaceChildren(...entries.map((entry) => this.row(entry, daily)));
  }

  row(entry, daily) {
    const tr = document.createElement("tr");
    if (entry.game_id) tr.dataset.gameId = entry.game_id;
    const mine = this.isMine(entry);
    if (mine) tr.className = "mine";
    const cell = (text, cls) => {
      const td = document.createElement("td");
      td.textContent = text;
      if (cls) td.className = cls;
      return td;
    };
    const rank = cell(String(entry.rank), "rank");
    const name = cell("", "player");
    const link = document.createElement("a");
    link.href = `#/player/${entry.player_id}`;
    link.textContent = entry.player;
    link.setAttribute("aria-label", `Profile of ${entry.player}`);
    link.addEventListener("click", (ev) => {
      if (ev.button !== 0 || ev.ctrlKey || ev.metaKey || ev.shiftKey) return; // a new tab
      ev.preventDefault();
      this.dialog.close();
      this.onPlayer(entry.player_id);
    });
    name.append(link);
    if (mine) {
      const you = document.createElement("span");
      you.className = "you";
      you.textContent = "you";
      name.append(" ", you);
    }
    const ended = new Date(Date.parse(entry.ended_at));
    const when = daily
      ? ended.toLocaleTimeString(undefined, { hour: "2-digit", minute: "2-digit" })
      : ended.toLocaleDateString(undefined, { day: "numeric", month: "short", year: "numeric" });
    // Today's daily games would show today's mines: their replays come with the day's end.
    const action = entry.game_id ? cell("") : cell("Tomorrow", "later");
    if (entry.game_id) action.append(this.replayButton(entry));
    else action.title = "A daily board's replays open once its day is over (UTC)";
    tr.append(
      rank, name,
      cell(formatTime(entry.elapsed_ms), "num"),
      cell(String(entry.bbbv), "num bbbv"),
      cell(entry.bbbv_per_second.toFixed(2), "num"),
      cell(when, "when"),
      action,
    );
    return tr;
  }

  replayButton(entry) {
    const b = document.createElement("button");
    b.type = "button";
    b.className = "link-button";
    b.textContent = "Replay";
    b.setAttribute("aria-label", `Replay of ${entry.player}'s win in ${formatTime(entry.elapsed_ms)}`);
    b.addEventListener("click", () => {
      this.dialog.close();
      this.onReplay(entry.game_id);
    });
    return b;
  }
}
