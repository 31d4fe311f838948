"""``minesweeper play`` driven through a pseudo-terminal: keys in, screen out."""

from __future__ import annotations

import os
import re
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pexpect
import pytest
from minesweeper import Client
from minesweeper.frame import help_line
from minesweeper.tokens import TokenStore

from tests.support.servers import ServiceProcess, free_port

from .conftest import FIRST, command, mines_of, safe_cells

ARROWS = {"up": "\x1b[A", "down": "\x1b[B", "right": "\x1b[C", "left": "\x1b[D"}
GAME_ID = re.compile(r"game ([0-9a-f]{32})")


class Terminal:
    """A ``minesweeper play`` process (or ``race``, ...) in an 80x24 terminal, and where
    its cursor is."""

    def __init__(self, url: str, env: dict[str, str], *args: str, verb: str = "play") -> None:
        argv = [*command(), verb, *args, "--url", url]
        self.child = pexpect.spawn(
            argv[0], argv[1:], env={**env, "TERM": "xterm-256color"}, dimensions=(24, 80),
            encoding="utf-8", timeout=20,
        )
        self.cursor = FIRST  # the middle of a beginner board

    def expect(self, pattern: str) -> re.Match[str]:
        self.child.expect(pattern)
        match = self.child.match
        assert isinstance(match, re.Match)
        return match

    def quit(self) -> str:
        """Press q; what the process printed last, once it has ended."""
        self.send("q")
        self.child.expect(pexpect.EOF)
        self.child.close()
        assert self.child.exitstatus == 0
        return str(self.child.before)

    def send(self, keys: str) -> None:
        self.child.send(keys)

    def go(self, x: int, y: int) -> None:
        cx, cy = self.cursor
        dx, dy = x - cx, y - cy
        self.send(ARROWS["right" if dx > 0 else "left"] * abs(dx))
        self.send(ARROWS["down" if dy > 0 else "up"] * abs(dy))
        self.cursor = (x, y)

    def close(self) -> None:
        if self.child.isalive():
            self.child.terminate(force=True)


@pytest.fixture
def terminals(live_server: str, cli_env: dict[str, str]) -> Iterator[list[Terminal]]:
    opened: list[Terminal] = []
    yield opened
    for t in opened:
        t.close()


def open_terminal(terminals: list[Terminal], url: str, env: dict[str, str], *args: str) -> Terminal:
    t = Terminal(url, env, *args)
    terminals.append(t)
    return t


def test_move_reveal_flag_chord_quit(
    terminals: list[Terminal], live_server: str, cli_env: dict[str, str], client: Client
) -> None:
    t = open_terminal(terminals, live_server, cli_env, "--seed", "401")
    game_id = t.expect(GAME_ID).group(1)
    t.expect("mines left 10   time 0   reveal a cell to start")
    assert TokenStore(Path(cli_env["MINESWEEPER_TOKENS"])).get(game_id)
    t.send(" ")
    t.expect("mines left 10   time \\d+   playing")
    view = client.get(game_id)
    assert view.version == 1 and view.board[4][4] != "#"
    hidden = next((x, y) for y, row in enumerate(view.board) for x, c in enumerate(row)
                  if c == "#")
    t.go(*hidden)
    t.send("f")
    t.expect("mines left 9   ")
    assert client.get(game_id).board[hidden[1]][hidden[0]] == "F"
    assert hidden[0] < 8 and hidden[1] < 8
    t.send("dasw")  # wasd move too: right, left, down, up, back where it was
    t.send("c")  # a chord on a flag changes nothing, and says nothing
    t.send("f")
    t.expect("mines left 10   ")
    # Back on the normal screen, one line tells how the game stands.
    assert f"game {game_id}: playing  mines left 10" in t.quit()
    assert client.get(game_id).version == 3


