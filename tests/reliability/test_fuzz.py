"""Hypothesis against a live server: every request body, the headers a client sets
(If-Match, Idempotency-Key, Authorization, Content-Type, Accept), path ids, query
parameters and WebSocket messages. Whatever is sent, the answer is never a 5xx, every
error is a problem+json with a known ``code``, a socket answers with an ``error``
message or closes cleanly, and the server logs no unhandled error.

Bytes that are not HTTP at all (control characters in a header, say) are refused by
the HTTP server before the application sees them; those are covered in
test_bad_input.py, not here.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect

from tests.reliability.logs import server_errors
from tests.support.load import Http, Reply, ws_url
from tests.support.servers import RedisServer, ServiceProcess

CODES = frozenset({
    "invalid_request", "unauthorized", "forbidden", "not_found", "game_over", "paused",
    "version_conflict", "too_large", "rate_limited", "game_in_progress",
})
SERVER_MESSAGES = frozenset({"snapshot", "diff", "heartbeat", "reset", "result", "error"})
# Clean closes: policy (flood, bad since), too big, not UTF-8, unknown game. Never 1011.
CLEAN_CLOSES = frozenset({1000, 1007, 1008, 1009, 1013, 4404})
EXAMPLES = 300


class SyncHttp:
    """The keep-alive client, driven from synchronous Hypothesis tests."""

    def __init__(self, base_url: str) -> None:
        self.loop = asyncio.new_event_loop()
        self.http = Http(base_url, timeout=30)

    def request(self, method: str, path: str, body: bytes | None = None,
                headers: list[tuple[bytes, bytes]] | None = None) -> Reply:
        return self.loop.run_until_complete(
            self.http.request(method, path, body, raw_headers=headers or []))

    def close(self) -> None:
        self.loop.run_until_complete(self.http.close())
        self.loop.close()


@pytest.fixture(scope="module")
def fuzzed(redis_server: RedisServer) -> Iterator[ServiceProcess]:
    svc = ServiceProcess({"REDIS_URL": redis_server.url, "LOG_LEVEL": "info"}).start()
    try:
        yield svc
    finally:
        svc.stop()
        errors = server_errors(svc.output())
        assert not errors, errors[:3]


@pytest.fixture(scope="module")
def http(fuzzed: ServiceProcess) -> Iterator[SyncHttp]:
    client = SyncHttp(fuzzed.url)
    try:
        yield client
    finally:
        client.close()


def new_game(http: SyncHttp, body: bytes = b'{"preset": "beginner"}') -> tuple[str, str]:
    reply = http.request("POST", "/games", body)
    assert reply.status == 201, reply.body
    created = reply.json()
    return created["game"]["id"], created["token"]


def assert_answer(reply: Reply, wants_text: bool = False) -> None:
    event(f"status {reply.status}")
    assert reply.status < 500, (reply.status, reply.body[:300])
    if reply.status >= 400:
        assert reply.headers.get("content-type", "").startswith("application/problem+json"), (
            reply.status, reply.headers, reply.body[:200])
        problem = reply.json()
        assert problem["code"] in CODES, problem
        assert problem["status"] == reply.status and problem["title"] and problem["detail"]
    elif reply.status != 204 and not (
        wants_text and reply.headers.get("content-type", "").startswith("text/plain")
    ):
        json.loads(reply.body)


# ---- strategies ----------------------------------------------------------------------------

FIELDS = ["x", "y", "mark", "preset", "width", "height", "mines", "seed", "first_click",
          "no_guess", "question_marks", "player", "daily", "type", "token", "id"]
numbers = st.one_of(
    st.integers(-10, 40), st.integers(), st.sampled_from([2**31, 2**53 + 1, 2**63, 2**64, -2**63,
                                                           10**30, 1_000_000, 1_000_001]),
    st.floats(allow_nan=False, allow_infinity=False), st.sampled_from([1.0, -0.0, 1e308, 5e-324]),
)
words = st.sampled_from(["beginner", "intermediate", "expert", "flag", "question", "none",
                         "zero", "safe", "reveal", "chord", "auth", "", "null", "ada"])
scalars = st.one_of(st.none(), st.booleans(), numbers, words, st.text(max_size=30))
json_values = st.recursive(
    scalars, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                     st.dictionaries(st.text(max_size=8), inner, max_size=4)),
    max_leaves=12,
)
shaped = st.dictionaries(st.sampled_from(FIELDS), json_values, max_size=6)


def encode(value: Any) -> bytes:
    return json.dumps(value).encode()


bodies = st.one_of(
    shaped.map(encode),
    json_values.map(encode),
    st.binary(max_size=200),
    st.text(max_size=100).map(str.encode),
    st.none(),
)
header_text = st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=60)
header_bytes = st.one_of(
    header_text.map(str.encode),
    # obs-text: bytes above 0x7f are allowed in a field value, and are not UTF-8 here.
    st.binary(max_size=20).map(lambda b: bytes(c if c >= 0x80 else 0x41 for c in b)),
    st.sampled_from([b'"1"', b'W/"0"', b"*", b'"-1"', b'"99999999999999999999"', b"1, 2"]),
)
media_types = st.sampled_from([
    b"application/json", b"text/plain", b"application/x-www-form-urlencoded",
    b"multipart/form-data; boundary=x", b"application/problem+json", b"*/*", b"text/html",
    b"application/json; charset=latin-1", b"text/plain, application/json", b"",
])
ACTIONS = ["reveal", "flag", "chord", "reset", "pause", "resume", "hint"]


@st.composite
def requests(draw: st.DrawFn) -> dict[str, Any]:
    kind = draw(st.sampled_from(["create", "move", "read", "replay", "leaderboard"]))
    ident = draw(st.sampled_from(["real", "random", "fuzz"]))
    headers: list[tuple[bytes, bytes]] = []
    for name in (b"If-Match", b"Idempotency-Key", b"Authorization"):
        if draw(st.booleans()):
            value = draw(st.one_of(header_bytes, st.just(b"Bearer TOKEN")))
            headers.append((name, value))
    for name in (b"Content-Type", b"Accept"):
        if draw(st.booleans()):
            headers.append((name, draw(st.one_of(media_types, header_bytes))))
    return {
        "kind": kind,
        "ident": ident,
        "fuzz_id": draw(st.text(max_size=40)),
        "action": draw(st.sampled_from(ACTIONS)),
        "body": draw(bodies),
        "headers": headers,
        "query": draw(st.dictionaries(st.sampled_from(["limit", "no_guess", "date", "x"]),
                                      st.text(max_size=12), max_size=3)),
        "preset": draw(st.one_of(words, st.text(max_size=12))),
    }


# ---- HTTP ----------------------------------------------------------------------------------


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
@given(req=requests())
def test_http_fuzz(http: SyncHttp, req: dict[str, Any]) -> None:
    game_id, token = new_game(http)
    headers = [(k, v.replace(b"TOKEN", token.encode())) for k, v in req["headers"]]
    if req["ident"] == "random":
        game_id = "0123456789abcdef" * 2
    elif req["ident"] == "fuzz":
        game_id = quote(req["fuzz_id"], safe="") or "x"
    query = "&".join(f"{k}={quote(v, safe='')}" for k, v in req["query"].items())
    body = req["body"]
    if req["kind"] == "create":
        reply = http.request("POST", "/games", body, headers)
    elif req["kind"] == "move":
        if not any(k == b"Authorization" for k, _ in headers):
            headers.append((b"Authorization", f"Bearer {token}".encode()))
        reply = http.request("POST", f"/games/{game_id}/{req['action']}", body, headers)
    elif req["kind"] == "read":
        reply = http.request("GET", f"/games/{game_id}", None, headers)
    elif req["kind"] == "replay":
        reply = http.request("GET", f"/games/{game_id}/replay", None, headers)
    else:
        preset = quote(req["preset"], safe="") or "beginner"
        reply = http.request("GET", f"/leaderboards/{preset}?{query}", None, headers)
    accept = dict(headers).get(b"Accept", b"")
    assert_answer(reply, wants_text=b"text/plain" in accept)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
@given(body=st.one_of(shaped, st.fixed_dictionaries({}, optional={
    "width": st.one_of(st.integers(2, 40), numbers),
    "height": st.one_of(st.integers(2, 40), numbers),
    "mines": st.one_of(st.integers(1, 60), numbers), "seed": numbers,
    "preset": words, "first_click": words, "no_guess": st.booleans(),
    "question_marks": st.booleans(), "player": st.text(max_size=30), "daily": words,
})))
def test_new_game_fuzz(http: SyncHttp, body: dict[str, Any]) -> None:
    """Every combination of the creation options, valid or not: 201 or a 4xx problem."""
    reply = http.request("POST", "/games", encode(body))
    assert_answer(reply)
    if reply.status == 201:
        game = reply.json()["game"]
        assert len(game["board"]) == game["height"]
        assert all(set(row) == {"#"} for row in game["board"]) or body.get("daily")


coordinates = st.one_of(st.integers(0, 8), st.integers(0, 8), numbers)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
@given(moves=st.lists(st.tuples(
    st.sampled_from(["reveal", "flag", "chord"]),
    st.one_of(
        shaped,
        st.fixed_dictionaries({"x": st.integers(0, 7), "y": st.integers(0, 5)},
                              optional={"mark": st.sampled_from(["flag", "question", "none"])}),
        st.fixed_dictionaries({"x": coordinates, "y": coordinates},
                              optional={"mark": st.one_of(words, json_values)}),
    )), min_size=1, max_size=8))
def test_move_sequences_fuzz(http: SyncHttp, moves: list[tuple[str, dict[str, Any]]]) -> None:
    """Sequences of moves with wild coordinates on a real game: every answer is a diff
    or a problem, and the game's version moves by one per answer that changed it."""
    game_id, token = new_game(http, b'{"width": 8, "height": 6, "mines": 9, '
                                    b'"question_marks": true}')
    auth = [(b"Authorization", f"Bearer {token}".encode())]
    changed = 0
    for action, body in moves:
        reply = http.request("POST", f"/games/{game_id}/{action}", encode(body), auth)
        assert_answer(reply)
        if reply.status == 200 and reply.json()["cells"]:
            changed += 1
    assert http.request("GET", f"/games/{game_id}").json()["version"] == changed


