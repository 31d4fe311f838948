// The page's start-up: builds its parts, wires the controls and keys that belong to no
// single part, and owns the routes and which view is shown (the game, or a replay).
//
// Routes (in the URL fragment, so any static mount works):
//   #/game/<id>   play a game whose token this browser holds (else: watch it)
//   #/watch/<id>  watch a game live, read-only (also ?watch=<id>)
//   #/replay/<id> the replay of a finished game
//   #/player/<id> a player's profile (#/player/me: this browser's player)
//   #/match/<id>  a match: its room, then its board (room.js; "Play online": online.js)
//   (nothing)     resume the last unfinished game, or start a new one
//
// Where things live: screen.js the game on screen, session.js its live socket and the
// player's moves, game.js the page's copy of the game; moves.js, hints.js, pause.js,
// result.js, panel.js, daily.js, custom.js, share.js the parts around the board;
// player.js this browser's player, profile.js the profile page.

import { Api } from "./api.js";
import { Board } from "./board.js";
import { ServerClock } from "./clock.js";
import { CustomDialog } from "./custom.js";
import { DailyMenu, playedNote } from "./daily.js";
import { Hints } from "./hints.js";
import { calendarIcon, flagIcon, hintIcon, linkIcon, personIcon, trophyIcon } from "./icons.js";
import { Leaderboards } from "./leaderboard.js";
import { Moves } from "./moves.js";
import { dailySettings, gameOptions, PRESETS, settingsLike } from "./newgame.js";
import { Notices } from "./notices.js";
import { Panel } from "./panel.js";
import { Pause } from "./pause.js";
import { Me } from "./player.js";
import { ProfilePage } from "./profile.js";
import { ResultPanel } from "./result.js";
import { GAME_ID, Screen } from "./screen.js";
import { ShareDialog } from "./share.js";
import { lastGame, loadPrefs, playerKey, savePrefs, tokens } from "./storage.js";
import { MatchApi } from "./matchapi.js";
import { PlayOnline } from "./online.js";
import { Room } from "./room.js";
import { ReplayViewer } from "./viewer.js";

const $ = (id) => document.getElementById(id);

