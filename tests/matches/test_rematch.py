"""Rematches: the same match again with the same players, made once whichever replicas
they ask on, and for them only."""

from __future__ import annotations

import concurrent.futures
import functools
import threading
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

import httpx
from websockets.sync.client import connect

from tests.matches.conftest import call, new_match, receive, wait_for_match
from tests.support.play import Api, Player

SETTINGS = ("mode", "width", "height", "mines", "preset", "no_guess", "rated", "on_mine",
            "time_limit_s")


def finished(a: Api, b: Api, players: list[Player], **body: Any) -> dict[str, Any]:
    """A match of ``players`` that started and ended (every seat resigned)."""
    match = new_match(a, players[0], seats=len(players), **body)
    for i, p in enumerate(players[1:]):
        call((b, a)[i % 2], "POST", f"/matches/{match['id']}/join", p)
    for p in players:
        call(a, "POST", f"/matches/{match['id']}/leave", p)
    return wait_for_match(b, match["id"], "finished")


def rematch(api: Api, match_id: str, player: Player) -> httpx.Response:
    return api.client.post(f"/matches/{match_id}/rematch", headers=player.auth)


def test_a_rematch_is_made_once_and_seats_its_players_only(clients: tuple[Api, Api]) -> None:
    a, b = clients
    alice, bob, carol, dave = (a.register() for _ in range(4))
    match = new_match(a, alice, seats=3, on_mine="lose", time_limit_s=120, rated=False)
    call(b, "POST", f"/matches/{match['id']}/join", bob)
    ongoing = rematch(a, match["id"], alice)
    assert ongoing.status_code == 409 and ongoing.json()["code"] == "game_in_progress"
    call(a, "POST", f"/matches/{match['id']}/join", carol)
    for p in (alice, bob, carol):
        call(b, "POST", f"/matches/{match['id']}/leave", p)
    old = wait_for_match(a, match["id"], "finished")
    assert old["rematch_id"] is None
    stranger = rematch(b, match["id"], dave)
    assert stranger.status_code == 409 and stranger.json()["code"] == "not_seated"

    base = urlsplit(str(a.client.base_url)).netloc
    with connect(f"ws://{base}/matches/{match['id']}/events?since={old['version']}",
                 open_timeout=30) as ws:
        made = rematch(b, match["id"], bob)
        assert made.status_code == 201, made.text
        new = made.json()["match"]
        assert made.headers["location"] == f"/matches/{new['id']}"
        update = receive(ws, within=30)
    assert update["type"] == "match_update" and update["change"] == "rematch"
    assert update["seat"] == 1 and update["match"]["rematch_id"] == new["id"]
    assert call(a, "GET", f"/matches/{match['id']}")["rematch_id"] == new["id"]

    # The same match again, Bob (who asked first) in the creator's seat, waiting for the
    # others; nobody else may sit down.
    assert {k: new[k] for k in SETTINGS} == {k: old[k] for k in SETTINGS}
    assert new["status"] == "waiting" and new["rematch_id"] is None
    assert new["rematch_of"] == match["id"] and old["rematch_of"] is None
    assert [s["player"]["id"] for s in new["seats"]] == [bob.id]
    assert old["capacity"] == 3 and new["capacity"] == 3
    r = a.client.post(f"/matches/{new['id']}/join", headers=dave.auth)
    assert r.status_code == 403 and r.json()["code"] == "forbidden", r.text

    # Asking again is no second seat; the others sit down, and the last starts it.
    again = rematch(a, match["id"], bob)
    assert again.status_code == 200 and again.json()["match"]["id"] == new["id"]
    assert len(again.json()["match"]["seats"]) == 1
    joined = rematch(a, match["id"], alice)
    assert joined.status_code == 200 and joined.json()["match"]["id"] == new["id"]
    last = rematch(b, match["id"], carol).json()["match"]
    assert last["status"] == "countdown"
    assert [s["player"]["id"] for s in last["seats"]] == [bob.id, alice.id, carol.id]
    assert call(b, "GET", f"/matches/{match['id']}")["version"] == old["version"] + 1
    late = rematch(b, match["id"], carol)  # seated: the match it is in, not an error
    assert late.status_code == 200 and late.json()["match"]["id"] == new["id"]