def test_win_then_new_game(
    terminals: list[Terminal], live_server: str, cli_env: dict[str, str], client: Client
) -> None:
    mines = mines_of(client, seed=402, preset="beginner")
    t = open_terminal(terminals, live_server, cli_env, "--preset", "beginner", "--seed", "402")
    game_id = t.expect(GAME_ID).group(1)
    t.send("\r")  # enter reveals too
    t.expect("playing")
    game = client.new_game("beginner", seed=402)  # a twin, to see what the player sees
    client.reveal(game, *FIRST)
    for x, y in safe_cells(game, mines):
        if game[x, y] == "#":
            t.go(x, y)
            t.send(" ")
            client.reveal(game, x, y)
    t.expect(r"You won in \d+\.\ds!")
    t.expect(r"clicks \d+ \(\d+ useful\)  3BV \d+  3BV/s [\d.]+  efficiency \d+%  unassisted")
    t.expect("won")
    assert client.get(game_id).board == game.view.board
    t.send(" ")
    t.expect("the game is over: n for a new game, q to quit")
    t.send("n")
    new_id = t.expect(f"game (?!{game_id})([0-9a-f]{{32}})").group(1)  # not a late redraw
    t.expect("mines left 10   time 0   reveal a cell to start")
    t.quit()
    assert client.get(new_id).preset == "beginner"


def test_lose(
    terminals: list[Terminal], live_server: str, cli_env: dict[str, str], client: Client
) -> None:
    mines = mines_of(client, seed=403, preset="beginner")
    t = open_terminal(terminals, live_server, cli_env, "--seed", "403")
    game_id = t.expect(GAME_ID).group(1)
    t.send(" ")
    t.expect("playing")
    t.go(*sorted(mines)[0])
    t.send(" ")
    t.expect(r"Boom! You hit a mine after \d+\.\ds\.")
    t.expect(r"clicks 2 \(2 useful\)  3BV \d+/\d+  .*unassisted")
    t.quit()
    view = client.get(game_id)
    assert view.status == "lost"


def test_follows_moves_made_elsewhere(
    terminals: list[Terminal], live_server: str, cli_env: dict[str, str], client: Client
) -> None:
    game = client.new_game("beginner", seed=404)
    assert game.token is not None
    TokenStore(Path(cli_env["MINESWEEPER_TOKENS"])).put(game.id, game.token, live_server)
    t = open_terminal(terminals, live_server, cli_env, game.id)
    t.expect(f"game {game.id}")
    t.expect("mines left 10")
    client.flag(game, 0, 0)  # no key pressed: the screen follows the socket
    t.expect("mines left 9   time 0   reveal a cell to start")
    client.reveal(game, *FIRST)
    t.expect("mines left 9   time 0   playing")
    t.expect("mines left 9   time 1   playing")  # the clock runs on its own
    t.go(*safe_cells(game, {(0, 0)})[0])
    t.send("f")  # the player's token was found: moves work
    t.expect("mines left 8   ")
    t.quit()


def test_spectator_without_a_token(
    terminals: list[Terminal], live_server: str, cli_env: dict[str, str], client: Client
) -> None:
    game = client.new_game("beginner")
    t = open_terminal(terminals, live_server, cli_env, game.id)
    t.expect("reveal a cell to start")
    t.send(" ")
    t.expect("watching only")
    t.quit()
    assert client.get(game.id).version == 0


HINT = re.compile(r"hint: \((\d+), (\d+)\) (is safe|is a mine|is the safest guess): ([^\x1b\r\n]+)")
HELP = help_line(79, watching=False)
UNDERLINE, ON_GREEN = "\x1b[4m", "\x1b[30;42m"


