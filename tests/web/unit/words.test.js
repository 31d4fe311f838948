// What the page says and sends, from the service's answers: new games' settings, a move's
// words, a hint's reason and how long it holds, the result's stats.

import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { Game } from "../../../clients/web/game.js";
import { hintAction, outlives, readableReason } from "../../../clients/web/hints.js";
import { howToPlay, moveWords } from "../../../clients/web/moves.js";
import { dailySettings, levelSettings, newGameWords, resetKeepsPrefs, settingsLike } from "../../../clients/web/newgame.js";
import { pauseTitle } from "../../../clients/web/pause.js";
import { boardName, givenWords, statRows, unrankedWhy } from "../../../clients/web/result.js";
import { DEFAULT_PREFS } from "../../../clients/web/storage.js";
import { diff, view } from "./fakes.js";

const prefs = (change = {}) => ({ ...DEFAULT_PREFS, custom: { ...DEFAULT_PREFS.custom }, ...change });

describe("new games", () => {
  it("take the level and the options from the preferences", () => {
    assert.deepEqual(levelSettings(prefs({ player: "Ada" }), "expert"), {
      preset: "expert", question_marks: false, no_guess: false,
    });
    const custom = levelSettings(prefs({ noGuess: true, custom: { width: 20, height: 10, mines: 30, first_click: "none" } }), "custom");
    assert.deepEqual(custom, { width: 20, height: 10, mines: 30, first_click: "zero", question_marks: false, no_guess: true });
  });

  it("send no typed name: the service takes a game's player from the player's token", () => {
    assert.equal("player" in levelSettings(prefs({ player: "Ada" }), "beginner"), false);
    assert.deepEqual(dailySettings(prefs({ player: " Bo " }), "beginner"), { daily: "beginner", no_guess: false });
  });

  it("are like the game on screen, and a reset only when its settings are the preferences'", () => {
    const g = new Game(view({ question_marks: true }));
    assert.deepEqual(settingsLike(prefs(), g), {
      width: 3, height: 3, mines: 2, first_click: "zero", question_marks: false, no_guess: false,
    });
    assert.equal(resetKeepsPrefs(prefs(), g), false);
    assert.equal(resetKeepsPrefs(prefs({ questionMarks: true }), g), true);
    assert.equal(resetKeepsPrefs(prefs({ questionMarks: true, player: "Ada" }), g), true);
  });
});

describe("a new game's words", () => {
  it("say the board that came, as a screen reader cannot see it is new", () => {
    const game = new Game(view({ preset: "beginner", board: Array(9).fill("#########"), mines: 10 }));
    assert.equal(newGameWords(game), "New game: beginner, 9 by 9, 10 mines.");
    assert.equal(newGameWords({ preset: null, width: 30, height: 20, mines: 1, noGuess: true }), "New game: custom, 30 by 20, 1 mine, no guessing.");
    assert.equal(newGameWords({ preset: "expert", daily: "2025-01-02", width: 30, height: 16, mines: 99 }), "New game: today's daily expert, 30 by 16, 99 mines.");
  });
});

describe("how to play, under the controls", () => {
  it("names the keys while the keyboard drives", () => {
    assert.equal(howToPlay("keyboard"), "Space or Enter opens, F flags, C chords, H hint, P pause; arrows move, + and − zoom.");
    assert.equal(howToPlay("keyboard", { match: true, flagMode: true }), "Space or Enter opens, F flags, C chords; arrows move, + and − zoom.");
    assert.equal(howToPlay("mouse"), "Click opens, right click flags; Ctrl + wheel zooms.");
    assert.equal(howToPlay("touch", { flagMode: true }), "Tap flags, long press opens; drag to move around, pinch to zoom.");
  });
});

describe("a move's words", () => {
  it("say what the diff did", () => {
    assert.equal(moveWords(diff(1, [[0, 0, "3"]])), "3 mines around");
    assert.equal(moveWords(diff(1, [[0, 0, "0"], [1, 0, "1"]])), "2 cells opened.");
    assert.equal(moveWords(diff(1, [[0, 0, "F"]], { action: "flag" })), "Flagged.");
    assert.equal(moveWords(diff(1, [[0, 0, "?"]], { action: "flag" })), "Question mark.");
    assert.equal(moveWords(diff(1, [[0, 0, "#"]], { action: "flag" })), "Mark removed.");
    assert.equal(moveWords(diff(1, [])), "");
    assert.equal(moveWords(diff(1, [[0, 0, "X"]], { status: "lost" })), "", "the end has words of its own");
  });
});

