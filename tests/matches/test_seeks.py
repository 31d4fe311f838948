"""Matchmaking through two replicas: 200 seekers become 100 races, nobody twice; a
cancelled or expired seek never pairs; bots pair only with bots; the player's socket
hears of the pair, and does for a client that only listens what a poll does."""

from __future__ import annotations

import concurrent.futures
import contextlib
import json
import secrets
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import redis
from websockets.sync.client import ClientConnection, connect

from service.store import keys
from tests.matches.conftest import SEEK_EXPIRY, call
from tests.support.play import Api, Player


def seek(api: Api, player: Player, **body: Any) -> dict[str, Any]:
    found: dict[str, Any] = call(api, "POST", "/seeks", player, expect=201, **body)["seek"]
    return found


def poll_until_matched(api: Api, seek_id: str, timeout: float = 60) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        found = call(api, "GET", f"/seeks/{seek_id}")
        if found["status"] != "waiting" or time.monotonic() > deadline:
            return found
        time.sleep(0.1)


def test_two_hundred_seekers_become_one_hundred_races(clients: tuple[Api, Api]) -> None:
    apis = list(clients)
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        players = list(pool.map(lambda i: apis[i % 2].register(), range(200)))
        body = {"preset": "beginner", "no_guess": False}
        seeks = list(pool.map(lambda i: seek(apis[i % 2], players[i], **body), range(200)))
        done = list(pool.map(lambda i: poll_until_matched(apis[i % 2], seeks[i]["id"]), range(200)))
    assert all(s["status"] == "matched" for s in done), done
    by_match: dict[str, list[str]] = {}
    for player, found in zip(players, done, strict=True):
        by_match.setdefault(found["match_id"], []).append(player.id)
    assert len(by_match) == 100
    assert all(len(ids) == 2 for ids in by_match.values())
    for match_id, ids in list(by_match.items())[:10]:
        view = call(apis[0], "GET", f"/matches/{match_id}")
        assert sorted(s["player"]["id"] for s in view["seats"]) == sorted(ids)
        assert view["rated"] and view["mode"] == "race" and view["status"] != "waiting"


def test_cancelled_and_expired_seeks_never_pair(clients: tuple[Api, Api]) -> None:
    a, b = clients
    body = {"preset": "intermediate", "no_guess": False}
    cancelled_player, expired_player, late = a.register(), b.register(), a.register()
    cancelled = seek(a, cancelled_player, **body)
    gone = call(b, "DELETE", f"/seeks/{cancelled['id']}", cancelled_player)
    assert gone["status"] == "cancelled"
    expired = seek(b, expired_player, **body)
    assert expired["status"] == "waiting"
    time.sleep(SEEK_EXPIRY + 1)  # nobody polls it, and its player has no socket open
    fresh = seek(a, late, **body)
    assert fresh["status"] == "waiting"
    assert call(a, "GET", f"/seeks/{expired['id']}")["status"] == "expired"
    assert call(b, "GET", f"/seeks/{cancelled['id']}")["status"] == "cancelled"
    assert call(b, "DELETE", f"/seeks/{fresh['id']}", late)["status"] == "cancelled"


def test_bots_pair_only_with_bots(clients: tuple[Api, Api]) -> None:
    a, b = clients
    body = {"preset": "expert", "no_guess": False}
    bot, human, other_bot = a.register(bot=True), b.register(), b.register(bot=True)
    first = seek(a, bot, **body)
    person = seek(b, human, **body)
    assert person["status"] == "waiting"
    second = seek(b, other_bot, **body)
    assert second["status"] == "matched"
    assert call(a, "GET", f"/seeks/{first['id']}")["match_id"] == second["match_id"]
    assert call(a, "GET", f"/seeks/{person['id']}")["status"] == "waiting"
    call(b, "DELETE", f"/seeks/{person['id']}", human)


def test_the_players_socket_hears_of_the_pair(clients: tuple[Api, Api]) -> None:
    a, b = clients
    body = {"preset": "expert", "no_guess": True}
    alice, bob = a.register(), b.register()
    url = f"ws://{urlsplit(str(a.client.base_url)).netloc}/players/me/events"
    with connect(url, open_timeout=30) as ws:
        ws.send(json.dumps({"type": "auth", "token": alice.token}))
        assert json.loads(ws.recv(timeout=30))["type"] == "player"
        mine = seek(a, alice, **body)
        # The open socket keeps the seek alive although nobody polls it.
        time.sleep(SEEK_EXPIRY + 1)
        theirs = seek(b, bob, **body)
        assert theirs["status"] == "matched"
        while (message := json.loads(ws.recv(timeout=30)))["type"] != "matched":
            pass
        assert message == {"type": "matched", "match_id": theirs["match_id"]}
    assert call(a, "GET", f"/seeks/{mine['id']}")["match_id"] == theirs["match_id"]


