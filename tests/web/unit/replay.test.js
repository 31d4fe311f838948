// A replay's board at any move, from the cells the service recorded.

import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { moveTimes, ReplayGame } from "../../../clients/web/replay.js";
import { stepWords } from "../../../clients/web/viewer.js";
import { stamp } from "./fakes.js";

const rows = (g) => Array.from({ length: g.height }, (_, y) => Array.from({ length: g.width }, (_, x) => g.char(y * g.width + x)).join(""));

/** A 3x3 game with mines at (2, 0) and (2, 2), lost on its fifth move. */
function replay(change = {}) {
  return {
    id: "0123456789abcdef0123456789abcdef",
    width: 3, height: 3, mines: 2, preset: null, first_click: "safe", no_guess: false,
    question_marks: true, daily: null, player: null, seed: 1, status: "lost",
    layout: ["..*", "...", "..*"],
    opened: [],
    moves: [
      { version: 1, action: "flag", x: 2, y: 0, at: stamp(0), mark: "question", cells: [[2, 0, "?"]] },
      { version: 2, action: "reveal", x: 0, y: 0, at: stamp(1000), cells: [[0, 0, "0"], [1, 0, "1"], [0, 1, "0"], [1, 1, "2"], [0, 2, "0"], [1, 2, "1"]] },
      { version: 3, action: "pause", x: null, y: null, at: stamp(2000), cells: [] },
      { version: 4, action: "resume", x: null, y: null, at: stamp(12_000), cells: [] },
      { version: 5, action: "reveal", x: 2, y: 2, at: stamp(13_000), cells: [[2, 2, "X"], [2, 0, "*"]] },
    ],
    complete: true,
    created_at: stamp(0), started_at: stamp(1000), ended_at: stamp(13_000), elapsed_ms: 2000,
    stats: {}, fatal: { x: 2, y: 2, forced_guess: false },
    ...change,
  };
}

describe("ReplayGame", () => {
  it("shows each move's recorded cells, forward and back, whatever the move asked", () => {
    const g = new ReplayGame(replay());
    assert.equal(g.total, 5);
    assert.deepEqual(rows(g), ["###", "###", "###"]);
    assert.equal(g.statusNow, "ready");
    // An explicit mark is what was recorded, not a cycle worked out here.
    assert.deepEqual(g.seek(1), [2]);
    assert.deepEqual(rows(g), ["##?", "###", "###"]);
    g.seek(5);
    assert.deepEqual(rows(g), ["01*", "02#", "01X"]);
    assert.equal(g.statusNow, "lost");
    assert.equal(g.steps[4].exploded, true);
    assert.equal(g.steps[1].opened, 6);
    assert.equal(g.steps[0].shows, "?");
    g.seek(2);
    assert.deepEqual(rows(g), ["01?", "02#", "01#"]);
    assert.equal(g.statusNow, "playing");
    g.seek(0);
    assert.deepEqual(rows(g), ["###", "###", "###"]);
  });

  it("steps a move recorded as runs forward and back like one of single cells", () => {
    const g = new ReplayGame(replay({
      moves: [
        { version: 1, action: "reveal", x: 0, y: 0, at: stamp(0), cells: [[0, 0, "01"], [0, 1, "02"], [0, 2, "01"]] },
      ],
    }));
    assert.deepEqual(g.seek(1), [0, 1, 3, 4, 6, 7]);
    assert.deepEqual(rows(g), ["01#", "02#", "01#"]);
    assert.equal(g.steps[0].opened, 6);
    g.seek(0);
    assert.deepEqual(rows(g), ["###", "###", "###"]);
  });

  it("counts the flags on the board for the mines left", () => {
    const g = new ReplayGame(replay({
      moves: [
        { version: 1, action: "flag", x: 2, y: 0, at: stamp(0), cells: [[2, 0, "F"]] },
        { version: 2, action: "flag", x: 1, y: 1, at: stamp(500), cells: [[1, 1, "F"]] },
        { version: 3, action: "reveal", x: 2, y: 2, at: stamp(1000), cells: [[2, 2, "X"], [1, 1, "!"]] },
      ],
    }));
    g.seek(2);
    assert.equal(g.minesLeft(), 0);
    g.seek(3);
    assert.equal(g.minesLeft(), 0, "a wrong flag shown after a loss is still a flag");
    g.seek(1);
    assert.equal(g.minesLeft(), 1);
  });

  it("starts from the cells open before the first move", () => {
    const g = new ReplayGame(replay({ opened: [[0, 0, "0"], [1, 0, "1"]], daily: "2026-01-01" }));
    assert.deepEqual(rows(g), ["01#", "###", "###"]);
    assert.equal(g.statusNow, "playing");
    g.seek(2);
    g.seek(0);
    assert.deepEqual(rows(g), ["01#", "###", "###"]);
  });

  it("times moves on the game's clock, paused time left out", () => {
    assert.deepEqual(moveTimes(replay()), [0, 0, 1000, 1000, 2000]);
    const g = new ReplayGame(replay());
    assert.equal(g.positionAt(999), 2);
    assert.equal(g.positionAt(1000), 4);
    assert.equal(g.positionAt(2000), 5);
    assert.equal(g.duration, 2000);
  });
});

describe("stepWords", () => {
  it("says what each kind of step did, the end of a match included", () => {
    const g = new ReplayGame(replay({
      moves: [
        ...replay().moves.slice(0, 4),
        { version: 5, action: "end", x: null, y: null, at: stamp(13_000), cells: [[2, 0, "*"], [2, 2, "*"]] },
      ],
      fatal: null,
    }));
    const words = g.steps.map(stepWords);
    assert.deepEqual(words, [
      "question-marked row 1, column 3",
      "opened row 1, column 1 (6 cells)",
      "paused the game",
      "resumed the game",
      "the match ended before the board was cleared",
    ]);
  });

  it("says a match's end after a race seat's loss showed the other mines", () => {
    const g = new ReplayGame(replay({
      moves: [
        ...replay().moves.slice(0, 4),
        { version: 5, action: "reveal", x: 2, y: 2, at: stamp(13_000), cells: [[2, 2, "X"]] },
        { version: 6, action: "end", x: null, y: null, at: stamp(20_000), cells: [[2, 0, "*"]] },
      ],
    }));
    assert.deepEqual(g.steps.slice(4).map(stepWords), [
      "opened row 3, column 3: a mine",
      "the match ended: the other mines show",
    ]);
  });
});
