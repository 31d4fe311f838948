"""The extremes of bad input: huge bodies and boards, deep JSON, bytes that are not
UTF-8, coordinates far outside any board, the wrong content types, stalled requests
and floods of socket messages. The answers are problems (or clean closes), nothing
changes a game that should not, and the process stays up and responsive.
"""

from __future__ import annotations

import asyncio
import json
import socket
import time
from collections.abc import Iterator
from typing import Any

import msgspec
import psutil
import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from tests.reliability.logs import server_errors
from tests.support.load import Http, Reply, ws_url
from tests.support.play import one_click_win
from tests.support.rawws import BINARY, TEXT, RawSocket
from tests.support.servers import RedisServer, ServiceProcess

MAX_BODY = 16 * 1024


@pytest.fixture(scope="module")
def service(redis_server: RedisServer) -> Iterator[ServiceProcess]:
    svc = ServiceProcess({"REDIS_URL": redis_server.url}).start()
    try:
        yield svc
    finally:
        svc.stop()
        errors = server_errors(svc.output())
        assert not errors, errors[:3]


def assert_problem(reply: Reply, status: int | tuple[int, ...], code: str) -> None:
    statuses = (status,) if isinstance(status, int) else status
    assert reply.status in statuses, (reply.status, reply.body[:300])
    assert reply.headers["content-type"].startswith("application/problem+json"), reply.headers
    assert reply.json()["code"] == code, reply.body


async def new_game(http: Http, **body: Any) -> tuple[str, dict[str, str]]:
    reply = await http.post_json("/games", body or {"preset": "beginner"})
    assert reply.status == 201, reply.body
    created = reply.json()
    return created["game"]["id"], {"Authorization": f"Bearer {created['token']}"}


async def version(http: Http, game_id: str) -> int:
    return int((await http.request("GET", f"/games/{game_id}")).json()["version"])


def rss(svc: ServiceProcess) -> int:
    assert svc.proc is not None
    return int(psutil.Process(svc.proc.pid).memory_info().rss)