const api = new Api();
const clock = new ServerClock();
const prefs = loadPrefs();
const notices = new Notices($("toasts"), $("announcer"));
const me = new Me({ api, store: playerKey, onChange: (p, { registered }) => showPlayer(p, registered) });
api.playerToken = () => me.token();
const panel = new Panel({ frame: $("frame"), mines: $("mines-left"), face: $("face"), timer: $("timer"), clock });
// The board's intents go to the moves, which need the screen: both are made just below.
let moves = null;
const board = new Board({
  area: $("board-area"),
  canvas: $("board-canvas"),
  scroller: $("scroller"),
  space: $("board-space"),
  grid: $("board"),
  overview: $("overview"),
  where: $("view-where"),
  zoomIn: $("zoom-in"),
  zoomOut: $("zoom-out"),
  fit: $("zoom-fit"),
  size: $("cell-size"),
}, {
  primary: (i) => moves.primary(i),
  secondary: (i, input) => moves.secondary(i, input),
  chord: (i) => moves.chord(i),
  pressing: (active) => panel.pressing(active),
}, { onZoom: (cell) => screen.zoomed(cell) });
const screen = new Screen({
  api, clock, prefs, board, notices,
  onShown: (c) => {
    setRoute(c);
    greet();
  },
  // The room is made below; moves only come once a game is on screen.
  onMoved: (c, diff, count) => room.moved(c, diff, count),
  // Another game started while the player still races is asked first; the toast after it
  // leads back to the match's page (its address, as a link would).
  mayLeave: () => room.mayLeave(),
  openMatch: (id) => { location.hash = `#/match/${id}`; },
  player: () => me.player,
});
moves = new Moves({ screen, board, notices });
const share = new ShareDialog($("share-dialog"));
const leaderboards = new Leaderboards($("leaders-dialog"), {
  api,
  isMine: (entry) => entry.player_id === me.id || Boolean(tokens.get(entry.game_id)),
  today: () => new Date(clock.now()).toISOString().slice(0, 10), // the daily boards' UTC day
  onReplay: (id) => openReplay(id),
  onPlayer: (id) => openProfile(id),
});
screen.attach({
  panel,
  hints: new Hints({ screen, api, board, prefs, savePrefs, notices, play: (c, action, i) => moves.play(c, action, i) }),
  pause: new Pause({ screen, api, board, notices }),
  result: new ResultPanel($("result"), {
    api, leaderboards, notices,
    onAgain: () => focusBoardAfter(again()),
    onReplay: (id) => openReplay(id),
    onShare: (id) => share.open(id),
    // The room is made below; a game ends only once it is on screen.
    matchEnd: (c) => room.endWords(c),
  }),
});
const daily = new DailyMenu($("daily-wrap"), {
  noGuess: () => Boolean(prefs.noGuess),
  played: (noGuess) => dailyPlays(noGuess),
  onChoose: (preset) => startDaily(preset),
});
const custom = new CustomDialog($("custom-dialog"), {
  start: (settings, options) => screen.start({ ...settings, ...gameOptions(prefs), no_guess: settings.no_guess }, options),
  onStarted: (board, noGuess) => {
    prefs.level = "custom";
    prefs.custom = board;
    prefs.noGuess = noGuess;
    savePrefs(prefs);
    screen.render();
  },
});
const viewer = new ReplayViewer($("replay"), { api, onClose: closeReplay });
const matches = new MatchApi(api, () => me.token());
// A match's page opened from another (a rematch) gets an address of its own, as from a link.
const openMatch = (id) => { location.hash = `#/match/${id}`; };
const room = new Room({ matches, me, screen, clock, notices, onReplay: (id, outcome) => openReplay(id, outcome), onMatch: openMatch });
// The room it opens takes the focus (its status, or Start), not the header's button the
// dialog gives it back to; a room just made is shown at once from the answer that made it.
new PlayOnline({ matches, notices, openMatch: (id, view = null) => room.goTo(id, view) });
const profile = new ProfilePage($("profile"), { api, me, onReplay: (id) => openReplay(id), onClose: closeReplay });

// What the page shows: "game" (play or watch), "replay" or "profile".
let pageView = "game";

// ---- routes ----------------------------------------------------------------------------

function parseRoute() {
  const m = /^#\/?(watch|game|replay|player|match)\/([0-9a-f]{32}|me)$/.exec(location.hash);
  // "me" names no game: only this browser's player.
  if (m && (m[1] === "player" || m[2] !== "me")) return { kind: m[1], id: m[2] };
  const watch = new URLSearchParams(location.search).get("watch");
  if (watch && GAME_ID.test(watch)) return { kind: "watch", id: watch };
  // A fragment that names no route (a link to a part of the page) leaves the game alone.
  if (location.hash.length > 1) return { kind: "other" };
  return { kind: "home" };
}

async function route() {
  const r = parseRoute();
  if (r.kind === "match") {
    showView("game");
    return room.open(r.id);
  }
  // A link to a part of the page keeps a match's address, as it keeps a game's.
  if (r.kind === "other" && room.active && pageView === "game") {
    history.replaceState(history.state, "", `${location.pathname}#/match/${room.id}`);
    return;
  }
  if (r.kind === "other" && screen.current && pageView === "game") {
    setRoute(screen.current);
    return;
  }
  if (r.kind !== "replay") room.close();
  if (r.kind === "replay") {
    showView("replay");
    viewer.open(r.id, { outcome: history.state?.outcome ?? null });
    return;
  }
  if (r.kind === "player") {
    showView("profile");
    if (r.id !== "me") return profile.open(r.id);
    const p = await me.ready();
    if (p && parseRoute().id === "me") history.replaceState(history.state, "", `${location.pathname}#/player/${p.id}`);
    return p ? profile.open(p.id) : notices.toast("Could not reach the server to make your player.", { kind: "error" });
  }
  showView("game");
  const c = screen.current;
  if (c && r.id === c.id && (r.kind === "game") === (c.mode === "play")) return;
  if (r.kind === "watch") return screen.open(r.id, "watch");
  if (r.kind === "game") return screen.open(r.id, tokens.get(r.id) ? "play" : "watch");
  const last = lastGame.get();
  if (typeof last === "string" && GAME_ID.test(last) && tokens.get(last)) {
    if (await screen.open(last, "play", { unfinishedOnly: true })) return;
  }
  return screen.startLevel();
}

