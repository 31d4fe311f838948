// What the page reads from a match view (DESIGN section 9), with no DOM: the seats as
// rows to show, this browser's seat, the countdown, the penalties that just happened,
// the result table, and the cell under a pointer. Also the match's live feed: the socket
// to /matches/{id}/events, kept in version order and resumed with ?since= like a game's;
// and the player's own socket, which tells when a seek is paired. The page's parts
// (room.js, coop.js, online.js) draw what these answer; the service decides everything
// (places, times, ratings): nothing here re-implements a rule.

import { formatTime } from "./format.js";
import { changedCells } from "./diffs.js";
import { EXPLODED } from "./game.js";
import { readJson, Redial } from "./redial.js";

export const MATCH_ID = /^[0-9a-f]{32}$/;
export const PENALTY_S = 5;
// Seconds before a match's time limit when the page warns that time is running out.
export const WARN_S = 10;

const plural = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;

/** The share link of match `id`: opening it shows the room, where a seat can be taken. */
export function matchUrl(id, where = globalThis.location) {
  return `${where.origin}${where.pathname}#/match/${id}`;
}

/** The seat index of player `playerId` in `view`, or -1. */
export function seatOf(view, playerId) {
  if (!view || !playerId) return -1;
  return view.seats.findIndex((s) => s.player.id === playerId);
}

/** The creator takes seat 0; only they start the match, once two seats are taken. */
export function canStart(view, playerId) {
  return view.status === "waiting" && seatOf(view, playerId) === 0 && view.seats.length >= 2;
}

/** Whether `playerId` may ask for a seat now (the service says whether one is free). */
export function canJoin(view, playerId) {
  return view.status === "waiting" && seatOf(view, playerId) < 0;
}

/**
 * What a finished match offers this browser after its result: "ask" (a seated player, and
 * nobody has asked for a rematch yet), "join" (somebody has: take a seat in it), "go" (the
 * player is seated in it already: `rematch` is its view, when the page has it), "watch"
 * (no seat here, or the rematch went on without this player: `shut`), or null (nothing:
 * the match is not over, or nobody plays it again). `id` is the rematch's, once there is one.
 */
export function rematchOffer(view, playerId, { rematch = null, shut = false } = {}) {
  if (!view || view.status !== "finished") return { action: null, id: null };
  const id = view.rematch_id || null;
  const seated = seatOf(view, playerId) >= 0;
  if (!id) return { action: seated ? "ask" : null, id };
  if (!seated || shut) return { action: "watch", id };
  if (rematch && rematch.id === id && seatOf(rematch, playerId) >= 0) return { action: "go", id };
  return { action: "join", id };
}

/**
 * Who asked for the rematch: the update's `seat` (an index into the finished match's seats)
 * when the page heard it; otherwise the rematch's first seat, which the first to ask took.
 * Answers { name, you } or null when neither is known.
 */
export function rematchAsker(view, playerId, { seat = null, rematch = null } = {}) {
  const s = (seat != null && view?.seats[seat]) || (rematch && rematch.id === view?.rematch_id && rematch.seats[0]) || null;
  return s ? { name: s.player.name, you: s.player.id === playerId } : null;
}

/** The words for who asked: "ada wants a rematch." */
export function rematchNote(asker) {
  if (!asker) return "A rematch has been asked for.";
  return asker.you ? "You asked for a rematch." : `${asker.name} wants a rematch.`;
}

/**
 * Whether `playerId` still plays in match `view`: seated, the match counting down or
 * played, and the seat neither finished nor resigned. Another game started then leaves
 * the race going on without them (it is asked first): nothing resigns by itself.
 */
export function stillRacing(view, playerId) {
  const i = seatOf(view, playerId);
  if (i < 0 || !view || !["countdown", "playing"].includes(view.status)) return false;
  return ["waiting", "playing"].includes(view.seats[i].status);
}

/** What the page asks before another game takes a running match's seat off the screen. */
export function awayWords(view) {
  const race = view.mode === "race";
  return {
    title: race ? "Leave the race for a new game?" : "Leave the match for a new game?",
    text: race
      ? `Your race goes on without you: its clock keeps running${view.rated ? " and it still counts for your rating" : ""}. You can come back to it until it ends.`
      : "The team plays on without you. You can come back to the match until it ends.",
  };
}

