// What a new game is made of: the body of POST /games for a level, for today's daily
// board, or for "another one like this", from the player's preferences (question marks,
// no guessing). Pure functions of the preferences and the game. No typed name goes with
// a game any more (the service answers 422): a name is a registered player's, and a game
// is theirs when made with their token.

export const PRESETS = {
  beginner: { width: 9, height: 9, mines: 10 },
  intermediate: { width: 16, height: 16, mines: 40 },
  expert: { width: 30, height: 16, mines: 99 },
};

/** The options every new game takes from the preferences. */
export function gameOptions(prefs) {
  return { question_marks: Boolean(prefs.questionMarks), no_guess: Boolean(prefs.noGuess) };
}

/** A game of `level`: a preset, or "custom" with the custom board kept in the preferences. */
export function levelSettings(prefs, level) {
  const base = gameOptions(prefs);
  if (PRESETS[level]) return { preset: level, ...base };
  const { width, height, mines, first_click: firstClick } = prefs.custom;
  // No-guess boards always start with an opening.
  return { width, height, mines, first_click: base.no_guess ? "zero" : firstClick || "zero", ...base };
}

/** Another game of the same board as `game` (a Game), with today's preferences. */
export function settingsLike(prefs, game) {
  const base = gameOptions(prefs);
  if (game.preset) return { preset: game.preset, ...base };
  const firstClick = base.no_guess ? "zero" : game.firstClick;
  return { width: game.width, height: game.height, mines: game.mines, first_click: firstClick, ...base };
}

/** Today's shared board of a preset (no-guess when that is on). */
export function dailySettings(prefs, preset) {
  return { daily: preset, no_guess: Boolean(prefs.noGuess) };
}

/** Whether a reset (which keeps a game's settings) gives the game the preferences ask for. */
export function resetKeepsPrefs(prefs, game) {
  return game.questionMarks === Boolean(prefs.questionMarks)
    && game.noGuess === Boolean(prefs.noGuess);
}

/** A new game in words, said as it comes: "New game: beginner, 9 by 9, 10 mines." */
export function newGameWords(game) {
  const kind = game.daily ? `today's daily ${game.preset}` : game.preset || "custom";
  const mines = `${game.mines} ${game.mines === 1 ? "mine" : "mines"}`;
  return `New game: ${kind}, ${game.width} by ${game.height}, ${mines}${game.noGuess ? ", no guessing" : ""}.`;
}