def test_hint_key_then_win(
    terminals: list[Terminal], live_server: str, cli_env: dict[str, str], client: Client
) -> None:
    """h lights the next cell, puts the cursor on it and says why; the win that follows
    shows on the end screen as assisted."""
    mines = mines_of(client, seed=405, preset="beginner")
    t = open_terminal(terminals, live_server, cli_env, "--seed", "405")
    game_id = t.expect(GAME_ID).group(1)
    t.send(" ")
    t.expect("playing")
    t.send("h")
    hint = t.expect(HINT.pattern)
    x, y, kind = int(hint.group(1)), int(hint.group(2)), hint.group(3)
    # The hinted cell, under the cursor now: underlined (no colours here), in the cursor's brackets.
    assert re.search(re.escape("[" + UNDERLINE) + "[·.]", str(t.child.before))
    view = client.get(game_id)
    assert view.board[y][x] == "#" and view.stats.hints == 1 and view.stats.assisted
    assert kind == "is safe" and (x, y) not in mines  # this seed's first hint
    t.cursor = (x, y)
    t.send(" ")  # the cursor is on it: reveal it
    t.expect("mines left 10")
    game = client.new_game("beginner", seed=405)  # a twin, to see what the player sees
    client.reveal(game, *FIRST)
    client.reveal(game, x, y)
    for cx, cy in safe_cells(game, mines):
        if game[cx, cy] == "#":
            t.go(cx, cy)
            t.send(" ")
            client.reveal(game, cx, cy)
    t.expect(r"You won in \d+\.\ds!")
    t.expect(r"efficiency \d+%  assisted \(1 hint\)")
    t.send("h")
    t.expect("the game is over: n for a new game, q to quit")
    out = t.quit()
    assert f"game {game_id}: You won in" in out and "assisted (1 hint)" in out
    assert client.get(game_id).stats.hints == 1


def test_hint_in_colour_and_for_a_watcher(
    terminals: list[Terminal], live_server: str, cli_env: dict[str, str], client: Client
) -> None:
    colour = {k: v for k, v in cli_env.items() if k != "NO_COLOR"}
    t = open_terminal(terminals, live_server, colour, "--seed", "406")
    t.expect("reveal a cell to start")
    t.send("dds")  # away from the middle, where the first hint will take the cursor back
    t.send("h")
    t.expect(re.escape("hint: (4, 4) is safe: the first click never hits a mine"))
    # A safe cell lights up green, and the cursor on it shows in brackets.
    assert "[" + ON_GREEN in str(t.child.before)
    t.quit()
    game = client.new_game("beginner")
    watcher = open_terminal(terminals, live_server, cli_env, game.id)
    watcher.expect("reveal a cell to start")
    watcher.send("h")
    watcher.expect("watching only")
    watcher.send("p")
    watcher.expect("watching only")
    watcher.quit()
    view = client.get(game.id)
    assert view.stats.hints == 0 and not view.paused


def test_pause_key(
    terminals: list[Terminal], live_server: str, cli_env: dict[str, str], client: Client
) -> None:
    """p hides the board and stops the clock, here and for everyone; a resume from
    elsewhere shows up live; moves wait."""
    t = open_terminal(terminals, live_server, cli_env, "--seed", "407")
    game_id = t.expect(GAME_ID).group(1)
    token = TokenStore(Path(cli_env["MINESWEEPER_TOKENS"])).get(game_id)
    t.send(" ")
    t.expect("playing")
    board = client.get(game_id).board
    t.send("p")
    # The whole frame, from the status line to the help: no cell of the board in it.
    frame = t.expect(r"time (\d+)   paused   \(\d+, \d+\)\x1b\[K(.*?)" + re.escape(HELP))
    body = frame.group(2)
    assert "paused: the clock is stopped; p resumes" in body
    assert not re.search(r"[0-9#·.]", body), body
    view = client.get(game_id)
    assert view.paused and view.version == 2
    t.send(" ")
    t.expect("the game is paused: p to resume")
    t.send("f")
    t.expect("the game is paused: p to resume")
    assert client.get(game_id).version == 2  # nothing was sent
    client.resume(game_id, token=token)  # from elsewhere: the screen follows
    t.expect(r"time \d+   playing   \(\d+, \d+\)\x1b\[K")
    first_row = " ".join({"#": "[·.]", "0": " "}.get(c, c) for c in board[0])
    t.expect(" " + first_row + re.escape("\x1b[K"))  # the board is back
    t.send("p")
    t.expect(r"time \d+   paused")
    t.send("p")
    t.expect(r"time \d+   playing")
    assert f"game {game_id}: playing  mines left 10" in t.quit()
    view = client.get(game_id)
    assert not view.paused and view.version == 5 and view.stats.hints == 0


