// The web client: wires the board, the header and the controls to the public API.
//
// Routes (in the URL fragment, so any static mount works):
//   #/game/<id>   play a game whose token this browser holds (else: watch it)
//   #/watch/<id>  watch a game live, read-only (also ?watch=<id>)
//   #/replay/<id> the replay of a finished game
//   (nothing)     resume the last unfinished game, or start a new one
//
// Every change to the board comes as a diff: the answer to our own move over HTTP,
// and the same diff again over the WebSocket. Diffs are applied strictly in version
// order, each once; a gap is filled by resubscribing with ?since=<version>.

import { Api, ApiError, LiveFeed } from "./api.js";
import { Board, cellStateText, fitCells } from "./board.js";
import { ServerClock } from "./clock.js";
import { SevenSegment } from "./digits.js";
import { formatPercent, formatTime } from "./format.js";
import { FINISHED, Game } from "./game.js";
import {
  calendarIcon, faceSvg, flagIcon, hintIcon, linkIcon, pauseIcon, playIcon, trophyIcon,
} from "./icons.js";
import { Leaderboards } from "./leaderboard.js";
import { lastGame, loadPrefs, PLAYER_NAME, savePrefs, tokens } from "./storage.js";
import { ReplayViewer } from "./viewer.js";

const PRESETS = {
  beginner: { width: 9, height: 9, mines: 10 },
  intermediate: { width: 16, height: 16, mines: 40 },
  expert: { width: 30, height: 16, mines: 99 },
};
// Cells the page draws one element each; bigger boards need another client.
const MAX_PAGE_CELLS = 62_500;
const GAME_ID = /^[0-9a-f]{32}$/;

const $ = (id) => document.getElementById(id);
const els = {
  game: $("game"),
  tags: $("game-tags"),
  frame: $("frame"),
  scroller: $("scroller"),
  board: $("board"),
  paused: $("paused"),
  pausedText: $("paused-text"),
  pausedResume: $("paused-resume"),
  face: $("face"),
  levels: [...document.querySelectorAll(".level")],
  flagMode: $("flag-mode"),
  marks: $("opt-marks"),
  noGuess: $("opt-noguess"),
  dailyButton: $("daily-button"),
  dailyMenu: $("daily-menu"),
  leadersButton: $("leaders-button"),
  hint: $("hint"),
  pause: $("pause"),
  pauseIcon: $("pause-icon"),
  pauseLabel: $("pause-label"),
  hintPanel: $("hint-panel"),
  hintKind: $("hint-kind"),
  hintWhere: $("hint-where"),
  hintReason: $("hint-reason"),
  hintAct: $("hint-act"),
  hintDialog: $("hint-dialog"),
  share: $("share"),
  conn: $("conn"),
  result: $("result"),
  resultTitle: $("result-title"),
  resultSub: $("result-sub"),
  resultStats: $("result-stats"),
  resultClicks: $("result-clicks"),
  resultAssisted: $("result-assisted"),
  resultNote: $("result-note"),
  resultReplay: $("result-replay"),
  again: $("again"),
  resultShare: $("result-share"),
  watchBanner: $("watch-banner"),
  watchText: $("watch-text"),
  watchPlay: $("watch-play"),
  toasts: $("toasts"),
  announcer: $("announcer"),
  customDialog: $("custom-dialog"),
  customForm: $("custom-form"),
  customError: $("custom-error"),
  customStart: $("custom-start"),
  replay: $("replay"),
  shareDialog: $("share-dialog"),
  shareUrl: $("share-url"),
  shareStatus: $("share-status"),
};

const api = new Api();
const clock = new ServerClock();
const prefs = loadPrefs();
const minesDisplay = new SevenSegment($("mines-left"), (v) => `Mines left: ${v}`);
const timerDisplay = new SevenSegment($("timer"), (v) => `Time: ${v} second${v === 1 ? "" : "s"}`);
const board = new Board(els.board, els.scroller, {
  primary: onPrimary,
  secondary: onSecondary,
  chord: onChord,
  pressing: (active) => {
    pressing = active;
    renderFace();
  },
});

const viewer = new ReplayViewer(els.replay, { api, onClose: closeReplay });
const leaderboards = new Leaderboards($("leaders-dialog"), {
  api,
  prefs,
  savePrefs,
  isMine: (id) => Boolean(tokens.get(id)),
  today: serverToday,
  onReplay: (id) => openReplay(id),
});

/**
 * The game on screen: { id, game, mode: "play" | "watch", token, live, pending, gapTimer,
 * conn, resetting, hint (the one shown), asking / pausing (a request under way), rank,
 * focusBack }. Replaced as a whole when another game opens, so callbacks of an old game
 * can tell they are stale (`c !== current`).
 */
let current = null;
let opening = 0;
let pressing = false;
let tickTimer = 0;
// What the page shows: "game" (play or watch) or "replay".
let pageView = "game";

// ---- start-up and routing ----------------------------------------------------------------

function parseRoute() {
  const m = /^#\/?(watch|game|replay)\/([0-9a-f]{32})$/.exec(location.hash);
  if (m) return { kind: m[1], id: m[2] };
  const watch = new URLSearchParams(location.search).get("watch");
  if (watch && GAME_ID.test(watch)) return { kind: "watch", id: watch };
  return { kind: "home" };
}

async function route() {
  const r = parseRoute();
  if (r.kind === "replay") {
    showView("replay");
    viewer.open(r.id);
    return;
  }
  showView("game");
  if (current && r.id === current.id && (r.kind === "game") === (current.mode === "play")) return;
  if (r.kind === "watch") return openGame(r.id, "watch");
  if (r.kind === "game") return openGame(r.id, tokens.get(r.id) ? "play" : "watch");
  const last = lastGame.get();
  if (typeof last === "string" && GAME_ID.test(last) && tokens.get(last)) {
    if (await openGame(last, "play", { unfinishedOnly: true })) return;
  }
  return startNewGame(settingsForLevel(prefs.level));
}

function setRoute(mode, id) {
  if (pageView !== "game") return; // the replay keeps its address; closing it comes back here
  const hash = `#/${mode === "play" ? "game" : "watch"}/${id}`;
  if (location.hash !== hash || location.search) {
    history.replaceState(null, "", location.pathname + hash);
  }
}

