// What the page reads from a match view (DESIGN section 9), with no DOM: the seats as
// rows to show, this browser's seat, the countdown, the penalties that just happened,
// the result table, and the cell under a pointer. Also the match's live feed: the socket
// to /matches/{id}/events, kept in version order and resumed with ?since= like a game's;
// and the player's own socket, which tells when a seek is paired. The page's parts
// (room.js, coop.js, online.js) draw what these answer; the service decides everything
// (places, times, ratings): nothing here re-implements a rule.

import { readJson, Redial } from "./redial.js";

export const MATCH_ID = /^[0-9a-f]{32}$/;
export const PENALTY_S = 5;

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

/** The result table: by place (the service's), then seat order; replay links once public. */
export function resultRows(view, playerId) {
  const rows = view.seats.map((s, i) => ({
    index: i,
    place: s.place,
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
