"""What the WebSocket really says matches asyncapi.yaml.

Real sockets on a running service: every message received must be one of the
messages the document says the service sends, and validate against that message's
payload schema; the client messages of the document's examples are accepted.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import pytest
from jsonschema import Draft202012Validator, FormatChecker
from referencing import Registry
from referencing.jsonschema import DRAFT202012
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect

from tests.contract import documents as docs

DOC_URI = "urn:contract:asyncapi"


@pytest.fixture(scope="module")
def asyncapi() -> dict[str, Any]:
    return docs.load(docs.ASYNCAPI)


def _payload_schemas(
    doc: dict[str, Any], action: str, channel: str = "game"
) -> dict[str, Draft202012Validator]:
    """Message ``type`` -> validator of its payload, for the operation doing ``action``
    on ``channel``."""
    registry: Registry[Any] = Registry().with_resource(DOC_URI, DRAFT202012.create_resource(doc))
    out = {}
    for op in doc["operations"].values():
        if op["action"] != action or op["channel"]["$ref"] != f"#/channels/{channel}":
            continue
        for ref in op["messages"]:
            channel_message = docs_pointer(doc, ref["$ref"])
            message = docs_pointer(doc, channel_message["$ref"])
            schema_ref = message["payload"]["schema"]["$ref"]
            kind = docs_pointer(doc, schema_ref)["properties"]["type"]["const"]
            out[kind] = Draft202012Validator(
                {"$ref": DOC_URI + schema_ref}, registry=registry, format_checker=FormatChecker()
            )
    return out


def docs_pointer(doc: dict[str, Any], ref: str) -> Any:
    node: Any = doc
    for part in ref.removeprefix("#/").split("/"):
        node = node[part]
    return node


class Socket:
    """A client socket whose every received message is checked against the document."""

    def __init__(self, ws: ClientConnection, sent: dict[str, Draft202012Validator]) -> None:
        self.ws = ws
        self.sent = sent
        self.received: list[dict[str, Any]] = []

    def send(self, message: Any) -> None:
        self.ws.send(message if isinstance(message, str) else json.dumps(message))

    def receive(self) -> dict[str, Any]:
        message: dict[str, Any] = json.loads(self.ws.recv(timeout=10))
        kind = message.get("type")
        assert kind in self.sent, f"not a documented message: {message}"
        errors = [e.message for e in self.sent[kind].iter_errors(message)]
        assert not errors, f"{kind} does not match asyncapi.yaml: {errors}"
        self.received.append(message)
        return message

    def receive_until(self, kind: str) -> dict[str, Any]:
        for _ in range(20):
            message = self.receive()
            if message["type"] == kind:
                return message
        raise AssertionError(f"no {kind} message")


@pytest.fixture(scope="module")
def http(contract_server: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=contract_server, timeout=10) as client:
        yield client


@pytest.fixture(scope="module")
def open_socket(contract_server: str, asyncapi: dict[str, Any]) -> Any:
    base = contract_server.replace("http://", "ws://", 1)

    @contextmanager
    def opener(path: str, channel: str = "game") -> Iterator[Socket]:
        with connect(base + path, open_timeout=10) as ws:
            yield Socket(ws, _payload_schemas(asyncapi, "send", channel))

    return opener


def new_game(http: httpx.Client) -> tuple[str, str]:
    options = {"preset": "beginner", "seed": 7, "question_marks": True}
    body = http.post("/games", json=options).json()
    return body["game"]["id"], body["token"]


def test_a_game_played_on_the_socket(open_socket: Any, http: httpx.Client) -> None:
    game_id, token = new_game(http)
    with open_socket(f"/games/{game_id}/events") as socket:
        snapshot = socket.receive()
        assert snapshot["type"] == "snapshot" and snapshot["game"]["id"] == game_id

        socket.send({"type": "reveal", "x": 0, "y": 0, "id": "before-auth"})
        refused = socket.receive_until("error")
        assert refused["id"] == "before-auth" and refused["problem"]["status"] == 401

        socket.send({"type": "auth", "token": token})
        socket.send({"type": "reveal", "x": 0, "y": 0, "id": 1})
        result = socket.receive_until("result")
        assert result["id"] == 1 and result["diff"]["version"] == 1
        diff = socket.receive_until("diff")
        assert diff == result["diff"]

        socket.send({"type": "flag", "x": 8, "y": 8, "mark": "flag", "id": "f"})
        assert socket.receive_until("result")["diff"]["cells"] == [[8, 8, "F"]]
        socket.send({"type": "chord", "x": 0, "y": 0, "id": 3})
        assert socket.receive_until("result")["diff"]["cells"] == []

        socket.send({"type": "dance"})
        unreadable = socket.receive_until("error")
        assert unreadable["id"] is None and unreadable["problem"]["status"] == 422
        socket.send("not json")
        assert socket.receive_until("error")["problem"]["status"] == 400
        socket.send({"type": "reveal", "x": 99, "y": 0, "id": 4})
        off_board = socket.receive_until("error")
        assert off_board["id"] == 4 and off_board["problem"]["code"] == "invalid_request"

        reset = http.post(f"/games/{game_id}/reset", headers={"Authorization": f"Bearer {token}"})
        assert reset.status_code == 201
        told = socket.receive_until("reset")
        assert told["next_id"] == reset.json()["game"]["id"]


def test_resuming_with_since_replays_diffs(open_socket: Any, http: httpx.Client) -> None:
    game_id, token = new_game(http)
    auth = {"Authorization": f"Bearer {token}"}
    for x in (0, 8):
        assert http.post(f"/games/{game_id}/flag", json={"x": x, "y": 8}, headers=auth).is_success
    with open_socket(f"/games/{game_id}/events?since=0") as socket:
        first, second = socket.receive(), socket.receive()
    assert [first["type"], second["type"]] == ["diff", "diff"]
    assert [first["version"], second["version"]] == [1, 2]


def test_a_hint_is_told_to_subscribers_and_to_a_resumed_socket(
    open_socket: Any, http: httpx.Client
) -> None:
    game_id, token = new_game(http)
    auth = {"Authorization": f"Bearer {token}"}
    assert http.post(f"/games/{game_id}/reveal", json={"x": 4, "y": 4}, headers=auth).is_success
    with open_socket(f"/games/{game_id}/events") as socket:
        assert socket.receive()["type"] == "snapshot"
        for n in (1, 2):
            assert http.post(f"/games/{game_id}/hint", headers=auth).is_success
            assert socket.receive_until("hinted") == {"type": "hinted", "hints": n}
    with open_socket(f"/games/{game_id}/events?since=1") as socket:
        assert [socket.receive(), socket.receive()] == [
            {"type": "hinted", "hints": 1}, {"type": "hinted", "hints": 2}
        ]
    assert http.get(f"/games/{game_id}").json()["stats"]["hints"] == 2


def test_client_message_examples_are_accepted(
    open_socket: Any, http: httpx.Client, asyncapi: dict[str, Any]
) -> None:
    """Each documented client message example is read, not refused as malformed."""
    game_id, token = new_game(http)
    examples = [
        example["payload"]
        for message in asyncapi["components"]["messages"].values()
        for example in message.get("examples", [])
        if example["payload"]["type"] in _payload_schemas(asyncapi, "receive")
    ]
    assert examples
    with open_socket(f"/games/{game_id}/events") as socket:
        socket.receive()
        for payload in examples:
            if payload["type"] == "auth":
                payload = {**payload, "token": token}
            socket.send(payload)
            if payload["type"] == "auth":
                continue
            answer = socket.receive()
            while answer["type"] == "diff":  # the broadcast of an earlier move
                answer = socket.receive()
            assert answer["type"] == "result", answer
            assert answer["id"] == payload["id"]


def test_unknown_game(open_socket: Any) -> None:
    with open_socket("/games/" + "0" * 32 + "/events") as socket:
        error = socket.receive()
        assert error["type"] == "error" and error["problem"]["code"] == "not_found"
        with pytest.raises(ConnectionClosed) as closed:
            socket.ws.recv(timeout=10)
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 4404


def test_a_players_socket(open_socket: Any, http: httpx.Client) -> None:
    registered = http.post("/players", json={}).json()
    token = registered["token"]
    with open_socket("/players/me/events", "player") as socket:
        socket.send({"type": "auth", "token": token})
        first = socket.receive()
        assert first["type"] == "player" and first["player"] == registered["player"]
        renamed = http.patch("/players/me", json={"name": f"c-{registered['player']['id'][:8]}"},
                             headers={"Authorization": f"Bearer {token}"})
        assert renamed.status_code == 200
        assert socket.receive_until("player")["player"] == renamed.json()
        socket.send({"type": "reveal", "x": 0, "y": 0})
        assert socket.receive_until("error")["problem"]["code"] == "invalid_request"
    with open_socket("/players/me/events", "player") as socket:
        socket.send({"type": "auth", "token": "wrong"})
        assert socket.receive()["problem"]["code"] == "unauthorized"
        with pytest.raises(ConnectionClosed) as closed:
            socket.ws.recv(timeout=10)
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1008
