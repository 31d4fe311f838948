"""The moves on cells: pure transitions ``(game, move, now_ms) -> (game', cells)``.

Also how a game is made and how a shared board (a daily board) opens its start.
A move never mutates its input. ``cells`` lists ``(x, y, chars)`` for every cell
whose view changed; an empty list means the move changed nothing, and then the
version stays the same (only the click counters move on).
"""

from __future__ import annotations

from typing import Literal

import msgspec
import numpy as np

from . import grid
from .errors import GameOver, GamePaused, InvalidMove, InvalidSettings
from .game import (
    EXPLODED,
    FLAG,
    HIDDEN,
    QUESTION,
    SHOWN_MINE,
    WRONG_FLAG,
    ZERO,
    Action,
    ChangedCell,
    Clicks,
    Game,
    Mark,
    OnMine,
)
from .placement import place, start_area
from .rng import SplitMix64
from .settings import FirstClick, Settings


class Move(msgspec.Struct, frozen=True):
    action: Action
    x: int
    y: int
    mark: Mark | None = None


def new_game(
    settings: Settings,
    *,
    seed: int,
    now_ms: int,
    first_click: FirstClick = "zero",
    no_guess: bool = False,
    question_marks: bool = False,
    on_mine: OnMine = "lose",
) -> Game:
    if no_guess and first_click != "zero":
        raise InvalidSettings("no_guess boards start with an opening: use first_click 'zero'")
    if no_guess:
        from .noguess import check_settings

        check_settings(settings.width, settings.height, settings.mines)
    w, h, m = settings.width, settings.height, settings.mines
    game = Game(
        version=0,
        width=w,
        height=h,
        mines=m,
        preset=settings.preset,
        first_click=first_click,
        no_guess=no_guess,
        question_marks=question_marks,
        seed=seed,
        created_at=now_ms,
        cells=bytes([HIDDEN]) * (w * h),
        hidden_safe=w * h - m,
        on_mine=on_mine,
    )
    if first_click == "none":
        game = _with_layout(game, place(w, h, m, seed))
    return game


def _with_layout(game: Game, mines: grid.Bools) -> Game:
    return msgspec.structs.replace(
        game, layout=grid.pack(mines), bbbv=grid.bbbv(mines), bbbv_done=0
    )


def _place_for(game: Game, start: int) -> Game:
    if game.no_guess:
        from .noguess import generate

        y, x = divmod(start, game.width)
        mines = generate(game.width, game.height, game.mines, x, y, game.seed)
    else:
        keep_free = start_area(game.width, game.height, start, game.first_click)
        mines = place(game.width, game.height, game.mines, game.seed, keep_free)
    return _with_layout(game, mines)


def _index(game: Game, x: int, y: int) -> int:
    if not (0 <= x < game.width and 0 <= y < game.height):
        raise InvalidMove(
            f"cell ({x}, {y}) is off the {game.width}x{game.height} board"
        )
    return y * game.width + x


def check_playable(game: Game) -> None:
    """Whether the player may act on the game now: not over, not paused."""
    if game.finished:
        raise GameOver(f"the game is {game.status}")
    if game.paused:
        raise GamePaused("the game is paused; resume it first")


def _count(game: Game, kind: Literal["reveal", "flag", "chord"]) -> Clicks:
    c = game.clicks
    return msgspec.structs.replace(c, **{kind: getattr(c, kind) + 1})


def _useful(clicks: Clicks) -> Clicks:
    return msgspec.structs.replace(clicks, useful=clicks.useful + 1)


def _commit(game: Game, cells: bytes, clicks: Clicks, **changes: object) -> Game:
    return msgspec.structs.replace(
        game, version=game.version + 1, cells=cells, clicks=_useful(clicks), **changes
    )


def _end_view(cells: bytes, mines: grid.Bools, exploded: list[int], won: bool = True) -> bytes:
    """The board at the end: on a win every mine is flagged; on a loss mines,
    exploded mines and wrong flags show."""
    flat = mines.ravel()
    view = np.frombuffer(cells, dtype=np.uint8).copy()
    if exploded or not won:
        view[flat & (view != FLAG) & (view != EXPLODED)] = SHOWN_MINE
        view[~flat & (view == FLAG)] = WRONG_FLAG
        view[exploded] = EXPLODED
    else:
        # A mine that cost a penalty stays exploded on the won board.
        view[flat & (view != EXPLODED)] = FLAG
    return view.tobytes()


def _exploded(cells: bytes, exploded: list[int]) -> bytes:
    view = bytearray(cells)
    for i in exploded:
        view[i] = EXPLODED
    return bytes(view)