/** A player sits in one match at a time: the one they are in, to go back to or leave. */
export function playingElsewhere(err) {
  const id = err?.problem?.match_id;
  // The match's id means nothing to a person: the "Go back to it" button beside the
  // words leads there.
  return id
    ? "You are already in another match: go back to it, or leave it first."
    : `You are already in a match: ${err?.message || "finish or leave it first"}`;
}

/** What the page says when the service refuses a rematch (asked for or joined). */
export function rematchRefusal(err) {
  switch (err?.code) {
    case "match_started":
      return "The rematch has started without you; you can watch it.";
    case "match_full":
      return "Every seat of the rematch is taken; you can watch it.";
    case "forbidden":
      return "Only the players of this match may play its rematch.";
    case "not_seated":
      return "Only the players of this match may ask for a rematch.";
    case "game_in_progress":
      return "The match is not over yet: a rematch can be asked for once it is.";
    case "not_found":
      return "The match is gone (matches are kept for a while after they end).";
    case "already_playing":
      return playingElsewhere(err);
    case "network":
      return "Could not ask for a rematch: the server cannot be reached.";
    default:
      return `Could not ask for a rematch: ${err?.message || "unknown error"}`;
  }
}

/** Whether a refusal means the rematch went on without the player: it can be watched. */
export function rematchShut(err) {
  return err?.code === "match_started" || err?.code === "match_full";
}

/** A rating as shown: rounded, or "new" for a player without one yet ("unrated" is what
 * a match that changes no rating is called). */
export function ratingText(rating) {
  return rating == null ? "new" : String(Math.round(rating));
}

/** A rating change as shown: "+12", "−3", "±0", or "" when there is none. */
export function ratingChange(before, after) {
  if (before == null || after == null) return "";
  const d = Math.round(after) - Math.round(before);
  return d > 0 ? `+${d}` : d < 0 ? `−${-d}` : "±0";
}

/** A place in words: "1st", "2nd", "3rd", "4th", "11th", "22nd". */
export function placeWords(place) {
  const tens = place % 100;
  const suffix = tens >= 11 && tens <= 13 ? "th" : { 1: "st", 2: "nd", 3: "rd" }[place % 10] || "th";
  return `${place}${suffix}`;
}

/** A time limit in words: "10 min", "45 s", "1 min 30 s". */
export function limitWords(seconds) {
  const m = Math.floor(seconds / 60);
  const s = seconds % 60;
  if (!m) return `${s} s`;
  return s ? `${m} min ${s} s` : `${m} min`;
}

/** The time left on a match's clock, in whole seconds rounded up: "9:58", "0:07". */
export function clockWords(ms) {
  const total = Math.max(0, Math.ceil(ms / 1000));
  return `${Math.floor(total / 60)}:${String(total % 60).padStart(2, "0")}`;
}

/** Milliseconds left before `endsAt` (server ms) at server time `now`, at least 0 (null: no end). */
export function msLeft(endsAt, now) {
  if (endsAt == null || Number.isNaN(endsAt)) return null;
  return Math.max(0, endsAt - now);
}

/**
 * A seat's time, saying what its penalties added: "24.149 s" without any, else
 * "24.149 s + 5 s penalty = 29.149 s". `totalMs` is the service's time_ms (with penalties).
 */
export function penaltyTime(totalMs, penalties) {
  if (!penalties) return formatTime(totalMs);
  const added = penalties * PENALTY_S;
  return `${formatTime(totalMs - added * 1000)} + ${added} s ${penalties === 1 ? "penalty" : "penalties"} = ${formatTime(totalMs)}`;
}

/** How many are seated: "1 of 3 seats taken", or "2 players seated" when the number of seats is not known. */
export function seatsWords(taken, capacity = null) {
  if (capacity && capacity >= taken) return `${taken} of ${capacity} seats taken`;
  return `${plural(taken, "player")} seated`;
}

/**
 * A seat's progress in words, "3 of 18 3BV": the match's own count, which its rows show
 * during play and which ranks the seats that did not clear (the start's opening, the same
 * for every seat, included). Every count of a match's 3BV on the page says it this way.
 */
export function bbbvWords(progress) {
  return `${progress.bbbv_done} of ${progress.bbbv} 3BV`;
}

/** What "3BV" means, said once where a match's result first counts it. */
export const BBBV_NOTE = "3BV: the fewest clicks that clear the board. The counts include the start's opening.";

