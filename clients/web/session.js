// One game's live session: the WebSocket to /games/{id}/events, and the page's copy of the
// game (a Game) kept in step through it. It owns what arrives and in which order: every
// diff is applied once and in version order; a version skipped (by a diff or a heartbeat)
// resumes the socket from the version held (?since=), and the service sends what was
// missed. Its socket comes back by itself (redial.js); the session tells the player how
// the connection stands. And it carries the player's moves: `auth` with the token on
// every connection, then `reveal` / `flag` / `chord` with an id, each answered by a
// `result` (the move's diff) or an `error` (the problem HTTP would give).
//
// No DOM here: the page hands over a way to open a socket and to read its messages, and
// reacts to what the session reports, so the session runs under node's test runner as it
// does in the page. Reading a big message may take a while (the page does it in a worker):
// what arrives meanwhile waits for it, so messages are handled in the order they came.

import { ApiError } from "./api.js";
import { readJson, Redial, SILENCE_MS } from "./redial.js";

// A move that finds no open socket waits this long for one, then is given up unplayed.
const QUEUED_MOVE_MS = 10_000;
// A network gone quiet closes no socket: a move sent and not answered in as long is taken
// to have found the socket dead, and the socket is dialled again. A board past this many
// cells moves in the service's worker threads, where a move may wait its turn for up to
// 30 s: its moves are given as long as the watchdog on silence allows.
const UNANSWERED_MS = 10_000;
const SLOW_BOARD_CELLS = 65_536;
const CLOSE_GONE = 4404;
const AUTH_ID = "auth";

/** Why a move came back without an answer; `code` as the problems the service sends. */
export const lost = {
  unsent: () => new ApiError(0, { code: "network", detail: "The server cannot be reached; that move was not played." }),
  dropped: () => new ApiError(0, {
    code: "disconnected",
    detail: "The connection dropped during that move; the board shows whether it was played.",
  }),
  unanswered: () => new ApiError(0, {
    code: "disconnected",
    detail: "No answer to that move: reconnecting. The board will show whether it was played.",
  }),
  stopped: () => new ApiError(0, { code: "stopped", detail: "This game is no longer on screen." }),
};

export class GameSession extends Redial {
  /**
   * `game`: the page's Game, loaded from a view; the session applies what arrives to it.
   * `url(since)`: the socket's address, resuming after version `since` (null: from a snapshot). `token`: to play (null to watch).
   * `connect(url)`: a WebSocket (the browser's by default). `decode(text)`: a message from
   *   its text, or a promise of one (null: unreadable). `clock`: samples server times.
   * `timers`: setTimeout / clearTimeout. Reports:
   *   onChange({ changed, diff, view, before }): the game changed (a diff or a view was
   *     applied); `changed` the cells' indices, `before` the game's phase() before it.
   *   onState(state): "connecting", "live", "reconnecting", "gone" or "idle".
   *   onHints(count): the player has used `count` hints (told by the feed);
   *   onReset(nextId): the game was reset; onGone(): it no longer exists;
   *   onRefused(error): the token was refused (the session goes on, watching).
   */
  constructor(game, {
    url, token = null, connect, decode = readJson, clock = null, timers, random,
    onChange = () => {}, onState = () => {}, onHints = () => {}, onReset = () => {}, onGone = () => {},
    onRefused = () => {},
  }) {
    super({ connect, timers, random });
    this.game = game;
    this.url = url;
    this.token = token;
    this.decode = decode;
    this.clock = clock;
    this.report = { onChange, onState, onHints, onReset, onGone, onRefused };
    this.state = "idle";
    // Messages of the current socket still being read, in the order they came.
    this.inbox = [];
    // Moves by id: sent ones wait for their answer, unsent ones for an open socket.
    this.requests = new Map();
    this.lastId = 0;
  }

  get playing() {
    return Boolean(this.token);
  }

  stop() {
    super.stop();
    this.failAll(lost.stopped);
    this.setState("idle");
  }

  // ---- moves ----------------------------------------------------------------------------

  /** Play `action` ("reveal", "flag", "chord") on (x, y): resolves to the move's diff. */
  move(action, x, y, mark = null) {
    if (this.stopped) return Promise.reject(lost.stopped());
    if (!this.token) return Promise.reject(new ApiError(401, { code: "unauthorized", detail: "Only the player moves." }));
    const id = ++this.lastId;
    const message = { type: action, x, y, id };
    if (mark) message.mark = mark;
    return new Promise((resolve, reject) => {
      const request = { message, resolve, reject, sent: false, timer: 0 };
      this.requests.set(id, request);
      if (this.open) this.send(request);
      else request.timer = this.timers.setTimeout(() => this.settle(id, lost.unsent()), QUEUED_MOVE_MS);
    });
  }

  /** A diff that came another way (the answer to a pause over HTTP): applied if it is next. */
  offer(diff) {
    if (this.game.place(diff.version) === "next") this.applyDiff(diff);
  }