def raw_exchange(port: int, data: bytes, timeout: float = 10.0) -> bytes:
    """Send ``data`` on a fresh connection and read the whole answer."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(data)
        out = b""
        try:
            while chunk := s.recv(65536):
                out += chunk
                if b"\r\n\r\n" in out:
                    head, body = out.split(b"\r\n\r\n", 1)
                    length = [int(line.split(b":")[1]) for line in head.split(b"\r\n")
                              if line.lower().startswith(b"content-length:")]
                    if length and len(body) >= length[0]:
                        break
        except (ConnectionResetError, TimeoutError):
            pass
        return out


# ---- bodies ----------------------------------------------------------------------------------


async def test_oversized_bodies_are_refused_without_reading_them(service: ServiceProcess) -> None:
    http = Http(service.url)
    game_id, auth = await new_game(http)
    before = rss(service)
    # A declared 10 MB body is refused from its Content-Length, before a byte of it is sent.
    for path in ("/games", f"/games/{game_id}/flag"):
        head = (f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                f"Authorization: {auth['Authorization']}\r\n"
                f"Content-Length: {10 * 2**20}\r\n\r\n").encode()
        answer = raw_exchange(service.port, head + b'{"x": 1, "y": ')
        assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
        assert b"application/problem+json" in answer and b'"too_large"' in answer
    # Streamed without a length, 10 MB are cut off after the limit.
    chunk = b" " * 65536
    body = b"".join(b"%x\r\n%s\r\n" % (len(chunk), chunk) for _ in range(160)) + b"0\r\n\r\n"
    start = (f"POST /games/{game_id}/flag HTTP/1.1\r\nHost: x\r\n"
             f"Authorization: {auth['Authorization']}\r\nTransfer-Encoding: chunked\r\n\r\n")
    answer = await asyncio.to_thread(raw_exchange, service.port, start.encode() + body)
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    # Just over the limit, and just under it (a valid move padded with spaces).
    over = b'{"x": 1, "y": 1}' + b" " * MAX_BODY
    assert_problem(await http.request("POST", f"/games/{game_id}/flag", over, auth), 413,
                   "too_large")
    under = b'{"x": 1, "y": 1}'.ljust(MAX_BODY, b" ")
    assert (await http.request("POST", f"/games/{game_id}/flag", under, auth)).status == 200
    assert await version(http, game_id) == 1
    assert rss(service) - before < 64 * 2**20
    await http.close()


@pytest.mark.parametrize("nesting", ["[", '{"a":'])
async def test_deep_json_is_a_problem_not_a_crash(service: ServiceProcess, nesting: str) -> None:
    http = Http(service.url)
    game_id, auth = await new_game(http)
    closing = "]" if nesting == "[" else "}"
    depth = (MAX_BODY - 64) // (len(nesting) + 1)
    deep = nesting * depth + "1" + closing * depth
    bodies = [deep, f'{{"x": {deep}, "y": 0}}', f'{{"x": 0, "y": 0, "mark": {deep}}}',
              f'{{"player": {deep}}}', f'{{"zz": {deep}}}']
    for body in bodies:
        assert len(body) <= MAX_BODY
        for path in ("/games", f"/games/{game_id}/reveal", f"/games/{game_id}/flag"):
            reply = await http.request("POST", path, body.encode(), auth)
            assert_problem(reply, (400, 422), "invalid_request")
    async with connect(ws_url(service.url, game_id)) as ws:
        await ws.recv()
        for body in bodies[:3]:
            await ws.send(body)
            assert json.loads(await ws.recv())["problem"]["code"] == "invalid_request"
    assert await version(http, game_id) == 0
    await http.close()


async def test_invalid_utf8_anywhere(service: ServiceProcess) -> None:
    http = Http(service.url)
    game_id, auth = await new_game(http)
    for body in (b'{"player": "\xff\xfe"}', b'{"player": "\xc0\xaf"}',
                 b'{"player": "\xed\xa0\x80"}', b'{"preset": "beginner\x80"}',
                 b"\xef\xbb\xbf{}", b'{"player": "\\ud800"}'):
        assert_problem(await http.request("POST", "/games", body), (400, 422), "invalid_request")
    for name, value, status, code in (
        (b"Authorization", b"Bearer \xff\xfe\xfd", 403, "forbidden"),
        (b"Authorization", b"\xff\xfe \xfd", 401, "unauthorized"),
        (b"If-Match", b'"\xff"', 400, "invalid_request"),
        (b"Idempotency-Key", b"k\xff", 400, "invalid_request"),
    ):
        headers = [(name, value)] + ([] if name == b"Authorization" else
                                     [(b"Authorization", auth["Authorization"].encode())])
        reply = await http.request("POST", f"/games/{game_id}/flag", b'{"x": 0, "y": 0}',
                                   raw_headers=headers)
        assert_problem(reply, status, code)
    assert_problem(await http.request("GET", "/games/%ff%fe%fd"), 404, "not_found")
    assert_problem(await http.request("GET", f"/games/{game_id}%c0%af"), 404, "not_found")
    assert await version(http, game_id) == 0

    # A text frame that is not UTF-8 closes the socket as the protocol says (1007)...
    raw = RawSocket("127.0.0.1", service.port, f"/games/{game_id}/events")
    assert raw.status == 101
    raw.recv()  # the snapshot
    raw.send(TEXT, b'{"type": "auth", "token": "\xff"}')
    assert raw.close_code() == 1007
    raw.close()
    # ... and a binary frame that is not UTF-8 is answered like any bad message.
    raw = RawSocket("127.0.0.1", service.port, f"/games/{game_id}/events")
    raw.recv()
    raw.send(BINARY, b'{"type": "reveal", "x": "\xff"}')
    _, payload = raw.recv()
    assert json.loads(payload)["problem"]["code"] == "invalid_request"
    raw.close()
    await http.close()


# ---- boards and coordinates -------------------------------------------------------------------


async def test_huge_and_impossible_boards(service: ServiceProcess, figures: list[str]) -> None:
    http = Http(service.url, timeout=120)
    for body in ({"width": 1001, "height": 1000, "mines": 10},
                 {"width": 10**6, "height": 10**6, "mines": 10},
                 {"width": 2**63, "height": 2, "mines": 1},
                 {"width": 1000, "height": 1000, "mines": 999_992},
                 {"width": 1000, "height": 1000, "mines": 10**12},
                 {"width": 1, "height": 10**6, "mines": 1},
                 {"width": -1000, "height": -1000, "mines": 1}):
        assert_problem(await http.post_json("/games", body), 422, "invalid_request")
    # The largest board: one mine, so the first click opens the whole million cells
    # (iteratively) and wins, every mine flagged in a single diff.
    started = time.perf_counter()
    game_id, auth = await new_game(http, width=1000, height=1000, mines=1,
                                   seed=one_click_win(1000, 1000, (999, 999)))
    diff = await http.post_json(f"/games/{game_id}/reveal", {"x": 999, "y": 999}, auth)
    assert diff.status == 200 and status_of(diff.body) == "won"
    view = (await http.request("GET", f"/games/{game_id}")).json()
    assert len(view["board"]) == 1000 and view["mines_left"] == 0
    # As dense as allowed: only the start area is free.
    dense_id, dense_auth = await new_game(http, width=1000, height=1000, mines=999_991)
    dense = await http.post_json(f"/games/{dense_id}/reveal", {"x": 500, "y": 500}, dense_auth)
    assert dense.status == 200 and status_of(dense.body) == "won"
    # Both change every cell: listed as runs, each fits a 1 MiB WebSocket message.
    assert len(diff.body) < 2**20 and len(dense.body) < 2**20
    figures.append(f"1000x1000 boards: a whole-board cascade and a 999,991-mine win, "
                   f"{len(diff.body) / 1e6:.2f} and {len(dense.body) / 1e6:.2f} MB diffs, "
                   f"{time.perf_counter() - started:.1f} s")
    assert (await http.request("GET", "/healthz")).status == 200
    await http.close()


class _Status(msgspec.Struct):
    status: str


def status_of(body: bytes) -> str:
    """A big answer's status, without building a million small lists."""
    return msgspec.json.decode(body, type=_Status).status


