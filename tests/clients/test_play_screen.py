"""``minesweeper play`` as a person sees it in a 50x15 pane and an 80x24 terminal: the
screen rendered by a terminal emulator (pyte) from what the program wrote to its pty."""

from __future__ import annotations

import contextlib
import re
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pexpect
import pyte
import pytest
from minesweeper import Client
from minesweeper.frame import help_line
from minesweeper.tokens import TokenStore

from .conftest import FIRST, command, mines_of, safe_cells


class Screen:
    """A ``minesweeper play`` process in a terminal of ``columns`` x ``lines``, and what
    that terminal shows."""

    def __init__(self, url: str, env: dict[str, str], columns: int, lines: int,
                 *args: str) -> None:
        argv = [*command(), "play", *args, "--url", url]
        self.child = pexpect.spawn(
            argv[0], argv[1:], env={**env, "TERM": "xterm-256color"},
            dimensions=(lines, columns), encoding="utf-8", timeout=20,
        )
        self.screen = pyte.Screen(columns, lines)
        self.stream = pyte.Stream(self.screen)
        self.columns, self.lines = columns, lines

    @property
    def rows(self) -> list[str]:
        return [row.rstrip() for row in self.screen.display]

    def wait(self, check: Callable[[list[str]], object], what: str, timeout: float = 20) -> None:
        """Read what the program writes until the screen passes ``check``."""
        deadline = time.monotonic() + timeout
        while not check(self.rows):
            if time.monotonic() > deadline:
                raise AssertionError(f"never on screen: {what}\n" + "\n".join(self.rows))
            with contextlib.suppress(pexpect.TIMEOUT):
                self.stream.feed(self.child.read_nonblocking(65536, timeout=0.2))

    def shows(self, pattern: str, timeout: float = 20) -> None:
        self.wait(lambda rows: any(re.search(pattern, r) for r in rows), pattern, timeout)

    def send(self, keys: str) -> None:
        self.child.send(keys)

    def close(self) -> None:
        if self.child.isalive():
            self.child.terminate(force=True)


@pytest.fixture
def screens(live_server: str) -> Iterator[list[Screen]]:
    opened: list[Screen] = []
    yield opened
    for s in opened:
        s.close()


def open_screen(screens: list[Screen], url: str, env: dict[str, str], size: tuple[int, int],
                *args: str) -> Screen:
    s = Screen(url, env, *size, *args)
    screens.append(s)
    return s


def used(rows: list[str]) -> list[str]:
    """The rows down to the last one with something on it."""
    last = max((n for n, r in enumerate(rows) if r), default=-1)
    return rows[: last + 1]


def check_frame(s: Screen, board_rows: int, watching: bool = False) -> list[str]:
    """What every screen keeps: the title on top, the keys last and whole, no line wider
    than the terminal (none wrapped), nothing blank between the board's ``board_rows``
    lines and the keys."""
    # A frame arrives in pieces: read on until its last line, the keys, is drawn.
    keys = help_line(s.columns - 1, watching)
    s.wait(lambda rows: keys in rows, "the keys")
    rows = used(s.rows)
    assert rows[0].startswith("Minesweeper"), rows
    assert rows[1].startswith("mines"), rows
    assert rows[-1] == help_line(s.columns - 1, watching), rows
    assert len(rows) <= s.lines
    assert all(len(r) < s.columns for r in rows), rows
    assert all(rows[2 + board_rows :]), f"blank lines under the board: {rows}"
    return rows


def test_a_50x15_pane_shows_the_title_the_keys_and_what_is_out_of_view(
    screens: list[Screen], live_server: str, cli_env: dict[str, str], client: Client
) -> None:
    s = open_screen(screens, live_server, cli_env, (50, 15), "--preset", "expert",
                    "--seed", "1650")
    s.shows(r"mines 99  time 0  \(15, 8\)  reveal a cell to start")
    rows = check_frame(s, 10 + 1)
    board = rows[2:-1]
    # 24 of 30 columns and 10 of 16 rows fit: the rest is marked, and counted.
    assert board[-1] == "  v 6 rows below", board
    assert all(r.endswith(">") for r in board[:-1]), board
    assert "[" in board[8] and "]" in board[8], "the cursor, in brackets"
    assert board[8].index("[") == 1 + 2 * 15 - 1

    s.send("d" * 14)  # to the last column: the view follows, columns to the left are marked
    s.shows(r"\(29, 8\)")
    rows = check_frame(s, 10 + 1)
    assert all(r.startswith("<") for r in rows[2:-2]), rows
    assert rows[2 + 8].endswith("]"), rows
    s.send("s" * 7)  # to the last row: rows above
    s.shows(r"\(29, 15\)")
    rows = check_frame(s, 1 + 10)
    assert rows[2] == "  ^ 6 rows above", rows
    assert rows[-2].endswith("]"), "the cursor's row is the last board row"

    # A hint's reason takes lines under the board; the title and the keys stay.
    s.send(" ")
    s.shows(r"playing")
    s.send("h")
    s.shows(r"hint: \(\d+, \d+\) is")
    rows = check_frame(s, 0)
    hint_at = next(n for n, r in enumerate(rows) if r.startswith("hint:"))
    board_end = max(n for n, r in enumerate(rows) if n < hint_at)
    assert any("[" in r for r in rows[2 : board_end + 1]), "the cursor, on the hinted cell"
    game_id = TokenStore(Path(cli_env["MINESWEEPER_TOKENS"])).last(live_server)
    assert game_id and client.get(game_id).stats.hints == 1
    s.send("q")
    s.child.expect(pexpect.EOF)


