// What the page reads from a match view, the pointer throttle, and the match's live feed.

import assert from "node:assert/strict";
import { describe, it } from "node:test";

import {
  awayWords, BBBV_NOTE, canJoin, canStart, cellAt, countsBbbv, stillRacing, clockWords, endWords, limitWords, MatchFeed, matchUrl, msLeft, newPenalties, overWords, penaltyTime,
  placeWords, PlayerFeed, playingElsewhere, playingWords, progressShare, ratingChange, rematchAsker, rematchNote, rematchOffer, rematchRefusal,
  rematchShut, replayOutcome, resultRows, rivalNews, seatOutcome, seatRows, seatsWords, secondsLeft, stage,
  Throttle, untoldMines,
} from "../../../clients/web/match.js";
import { Cells } from "../../../clients/web/game.js";
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
    created_at: stamp(0), starts_at: null, ends_at: null, ended_at: null, server_time: stamp(0), seats, capacity: 2, rematch_id: null, rematch_of: null, ...rest,
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

  it("gives no place in a race every seat resigned, and the last to a seat that resigned alone", () => {
    const resigned = { status: "resigned", place: 1 };
    const all = match({ status: "finished", seats: [seat("p1", "Ann", resigned), seat("p2", "Bob", resigned)] });
    assert.deepEqual(resultRows(all, "p1").map((r) => [r.name, r.place]), [["Ann", null], ["Bob", null]]);
    const one = match({
      status: "finished",
      seats: [seat("p1", "Ann", { status: "resigned", place: 2 }), seat("p2", "Bob", { status: "lost", place: 1 })],
    });
    assert.deepEqual(resultRows(one, "p1").map((r) => [r.name, r.place]), [["Bob", 1], ["Ann", 2]]);
  });

  it("tells the penalties an update brings, and whose", () => {
    const before = match({ seats: [seat("p1", "Ann"), seat("p2", "Bob", { penalties: 1 })] });
    const after = match({ version: 2, seats: [seat("p1", "Ann", { penalties: 2 }), seat("p2", "Bob", { penalties: 1 })] });
    assert.deepEqual(newPenalties(before, after, "p1"), [{ name: "Ann", you: true, count: 2, total: 2 }]);
    assert.deepEqual(newPenalties(null, after, "p1"), []);
  });

  it("keeps a co-op player's own mines until the team's count takes them in", () => {
    // A 4×1 board: a teammate's mine at 0, then this player's at 2 (a chord opens 2 and 3).
    const board = (row) => Object.assign(new Cells(4, 1), { cells: Uint8Array.from(row, (c) => c.charCodeAt(0)) });
    const mine = { version: 3, status: "playing", cells: [[2, 0, "X"]], move: { action: "reveal", x: 2, y: 0 } };
    const safe = { version: 3, status: "playing", cells: [[2, 0, "1"]], move: { action: "reveal", x: 2, y: 0 } };
    const chord = { version: 3, status: "playing", cells: [[2, 0, "XX"]], move: { action: "chord", x: 1, y: 0 } };
    assert.equal(untoldMines(0, mine, board("X#X#"), 1), 1);
    assert.equal(untoldMines(1, safe, board("X#1#"), 1), 1);
    assert.equal(untoldMines(0, chord, board("X#XX"), 1), 2);
    // The team's update came first: it counted the mine already (and said it).
    assert.equal(untoldMines(0, mine, board("X#X#"), 2), 0);
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
    const playing = Object.assign(err("already_playing"), { problem: { match_id: "ab12" } });
    // No id a person cannot read: the button beside the words goes back to the match.
    assert.equal(rematchRefusal(playing), "You are already in another match: go back to it, or leave it first.");
    assert.equal(playingElsewhere(playing), rematchRefusal(playing));
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

describe("a match's words", () => {
  const progress = (done, bbbv = 30) => ({ progress: { bbbv_done: done, bbbv } });
  const game = (status, extra = {}) => ({ id: A, status, elapsedMs: 24_149, endedByMatch: false, ...extra });

  it("names places, time limits, the time left and the seats", () => {
    assert.deepEqual([1, 2, 3, 4, 11, 12, 13, 21, 22, 102].map(placeWords),
      ["1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "102nd"]);
    assert.deepEqual([600, 45, 90, 3600].map(limitWords), ["10 min", "45 s", "1 min 30 s", "60 min"]);
    assert.deepEqual([598_001, 9_000, 8_999, 0, -5].map(clockWords), ["9:59", "0:09", "0:09", "0:00", "0:00"]);
    assert.equal(msLeft(10_000, 4_000), 6_000);
    assert.equal(msLeft(10_000, 12_000), 0);
    assert.equal(msLeft(Number.NaN, 0), null);
    assert.equal(seatsWords(1, 3), "1 of 3 seats taken");
    assert.equal(seatsWords(1, null), "1 player seated");
    assert.equal(seatsWords(2, null), "2 players seated");
  });

  it("says what penalties added to a time", () => {
    assert.equal(penaltyTime(29_149, 1), "24.149 s + 5 s penalty = 29.149 s");
    assert.equal(penaltyTime(34_149, 2), "24.149 s + 10 s penalties = 34.149 s");
    assert.equal(penaltyTime(24_149, 0), "24.149 s");
  });

  it("says how each seat ended in the result table", () => {
    assert.equal(seatOutcome(seat("p", "A", { status: "won", time_ms: 29_149, penalties: 1 })), "24.149 s + 5 s penalty = 29.149 s");
    assert.equal(seatOutcome(seat("p", "A", { status: "lost", ...progress(12) })), "Out of time: 12 of 30 3BV");
    assert.equal(seatOutcome(seat("p", "A", { status: "lost", time_ms: 9_000, ...progress(3) })), "Hit a mine: 3 of 30 3BV");
    assert.equal(seatOutcome(seat("p", "A", { status: "resigned", ...progress(0) })), "Resigned: 0 of 30 3BV");
  });

  it("tells a seat that cleared while others race that it waits, then its place", () => {
    const racing = match({ status: "playing", seats: [
      seat("p1", "Ann", { status: "won", time_ms: 20_000, game_id: B }),
      seat("p2", "Bob", { status: "won", time_ms: 29_149, penalties: 1, game_id: A }),
      seat("p3", "Cy", { status: "playing" }),
    ] });
    const waiting = endWords(racing, "p2", game("won"));
    assert.equal(waiting.title, "Cleared!");
    // One seat still plays: it is named.
    assert.equal(waiting.sub, "Cleared the beginner board in 24.149 s + 5 s penalty = 29.149 s. Waiting for Cy to finish.");
    assert.deepEqual([waiting.timeTerm, waiting.time], ["Time with penalties", "29.149 s"]);
    assert.equal(playingWords(racing, "p2"), "Cleared in 24.149 s + 5 s penalty = 29.149 s, waiting for Cy.");
    // Two or more still play: "the others".
    const two = match({ status: "playing", seats: [
      seat("p1", "Ann", { status: "playing" }),
      seat("p2", "Bob", { status: "won", time_ms: 20_000, game_id: A }),
      seat("p3", "Cy", { status: "playing" }),
    ] });
    assert.equal(playingWords(two, "p2"), "Cleared in 20.000 s, waiting for the others.");
    assert.match(endWords(two, "p2", game("won")).sub, /Waiting for the others to finish\.$/);
    // A rival cleared first: first place is not promised any more.
    assert.equal(playingWords(racing, "p3"), "Play on: clear your board for the best place left.");
    assert.equal(playingWords(racing, "p9"), "The race is on; the boards are shown at the end.");

    const over = match({ status: "finished", seats: [
      seat("p1", "Ann", { status: "won", time_ms: 20_000, place: 1, game_id: B }),
      seat("p2", "Bob", { status: "won", time_ms: 29_149, penalties: 1, place: 2, game_id: A }),
      seat("p3", "Cy", { status: "resigned", place: 3, game_id: "d".repeat(32) }),
    ] });
    const second = endWords(over, "p2", game("won"));
    assert.equal(second.title, "Cleared, 2nd place");
    assert.equal(second.won, true);
    assert.equal(endWords(over, "p9", game("won")).title, "Bob: Cleared, 2nd place");
    assert.equal(endWords(over, "p1", game("won", { id: B })).title, "You won!");
    assert.equal(replayOutcome(over, over.seats[0]), "Ann won");
    assert.equal(replayOutcome(over, over.seats[1]), "Bob cleared the board, 2nd place");
    assert.equal(replayOutcome(over, over.seats[2]), "Cy resigned");
  });

  it("never tells the last seat to finish that it waits for the others", () => {
    const last = match({ status: "playing", seats: [
      seat("p1", "Ann", { status: "won", time_ms: 10_000, game_id: B }),
      seat("p2", "Bob", { status: "won", time_ms: 12_117, game_id: A }),
    ] });
    assert.equal(playingWords(last, "p2"), "Cleared in 12.117 s.");
    // The board's end may come before the match's: the seat itself still plays then.
    const stale = match({ status: "playing", seats: [
      seat("p1", "Ann", { status: "won", time_ms: 10_000, game_id: B }),
      seat("p2", "Bob", { status: "playing", game_id: A }),
    ] });
    assert.equal(endWords(stale, "p2", game("won", { elapsedMs: 12_117 })).sub, "Cleared the beginner board in 12.117 s.");
    assert.equal(endWords(stale, "p2", game("lost", { elapsedMs: 12_117 })).sub, "Game over after 12.117 s.");
    const mined = match({ status: "playing", on_mine: "lose", seats: [
      seat("p1", "Ann", { status: "resigned", game_id: B }),
      seat("p2", "Bob", { status: "lost", time_ms: 3_000, game_id: A }),
    ] });
    assert.equal(playingWords(mined, "p2"), "You hit a mine: your race is over.");
  });

  it("says at the end how the race went for the player: place, time, and who won", () => {
    const over = match({ status: "finished", seats: [
      seat("p1", "Ann", { status: "won", time_ms: 10_000, place: 1, game_id: B }),
      seat("p2", "Bob", { status: "won", time_ms: 12_117, place: 2, game_id: A }),
      seat("p3", "Cy", { status: "resigned", place: 3, game_id: "d".repeat(32), ...progress(4) }),
    ] });
    assert.equal(overWords(over, "p1"), "The match is over: you won the race in 10.000 s.");
    assert.equal(overWords(over, "p2"), "The match is over: you cleared the board in 12.117 s, 2nd place. Ann won.");
    assert.equal(overWords(over, "p3"), "The match is over: you resigned, 3rd place. Ann won.");
    assert.equal(overWords(over, "p9"), "The match is over. Ann won.");
    const lapsed = match({ status: "finished", rated: false, seats: [seat("p1", "Ann"), seat("p2", "Bob")] });
    assert.equal(overWords(lapsed, "p1"), "Nobody started this match in time: it is over, and its seats are free.");
    const penalised = match({ status: "finished", seats: [
      seat("p1", "Ann", { status: "won", time_ms: 29_149, penalties: 1, place: 1, game_id: B }),
      seat("p2", "Bob", { status: "lost", place: 2, game_id: A, ...progress(12) }),
    ] });
    assert.equal(overWords(penalised, "p1"), "The match is over: you won the race in 24.149 s + 5 s penalty = 29.149 s.");
    assert.equal(overWords(penalised, "p2"), "The match is over: out of time with 12 of 30 3BV, 2nd place. Ann won.");
    const tied = match({ status: "finished", seats: [
      seat("p1", "Ann", { status: "won", time_ms: 10_000, place: 1, game_id: B }),
      seat("p2", "Bob", { status: "won", time_ms: 10_000, place: 1, game_id: A }),
    ] });
    assert.equal(overWords(tied, "p2"), "The match is over: you cleared the board in 10.000 s, tied for 1st place.");
    const team = match({ mode: "coop", status: "finished", seats: [
      seat("p1", "Ann", { status: "won", time_ms: 40_530, penalties: 1, place: 1, game_id: A }),
      seat("p2", "Bob", { status: "won", time_ms: 40_530, penalties: 1, place: 1, game_id: A }),
    ] });
    assert.equal(overWords(team, "p1"), "The match is over: together you cleared the board in 35.530 s + 5 s penalty = 40.530 s.");
    assert.equal(overWords(team, "p9"), "The match is over: the team cleared the board in 35.530 s + 5 s penalty = 40.530 s.");
  });

  it("tells a seat out of time its 3BV and place, and a resigned seat that it resigned", () => {
    const over = match({ status: "finished", seats: [
      seat("p1", "Ann", { status: "lost", place: 1, game_id: A, ...progress(12) }),
      seat("p2", "Bob", { status: "resigned", place: 2, game_id: B, ...progress(1) }),
    ] });
    const timeUp = endWords(over, "p1", game("lost", { endedByMatch: true }));
    assert.equal(timeUp.title, "Out of time, 1st place");
    assert.equal(timeUp.sub, "12 of 30 3BV done when the time ran out.");
    assert.equal(replayOutcome(over, over.seats[0]), "Ann ran out of time, 1st place");
    const resigned = endWords(over, "p2", game("lost", { id: B, endedByMatch: true }));
    assert.equal(resigned.title, "You resigned");
    assert.equal(resigned.won, false);
    assert.equal(endWords(over, "p2", game("lost", { id: "e".repeat(32) })), null, "a game of no seat");
    const playing = match({ status: "playing", seats: [seat("p1", "Ann", { status: "resigned" }), seat("p2", "Bob", { status: "playing" })] });
    assert.equal(playingWords(playing, "p1"), "You resigned. The others play on; the result shows when the match ends.");
  });

  it("says why a seat out on a mine placed, that nobody won when all resigned, and the 3BV as the stats count it", () => {
    const mined = match({ status: "finished", on_mine: "lose", seats: [
      seat("p1", "Ann", { status: "lost", time_ms: 3_000, place: 1, game_id: A, ...progress(3, 18) }),
      seat("p2", "Bob", { status: "lost", place: 2, game_id: B, ...progress(2, 18) }),
    ] });
    assert.equal(overWords(mined, "p1"), "The match is over: you hit a mine, 1st on progress: 3 of 18 3BV against 2.");
    const panel = endWords(mined, "p1", game("lost", { elapsedMs: 3_000 }));
    assert.equal(panel.sub, "Game over after 3.000 s, 1st on progress: 3 of 18 3BV against 2.");
    const quit = match({ status: "finished", seats: [
      seat("p1", "Ann", { status: "resigned", place: 1, game_id: A, ...progress(2, 18) }),
      seat("p2", "Bob", { status: "resigned", place: 1, game_id: B, ...progress(2, 18) }),
    ] });
    assert.equal(overWords(quit, "p1"), "The match is over: everybody resigned, so nobody won.");
    assert.equal(endWords(quit, "p1", game("lost", { endedByMatch: true })).sub, "Everybody resigned with 2 of 18 3BV done, so nobody won.");
    // The start opened 1 3BV: the match's words count it, as its rows and its table do
    // (only the stats under them leave it out, and their note says so).
    const late = match({ status: "finished", seats: [
      seat("p1", "Ann", { status: "lost", place: 1, game_id: A, ...progress(2, 18) }),
      seat("p2", "Bob", { status: "resigned", place: 2, game_id: B, ...progress(1, 18) }),
    ] });
    const stats = { bbbv: 18, bbbv_done: 2, bbbv_given: 1 };
    assert.equal(endWords(late, "p1", game("lost", { endedByMatch: true, stats })).sub, "2 of 18 3BV done when the time ran out.");
  });

  it("counts a resigned seat's 3BV alike in the result table and the panel under the board", () => {
    const over = match({ status: "finished", seats: [
      seat("p1", "Ann", { status: "won", time_ms: 20_000, place: 1, game_id: A }),
      seat("p2", "Bob", { status: "resigned", place: 2, game_id: B, ...progress(1, 9) }),
    ] });
    const stats = { bbbv: 9, bbbv_done: 1, bbbv_given: 1 };
    const panel = endWords(over, "p2", game("lost", { id: B, endedByMatch: true, stats }));
    assert.equal(seatOutcome(over.seats[1]), "Resigned: 1 of 9 3BV");
    assert.equal(panel.sub, "Resigned with 1 of 9 3BV done: 2nd place.");
    // What 3BV is, said once under a result that counts it.
    assert.equal(countsBbbv(over), true);
    assert.match(BBBV_NOTE, /^3BV: the fewest clicks that clear the board\./);
    const cleared = match({ status: "finished", seats: [
      seat("p1", "Ann", { status: "won", time_ms: 20_000, place: 1 }), seat("p2", "Bob", { status: "won", time_ms: 30_000, place: 2 }),
    ] });
    assert.equal(countsBbbv(cleared), false);
    assert.equal(countsBbbv(match({ mode: "coop", status: "finished", seats: [seat("p1", "Ann", { status: "resigned" })] })), true);
  });

  it("knows when another game would leave a race still going on, and asks in words", () => {
    const seats = [seat("p1", "Ann", { status: "playing" }), seat("p2", "Bob", { status: "won", time_ms: 9_000 })];
    const playing = match({ status: "playing", seats });
    assert.equal(stillRacing(playing, "p1"), true);
    assert.equal(stillRacing(playing, "p2"), false, "a cleared seat waits for nothing of its own");
    assert.equal(stillRacing(playing, "p9"), false, "a watcher has no seat");
    assert.equal(stillRacing(match({ status: "countdown", seats: [seat("p1", "Ann")] }), "p1"), true);
    assert.equal(stillRacing(match({ status: "waiting", seats: [seat("p1", "Ann")] }), "p1"), false);
    assert.equal(stillRacing(match({ status: "finished", seats }), "p1"), false);
    assert.equal(stillRacing(match({ status: "playing", seats: [seat("p1", "Ann", { status: "resigned" })] }), "p1"), false);
    const words = awayWords(playing);
    assert.equal(words.title, "Leave the race for a new game?");
    assert.equal(words.text, "Your race goes on without you: its clock keeps running and it still counts for your rating. You can come back to it until it ends.");
    assert.equal(awayWords(match({ rated: false })).text, "Your race goes on without you: its clock keeps running. You can come back to it until it ends.");
    assert.equal(awayWords(match({ mode: "coop" })).title, "Leave the match for a new game?");
  });

  it("speaks of the team in co-op, its penalties once", () => {
    const seats = [
      seat("p1", "Ann", { status: "won", time_ms: 40_530, penalties: 1, place: 1, game_id: A }),
      seat("p2", "Bob", { status: "won", time_ms: 40_530, penalties: 1, place: 1, game_id: A }),
    ];
    const over = match({ mode: "coop", status: "finished", seats });
    const mine = endWords(over, "p1", game("won", { elapsedMs: 35_530 }));
    assert.equal(mine.title, "Cleared together!");
    assert.equal(mine.sub, "Together you cleared the beginner board in 35.530 s + 5 s penalty = 40.530 s.");
    assert.equal(endWords(over, "p9", game("won")).title, "The team won!");
    assert.equal(replayOutcome(over, seats[0]), "the team cleared the board");
    const playing = match({ mode: "coop", status: "playing", seats: [seat("p1", "Ann", { status: "resigned" }), seat("p2", "Bob", { status: "playing" })] });
    assert.equal(playingWords(playing, "p1"), "You resigned: the team plays on without you.");
    assert.equal(playingWords(playing, "p9"), "The team is playing; you are watching.");
  });

  it("tells of each rival's end once, not of their progress nor of the match's end", () => {
    const seats = (a, b, c, extra = {}) => [
      seat("p1", "Ann", { status: a, ...extra }), seat("p2", "Bob", { status: b }), seat("p3", "Cy", { status: c }),
    ];
    const before = match({ status: "playing", seats: seats("playing", "playing", "playing") });
    const moved = match({ status: "playing", version: 2, seats: seats("playing", "playing", "playing", progress(7)) });
    assert.equal(rivalNews(before, moved, "p3"), "");
    const cleared = match({ status: "playing", version: 3, seats: seats("won", "playing", "playing") });
    assert.equal(rivalNews(moved, cleared, "p3"), "Ann cleared the board.");
    assert.equal(rivalNews(cleared, cleared, "p3"), "", "said once");
    assert.equal(rivalNews(moved, cleared, "p1"), "", "one's own end is not a rival's");
    const out = match({ status: "playing", version: 4, seats: seats("won", "lost", "playing") });
    assert.equal(rivalNews(cleared, out, "p3"), "Bob hit a mine and is out.");
    const gone = match({ status: "playing", version: 4, seats: seats("won", "resigned", "playing") });
    assert.equal(rivalNews(cleared, gone, "p3"), "Bob resigned.");
    assert.equal(rivalNews(moved, gone, "p3"), "Ann cleared the board. Bob resigned.");
    assert.equal(rivalNews(null, gone, "p3"), "", "a first view is no news");
    const over = match({ status: "finished", version: 5, seats: seats("won", "resigned", "resigned") });
    assert.equal(rivalNews(gone, over, "p1"), "", "the match's end says it");
  });

  it("links to a room by its id", () => {
    assert.equal(matchUrl(A, { origin: "http://h", pathname: "/" }), `http://h/#/match/${A}`);
  });
});