# ---- WebSocket -----------------------------------------------------------------------------


def receive_all(ws: ClientConnection, until_id: Any = None) -> list[dict[str, Any]]:
    """Messages until the one answering ``until_id`` (or a quiet moment)."""
    out: list[dict[str, Any]] = []
    while True:
        try:
            raw = ws.recv(timeout=10 if until_id is not None else 0.05)
        except TimeoutError:
            assert until_id is None, f"no answer to {until_id!r}"
            return out
        message = json.loads(raw)
        assert message["type"] in SERVER_MESSAGES, message
        if message["type"] == "error":
            problem = message["problem"]
            assert problem["code"] in CODES and problem["status"] < 500, problem
            event(f"socket error {problem['code']}")
        out.append(message)
        if until_id is not None and message.get("id") == until_id and message["type"] in (
                "result", "error"):
            return out


ws_messages = st.one_of(
    shaped.map(encode), json_values.map(encode), st.binary(max_size=120),
    st.text(max_size=120).map(str.encode),
    st.fixed_dictionaries({"type": st.sampled_from(["reveal", "flag", "chord", "auth"])},
                          optional={"x": numbers, "y": numbers, "id": json_values,
                                    "mark": json_values, "token": json_values}).map(encode),
)


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(since=st.one_of(st.none(), st.text(max_size=12), st.integers(-5, 50).map(str)),
       auth=st.booleans(),
       messages=st.lists(st.tuples(ws_messages, st.booleans()), min_size=1, max_size=4))
def test_websocket_fuzz(http: SyncHttp, fuzzed: ServiceProcess, since: str | None, auth: bool,
                        messages: list[tuple[bytes, bool]]) -> None:
    game_id, token = new_game(http)
    url = ws_url(fuzzed.url, game_id)
    if since is not None:
        url += "?since=" + quote(since, safe="")
    with connect(url, open_timeout=10, max_size=2**22) as ws:
        try:
            receive_all(ws)
            if auth:
                ws.send(json.dumps({"type": "auth", "token": token}))
            for data, as_text in messages:
                if as_text:
                    ws.send(data.decode("utf-8", "replace"))
                else:
                    ws.send(data)
                receive_all(ws)
            # Still usable: a move with an id gets its own answer.
            ws.send(json.dumps({"type": "flag", "x": 0, "y": 0, "id": "probe"}))
            assert receive_all(ws, "probe")[-1]["id"] == "probe"
        except ConnectionClosed as closed:
            event(f"closed {closed.rcvd.code if closed.rcvd else None}")
            assert closed.rcvd is not None and closed.rcvd.code in CLEAN_CLOSES, closed
    assert http.request("GET", "/healthz").status == 200

