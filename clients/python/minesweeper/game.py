"""A game you play: its id, its token and the latest view, kept current by diffs."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import msgspec

from .wire import ChangedCell, Diff, GameView

__all__ = ["Game", "apply_diff", "changed_count", "each_cell"]


def each_cell(cells: Iterable[ChangedCell]) -> Iterator[tuple[int, int, str]]:
    """``(x, y, char)`` of every cell a diff lists, its runs spelled out cell by cell."""
    for x, y, chars in cells:
        for i, char in enumerate(chars):
            yield x + i, y, char


def changed_count(cells: Iterable[ChangedCell]) -> int:
    """How many cells a diff's ``cells`` write: a run counts each of its cells, with the
    few unchanged ones it may carry between changed ones."""
    return sum(len(chars) for _, _, chars in cells)


def apply_diff(view: GameView, diff: Diff) -> GameView:
    """The view after ``diff``, which must be the next version (or a no-op).

    A pause lists no cells: the view keeps its board, to be hidden while ``paused``.
    Raises ``ValueError`` when ``diff`` does not follow ``view``: fetch the view again.
    """
    if diff.version == view.version and not diff.cells:
        return view
    if diff.version != view.version + 1:
        raise ValueError(f"diff {diff.version} does not follow version {view.version}")
    rows = [bytearray(row, "ascii") for row in view.board]
    for x, y, chars in diff.cells:
        # One cell, or a run of a big change's cells along the row.
        rows[y][x : x + len(chars)] = chars.encode("ascii")
    return msgspec.structs.replace(
        view,
        version=diff.version,
        status=diff.status,
        mines_left=diff.mines_left,
        board=[row.decode("ascii") for row in rows],
        started_at=diff.started_at,
        ended_at=diff.ended_at,
        elapsed_ms=diff.elapsed_ms,
        server_time=diff.move.at,
        stats=diff.stats or view.stats,
        paused=diff.paused,
    )


class Game:
    """A handle on one game: ``id``, ``token`` (``None`` to only look) and ``view``.

    The clients update :attr:`view` with the answer of every move made through the
    handle, so ``game.view.board`` is the board as of the last move.
    """

    __slots__ = ("id", "token", "view")

    def __init__(self, view: GameView, token: str | None = None) -> None:
        self.id = view.id
        self.token = token
        self.view = view

    @property
    def finished(self) -> bool:
        return self.view.status in ("won", "lost")

    @property
    def paused(self) -> bool:
        """Paused: the clock stopped, moves refused until resumed, and the board hidden (a
        view fetched while paused shows every cell as ``#``; one brought up to date by the
        pause's diff keeps its cells, for the client to hide)."""
        return self.view.paused

    def apply(self, diff: Diff) -> bool:
        """Bring :attr:`view` up to ``diff``; ``False`` when a version was missed.

        A diff the view already has is ignored (and ``True``).
        """
        if diff.version <= self.view.version:
            return True
        try:
            self.view = apply_diff(self.view, diff)
        except ValueError:
            return False
        return True

    def __getitem__(self, cell: tuple[int, int]) -> str:
        """The character of cell ``(x, y)``: ``game[3, 4]``."""
        x, y = cell
        return self.view.board[y][x]

    def __repr__(self) -> str:
        v = self.view
        return f"<Game {self.id} {v.width}x{v.height} {v.status} v{v.version}>"