def _open(
    game: Game, targets: list[int], now_ms: int, clicks: Clicks, started_at: int | None
) -> tuple[Game, list[ChangedCell]]:
    """Open ``targets`` (hidden, unmarked cells): shared by reveal and chord.

    Under ``on_mine="penalty"`` a mine among them does not end the game: it shows
    exploded, counts as flagged and as a penalty, and play goes on."""
    w = game.width
    hit = [t for t in targets if game.is_mine(t)]
    safe = [t for t in targets if not game.is_mine(t)]
    penalised = game.on_mine == "penalty" and bool(hit)
    exploded = [] if penalised else hit
    before = game.cells
    if penalised:
        marked = bytearray(before)
        for t in hit:
            marked[t] = EXPLODED
        before = bytes(marked)
    numbers = [] if exploded else [game.count(t) for t in safe]
    # The common cases, a lone number or a chord that opens only numbers, need no
    # whole-board work: no zero among the targets means no cascade.
    local = bool(numbers) and all(numbers)
    mines = None if local else grid.unpack(game.layout, w, game.height)
    if local:
        after = bytearray(before)
        for t, n in zip(safe, numbers, strict=True):
            after[t] = ZERO + n
        cells = bytes(after)
        opened = len(safe)
    elif safe:
        assert mines is not None
        view = np.frombuffer(before, dtype=np.uint8)
        new_view = grid.open_from(view, mines, safe)
        opened = int(np.count_nonzero(new_view != view))
        cells = new_view.tobytes()
    else:
        cells, opened = before, 0
    hidden_safe = game.hidden_safe - opened
    changes: dict[str, object] = {"status": "playing", "started_at": started_at}
    if penalised:
        changes.update(flags=game.flags + len(hit), penalties=game.penalties + len(hit))
    if hidden_safe == 0 and not exploded:
        changes["bbbv_done"] = game.bbbv
    elif local:
        changes["bbbv_done"] = _bbbv_done(game) + sum(_lone(game, t) for t in safe)
    else:
        assert mines is not None
        changes["bbbv_done"] = grid.bbbv_done(cells, mines)
    if exploded or hidden_safe == 0:
        if mines is None:
            mines = grid.unpack(game.layout, w, game.height)
        if exploded and game.layout_shared:
            cells = _exploded(cells, exploded)  # the rest shows when the match ends
        else:
            cells = _end_view(cells, mines, exploded)
        changes.update(status="lost" if exploded else "won", ended_at=now_ms)
        if not exploded:
            changes["flags"] = game.mines
    new = _commit(game, cells, clicks, hidden_safe=hidden_safe, **changes)
    if local and "ended_at" not in changes and not penalised:
        return new, [(t % w, t // w, chr(cells[t])) for t in sorted(safe)]
    return new, grid.changed(game.cells, cells, w)


def _bbbv_done(game: Game) -> int:
    """The 3BV cleared before a move (counted from the board for a snapshot stored before
    the count was kept)."""
    if game.bbbv_done is not None:
        return game.bbbv_done
    return grid.bbbv_done(game.cells, grid.unpack(game.layout, game.width, game.height))


def _lone(game: Game, index: int) -> bool:
    """Whether a number is a 3BV click of its own: no zero around it would open it.

    A neighbour is a zero when its 3x3 box holds no mine, so the 5x5 box around the
    number, read from the packed layout as five rows of bits, answers for all eight.
    """
    w, h, layout = game.width, game.height, game.layout
    y, x = divmod(index, w)
    lo, hi = max(0, x - 2), min(w, x + 3)
    n = hi - lo
    rows = []
    for ry in range(y - 2, y + 3):
        bits = 0
        if 0 <= ry < h:
            start = ry * w + lo
            chunk = int.from_bytes(layout[start >> 3 : (start >> 3) + 2], "big")
            if start >> 3 == len(layout) - 1:
                chunk <<= 8
            # Column c lands on bit x + 2 - c: the box's left column is bit 4.
            bits = (chunk >> (16 - (start & 7) - n) & ((1 << n) - 1)) << (x + 3 - hi)
        rows.append(bits)
    for dy in (-1, 0, 1):
        if not 0 <= y + dy < h:
            continue
        band = rows[dy + 1] | rows[dy + 2] | rows[dy + 3]
        for dx in (-1, 0, 1):
            if (dx or dy) and 0 <= x + dx < w and not band >> (1 - dx) & 0b111:
                return False
    return True


def reveal(game: Game, x: int, y: int, now_ms: int) -> tuple[Game, list[ChangedCell]]:
    i = _index(game, x, y)
    check_playable(game)
    clicks = _count(game, "reveal")
    if game.cells[i] != HIDDEN:
        return msgspec.structs.replace(game, clicks=clicks), []
    started_at = game.started_at if game.started_at is not None else now_ms
    if not game.placed:
        game = _place_for(game, i)
    return _open(game, [i], now_ms, clicks, started_at)


def open_start(game: Game, now_ms: int) -> tuple[Game, list[ChangedCell]]:
    """Open a new game's start cell for the player: the cell its seed picks, so every
    game with that seed and those settings (a daily board) starts the same.

    The game stays at version 0 with no click counted, and its clock starts at the
    player's own first move.
    """
    if game.status != "ready" or game.placed:
        raise InvalidSettings("only a new board whose mines go around its start opens one")
    rng = SplitMix64(game.seed)
    x, y = rng.below(game.width), rng.below(game.height)
    opened, cells = reveal(game, x, y, now_ms)
    return msgspec.structs.replace(
        opened, version=0, clicks=Clicks(), started_at=None, bbbv_given=opened.bbbv_done or 0
    ), cells


_FLAGGED = (FLAG, EXPLODED)
_CYCLE = {HIDDEN: FLAG, FLAG: QUESTION, QUESTION: HIDDEN}
_CYCLE_NO_QUESTION = {HIDDEN: FLAG, FLAG: HIDDEN, QUESTION: HIDDEN}
_MARKS = {"flag": FLAG, "question": QUESTION, "none": HIDDEN}


def flag(
    game: Game, x: int, y: int, now_ms: int, mark: Mark | None = None
) -> tuple[Game, list[ChangedCell]]:
    i = _index(game, x, y)
    if mark == "question" and not game.question_marks:
        raise InvalidMove("this game was created without question marks")
    check_playable(game)
    clicks = _count(game, "flag")
    current = game.cells[i]
    if current not in _CYCLE:
        return msgspec.structs.replace(game, clicks=clicks), []
    if mark is None:
        target = (_CYCLE if game.question_marks else _CYCLE_NO_QUESTION)[current]
    else:
        target = _MARKS[mark]
    if target == current:
        return msgspec.structs.replace(game, clicks=clicks), []
    flags = game.flags + (target == FLAG) - (current == FLAG)
    after = bytearray(game.cells)
    after[i] = target
    new = _commit(game, bytes(after), clicks, flags=flags)
    return new, [(x, y, chr(target))]


def chord(game: Game, x: int, y: int, now_ms: int) -> tuple[Game, list[ChangedCell]]:
    i = _index(game, x, y)
    check_playable(game)
    clicks = _count(game, "chord")
    unchanged: tuple[Game, list[ChangedCell]] = msgspec.structs.replace(game, clicks=clicks), []
    number = game.cells[i] - ZERO
    if not 1 <= number <= 8:
        return unchanged
    around = game.neighbours(i)
    # A mine that cost a penalty counts as flagged.
    if sum(1 for n in around if game.cells[n] in _FLAGGED) != number:
        return unchanged
    targets = [n for n in around if game.cells[n] == HIDDEN]
    if not targets:
        return unchanged
    # A chord can be the first opening move of a game that started with cells open (a daily board).
    started_at = game.started_at if game.started_at is not None else now_ms
    return _open(game, targets, now_ms, clicks, started_at)


def show_layout(game: Game) -> Game:
    """A shared board's loss (``layout_shared``) as any other loss shows it, every mine
    and wrong flag: for when its layout is no longer anybody's secret. Any other game is
    returned as it is."""
    if game.status != "lost" or not game.layout_shared or not game.placed:
        return game
    mines = grid.unpack(game.layout, game.width, game.height)
    cells = _end_view(game.cells, mines, [], won=False)
    return game if cells == game.cells else msgspec.structs.replace(game, cells=cells)


def end(game: Game, now_ms: int) -> tuple[Game, list[ChangedCell]]:
    """End a game still on as lost, the board as it stands: what a match's end does to
    the games it leaves unfinished (a seat out of time, or resigned). The mines show,
    as on any loss, and the clock stops at ``now_ms``. A game already over is left as
    it is, but for a race seat's loss, whose mines show now (``layout_shared``)."""
    if game.finished:
        shown = show_layout(game)
        if shown is game:
            return game, []
        shown = msgspec.structs.replace(shown, version=game.version + 1)
        return shown, grid.changed(game.cells, shown.cells, game.width)
    paused_ms = game.paused_ms
    if game.paused_at is not None and game.started_at is not None:
        paused_ms += now_ms - game.paused_at
    cells = game.cells
    if game.placed:
        cells = _end_view(cells, grid.unpack(game.layout, game.width, game.height), [], won=False)
    # A game its match ended before the start (every seat left in the countdown) ends
    # as it starts, not before.
    ended = now_ms if game.started_at is None else max(now_ms, game.started_at)
    new = msgspec.structs.replace(
        game, version=game.version + 1, cells=cells, status="lost", ended_at=ended,
        paused_at=None, paused_ms=paused_ms,
    )
    return new, grid.changed(game.cells, cells, game.width)


def apply(game: Game, move: Move, now_ms: int) -> tuple[Game, list[ChangedCell]]:
    """Apply any move: the one entry point the service uses."""
    if move.action == "reveal":
        return reveal(game, move.x, move.y, now_ms)
    if move.action == "flag":
        return flag(game, move.x, move.y, now_ms, move.mark)
    return chord(game, move.x, move.y, now_ms)
