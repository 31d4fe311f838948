// The game on screen: which game it is and how it is shown (played with this browser's
// token, or watched), its live session, and what the page around the board says about it
// (the level buttons, the switches, the watch banner, the tags, the connection, the
// title). It opens games, starts new ones (a reset when the settings stay the same), and
// decides what a refusal from the service means for the page. The board's cells change
// only through the session.
//
// `current` is replaced as a whole when another game opens, so callbacks of an old game
// can tell they are stale (`c !== screen.current`):
//   { id, game (a Game), mode: "play" | "watch", token, session, conn, resetting, tooBig }

import { fitCells, MAX_BOARD_CELLS } from "./board.js";
import { Game } from "./game.js";
import { levelSettings, PRESETS, resetKeepsPrefs, settingsLike } from "./newgame.js";
import { GameSession } from "./session.js";
import { lastGame, savePrefs, tokens } from "./storage.js";

export const GAME_ID = /^[0-9a-f]{32}$/;

const CONNECTION_TEXT = { reconnecting: "Reconnecting…", gone: "Not available" };

export class Screen {
  /**
   * `onShown(c)`: a game was put on screen (the page keeps its address).
   * The parts that show a game (panel, hints, pause, result) are given with `attach`.
   */
  constructor({ api, clock, prefs, board, notices, onShown }) {
    this.api = api;
    this.clock = clock;
    this.prefs = prefs;
    this.board = board;
    this.notices = notices;
    this.onShown = onShown;
    this.current = null;
    this.opening = 0;
    // Whether the game is what the page shows (not the replay viewer).
    this.visible = true;
    const $ = (id) => document.getElementById(id);
    this.els = {
      frame: $("frame"),
      grid: $("board"),
      tags: $("game-tags"),
      levels: [...document.querySelectorAll(".level")],
      flagMode: $("flag-mode"),
      marks: $("opt-marks"),
      noGuess: $("opt-noguess"),
      share: $("share"),
      conn: $("conn"),
      watchBanner: $("watch-banner"),
      watchText: $("watch-text"),
    };
  }

  attach({ panel, hints, pause, result }) {
    Object.assign(this, { panel, hints, pause, result });
  }

  // ---- opening games ---------------------------------------------------------------------

  /** Open game `id` to play or watch; true once it is on screen. */
  async open(id, mode, { unfinishedOnly = false } = {}) {
    const gen = ++this.opening;
    let view;
    try {
      view = await this.api.getGame(id);
    } catch (err) {
      if (gen !== this.opening || unfinishedOnly) return false;
      if (err.status === 404) {
        this.notices.toast("That game does not exist any more (games expire after a week without moves).", {
          action: { label: "New game", run: () => this.startLevel() },
          timeout: 15000,
        });
        if (!this.current) this.startLevel();
      } else {
        this.notices.toast(`Could not load the game: ${err.message}`, {
          action: { label: "Retry", run: () => this.open(id, mode) },
          timeout: 15000,
        });
      }
      return false;
    }
    if (gen !== this.opening) return false;
    if (unfinishedOnly && new Game(view).finished) return false;
    this.show(view, mode === "play" ? tokens.get(id) : null);
    return true;
  }

  /** Create a game and play it; true once it is on screen. `onError(err)` replaces the toast. */
  async start(settings, { onError = null } = {}) {
    const leaving = this.leaving();
    const gen = ++this.opening;
    let created;
    try {
      created = await this.api.createGame(settings);
    } catch (err) {
      if (gen !== this.opening) return false;
      if (onError) {
        onError(err);
        return false;
      }
      this.notices.toast(`Could not start a game: ${err.message}`, {
        action: { label: "Retry", run: () => this.start(settings) },
        kind: "error",
        timeout: 15000,
      });
      return false;
    }
    if (gen !== this.opening) return false;
    this.adopt(created, leaving);
    return true;
  }

  /** A new game of the level in the preferences. */
  startLevel() {
    return this.start(levelSettings(this.prefs, this.prefs.level));
  }

  /** A game this page plays and is about to leave unfinished: offered back after. */
  leaving() {
    const c = this.current;
    return c && c.mode === "play" && c.game.status === "playing" ? { id: c.id } : null;
  }

  /** Show a game this browser just created (or reset): keep its token, play it. */
  adopt(created, leaving) {
    tokens.set(created.game.id, created.token);
    this.show(created.game, created.token);
    if (leaving) {
      const { id } = leaving;
      this.notices.toast("New game started. The unfinished one is kept.", {
        action: { label: "Back to it", run: () => this.open(id, "play") },
        timeout: 8000,
      });
    }
  }

