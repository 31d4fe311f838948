"""The screen of ``minesweeper play``, fitted to a terminal of any size.

From top to bottom: the game's name and board, the counters (with the cursor's cell as
``(x, y)``, as hints name cells), the part of the board that fits, and under it only what
there is to say: the end of the game, a message, and the keys, each cut to the width.
What does not fit is said: ``<`` and ``>`` at the ends of the rows when columns are out
of view, a line ``^ 3 rows above`` / ``v 4 rows below`` when rows are. The cursor is in
brackets, so it shows on any cell whatever its colours. No line is as wide as the
terminal, so none ever wraps.

Pure: :func:`frame` returns the lines and where the view over the board now starts.
"""

from __future__ import annotations

import textwrap

import msgspec

from . import text
from .wire import GameView, Hint

__all__ = ["Scene", "fit_keys", "frame", "help_line"]

# A hinted cell: green when safe, red for a mine, yellow for a guess; underlined without colour.
HINTED = {"safe": "\x1b[30;42m", "mine": "\x1b[30;41m", "guess": "\x1b[30;43m"}
UNDERLINE = "\x1b[4m"
REVERSE = text.REVERSE

# The keys, most needed first: a narrow terminal drops them from the end.
_PLAYER_KEYS = [("arrows", "move"), ("space", "reveal"), ("f", "flag"), ("q", "quit"),
                ("c", "chord"), ("h", "hint"), ("p", "pause"), ("n", "new")]
_WATCHER_KEYS = [("arrows", "move"), ("q", "quit"), ("n", "new game")]


def help_line(width: int, watching: bool) -> str:
    """The keys, as many as fit in ``width`` characters (quitting always does)."""
    keys = _WATCHER_KEYS if watching else _PLAYER_KEYS
    prefix = "watching only: " if watching else ""
    for gap in ("  ", " "):
        for count in range(len(keys), 0, -1):
            shown = keys[:count]
            if ("q", "quit") not in shown:
                shown = [*shown[:-1], ("q", "quit")]
            line = prefix + gap.join(f"{k} {word}" for k, word in shown)
            if len(line) <= width:
                return line
    return "q quit"[:width]


def fit_keys(keys: str, width: int) -> str:
    """``keys`` (a race's: ``"arrows/wasd move  space reveal ... q q resign/quit"``) cut
    to ``width`` by dropping keys from the end, the one that quits (``q ...``) kept."""
    items = keys.split("  ")
    quitting = next((item for item in reversed(items) if item.startswith("q ")), None)
    for gap in ("  ", " "):
        for count in range(len(items), 0, -1):
            shown = items[:count]
            if quitting is not None and quitting not in shown:
                shown = [*shown[:-1], quitting]
            line = gap.join(shown)
            if len(line) <= width:
                return line
    return _fit(quitting or keys, width)


class Scene(msgspec.Struct, frozen=True):
    """What the screen shows: the game, the cursor, the view's top-left cell (``origin``,
    kept from the last frame so the view moves only when the cursor leaves it), the
    hint on show, a message, the time, and how to draw cells."""

    view: GameView
    cursor: tuple[int, int]
    origin: tuple[int, int]
    seconds: int
    watching: bool
    colour: bool
    hidden: str = "."
    hint: Hint | None = None
    message: str = ""
    # A race dresses the same board: its own lines above it (in place of the game's two),
    # the seats under it (in place of the game's outcome), and its own keys.
    title: tuple[str, ...] = ()
    panel: tuple[str, ...] = ()
    keys: str = ""


def _fit(line: str, width: int) -> str:
    return line if len(line) <= width else line[: max(width - 1, 0)] + "~"


def _state(scene: Scene) -> str:
    v = scene.view
    if v.paused:
        return "paused"
    return {"ready": "reveal a cell to start"}.get(v.status, v.status)


