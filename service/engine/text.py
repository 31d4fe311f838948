"""A text form of a whole game, mines included, that round-trips.

The first line holds the settings and counters as ``key=value`` pairs; every
following line is a board row, one character per cell::

    .  hidden            m  hidden mine
    f  flag on a safe    F  flag on a mine
    q  question, safe    Q  question on a mine
    0-8 revealed         X  exploded mine
    *  mine shown after a loss     !  wrong flag shown after a loss

Only for tests and debugging: it shows the mines, so it never goes on the wire.
The header may be left out or shortened; what is missing is derived from the board.
"""

from __future__ import annotations

import numpy as np

from . import grid
from .game import HIDDEN, ZERO, Clicks, Game

_TO_TEXT: dict[tuple[int, bool], str] = {
    (HIDDEN, False): ".",
    (HIDDEN, True): "m",
    (ord("F"), False): "f",
    (ord("F"), True): "F",
    (ord("?"), False): "q",
    (ord("?"), True): "Q",
    (ord("X"), True): "X",
    (ord("*"), True): "*",
    (ord("!"), False): "!",
    **{(ZERO + n, False): str(n) for n in range(9)},
}
_FROM_TEXT = {ch: key for key, ch in _TO_TEXT.items()}

_INT_FIELDS = ("version", "width", "height", "mines", "seed", "created_at", "flags",
               "hidden_safe", "bbbv", "paused_ms")
_OPT_INT_FIELDS = ("started_at", "ended_at", "paused_at")
_BOOL_FIELDS = ("no_guess", "question_marks", "layout_shared")
_CLICK_FIELDS = tuple(f"clicks.{name}" for name in Clicks.__struct_fields__)


def dump(game: Game) -> str:
    fields: list[str] = []
    for name in ("version", "width", "height", "mines", "status", "first_click", "preset",
                 "on_mine", "penalties"):
        value = getattr(game, name)
        fields.append(f"{name}={'-' if value is None else value}")
    for name in _BOOL_FIELDS:
        fields.append(f"{name}={int(getattr(game, name))}")
    for name in ("seed", "created_at", *_OPT_INT_FIELDS, "paused_ms", "bbbv", "bbbv_done",
                 "bbbv_given"):
        value = getattr(game, name)
        fields.append(f"{name}={'-' if value is None else value}")
    fields.append(f"placed={int(game.placed)}")
    for name in Clicks.__struct_fields__:
        fields.append(f"clicks.{name}={getattr(game.clicks, name)}")
    rows = []
    w = game.width
    for y in range(game.height):
        row = []
        for x in range(w):
            i = y * w + x
            mine = game.placed and game.is_mine(i)
            row.append(_TO_TEXT[(game.cells[i], mine)])
        rows.append("".join(row))
    return " ".join(fields) + "\n" + "\n".join(rows) + "\n"


def load(text: str) -> Game:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    header: dict[str, str] = {}
    if lines and "=" in lines[0]:
        header = dict(item.split("=", 1) for item in lines[0].split())
        lines = lines[1:]
    height, width = len(lines), len(lines[0]) if lines else 0
    if any(len(row) != width for row in lines):
        raise ValueError("board rows differ in length")
    cells = bytearray()
    mine_flags = []
    for row in lines:
        for ch in row:
            try:
                cell, mine = _FROM_TEXT[ch]
            except KeyError:
                raise ValueError(f"unknown board character {ch!r}") from None
            cells.append(cell)
            mine_flags.append(mine)
    mines_arr = np.array(mine_flags, dtype=bool).reshape(height, width)
    n_mines = int(mines_arr.sum())
    placed = header.get("placed", "1" if n_mines else "0") == "1"
    if placed:
        sol = grid.solution(mines_arr).ravel()
        for i, c in enumerate(cells):
            if ZERO <= c <= ZERO + 8 and c != sol[i]:
                raise ValueError(f"cell {i % width},{i // width} shows {chr(c)}, not {chr(sol[i])}")
    mines = int(header.get("mines", n_mines))
    revealed = sum(1 for c in cells if ZERO <= c <= ZERO + 8)
    on_mine = header.get("on_mine", "lose")
    # Under the penalty rule an exploded mine ends nothing.
    ended_by = (ord("*"), ord("!")) if on_mine == "penalty" else (ord("X"), ord("*"), ord("!"))
    ended = any(c in ended_by for c in cells)
    status = header.get("status") or ("lost" if ended else "playing" if revealed else "ready")
    # After a loss a wrong flag shows "!" but still counts in mines_left; a mine that
    # cost a penalty counts as flagged.
    counted = (ord("F"), ord("!"), ord("X")) if on_mine == "penalty" else (ord("F"), ord("!"))
    flags = sum(1 for c in cells if c in counted)
    exploded = sum(1 for c in cells if c == ord("X"))

    def opt_int(name: str, default: int | None) -> int | None:
        value = header.get(name)
        if value is None:
            return default
        return None if value == "-" else int(value)

    playing = status != "ready"
    clicks = Clicks(**{
        name: int(header.get(f"clicks.{name}", 0)) for name in Clicks.__struct_fields__
    })
    preset = header.get("preset", "-")
    bbbv = int(header.get("bbbv", grid.bbbv(mines_arr) if placed else 0))
    if not placed:
        done = 0
    elif status == "won":
        done = bbbv
    else:
        done = grid.bbbv_done(bytes(cells), mines_arr)
    return Game(
        version=int(header.get("version", 0)),
        width=width,
        height=height,
        mines=mines,
        preset=None if preset == "-" else preset,  # type: ignore[arg-type]
        first_click=header.get("first_click", "zero"),  # type: ignore[arg-type]
        no_guess=header.get("no_guess", "0") == "1",
        question_marks=header.get("question_marks", "1" if b"?" in cells else "0") == "1",
        seed=int(header.get("seed", 0)),
        created_at=int(header.get("created_at", 0)),
        cells=bytes(cells),
        status=status,  # type: ignore[arg-type]
        layout=grid.pack(mines_arr) if placed else b"",
        flags=int(header.get("flags", flags)),
        hidden_safe=width * height - mines - revealed,
        bbbv=bbbv,
        started_at=opt_int("started_at", 0 if playing else None),
        ended_at=opt_int("ended_at", 0 if status in ("won", "lost") else None),
        paused_at=opt_int("paused_at", None),
        paused_ms=int(header.get("paused_ms", 0)),
        clicks=clicks,
        bbbv_done=opt_int("bbbv_done", done),
        on_mine=on_mine,  # type: ignore[arg-type]
        penalties=int(header.get("penalties", exploded if on_mine == "penalty" else 0)),
        bbbv_given=int(header.get("bbbv_given", 0)),
        layout_shared=header.get("layout_shared", "0") == "1",
    )


def board_text(game: Game) -> str:
    """Just the rows of :func:`dump`, for comparing boards in tests."""
    return dump(game).split("\n", 1)[1]


__all__ = ["board_text", "dump", "load"]