/** Whether a match's result counts any seat's 3BV (a seat that did not clear). */
export function countsBbbv(view) {
  if (view.mode === "coop") return !view.seats.some((s) => s.status === "won");
  return view.seats.some((s) => s.status === "lost" || s.status === "resigned");
}

/**
 * How a seat ended, as its result row says it: "24.149 s + 5 s penalty = 29.149 s" for a
 * cleared board, "Out of time: 30 of 45 3BV" for a seat still playing when the time ran
 * out (its 3BV decided its place), "Hit a mine", "Resigned", or "Playing".
 */
export function seatOutcome(seat) {
  const done = bbbvWords(seat.progress);
  switch (seat.status) {
    case "won":
      return seat.time_ms != null ? penaltyTime(seat.time_ms, seat.penalties) : "Cleared";
    case "lost":
      // A seat lost only on a mine (under on_mine "lose") or by the match's end: the
      // first has the time of its loss, the other none.
      return seat.time_ms != null ? `Hit a mine: ${done}` : `Out of time: ${done}`;
    case "resigned":
      return `Resigned: ${done}`;
    case "waiting":
      return "Waiting";
    default:
      return "Playing";
  }
}

/**
 * What the panel under a match's board says once its game is over (`game`: the page's
 * Game, or what it knows of it: id, status, elapsedMs, endedByMatch), for `playerId`:
 * { won, title, sub, time, timeTerm }, or null when the game is none of the match's:
 * `time` is the seat's time with its penalties (the one that ranks it), so named in `timeTerm`.
 * The service's words decide: the seat's status, time with penalties and place. None of it
 * is spoken: the room's status says how the race goes and ends (overWords), once.
 */
export function endWords(view, playerId, game) {
  if (!view || !game) return null;
  const coop = view.mode === "coop";
  const i = view.seats.findIndex((s) => s.game_id === game.id);
  if (i < 0) return null;
  const mine = seatOf(view, playerId);
  const seat = coop && mine >= 0 ? view.seats[mine] : view.seats[i];
  const you = coop ? mine >= 0 : seat.player.id === playerId;
  const over = view.status === "finished";
  const board = view.preset ? `the ${view.preset} board` : `the ${view.width} × ${view.height} board`;
  const penalties = seat.penalties || 0;
  const totalMs = seat.time_ms != null ? seat.time_ms : game.elapsedMs + penalties * PENALTY_S * 1000;
  const time = penaltyTime(totalMs, penalties);
  const stat = { time: formatTime(totalMs), timeTerm: penalties ? "Time with penalties" : "Time" };
  // The match's count, as its seats' rows, its result table and its status say it (the
  // start's opening included, as it ranks the seats): one count of a seat's 3BV on the
  // page. The stats under it leave the start out, and their note says so (result.js).
  const done = bbbvWords(seat.progress);
  const place = over && seat.place != null ? `${placeWords(seat.place)} place` : "";
  const tied = over && seat.place != null && view.seats.filter((s) => s.place === seat.place).length > 1;
  const words = (won, title, sub) => ({ won, title, sub, ...stat });
  if (coop) {
    const team = you ? "Together you" : "The team";
    if (game.status === "won") {
      return words(true, you ? "Cleared together!" : "The team won!", `${team} cleared ${board} in ${time}.`);
    }
    if (!game.endedByMatch) return words(false, you ? "Boom! The team hit a mine." : "The team hit a mine.", `Game over after ${time}.`);
    if (view.seats.every((s) => s.status === "resigned")) {
      return words(false, "The match is over.", `Everybody resigned with ${done} done.`);
    }
    return words(false, "Out of time", `${team} did ${done} of ${board} before the time ran out.`);
  }
  const who = seat.player.name;
  if (game.status === "won") {
    if (!place) {
      const whom = waitingFor(view, i);
      const waiting = whom ? ` Waiting for ${whom} to finish.` : "";
      return words(true, you ? "Cleared!" : `${who} cleared the board`, `Cleared ${board} in ${time}.${waiting}`);
    }
    if (seat.place === 1 && !tied) return words(true, you ? "You won!" : `${who} won!`, `Cleared ${board} in ${time}: 1st place.`);
    const title = `${you ? "" : `${who}: `}Cleared, ${tied ? `tied for ${placeWords(seat.place)}` : place}`;
    return words(true, title, `Cleared ${board} in ${time}.`);
  }
  const after = place ? `: ${tied ? `tied for ${placeWords(seat.place)}` : place}` : "";
  if (seat.status === "resigned") {
    if (over && allResigned(view)) return words(false, you ? "You resigned" : `${who} resigned`, `Everybody resigned with ${done} done, so nobody won.`);
    return words(false, you ? "You resigned" : `${who} resigned`, `Resigned with ${done} done${after}.`);
  }
  if (game.endedByMatch) {
    return words(false, `Out of time${after ? `, ${after.slice(2)}` : ""}`, `${done} done when the time ran out${penalties ? `, ${plural(penalties, "mine")} hit` : ""}.`);
  }
  const title = you ? "Boom! You hit a mine." : `${who} hit a mine.`;
  const ranked = place ? `, ${progressPlace(view, seat)}` : ` with ${done}`;
  return words(false, title, over ? `Game over after ${formatTime(game.elapsedMs)}${ranked}.`
    : `Game over after ${formatTime(game.elapsedMs)}.${waitingFor(view, i) ? ` Waiting for ${waitingFor(view, i)} to finish.` : ""}`);
}