describe("a hint", () => {
  it("names cells by row and column from 1, and keeps them as sources", () => {
    const { text, sources } = readableReason("the 2 at (1, 0) needs one more mine than (5, 5)", 3, 3);
    assert.equal(text, "The 2 at row 1, column 2 needs one more mine than row 6, column 6");
    assert.deepEqual(sources, [1]);
  });

  it("holds until its cell is played, the status changes, or a guess's odds move", () => {
    const safe = { i: 4, kind: "safe" };
    const guess = { i: 4, kind: "guess" };
    const before = { status: "playing" };
    const opened = { diff: diff(2, [[0, 0, "1"]]), changed: [0], before, status: "playing" };
    const flagged = { diff: diff(2, [[0, 0, "F"]], { action: "flag" }), changed: [0], before, status: "playing" };
    assert.equal(outlives(safe, opened), true);
    assert.equal(outlives(guess, opened), false);
    assert.equal(outlives(guess, flagged), true);
    assert.equal(outlives(safe, { ...opened, changed: [4] }), false);
    assert.equal(outlives(safe, { ...flagged, before: { status: "ready" } }), false);
  });
});

describe("a hint's button", () => {
  it("opens a safe cell, flags a mine", () => {
    assert.deepEqual(hintAction("safe", "#"), { label: "Open it", steps: ["reveal"], note: "" });
    assert.deepEqual(hintAction("guess", "#"), { label: "Open it", steps: ["reveal"], note: "" });
    assert.deepEqual(hintAction("mine", "#"), { label: "Flag it", steps: ["flag"], note: "" });
  });

  it("says a flag on a safe cell is wrong, and takes it off before opening", () => {
    const a = hintAction("safe", "F");
    assert.equal(a.label, "Unflag and open");
    assert.equal(a.note, "Your flag there is wrong.");
    assert.deepEqual(a.steps, ["unmark", "reveal"]);
    assert.equal(hintAction("guess", "F").label, "Unflag and open");
    assert.equal(hintAction("safe", "?").label, "Clear the mark and open");
  });

  it("has nothing to do on an open cell or a flagged mine", () => {
    assert.equal(hintAction("safe", "3"), null);
    assert.equal(hintAction("mine", "F"), null);
    assert.equal(hintAction("mine", "?"), null);
  });
});

describe("the result", () => {
  it("lists the stats of a lost game as done of total", () => {
    const g = new Game(view({
      status: "lost", version: 3, elapsed_ms: 61_500, preset: "expert",
      stats: { bbbv: 120, bbbv_done: 40, bbbv_per_second: 0.65, efficiency: 0.8, clicks: { total: 50 } },
    }));
    assert.deepEqual(statRows(g).map(([term, value]) => `${term} ${value}`), [
      "Time 1:01.500", "3BV 40 of 120", "3BV/s 0.65", "Clicks 50", "Efficiency 80%",
    ]);
    assert.equal(boardName(g), "the expert board");
  });

  it("shows a match's time with its penalties, so named", () => {
    const g = new Game(view({ status: "won", version: 3, elapsed_ms: 24_149, stats: { bbbv: 10, bbbv_done: 10 } }));
    const [term, value] = statRows(g, { time: "29.149 s", timeTerm: "Time with penalties" })[0];
    assert.equal(`${term}: ${value}`, "Time with penalties: 29.149 s");
  });
});

