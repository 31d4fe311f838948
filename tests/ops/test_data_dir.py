"""One service per DATA_DIR: a second one on the same folder refuses to start, however
close together they start, and a Redis that a killed service left behind is taken over
by the next service rather than used unwatched."""

from __future__ import annotations

import functools
import subprocess
import sys
import time

import httpx
import psutil

from tests.support import processes
from tests.support.servers import ServiceProcess, wait_for

IN_USE = "is in use by another service (pid "


def embedded(data_dir: str) -> ServiceProcess:
    return ServiceProcess(args=["--redis-url", "", "--data-dir", data_dir])


def launch(svc: ServiceProcess) -> subprocess.Popen[bytes]:
    """Started without waiting for it to be ready."""
    svc.proc = subprocess.Popen(
        [sys.executable, "-m", "service", *svc.args], cwd=svc.root, env=svc.env,
        stdout=svc.log, stderr=subprocess.STDOUT,
    )
    return svc.proc


def servers_on(data_dir: str) -> list[psutil.Process]:
    """The redis-server processes whose data is in ``data_dir``."""
    found = []
    for proc in psutil.process_iter():
        try:
            if proc.name().startswith("redis-server") and proc.cwd() == data_dir:
                found.append(proc)
        except psutil.Error:
            continue
    return found


def redis_of(svc: ServiceProcess) -> psutil.Process:
    servers = [p for p in svc.children() if p.name().startswith("redis-server")]
    assert len(servers) == 1, f"{servers}\n{svc.output()}"
    return servers[0]


def test_a_second_service_on_the_same_data_dir_refuses_to_start(data_dir: str) -> None:
    first = embedded(data_dir).start(timeout=60)
    second = embedded(data_dir)
    try:
        assert first.proc is not None
        server = redis_of(first)
        code = launch(second).wait(30)
        assert code == 2, second.output()
        out = second.output()
        assert f"DATA_DIR '{data_dir}' {IN_USE}{first.proc.pid})" in out, out
        assert "Traceback" not in out
        # The first goes on with its own Redis, untouched.
        assert httpx.get(f"{first.url}/readyz", timeout=10).status_code == 200
        assert server.is_running() and servers_on(data_dir) == [server]
    finally:
        second.stop()
        first.stop()


def test_services_started_together_on_one_data_dir_get_one_redis(data_dir: str) -> None:
    for _ in range(3):
        pair = [embedded(data_dir), embedded(data_dir)]
        try:
            for svc in pair:
                launch(svc)
            # One of them exits with status 2 at once; the other serves.
            done = None
            for _ in range(600):
                done = next((s for s in pair if s.proc and s.proc.poll() is not None), None)
                if done is not None:
                    break
                time.sleep(0.05)
            assert done is not None and done.proc is not None, [s.output() for s in pair]
            assert done.proc.returncode == 2, done.output()
            assert IN_USE in done.output()
            serving = pair[1 - pair.index(done)]
            wait_for(functools.partial(ready, serving), 60, "service")
            assert len(servers_on(data_dir)) == 1
        finally:
            for svc in pair:
                svc.stop()
        assert servers_on(data_dir) == []


def ready(svc: ServiceProcess) -> bool:
    return httpx.get(f"{svc.url}/readyz", timeout=1).status_code == 200


def test_a_redis_left_by_a_killed_service_is_taken_over(data_dir: str) -> None:
    first = embedded(data_dir).start(timeout=60)
    left: list[psutil.Process] = []
    try:
        created = httpx.post(f"{first.url}/games", json={"preset": "beginner"}, timeout=30)
        game_id = created.json()["game"]["id"]
        left = [redis_of(first)]
        # The service only (stop() would end its Redis too): the Redis runs in a session
        # of its own, and outlives it.
        assert first.proc is not None
        first.proc.kill()
        first.proc.wait(15)
    finally:
        first.stop()
    second = embedded(data_dir)
    try:
        assert left[0].is_running(), "the Redis went with its service"
        # Started at once, when the first's Redis were still running unwatched.
        second.start(timeout=60)
        assert not left[0].is_running() or left[0].status() == psutil.STATUS_ZOMBIE
        processes.reap_zombies()
        # The new service's own Redis, which it watches and stops, has the game.
        mine = redis_of(second)
        assert mine.pid != left[0].pid and servers_on(data_dir) == [mine]
        assert httpx.get(f"{second.url}/games/{game_id}", timeout=30).status_code == 200
        assert "stopping the embedded Redis a stopped service left running" in second.output()
    finally:
        second.stop()
        processes.stop_all([p for p in left if p.is_running()])
