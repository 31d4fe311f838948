// What a co-op teammate's move is said to have done, beside their marker.
import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { didWords } from "../../../clients/web/coop.js";

describe("didWords", () => {
  const cases = [
    ["reveal", 1, "opened 1 cell"],
    ["reveal", 12, "opened 12 cells"],
    ["chord", 3, "opened 3 cells"],
    ["chord", 0, "no change"],
    ["flag", 1, "marked"],
  ];
  for (const [action, count, words] of cases) {
    it(`${action} changing ${count}: "${words}"`, () => assert.equal(didWords(action, count), words));
  }
});
