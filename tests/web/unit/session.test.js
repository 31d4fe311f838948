// A game's live session: order, gaps, resuming, and moves over the socket.

import assert from "node:assert/strict";
import { beforeEach, describe, it } from "node:test";

import { Game } from "../../../clients/web/game.js";
import { retryDelay } from "../../../clients/web/redial.js";
import { GameSession } from "../../../clients/web/session.js";
import { diff, FakeSocket, ManualTimers, view } from "./fakes.js";

/** A session on a 3x3 game at `version`, with its sockets, timers and reports kept. */
function setUp({ version = 0, token = null, board, decode = undefined } = {}) {
  const game = new Game(view({ version, status: version ? "playing" : "ready", board }));
  const sockets = [];
  const timers = new ManualTimers();
  const seen = { changes: [], states: [], resets: [], gone: 0, refused: [], hints: [] };
  const session = new GameSession(game, {
    url: (since) => `ws://test/games/${game.id}/events?since=${since}`,
    token,
    connect: (url) => {
      const ws = new FakeSocket(url);
      sockets.push(ws);
      return ws;
    },
    timers,
    decode,
    random: () => 0.5,
    onChange: (change) => seen.changes.push(change),
    onHints: (count) => seen.hints.push(count),
    onState: (state) => seen.states.push(state),
    onReset: (id) => seen.resets.push(id),
    onGone: () => (seen.gone += 1),
    onRefused: (err) => seen.refused.push(err),
  });
  const socket = () => sockets[sockets.length - 1];
  return { game, session, sockets, socket, timers, seen };
}

/** Let promise callbacks run. */
const settled = () => new Promise((resolve) => setImmediate(resolve));

describe("GameSession: what arrives", () => {
  let s;
  beforeEach(() => {
    s = setUp({ version: 1, board: ["1##", "###", "###"] });
    s.session.start();
    s.socket().accept();
  });

  it("subscribes from the version held and says when it is live", () => {
    assert.equal(s.sockets.length, 1);
    assert.match(s.socket().url, /since=1$/);
    assert.deepEqual(s.seen.states, ["connecting", "live"]);
    assert.deepEqual(s.socket().sent, [], "a spectator sends nothing");
  });

  it("applies each diff once, in version order", () => {
    s.socket().deliver(diff(2, [[1, 0, "2"]]));
    s.socket().deliver(diff(2, [[1, 0, "2"]]));
    s.socket().deliver(diff(1, [[2, 0, "F"]]));
    s.socket().deliver(diff(3, [[2, 0, "F"]], { action: "flag" }));
    assert.deepEqual(s.seen.changes.map((c) => c.diff.version), [2, 3]);
    assert.deepEqual(s.seen.changes.map((c) => [...c.changed]), [[1], [2]]);
    assert.equal(s.seen.changes[0].before.version, 1);
    assert.equal(s.game.char(2), "F");
  });

  it("resumes from the version held when a diff skips one, and applies nothing ahead of it", () => {
    const first = s.socket();
    first.deliver(diff(3, [[1, 0, "2"]]));
    assert.equal(s.game.version, 1);
    assert.equal(s.seen.changes.length, 0);
    assert.equal(first.closed, 1000);
    assert.equal(s.sockets.length, 2);
    assert.match(s.socket().url, /since=1$/);
    // The service sends what was missed, in order; the old socket is not listened to.
    first.deliver(diff(2, [[2, 0, "1"]]));
    assert.equal(s.game.version, 1);
    s.socket().accept();
    s.socket().deliver(diff(2, [[2, 0, "1"]]));
    s.socket().deliver(diff(3, [[1, 0, "2"]]));
    assert.equal(s.game.version, 3);
    assert.equal(s.game.char(1), "2");
  });

  it("resumes when a heartbeat is ahead of the version held, and only then", () => {
    s.socket().deliver({ type: "heartbeat", version: 1, server_time: "2026-01-01T00:00:05.000Z" });
    assert.equal(s.sockets.length, 1);
    s.socket().deliver({ type: "heartbeat", version: 2, server_time: "2026-01-01T00:00:06.000Z" });
    assert.equal(s.sockets.length, 2);
    assert.match(s.socket().url, /since=1$/);
  });

  it("takes a snapshot unless it is older than the game held", () => {
    s.socket().deliver({ type: "snapshot", game: view({ version: 0 }) });
    assert.equal(s.seen.changes.length, 0);
    s.socket().deliver({ type: "snapshot", game: view({ version: 4, status: "playing", board: ["11#", "###", "###"] }) });
    assert.equal(s.game.version, 4);
    assert.deepEqual([...s.seen.changes[0].changed], [1]);
    assert.equal(s.seen.changes[0].view.version, 4);
  });

  it("passes a reset on", () => {
    s.socket().deliver({ type: "reset", next_id: "f".repeat(32) });
    assert.deepEqual(s.seen.resets, ["f".repeat(32)]);
  });

  it("reconnects after a drop, backing off, and resumes from the version held", () => {
    s.socket().deliver(diff(2, [[1, 0, "2"]]));
    s.socket().drop();
    assert.equal(s.seen.states.at(-1), "reconnecting");
    assert.equal(s.sockets.length, 1);
    s.timers.advance(retryDelay(1));
    assert.equal(s.sockets.length, 2);
    assert.match(s.socket().url, /since=2$/);
    s.socket().drop();
    s.timers.advance(retryDelay(2, () => 0.5) - 1);
    assert.equal(s.sockets.length, 2, "the second attempt waits longer");
    s.timers.advance(1);
    assert.equal(s.sockets.length, 3);
    s.socket().accept();
    assert.equal(s.seen.states.at(-1), "live");
  });

  it("resumes after 40 s of silence", () => {
    s.timers.advance(39_000);
    s.socket().deliver({ type: "heartbeat", version: 1, server_time: "2026-01-01T00:00:05.000Z" });
    s.timers.advance(39_000);
    assert.equal(s.sockets.length, 1);
    s.timers.advance(1_000);
    assert.equal(s.sockets.length, 2);
  });

  it("stops for good when the game is gone", () => {
    s.socket().drop(4404);
    assert.equal(s.seen.gone, 1);
    assert.equal(s.seen.states.at(-1), "gone");
    s.timers.advance(60_000);
    assert.equal(s.sockets.length, 1);
  });

  it("comes back at once when woken while down, and not otherwise", () => {
    s.session.wake();
    assert.equal(s.sockets.length, 1);
    s.socket().drop();
    s.session.wake();
    assert.equal(s.sockets.length, 2);
  });

  it("applies a diff got another way only when it is the next", () => {
    s.session.offer(diff(3, [[1, 0, "2"]]));
    assert.equal(s.game.version, 1);
    assert.equal(s.sockets.length, 1, "the socket brings the missing ones by itself");
    s.session.offer(diff(2, [[1, 0, "2"]], { action: "pause", paused: true }));
    assert.equal(s.game.version, 2);
    assert.equal(s.game.paused, true);
  });
});