  send(request) {
    this.timers.clearTimeout(request.timer);
    request.sent = true;
    this.ws.send(JSON.stringify(request.message));
    const wait = this.game.size > SLOW_BOARD_CELLS ? SILENCE_MS : UNANSWERED_MS;
    request.timer = this.timers.setTimeout(() => this.unanswered(), wait);
  }

  /** A move sent got no answer in time: the socket is taken for dead. */
  unanswered() {
    this.failAll(lost.unanswered, { sentOnly: true });
    this.lose();
  }

  settle(id, error, diff = null) {
    const request = this.requests.get(id);
    if (!request) return;
    this.requests.delete(id);
    this.timers.clearTimeout(request.timer);
    if (error) request.reject(error);
    else request.resolve(diff);
  }

  failAll(why, { sentOnly = false } = {}) {
    for (const [id, request] of [...this.requests]) {
      if (!sentOnly || request.sent) this.settle(id, why());
    }
  }

  // ---- the socket -----------------------------------------------------------------------

  setState(state) {
    if (state === this.state) return;
    this.state = state;
    this.report.onState(state);
  }

  address() {
    return this.url(this.game.resumeFrom);
  }

  dialing() {
    if (this.failures > 0) this.setState("reconnecting");
    else if (this.state === "idle") this.setState("connecting");
    this.inbox = [];
  }

  opened(ws) {
    // The service reads a socket's messages in order: the moves come after the token.
    if (this.token) ws.send(JSON.stringify({ type: "auth", token: this.token, id: AUTH_ID }));
    for (const request of this.requests.values()) if (!request.sent) this.send(request);
    this.setState("live");
  }

  heard(data, ws) {
    const message = this.decode(data);
    const inbox = this.inbox;
    if (inbox.length === 0 && !(message instanceof Promise)) {
      if (message) this.receive(message);
      return;
    }
    inbox.push(message);
    if (inbox.length === 1) this.drain(inbox, ws);
  }

  /** Read the messages waiting in `inbox`, the first furthest read, in the order they came. */
  async drain(inbox, ws) {
    while (inbox.length) {
      const message = await inbox[0];
      if (this.ws !== ws) return; // dropped meanwhile: the resumed feed brings it all again
      inbox.shift();
      if (message) this.receive(message);
    }
  }

  closed(event) {
    if (event.code !== CLOSE_GONE) return true;
    this.stopped = true;
    this.failAll(lost.stopped);
    this.setState("gone");
    this.report.onGone();
    return false;
  }

  /** Moves sent on the forgotten socket will get no answer. */
  dropped() {
    this.failAll(lost.dropped, { sentOnly: true });
  }

  retrying() {
    this.setState("reconnecting");
  }

  // ---- what arrives ---------------------------------------------------------------------

  receive(message) {
    switch (message.type) {
      case "snapshot":
        this.clock?.sampleText(message.game.server_time);
        this.offerView(message.game);
        break;
      case "diff":
        this.clock?.sampleText(message.move && message.move.at);
        this.takeDiff(message);
        break;
      case "heartbeat":
        this.clock?.sampleText(message.server_time);
        if (this.game.place(message.version) !== "old") this.resync();
        break;
      case "reset":
        this.report.onReset(message.next_id);
        break;
      case "hinted":
        // Not a change of the game's version: the count only ever grows.
        if (this.game.noteHints(message.hints)) this.report.onHints(message.hints);
        break;
      case "result":
        this.clock?.sampleText(message.diff.move && message.diff.move.at);
        // The feed brings the same diff in its place; a result ahead of it waits for it there.
        this.offer(message.diff);
        this.settle(message.id, null, message.diff);
        break;
      case "error":
        this.refused(message);
        break;
      default:
        break; // a kind of message newer than this page
    }
  }

  takeDiff(diff) {
    const place = this.game.place(diff.version);
    if (place === "next") this.applyDiff(diff);
    else if (place === "ahead") this.resync(); // versions were missed: the service resends them
  }

  applyDiff(diff) {
    const before = this.game.phase();
    const changed = this.game.apply(diff);
    this.report.onChange({ changed, diff, view: null, before });
  }

  /** A view of the game (a snapshot, or one fetched over HTTP): taken unless it is older. */
  offerView(view) {
    const before = this.game.phase();
    const changed = this.game.take(view);
    if (changed) this.report.onChange({ changed, diff: null, view, before });
  }

  refused({ id, problem }) {
    const error = new ApiError(problem?.status ?? 0, problem);
    if (id === AUTH_ID && (error.status === 401 || error.status === 403)) {
      // The token is not (or no longer) good: the moves waiting fail with it, and the
      // session goes on as a spectator's.
      this.token = null;
      this.failAll(() => error);
      this.report.onRefused(error);
    } else if (id === AUTH_ID) {
      // Not heard (the service was busy, or the address over its limit): the moves sent
      // after it are refused for want of a token, so the socket is dropped before they are.
      this.drop();
      this.retry();
    } else if (id != null) {
      this.settle(id, error);
    }
    // An error without an id is about the socket, and its close follows.
  }
}