/** Show the game (play or watch) or the replay viewer; the game stays loaded meanwhile. */
function showView(next) {
  document.body.dataset.view = next;
  if (pageView === next) return;
  pageView = next;
  els.game.hidden = next !== "game";
  els.replay.hidden = next !== "replay";
  if (next === "replay") {
    closeDailyMenu();
  } else {
    viewer.hide();
    layout();
    renderAll();
  }
}

/** The replay of game `id`; "Back" returns to what was on screen. */
function openReplay(id) {
  history.pushState({ back: location.hash }, "", `${location.pathname}#/replay/${id}`);
  route();
}

function closeReplay() {
  if (history.state && typeof history.state.back === "string") {
    history.back(); // the hashchange routes back to the game
    return;
  }
  // Opened from a link: go to that game (played if this browser holds its token).
  const c = current;
  const id = c ? c.id : parseRoute().id;
  const hash = c ? `#/${c.mode === "play" ? "game" : "watch"}/${c.id}` : id ? `#/game/${id}` : "";
  history.replaceState(null, "", location.pathname + hash);
  route();
}

/** Today's date on the server's clock, as the daily boards count days (UTC). */
function serverToday() {
  return new Date(clock.now()).toISOString().slice(0, 10);
}

async function openGame(id, mode, { unfinishedOnly = false } = {}) {
  const gen = ++opening;
  let view;
  try {
    view = await api.getGame(id);
  } catch (err) {
    if (gen !== opening || unfinishedOnly) return false;
    if (err.status === 404) {
      toast("That game does not exist any more (games expire after a week without moves).", {
        action: { label: "New game", run: () => startNewGame(settingsForLevel(prefs.level)) },
        timeout: 15000,
      });
      if (!current) startNewGame(settingsForLevel(prefs.level));
    } else {
      toast(`Could not load the game: ${err.message}`, {
        action: { label: "Retry", run: () => openGame(id, mode) },
        timeout: 15000,
      });
    }
    return false;
  }
  if (gen !== opening) return false;
  if (unfinishedOnly && FINISHED.has(view.status)) return false;
  show(view, mode, mode === "play" ? tokens.get(id) : null);
  return true;
}

/** Create a game and play it; true once it is on screen. `onError(err)` replaces the toast. */
async function startNewGame(settings, { leaving = null, onError = null } = {}) {
  const gen = ++opening;
  let created;
  try {
    created = await api.createGame(settings);
  } catch (err) {
    if (gen !== opening) return false;
    if (onError) {
      onError(err);
      return false;
    }
    toast(`Could not start a game: ${err.message}`, {
      action: { label: "Retry", run: () => startNewGame(settings) },
      kind: "error",
      timeout: 15000,
    });
    return false;
  }
  if (gen !== opening) return false;
  adopt(created, leaving);
  return true;
}

/** Show a game this browser just created (or reset): keep its token, play it. */
function adopt(created, leaving) {
  tokens.set(created.game.id, created.token);
  show(created.game, "play", created.token);
  if (leaving) {
    const { id } = leaving;
    toast("New game started. The unfinished one is kept.", {
      action: { label: "Back to it", run: () => openGame(id, "play") },
      timeout: 8000,
    });
  }
}

function show(view, mode, token) {
  stopCurrent();
  clock.sampleText(view.server_time);
  const game = new Game(view);
  const c = {
    id: view.id, game, mode: token ? mode : "watch", token, live: null,
    pending: new Map(), gapTimer: 0, conn: "connecting", resetting: false,
    tooBig: game.size > MAX_PAGE_CELLS, statsAsked: false,
    hint: null, asking: false, pausing: false, rank: null,
  };
  current = c;
  hideHint();
  if (c.mode === "play") lastGame.set(c.id);
  setRoute(c.mode, c.id);
  document.body.dataset.mode = c.mode;
  layout(); // before the cells exist: reading sizes then costs no layout of the board
  if (c.tooBig) {
    els.board.replaceChildren();
    board.game = null;
    els.board.hidden = true;
    toast(`This board has ${game.size.toLocaleString()} cells; this page shows boards of up to ${MAX_PAGE_CELLS.toLocaleString()}.`, { timeout: 15000 });
  } else {
    els.board.hidden = false;
    board.show(game, { readonly: c.mode !== "play" });
  }
  els.board.inert = game.paused && !game.finished;
  renderAll();
  c.live = new LiveFeed(api, c.id, {
    version: () => c.game.version,
    onMessage: (message) => onLive(c, message),
    onState: (state) => {
      if (c !== current) return;
      c.conn = state;
      renderConn();
    },
    onGone: () => {
      if (c === current) toast("This game is no longer available on the server.", { timeout: 15000 });
    },
  });
  c.live.start();
  if (game.finished) finished(c, { fresh: false });
}

function stopCurrent() {
  const c = current;
  if (!c) return;
  c.live?.stop();
  clearTimeout(c.gapTimer);
  current = null;
}

// ---- keeping the board in step -----------------------------------------------------------

function onLive(c, message) {
  if (c !== current) return;
  switch (message.type) {
    case "snapshot":
      clock.sampleText(message.game.server_time);
      takeSnapshot(c, message.game);
      break;
    case "diff":
      clock.sampleText(message.move && message.move.at);
      if (message.version > c.game.version + 1) {
        // The feed skipped something: keep this one, resume from what we hold.
        c.pending.set(message.version, message);
        c.live.resync();
        armGapCheck(c);
      } else {
        ingest(c, message, "live");
      }
      break;
    case "heartbeat":
      clock.sampleText(message.server_time);
      if (message.version > c.game.version) c.live.resync();
      break;
    case "reset":
      onReset(c, message.next_id);
      break;
    default:
      break; // result / error answer moves sent over the socket; this page moves over HTTP.
  }
}

function ingest(c, diff) {
  const g = c.game;
  if (diff.version <= g.version) return; // already applied (or a move that changed nothing)
  if (diff.version > g.version + 1) {
    c.pending.set(diff.version, diff);
    armGapCheck(c);
    return;
  }
  applyDiff(c, diff);
  drain(c);
}

