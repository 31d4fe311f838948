"""Whole games through HTTP against a real service on a real Redis: wins, losses,
chords, flags, question marks, the text board, Location and reset."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from websockets.sync.client import connect

from service import engine
from service.api import views
from tests.support.play import (
    Api,
    Game,
    Mines,
    apply_cells,
    learn_mines,
    neighbours,
    positions,
    win,
)

BEGINNER = {"preset": "beginner", "seed": 20240611}
FIRST = (4, 4)

VIEW_FIELDS = {
    "id", "version", "status", "width", "height", "mines", "mines_left", "preset",
    "first_click", "no_guess", "question_marks", "paused", "player_id", "player", "daily",
    "next_id", "held", "board", "created_at", "started_at", "ended_at", "elapsed_ms",
    "server_time", "stats",
}
DIFF_FIELDS = {
    "type", "version", "status", "paused", "move", "cells", "mines_left", "started_at",
    "ended_at", "elapsed_ms", "stats",
}


@pytest.fixture(scope="module")
def mines(live_server: str) -> Mines:
    with httpx.Client(base_url=live_server, timeout=30) as c:
        return learn_mines(Api(c), BEGINNER, FIRST)


def assert_problem(r: httpx.Response, status: int, code: str) -> dict[str, Any]:
    assert r.status_code == status, r.text
    assert r.headers["content-type"].startswith("application/problem+json")
    body: dict[str, Any] = r.json()
    assert body["status"] == status and body["code"] == code, body
    assert body["title"] and body["detail"]
    return body


def test_create_answers_201_with_a_location_and_a_full_view(
    client: httpx.Client, api: Api
) -> None:
    ann = api.register()
    r = client.post("/games", json={"preset": "expert"}, headers=ann.auth)
    assert r.status_code == 201
    data = r.json()
    assert set(data) == {"game", "token"}
    view = data["game"]
    assert set(view) >= VIEW_FIELDS
    assert r.headers["location"] == f"/games/{view['id']}"
    assert (view["width"], view["height"], view["mines"]) == (30, 16, 99)
    assert view["status"] == "ready" and view["version"] == 0
    assert (view["player_id"], view["player"], view["held"]) == (ann.id, ann.name, None)
    assert view["board"] == ["#" * 30] * 16
    assert view["started_at"] is None and view["ended_at"] is None and view["elapsed_ms"] == 0
    # The Location answers with the same game.
    again = client.get(r.headers["location"])
    assert again.status_code == 200
    assert again.json()["id"] == view["id"]


def test_custom_board_and_empty_body_default(client: httpx.Client) -> None:
    view = client.post("/games", json={"width": 7, "height": 5, "mines": 3}).json()["game"]
    assert (view["width"], view["height"], view["mines"], view["preset"]) == (7, 5, 3, None)
    assert view["board"] == ["#" * 7] * 5
    default = client.post("/games")
    assert default.status_code == 201
    assert default.json()["game"]["preset"] == "beginner"


def test_win_by_revealing_every_safe_cell(api: Api, client: httpx.Client, mines: Mines) -> None:
    assert len(mines) == 10
    game = api.create(**BEGINNER)
    diffs = win(api, game, mines, FIRST)
    assert [d["version"] for d in diffs] == list(range(1, len(diffs) + 1))
    for d in diffs:
        assert set(d) >= DIFF_FIELDS
        assert d["type"] == "diff" and d["move"]["action"] == "reveal"
    last = diffs[-1]
    assert last["status"] == "won"
    assert last["mines_left"] == 0
    assert last["ended_at"] is not None and last["stats"] is not None
    assert last["stats"]["clicks"]["reveal"] == len(diffs)
    assert all(d["stats"] is None for d in diffs[:-1])
    view = api.view(game)
    assert view["status"] == "won" and view["version"] == len(diffs)
    assert positions(view["board"], "F") == mines
    assert not positions(view["board"], "#?*X!")
    assert view["stats"]["efficiency"] is not None
    # No move after the end.
    for action in ("reveal", "flag", "chord"):
        r = client.post(f"/games/{game.id}/{action}", json={"x": 0, "y": 0}, headers=game.auth)
        assert_problem(r, 409, "game_over")
    assert api.view(game)["version"] == view["version"]


def test_win_by_chording(api: Api, mines: Mines) -> None:
    game = api.create(**BEGINNER)
    board = apply_cells(game.view["board"], api.reveal(game, *FIRST)["cells"])
    for x, y in sorted(mines):
        diff = api.flag(game, x, y)
        assert diff["cells"] == [[x, y, "F"]]
        board = apply_cells(board, diff["cells"])
    status, useful_chords = "playing", 0
    while status == "playing":
        chordable = [
            (x, y) for (x, y) in positions(board, "12345678")
            if any(board[ny][nx] == "#" for nx, ny in neighbours(x, y, 9, 9))
        ]
        if chordable:
            diff = api.chord(game, *chordable[0])
            assert diff["cells"], "a chord with every mine flagged opens its neighbours"
            useful_chords += 1
        else:  # a pocket no number touches
            diff = api.reveal(game, *min(positions(board, "#") - mines))
        board = apply_cells(board, diff["cells"])
        status = diff["status"]
    assert status == "won" and useful_chords > 0
    view = api.view(game)
    assert view["board"] == board
    assert view["stats"]["clicks"]["chord"] == useful_chords


def test_loss_shows_mines_exploded_cell_and_wrong_flags(
    api: Api, client: httpx.Client, mines: Mines
) -> None:
    game = api.create(**BEGINNER)
    board = apply_cells(game.view["board"], api.reveal(game, *FIRST)["cells"])
    hidden = positions(board, "#")
    wrong = min(hidden - mines)
    flagged_mine, question_mine, boom = sorted(mines)[:3]
    api.flag(game, *wrong)
    api.flag(game, *flagged_mine)
    api.flag(game, *question_mine, mark="question", expect=422)  # no question marks here
    before = api.view(game)
    assert before["ended_by"] is None
    diff = api.reveal(game, *boom)
    assert diff["status"] == "lost" and diff["ended_at"] is not None
    assert [boom[0], boom[1], "X"] in diff["cells"]
    assert diff["stats"] is not None and diff["version"] == before["version"] + 1
    view = api.view(game)
    assert view["status"] == "lost" and view["ended_by"] == "move"
    board = view["board"]
    assert positions(board, "X") == {boom}
    assert positions(board, "!") == {wrong}
    assert positions(board, "F") == {flagged_mine}
    assert positions(board, "*") == mines - {boom, flagged_mine}
    # The loss diff told a subscriber everything the final view shows.
    assert apply_cells(before["board"], diff["cells"]) == board
    r = client.post(f"/games/{game.id}/reveal", json={"x": 0, "y": 0}, headers=game.auth)
    assert_problem(r, 409, "game_over")


def _chord_setup(
    board: list[str], mines: Mines
) -> tuple[tuple[int, int], list[tuple[int, int]]]:
    """A number with a safe and a mine among its hidden neighbours, and flags that make a
    chord on it reveal a mine: one wrong flag on a safe cell, the rest on mines."""
    for x, y in sorted(positions(board, "12345678")):
        n = int(board[y][x])
        hidden = [p for p in neighbours(x, y, 9, 9) if board[p[1]][p[0]] == "#"]
        safe = [p for p in hidden if p not in mines]
        bombs = [p for p in hidden if p in mines]
        if safe and bombs:
            return (x, y), [safe[0], *bombs[: n - 1]]
    raise AssertionError("no number to chord on")


def test_chord_with_a_wrong_flag_loses(api: Api, mines: Mines) -> None:
    game = api.create(**BEGINNER)
    board = apply_cells(game.view["board"], api.reveal(game, *FIRST)["cells"])
    (cx, cy), flags = _chord_setup(board, mines)
    for p in flags:
        board = apply_cells(board, api.flag(game, *p)["cells"])
    diff = api.chord(game, cx, cy)
    assert diff["status"] == "lost"
    exploded = {(x, y) for x, y, c in diff["cells"] if c == "X"}
    around = set(neighbours(cx, cy, 9, 9))
    assert exploded and exploded <= mines & around
    assert exploded == (mines & around) - set(flags)
    view = api.view(game)
    assert positions(view["board"], "X") == exploded
    assert positions(view["board"], "!") == set(flags) - mines


def test_noop_moves_change_nothing(api: Api, client: httpx.Client, mines: Mines) -> None:
    game = api.create(**BEGINNER)
    first = api.reveal(game, *FIRST)
    board = apply_cells(game.view["board"], first["cells"])
    version = first["version"]
    digit = min(positions(board, "12345678"))
    zero = min(positions(board, "0"))
    hidden = min(positions(board, "#"))
    noops = [
        ("reveal", zero, {}),  # already open
        ("flag", zero, {}),  # flags on revealed cells change nothing
        ("chord", digit, {}),  # no flags around it
        ("chord", hidden, {}),  # not a number
        ("chord", zero, {}),
        ("flag", hidden, {"mark": "none"}),
    ]
    for action, (x, y), extra in noops:
        d = api.move(game, action, x, y, **extra)
        assert d["cells"] == [] and d["version"] == version, (action, d)
        assert d["move"] == {**d["move"], "action": action, "x": x, "y": y}
    # Reveal on a flag changes nothing either.
    api.flag(game, *hidden)
    d = api.reveal(game, *hidden)
    assert d["cells"] == [] and d["version"] == version + 1
    view = api.view(game)
    assert view["version"] == version + 1
    assert view["stats"]["clicks"]["total"] == 1 + len(noops) + 2


def test_flags_cycle_count_and_do_not_start_the_clock(api: Api) -> None:
    game = api.create(width=5, height=5, mines=1)
    d1 = api.flag(game, 0, 0)
    assert d1["cells"] == [[0, 0, "F"]] and d1["mines_left"] == 0 and d1["version"] == 1
    assert d1["status"] == "ready" and d1["started_at"] is None
    d2 = api.flag(game, 1, 0)
    d3 = api.flag(game, 2, 0)
    assert (d2["mines_left"], d3["mines_left"]) == (-1, -2)  # more flags than mines is allowed
    d4 = api.flag(game, 0, 0)
    assert d4["cells"] == [[0, 0, "#"]] and d4["mines_left"] == -1
    view = api.view(game)
    assert view["status"] == "ready" and view["started_at"] is None and view["version"] == 4
    assert view["board"][0] == "#FF##"
    assert view["stats"]["clicks"]["flag"] == 4


def test_question_marks_cycle_and_explicit_marks(api: Api, client: httpx.Client) -> None:
    game = api.create(preset="beginner", question_marks=True)
    assert game.view["question_marks"] is True
    chars = [api.flag(game, 3, 3)["cells"] for _ in range(3)]
    assert chars == [[[3, 3, "F"]], [[3, 3, "?"]], [[3, 3, "#"]]]
    # Explicit marks set, idempotently.
    d = api.flag(game, 2, 2, mark="question")
    assert d["cells"] == [[2, 2, "?"]]
    again = api.flag(game, 2, 2, mark="question")
    assert again["cells"] == [] and again["version"] == d["version"]
    assert api.flag(game, 2, 2, mark="flag")["cells"] == [[2, 2, "F"]]
    assert api.flag(game, 2, 2, mark="flag")["cells"] == []
    assert api.flag(game, 2, 2, mark="none")["cells"] == [[2, 2, "#"]]
    assert api.flag(game, 2, 2, mark="none")["cells"] == []
    # A question-marked cell is not opened by a reveal.
    api.flag(game, 1, 1, mark="question")
    assert api.reveal(game, 1, 1)["cells"] == []
    # Bad marks and question marks on a game without them are refused.
    plain = api.create(preset="beginner")
    r = client.post(f"/games/{plain.id}/flag", json={"x": 0, "y": 0, "mark": "question"},
                    headers=plain.auth)
    assert_problem(r, 422, "invalid_request")
    r = client.post(f"/games/{plain.id}/flag", json={"x": 0, "y": 0, "mark": "bomb"},
                    headers=plain.auth)
    assert_problem(r, 422, "invalid_request")
    plain_cycle = [api.flag(plain, 0, 0)["cells"] for _ in range(2)]
    assert plain_cycle == [[[0, 0, "F"]], [[0, 0, "#"]]]
    assert api.view(plain)["version"] == 2


def test_board_as_text(api: Api, client: httpx.Client) -> None:
    game = api.create(**BEGINNER)
    api.reveal(game, *FIRST)
    api.flag(game, 0, 0)
    view = api.view(game)
    r = client.get(f"/games/{game.id}", headers={"Accept": "text/plain"})
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("text/plain")
    lines = r.text.splitlines()
    assert lines[:9] == view["board"]
    assert lines[9] == ""
    assert "playing" in lines[10] and f"version {view['version']}" in lines[10]
    assert game.id in lines[10]
    # JSON stays the default, and wins when both are accepted.
    assert client.get(f"/games/{game.id}").headers["content-type"] == "application/json"
    both = client.get(f"/games/{game.id}", headers={"Accept": "application/json, text/plain"})
    assert both.json()["id"] == game.id


def test_reset_starts_a_new_game_and_tells_subscribers(
    api: Api, client: httpx.Client, live_server: str
) -> None:
    bob = api.register()
    game = api.create(width=12, height=10, mines=20, question_marks=True, owner=bob)
    api.reveal(game, 5, 5)
    host = urlsplit(live_server).netloc
    with connect(f"ws://{host}/games/{game.id}/events", open_timeout=30) as ws:
        snapshot = json.loads(ws.recv(timeout=30))
        assert snapshot["type"] == "snapshot" and snapshot["game"]["version"] == 1

        assert_problem(client.post(f"/games/{game.id}/reset"), 401, "unauthorized")
        wrong = {"Authorization": "Bearer not-the-token"}
        assert_problem(client.post(f"/games/{game.id}/reset", headers=wrong), 403, "forbidden")

        r = client.post(f"/games/{game.id}/reset", headers=game.auth)
        assert r.status_code == 201, r.text
        data = r.json()
        new = Game(data["game"]["id"], data["token"], data["game"])
        assert new.id != game.id and new.token != game.token
        assert r.headers["location"] == f"/games/{new.id}"
        v = new.view
        assert (v["width"], v["height"], v["mines"], v["question_marks"], v["player"]) == (
            12, 10, 20, True, bob.name)
        assert v["player_id"] == bob.id
        assert v["status"] == "ready" and v["version"] == 0

        message = json.loads(ws.recv(timeout=30))
        assert message == {"type": "reset", "next_id": new.id}
    # The old game is untouched but names its successor, and the tokens do not cross.
    old = api.view(game)
    assert old["version"] == 1 and old["next_id"] == new.id
    assert new.view["next_id"] is None
    r = client.post(f"/games/{new.id}/reveal", json={"x": 0, "y": 0}, headers=game.auth)
    assert_problem(r, 403, "forbidden")
    assert api.reveal(new, 0, 0)["version"] == 1


def test_a_reset_reaches_a_subscriber_that_comes_later(
    api: Api, client: httpx.Client, live_server: str
) -> None:
    game = api.create(**BEGINNER)
    api.reveal(game, *FIRST)
    first = client.post(f"/games/{game.id}/reset", headers=game.auth).json()["game"]["id"]
    api.flag(game, 0, 0)  # the old game may still be played: version 2
    second = client.post(f"/games/{game.id}/reset", headers=game.auth).json()["game"]["id"]
    host = urlsplit(live_server).netloc

    def opening(since: int | None) -> list[dict[str, Any]]:
        """What a socket gets up to the latest reset, or its snapshot."""
        query = "" if since is None else f"?since={since}"
        got: list[dict[str, Any]] = []
        with connect(f"ws://{host}/games/{game.id}/events{query}", open_timeout=30) as ws:
            while not got or (got[-1].get("next_id") != second and got[-1]["type"] != "snapshot"):
                got.append(json.loads(ws.recv(timeout=30)))
        return got

    def kinds(messages: list[dict[str, Any]]) -> list[Any]:
        return [m.get("version", m.get("next_id")) for m in messages]

    # Resuming: every diff and reset after the version given, in the order they came.
    assert kinds(opening(0)) == [1, first, 2, second]
    assert kinds(opening(1)) == [first, 2, second]
    assert kinds(opening(2)) == [second]
    # Connecting afresh: a snapshot that names the latest successor.
    (snapshot,) = opening(None)
    assert snapshot["type"] == "snapshot" and snapshot["game"]["next_id"] == second


def test_a_shared_boards_opened_start_is_not_the_players_3bv() -> None:
    """A daily board (or a match's) opens its start for the player: that 3BV is done, but
    not by the player, so one click on a mine scores no 3BV per click."""
    fresh = engine.new_game(engine.preset("beginner"), seed=7, now_ms=0)
    game, _ = engine.open_start(fresh, 0)
    assert engine.bbbv_done(game) == game.bbbv_given == 1
    mine = next(i for i in range(game.width * game.height) if game.is_mine(i))
    lost, _ = engine.reveal(game, mine % game.width, mine // game.width, 1500)
    stats = views.stats(lost, 1500)
    assert lost.status == "lost" and stats.bbbv_done >= 1
    assert stats.efficiency == 0.0


def test_a_replays_seed_makes_the_same_board_again(api: Api, client: httpx.Client) -> None:
    """A game made without a seed gets one the service draws, below 2**53 (exact in any
    JSON reader, JavaScript's too); its replay's seed, sent to ``POST /games``, makes the
    same mines for the same first click."""
    for _ in range(12):
        game = api.create(preset="beginner")
        diff = api.reveal(game, *FIRST)
        board = apply_cells(game.view["board"], diff["cells"])
        while diff["status"] == "playing":
            x, y = min(positions(board, "#"), key=lambda p: (p[1], p[0]))
            diff = api.reveal(game, x, y)
            board = apply_cells(board, diff["cells"])
        r = client.get(f"/games/{game.id}/replay")
        assert r.status_code == 200, r.text
        replay = r.json()
        assert 0 <= replay["seed"] < 2**53, replay["seed"]
        layout = {(x, y) for y, row in enumerate(replay["layout"]) for x, c in enumerate(row)
                  if c == "*"}
        assert learn_mines(api, {"preset": "beginner", "seed": replay["seed"]}, FIRST) == layout
