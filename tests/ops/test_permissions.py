"""A Redis that does not let the service do its work: an ACL user without INFO, without
pub/sub channels, without the publish or subscribe commands, with a wrong password, and a
plain Redis taken for a cluster. The
service says why in its log (once, not twice a second) and in ``/readyz``, and a move it
cannot make is a 503 ``store_unavailable``, never a 500."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator

import httpx
import pytest
import redis
import websockets

from tests.support.servers import REDIS_7, RedisServer, ServiceProcess, wait_for

PASSWORD = "apppw"
# Every command but the dangerous ones (INFO among them), on every key and channel.
NO_INFO = ["~*", "&*", "+@all", "-@dangerous"]
# Every command and key, no channel: what ACL SETUSER gives on Redis 7 unless told.
NO_CHANNELS = ["~*", "resetchannels", "+@all"]
# The service's keys and channels, without the commands that publish or subscribe.
NO_PUBLISH = ["~ms:*", "&ms:*", "+@all", "-@dangerous", "-publish", "-spublish"]
NO_SUBSCRIBE = ["~ms:*", "&ms:*", "+@all", "-@dangerous", "-subscribe", "-ssubscribe",
                "-psubscribe"]


@pytest.fixture(scope="module")
def server() -> Iterator[RedisServer]:
    """A Redis with ACL users (Redis 6 and later)."""
    s = RedisServer(None, None, executable=REDIS_7).start()
    try:
        admin = redis.Redis(port=s.port)
        for user, rules in [("noinfo", NO_INFO), ("nochannels", NO_CHANNELS),
                            ("nopublish", NO_PUBLISH), ("nosubscribe", NO_SUBSCRIBE),
                            ("granted", NO_CHANNELS)]:
            admin.execute_command("ACL", "SETUSER", user, "on", f">{PASSWORD}", *rules)
        admin.close()
        yield s
    finally:
        s.cleanup()


def url_of(server: RedisServer, user: str, password: str = PASSWORD) -> str:
    return f"redis://{user}:{password}@127.0.0.1:{server.port}/0"


def service(redis_url: str, **env: str) -> ServiceProcess:
    """Started once it answers at all: /readyz may well say no."""
    return ServiceProcess({"REDIS_URL": redis_url, "LOG_LEVEL": "info", **env}).start(
        ready="/healthz"
    )


def readiness(svc: ServiceProcess) -> httpx.Response:
    """/readyz once the service has heard from Redis, or as it is after 10 s."""
    deadline = time.monotonic() + 10
    while True:
        r = httpx.get(f"{svc.url}/readyz", timeout=10)
        if r.status_code == 200 or "not ready" in r.text or time.monotonic() > deadline:
            return r
        time.sleep(0.1)


def lines(svc: ServiceProcess, text: str) -> int:
    return sum(text in line for line in svc.output().splitlines())


def test_a_user_without_info_serves(server: RedisServer) -> None:
    """The server's version comes from HELLO, which needs no permission."""
    svc = service(url_of(server, "noinfo"))
    try:
        assert readiness(svc).status_code == 200, svc.output()
        with httpx.Client(base_url=svc.url, timeout=30) as http:
            created = http.post("/games", json={"preset": "beginner", "seed": 5}).json()
            auth = {"Authorization": f"Bearer {created['token']}"}
            r = http.post(f"/games/{created['game']['id']}/reveal", json={"x": 0, "y": 0},
                          headers=auth)
            assert r.status_code == 200, r.text
        assert "live messages use sharded pub/sub" in svc.output()  # Redis 7: SPUBLISH
        # Nor is a user kept from INFO told to have it (the eviction check is skipped).
        assert '"level": "error"' not in svc.output(), svc.output()
    finally:
        svc.stop()


def test_a_wrong_password_is_said_once(server: RedisServer) -> None:
    svc = service(url_of(server, "noinfo", "wrong"))
    try:
        r = readiness(svc)
        assert r.status_code == 503, r.text
        refused = "Redis refused the service's credentials (user 'noinfo'; check the user"
        assert refused in r.json()["detail"]
        time.sleep(3)  # six tries at least
        said = "password in REDIS_URL): invalid username-password pair"
        assert lines(svc, said) == 1, svc.output()
        assert lines(svc, "waiting for Redis") == 0, svc.output()
    finally:
        svc.stop()


