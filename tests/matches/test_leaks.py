"""Fairness: every byte a seated player and a spectator receive before a race ends,
recorded, holds nothing of another seat's board; after the end everything is public.
And the match socket: the match first, then every update in order, resumable."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import redis
from websockets.sync.client import ClientConnection

from tests.matches.conftest import (
    Seat,
    call,
    hidden_safe_cell,
    match_socket,
    mines_of,
    new_match,
    receive,
    started_race,
    wait_for_match,
    wait_until_started,
)
from tests.support.play import Api, Player, neighbours


class Recorder:
    """Every byte one party received, from HTTP answers and sockets alike."""

    def __init__(self) -> None:
        self.received: list[bytes] = []
        self.lock = threading.Lock()

    def add(self, data: bytes | str) -> None:
        with self.lock:
            self.received.append(data.encode() if isinstance(data, str) else data)

    def get(self, api: Api, path: str, player: Player | None = None) -> dict[str, Any]:
        r = api.client.get(path, headers=player.auth if player else {})
        self.add(r.content)
        assert r.status_code == 200, r.text
        data: dict[str, Any] = r.json()
        return data

    def listen(self, ws: ClientConnection, stop: threading.Event) -> threading.Thread:
        def run() -> None:
            while not stop.is_set():
                try:
                    self.add(ws.recv(timeout=0.2))
                except TimeoutError:
                    continue
                except Exception:
                    return

        thread = threading.Thread(target=run, daemon=True)
        thread.start()
        return thread

    def holds(self, secret: str) -> bool:
        return any(secret.encode() in data for data in self.received)


def test_nothing_of_another_seat_reaches_a_player_or_a_spectator(
    clients: tuple[Api, Api], store: redis.Redis
) -> None:
    a, b = clients
    alice, bob = a.register(), b.register()
    player, spectator = Recorder(), Recorder()
    match = new_match(a, alice, seats=2)
    player.add(json.dumps(match))
    stop = threading.Event()
    with match_socket(a, match["id"]) as alice_ws, match_socket(b, match["id"]) as watch_ws:
        alice_ws.send(json.dumps({"type": "auth", "token": alice.token}))
        threads = [player.listen(alice_ws, stop), spectator.listen(watch_ws, stop)]
        r = b.client.post(f"/matches/{match['id']}/join", headers=bob.auth)
        assert r.status_code == 200
        view = player.get(a, f"/matches/{match['id']}", alice)
        spectator.get(b, f"/matches/{match['id']}")
        alice_game = next(s["game_id"] for s in view["seats"] if s["player"]["id"] == alice.id)
        bob_view = call(b, "GET", f"/matches/{match['id']}", bob)
        bob_game = next(s["game_id"] for s in bob_view["seats"] if s["player"]["id"] == bob.id)
        assert alice_game and bob_game and alice_game != bob_game
        wait_until_started(a, view)
        mines = sorted(mines_of(store, bob_game))
        mine_cell = mines[0]

        # Bob plays (a penalty, then openings), Alice plays her own board and reads hers.
        bob_seat, alice_seat = Seat(b, bob, bob_game), Seat(a, alice, alice_game)
        bob_seat.move("reveal", *mine_cell)
        board = b.view(bob_game)["board"]
        hidden = [(x, y) for y, row in enumerate(board) for x, c in enumerate(row)
                  if c == "#" and (x, y) not in mines]
        for cell in hidden[:5]:
            bob_seat.move("reveal", *cell)
        for cell in hidden[-3:]:
            player.add(json.dumps(alice_seat.move("reveal", *cell)))
        player.get(a, f"/games/{alice_game}")
        for who, api, viewer in ((player, a, alice), (spectator, b, None)):
            who.get(api, f"/matches/{match['id']}", viewer)
        # A client that asks for another seat's game by guessing learns nothing: it has no id.
        stop.set()
        for t in threads:
            t.join(timeout=5)
        before_end = (list(player.received), list(spectator.received))

        assert not player.holds(bob_game), "Alice saw Bob's game id"
        assert not spectator.holds(bob_game) and not spectator.holds(alice_game)
        assert player.holds(alice_game), "Alice was shown her own game"
        for data in before_end[0] + before_end[1]:
            message = json.loads(data)
            if message.get("type") in ("match", "match_update"):
                assert "cells" not in data.decode() and "board" not in data.decode()
        # Bob's penalty shows to the others as a count, and his progress as counts.
        last = json.loads(
            next(d for d in reversed(before_end[1]) if b"match" in d and b"seats" in d)
        )
        seats = last["match"]["seats"] if "match" in last else last["seats"]
        bob_seat_view = next(s for s in seats if s["player"]["id"] == bob.id)
        assert bob_seat_view["penalties"] == 1 and bob_seat_view["progress"]["bbbv_done"] > 0

    # Both resign (a seat whose few moves cleared its board has finished already): the
    # match ends, and its end shows every seat's game to anybody.
    playing = {s["player"]["id"] for s in call(a, "GET", f"/matches/{match['id']}")["seats"]
               if s["status"] == "playing"}
    for api, p in ((a, alice), (b, bob)):
        if p.id in playing:
            call(api, "POST", f"/matches/{match['id']}/leave", p)
    end = call(a, "GET", f"/matches/{match['id']}")
    assert end["status"] == "finished"
    assert {s["game_id"] for s in end["seats"]} == {alice_game, bob_game}
    assert httpx.get(f"{b.client.base_url}/games/{bob_game}/replay").status_code == 200


def test_a_seat_that_finishes_first_hands_nobody_its_board(
    clients: tuple[Api, Api], store: redis.Redis
) -> None:
    """A finished seat's board is every seat's board: until the match ends its game is
    in no public list and its replay is closed, even to its own player; and a move that
    changes no count (a flag) is not announced."""
    a, b = clients
    alice, bob = a.register(), b.register()
    match = new_match(a, alice, seats=2, on_mine="lose")
    call(b, "POST", f"/matches/{match['id']}/join", bob)
    view = call(a, "GET", f"/matches/{match['id']}", alice)
    alice_game = next(s["game_id"] for s in view["seats"] if s["player"]["id"] == alice.id)
    bob_view = call(b, "GET", f"/matches/{match['id']}", bob)
    bob_game = next(s["game_id"] for s in bob_view["seats"] if s["player"]["id"] == bob.id)
    wait_until_started(a, view)
    mines = sorted(mines_of(store, alice_game))
    Seat(a, alice, alice_game).move("reveal", *mines[0])
    playing = wait_for_match(b, match["id"], "playing")
    assert [s["status"] for s in playing["seats"]] != ["playing", "playing"]

    for reader in (None, bob, alice):
        profile = call(b, "GET", f"/players/{alice.id}", reader)
        assert alice_game.encode() not in json.dumps(profile).encode(), profile["recent"]
        r = b.client.get(f"/games/{alice_game}/replay", headers=reader.auth if reader else {})
        assert r.status_code == 409 and r.json()["code"] == "game_in_progress", r.text
    # Bob flags: nobody hears of it. His reveal moves his counts: everybody does.
    wait_for_change(b, match["id"], "started")  # the last change the service makes itself
    before = call(b, "GET", f"/matches/{match['id']}")["version"]
    bob_seat = Seat(b, bob, bob_game)
    bob_seat.move("flag", *mines[0])
    bob_seat.move("flag", *mines[1])
    assert call(b, "GET", f"/matches/{match['id']}")["version"] == before
    bob_seat.move("reveal", *cell_that_counts(b.view(bob_game)["board"], set(mines)))
    assert call(b, "GET", f"/matches/{match['id']}")["version"] > before

    call(b, "POST", f"/matches/{match['id']}/leave", bob)
    wait_for_match(a, match["id"], "finished")
    assert httpx.get(f"{b.client.base_url}/games/{alice_game}/replay").status_code == 200
    recent = call(a, "GET", f"/players/{alice.id}")["recent"]
    assert [(r["id"], r["kind"]) for r in recent] == [(match["id"], "match")]


def test_a_seat_that_hits_a_mine_sees_that_mine_only_until_the_match_ends(
    clients: tuple[Api, Api], store: redis.Redis
) -> None:
    """Under ``on_mine: "lose"`` a loss would show the seat the whole layout, and the
    other seats play it: a second account could lose at once and hand its player every
    mine. The loss shows the mine hit; the match's end shows the rest, once."""
    a, b = clients
    match, alice, bob, games = started_race(a, b, on_mine="lose")
    alice_game = games[alice.id]
    mines = mines_of(store, alice_game)
    wrong = hidden_safe_cell(a.view(alice_game)["board"], mines)
    hit = min(mines)
    seat = Seat(a, alice, alice_game)
    seat.move("flag", *wrong)
    lost = seat.move("reveal", *hit)
    assert lost["status"] == "lost" and lost["cells"] == [[hit[0], hit[1], "X"]], lost
    for reader in (a, b):
        seen = reader.view(alice_game)
        assert seen["status"] == "lost" and seen["ended_by"] == "move"
        text = "".join(seen["board"])
        assert text.count("X") == 1 and "*" not in text and "!" not in text
        assert seen["board"][wrong[1]][wrong[0]] == "F"
        plain = reader.client.get(f"/games/{alice_game}", headers={"Accept": "text/plain"})
        assert "*" not in plain.text and "!" not in plain.text
    ended_at = a.view(alice_game)["ended_at"]

    call(b, "POST", f"/matches/{match['id']}/leave", bob)
    wait_for_match(a, match["id"], "finished")
    deadline = time.monotonic() + 30
    while "*" not in "".join(shown := a.view(alice_game)["board"]):
        assert time.monotonic() < deadline, "the match's end never showed the mines"
        time.sleep(0.05)
    assert {(x, y) for y, row in enumerate(shown) for x, c in enumerate(row) if c in "*X"} == mines
    assert shown[wrong[1]][wrong[0]] == "!"
    final = a.view(alice_game)
    assert final["ended_at"] == ended_at and final["ended_by"] == "move"
    replay = a.client.get(f"/games/{alice_game}/replay").json()
    assert [m["action"] for m in replay["moves"]][-2:] == ["reveal", "end"]
    assert (replay["fatal"]["x"], replay["fatal"]["y"]) == hit
    stats = a.player(alice)["stats"]["beginner"]["no_guess"]
    assert (stats["played"], stats["won"]) == (1, 0)