/** The address of the game on screen (the replay keeps its own; closing it comes back). */
function setRoute(c) {
  if (pageView !== "game" || room.holds(c.id)) return;
  // A game of one's own started from a match's page (a level, a daily board) leaves it.
  room.close();
  const hash = `#/${c.mode === "play" ? "game" : "watch"}/${c.id}`;
  if (location.hash !== hash || location.search) {
    history.replaceState(null, "", location.pathname + hash);
  }
}

/** Show the game (play or watch) or the replay viewer; the game stays loaded meanwhile. */
function showView(next) {
  document.body.dataset.view = next;
  if (pageView === next) return;
  pageView = next;
  screen.visible = next === "game";
  $("game").hidden = next !== "game";
  $("replay").hidden = next !== "replay";
  $("profile").hidden = next !== "profile";
  if (next !== "game") daily.close();
  if (next !== "replay") viewer.hide();
  if (next !== "profile") profile.hide();
  if (next === "game") {
    screen.render();
    screen.fit({ force: true });
    // "Back to the game" went with the replay or the profile: the board takes the keys.
    if (focusLost()) board.focus();
  }
}

/** Whether the keyboard focus has fallen to the page: its control went, or was hidden. */
function focusLost() {
  const el = document.activeElement;
  return !el || el === document.body || !el.isConnected || Boolean(el.closest("[hidden]"));
}

/**
 * Once the game that `pending` puts on screen is there, the board takes the keyboard focus
 * if the control that had it went (a result's "Play again"), or is `from` (the Daily
 * button, which holds it while its board is made). A game that did not come leaves it.
 */
async function focusBoardAfter(pending, { from = null } = {}) {
  const shown = await pending;
  if (shown === false || pageView !== "game" || !screen.current) return shown;
  if (focusLost() || (from && document.activeElement === from)) board.focus();
  return shown;
}

/** The replay of game `id`; "Back" returns to what was on screen. `outcome`: how it ended, when a match says so. */
function openReplay(id, outcome = null) {
  history.pushState({ back: location.hash, outcome }, "", `${location.pathname}#/replay/${id}`);
  route();
}

/**
 * The face, F2 and "Play again": a reset keeps a game's owner, so a game made before this
 * browser had its player (anonymous) is followed by a new game of the player's instead.
 */
function again() {
  const c = screen.current;
  if (c && room.holds(c.id)) {
    // A match's board is never reset: once it is over, a game of one's own follows.
    if (!c.game.finished) return notices.toast("This board is a match's: it cannot be restarted.");
    room.close();
    return screen.start(settingsLike(prefs, c.game));
  }
  if (c && c.mode === "play" && !c.game.player && me.id) return screen.start(settingsLike(prefs, c.game));
  return screen.again();
}

// ---- daily boards ----------------------------------------------------------------------

// How many games a player's recent list holds: a full one may have let go of today's.
const RECENT_GAMES = 20;

/** Today's date where the daily boards are made: the service's UTC day. */
const today = () => new Date(clock.now()).toISOString().slice(0, 10);

/**
 * This browser's player's finished games of today's daily boards of one kind (no-guess or
 * classic), by preset: { expert: [{ id, won, elapsedMs, assisted }], ... }. From the
 * player's recent games, and today's leaderboards when those may have let go of some.
 */
