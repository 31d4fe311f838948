// What the zoom bar says of the cell size, from a huge board's whole view (a fraction of
// a pixel) to the largest cells.

import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { cellSizeText, MAX_CELL } from "../../../clients/web/boardview.js";

describe("the cell size in words", () => {
  it("says a fraction of a pixel, never 0 px", () => {
    assert.equal(cellSizeText(0.362), "0.36");
    assert.equal(cellSizeText(0.057), "0.057");
    assert.equal(cellSizeText(0.1), "0.1");
  });

  it("changes with every zoom step, however small the cells", () => {
    for (let size = 0.06; size < MAX_CELL; size *= 1.25) {
      assert.notEqual(cellSizeText(size * 1.25), cellSizeText(size), `${size} px, zoomed in`);
    }
  });

  it("gives tenths under 10 px and whole pixels from there", () => {
    assert.equal(cellSizeText(2.333), "2.3");
    assert.equal(cellSizeText(7), "7");
    assert.equal(cellSizeText(9.96), "10");
    assert.equal(cellSizeText(22), "22");
    assert.equal(cellSizeText(MAX_CELL), "64");
  });
});