describe("GameSession: messages read slowly", () => {
  it("handles what arrives in order while a big message is still being read", async () => {
    const waiting = [];
    // Diff 2 is read slowly (as a big one is, in a worker); the rest at once.
    const decode = (text) => {
      const message = JSON.parse(text);
      if (message.version !== 2) return message;
      return new Promise((resolve) => waiting.push(() => resolve(message)));
    };
    const s = setUp({ version: 1, board: ["1##", "###", "###"], decode });
    s.session.start();
    s.socket().accept();
    s.socket().deliver(diff(2, [[1, 0, "2"]]));
    s.socket().deliver(diff(3, [[2, 0, "F"]], { action: "flag" }));
    s.socket().deliver({ type: "heartbeat", version: 3, server_time: "2026-01-01T00:00:01.000Z" });
    await settled();
    assert.deepEqual(s.seen.changes, [], "nothing before the message that came first");
    assert.equal(s.sockets.length, 1, "no resync for a version not read yet");
    waiting.shift()();
    await settled();
    assert.deepEqual(s.seen.changes.map((c) => c.diff.version), [2, 3]);
    assert.equal(s.sockets.length, 1);
  });

  it("drops what a dropped socket was still reading: the resumed feed brings it", async () => {
    const waiting = [];
    const decode = (text) => new Promise((resolve) => waiting.push(() => resolve(JSON.parse(text))));
    const s = setUp({ version: 1, board: ["1##", "###", "###"], decode });
    s.session.start();
    s.socket().accept();
    s.socket().deliver(diff(2, [[1, 0, "2"]]));
    s.session.resync();
    waiting.shift()();
    await settled();
    assert.deepEqual(s.seen.changes, []);
    assert.equal(s.game.version, 1);
  });
});

