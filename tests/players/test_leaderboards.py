"""Leaderboards take registered players' unassisted wins: humans and bots on boards of
their own, each entry under its player's name now. A human's win no person could have
played (faster than the human records, or moves at a program's cadence) is held off the
human boards, and the game says why."""

from __future__ import annotations

import json
import time
from typing import Any
from urllib.parse import urlsplit

import msgspec
import redis
from websockets.sync.client import connect

from service import engine
from service.engine import solver
from service.store import keys
from service.store.leaderboards import Entry, board_name
from tests.support.play import Api, Game, Player, apply_cells, positions, unique_name
from tests.support.solve import HUMAN_PACE, next_cell, play_out


def board(api: Api, preset: str = "beginner", **query: Any) -> dict[str, dict[str, Any]]:
    r = api.client.get(f"/leaderboards/{preset}", params={"limit": 100, **query})
    assert r.status_code == 200, r.text
    return {e["game_id"]: e for e in r.json()["entries"]}


def no_guess_win(api: Api, player: Player | None, pace: tuple[float, float] | None) -> Game:
    """A fresh no-guess beginner board (so it may be ranked), won by logic at ``pace``."""
    game = api.create(owner=player, preset="beginner", no_guess=True)
    first = next_cell(game.view["board"], game.view["mines"])
    assert play_out(api.client, game.id, game.token, first, pace) == "won"
    return game


def test_a_humans_win_is_ranked_under_the_name_they_have_now(a: Api, b: Api) -> None:
    human = a.register()
    game = no_guess_win(b, human, HUMAN_PACE)
    view = a.view(game)
    assert view["held"] is None
    entry = board(a, no_guess="true")[game.id]
    assert (entry["player_id"], entry["player"]) == (human.id, human.name)
    assert entry["elapsed_ms"] == view["elapsed_ms"] and entry["bbbv"] == view["stats"]["bbbv"]
    assert game.id not in board(a, no_guess="true", bot="true")
    # A rename shows on the entry; the game keeps the name it was played under.
    new = unique_name("renamed")
    assert b.client.patch("/players/me", json={"name": new}, headers=human.auth).is_success
    entry = board(b, no_guess="true")[game.id]
    assert (entry["player_id"], entry["player"]) == (human.id, new)
    assert (a.view(game)["player_id"], a.view(game)["player"]) == (human.id, human.name)


def test_a_bots_wins_are_on_the_bots_board_however_fast(a: Api, b: Api) -> None:
    bot = a.register(bot=True)
    assert bot.view["bot"] is True
    game = no_guess_win(b, bot, None)
    view = a.view(game)
    assert view["held"] is None and view["stats"]["bbbv_per_second"] > 25
    assert board(a, no_guess="true", bot="true")[game.id]["player_id"] == bot.id
    assert game.id not in board(a, no_guess="true")
    stats = a.player(bot)["stats"]["beginner"]["no_guess"]
    assert stats["best_ms"] == view["elapsed_ms"]


def test_a_human_at_a_programs_speed_is_held_off(a: Api, b: Api) -> None:
    human = a.register()
    game = no_guess_win(b, human, None)
    view = b.view(game)
    held = view["held"]
    assert held is not None and held["reason"] == "faster_than_human_records", view
    assert "3BV/s" in held["detail"]
    assert game.id not in board(a, no_guess="true")
    assert game.id not in board(a, no_guess="true", bot="true")
    # The player's own record counts the win, but not as a best.
    stats = a.player(human)["stats"]["beginner"]["no_guess"]
    assert (stats["played"], stats["won"], stats["best_ms"]) == (1, 1, None)