def test_players_asking_at_once_on_two_replicas_meet_in_one_rematch(
    clients: tuple[Api, Api],
) -> None:
    a, b = clients
    for _ in range(5):
        alice, bob = a.register(), b.register()
        old = finished(a, b, [alice, bob])
        start = threading.Barrier(2)

        def ask(api: Api, player: Player, old_id: str = old["id"],
                start: threading.Barrier = start) -> httpx.Response:
            start.wait()
            return rematch(api, old_id, player)

        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            answers = list(pool.map(ask, (a, b), (alice, bob)))
        assert sorted(r.status_code for r in answers) == [200, 201], [r.text for r in answers]
        (made,) = {r.json()["match"]["id"] for r in answers}
        view = call(a, "GET", f"/matches/{made}")
        assert view["status"] == "countdown", "both seated: it started, once"
        assert sorted(s["player"]["id"] for s in view["seats"]) == sorted([alice.id, bob.id])
        assert call(b, "GET", f"/matches/{old['id']}")["rematch_id"] == made


def test_match_changes_are_counted_in_the_metrics(clients: tuple[Api, Api]) -> None:
    a, b = clients
    alice, bob = a.register(), b.register()
    old = finished(a, a, [alice, bob])
    assert rematch(a, old["id"], alice).status_code == 201
    text = a.client.get("/metrics").text
    for change in ("created", "joined", "countdown", "resigned", "rematch"):
        assert f'ms_match_changes_total{{change="{change}"}}' in text, change


def crossing(first: Callable[[], httpx.Response], second: Callable[[], httpx.Response], *,
             pause: float) -> tuple[httpx.Response, httpx.Response]:
    """Send two requests from two threads released together, the second ``pause``
    seconds after the first."""
    start = threading.Barrier(2)

    def send(request: Callable[[], httpx.Response], wait: float) -> httpx.Response:
        start.wait()
        time.sleep(wait)
        return request()

    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        one, two = pool.submit(send, first, 0.0), pool.submit(send, second, pause)
        return one.result(), two.result()


def test_a_rematch_whose_last_seat_fills_as_another_leaves_does_not_start_unfull(
    clients: tuple[Api, Api],
) -> None:
    """Carol sits down in a three-seat rematch on one replica as Alice leaves it on the
    other: it starts by itself only if all three are seated at once (Alice's leave came
    after the start, and resigned her); otherwise it waits with Bob and Carol. Carol's
    request does more before it sits her down than Alice's before it frees the seat, so
    Alice's leave is held back a little more each round (0 to 6.5 ms) to cross it."""
    a, b = clients
    for rep in range(14):
        alice, bob, carol = a.register(), b.register(), a.register()
        old = finished(a, b, [alice, bob, carol])
        new = rematch(b, old["id"], bob).json()["match"]["id"]
        assert rematch(a, old["id"], alice).status_code == 200
        sat, left = crossing(
            functools.partial(rematch, a, old["id"], carol),
            functools.partial(b.client.post, f"/matches/{new}/leave", headers=alice.auth),
            pause=rep * 0.0005,
        )
        assert sat.status_code == 200 and left.status_code == 200, (sat.text, left.text)
        view = call(a, "GET", f"/matches/{new}")
        seats = [(s["player"]["id"], s["status"]) for s in view["seats"]]
        if view["status"] == "waiting":
            assert seats == [(bob.id, "waiting"), (carol.id, "waiting")], view
        else:
            assert view["status"] == "countdown", view
            assert seats == [(bob.id, "playing"), (alice.id, "resigned"),
                             (carol.id, "playing")], view


def test_a_rated_race_over_in_its_countdown_rematches_rated(clients: tuple[Api, Api]) -> None:
    """Every seat left in the countdown: the race counted for nobody, but its rematch is
    the rated race that was asked for."""
    a, b = clients
    alice, bob = a.register(), b.register()
    match = new_match(a, alice, seats=2)
    call(b, "POST", f"/matches/{match['id']}/join", bob)
    for api, p in ((a, alice), (b, bob)):
        call(api, "POST", f"/matches/{match['id']}/leave", p)
    over = wait_for_match(a, match["id"], "finished")
    assert over["rated"] is False
    first = call(b, "POST", f"/matches/{match['id']}/rematch", bob, expect=201)["match"]
    assert first["rated"] is True
    second = call(a, "POST", f"/matches/{match['id']}/rematch", alice)["match"]
    assert second["id"] == first["id"] and second["rated"] is True
    assert second["status"] == "countdown"
    # Asked again once it counts down: the rematch as it is now.
    again = call(b, "POST", f"/matches/{match['id']}/rematch", bob)["match"]
    assert again["status"] in ("countdown", "playing") and len(again["seats"]) == 2
    for api, p in ((a, alice), (b, bob)):
        call(api, "POST", f"/matches/{first['id']}/leave", p)
    wait_for_match(a, first["id"], "finished")
