// The game on screen: which game it is and how it is shown (played with this browser's
// token, or watched), its live session, and what the page around the board says about it
// (the level buttons, the switches, the watch banner, the tags, the connection, the
// title). It opens games, starts new ones (a reset when the settings stay the same), and
// decides what a refusal from the service means for the page. The board's cells change
// only through the session.
//
// It also fits the board to the window: everything of the game (the tags, the panel, the
// board, the controls, the notes under them, and the result at the end) is in view
// without scrolling, and nothing above the board changes height during play, so the
// board never moves under the player's finger.
//
// `current` is replaced as a whole when another game opens, so callbacks of an old game
// can tell they are stale (`c !== screen.current`):
//   { id, game (a Game), mode: "play" | "watch", token, session, conn, resetting }

import { coarsePointer, MIN_END_CELL, MIN_MOUSE_CELL, minPlayableCell, roomFor, shortWindow } from "./boardview.js";
import { connectFor, decode } from "./feed.js";
import { Game } from "./game.js";
import { howToPlay } from "./moves.js";
import { levelSettings, newGameWords, PRESETS, resetKeepsPrefs, settingsLike } from "./newgame.js";
import { writeText } from "./notices.js";
import { playingAs } from "./player.js";
import { GameSession } from "./session.js";
import { lastGame, savePrefs, tokens } from "./storage.js";

export const GAME_ID = /^[0-9a-f]{32}$/;

// Fewer rows than this left under a short window's header: the board takes the window's height.
const SHORT_ROWS = 5;

/** The height a match's strip stuck to the window's top takes (0: none there). */
function stickyStrip() {
  const strip = document.getElementById("match");
  if (!strip || strip.hidden || getComputedStyle(strip).position !== "sticky") return 0;
  const gap = parseFloat(getComputedStyle(strip.parentElement).rowGap) || 0;
  return strip.getBoundingClientRect().height + gap;
}

const CONNECTION_TEXT = { reconnecting: "Connection lost: reconnecting…", gone: "Not available" };

export class Screen {
  /**
   * `onShown(c)`: a game was put on screen (the page keeps its address).
   * `onMoved(c, diff, count)`: a co-op teammate's move (its diff names them in `by`)
   * changed `count` cells of the game on screen.
   * `mayLeave()`: a promise of whether a new game may take the screen (a running match's
   * seat asks its player first); `openMatch(id)`: go back to match `id`'s page;
   * `player()`: this browser's player ({ id, name }) as it is now, or null.
   * The parts that show a game (panel, hints, pause, result) are given with `attach`.
   */
  constructor({
    api, clock, prefs, board, notices, onShown, onMoved = () => {}, mayLeave = async () => true, openMatch = () => {},
    player = () => null,
  }) {
    this.player = player;
    this.api = api;
    this.mayLeave = mayLeave;
    this.openMatch = openMatch;
    this.clock = clock;
    this.prefs = prefs;
    this.board = board;
    this.notices = notices;
    this.onShown = onShown;
    this.onMoved = onMoved;
    this.current = null;
    this.opening = 0;
    this.room = null; // the room the board was last fitted to
    // While a match's page is on screen, its board's level ("custom" for a size): the
    // level shown from its room on, whatever game was on screen before.
    this.matchLevel = null;
    // Whether the game is what the page shows (not the replay viewer).
    this.visible = true;
    const $ = (id) => document.getElementById(id);
    this.els = {
      game: $("game"),
      frame: $("frame"),
      area: $("board-area"),
      grid: $("board"),
      idle: $("notes-idle"),
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
    // The result grows after it is shown (its rank on a leaderboard, the final stats come
    // later): the board makes room for it at the next frame, so its buttons stay in view.
    if (typeof ResizeObserver === "function") {
      let frame = 0;
      new ResizeObserver(() => {
        cancelAnimationFrame(frame);
        frame = requestAnimationFrame(() => this.fit());
      }).observe($("result"));
    }
  }

  attach({ panel, hints, pause, result }) {
    Object.assign(this, { panel, hints, pause, result });
  }

  // ---- opening games ---------------------------------------------------------------------

  /** Open game `id` to play or watch; true once it is on screen. */
  async open(id, mode, { unfinishedOnly = false, match = false, matchId = null } = {}) {
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
    this.show(view, mode === "play" ? tokens.get(id) : null, { match, matchId });
    return true;
  }

  /**
   * Create a game and play it; true once it is on screen. `onError(err)` replaces the toast.
   * A player still racing in a match is asked first (`asked`: they were already).
   */
  async start(settings, { onError = null, asked = false } = {}) {
    if (!asked && !(await this.mayLeave())) return false;
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

  /**
   * A game this page plays and is about to leave unfinished: offered back after. A match's
   * board is offered back on its match's page (`matchId`), where its clock and seats are.
   */
  leaving() {
    const c = this.current;
    return c && c.mode === "play" && c.game.status === "playing" ? { id: c.id, matchId: c.matchId ?? null } : null;
  }

  /** Show a game this browser just created (or reset): keep its token, play it. */
  adopt(created, leaving) {
    tokens.set(created.game.id, created.token);
    this.show(created.game, created.token);
    // The board looks as it did before (all covered): a screen reader is told it is new.
    this.notices.announce(newGameWords(this.current.game));
    if (leaving) {
      const { id, matchId } = leaving;
      const words = matchId
        ? "New game started. Your match goes on without you until it ends."
        : "New game started. The unfinished one is kept.";
      this.notices.toast(words, {
        action: { label: "Back to it", run: () => (matchId ? this.openMatch(matchId) : this.open(id, "play")) },
        timeout: matchId ? 15000 : 8000,
        about: created.game.id,
      });
    }
  }

  /** The face, F2 and "Play again": a new game with the settings of the one on screen. */
  async again() {
    const c = this.current;
    if (!c) return this.startLevel();
    if (c.mode === "play" && c.token && resetKeepsPrefs(this.prefs, c.game)) {
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
          this.notices.toast(`Could not start a new game: ${err.message}`, { kind: "error", about: c.id });
          return;
        }
      }
    }
    return this.start(settingsLike(this.prefs, c.game));
  }