def _cell(scene: Scene, char: str, x: int, y: int, sources: set[tuple[int, int]]) -> str:
    shown = {"#": scene.hidden, "0": " "}.get(char, char)
    hint = scene.hint
    style = ""
    if hint is not None and (x, y) == (hint.x, hint.y):
        style = HINTED[hint.kind] if scene.colour else UNDERLINE
    elif (x, y) in sources:
        style = UNDERLINE
    if (x, y) == scene.cursor and not (hint is not None and (x, y) == (hint.x, hint.y)):
        style += REVERSE
    if not style and scene.colour:
        style = text.STYLES.get(char, "")
    return f"{style}{shown}{text.RESET}" if style else shown


def _window(start: int, cursor: int, size: int, total: int) -> int:
    """The first of ``size`` places out of ``total`` in view, moved only as far as needed
    to keep ``cursor`` in it."""
    size = max(min(size, total), 1)
    start = min(max(start, cursor - size + 1), cursor)
    return max(0, min(start, total - size))


def frame(scene: Scene, columns: int, lines: int) -> tuple[list[str], tuple[int, int]]:
    """The screen's lines for a terminal ``columns`` x ``lines``, and the new origin."""
    v = scene.view
    width = max(columns - 1, 1)  # the last column is never written: no line wraps
    x, y = scene.cursor
    status = f"mines left {v.mines_left}   time {scene.seconds}   {_state(scene)}   ({x}, {y})"
    if len(status) > width:
        status = f"mines {v.mines_left}  time {scene.seconds}  ({x}, {y})  {_state(scene)}"
    head = [_fit(f"Minesweeper  {text.describe(v)}  game {v.id}", width), _fit(status, width)]
    if scene.title:
        head = [_fit(line, width) for line in scene.title]
    foot: list[str] = []
    outcome = text.outcome(v, watching=scene.watching)
    if scene.panel:
        foot += [_fit(line, width) for line in scene.panel]
    elif outcome is not None:
        foot += textwrap.wrap(outcome, width) + textwrap.wrap(text.stats_line(v.stats), width)
    # A message may take a few lines, never the whole screen.
    most = max(1, (lines - len(head)) // 3)
    foot += textwrap.wrap(scene.message, width, max_lines=most, placeholder=" ~")
    foot.append(fit_keys(scene.keys, width) if scene.keys else help_line(width, scene.watching))

    room = max(lines - len(head) - len(foot), 1)
    # Two characters a cell, a mark before the first and after the last.
    cols = max((width - 1) // 2, 1)
    left = _window(scene.origin[0], x, cols, v.width)
    rows_fit = room if room >= v.height else max(room - 2, 1)  # room for "above"/"below"
    top = _window(scene.origin[1], y, rows_fit, v.height)
    shown_rows = range(top, min(top + rows_fit, v.height))
    shown_cols = range(left, min(left + cols, v.width))
    more_left, more_right = left > 0, shown_cols.stop < v.width

    body: list[str] = []
    if top > 0 and room > 2:
        body.append(f"  ^ {top} row{'s' if top > 1 else ''} above")
    if v.paused:
        blank = [""] * len(shown_rows)
        blank[len(blank) // 2] = _fit(
            "   paused: the clock is stopped" + ("" if scene.watching else "; p resumes"), width
        )
        body += blank
    else:
        sources = text.named_cells(scene.hint.reason) if scene.hint else set()
        for row_y in shown_rows:
            row = v.board[row_y]
            parts = []
            for cx in shown_cols:
                if (cx, row_y) == scene.cursor:
                    mark = "["
                elif (cx - 1, row_y) == scene.cursor:
                    mark = "]"
                elif cx == left and more_left:
                    mark = "<"
                else:
                    mark = " "
                parts.append(mark + _cell(scene, row[cx], cx, row_y, sources))
            last = shown_cols.stop - 1
            if (last, row_y) == scene.cursor:
                parts.append("]")
            elif more_right:
                parts.append(">")
            body.append("".join(parts))
    below = v.height - shown_rows.stop
    if below > 0 and room > 2:
        body.append(f"  v {below} row{'s' if below > 1 else ''} below")
    return head + body + foot, (left, top)
