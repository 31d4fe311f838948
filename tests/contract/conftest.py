"""A service process of its own for the contract tests.

schemathesis sends thousands of requests, many of them failures on purpose; with
the rate limits on they would soon all be 429s, and would use up the limits of
every other test talking to the session's server from the same address. This
process runs on the session's Redis with the limits off.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.servers import running_service

NO_LIMITS = {"RATE_LIMIT": "0", "MOVE_RATE_LIMIT": "0", "AUTH_FAILURE_LIMIT": "0"}


@pytest.fixture(scope="session")
def contract_server(redis_url: str) -> Iterator[str]:
    with running_service(redis_url, **NO_LIMITS) as svc:
        yield svc.url
