"""The synchronous SDK against a live service: whole games, every error type."""

from __future__ import annotations

import minesweeper
import msgspec
import pytest
from minesweeper import (
    ApiError,
    Client,
    Forbidden,
    GameInProgress,
    GameOver,
    InvalidRequest,
    NotFound,
    Unauthorized,
    VersionConflict,
)
from minesweeper.wire import Diff, GameView, Problem

from .conftest import FIRST, mines_of, safe_cells


def test_win_a_seeded_game(client: Client) -> None:
    mines = mines_of(client, seed=101, preset="beginner")
    assert len(mines) == 10
    game = client.new_game("beginner", seed=101)
    assert game.view.status == "ready" and game.token
    first = client.reveal(game, *FIRST)
    assert first.status == "playing" and first.version == 1 and first.started_at
    diff = first
    for x, y in safe_cells(game, mines):
        if game[x, y] == "#":  # an earlier cascade may have opened it
            diff = client.reveal(game, x, y)
    assert diff.status == "won" and diff.ended_at is not None
    assert diff.stats is not None and diff.stats.bbbv == diff.stats.bbbv_done
    # The handle followed every diff: it is the view the service has.
    view = client.get(game.id)
    assert isinstance(view, GameView)
    assert game.view.board == view.board
    assert view.status == "won" and view.mines_left == 0
    flags = {(x, y) for y, row in enumerate(view.board) for x, c in enumerate(row) if c == "F"}
    assert flags == mines


def test_lose_and_no_move_after(client: Client) -> None:
    mines = mines_of(client, seed=102, preset="beginner")
    game = client.new_game("beginner", seed=102)
    client.reveal(game, *FIRST)
    x, y = sorted(mines)[0]
    diff = client.reveal(game, x, y)
    assert diff.status == "lost" and game.view.board[y][x] == "X"
    with pytest.raises(GameOver) as caught:
        client.flag(game, 0, 0)
    assert caught.value.status == 409 and caught.value.problem.code == "game_over"


def test_moves_by_id_and_token(client: Client) -> None:
    game = client.new_game(width=8, height=6, mines=5, seed=7, question_marks=True)
    assert (game.view.width, game.view.height, game.view.mines) == (8, 6, 5)
    assert game.view.preset is None and game.view.question_marks
    # By id, with the token given: the handle does not change.
    diff = client.flag(game.id, 0, 0, token=game.token)
    assert diff.cells == [(0, 0, "F")] and diff.mines_left == 4
    assert game.view.version == 0
    assert client.flag(game.id, 0, 0, token=game.token).cells == [(0, 0, "?")]
    assert client.flag(game.id, 0, 0, "none", token=game.token).cells == [(0, 0, "#")]
    assert client.flag(game.id, 1, 0, "flag", token=game.token).cells == [(1, 0, "F")]
    assert client.flag(game.id, 1, 0, "flag", token=game.token).cells == []  # idempotent
    # A handle that missed versions catches up by itself.
    client.reveal(game, 7, 5)
    fresh = client.get(game.id)
    same_clock = {"server_time": game.view.server_time, "elapsed_ms": game.view.elapsed_ms}
    assert msgspec.structs.replace(fresh, **same_clock) == game.view


def test_board_text(client: Client) -> None:
    game = client.new_game("beginner", seed=103)
    client.reveal(game, *FIRST)
    text = client.board_text(game)
    rows, _, status = text.rstrip("\n").partition("\n\n")
    assert rows.splitlines() == game.view.board
    assert "playing" in status and game.id in status


def test_if_match_and_idempotency_key(client: Client) -> None:
    game = client.new_game("beginner", seed=104)
    client.reveal(game, *FIRST, if_match=0)
    with pytest.raises(VersionConflict) as caught:
        client.flag(game, 0, 0, if_match=0)
    assert caught.value.status == 412
    first = client.flag(game, 8, 8, idempotency_key="flag-8-8")
    again = client.flag(game, 8, 8, idempotency_key="flag-8-8")
    assert again == first and client.get(game).version == first.version
    with pytest.raises(InvalidRequest):  # the same key for another move
        client.flag(game, 0, 8, idempotency_key="flag-8-8")