/**
 * How a finished match's seat ended, for its replay's title: "Ann won", "Bob cleared
 * the board, 2nd place", "Cy ran out of time, 1st place", "Di resigned"; co-op: the team's.
 */
export function replayOutcome(view, seat) {
  if (view.mode === "coop") {
    return view.seats.some((s) => s.status === "won") ? "the team cleared the board" : "the team did not clear the board";
  }
  const who = seat.player.name;
  const tied = seat.place != null && view.seats.filter((s) => s.place === seat.place).length > 1;
  const place = seat.place == null ? "" : `, ${tied ? "tied for " : ""}${placeWords(seat.place)} place`;
  switch (seat.status) {
    case "won":
      return seat.place === 1 && !tied ? `${who} won` : `${who} cleared the board${place}`;
    case "resigned":
      return `${who} resigned`;
    case "lost":
      return seat.time_ms != null ? `${who} hit a mine${place}` : `${who} ran out of time${place}`;
    default:
      return `${who} played`;
  }
}

/** Whether a seat other than seat `i` still plays: the last one to finish waits for nobody. */
export function othersPlaying(view, i) {
  return waitingFor(view, i) != null;
}

/**
 * Whom seat `i` waits for: the one other seat still playing, by name ("the other player"
 * without one), "the others" for two or more, or null when nobody plays on.
 */
export function waitingFor(view, i) {
  const on = view.seats.filter((s, j) => j !== i && (s.status === "playing" || s.status === "waiting"));
  if (on.length === 0) return null;
  return on.length === 1 ? on[0].player?.name || "the other player" : "the others";
}

/** What the room's status says during play, to `playerId` (seated or not). */
export function playingWords(view, playerId) {
  const coop = view.mode === "coop";
  const i = seatOf(view, playerId);
  if (i < 0) return coop ? "The team is playing; you are watching." : "The race is on; the boards are shown at the end.";
  const seat = view.seats[i];
  const waiting = waitingFor(view, i);
  switch (seat.status) {
    case "won": {
      const cleared = seat.time_ms != null ? `Cleared in ${penaltyTime(seat.time_ms, seat.penalties)}` : "Cleared";
      return waiting ? `${cleared}, waiting for ${waiting}.` : `${cleared}.`;
    }
    case "lost":
      return `You hit a mine: your race is over.${waiting ? ` Waiting for ${waiting}.` : ""}`;
    case "resigned":
      return coop
        ? "You resigned: the team plays on without you."
        : "You resigned. The others play on; the result shows when the match ends.";
    default:
      if (coop) return "Playing together: every move counts for the team.";
      // Once a rival has cleared, first place is gone: the words must not promise it.
      return view.seats.some((s, j) => j !== i && s.status === "won")
        ? "Play on: clear your board for the best place left."
        : "Go! Clear your board first.";
  }
}

/**
 * What changed for the other seats between `prev` and `next`, in words for the room's
 * status: "Ann cleared the board.", "Bob hit a mine and is out.", "Cy resigned."; "" when
 * nothing did. Progress counts are not news (the rows show them); nor is a seat's end
 * that ends the match, which the match's end says.
 */
