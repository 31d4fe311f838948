"""A match nobody starts lapses (``MATCH_WAIT``): a room or a rematch left waiting
would otherwise hold its players, who play one match at a time, until each came
back to leave it. On a Redis of its own, so that no replica with the usual wait
polls these matches."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from tests.matches.conftest import LIMITS_OFF, TIMEOUT, call, new_match, wait_for_match
from tests.support.play import Api
from tests.support.servers import RedisServer, running_service

WAIT = 2.0


@pytest.fixture(scope="module")
def quick(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Api, Api]]:
    server = RedisServer(data_dir=str(tmp_path_factory.mktemp("lapse"))).start()
    env = {**LIMITS_OFF, "MATCH_WAIT": str(WAIT)}
    try:
        with running_service(server.url, **env) as one, running_service(server.url, **env) as two, \
                httpx.Client(base_url=one.url, timeout=TIMEOUT) as a, \
                httpx.Client(base_url=two.url, timeout=TIMEOUT) as b:
            yield Api(a), Api(b)
    finally:
        server.cleanup()


def test_a_room_nobody_starts_lapses_and_frees_its_players(quick: tuple[Api, Api]) -> None:
    a, b = quick
    alice, bob = a.register(), b.register()
    room = new_match(a, alice, seats=3, preset="beginner")
    call(b, "POST", f"/matches/{room['id']}/join", bob)
    # Seated, Bob may not seek or make another match.
    r = b.client.post("/seeks", json={"preset": "beginner"}, headers=bob.auth)
    assert r.status_code == 409 and r.json()["match_id"] == room["id"], r.text

    over = wait_for_match(b, room["id"], "finished", timeout=WAIT + 30)
    assert not over["rated"] and over["starts_at"] is None, over
    assert over["ended_at"] is not None
    # Free again, and nobody's recent list holds a match nobody played.
    for api, p in ((a, alice), (b, bob)):
        again = new_match(api, p, preset="beginner")
        call(api, "POST", f"/matches/{again['id']}/leave", p)
        assert all(r["id"] != room["id"] for r in api.player(p.id)["recent"])


def test_a_started_match_does_not_lapse(quick: tuple[Api, Api]) -> None:
    a, b = quick
    alice, bob = a.register(), b.register()
    match = new_match(a, alice, seats=2, preset="beginner", time_limit_s=6)
    call(b, "POST", f"/matches/{match['id']}/join", bob)
    over = wait_for_match(a, match["id"], "finished", timeout=40)
    # It ran to its time limit, and rated what was played.
    assert over["rated"] and over["starts_at"] is not None, over
    assert {s["status"] for s in over["seats"]} == {"lost"}, over


def test_a_rematch_nobody_else_takes_lapses(quick: tuple[Api, Api]) -> None:
    a, b = quick
    alice, bob = a.register(), b.register()
    match = new_match(a, alice, seats=2, preset="beginner")
    call(b, "POST", f"/matches/{match['id']}/join", bob)
    for p in (alice, bob):
        call(a, "POST", f"/matches/{match['id']}/leave", p)
    wait_for_match(a, match["id"], "finished")
    asked = a.client.post(f"/matches/{match['id']}/rematch", headers=alice.auth)
    assert asked.status_code == 201, asked.text
    rematch = asked.json()["match"]
    assert rematch["status"] == "waiting"
    over = wait_for_match(b, rematch["id"], "finished", timeout=WAIT + 30)
    assert not over["rated"], over
    call(a, "POST", f"/matches/{new_match(a, alice)['id']}/leave", alice)