/** Apply the diffs that waited for the version now held; forget the ones it covers. */
function drain(c) {
  const g = c.game;
  for (let next = c.pending.get(g.version + 1); next; next = c.pending.get(g.version + 1)) {
    c.pending.delete(next.version);
    applyDiff(c, next);
  }
  for (const v of [...c.pending.keys()]) if (v <= g.version) c.pending.delete(v);
  if (c.pending.size === 0) {
    clearTimeout(c.gapTimer);
    c.gapTimer = 0;
  }
}

function armGapCheck(c) {
  if (c.gapTimer) return;
  c.gapTimer = setTimeout(async () => {
    c.gapTimer = 0;
    if (c !== current || c.pending.size === 0) return;
    c.live.resync();
    try {
      const view = await api.getGame(c.id);
      takeSnapshot(c, view);
    } catch {
      armGapCheck(c);
    }
  }, 800);
}

function applyDiff(c, diff) {
  const g = c.game;
  const wasFinished = g.finished;
  const wasPaused = g.paused && !g.finished;
  const wasStatus = g.status;
  const changed = g.apply(diff);
  if (!c.tooBig) board.update(changed);
  const h = c.hint;
  if (h) {
    // A hint holds until its cell is played, the first click places the mines, or (for a
    // guess, whose odds any opened cell changes) the board opens further.
    const opened = changed.length > 0 && diff.move.action !== "flag";
    if (changed.includes(h.i) || g.status !== wasStatus || (h.kind === "guess" && opened)) hideHint();
  }
  renderHeader();
  pauseChanged(c, wasPaused);
  if (!wasFinished && g.finished) finished(c, { fresh: true });
}

/** The board was covered or shown again: keyboard focus, the hint, a word for screen readers. */
function pauseChanged(c, wasPaused) {
  const g = c.game;
  const paused = g.paused && !g.finished;
  if (paused === wasPaused) return;
  const hadFocus = els.board.contains(document.activeElement);
  els.board.inert = paused;
  renderControls();
  if (paused) {
    hideHint();
    c.focusBack = hadFocus;
    if (hadFocus && c.mode === "play") els.pausedResume.focus();
    announce(c.mode === "play" ? "Game paused: the clock is stopped. Press P to resume." : "The player paused the game.");
  } else {
    if (c.focusBack && !c.tooBig) board.focus();
    c.focusBack = false;
    announce(c.mode === "play" ? "Game resumed." : "The player resumed the game.");
  }
}

function takeSnapshot(c, view) {
  if (c !== current || view.id !== c.id) return;
  const g = c.game;
  if (view.version < g.version) return;
  const wasFinished = g.finished;
  const wasPaused = g.paused && !g.finished;
  if (view.version === g.version) {
    // Same board: take the newer clock reference, stats and pause state.
    g.stats = view.stats ?? g.stats;
    g.paused = Boolean(view.paused);
    g.elapsedMs = view.elapsed_ms;
    g.timeRef = { elapsed: view.elapsed_ms, at: Date.parse(view.server_time) };
  } else {
    g.load(view);
    if (!c.tooBig) board.paintAll();
  }
  drain(c);
  renderAll();
  pauseChanged(c, wasPaused);
  if (!wasFinished && g.finished) finished(c, { fresh: true });
}

function onReset(c, nextId) {
  if (c.resetting || !GAME_ID.test(nextId || "")) return;
  if (c.mode === "watch") {
    toast("The player started a new game; now watching that one.");
    openGame(nextId, "watch");
  } else if (!tokens.get(nextId)) {
    toast("This game was restarted in another window.", {
      action: { label: "Watch the new one", run: () => openGame(nextId, "watch") },
      timeout: 15000,
    });
  }
}

function finished(c, { fresh }) {
  const g = c.game;
  hideHint();
  renderAll();
  if (c.rank == null) lookUpRank(c);
  const s = g.stats;
  if ((!s || s.bbbv == null || s.efficiency == null) && !c.statsAsked) {
    // The final stats come with the view; ask for it once.
    c.statsAsked = true;
    api.getGame(c.id).then((view) => takeSnapshot(c, view)).catch(() => {});
  }
  if (fresh) {
    const time = formatTime(g.elapsedMs);
    if (g.status === "won") announce(c.mode === "play" ? `You won in ${time}.` : `The player won in ${time}.`);
    else announce(c.mode === "play" ? `Boom. You hit a mine after ${time}. Game over.` : `The player hit a mine. Game over.`);
  }
}

/** Where a won game ranks: found in its leaderboard (a win is entered as it commits). */
async function lookUpRank(c, attempt = 0) {
  const g = c.game;
  if (g.status !== "won" || !g.preset || (g.stats && g.stats.assisted)) return;
  let entries;
  try {
    ({ entries } = await api.leaderboard(g.preset, { noGuess: g.noGuess, date: g.daily, limit: 100 }));
  } catch {
    return; // the rank is a nicety
  }
  if (c !== current) return;
  const entry = entries.find((e) => e.game_id === c.id);
  if (entry) {
    c.rank = entry.rank;
    renderResult();
  } else if (attempt === 0) {
    setTimeout(() => lookUpRank(c, 1), 1000);
  }
}

// ---- moves -------------------------------------------------------------------------------

function playable() {
  const c = current;
  if (!c || c.mode !== "play" || c.tooBig) return null;
  if (c.game.finished) return null;
  if (c.game.paused) {
    announce("The game is paused.");
    return null;
  }
  return c;
}

function onPrimary(i) {
  const c = playable();
  if (!c) return;
  const g = c.game;
  const ch = g.char(i);
  if (ch === "#") return move(c, "reveal", i);
  if (ch === "F" || ch === "?") {
    // A marked cell never opens by accident: unmark it first.
    board.nudge(i);
    announce("This cell is marked. Remove the mark before opening it.");
    return;
  }
  if (g.canChord(i)) return move(c, "chord", i);
  const n = g.number(i);
  if (n > 0 && g.hiddenAround(i).length > 0) {
    announce(`${n} ${n === 1 ? "mine" : "mines"} around, ${g.flagsAround(i)} flagged.`);
  }
}

function onSecondary(i) {
  const c = playable();
  if (!c) return;
  const ch = c.game.char(i);
  if (ch === "#" || ch === "F" || ch === "?") move(c, "flag", i);
}

