"""``minesweeper leave MATCH``: a seat given up from any shell, no screen needed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from minesweeper import Client
from minesweeper.tokens import TokenStore

from tests.support.play import unique_name


def test_leave_frees_a_waiting_seat_and_resigns_a_race(
    cli: Any, client: Client, live_server: str, cli_env: dict[str, str]
) -> None:
    cli("register", unique_name("lv"))
    token = TokenStore(Path(cli_env["MINESWEEPER_TOKENS"])).player(live_server)
    assert token is not None
    room = client.new_match("race", "beginner", rated=False, player_token=token)
    done = cli("leave", room.id)
    assert done.stdout == f"left match {room.id} before its start: the seat is free\n"

    bob = client.register(unique_name("lv"))
    room = client.new_match("race", "beginner", seats=3, rated=False, player_token=token)
    client.join_match(room.id, player_token=bob.token)
    client.start_match(room.id, player_token=token)
    done = cli("leave", room.id)
    assert done.stdout == f"resigned from match {room.id}: it goes on without you\n"
    seek = client.seek("beginner", player_token=token)  # the race holds the player no more
    client.cancel_seek(seek.id, player_token=token)

    again = cli("leave", room.id, check=False)
    assert again.returncode == 1 and again.stdout == ""
    assert again.stderr == "minesweeper: your seat has finished (game_over)\n"
    bob_done = client.leave_match(room.id, player_token=bob.token)
    assert bob_done.status == "finished"

    wrong = cli("leave", "x1", check=False)
    assert wrong.returncode == 2 and "not a match id" in wrong.stderr
