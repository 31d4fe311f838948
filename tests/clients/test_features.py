"""Hints, pauses, replays, leaderboards and daily boards through the SDK, sync and async,
against the live service."""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import Iterator
from datetime import date, datetime

import httpx
import pytest
from minesweeper import (
    AsyncClient,
    Client,
    CreatedPlayer,
    Diff,
    Forbidden,
    Game,
    GameInProgress,
    GameOver,
    Heartbeat,
    Hint,
    InvalidRequest,
    Leaderboard,
    LeaderboardEntry,
    LiveGame,
    NotFound,
    Paused,
    Replay,
    Snapshot,
    Unauthorized,
    apply_diff,
)

from tests.support import solve

from .conftest import FIRST, mines_of, safe_cells


def player_name(prefix: str) -> str:
    """A name no other test uses, within the service's 20 characters."""
    return f"{prefix}-{secrets.token_hex(4)}"


@pytest.fixture
def bot(client: Client) -> CreatedPlayer:
    """A program's account: its wins go on the bots' boards, however fast it plays."""
    return client.register(player_name("bot"), bot=True)


@pytest.fixture
def http(live_server: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=live_server, timeout=30) as h:
        yield h


def _ms(stamp: str) -> int:
    return int(datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp() * 1000)


def entry_of(board: Leaderboard, game_id: str) -> LeaderboardEntry | None:
    return next((e for e in board.entries if e.game_id == game_id), None)


def assert_ranked(board: Leaderboard, game_id: str, elapsed_ms: int) -> LeaderboardEntry:
    """The game's entry; the board may be shared with other tests, but a time is only
    missing from a full board of faster ones."""
    entry = entry_of(board, game_id)
    if entry is None:
        assert len(board.entries) == 100, f"{game_id} is not on {board}"
        assert all(e.elapsed_ms <= elapsed_ms for e in board.entries)
        pytest.skip("the shared leaderboard is full of faster times")
    return entry


def win_by_logic(client: Client, game: Game) -> None:
    """Play ``game`` to the end, one certainly safe (else least risky) cell at a time."""
    while not game.finished:
        client.reveal(game, *solve.next_cell(game.view.board, game.view.mines))


async def next_diff(live: LiveGame) -> Diff:
    async for message in live:
        if isinstance(message, Diff):
            return message
        assert isinstance(message, Heartbeat), message
    raise AssertionError("the live connection ended")


def hidden(board: list[str]) -> bool:
    return all(set(row) <= set("#F?") for row in board)


# ---- hints ----------------------------------------------------------------------------------


def test_hints_name_a_cell_and_why(client: Client) -> None:
    mines = mines_of(client, seed=501, preset="beginner")
    game = client.new_game("beginner", seed=501)
    first = client.hint(game)
    assert isinstance(first, Hint)
    assert (first.x, first.y, first.kind, first.mine_probability) == (4, 4, "safe", 0.0)
    assert "first click" in first.reason
    client.reveal(game, *FIRST)
    for _ in range(5):
        hint = client.hint(game)
        assert game[hint.x, hint.y] == "#" and hint.reason
        if hint.kind == "safe":
            assert (hint.x, hint.y) not in mines and hint.mine_probability == 0.0
            client.reveal(game, hint.x, hint.y)
        elif hint.kind == "mine":
            assert (hint.x, hint.y) in mines and hint.mine_probability == 1.0
            client.flag(game, hint.x, hint.y, "flag")
        else:
            assert 0.0 < hint.mine_probability < 1.0
            break
    # Every hint was counted, the one before the first click too; a hint is no move.
    view = client.get(game)
    assert view.stats.hints == 6 and view.stats.assisted
    assert view.version == game.view.version


def test_a_game_won_with_hints_is_assisted_and_not_ranked(
    client: Client, bot: CreatedPlayer
) -> None:
    """On a no-guess board the hints alone win, and the win stays off the leaderboard."""
    game = client.new_game("beginner", no_guess=True, player_token=bot.token)
    while not game.finished:
        hint = client.hint(game)
        assert hint.kind != "guess", f"a no-guess board needed a guess: {hint}"
        if hint.kind == "mine":
            client.flag(game, hint.x, hint.y, "flag")
        else:
            client.reveal(game, hint.x, hint.y)
    assert game.view.status == "won"
    stats = game.view.stats
    assert stats.assisted and stats.hints >= 1
    assert stats.clicks.total >= stats.clicks.useful >= 1
    board = client.leaderboard("beginner", no_guess=True, limit=100, bot=True)
    assert entry_of(board, game.id) is None


