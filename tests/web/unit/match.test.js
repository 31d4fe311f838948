// What the page reads from a match view, the pointer throttle, and the match's live feed.

import assert from "node:assert/strict";
import { describe, it } from "node:test";

import {
  canJoin, canStart, cellAt, MatchFeed, newPenalties, PlayerFeed, progressShare, ratingChange, rematchAsker, rematchNote,
  rematchOffer, rematchRefusal, rematchShut, resultRows, seatRows, secondsLeft, stage, Throttle,
} from "../../../clients/web/match.js";
import { FakeSocket, ManualTimers, stamp } from "./fakes.js";

const A = "a".repeat(32);
const B = "b".repeat(32);

function seat(id, name, extra = {}) {
  return {
    player: { id, name, rating: null },
    status: "waiting",
    progress: { bbbv_done: 0, bbbv: 20 },
    penalties: 0,
    time_ms: null,
    place: null,
    rating_before: null,
    rating_after: null,
    game_id: null,
    ...extra,
  };
}

function match({ version = 1, status = "waiting", mode = "race", seats = [seat("p1", "Ann")], ...rest } = {}) {
  return {
    id: "0123456789abcdef0123456789abcdef", mode, status, version, width: 9, height: 9, mines: 10,
    preset: "beginner", no_guess: true, rated: true, on_mine: "penalty", time_limit_s: 600,
    created_at: stamp(0), starts_at: null, ends_at: null, ended_at: null, server_time: stamp(0), seats, rematch_id: null, rematch_of: null, ...rest,
  };
}

describe("a match view", () => {
  it("lets only the creator start, and only with two seats taken", () => {
    const one = match();
    assert.equal(canStart(one, "p1"), false);
    const two = match({ seats: [seat("p1", "Ann"), seat("p2", "Bob")] });
    assert.equal(canStart(two, "p1"), true);
    assert.equal(canStart(two, "p2"), false);
    assert.equal(canStart({ ...two, status: "countdown" }, "p1"), false);
  });

  it("offers a seat to players not seated while it waits", () => {
    const v = match();
    assert.equal(canJoin(v, "p2"), true);
    assert.equal(canJoin(v, "p1"), false);
    assert.equal(canJoin({ ...v, status: "playing" }, "p2"), false);
  });

  it("shows progress as a share of the board's 3BV, marks the viewer, rounds ratings", () => {
    const v = match({ seats: [seat("p1", "Ann", { progress: { bbbv_done: 5, bbbv: 20 } }), seat("p2", "Bob", { player: { id: "p2", name: "Bob", rating: 1512.6 } })] });
    const rows = seatRows(v, "p2");
    assert.deepEqual(rows.map((r) => [r.name, r.you, r.rating, r.share]), [["Ann", false, "new", 0.25], ["Bob", true, "1513", 0]]);
    assert.equal(progressShare({ bbbv_done: 3, bbbv: 0 }), 0);
  });

  it("says rating changes with their sign", () => {
    assert.equal(ratingChange(1500, 1512.4), "+12");
    assert.equal(ratingChange(1500, 1490), "−10");
    assert.equal(ratingChange(1500, 1500.2), "±0");
    assert.equal(ratingChange(null, 1500), "");
  });

  it("orders the result by the service's places, unplaced seats last", () => {
    const v = match({
      status: "finished",
      seats: [seat("p1", "Ann", { place: 2 }), seat("p2", "Bob", { place: 1, game_id: A }), seat("p3", "Cid")],
    });
    assert.deepEqual(resultRows(v, "p1").map((r) => [r.name, r.place, r.gameId]), [["Bob", 1, A], ["Ann", 2, null], ["Cid", null, null]]);
  });

  it("tells the penalties an update brings, and whose", () => {
    const before = match({ seats: [seat("p1", "Ann"), seat("p2", "Bob", { penalties: 1 })] });
    const after = match({ version: 2, seats: [seat("p1", "Ann", { penalties: 2 }), seat("p2", "Bob", { penalties: 1 })] });
    assert.deepEqual(newPenalties(before, after, "p1"), [{ name: "Ann", you: true, count: 2, total: 2 }]);
    assert.deepEqual(newPenalties(null, after, "p1"), []);
  });

  it("counts down in whole seconds on the server's clock", () => {
    assert.equal(secondsLeft(10_000, 7_001), 3);
    assert.equal(secondsLeft(10_000, 9_999), 1);
    assert.equal(secondsLeft(10_000, 10_000), 0);
    assert.equal(secondsLeft(10_000, 12_000), 0);
  });

  it("plays the seat's own game in a race, the shared one in co-op, and watches co-op unseated", () => {
    const race = match({ status: "countdown", seats: [seat("p1", "Ann", { game_id: A }), seat("p2", "Bob")] });
    assert.deepEqual(stage(race, "p1"), { status: "countdown", seat: 0, gameId: A, play: true });
    assert.deepEqual(stage(race, "p2"), { status: "countdown", seat: 1, gameId: null, play: false });
    const coop = match({ mode: "coop", status: "playing", seats: [seat("p1", "Ann", { game_id: B }), seat("p2", "Bob", { game_id: B })] });
    assert.deepEqual(stage(coop, "p9"), { status: "playing", seat: -1, gameId: B, play: false });
  });

  it("finds the cell under a point of the board's box", () => {
    const rect = { left: 100, top: 50, width: 90, height: 90 };
    assert.deepEqual(cellAt(rect, 9, 9, 100, 50), { x: 0, y: 0 });
    assert.deepEqual(cellAt(rect, 9, 9, 189.9, 139.9), { x: 8, y: 8 });
    assert.equal(cellAt(rect, 9, 9, 99, 60), null);
    assert.equal(cellAt(rect, 9, 9, 190, 60), null);
  });
});

