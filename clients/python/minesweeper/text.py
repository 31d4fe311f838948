"""Plain-text and ANSI rendering shared by the console commands."""

from __future__ import annotations

import os
from datetime import datetime
from typing import TextIO

from service.wire import Diff, GameView

RESET = "\x1b[0m"
# The classic colours of the numbers, then the marks.
STYLES = {
    "1": "\x1b[94m",
    "2": "\x1b[32m",
    "3": "\x1b[91m",
    "4": "\x1b[34m",
    "5": "\x1b[31m",
    "6": "\x1b[36m",
    "7": "\x1b[35m",
    "8": "\x1b[90m",
    "0": "\x1b[2m",
    "#": "\x1b[2m",
    "F": "\x1b[1;31m",
    "?": "\x1b[1;33m",
    "*": "\x1b[1m",
    "X": "\x1b[1;97;41m",
    "!": "\x1b[1;30;43m",
}


def use_colour(stream: TextIO) -> bool:
    return stream.isatty() and "NO_COLOR" not in os.environ and os.environ.get("TERM") != "dumb"


def paint(char: str, colour: bool) -> str:
    style = STYLES.get(char) if colour else None
    return f"{style}{char}{RESET}" if style else char


def board_lines(board: list[str], colour: bool) -> list[str]:
    if not colour:
        return list(board)
    return ["".join(paint(c, True) for c in row) for row in board]


def millis(stamp: str) -> int:
    """An RFC 3339 timestamp from the service as Unix milliseconds."""
    return int(datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp() * 1000)


def seconds(ms: int) -> str:
    return f"{ms / 1000:.1f}s"


def describe(view: GameView) -> str:
    kind = view.preset or "custom"
    return f"{kind} {view.width}x{view.height}, {view.mines} mines"


def status_line(view: GameView) -> str:
    return (
        f"{view.status}  mines left {view.mines_left}  time {seconds(view.elapsed_ms)}  "
        f"version {view.version}"
    )


def diff_line(diff: Diff) -> str:
    move = diff.move
    where = f" {move.x},{move.y}" if move.x is not None and move.y is not None else ""
    changed = f"{len(diff.cells)} cell{'' if len(diff.cells) == 1 else 's'}"
    if not diff.cells:
        changed = "no change"
    return (
        f"v{diff.version} {move.action}{where}: {changed}  {diff.status}  "
        f"mines left {diff.mines_left}  time {seconds(diff.elapsed_ms)}"
    )


def outcome(view: GameView) -> str | None:
    """The end-of-game message, or ``None`` while the game goes on."""
    if view.status not in ("won", "lost"):
        return None
    took = seconds(view.elapsed_ms)
    if view.status == "lost":
        return f"Boom! You hit a mine after {took}."
    s = view.stats
    extra = [f"3BV {s.bbbv}"] if s.bbbv is not None else []
    if s.bbbv_per_second is not None:
        extra.append(f"3BV/s {s.bbbv_per_second:.2f}")
    if s.efficiency is not None:
        extra.append(f"efficiency {s.efficiency:.0%}")
    return f"You won in {took}!" + (f" ({', '.join(extra)})" if extra else "")
