"""Faults under load: Redis killed and restarted, its scripts flushed, an API process
killed, and a link to Redis that is slow, drops connections or goes silent.

What must hold: clients get answers (a 503 ``store_unavailable`` while the store is
gone, never a hang or a 500), the service recovers by itself, every acknowledged
move survives, and every game still loads and replays from its stream to its board.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from typing import Any

import pytest
import redis
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from tests.reliability.logs import server_errors
from tests.support.load import (
    Follower,
    Http,
    KnownGame,
    Outcome,
    Reply,
    Sample,
    assert_acknowledged_kept,
    assert_stream_replays,
    assert_versions_contiguous,
    create_known_game,
    eventually,
    move_once,
    percentile,
    run_load,
    stream_diffs,
    ws_url,
)
from tests.support.proxy import ChaosProxy
from tests.support.servers import RedisServer, ServiceProcess, wait_for

# A request that takes this long is a hang: far beyond the service's own timeouts
# (1 s to connect to Redis, 2 s a command).
HANG = 20.0

# Every acknowledged write is on disk before the answer, so a Redis killed with SIGKILL
# loses none. With the default (a sync every second) a busy disk holds writes back for
# up to 2 s while Redis answers anyway, and killing it loses moves already answered.
ALWAYS_SYNC = ("--appendfsync", "always")


def assert_problem(reply: Reply, status: int, code: str) -> None:
    assert reply.status == status, (reply.status, reply.body[:200])
    assert reply.headers["content-type"].startswith("application/problem+json")
    assert reply.json()["code"] == code


def assert_only_ok_or_unavailable(out: Outcome) -> None:
    for s in out.samples:
        assert s.status in (200, 503), (s.status, s.code)
        if s.status == 503:
            assert s.code == "store_unavailable"


def assert_unique_versions(out: Outcome) -> None:
    seen: dict[str, set[int]] = {}
    for s in out.samples:
        if s.status == 200 and s.changed and s.version is not None:
            versions = seen.setdefault(s.game, set())
            assert s.version not in versions, f"two accepted moves got v{s.version} on {s.game}"
            versions.add(s.version)


async def probe(base_url: str, game: KnownGame, until: float, seconds: list[float],
                replies: list[Reply]) -> None:
    """Read and move on ``game`` until ``until``, timing every answer."""
    http = Http(base_url, timeout=HANG)
    try:
        while time.monotonic() < until:
            for method, path, body in (
                ("GET", f"/games/{game.id}", None),
                ("POST", f"/games/{game.id}/flag", b'{"x": 0, "y": 0}'),
            ):
                started = time.perf_counter()
                reply = await http.request(method, path, body, game.auth)
                seconds.append(time.perf_counter() - started)
                replies.append(reply)
            await asyncio.sleep(0.02)
    finally:
        await http.close()


# ---- Redis killed under load ---------------------------------------------------------------


async def test_redis_killed_under_load_and_restarted(figures: list[str]) -> None:
    server = RedisServer(None, None, *ALWAYS_SYNC).start()
    svc = ServiceProcess({"REDIS_URL": server.url}).start()
    pid = svc.proc.pid if svc.proc else None
    try:
        http = Http(svc.url)
        games = [await create_known_game(http, seed=200 + i) for i in range(8)]
        await http.close()
        followers = [Follower([svc.url], g.id).run() for g in games[:2]]
        await asyncio.gather(*(asyncio.wait_for(f.connected.wait(), 60) for f in followers))

        out, stop = Outcome(), asyncio.Event()
        load = asyncio.create_task(run_load(svc.url, games, 16, 3600, stop=stop, out=out))
        await asyncio.sleep(1.5)

        server.stop(kill=True)
        killed = time.monotonic()
        outage_seconds: list[float] = []
        outage: list[Reply] = []
        await probe(svc.url, games[0], killed + 2.0, outage_seconds, outage)
        await eventually(lambda: any(s.status == 503 for s in out.samples),
                         "the movers see the outage")

        server = RedisServer(server.port, server.data_dir, *ALWAYS_SYNC).start()
        restarted = time.monotonic()
        await asyncio.sleep(2.0)
        await eventually(lambda: any(s.status == 200 and s.at > restarted for s in out.samples),
                         "a move accepted after the restart")
        stop.set()
        await load
        figures.append(
            f"Redis SIGKILL: {len(outage)} requests during a 2 s outage, all 503 "
            f"store_unavailable, slowest {max(outage_seconds) * 1000:.0f} ms; "
            f"moves before/during/after: {statuses_by_phase(out, killed, restarted)}"
        )

        # During the outage: quick problems, never a 500, never a hang.
        assert outage
        for reply in outage:
            assert_problem(reply, 503, "store_unavailable")
            assert reply.headers.get("retry-after") == "1"
        assert_only_ok_or_unavailable(out)
        assert not out.errors, out.errors[:5]
        assert any(s.status == 503 for s in out.samples)
        # Recovered without a restart of the service.
        assert svc.proc is not None and svc.proc.poll() is None and svc.proc.pid == pid
        assert any(s.status == 200 and s.at > restarted for s in out.samples)

        r = redis.Redis.from_url(server.url)
        kept = assert_acknowledged_kept(out.samples, r)
        assert kept == len([s for s in out.samples if s.status == 200 and s.changed])
        assert_unique_versions(out)
        for game in games:
            assert_stream_replays(r, game.id)
        # Subscribers were told to catch up after the listener reconnected: nothing missed.
        for f, game in zip(followers, games, strict=False):
            await f.finish(assert_stream_replays(r, game.id).version)
            f.assert_complete(stream_diffs(r, game.id))
    finally:
        svc.stop()
        server.cleanup()


def statuses_by_phase(out: Outcome, killed: float, restarted: float) -> str:
    phases: list[dict[int, int]] = [{}, {}, {}]
    for s in out.samples:
        phase = 0 if s.at < killed else 1 if s.at < restarted else 2
        phases[phase][s.status] = phases[phase].get(s.status, 0) + 1
    return " / ".join(str(dict(sorted(p.items()))) for p in phases)


# ---- scripts flushed, Redis restarted between moves ------------------------------------------


@pytest.fixture
def limited_service() -> Iterator[tuple[RedisServer, ServiceProcess]]:
    """Rate limits on (but high), so the limiter's script runs in each move's pipeline too.
    Redis syncs every write: the test SIGKILLs it and counts on every answered move."""
    server = RedisServer(None, None, *ALWAYS_SYNC).start()
    svc = ServiceProcess({
        "REDIS_URL": server.url, "RATE_LIMIT": "100000", "MOVE_RATE_LIMIT": "100000",
        "AUTH_FAILURE_LIMIT": "100000",
    }).start()
    try:
        yield server, svc
    finally:
        svc.stop()
        server.cleanup()


async def test_script_flush_and_redis_restart_between_moves(
    limited_service: tuple[RedisServer, ServiceProcess],
) -> None:
    server, svc = limited_service
    http = Http(svc.url)
    game = await create_known_game(http, seed=7)
    follower = Follower([svc.url], game.id).run()
    await asyncio.wait_for(follower.connected.wait(), 60)
    out = Outcome()
    cells = iter(game.safe)

    async def move() -> None:
        x, y = next(cells)
        reply = await move_once(http, game, "flag", {"x": x, "y": y}, out)
        assert reply.status == 200, reply.body
        assert reply.json()["cells"] == [[x, y, "F"]]

    async def create() -> None:
        reply = await http.post_json("/games", {"preset": "beginner"})
        assert reply.status == 201, reply.body

    await move()
    for restart in ("flush", "flush", "term", "kill", "flush", "kill"):
        if restart == "flush":
            redis.Redis.from_url(server.url).script_flush()
        else:
            server.stop(kill=restart == "kill")
            # The same server again (port and data), so the fixture stops it at the end.
            server.start()
        # The very first move after it commits, and so do the rest.
        await move()
        await move()
        await create()
        hint = await http.request("POST", f"/games/{game.id}/hint", b"", game.auth)
        assert hint.status == 200, hint.body
    await http.close()

    r = redis.Redis.from_url(server.url)
    stored = assert_stream_replays(r, game.id)
    assert_versions_contiguous(out.samples, stored.version, first=2)
    assert stored.clicks.hints == 6
    await follower.finish(stored.version)
    follower.assert_complete(stream_diffs(r, game.id))


# ---- a socket opened while Redis is down ---------------------------------------------------


async def test_a_socket_opened_while_redis_is_down_holds_up_no_later_socket() -> None:
    """The socket is told the store is unavailable and closed. Its subscription, which
    Redis never took, is forgotten: once Redis is back the next socket on the game gets
    its snapshot, rather than waiting for a confirmation of that one."""
    server = RedisServer(None, None, *ALWAYS_SYNC).start()
    svc = ServiceProcess({"REDIS_URL": server.url}).start()
    try:
        http = Http(svc.url)
        reply = await http.post_json("/games", {"preset": "beginner"})
        assert reply.status == 201, reply.body
        game_id = reply.json()["game"]["id"]
        await http.close()

        server.stop()
        async with connect(ws_url(svc.url, game_id)) as ws:
            error = json.loads(await asyncio.wait_for(ws.recv(), 60))
            assert error["type"] == "error", error
            assert error["problem"]["code"] == "store_unavailable", error
            with pytest.raises(ConnectionClosed) as closed:
                await asyncio.wait_for(ws.recv(), 60)
            assert closed.value.rcvd is not None and closed.value.rcvd.code != 1011

        server = RedisServer(server.port, server.data_dir, *ALWAYS_SYNC).start()
        async with connect(ws_url(svc.url, game_id)) as ws:
            snapshot = json.loads(await asyncio.wait_for(ws.recv(), 60))
            assert snapshot["type"] == "snapshot" and snapshot["game"]["id"] == game_id
    finally:
        svc.stop()
        server.cleanup()
    errors = server_errors(svc.output())
    assert not errors, errors[:3]


# ---- an API process killed under load ------------------------------------------------------


async def test_api_process_killed_under_load(
    redis_server: RedisServer, figures: list[str]
) -> None:
    a = ServiceProcess({"REDIS_URL": redis_server.url}).start()
    b = ServiceProcess({"REDIS_URL": redis_server.url}).start()
    try:
        http = Http(b.url)
        games = [await create_known_game(http, seed=300 + i) for i in range(4)]
        await http.close()
        # Subscribers start on A and move to B when A goes away.
        followers = [Follower([a.url, b.url], g.id).run() for g in games]
        await asyncio.gather(*(asyncio.wait_for(f.connected.wait(), 60) for f in followers))

        on_a, on_b, stop = Outcome(), Outcome(), asyncio.Event()
        loads = [
            asyncio.create_task(run_load(a.url, games, 16, 3600, stop=stop, out=on_a)),
            asyncio.create_task(run_load(b.url, games, 16, 3600, seed=1000, stop=stop, out=on_b)),
        ]
        await asyncio.sleep(1.5)
        await eventually(lambda: bool(on_a.ok() and on_b.ok()), "moves on both processes")
        a.stop(kill=True)
        killed = time.monotonic()
        await asyncio.sleep(1.5)
        await eventually(lambda: bool(on_a.errors) and any(s.at > killed for s in on_b.ok()),
                         "errors from the killed process, answers from the other")
        stop.set()
        await asyncio.gather(*loads)
        figures.append(
            f"API SIGKILL: clients of the killed process saw {len(on_a.errors)} connection "
            f"errors ({sorted(set(on_a.errors))}) and statuses {on_a.statuses()}; the other "
            f"process answered {on_b.statuses()}; subscribers reconnected "
            f"{sum(f.reconnects for f in followers)} times"
        )

        # The killed process's clients saw answers, then connection errors: nothing else.
        assert on_a.statuses().keys() == {200}
        assert on_a.errors and all(t >= killed for t in on_a.error_times)
        assert on_b.statuses().keys() == {200} and not on_b.errors

        r = redis.Redis.from_url(redis_server.url)
        everything = on_a.samples + on_b.samples
        assert_acknowledged_kept(everything, r)
        assert_unique_versions(Outcome(everything))
        for game, follower in zip(games, followers, strict=True):
            stored = assert_stream_replays(r, game.id)
            await follower.finish(stored.version)
            assert follower.reconnects >= 1
            follower.assert_complete(stream_diffs(r, game.id))
    finally:
        a.stop()
        b.stop()


# ---- a slow, lossy, silent link to Redis ----------------------------------------------------


async def persistent_mover(base_url: str, game: KnownGame, name: str, stop: asyncio.Event,
                           out: Outcome, finals: list[Sample]) -> None:
    """Moves that each carry an Idempotency-Key and are retried with the same key until
    one answer is 200: whatever the link did, each move must be applied exactly once."""
    http = Http(base_url, timeout=HANG)
    n = 0
    try:
        while not stop.is_set():
            n += 1
            key = f"{name}-{n}"
            x, y = game.safe[(hash(name) + 7 * n) % len(game.safe)]
            action, body = ("reveal", {"x": x, "y": y}) if n % 2 else (
                "flag", {"x": (x + 3) % game.width, "y": y})
            while True:
                try:
                    reply = await move_once(http, game, action, body, out,
                                            {"Idempotency-Key": key})
                except (OSError, asyncio.IncompleteReadError, TimeoutError) as exc:
                    out.errors.append(type(exc).__name__)
                    await asyncio.sleep(0.1)
                    continue
                if reply.status == 200:
                    finals.append(out.samples[-1])
                    break
                assert reply.status == 503, reply.body
                await asyncio.sleep(0.1)
    finally:
        await http.close()


async def test_slow_dropping_and_silent_link_to_redis(
    redis_server: RedisServer, figures: list[str]
) -> None:
    proxy = ChaosProxy(redis_server.port).start()
    svc = ServiceProcess({"REDIS_URL": proxy.url}).start()
    try:
        http = Http(svc.url, timeout=HANG)
        games = [await create_known_game(http, seed=400 + i) for i in range(4)]
        followers = [Follower([svc.url], g.id).run() for g in games]
        await asyncio.gather(*(asyncio.wait_for(f.connected.wait(), 60) for f in followers))
        out, stop = Outcome(), asyncio.Event()
        finals: list[Sample] = []
        movers: list[asyncio.Task[Any]] = [
            asyncio.create_task(persistent_mover(svc.url, games[i % 4], f"m{i}", stop, out, finals))
            for i in range(8)
        ]
        # And moves without a key: a lost reply must not make the service apply one twice.
        plain = Outcome()
        movers.append(asyncio.create_task(
            run_load(svc.url, games, 4, 3600, seed=2000, stop=stop, out=plain)))

        # Slow: every chunk 40 ms late each way.
        proxy.latency = 0.04
        await asyncio.sleep(1.5)
        slow = [s.seconds for s in out.samples]
        proxy.latency = 0.0

        # Lossy: every connection reset every 200 ms, then every 50 ms.
        before_drops = len(out.samples)
        for pause in [0.2] * 10 + [0.05] * 20:
            await asyncio.sleep(pause)
            proxy.drop_all()
        # Resets go on until a move got through them (on a quiet machine, long before).
        await eventually(lambda: any(s.status == 200 for s in out.samples[before_drops:]),
                         "a move answered while connections are reset", meanwhile=proxy.drop_all)
        lossy = out.samples[before_drops:]

        # Silent: Redis accepts and never answers. Each request must end in a 503.
        proxy.blackhole = True
        silent_seconds: list[float] = []
        silent: list[Reply] = []
        await probe(svc.url, games[0], time.monotonic() + 3.0, silent_seconds, silent)
        proxy.heal()
        proxy.drop_all()  # what was swallowed is gone: start the connections afresh

        await asyncio.sleep(1.5)
        stop.set()
        await asyncio.gather(*movers)
        await http.close()
        figures.append(
            f"Redis link: 40 ms each way -> move p50 {percentile(slow, 50) * 1000:.0f} ms; "
            f"connections reset every 200/50 ms -> statuses {Outcome(lossy).statuses()}; "
            f"silent Redis -> {len(silent)} answers, all 503, in "
            f"{min(silent_seconds):.1f}-{max(silent_seconds):.1f} s"
        )

        assert_only_ok_or_unavailable(out)
        assert_only_ok_or_unavailable(plain)
        assert silent
        for reply in silent:
            assert_problem(reply, 503, "store_unavailable")
        assert any(s.status == 200 for s in lossy)

        # Each move applied once: every answered move has its own version, and a version
        # no answer names can only belong to a move whose answer was a 503.
        r = redis.Redis.from_url(redis_server.url)
        assert_acknowledged_kept(finals + plain.samples, r)
        assert_unique_versions(Outcome(finals + plain.samples))
        for game, follower in zip(games, followers, strict=True):
            stored = assert_stream_replays(r, game.id)
            answered = {s.version for s in finals + plain.samples
                        if s.game == game.id and s.status == 200 and s.changed}
            unanswered = set(range(2, stored.version + 1)) - answered
            failed = [s for s in plain.samples if s.game == game.id and s.status != 200]
            assert len(unanswered) <= len(failed), (sorted(unanswered), len(failed))
            await follower.finish(stored.version)
            follower.assert_complete(stream_diffs(r, game.id))
        assert svc.proc is not None and svc.proc.poll() is None
    finally:
        svc.stop()
        proxy.stop()


def test_the_proxy_itself_forwards(redis_server: RedisServer) -> None:
    """The fault tests mean something only if the proxy forwards faithfully when healed."""
    proxy = ChaosProxy(redis_server.port).start()
    try:
        r = redis.Redis.from_url(proxy.url, socket_timeout=2)
        r.set("ms:proxy-check", b"x" * 200_000)
        assert r.get("ms:proxy-check") == b"x" * 200_000
        assert proxy.drop_all() == 1
        wait_for(lambda: r.ping(), what="reconnect through the proxy")
        proxy.blackhole = True
        with pytest.raises(redis.exceptions.TimeoutError):
            redis.Redis.from_url(proxy.url, socket_timeout=0.3).ping()
    finally:
        proxy.stop()