describe("a rematch", () => {
  const R = "c".repeat(32);
  const over = (extra = {}) => match({ status: "finished", seats: [seat("p1", "ada"), seat("p2", "bob")], ...extra });
  // The rematch's own view: whoever asked first sits in seat 0.
  const next = (...seats) => match({ id: R, seats });

  it("is offered to the players of a finished match only, until one asks", () => {
    assert.deepEqual(rematchOffer(over(), "p2"), { action: "ask", id: null });
    assert.deepEqual(rematchOffer(over(), "p9"), { action: null, id: null });
    assert.deepEqual(rematchOffer(over({ status: "playing" }), "p1"), { action: null, id: null });
    assert.deepEqual(rematchOffer(null, "p1"), { action: null, id: null });
  });

  it("asks the others to join once one has asked, and offers the rest to watch it", () => {
    const asked = over({ rematch_id: R });
    assert.deepEqual(rematchOffer(asked, "p2"), { action: "join", id: R });
    assert.deepEqual(rematchOffer(asked, "p9"), { action: "watch", id: R });
    // Seated in it already (this player asked, on another page): straight there.
    assert.deepEqual(rematchOffer(asked, "p1", { rematch: next(seat("p1", "ada")) }), { action: "go", id: R });
    assert.deepEqual(rematchOffer(asked, "p2", { rematch: next(seat("p1", "ada")) }), { action: "join", id: R });
    // Another match's view says nothing of this rematch.
    assert.deepEqual(rematchOffer(asked, "p1", { rematch: match({ seats: [seat("p1", "ada")] }) }), { action: "join", id: R });
    // It went on without this player: it can still be watched.
    assert.deepEqual(rematchOffer(asked, "p2", { shut: true }), { action: "watch", id: R });
  });

  it("names who asked: the update's seat, else the rematch's first seat", () => {
    const asked = over({ rematch_id: R });
    assert.deepEqual(rematchAsker(asked, "p2", { seat: 0 }), { name: "ada", you: false });
    assert.deepEqual(rematchAsker(asked, "p2", { seat: 1 }), { name: "bob", you: true });
    assert.deepEqual(rematchAsker(asked, "p2", { rematch: next(seat("p1", "ada"), seat("p2", "bob")) }), { name: "ada", you: false });
    assert.equal(rematchAsker(asked, "p2", { rematch: match({ seats: [seat("p1", "ada")] }) }), null);
    assert.equal(rematchAsker(asked, "p2"), null);
    assert.equal(rematchNote({ name: "ada", you: false }), "ada wants a rematch.");
    assert.equal(rematchNote({ name: "bob", you: true }), "You asked for a rematch.");
    assert.equal(rematchNote(null), "A rematch has been asked for.");
  });

  it("says a refusal in words, and whether the rematch can still be watched", () => {
    const err = (code, message = "nope") => Object.assign(new Error(message), { code });
    assert.equal(rematchRefusal(err("match_started")), "The rematch has started without you; you can watch it.");
    assert.equal(rematchRefusal(err("forbidden")), "Only the players of this match may play its rematch.");
    assert.equal(rematchRefusal(err("http_500", "HTTP 500")), "Could not ask for a rematch: HTTP 500");
    assert.equal(rematchShut(err("match_started")), true);
    assert.equal(rematchShut(err("match_full")), true);
    assert.equal(rematchShut(err("forbidden")), false);
  });
});

