"""Hints, pause, replays, leaderboards, daily and no-guess boards, through HTTP and WebSocket."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from datetime import datetime
from typing import Any

import httpx
import pytest
import redis
import websockets
from websockets.sync.client import connect

from service import engine
from service.engine import grid, solver
from service.store import keys
from tests.support.play import Api, Player, stored_mines
from tests.support.solve import next_cell, play_out, win


@pytest.fixture
def http(live_server: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=live_server, timeout=30) as client:
        yield client


def create(
    http: httpx.Client, player: Player | None = None, **body: Any
) -> tuple[str, dict[str, str], dict[str, Any]]:
    r = http.post("/games", json=body, headers=player.auth if player else {})
    assert r.status_code == 201, r.text
    data = r.json()
    return data["game"]["id"], {"Authorization": f"Bearer {data['token']}"}, data["game"]


@pytest.fixture
def bot(http: httpx.Client) -> Player:
    """A program's account: its wins go on the bots' boards, however fast it plays."""
    return Api(http).register(bot=True)


def bots_board(http: httpx.Client, preset: str, **query: Any) -> list[dict[str, Any]]:
    r = http.get(f"/leaderboards/{preset}", params={"limit": 100, "bot": "true", **query})
    assert r.status_code == 200, r.text
    entries: list[dict[str, Any]] = r.json()["entries"]
    return entries


def ms(stamp: str) -> int:
    return int(datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp() * 1000)


def mines_of(
    seed: int, settings: engine.Settings, first: tuple[int, int], **options: Any
) -> set[tuple[int, int]]:
    """The layout a seeded game gets for a first click, worked out with the engine itself."""
    game = engine.new_game(settings, seed=seed, now_ms=0, **options)
    game, _ = engine.reveal(game, *first, 0)
    layout = grid.unpack(game.layout, game.width, game.height)
    return {(x, y) for y, row in enumerate(layout.tolist()) for x, m in enumerate(row) if m}


# ---- hints ---------------------------------------------------------------------------------


def test_a_hint_names_a_safe_cell_with_its_reason_and_is_counted(http: httpx.Client) -> None:
    game_id, auth, _ = create(http, preset="expert", seed=99)
    first = http.post(f"/games/{game_id}/hint", headers=auth).json()
    assert first["kind"] == "safe" and first["mine_probability"] == 0.0
    http.post(f"/games/{game_id}/reveal", json={"x": first["x"], "y": first["y"]}, headers=auth)
    for _ in range(5):
        hint = http.post(f"/games/{game_id}/hint", headers=auth).json()
        assert hint["reason"]
        if hint["kind"] == "safe":
            diff = http.post(f"/games/{game_id}/reveal", json={"x": hint["x"], "y": hint["y"]},
                             headers=auth).json()
            assert diff["status"] != "lost"
    view = http.get(f"/games/{game_id}").json()
    assert view["stats"]["hints"] == 6
    assert view["stats"]["assisted"] is True


def test_hints_need_the_token_and_a_running_game(http: httpx.Client) -> None:
    game_id, auth, _ = create(http, preset="beginner", seed=5)
    assert http.post(f"/games/{game_id}/hint").status_code == 401
    assert http.post(f"/games/{game_id}/hint", headers={"Authorization": "Bearer no"}
                     ).status_code == 403
    mine = sorted(mines_of(5, engine.preset("beginner"), (4, 4)))[0]
    http.post(f"/games/{game_id}/reveal", json={"x": 4, "y": 4}, headers=auth)
    http.post(f"/games/{game_id}/reveal", json={"x": mine[0], "y": mine[1]}, headers=auth)
    r = http.post(f"/games/{game_id}/hint", headers=auth)
    assert r.status_code == 409 and r.json()["code"] == "game_over"


# ---- pause ---------------------------------------------------------------------------------


async def test_pause_hides_the_board_stops_the_clock_and_blocks_moves(live_server: str) -> None:
    async with httpx.AsyncClient(base_url=live_server, timeout=30) as http:
        created = (await http.post("/games", json={"preset": "beginner", "seed": 8})).json()
        game_id, auth = created["game"]["id"], {"Authorization": f"Bearer {created['token']}"}
        await http.post(f"/games/{game_id}/reveal", json={"x": 4, "y": 4}, headers=auth)
        ws_url = live_server.replace("http://", "ws://") + f"/games/{game_id}/events?since=1"
        async with websockets.connect(ws_url) as ws:
            board = (await http.get(f"/games/{game_id}")).json()["board"]
            paused = (await http.post(f"/games/{game_id}/pause", headers=auth)).json()
            assert paused["move"]["action"] == "pause" and paused["version"] == 2
            # The diff names no cell: the client hides its board while ``paused``.
            assert paused["paused"] is True and paused["cells"] == []
            assert json.loads(await asyncio.wait_for(ws.recv(), 10)) == paused

            view = (await http.get(f"/games/{game_id}")).json()
            assert view["paused"] is True
            text = (await http.get(f"/games/{game_id}", headers={"Accept": "text/plain"})).text
            assert text.splitlines()[-1].startswith("paused  mines left 10")
            assert set("".join(view["board"])) == {"#"}
            frozen = view["elapsed_ms"]
            await asyncio.sleep(0.3)
            assert (await http.get(f"/games/{game_id}")).json()["elapsed_ms"] == frozen

            r = await http.post(f"/games/{game_id}/flag", json={"x": 0, "y": 0}, headers=auth)
            assert r.status_code == 409 and r.json()["code"] == "paused"
            again = (await http.post(f"/games/{game_id}/pause", headers=auth)).json()
            assert again["cells"] == [] and again["version"] == 2

            resumed = (await http.post(f"/games/{game_id}/resume", headers=auth)).json()
            assert resumed["version"] == 3
            assert resumed["paused"] is False and resumed["cells"] == []
            assert json.loads(await asyncio.wait_for(ws.recv(), 10)) == resumed
            after = (await http.get(f"/games/{game_id}")).json()
            assert after["board"] == board and after["paused"] is False
            # This socket's board came from diffs, not from a paused snapshot: nothing follows.
            with pytest.raises(TimeoutError):
                await asyncio.wait_for(ws.recv(), 0.5)
            # The server's own clock shows the pause (at least the 0.3 s slept) left out.
            running = ms(after["server_time"]) - ms(after["started_at"])
            assert running - after["elapsed_ms"] >= 300


async def test_a_socket_that_saw_the_game_paused_gets_the_board_again_on_resume(
    live_server: str,
) -> None:
    async with httpx.AsyncClient(base_url=live_server) as http:
        created = (await http.post("/games", json={"preset": "beginner", "seed": 8})).json()
        game_id, auth = created["game"]["id"], {"Authorization": f"Bearer {created['token']}"}
        await http.post(f"/games/{game_id}/reveal", json={"x": 4, "y": 4}, headers=auth)
        board = (await http.get(f"/games/{game_id}")).json()["board"]
        await http.post(f"/games/{game_id}/pause", headers=auth)
        ws_url = live_server.replace("http://", "ws://") + f"/games/{game_id}/events"
        async with websockets.connect(ws_url) as ws:
            first = json.loads(await asyncio.wait_for(ws.recv(), 10))
            assert first["type"] == "snapshot" and first["game"]["paused"] is True
            assert set("".join(first["game"]["board"])) == {"#"}

            resumed = (await http.post(f"/games/{game_id}/resume", headers=auth)).json()
            assert json.loads(await asyncio.wait_for(ws.recv(), 10)) == resumed
            fresh = json.loads(await asyncio.wait_for(ws.recv(), 10))
            assert fresh["type"] == "snapshot"
            assert fresh["game"]["version"] == 3 and fresh["game"]["paused"] is False
            assert fresh["game"]["board"] == board


# ---- replays -------------------------------------------------------------------------------


def test_a_replay_is_refused_before_the_end(http: httpx.Client) -> None:
    game_id, _, _ = create(http, preset="beginner")
    r = http.get(f"/games/{game_id}/replay")
    assert r.status_code == 409
    assert r.headers["content-type"] == "application/problem+json"


def test_a_replay_reproduces_the_game_exactly(http: httpx.Client) -> None:
    game_id, auth, _ = create(http, preset="intermediate", seed=1234, question_marks=True)
    for _ in range(3):  # flag, question mark, and back to hidden
        http.post(f"/games/{game_id}/flag", json={"x": 0, "y": 0}, headers=auth)
    assert play_out(http, game_id, auth["Authorization"][7:], (8, 8)) in ("won", "lost")
    final = http.get(f"/games/{game_id}").json()
    replay = http.get(f"/games/{game_id}/replay").json()
    assert replay["seed"] == 1234 and replay["status"] == final["status"]
    assert [m["version"] for m in replay["moves"]] == list(range(1, final["version"] + 1))

    # Same settings, seed and moves through the engine give the same final board.
    game = engine.new_game(
        engine.preset("intermediate"), seed=replay["seed"], now_ms=0, question_marks=True
    )
    for m in replay["moves"]:
        game, _ = engine.apply(game, engine.Move(m["action"], m["x"], m["y"]), 0)
    assert game.board() == final["board"]
    layout = [row for row in replay["layout"]]
    assert sum(row.count("*") for row in layout) == 40


def _with_cells(board: list[str], cells: list[list[Any]]) -> list[str]:
    rows = [list(row) for row in board]
    for x, y, chars in cells:
        rows[y][x : x + len(chars)] = chars
    return ["".join(row) for row in rows]


def test_a_replay_carries_the_cells_as_stored(
    http: httpx.Client, live_server: str, redis_url: str
) -> None:
    """A daily board (open at the start), paused, flagged and played out: applying the
    replay's opened cells, then each move's cells, gives every board the player saw."""
    game_id, auth, view = create(http, daily="beginner")
    http.post(f"/games/{game_id}/pause", headers=auth)
    http.post(f"/games/{game_id}/resume", headers=auth)
    hidden = next((x, y) for y, row in enumerate(view["board"]) for x, c in enumerate(row)
                  if c == "#")
    http.post(f"/games/{game_id}/flag", json={"x": hidden[0], "y": hidden[1]}, headers=auth)
    http.post(f"/games/{game_id}/flag", json={"x": hidden[0], "y": hidden[1]}, headers=auth)
    start = next_cell(view["board"], view["mines"])
    assert play_out(http, game_id, auth["Authorization"][7:], start) in ("won", "lost")
    final = http.get(f"/games/{game_id}").json()
    with redis.Redis.from_url(redis_url) as r:  # a daily board's replay waits for the day's end
        r.hset(keys.game(game_id), "daily", "2001-01-01")
    replay = http.get(f"/games/{game_id}/replay").json()

    blank = ["#" * view["width"]] * view["height"]
    assert replay["opened"] and _with_cells(blank, replay["opened"]) == view["board"]
    ws_url = live_server.replace("http://", "ws://") + f"/games/{game_id}/events?since=0"
    with connect(ws_url, open_timeout=30) as ws:
        diffs = [json.loads(ws.recv(timeout=30)) for _ in replay["moves"]]
    board = view["board"]
    for move, diff in zip(replay["moves"], diffs, strict=True):
        assert move["version"] == diff["version"] and move["cells"] == diff["cells"]
        board = _with_cells(board, move["cells"])
    assert [m["cells"] for m in replay["moves"][:2]] == [[], []]  # the pause and the resume
    assert board == final["board"]


def test_a_replay_of_a_big_board_carries_its_runs(http: httpx.Client) -> None:
    """A cascade on a 200x200 board changes thousands of cells, and the loss after it
    shows its 1,200 mines: both diffs come as runs, and the replay keeps them so."""
    game_id, auth, view = create(http, width=200, height=200, mines=1200, seed=2)
    first = http.post(f"/games/{game_id}/reveal", json={"x": 100, "y": 100}, headers=auth).json()
    board = _with_cells(view["board"], first["cells"])
    mines = engine.new_game(engine.custom(200, 200, 1200), seed=2, now_ms=0)
    mines, _ = engine.reveal(mines, 100, 100, 0)
    mine = next(i for i in range(200 * 200) if mines.is_mine(i))
    x, y = mine % 200, mine // 200
    lost = http.post(f"/games/{game_id}/reveal", json={"x": x, "y": y}, headers=auth).json()
    assert lost["status"] == "lost"
    replay = http.get(f"/games/{game_id}/replay").json()
    assert [m["cells"] for m in replay["moves"]] == [first["cells"], lost["cells"]]
    assert any(len(chars) > 1 for _, _, chars in first["cells"])
    assert any(len(chars) > 1 for _, _, chars in lost["cells"])
    assert _with_cells(board, lost["cells"]) == http.get(f"/games/{game_id}").json()["board"]
    assert (replay["fatal"]["x"], replay["fatal"]["y"]) == (x, y)


def test_a_loss_on_the_first_click_of_a_board_was_a_forced_guess(http: httpx.Client) -> None:
    settings = engine.custom(9, 9, 30)
    game = engine.new_game(settings, seed=77, now_ms=0, first_click="none")
    layout = grid.unpack(game.layout, 9, 9)
    y, x = map(int, next(zip(*layout.nonzero(), strict=False)))
    game_id, auth, _ = create(http, width=9, height=9, mines=30, seed=77, first_click="none")
    assert http.post(f"/games/{game_id}/reveal", json={"x": x, "y": y}, headers=auth
                     ).json()["status"] == "lost"
    fatal = http.get(f"/games/{game_id}/replay").json()["fatal"]
    assert fatal == {"x": x, "y": y, "forced_guess": True}


def test_a_loss_beside_a_certain_safe_cell_was_a_mistake(http: httpx.Client) -> None:
    settings = engine.preset("expert")
    mines = mines_of(31, settings, (15, 8))
    game_id, auth, _ = create(http, preset="expert", seed=31)
    http.post(f"/games/{game_id}/reveal", json={"x": 15, "y": 8}, headers=auth)
    view = http.get(f"/games/{game_id}").json()
    assert solver.analyze(view["board"], 99).safe, "the opening must leave a certain safe cell"
    x, y = sorted(mines)[0]
    http.post(f"/games/{game_id}/reveal", json={"x": x, "y": y}, headers=auth)
    fatal = http.get(f"/games/{game_id}/replay").json()["fatal"]
    assert fatal == {"x": x, "y": y, "forced_guess": False}


# ---- leaderboards --------------------------------------------------------------------------


def test_only_fair_wins_enter_the_leaderboard(http: httpx.Client, bot: Player) -> None:
    ranked, _ = win(http, preset="beginner", player_token=bot.token)
    seeded, _ = win(http, preset="beginner", player_token=bot.token, seed=4242)
    anonymous, _ = win(http, preset="beginner")
    entries = {e["game_id"]: e for e in bots_board(http, "beginner")}
    assert ranked in entries and seeded not in entries and anonymous not in entries
    entry = entries[ranked]
    assert (entry["player_id"], entry["player"]) == (bot.id, bot.name)
    assert entry["elapsed_ms"] >= 0 and entry["bbbv"] > 0
    ranks = [e["rank"] for e in entries.values()]
    assert ranks == list(range(1, len(ranks) + 1))
    times = [e["elapsed_ms"] for e in entries.values()]
    assert times == sorted(times)


def test_a_hinted_win_is_not_ranked(http: httpx.Client, bot: Player) -> None:
    game_id, auth, _ = create(http, bot, preset="beginner")
    http.post(f"/games/{game_id}/hint", headers=auth)
    status = play_out(http, game_id, auth["Authorization"][7:], (4, 4))
    assert game_id not in [e["game_id"] for e in bots_board(http, "beginner")]
    assert status in ("won", "lost")


@pytest.mark.parametrize(
    ("path", "status"),
    [
        ("/leaderboards/huge", 404),
        ("/leaderboards/expert?limit=0", 422),
        ("/leaderboards/expert?limit=1000", 422),
        ("/leaderboards/expert?no_guess=maybe", 422),
        ("/leaderboards/expert?bot=yes", 422),
        ("/leaderboards/expert?date=yesterday", 422),
        ("/leaderboards/expert?date=2020-13-45", 422),
    ],
)
def test_bad_leaderboard_queries(http: httpx.Client, path: str, status: int) -> None:
    r = http.get(path)
    assert r.status_code == status
    assert r.headers["content-type"] == "application/problem+json"


# ---- daily boards --------------------------------------------------------------------------


def test_the_daily_board_is_the_same_for_everyone_and_hides_its_seed(http: httpx.Client) -> None:
    _, _, one = create(http, daily="intermediate")
    _, _, two = create(http, daily="intermediate")
    assert one["board"] == two["board"]
    assert one["daily"] == two["daily"] == time.strftime("%Y-%m-%d", time.gmtime())
    assert one["status"] == "playing" and one["started_at"] is None
    assert any(ch.isdigit() for row in one["board"] for ch in row)
    assert "seed" not in json.dumps(one)


def reveal_until_over(
    http: httpx.Client, game_id: str, auth: dict[str, str], cells: list[tuple[int, int]]
) -> dict[str, Any]:
    """Reveal ``cells`` in order (skipping those already open) until the game ends."""
    for x, y in cells:
        view = http.get(f"/games/{game_id}").json()
        if view["status"] != "playing":
            return dict(view)
        if view["board"][y][x] == "#":
            http.post(f"/games/{game_id}/reveal", json={"x": x, "y": y}, headers=auth)
    return dict(http.get(f"/games/{game_id}").json())


def test_the_daily_leaderboard_ranks_first_goes_only(
    http: httpx.Client, bot: Player, redis_url: str
) -> None:
    date = time.strftime("%Y-%m-%d", time.gmtime())
    game_id, auth, view = create(http, bot, daily="beginner")
    assert view["ranked"] is True and view["stats"]["bbbv_given"] >= 1
    mines = stored_mines(redis_url, game_id)  # no player is shown them today
    every = [(x, y) for y in range(view["height"]) for x in range(view["width"])]
    safe = [c for c in every if c not in mines]
    assert reveal_until_over(http, game_id, auth, safe)["status"] == "won"
    [entry] = [e for e in bots_board(http, "beginner", date=date) if e["player_id"] == bot.id]
    # The day's winning games would show its board: no id until the day is over.
    assert entry["game_id"] is None
    assert bot.id not in [e["player_id"] for e in bots_board(http, "beginner")]
    # A second go is played on a board already seen: it counts, but is not ranked.
    again_id, again_auth, again_view = create(http, bot, daily="beginner")
    assert again_view["ranked"] is False
    again = reveal_until_over(http, again_id, again_auth, safe)
    assert again["status"] == "won" and again["held"] is None
    ranked = [e for e in bots_board(http, "beginner", date=date) if e["player_id"] == bot.id]
    assert ranked == [entry]
    assert Api(http).player(bot)["stats"]["beginner"]["classic"]["won"] == 2
    # A day's boards are kept for a year after the day, not for ever.
    board = f"daily:{date}:beginner:classic:bots"
    day_end = ms(f"{date}T00:00:00.000Z") + 24 * 3600 * 1000
    store = redis.Redis.from_url(redis_url)
    try:
        for key in (keys.leaderboard_times(board), keys.leaderboard_entries(board)):
            seconds, micros = store.time()  # Redis's own clock, which the expiry runs on
            ends = seconds * 1000 + micros // 1000 + store.pttl(key)
            assert abs(ends - (day_end + 366 * 24 * 3600 * 1000)) < 60_000
    finally:
        store.close()


def test_a_daily_board_keeps_its_mines_until_the_day_is_over(
    http: httpx.Client, redis_url: str
) -> None:
    """Everybody plays today's mines: a loss shows the one hit, the replay waits, and the
    player's daily games are out of anybody else's view of them until the day ends."""
    api = Api(http)
    player = api.register()
    game_id, auth, _ = create(http, player, daily="beginner")
    mines = stored_mines(redis_url, game_id)
    boom = sorted(mines)[0]
    lost = http.post(f"/games/{game_id}/reveal", json={"x": boom[0], "y": boom[1]}, headers=auth)
    assert lost.json()["status"] == "lost"
    assert [c[:2] for c in lost.json()["cells"]] == [list(boom)]
    board = http.get(f"/games/{game_id}").json()["board"]
    assert "".join(board).count("X") == 1 and "*" not in "".join(board)
    text = http.get(f"/games/{game_id}", headers={"Accept": "text/plain"}).text
    assert text.count("X") == 1 and "*" not in text
    replay = http.get(f"/games/{game_id}/replay")
    assert replay.status_code == 409 and replay.json()["code"] == "game_in_progress"
    assert "day" in replay.json()["detail"]
    public = http.get(f"/players/{player.id}").json()
    assert game_id not in [r["id"] for r in public["recent"]]
    mine = http.get("/players/me", headers=player.auth).json()
    assert [r["id"] for r in mine["recent"]] == [game_id]
    assert mine["stats"]["beginner"]["classic"]["played"] == 1

    # Once its day is over (here: the game's day moved back one), everything shows.
    with redis.Redis.from_url(redis_url) as r:
        r.hset(keys.game(game_id), "daily", "2001-01-01")
    board = http.get(f"/games/{game_id}").json()["board"]
    assert {(x, y) for y, row in enumerate(board) for x, c in enumerate(row) if c in "*X"} == mines
    replay = http.get(f"/games/{game_id}/replay")
    assert replay.status_code == 200
    layout = replay.json()["layout"]
    assert {(x, y) for y, row in enumerate(layout) for x, c in enumerate(row) if c == "*"} == mines
    assert replay.json()["fatal"]["x"] == boom[0] and replay.json()["fatal"]["y"] == boom[1]


def test_daily_boards_take_no_seed_or_preset(http: httpx.Client) -> None:
    for body in ({"daily": "expert", "seed": 1}, {"daily": "expert", "preset": "expert"},
                 {"daily": "expert", "first_click": "none"}, {"daily": "huge"}):
        assert http.post("/games", json=body).status_code == 422, body


# ---- no-guess boards -----------------------------------------------------------------------


def test_a_no_guess_board_is_won_by_logic_alone(http: httpx.Client) -> None:
    game_id, auth, view = create(http, preset="expert", no_guess=True, seed=2024)
    assert view["no_guess"] is True
    diff = http.post(f"/games/{game_id}/reveal", json={"x": 15, "y": 8}, headers=auth).json()
    assert any(char == "0" for _, _, char in diff["cells"])
    while True:
        view = http.get(f"/games/{game_id}").json()
        if view["status"] != "playing":
            break
        analysis = solver.analyze(view["board"], view["mines"])
        assert analysis.safe, "a no-guess board left the player without a safe cell"
        x, y = analysis.safe[0]
        http.post(f"/games/{game_id}/reveal", json={"x": x, "y": y}, headers=auth)
    assert view["status"] == "won"


def test_no_guess_settings_that_cannot_be_promised_are_refused(http: httpx.Client) -> None:
    for body in (
        {"preset": "expert", "no_guess": True, "first_click": "none"},
        {"width": 1000, "height": 1000, "mines": 200000, "no_guess": True},
        {"width": 10, "height": 10, "mines": 80, "no_guess": True},
    ):
        r = http.post("/games", json=body)
        assert r.status_code == 422, body
        assert r.json()["code"] == "invalid_request"


def test_a_replay_keeps_explicit_marks(http: httpx.Client) -> None:
    game_id, auth, _ = create(http, preset="beginner", seed=12, question_marks=True)
    diff = http.post(
        f"/games/{game_id}/flag", json={"x": 0, "y": 0, "mark": "question"}, headers=auth
    ).json()
    assert diff["move"]["mark"] == "question" and diff["cells"] == [[0, 0, "?"]]
    cycled = http.post(f"/games/{game_id}/flag", json={"x": 1, "y": 0}, headers=auth).json()
    assert "mark" not in cycled["move"]
    play_out(http, game_id, auth["Authorization"][7:], (4, 4))
    replay = http.get(f"/games/{game_id}/replay").json()
    assert replay["complete"] is True
    assert replay["moves"][0]["mark"] == "question"
    assert "mark" not in replay["moves"][1]
