"""The command's --timeout, its words for a service that does not answer, and the
terminals it refuses to draw a screen on."""

from __future__ import annotations

import json
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from typing import Any

import pexpect
import pytest
from minesweeper import Client, text

from tests.support.play import unique_name

from .conftest import command


@pytest.fixture
def silent_url() -> Iterator[str]:
    """A server that takes connections and never answers."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    server.settimeout(0.2)
    taken: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                taken.append(server.accept()[0])
            except TimeoutError:
                continue
            except OSError:
                return

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.getsockname()[1]}"
    finally:
        stop.set()
        thread.join(5)
        for each in taken:
            each.close()
        server.close()


GAME = "0" * 32


def test_timeout_option_and_the_words_for_no_answer(
    silent_url: str, cli_env: dict[str, str]
) -> None:
    started = time.monotonic()
    done = subprocess.run([*command(), "show", GAME, "--url", silent_url, "--timeout", "1"],
                          env=cli_env, capture_output=True, text=True, timeout=60)
    assert time.monotonic() - started < 8  # not the default 10 s
    assert done.returncode == 1
    assert done.stderr == (f"minesweeper: no answer from {silent_url} within 1 s "
                           f"(--timeout sets how long to wait)\n")
    env = {**cli_env, "MINESWEEPER_TIMEOUT": "1.5"}
    done = subprocess.run([*command(), "show", GAME, "--url", silent_url], env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and "within 1.5 s" in done.stderr, done.stderr
    for bad in ("0", "x", "-3"):
        done = subprocess.run([*command(), "show", GAME, "--timeout", bad], env=cli_env,
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 2 and "not a number of seconds" in done.stderr
    done = subprocess.run([*command(), "show", GAME],
                          env={**cli_env, "MINESWEEPER_TIMEOUT": "soon"},
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "MINESWEEPER_TIMEOUT" in done.stderr


def test_a_dumb_terminal_gets_no_screen(
    live_server: str, cli_env: dict[str, str], cli: Any
) -> None:
    cli("register", unique_name("dumb"))  # race asks for a player before the terminal
    for verb in ("play", "race"):
        argv = [*command(), verb, "--url", live_server]
        child = pexpect.spawn(argv[0], argv[1:], env={**cli_env, "TERM": "dumb"},
                              encoding="utf-8", timeout=20)
        try:
            child.expect(pexpect.EOF)
            child.close()
            out = str(child.before)
            assert child.exitstatus == 2, out
            assert "TERM=dumb" in out and "\x1b[" not in out, out
        finally:
            if child.isalive():
                child.terminate(force=True)


class _Tty:
    def isatty(self) -> bool:
        return True


def test_an_empty_no_color_keeps_the_colours(monkeypatch: pytest.MonkeyPatch) -> None:
    tty: Any = _Tty()
    monkeypatch.setenv("TERM", "xterm")
    monkeypatch.setenv("NO_COLOR", "")
    assert text.use_colour(tty)
    monkeypatch.setenv("NO_COLOR", "1")
    assert not text.use_colour(tty)
    monkeypatch.delenv("NO_COLOR")
    monkeypatch.setenv("TERM", "dumb")
    assert not text.use_colour(tty)


def test_client_timeout_is_the_one_given() -> None:
    with Client("http://127.0.0.1:9", timeout=2.5) as c:
        assert c.timeout == 2.5


def test_json_prints_a_match_as_lines_and_is_refused_where_there_is_a_screen(
    live_server: str, cli_env: dict[str, str], client: Client, cli: Any
) -> None:
    ada = client.register(unique_name("js"))
    bob = client.register(unique_name("js"))
    room = client.new_match("race", "beginner", seats=2, rated=False, player_token=ada.token)
    client.join_match(room.id, player_token=bob.token)
    client.leave_match(room.id, player_token=ada.token)
    client.leave_match(room.id, player_token=bob.token)
    done = cli("match", room.id, "--json")
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(lines) == 1 and lines[0]["type"] == "match"
    assert lines[0]["match"]["status"] == "finished"
    for verb in ("race", "play"):
        refused = cli(verb, "--json", check=False)
        assert refused.returncode == 2 and "--json" in refused.stderr, refused.stderr
        assert refused.stdout == ""
