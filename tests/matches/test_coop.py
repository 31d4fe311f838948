"""Co-op: one game, four players moving on it at once through two replicas; no move is
lost and every diff names its mover; cursors reach the teammates."""

from __future__ import annotations

import concurrent.futures
import contextlib
import json
import time
from typing import Any

import msgspec
import redis
from websockets.sync.client import ClientConnection

from service.store import keys
from tests.matches.conftest import (
    Seat,
    call,
    match_socket,
    mines_of,
    new_match,
    receive,
    wait_for_match,
    wait_until_started,
)
from tests.support.play import Api, neighbours


def test_four_players_move_at_once_and_every_diff_is_attributed(
    clients: tuple[Api, Api], store: redis.Redis
) -> None:
    a, b = clients
    apis = [a, b, a, b]
    players = [api.register() for api in apis]
    match = new_match(a, players[0], mode="coop", seats=4, rated=False)
    assert not match["rated"]
    for api, p in zip(apis[1:], players[1:], strict=True):
        call(api, "POST", f"/matches/{match['id']}/join", p)
    view = wait_for_match(b, match["id"], "countdown")
    game_ids = {s["game_id"] for s in view["seats"]}
    assert len(game_ids) == 1 and None not in game_ids, "one game, shown to everyone"
    game_id = game_ids.pop()
    mines = mines_of(store, game_id)
    wait_until_started(a, view)

    board = a.view(game_id)["board"]
    hidden = sorted(
        (x, y) for y, row in enumerate(board) for x, c in enumerate(row) if c == "#"
    )
    w, h = view["width"], view["height"]

    def zero(c: tuple[int, int]) -> bool:
        return c not in mines and not set(neighbours(*c, w, h)) & mines

    # The last safe cell is one no cascade opens: no zero beside it, and no zero itself.
    safe = [c for c in hidden if c not in mines]
    last = next(
        c for c in safe if not zero(c) and not any(zero(n) for n in neighbours(*c, w, h))
    )
    safe.remove(last)
    # Each player flags every fourth mine and reveals every fourth safe cell, all at once;
    # the last safe cell waits, so no move comes after the win.
    work = [
        [("flag", c) for c in sorted(mines)[i::4]] + [("reveal", c) for c in safe[i::4]]
        for i in range(4)
    ]

    def play(i: int) -> list[dict[str, Any]]:
        seat = Seat(apis[i], players[i], game_id)
        return [seat.move(action, *cell) for action, cell in work[i]]

    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        answers = list(pool.map(play, range(4)))
    answers[0].append(Seat(a, players[0], game_id).move("reveal", *last))
    for i, diffs in enumerate(answers):
        assert all(d["by"] == players[i].id for d in diffs), "every answer names its mover"

    # The stream holds one diff per change, versions without a gap, each attributed.
    entries = store.xrange(keys.events(game_id))
    stored = [msgspec.json.decode(fields[b"d"]) for _, fields in entries]
    assert [d["version"] for d in stored] == list(range(1, len(stored) + 1))
    ids = {p.id for p in players}
    assert all(d["by"] in ids for d in stored)
    changed = [d for diffs in answers for d in diffs if d["cells"]]
    assert sorted(d["version"] for d in changed) == [d["version"] for d in stored]
    final = a.view(game_id)
    assert final["status"] == "won"
    end = wait_for_match(b, match["id"], "finished")
    assert {s["status"] for s in end["seats"]} == {"won"}
    assert {s["place"] for s in end["seats"]} == {1}


