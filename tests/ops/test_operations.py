"""What an operator relies on: workers, logs, metrics, limits, CORS."""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import os
import re
import time
from collections.abc import Iterator

import httpx
import psutil
import pytest
import websockets

from tests.support.servers import ServiceProcess, wait_for


@pytest.fixture(scope="module")
def chatty(redis_url: str) -> Iterator[ServiceProcess]:
    """Two worker processes, logging every request."""
    svc = ServiceProcess({"REDIS_URL": redis_url, "WORKERS": "2", "LOG_LEVEL": "info"}).start()
    try:
        yield svc
    finally:
        svc.stop()


def _new_game(base: str, **body: object) -> tuple[str, str]:
    created = httpx.post(f"{base}/games", json={"preset": "beginner", **body},
                         timeout=30).json()
    return created["game"]["id"], created["token"]


async def test_workers_share_games_and_live_diffs(chatty: ServiceProcess) -> None:
    game_id, token = _new_game(chatty.url, seed=11)
    ws_url = chatty.url.replace("http://", "ws://") + f"/games/{game_id}/events"
    # Several sockets, so the kernel spreads them over both workers.
    sockets = [await websockets.connect(ws_url) for _ in range(6)]
    try:
        for ws in sockets:
            assert json.loads(await ws.recv())["type"] == "snapshot"
        auth = {"Authorization": f"Bearer {token}"}
        async with httpx.AsyncClient(base_url=chatty.url, timeout=30) as http:
            for x in range(4):
                r = await http.post(f"/games/{game_id}/flag", json={"x": x, "y": 8}, headers=auth)
                assert r.status_code == 200
        for ws in sockets:
            versions = [json.loads(await asyncio.wait_for(ws.recv(), 10))["version"]
                        for _ in range(4)]
            assert versions == [1, 2, 3, 4]
        metrics = httpx.get(f"{chatty.url}/metrics", timeout=30).text
        assert "ms_live_subscribers 6.0" in metrics
    finally:
        for ws in sockets:
            await ws.close()


def test_logs_are_json_with_request_ids_and_no_secrets(chatty: ServiceProcess) -> None:
    game_id, token = _new_game(chatty.url, seed=987654321)
    auth = {"Authorization": f"Bearer {token}", "X-Request-ID": "trace-42"}
    r = httpx.post(f"{chatty.url}/games/{game_id}/reveal", json={"x": 4, "y": 4}, headers=auth,
                   timeout=30)
    assert r.headers["x-request-id"] == "trace-42"
    generated = httpx.get(f"{chatty.url}/games/{game_id}", timeout=30).headers["x-request-id"]
    assert len(generated) == 16
    # Ids tell nothing of the requests in between (how often a rival moved): no two of
    # a process's ids share a prefix, as a counter's would.
    ids = [httpx.get(f"{chatty.url}/healthz", timeout=30).headers["x-request-id"]
           for _ in range(8)]
    assert len({rid[:8] for rid in [generated, *ids]}) == 9, ids

    def logged() -> list[dict[str, object]]:
        return [json.loads(line) for line in chatty.output().splitlines() if line.startswith("{")]

    # A request is logged once its answer has gone out, so its line may trail the answer.
    wait_for(lambda: any(line.get("request_id") == generated for line in logged()), 10, "log")
    ours = [line for line in logged() if line.get("request_id") == "trace-42"]
    assert ours and ours[0]["status"] == 200 and ours[0]["level"] == "info"
    text = chatty.output()
    assert token not in text
    assert "987654321" not in text