async function dailyPlays(noGuess) {
  const p = await me.ready();
  if (!p) return {};
  const date = today();
  const found = new Map();
  const add = (preset, play) => {
    if (!found.has(preset)) found.set(preset, new Map());
    found.get(preset).set(play.id, play);
  };
  const view = await api.me(p.token);
  const recent = view.recent || [];
  for (const r of recent) {
    if (r.kind === "game" && r.preset && r.daily === date && Boolean(r.no_guess) === noGuess) {
      add(r.preset, { id: r.id, won: r.result === "won", elapsedMs: r.elapsed_ms, assisted: r.assisted });
    }
  }
  const oldest = recent[recent.length - 1];
  if (recent.length >= RECENT_GAMES && oldest && oldest.ended_at.slice(0, 10) >= date) {
    await Promise.all(Object.keys(PRESETS).map(async (preset) => {
      const { entries } = await api.leaderboard(preset, { noGuess, date, limit: 100 });
      for (const e of entries) {
        if (e.player_id === p.id) add(preset, { id: e.game_id, won: true, elapsedMs: e.elapsed_ms, assisted: false });
      }
    }));
  }
  return Object.fromEntries([...found].map(([preset, plays]) => [preset, [...plays.values()]]));
}

/**
 * Today's board of `preset`. One the player already played today opens with a notice
 * saying how that went and what another go does.
 */
async function startDaily(preset) {
  const settings = dailySettings(prefs, preset);
  const played = dailyPlays(settings.no_guess).catch(() => ({}));
  const shown = await focusBoardAfter(screen.start(settings), { from: $("daily-button") });
  const c = screen.current;
  if (!shown || !c || !c.game.daily || c.game.preset !== preset) return;
  const plays = ((await played)[preset] || []).filter((play) => play.id !== c.id);
  const note = playedNote(plays);
  if (note && c === screen.current && !c.game.finished) notices.toast(note, { about: c.id, timeout: 20000, key: "daily-played", untilEnd: true });
}

/** A player's profile; "Back" returns to what was on screen. */
function openProfile(id, { rename = false } = {}) {
  const hash = `#/player/${id}`;
  if (location.hash !== hash) history.pushState({ back: location.hash }, "", `${location.pathname}${hash}`);
  showView("profile");
  profile.open(id, { rename });
}

// A guest just registered: its name is said once a game of its own is on screen.
let greeting = false;

/** The player's name in the page header; the first visit also says it in a notice. */
function showPlayer(p, registered) {
  const button = $("player-button");
  $("player-label").textContent = p ? p.name : "Player";
  button.href = `#/player/${p ? p.id : "me"}`;
  button.title = p ? `Your profile: ${p.name}` : "Your profile";
  // Another name takes another width: the header, then the board under it, fit again.
  fitHeader();
  // The game's tag says the name as it is now.
  screen.renderTags();
  screen.fit();
  if (registered && p) {
    greeting = true;
    greet();
  } else {
    // A new name: a notice still on show would say the old one.
    notices.drop("player");
  }
}

/**
 * "You are playing as ...": said once, about a game the player plays (not one watched,
 * nor a match's board, whose seats name everybody), and gone when that game ends.
 */
function greet() {
  const c = screen.current;
  const p = me.player;
  if (!greeting || !p || !c || c.mode !== "play" || c.match || c.game.finished || pageView !== "game") return;
  greeting = false;
  notices.toast(`You are playing as ${p.name}.`, {
    action: { label: "Change name", run: () => openProfile(p.id, { rename: true }) },
    timeout: 10000,
    about: c.id,
    untilEnd: true,
    key: "player",
  });
}