def test_a_human_at_a_programs_cadence_is_held_off(a: Api, live_server: str) -> None:
    """Slow enough overall, but most moves sent in bursts no hand makes: a program."""
    human = a.register()
    game = a.create(owner=human, preset="beginner", no_guess=True)
    board_now = game.view["board"]
    diff = a.reveal(game, *next_cell(board_now, 10))
    board_now = apply_cells(board_now, diff["cells"])
    time.sleep(3)  # so that the 3BV a second stays far under the records
    host = urlsplit(live_server).netloc
    with connect(f"ws://{host}/games/{game.id}/events", open_timeout=30) as ws:
        ws.send(json.dumps({"type": "auth", "token": game.token}))
        spare = min(positions(board_now, "#"))
        # Flag and unflag one cell in a burst: 38 moves sent at once, taken one by one.
        for i in range(38):
            ws.send(json.dumps({"type": "flag", "x": spare[0], "y": spare[1], "id": i}))
        answered = 0
        while answered < 38:
            answered += json.loads(ws.recv(timeout=30))["type"] == "result"
    while diff["status"] == "playing":
        analysis = solver.analyze(board_now, 10)
        x, y = next(p for p in analysis.safe if board_now[p[1]][p[0]] == "#")
        diff = a.reveal(game, x, y)
        board_now = apply_cells(board_now, diff["cells"])
    assert diff["status"] == "won"
    view = a.view(game)
    assert view["stats"]["bbbv_per_second"] < 10
    held = view["held"]
    assert held is not None and held["reason"] == "machine_cadence", view
    assert game.id not in board(a, no_guess="true")


def test_a_win_paused_on_its_clock_is_not_ranked(a: Api, b: Api) -> None:
    """A paused clock is time to study a board already seen (a client keeps it, hidden
    or not), so a paused game sets no best and enters no leaderboard; a pause before
    the clock starts costs nothing."""
    human = a.register()
    paused = a.create(owner=human, preset="beginner", no_guess=True)
    assert paused.view["ranked"] is True
    early = b.client.post(f"/games/{paused.id}/pause", headers=paused.auth)
    assert early.status_code == 200 and early.json()["paused"] is True
    assert b.client.post(f"/games/{paused.id}/resume", headers=paused.auth).is_success
    first = next_cell(paused.view["board"], paused.view["mines"])
    a.reveal(paused, *first)
    assert a.view(paused)["ranked"] is True  # a pause before the clock costs nothing
    for path in ("pause", "resume"):
        assert b.client.post(f"/games/{paused.id}/{path}", headers=paused.auth).is_success
        assert a.view(paused)["ranked"] is False  # from the pause on, the view says so
    view = a.view(paused)
    assert play_out(a.client, paused.id, paused.token,
                    next_cell(view["board"], view["mines"]), HUMAN_PACE) == "won"
    assert a.view(paused)["held"] is None
    assert paused.id not in board(a, no_guess="true")
    stats = a.player(human)["stats"]["beginner"]["no_guess"]
    assert (stats["won"], stats["best_ms"]) == (1, None)
    # Paused only before its first move: ranked.
    fresh = b.create(owner=human, preset="beginner", no_guess=True)
    for path in ("pause", "resume"):
        assert a.client.post(f"/games/{fresh.id}/{path}", headers=fresh.auth).is_success
    first = next_cell(fresh.view["board"], fresh.view["mines"])
    assert play_out(b.client, fresh.id, fresh.token, first, HUMAN_PACE) == "won"
    assert fresh.id in board(a, no_guess="true")
    assert a.player(human)["stats"]["beginner"]["no_guess"]["best_ms"] == a.view(fresh)[
        "elapsed_ms"]


def test_only_players_wins_are_ranked(a: Api) -> None:
    anonymous = no_guess_win(a, None, HUMAN_PACE)
    assert anonymous.view["player_id"] is None and a.view(anonymous)["held"] is None
    assert anonymous.view["ranked"] is False
    assert anonymous.id not in board(a, no_guess="true")
    assert anonymous.id not in board(a, no_guess="true", bot="true")


