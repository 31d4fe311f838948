"""HTTP test fixtures: a client on the session's live service."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from tests.support.play import Api

TIMEOUT = httpx.Timeout(30.0)


@pytest.fixture
def client(live_server: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=live_server, timeout=TIMEOUT) as c:
        yield c


@pytest.fixture
def api(client: httpx.Client) -> Api:
    return Api(client)
