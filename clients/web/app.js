// The web client: wires the board, the header and the controls to the public API.
//
// Routes (in the URL fragment, so any static mount works):
//   #/game/<id>   play a game whose token this browser holds (else: watch it)
//   #/watch/<id>  watch a game live, read-only (also ?watch=<id>)
//   (nothing)     resume the last unfinished game, or start a new one
//
// Every change to the board comes as a diff: the answer to our own move over HTTP,
// and the same diff again over the WebSocket. Diffs are applied strictly in version
// order, each once; a gap is filled by resubscribing with ?since=<version>.

import { Api, ApiError, LiveFeed } from "./api.js";
import { Board, cellStateText } from "./board.js";
import { ServerClock } from "./clock.js";
import { SevenSegment } from "./digits.js";
import { FINISHED, Game } from "./game.js";
import { faceSvg, flagIcon, linkIcon } from "./icons.js";
import { lastGame, loadPrefs, savePrefs, tokens } from "./storage.js";

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
  frame: $("frame"),
  scroller: $("scroller"),
  board: $("board"),
  paused: $("paused"),
  face: $("face"),
  levels: [...document.querySelectorAll(".level")],
  flagMode: $("flag-mode"),
  marks: $("opt-marks"),
  share: $("share"),
  conn: $("conn"),
  result: $("result"),
  resultTitle: $("result-title"),
  resultSub: $("result-sub"),
  resultStats: $("result-stats"),
  resultClicks: $("result-clicks"),
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

/**
 * The game on screen: { id, game, mode: "play" | "watch", token, live, pending, gapTimer,
 * conn, resetting }. Replaced as a whole when another game opens, so callbacks of an
 * old game can tell they are stale (`c !== current`).
 */
let current = null;
let opening = 0;
let pressing = false;
let tickTimer = 0;

// ---- start-up and routing ----------------------------------------------------------------

function parseRoute() {
  const m = /^#\/?(watch|game)\/([0-9a-f]{32})$/.exec(location.hash);
  if (m) return { kind: m[1], id: m[2] };
  const watch = new URLSearchParams(location.search).get("watch");
  if (watch && GAME_ID.test(watch)) return { kind: "watch", id: watch };
  return { kind: "home" };
}

async function route() {
  const r = parseRoute();
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
  const hash = `#/${mode === "play" ? "game" : "watch"}/${id}`;
  if (location.hash !== hash || location.search) {
    history.replaceState(null, "", location.pathname + hash);
  }
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

async function startNewGame(settings, { leaving = null } = {}) {
  const gen = ++opening;
  let created;
  try {
    created = await api.createGame(settings);
  } catch (err) {
    if (gen !== opening) return;
    toast(`Could not start a game: ${err.message}`, {
      action: { label: "Retry", run: () => startNewGame(settings) },
      kind: "error",
      timeout: 15000,
    });
    return;
  }
  if (gen !== opening) return;
  adopt(created, leaving);
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
  };
  current = c;
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
  const changed = g.apply(diff);
  if (!c.tooBig) board.update(changed);
  renderHeader();
  if (!wasFinished && g.finished) finished(c, { fresh: true });
}

