// Where the view of a new board starts: on what is open at its start.

import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { openedBox } from "../../../clients/web/board.js";

/** A board from rows of "#" (hidden) and anything else (open). */
function board(rows) {
  const width = rows[0].length;
  const cells = rows.join("");
  return { width, height: rows.length, isHidden: (i) => cells[i] === "#" };
}

describe("the box of a board's open start", () => {
  it("holds the opened cells, wherever they lie", () => {
    const b = board([
      "00##########",
      "01##########",
      "1###########",
      "############",
    ]);
    assert.deepEqual(openedBox(b), [0, 0, 1, 2]);
  });

  it("takes every opened cell, however far apart", () => {
    const b = board([
      "########",
      "#1######",
      "########",
      "######2#",
    ]);
    assert.deepEqual(openedBox(b), [1, 1, 6, 3]);
  });

  it("is none on a board with every cell hidden", () => {
    assert.equal(openedBox(board(["###", "###"])), null);
  });
});
