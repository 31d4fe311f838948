"""The service ends a match nobody touches at its time limit, once, and rates it once."""

from __future__ import annotations

import time

import msgspec
import redis

from service import wire
from service.store import MatchState, keys
from tests.matches.conftest import (
    Seat,
    call,
    mines_of,
    new_match,
    play_to_win,
    wait_for_match,
    wait_until_started,
)
from tests.support.play import Api


def test_a_match_nobody_touches_ends_on_time_and_is_rated_once(
    clients: tuple[Api, Api], store: redis.Redis
) -> None:
    a, b = clients
    alice, bob, carol = a.register(), b.register(), b.register()
    match = new_match(a, alice, seats=3, time_limit_s=5)
    call(b, "POST", f"/matches/{match['id']}/join", bob)
    refused = call(b, "POST", f"/matches/{match['id']}/start", bob, expect=403)
    assert refused["code"] == "forbidden"
    started = call(a, "POST", f"/matches/{match['id']}/start", alice)
    assert started["status"] == "countdown"
    late = call(b, "POST", f"/matches/{match['id']}/join", carol, expect=409)
    assert late["code"] == "match_started"
    game_id = started["seats"][0]["game_id"]

    # Nobody moves and nobody asks: both replicas' pollers race to end it.
    end = wait_for_match(b, match["id"], "finished", timeout=60)
    assert wire.milliseconds(end["ended_at"]) >= wire.milliseconds(end["ends_at"])
    assert [s["status"] for s in end["seats"]] == ["lost", "lost"]
    assert [s["place"] for s in end["seats"]] == [1, 1]
    # A second poll round passes: still one end, one rating.
    time.sleep(1)
    entries = store.xrange(keys.match_events(match["id"]))
    changes = [msgspec.json.decode(fields[b"d"])["change"] for _, fields in entries]
    assert changes.count("ended") == 1
    assert changes.count("started") == 1
    for seat in end["seats"]:
        assert a.player(seat["player"]["id"])["ratings"]["race"]["games"] == 1
        # Two seats sharing first place: the ratings' means barely move.
        assert abs(seat["rating_after"] - seat["rating_before"]) < 1
    assert not store.zscore(keys.match_deadlines(), match["id"])
    over = Seat(a, alice, game_id).move("reveal", 0, 0, expect=409)
    assert over["code"] == "game_over"


def test_a_win_the_match_had_not_counted_when_time_ran_out_still_wins(
    clients: tuple[Api, Api], store: redis.Redis
) -> None:
    """A seat's winning move commits on its game; the match's count of it comes in a
    second commit, which the time limit may beat (or a replica's end may cut short).
    The service ends the match on the seats' games as they stand, not on its counts."""
    a, b = clients
    alice, bob = a.register(), b.register()
    match = new_match(a, alice, seats=2, time_limit_s=5)
    call(b, "POST", f"/matches/{match['id']}/join", bob)
    view = call(a, "GET", f"/matches/{match['id']}", alice)
    seat = next(i for i, s in enumerate(view["seats"]) if s["player"]["id"] == alice.id)
    alice_game = view["seats"][seat]["game_id"]
    wait_until_started(a, view)
    assert play_to_win(Seat(a, alice, alice_game), mines_of(store, alice_game))["status"] == "won"
    won = call(a, "GET", f"/matches/{match['id']}")["seats"][seat]
    assert won["status"] == "won"

    # The match as it would be had the count of the win not landed.
    key = keys.match(match["id"])
    state = msgspec.msgpack.decode(store.hget(key, "snap"), type=MatchState)  # type: ignore[arg-type]
    uncounted = msgspec.structs.replace(
        state.seats[seat], status="playing", time_ms=None, counted=0, bbbv_done=0
    )
    seats = (*state.seats[:seat], uncounted, *state.seats[seat + 1:])
    store.hset(key, "snap", msgspec.msgpack.encode(msgspec.structs.replace(state, seats=seats)))

    end = wait_for_match(b, match["id"], "finished", timeout=60)
    mine, other = end["seats"][seat], end["seats"][1 - seat]
    assert (mine["status"], mine["place"], mine["time_ms"]) == ("won", 1, won["time_ms"])
    assert (other["status"], other["place"]) == ("lost", 2)
    assert mine["rating_after"] > mine["rating_before"]


def test_an_end_its_replica_left_unsettled_is_settled_by_the_poller_once(
    clients: tuple[Api, Api], store: redis.Redis
) -> None:
    """The replica that ended a match died before listing it in its players' recent
    games (here: Bob's entry taken out, the match put back among the deadlines, as if
    never done). A poller finishes the work: Bob's entry is back, Alice's not twice."""
    a, b = clients
    alice, bob = a.register(), b.register()
    match = new_match(a, alice, seats=2)
    call(b, "POST", f"/matches/{match['id']}/join", bob)
    wait_until_started(a, call(a, "GET", f"/matches/{match['id']}"))
    call(a, "POST", f"/matches/{match['id']}/leave", alice)
    call(b, "POST", f"/matches/{match['id']}/leave", bob)
    wait_for_match(a, match["id"], "finished")
    listed = [(match["id"], "match")]
    for p in (alice, bob):
        assert [(r["id"], r["kind"]) for r in a.player(p)["recent"]] == listed
    store.delete(keys.player_recent(bob.id))
    store.zrem(keys.player_counted(bob.id), match["id"])
    store.zadd(keys.match_deadlines(), {match["id"]: 0})

    deadline = time.monotonic() + 30
    while store.zscore(keys.match_deadlines(), match["id"]) is not None:
        assert time.monotonic() < deadline, "the poller left the match unsettled"
        time.sleep(0.05)
    for p in (alice, bob):
        assert [(r["id"], r["kind"]) for r in b.player(p)["recent"]] == listed
    for seat in call(b, "GET", f"/matches/{match['id']}")["seats"]:
        assert b.player(seat["player"]["id"])["ratings"]["race"]["games"] == 1