describe("the pointer throttle", () => {
  it("sends at once, then at most once an interval the latest value, never a repeat", () => {
    const timers = new ManualTimers();
    const sent = [];
    const t = new Throttle((v) => sent.push(v), 100, { timers });
    t.offer({ x: 1, y: 1 });
    t.offer({ x: 2, y: 1 });
    t.offer({ x: 3, y: 1 });
    assert.deepEqual(sent, [{ x: 1, y: 1 }]);
    timers.advance(100);
    assert.deepEqual(sent, [{ x: 1, y: 1 }, { x: 3, y: 1 }]);
    t.offer({ x: 3, y: 1 });
    timers.advance(500);
    assert.equal(sent.length, 2);
    t.offer({ x: 4, y: 4 });
    assert.deepEqual(sent.at(-1), { x: 4, y: 4 });
  });
});

/** A connect() for a feed that records the sockets it opens. */
function socketsOpened() {
  const sockets = [];
  const connect = (url) => {
    const ws = new FakeSocket(url);
    sockets.push(ws);
    return ws;
  };
  return { sockets, connect };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe("the match feed", () => {
  function setUp(token = "tok") {
    const { sockets, connect } = socketsOpened();
    const timers = new ManualTimers();
    const views = [];
    const cursors = [];
    const feed = new MatchFeed({
      url: (since) => `ws://test/matches/m/events${since == null ? "" : `?since=${since}`}`,
      token: async () => token,
      connect,
      timers,
      random: () => 0.5,
      onView: (v, info) => views.push([v.version, info.change]),
      onCursor: (c) => cursors.push(c),
    });
    feed.start();
    return { feed, sockets, timers, views, cursors };
  }

  it("says who it is, then takes updates in version order", async () => {
    const { sockets, views } = setUp();
    sockets[0].accept();
    await tick();
    assert.deepEqual(sockets[0].sent, [{ type: "auth", token: "tok" }]);
    sockets[0].deliver({ type: "match", match: match({ version: 3 }) });
    sockets[0].deliver({ type: "match_update", version: 3, change: "joined", seat: 1, match: match({ version: 3 }) });
    sockets[0].deliver({ type: "match_update", version: 4, change: "joined", seat: 1, match: match({ version: 4 }) });
    assert.deepEqual(views, [[3, null], [4, "joined"]]);
  });

  it("passes on a rematch's update with the seat that asked", async () => {
    const { sockets, feed } = setUp();
    const heard = [];
    feed.report.onView = (v, info) => heard.push([v.rematch_id, info.change, info.seat]);
    sockets[0].accept();
    sockets[0].deliver({ type: "match", match: match({ version: 7, status: "finished" }) });
    const R = "c".repeat(32);
    sockets[0].deliver({ type: "match_update", version: 8, change: "rematch", seat: 1, match: match({ version: 8, status: "finished", rematch_id: R }) });
    assert.deepEqual(heard, [[null, null, null], [R, "rematch", 1]]);
  });

  it("resumes from the version held when an update skips one", async () => {
    const { sockets, views } = setUp();
    sockets[0].accept();
    sockets[0].deliver({ type: "match", match: match({ version: 3 }) });
    sockets[0].deliver({ type: "match_update", version: 5, change: "progress", seat: 0, match: match({ version: 5 }) });
    assert.deepEqual(views, [[3, null]]);
    assert.equal(sockets[0].closed, 1000);
    assert.equal(sockets[1].url, "ws://test/matches/m/events?since=3");
  });

  it("reconnects after a drop, and passes cursors on", () => {
    const { sockets, timers, cursors, feed } = setUp(null);
    sockets[0].accept();
    sockets[0].deliver({ type: "cursor", by: "p2", x: 4, y: 5 });
    assert.deepEqual(cursors, [{ by: "p2", x: 4, y: 5 }]);
    feed.cursor(1, 2);
    assert.deepEqual(sockets[0].sent, [{ type: "cursor", x: 1, y: 2 }]);
    sockets[0].drop();
    assert.equal(sockets.length, 1);
    timers.advance(200);
    assert.equal(sockets.length, 2);
    feed.stop();
    assert.equal(sockets[1].closed, 1000);
  });

  it("comes back at once when woken while down, and not otherwise", () => {
    const { sockets, timers, feed } = setUp(null);
    sockets[0].accept();
    feed.wake();
    assert.equal(sockets.length, 1);
    sockets[0].drop();
    feed.wake();
    assert.equal(sockets.length, 2);
    timers.advance(60_000);
    assert.equal(sockets.length, 2, "the retry the drop scheduled was cancelled");
  });

  it("dials again when a silent socket's watchdog fires", () => {
    const { sockets, timers } = setUp(null);
    sockets[0].accept();
    timers.advance(39_000);
    sockets[0].deliver({ type: "heartbeat", version: 0, server_time: stamp(0) });
    timers.advance(39_000);
    assert.equal(sockets.length, 1, "a message within the silence allowed keeps the socket");
    timers.advance(2_000);
    assert.equal(sockets.length, 2);
    assert.equal(sockets[0].closed, 1000);
  });
});

describe("the player's feed", () => {
  function setUp() {
    const { sockets, connect } = socketsOpened();
    const timers = new ManualTimers();
    const matched = [];
    const feed = new PlayerFeed({
      url: () => "ws://test/players/me/events",
      token: async () => "ptok",
      connect,
      timers,
      random: () => 0.5,
      onMatched: (id) => matched.push(id),
    });
    feed.start();
    return { feed, sockets, timers, matched };
  }

  it("says who it is, then reports a pairing, and nothing else", async () => {
    const { sockets, matched } = setUp();
    sockets[0].accept();
    await tick();
    assert.deepEqual(sockets[0].sent, [{ type: "auth", token: "ptok" }]);
    sockets[0].deliver({ type: "player", player: { id: "p1", name: "Ann" } });
    sockets[0].deliver({ type: "heartbeat", server_time: stamp(0) });
    assert.deepEqual(matched, []);
    sockets[0].deliver({ type: "matched", match_id: A });
    assert.deepEqual(matched, [A]);
  });

  it("comes back after a drop, and stops for good when its token is refused", async () => {
    const { sockets, timers } = setUp();
    sockets[0].accept();
    sockets[0].drop();
    timers.advance(200);
    assert.equal(sockets.length, 2);
    sockets[1].accept();
    await tick();
    sockets[1].deliver({ type: "error", id: null, problem: { status: 401, code: "unauthorized" } });
    assert.equal(sockets[1].closed, 1000);
    timers.advance(60_000);
    assert.equal(sockets.length, 2);
  });
});
