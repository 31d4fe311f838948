// What the zoom bar says of the cell size, from a huge board's whole view (a fraction of
// a pixel) to the largest cells.

import assert from "node:assert/strict";
import { describe, it } from "node:test";

import {
  cellSizeText, deviceCell, MAX_CELL, MIN_MOUSE_CELL, MIN_TOUCH_CELL, tooSmall,
} from "../../../clients/web/boardview.js";

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

describe("cells on a screen whose pixel ratio is not whole", () => {
  const ratios = [1, 1.25, 1.5, 1.75, 2, 2.25, 2.5, 2.625, 2.75, 3, 3.5];

  it("are whole device pixels, never larger than asked", () => {
    for (const dpr of ratios) {
      for (const size of [8, 22, 29.9, 30, 31.3, 40]) {
        const cell = deviceCell(size, dpr);
        assert.ok(cell <= size + 1e-9 && cell > size - 1 / dpr, `${size} px at ${dpr}`);
        assert.ok(Math.abs(cell * dpr - Math.round(cell * dpr)) < 1e-6, `${size} px at ${dpr}`);
      }
    }
  });

  it("are playable at the smallest playable size, as the screen rounds it", () => {
    assert.equal(deviceCell(30, 2.625), 78 / 2.625);
    for (const dpr of ratios) {
      for (const least of [MIN_TOUCH_CELL, MIN_MOUSE_CELL]) {
        assert.equal(tooSmall(deviceCell(least, dpr), least, dpr), false, `${least} px at ${dpr}`);
        assert.equal(tooSmall(deviceCell(least - 1, dpr), least, dpr), true, `${least - 1} px at ${dpr}`);
      }
    }
  });
});