export function rivalNews(prev, next, playerId) {
  if (!prev || !next || prev.id !== next.id || next.status === "finished") return "";
  const words = [];
  for (const s of next.seats) {
    if (s.player.id === playerId) continue;
    const was = prev.seats.find((p) => p.player.id === s.player.id);
    if (!was || was.status === s.status) continue;
    const who = s.player.name;
    if (s.status === "won") words.push(`${who} cleared the board.`);
    else if (s.status === "lost") words.push(`${who} hit a mine and is out.`);
    else if (s.status === "resigned") words.push(`${who} resigned.`);
  }
  return words.join(" ");
}

/**
 * What the room's status says once the match is over, to `playerId` (seated or not): how
 * this player's race ended, with its place and time, and who won, in one sentence or two.
 * It is the one thing spoken at the end (the status is a live region), so it says it all:
 * "The match is over: you cleared the board in 12.117 s, 2nd place. Ann won."
 */
export function overWords(view, playerId) {
  if (neverPlayed(view)) return "Nobody started this match in time: it is over, and its seats are free.";
  const i = seatOf(view, playerId);
  const outcome = view.mode === "coop" ? teamOutcome(view, i >= 0) : i >= 0 ? seatEnd(view, view.seats[i]) : "";
  const winner = view.mode === "race" ? winnerWords(view, i) : "";
  return `The match is over${outcome ? `: ${outcome}` : ""}.${winner ? ` ${winner}` : ""}`;
}

/** An ended match whose seats all still wait: it lapsed before anybody started it. */
export function neverPlayed(view) {
  return view.status === "finished" && view.seats.every((s) => s.status === "waiting");
}

/** How a race's seat ended, as said to its player: "you won the race in 12.117 s". */
function seatEnd(view, seat) {
  const tied = seat.place != null && view.seats.filter((s) => s.place === seat.place).length > 1;
  const place = seat.place == null ? "" : `, ${tied ? "tied for " : ""}${placeWords(seat.place)} place`;
  const done = bbbvWords(seat.progress);
  const time = seat.time_ms != null ? penaltyTime(seat.time_ms, seat.penalties) : null;
  switch (seat.status) {
    case "won":
      if (seat.place === 1 && !tied) return `you won the race${time ? ` in ${time}` : ""}`;
      return `you cleared the board${time ? ` in ${time}` : ""}${place}`;
    case "resigned":
      return allResigned(view) ? "everybody resigned, so nobody won" : `you resigned${place}`;
    case "lost":
      // A seat out on a mine may still place well, on its 3BV: it is told why.
      if (seat.time_ms != null) return `you hit a mine${seat.place == null ? "" : `, ${progressPlace(view, seat)}`}`;
      return `out of time with ${done}${place}`;
    default:
      return "";
  }
}

/** Whether every seat resigned: nobody finished, whatever places the service gave. */
function allResigned(view) {
  return view.seats.every((s) => s.status === "resigned");
}

/**
 * A place won on 3BV by a seat that did not clear, and against what: "1st on progress:
 * 3 of 18 3BV against 2".
 */
function progressPlace(view, seat) {
  const tied = view.seats.filter((s) => s.place === seat.place).length > 1;
  const others = view.seats.filter((s) => s !== seat && s.status !== "won" && s.status !== "resigned").map((s) => s.progress.bbbv_done);
  const against = others.length ? ` against ${others.join(", ")}` : "";
  return `${tied ? "tied for " : ""}${placeWords(seat.place)} on progress: ${bbbvWords(seat.progress)}${against}`;
}

/** The team's end in co-op: "together you cleared the board in 40.530 s". */
function teamOutcome(view, seated) {
  const first = view.seats[0];
  const team = seated ? "together you" : "the team";
  if (view.seats.some((s) => s.status === "won")) return `${team} cleared the board in ${penaltyTime(first.time_ms, first.penalties)}`;
  if (view.seats.every((s) => s.status === "resigned")) return "everybody resigned";
  const mine = view.seats.some((s) => s.status === "lost" && s.time_ms != null);
  return mine ? "the team hit a mine" : `out of time, with ${bbbvWords(first.progress)} done`;
}

/** Who won a race, when it is somebody else than seat `i` and nobody tied with them. */
function winnerWords(view, i) {
  const firsts = view.seats.filter((s) => s.place === 1);
  if (firsts.length !== 1 || firsts[0] === view.seats[i] || firsts[0].status === "resigned") return "";
  return `${firsts[0].player.name} won.`;
}