def test_reset(client: Client) -> None:
    ada = client.register()
    game = client.new_game(
        width=10, height=8, mines=12, first_click="safe", player_token=ada.token
    )
    client.reveal(game, 5, 5)
    fresh = client.reset(game)
    assert fresh.id != game.id and fresh.token != game.token
    v = fresh.view
    assert (v.width, v.height, v.mines, v.first_click) == (10, 8, 12, "safe")
    assert (v.player_id, v.player) == (ada.player.id, ada.player.name)
    assert v.status == "ready" and v.version == 0


@pytest.mark.parametrize(
    ("call", "kind", "status"),
    [
        (lambda c, g: c.get("0" * 32), NotFound, 404),
        (lambda c, g: c.reveal("0" * 32, 0, 0, token="x"), NotFound, 404),
        (lambda c, g: c.reveal(g.id, 0, 0), Unauthorized, 401),
        (lambda c, g: c.reveal(g.id, 0, 0, token="not-the-token"), Forbidden, 403),
        (lambda c, g: c.reset(g.id, token="not-the-token"), Forbidden, 403),
        (lambda c, g: c.reveal(g, 9, 0), InvalidRequest, 422),
        (lambda c, g: c.flag(g, 0, 0, "question"), InvalidRequest, 422),
        (lambda c, g: c.new_game(width=3, height=3, mines=5), InvalidRequest, 422),
        (lambda c, g: c.new_game("beginner", width=9), InvalidRequest, 422),
        (lambda c, g: c.register("no/slashes"), InvalidRequest, 422),
        (lambda c, g: c.player("0" * 32), NotFound, 404),
        (lambda c, g: c.me(player_token=g.token), Unauthorized, 401),
        (lambda c, g: c.reveal(g, 0, 0, if_match=5), VersionConflict, 412),
        (lambda c, g: c.reveal(g, 0, 0, idempotency_key="bad key"), InvalidRequest, 400),
        (lambda c, g: c.hint(g.id), Unauthorized, 401),
        (lambda c, g: c.pause(g.id, token="not-the-token"), Forbidden, 403),
        (lambda c, g: c.replay(g), GameInProgress, 409),
        (lambda c, g: c.replay("0" * 32), NotFound, 404),
        (lambda c, g: c.leaderboard("huge"), NotFound, 404),
        (lambda c, g: c.leaderboard("beginner", limit=0), InvalidRequest, 422),
        (lambda c, g: c.new_game(daily="expert", seed=1), InvalidRequest, 422),
    ],
)
def test_errors_raise_their_type(client: Client, call: object, kind: type[ApiError],
                                 status: int) -> None:
    game = client.new_game("beginner")
    with pytest.raises(kind) as caught:
        call(client, game)  # type: ignore[operator]
    err = caught.value
    assert type(err) is kind and isinstance(err, ApiError)
    assert err.status == status == err.problem.status
    assert err.problem.code == kind.code and err.detail == err.problem.detail
    assert err.detail in str(err)


def test_every_code_has_its_class() -> None:
    classes = {
        "invalid_request": minesweeper.InvalidRequest,
        "unauthorized": minesweeper.Unauthorized,
        "forbidden": minesweeper.Forbidden,
        "not_found": minesweeper.NotFound,
        "game_over": minesweeper.GameOver,
        "paused": minesweeper.Paused,
        "game_in_progress": minesweeper.GameInProgress,
        "version_conflict": minesweeper.VersionConflict,
        "too_large": minesweeper.TooLarge,
        "rate_limited": minesweeper.RateLimited,
        "store_unavailable": minesweeper.StoreUnavailable,
    }
    from minesweeper.errors import error_for

    for code, kind in classes.items():
        err = error_for(Problem(title="t", status=400, code=code, detail="d"), retry_after=2)
        assert type(err) is kind and err.retry_after == 2
    unknown = error_for(Problem(title="t", status=500, code="internal_error", detail="d"))
    assert type(unknown) is ApiError


def test_a_diff_is_the_wire_diff(client: Client) -> None:
    game = client.new_game("beginner", seed=105)
    diff = client.reveal(game, *FIRST)
    assert isinstance(diff, Diff)
    assert diff.move.action == "reveal" and (diff.move.x, diff.move.y) == FIRST
    assert all(c.isdigit() for _, _, c in diff.cells)