def test_cursors_reach_the_teammates_across_replicas(clients: tuple[Api, Api]) -> None:
    a, b = clients
    alice, bob = a.register(), b.register()
    match = new_match(a, alice, mode="coop", seats=2, rated=False)
    call(b, "POST", f"/matches/{match['id']}/join", bob)
    with match_socket(a, match["id"]) as mine, match_socket(b, match["id"]) as theirs:
        assert receive(mine)["type"] == "match"
        assert receive(theirs)["type"] == "match"
        mine.send(json.dumps({"type": "auth", "token": alice.token}))
        theirs.send(json.dumps({"type": "auth", "token": bob.token}))
        assert receive(mine)["type"] == "match"
        assert receive(theirs)["type"] == "match"
        theirs.send(json.dumps({"type": "cursor", "x": 3, "y": 4}))
        got = receive(mine)
        while got["type"] != "cursor":
            got = receive(mine)
        assert got == {"type": "cursor", "by": bob.id, "x": 3, "y": 4}
        # A cursor off the board is refused, not relayed to every watcher as sent.
        for x, y in ((999_999, 999_999), (9, 0), (0, -1)):
            theirs.send(json.dumps({"type": "cursor", "x": x, "y": y}))
            error = receive(theirs, within=10)
            assert error["type"] == "error", (x, y, error)
            assert error["problem"]["code"] == "invalid_request", (x, y)
            assert y < 0 or "off the 9x9 board" in error["problem"]["detail"]


def _cursors_until(ws: ClientConnection, last: tuple[int, int],
                   within: float = 10) -> list[tuple[int, int]]:
    """The cursors received, up to and with one at ``last``, all within ``within`` s."""
    deadline = time.monotonic() + within
    got: list[tuple[int, int]] = []
    while not got or got[-1] != last:
        left = deadline - time.monotonic()
        assert left > 0, f"no cursor at {last} within {within} s; got {got}"
        try:
            message = receive(ws, within=left)
        except TimeoutError:
            raise AssertionError(f"no cursor at {last} within {within} s; got {got}") from None
        if message["type"] == "cursor":
            got.append((message["x"], message["y"]))
    return got


def test_the_last_cursor_always_reaches_the_teammates(clients: tuple[Api, Api]) -> None:
    """Cursors closer together than the throttle allows are not all relayed, but the
    last one is, once the interval is over: a teammate never sees a stale position."""
    a, b = clients
    alice, bob = a.register(), b.register()
    match = new_match(a, alice, mode="coop", seats=2, rated=False)
    call(b, "POST", f"/matches/{match['id']}/join", bob)
    with match_socket(a, match["id"]) as mine, match_socket(b, match["id"]) as theirs:
        for ws, p in ((mine, alice), (theirs, bob)):
            assert receive(ws, within=30)["type"] == "match"
            ws.send(json.dumps({"type": "auth", "token": p.token}))
            assert receive(ws, within=30)["type"] == "match"
        # Two at once: the first goes out at once, the second after the interval.
        theirs.send(json.dumps({"type": "cursor", "x": 1, "y": 2}))
        theirs.send(json.dumps({"type": "cursor", "x": 3, "y": 3}))
        assert _cursors_until(mine, (3, 3)) == [(1, 2), (3, 3)]
        # A burst: some are skipped, never the last.
        time.sleep(0.5)
        burst = [(i, i) for i in range(9)]
        for x, y in burst:
            theirs.send(json.dumps({"type": "cursor", "x": x, "y": y}))
        got = _cursors_until(mine, burst[-1])
        assert len(got) < len(burst), got
        assert got == sorted(set(got)) and got[0] == burst[0], got
        # And nothing comes after it: no cursor was held back to be sent later.
        with contextlib.suppress(TimeoutError):
            late = receive(mine, within=1)
            assert late["type"] != "cursor", late


def test_a_spectator_cannot_send_a_cursor(clients: tuple[Api, Api]) -> None:
    a, _ = clients
    alice = a.register()
    match = new_match(a, alice, mode="coop", seats=2, rated=False)
    with match_socket(a, match["id"]) as ws:
        assert receive(ws)["type"] == "match"
        ws.send(json.dumps({"type": "cursor", "x": 0, "y": 0}))
        error = receive(ws)
        assert error["type"] == "error" and error["problem"]["code"] == "not_seated"


def test_a_match_without_a_board_is_beginner_and_coop_is_never_rated(
    clients: tuple[Api, Api],
) -> None:
    """As NewMatch says: no preset and no size make a beginner board; ``rated`` is ignored
    for co-op, ``true`` too."""
    a, _ = clients
    ada = a.register()
    made = call(a, "POST", "/matches", ada, expect=201, mode="coop", rated=True)["match"]
    assert (made["mode"], made["rated"]) == ("coop", False)
    assert (made["preset"], made["width"], made["height"], made["mines"]) == ("beginner", 9, 9, 10)