async def test_a_debug_log_keeps_the_tokens_sockets_carry(redis_url: str) -> None:
    """At debug level the WebSocket protocol would log every frame, auth messages too."""
    with ServiceProcess({"REDIS_URL": redis_url, "LOG_LEVEL": "debug"}) as svc:
        player = httpx.post(f"{svc.url}/players", json={}, timeout=30).json()
        game_id, token = _new_game(svc.url)
        base = svc.url.replace("http://", "ws://")
        for path, secret in [("/players/me/events", player["token"]),
                             (f"/games/{game_id}/events", token)]:
            async with websockets.connect(base + path) as ws:
                await ws.send(json.dumps({"type": "auth", "token": secret}))
                await ws.send(json.dumps({"type": "reveal", "x": 4, "y": 4, "id": 1}))
                await asyncio.wait_for(ws.recv(), 10)
        httpx.get(f"{svc.url}/healthz", timeout=30)
        text = svc.output()
        assert '"level": "debug"' in text  # the service's own debug lines still come
        for secret in (player["token"], token):
            # Any 12 characters of it: a frame log shortens what it shows in the middle.
            assert not any(secret[i : i + 12] in text for i in range(len(secret) - 11))


def test_metrics_count_requests_and_moves(chatty: ServiceProcess) -> None:
    game_id, token = _new_game(chatty.url)
    auth = {"Authorization": f"Bearer {token}"}
    httpx.post(f"{chatty.url}/games/{game_id}/reveal", json={"x": 0, "y": 0}, headers=auth,
               timeout=30)
    httpx.post(f"{chatty.url}/games/{game_id}/flag", json={"x": 0, "y": 0}, headers={},
               timeout=30)
    text = httpx.get(f"{chatty.url}/metrics", timeout=30).text
    assert 'ms_moves_total{action="reveal"}' in text
    assert 'route="/games/{game_id}/flag",status="401"' in text
    assert "ms_http_request_duration_seconds_bucket" in text
    assert "ms_commit_conflicts_total" in text


def test_cors_is_off_unless_configured(redis_url: str) -> None:
    origin = {"Origin": "https://play.example"}
    with ServiceProcess({"REDIS_URL": redis_url}) as plain:
        assert "access-control-allow-origin" not in httpx.get(f"{plain.url}/healthz",
                                                             headers=origin).headers
    env = {"REDIS_URL": redis_url, "CORS_ORIGINS": "https://play.example"}
    with ServiceProcess(env) as svc:
        r = httpx.options(
            f"{svc.url}/games",
            headers={**origin, "Access-Control-Request-Method": "POST",
                     "Access-Control-Request-Headers": "authorization,content-type"},
        )
        assert r.headers["access-control-allow-origin"] == "https://play.example"


async def test_open_sockets_per_client_are_limited(redis_url: str) -> None:
    with ServiceProcess({"REDIS_URL": redis_url, "MAX_SOCKETS_PER_CLIENT": "2"}) as svc:
        game_id, _ = _new_game(svc.url)
        url = svc.url.replace("http://", "ws://") + f"/games/{game_id}/events"
        async with websockets.connect(url) as one, websockets.connect(url) as two:
            await one.recv()
            await two.recv()
            with pytest.raises(websockets.exceptions.InvalidStatus):
                async with websockets.connect(url):
                    pass
        # Closing frees the places again, once the server has seen the sockets go: the
        # client's close can finish a moment before the server's handler does.
        for _ in range(100):
            try:
                async with websockets.connect(url) as again:
                    assert json.loads(await again.recv())["type"] == "snapshot"
                break
            except websockets.exceptions.InvalidStatus:
                await asyncio.sleep(0.05)
        else:
            pytest.fail("the closed sockets' places were never freed")


async def test_a_message_flood_closes_only_that_socket(live_server: str) -> None:
    game_id, _ = _new_game(live_server)
    url = live_server.replace("http://", "ws://") + f"/games/{game_id}/events"
    async with websockets.connect(url) as calm, websockets.connect(url) as noisy:
        await calm.recv()
        await noisy.recv()
        with pytest.raises(websockets.exceptions.ConnectionClosed) as closed:
            for _ in range(500):
                await noisy.send("{}")
            while True:
                await asyncio.wait_for(noisy.recv(), 10)
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 1008
        await calm.send(json.dumps({"type": "reveal", "x": 0, "y": 0, "id": 1}))
        reply = json.loads(await asyncio.wait_for(calm.recv(), 10))
        assert reply["type"] == "error" and reply["problem"]["code"] == "unauthorized"


