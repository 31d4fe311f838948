"""Races across two replicas: identical boards, the countdown, penalties, places and
ratings applied once."""

from __future__ import annotations

import concurrent.futures
import contextlib
import json
import threading
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import httpx
import redis
from websockets.sync.client import ClientConnection, connect

from service import wire
from service.store import keys
from tests.matches.conftest import (
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
from tests.support.play import Api, Player


def seats_of(apis: list[Api], players: list[Player], match_id: str) -> list[Seat]:
    """Each player's seat, with the game id only that player is shown."""
    out = []
    for i, player in enumerate(players):
        api = apis[i % len(apis)]
        view = call(api, "GET", f"/matches/{match_id}", player)
        own = [s["game_id"] for s in view["seats"] if s["player"]["id"] == player.id]
        others = [s["game_id"] for s in view["seats"] if s["player"]["id"] != player.id]
        assert own[0] is not None and others and all(g is None for g in others), view
        out.append(Seat(api, player, own[0]))
    return out


def replay_layouts(api: Api, game_ids: list[str]) -> list[tuple[Any, Any]]:
    out = []
    for gid in game_ids:
        r = api.client.get(f"/games/{gid}/replay")
        assert r.status_code == 200, r.text
        replay = r.json()
        out.append((replay["layout"], replay["opened"]))
    return out


def test_two_seat_race_across_replicas(clients: tuple[Api, Api], store: redis.Redis) -> None:
    a, b = clients
    # Bots: they win as fast as HTTP goes, which would hold a human's win off the
    # ratings (a test of its own, below).
    alice, bob = a.register(bot=True), b.register(bot=True)
    match = new_match(a, alice, seats=2)
    assert match["status"] == "waiting" and match["rated"] and match["on_mine"] == "penalty"
    assert [s["player"]["id"] for s in match["seats"]] == [alice.id]
    call(b, "POST", f"/matches/{match['id']}/join", bob)
    again = call(a, "POST", f"/matches/{match['id']}/join", alice, expect=409)
    assert again["code"] == "already_seated"
    carol = b.register(bot=True)
    full = call(b, "POST", f"/matches/{match['id']}/join", carol, expect=409)
    assert full["code"] == "match_started"

    # Full: the match started by itself; the boards exist and the countdown runs.
    view = call(a, "GET", f"/matches/{match['id']}")
    assert view["status"] == "countdown" and view["starts_at"] is not None
    assert all(s["game_id"] is None for s in view["seats"]), "a spectator sees no game id"
    # The opened start counts in every seat's progress from the countdown on.
    assert len({s["progress"]["bbbv_done"] for s in view["seats"]}) == 1
    assert view["seats"][0]["progress"]["bbbv_done"] >= 1
    one, two = seats_of([a, b], [alice, bob], match["id"])
    early = one.move("reveal", 0, 0, expect=409)
    assert early["code"] == "not_started"
    reset = call(a, "POST", f"/games/{one.game_id}/reset", alice, expect=409)
    assert reset["code"] == "match_started"
    assert mines_of(store, one.game_id) == mines_of(store, two.game_id)
    assert a.view(one.game_id)["board"] == b.view(two.game_id)["board"]

    wait_until_started(a, view)
    mines = mines_of(store, one.game_id)
    # Alice pays two penalties and wins first; Bob wins after her, without one.
    last = play_to_win(one, mines, blunders=2)
    assert last["status"] == "won"
    last = play_to_win(two, mines)
    assert last["status"] == "won"

    end = wait_for_match(a, match["id"], "finished")
    by_id = {s["player"]["id"]: s for s in end["seats"]}
    assert by_id[alice.id]["penalties"] == 2 and by_id[bob.id]["penalties"] == 0
    assert by_id[alice.id]["status"] == by_id[bob.id]["status"] == "won"
    # Penalties count 5 s each: Alice's time is at least 10 s however fast she played.
    assert by_id[alice.id]["time_ms"] >= 10_000
    order = sorted(end["seats"], key=lambda s: s["time_ms"])
    assert [s["place"] for s in order] == [1, 2]
    # After the end every seat's game is public, and the replays show one board.
    game_ids = [s["game_id"] for s in end["seats"]]
    assert None not in game_ids
    layouts = replay_layouts(b, game_ids)
    assert layouts[0] == layouts[1]
    # Every seat's game clock started at the match's published start, and a seat's time
    # is its game's time with 5 s a penalty.
    for seat in end["seats"]:
        game = b.view(seat["game_id"])
        assert game["started_at"] == end["starts_at"]
        assert seat["time_ms"] == game["elapsed_ms"] + 5000 * seat["penalties"]

    winner, loser = order[0], order[1]
    assert winner["rating_after"] > winner["rating_before"]
    assert loser["rating_after"] < loser["rating_before"]
    for seat in end["seats"]:
        player = a.player(seat["player"]["id"])
        rating = player["ratings"]["race"]
        assert rating["games"] == 1
        assert rating["rating"] == seat["rating_after"]
        recent = [r for r in player["recent"] if r["kind"] == "match"]
        assert [(r["id"], r["result"]) for r in recent] == [
            (match["id"], "won" if seat["place"] == 1 else "lost")
        ]
    applied = store.sismember(keys.ratings_applied("race:bot"), match["id"])
    assert applied
    # One race makes a provisional rating, not yet listed.
    assert all(a.player(s["player"]["id"])["ratings"]["race"]["provisional"]
               for s in end["seats"])
    top = call(b, "GET", "/ratings/race?limit=100&bot=true")
    assert not {s["player"]["id"] for s in end["seats"]} & {e["player_id"] for e in top["entries"]}


def test_a_rating_is_listed_once_its_fifth_race_establishes_it(
    clients: tuple[Api, Api], store: redis.Redis
) -> None:
    a, b = clients
    match, alice, bob, _ = started_race(a, b, preset="beginner")
    store.hset(keys.ratings("race:human"), alice.id, "1500.0000 400.0000 4")
    for api, p in ((a, alice), (b, bob)):
        call(api, "POST", f"/matches/{match['id']}/leave", p)
    end = wait_for_match(a, match["id"], "finished")
    assert end["rated"], end
    mine, theirs = (a.player(p.id)["ratings"]["race"] for p in (alice, bob))
    assert (mine["games"], mine["provisional"]) == (5, False)
    assert (theirs["games"], theirs["provisional"]) == (1, True)
    listed = [e["player_id"] for e in call(b, "GET", "/ratings/race?limit=100")["entries"]]
    assert alice.id in listed and bob.id not in listed


def test_eight_seat_race_across_replicas(clients: tuple[Api, Api], store: redis.Redis) -> None:
    a, b = clients
    apis = [a, b]
    players = [apis[i % 2].register(bot=True) for i in range(8)]
    match = new_match(a, players[0], seats=8, preset="intermediate")
    for i, p in enumerate(players[1:], start=1):
        call(apis[i % 2], "POST", f"/matches/{match['id']}/join", p)
    view = wait_for_match(b, match["id"], "countdown")
    seats = seats_of(apis, players, match["id"])
    mines = mines_of(store, seats[0].game_id)
    assert all(mines_of(store, s.game_id) == mines for s in seats)
    wait_until_started(a, view)

    # Seats 0-4 win with 0..4 penalties, all at once; seat 5 resigns; 6 and 7 open
    # different amounts, and the time limit... no: they resign too late, so they lose
    # on time? They are left playing, and the match ends when seat 6 and 7 resign.
    def run(i: int) -> dict[str, Any]:
        return play_to_win(seats[i], mines, blunders=i)

    with concurrent.futures.ThreadPoolExecutor(5) as pool:
        results = list(pool.map(run, range(5)))
    assert all(r["status"] == "won" for r in results)
    call(b, "POST", f"/matches/{match['id']}/leave", players[5])
    # Seat 6 opens one more safe cell than seat 7: it places ahead of it.
    free = sorted(c for c in _safe_hidden(seats[6], mines))
    seats[6].move("reveal", *free[0])
    call(a, "POST", f"/matches/{match['id']}/leave", players[6])
    call(b, "POST", f"/matches/{match['id']}/leave", players[7])
    end = wait_for_match(a, match["id"], "finished")
    places = [s["place"] for s in end["seats"]]
    winners = sorted(range(5), key=lambda i: end["seats"][i]["time_ms"])
    assert [places[i] for i in winners] == [1, 2, 3, 4, 5]
    assert [end["seats"][i]["penalties"] for i in range(5)] == [0, 1, 2, 3, 4]
    assert places[5:] == [6, 6, 6], "resigned seats come last, sharing the place"
    assert [s["status"] for s in end["seats"][5:]] == ["resigned"] * 3
    for seat in end["seats"]:
        rating = b.player(seat["player"]["id"])["ratings"]["race"]
        assert rating["games"] == 1, "each rating changed once"
    layouts = replay_layouts(a, [s["game_id"] for s in end["seats"]])
    assert all(layout == layouts[0] for layout in layouts)


def _safe_hidden(seat: Seat, mines: set[tuple[int, int]]) -> set[tuple[int, int]]:
    board = seat.api.view(seat.game_id)["board"]
    return {(x, y) for y, row in enumerate(board) for x, c in enumerate(row) if c == "#"} - mines


def test_the_countdown_starts_once_the_boards_are_made(clients: tuple[Api, Api]) -> None:
    """A big no-guess board takes seconds to build: that time is nobody's countdown.
    The answer that started the match comes after the boards exist, so its server time
    is at most a moment before the countdown's full 3 s."""
    a, b = clients
    alice, bob = a.register(), b.register()
    match = new_match(a, alice, preset=None, width=300, height=300, mines=18_000)
    view = call(b, "POST", f"/matches/{match['id']}/join", bob)
    assert view["status"] == "countdown", view["status"]
    left = wire.milliseconds(view["starts_at"]) - wire.milliseconds(view["server_time"])
    assert 2500 <= left <= 3000, left


def test_a_match_game_takes_no_pause_resume_or_hint(clients: tuple[Api, Api]) -> None:
    """Pause, resume and hint on a match's game (a race seat's, or the co-op game) are
    refused like its reset: 409 ``match_started``, the game unchanged."""
    a, b = clients
    _, alice, _, games = started_race(a, b)
    alice2, bob2 = a.register(), b.register()
    coop = new_match(a, alice2, mode="coop", seats=2)
    call(b, "POST", f"/matches/{coop['id']}/join", bob2)
    coop_view = wait_for_match(b, coop["id"], "countdown")
    coop_game = coop_view["seats"][0]["game_id"]
    wait_until_started(a, coop_view)
    for game_id, player in ((games[alice.id], alice), (coop_game, bob2)):
        before = a.view(game_id)
        for action in ("pause", "resume", "hint"):
            r = a.client.post(f"/games/{game_id}/{action}", headers=player.auth)
            assert r.status_code == 409, r.text
            assert r.json()["code"] == "match_started", r.text
        after = a.view(game_id)
        assert (after["version"], after["paused"], after["stats"]["hints"]) == (
            before["version"], before["paused"], before["stats"]["hints"])



def test_a_match_boards_seed_is_below_2_to_the_53(clients: tuple[Api, Api]) -> None:
    """The seed the service draws for a match's boards (a rematch's too) is one any client
    reads exactly and may send to ``POST /games``: below 2**53."""
    a, b = clients
    match, alice, bob, games = started_race(a, b)
    seeds = set()
    for round_ in range(2):
        for api, p in ((a, alice), (b, bob)):
            call(api, "POST", f"/matches/{match['id']}/leave", p)
        wait_for_match(a, match["id"], "finished")
        for game_id in games.values():
            seeds.add(call(a, "GET", f"/games/{game_id}/replay")["seed"])
        if round_ == 1:
            break
        # The rematch: its boards come from a seed of their own.
        old = match["id"]
        match = call(a, "POST", f"/matches/{old}/rematch", alice, expect=201)["match"]
        call(b, "POST", f"/matches/{old}/rematch", bob)
        wait_for_match(a, match["id"], "countdown")
        for api, p in ((a, alice), (b, bob)):
            view = call(api, "GET", f"/matches/{match['id']}", p)
            games[p.id] = next(s["game_id"] for s in view["seats"] if s["player"]["id"] == p.id)
        wait_until_started(a, view)
    assert len(seeds) == 2 and all(0 <= s < 2**53 for s in seeds), seeds


def test_a_match_every_seat_finished_ends_on_the_last_seats_update(
    clients: tuple[Api, Api],
) -> None:
    """As asyncapi says: when the last seat playing resigns, its ``resigned`` update is the
    end (``match.status`` ``finished``) and no ``ended`` follows; ``ended`` is the clock's."""
    a, b = clients
    match, alice, bob, _ = started_race(a, b)
    with match_socket(a, match["id"]) as ws:
        assert receive(ws)["type"] == "match"
        for api, p in ((a, alice), (b, bob)):
            call(api, "POST", f"/matches/{match['id']}/leave", p)
        first = receive(ws)
        if first["change"] == "started":  # marked by the leave, if no poll had yet
            first = receive(ws)
        last = receive(ws)
        assert (first["change"], first["match"]["status"]) == ("resigned", "playing")
        assert (last["change"], last["match"]["status"]) == ("resigned", "finished")
        # Heartbeats only from now on (one a second here): no ``ended`` update.
        deadline = time.monotonic() + 3
        while time.monotonic() < deadline:
            message = json.loads(ws.recv(timeout=5))
            assert message["type"] == "heartbeat", message


def at_once(*requests: tuple[Api, str, Player]) -> list[httpx.Response]:
    """POST each ``(api, path, player)`` from its own thread, released together."""
    start = threading.Barrier(len(requests))

    def send(request: tuple[Api, str, Player]) -> httpx.Response:
        api, path, player = request
        start.wait()
        return api.client.post(path, headers=player.auth)

    with concurrent.futures.ThreadPoolExecutor(len(requests)) as pool:
        return list(pool.map(send, requests))


def test_a_join_and_a_leave_at_once_start_no_match_that_is_not_full(
    clients: tuple[Api, Api],
) -> None:
    """Carol takes the last of three seats on one replica as Bob leaves on the other.
    Whichever lands first, the match starts by itself only with every seat taken: after
    both it is either waiting with two seats, or counting down with three (Bob's leave
    came after the start, and resigned him)."""
    a, b = clients
    for _ in range(12):
        alice, bob, carol = a.register(), b.register(), a.register()
        match = new_match(a, alice, seats=3)
        path = f"/matches/{match['id']}"
        call(b, "POST", f"{path}/join", bob)
        joined, left = at_once((a, f"{path}/join", carol), (b, f"{path}/leave", bob))
        assert left.status_code == 200, left.text
        view = call(a, "GET", path)
        seats = [(s["player"]["id"], s["status"]) for s in view["seats"]]
        assert joined.status_code == 200, joined.text
        if view["status"] == "waiting":
            assert seats == [(alice.id, "waiting"), (carol.id, "waiting")], view
        else:
            assert view["status"] == "countdown", view
            assert seats == [(alice.id, "playing"), (bob.id, "resigned"),
                             (carol.id, "playing")], view


def test_the_creators_start_as_the_last_seat_fills_is_answered_as_started(
    clients: tuple[Api, Api],
) -> None:
    """Alice starts her three-seat match on one replica as Carol takes its last seat on
    the other, which starts it too. Whichever start lands first, Alice's answer is the
    match counting down, as she asked; Carol is seated only if her join came first."""
    a, b = clients
    for _ in range(12):
        alice, bob, carol = a.register(), b.register(), a.register()
        match = new_match(a, alice, seats=3)
        path = f"/matches/{match['id']}"
        call(b, "POST", f"{path}/join", bob)
        started, joined = at_once((b, f"{path}/start", alice), (a, f"{path}/join", carol))
        assert started.status_code == 200, started.text
        assert started.json()["status"] == "countdown"
        view = call(a, "GET", path)
        assert view["status"] == "countdown"
        players = [s["player"]["id"] for s in view["seats"]]
        if joined.status_code == 409:
            assert joined.json()["code"] == "match_started", joined.text
            assert players == [alice.id, bob.id]
        else:
            assert joined.status_code == 200, joined.text
            assert players == [alice.id, bob.id, carol.id]
        assert started.json()["starts_at"] == view["starts_at"]
        again = call(a, "POST", f"{path}/start", alice)
        assert again["version"] == view["version"], "a start sent twice starts once"
        refused = call(a, "POST", f"{path}/start", bob, expect=403)
        assert refused["code"] == "forbidden"


def test_two_races_of_one_player_ending_at_once_both_count_in_the_rating(
    clients: tuple[Api, Api], store: redis.Redis,
) -> None:
    """Pat plays two rated races at once, against Quinn on one and Robin on the other,
    resigns both, and the two opponents resign at the same instant on two replicas: the
    races end together, and each changes Pat's rating, the deviation as well as the
    mean. Everyone shares the place in each race, so Pat, who played two, is surer of
    than Quinn or Robin, who played one each. (A player sits in one match at a time:
    Pat's hold on the first is dropped by hand, as for races from before that rule.)"""
    a, b = clients
    groups = []
    for _ in range(10):
        pat, quinn, robin = a.register(), b.register(), a.register()
        races = []
        for api, opponent in ((a, quinn), (b, robin)):
            store.delete(keys.player_seat(pat.id))
            match = new_match(api, pat, seats=2)
            races.append(call(api, "POST", f"/matches/{match['id']}/join", opponent))
        groups.append((pat, quinn, robin, races))
    wait_until_started(a, max(groups[-1][3], key=lambda race: race["starts_at"]))
    for pat, quinn, robin, races in groups:
        for race in races:
            call(a, "POST", f"/matches/{race['id']}/leave", pat)
        ends = at_once((a, f"/matches/{races[0]['id']}/leave", quinn),
                       (b, f"/matches/{races[1]['id']}/leave", robin))
        assert [r.status_code for r in ends] == [200, 200], [r.text for r in ends]
    for pat, quinn, robin, races in groups:
        for race in races:
            wait_for_match(b, race["id"], "finished")
        rated = {p.id: b.player(p)["ratings"]["race"] for p in (pat, quinn, robin)}
        assert [rated[p.id]["games"] for p in (pat, quinn, robin)] == [2, 1, 1]
        one_each = max(rated[quinn.id]["deviation"], rated[robin.id]["deviation"])
        assert rated[pat.id]["deviation"] < one_each - 10 < 500 - 20, rated


def test_a_waiting_match_its_last_seat_left_is_over(clients: tuple[Api, Api]) -> None:
    """Nobody's match any more: it ends, unrated, and strangers cannot start it."""
    a, b = clients
    alice, bob, carol = a.register(), b.register(), a.register()
    match = new_match(a, alice, seats=2)
    left = call(b, "POST", f"/matches/{match['id']}/leave", alice)
    assert left["status"] == "finished" and not left["rated"] and left["seats"] == []
    assert left["ended_at"] is not None
    for api, p in ((a, bob), (b, carol)):
        r = api.client.post(f"/matches/{match['id']}/join", headers=p.auth)
        assert r.status_code == 409 and r.json()["code"] == "match_started", r.text
    assert call(a, "GET", f"/matches/{match['id']}")["status"] == "finished"
    # Its creator is free to play again.
    call(a, "POST", f"/matches/{new_match(b, alice)['id']}/leave", alice)


def test_a_retried_move_that_ended_the_match_gets_its_answer_on_any_replica(
    clients: tuple[Api, Api], store: redis.Redis
) -> None:
    """A move's answer is lost, and its retry (same ``Idempotency-Key``) goes to the
    other replica, whose copy of the game is from before it: the retry gets the first
    answer, although that move has since ended the match."""
    a, b = clients
    match, alice, bob, games = started_race(a, b, preset="expert", on_mine="lose")
    game_id = games[alice.id]
    mines = mines_of(store, game_id)
    via_a, via_b = Seat(a, alice, game_id), Seat(b, alice, game_id)
    via_b.move("reveal", *hidden_safe_cell(a.view(game_id)["board"], mines))
    via_a.move("reveal", *hidden_safe_cell(a.view(game_id)["board"], mines))
    call(b, "POST", f"/matches/{match['id']}/leave", bob)
    x, y = min(mines)
    retry = {**alice.auth, "Idempotency-Key": "last-move"}
    first = a.client.post(f"/games/{game_id}/reveal", json={"x": x, "y": y}, headers=retry)
    assert first.status_code == 200 and first.json()["status"] == "lost", first.text
    assert wait_for_match(a, match["id"], "finished")["status"] == "finished"
    again = b.client.post(f"/games/{game_id}/reveal", json={"x": x, "y": y}, headers=retry)
    assert again.status_code == 200, again.text
    assert again.json() == first.json()


@contextlib.contextmanager
def _player_socket(api: Api, player: Player) -> Iterator[ClientConnection]:
    base = urlsplit(str(api.client.base_url)).netloc
    with connect(f"ws://{base}/players/me/events", open_timeout=30) as ws:
        ws.send(json.dumps({"type": "auth", "token": player.token}))
        assert receive(ws, within=30)["type"] == "player"
        yield ws


def _quiet(ws: ClientConnection, seconds: float) -> None:
    """Nothing but heartbeats for ``seconds``."""
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        try:
            message = json.loads(ws.recv(timeout=left))
        except TimeoutError:
            return
        assert message["type"] == "heartbeat", message


def test_every_seats_player_hears_of_the_end_once(
    clients: tuple[Api, Api], store: redis.Redis
) -> None:
    """Alice wins while Bob plays on, and hears of her game's end then; when Bob
    resigns the match ends, and each of them gets their view once more, with the
    match's rating and recent entry (on the socket of the replica that did not end it)."""
    a, b = clients
    match, alice, bob, games = started_race(a, b, bots=True)
    with _player_socket(b, alice) as alice_ws, _player_socket(a, bob) as bob_ws:
        won = play_to_win(Seat(a, alice, games[alice.id]), mines_of(store, games[alice.id]))
        assert won["status"] == "won"
        first = receive(alice_ws, within=30)
        assert first["type"] == "player" and "race" not in first["player"]["ratings"]
        call(b, "POST", f"/matches/{match['id']}/leave", bob)
        wait_for_match(a, match["id"], "finished")
        for ws in (alice_ws, bob_ws):
            told = receive(ws, within=30)
            assert told["type"] == "player", told
            assert told["player"]["ratings"]["race"]["games"] == 1
            assert told["player"]["recent"][0]["id"] == match["id"]
        for ws in (alice_ws, bob_ws):
            _quiet(ws, 2)


def test_a_human_seat_that_wins_like_a_program_is_left_out_of_the_ratings(
    clients: tuple[Api, Api], store: redis.Redis
) -> None:
    """As on the leaderboards, a human account's win no person could play (here: a
    beginner board cleared as fast as HTTP goes) is held, and the race's ratings leave
    it out: the other seats are rated among themselves."""
    a, b = clients
    alice, bob, carol = a.register(), b.register(), a.register()
    match = new_match(a, alice, seats=3, preset="beginner")
    for api, p in ((b, bob), (a, carol)):
        call(api, "POST", f"/matches/{match['id']}/join", p)
    seats = seats_of([a, b, a], [alice, bob, carol], match["id"])
    wait_until_started(a, call(a, "GET", f"/matches/{match['id']}"))
    for api, p in ((b, bob), (a, carol)):
        call(api, "POST", f"/matches/{match['id']}/leave", p)
    assert play_to_win(seats[0], mines_of(store, seats[0].game_id))["status"] == "won"
    end = wait_for_match(b, match["id"], "finished")
    assert end["rated"], end
    first = next(s for s in end["seats"] if s["player"]["id"] == alice.id)
    assert first["place"] == 1 and first["rating_after"] is None, first
    assert a.view(seats[0].game_id)["held"] is not None
    assert "race" not in a.player(alice.id)["ratings"]
    for p in (bob, carol):
        assert a.player(p.id)["ratings"]["race"]["games"] == 1


def test_a_two_seat_race_won_like_a_program_rates_nobody(
    clients: tuple[Api, Api], store: redis.Redis
) -> None:
    a, b = clients
    match, alice, bob, games = started_race(a, b, preset="beginner")
    call(b, "POST", f"/matches/{match['id']}/leave", bob)
    seat = Seat(a, alice, games[alice.id])
    assert play_to_win(seat, mines_of(store, seat.game_id))["status"] == "won"
    end = wait_for_match(b, match["id"], "finished")
    assert not end["rated"], end
    assert all(s["rating_after"] is None for s in end["seats"])
    for p in (alice, bob):
        assert "race" not in a.player(p.id)["ratings"]