def test_a_resigned_seat_and_an_ended_match_take_no_moves(
    clients: tuple[Api, Api], store: redis.Redis
) -> None:
    """A seat that resigned is out: it would otherwise play on, and once the match ends
    with every board public, play its own knowing where the mines are."""
    a, b = clients
    alice, bob, carol = a.register(), b.register(), a.register()
    race = new_match(a, alice, seats=2)
    call(b, "POST", f"/matches/{race['id']}/join", bob)
    view = call(a, "GET", f"/matches/{race['id']}", alice)
    alice_game = next(s["game_id"] for s in view["seats"] if s["player"]["id"] == alice.id)
    wait_until_started(a, view)
    mines = mines_of(store, alice_game)
    alice_seat = Seat(b, alice, alice_game)
    before = b.view(alice_game)
    cell = cell_that_counts(before["board"], mines)
    call(a, "POST", f"/matches/{race['id']}/leave", alice)
    refused = alice_seat.move("reveal", *cell, expect=409)
    assert refused["code"] == "game_over" and "resigned" in refused["detail"]
    call(b, "POST", f"/matches/{race['id']}/leave", bob)
    assert wait_for_match(a, race["id"], "finished")
    assert alice_seat.move("reveal", *cell, expect=409)["code"] == "game_over"
    ended = b.view(alice_game)
    assert ended["status"] == "lost", "the match's end ended it"
    assert ended["version"] == before["version"] + 1, "by the end alone, no move"

    # Co-op: the teammate who resigned moves the shared game no more; the other does.
    coop = new_match(a, alice, mode="coop", seats=2, rated=False)
    call(b, "POST", f"/matches/{coop['id']}/join", carol)
    view = wait_for_match(a, coop["id"], "countdown")
    game = view["seats"][0]["game_id"]
    wait_until_started(a, view)
    cells = [c for c in hidden_cells(a.view(game)["board"]) if c not in mines_of(store, game)]
    call(a, "POST", f"/matches/{coop['id']}/leave", carol)
    assert Seat(a, carol, game).move("flag", *cells[0], expect=409)["code"] == "game_over"
    Seat(b, alice, game).move("flag", *cells[0])


