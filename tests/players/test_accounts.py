"""Registering, reading and renaming players, and what their tokens may do: names
unique ignoring case (one winner when two replicas register one name at once), bad
names, guests' names, wrong tokens that change nothing and count as failures."""

from __future__ import annotations

import re
import threading
from typing import Any

import httpx
import pytest

from tests.support.play import Api, Game, Player, unique_name
from tests.support.servers import running_service

PLAYER_FIELDS = {"id", "name", "bot", "created_at", "stats", "ratings", "recent"}


def problem(r: httpx.Response, status: int, code: str) -> dict[str, Any]:
    assert r.status_code == status, r.text
    assert r.headers["content-type"].startswith("application/problem+json")
    body: dict[str, Any] = r.json()
    assert body["code"] == code, body
    return body


def test_register_read_and_find_oneself(a: Api, b: Api) -> None:
    name = unique_name("ada")
    r = a.client.post("/players", json={"name": name})
    assert r.status_code == 201, r.text
    body = r.json()
    assert set(body) == {"player", "token"}
    player = body["player"]
    assert set(player) == PLAYER_FIELDS
    assert r.headers["location"] == f"/players/{player['id']}"
    assert re.fullmatch(r"[0-9a-f]{32}", player["id"])
    assert (player["name"], player["bot"], player["ratings"], player["recent"]) == (
        name, False, {}, [])
    for preset in ("beginner", "intermediate", "expert"):
        for kind in ("classic", "no_guess"):
            assert player["stats"][preset][kind] == {
                "played": 0, "won": 0, "best_ms": None, "best_bbbv_per_s": None,
                "streak": 0, "best_streak": 0,
            }
    # The other replica knows the player by id, and by token; neither shows the token.
    seen = b.player(player["id"])
    me = b.client.get("/players/me", headers={"Authorization": f"Bearer {body['token']}"})
    assert me.status_code == 200 and me.json() == seen == player
    assert body["token"] not in me.text


def test_a_guest_gets_a_friendly_name_and_renames_it(a: Api, b: Api) -> None:
    r = a.client.post("/players")  # no body at all
    assert r.status_code == 201, r.text
    guest = Player(r.json()["player"]["id"], r.json()["token"], r.json()["player"])
    assert re.fullmatch(r"[A-Z][a-z]+[A-Z][a-z]+-\d{1,4}", guest.name), guest.name
    assert a.client.post("/players", json={}).json()["player"]["name"] != guest.name
    new = unique_name("named")
    renamed = b.client.patch("/players/me", json={"name": new}, headers=guest.auth)
    assert renamed.status_code == 200, renamed.text
    assert renamed.json()["name"] == new and renamed.json()["id"] == guest.id
    assert a.player(guest)["name"] == new
    # The guest's old name is free again.
    assert a.client.post("/players", json={"name": guest.name}).status_code == 201


def test_names_are_unique_ignoring_case(a: Api, b: Api) -> None:
    name = unique_name("Case")
    first = a.register(name)
    for taken in (name, name.lower(), name.upper()):
        problem(b.client.post("/players", json={"name": taken}), 409, "name_taken")
    second = b.register()
    problem(a.client.patch("/players/me", json={"name": name.swapcase()}, headers=second.auth),
            409, "name_taken")
    assert a.player(second)["name"] == second.name
    # One's own name in another case is no clash.
    own = a.client.patch("/players/me", json={"name": name.upper()}, headers=first.auth)
    assert own.status_code == 200 and own.json()["name"] == name.upper()
    # A rename frees the old name for others.
    moved = unique_name("moved")
    assert a.client.patch("/players/me", json={"name": moved}, headers=first.auth).is_success
    assert b.register(name).name == name


def test_two_replicas_registering_one_name_at_once(a: Api, b: Api) -> None:
    """Every round, one registration of the name wins and the other is a 409, whichever
    replica each reached."""
    for _ in range(10):
        name = unique_name("race")
        answers: list[httpx.Response] = []
        start = threading.Barrier(4)

        def register(
            api: Api, spelled: str, start: threading.Barrier = start,
            answers: list[httpx.Response] = answers,
        ) -> None:
            start.wait()
            answers.append(api.client.post("/players", json={"name": spelled}))

        with httpx.Client(base_url=str(a.client.base_url), timeout=30) as a2, \
                httpx.Client(base_url=str(b.client.base_url), timeout=30) as b2:
            # Two on each replica, in two spellings of the name.
            threads = [
                threading.Thread(target=register, args=(api, spelled))
                for api, spelled in ((a, name), (b, name.swapcase()), (Api(a2), name.upper()),
                                     (Api(b2), name))
            ]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        statuses = sorted(r.status_code for r in answers)
        assert statuses == [201, 409, 409, 409], [r.text for r in answers]
        winner = next(r.json() for r in answers if r.status_code == 201)
        assert a.player(winner["player"]["id"])["name"].lower() == name.lower()


@pytest.mark.parametrize(
    "name", ["a", "x" * 21, "has space", "dot.ted", "<script>", "émile", "", 42, None,
             "newline\n", "\uff21lice"],
)
def test_bad_names(a: Api, name: Any) -> None:
    target = a.register()
    body: dict[str, Any] = {"name": name}
    if name is not None:
        problem(a.client.post("/players", json=body), 422, "invalid_request")
    problem(a.client.patch("/players/me", json=body, headers=target.auth), 422,
            "invalid_request")
    assert a.player(target)["name"] == target.name


