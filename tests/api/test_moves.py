"""Move semantics over HTTP: idempotent retries, If-Match, authorisation, and
concurrent moves that are never lost."""

from __future__ import annotations

import asyncio
import itertools
import time
from typing import Any

import httpx
import redis

from tests.api.test_games import assert_problem
from tests.api.test_store import metric
from tests.support.play import Api, Game
from tests.support.servers import running_service


def post(
    client: httpx.Client, game: Game, action: str, body: Any, **headers: str
) -> httpx.Response:
    return client.post(f"/games/{game.id}/{action}", json=body, headers={**game.auth, **headers})


def test_idempotent_retry_returns_the_first_answer_and_applies_once(
    api: Api, client: httpx.Client
) -> None:
    game = api.create(preset="beginner")
    first = post(client, game, "flag", {"x": 1, "y": 1}, **{"Idempotency-Key": "k-1"})
    assert first.status_code == 200
    # A flag toggles: applied twice it would come off again.
    for _ in range(3):
        again = post(client, game, "flag", {"x": 1, "y": 1}, **{"Idempotency-Key": "k-1"})
        assert again.status_code == 200
        assert again.content == first.content
    view = api.view(game)
    assert view["version"] == 1 and view["board"][1][1] == "F"
    # A new key is a new move.
    other = post(client, game, "flag", {"x": 1, "y": 1}, **{"Idempotency-Key": "k-2"})
    assert other.json()["cells"] == [[1, 1, "#"]] and other.json()["version"] == 2


def test_idempotency_key_reused_for_another_request_is_422(api: Api, client: httpx.Client) -> None:
    game = api.create(preset="beginner")
    key = {"Idempotency-Key": "same"}
    assert post(client, game, "flag", {"x": 0, "y": 0}, **key).status_code == 200
    for action, body in [("flag", {"x": 0, "y": 1}), ("reveal", {"x": 0, "y": 0}),
                         ("flag", {"x": 0, "y": 0, "mark": "none"})]:
        r = post(client, game, action, body, **{"Idempotency-Key": "same"})
        assert_problem(r, 422, "invalid_request")
    assert api.view(game)["version"] == 1


def test_idempotency_key_needs_the_token_and_a_sane_value(api: Api, client: httpx.Client) -> None:
    game = api.create(preset="beginner")
    other = api.create(preset="beginner")
    key = {"Idempotency-Key": "mine"}
    assert post(client, game, "flag", {"x": 0, "y": 0}, **key).status_code == 200
    # The stored answer is not handed to someone without the token.
    r = client.post(f"/games/{game.id}/flag", json={"x": 0, "y": 0},
                    headers={"Authorization": f"Bearer {other.token}", "Idempotency-Key": "mine"})
    assert_problem(r, 403, "forbidden")
    for bad in [b"", b"has space", b"x" * 129, "é".encode()]:
        r = client.post(f"/games/{game.id}/flag", json={"x": 0, "y": 0},
                        headers=[*game.auth.items(), ("Idempotency-Key", bad)])
        assert_problem(r, 400, "invalid_request")
    # Keys are per game: the same key on another game is a new move there.
    r = post(client, other, "flag", {"x": 0, "y": 0}, **{"Idempotency-Key": "mine"})
    assert r.status_code == 200 and r.json()["version"] == 1
    assert api.view(game)["version"] == 1


async def test_concurrent_retries_with_one_key_apply_once(live_server: str) -> None:
    async with httpx.AsyncClient(base_url=live_server, timeout=60) as c:
        created = (await c.post("/games", json={"preset": "expert"})).json()
        game = Game(created["game"]["id"], created["token"], created["game"])
        headers = {**game.auth, "Idempotency-Key": "burst"}
        answers = await asyncio.gather(*[
            c.post(f"/games/{game.id}/flag", json={"x": 3, "y": 3}, headers=headers)
            for _ in range(12)
        ])
        assert {r.status_code for r in answers} == {200}
        assert len({r.content for r in answers}) == 1
        view = (await c.get(f"/games/{game.id}")).json()
        assert view["version"] == 1 and view["board"][3][3] == "F"


def test_if_match(api: Api, client: httpx.Client) -> None:
    game = api.create(preset="beginner")
    ok = post(client, game, "flag", {"x": 0, "y": 0}, **{"If-Match": '"0"'})
    assert ok.status_code == 200 and ok.json()["version"] == 1
    stale = post(client, game, "flag", {"x": 1, "y": 0}, **{"If-Match": '"0"'})
    body = assert_problem(stale, 412, "version_conflict")
    assert "1" in body["detail"]
    for form in ['"1"', "1", 'W/"1"', "*"]:
        r = post(client, game, "flag", {"x": 0, "y": 0, "mark": "flag"}, **{"If-Match": form})
        assert r.status_code == 200, (form, r.text)  # a no-op keeps the version at 1
    assert_problem(post(client, game, "flag", {"x": 0, "y": 0}, **{"If-Match": "soon"}),
                   400, "invalid_request")
    view = api.view(game)
    assert view["version"] == 1 and view["board"][0] == "F########"


