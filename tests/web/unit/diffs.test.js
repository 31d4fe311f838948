// The cells of a change in every form the page gets them, and big messages read by scanning.

import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { cellCount, changedCells, firstChar, readMessage, transferables } from "../../../clients/web/diffs.js";
import { Game } from "../../../clients/web/game.js";
import { diff, view } from "./fakes.js";

const unpack = (p) => Array.from({ length: p.length }, (_, k) => [p.x[k], p.y[k], String.fromCharCode(p.code[k])]);

describe("changed cells", () => {
  it("reads the service's triples and the packed form alike", () => {
    const cells = [[0, 0, "1"], [2, 1, "F"], [1, 2, "0"]];
    const packed = changedCells({ cells });
    assert.deepEqual(unpack(packed), cells);
    assert.deepEqual(changedCells({ cells: [], packed }), packed);
    assert.equal(cellCount({ cells }), 3);
    assert.equal(cellCount({ cells: [], packed }), 3);
    assert.equal(firstChar({ cells }), "1");
    assert.equal(firstChar({ cells: [], packed }), "1");
    assert.equal(firstChar({ cells: [] }), null);
  });

  it("reads a big change's runs along a row a cell each, in both forms", () => {
    const cells = [[0, 0, "001"], [2, 1, "F"], [1, 2, "12"]];
    const each = [[0, 0, "0"], [1, 0, "0"], [2, 0, "1"], [2, 1, "F"], [1, 2, "1"], [2, 2, "2"]];
    assert.deepEqual(unpack(changedCells({ cells })), each);
    assert.equal(cellCount({ cells }), 6);
    assert.equal(firstChar({ cells }), "0");
    const read = readMessage(JSON.stringify(diff(1, cells)));
    assert.deepEqual(read.cells, []);
    assert.deepEqual(unpack(read.packed), each);
    const g = new Game(view());
    assert.deepEqual(Array.from(g.apply(read)), [0, 1, 2, 5, 7, 8]);
  });

  it("applies a packed diff as it applies the listed one", () => {
    const listed = new Game(view());
    const packed = new Game(view());
    const d = diff(1, [[0, 0, "1"], [2, 2, "F"]]);
    const message = readMessage(JSON.stringify(d));
    assert.deepEqual(message.cells, [], "the cells come packed");
    assert.deepEqual(packed.apply(message), listed.apply(d));
    assert.deepEqual(packed.cells, listed.cells);
  });
});

describe("readMessage", () => {
  it("scans the cells of a diff and of a result, and parses the rest", () => {
    const d = diff(7, [[10, 200, "3"], [0, 0, "#"], [999, 1, "X"]], { status: "lost" });
    const read = readMessage(JSON.stringify(d));
    assert.equal(read.version, 7);
    assert.equal(read.status, "lost");
    assert.deepEqual(unpack(read.packed), d.cells);
    const result = readMessage(JSON.stringify({ type: "result", id: 3, diff: d }));
    assert.equal(result.id, 3);
    assert.deepEqual(unpack(result.diff.packed), d.cells);
    assert.equal(transferables(result).length, 3);
  });

  it("reads an empty list, and falls back to JSON for anything else", () => {
    const empty = readMessage(JSON.stringify(diff(2, [], { action: "pause", paused: true })));
    assert.equal(empty.packed.length, 0);
    const snapshot = { type: "snapshot", game: view() };
    assert.deepEqual(readMessage(JSON.stringify(snapshot)), snapshot);
    // Not the shape the service writes (spaces): read the slow way, still right.
    const spaced = JSON.stringify(diff(3, [[1, 1, "2"]]), null, 1);
    const read = readMessage(spaced);
    assert.deepEqual(read.cells, [[1, 1, "2"]]);
    assert.equal(read.packed, undefined);
    assert.throws(() => readMessage("{not json"));
  });

  it("packs a big snapshot's board, and a game takes it as it takes rows", () => {
    const board = Array.from({ length: 80 }, (_, y) => Array.from({ length: 60 }, (_, x) => "#F012"[(x + y) % 5]).join(""));
    const read = readMessage(JSON.stringify({ type: "snapshot", game: view({ board }) }));
    assert.deepEqual(read.game.board, []);
    assert.equal(read.game.packed.length, 4800);
    assert.equal(transferables(read).length, 1);
    assert.deepEqual(new Game(read.game).cells, new Game(view({ board })).cells);
    // A small board stays as rows.
    assert.deepEqual(readMessage(JSON.stringify({ type: "snapshot", game: view() })).game.board, view().board);
  });

  it("reads a whole board of a million cells sent as a run a row", () => {
    const cells = [];
    for (let y = 0; y < 1000; y++) cells.push([0, y, Array.from({ length: 1000 }, (_, x) => String(x % 9)).join("")]);
    const read = readMessage(JSON.stringify(diff(1, cells)));
    assert.equal(read.packed.length, 1_000_000);
    assert.deepEqual(unpack(read.packed).slice(-2), [[998, 999, "8"], [999, 999, "0"]]);
  });

  it("reads a million cells", () => {
    const cells = [];
    for (let y = 0; y < 1000; y++) for (let x = 0; x < 1000; x++) cells.push([x, y, String(x % 9)]);
    const read = readMessage(JSON.stringify(diff(1, cells)));
    assert.equal(read.packed.length, 1_000_000);
    assert.deepEqual(unpack(read.packed).slice(-2), cells.slice(-2));
  });
});