def test_a_new_seek_replaces_the_players_waiting_one(clients: tuple[Api, Api]) -> None:
    a, b = clients
    body = {"preset": "expert", "no_guess": True}
    alice, bob = a.register(), b.register()
    first = seek(a, alice, **body)
    second = seek(b, alice, preset="intermediate", no_guess=True)
    assert call(a, "GET", f"/seeks/{first['id']}")["status"] == "cancelled"
    # Bob seeks what Alice first asked for: her cancelled seek does not take him.
    waiting = seek(b, bob, **body)
    assert waiting["status"] == "waiting"
    call(a, "DELETE", f"/seeks/{second['id']}", alice)
    call(b, "DELETE", f"/seeks/{waiting['id']}", bob)


def test_two_seeks_of_one_player_sent_at_once_pair_once(
    clients: tuple[Api, Api], store: redis.Redis
) -> None:
    """Two seeks of one player, sent at the same moment through two replicas, may both
    be waiting (each replaced no seek: neither was there yet). Only the player's latest
    pairs; the other is cancelled, so no player is paired twice."""
    a, b = clients
    body = {"preset": "expert", "no_guess": True}
    player, first_rival, second_rival = a.register(), b.register(), a.register()
    earlier = seek(a, player, **body)
    # The second seek as the other replica's create leaves it: the earlier one not
    # cancelled, the player's latest seek this one.
    later = secrets.token_hex(16)
    fields = store.hgetall(keys.seek(earlier["id"]))
    pool = fields[b"pool"].decode()
    store.hset(keys.seek(later), mapping=fields)  # type: ignore[arg-type]
    store.zadd(keys.seek_pool(pool), {later: float(fields[b"rating"])})
    store.set(keys.player_seek(player.id), later)

    paired = seek(b, first_rival, **body)
    assert paired["status"] == "matched", paired
    assert call(a, "GET", f"/seeks/{later}")["match_id"] == paired["match_id"]
    assert call(b, "GET", f"/seeks/{earlier['id']}")["status"] == "cancelled"
    alone = seek(a, second_rival, **body)
    assert alone["status"] == "waiting", alone
    assert call(a, "DELETE", f"/seeks/{alone['id']}", second_rival)["status"] == "cancelled"


def test_a_pair_whose_match_was_never_made_gets_it_from_a_poll(
    clients: tuple[Api, Api], store: redis.Redis
) -> None:
    """The replica that pairs two seeks makes their match next; should it die in
    between, the seeks say "matched" with a match nobody made (here: the match taken
    out of Redis, the pair made long ago). A poll of either seek makes it, once."""
    a, b = clients
    body = {"preset": "expert", "no_guess": False}
    first, second = a.register(), b.register()
    waiting = seek(a, first, **body)
    paired = seek(b, second, **body)
    assert paired["status"] == "matched"
    match_id = paired["match_id"]
    store.delete(keys.match(match_id), keys.match_events(match_id))
    store.zrem(keys.match_deadlines(), match_id)
    for seek_id in (waiting["id"], paired["id"]):
        store.hset(keys.seek(seek_id), "paired", 0)
    assert a.client.get(f"/matches/{match_id}").status_code == 404

    assert call(b, "GET", f"/seeks/{waiting['id']}")["match_id"] == match_id
    made = call(a, "GET", f"/matches/{match_id}")
    assert [s["player"]["id"] for s in made["seats"]] == [first.id, second.id]
    assert made["status"] in ("countdown", "playing") and made["rated"]
    call(a, "GET", f"/seeks/{paired['id']}")
    assert call(b, "GET", f"/matches/{match_id}")["version"] == made["version"]


@contextlib.contextmanager
def player_socket(api: Api, player: Player) -> Iterator[ClientConnection]:
    url = f"ws://{urlsplit(str(api.client.base_url)).netloc}/players/me/events"
    with connect(url, open_timeout=30) as ws:
        ws.send(json.dumps({"type": "auth", "token": player.token}))
        assert json.loads(ws.recv(timeout=30))["type"] == "player"
        yield ws


def hear_matched(ws: ClientConnection, timeout: float = 30) -> str:
    deadline = time.monotonic() + timeout
    while True:
        message = json.loads(ws.recv(timeout=deadline - time.monotonic()))
        if message["type"] == "matched":
            break
    match_id: str = message["match_id"]
    return match_id