def test_auth_failures_never_change_the_game(api: Api, client: httpx.Client) -> None:
    game = api.create(preset="beginner")
    other = api.create(preset="beginner")
    api.flag(game, 8, 8)
    before = api.view(game)
    attempts: list[tuple[dict[str, str], int, str]] = [
        ({}, 401, "unauthorized"),
        ({"Authorization": ""}, 401, "unauthorized"),
        ({"Authorization": "Bearer"}, 401, "unauthorized"),
        ({"Authorization": f"Basic {game.token}"}, 401, "unauthorized"),
        ({"Authorization": game.token}, 401, "unauthorized"),
        ({"Authorization": "Bearer wrong"}, 403, "forbidden"),
        ({"Authorization": f"Bearer {game.token}x"}, 403, "forbidden"),
        ({"Authorization": f"Bearer {game.token[:-1]}"}, 403, "forbidden"),
        ({"Authorization": f"Bearer {other.token}"}, 403, "forbidden"),
        ({"Authorization": "Bearer " + "a" * 5000}, 403, "forbidden"),
    ]
    actions = [("reveal", {"x": 4, "y": 4}), ("flag", {"x": 0, "y": 0}),
               ("chord", {"x": 4, "y": 4}), ("reset", None)]
    for (headers, status, code), (action, body) in itertools.product(attempts, actions):
        r = client.post(f"/games/{game.id}/{action}", json=body, headers=headers)
        problem = assert_problem(r, status, code)
        assert game.token not in r.text and game.token not in str(r.headers)
        if status == 401:
            assert r.headers["www-authenticate"].lower().startswith("bearer")
        assert problem["detail"]
    after = api.view(game)
    assert {k: v for k, v in after.items() if k != "server_time"} == {
        k: v for k, v in before.items() if k != "server_time"}
    assert after["stats"]["clicks"]["total"] == 1
    # The bearer scheme is case-insensitive and the right token still works.
    r = client.post(f"/games/{game.id}/flag", json={"x": 8, "y": 8},
                    headers={"Authorization": f"bearer {game.token}"})
    assert r.status_code == 200 and r.json()["version"] == 2


