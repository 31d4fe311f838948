// The page's copy of a game: version order, views, the clock.

import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { Game } from "../../../clients/web/game.js";
import { diff, stamp, view } from "./fakes.js";

const rows = (g) => Array.from({ length: g.height }, (_, y) => Array.from({ length: g.width }, (_, x) => g.char(y * g.width + x)).join(""));

describe("Game", () => {
  it("places versions against the one held", () => {
    const g = new Game(view({ version: 4 }));
    assert.equal(g.place(3), "old");
    assert.equal(g.place(4), "old");
    assert.equal(g.place(5), "next");
    assert.equal(g.place(7), "ahead");
  });

  it("applies the next diff's cells and state, and refuses any other version", () => {
    const g = new Game(view());
    const changed = g.apply(diff(1, [[0, 0, "1"], [2, 2, "F"]], { at: 250 }));
    assert.deepEqual([...changed], [0, 8]);
    assert.deepEqual(rows(g), ["1##", "###", "##F"]);
    assert.equal(g.version, 1);
    assert.equal(g.status, "playing");
    assert.equal(g.elapsedMs, 250);
    assert.throws(() => g.apply(diff(1, [[1, 1, "2"]])), /does not follow/);
    assert.throws(() => g.apply(diff(3, [[1, 1, "2"]])), /does not follow/);
    assert.equal(g.char(4), "#", "a refused diff changes nothing");
  });

  it("applies a big change's runs, each character to the next cell of the row", () => {
    const g = new Game(view());
    const changed = g.apply(diff(1, [[0, 0, "001"], [1, 1, "F"], [1, 2, "12"]]));
    assert.deepEqual([...changed], [0, 1, 2, 4, 7, 8]);
    assert.deepEqual(rows(g), ["001", "#F#", "#12"]);
  });

  it("tells a game its match's end stopped from one lost on a mine", () => {
    const hit = new Game(view({ version: 1, status: "playing", board: ["1##", "###", "###"] }));
    hit.apply(diff(2, [[2, 2, "X"], [2, 0, "*"]], { status: "lost" }));
    assert.equal(hit.endedByMatch, false);
    // A penalty race's earlier hit shows X too: the diff's move tells.
    const ended = new Game(view({ version: 1, status: "playing", board: ["1#X", "###", "###"] }));
    ended.apply(diff(2, [[2, 2, "*"]], { status: "lost", action: "end", x: null, y: null }));
    assert.equal(ended.endedByMatch, true);
    ended.load(view({ version: 2, status: "lost", board: ["1#X", "###", "##*"], ended_by: "match" }));
    assert.equal(ended.endedByMatch, true);
    // From a view alone: what the service says, not what the board suggests.
    assert.equal(new Game(view({ version: 3, status: "lost", board: ["1#X", "###", "##*"], ended_by: "match" })).endedByMatch, true);
    assert.equal(new Game(view({ version: 3, status: "lost", board: ["1#X", "###", "##*"] })).endedByMatch, false);
    assert.equal(new Game(view({ version: 3, status: "playing", board: ["1#X", "###", "###"] })).endedByMatch, false);
  });

  it("tells a race seat's loss, whose mines the match's end shows, from a game the end stopped", () => {
    const g = new Game(view({ version: 1, status: "playing", board: ["1##", "###", "###"] }));
    g.apply(diff(2, [[2, 2, "X"]], { status: "lost" }));
    g.apply(diff(3, [[2, 0, "*"]], { status: "lost", action: "end", x: null, y: null }));
    assert.equal(g.endedByMatch, false);
    assert.deepEqual(rows(g), ["1#*", "###", "##X"]);
  });

  it("runs a match game's clock from its start, not from a view taken in the countdown", () => {
    const g = new Game(view({ status: "playing", board: ["1##", "###", "###"], started_at: stamp(3000), elapsed_ms: 0, server_time: stamp(0) }));
    assert.equal(g.elapsedAt(Date.parse(stamp(2000))), 0);
    assert.equal(g.elapsedAt(Date.parse(stamp(3000))), 0);
    assert.equal(g.elapsedAt(Date.parse(stamp(4500))), 1500);
  });

  it("ignores cells off the board rather than writing past it", () => {
    const g = new Game(view());
    assert.deepEqual([...g.apply(diff(1, [[3, 0, "1"], [0, 3, "1"], [1, 1, "3"]]))], [4]);
  });

  it("takes a view that is not older, and reports the cells it changed", () => {
    const g = new Game(view({ version: 2, status: "playing", board: ["1##", "###", "###"] }));
    assert.equal(g.take(view({ version: 1 })), null);
    assert.deepEqual(rows(g), ["1##", "###", "###"]);
    // The same version again (a fresh snapshot) is taken: it may show what a paused one hid.
    assert.deepEqual([...g.take(view({ version: 2, status: "playing", board: ["12#", "###", "###"] }))], [1]);
    assert.deepEqual([...g.take(view({ version: 5, status: "playing", board: ["12#", "###", "###"] }))], []);
    assert.equal(g.version, 5);
    assert.equal(g.take({ ...view({ version: 9 }), id: "f".repeat(32) }), null, "another game's view");
  });

  it("runs the clock from the last time reference, and stops it when paused or over", () => {
    const g = new Game(view({
      version: 3, status: "playing", started_at: stamp(0), elapsed_ms: 5000, server_time: stamp(5000),
    }));
    assert.equal(g.elapsedAt(Date.parse(stamp(7500))), 7500);
    g.apply(diff(4, [], { action: "pause", at: 8000, paused: true }));
    assert.equal(g.paused, true);
    assert.equal(g.covered, true);
    assert.equal(g.elapsedAt(Date.parse(stamp(60_000))), 8000);
    const ready = new Game(view());
    assert.equal(ready.elapsedAt(Date.parse(stamp(60_000))), 0);
  });

  it("stops the clock of a seat that resigned, whatever view or diff comes until the end", () => {
    const g = new Game(view({
      version: 3, status: "playing", started_at: stamp(0), elapsed_ms: 5000, server_time: stamp(5000),
    }));
    g.halt(Date.parse(stamp(6000)));
    assert.equal(g.elapsedAt(Date.parse(stamp(9000))), 6000);
    g.take(view({ version: 3, status: "playing", started_at: stamp(0), elapsed_ms: 8000, server_time: stamp(8000) }));
    assert.equal(g.elapsedAt(Date.parse(stamp(20_000))), 6000, "a snapshot does not start it again");
    g.halt(Date.parse(stamp(30_000)));
    assert.equal(g.elapsedAt(Date.parse(stamp(30_000))), 6000, "halted once");
    g.apply(diff(4, [], { action: "end", status: "lost", at: 600_000 }));
    assert.equal(g.elapsedAt(Date.parse(stamp(700_000))), 600_000, "the match's end says the time");
  });

  it("keeps its cells through a pause, which changes none of them", () => {
    const g = new Game(view({ version: 2, status: "playing", started_at: stamp(0), board: ["1##", "###", "###"] }));
    g.apply(diff(3, [], { action: "pause", paused: true }));
    assert.equal(g.covered, true);
    assert.deepEqual(rows(g), ["1##", "###", "###"]);
    g.apply(diff(4, [], { action: "resume", paused: false }));
    assert.equal(g.covered, false);
    assert.equal(g.resumeFrom, 4);
  });

  it("treats a paused view's cells as a cover until a view of the running game", () => {
    const g = new Game(view({ version: 3, status: "playing", paused: true }));
    assert.equal(g.covered, true);
    assert.equal(g.resumeFrom, null, "a feed resumed from here would never send the cells");
    g.apply(diff(4, [], { action: "resume", paused: false }));
    assert.equal(g.paused, false);
    assert.equal(g.covered, true, "the cells held are still the cover");
    assert.deepEqual([...g.take(view({ version: 4, status: "playing", board: ["1##", "###", "###"] }))], [0]);
    assert.equal(g.covered, false);
    assert.equal(g.resumeFrom, 4);
    const over = new Game(view({ version: 9, status: "lost", paused: true, board: ["1X#", "###", "###"] }));
    assert.equal(over.covered, false, "a finished game is never covered");
  });

  it("tells a number whose flags are all placed", () => {
    const g = new Game(view({ version: 1, status: "playing", board: ["1F#", "###", "###"] }));
    assert.equal(g.canChord(0), true);
    const unflagged = new Game(view({ version: 1, status: "playing", board: ["1##", "###", "###"] }));
    assert.equal(unflagged.canChord(0), false);
    assert.deepEqual(unflagged.hiddenAround(0), [1, 3, 4]);
  });
});
