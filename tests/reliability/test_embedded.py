"""The embedded Redis of ``python -m service`` (REDIS_URL unset): stopped with the service
however it is stopped, and started again on the same data when it dies under load, with
every acknowledged move still there and no zombie left behind."""

from __future__ import annotations

import asyncio
import signal
import time

import psutil
import pytest
import redis

from tests.reliability.test_faults import assert_only_ok_or_unavailable, assert_unique_versions
from tests.support.load import (
    Http,
    Outcome,
    assert_acknowledged_kept,
    assert_stream_replays,
    create_known_game,
    run_load,
)
from tests.support.servers import ServiceProcess


def embedded(data_dir: str) -> ServiceProcess:
    """A service on its own embedded Redis, configured by flags."""
    return ServiceProcess(args=["--redis-url", "", "--data-dir", data_dir])


def redis_of(svc: ServiceProcess) -> psutil.Process:
    servers = [p for p in svc.children() if p.name().startswith("redis-server")]
    assert len(servers) == 1, servers
    return servers[0]


def ended(proc: psutil.Process) -> bool:
    """Gone, and reaped: not even a zombie is left."""
    try:
        return not proc.is_running() or proc.status() == psutil.STATUS_DEAD
    except psutil.NoSuchProcess:
        return True


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_the_service_stops_its_redis_when_stopped(data_dir: str, sig: signal.Signals) -> None:
    svc = embedded(data_dir).start(timeout=60)
    try:
        server = redis_of(svc)
        assert svc.proc is not None
        svc.proc.send_signal(sig)
        assert svc.proc.wait(30) == 0, svc.output()
        # The service waited for its Redis, so it is gone already.
        assert ended(server), f"redis-server {server.pid} outlived the service"
        assert "Traceback" not in svc.output()
    finally:
        svc.stop()


async def test_a_killed_redis_is_started_again_under_load(
    data_dir: str, figures: list[str]
) -> None:
    svc = embedded(data_dir).start(timeout=60)
    try:
        assert svc.proc is not None
        pid = svc.proc.pid
        http = Http(svc.url)
        games = [await create_known_game(http, seed=400 + i) for i in range(8)]
        await http.close()
        out, stop = Outcome(), asyncio.Event()
        load = asyncio.create_task(run_load(svc.url, games, 16, 3600, stop=stop, out=out))
        await asyncio.sleep(1.5)

        first = redis_of(svc)
        first.kill()
        killed = time.monotonic()
        # Recovered by itself: moves are accepted again, with nothing done from outside.
        while not any(s.status == 200 and s.at > killed for s in out.samples):
            assert not load.done(), "the load stopped"
            assert time.monotonic() - killed < 120, f"no recovery:\n{svc.output()[-3000:]}"
            await asyncio.sleep(0.05)
        recovered = min(s.at for s in out.samples if s.status == 200 and s.at > killed)
        await asyncio.sleep(1.5)
        stop.set()
        await load

        second = redis_of(svc)
        assert second.pid != first.pid
        assert ended(first), "the killed redis-server was left a zombie"
        assert svc.proc.poll() is None and svc.proc.pid == pid
        log = svc.output()
        assert f"pid {first.pid}) exited with signal 9" in log
        assert f"started again (pid {second.pid})" in log
        unavailable = [s for s in out.samples if s.status == 503]
        figures.append(
            f"embedded Redis SIGKILL under load: moves accepted again after "
            f"{(recovered - killed) * 1000:.0f} ms; {len(unavailable)} answered 503 meanwhile, "
            f"{len(out.ok())} moves accepted in all"
        )

        assert_only_ok_or_unavailable(out)
        assert not out.errors, out.errors[:5]
        # Every move acknowledged before the kill, during it and after is on disk.
        r = redis.Redis.from_url(f"unix://{data_dir}/redis.sock")
        try:
            kept = assert_acknowledged_kept(out.samples, r)
            assert kept == len([s for s in out.samples if s.status == 200 and s.changed])
            assert_unique_versions(out)
            for game in games:
                assert_stream_replays(r, game.id)
        finally:
            r.close()
    finally:
        svc.stop()