async def test_concurrent_flags_on_distinct_cells_all_land(live_server: str) -> None:
    width, height, movers = 30, 16, 32
    async with httpx.AsyncClient(base_url=live_server, timeout=60,
                                 limits=httpx.Limits(max_connections=movers)) as c:
        created = (await c.post("/games", json={"preset": "expert"})).json()
        game = Game(created["game"]["id"], created["token"], created["game"])
        cells = [(i % width, i // width) for i in range(0, width * height, 7)][:movers]

        async def toggle(x: int, y: int) -> dict[str, Any]:
            r = await c.post(f"/games/{game.id}/flag", json={"x": x, "y": y}, headers=game.auth)
            assert r.status_code == 200, r.text
            data: dict[str, Any] = r.json()
            return data

        diffs = await asyncio.gather(*[toggle(x, y) for x, y in cells])
        versions = sorted(d["version"] for d in diffs)
        assert versions == list(range(1, movers + 1))
        for (x, y), d in zip(cells, diffs, strict=True):
            assert d["cells"] == [[x, y, "F"]]
        view = (await c.get(f"/games/{game.id}")).json()
        assert view["version"] == movers
        assert view["mines_left"] == 99 - movers
        flagged = {(x, y) for y, row in enumerate(view["board"]) for x, ch in enumerate(row)
                   if ch == "F"}
        assert flagged == set(cells)
        # The second round takes every flag off again, racing just as hard.
        diffs = await asyncio.gather(*[toggle(x, y) for x, y in cells])
        assert sorted(d["version"] for d in diffs) == list(range(movers + 1, 2 * movers + 1))
        view = (await c.get(f"/games/{game.id}")).json()
        assert view["version"] == 2 * movers and view["board"] == ["#" * width] * height


def test_move_rate_limits_refuse_without_applying(redis_url: str) -> None:
    """The per-token and per-address buckets are taken by the script that loads the game:
    a refused move is a 429 that changes nothing, and each token has its own bucket."""
    env = {"MOVE_RATE_LIMIT": "1", "RATE_LIMIT": "0"}  # one a second, ten saved up
    with running_service(redis_url, **env) as svc, \
            httpx.Client(base_url=svc.url, timeout=30) as client:
        api = Api(client)
        game, other = api.create(preset="expert"), api.create(preset="expert")
        statuses = []
        for i in range(20):
            r = post(client, game, "flag", {"x": i % 30, "y": 0},
                     **{"Idempotency-Key": f"flag-{i}"})
            statuses.append(r.status_code)
            if r.status_code == 429:
                assert_problem(r, 429, "rate_limited")
                assert int(r.headers["retry-after"]) >= 1
        assert set(statuses) == {200, 429}
        # Only the accepted moves were applied, and retrying one still answers as before.
        assert api.view(game)["version"] == statuses.count(200)
        retried = post(client, game, "flag", {"x": 0, "y": 0}, **{"Idempotency-Key": "flag-0"})
        assert retried.status_code in (200, 429)
        assert api.view(game)["version"] == statuses.count(200)
        # The other game's token has a bucket of its own.
        assert api.flag(other, 0, 0)["version"] == 1

    env = {"MOVE_RATE_LIMIT": "0", "RATE_LIMIT": "1"}  # per address, for every game
    with running_service(redis_url, **env) as svc, \
            httpx.Client(base_url=svc.url, timeout=30) as client:
        created = [client.post("/games", json={"preset": "beginner"}) for _ in range(3)]
        games = [Game(c.json()["game"]["id"], c.json()["token"], c.json()["game"])
                 for c in created if c.status_code == 201]
        assert games, "the first requests fit in the address's burst"
        moves = [post(client, games[i % len(games)], "flag", {"x": i % 9, "y": 1}).status_code
                 for i in range(20)]
        assert 429 in moves
        applied = sum(1 for s in moves if s == 200)
        # Reading is limited too; wait for the bucket rather than guessing its level.
        seen = 0
        for g in games:
            for _ in range(100):
                r = client.get(f"/games/{g.id}")
                if r.status_code == 200:
                    seen += r.json()["version"]
                    break
                assert r.status_code == 429
                time.sleep(0.2)
        assert seen == applied


def _conflicts(client: httpx.Client) -> float:
    """The service's count of commits that lost a race (one worker)."""
    return metric(client, "ms_commit_conflicts_total")


def test_a_copy_another_replica_wrote_past_costs_one_retry(redis_url: str) -> None:
    """Each replica keeps the games it served; one that moved on elsewhere is committed
    against the write the copy was read at, found behind, and played again on the game
    the commit answers with: the move lands on top of the other replica's."""
    with running_service(redis_url) as a, running_service(redis_url) as b, \
            httpx.Client(base_url=a.url, timeout=30) as ca, \
            httpx.Client(base_url=b.url, timeout=30) as cb:
        game = Api(ca).create(preset="expert", seed=3)
        assert post(ca, game, "flag", {"x": 0, "y": 0}).json()["version"] == 1  # A has it now
        for x in (1, 2, 3):
            assert post(cb, game, "flag", {"x": x, "y": 0}).json()["version"] == x + 1
        before = _conflicts(ca)
        answer = post(ca, game, "flag", {"x": 4, "y": 0}).json()
        assert answer["version"] == 5 and answer["cells"] == [[4, 0, "F"]]
        assert answer["mines_left"] == game.view["mines"] - 5
        assert ca.get(f"/games/{game.id}").json()["board"][0][:6] == "FFFFF#"
        assert _conflicts(ca) == before + 1
        # The copy is current again: the next move needs no retry.
        assert post(ca, game, "flag", {"x": 5, "y": 0}).json()["version"] == 6
        assert _conflicts(ca) == before + 1


def test_a_counter_that_came_back_is_not_the_same_write(redis_url: str) -> None:
    """A Redis that restarts without its last writes can bring a game's counter back to
    a value a replica's copy holds, with other contents. The commit compares the write's
    random id too, so the copy is found behind rather than written over the game."""
    r = redis.Redis.from_url(redis_url)
    with running_service(redis_url) as a, running_service(redis_url) as b, \
            httpx.Client(base_url=a.url, timeout=30) as ca, \
            httpx.Client(base_url=b.url, timeout=30) as cb:
        game = Api(ca).create(preset="expert", seed=4)
        key = f"ms:{{{game.id}}}:game"
        created = r.hget(key, "snap")
        post(ca, game, "flag", {"x": 0, "y": 0})  # A's copy: rev 1, its flag on (0, 0)
        # The write is lost; another replica's move makes a rev 1 of its own.
        r.hset(key, mapping={"rev": 0, "snap": created})
        r.hdel(key, "attempt")
        r.delete(f"ms:{{{game.id}}}:events")
        assert post(cb, game, "flag", {"x": 9, "y": 0}).json()["version"] == 1
        assert r.hget(key, "rev") == b"1"
        answer = post(ca, game, "flag", {"x": 1, "y": 0}).json()
        assert answer["version"] == 2
        row = ca.get(f"/games/{game.id}").json()["board"][0]
        assert row[:2] == "#F" and row[9] == "F", "B's move kept, A's lost one not replayed"
    r.close()
