"""Every error a client can cause is an RFC 9457 problem with a stable code, and
nothing a client sends gets a 500."""

from __future__ import annotations

import json
import random
from typing import Any

import httpx
import pytest

from tests.api.test_games import assert_problem
from tests.support.play import Api, Game

UNKNOWN_ID = "0" * 32


@pytest.fixture
def game(api: Api) -> Game:
    return api.create(preset="beginner")


def raw_post(client: httpx.Client, path: str, content: bytes, **headers: str) -> httpx.Response:
    return client.post(path, content=content,
                       headers={"Content-Type": "application/json", **headers})


@pytest.mark.parametrize("body", [
    b"{", b"not json", b'{"preset": "beginner",}', b"\xff\xfe", b'{"x": 1} trailing',
    b"[1, 2", b'{"preset": "beg\x00', b"nul\x00l",
])
def test_malformed_json_is_400(client: httpx.Client, game: Game, body: bytes) -> None:
    assert_problem(raw_post(client, "/games", body), 400, "invalid_request")
    assert_problem(raw_post(client, f"/games/{game.id}/reveal", body, **game.auth),
                   400, "invalid_request")


@pytest.mark.parametrize("body", [
    {"preset": 3},
    {"preset": "huge"},
    {"width": "10", "height": 10, "mines": 5},
    {"width": 10.5, "height": 10, "mines": 5},
    {"width": 10, "height": 10, "mines": True},
    {"question_marks": "yes"},
    {"first_click": "everywhere"},
    {"seed": -1},
    {"seed": 2**64},
    # ``player`` is no longer taken: a name is a registered player's (POST /players).
    {"player": "ada"},
    {"preset": "beginner", "player": "x" * 25},
    {"colour": "red"},
    {"preset": "beginner", "width": 9, "height": 9, "mines": 10},
    {"width": 10, "height": 10},
    {"width": 10},
    {"mines": 5},
    [],
    "beginner",
    None,
    3,
])
def test_bad_new_game_is_422(client: httpx.Client, body: Any) -> None:
    r = raw_post(client, "/games", json.dumps(body).encode())
    assert_problem(r, 422, "invalid_request")


@pytest.mark.parametrize(("width", "height", "mines"), [
    (1, 10, 1), (10, 1, 1), (0, 0, 1), (3, 3, 1), (10, 10, 0), (10, 10, 92), (10, 10, -1),
    (1001, 1000, 10), (1_000_000, 1_000_000, 10), (2, 2, 1),
])
def test_impossible_boards_are_422(
    client: httpx.Client, width: int, height: int, mines: int
) -> None:
    r = client.post("/games", json={"width": width, "height": height, "mines": mines})
    assert_problem(r, 422, "invalid_request")


@pytest.mark.parametrize(("action", "body"), [
    ("reveal", {"x": 9, "y": 0}),
    ("reveal", {"x": 0, "y": 9}),
    ("reveal", {"x": -1, "y": 0}),
    ("flag", {"x": 100, "y": 100}),
    ("chord", {"x": 0, "y": 1_000_001}),
    ("reveal", {"x": 2**70, "y": 0}),
    ("reveal", {"x": "1", "y": 0}),
    ("reveal", {"x": 1.5, "y": 0}),
    ("reveal", {"x": None, "y": 0}),
    ("reveal", {"x": 1}),
    ("reveal", {}),
    ("reveal", {"x": 1, "y": 1, "mark": "flag"}),
    ("chord", {"x": 1, "y": 1, "z": 1}),
    ("flag", {"x": 1, "y": 1, "mark": "maybe"}),
    ("flag", {"x": 1, "y": 1, "mark": None, "extra": 0}),
    ("reveal", [1, 1]),
    ("reveal", None),
])
def test_bad_moves_are_422_and_change_nothing(
    api: Api, client: httpx.Client, game: Game, action: str, body: Any
) -> None:
    r = raw_post(client, f"/games/{game.id}/{action}", json.dumps(body).encode(), **game.auth)
    assert_problem(r, 422, "invalid_request")
    assert api.view(game)["version"] == 0