def test_a_user_without_channels_is_not_ready_and_moves_are_503(server: RedisServer) -> None:
    svc = service(url_of(server, "nochannels"))
    try:
        r = readiness(svc)
        assert r.status_code == 503, r.text
        detail = r.json()["detail"]
        assert "Redis user 'nochannels' may not publish on the service's channels" in detail
        assert "&ms:*" in detail
        wait_for(lambda: lines(svc, "may not publish on the service's channels") == 1, 10,
                 "the start-up's log line")
        with httpx.Client(base_url=svc.url, timeout=30) as http:
            created = http.post("/games", json={"preset": "beginner", "seed": 5})
            assert created.status_code == 201, created.text
            auth = {"Authorization": f"Bearer {created.json()['token']}"}
            game = created.json()["game"]["id"]
            for _ in range(3):
                r = http.post(f"/games/{game}/reveal", json={"x": 0, "y": 0}, headers=auth)
                assert r.status_code == 503, r.text
                assert r.json()["code"] == "store_unavailable"
            # The refused publish came before any write: the game is as it was.
            game_now = http.get(f"/games/{game}").json()
            assert game_now["version"] == 0 and "." not in "".join(game_now["board"])
        refused = "Redis refused the service for lack of a permission: its user needs " \
                  "publishing on the service's pub/sub channels"
        assert lines(svc, refused) == 1, svc.output()
        assert "Traceback" not in svc.output()
    finally:
        svc.stop()


def test_a_permission_granted_live_is_ready_and_said_once(server: RedisServer) -> None:
    svc = service(url_of(server, "granted"))
    try:
        r = readiness(svc)
        assert r.status_code == 503, r.text
        assert "Redis user 'granted' may not publish" in r.json()["detail"]
        admin = redis.Redis(port=server.port)
        admin.execute_command("ACL", "SETUSER", "granted", "allchannels")
        admin.close()
        wait_for(lambda: httpx.get(f"{svc.url}/readyz", timeout=10).status_code == 200, 15,
                 "ready once granted")
        assert lines(svc, "Redis answers as configured again") == 1, svc.output()
        assert lines(svc, "Redis user 'granted' may not publish") == 1, svc.output()
    finally:
        svc.stop()


def test_a_plain_redis_taken_for_a_cluster_is_said_once(server: RedisServer) -> None:
    svc = service(server.url, REDIS_CLUSTER="1")
    try:
        r = readiness(svc)
        assert r.status_code == 503, r.text
        assert "the Redis in REDIS_URL is not a node of a cluster" in r.json()["detail"]
        r = httpx.post(f"{svc.url}/games", json={"preset": "beginner"}, timeout=30)
        assert r.status_code == 503, r.text
        time.sleep(2)
        assert lines(svc, "is not a node of a cluster: turn REDIS_CLUSTER off") == 1, \
            svc.output()
        assert "Traceback" not in svc.output()
    finally:
        svc.stop()


def test_a_user_without_the_publish_command_is_told_to_grant_the_command(
    server: RedisServer,
) -> None:
    svc = service(url_of(server, "nopublish"))
    try:
        r = readiness(svc)
        assert r.status_code == 503, r.text
        detail = r.json()["detail"]
        assert "Redis user 'nopublish' may not publish on the service's channels" in detail
        assert "grant it the command (ACL SETUSER nopublish +spublish)" in detail
        assert "&ms:*" not in detail  # it has the channels
    finally:
        svc.stop()


async def socket_ending(url: str) -> tuple[list[dict[str, object]], int | None]:
    """What a game's socket says before it closes, and its close code (10 s at most)."""
    said: list[dict[str, object]] = []
    async with asyncio.timeout(10):
        async with websockets.connect(url) as ws:
            try:
                while True:
                    said.append(json.loads(await ws.recv()))
            except websockets.exceptions.ConnectionClosed as closed:
                return said, closed.rcvd.code if closed.rcvd else None


async def test_a_user_without_subscribe_is_not_ready_and_sockets_are_told_once(
    server: RedisServer,
) -> None:
    svc = service(url_of(server, "nosubscribe"))
    try:
        r = readiness(svc)
        assert r.status_code == 503, r.text
        detail = r.json()["detail"]
        assert "Redis user 'nosubscribe' may not subscribe to the service's channels" in detail
        assert "grant it the command (ACL SETUSER nosubscribe +ssubscribe)" in detail
        created = httpx.post(f"{svc.url}/games", json={"preset": "beginner"}, timeout=30)
        assert created.status_code == 201, created.text
        url = svc.url.replace("http://", "ws://") + \
            f"/games/{created.json()['game']['id']}/events"
        for _ in range(3):
            said, code = await socket_ending(url)
            assert [m["type"] for m in said] == ["error"], said
            problem = said[0]["problem"]
            assert isinstance(problem, dict) and problem["code"] == "store_unavailable"
            assert code == 1013  # try again later
        await asyncio.sleep(3)  # a listener that tried again at once would have by now
        refused = "Redis refused the service's user 'nosubscribe' a subscription: it needs " \
                  "the SSUBSCRIBE command (ACL: +ssubscribe)"
        said = [line for line in svc.output().splitlines() if refused in line]
        assert len(said) == 1 or (len(said) == 2 and "store unavailable: " in said[1]), \
            svc.output()  # the listener's error line (and a socket's 503 warning)
        assert lines(svc, "events listener lost Redis node") == 0, svc.output()
        assert "Traceback" not in svc.output()
    finally:
        svc.stop()