def test_an_80x24_terminal_shows_the_whole_beginner_board_and_its_end(
    screens: list[Screen], live_server: str, cli_env: dict[str, str], client: Client
) -> None:
    mines = mines_of(client, seed=1651, preset="beginner")
    s = open_screen(screens, live_server, cli_env, (80, 24), "--seed", "1651")
    s.shows("reveal a cell to start")
    rows = check_frame(s, 9)
    assert len(rows) == 2 + 9 + 1, "the board, then the keys: nothing kept empty"
    assert not any(r.endswith(">") or r.startswith("<") or "rows" in r for r in rows[2:-1])
    assert rows[-1] == "arrows move  space reveal  f flag  q quit  c chord  h hint  p pause  n new"

    s.send(" ")
    s.shows("playing")
    twin = client.new_game("beginner", seed=1651)
    client.reveal(twin, *FIRST)
    cursor = FIRST
    for x, y in safe_cells(twin, mines):
        if twin[x, y] != "#":
            continue
        dx, dy = x - cursor[0], y - cursor[1]
        s.send(("d" if dx > 0 else "a") * abs(dx) + ("s" if dy > 0 else "w") * abs(dy) + " ")
        cursor = (x, y)
        client.reveal(twin, x, y)
    s.shows(r"You won in \d+\.\ds!")
    rows = check_frame(s, 9)
    assert re.fullmatch(r"You won in \d+\.\ds!", rows[-3]), rows
    assert rows[-2].startswith("clicks ") and rows[-2].endswith("unassisted"), rows
    s.send("q")
    s.child.expect(pexpect.EOF)


def test_a_watcher_has_no_move_keys_and_is_told_the_players_end(
    screens: list[Screen], live_server: str, cli_env: dict[str, str], client: Client
) -> None:
    mines = mines_of(client, seed=1652, preset="beginner")
    game = client.new_game("beginner", seed=1652)
    s = open_screen(screens, live_server, cli_env, (80, 24), game.id)
    s.shows("reveal a cell to start")
    rows = check_frame(s, 9, watching=True)
    assert rows[-1] == "watching only: arrows move  q quit  n new game"
    s.send(" ")
    s.shows("watching only: no token for this game here")
    client.reveal(game, *FIRST)
    client.hint(game)
    s.shows(r"the player used a hint \(1 so far\)")
    client.reveal(game, *sorted(mines)[0])
    s.shows(r"The player hit a mine after \d+\.\ds\.")
    assert not any("Boom" in r or "You " in r for r in s.rows)
    check_frame(s, 9, watching=True)
    s.send("q")
    s.child.expect(pexpect.EOF)
    assert "The player hit a mine" in str(s.child.before)


def test_the_cursor_shows_on_a_hinted_cell_in_colour(
    screens: list[Screen], live_server: str, cli_env: dict[str, str]
) -> None:
    colour = {k: v for k, v in cli_env.items() if k != "NO_COLOR"}
    s = open_screen(screens, live_server, colour, (80, 24), "--seed", "1653")
    s.shows("reveal a cell to start")
    s.send("dd")
    s.send("h")  # the first hint is the middle: the cursor goes back onto it
    s.shows(r"hint: \(4, 4\) is safe")
    row = s.rows[2 + 4]
    at = 1 + 2 * 4
    assert row[at - 1] == "[" and row[at + 1] == "]", row
    cell = s.screen.buffer[2 + 4][at]
    assert cell.bg == "green" and not cell.reverse, cell
    s.send("q")
    s.child.expect(pexpect.EOF)