def test_empty_move_body_is_a_client_error(client: httpx.Client, game: Game) -> None:
    r = raw_post(client, f"/games/{game.id}/reveal", b"", **game.auth)
    assert r.status_code in (400, 422)
    assert_problem(r, r.status_code, "invalid_request")


def test_unknown_and_malformed_game_ids_are_404(client: httpx.Client, game: Game) -> None:
    for game_id in [UNKNOWN_ID, "xyz", game.id.upper(), game.id + "0", "%20", "-" * 32]:
        assert_problem(client.get(f"/games/{game_id}"), 404, "not_found")
        r = client.post(f"/games/{game_id}/reveal", json={"x": 0, "y": 0}, headers=game.auth)
        assert_problem(r, 404, "not_found")
        assert_problem(client.post(f"/games/{game_id}/reset", headers=game.auth), 404, "not_found")
    assert_problem(client.get("/no/such/route"), 404, "not_found")
    assert_problem(client.get(f"/games/{UNKNOWN_ID}", headers={"Accept": "text/plain"}),
                   404, "not_found")


def test_finished_game_is_409(api: Api, client: httpx.Client) -> None:
    # A 2x5 board with one mine and a zero first click: the first reveal can open all nine
    # safe cells or leave some; either way, playing on until the end is short.
    game = api.create(width=5, height=5, mines=16, seed=7)
    diff = api.reveal(game, 2, 2)
    assert diff["status"] == "won"
    for action in ("reveal", "flag", "chord"):
        r = client.post(f"/games/{game.id}/{action}", json={"x": 0, "y": 0}, headers=game.auth)
        assert_problem(r, 409, "game_over")
    # Validation still comes first: a bad body on a finished game is 422, not 409.
    r = client.post(f"/games/{game.id}/reveal", json={"x": 0}, headers=game.auth)
    assert_problem(r, 422, "invalid_request")


def test_stale_if_match_is_412(api: Api, client: httpx.Client, game: Game) -> None:
    api.flag(game, 0, 0)
    r = client.post(f"/games/{game.id}/reveal", json={"x": 4, "y": 4},
                    headers={**game.auth, "If-Match": '"0"'})
    assert_problem(r, 412, "version_conflict")
    assert api.view(game)["version"] == 1


def test_bodies_over_the_limit_are_413(api: Api, client: httpx.Client, game: Game) -> None:
    big = b'{"preset": "beginner", "player": "' + b"a" * 70_000 + b'"}'
    assert_problem(raw_post(client, "/games", big), 413, "too_large")
    assert_problem(raw_post(client, f"/games/{game.id}/flag", big, **game.auth), 413, "too_large")

    def chunks() -> Any:  # no Content-Length: the limit holds while streaming too
        for _ in range(100):
            yield b" " * 1024

    r = client.post(f"/games/{game.id}/flag", content=chunks(),
                    headers={**game.auth, "Content-Type": "application/json"})
    assert_problem(r, 413, "too_large")
    assert api.view(game)["version"] == 0


def test_wrong_methods_are_problems_too(client: httpx.Client, game: Game) -> None:
    for method, path in [("DELETE", f"/games/{game.id}"), ("GET", f"/games/{game.id}/reveal"),
                         ("PUT", "/games")]:
        r = client.request(method, path)
        assert r.status_code in (404, 405), (method, path, r.status_code)
        assert r.headers["content-type"].startswith("application/problem+json")
        assert r.json()["status"] == r.status_code and r.json()["code"]