describe("GameSession: hints told by the feed", () => {
  it("counts the hints the player was given, once each", () => {
    const s = setUp({ version: 1, board: ["1##", "###", "###"] });
    s.session.start();
    s.socket().accept();
    s.socket().deliver({ type: "hinted", hints: 1 });
    s.socket().deliver({ type: "hinted", hints: 1 });
    s.socket().deliver({ type: "hinted", hints: 2 });
    assert.deepEqual(s.seen.hints, [1, 2]);
    assert.equal(s.game.stats.hints, 2);
    assert.equal(s.game.stats.assisted, true);
    assert.equal(s.game.version, 1, "a hint changes no version");
  });
});

describe("GameSession: a game opened while paused", () => {
  it("subscribes for a snapshot, and shows the board from the one sent on resume", () => {
    const game = new Game(view({ version: 5, status: "playing", paused: true }));
    const sockets = [];
    const changes = [];
    const session = new GameSession(game, {
      url: (since) => (since == null ? "ws://test/events" : `ws://test/events?since=${since}`),
      connect: (url) => {
        const ws = new FakeSocket(url);
        sockets.push(ws);
        return ws;
      },
      timers: new ManualTimers(),
      onChange: (change) => changes.push(change),
    });
    session.start();
    assert.equal(sockets[0].url, "ws://test/events");
    sockets[0].accept();
    sockets[0].deliver({ type: "snapshot", game: view({ version: 5, status: "playing", paused: true }) });
    sockets[0].deliver(diff(6, [], { action: "resume", paused: false }));
    assert.equal(game.covered, true);
    sockets[0].deliver({ type: "snapshot", game: view({ version: 6, status: "playing", board: ["12#", "###", "###"] }) });
    assert.equal(game.covered, false);
    assert.deepEqual([...changes.at(-1).changed], [0, 1]);
    assert.equal(changes.at(-1).before.covered, true);
  });
});

