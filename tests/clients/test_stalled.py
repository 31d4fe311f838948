"""A service that stops answering (SIGSTOP) or goes away: the terminal stays live, quits
at once, and the SDK notices a silent socket by its missing heartbeats."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from collections.abc import Iterator

import pexpect
import pytest
from minesweeper import AsyncClient, Client, Heartbeat, Snapshot
from minesweeper.wire import MatchHeartbeat, MatchSnapshot, MatchUpdate

from tests.support.play import unique_name
from tests.support.servers import ServiceProcess, free_port

from .conftest import command
from .test_play import ARROWS, GAME_ID, Terminal


def own_service(redis_url: str, **env: str) -> Iterator[ServiceProcess]:
    """A service process of the test's own, to stop and go on: left going again, then
    stopped, whatever the test did to it."""
    svc = ServiceProcess({"REDIS_URL": redis_url, **env}, port=free_port()).start()
    try:
        yield svc
    finally:
        assert svc.proc is not None
        with contextlib.suppress(ProcessLookupError):
            os.kill(svc.proc.pid, signal.SIGCONT)
        svc.stop()


@pytest.fixture
def service(redis_url: str) -> Iterator[ServiceProcess]:
    yield from own_service(redis_url)


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


@pytest.fixture
def chatty(redis_url: str) -> Iterator[ServiceProcess]:
    """A service of the test's own that sends a heartbeat every second."""
    yield from own_service(redis_url, HEARTBEAT_SECONDS="1")


async def _until_dropped(messages: object) -> float:
    """Seconds until iterating ``messages`` raised ``ConnectionError``."""
    started = time.monotonic()
    with pytest.raises(ConnectionError):
        while True:
            await asyncio.wait_for(anext(messages), 30)  # type: ignore[call-overload]
    return time.monotonic() - started


async def test_a_silent_game_socket_counts_as_dropped(chatty: ServiceProcess) -> None:
    """No heartbeat for heartbeat_timeout seconds: the socket is dropped and resumed
    (here, with retries=1 against a frozen service: given up) well before websockets'
    own pings would have noticed (20 s + 20 s)."""
    async with AsyncClient(chatty.url, timeout=2, heartbeat_timeout=3) as client:
        game = await client.new_game("beginner")
        async with contextlib.aclosing(client.watch(game, retries=1)) as messages:
            assert isinstance(await anext(messages), Snapshot)
            assert isinstance(await asyncio.wait_for(anext(messages), 10), Heartbeat)
            with frozen(chatty):
                assert await _until_dropped(messages) < 15


async def test_a_silent_match_socket_counts_as_dropped(chatty: ServiceProcess) -> None:
    async with AsyncClient(chatty.url, timeout=2, heartbeat_timeout=3) as client:
        ada = await client.register(unique_name("quiet"))
        room = await client.new_match("race", "beginner", player_token=ada.token)
        messages = client.watch_match(room.id, retries=1)
        async with contextlib.aclosing(messages):
            assert isinstance(await anext(messages), MatchSnapshot)
            assert isinstance(await asyncio.wait_for(anext(messages), 10), MatchHeartbeat)
            with frozen(chatty):
                assert await _until_dropped(messages) < 15


def test_watch_command_reconnects_however_long_the_service_is_away(
    service: ServiceProcess, cli_env: dict[str, str]
) -> None:
    """The command says it lost the connection, keeps trying past the live connection's
    own few tries, and prints the moves made once the service is back."""
    with Client(service.url) as client:
        game = client.new_game("beginner", seed=424)
    argv = [*command(), "watch", game.id, "--url", service.url]
    child = pexpect.spawn(argv[0], argv[1:], env=cli_env, encoding="utf-8", timeout=20)
    try:
        child.expect(f"game {game.id}")
        service.stop()
        child.expect("connection lost: reconnecting")
        time.sleep(14)  # longer than the live connection's own tries (about 11 s)
        assert child.isalive()
        service.start()
        child.expect("reconnected")
        with Client(service.url) as client:
            client.reveal(game, 4, 4)
        child.expect("v1 reveal 4,4")
    finally:
        if child.isalive():
            child.terminate(force=True)


async def test_retries_none_outlasts_a_long_outage(service: ServiceProcess) -> None:
    """With ``retries=None`` a match's watch and a game's live connection wait for a
    service that is away longer than the default 8 tries last (about 11 s)."""
    async with AsyncClient(service.url, timeout=2) as client:
        ada = await client.register(unique_name("away"))
        bob = await client.register(unique_name("away"))
        room = await client.new_match("race", "beginner", rated=False, player_token=ada.token)
        game = await client.new_game("beginner")
        watch = client.watch_match(room.id, retries=None)
        async with contextlib.aclosing(watch), client.connect(game, retries=None) as live:
            assert isinstance(await anext(watch), MatchSnapshot)
            assert isinstance(await anext(live), Snapshot)
            service.stop()
            seen = asyncio.create_task(anext(watch))
            await asyncio.sleep(14)
            assert not seen.done() and live.version == 0
            service.start()
            await client.join_match(room.id, player_token=bob.token)
            update = await asyncio.wait_for(seen, 30)
            assert isinstance(update, MatchUpdate) and update.change == "joined"
            diff = await asyncio.wait_for(live.flag(0, 0), 30)
            assert diff.version == 1
            await client.leave_match(room.id, player_token=ada.token)
            await client.leave_match(room.id, player_token=bob.token)
