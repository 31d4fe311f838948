"""Shared fixtures: a real Redis server and a live service, started once per session;
and the check, when the run ends, that every server the tests started has stopped."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator

import pytest

from tests.support import processes
from tests.support.servers import RedisServer, ServiceProcess

collect_ignore = ["bench"]

LEFT_RUNNING = pytest.StashKey[list[str]]()


def pytest_sessionstart(session: pytest.Session) -> None:
    processes.adopt_orphans()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    # Every fixture has been torn down by now: whatever still runs was leaked.
    left = processes.leftovers()
    if left:
        session.config.stash[LEFT_RUNNING] = left
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    left = terminalreporter.config.stash.get(LEFT_RUNNING, [])
    if left:
        terminalreporter.section("servers left running by the tests (now stopped)", red=True)
        for line in left:
            terminalreporter.write_line(line)


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    """``REDIS_URL`` when given, else a redis-server the suite starts itself."""
    given = os.environ.get("REDIS_URL")
    if given:
        yield given
        return
    server = RedisServer().start()
    try:
        yield server.url
    finally:
        server.cleanup()


@pytest.fixture(scope="session")
def live_server(redis_url: str) -> Iterator[str]:
    """Base URL of a ``python -m service`` process on the session's Redis."""
    svc = ServiceProcess({"REDIS_URL": redis_url}).start()
    try:
        yield svc.url
    finally:
        svc.stop()


@pytest.fixture
def data_dir() -> Iterator[str]:
    """An empty DATA_DIR for an embedded Redis, on a short path: it listens on a unix
    socket inside, and those paths are limited to about 100 bytes."""
    path = tempfile.mkdtemp(prefix="ms-data-", dir="/tmp")
    yield path
    shutil.rmtree(path, ignore_errors=True)