def test_hint_errors(client: Client) -> None:
    game = client.new_game("beginner", seed=502)
    with pytest.raises(Unauthorized):
        client.hint(game.id)
    with pytest.raises(Forbidden):
        client.hint(game.id, token="not-the-token")
    with pytest.raises(NotFound):
        client.hint("0" * 32, token="x")
    mines = mines_of(client, seed=502, preset="beginner")
    client.reveal(game, *FIRST)
    client.reveal(game, *sorted(mines)[0])
    with pytest.raises(GameOver):
        client.hint(game)
    # By id and token, like a move.
    other = client.new_game("beginner")
    assert client.hint(other.id, token=other.token).kind == "safe"


async def test_async_hint(aclient: AsyncClient) -> None:
    game = await aclient.new_game("intermediate", seed=503)
    hint = await aclient.hint(game)
    assert (hint.x, hint.y, hint.kind) == (8, 8, "safe")
    await aclient.reveal(game, hint.x, hint.y)
    hint = await aclient.hint(game)
    assert hint.kind in ("safe", "mine", "guess") and game[hint.x, hint.y] == "#"
    assert (await aclient.get(game)).stats.hints == 2


# ---- pause ----------------------------------------------------------------------------------


def test_pause_hides_the_board_and_stops_moves_and_the_clock(client: Client) -> None:
    game = client.new_game("beginner", seed=504)
    client.reveal(game, *FIRST)
    board = game.view.board
    diff = client.pause(game)
    assert isinstance(diff, Diff) and diff.version == 2
    assert (diff.move.action, diff.move.x, diff.move.y) == ("pause", None, None)
    # The diff lists no cells: the handle keeps its board, for the client to hide.
    assert game.paused and game.view.board == board
    view = client.get(game.id)
    assert view.paused and hidden(view.board)
    for move in (lambda: client.reveal(game, 0, 0), lambda: client.flag(game, 0, 0),
                 lambda: client.chord(game, *FIRST), lambda: client.hint(game)):
        with pytest.raises(Paused) as caught:
            move()
        assert caught.value.status == 409
    again = client.pause(game)  # already paused: nothing changes
    assert again.version == 2 and again.cells == []
    frozen = client.get(game).elapsed_ms
    time.sleep(0.4)
    assert client.get(game).elapsed_ms == frozen  # paused time does not count
    diff = client.resume(game)
    assert (diff.move.action, diff.move.x, diff.move.y, diff.version) == ("resume", None, None, 3)
    assert not game.paused and game.view.board == board
    # The server's own clock shows the pause (at least the 0.4 s slept) left out.
    assert diff.started_at is not None
    running = _ms(diff.move.at) - _ms(diff.started_at)
    assert running - diff.elapsed_ms >= 400
    client.flag(game, *safe_cells(game, set())[0])
    assert client.get(game.id).board == game.view.board


def test_pause_errors(client: Client) -> None:
    game = client.new_game("beginner", seed=505)
    with pytest.raises(Unauthorized):
        client.pause(game.id)
    with pytest.raises(Forbidden):
        client.resume(game.id, token="not-the-token")
    # A game that has not started can be paused too; by id, the handle is left alone.
    diff = client.pause(game.id, token=game.token)
    assert diff.status == "ready" and diff.move.action == "pause"
    assert not game.paused and client.get(game).paused
    client.resume(game)
    mines = mines_of(client, seed=505, preset="beginner")
    client.reveal(game, *FIRST)
    client.reveal(game, *sorted(mines)[0])
    with pytest.raises(GameOver):
        client.pause(game)


def test_a_handle_fetched_while_paused_gets_its_board_back_on_resume(client: Client) -> None:
    game = client.new_game("beginner", seed=507)
    client.reveal(game, *FIRST)
    board = game.view.board
    client.pause(game.id, token=game.token)
    client.get(game)
    assert game.paused and hidden(game.view.board)
    client.resume(game)
    assert not game.paused and game.view.board == board


