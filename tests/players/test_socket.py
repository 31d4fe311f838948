"""The player's socket, ``/players/me/events``: it authenticates with the first message,
sends the player, then the player again whenever they changed on any replica, heartbeats
while quiet, and closes cleanly."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect

from tests.support.play import Api, Player, unique_name
from tests.support.servers import ServiceProcess, running_service

HEARTBEAT = 0.5


@pytest.fixture(scope="module")
def pair(redis_url: str) -> Iterator[tuple[ServiceProcess, ServiceProcess]]:
    """Two replicas that heartbeat often."""
    with running_service(redis_url, HEARTBEAT_SECONDS=str(HEARTBEAT)) as one, \
            running_service(redis_url, HEARTBEAT_SECONDS=str(HEARTBEAT)) as two:
        yield one, two


def socket(svc: ServiceProcess) -> ClientConnection:
    return connect(f"ws://{urlsplit(svc.url).netloc}/players/me/events", open_timeout=30)


def receive(ws: ClientConnection, skip_heartbeats: bool = True) -> dict[str, Any]:
    while True:
        message: dict[str, Any] = json.loads(ws.recv(timeout=30))
        if not (skip_heartbeats and message["type"] == "heartbeat"):
            return message


def closed_with(ws: ClientConnection) -> int | None:
    with pytest.raises(ConnectionClosed) as closed:
        while True:
            ws.recv(timeout=30)
    return closed.value.rcvd.code if closed.value.rcvd else None


def registered(svc: ServiceProcess) -> Player:
    with httpx.Client(base_url=svc.url, timeout=30) as c:
        return Api(c).register()


def test_the_player_then_every_change_from_any_replica(
    pair: tuple[ServiceProcess, ServiceProcess],
) -> None:
    one, two = pair
    player = registered(one)
    with socket(two) as ws, httpx.Client(base_url=one.url, timeout=30) as c:
        ws.send(json.dumps({"type": "auth", "token": player.token}))
        first = receive(ws)
        assert first["type"] == "player" and first["player"] == Api(c).player(player)
        # A rename on the other replica.
        name = unique_name("live")
        assert c.patch("/players/me", json={"name": name}, headers=player.auth).is_success
        renamed = receive(ws)
        assert renamed["type"] == "player" and renamed["player"]["name"] == name
        # A game of theirs that ends on the other replica.
        game = Api(c).create(owner=player, preset="beginner", seed=3, first_click="none")
        for y in range(9):
            for x in range(9):
                if Api(c).reveal(game, x, y)["status"] != "playing":
                    break
            else:
                continue
            break
        ended = receive(ws)
        assert ended["player"]["recent"][0]["id"] == game.id
        assert ended["player"]["stats"]["beginner"]["classic"]["played"] == 1
        # Quiet: heartbeats, with the server's time.
        beat = json.loads(ws.recv(timeout=30))
        assert set(beat) == {"type", "server_time"} and beat["type"] == "heartbeat"
        # Nothing else is taken here; the socket stays open.
        ws.send(json.dumps({"type": "reveal", "x": 0, "y": 0}))
        refused = receive(ws)
        assert refused["type"] == "error" and refused["problem"]["code"] == "invalid_request"
        assert json.loads(ws.recv(timeout=30))["type"] == "heartbeat"
    # The client closed; the service took it as an ordinary end.
    time.sleep(0.2)
    assert "Traceback" not in two.output() and '"level": "error"' not in two.output()


@pytest.mark.parametrize(
    "first",
    [
        {"type": "auth", "token": "nope"},
        {"type": "auth", "token": f"{'0' * 32}.{'A' * 43}"},
        {"type": "reveal", "x": 0, "y": 0},
        "{not json",
    ],
    ids=["wrong token", "nobody's token", "not auth", "not json"],
)
def test_no_player_no_socket(pair: tuple[ServiceProcess, ServiceProcess], first: Any) -> None:
    one, _ = pair
    with socket(one) as ws:
        ws.send(first if isinstance(first, str) else json.dumps(first))
        error = json.loads(ws.recv(timeout=30))
        assert error["type"] == "error" and error["id"] is None
        assert error["problem"]["status"] in (400, 401, 422)
        assert closed_with(ws) == 1008


def test_a_game_token_is_not_a_players(pair: tuple[ServiceProcess, ServiceProcess]) -> None:
    one, _ = pair
    with httpx.Client(base_url=one.url, timeout=30) as c:
        game = Api(c).create(preset="beginner")
    with socket(one) as ws:
        ws.send(json.dumps({"type": "auth", "token": game.token}))
        error = json.loads(ws.recv(timeout=30))
        assert error["problem"]["code"] == "unauthorized"
        assert closed_with(ws) == 1008


def test_the_refusal_of_a_token_carries_the_auths_id_back(
    pair: tuple[ServiceProcess, ServiceProcess],
) -> None:
    one, _ = pair
    with socket(one) as ws:
        ws.send(json.dumps({"type": "auth", "token": "nope", "id": "login-1"}))
        error = json.loads(ws.recv(timeout=30))
        assert error["type"] == "error" and error["id"] == "login-1"
        assert error["problem"]["code"] == "unauthorized"
        assert closed_with(ws) == 1008
