"""Matches' tests: two service processes on the session's Redis (rate limits off, so a
test may register many players from one address, and seeks that expire quickly), and
helpers that play a match's seats over HTTP and read its sockets."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
import redis
from websockets.sync.client import ClientConnection, connect

from service import engine, wire
from service.store import keys
from tests.support.play import Api, Player, apply_cells, positions
from tests.support.servers import ServiceProcess, running_service

TIMEOUT = httpx.Timeout(30.0)
SEEK_EXPIRY = 3.0
LIMITS_OFF = {
    "RATE_LIMIT": "0", "MOVE_RATE_LIMIT": "0", "REGISTER_RATE_LIMIT": "0",
    "AUTH_FAILURE_LIMIT": "0", "SEEK_EXPIRY": str(SEEK_EXPIRY), "HEARTBEAT_SECONDS": "1",
}


@pytest.fixture(scope="package")
def replicas(redis_url: str) -> Iterator[tuple[ServiceProcess, ServiceProcess]]:
    with running_service(redis_url, **LIMITS_OFF) as one, \
            running_service(redis_url, **LIMITS_OFF) as two:
        yield one, two


@pytest.fixture
def clients(replicas: tuple[ServiceProcess, ServiceProcess]) -> Iterator[tuple[Api, Api]]:
    one, two = replicas
    with httpx.Client(base_url=one.url, timeout=TIMEOUT) as a, \
            httpx.Client(base_url=two.url, timeout=TIMEOUT) as b:
        yield Api(a), Api(b)


@pytest.fixture(scope="package")
def store(redis_url: str) -> Iterator[redis.Redis]:
    """The session's Redis, for reading what a test may not learn through the API (a
    board's mines, to play it) and for counting what the service wrote."""
    r = redis.Redis.from_url(redis_url)
    try:
        yield r
    finally:
        r.close()


def call(api: Api, method: str, path: str, player: Player | None = None, *,
         expect: int = 200, **body: Any) -> dict[str, Any]:
    r = api.client.request(
        method, path, json=body if body else None, headers=player.auth if player else {}
    )
    assert r.status_code == expect, r.text
    data: dict[str, Any] = r.json()
    return data


def new_match(api: Api, creator: Player, **body: Any) -> dict[str, Any]:
    settings = {"mode": "race", "preset": "beginner", **body}
    view: dict[str, Any] = call(api, "POST", "/matches", creator, expect=201, **settings)["match"]
    return view


def mines_of(store: redis.Redis, game_id: str) -> set[tuple[int, int]]:
    """Where a game's mines are, read from its stored snapshot."""
    game = engine.decode(store.hget(keys.game(game_id), "snap"))  # type: ignore[arg-type]
    return {
        (i % game.width, i // game.width)
        for i in range(game.width * game.height) if game.is_mine(i)
    }


def wait_until_started(api: Api, match: dict[str, Any], instant: str = "starts_at") -> None:
    """Sleep until the server's clock (a match view's ``server_time``) passes ``starts_at``
    (or the match's ``instant``, ``ends_at`` say)."""
    starts = wire.milliseconds(match[instant])
    while True:
        now = wire.milliseconds(call(api, "GET", f"/matches/{match['id']}")["server_time"])
        if now >= starts:
            return
        time.sleep(max(0.01, (starts - now) / 1000))


def started_race(a: Api, b: Api, *, bots: bool = False, **body: Any) -> tuple[
        dict[str, Any], Player, Player, dict[str, str]]:
    """A two-seat race between two new players, Alice (on ``a``) and Bob (on ``b``), once
    its countdown is over: the match, the two, and each one's game id (only theirs).
    ``bots`` for a race whose wins come as fast as HTTP goes and still count."""
    alice, bob = a.register(bot=bots), b.register(bot=bots)
    match = new_match(a, alice, seats=2, **body)
    call(b, "POST", f"/matches/{match['id']}/join", bob)
    games = {}
    for api, p in ((a, alice), (b, bob)):
        view = call(api, "GET", f"/matches/{match['id']}", p)
        games[p.id] = next(s["game_id"] for s in view["seats"] if s["player"]["id"] == p.id)
    wait_until_started(a, view)
    return match, alice, bob, games


def hidden_safe_cell(board: list[str], mines: set[tuple[int, int]]) -> tuple[int, int]:
    """The first hidden cell without a mine, in reading order."""
    return next((x, y) for y, row in enumerate(board) for x, c in enumerate(row)
                if c == "#" and (x, y) not in mines)


@dataclass
class Seat:
    api: Api
    player: Player
    game_id: str

    def move(self, action: str, x: int, y: int, expect: int = 200) -> dict[str, Any]:
        r = self.api.client.post(
            f"/games/{self.game_id}/{action}", json={"x": x, "y": y}, headers=self.player.auth
        )
        assert r.status_code == expect, r.text
        data: dict[str, Any] = r.json()
        return data


def play_to_win(seat: Seat, mines: set[tuple[int, int]], *, blunders: int = 0) -> dict[str, Any]:
    """Reveal ``blunders`` mines (penalties) first, then every safe hidden cell; the last diff."""
    board = seat.api.view(seat.game_id)["board"]
    diff: dict[str, Any] = {}
    for x, y in sorted(mines)[:blunders]:
        diff = seat.move("reveal", x, y)
        assert diff["status"] == "playing" and [x, y, "X"] in diff["cells"], diff
        board = apply_cells(board, diff["cells"])
    while not diff or diff["status"] == "playing":
        left = positions(board, "#") - mines
        if not left:
            break
        x, y = min(left, key=lambda p: (p[1], p[0]))
        diff = seat.move("reveal", x, y)
        board = apply_cells(board, diff["cells"])
    return diff


def match_socket(api: Api, match_id: str, since: int | None = None) -> ClientConnection:
    base = urlsplit(str(api.client.base_url)).netloc
    query = f"?since={since}" if since is not None else ""
    return connect(f"ws://{base}/matches/{match_id}/events{query}", open_timeout=30)


def receive(ws: ClientConnection, within: float | None = None) -> dict[str, Any]:
    """The next message other than a heartbeat (each within 30 s, or all ``within``)."""
    deadline = None if within is None else time.monotonic() + within
    while True:
        wait = 30 if deadline is None else max(0.0, deadline - time.monotonic())
        message: dict[str, Any] = json.loads(ws.recv(timeout=wait))
        if message["type"] != "heartbeat":
            return message


def wait_for_match(api: Api, match_id: str, status: str, viewer: Player | None = None,
                   timeout: float = 60) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        view = call(api, "GET", f"/matches/{match_id}", viewer)
        if view["status"] == status or time.monotonic() > deadline:
            assert view["status"] == status, view
            return view
        time.sleep(0.05)
