// This browser's player and the profile page's words: names checked before they are sent,
// the service's refusals in words, a guest made once and kept, and the stats and recent
// games as the profile lists them.

import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { ApiError } from "../../../clients/web/api.js";
import { Me, nameProblem, playingAs, renameMessage } from "../../../clients/web/player.js";
import { ratingLines, recentWords, statRows, totals, totalsWords } from "../../../clients/web/profile.js";

const board = (change = {}) => ({
  played: 0, won: 0, best_ms: null, best_bbbv_per_s: null, streak: 0, best_streak: 0, ...change,
});
const stats = (beginner = {}) => {
  const preset = () => ({ classic: board(), no_guess: board() });
  return { beginner: { ...preset(), ...beginner }, intermediate: preset(), expert: preset() };
};

describe("names", () => {
  it("shows the player's own game under their name as it is now, a rename included", () => {
    const game = { player: "Old-Name", playerId: "p1" };
    assert.equal(playingAs(game, { id: "p1", name: "New-Name" }), "New-Name");
    assert.equal(playingAs(game, { id: "p2", name: "Someone" }), "Old-Name", "another player's game keeps its name");
    assert.equal(playingAs(game, null), "Old-Name");
    assert.equal(playingAs({ player: null, playerId: null }, { id: "p1", name: "New-Name" }), null, "an anonymous game names nobody");
  });

  it("are 2 to 20 letters, digits, dashes or underscores", () => {
    for (const ok of ["Al", "CalmOtter-4821", "a_b-c", "x".repeat(20)]) assert.equal(nameProblem(ok), null, ok);
    assert.match(nameProblem(""), /Type a name/);
    assert.match(nameProblem("A"), /at least 2/);
    assert.match(nameProblem("x".repeat(21)), /at most 20/);
    for (const bad of ["Ada Lovelace", "<script>", "née", "a.b"]) assert.match(nameProblem(bad), /letters, digits/, bad);
  });

  it("refused by the service are explained", () => {
    const taken = new ApiError(409, { code: "name_taken", detail: "somebody is already called 'ada'" });
    assert.match(renameMessage(taken, "Ada"), /“Ada” is taken: names are unique, ignoring upper and lower case/);
    assert.match(renameMessage(new ApiError(422, { code: "invalid_request" }), "a b"), /does not take “a b”/);
    assert.match(renameMessage(new ApiError(0, null), "Ada"), /Could not change the name: The server cannot be reached|network error/);
  });
});

/** A service that answers what a test says, and records what was asked. */
function service(answers) {
  const asked = [];
  const api = {};
  for (const method of ["register", "me", "rename"]) {
    api[method] = async (...args) => {
      asked.push([method, ...args]);
      const answer = answers[method].shift();
      if (answer instanceof Error) throw answer;
      return answer;
    };
  }
  return { api, asked };
}

function memory(saved = null) {
  let value = saved;
  return { get: () => value, set: (p) => { value = { ...p }; }, forget: () => { value = null; } };
}

const view = (id, name) => ({ id, name, bot: false });