/** How far a seat got, 0..1. */
export function progressShare(progress) {
  if (!progress || !progress.bbbv) return 0;
  return Math.max(0, Math.min(1, progress.bbbv_done / progress.bbbv));
}

/** The seats as rows, the viewer's marked `you`. */
export function seatRows(view, playerId) {
  return view.seats.map((s, i) => ({
    index: i,
    id: s.player.id,
    name: s.player.name,
    rating: ratingText(s.player.rating),
    you: s.player.id === playerId,
    status: s.status,
    done: s.progress.bbbv_done,
    total: s.progress.bbbv,
    share: progressShare(s.progress),
    penalties: s.penalties,
  }));
}

/**
 * The result table: by place (the service's), then seat order; replay links once public.
 * A race every seat resigned has no winner, and so no places: the service ranks resigned
 * seats last, which makes each of them share the first place when they are all there is.
 */
export function resultRows(view, playerId) {
  const placed = !allResigned(view);
  const rows = view.seats.map((s, i) => ({
    index: i,
    place: placed ? s.place : null,
    name: s.player.name,
    you: s.player.id === playerId,
    status: s.status,
    timeMs: s.time_ms,
    penalties: s.penalties,
    before: s.rating_before,
    after: s.rating_after,
    change: ratingChange(s.rating_before, s.rating_after),
    gameId: s.game_id,
  }));
  const key = (r) => (r.place == null ? Infinity : r.place);
  return rows.sort((a, b) => key(a) - key(b) || a.index - b.index);
}

const EXPLODED_CODE = EXPLODED.charCodeAt(0);

/** How many mines a move's diff shows opened (a chord may open more than one). */
export function minesIn(diff) {
  return changedCells(diff).code.reduce((n, c) => n + (c === EXPLODED_CODE ? 1 : 0), 0);
}

/**
 * Co-op: the mines this player opened that the team's count (`counted`, the penalties the
 * match has said so far) has not taken in yet, once their move `diff` is on `game`'s
 * board: the `kept` ones and the move's, but never more than the board shows beyond that
 * count. An update that came before the move's diff counted its mine, and said it.
 */
export function untoldMines(kept, diff, game, counted) {
  const opened = minesIn(diff);
  if (!opened) return kept;
  const shown = game.cells.reduce((n, c) => n + (c === EXPLODED_CODE ? 1 : 0), 0);
  return Math.max(0, Math.min(kept + opened, shown - counted));
}

/** The penalties that `next` shows and `prev` did not: [{ name, you, count, total }]. */
export function newPenalties(prev, next, playerId) {
  if (!prev || !next) return [];
  const out = [];
  for (const s of next.seats) {
    const was = prev.seats.find((p) => p.player.id === s.player.id);
    const count = s.penalties - (was ? was.penalties : 0);
    if (count > 0) out.push({ name: s.player.name, you: s.player.id === playerId, count, total: s.penalties });
  }
  return out;
}

/** Whole seconds left before `startsAt` (server ms) at server time `now`, at least 0. */
export function secondsLeft(startsAt, now) {
  if (startsAt == null) return 0;
  return Math.max(0, Math.ceil((startsAt - now) / 1000));
}

/**
 * What the page shows of a match for this browser: "waiting" (the room), "countdown",
 * "playing" or "finished"; and the game to put on the board, with whether to play it.
 */
export function stage(view, playerId) {
  const i = seatOf(view, playerId);
  const seat = i >= 0 ? view.seats[i] : null;
  const gameId = seat ? seat.game_id : view.mode === "coop" ? view.seats.find((s) => s.game_id)?.game_id ?? null : null;
  return { status: view.status, seat: i, gameId: gameId || null, play: Boolean(seat && gameId) };
}

/** The cell under client point (x, y) of a board drawn in `rect` with w×h cells, or null. */
export function cellAt(rect, width, height, x, y) {
  if (!rect.width || !rect.height) return null;
  const cx = Math.floor(((x - rect.left) / rect.width) * width);
  const cy = Math.floor(((y - rect.top) / rect.height) * height);
  return cx >= 0 && cy >= 0 && cx < width && cy < height ? { x: cx, y: cy } : null;
}

/**
 * Calls `send(value)` at most once per `interval` ms with the latest value offered; a
 * value offered meanwhile goes when the interval is over, and an unchanged one not at all.
 */