def hidden_cells(board: list[str]) -> list[tuple[int, int]]:
    return [(x, y) for y, row in enumerate(board) for x, c in enumerate(row) if c == "#"]


def wait_for_change(api: Api, match_id: str, change: str) -> None:
    """Until the match has gone through ``change``: its updates, read from the first."""
    with match_socket(api, match_id, since=0) as ws:
        while True:
            message = receive(ws)
            if message["type"] == "match_update" and message["change"] == change:
                return


def cell_that_counts(board: list[str], mines: set[tuple[int, int]]) -> tuple[int, int]:
    """A hidden safe cell whose reveal adds to the 3BV done: a zero (its opening is
    untouched, or it would be open) or a number with no zero beside it."""
    def around(x: int, y: int) -> Iterator[tuple[int, int]]:
        return neighbours(x, y, len(board[0]), len(board))

    def zero(x: int, y: int) -> bool:
        return (x, y) not in mines and not any(n in mines for n in around(x, y))

    return next((x, y) for y, row in enumerate(board) for x, c in enumerate(row)
                if c == "#" and (x, y) not in mines
                and (zero(x, y) or not any(zero(*n) for n in around(x, y))))


def test_the_match_socket_replays_updates_after_since(clients: tuple[Api, Api]) -> None:
    a, b = clients
    alice, bob, carol = a.register(), b.register(), a.register()
    match = new_match(a, alice, seats=4)
    with match_socket(b, match["id"]) as ws:
        first = json.loads(ws.recv(timeout=30))
        assert first["type"] == "match" and first["match"]["version"] == 1
        call(b, "POST", f"/matches/{match['id']}/join", bob)
        call(a, "POST", f"/matches/{match['id']}/join", carol)
        call(a, "POST", f"/matches/{match['id']}/leave", carol)
        updates = []
        while len(updates) < 3:
            message = json.loads(ws.recv(timeout=30))
            if message["type"] == "match_update":
                updates.append(message)
    assert [u["version"] for u in updates] == [2, 3, 4]
    assert [u["change"] for u in updates] == ["joined", "joined", "left"]
    assert [len(u["match"]["seats"]) for u in updates] == [2, 3, 2]
    with match_socket(a, match["id"], since=2) as ws:
        again = [json.loads(ws.recv(timeout=30)) for _ in range(2)]
    assert [(m["type"], m["version"]) for m in again] == [("match_update", 3), ("match_update", 4)]


