"""The game snapshot: one frozen value holding everything about a game.

``cells`` holds the player's view, one ASCII character per cell (the board
characters of the design), so the view needs no computing and can never show
more than the player may see. The mines live apart in ``layout``, a packed bit
set that stays empty until the first reveal places them.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from .settings import FirstClick, PresetName

Status = Literal["ready", "playing", "won", "lost"]
Action = Literal["reveal", "flag", "chord"]
Mark = Literal["flag", "question", "none"]
# What ended a finished game: a player's move, or its match's end (``moves.end``).
EndedBy = Literal["move", "match"]
# What a revealed mine does: end the game, or (a match's rule) cost time and count as flagged.
OnMine = Literal["lose", "penalty"]

# What each mine revealed under ``on_mine="penalty"`` adds to the player's time.
PENALTY_MS = 5000

HIDDEN = ord("#")
FLAG = ord("F")
QUESTION = ord("?")
SHOWN_MINE = ord("*")  # a mine on the board after a loss
EXPLODED = ord("X")
WRONG_FLAG = ord("!")
ZERO = ord("0")

FINISHED: frozenset[Status] = frozenset({"won", "lost"})

# A cell whose view changed: ``(x, y, chars)``, as it goes on the wire. In a change of many
# cells ``chars`` may be a run: the new characters of (x, y) and the cells after it in the row.
ChangedCell = tuple[int, int, str]


class Clicks(msgspec.Struct, frozen=True, array_like=True):
    """Clicks by kind, no-ops included; ``useful`` counts the ones that changed the board."""

    reveal: int = 0
    flag: int = 0
    chord: int = 0
    useful: int = 0
    hints: int = 0

    @property
    def total(self) -> int:
        return self.reveal + self.flag + self.chord


class Game(msgspec.Struct, frozen=True, array_like=True):
    version: int
    width: int
    height: int
    mines: int
    preset: PresetName | None
    first_click: FirstClick
    no_guess: bool
    question_marks: bool
    seed: int
    created_at: int
    cells: bytes
    status: Status = "ready"
    layout: bytes = b""
    # Kept as counters so a move never scans the board to answer "won?" or "mines left".
    flags: int = 0
    hidden_safe: int = 0
    bbbv: int = 0
    started_at: int | None = None
    ended_at: int | None = None
    paused_at: int | None = None
    paused_ms: int = 0
    clicks: Clicks = Clicks()
    # The 3BV cleared so far, kept as the cells open so a view never labels the board's
    # openings again; None in a snapshot stored before it was kept.
    bbbv_done: int | None = None
    on_mine: OnMine = "lose"
    # Mines revealed under ``on_mine="penalty"``.
    penalties: int = 0
    # The 3BV a shared board's start opened for the player (``open_start``): done, but
    # not by the player, so their efficiency and 3BV/s leave it out.
    bbbv_given: int = 0
    # A race seat's board: the other seats play its layout until their match ends, so a
    # loss shows only the exploded mine, and the match's end (``end``) the rest.
    layout_shared: bool = False

    @property
    def finished(self) -> bool:
        return self.status in FINISHED

    @property
    def ended_by(self) -> EndedBy | None:
        """``"match"`` for a game its match's end stopped, ``"move"`` for any other end.

        Read off the state rather than stored: by the rules only ``moves.end`` loses a
        game without a mine exploding, and under ``on_mine="penalty"`` nothing else
        loses it at all (its exploded mines were penalties)."""
        if not self.finished:
            return None
        if self.status == "lost" and (self.on_mine == "penalty" or EXPLODED not in self.cells):
            return "match"
        return "move"

    @property
    def paused(self) -> bool:
        return self.paused_at is not None

    @property
    def mines_left(self) -> int:
        return self.mines - self.flags

    @property
    def placed(self) -> bool:
        return bool(self.layout)

    def is_mine(self, index: int) -> bool:
        return bool(self.layout[index >> 3] >> (7 - (index & 7)) & 1)

    def board(self) -> list[str]:
        """The player's view: one string per row."""
        w = self.width
        text = self.cells.decode("ascii")
        return [text[y * w : (y + 1) * w] for y in range(self.height)]

    def elapsed_ms(self, now_ms: int) -> int:
        if self.started_at is None:
            return 0
        end = self.ended_at if self.ended_at is not None else now_ms
        pause = self.paused_ms
        if self.paused_at is not None and self.ended_at is None:
            pause += now_ms - self.paused_at
        return max(0, end - self.started_at - pause)

    def neighbours(self, index: int) -> list[int]:
        w, h = self.width, self.height
        y, x = divmod(index, w)
        out = []
        for ny in range(max(0, y - 1), min(h, y + 2)):
            row = ny * w
            for nx in range(max(0, x - 1), min(w, x + 2)):
                if nx != x or ny != y:
                    out.append(row + nx)
        return out

    def count(self, index: int) -> int:
        """Mines around a cell (the layout must be placed)."""
        return sum(self.is_mine(n) for n in self.neighbours(index))