  /** The face, F2 and "Play again": a new game with the settings of the one on screen. */
  async again() {
    const c = this.current;
    if (!c) return this.startLevel();
    if (c.mode === "play" && c.token && !c.tooBig && resetKeepsPrefs(this.prefs, c.game)) {
      // A reset: same settings, and anyone watching follows to the new game.
      const leaving = this.leaving();
      const gen = ++this.opening;
      c.resetting = true;
      try {
        const created = await this.api.reset(c.id, c.token);
        if (gen !== this.opening) return;
        this.adopt(created, leaving);
        return;
      } catch (err) {
        c.resetting = false;
        if (gen !== this.opening) return;
        if (!["not_found", "forbidden", "unauthorized"].includes(err.code)) {
          this.notices.toast(`Could not start a new game: ${err.message}`, { kind: "error" });
          return;
        }
      }
    }
    return this.start(settingsLike(this.prefs, c.game));
  }

  chooseLevel(level) {
    this.prefs.level = level;
    savePrefs(this.prefs);
    return this.startLevel();
  }

  /** Put a game view on screen, played with `token` or watched without one. */
  show(view, token) {
    this.stop();
    this.clock.sampleText(view.server_time);
    const game = new Game(view);
    const c = {
      id: view.id, game, mode: token ? "play" : "watch", token, session: null,
      conn: "connecting", resetting: false, tooBig: game.size > MAX_BOARD_CELLS,
    };
    this.current = c;
    this.hints.hide();
    this.pause.reset();
    if (c.mode === "play") lastGame.set(c.id);
    this.onShown(c);
    document.body.dataset.mode = c.mode;
    this.layout(); // before the cells exist: reading sizes then costs no layout of the board
    if (c.tooBig) {
      this.board.clear();
      this.notices.toast(`This board has ${game.size.toLocaleString()} cells; this page shows boards of up to ${MAX_BOARD_CELLS.toLocaleString()}.`, { timeout: 15000 });
    } else {
      this.board.show(game, { readonly: c.mode !== "play" });
    }
    c.session = new GameSession(game, {
      url: (since) => this.api.eventsUrl(c.id, since),
      token: c.mode === "play" ? token : null,
      clock: this.clock,
      onChange: (change) => this.changed(c, change),
      onState: (state) => {
        c.conn = state;
        if (c === this.current) this.renderConnection();
      },
      onReset: (nextId) => this.followReset(c, nextId),
      onGone: () => {
        if (c === this.current) this.notices.toast("This game is no longer available on the server.", { timeout: 15000 });
      },
      onRefused: (err) => this.refused(c, err),
    });
    c.session.start();
    this.render();
    if (game.finished) this.result.finished(c, { fresh: false });
  }

  stop() {
    const c = this.current;
    if (!c) return;
    this.current = null;
    c.session?.stop();
  }

  /** The network came back, or the page is shown again: the session catches up now. */
  wake() {
    this.current?.session?.wake();
    this.panel.tick();
  }

  // ---- what the session reports ----------------------------------------------------------

  changed(c, change) {
    if (c !== this.current) return;
    if (!c.tooBig) this.board.update(change.changed);
    this.hints.afterChange(c, change);
    // Before the board is covered: where the keyboard focus was decides where it goes.
    this.pause.afterChange(c, change.before);
    this.render();
    if (!change.before.finished && c.game.finished) this.result.finished(c, { fresh: true });
  }

  followReset(c, nextId) {
    if (c !== this.current || c.resetting || !GAME_ID.test(nextId || "")) return;
    if (c.mode === "watch") {
      this.notices.toast("The player started a new game; now watching that one.");
      this.open(nextId, "watch");
    } else if (!tokens.get(nextId)) {
      this.notices.toast("This game was restarted in another window.", {
        action: { label: "Watch the new one", run: () => this.open(nextId, "watch") },
        timeout: 15000,
      });
    }
  }