  /** A level button: a new game of that level (a player still racing is asked first). */
  async chooseLevel(level) {
    if (!(await this.mayLeave())) return false;
    this.prefs.level = level;
    savePrefs(this.prefs);
    return this.start(levelSettings(this.prefs, level), { asked: true });
  }

  /**
   * A switch changed what new games are made of (`what`: "noGuess" or "questionMarks"). A
   * board of the player's that nobody has touched yet is replaced by one made that way; a
   * game under way keeps its own settings, and the page says when the switch applies.
   */
  switched(what) {
    const c = this.current;
    if (!c || c.game.finished) return;
    const g = c.game;
    const on = Boolean(this.prefs[what]);
    if ((what === "noGuess" ? g.noGuess : g.questionMarks) === on) return;
    const name = what === "noGuess" ? "No guessing" : "Question marks";
    if (c.mode === "play" && g.version === 0 && !g.daily) {
      this.notices.announce(`${name} ${on ? "on" : "off"}: a new board.`);
      this.again();
      return;
    }
    const action = what === "noGuess" ? { label: "New game now", run: () => this.again() } : null;
    this.notices.toast(`${name} ${what === "noGuess" ? "is" : "are"} ${on ? "on" : "off"} from the next game.`, {
      action, about: c.id,
    });
  }