async def test_a_watcher_sees_pause_and_resume(client: Client, aclient: AsyncClient) -> None:
    game = client.new_game("beginner", seed=506)
    client.reveal(game, *FIRST)
    board = game.view.board
    async with aclient.connect(game) as live:
        snapshot = await anext(live)
        assert isinstance(snapshot, Snapshot) and snapshot.game.version == 1
        view = snapshot.game
        await aclient.pause(game)
        paused = await asyncio.wait_for(next_diff(live), 10)
        assert isinstance(paused, Diff) and paused.move.action == "pause"
        assert paused.move.x is None and paused.move.y is None
        assert paused.paused and paused.cells == []
        view = apply_diff(view, paused)
        assert view.paused and view.board == board  # kept, for the client to hide
        with pytest.raises(Paused):  # a move over the socket is refused too
            await live.reveal(0, 0)
        await aclient.resume(game)
        resumed = await asyncio.wait_for(next_diff(live), 10)
        assert isinstance(resumed, Diff) and resumed.move.action == "resume"
        view = apply_diff(view, resumed)
        assert not view.paused and view.board == board
        diff = await live.flag(*safe_cells(game, set())[0])
        assert diff.version == 4
        assert await asyncio.wait_for(next_diff(live), 10) == diff
    assert live.version == 4


async def test_a_refused_token_fails_the_moves_with_its_own_error(aclient: AsyncClient) -> None:
    """The auth message carries an id, so its refusal is told apart from a move's answer:
    a move waiting on a wrongly authorised socket fails with the refusal."""
    game = await aclient.new_game("beginner")
    for _ in range(3):
        async with aclient.connect(game.id, token="not-the-token") as live:
            with pytest.raises(Forbidden):
                await live.flag(0, 0)
            assert isinstance(await anext(live), Snapshot)  # sent before the token was read
            with pytest.raises(Forbidden):  # then the stream ends with the refusal
                await anext(live)
    # A good token is never answered, and the socket goes on as usual.
    async with aclient.connect(game) as live:
        assert isinstance(await anext(live), Snapshot)
        assert (await live.flag(0, 0)).cells == [(0, 0, "F")]


# ---- replays --------------------------------------------------------------------------------


def test_replay_after_a_loss(client: Client) -> None:
    mines = mines_of(client, seed=507, preset="beginner")
    replayed = client.register(player_name("replayed"))
    game = client.new_game("beginner", seed=507, player_token=replayed.token)
    flagged = sorted(mines)[-1]
    client.flag(game, *flagged, "flag")  # before the clock starts, and an explicit mark
    client.reveal(game, *FIRST)
    with pytest.raises(GameInProgress) as caught:
        client.replay(game)
    assert caught.value.status == 409
    client.pause(game)
    client.resume(game)
    fatal = sorted(mines)[0]
    client.reveal(game, *fatal)
    assert game.view.status == "lost"
    replay = client.replay(game.id)
    assert isinstance(replay, Replay)
    assert (replay.id, replay.status, replay.preset, replay.seed) == (
        game.id, "lost", "beginner", 507)
    assert (replay.player_id, replay.player) == (replayed.player.id, replayed.player.name)
    assert replay.daily is None
    assert [(m.version, m.action, m.x, m.y) for m in replay.moves] == [
        (1, "flag", *flagged),
        (2, "reveal", *FIRST),
        (3, "pause", None, None),
        (4, "resume", None, None),
        (5, "reveal", *fatal),
    ]
    assert [m.mark for m in replay.moves] == ["flag", None, None, None, None]
    assert replay.complete
    stamps = [m.at for m in replay.moves]
    assert stamps == sorted(stamps) and replay.started_at == stamps[1]
    assert replay.ended_at == stamps[-1] and replay.elapsed_ms == game.view.elapsed_ms
    layout = {(x, y) for y, row in enumerate(replay.layout) for x, c in enumerate(row)
              if c == "*"}
    assert layout == mines and set("".join(replay.layout)) == {"*", "."}
    # After the first click a safe cell was known: clicking a mine was a mistake.
    assert replay.fatal is not None
    assert (replay.fatal.x, replay.fatal.y, replay.fatal.forced_guess) == (*fatal, False)
    assert replay.stats.clicks.total == 3 and not replay.stats.assisted
    assert replay.opened == []


async def test_replay_of_a_forced_guess(client: Client, aclient: AsyncClient) -> None:
    """With mines placed at creation, a first click on a mine had nothing to go on."""
    mines = mines_of(client, seed=508, preset="beginner", first_click="none")
    game = await aclient.new_game("beginner", seed=508, first_click="none")
    mine = sorted(mines)[0]
    await aclient.reveal(game, *mine)
    assert game.view.status == "lost"
    replay = await aclient.replay(game)
    assert replay.fatal is not None
    assert (replay.fatal.x, replay.fatal.y, replay.fatal.forced_guess) == (*mine, True)
    assert [(m.action, m.x, m.y) for m in replay.moves] == [("reveal", *mine)]