def test_a_seat_moved_up_by_a_leave_gets_its_own_game_in_every_update(
    clients: tuple[Api, Api],
) -> None:
    """Bob takes seat 1 of 3; Alice leaves before the start, so Bob's seat becomes seat 0.
    His socket, authenticated while he sat in seat 1, still shows him his own game from
    the countdown on."""
    a, b = clients
    alice, bob, carol, dave = a.register(), b.register(), a.register(), b.register()
    match = new_match(a, alice, seats=3)
    call(b, "POST", f"/matches/{match['id']}/join", bob)
    with match_socket(b, match["id"]) as ws:
        assert receive(ws)["type"] == "match"
        ws.send(json.dumps({"type": "auth", "token": bob.token}))
        assert receive(ws)["type"] == "match"
        call(a, "POST", f"/matches/{match['id']}/leave", alice)
        call(a, "POST", f"/matches/{match['id']}/join", carol)
        call(b, "POST", f"/matches/{match['id']}/join", dave)  # full: it starts
        message = receive(ws)
        while message.get("change") != "countdown":
            message = receive(ws)
    seats = message["match"]["seats"]
    assert seats[0]["player"]["id"] == bob.id, "Bob moved up to seat 0"
    own = call(b, "GET", f"/matches/{match['id']}", bob)["seats"][0]["game_id"]
    assert own is not None and seats[0]["game_id"] == own
    assert seats[1]["game_id"] is None and seats[2]["game_id"] is None, "theirs are theirs"