def test_a_win_sent_again_is_ranked_if_its_first_answer_was_cut_short(
    a: Api, b: Api, redis_url: str
) -> None:
    """The win commits, then the replica goes before it ranks it (here: the entry taken
    out of Redis, as if never written). The client, with no answer, sends the click
    again with the same Idempotency-Key: the stored answer comes back, and the win is
    ranked then, once."""
    store = redis.Redis.from_url(redis_url)
    # Played up to its last safe cell; a board whose last cells open together (a cascade)
    # is won before that, and another bot plays another board.
    for _ in range(10):
        bot = a.register(bot=True)
        game = a.create(owner=bot, preset="beginner", no_guess=True)
        a.reveal(game, *next_cell(game.view["board"], game.view["mines"]))  # places the mines
        snap = engine.decode(store.hget(keys.game(game.id), "snap"))  # type: ignore[arg-type]
        mines = {(i % 9, i // 9) for i in range(81) if snap.is_mine(i)}
        view = a.view(game)
        while len(left := positions(view["board"], "#") - mines) > 1:
            x, y = next_cell(view["board"], view["mines"])
            a.reveal(game, x, y)
            view = a.view(game)
        if left:
            break
    last = {"x": min(left)[0], "y": min(left)[1]}
    headers = {**game.auth, "Idempotency-Key": "the-winning-click"}
    first = a.client.post(f"/games/{game.id}/reveal", json=last, headers=headers)
    assert first.json()["status"] == "won"
    name = board_name("beginner", True, bot=True)
    assert store.zrem(keys.leaderboard_times(name), game.id) == 1
    store.hdel(keys.leaderboard_entries(name), game.id)
    assert game.id not in board(a, no_guess="true", bot="true")

    again = b.client.post(f"/games/{game.id}/reveal", json=last, headers=headers)
    assert again.status_code == 200 and again.json() == first.json()
    entries = b.client.get("/leaderboards/beginner",
                           params={"limit": 100, "no_guess": "true", "bot": "true"}).json()
    assert [e["game_id"] for e in entries["entries"]].count(game.id) == 1
    stats = a.player(bot)["stats"]["beginner"]["no_guess"]
    assert (stats["played"], stats["won"]) == (1, 1)
    store.close()


def test_a_limit_of_thousands_of_digits_is_refused_as_any_other(a: Api) -> None:
    huge = "9" * 5000
    for path in (f"/leaderboards/beginner?limit={huge}", f"/ratings/race?limit={huge}"):
        r = a.client.get(path)
        assert r.status_code == 422 and r.json()["code"] == "invalid_request", (path, r.text)


def test_both_lists_take_the_same_spellings_of_bot(a: Api) -> None:
    for path in ("/leaderboards/beginner", "/ratings/race"):
        for raw, bot in (("true", True), ("1", True), ("false", False), ("0", False)):
            r = a.client.get(path, params={"bot": raw})
            assert r.status_code == 200 and r.json()["bot"] is bot, (path, raw, r.text)
        r = a.client.get(path, params={"bot": "yes"})
        assert r.status_code == 422 and r.json()["code"] == "invalid_request", (path, r.text)


def test_equal_times_and_equal_ratings_share_a_rank(a: Api, redis_url: str) -> None:
    """Ranks count the entries ahead: 1, 2, 2, 4 for times 5, 7, 7, 9 s."""
    store = redis.Redis.from_url(redis_url)
    # A day long over, that no game of this run was played on.
    name = board_name("beginner", False, "2001-01-02", bot=True)
    for i, elapsed in enumerate((7000, 5000, 9000, 7000)):
        entry = Entry(f"{i:032x}", f"{i:032x}", f"bot{i}", elapsed, 0, 5)
        store.zadd(keys.leaderboard_times(name), {entry.game_id: elapsed})
        store.hset(keys.leaderboard_entries(name), entry.game_id, msgspec.msgpack.encode(entry))
    entries = a.client.get("/leaderboards/beginner",
                           params={"date": "2001-01-02", "bot": "true"}).json()["entries"]
    assert [(e["rank"], e["elapsed_ms"]) for e in entries] == [
        (1, 5000), (2, 7000), (2, 7000), (4, 9000)]
    # Far above any rating a race of this run can reach, and taken out again.
    pool = "race:bot"
    ratings = {"f1" * 16: 90000.04, "f2" * 16: 90000.0, "f3" * 16: 80000.0, "f4" * 16: 95000.0,
               "f5" * 16: 99000.0, "f6" * 16: 98000.0}
    try:
        for pid, mu in ratings.items():
            # The best two are provisional (listed before the list took established
            # ratings only): passed over, and the four after them fill the limit.
            games = 2 if mu > 97000 else 30
            store.hset(keys.ratings(pool), pid, f"{mu:.4f} 100.0000 {games}")
            store.zadd(keys.rating_top(pool), {pid: mu})
        top = a.client.get("/ratings/race", params={"bot": "true", "limit": 4}).json()
        assert [(e["rank"], e["rating"]) for e in top["entries"]] == [
            (1, 95000.0), (2, 90000.0), (2, 90000.0), (4, 80000.0)]
    finally:
        store.hdel(keys.ratings(pool), *ratings)
        store.zrem(keys.rating_top(pool), *ratings)
        store.close()
