"""A player sits in one unfinished match at a time, whichever replicas their requests
reach: two seeks at once pair once; seeking, joining, creating or a rematch while in
another match is refused with 409 ``already_playing`` naming it; leaving before the
start, resigning and the match's end free the player; a hold whose match never came is no hold."""

from __future__ import annotations

import concurrent.futures
import time
from typing import Any

import httpx
import redis

from service.store import keys
from tests.matches.conftest import call, new_match, wait_for_match, wait_until_started
from tests.support.play import Api, Player

# A pool of its own: no other test's seeks wait in it.
BODY = {"preset": "beginner", "no_guess": True}


def post(api: Api, path: str, player: Player, **body: Any) -> httpx.Response:
    return api.client.post(path, json=body or None, headers=player.auth)


def refused(r: httpx.Response, match_id: str) -> None:
    assert r.status_code == 409, r.text
    problem = r.json()
    assert problem["code"] == "already_playing" and problem["match_id"] == match_id, problem
    assert match_id in problem["detail"]


def matches_of(api: Api, answers: list[httpx.Response]) -> set[str]:
    """The matches the seeks answered here paired into, polled until none waits."""
    found = set()
    for r in answers:
        if r.status_code != 201:
            continue
        seek_id = r.json()["seek"]["id"]
        deadline = time.monotonic() + 30
        while True:
            s = call(api, "GET", f"/seeks/{seek_id}")
            if s["status"] != "waiting" or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        if s["status"] == "matched":
            found.add(s["match_id"])
    return found


def end(api: Api, match_id: str, *players: Player) -> None:
    for p in players:
        api.client.post(f"/matches/{match_id}/leave", headers=p.auth)
    wait_for_match(api, match_id, "finished")


def test_two_seeks_at_once_pair_a_player_once(clients: tuple[Api, Api]) -> None:
    a, b = clients
    apis = [a, b]
    players = [apis[i % 2].register() for i in range(24)]
    with concurrent.futures.ThreadPoolExecutor(16) as pool:
        sent = [(p, apis[i]) for p in players for i in (0, 1)]
        answers = list(pool.map(lambda pa: post(pa[1], "/seeks", pa[0], **BODY), sent))
    assert all(r.status_code in (201, 409) for r in answers), [r.text for r in answers]
    in_matches: dict[str, set[str]] = {}
    for i, p in enumerate(players):
        in_matches[p.id] = matches_of(a, answers[2 * i: 2 * i + 2])
    assert all(len(m) <= 1 for m in in_matches.values()), in_matches
    every = set().union(*in_matches.values())
    assert len(every) >= 8
    for match_id in every:
        view = call(b, "GET", f"/matches/{match_id}")
        assert len({s["player"]["id"] for s in view["seats"]}) == 2
    # Whoever did not pair cancels; the races end, and frees everybody.
    for (p, _), r in zip(sent, answers, strict=True):
        if r.status_code == 201:
            a.client.delete(f"/seeks/{r.json()['seek']['id']}", headers=p.auth)
    for match_id in every:
        view = call(a, "GET", f"/matches/{match_id}")
        ids = {s["player"]["id"] for s in view["seats"]}
        end(a, match_id, *(p for p in players if p.id in ids))


def test_a_waiting_match_holds_its_player(clients: tuple[Api, Api]) -> None:
    a, b = clients
    alice, bob, carol = a.register(), b.register(), a.register()
    mine = new_match(a, alice, seats=3)["id"]
    other = new_match(b, bob, seats=3)["id"]
    refused(post(b, "/seeks", alice, **BODY), mine)
    refused(post(b, f"/matches/{other}/join", alice), mine)
    refused(post(a, "/matches", alice, mode="race", preset="beginner"), mine)
    # Nobody else is held by it; a join that is refused for that match says so first.
    call(a, "POST", f"/matches/{mine}/join", carol)
    r = post(b, f"/matches/{mine}/join", alice)
    assert r.status_code == 409 and r.json()["code"] == "already_seated", r.text
    # Leaving before the start frees the player at once, through either replica.
    call(b, "POST", f"/matches/{mine}/leave", alice)
    joined = call(a, "POST", f"/matches/{other}/join", alice)
    assert alice.id in {s["player"]["id"] for s in joined["seats"]}
    refused(post(a, "/seeks", alice, **BODY), other)
    refused(post(b, f"/matches/{mine}/join", alice), other)
    call(b, "POST", f"/matches/{other}/leave", alice)
    seek = call(a, "POST", "/seeks", alice, expect=201, **BODY)["seek"]
    call(b, "DELETE", f"/seeks/{seek['id']}", alice)
    for match_id, p in ((mine, carol), (other, bob)):
        call(a, "POST", f"/matches/{match_id}/leave", p)


