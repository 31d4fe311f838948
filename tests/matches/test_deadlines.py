"""The service ends a match nobody touches at its time limit, once, and rates it once."""

from __future__ import annotations

import time

import msgspec
import redis

from service import wire
from service.store import keys
from tests.matches.conftest import Seat, call, new_match, wait_for_match
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