describe("the result of a shared board's game", () => {
  it("counts the player's own 3BV, as 3BV/s and efficiency do, and names the start's apart", () => {
    const lost = new Game(view({
      status: "lost", version: 3, daily: "2026-11-24", preset: "beginner",
      stats: { bbbv: 12, bbbv_done: 1, bbbv_given: 1, bbbv_per_second: 0, efficiency: 0, clicks: { total: 1 } },
    }));
    assert.equal(statRows(lost)[1][1], "0 of 11");
    assert.equal(givenWords(lost), "Not counted here: the 1 3BV the start opened for you.");
    const won = new Game(view({
      status: "won", version: 9, daily: "2026-11-24", preset: "beginner",
      stats: { bbbv: 12, bbbv_done: 12, bbbv_given: 1, bbbv_per_second: 1.1, efficiency: 1, clicks: { total: 11 } },
    }));
    assert.equal(statRows(won)[1][1], "11");
    // A board whose start gave nothing reads as before.
    const plain = new Game(view({ status: "won", version: 9, stats: { bbbv: 12, bbbv_done: 12, bbbv_given: 0 } }));
    assert.equal(statRows(plain)[1][1], "12");
    assert.equal(givenWords(plain), null);
  });
});

describe("why a win is not ranked", () => {
  const player = { player_id: "p1", player: "Ada", preset: "beginner" };
  const won = { status: "won", version: 9, started_at: "2026-11-24T00:00:00Z", stats: { bbbv: 5, bbbv_done: 5 } };

  it("says a daily board's second game, or a chosen seed, as its start view did", () => {
    const daily = new Game(view({ ...player, daily: "2026-11-24", ranked: false }));
    daily.load(view({ ...player, ...won, daily: "2026-11-24", ranked: false }));
    assert.equal(unrankedWhy(daily), "Not ranked: only your first game of today's board is.");
    const seeded = new Game(view({ ...player, ranked: false }));
    seeded.load(view({ ...player, ...won, ranked: false }));
    assert.equal(unrankedWhy(seeded), "A chosen seed's board can be known beforehand, so it is not ranked.");
  });

  it("says a pause on the clock took it off, which only a diff tells", () => {
    const g = new Game(view({ ...player, ranked: true }));
    g.apply(diff(1, [[0, 0, "1"]], { action: "reveal" }));
    assert.equal(g.ranked, true);
    g.apply(diff(2, [], { action: "pause", paused: true }));
    assert.equal(g.ranked, false);
    assert.equal(g.unrankedByPause, true);
    g.load(view({ ...player, ...won, ranked: false }));
    assert.equal(unrankedWhy(g), "Paused, so this game is not ranked.");
  });

  it("says nothing for a ranked, assisted, anonymous or custom game", () => {
    assert.equal(unrankedWhy(new Game(view({ ...player, ...won, ranked: true }))), null);
    assert.equal(unrankedWhy(new Game(view({ ...player, ...won, ranked: false, stats: { assisted: true, hints: 1 } }))), null);
    assert.equal(unrankedWhy(new Game(view({ ...won, preset: "beginner", ranked: false }))), null);
    assert.equal(unrankedWhy(new Game(view({ ...player, ...won, preset: null, ranked: false }))), null);
  });
});

describe("the Pause button's tooltip", () => {
  it("says a pause unranks a game only where the game could be ranked", () => {
    const ranked = new Game(view({ player_id: "p1", preset: "beginner", ranked: true }));
    assert.match(pauseTitle(ranked, false), /a game paused once its clock runs is not ranked$/);
    const custom = new Game(view({ player_id: "p1", ranked: false }));
    assert.equal(pauseTitle(custom, false), "Pause (P): stop the clock and hide the board");
    assert.equal(pauseTitle(custom, true), "Resume (P): show the board and start the clock again");
  });

  it("keeps saying it after a pause and a resume", () => {
    const g = new Game(view({ player_id: "p1", preset: "beginner", ranked: true }));
    g.apply(diff(1, [[0, 0, "1"]], { action: "reveal" }));
    g.apply(diff(2, [], { action: "pause", paused: true }));
    assert.equal(pauseTitle(g, true),
      "Resume (P): show the board and start the clock again; paused on its clock, this game is no longer ranked");
    g.apply(diff(3, [], { action: "resume", paused: false, at: 2000 }));
    assert.equal(g.ranked, false);
    assert.equal(pauseTitle(g, false),
      "Pause (P): stop the clock and hide the board; paused on its clock, this game is no longer ranked");
  });
});
