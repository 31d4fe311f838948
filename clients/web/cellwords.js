// How the page names a cell in words, for screen readers and announcements: what it
// shows ("2 mines around", "flagged") and where it is ("row 3, column 5", counted from 1).

const STATE_TEXT = {
  "#": "hidden",
  F: "flagged",
  "?": "question mark",
  "0": "empty",
  "*": "mine",
  X: "exploded mine",
  "!": "wrong flag, no mine",
};

/** What a cell showing view character `ch` is, in words. */
export function cellStateText(ch) {
  if (ch >= "1" && ch <= "8") return ch === "1" ? "1 mine around" : `${ch} mines around`;
  return STATE_TEXT[ch] ?? ch;
}

/** Where cell (x, y) is, as a player counts: rows and columns from 1. */
export function cellPlace(x, y) {
  return `row ${y + 1}, column ${x + 1}`;
}