def test_service_outage_refuses_keys_then_reconnects(
    terminals: list[Terminal], redis_url: str, cli_env: dict[str, str]
) -> None:
    """The service goes away for longer than the live connection keeps trying: the screen
    says it is reconnecting, refuses playing keys at once (nothing is kept to be sent
    later), and plays on over a new connection once the service is back."""
    svc = ServiceProcess({"REDIS_URL": redis_url}, port=free_port()).start()
    try:
        t = open_terminal(terminals, svc.url, cli_env, "--seed", "408")
        game_id = t.expect(GAME_ID).group(1)
        t.send(" ")
        t.expect("playing")
        svc.stop()
        t.expect("connection lost: reconnecting")
        for key in ("h", "p", " "):
            started = time.monotonic()
            t.send(key)
            t.expect("not sent: the connection is down")
            assert time.monotonic() - started < 3
            t.send("d")  # the cursor still moves: the next refusal is a new line
        time.sleep(14)  # longer than the live connection's own retries
        svc.start()
        t.expect("reconnected")
        with Client(svc.url) as client:
            board = client.get(game_id).board
            hidden = next((x, y) for y, row in enumerate(board) for x, c in enumerate(row)
                          if c == "#")
            t.cursor = (FIRST[0] + 3, FIRST[1])
            t.go(*hidden)
            t.send("f")
            t.expect("mines left 9   ")
            t.quit()
            view = client.get(game_id)
        # Neither the hint nor the pause pressed while it was down was sent afterwards.
        assert view.version == 2 and view.stats.hints == 0 and not view.paused
    finally:
        svc.stop()


def test_a_move_that_times_out_says_why(
    terminals: list[Terminal], redis_url: str, cli_env: dict[str, str]
) -> None:
    """The service stops answering with the socket still open: the move fails after the
    client's timeout, and the message gives the reason rather than nothing."""
    svc = ServiceProcess({"REDIS_URL": redis_url}, port=free_port()).start()
    try:
        t = open_terminal(terminals, svc.url, cli_env, "--seed", "409")
        t.expect(GAME_ID)
        t.send(" ")
        t.expect("playing")
        assert svc.proc is not None
        os.kill(svc.proc.pid, signal.SIGSTOP)
        try:
            t.send("d ")
            t.child.timeout = 30
            t.expect("the move did not go through: no answer to the move within 10 s")
        finally:
            os.kill(svc.proc.pid, signal.SIGCONT)
        t.quit()
    finally:
        svc.stop()


def test_quit_line_shows_the_time_of_the_clock(
    terminals: list[Terminal], live_server: str, cli_env: dict[str, str]
) -> None:
    """The line left on the normal screen tells the game's time when q was pressed, as
    the screen's clock counted it, not the time of the last move."""
    t = open_terminal(terminals, live_server, cli_env, "--seed", "410")
    t.expect(GAME_ID)
    t.send(" ")
    t.expect("playing")
    t.expect("time 2   playing")
    took = re.search(r"playing  mines left 10  time ([\d.]+)s", t.quit())
    assert took is not None and float(took.group(1)) >= 2.0, took


def test_ctrl_c_says_how_to_go_on_with_the_game(
    terminals: list[Terminal], live_server: str, cli_env: dict[str, str]
) -> None:
    """Ctrl-C leaves like q, with status 130, and the id to come back to the game with."""
    t = open_terminal(terminals, live_server, cli_env)
    game_id = t.expect(GAME_ID).group(1)
    t.send(" ")
    t.expect("playing")
    t.send("\x03")
    t.child.expect(pexpect.EOF)
    t.child.close()
    assert t.child.exitstatus == 130
    assert f"minesweeper play {game_id}" in str(t.child.before)