def test_slow_changes_take_turns_as_many_at_once_as_there_are_cores(redis_url: str) -> None:
    """Eight first clicks on big no-guess boards at once (each builds its board, about
    a second of CPU): at most one per core runs, the others wait their turn, and every
    one is answered."""
    cores = len(os.sched_getaffinity(0))
    with ServiceProcess({"REDIS_URL": redis_url}) as svc:
        board = {"width": 300, "height": 300, "mines": 18000, "no_guess": True}
        created = [httpx.post(f"{svc.url}/games", json=board, timeout=30).json()
                   for _ in range(8)]
        games = [(c["game"]["id"], c["token"]) for c in created]

        def first_click(game: tuple[str, str]) -> int:
            game_id, token = game
            return httpx.post(f"{svc.url}/games/{game_id}/reveal", json={"x": 3, "y": 3},
                              headers={"Authorization": f"Bearer {token}"}, timeout=120,
                              ).status_code

        seen = {"running": 0.0, "waiting": 0.0}
        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            answers = pool.map(first_click, games)
            clicks = pool.submit(list, answers)
            while not clicks.done():
                text = httpx.get(f"{svc.url}/metrics", timeout=30).text
                for state in seen:
                    found = re.search(rf'ms_heavy_changes\{{state="{state}"\}} (\S+)', text)
                    if found:
                        seen[state] = max(seen[state], float(found[1]))
                time.sleep(0.05)
        assert clicks.result() == [200] * 8
    assert 1 <= seen["running"] <= cores, seen
    assert seen["waiting"] >= 1, f"the clicks never queued: {seen}"


async def test_a_dead_workers_sockets_leave_the_gauge(redis_url: str) -> None:
    """A worker killed and replaced: its sockets are gone, and so is its share of
    ms_live_subscribers (its metrics file stays behind in the shared folder)."""
    env = {"REDIS_URL": redis_url, "WORKERS": "2"}
    with ServiceProcess(env) as svc:
        game_id, _ = _new_game(svc.url)
        ws_url = svc.url.replace("http://", "ws://") + f"/games/{game_id}/events"
        sockets: list[websockets.ClientConnection] = []
        try:
            # The kernel hands connections to either worker as it likes: open sockets until
            # both workers hold some (a busy machine may give the first dozen to one).
            while True:
                for _ in range(12):
                    sockets.append(ws := await websockets.connect(ws_url))
                    await ws.recv()
                held = {p: sum(c.status == psutil.CONN_ESTABLISHED and c.laddr.port == svc.port
                               for c in p.net_connections()) for p in _workers(svc)}
                if all(held.values()) or len(sockets) >= 120:
                    break
            total = len(sockets)
            assert _subscribers(svc) == total
            # The worker that holds the most of them.
            victim = max(held, key=lambda p: held[p])
            assert 0 < held[victim] < total, held
            victim.kill()
            wait_for(lambda: len(_workers(svc)) == 2 and victim not in _workers(svc), 30,
                     "a new worker")
            left = total - held[victim]
            wait_for(lambda: _subscribers(svc) == left, 15, f"the gauge at {left}")
        finally:
            for ws in sockets:
                await ws.close()


def _workers(svc: ServiceProcess) -> list[psutil.Process]:
    assert svc.proc is not None
    return [p for p in psutil.Process(svc.proc.pid).children()
            if "spawn_main" in " ".join(p.cmdline())]


def _subscribers(svc: ServiceProcess) -> float:
    text = httpx.get(f"{svc.url}/metrics", timeout=30).text
    found = re.search(r"^ms_live_subscribers (\S+)$", text, re.MULTILINE)
    return float(found[1]) if found else 0.0
