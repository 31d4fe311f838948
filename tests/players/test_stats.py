"""A player's stats and recent games: counted with the commit that ends each game, once,
whichever replica makes it, when two race to end one game, and when a commit's reply
is lost and the commit is sent again."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.support.play import Api, Game, Mines, Player, apply_cells, learn_mines, positions, win
from tests.support.proxy import ChaosProxy
from tests.support.servers import RedisServer, running_service
from tests.support.solve import HUMAN_PACE, next_cell, play_out

FIRST = (4, 4)
SEEDED = {"preset": "beginner", "seed": 90210}
# Mines placed at creation: the same for every game of this seed, so one lost twin shows
# where they are, and any of them ends a game at once.
AT_ONCE = {"preset": "beginner", "seed": 4711, "first_click": "none"}


def board_stats(api: Api, player: Player, preset: str, kind: str) -> dict[str, Any]:
    stats: dict[str, Any] = api.player(player)["stats"][preset][kind]
    return stats


def lose(api: Api, game: Game, mines: Mines) -> dict[str, Any]:
    diff = api.reveal(game, *sorted(mines)[0])
    assert diff["status"] == "lost", diff
    return diff


@pytest.fixture(scope="module")
def seeded_mines(live_server: str) -> Mines:
    with httpx.Client(base_url=live_server, timeout=30) as c:
        return learn_mines(Api(c), SEEDED, FIRST)


@pytest.fixture(scope="module")
def at_once_mines(live_server: str) -> Mines:
    with httpx.Client(base_url=live_server, timeout=30) as c:
        api = Api(c)
        twin = api.create(**AT_ONCE)
        for y in range(9):
            for x in range(9):
                if api.reveal(twin, x, y)["status"] != "playing":
                    board = api.view(twin)["board"]
                    return positions(board, "*X")
    raise AssertionError("a board revealed in full has ended")


def win_by_logic(api: Api, game: Game, pace: tuple[float, float] | None = None) -> None:
    """A no-guess board never needs a guess: logic alone wins it."""
    view = game.view
    assert play_out(api.client, game.id, game.token,
                    next_cell(view["board"], view["mines"]), pace) == "won"


def test_won_lost_assisted_and_no_guess_games(a: Api, b: Api, seeded_mines: Mines) -> None:
    p = a.register()
    # Seeded games count, but can set no best: their boards were known in advance.
    win(b, b.create(owner=p, **SEEDED), seeded_mines, FIRST)
    assert board_stats(a, p, "beginner", "classic") == {
        "played": 1, "won": 1, "best_ms": None, "best_bbbv_per_s": None,
        "streak": 1, "best_streak": 1,
    }
    lost = a.create(owner=p, **SEEDED)
    a.reveal(lost, *FIRST)
    lose(a, lost, seeded_mines)
    won = b.create(owner=p, **SEEDED)
    win(b, won, seeded_mines, FIRST)
    assert board_stats(b, p, "beginner", "classic") == {
        "played": 3, "won": 2, "best_ms": None, "best_bbbv_per_s": None,
        "streak": 1, "best_streak": 1,
    }
    # A win with a hint counts, and sets no best either.
    helped = a.create(owner=p, preset="beginner", no_guess=True)
    hint = a.client.post(f"/games/{helped.id}/hint", headers=helped.auth).json()
    a.reveal(helped, hint["x"], hint["y"])
    helped.view = a.view(helped)
    win_by_logic(a, helped)
    no_guess = board_stats(a, p, "beginner", "no_guess")
    assert (no_guess["played"], no_guess["won"], no_guess["best_ms"]) == (1, 1, None)
    # An unassisted win of a fresh board at a person's pace is a best.
    fair = b.create(owner=p, preset="beginner", no_guess=True)
    win_by_logic(b, fair, HUMAN_PACE)
    ended = a.view(fair)
    assert ended["status"] == "won" and ended["held"] is None
    assert board_stats(b, p, "beginner", "no_guess") == {
        "played": 2, "won": 2, "best_ms": ended["elapsed_ms"],
        "best_bbbv_per_s": ended["stats"]["bbbv_per_second"], "streak": 2, "best_streak": 2,
    }
    # A custom board is in the recent games only.
    custom = a.create(owner=p, width=8, height=8, mines=10, seed=5, first_click="none")
    for y in range(8):
        for x in range(8):
            if a.reveal(custom, x, y)["status"] != "playing":
                break
        else:
            continue
        break
    profile = a.player(p)
    assert profile == b.player(p)
    recent = profile["recent"]
    assert [r["id"] for r in recent] == [custom.id, fair.id, helped.id, won.id, lost.id,
                                         recent[-1]["id"]]
    assert [r["result"] for r in recent[1:]] == ["won", "won", "won", "lost", "won"]
    assert {r["kind"] for r in recent} == {"game"}
    assert [r["assisted"] for r in recent[:3]] == [False, False, True]
    assert (recent[0]["preset"], recent[1]["preset"], recent[1]["no_guess"]) == (
        None, "beginner", True)
    assert recent[1]["elapsed_ms"] == ended["elapsed_ms"] and recent[1]["ended_at"] == ended[
        "ended_at"]
    # Nothing else moved.
    for preset in ("intermediate", "expert"):
        for kind in ("classic", "no_guess"):
            assert board_stats(a, p, preset, kind)["played"] == 0


def test_two_replicas_at_once_count_every_game_once(
    a: Api, b: Api, at_once_mines: Mines
) -> None:
    p = a.register()
    mines = sorted(at_once_mines)
    games = [a.create(owner=p, **AT_ONCE) for _ in range(12)]
    raced = [a.create(owner=p, **AT_ONCE) for _ in range(6)]
    answers: list[int] = []
    lock = threading.Lock()
    start = threading.Barrier(4)

    def play(base_url: str, mine: tuple[int, int], mine_games: list[Game]) -> None:
        with httpx.Client(base_url=base_url, timeout=30) as c:
            api = Api(c)
            start.wait()
            for game in mine_games:
                r = c.post(f"/games/{game.id}/reveal", json={"x": mine[0], "y": mine[1]},
                           headers=game.auth)
                with lock:
                    answers.append(r.status_code)
            del api

    urls = (str(a.client.base_url), str(b.client.base_url))
    # Each replica ends half the games; both race to end each of the raced ones, with
    # different mines.
    threads = [
        threading.Thread(target=play, args=(urls[0], mines[0], games[0::2])),
        threading.Thread(target=play, args=(urls[1], mines[0], games[1::2])),
        threading.Thread(target=play, args=(urls[0], mines[1], raced)),
        threading.Thread(target=play, args=(urls[1], mines[2], raced)),
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    # Every raced game was ended by one of its two movers; the other was told it was over.
    assert answers.count(200) == 18 and answers.count(409) == 6, answers
    classic = board_stats(b, p, "beginner", "classic")
    assert (classic["played"], classic["won"], classic["streak"]) == (18, 0, 0)
    recent = a.player(p)["recent"]
    assert len(recent) == 18 == len({r["id"] for r in recent})
    assert {r["id"] for r in recent} == {g.id for g in games + raced}


def test_the_last_move_sent_to_both_replicas_with_one_key_counts_once(
    a: Api, b: Api, seeded_mines: Mines
) -> None:
    """A client that retries the winning click on the other replica (the same
    Idempotency-Key, at the same moment) gets one answer twice, and one win is counted."""
    p = a.register()
    game = a.create(owner=p, **SEEDED)
    board = game.view["board"]
    diff = a.reveal(game, *FIRST)
    while True:
        board = apply_cells(board, diff["cells"])
        left = sorted(positions(board, "#") - seeded_mines, key=lambda q: (q[1], q[0]))
        assert left and diff["status"] == "playing"
        if len(left) == 1:
            break
        diff = b.reveal(game, *left[0])
    last = {"x": left[0][0], "y": left[0][1]}
    headers = {**game.auth, "Idempotency-Key": "the-last-click"}
    answers: list[httpx.Response] = []
    lock = threading.Lock()
    start = threading.Barrier(2)

    def send(api: Api) -> None:
        start.wait()
        r = api.client.post(f"/games/{game.id}/reveal", json=last, headers=headers)
        with lock:
            answers.append(r)

    threads = [threading.Thread(target=send, args=(api,)) for api in (a, b)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [r.status_code for r in answers] == [200, 200], [r.text for r in answers]
    assert answers[0].json() == answers[1].json()
    assert answers[0].json()["status"] == "won"
    # Once more, later, on each replica: still the same answer, still one win.
    for api in (a, b):
        again = api.client.post(f"/games/{game.id}/reveal", json=last, headers=headers)
        assert again.status_code == 200 and again.json() == answers[0].json()
    for api in (a, b):
        classic = board_stats(api, p, "beginner", "classic")
        assert (classic["played"], classic["won"], classic["streak"]) == (1, 1, 1)
        assert [r["id"] for r in api.player(p)["recent"]] == [game.id]


@pytest.fixture
def through_proxy() -> Iterator[tuple[ChaosProxy, str]]:
    """A service whose Redis is behind a proxy that can lose a reply."""
    server = RedisServer().start()
    proxy = ChaosProxy(server.port).start()
    try:
        with running_service(proxy.url) as svc:
            yield proxy, svc.url
    finally:
        proxy.stop()
        server.cleanup()


def test_a_commit_sent_again_after_its_reply_was_lost_counts_once(
    through_proxy: tuple[ChaosProxy, str],
) -> None:
    proxy, url = through_proxy
    with httpx.Client(base_url=url, timeout=30) as c:
        api = Api(c)
        mines = learn_mines(api, SEEDED, FIRST)
        p = api.register()
        key = f"ms:{{p:{p.id}}}:player".encode()
        for end in ("lost", "won"):
            game = api.create(owner=p, **SEEDED)
            # The commit that ends the game names the player's keys: its reply is lost,
            # the client library sends it again, and the game ends once.
            proxy.drop_reply_to(key)
            if end == "lost":
                api.reveal(game, *FIRST)
                lose(api, game, mines)
            else:
                assert win(api, game, mines, FIRST)[-1]["status"] == "won"
            assert proxy.dropped_replies == (1 if end == "lost" else 2)
        classic = board_stats(api, p, "beginner", "classic")
        assert (classic["played"], classic["won"], classic["streak"]) == (2, 1, 1)
        assert [r["result"] for r in api.player(p)["recent"]] == ["won", "lost"]