def test_one_player_joining_three_matches_at_once_sits_in_one(clients: tuple[Api, Api]) -> None:
    a, b = clients
    apis = [a, b, a]
    for _ in range(4):
        joiner = a.register()
        creators = [b.register() for _ in range(3)]
        ids = [new_match(apis[i], c, seats=2)["id"] for i, c in enumerate(creators)]
        with concurrent.futures.ThreadPoolExecutor(3) as pool:
            paths = [f"/matches/{match_id}/join" for match_id in ids]
            answers = list(pool.map(post, apis, paths, [joiner] * 3))
        won = [ids[i] for i, r in enumerate(answers) if r.status_code == 200]
        assert len(won) == 1, [r.text for r in answers]
        for i, r in enumerate(answers):
            if ids[i] != won[0]:
                refused(r, won[0])
                assert call(a, "GET", f"/matches/{ids[i]}")["status"] == "waiting"
        # It filled, and counts down: still holding the player.
        assert call(b, "GET", f"/matches/{won[0]}")["status"] in ("countdown", "playing")
        refused(post(b, "/seeks", joiner, **BODY), won[0])
        creator = creators[ids.index(won[0])]
        end(a, won[0], joiner, creator)
        # Over: free again.
        seek = call(b, "POST", "/seeks", joiner, expect=201, **BODY)["seek"]
        call(a, "DELETE", f"/seeks/{seek['id']}", joiner)
        for i, c in enumerate(creators):
            if ids[i] != won[0]:
                call(a, "POST", f"/matches/{ids[i]}/leave", c)


def test_a_paired_player_is_held_by_the_race(clients: tuple[Api, Api]) -> None:
    a, b = clients
    alice, bob, waiting = a.register(), b.register(), b.register()
    first = call(a, "POST", "/seeks", alice, expect=201, **BODY)["seek"]
    second = call(b, "POST", "/seeks", bob, expect=201, **BODY)["seek"]
    match_id = second["match_id"] or call(a, "GET", f"/seeks/{first['id']}")["match_id"]
    assert match_id
    open_match = new_match(a, waiting, seats=2)["id"]
    refused(post(b, "/seeks", alice, **BODY), match_id)
    refused(post(a, f"/matches/{open_match}/join", bob), match_id)
    end(b, match_id, alice, bob)
    call(b, "POST", f"/matches/{open_match}/join", bob)
    end(a, open_match, bob, waiting)


def test_a_seat_that_resigned_frees_its_player_while_the_others_play_on(
    clients: tuple[Api, Api],
) -> None:
    a, b = clients
    alice, bob, cy = a.register(), b.register(), a.register()
    race = new_match(a, alice, seats=3)["id"]
    call(b, "POST", f"/matches/{race}/join", bob)
    started = call(a, "POST", f"/matches/{race}/join", cy)
    wait_until_started(a, started)
    refused(post(b, "/matches", alice, mode="race", preset="beginner"), race)
    call(b, "POST", f"/matches/{race}/leave", alice)
    view = call(a, "GET", f"/matches/{race}")
    assert view["status"] == "playing"
    assert [s["status"] for s in view["seats"]] == ["resigned", "playing", "playing"]
    # Alice has nothing left to play there: she may start another match, Bob may not.
    other = new_match(b, alice, seats=2)["id"]
    refused(post(a, f"/matches/{other}/join", bob), race)
    end(a, race, bob, cy)
    end(b, other, alice)


def test_a_hold_whose_match_never_came_holds_nobody(
    clients: tuple[Api, Api], store: redis.Redis
) -> None:
    """A replica that died between holding a player and seating them."""
    a, b = clients
    alice = a.register()
    store.set(keys.player_seat(alice.id), f"{'0' * 32} 1", px=60_000)
    match_id = new_match(b, alice, seats=2)["id"]
    # The hold of a started match lasts until a while after its time limit, no longer.
    bob = a.register()
    call(a, "POST", f"/matches/{match_id}/join", bob)
    ttl = store.pttl(keys.player_seat(alice.id))
    assert 0 < ttl <= (3 + 600 + 60) * 1000
    end(a, match_id, alice, bob)
    assert store.get(keys.player_seat(alice.id)) is None
    assert store.get(keys.player_seat(bob.id)) is None
