"""Changes to one game take turns within a process.

Under contention, optimistic retries through Redis alone waste most round trips
and can run out of attempts; across processes the commit's version check still
decides. Only games with a change in flight have an entry.
"""

from __future__ import annotations

import asyncio

from .problems import ApiError

# Longer than a change takes with Redis answering within its command timeout.
TURN_TIMEOUT = 3.0


class _Turn:
    """A game's lock in this process, and how many changes hold it or wait for it."""

    __slots__ = ("lock", "waiting")

    def __init__(self) -> None:
        self.lock = asyncio.Lock()
        self.waiting = 0


_turns: dict[str, _Turn] = {}


def busy() -> ApiError:
    """A game whose writes keep racing, or whose turn does not come in time."""
    return ApiError(
        503, "store_unavailable", "the game is too busy right now; try again",
        {"Retry-After": "1"},
    )


class turn:  # named like a function: it is used as ``async with turn(game_id): ...``
    """This process's turn on a game, waited for at most TURN_TIMEOUT.

    A plain class rather than a generator-based context manager: it is on the path
    of every move.
    """

    __slots__ = ("entry", "game_id")
    entry: _Turn

    def __init__(self, game_id: str) -> None:
        self.game_id = game_id

    async def __aenter__(self) -> None:
        entry = _turns.get(self.game_id)
        if entry is None:
            entry = _turns[self.game_id] = _Turn()
        self.entry = entry
        entry.waiting += 1
        if not entry.lock.locked():
            await entry.lock.acquire()  # free: taken at once, no timer needed
            return
        try:
            async with asyncio.timeout(TURN_TIMEOUT):
                await entry.lock.acquire()
        except BaseException as exc:  # a timeout, or the client went away while waiting
            self._leave()
            if isinstance(exc, TimeoutError):
                raise busy() from None
            raise

    async def __aexit__(self, *exc_info: object) -> None:
        self.entry.lock.release()
        self._leave()

    def _leave(self) -> None:
        self.entry.waiting -= 1
        if not self.entry.waiting:
            del _turns[self.game_id]