function onChord(i) {
  const c = playable();
  if (!c) return;
  const g = c.game;
  if (g.canChord(i)) return move(c, "chord", i);
  const n = g.number(i);
  if (n > 0) {
    board.nudge(i);
    announce(`Chord needs exactly ${n} ${n === 1 ? "flag" : "flags"} around; there ${g.flagsAround(i) === 1 ? "is" : "are"} ${g.flagsAround(i)}.`);
  }
}

async function move(c, action, i) {
  const g = c.game;
  const [x, y] = g.xy(i);
  const targets = action === "chord" ? g.hiddenAround(i) : [i];
  if (!c.tooBig) board.setPending(targets, true);
  try {
    const diff = await api.move(c.id, action, { x, y }, c.token);
    if (c !== current) return;
    clock.sampleText(diff.move && diff.move.at);
    ingest(c, diff);
    announceMove(c, diff, i);
  } catch (err) {
    if (c === current) moveFailed(c, err);
  } finally {
    if (c === current && !c.tooBig) board.setPending(targets, false);
  }
}

function announceMove(c, diff, i) {
  if (FINISHED.has(diff.status)) return; // the end is announced on its own
  if (diff.move.action === "flag") {
    const ch = diff.cells.length ? diff.cells[0][2] : c.game.char(i);
    announce(ch === "F" ? "Flagged." : ch === "?" ? "Question mark." : "Mark removed.");
    return;
  }
  const opened = diff.cells.length;
  if (opened === 1) announce(cellStateText(diff.cells[0][2]));
  else if (opened > 1) announce(`${opened} cells opened.`);
}

async function moveFailed(c, err) {
  switch (err.code) {
    case "game_over":
      try {
        takeSnapshot(c, await api.getGame(c.id));
      } catch {
        /* the live feed will bring it */
      }
      break;
    case "unauthorized":
    case "forbidden":
      tokens.forget(c.id);
      toast("This browser can no longer move in this game; you are watching it.", { timeout: 10000 });
      openGame(c.id, "watch");
      break;
    case "not_found":
      toast("This game has expired.", {
        action: { label: "New game", run: () => startNewGame(settingsForLevel(prefs.level)) },
        timeout: 15000,
      });
      break;
    case "paused":
      toast("The game is paused: resume it to play on.");
      try {
        takeSnapshot(c, await api.getGame(c.id));
      } catch {
        /* the live feed will bring it */
      }
      break;
    case "rate_limited":
      toast("Too many moves at once; slow down a little.", { kind: "error" });
      break;
    case "network":
      toast("The server cannot be reached; that move was not played.", { kind: "error" });
      break;
    default:
      toast(`That move was refused: ${err.message}`, { kind: "error" });
  }
}

// ---- new games ---------------------------------------------------------------------------

/** The name sent with new games, if a valid one is set. */
function playerName() {
  const name = (prefs.player || "").trim();
  return PLAYER_NAME.test(name) ? name : null;
}

function newGameOptions() {
  const options = { question_marks: Boolean(prefs.questionMarks), no_guess: Boolean(prefs.noGuess) };
  const player = playerName();
  if (player) options.player = player;
  return options;
}

function settingsForLevel(level) {
  const base = newGameOptions();
  if (PRESETS[level]) return { preset: level, ...base };
  const { width, height, mines, first_click: firstClick } = prefs.custom;
  // No-guess boards always start with an opening.
  return { width, height, mines, first_click: base.no_guess ? "zero" : firstClick || "zero", ...base };
}

function settingsOfGame(g) {
  const base = newGameOptions();
  if (g.preset) return { preset: g.preset, ...base };
  const firstClick = base.no_guess ? "zero" : g.firstClick;
  return { width: g.width, height: g.height, mines: g.mines, first_click: firstClick, ...base };
}

/** Today's shared board for a preset (no-guess when that is on). */
function startDaily(preset) {
  closeDailyMenu();
  const c = current;
  const leaving = c && c.mode === "play" && c.game.status === "playing" ? { id: c.id } : null;
  const settings = { daily: preset, no_guess: Boolean(prefs.noGuess) };
  const player = playerName();
  if (player) settings.player = player;
  startNewGame(settings, { leaving });
}

/** The face, F2 and "Play again": a new game with the settings of the one on screen. */
async function newGameLikeThis() {
  const c = current;
  if (!c) return startNewGame(settingsForLevel(prefs.level));
  const leaving = c.mode === "play" && c.game.status === "playing" ? { id: c.id } : null;
  // A reset keeps the settings of the game; changed preferences need a fresh one.
  const same = c.game.questionMarks === Boolean(prefs.questionMarks)
    && c.game.noGuess === Boolean(prefs.noGuess)
    && (c.game.player || null) === playerName();
  if (c.mode === "play" && c.token && same && !c.tooBig) {
    // A reset: same settings, and anyone watching follows to the new game.
    const gen = ++opening;
    c.resetting = true;
    try {
      const created = await api.reset(c.id, c.token);
      if (gen !== opening) return;
      adopt(created, leaving);
      return;
    } catch (err) {
      c.resetting = false;
      if (gen !== opening) return;
      if (!["not_found", "forbidden", "unauthorized"].includes(err.code)) {
        toast(`Could not start a new game: ${err.message}`, { kind: "error" });
        return;
      }
    }
  }
  return startNewGame(settingsOfGame(c.game), { leaving });
}

function chooseLevel(level) {
  if (level === "custom") {
    openCustomDialog();
    return;
  }
  prefs.level = level;
  savePrefs(prefs);
  const c = current;
  const leaving = c && c.mode === "play" && c.game.status === "playing" ? { id: c.id } : null;
  startNewGame(settingsForLevel(level), { leaving });
}

// ---- hints -------------------------------------------------------------------------------