export class Throttle {
  constructor(send, interval, { timers = globalThis, same = (a, b) => JSON.stringify(a) === JSON.stringify(b) } = {}) {
    Object.assign(this, { send, interval, timers, same });
    this.last = undefined;
    this.pending = undefined;
    this.timer = 0;
  }

  offer(value) {
    this.pending = value;
    if (!this.timer) this.flush();
  }

  flush() {
    this.timer = 0;
    const value = this.pending;
    this.pending = undefined;
    if (value === undefined || this.same(value, this.last)) return;
    this.last = value;
    this.send(value);
    this.timer = this.timers.setTimeout(() => this.flush(), this.interval);
  }

  stop() {
    this.timers.clearTimeout(this.timer);
    this.timer = 0;
    this.pending = undefined;
  }
}

/**
 * A match's live feed. `url(since)`: the socket's address; `token`: a function giving the
 * player's token (sent as `auth`, so a seated player sees their own seat's game).
 * Reports onView(view, { change, seat, before }) for the first view and every update in
 * version order, onCursor({ by, x, y }) for a teammate's pointer, onState(state).
 */
export class MatchFeed extends Redial {
  constructor({
    url, token = () => null, connect, clock = null, timers, random, onView = () => {}, onCursor = () => {}, onState = () => {},
  }) {
    super({ connect, timers, random });
    Object.assign(this, { url, token, clock });
    this.report = { onView, onCursor, onState };
    this.view = null;
  }

  get version() {
    return this.view ? this.view.version : null;
  }

  /** Say who this is again (after taking a seat): the service answers with the match. */
  async reauth() {
    const token = await this.token();
    if (token && this.open) this.ws.send(JSON.stringify({ type: "auth", token }));
  }

  /** Send a co-op pointer; dropped while the socket is down (the next one follows soon). */
  cursor(x, y) {
    if (this.open) this.ws.send(JSON.stringify({ type: "cursor", x, y }));
  }

  address() {
    return this.url(this.version);
  }

  dialing() {
    this.report.onState(this.failures ? "reconnecting" : "connecting");
  }

  async opened(ws) {
    this.report.onState("live");
    const token = await this.token();
    if (token && this.ws === ws) ws.send(JSON.stringify({ type: "auth", token }));
  }

  heard(data) {
    const message = readJson(data);
    if (message) this.receive(message);
  }

  retrying() {
    this.report.onState("reconnecting");
  }

  receive(message) {
    switch (message.type) {
      case "match":
        this.take(message.match, { change: null, seat: null });
        break;
      case "match_update": {
        const held = this.version;
        if (held != null && message.version <= held) break;
        if (held != null && message.version > held + 1) {
          this.resync(); // versions were missed: the service resends them after `since`
          break;
        }
        this.take(message.match, { change: message.change, seat: message.seat });
        break;
      }
      case "heartbeat":
        this.clock?.sampleText(message.server_time);
        if (this.version != null && message.version > this.version) this.resync();
        break;
      case "cursor":
        this.report.onCursor({ by: message.by, x: message.x, y: message.y });
        break;
      default:
        break; // an error (its close follows) or a message newer than this page
    }
  }

  take(view, { change, seat }) {
    // A snapshot after an auth repeats the version held, with the viewer's own seat's game.
    if (this.view && view.version < this.view.version) return;
    this.clock?.sampleText(view.server_time);
    const before = this.view;
    this.view = view;
    this.report.onView(view, { change, seat, before });
  }
}

/**
 * The player's own socket (/players/me/events) while a seek waits: `token()` gives the
 * player's token, sent as `auth`; onMatched(matchId) when the service pairs a seek of
 * theirs. While it is open the seek does not expire. A refused token ends it.
 */
export class PlayerFeed extends Redial {
  constructor({ url, token, connect, timers, random, onMatched = () => {} }) {
    super({ connect, timers, random });
    Object.assign(this, { url, token });
    this.report = { onMatched };
  }

  address() {
    return this.url();
  }

  async opened(ws) {
    const token = await this.token();
    if (token && this.ws === ws) ws.send(JSON.stringify({ type: "auth", token }));
  }

  heard(data) {
    const message = readJson(data);
    if (message?.type === "matched") this.report.onMatched(message.match_id);
    else if (message?.type === "error" && [401, 403].includes(message.problem?.status)) this.stop();
  }
}