async def test_replay_errors(aclient: AsyncClient) -> None:
    with pytest.raises(NotFound):
        await aclient.replay("0" * 32)
    game = await aclient.new_game("beginner")
    with pytest.raises(GameInProgress):
        await aclient.replay(game.id)


# ---- leaderboards and daily boards ------------------------------------------------------------


def test_a_win_enters_the_leaderboard(
    client: Client, http: httpx.Client, bot: CreatedPlayer
) -> None:
    name = bot.player.name
    game_id, _ = solve.win(http, preset="beginner", player_token=bot.token)
    replay = client.replay(game_id)
    assert replay.status == "won" and replay.player == name
    board = client.leaderboard("beginner", limit=100, bot=True)
    assert (board.preset, board.no_guess, board.date, board.bot) == (
        "beginner", False, None, True)
    entry = assert_ranked(board, game_id, replay.elapsed_ms)
    assert (entry.player_id, entry.player) == (bot.player.id, name)
    assert entry.elapsed_ms == replay.elapsed_ms
    assert entry.bbbv == replay.stats.bbbv and entry.ended_at == replay.ended_at
    assert board.entries[entry.rank - 1] == entry
    assert [e.rank for e in board.entries] == list(range(1, len(board.entries) + 1))
    times = [e.elapsed_ms for e in board.entries]
    assert times == sorted(times)
    # The top few are the head of the same list.
    assert client.leaderboard("beginner", limit=3, bot=True).entries == board.entries[:3]


async def test_leaderboard_queries(aclient: AsyncClient) -> None:
    board = await aclient.leaderboard("expert", no_guess=True, limit=1)
    assert (board.preset, board.no_guess, board.date) == ("expert", True, None)
    assert len(board.entries) <= 1
    day = date(2001, 1, 1)  # before the service existed: nobody played that day
    for when in (day, "2001-01-01"):
        old = await aclient.leaderboard("intermediate", date=when)
        assert (old.date, old.entries) == ("2001-01-01", [])
    with pytest.raises(NotFound):
        await aclient.leaderboard("huge")  # type: ignore[arg-type]
    for bad in ({"limit": 0}, {"limit": 101}, {"date": "1/1/2001"}):
        with pytest.raises(InvalidRequest):
            await aclient.leaderboard("beginner", **bad)


def test_daily_board_is_shared_and_ranked_on_its_own(client: Client, bot: CreatedPlayer) -> None:
    name = bot.player.name
    game = client.new_game(daily="beginner", no_guess=True, player_token=bot.token)
    twin = client.new_game(daily="beginner", no_guess=True)
    v = game.view
    assert v.daily == v.created_at[:10]  # today, in UTC
    assert (v.preset, v.no_guess, v.player, v.version, v.started_at) == (
        "beginner", True, name, 0, None)
    assert not hidden(v.board) and v.board == twin.view.board  # the same start for all
    win_by_logic(client, game)
    assert game.view.status == "won" and not game.view.stats.assisted
    # Its replay shows the day's mines: it waits for the day's end.
    with pytest.raises(GameInProgress):
        client.replay(game)
    assert v.daily is not None
    board = client.leaderboard("beginner", no_guess=True, date=v.daily, limit=100, bot=True)
    assert (board.date, board.no_guess) == (v.daily, True)
    [entry] = [e for e in board.entries if e.player_id == bot.player.id]
    assert (entry.player, entry.game_id, entry.elapsed_ms) == (name, None, game.view.elapsed_ms)
    # The everyday board of the preset does not mix with the daily one.
    everyday = client.leaderboard("beginner", no_guess=True, limit=100, bot=True)
    assert entry_of(everyday, game.id) is None


async def test_async_daily_and_player(aclient: AsyncClient) -> None:
    ada = await aclient.register()
    game = await aclient.new_game(daily="intermediate", player_token=ada.token)
    v = game.view
    assert v.daily and v.preset == "intermediate" and v.player == ada.player.name
    assert not v.no_guess and v.status == "playing"
    twin = await aclient.new_game(daily="intermediate")
    assert twin.view.board == v.board and twin.view.player is None
    with pytest.raises(InvalidRequest):
        await aclient.new_game("expert", daily="expert")
    with pytest.raises(InvalidRequest):
        await aclient.new_game(daily="expert", seed=1)
