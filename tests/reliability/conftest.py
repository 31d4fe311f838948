"""Reliability fixtures: Redis servers and service processes of the tests' own, so
that faults (killed processes, flushed scripts) touch nothing else, and a place to
put the figures the tests measure, printed at the end of the run."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.servers import RedisServer, ServiceProcess

FIGURES = pytest.StashKey[list[str]]()


@pytest.fixture
def figures(request: pytest.FixtureRequest) -> list[str]:
    """Lines to print in the summary: what a test measured."""
    return request.config.stash.setdefault(FIGURES, [])


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    lines = terminalreporter.config.stash.get(FIGURES, [])
    if lines:
        terminalreporter.section("reliability figures")
        for line in lines:
            terminalreporter.write_line(line)


@pytest.fixture(scope="module")
def redis_server() -> Iterator[RedisServer]:
    """A redis-server of this module's own (append-only file on)."""
    server = RedisServer().start()
    try:
        yield server
    finally:
        server.cleanup()


@pytest.fixture(scope="module")
def service(redis_server: RedisServer) -> Iterator[ServiceProcess]:
    svc = ServiceProcess({"REDIS_URL": redis_server.url}).start()
    try:
        yield svc
    finally:
        svc.stop()
