"""The trusted edge: ``X-Forwarded-For`` names the client only when a trusted proxy sends it.

One service process trusts 127.0.0.2 as its proxy. Clients connect from other loopback
addresses (127.0.0.3, ...), which Linux routes like 127.0.0.1, so the service sees real,
distinct peers. The failed-auth limit (3 a minute per address) and the open-socket limit
show whose address the service counted; the access log shows it too.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import pytest
import websockets

from tests.support.servers import RedisServer, ServiceProcess, wait_for

PROXY = "127.0.0.2"
FAILURES_PER_MINUTE = 3


@pytest.fixture(scope="module")
def edge() -> Iterator[ServiceProcess]:
    # A Redis of its own: the limits' buckets start empty.
    server = RedisServer().start()
    try:
        with ServiceProcess({
            "REDIS_URL": server.url, "FORWARDED_ALLOW_IPS": PROXY, "LOG_LEVEL": "info",
            "AUTH_FAILURE_LIMIT": str(FAILURES_PER_MINUTE), "MAX_SOCKETS_PER_CLIENT": "1",
        }) as svc:
            yield svc
    finally:
        server.cleanup()


def client(svc: ServiceProcess, peer: str) -> httpx.Client:
    return httpx.Client(base_url=svc.url, timeout=30,
                        transport=httpx.HTTPTransport(local_address=peer))


def guess(c: httpx.Client, forwarded: str | None, request_id: str = "") -> int:
    """A request for a game that does not exist: each one charges the failure bucket."""
    headers = {"X-Forwarded-For": forwarded} if forwarded else {}
    if request_id:
        headers["X-Request-ID"] = request_id
    return c.get("/games/AAAAAAAAAAAAAAAAAAAAAA", headers=headers).status_code


def logged_client(svc: ServiceProcess, request_id: str) -> str:
    """The client address the service logged for the request with this id."""
    found: list[str] = []

    def logged() -> bool:
        for line in svc.output().splitlines():
            if line.startswith("{") and json.loads(line).get("request_id") == request_id:
                found.append(json.loads(line)["client"])
                return True
        return False

    wait_for(logged, 15, "the request's log line")
    return found[0]


def test_a_forged_header_from_an_untrusted_peer_is_ignored(edge: ServiceProcess) -> None:
    with client(edge, "127.0.0.3") as c:
        # A fresh address in every request: were any believed, none would be limited.
        statuses = [guess(c, f"198.51.100.{i}") for i in range(10)]
        assert guess(c, "198.51.100.77", "forged-1") == 429
    assert statuses[0] == 404 and 429 in statuses, statuses
    assert logged_client(edge, "forged-1") == "127.0.0.3"
    # Another peer is untouched by the first one's failures...
    with client(edge, "127.0.0.4") as c:
        assert guess(c, None) == 404
    # ...and so is every address the first one claimed.
    with client(edge, PROXY) as proxy:
        assert guess(proxy, "198.51.100.77") == 404


def test_a_trusted_proxy_names_the_client(edge: ServiceProcess) -> None:
    with client(edge, PROXY) as proxy:
        # Each client behind the proxy has a bucket of its own.
        assert [guess(proxy, f"203.0.113.{i}") for i in range(10)] == [404] * 10
        # One client's failures are counted against that client.
        statuses = [guess(proxy, "203.0.113.200") for _ in range(10)]
        assert statuses[0] == 404 and 429 in statuses, statuses
        # The proxy appends the peer it saw: what the client wrote before it is not believed.
        assert guess(proxy, "192.0.2.1, 203.0.113.201", "chained") == 404
    assert logged_client(edge, "chained") == "203.0.113.201"
    with client(edge, "127.0.0.5") as c:
        assert guess(c, None) == 404  # the proxy's own address was never charged for them


async def test_socket_limits_count_the_real_peer(edge: ServiceProcess) -> None:
    with httpx.Client(base_url=edge.url) as c:
        game_id = c.post("/games", json={"preset": "beginner"}).json()["game"]["id"]
    url = edge.url.replace("http://", "ws://") + f"/games/{game_id}/events"

    def connect(peer: str, forwarded: str) -> websockets.asyncio.client.connect:
        return websockets.connect(url, additional_headers={"X-Forwarded-For": forwarded},
                                  local_addr=(peer, 0))

    # One socket per address: a second from the same untrusted peer is refused, whatever
    # address it claims.
    async with connect("127.0.0.6", "198.51.100.1") as first:
        assert json.loads(await first.recv())["type"] == "snapshot"
        with pytest.raises(websockets.exceptions.InvalidStatus):
            async with connect("127.0.0.6", "198.51.100.2"):
                pass
    # Behind the trusted proxy, two clients get a socket each.
    async with connect(PROXY, "203.0.113.1") as one, connect(PROXY, "203.0.113.2") as two:
        assert json.loads(await one.recv())["type"] == "snapshot"
        assert json.loads(await two.recv())["type"] == "snapshot"


def test_by_default_no_peer_is_believed_not_even_a_local_one() -> None:
    """Unset, FORWARDED_ALLOW_IPS trusts nobody: a local program that writes the header (a
    proxy not listed, or a client on the same machine) cannot claim other addresses."""
    server = RedisServer().start()
    try:
        with ServiceProcess({
            "REDIS_URL": server.url, "FORWARDED_ALLOW_IPS": "", "LOG_LEVEL": "info",
            "AUTH_FAILURE_LIMIT": str(FAILURES_PER_MINUTE),
        }) as svc, client(svc, "127.0.0.1") as c:
            statuses = [guess(c, f"198.51.100.{i}") for i in range(10)]
            assert statuses[0] == 404 and 429 in statuses, statuses
            guess(c, "198.51.100.77", "local-forged")
            assert logged_client(svc, "local-forged") == "127.0.0.1"
    finally:
        server.cleanup()