COORDINATES: list[Any] = [-1, -(2**63), 2**63, 2**64, 10**100, 9, 1.5, 1e308, "1", None, True,
                          [1], {"x": 1}]


async def test_coordinates_out_of_any_range(service: ServiceProcess) -> None:
    http = Http(service.url)
    game_id, auth = await new_game(http)
    for action in ("reveal", "flag", "chord"):
        for value in COORDINATES:
            for body in ({"x": value, "y": 0}, {"x": 0, "y": value}):
                reply = await http.post_json(f"/games/{game_id}/{action}", body, auth)
                assert_problem(reply, (400, 422), "invalid_request")
        for raw in (b'{"x": 1e999, "y": 0}', b'{"x": -0, "y": 1e400}', b'{"x": NaN, "y": 0}',
                    b'{"x": 0x10, "y": 0}', b'{"x": 01, "y": 0}', b'{"x": 1, "y": 1, "x": -5}'):
            reply = await http.request("POST", f"/games/{game_id}/{action}", raw, auth)
            assert_problem(reply, (400, 422), "invalid_request")
    # The edges themselves are fine.
    assert (await http.post_json(f"/games/{game_id}/flag", {"x": 8, "y": 8}, auth)).status == 200
    assert (await http.post_json(f"/games/{game_id}/flag", {"x": 0, "y": 0}, auth)).status == 200
    async with connect(ws_url(service.url, game_id)) as ws:
        await ws.recv()
        await ws.send(json.dumps({"type": "auth", "token": auth["Authorization"][7:]}))
        for value in COORDINATES:
            await ws.send(json.dumps({"type": "reveal", "x": value, "y": 0, "id": 1}))
            answer = json.loads(await ws.recv())
            assert answer["type"] == "error" and answer["problem"]["code"] == "invalid_request"
    assert await version(http, game_id) == 2
    await http.close()


# ---- content types, headers, stalled requests -------------------------------------------------


async def test_wrong_content_types(service: ServiceProcess) -> None:
    http = Http(service.url)
    game_id, auth = await new_game(http)
    path = f"/games/{game_id}/flag"
    for content_type, body in (
        ("application/x-www-form-urlencoded", b"x=1&y=1"),
        ("multipart/form-data; boundary=b", b'--b\r\nContent-Disposition: form-data; name="x"'
                                            b"\r\n\r\n1\r\n--b--\r\n"),
        ("application/xml", b"<move><x>1</x><y>1</y></move>"),
        ("application/msgpack", b"\x82\xa1x\x01\xa1y\x01"),
        ("text/plain", b"reveal 1 1"),
    ):
        reply = await http.request("POST", path, body, {**auth, "Content-Type": content_type})
        assert_problem(reply, 400, "invalid_request")
    assert await version(http, game_id) == 0
    # Whatever the client asks for, reads answer JSON or the text board, never an error page.
    for accept in ("application/xml", "image/png", "*/*;q=0", "text/html", "text/plain;q=0"):
        reply = await http.request("GET", f"/games/{game_id}", None, {"Accept": accept})
        assert reply.status == 200 and reply.body[:1] in (b"{", b"#")
    await http.close()


