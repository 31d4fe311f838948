"""A service that stops answering (SIGSTOP) or goes away: the terminal stays live, quits
at once, and the SDK notices a silent socket by its missing heartbeats."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Iterator

import pexpect
import pytest
from minesweeper import Client

from tests.support.servers import ServiceProcess, free_port

from .conftest import command
from .test_play import ARROWS, GAME_ID, Terminal


@pytest.fixture
def service(redis_url: str) -> Iterator[ServiceProcess]:
    """A service process of the test's own, to stop and go on."""
    svc = ServiceProcess({"REDIS_URL": redis_url}, port=free_port()).start()
    try:
        yield svc
    finally:
        assert svc.proc is not None
        with contextlib.suppress(ProcessLookupError):
            os.kill(svc.proc.pid, signal.SIGCONT)
        svc.stop()


@contextlib.contextmanager
def frozen(svc: ServiceProcess) -> Iterator[None]:
    """The service stopped (SIGSTOP) inside the block, going on again after it."""
    assert svc.proc is not None
    os.kill(svc.proc.pid, signal.SIGSTOP)
    try:
        yield
    finally:
        os.kill(svc.proc.pid, signal.SIGCONT)


def ends_within(child: pexpect.spawn, seconds: float) -> float:
    """How long the process took to end; it must within ``seconds``."""
    started = time.monotonic()
    child.expect(pexpect.EOF, timeout=seconds)
    took = time.monotonic() - started
    child.close()
    return took


def test_keys_stay_live_while_a_move_waits(
    service: ServiceProcess, cli_env: dict[str, str]
) -> None:
    """Moves pressed while the service does not answer show "sending...", wait their turn
    and go in the order pressed; the cursor moves meanwhile; q quits at once."""
    t = Terminal(service.url, cli_env, "--seed", "421")
    try:
        game_id = t.expect(GAME_ID).group(1)
        t.send(" ")
        t.expect("playing")
        with Client(service.url) as client:
            board = client.get(game_id).board
        hidden = [(x, y) for y, row in enumerate(board) for x, c in enumerate(row) if c == "#"]
        first, second = hidden[0], hidden[-1]
        with frozen(service):
            t.go(*first)
            t.send("f")
            t.child.expect("sending\\.\\.\\. \\(q quits\\)", timeout=5)
            t.go(*second)
            t.send("f")
            t.child.expect("sending\\.\\.\\. \\(1 more waiting\\)", timeout=5)
            step = "left" if second[0] > 0 else "right"
            t.send(ARROWS[step])
            moved = second[0] - 1 if step == "left" else second[0] + 1
            t.child.expect(f"\\({moved}, {second[1]}\\)", timeout=5)  # keys work while it waits
            time.sleep(1)
        t.expect("mines left 8   ")
        with Client(service.url) as client:
            view = client.get(game_id)
            replay_order = [view.board[first[1]][first[0]], view.board[second[1]][second[0]]]
        assert replay_order == ["F", "F"] and view.version == 3
        with frozen(service):
            t.send("q")  # nothing in flight: the live socket is closed without a long wait
            assert ends_within(t.child, 5) < 5
        assert f"game {game_id}: playing" in str(t.child.before)
    finally:
        t.close()


def test_quit_while_a_move_waits(service: ServiceProcess, cli_env: dict[str, str]) -> None:
    t = Terminal(service.url, cli_env, "--seed", "422")
    try:
        game_id = t.expect(GAME_ID).group(1)
        t.expect("reveal a cell to start")
        with frozen(service):
            t.send(" ")
            t.child.expect("sending", timeout=5)
            t.send("q")
            ends_within(t.child, 5)
        assert f"game {game_id}:" in str(t.child.before)
    finally:
        t.close()


def test_watch_ends_at_once_on_ctrl_c(service: ServiceProcess, cli_env: dict[str, str]) -> None:
    with Client(service.url) as client:
        game = client.new_game("beginner")
    argv = [*command(), "watch", game.id, "--url", service.url]
    child = pexpect.spawn(argv[0], argv[1:], env=cli_env, encoding="utf-8", timeout=20)
    try:
        child.expect(f"game {game.id}")
        with frozen(service):
            child.sendintr()
            ends_within(child, 5)
    finally:
        if child.isalive():
            child.terminate(force=True)
