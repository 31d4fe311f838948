"""This process's copy of the games it served last, each as of the write it last saw.

A move on a cached game skips loading it: it is applied to the copy and committed
against the write the copy was taken at (``rev`` and that write's random ``attempt``
id), which ``commit.lua`` compares. A copy another process wrote past only costs a
retry, on the game the commit script answers with; a copy is never trusted without that
check, so it needs no invalidation. Kept to a budget of snapshot bytes, least recently
used first out.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .games import Record

# Enough for thousands of expert games; a big board is kept out (see ``largest``).
BUDGET_BYTES = 32 * 2**20


class GameCache:
    def __init__(self, budget: int = BUDGET_BYTES) -> None:
        self.budget = budget
        # A board bigger than this is not kept: its moves are slow anyway, and a few of
        # them would push every other game out.
        self.largest = budget // 256
        self._records: OrderedDict[str, Record] = OrderedDict()
        self._bytes = 0

    def get(self, game_id: str) -> Record | None:
        record = self._records.get(game_id)
        if record is not None:
            self._records.move_to_end(game_id)
        return record

    def put(self, game_id: str, record: Record) -> None:
        self.drop(game_id)
        size = _size(record)
        if size > self.largest:
            return
        self._records[game_id] = record
        self._bytes += size
        while self._bytes > self.budget:
            _, oldest = self._records.popitem(last=False)
            self._bytes -= _size(oldest)

    def drop(self, game_id: str) -> None:
        old = self._records.pop(game_id, None)
        if old is not None:
            self._bytes -= _size(old)


def _size(record: Record) -> int:
    return len(record.game.cells) + len(record.game.layout) + 256
