"""Shared fixtures: a real Redis server and a live service, started once per session."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from tests.support.servers import RedisServer, ServiceProcess

collect_ignore = ["bench"]


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
