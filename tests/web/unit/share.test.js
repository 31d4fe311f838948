// How a link leaves the page: the share sheet where there is one, else a copy, else the
// link selected for the player to copy, and said so.

import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { canShare, copyField, SELECT_TO_COPY, shareSheet } from "../../../clients/web/share.js";

function field(value = "http://example.test/#/match/1") {
  return { value, selected: false, select() { this.selected = true; } };
}

describe("a link's copy", () => {
  it("copies with the clipboard where there is one", async () => {
    const written = [];
    const f = field();
    assert.equal(await copyField(f, { clipboard: { writeText: async (t) => written.push(t) }, doc: null }), true);
    assert.deepEqual(written, [f.value]);
    assert.equal(f.selected, false);
  });

  it("over plain HTTP (no clipboard) selects the link, and copies it when the browser lets it", async () => {
    const f = field();
    assert.equal(await copyField(f, { clipboard: undefined, doc: { execCommand: () => false } }), false);
    assert.equal(f.selected, true);
    assert.equal(await copyField(field(), { clipboard: undefined, doc: { execCommand: (c) => c === "copy" } }), true);
    const refused = { writeText: async () => { throw new Error("not allowed"); } };
    assert.equal(await copyField(field(), { clipboard: refused, doc: {} }), false);
    assert.equal(SELECT_TO_COPY, "Select the link and copy it.");
  });
});

describe("the share sheet", () => {
  const data = { title: "Minesweeper", url: "http://example.test/#/match/1" };

  it("is offered only where the browser has one", async () => {
    assert.equal(canShare(data, {}), false);
    assert.equal(canShare(data, { share: async () => {} }), true);
    assert.equal(canShare(data, { share: async () => {}, canShare: () => false }), false);
    assert.equal(await shareSheet(data, {}), "none");
  });

  it("says whether it shared, was closed, or failed (then the page copies instead)", async () => {
    const shared = [];
    assert.equal(await shareSheet(data, { share: async (d) => shared.push(d) }), "shared");
    assert.deepEqual(shared, [data]);
    const abort = Object.assign(new Error("closed"), { name: "AbortError" });
    assert.equal(await shareSheet(data, { share: async () => { throw abort; } }), "cancelled");
    assert.equal(await shareSheet(data, { share: async () => { throw new Error("no"); } }), "none");
  });
});