def test_seekers_who_only_listen_pair_as_their_reach_widens(
    clients: tuple[Api, Api], store: redis.Redis
) -> None:
    """Two seeks 250 rating points apart are out of each other's first reach; nobody
    polls either, yet their open sockets pair them once the reach has widened."""
    a, b = clients
    body = {"preset": "beginner", "no_guess": False}
    alice, bob = a.register(), b.register()
    with player_socket(a, alice) as alice_ws, player_socket(b, bob) as bob_ws:
        hers = seek(a, alice, **body)
        rating = float(store.hget(keys.seek(hers["id"]), "rating") or 0) + 250
        pool = store.hget(keys.seek(hers["id"]), "pool").decode()  # type: ignore[union-attr]
        store.hset(keys.seek(hers["id"]), "rating", rating)
        store.zadd(keys.seek_pool(pool), {hers["id"]: rating})
        his = seek(b, bob, **body)
        assert his["status"] == "waiting", his
        match_id = hear_matched(alice_ws)
        assert hear_matched(bob_ws) == match_id
    match = call(a, "GET", f"/matches/{match_id}")
    assert {s["player"]["id"] for s in match["seats"]} == {alice.id, bob.id}
    assert match["status"] in ("countdown", "playing")


def test_a_listening_seeker_gets_the_match_a_dead_replica_never_made(
    clients: tuple[Api, Api], store: redis.Redis
) -> None:
    """As a poll does (above), an open socket makes the match of a pair whose replica
    died before making it, and tells its player."""
    a, b = clients
    body = {"preset": "beginner", "no_guess": False}
    first, second = a.register(), b.register()
    waiting = seek(a, first, **body)
    # The pair as a replica that dies at once leaves it: matched, with no match made.
    pool = store.hget(keys.seek(waiting["id"]), "pool").decode()  # type: ignore[union-attr]
    match_id = secrets.token_hex(16)
    store.hset(keys.seek(waiting["id"]), mapping={
        "status": "matched", "match": match_id, "players": f"{first.id} {second.id}",
        "paired": 0,
    })
    store.zrem(keys.seek_pool(pool), waiting["id"])
    assert a.client.get(f"/matches/{match_id}").status_code == 404
    with player_socket(b, first) as ws:
        assert hear_matched(ws) == match_id
    made = call(a, "GET", f"/matches/{match_id}")
    assert [s["player"]["id"] for s in made["seats"]] == [first.id, second.id]
    assert made["status"] in ("countdown", "playing") and made["rated"]


def test_a_socket_opened_after_the_pair_hears_of_it(clients: tuple[Api, Api]) -> None:
    """The notice went out before the socket was there (or while it was down): the
    socket tells of the pair when it opens, while its player still plays the match."""
    a, b = clients
    body = {"preset": "beginner", "no_guess": False}
    first, second = a.register(), b.register()
    seek(a, first, **body)
    paired = seek(b, second, **body)
    assert paired["status"] == "matched", paired
    with player_socket(b, first) as ws:
        assert hear_matched(ws) == paired["match_id"]
    call(a, "POST", f"/matches/{paired['match_id']}/leave", first)
    with player_socket(a, first) as ws:
        # The notice would come at once, before the first heartbeat of quiet.
        while (message := json.loads(ws.recv(timeout=30)))["type"] != "heartbeat":
            assert message["type"] != "matched", message


def _reads_of(store: redis.Redis, key: str, seconds: float) -> int:
    """How many commands naming ``key`` Redis runs in the next ``seconds``."""
    where = store.connection_pool.connection_kwargs
    with redis.Redis(host=where["host"], port=where["port"], socket_timeout=0.2) as r, \
            r.monitor() as monitor:
        count = 0
        until = time.monotonic() + seconds
        while time.monotonic() < until:
            try:
                command = monitor.next_command()
            except redis.TimeoutError:
                continue
            count += key in command["command"]
        return count


def test_an_idle_socket_reads_nothing_until_its_player_seeks(
    clients: tuple[Api, Api], store: redis.Redis
) -> None:
    """An open player socket with no seek to move on asks Redis nothing; a seek its
    player makes through the other replica wakes it, it moves the seek on and keeps it
    alive, and the word that woke it is not the client's."""
    a, b = clients
    alice = a.register()
    key = keys.player_seek(alice.id)
    with player_socket(a, alice) as ws:
        time.sleep(0.5)  # its first look, at the open
        assert _reads_of(store, key, 2.5) == 0
        mine = seek(b, alice, preset="beginner", no_guess=False)
        assert _reads_of(store, key, 2.5) >= 2
        time.sleep(SEEK_EXPIRY + 1)
        assert call(a, "GET", f"/seeks/{mine['id']}")["status"] == "waiting"
        heard = set()
        until = time.monotonic() + 2.5
        while (left := until - time.monotonic()) > 0:
            with contextlib.suppress(TimeoutError):
                heard.add(json.loads(ws.recv(timeout=left))["type"])
        assert heard == {"heartbeat"}, heard
    call(a, "DELETE", f"/seeks/{mine['id']}", alice)
