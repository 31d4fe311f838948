// What the page says of a daily board the player already played today: how it went, and
// what another go at it does (the service counts every finished game in the player's
// stats, and lists every win without a hint on the day's leaderboard, each on its own).

import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { dailyRecord, playedNote } from "../../../clients/web/daily.js";

const won = (elapsedMs, id = `w${elapsedMs}`) => ({ id, won: true, elapsedMs, assisted: false });
const lost = (elapsedMs, id = `l${elapsedMs}`) => ({ id, won: false, elapsedMs, assisted: false });

describe("a daily board played today", () => {
  it("says nothing of a board not played yet", () => {
    assert.equal(dailyRecord([]), null);
    assert.equal(dailyRecord(undefined), null);
    assert.equal(playedNote([]), null);
  });

  it("gives the time of a win, or says the game was lost", () => {
    assert.equal(dailyRecord([won(41200)]).words, "won in 41.200 s");
    assert.equal(dailyRecord([lost(12300)]).words, "lost");
    assert.equal(dailyRecord([lost(9000), won(75_500), won(61_250)]).words, "best of 3 games: 1:01.250");
    assert.equal(dailyRecord([lost(9000), lost(3000)]).words, "2 games, none won");
    assert.equal(dailyRecord([lost(9000), won(50_000)]).best, 50_000);
  });

  it("tells what another go does before it is played", () => {
    assert.equal(
      playedNote([won(41200)]),
      "You played this board today: won in 41.200 s. Another go counts in your stats, "
        + "but only your first game of the day is ranked.",
    );
    assert.match(playedNote([lost(2000)]), /^You played this board today: lost\. Another go counts in your stats/);
  });
});
