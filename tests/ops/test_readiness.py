"""/readyz is asked often (every probe of every pod, or anyone, where it is exposed) and
costs Redis little however often: an answer serves a process's probes for a second, on a
connection it keeps, and Redis's settings and the user's permissions are asked at most
every few seconds. It stays truthful: an outage shows at once."""

from __future__ import annotations

import time
from collections.abc import Iterator

import httpx
import pytest
import redis

from service.api.app import READY_SECONDS
from service.store.routes import CHECK_SECONDS
from tests.support.servers import REDIS_7, RedisServer, ServiceProcess, wait_for

CALLS = 200
# What one readiness answer asks of Redis at most: a PING; and every CHECK_SECONDS a write,
# INFO, and a publish, a subscription and an unsubscription on a channel of each kind.
ASKED = ("ping", "set", "spublish", "ssubscribe", "sunsubscribe", "hello", "client|setinfo")


@pytest.fixture
def server() -> Iterator[RedisServer]:
    s = RedisServer(None, None, executable=REDIS_7).start()
    try:
        yield s
    finally:
        s.cleanup()


def commands(admin: redis.Redis) -> dict[str, int]:
    stats = admin.info("commandstats")
    return {name.removeprefix("cmdstat_"): int(s["calls"]) for name, s in stats.items()}


def test_readiness_asked_often_costs_redis_little(server: RedisServer) -> None:
    admin = redis.Redis(port=server.port)
    svc = ServiceProcess({"REDIS_URL": server.url}).start()
    try:
        with httpx.Client(base_url=svc.url, timeout=10) as http:
            assert http.get("/readyz").status_code == 200
            admin.config_resetstat()
            started = time.monotonic()
            for _ in range(CALLS):
                assert http.get("/readyz").status_code == 200
            seconds = time.monotonic() - started
            connections = admin.info("stats")["total_connections_received"]
            asked = commands(admin)
            # Not one new connection: the PING and the checks use connections kept open.
            assert connections == 0, asked
            # A PING per answer, an answer a second; the checks at most every few seconds.
            answers = seconds / READY_SECONDS + 2
            checks = seconds / CHECK_SECONDS + 2
            assert asked.get("ping", 0) <= answers, (seconds, asked)
            assert asked.get("set", 0) <= checks, (seconds, asked)
            assert asked.get("ssubscribe", 0) <= 3 * checks, (seconds, asked)
            assert asked.get("hello", 0) == 0 and asked.get("client|setinfo", 0) == 0, asked
            assert sum(asked.get(name, 0) for name in ASKED) < CALLS / 4, (seconds, asked)

            # Truthful all the same: Redis gone is not ready within a second or so.
            server.stop()
            wait_for(lambda: http.get("/readyz").status_code == 503, 5, "not ready")
            assert http.get("/readyz").json()["code"] == "store_unavailable"
            server.start()
            wait_for(lambda: http.get("/readyz").status_code == 200, 15, "ready again")
    finally:
        admin.close()
        svc.stop()