describe("this browser's player", () => {
  it("is a guest made on the first visit, once, then kept", async () => {
    const { api, asked } = service({ register: [{ player: view("a".repeat(32), "CalmOtter-4821"), token: "t1" }] });
    const store = memory();
    const seen = [];
    const me = new Me({ api, store, onChange: (p, how) => seen.push([p.name, how.registered]) });
    const [one, two] = await Promise.all([me.token(), me.token()]);
    assert.equal(one, "t1");
    assert.equal(two, "t1");
    assert.deepEqual(asked, [["register"]]);
    assert.deepEqual(store.get(), { id: "a".repeat(32), name: "CalmOtter-4821", token: "t1" });
    assert.deepEqual(seen, [["CalmOtter-4821", true]]);
  });

  it("is checked with the service on a later visit, taking a name changed elsewhere", async () => {
    const kept = { id: "b".repeat(32), name: "Old", token: "t2" };
    const { api, asked } = service({ me: [view(kept.id, "New")] });
    const store = memory(kept);
    const me = new Me({ api, store });
    assert.equal(me.name, "Old");
    assert.equal(await me.token(), "t2");
    assert.equal(me.name, "New");
    assert.equal(store.get().name, "New");
    assert.deepEqual(asked, [["me", "t2"]]);
  });

  it("starts again as a guest when the service no longer knows the token", async () => {
    const { api } = service({
      me: [new ApiError(401, { code: "unauthorized" })],
      register: [{ player: view("c".repeat(32), "BoldLynx-7"), token: "t3" }],
    });
    const store = memory({ id: "b".repeat(32), name: "Gone", token: "old" });
    const me = new Me({ api, store });
    assert.equal(await me.token(), "t3");
    assert.equal(store.get().name, "BoldLynx-7");
  });

  it("keeps its token when the service cannot be reached, and plays anonymously meanwhile", async () => {
    const down = new ApiError(0, null);
    const { api } = service({
      me: [down],
      register: [down, { player: view("d".repeat(32), "Keen-1"), token: "t4" }],
    });
    const kept = new Me({ api, store: memory({ id: "e".repeat(32), name: "Kept", token: "t5" }) });
    assert.equal(await kept.token(), "t5");
    const guest = new Me({ api, store: memory() });
    assert.equal(await guest.token(), null);
    assert.equal(await guest.token(), "t4"); // the next game tries again
  });

  it("is renamed with its token; a refusal changes nothing", async () => {
    const taken = new ApiError(409, { code: "name_taken" });
    const { api, asked } = service({ me: [view("f".repeat(32), "Ada")], rename: [taken, view("f".repeat(32), "Grace")] });
    const store = memory({ id: "f".repeat(32), name: "Ada", token: "t6" });
    const me = new Me({ api, store });
    await assert.rejects(me.rename("Bob"), (err) => err.code === "name_taken");
    assert.equal(me.name, "Ada");
    await me.rename("Grace");
    assert.equal(me.name, "Grace");
    assert.equal(store.get().name, "Grace");
    assert.deepEqual(asked.slice(1), [["rename", "t6", "Bob"], ["rename", "t6", "Grace"]]);
  });
});

describe("the profile", () => {
  it("lists every preset, classic and no-guess, with bests and streaks", () => {
    const rows = statRows(stats({
      no_guess: board({ played: 3, won: 2, best_ms: 12345, best_bbbv_per_s: 2.345, streak: 1, best_streak: 2 }),
    }));
    assert.deepEqual(rows.map((r) => r.label), [
      "Beginner", "Beginner, no guessing", "Intermediate", "Intermediate, no guessing", "Expert", "Expert, no guessing",
    ]);
    assert.deepEqual(rows[1], {
      key: "beginner-noguess", label: "Beginner, no guessing",
      won: "2 of 3", best: "12.345 s", rate: "2.35", streak: "1 (best 2)",
    });
    assert.equal(rows[0].best, "—");
    assert.equal(rows[0].rate, "—");
    assert.deepEqual(totals(stats({ classic: board({ played: 4, won: 1 }), no_guess: board({ played: 3, won: 2 }) })), { played: 7, won: 3 });
    // The stats count the standard boards' games only: the summary says so.
    assert.equal(totalsWords(stats({ classic: board({ played: 1, won: 0 }) })), "1 game finished on the standard boards, 0 won");
  });

  it("says what each recent game was, and which have a replay", () => {
    const game = {
      id: "1".repeat(32), kind: "game", preset: "expert", no_guess: false, daily: null, result: "won",
      elapsed_ms: 75500, bbbv_per_second: 1.5, assisted: false, ended_at: "2026-11-23T10:00:00.000Z",
    };
    assert.deepEqual(recentWords(game), { outcome: "Won", detail: "Expert · 1:15.500 · 1.50 3BV/s", replayable: true, match: false });
    const lost = recentWords({ ...game, preset: null, no_guess: true, result: "lost", elapsed_ms: 3000, assisted: true });
    assert.deepEqual(lost, { outcome: "Lost", detail: "Custom, no guessing · 3.000 s · assisted", replayable: true, match: false });
    assert.match(recentWords({ ...game, daily: "2026-11-23", preset: "beginner" }).detail, /^Beginner, daily 2026-11-23/);
    const match = recentWords({ ...game, kind: "match", preset: "beginner", bbbv_per_second: null });
    assert.deepEqual(match, { outcome: "Won", detail: "Match, beginner · 1:15.500", replayable: false, match: true });
  });
});

describe("ratingLines", () => {
  it("says a rating is provisional until it is established", () => {
    const race = { rating: 1623.4, deviation: 484.2, games: 1, provisional: true };
    assert.deepEqual(ratingLines({ race }), ["Race: 1623 ± 484 (1 game, provisional)"]);
    const settled = { ...race, games: 7, provisional: false };
    assert.deepEqual(ratingLines({ race: settled }), ["Race: 1623 ± 484 (7 games)"]);
  });
});
