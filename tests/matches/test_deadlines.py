"""The service ends a match nobody touches at its time limit, once, and rates it once."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from urllib.parse import urlsplit

import httpx
import msgspec
import pytest
import redis
from websockets.sync.client import connect

from service import wire
from service.api import match_rules
from service.store import MatchState, keys
from tests.matches.conftest import (
    LIMITS_OFF,
    TIMEOUT,
    Seat,
    call,
    hidden_safe_cell,
    match_socket,
    mines_of,
    new_match,
    play_to_win,
    receive,
    started_race,
    wait_for_match,
    wait_until_started,
)
from tests.support.play import Api, apply_cells, neighbours, positions
from tests.support.proxy import ChaosProxy
from tests.support.servers import RedisServer, running_service


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
    # Bots: a human's win as fast as this one is held off the ratings.
    alice, bob = a.register(bot=True), b.register(bot=True)
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


def test_the_end_ends_the_games_it_left_on(
    clients: tuple[Api, Api], store: redis.Redis
) -> None:
    """Alice, who hit a mine (a penalty), is still playing at the time limit and Bob
    resigned: both games end with the match, lost, their clocks stopped at its end and
    their mines shown, once, and their views say the match ended them; whoever watches
    Alice's game is told. Each one's recent match took the time their game shows."""
    a, b = clients
    match, alice, bob, games = started_race(a, b, time_limit_s=5)
    mines = mines_of(store, games[alice.id])
    safe = hidden_safe_cell(a.view(games[alice.id])["board"], mines)
    hit = min(mines)
    Seat(a, alice, games[alice.id]).move("reveal", *hit)
    Seat(a, alice, games[alice.id]).move("reveal", *safe)
    assert a.view(games[alice.id])["ended_by"] is None
    call(b, "POST", f"/matches/{match['id']}/leave", bob)
    base = urlsplit(str(b.client.base_url)).netloc
    with connect(f"ws://{base}/games/{games[alice.id]}/events", open_timeout=30) as ws:
        end = wait_for_match(a, match["id"], "finished", timeout=60)
        deadline = time.monotonic() + 30
        message = json.loads(ws.recv(timeout=30))
        while message["type"] != "diff" or message["move"]["action"] != "end":
            assert time.monotonic() < deadline, "no diff told the watcher of the end"
            message = json.loads(ws.recv(timeout=30))
    assert message["status"] == "lost" and message["move"]["x"] is None
    assert {char for _, _, char in message["cells"]} == {"*"}

    time.sleep(1)  # another poll round: nothing ends twice
    for p, api in ((alice, a), (bob, b)):
        game = api.view(games[p.id])
        assert game["status"] == "lost", p
        assert game["ended_at"] == end["ended_at"]
        assert api.view(games[p.id])["elapsed_ms"] == game["elapsed_ms"], "the clock stopped"
        assert game["ended_by"] == "match", p
        shown = {(x, y) for y, row in enumerate(game["board"]) for x, c in enumerate(row)
                 if c in "*X"}
        assert shown == mines_of(store, games[p.id])
        replay = api.client.get(f"/games/{games[p.id]}/replay").json()
        assert replay["status"] == "lost" and replay["fatal"] is None
        assert replay["moves"][-1]["action"] == "end"
        player = api.player(p)
        stats = player["stats"]["beginner"]["no_guess"]
        assert (stats["played"], stats["won"]) == (1, 0), p
        # Out of time or resigned, the seat played until the end, as its game's clock says.
        recent = next(r for r in player["recent"] if r["id"] == match["id"])
        assert recent["elapsed_ms"] == game["elapsed_ms"] == 5000, p
    ends = [e for e in store.xrange(keys.events(games[alice.id]))
            if msgspec.json.decode(e[1][b"d"])["move"]["action"] == "end"]
    assert len(ends) == 1


def test_a_move_retried_after_the_time_limit_gets_its_first_answer(
    clients: tuple[Api, Api], store: redis.Redis
) -> None:
    """An answer lost on the way back, retried with its Idempotency-Key once the match's
    time is up, is the first answer: the move was made in time."""
    a, b = clients
    match, alice, _, games = started_race(a, b, time_limit_s=5)
    game_id = games[alice.id]
    safe = hidden_safe_cell(a.view(game_id)["board"], mines_of(store, game_id))
    headers = {**alice.auth, "Idempotency-Key": "last-move"}
    first = a.client.post(f"/games/{game_id}/reveal", json={"x": safe[0], "y": safe[1]},
                          headers=headers)
    assert first.status_code == 200, first.text
    wait_for_match(b, match["id"], "finished", timeout=60)
    again = b.client.post(f"/games/{game_id}/reveal", json={"x": safe[0], "y": safe[1]},
                          headers=headers)
    assert again.status_code == 200, again.text
    assert again.content == first.content
    late = b.client.post(f"/games/{game_id}/reveal", json={"x": safe[0], "y": safe[1]},
                         headers={**alice.auth, "Idempotency-Key": "too-late"})
    assert late.status_code == 409 and late.json()["code"] == "game_over", late.text


def test_a_rated_race_every_seat_leaves_in_the_countdown_rates_nobody(
    clients: tuple[Api, Api],
) -> None:
    """Nobody played: the match is over before it started, rated for nobody, and its
    games end as they would have started, not before."""
    a, b = clients
    alice, bob = a.register(), b.register()
    match = new_match(a, alice, seats=2, rated=True)
    started = call(b, "POST", f"/matches/{match['id']}/join", bob)
    assert started["status"] == "countdown" and started["rated"]
    games = {}
    for api, p in ((a, alice), (b, bob)):
        view = call(api, "GET", f"/matches/{match['id']}", p)
        games[p.id] = next(s["game_id"] for s in view["seats"] if s["player"]["id"] == p.id)
    call(a, "POST", f"/matches/{match['id']}/leave", alice)
    call(b, "POST", f"/matches/{match['id']}/leave", bob)
    end = wait_for_match(a, match["id"], "finished")
    assert end["rated"] is False
    assert all(s["rating_after"] is None for s in end["seats"])
    for p in (alice, bob):
        assert "race" not in a.player(p)["ratings"], "a rating from a match nobody played"
        deadline = time.monotonic() + 30
        while (game := b.view(games[p.id]))["status"] != "lost":
            assert time.monotonic() < deadline, "the end left the game on"
            time.sleep(0.05)
        assert game["ended_at"] >= game["started_at"] and game["elapsed_ms"] == 0


def test_a_match_out_of_time_ends_at_its_time_limit_not_when_polled(
    clients: tuple[Api, Api], store: redis.Redis
) -> None:
    """However late the poll that finds it due, the match ends at ``ends_at``: its games,
    one moved on and one never touched, stop at the time limit, to the millisecond."""
    a, b = clients
    match, alice, bob, games = started_race(a, b, time_limit_s=5)
    mines = mines_of(store, games[alice.id])
    safe = hidden_safe_cell(a.view(games[alice.id])["board"], mines)
    assert Seat(a, alice, games[alice.id]).move("reveal", *safe)["status"] == "playing"

    end = wait_for_match(b, match["id"], "finished", timeout=60)
    assert end["ended_at"] == end["ends_at"]
    assert wire.milliseconds(end["ends_at"]) - wire.milliseconds(end["starts_at"]) == 5000
    assert [s["status"] for s in end["seats"]] == ["lost", "lost"]
    for p, api in ((alice, a), (bob, b)):
        game = api.view(games[p.id])
        assert game["status"] == "lost", p
        assert game["ended_at"] == end["ends_at"], p
        assert game["elapsed_ms"] == 5000, p


def test_a_resignation_after_the_time_limit_changes_nothing(
    clients: tuple[Api, Api], store: redis.Redis
) -> None:
    """Alice, ahead on 3BV, resigns once the time is up but before a poll has ended the
    match (here: no poll comes until the test lets it). Like a move then, the
    resignation is refused: the match ends as it stood at its time limit, Alice first."""
    a, b = clients
    match, alice, bob, games = started_race(a, b, time_limit_s=5)
    mines = mines_of(store, games[alice.id])
    seat = Seat(a, alice, games[alice.id])
    # A cell at the edge of an opening not yet open adds no 3BV: she reveals until ahead.
    for _ in range(10):
        safe = hidden_safe_cell(a.view(games[alice.id])["board"], mines)
        assert seat.move("reveal", *safe)["status"] == "playing"
        seats = call(a, "GET", f"/matches/{match['id']}")["seats"]
        done = {s["player"]["id"]: s["progress"]["bbbv_done"] for s in seats}
        if done[alice.id] > done[bob.id]:
            break
    assert done[alice.id] > done[bob.id], done
    playing = wait_for_match(a, match["id"], "playing")
    ends = wire.milliseconds(playing["ends_at"])
    deadline = time.monotonic() + 30
    while store.zscore(keys.match_deadlines(), match["id"]) != ends + match_rules.SETTLE_MS:
        assert time.monotonic() < deadline, "the match's end was never put on the deadlines"
        time.sleep(0.01)
    store.zrem(keys.match_deadlines(), match["id"])
    try:
        wait_until_started(a, playing, "ends_at")
        late = call(b, "POST", f"/matches/{match['id']}/leave", alice, expect=409)
        assert late["code"] == "game_over", late
        assert call(a, "GET", f"/matches/{match['id']}")["seats"][0]["status"] == "playing"
    finally:
        store.zadd(keys.match_deadlines(), {match["id"]: 0})

    end = wait_for_match(a, match["id"], "finished", timeout=60)
    assert end["ended_at"] == end["ends_at"]
    by_id = {s["player"]["id"]: s for s in end["seats"]}
    assert (by_id[alice.id]["status"], by_id[alice.id]["place"]) == ("lost", 1)
    assert (by_id[bob.id]["status"], by_id[bob.id]["place"]) == ("lost", 2)
    assert by_id[alice.id]["rating_after"] > by_id[alice.id]["rating_before"]


def test_the_first_move_after_the_countdown_comes_after_the_start_on_the_socket(
    clients: tuple[Api, Api], store: redis.Redis
) -> None:
    """Alice moves as soon as the countdown is over, before any poll has marked the start
    (here: none comes until the test lets it). Those watching the match hear that it
    started first, then of her progress, which shows it playing."""
    a, b = clients
    alice, bob = a.register(), b.register()
    match = new_match(a, alice, seats=2, time_limit_s=5)
    started = call(b, "POST", f"/matches/{match['id']}/join", bob)
    assert started["status"] == "countdown"
    store.zrem(keys.match_deadlines(), match["id"])
    try:
        game_id = call(a, "GET", f"/matches/{match['id']}", alice)["seats"][0]["game_id"]
        safe = hidden_safe_cell(a.view(game_id)["board"], mines_of(store, game_id))
        with match_socket(b, match["id"], since=started["version"]) as ws:
            wait_until_started(a, started)
            assert Seat(a, alice, game_id).move("reveal", *safe)["status"] == "playing"
            deadline = time.monotonic() + 10
            updates = [receive(ws, within=10)]
            while updates[-1]["change"] != "progress":
                updates.append(receive(ws, within=max(0.0, deadline - time.monotonic())))
    finally:
        store.zadd(keys.match_deadlines(), {match["id"]: 0})
    assert [(u["change"], u["match"]["status"]) for u in updates] == [
        ("started", "playing"), ("progress", "playing")
    ], updates
    assert updates[1]["version"] == updates[0]["version"] + 1
    wait_for_match(a, match["id"], "finished", timeout=60)


@pytest.fixture
def held_back() -> Iterator[tuple[ChaosProxy, Api, Api, redis.Redis]]:
    """Two replicas whose Redis is behind a proxy that can hold a request back."""
    server = RedisServer().start()
    proxy = ChaosProxy(server.port).start()
    try:
        with running_service(proxy.url, **LIMITS_OFF) as one, \
                running_service(proxy.url, **LIMITS_OFF) as two, \
                httpx.Client(base_url=one.url, timeout=TIMEOUT) as a, \
                httpx.Client(base_url=two.url, timeout=TIMEOUT) as b, \
                redis.Redis(port=server.port) as store:
            yield proxy, Api(a), Api(b), store
    finally:
        proxy.stop()
        server.cleanup()


def _one_cell_short(seat: Seat, mines: set[tuple[int, int]]) -> tuple[int, int]:
    """Reveal every safe cell but one that no other reveal opens (a number with no 0
    beside it): that one, whose reveal wins."""
    board = seat.api.view(seat.game_id)["board"]
    height, width = len(board), len(board[0])

    def count(x: int, y: int) -> int:
        return sum(n in mines for n in neighbours(x, y, width, height))

    last = next(
        (x, y) for x, y in sorted(positions(board, "#") - mines)
        if count(x, y) and all(count(*n) for n in neighbours(x, y, width, height)
                               if n not in mines)
    )
    while left := positions(board, "#") - mines - {last}:
        x, y = min(left, key=lambda p: (p[1], p[0]))
        diff = seat.move("reveal", x, y)
        assert diff["status"] == "playing", diff
        board = apply_cells(board, diff["cells"])
    return last


def _server_time_reaches(api: Api, match_id: str, at: int) -> None:
    while (now := wire.milliseconds(call(api, "GET", f"/matches/{match_id}")["server_time"])) < at:
        time.sleep(max(0.005, (at - now) / 2000))


def test_a_win_checked_in_time_counts_though_its_commit_lands_after_the_time_limit(
    held_back: tuple[ChaosProxy, Api, Api, redis.Redis],
) -> None:
    """Alice's winning reveal is checked 600 ms before the time limit, and its commit
    reaches Redis 200 ms after it: the match, ended by time, waits for it, and her seat
    wins, as her game does. One held back further, past the moves' last moment, is
    refused, and her seat and game both lose."""
    proxy, a, b, store = held_back
    for before, held, won in ((600, 0.8, True), (300, 1.1, False)):
        match, alice, _, games = started_race(a, b, bots=True, time_limit_s=5)
        game_id = games[alice.id]
        seat = Seat(a, alice, game_id)
        last = _one_cell_short(seat, mines_of(store, game_id))
        ends = wire.milliseconds(wait_for_match(a, match["id"], "playing")["ends_at"])
        _server_time_reaches(a, match["id"], ends - before)
        proxy.hold_request(keys.channel(game_id).encode(), held)
        if won:
            assert seat.move("reveal", *last)["status"] == "won"
        else:
            assert seat.move("reveal", *last, expect=409)["code"] == "game_over"
        end = wait_for_match(b, match["id"], "finished", timeout=60)
        by_id = {s["player"]["id"]: s for s in end["seats"]}
        assert (by_id[alice.id]["status"], by_id[alice.id]["place"]) == (
            ("won", 1) if won else ("lost", 1)
        ), end
        assert a.view(game_id)["status"] == ("won" if won else "lost")