def _random_json(rng: random.Random, depth: int = 0) -> Any:
    kind = rng.randrange(9 if depth < 2 else 6)
    if kind == 0:
        return rng.choice([0, 1, -1, 8, 9, 2**31, 2**63, -(2**63) - 1, 10**30])
    if kind == 1:
        return rng.choice([0.5, -0.0, 1e308, 3.0])
    if kind == 2:
        return rng.choice(["", "x", "beginner", "expert", "flag", "question", "none",
                           "zero", "safe", "\u0000", "é" * 30, "🙂"])
    if kind == 3:
        return rng.choice([True, False])
    if kind in (4, 5):
        return None
    if kind == 6:
        return [_random_json(rng, depth + 1) for _ in range(rng.randrange(4))]
    keys = ["x", "y", "mark", "preset", "width", "height", "mines", "seed", "first_click",
            "no_guess", "question_marks", "player", "type", "zz"]
    return {k: _random_json(rng, depth + 1) for k in rng.sample(keys, rng.randrange(1, 6))}


def test_nothing_a_client_sends_is_a_500(api: Api, client: httpx.Client) -> None:
    rng = random.Random(1234)
    game = api.create(width=30, height=30, mines=100, question_marks=True)
    api.reveal(game, 15, 15)
    paths = ["/games", f"/games/{game.id}/reveal", f"/games/{game.id}/flag",
             f"/games/{game.id}/chord", f"/games/{game.id}/reset", f"/games/{UNKNOWN_ID}/flag"]
    header_choices: list[dict[str, str]] = [
        {}, game.auth, {**game.auth, "If-Match": "*"}, {**game.auth, "If-Match": '"99999999"'},
        {**game.auth, "Idempotency-Key": "fuzz"}, {"Authorization": "Bearer x"},
        {**game.auth, "Content-Type": "text/plain"}, {**game.auth, "Content-Length": "5"},
        {**game.auth, "If-Match": '"1", "2"'}, {**game.auth, "Accept": "text/plain"},
    ]
    seen = set()
    for i in range(400):
        body = _random_json(rng)
        if i % 10 == 0:
            body = {"x": rng.randrange(-2, 40), "y": rng.randrange(-2, 40)}
        content = json.dumps(body).encode()
        if i % 17 == 0:
            content = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 64)))
        headers = rng.choice(header_choices)
        if "Content-Length" in headers:
            headers = {k: v for k, v in headers.items() if k != "Content-Length"}
        try:
            r = client.post(rng.choice(paths), content=content, headers=headers)
        except httpx.RemoteProtocolError:  # a lying Content-Length can end the connection
            continue
        seen.add(r.status_code)
        assert r.status_code < 500, (body, headers, r.status_code, r.text)
        if r.status_code >= 400:
            assert r.headers["content-type"].startswith("application/problem+json"), r.text
            assert r.json()["code"] in {
                "invalid_request", "unauthorized", "forbidden", "not_found", "game_over",
                "version_conflict", "too_large", "rate_limited"}
    assert {200, 201, 400, 404, 422} <= seen
    # Odd paths, queries and headers on reads.
    for path in ["/games/", "/games//reveal", f"/games/{game.id}?since=-1", "/games/%00",
                 f"/games/{game.id}/events", "/healthz?x=1", f"/games/{'f' * 5000}"]:
        r = client.get(path, headers={"Accept": rng.choice(["*/*", "text/plain", "a/b;q=x"])})
        assert r.status_code < 500, (path, r.status_code, r.text)


@pytest.mark.parametrize("body", [
    {"preset": "beginner", "no_guess": True},
    {"preset": "expert", "no_guess": True, "first_click": "safe"},
    {"width": 8, "height": 8, "mines": 55, "no_guess": True},
    {"preset": "beginner", "first_click": "none", "seed": 1},
    {"preset": "beginner", "first_click": "safe"},
])
def test_option_combinations_never_500(client: httpx.Client, body: dict[str, Any]) -> None:
    r = client.post("/games", json=body)
    assert r.status_code in (201, 422), r.text
    if r.status_code == 422:
        assert_problem(r, 422, "invalid_request")
