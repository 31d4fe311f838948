"""A player who follows the hints to the end of a game: the measure of how good they are.

Asking :func:`solver.best_hint` about the whole view before every move repeats
most of the work each time. This player keeps the local rules' facts from move to
move (they reach the same fixpoint whatever order the numbers arrive in) and
reveals every certain cell at once, so it plays many games a second. Where it
must guess, it asks the same question ``best_hint`` asks of the view, with the
same knowledge (the counting's conclusions are worked out on a copy and dropped
each round, as a fresh analysis of the next view would not know them either), so
it makes exactly the guesses ``best_hint`` makes on the same views, and wins
exactly the games a player following the hints one move at a time wins.

It also notes where its play could fall short of perfect play. Revealing a certain
cell is always right, and so is a forced guess taken first (nothing can ever make it
safer, and it tells nothing about the rest). Every other guess is a judgement: from
the first of them, perfect play could win no more than the chance of surviving the
safest cell on the board, which bounds how much better any player could do.
"""

from __future__ import annotations

import numpy as np

from . import moves, solver
from .game import HIDDEN, ZERO, Game
from .solver import SAFE, UNKNOWN, ComponentCache, Deducer, escalate


class AutoPlayer:
    """Plays one game from its current view; ``guessed`` lists the cells it guessed.

    ``judged`` is the lowest chance of a mine on the board at its first guess that
    was a judgement (see above), None while every guess was forced.
    """

    def __init__(self, game: Game) -> None:
        self.game = game
        self.geo = solver.geometry(game.width, game.height)
        n = game.width * game.height
        self.d = Deducer(self.geo, bytearray(n), track=False)
        self.cache: ComponentCache = {}
        self.guessed: list[int] = []
        self.judged: float | None = None
        self._learn([i for i, ch in enumerate(game.cells) if ZERO <= ch <= ZERO + 8])

    def _learn(self, opened: list[int]) -> None:
        """Record newly opened cells as safe, then add their numbers as facts."""
        d, cells = self.d, self.game.cells
        for c in opened:
            if d.state[c] == UNKNOWN:
                d.learn(c, False, None)
        around = self.geo.around
        for c in opened:
            value = cells[c] - ZERO
            if any(cells[j] == HIDDEN for j in around(c)):
                d.add_number(c, value)

    def _open(self, cells: list[int]) -> None:
        game, w = self.game, self.game.width
        opened: list[int] = []
        for c in cells:
            if game.status != "playing":
                break
            if game.cells[c] != HIDDEN:
                continue
            game, changed = moves.reveal(game, c % w, c // w, 0)
            opened.extend(y * w + x for x, y, _ in changed)
        self.game = game
        if game.status == "playing":
            self._learn(opened)

    def _certain(self) -> list[int] | None:
        """Cells certainly safe and still hidden; None when stuck (the state is kept
        in ``self.stuck``)."""
        d, cells = self.d, self.game.cells
        mark = len(d.learnt)
        d.run()
        found = [c for c in d.learnt[mark:] if d.state[c] == SAFE and cells[c] == HIDDEN]
        if found:
            return found
        e = d.copy()
        mark = len(e.learnt)
        while True:
            verdict = escalate(e, self.game.mines, solver.DEFAULT_BUDGET, want_odds=True,
                               cache=self.cache)
            if verdict is not None:
                self.stuck = (e, verdict)
                return None
            e.run()
            found = [c for c in e.learnt[mark:] if e.state[c] == SAFE]
            if found:
                return found

    def step(self) -> bool:
        """One round: every certain cell, or one guess. False once the game is over."""
        if self.game.status != "playing":
            return False
        if len(self.cache) > 20_000:
            self.cache.clear()
        found = self._certain()
        if found is None:
            e, verdict = self.stuck
            g = self.game
            view = np.frombuffer(g.cells, dtype=np.uint8).reshape(g.height, g.width)
            got = solver.stuck_guess(view, e.state, verdict, g.mines)
            if got is None:
                raise solver.InconsistentBoard("stuck with no hidden cell left")
            hint, choice = got
            if self.judged is None and (choice is None or choice.kind != "forced"):
                if choice is not None:
                    self.judged = choice.safest
                else:
                    # Odds from a component too big to count exactly are estimates:
                    # nothing is then known of how well perfect play does.
                    self.judged = hint.mine_probability if verdict.exact else 0.0
            found = [hint.y * g.width + hint.x]
            self.guessed.extend(found)
        self._open(found)
        return self.game.status == "playing"