async def test_stalled_and_malformed_requests_block_nobody(service: ServiceProcess) -> None:
    http = Http(service.url)
    game_id, auth = await new_game(http)
    # Fifty connections that never finish: half a header, or a body that never comes.
    stalled = []
    for i in range(50):
        s = socket.create_connection(("127.0.0.1", service.port), timeout=10)
        if i % 2:
            s.sendall(b"POST /games HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{")
        else:
            s.sendall(b"GET /games/" + game_id.encode() + b" HTTP/1.1\r\nHost: ")
        stalled.append(s)
    for n in range(5):
        reply = await http.post_json(f"/games/{game_id}/flag", {"x": n, "y": 0}, auth)
        assert reply.status == 200
    # Broken HTTP is refused by the server's parser, and the process carries on.
    for junk in (b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + b"\x00" * 40,
                 b"GET / HTTP/1.1\r\nHost: x\r\nX: \x00\x01\r\n\r\n",
                 b"POST /games HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n",
                 b"POST /games HTTP/1.1\r\nHost: x\r\nContent-Length: \xb2\r\n\r\n",
                 b"GET /" + b"a" * 100_000 + b" HTTP/1.1\r\nHost: x\r\n\r\n",
                 b"GET / HTTP/1.1\r\n" + b"X-Many: y\r\n" * 5000 + b"Host: x\r\n\r\n"):
        answer = await asyncio.to_thread(raw_exchange, service.port, junk)
        assert not answer.startswith(b"HTTP/1.1 5"), answer[:200]
    for s in stalled:
        s.close()
    assert await version(http, game_id) == 5
    assert (await http.request("GET", "/healthz")).status == 200
    await http.close()


# ---- floods of socket messages ----------------------------------------------------------------


async def test_socket_floods_close_the_flooder_only(service: ServiceProcess,
                                                    figures: list[str]) -> None:
    http = Http(service.url)
    game_id, auth = await new_game(http, width=30, height=30, mines=10)
    token = auth["Authorization"][7:]
    results = []
    async with connect(ws_url(service.url, game_id), max_size=2**24) as watcher:
        assert json.loads(await watcher.recv())["type"] == "snapshot"
        for label, message in (
            ("2000 small moves", json.dumps({"type": "flag", "x": 1, "y": 1, "id": 1})),
            ("2000 bad messages", "{nope"),
            ("200 near-limit messages", json.dumps({"type": "auth", "token": "t" * 60_000})),
            ("one oversized message", "x" * (2**20)),
            ("2000 binary frames", b"\x00" * 100),
        ):
            count = 1 if label.startswith("one") else (200 if label.startswith("200") else 2000)
            async with connect(ws_url(service.url, game_id), max_size=2**24) as flooder:
                await flooder.recv()
                await flooder.send(json.dumps({"type": "auth", "token": token}))
                code = None
                outcome = "answered"
                try:
                    for _ in range(count):
                        await flooder.send(message)
                    # Still open (a flood within the budget): it must still answer.
                    await flooder.send(json.dumps({"type": "flag", "x": 0, "y": 0, "id": "p"}))
                    while json.loads(await asyncio.wait_for(flooder.recv(), 60)).get("id") != "p":
                        pass
                except ConnectionClosed as closed:
                    code = closed.rcvd.code if closed.rcvd else None
                    # Closing a connection that still holds unread input (the rest of a
                    # flood, or a frame over the size limit refused from its header) resets
                    # it, and the reset can overtake the close frame. What must never come
                    # is another code, such as 1011 for a server error.
                    assert code in (1008, 1009, None), (label, closed)
                    outcome = f"closed {code}" if code else "connection reset"
                results.append(f"{label}: {outcome}")
            # Meanwhile the other socket on the game goes on receiving every diff in order.
            # A flood on a busy machine can outlast the server's 5 s keep-alive: reconnect.
            await http.close()
            before = await version(http, game_id)
            reply = await http.post_json(f"/games/{game_id}/flag", {"x": 29, "y": 29}, auth)
            assert reply.status == 200
            while True:
                message = json.loads(await asyncio.wait_for(watcher.recv(), 60))
                if message["type"] == "diff" and message["version"] > before:
                    assert message["version"] == before + 1
                    break
    figures.append("socket floods: " + "; ".join(results))
    assert (await http.request("GET", "/healthz")).status == 200
    # A new socket works as before.
    async with connect(ws_url(service.url, game_id)) as ws:
        assert json.loads(await ws.recv())["type"] == "snapshot"
    await http.close()