async function askHint() {
  const c = current;
  if (!c || c.mode !== "play" || c.tooBig || c.game.finished || c.asking) return;
  if (c.game.paused) {
    announce("The game is paused.");
    return;
  }
  const assisted = Boolean(c.game.stats && c.game.stats.assisted);
  // Only presets are ranked; the first hint there costs the game its place.
  if (c.game.preset && !assisted && prefs.confirmHints) {
    if (!(await confirmHint()) || c !== current) return;
  }
  c.asking = true;
  renderActions();
  try {
    const hint = await api.hint(c.id, c.token);
    if (c !== current) return;
    c.game.noteHint();
    showHint(c, hint);
  } catch (err) {
    if (c !== current) return;
    if (err.code === "game_over") {
      toast("No hint: this game is over.");
    } else {
      moveFailed(c, err);
    }
  } finally {
    c.asking = false;
    if (c === current) {
      renderActions();
      renderTags();
    }
  }
}

function confirmHint() {
  const d = els.hintDialog;
  const dontAsk = $("hint-dont-ask");
  dontAsk.checked = false;
  d.returnValue = "";
  return new Promise((resolve) => {
    d.addEventListener("close", () => {
      const ok = d.returnValue === "hint";
      if (ok && dontAsk.checked) {
        prefs.confirmHints = false;
        savePrefs(prefs);
      }
      resolve(ok);
    }, { once: true });
    d.showModal();
    $("hint-confirm").focus();
  });
}

/** The reason in words, with the service's (x, y) as the row and column a player sees. */
function readableReason(reason, game) {
  const sources = [];
  const text = reason.replace(/\((\d+), (\d+)\)/g, (_, x, y) => {
    const cx = Number(x);
    const cy = Number(y);
    if (cx < game.width && cy < game.height) sources.push(cy * game.width + cx);
    return `row ${cy + 1}, column ${cx + 1}`;
  });
  return { text: text.charAt(0).toUpperCase() + text.slice(1), sources };
}

function showHint(c, hint) {
  const g = c.game;
  const i = hint.y * g.width + hint.x;
  const { text, sources } = readableReason(hint.reason || "", g);
  const chance = formatPercent(hint.mine_probability);
  c.hint = { ...hint, i };
  const where = `row ${hint.y + 1}, column ${hint.x + 1}`;
  const kind = { safe: "Safe:", mine: "Mine:", guess: "Best guess:" }[hint.kind] || "Hint:";
  const label = { safe: "hint: safe", mine: "hint: a mine", guess: `hint: best guess, ${chance} chance of a mine` }[hint.kind];
  board.mark("hint-source", sources.filter((s) => s !== i), { cls: "hint-source", text: "a reason for the hint" });
  board.mark("hint", [i], { cls: `hint hint-${hint.kind}`, text: label });
  els.hintPanel.dataset.kind = hint.kind;
  els.hintKind.textContent = kind;
  els.hintWhere.textContent = hint.kind === "guess" ? `${where}, a ${chance} chance of a mine.` : `${where}.`;
  els.hintReason.textContent = ` ${text}.`;
  els.hintAct.textContent = hint.kind === "mine" ? "Flag it" : "Open it";
  els.hintAct.hidden = !g.isHidden(i);
  els.hintPanel.hidden = false;
  // The keyboard cursor goes to the cell: Space (or F) plays it.
  if (els.board.contains(document.activeElement)) board.focusCell(i);
  else {
    board.setFocusIndex(i);
    board.cells[i]?.scrollIntoView({ block: "nearest", inline: "nearest" });
  }
  announce(`${kind} ${els.hintWhere.textContent}${els.hintReason.textContent}`);
}

function hideHint() {
  const c = current;
  if (c) c.hint = null;
  board.unmark("hint");
  board.unmark("hint-source");
  els.hintPanel.hidden = true;
}

function playHint() {
  const c = playable();
  if (!c || !c.hint) return;
  const { i, kind } = c.hint;
  if (!c.game.isHidden(i)) return;
  move(c, kind === "mine" ? "flag" : "reveal", i);
}

// ---- pause -------------------------------------------------------------------------------

async function togglePause() {
  const c = current;
  if (!c || c.mode !== "play" || c.game.finished || c.pausing || c.tooBig) return;
  const g = c.game;
  const action = g.paused ? "resume" : "pause";
  if (action === "pause" && g.status !== "playing") {
    announce("The clock has not started yet.");
    return;
  }
  c.pausing = true;
  renderActions();
  try {
    const diff = await api.pause(c.id, action, c.token);
    if (c !== current) return;
    clock.sampleText(diff.move && diff.move.at);
    if (diff.version === g.version && g.paused !== (action === "pause")) {
      // It already was so on the server (another tab got there first).
      const wasPaused = g.paused;
      g.paused = action === "pause";
      renderAll();
      pauseChanged(c, wasPaused);
    } else {
      ingest(c, diff);
    }
  } catch (err) {
    if (c === current) moveFailed(c, err);
  } finally {
    c.pausing = false;
    if (c === current) renderActions();
  }
}

// ---- the daily menu ------------------------------------------------------------------------

function openDailyMenu() {
  const note = $("daily-note");
  note.textContent = prefs.noGuess
    ? "Today's no-guess board: the same mines for everyone, its start already open. The clock starts at your first move."
    : "Today's board: the same mines for everyone, its start already open. The clock starts at your first move.";
  els.dailyMenu.hidden = false;
  els.dailyButton.setAttribute("aria-expanded", "true");
  els.dailyMenu.querySelector("button").focus();
}

function closeDailyMenu({ focus = false } = {}) {
  if (els.dailyMenu.hidden) return;
  els.dailyMenu.hidden = true;
  els.dailyButton.setAttribute("aria-expanded", "false");
  if (focus) els.dailyButton.focus();
}

function onDailyMenuKey(e) {
  const items = [...els.dailyMenu.querySelectorAll("button")];
  const k = items.indexOf(document.activeElement);
  const to = { ArrowDown: k + 1, ArrowUp: k - 1, Home: 0, End: items.length - 1 }[e.key];
  if (e.key === "Escape") {
    e.preventDefault();
    closeDailyMenu({ focus: true });
  } else if (to !== undefined) {
    e.preventDefault();
    items[(to + items.length) % items.length].focus();
  }
}

// ---- the custom board ------------------------------------------------------------------------

function syncCustomFirstClick() {
  const f = els.customForm.elements;
  const noGuess = f.no_guess.checked;
  f.first_click.disabled = noGuess;
  if (noGuess) f.first_click.value = "zero";
  $("first-click-note").hidden = !noGuess;
}