def test_bad_bodies(a: Api) -> None:
    problem(a.client.post("/players", json={"name": unique_name(), "colour": "red"}), 422,
            "invalid_request")
    problem(a.client.post("/players", json={"bot": "yes"}), 422, "invalid_request")
    problem(a.client.post("/players", content=b"{"), 400, "invalid_request")
    me = a.register()
    problem(a.client.patch("/players/me", json={}, headers=me.auth), 422, "invalid_request")


def test_a_typed_name_at_game_creation_points_at_players(a: Api) -> None:
    body = problem(a.client.post("/games", json={"preset": "beginner", "player": "ada"}),
                   422, "invalid_request")
    assert "POST /players" in body["detail"]


def test_a_players_game_and_whose_tokens_move_it(a: Api, b: Api) -> None:
    ada, bob = a.register(), a.register()
    game = a.create(owner=ada, preset="intermediate", seed=7)
    assert (game.view["player_id"], game.view["player"]) == (ada.id, ada.name)
    # Ada's token moves her game on either replica, as the game's token does.
    assert b.client.post(f"/games/{game.id}/flag", json={"x": 0, "y": 0},
                         headers=ada.auth).json()["version"] == 1
    assert a.flag(game, 1, 0)["version"] == 2
    # Bob's token does not, nor does it reset or pause Ada's game.
    for path in ("flag", "reset", "pause"):
        r = b.client.post(f"/games/{game.id}/{path}", json={"x": 2, "y": 0}
                          if path == "flag" else None, headers=bob.auth)
        problem(r, 403, "forbidden")
    # Ada's token is no use on somebody else's game, or on an anonymous one.
    for other in (a.create(owner=bob, preset="beginner"), a.create(preset="beginner")):
        problem(a.client.post(f"/games/{other.id}/flag", json={"x": 0, "y": 0},
                              headers=ada.auth), 403, "forbidden")
        assert a.view(other)["version"] == 0
    assert a.view(game)["version"] == 2


def test_a_game_reset_after_a_rename_is_under_the_new_name(a: Api, b: Api) -> None:
    ada = a.register()
    game = a.create(owner=ada, preset="beginner")
    new = unique_name("renamed")
    renamed = a.client.patch("/players/me", json={"name": new}, headers=ada.auth)
    assert renamed.status_code == 200, renamed.text
    # The game made before keeps the name it was made under; its reset is a new game,
    # made now, under the name the player has now (with either token).
    assert a.view(game)["player"] == ada.name
    for token in (game.auth, ada.auth):
        r = b.client.post(f"/games/{game.id}/reset", headers=token)
        assert r.status_code == 201, r.text
        view = r.json()["game"]
        assert (view["player_id"], view["player"]) == (ada.id, new)
        assert a.view(view["id"])["player"] == new
        game = Game(view["id"], r.json()["token"], view)


def test_wrong_tokens_change_nothing(a: Api) -> None:
    ada = a.register()
    game = a.create(owner=ada, preset="beginner")
    wrong_tokens = [
        None, "nope", game.token, ada.token + "x", ada.token[:-1],
        f"{ada.id}.{'A' * 43}", f"{'0' * 32}.{ada.token.split('.')[1]}",
    ]
    for token in wrong_tokens:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        problem(a.client.get("/players/me", headers=headers), 401, "unauthorized")
        problem(a.client.patch("/players/me", json={"name": unique_name()}, headers=headers),
                401, "unauthorized")
        if token:  # without one a game is anonymous: with a wrong one, there is none
            before = a.client.get(f"/players/{ada.id}").json()
            problem(a.client.post("/games", json={}, headers=headers), 401, "unauthorized")
            assert a.player(ada) == before
    assert a.player(ada)["name"] == ada.name
    problem(a.client.get("/players/me", headers={"Authorization": "Basic abc"}), 401,
            "unauthorized")
    problem(a.client.get(f"/players/{'0' * 32}"), 404, "not_found")
    problem(a.client.get("/players/not-an-id"), 404, "not_found")


def test_failed_player_auth_counts_against_the_limit(redis_url: str) -> None:
    with running_service(redis_url, AUTH_FAILURE_LIMIT="6") as svc, \
            httpx.Client(base_url=svc.url, timeout=30) as c:
        statuses = [c.get("/players/me", headers={"Authorization": f"Bearer guess{i}"})
                    .status_code for i in range(4)]
        statuses += [c.get(f"/players/{i:032x}").status_code for i in range(4)]
        assert statuses[:6] == [401] * 4 + [404] * 2
        assert statuses[-1] == 429
        limited = c.get("/players/me")
        assert limited.status_code == 429 and limited.headers["retry-after"]


def test_registrations_are_limited_per_address(redis_url: str) -> None:
    with running_service(redis_url, REGISTER_RATE_LIMIT="3") as svc, \
            httpx.Client(base_url=svc.url, timeout=30) as c:
        statuses = [c.post("/players", json={}).status_code for _ in range(5)]
        assert statuses[:3] == [201] * 3 and statuses[-1] == 429
        r = c.post("/players", json={})
        problem(r, 429, "rate_limited")
        assert int(r.headers["retry-after"]) >= 1
        # Only registrations: the rest of the API still answers this address.
        assert c.post("/games", json={}).status_code == 201
