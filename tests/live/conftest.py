"""Live test fixtures: two service processes on one Redis."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.servers import running_service


@pytest.fixture(scope="session")
def second_server(redis_url: str) -> Iterator[str]:
    """A second replica on the session's Redis, beside ``live_server``."""
    with running_service(redis_url) as svc:
        yield svc.url


@pytest.fixture(scope="session")
def replicas(live_server: str, second_server: str) -> tuple[str, str]:
    return live_server, second_server
