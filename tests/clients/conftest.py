"""Fixtures for the SDK and console tests: clients on the live service, twin games.

Same seed, settings and first click give the same board, so a test learns where the
mines are by losing a twin game on purpose, then plays its own game knowing them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from minesweeper import AsyncClient, Client, Game

Cell = tuple[int, int]
FIRST = (4, 4)  # the first click of every beginner game here: the middle


@pytest.fixture
def client(live_server: str) -> Iterator[Client]:
    with Client(live_server, timeout=30) as c:
        yield c


@pytest.fixture
async def aclient(live_server: str) -> AsyncIterator[AsyncClient]:
    async with AsyncClient(live_server, timeout=30) as c:
        yield c


def mines_of(client: Client, seed: int, first: Cell = FIRST, **settings: Any) -> set[Cell]:
    """Where the mines of a ``seed`` game are, learnt by losing its twin."""
    twin = client.new_game(seed=seed, **settings)
    client.reveal(twin, *first)
    for y in reversed(range(twin.view.height)):
        for x in reversed(range(twin.view.width)):
            if twin.finished:
                break
            if twin[x, y] == "#":
                client.reveal(twin, x, y)
    board = twin.view.board
    return {(x, y) for y, row in enumerate(board) for x, c in enumerate(row) if c in "*XF"}


def safe_cells(game: Game, mines: set[Cell]) -> list[Cell]:
    """The cells still to open to win."""
    v = game.view
    return [
        (x, y) for y in range(v.height) for x in range(v.width)
        if (x, y) not in mines and v.board[y][x] == "#"
    ]


# ---- the console command ----------------------------------------------------------------


def command() -> list[str]:
    """The installed ``minesweeper`` script, or the module when not installed."""
    script = shutil.which("minesweeper")
    return [script] if script else [sys.executable, "-m", "minesweeper"]


@pytest.fixture
def cli_env(tmp_path: Path) -> dict[str, str]:
    """An environment with its own token file and no colours."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MINESWEEPER_")}
    env["MINESWEEPER_TOKENS"] = str(tmp_path / "state" / "tokens.json")
    env["NO_COLOR"] = "1"
    return env


@pytest.fixture
def cli(live_server: str, cli_env: dict[str, str]) -> Any:
    """Run ``minesweeper ARGS --url <live server>``; the completed process."""

    def run(*args: str, check: bool = True, url: bool = True) -> subprocess.CompletedProcess[str]:
        argv = [*command(), *args, *(["--url", live_server] if url else [])]
        done = subprocess.run(argv, env=cli_env, capture_output=True, text=True, timeout=60)
        if check:
            assert done.returncode == 0, done.stderr
        return done

    return run
