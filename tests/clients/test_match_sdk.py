"""Playing matches through the SDK: the seat's game handle, and the README's example."""

from __future__ import annotations

import contextlib
import re
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from minesweeper import ApiError, Client, NotStarted

from tests.support.play import unique_name

README = Path(__file__).resolve().parents[2] / "clients" / "python" / "README.md"


def test_seat_game_is_a_tracked_handle_on_the_players_own_game(client: Client) -> None:
    ada = client.register(unique_name("sg"))
    bob = client.register(unique_name("sg"))
    eve = client.register(unique_name("sg"))
    room = client.new_match("race", "beginner", rated=False, player_token=ada.token)
    with pytest.raises(LookupError, match="no game yet"):
        client.seat_game(room.id, player_token=ada.token)
    client.join_match(room.id, player_token=bob.token)
    with pytest.raises(LookupError, match="no seat"):
        client.seat_game(room.id, player_token=eve.token)
    game = client.seat_game(room.id, player_token=ada.token)
    theirs = client.seat_game(room.id, player_token=bob.token)
    assert game.token == ada.token and game.id != theirs.id
    seats = client.match(room.id, player_token=ada.token).seats
    assert [s.game_id for s in seats if s.player.id == ada.player.id] == [game.id]
    hidden = next((x, y) for y, row in enumerate(game.view.board)
                  for x, c in enumerate(row) if c == "#")
    deadline = time.monotonic() + 10
    while True:
        try:
            client.flag(game, *hidden, "flag")
            break
        except NotStarted:
            assert time.monotonic() < deadline
            time.sleep(0.1)
    assert game[hidden] == "F" and game.view.version == client.get(game.id).version
    for token in (ada.token, bob.token):
        client.leave_match(room.id, player_token=token)


def test_the_readme_matches_example_runs_as_written(live_server: str, client: Client) -> None:
    text = README.read_text()
    section = text[text.index("### Matches"):]
    example = re.search(r"```python\n(.*?)```", section, re.S)
    assert example is not None
    ada = client.register(unique_name("rm"))
    bob = client.register(unique_name("rm"))
    exec(example.group(1), {"Client": Client, "url": live_server,
                            "ada_token": ada.token, "bob_token": bob.token})


def test_the_readme_bot_that_waits_on_its_socket_runs_as_written(
    live_server: str, client: Client
) -> None:
    text = README.read_text()
    start = text.index("A bot that seeks and waits on its socket:")
    example = re.search(r"```python\n(.*?)```", text[start:], re.S)
    assert example is not None
    bot = client.register(unique_name("rb"), bot=True)
    rival = client.register(unique_name("rb"), bot=True)

    def seek_later() -> None:
        time.sleep(1.5)  # the example is listening on its socket by then
        client.seek("beginner", player_token=rival.token)

    later = threading.Thread(target=seek_later)
    later.start()
    names: dict[str, Any] = {"url": live_server, "bot_token": bot.token}
    try:
        exec(example.group(1), names)
    finally:
        later.join()
    match = client.match(names["match_id"], player_token=bot.token)
    assert match.status in ("countdown", "playing")
    assert bot.player.id in {s.player.id for s in match.seats}
    for token in (bot.token, rival.token):
        with contextlib.suppress(ApiError):
            client.leave_match(match.id, player_token=token)
