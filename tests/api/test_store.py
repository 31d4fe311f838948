"""The service and its store: Redis going away (and which of its errors say so), restarts
in embedded mode, and expiry."""

from __future__ import annotations

import os
import time

import httpx
import pytest
import redis
import redis.asyncio
import redis.exceptions as rx

from service.store import StoreUnavailable
from service.store.errors import redis_errors
from tests.api.test_games import assert_problem
from tests.support.play import Api, Game
from tests.support.servers import RedisServer, ServiceProcess, running_service


def wait_until(check: object, timeout: float = 60.0, what: str = "condition") -> None:
    """Poll ``check`` until it is true: for state that changes outside the test's control."""
    deadline = time.monotonic() + timeout
    while not check():  # type: ignore[operator]
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} not reached within {timeout} s")
        time.sleep(0.05)


def metric(c: httpx.Client, name: str) -> float:
    """A counter the service exports (one worker: one process's metrics)."""
    for line in c.get("/metrics").text.splitlines():
        if line.startswith(f"{name} "):
            return float(line.split()[1])
    raise AssertionError(f"{name} is not exported")


def test_redis_unreachable_is_a_quick_503(tmp_path: object) -> None:
    server = RedisServer().start()
    try:
        with running_service(server.url) as svc, httpx.Client(base_url=svc.url, timeout=15) as c:
            api = Api(c)
            game = api.create(preset="beginner")
            api.flag(game, 0, 0)
            server.stop()  # a clean stop keeps the append-only file whole
            # Generous client timeouts: a hang would fail the test, a quick answer passes.
            r = c.get(f"/games/{game.id}")
            body = assert_problem(r, 503, "store_unavailable")
            assert r.headers.get("retry-after")
            assert "redis://" not in body["detail"] and "127.0.0.1" not in body["detail"]
            assert_problem(c.post(f"/games/{game.id}/flag", json={"x": 1, "y": 0},
                                  headers=game.auth), 503, "store_unavailable")
            assert_problem(c.post("/games", json={"preset": "expert"}), 503, "store_unavailable")
            assert_problem(c.post(f"/games/{game.id}/reset", headers=game.auth),
                           503, "store_unavailable")
            ready = c.get("/readyz")
            assert_problem(ready, 503, "store_unavailable")
            health = c.get("/healthz")
            assert health.status_code == 200 and health.json() == {"status": "ok"}
            assert metric(c, "ms_redis_errors_total") >= 5, "every failed Redis call is counted"
            for _ in range(40):
                assert c.get(f"/games/{game.id}").status_code == 503
            # The log says so once every 10 s, not once for each of the 45 requests that
            # failed.
            reports = [line for line in svc.output().splitlines() if "store unavailable" in line]
            assert 1 <= len(reports) <= 2, reports
            # Bad input is still judged without the store.
            assert_problem(c.post("/games", content=b"{"), 400, "invalid_request")

            # Redis comes back on the same port and data dir: so does the service.
            server.start()
            wait_until(lambda: c.get("/readyz").status_code == 200, what="ready again")
            view = api.view(game)
            assert view["version"] == 1 and view["board"][0][0] == "F"
            assert api.flag(game, 1, 0)["version"] == 2
    finally:
        server.cleanup()


def test_an_outage_ends_with_one_line_and_the_next_starts_afresh() -> None:
    """The failures held since an outage's last report are said when it ends, in the line
    that says the store is available again, and the next outage's first line counts
    none of them."""
    server = RedisServer().start()
    try:
        with running_service(server.url, LOG_LEVEL="info") as svc, \
                httpx.Client(base_url=svc.url, timeout=15) as c:
            game = Api(c).create(preset="beginner")

            def lines(text: str) -> list[str]:
                return [line for line in svc.output().splitlines() if text in line]

            server.stop()
            for _ in range(5):
                assert c.get(f"/games/{game.id}").status_code == 503
            assert len(lines("store unavailable")) == 1, svc.output()
            server.start()
            # Redis answers the deadline poller at once; the outage is over once no request
            # has failed for 10 s.
            wait_until(lambda: lines("store available again"), 30, "the end of the outage")
            ended = lines("store available again")
            assert len(ended) == 1 and "(and 4 more failed requests since the last report)" \
                in ended[0], svc.output()
            assert c.get(f"/games/{game.id}").status_code == 200

            server.stop()
            assert c.get(f"/games/{game.id}").status_code == 503
            said = lines("store unavailable")
            assert len(said) == 2 and "more failed requests" not in said[1], svc.output()
            server.start()
    finally:
        server.cleanup()


# What Redis answers while it is away or failing over: the request gets a 503 and may be
# made again. Anything else Redis says about a command is a bug in the service.
AWAY = [
    (rx.ConnectionError("Connection closed by server."), True),
    (rx.TimeoutError("Timeout reading from socket"), True),
    (rx.ClusterDownError("CLUSTERDOWN The cluster is down"), True),
    (rx.MasterDownError("MASTERDOWN Link with MASTER is down"), True),
    (rx.SlotNotCoveredError('Slot "7" is not covered by the cluster.'), True),
    (rx.TryAgainError("TRYAGAIN Multiple keys request during rehashing of slot"), True),
    (rx.ClusterError("TTL exhausted."), True),
    (rx.ReadOnlyError("READONLY You can't write against a read only replica."), True),
    (rx.ResponseError("ERR unknown command 'NOPE'"), False),
    (rx.NoScriptError("NOSCRIPT No matching script."), False),
]