function openCustomDialog() {
  const form = els.customForm;
  const cur = current && !current.game.preset ? current.game : null;
  const source = cur
    ? { width: cur.width, height: cur.height, mines: cur.mines, first_click: cur.firstClick }
    : prefs.custom;
  form.elements.width.value = source.width;
  form.elements.height.value = source.height;
  form.elements.mines.value = source.mines;
  form.elements.first_click.value = source.first_click || "zero";
  form.elements.seed.value = "";
  form.elements.no_guess.checked = Boolean(prefs.noGuess);
  syncCustomFirstClick();
  els.customError.textContent = "";
  els.customDialog.showModal();
}

function readCustomForm() {
  const f = els.customForm.elements;
  const int = (el) => (/^\s*\d+\s*$/.test(el.value) ? Number(el.value) : NaN);
  const width = int(f.width);
  const height = int(f.height);
  const mines = int(f.mines);
  if (!(width >= 2 && height >= 2)) return { error: "Width and height are at least 2." };
  if (width * height > MAX_PAGE_CELLS) {
    return { error: `This page shows boards of up to ${MAX_PAGE_CELLS.toLocaleString()} cells (e.g. 250 × 250).` };
  }
  const most = width * height - 9;
  if (!(mines >= 1 && mines <= most)) {
    return { error: `A ${width} × ${height} board takes 1 to ${Math.max(1, most)} mines.` };
  }
  const noGuess = f.no_guess.checked;
  const settings = { width, height, mines, first_click: noGuess ? "zero" : f.first_click.value, no_guess: noGuess };
  const seedText = f.seed.value.trim();
  if (seedText) {
    if (!/^\d{1,20}$/.test(seedText) || BigInt(seedText) >= 2n ** 64n) {
      return { error: "The seed is a whole number from 0 to 18446744073709551615." };
    }
    settings.seed = Number(seedText);
    if (!Number.isSafeInteger(settings.seed)) {
      return { error: "Seeds above 9007199254740991 cannot be sent from this page." };
    }
  }
  return { settings };
}

// ---- rendering ---------------------------------------------------------------------------

function renderAll() {
  renderHeader();
  renderLevels();
  renderControls();
  renderConn();
  renderResult();
}

function renderHeader() {
  const c = current;
  if (!c) return;
  const g = c.game;
  minesDisplay.set(g.minesLeft);
  renderFace();
  tick();
  els.paused.hidden = !(g.paused && !g.finished);
  els.frame.dataset.status = g.status;
  els.frame.dataset.paused = String(g.paused && !g.finished);
  renderActions();
  renderTags();
  const state = g.status === "won" ? "won" : g.status === "lost" ? "lost" : null;
  document.title = `${state ? `Minesweeper — ${state}` : "Minesweeper"}${c.mode === "watch" ? " (watching)" : ""}`;
  if (g.finished && els.result.hidden) renderResult();
}

function renderFace() {
  const c = current;
  const status = c ? c.game.status : "ready";
  let kind = "smile";
  if (status === "won") kind = "win";
  else if (status === "lost") kind = "dead";
  else if (pressing) kind = "oh";
  if (els.face.dataset.face !== kind) {
    els.face.innerHTML = faceSvg(kind);
    els.face.dataset.face = kind;
  }
  const watching = c && c.mode === "watch";
  const label = watching ? "Play your own game (F2)" : "New game (F2)";
  els.face.setAttribute("aria-label", label);
  els.face.title = label;
}

function tick() {
  clearTimeout(tickTimer);
  const c = current;
  if (!c) return;
  const ms = c.game.elapsedAt(clock.now());
  timerDisplay.set(Math.floor(ms / 1000));
  els.frame.dataset.elapsed = String(Math.floor(ms));
  if (c.game.status === "playing" && !c.game.paused) {
    tickTimer = setTimeout(tick, 1000 - (ms % 1000) + 10);
  }
}

function renderLevels() {
  const c = current;
  const level = c ? c.game.preset || "custom" : prefs.level;
  for (const b of els.levels) b.setAttribute("aria-pressed", String(b.dataset.level === level));
}

function renderControls() {
  const c = current;
  const watching = !c || c.mode === "watch";
  els.watchBanner.hidden = !(c && c.mode === "watch" && pageView === "game");
  if (c && c.mode === "watch") {
    const who = c.game.player ? `${c.game.player}'s game` : "this game";
    els.watchText.textContent = `You are watching ${who} live; only its player can move.`;
  }
  els.flagMode.hidden = watching;
  els.flagMode.setAttribute("aria-pressed", String(Boolean(prefs.flagMode)));
  board.flagMode = Boolean(prefs.flagMode);
  els.frame.classList.toggle("flag-mode", Boolean(prefs.flagMode) && !watching);
  els.marks.checked = Boolean(prefs.questionMarks);
  els.noGuess.checked = Boolean(prefs.noGuess);
  els.pausedText.textContent = watching
    ? "The player has paused this game: the clock is stopped and the board hidden."
    : "The clock is stopped and the board is hidden.";
  els.pausedResume.hidden = watching;
  renderActions();
}

/** Hint and Pause: for the player, while the game runs. */
function renderActions() {
  const c = current;
  const playing = Boolean(c && c.mode === "play" && !c.tooBig);
  els.hint.hidden = !playing;
  els.pause.hidden = !playing;
  if (!playing) return;
  const g = c.game;
  const running = !g.finished;
  els.hint.disabled = !running || g.paused || c.asking;
  els.hint.setAttribute("aria-busy", String(Boolean(c.asking)));
  els.pause.disabled = !running || c.pausing || (g.status !== "playing" && !g.paused);
  const paused = g.paused && running;
  const label = paused ? "Resume" : "Pause";
  if (els.pauseLabel.textContent !== label) {
    els.pauseLabel.textContent = label;
    els.pauseIcon.innerHTML = paused ? playIcon : pauseIcon;
    els.pause.title = paused ? "Resume (P): show the board and start the clock again" : "Pause (P): stop the clock and hide the board";
  }
}

