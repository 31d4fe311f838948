"""Players' tests: two service processes on the session's Redis, and clients on each."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from tests.support.play import Api
from tests.support.servers import running_service

TIMEOUT = httpx.Timeout(30.0)


@pytest.fixture(scope="module")
def other_replica(redis_url: str) -> Iterator[str]:
    """A second replica on the session's Redis, beside ``live_server``."""
    with running_service(redis_url) as svc:
        yield svc.url


@pytest.fixture
def a(live_server: str) -> Iterator[Api]:
    with httpx.Client(base_url=live_server, timeout=TIMEOUT) as c:
        yield Api(c)


@pytest.fixture
def b(other_replica: str) -> Iterator[Api]:
    with httpx.Client(base_url=other_replica, timeout=TIMEOUT) as c:
        yield Api(c)