/** Back from the replay or a profile to what was on screen before. */
function closeReplay() {
  if (history.state && typeof history.state.back === "string") {
    history.back(); // the hashchange routes back to the game
    return;
  }
  // Opened from a link: go to that game (played if this browser holds its token).
  const c = screen.current;
  const r = parseRoute();
  const id = c ? c.id : r.kind === "replay" ? r.id : null;
  const hash = c ? `#/${c.mode === "play" ? "game" : "watch"}/${c.id}` : id ? `#/game/${id}` : "";
  history.replaceState(null, "", location.pathname + hash);
  focusBoardAfter(route());
}

// ---- the header ------------------------------------------------------------------------

// Windows this narrow or less lay the header out in rows of their own (style.css).
const PHONE_WIDTH = 560;

/**
 * Keep the header on one line on a desktop, giving up no more than that takes:
 * `data-fit` on the top bar is "full" (every label, the whole name), "icons" (Play online
 * and Leaderboards as icons, named in their tooltips), "short" (a long name cut too, whole
 * in its tooltip) or "tight" (all that, closer together). A window too narrow even for
 * "tight" gets the fullest of them that takes the fewest lines; a phone's header has rows
 * of its own ("phone").
 */
function fitHeader() {
  const bar = document.querySelector(".topbar");
  if (!bar) return;
  if (document.documentElement.clientWidth <= PHONE_WIDTH) {
    bar.dataset.fit = "phone";
  } else {
    let best = null;
    for (const fit of ["full", "icons", "short", "tight"]) {
      bar.dataset.fit = fit;
      const lines = lineCount(bar);
      if (!best || lines < best.lines) best = { fit, lines };
      if (lines === 1) break;
    }
    bar.dataset.fit = best.fit;
  }
  // A button shown as its icon only still says its name to a pointer held over it.
  for (const button of bar.querySelectorAll(".top-button:has(.wide-only)")) {
    const name = button.querySelector(".wide-only").textContent.trim();
    const title = button.getAttribute("title") || "";
    if (!title.toLowerCase().startsWith(name.toLowerCase())) {
      button.title = title ? `${name}: ${title[0].toLowerCase()}${title.slice(1)}` : name;
    }
  }
}

/** On how many lines the header's items sit. */
function lineCount(bar) {
  const middles = [...bar.children]
    .flatMap((el) => (el.classList.contains("top-tools") ? [...el.children] : [el]))
    .filter((el) => el.offsetParent !== null)
    .map((el) => {
      const r = el.getBoundingClientRect();
      return r.top + r.height / 2;
    })
    .sort((a, b) => a - b);
  return middles.filter((m, i) => i === 0 || m - middles[i - 1] > 12).length;
}

// ---- controls and keys -----------------------------------------------------------------