@pytest.mark.parametrize(("error", "lost"), AWAY, ids=[type(e).__name__ for e, _ in AWAY])
def test_what_counts_as_the_store_away(error: Exception, lost: bool) -> None:
    with pytest.raises(StoreUnavailable if lost else type(error)), redis_errors():
        raise error


async def test_a_connection_torn_down_under_a_command_is_the_store_away(redis_url: str) -> None:
    """A cluster client that gives up on a dying node disconnects every connection to it,
    those in use too: a command between its connection check and its write finds the
    writer gone, and redis-py raises AttributeError (seen as a 500 in a failover test).
    Here a real connection is left in that state and written on."""
    client = redis.asyncio.Redis.from_url(redis_url)
    connection = await client.connection_pool.get_connection()
    try:
        connection._writer = None  # what the teardown leaves, between check and write
        with pytest.raises(StoreUnavailable), redis_errors():
            await connection._send_packed_command([connection.pack_command("PING")[0]])
    finally:
        await connection.disconnect()
        await client.aclose()


def test_an_attribute_error_of_the_service_itself_is_not_hidden() -> None:
    def broken(writer: object) -> None:
        writer.writelines([])  # type: ignore[attr-defined]

    with pytest.raises(AttributeError), redis_errors():
        broken(None)


def test_embedded_redis_keeps_games_across_restarts(data_dir: str) -> None:
    env = {"REDIS_URL": "", "DATA_DIR": data_dir}
    svc = ServiceProcess(env).start(timeout=60)
    try:
        with httpx.Client(base_url=svc.url, timeout=30) as c:
            api = Api(c)
            kim = api.register()
            game = api.create(preset="intermediate", seed=99, owner=kim)
            api.reveal(game, 8, 8)
            api.flag(game, 0, 0)
            before = api.view(game)
    finally:
        svc.stop()
    assert svc.proc is not None and svc.proc.returncode is not None
    assert os.path.isdir(data_dir) and os.listdir(data_dir)

    svc = ServiceProcess(env, port=svc.port).start(timeout=60)
    try:
        with httpx.Client(base_url=svc.url, timeout=30) as c:
            api = Api(c)
            after = api.view(game)
            for key in ("version", "board", "status", "player_id", "player", "mines_left",
                        "started_at", "created_at", "stats"):
                assert after[key] == before[key], key
            # The tokens survived too (the game's and its player's), and play goes on from
            # the same version.
            diff = api.flag(game, 1, 0)
            assert diff["version"] == before["version"] + 1
            assert api.player(kim)["name"] == kim.name
            r = c.post(f"/games/{game.id}/flag", json={"x": 2, "y": 0}, headers=kim.auth)
            assert r.status_code == 200 and r.json()["version"] == before["version"] + 2
    finally:
        svc.stop()


def test_game_ttl_is_set_refreshed_and_expires(redis_url: str) -> None:
    ttl = 40
    r = redis.Redis.from_url(redis_url)
    with running_service(redis_url, GAME_TTL=str(ttl)) as svc, \
            httpx.Client(base_url=svc.url, timeout=30) as c:
        api = Api(c)
        game = api.create(preset="beginner")
        key = f"ms:{{{game.id}}}:game"
        assert 0 < r.pttl(key) <= ttl * 1000
        # Pretend time went by, then a move refreshes the expiry of the game and its stream.
        r.pexpire(key, 5_000)
        api.reveal(game, 4, 4)
        assert 5_000 < r.pttl(key) <= ttl * 1000
        events = f"ms:{{{game.id}}}:events"
        assert 0 < r.pttl(events) <= ttl * 1000
        r.pexpire(key, 5_000)
        r.pexpire(events, 5_000)
        api.flag(game, 0, 0, mark="flag")
        assert 5_000 < r.pttl(key) <= ttl * 1000
        assert 5_000 < r.pttl(events) <= ttl * 1000
        # Idempotency records do not outlive their use by much either.
        api.flag(game, 0, 1, headers={"Idempotency-Key": "ttl"})
        assert r.pttl(f"ms:{{{game.id}}}:idem:ttl") > 0
        # A game that expires is gone for good.
        r.pexpire(key, 1)
        wait_until(lambda: not r.exists(key), what="expiry")
        assert_problem(c.get(f"/games/{game.id}"), 404, "not_found")
        assert_problem(c.post(f"/games/{game.id}/reveal", json={"x": 0, "y": 0},
                              headers=game.auth), 404, "not_found")
    r.close()


def test_untouched_game_expires_after_game_ttl(redis_url: str) -> None:
    with running_service(redis_url, GAME_TTL="1") as svc, \
            httpx.Client(base_url=svc.url, timeout=30) as c:
        game: Game = Api(c).create(preset="beginner")
        assert c.get(f"/games/{game.id}").status_code in (200, 404)
        wait_until(lambda: c.get(f"/games/{game.id}").status_code == 404, what="expiry")
        assert_problem(c.get(f"/games/{game.id}"), 404, "not_found")