function takeSnapshot(c, view) {
  if (c !== current || view.id !== c.id) return;
  const g = c.game;
  if (view.version < g.version) return;
  const wasFinished = g.finished;
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
  renderAll();
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

function settingsForLevel(level) {
  const base = { question_marks: Boolean(prefs.questionMarks) };
  if (PRESETS[level]) return { preset: level, ...base };
  const { width, height, mines, first_click: firstClick } = prefs.custom;
  return { width, height, mines, first_click: firstClick || "zero", ...base };
}

function settingsOfGame(g) {
  const base = { question_marks: Boolean(prefs.questionMarks) };
  if (g.preset) return { preset: g.preset, ...base };
  return { width: g.width, height: g.height, mines: g.mines, first_click: g.firstClick, ...base };
}

/** The face, F2 and "Play again": a new game with the settings of the one on screen. */
async function newGameLikeThis() {
  const c = current;
  if (!c) return startNewGame(settingsForLevel(prefs.level));
  const leaving = c.mode === "play" && c.game.status === "playing" ? { id: c.id } : null;
  const sameMarks = c.game.questionMarks === Boolean(prefs.questionMarks);
  if (c.mode === "play" && c.token && sameMarks && !c.tooBig) {
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
  const settings = { width, height, mines, first_click: f.first_click.value };
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
  els.watchBanner.hidden = !(c && c.mode === "watch");
  if (c && c.mode === "watch") {
    const who = c.game.player ? `${c.game.player}'s game` : "this game";
    els.watchText.textContent = `You are watching ${who} live; only its player can move.`;
  }
  els.flagMode.hidden = watching;
  els.flagMode.setAttribute("aria-pressed", String(Boolean(prefs.flagMode)));
  board.flagMode = Boolean(prefs.flagMode);
  els.frame.classList.toggle("flag-mode", Boolean(prefs.flagMode) && !watching);
  els.marks.checked = Boolean(prefs.questionMarks);
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

function formatTime(ms) {
  const total = ms / 1000;
  if (total < 60) return `${total.toFixed(3)} s`;
  const m = Math.floor(total / 60);
  const s = total - m * 60;
  return `${m}:${s.toFixed(3).padStart(6, "0")}`;
}

function boardName(g) {
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
  els.again.textContent = mine ? "Play again" : "Play your own game";
  els.result.hidden = false;
}

/** Fit the cells to the window: as large as comfortable, never too small to hit. */
function layout() {
  const c = current;
  if (!c) return;
  const { width, height } = c.game;
  const vw = document.documentElement.clientWidth;
  const coarse = matchMedia("(pointer: coarse)").matches;
  const minCell = coarse ? 30 : 22;
  const maxCell = 40;
  const chrome = 28; // frame border and padding
  const availW = Math.min(vw, 1600) - (vw < 600 ? 12 : 48) - chrome;
  const availH = Math.max(260, window.innerHeight - 200);
  let cell = Math.floor(Math.min(availW / width, availH / height));
  cell = Math.max(minCell, Math.min(maxCell, cell));
  els.frame.style.setProperty("--cell", `${cell}px`);
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

  els.share.addEventListener("click", openShare);
  els.resultShare.addEventListener("click", openShare);
  $("share-copy").addEventListener("click", copyShare);

  $("custom-cancel").addEventListener("click", () => els.customDialog.close());
  els.customForm.addEventListener("submit", (e) => {
    e.preventDefault();
    const { settings, error } = readCustomForm();
    if (error) {
      els.customError.textContent = error;
      return;
    }
    const { seed, ...remembered } = settings;
    prefs.level = "custom";
    prefs.custom = remembered;
    savePrefs(prefs);
    els.customDialog.close();
    const c = current;
    const leaving = c && c.mode === "play" && c.game.status === "playing" ? { id: c.id } : null;
    startNewGame({ ...settings, question_marks: Boolean(prefs.questionMarks) }, { leaving });
  });

  const modality = (kind) => () => {
    if (document.documentElement.dataset.input !== kind) document.documentElement.dataset.input = kind;
  };
  document.addEventListener("keydown", modality("keyboard"), true);
  document.addEventListener("pointerdown", modality("pointer"), true);

  document.addEventListener("keydown", (e) => {
    if (e.defaultPrevented || e.altKey || e.ctrlKey || e.metaKey) return;
    const typing = e.target.closest && e.target.closest("input, select, textarea, dialog");
    if (e.key === "F2" && !typing) {
      e.preventDefault();
      newGameLikeThis();
    }
  });

  let resizeFrame = 0;
  window.addEventListener("resize", () => {
    cancelAnimationFrame(resizeFrame);
    resizeFrame = requestAnimationFrame(layout);
  });
  document.addEventListener("visibilitychange", () => tick());
  window.addEventListener("hashchange", () => route());
}

wire();
renderControls();
route();