function wire() {
  $("flag-mode-icon").innerHTML = flagIcon;
  $("share-icon").innerHTML = linkIcon;
  $("hint-icon").innerHTML = hintIcon;
  $("daily-icon").innerHTML = calendarIcon;
  $("leaders-icon").innerHTML = trophyIcon;
  $("player-icon").innerHTML = personIcon;
  showPlayer(me.player, false);
  document.body.dataset.view = pageView;

  $("face").addEventListener("click", () => again());
  $("watch-play").addEventListener("click", () => screen.startLevel());
  for (const b of document.querySelectorAll(".level")) {
    b.addEventListener("click", () => {
      const level = b.dataset.level;
      if (level !== "custom") {
        screen.chooseLevel(level);
        return;
      }
      const g = screen.current && !screen.current.game.preset ? screen.current.game : null;
      const shown = g ? { width: g.width, height: g.height, mines: g.mines, first_click: g.firstClick } : prefs.custom;
      custom.open(shown, { noGuess: prefs.noGuess });
    });
  }

  $("flag-mode").addEventListener("click", () => {
    prefs.flagMode = !prefs.flagMode;
    savePrefs(prefs);
    screen.render();
    notices.announce(prefs.flagMode ? "Flag mode on: taps and clicks plant flags." : "Flag mode off.");
  });
  $("opt-marks").addEventListener("change", (e) => {
    prefs.questionMarks = e.target.checked;
    savePrefs(prefs);
    screen.switched("questionMarks");
  });
  $("opt-noguess").addEventListener("change", (e) => {
    prefs.noGuess = e.target.checked;
    savePrefs(prefs);
    screen.switched("noGuess");
  });
  // The skip link goes to the board without going through the address: "#board" is no
  // route, and following it would leave the game.
  document.querySelector(".skip-link").addEventListener("click", (e) => {
    e.preventDefault();
    if (pageView !== "game") return;
    if (screen.current) board.focus();
    else $("board-area").scrollIntoView({ block: "nearest" });
  });
  $("share").addEventListener("click", () => screen.current && share.open(screen.current.id));
  $("leaders-button").addEventListener("click", () => leaderboards.open(screen.leaderboardChoice()));
  $("player-button").addEventListener("click", async (e) => {
    if (e.button !== 0 || e.ctrlKey || e.metaKey || e.shiftKey) return; // a new tab
    e.preventDefault();
    const p = await me.ready();
    if (p) openProfile(p.id);
    else notices.toast("Could not reach the server to make your player.", { kind: "error" });
  });
  // A new game chosen from the header while a replay or a profile is shown: show the game.
  document.querySelector(".topbar").addEventListener("click", (e) => {
    if (pageView !== "game" && e.target.closest(".level:not([data-level=custom]), [data-daily]")) {
      history.pushState(null, "", location.pathname);
      showView("game");
    }
  }, true);

  const modality = (kind) => () => {
    if (document.documentElement.dataset.input === kind) return;
    document.documentElement.dataset.input = kind;
    screen.renderIdle(); // the line under the controls names the keys while they drive
  };
  document.addEventListener("keydown", modality("keyboard"), true);
  document.addEventListener("pointerdown", modality("pointer"), true);

  document.addEventListener("keydown", (e) => {
    if (pageView === "replay") {
      // Keys with no focused control drive the replay too.
      if (e.target === document.body) viewer.onKey(e);
      return;
    }
    if (pageView === "profile") {
      if (e.key === "Escape" && !e.target.closest("input, dialog")) closeReplay();
      return;
    }
    if (e.defaultPrevented || e.altKey || e.ctrlKey || e.metaKey) return;
    const typing = e.target.closest && e.target.closest("input:not([type=checkbox]), select, textarea, dialog, .menu");
    if (typing) return;
    const key = e.key.length === 1 ? e.key.toLowerCase() : e.key;
    const c = screen.current;
    if (key === "F2") {
      e.preventDefault();
      again();
    } else if (key === "Escape" && screen.hints.shown) {
      e.preventDefault();
      screen.hints.dismiss();
    } else if ((key === "p" || key === "h") && !e.repeat && c && c.mode === "play") {
      e.preventDefault();
      // A match is played on equal terms, against its clock: a key that did nothing there
      // would leave the player wondering whether it was heard.
      if (c.match) notices.toast(`${key === "p" ? "Pause is" : "Hints are"} not available in a match.`);
      else if (key === "p") screen.pause.toggle();
      else screen.hints.ask();
    }
  });

  let resizeFrame = 0;
  window.addEventListener("resize", () => {
    cancelAnimationFrame(resizeFrame);
    resizeFrame = requestAnimationFrame(() => {
      fitHeader();
      if (pageView === "replay") viewer.fit();
      else screen.fit({ force: true });
    });
  });
  const wake = () => {
    screen.wake();
    room.wake();
  };
  window.addEventListener("online", wake);
  window.addEventListener("offline", () => {
    screen.offline();
    room.offline();
  });
  document.addEventListener("visibilitychange", wake);
  window.addEventListener("hashchange", () => route());
}

wire();
fitHeader();
// The header's words take their room once the page's font is in.
document.fonts?.ready.then(() => {
  fitHeader();
  screen.fit();
});
screen.render();
route();
me.ready(); // the first visit makes the guest player, even with no new game to make