/** What kind of game this is: daily, no-guess, assisted, and whose. */
function renderTags() {
  const c = current;
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
  const key = tags.map(([k, t]) => `${k}:${t}`).join("|");
  if (els.tags.dataset.key === key) return;
  els.tags.dataset.key = key;
  els.tags.replaceChildren(
    ...tags.map(([kind, text]) => {
      const span = document.createElement("span");
      span.className = `tag tag-${kind}`;
      span.dataset.tag = kind;
      span.textContent = text;
      return span;
    }),
  );
  els.tags.hidden = tags.length === 0;
}

function renderConn() {
  const c = current;
  const state = c ? c.conn : "idle";
  let text = "";
  if (state === "reconnecting") text = "Reconnecting…";
  else if (state === "gone") text = "Not available";
  else if (state === "live" && c.mode === "watch") text = "Live";
  els.conn.textContent = text;
  els.conn.dataset.state = state;
}

function boardName(g) {
  if (g.daily) return `today's daily ${g.preset} board`;
  return g.preset ? `the ${g.preset} board` : `a ${g.width} × ${g.height} board with ${g.mines} mines`;
}

function renderResult() {
  const c = current;
  const g = c && c.game;
  if (!g || !g.finished) {
    els.result.hidden = true;
    return;
  }
  const won = g.status === "won";
  const mine = c.mode === "play";
  const who = g.player || "The player";
  els.result.className = `result ${won ? "won" : "lost"}`;
  els.resultTitle.textContent = won
    ? mine ? "You won!" : `${who} won!`
    : mine ? "Boom! You hit a mine." : `${who} hit a mine.`;
  els.resultSub.textContent = won
    ? `Cleared ${boardName(g)} in ${formatTime(g.elapsedMs)}.`
    : `Game over after ${formatTime(g.elapsedMs)} on ${boardName(g)}.`;
  const s = g.stats || {};
  const clicks = s.clicks || null;
  const rows = [
    ["Time", formatTime(g.elapsedMs), "time"],
    ["3BV", s.bbbv == null ? "—" : won ? String(s.bbbv) : `${s.bbbv_done} of ${s.bbbv}`, "bbbv"],
    ["3BV/s", s.bbbv_per_second == null ? "—" : s.bbbv_per_second.toFixed(2), "bbbv-per-second"],
    ["Clicks", clicks ? String(clicks.total) : "—", "clicks"],
    ["Efficiency", s.efficiency == null ? "—" : `${Math.round(s.efficiency * 100)}%`, "efficiency"],
  ];
  const plural = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;
  els.resultClicks.textContent = clicks
    ? `Clicks: ${plural(clicks.reveal, "open")}, ${plural(clicks.flag, "flag")}, ${plural(clicks.chord, "chord")}; ${clicks.useful} changed the board.`
    : "";
  els.resultStats.replaceChildren(
    ...rows.map(([term, value, key]) => {
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
  els.resultAssisted.hidden = !s.assisted;
  renderResultNote(c);
  els.again.textContent = mine ? "Play again" : "Play your own game";
  els.result.hidden = false;
}

/** Below the stats: why the game is not ranked, or where it ranks. */
function renderResultNote(c) {
  const g = c.game;
  const s = g.stats || {};
  const note = els.resultNote;
  const parts = [];
  const link = (label, run) => {
    const b = document.createElement("button");
    b.type = "button";
    b.className = "link-button";
    b.textContent = label;
    b.addEventListener("click", run);
    return b;
  };
  const openBoard = (focusName = false) => leaderboards.open({
    preset: g.preset, noGuess: g.noGuess, daily: Boolean(g.daily), focusName,
  });
  if (s.assisted) {
    const n = s.hints;
    parts.push(`Assisted: ${n} ${n === 1 ? "hint" : "hints"} used, so this game is not ranked.`);
  } else if (c.rank != null) {
    const where = g.daily ? `today's daily ${g.preset}` : `the ${g.preset}`;
    parts.push(`Ranked #${c.rank} on ${where}${g.noGuess ? " no-guess" : ""} leaderboard`);
    if (!g.player && c.mode === "play") {
      parts.push(" as anonymous. ", link("Set your name", () => openBoard(true)), " for the next ones.");
    } else {
      parts.push(". ", link("See the leaderboard", () => openBoard()));
    }
  }
  note.replaceChildren(...parts);
  note.hidden = parts.length === 0;
}

/** Fit the cells to the window: as large as comfortable, never too small to hit. */
function layout() {
  const c = current;
  if (!c) return;
  els.frame.style.setProperty("--cell", `${fitCells(c.game.width, c.game.height)}px`);
}

// ---- small UI helpers --------------------------------------------------------------------

function announce(text) {
  els.announcer.textContent = "";
  // A fresh text node makes repeated messages speak again.
  requestAnimationFrame(() => {
    els.announcer.textContent = text;
  });
}

function toast(message, { action = null, timeout = 6000, kind = "info" } = {}) {
  const el = document.createElement("div");
  el.className = `toast ${kind}`;
  const text = document.createElement("span");
  text.textContent = message;
  el.append(text);
  let timer = 0;
  const remove = () => {
    clearTimeout(timer);
    el.remove();
  };
  if (action) {
    const b = document.createElement("button");
    b.type = "button";
    b.textContent = action.label;
    b.addEventListener("click", () => {
      remove();
      action.run();
    });
    el.append(b);
  }
  const close = document.createElement("button");
  close.type = "button";
  close.className = "toast-close";
  close.setAttribute("aria-label", "Dismiss");
  close.textContent = "×";
  close.addEventListener("click", remove);
  el.append(close);
  els.toasts.append(el);
  while (els.toasts.children.length > 3) els.toasts.firstElementChild.remove();
  timer = setTimeout(remove, timeout);
}

function watchUrl(id) {
  return `${location.origin}${location.pathname}#/watch/${id}`;
}

function openShare() {
  const c = current;
  if (!c) return;
  els.shareUrl.value = watchUrl(c.id);
  els.shareStatus.textContent = "";
  els.shareDialog.showModal();
  els.shareUrl.select();
}

async function copyShare() {
  const url = els.shareUrl.value;
  try {
    await navigator.clipboard.writeText(url);
    els.shareStatus.textContent = "Copied.";
  } catch {
    els.shareUrl.select();
    const ok = document.execCommand && document.execCommand("copy");
    els.shareStatus.textContent = ok ? "Copied." : "Select the link and copy it.";
  }
}

// ---- wiring ------------------------------------------------------------------------------

function wire() {
  $("flag-mode-icon").innerHTML = flagIcon;
  $("share-icon").innerHTML = linkIcon;
  $("hint-icon").innerHTML = hintIcon;
  els.pauseIcon.innerHTML = pauseIcon;
  $("daily-icon").innerHTML = calendarIcon;
  $("leaders-icon").innerHTML = trophyIcon;
  document.body.dataset.view = pageView;

  els.face.addEventListener("click", () => newGameLikeThis());
  els.again.addEventListener("click", () => newGameLikeThis());
  els.watchPlay.addEventListener("click", () => startNewGame(settingsForLevel(prefs.level)));
  for (const b of els.levels) b.addEventListener("click", () => chooseLevel(b.dataset.level));

  els.flagMode.addEventListener("click", () => {
    prefs.flagMode = !prefs.flagMode;
    savePrefs(prefs);
    renderControls();
    announce(prefs.flagMode ? "Flag mode on: taps and clicks plant flags." : "Flag mode off.");
  });
  els.marks.addEventListener("change", () => {
    prefs.questionMarks = els.marks.checked;
    savePrefs(prefs);
    const c = current;
    if (c && c.game.questionMarks !== prefs.questionMarks && !c.game.finished) {
      toast(`Question marks are ${prefs.questionMarks ? "on" : "off"} from the next game.`);
    }
  });

  els.noGuess.addEventListener("change", () => {
    prefs.noGuess = els.noGuess.checked;
    savePrefs(prefs);
    const c = current;
    if (c && c.game.noGuess !== prefs.noGuess) {
      toast(`No guessing is ${prefs.noGuess ? "on" : "off"} from the next game.`, {
        action: { label: "New game now", run: () => newGameLikeThis() },
      });
    }
  });

  els.hint.addEventListener("click", () => askHint());
  els.hintAct.addEventListener("click", () => playHint());
  $("hint-dismiss").addEventListener("click", () => {
    hideHint();
    if (!board.readonly) board.focus();
  });
  els.pause.addEventListener("click", () => togglePause());
  els.pausedResume.addEventListener("click", () => togglePause());
  els.resultReplay.addEventListener("click", () => current && openReplay(current.id));

  els.dailyButton.addEventListener("click", () => {
    if (els.dailyMenu.hidden) openDailyMenu();
    else closeDailyMenu();
  });
  els.dailyMenu.addEventListener("keydown", onDailyMenuKey);
  for (const b of els.dailyMenu.querySelectorAll("[data-daily]")) {
    b.addEventListener("click", () => startDaily(b.dataset.daily));
  }
  $("daily-wrap").addEventListener("focusout", (e) => {
    if (!e.relatedTarget || !$("daily-wrap").contains(e.relatedTarget)) closeDailyMenu();
  });
  document.addEventListener("pointerdown", (e) => {
    if (!$("daily-wrap").contains(e.target)) closeDailyMenu();
  });

  els.leadersButton.addEventListener("click", () => {
    const g = current && current.game;
    leaderboards.open({
      preset: g && g.preset ? g.preset : PRESETS[prefs.level] ? prefs.level : "beginner",
      noGuess: g ? g.noGuess : Boolean(prefs.noGuess),
      daily: Boolean(g && g.daily),
    });
  });

  els.share.addEventListener("click", openShare);
  els.resultShare.addEventListener("click", openShare);
  $("share-copy").addEventListener("click", copyShare);

  $("custom-cancel").addEventListener("click", () => els.customDialog.close());
  els.customForm.elements.no_guess.addEventListener("change", syncCustomFirstClick);
  els.customForm.addEventListener("submit", async (e) => {
    e.preventDefault();
    const { settings, error } = readCustomForm();
    if (error) {
      els.customError.textContent = error;
      return;
    }
    els.customError.textContent = "";
    const c = current;
    const leaving = c && c.mode === "play" && c.game.status === "playing" ? { id: c.id } : null;
    const { seed, no_guess: noGuess, ...remembered } = settings;
    const options = { ...newGameOptions(), no_guess: noGuess };
    els.customStart.disabled = true;
    const started = await startNewGame({ ...settings, ...options }, {
      leaving,
      // The service knows best which boards it can promise: say why, keep the dialog.
      onError: (err) => {
        els.customError.textContent = `This board cannot start: ${err.message}`;
      },
    });
    els.customStart.disabled = false;
    if (!started) return;
    prefs.level = "custom";
    prefs.custom = remembered;
    prefs.noGuess = noGuess;
    savePrefs(prefs);
    renderControls();
    els.customDialog.close();
  });

  const modality = (kind) => () => {
    if (document.documentElement.dataset.input !== kind) document.documentElement.dataset.input = kind;
  };
  document.addEventListener("keydown", modality("keyboard"), true);
  document.addEventListener("pointerdown", modality("pointer"), true);

  document.addEventListener("keydown", (e) => {
    if (pageView === "replay") {
      // Keys with no focused control drive the replay too.
      if (e.target === document.body) viewer.onKey(e);
      return;
    }
    if (e.defaultPrevented || e.altKey || e.ctrlKey || e.metaKey) return;
    const typing = e.target.closest && e.target.closest("input:not([type=checkbox]), select, textarea, dialog, .menu");
    if (typing) return;
    const key = e.key.length === 1 ? e.key.toLowerCase() : e.key;
    if (key === "F2") {
      e.preventDefault();
      newGameLikeThis();
    } else if ((key === "p" || key === "h") && !e.repeat && current && current.mode === "play") {
      e.preventDefault();
      if (key === "p") togglePause();
      else askHint();
    }
  });

  let resizeFrame = 0;
  window.addEventListener("resize", () => {
    cancelAnimationFrame(resizeFrame);
    resizeFrame = requestAnimationFrame(() => {
      layout();
      if (pageView === "replay") viewer.fit();
    });
  });
  document.addEventListener("visibilitychange", () => tick());
  window.addEventListener("hashchange", () => route());
}

wire();
renderControls();
route();