  /** Put a game view on screen, played with `token` or watched without one. */
  show(view, token, { match = false, matchId = null } = {}) {
    this.stop();
    this.clock.sampleText(view.server_time);
    const game = new Game(view);
    // `match`: a match's board, played against the clock, with no hints and no pause.
    const c = {
      id: view.id, game, mode: token ? "play" : "watch", token, session: null,
      conn: "connecting", resetting: false, match, matchId,
    };
    this.current = c;
    // What was said about another game is not about this one.
    this.notices.forgetAllBut(c.id);
    this.hints.hide();
    this.pause.reset();
    // A match's board is reopened on its match's page, never as a game of one's own.
    if (c.mode === "play" && !match) lastGame.set(c.id);
    this.onShown(c);
    document.body.dataset.mode = c.mode;
    const resized = this.board.show(game, { readonly: c.mode !== "play" });
    c.session = new GameSession(game, {
      url: (since) => this.api.eventsUrl(c.id, since),
      token: c.mode === "play" ? token : null,
      connect: connectFor(game.size),
      decode,
      clock: this.clock,
      onChange: (change) => this.changed(c, change),
      onHints: (count) => this.hinted(c, count),
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
    this.render({ fit: false });
    if (game.finished) this.result.finished(c, { fresh: false });
    this.fit({ force: true, keep: !resized });
  }

  stop() {
    const c = this.current;
    if (!c) return;
    this.current = null;
    c.session?.stop();
  }

  /**
   * The browser went offline: its socket may look open for a long while yet, so the
   * session lets it go now, says it is reconnecting, and reports a move in flight.
   */
  offline() {
    this.current?.session?.lose();
  }

  /** The network came back, or the page is shown again: the session catches up now. */
  wake() {
    this.current?.session?.wake();
    this.panel.tick();
  }

  // ---- what the session reports ----------------------------------------------------------

  changed(c, change) {
    if (c !== this.current) return;
    this.board.update(change.changed);
    this.hints.afterChange(c, change);
    // Before the board is covered: where the keyboard focus was decides where it goes.
    this.pause.afterChange(c, change.before);
    this.render();
    if (!change.before.finished && c.game.finished) {
      this.notices.ended(c.id);
      this.result.finished(c, { fresh: true });
    }
    if (change.diff && change.diff.by) this.onMoved(c, change.diff, change.changed.length);
  }

  /** The game's feed says how many hints the player has used. */
  hinted(c, count) {
    if (c !== this.current) return;
    if (c.mode === "watch") this.notices.announce(`The player used ${count === 1 ? "a hint" : `${count} hints`}: not ranked.`);
    this.render();
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
        about: c.id,
      });
    }
  }

  /** What the page does when the service refuses a move, a hint or a pause of game `c`. */
  async refused(c, err) {
    const n = this.notices;
    const about = c.id;
    switch (err.code) {
      case "game_over":
      case "paused":
        if (err.code === "paused") n.toast("The game is paused: resume it to play on.", { about });
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
        n.toast("This browser can no longer move in this game; you are watching it.", { timeout: 10000, about });
        this.open(c.id, "watch");
        break;
      case "not_found":
        n.toast("This game has expired.", {
          action: { label: "New game", run: () => this.startLevel() },
          timeout: 15000,
          about,
        });
        break;
      case "rate_limited":
        n.toast("Too many moves at once; slow down a little.", { kind: "error", about });
        break;
      case "network":
      case "disconnected":
        n.toast(err.message, { kind: "error", about });
        break;
      case "stopped":
        break;
      default:
        n.toast(`That move was refused: ${err.message}`, { kind: "error", about });
    }
  }

  // ---- rendering -------------------------------------------------------------------------

  /**
   * Fit the board to the room the window leaves it, if that room changed (or `force`):
   * at the player's cell size, or as large as comfortable. `keep`: the part of the board
   * in view stays in view (the same board again); else the view starts at its middle.
   */
  fit({ force = false, keep = true } = {}) {
    const c = this.current;
    if (!c || !this.visible) return;
    const room = roomFor(this.els.area, this.els.game);
    // A match's seats above the board may leave it little room on a phone, as a short
    // window's header may: its board may take the window's height (the page scrolls to
    // it) when it fits there whole; and when what is left of the window is under a few
    // rows, the board takes the window's height whatever its size.
    const short = shortWindow();
    if (!c.match && !short) room.tallest = 0;
    // In a short window, and on a phone held upright, a match's strip (seats, time left)
    // stays at the window's top during play (match.css): the board, scrolled to, goes
    // under it, and leaves it its height.
    const strip = c.match ? stickyStrip() : 0;
    room.tallest -= strip;
    this.els.frame.style.scrollMarginTop = strip ? `${strip}px` : "";
    if ((short || strip) && room.height < SHORT_ROWS * minPlayableCell()) room.height = room.tallest;
    // A finished game is only looked at: smaller cells may show all of it beside the result
    // (a match's board too while its match goes on: a seat that cleared sees its whole
    // board while it waits). Once the match is over, the match's own result above it, its
    // board keeps cells a mouse can hit, and the page scrolls to it rather than shrink it.
    const waiting = c.match && document.body.dataset.match === "playing";
    const least = !c.game.finished ? undefined : !c.match || waiting ? MIN_END_CELL : MIN_MOUSE_CELL;
    const last = this.room;
    if (!force && last && last.least === least && Math.abs(last.width - room.width) < 1
      && Math.abs(last.height - room.height) < 1) return;
    this.room = { ...room, least };
    this.board.fit(room, this.prefs.cellSize ?? null, { keep, least });
    // The page scrolls to a board fitted to the window's height.
    if (short && force) this.els.frame.scrollIntoView({ block: "nearest" });
  }

  /**
   * Scroll the page to the board when it or the controls under it are out of the window
   * (what is above it, such as a match's seats, may leave it too little room).
   */
  bringIntoView() {
    const below = this.els.game.querySelector(".controls") ?? this.els.area;
    if (below.getBoundingClientRect().bottom > document.documentElement.clientHeight) {
      this.els.frame.scrollIntoView({ block: "start" });
    }
  }

  /**
   * The player chose a cell size (zoom buttons, keys, pinch): new boards take it too; or
   * none (null): boards fit the window again.
   */
  zoomed(cell) {
    this.prefs.cellSize = cell == null ? null : Math.round(cell * 100) / 100;
    savePrefs(this.prefs);
    if (cell == null) this.fit({ force: true });
  }

  render({ fit = true } = {}) {
    const c = this.current;
    const g = c && c.game;
    this.panel.render(g, { watching: Boolean(c && c.mode === "watch") });
    if (g) this.els.frame.dataset.status = g.status;
    this.renderLevels();
    this.renderControls();
    this.renderConnection();
    this.renderTags();
    this.renderIdle();
    this.hints.render(c);
    this.pause.render(c);
    this.result.render(c);
    if (fit) this.fit();
    if (c) {
      const state = g.status === "won" ? "won" : g.status === "lost" ? "lost" : null;
      document.title = `${state ? `Minesweeper — ${state}` : "Minesweeper"}${c.mode === "watch" ? " (watching)" : ""}`;
    }
  }

  /** A match's page shows its board's `level` in the top bar (null: the match is left). */
  showMatchLevel(level) {
    if (this.matchLevel === level) return;
    this.matchLevel = level;
    this.renderLevels();
  }

  renderLevels() {
    const c = this.current;
    const level = this.matchLevel ?? (c ? c.game.preset || "custom" : this.prefs.level);
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

  /** What the notes under the controls say while nothing else is there: how to play here. */
  renderIdle() {
    const c = this.current;
    let text = "";
    if (c && c.mode === "watch") text = `Watching live: the board follows the ${c.match === "coop" ? "team's" : "player's"} moves.`;
    else if (c && !c.game.finished) {
      const input = document.documentElement.dataset.input === "keyboard" ? "keyboard" : coarsePointer() ? "touch" : "mouse";
      text = howToPlay(input, { flagMode: this.prefs.flagMode, match: Boolean(c.match) });
    }
    writeText(this.els.idle, text);
  }

  renderConnection() {
    const c = this.current;
    const state = c ? c.conn : "idle";
    const text = state === "live" && c.mode === "watch" ? "Live" : CONNECTION_TEXT[state] || "";
    // Rendered after every move: the status speaks only when the connection changes.
    writeText(this.els.conn, text);
    this.els.conn.dataset.state = state;
  }

  /**
   * What kind of game this is: its board, daily, no-guess, assisted, and whose. The line
   * is always there, one line high, so a tag that comes mid-game moves nothing.
   */
  renderTags() {
    const c = this.current;
    const tags = [];
    if (c) {
      const g = c.game;
      const size = `${g.width} × ${g.height}, ${g.mines.toLocaleString("en")} mines`;
      tags.push(["board", g.preset ? `${g.preset[0].toUpperCase()}${g.preset.slice(1)}, ${size}` : `Custom, ${size}`]);
      if (g.daily) tags.push(["daily", `Daily board, ${g.daily}`]);
      if (g.noGuess) tags.push(["no-guess", "No guessing"]);
      const s = g.stats;
      if (s && s.assisted) {
        tags.push(["assisted", `Assisted: ${s.hints} ${s.hints === 1 ? "hint" : "hints"}, not ranked`]);
      }
      // The player's own game says their name as it is now (renamed since, on the profile).
      const name = c.mode === "play" ? playingAs(g, this.player()) : null;
      if (name) tags.push(["player", `Playing as ${name}`]);
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
