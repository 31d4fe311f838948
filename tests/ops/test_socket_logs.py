"""Every WebSocket leaves one access line when it ends (its request id, client, route
template, close code, who closed it and why, how long it lasted), and the service says in
an info line when it closed or refused a socket itself. No token or message is logged."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator

import httpx
import pytest
import redis
import websockets

from tests.support.servers import RedisServer, ServiceProcess, wait_for

ROUTE = "/games/{game_id}/events"


@pytest.fixture(scope="module")
def svc(redis_url: str) -> Iterator[ServiceProcess]:
    s = ServiceProcess({"REDIS_URL": redis_url, "LOG_LEVEL": "info",
                        "MAX_SOCKETS_PER_CLIENT": "1"}).start()
    try:
        yield s
    finally:
        s.stop()


def records(svc: ServiceProcess, request_id: str) -> list[dict[str, object]]:
    return [r for r in (json.loads(line) for line in svc.output().splitlines()
                        if line.startswith("{"))
            if r.get("request_id") == request_id]


def socket_line(svc: ServiceProcess, request_id: str) -> dict[str, object]:
    """The access line of the socket with this request id, once written (10 s at most)."""
    def found() -> list[dict[str, object]]:
        return [r for r in records(svc, request_id)
                if r["logger"] == "service.access" and "code" in r]

    wait_for(lambda: found(), 10, "the socket's access line")
    [line] = found()
    return line


def said(svc: ServiceProcess, request_id: str) -> list[str]:
    return [str(r["message"]) for r in records(svc, request_id)
            if r["logger"] == "service.api.edge" and r["level"] == "info"]


def ws_url(svc: ServiceProcess, path: str) -> str:
    return svc.url.replace("http://", "ws://") + path


async def test_a_socket_the_client_closes_is_logged_once_without_its_token(
    svc: ServiceProcess,
) -> None:
    created = httpx.post(f"{svc.url}/games", json={"preset": "beginner"}, timeout=30).json()
    game, token = created["game"]["id"], created["token"]
    async with asyncio.timeout(10):
        async with websockets.connect(ws_url(svc, f"/games/{game}/events"),
                                      additional_headers={"X-Request-ID": "sock-1"}) as ws:
            await ws.send(json.dumps({"type": "auth", "token": token}))
            assert json.loads(await ws.recv())["type"] == "snapshot"
    line = socket_line(svc, "sock-1")
    assert line["route"] == ROUTE and line["code"] == 1000 and line["status"] == 101
    assert line["closed_by"] == "client" and line["client"] == "127.0.0.1"
    assert line["level"] == "info" and isinstance(line["ms"], float)
    assert line["message"] == f"WEBSOCKET {ROUTE} 1000"
    assert said(svc, "sock-1") == []  # the client's own close: nothing more to say
    assert token not in svc.output() and game not in str(line)


async def test_a_socket_the_service_closes_says_why(svc: ServiceProcess) -> None:
    async with asyncio.timeout(10):
        async with websockets.connect(ws_url(svc, f"/games/{'0' * 32}/events"),
                                      additional_headers={"X-Request-ID": "sock-2"}) as ws:
            with pytest.raises(websockets.exceptions.ConnectionClosed):
                while True:
                    await ws.recv()
    line = socket_line(svc, "sock-2")
    assert (line["code"], line["closed_by"], line["reason"]) == (4404, "server", "not_found")
    assert said(svc, "sock-2") == ["closed a socket with 4404: not_found"]


async def test_a_socket_refused_for_too_many_is_logged(svc: ServiceProcess) -> None:
    created = httpx.post(f"{svc.url}/games", json={"preset": "beginner"}, timeout=30).json()
    url = ws_url(svc, f"/games/{created['game']['id']}/events")
    async with asyncio.timeout(10):
        async with websockets.connect(url) as first:
            await first.recv()
            with pytest.raises(websockets.exceptions.InvalidStatus):
                await websockets.connect(url, additional_headers={"X-Request-ID": "sock-3"})
    line = socket_line(svc, "sock-3")
    assert (line["status"], line["code"], line["reason"]) == (403, 1008, "too many open sockets")
    assert said(svc, "sock-3") == ["refused a socket: too many open sockets"]


async def test_a_socket_leaves_one_line_and_no_address_or_query_of_uvicorn(
    svc: ServiceProcess,
) -> None:
    """uvicorn's own lines of a socket (its handshake with the peer's raw address and the
    query string, "connection open") are not written: the access line says it all, once."""
    created = httpx.post(f"{svc.url}/games", json={"preset": "beginner"}, timeout=30).json()
    url = ws_url(svc, f"/games/{created['game']['id']}/events?since=0")
    async with asyncio.timeout(10):
        async with websockets.connect(url, additional_headers={"X-Request-ID": "sock-4"}):
            with pytest.raises(websockets.exceptions.InvalidStatus):
                await websockets.connect(url, additional_headers={"X-Request-ID": "sock-5"})
    socket_line(svc, "sock-4")
    socket_line(svc, "sock-5")
    assert [r["logger"] for r in records(svc, "sock-4")] == ["service.access"]
    assert sorted(str(r["logger"]) for r in records(svc, "sock-5")) == \
        ["service.access", "service.api.edge"]
    assert "?since=" not in svc.output()
    lines = [json.loads(line) for line in svc.output().splitlines() if line.startswith("{")]
    assert any(r["message"].startswith("Started server process") for r in lines)
    assert not [r for r in lines if "color_message" in r]  # a terminal's, with ANSI codes


async def test_the_listener_logs_without_the_id_of_the_request_that_started_it() -> None:
    """The events listener's connection is opened by whichever socket first needs it; its
    lines (here: the connection lost) carry no request's id, and name the node."""
    server = RedisServer().start()
    svc = ServiceProcess({"REDIS_URL": server.url, "LOG_LEVEL": "info"})
    try:
        svc.start()
        created = httpx.post(f"{svc.url}/games", json={"preset": "beginner"},
                             timeout=30).json()
        url = ws_url(svc, f"/games/{created['game']['id']}/events")
        admin = redis.Redis(port=server.port)
        try:
            async with asyncio.timeout(10):
                async with websockets.connect(
                    url, additional_headers={"X-Request-ID": "opener"}
                ) as ws:
                    assert json.loads(await ws.recv())["type"] == "snapshot"
                    assert admin.client_kill_filter(_type="pubsub") == 1
        finally:
            admin.close()
        lost = "events listener lost Redis node"
        wait_for(lambda: lost in svc.output(), 10, "the listener's line")
        [line] = [json.loads(line) for line in svc.output().splitlines()
                  if line.startswith("{") and lost in line]
        assert "request_id" not in line, line
        assert line["message"] == f"{lost} 127.0.0.1:{server.port}; subscribing again"
    finally:
        svc.stop()
        server.cleanup()