describe("GameSession: the player's moves", () => {
  it("authenticates first, then sends the moves made while connecting, each with an id", async () => {
    const s = setUp({ token: "secret" });
    s.session.start();
    const reveal = s.session.move("reveal", 1, 1);
    const flag = s.session.move("flag", 2, 0);
    assert.deepEqual(s.socket().sent, []);
    s.socket().accept();
    assert.deepEqual(s.socket().sent, [
      { type: "auth", token: "secret", id: "auth" },
      { type: "reveal", x: 1, y: 1, id: 1 },
      { type: "flag", x: 2, y: 0, id: 2 },
    ]);
    // The answers may come before or after the same diffs on the feed: each is applied once.
    const d1 = diff(1, [[1, 1, "3"]], { x: 1, y: 1 });
    const d2 = diff(2, [[2, 0, "F"]], { action: "flag", x: 2, y: 0 });
    s.socket().deliver({ type: "result", id: 1, diff: d1 });
    s.socket().deliver(d1);
    s.socket().deliver(d2);
    s.socket().deliver({ type: "result", id: 2, diff: d2 });
    assert.deepEqual(await reveal, d1);
    assert.deepEqual(await flag, d2);
    assert.deepEqual(s.seen.changes.map((c) => c.diff.version), [1, 2]);
  });

  it("leaves a result ahead of the feed to the feed", async () => {
    const s = setUp({ token: "secret" });
    s.session.start();
    s.socket().accept();
    const move = s.session.move("reveal", 0, 0);
    const d2 = diff(2, [[0, 0, "1"]]);
    s.socket().deliver({ type: "result", id: 1, diff: d2 });
    assert.deepEqual(await move, d2);
    assert.equal(s.game.version, 0);
    assert.equal(s.sockets.length, 1);
    s.socket().deliver(diff(1, [[2, 2, "F"]], { action: "flag" }));
    s.socket().deliver(d2);
    assert.equal(s.game.version, 2);
  });

  it("rejects a refused move with the service's problem", async () => {
    const s = setUp({ token: "secret" });
    s.session.start();
    s.socket().accept();
    const move = s.session.move("reveal", 0, 0);
    s.socket().deliver({ type: "error", id: 1, problem: { title: "Conflict", status: 409, code: "game_over", detail: "the game is lost" } });
    await assert.rejects(move, { code: "game_over", status: 409, message: "the game is lost" });
  });

  it("fails a move in flight when the socket drops, and sends a waiting one on the next", async () => {
    const s = setUp({ token: "secret" });
    s.session.start();
    s.socket().accept();
    const inFlight = s.session.move("reveal", 0, 0);
    s.socket().drop();
    await assert.rejects(inFlight, { code: "disconnected" });
    const waiting = s.session.move("flag", 1, 1);
    s.timers.advance(retryDelay(1));
    s.socket().accept();
    assert.deepEqual(s.socket().sent, [
      { type: "auth", token: "secret", id: "auth" },
      { type: "flag", x: 1, y: 1, id: 2 },
    ]);
    const d = diff(1, [[1, 1, "F"]], { action: "flag" });
    s.socket().deliver({ type: "result", id: 2, diff: d });
    assert.deepEqual(await waiting, d);
  });

  it("gives a move up, unplayed, when no socket opens for 10 s", async () => {
    const s = setUp({ token: "secret" });
    s.session.start();
    const move = s.session.move("reveal", 0, 0);
    let outcome = null;
    move.catch((err) => (outcome = err));
    s.timers.advance(9_999);
    await settled();
    assert.equal(outcome, null);
    s.timers.advance(1);
    await assert.rejects(move, { code: "network" });
    s.socket().accept();
    assert.deepEqual(s.socket().sent, [{ type: "auth", token: "secret", id: "auth" }], "never sent late");
  });

  it("gives a sent move up when no answer comes in 10 s, and dials again", async () => {
    const s = setUp({ token: "secret" });
    s.session.start();
    s.socket().accept();
    const move = s.session.move("reveal", 0, 0);
    let outcome = null;
    move.catch((err) => (outcome = err));
    s.timers.advance(9_999);
    await settled();
    assert.equal(outcome, null);
    s.timers.advance(1);
    await assert.rejects(move, { code: "disconnected", message: /No answer to that move/ });
    assert.equal(s.sockets[0].closed, 1000);
    assert.equal(s.seen.states.at(-1), "reconnecting");
    s.timers.advance(retryDelay(1));
    assert.equal(s.sockets.length, 2);
  });

  it("lets the socket go at once when the network is lost, failing the move in flight", async () => {
    const s = setUp({ token: "secret" });
    s.session.start();
    s.socket().accept();
    const move = s.session.move("reveal", 0, 0);
    s.session.lose();
    await assert.rejects(move, { code: "disconnected" });
    assert.equal(s.seen.states.at(-1), "reconnecting");
    s.session.wake();
    assert.equal(s.sockets.length, 2, "the network's return dials at once");
  });

  it("goes on watching when the token is refused, failing the moves that wait", async () => {
    const s = setUp({ token: "stale" });
    s.session.start();
    s.socket().accept();
    const move = s.session.move("reveal", 0, 0);
    s.socket().deliver({ type: "error", id: "auth", problem: { title: "Forbidden", status: 403, code: "forbidden", detail: "wrong token" } });
    await assert.rejects(move, { code: "forbidden" });
    assert.deepEqual(s.seen.refused.map((e) => e.code), ["forbidden"]);
    assert.equal(s.session.playing, false);
    await assert.rejects(s.session.move("reveal", 1, 1), { code: "unauthorized" });
    s.socket().drop();
    s.timers.advance(retryDelay(1));
    s.socket().accept();
    assert.deepEqual(s.socket().sent, [], "no token is sent again");
  });

  it("tries the token again on a new socket when it was not heard", async () => {
    const s = setUp({ token: "secret" });
    s.session.start();
    s.socket().accept();
    const move = s.session.move("reveal", 0, 0);
    const busy = { title: "Too Many Requests", status: 429, code: "rate_limited", detail: "slow down" };
    s.socket().deliver({ type: "error", id: "auth", problem: busy });
    // What the service says to the move sent with no token heard is not listened to.
    s.socket().deliver({ type: "error", id: 1, problem: { title: "Unauthorized", status: 401, code: "unauthorized", detail: "auth first" } });
    await assert.rejects(move, { code: "disconnected" });
    assert.deepEqual(s.seen.refused, []);
    assert.equal(s.session.playing, true);
    s.timers.advance(retryDelay(1));
    s.socket().accept();
    assert.deepEqual(s.socket().sent, [{ type: "auth", token: "secret", id: "auth" }]);
  });

  it("fails every move when stopped, and sends nothing after", async () => {
    const s = setUp({ token: "secret" });
    s.session.start();
    const move = s.session.move("reveal", 0, 0);
    s.session.stop();
    await assert.rejects(move, { code: "stopped" });
    assert.equal(s.socket().closed, 1000);
    assert.deepEqual(s.seen.states.at(-1), "idle");
    await assert.rejects(s.session.move("reveal", 0, 0), { code: "stopped" });
  });
});

describe("retryDelay", () => {
  it("tries again quickly once, then backs off with jitter up to 10 s", () => {
    assert.equal(retryDelay(1), 150);
    assert.equal(retryDelay(2, () => 0), 300);
    assert.equal(retryDelay(2, () => 1), 600);
    assert.equal(retryDelay(30, () => 1), 10_000);
  });
});