  /** What the page does when the service refuses a move, a hint or a pause of game `c`. */
  async refused(c, err) {
    const n = this.notices;
    switch (err.code) {
      case "game_over":
      case "paused":
        if (err.code === "paused") n.toast("The game is paused: resume it to play on.");
        try {
          c.session.offerView(await this.api.getGame(c.id));
        } catch {
          /* the live session will bring it */
        }
        break;
      case "unauthorized":
      case "forbidden":
        tokens.forget(c.id);
        if (c !== this.current || c.mode !== "play") break;
        n.toast("This browser can no longer move in this game; you are watching it.", { timeout: 10000 });
        this.open(c.id, "watch");
        break;
      case "not_found":
        n.toast("This game has expired.", {
          action: { label: "New game", run: () => this.startLevel() },
          timeout: 15000,
        });
        break;
      case "rate_limited":
        n.toast("Too many moves at once; slow down a little.", { kind: "error" });
        break;
      case "network":
      case "disconnected":
        n.toast(err.message, { kind: "error" });
        break;
      case "stopped":
        break;
      default:
        n.toast(`That move was refused: ${err.message}`, { kind: "error" });
    }
  }

  // ---- rendering -------------------------------------------------------------------------

  /** Fit the cells to the window: as large as comfortable, never too small to hit. */
  layout() {
    const c = this.current;
    if (c) this.els.frame.style.setProperty("--cell", `${fitCells(c.game.width, c.game.height)}px`);
  }

  render() {
    const c = this.current;
    const g = c && c.game;
    this.panel.render(g, { watching: Boolean(c && c.mode === "watch") });
    if (g) this.els.frame.dataset.status = g.status;
    this.renderLevels();
    this.renderControls();
    this.renderConnection();
    this.renderTags();
    this.hints.render(c);
    this.pause.render(c);
    this.result.render(c);
    if (c) {
      const state = g.status === "won" ? "won" : g.status === "lost" ? "lost" : null;
      document.title = `${state ? `Minesweeper — ${state}` : "Minesweeper"}${c.mode === "watch" ? " (watching)" : ""}`;
    }
  }

  renderLevels() {
    const c = this.current;
    const level = c ? c.game.preset || "custom" : this.prefs.level;
    for (const b of this.els.levels) b.setAttribute("aria-pressed", String(b.dataset.level === level));
  }

  renderControls() {
    const c = this.current;
    const e = this.els;
    const prefs = this.prefs;
    const watching = !c || c.mode === "watch";
    e.watchBanner.hidden = !(c && c.mode === "watch" && this.visible);
    if (c && c.mode === "watch") {
      const who = c.game.player ? `${c.game.player}'s game` : "this game";
      e.watchText.textContent = `You are watching ${who} live; only its player can move.`;
    }
    e.flagMode.hidden = watching;
    e.flagMode.setAttribute("aria-pressed", String(Boolean(prefs.flagMode)));
    this.board.flagMode = Boolean(prefs.flagMode);
    e.frame.classList.toggle("flag-mode", Boolean(prefs.flagMode) && !watching);
    e.marks.checked = Boolean(prefs.questionMarks);
    e.noGuess.checked = Boolean(prefs.noGuess);
  }

  renderConnection() {
    const c = this.current;
    const state = c ? c.conn : "idle";
    const text = state === "live" && c.mode === "watch" ? "Live" : CONNECTION_TEXT[state] || "";
    this.els.conn.textContent = text;
    this.els.conn.dataset.state = state;
  }

  /** What kind of game this is: daily, no-guess, assisted, and whose. */
  renderTags() {
    const c = this.current;
    const tags = [];
    if (c) {
      const g = c.game;
      if (g.daily) tags.push(["daily", `Daily board, ${g.daily}`]);
      if (g.noGuess) tags.push(["no-guess", "No guessing"]);
      const s = g.stats;
      if (s && s.assisted) {
        tags.push(["assisted", `Assisted: ${s.hints} ${s.hints === 1 ? "hint" : "hints"}, not ranked`]);
      }
      if (c.mode === "play" && g.player) tags.push(["player", `Playing as ${g.player}`]);
    }
    const el = this.els.tags;
    const key = tags.map(([k, t]) => `${k}:${t}`).join("|");
    if (el.dataset.key === key) return;
    el.dataset.key = key;
    el.replaceChildren(
      ...tags.map(([kind, text]) => {
        const span = document.createElement("span");
        span.className = `tag tag-${kind}`;
        span.dataset.tag = kind;
        span.textContent = text;
        return span;
      }),
    );
    el.hidden = tags.length === 0;
  }

  /** The board the leaderboards open on: the game's, or the level's. */
  leaderboardChoice() {
    const g = this.current && this.current.game;
    return {
      preset: g && g.preset ? g.preset : PRESETS[this.prefs.level] ? this.prefs.level : "beginner",
      noGuess: g ? g.noGuess : Boolean(this.prefs.noGuess),
      daily: Boolean(g && g.daily),
    };
  }
}
