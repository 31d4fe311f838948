"""Players in the SDK and the ``minesweeper`` command: register, a player's token for new
games, profiles, renames, and name clashes as their own exception."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import msgspec
import pytest
from minesweeper import AsyncClient, Client, CreatedPlayer, NameTaken, PlayerView, Unauthorized
from minesweeper.tokens import TokenStore

from tests.support.play import stored_mines, unique_name

from .conftest import FIRST, mines_of, safe_cells


def test_register_play_as_the_player_and_read_the_profile(client: Client) -> None:
    created = client.register(unique_name("sdk"))
    assert isinstance(created, CreatedPlayer) and not created.player.bot
    mines = mines_of(client, seed=808, preset="beginner")
    with Client(client.base_url, player_token=created.token) as mine:
        game = mine.new_game("beginner", seed=808)
        assert (game.view.player_id, game.view.player) == (created.player.id, created.player.name)
        mine.reveal(game, *FIRST)
        mine.reveal(game, *sorted(mines)[0])
        me = mine.me()
    assert isinstance(me, PlayerView) and me == client.player(created.player.id)
    assert me.stats.beginner.classic.played == 1 and me.recent[0].id == game.id
    assert me.recent[0].result == "lost" and me.ratings == {}
    with pytest.raises(NameTaken) as taken:
        client.register(created.player.name.upper())
    assert taken.value.status == 409
    renamed = client.rename(unique_name("sdk2"), player_token=created.token)
    assert renamed.id == created.player.id and renamed.name != created.player.name
    with pytest.raises(Unauthorized):
        client.me()  # this client has no player


async def test_async_register_guest_and_bot(aclient: AsyncClient) -> None:
    guest = await aclient.register()
    assert guest.player.name and not guest.player.bot
    bot = await aclient.register(unique_name("abot"), bot=True)
    assert bot.player.bot
    game = await aclient.new_game("expert", player_token=bot.token)
    assert game.view.player_id == bot.player.id
    aclient.player_token = guest.token
    assert (await aclient.me()).id == guest.player.id
    board = await aclient.leaderboard("expert", bot=True)
    assert board.bot and board.preset == "expert"


def test_cli_register_profile_rename_and_new_games(
    cli: Any, cli_env: dict[str, str], live_server: str
) -> None:
    name = unique_name("cli")
    out = cli("register", name).stdout
    assert out.startswith(f"player {name} (") and "token saved" in out
    saved = json.loads(Path(cli_env["MINESWEEPER_TOKENS"]).read_text())
    (key,) = [k for k in saved if k.startswith("player@")]
    assert key == f"player@{live_server}" and saved[key]["token"].count(".") == 1
    # New games are the player's from now on; --anonymous makes one that is nobody's.
    created = json.loads(cli("new", "--seed", "9", "--json").stdout)
    assert created["game"]["player"] == name
    anonymous = json.loads(cli("new", "--anonymous", "--json").stdout)
    assert anonymous["game"]["player_id"] is None
    cli("reveal", created["game"]["id"], *map(str, FIRST))
    profile = cli("profile").stdout.splitlines()
    assert profile[0].startswith(f"player {name} (")
    assert profile[1].split() == ["board", "played", "won", "best", "3BV/s", "streak", "best"]
    assert profile[2].split()[:3] == ["beginner", "0", "0"]
    assert profile[-1] == "no finished games yet"
    me = msgspec.json.decode(cli("profile", "--json").stdout, type=PlayerView)
    other = cli("profile", me.id).stdout.splitlines()
    assert other[0] == profile[0]
    new = unique_name("cli2")
    assert cli("rename", new).stdout.strip() == f"now called {new}"
    assert cli("profile").stdout.startswith(f"player {new} (")
    # A name somebody has, and a bad one.
    taken = cli("register", new, check=False)
    assert taken.returncode == 1 and "(name_taken)" in taken.stderr
    bad = cli("rename", "no spaces", check=False)  # a mistake caught before sending
    assert bad.returncode == 2 and "not a player name" in bad.stderr


def test_cli_profile_without_a_player(cli: Any) -> None:
    done = cli("profile", check=False)
    assert done.returncode == 2 and "minesweeper register" in done.stderr
    assert cli("rename", "someone", check=False).returncode == 2



async def test_a_held_win_shows_on_the_handle(
    client: Client, aclient: AsyncClient, redis_url: str
) -> None:
    """A human player's win at a program's pace is held off the leaderboards: the handle
    that made the winning move says so in ``held``, as a fresh view does, for both clients."""
    for sync in (True, False):
        created = client.register(unique_name("held"))
        with Client(client.base_url, player_token=created.token) as mine:
            game = mine.new_game("beginner")  # no seed: a ranked game, that can be held
            mine.reveal(game, *FIRST)
            mines = stored_mines(redis_url, game.id)
            while not game.finished:
                cell = safe_cells(game, mines)[0]
                if sync:
                    mine.reveal(game, *cell)
                else:
                    await aclient.reveal(game, *cell, token=game.token)
            assert game.view.status == "won"
            assert game.view.held is not None, game.view
            fresh = mine.get(game.id)
            assert (game.view.held, game.view.stats) == (fresh.held, fresh.stats)


def test_cli_profile_times_as_precise_as_the_leaderboard_and_ids_only(
    cli: Any, cli_env: dict[str, str], live_server: str, redis_url: str
) -> None:
    """A best time shows to the millisecond in the profile as on the leaderboard (a
    program's quick win is not 0.0s); a name is not an id, and is said to be so."""
    name = unique_name("prof")
    cli("register", name)
    token = TokenStore(Path(cli_env["MINESWEEPER_TOKENS"])).player(live_server)
    with Client(live_server, player_token=token) as mine:
        game = mine.new_game("beginner")
        mine.reveal(game, *FIRST)
        mines = stored_mines(redis_url, game.id)
        while not game.finished:
            time.sleep(0.07)  # a person's pace: a win no person could play is no best
            mine.reveal(game, *safe_cells(game, mines)[0])
        assert game.view.held is None
        best = mine.me().stats.beginner.classic.best_ms
    assert best is not None
    profile = cli("profile").stdout
    assert f" {best / 1000:.3f}s " in profile, profile
    assert profile.count(f"{best / 1000:.3f}s") == 2, "the best, and the last game"
    wrong = cli("profile", name, check=False)
    assert wrong.returncode == 2 and "not a player id (32 hex digits)" in wrong.stderr
    assert wrong.stderr.count("\n") == 1
