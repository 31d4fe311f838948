"""The race screen's lines at narrow widths: the keys keep the one that quits, the seats
keep their counts, penalties and status, the result table fits."""

from __future__ import annotations

import asyncio

import msgspec
from minesweeper import AsyncClient, Client, text
from minesweeper.frame import Scene, fit_keys, frame
from minesweeper.race import COOP_HELP, RACE_HELP
from minesweeper.wire import MatchSnapshot, MatchUpdate, MatchView

from tests.support.play import unique_name


def finished_match(client: Client) -> tuple[MatchView, str]:
    """A race both players resigned (so it is over), and the first player's id."""
    ada = client.register(unique_name("narrow-ada"))  # 20 characters: cut when narrow
    bob = client.register(unique_name("bob"))
    room = client.new_match("race", "beginner", seats=2, rated=False, player_token=ada.token)
    client.join_match(room.id, player_token=bob.token)
    client.leave_match(room.id, player_token=ada.token)
    client.leave_match(room.id, player_token=bob.token)
    return client.match(room.id), ada.player.id


def test_race_keys_keep_the_quit_key_in_40_columns() -> None:
    for keys in (RACE_HELP, COOP_HELP, text.RACE_OVER_KEYS, text.REMATCH_WAITING_KEYS):
        for width in (39, 30, 20):
            line = fit_keys(keys, width)
            assert len(line) <= width and " q " in f" {line}", (keys, width, line)
    assert fit_keys(RACE_HELP, 200) == RACE_HELP


def test_seat_lines_and_the_result_fit_40_columns(client: Client) -> None:
    match, me = finished_match(client)
    seat = match.seats[0]
    playing = msgspec.structs.replace(
        seat, status="playing", penalties=1,
        progress=msgspec.structs.replace(seat.progress, bbbv_done=1, bbbv=11),
    )
    wide = text.seat_line(playing, True, width=79)
    assert "   1/11   3BV  1 penalty" in wide
    narrow = text.seat_line(playing, True, width=39)
    assert len(narrow) <= 39 and narrow.startswith("> ")
    assert " 1/11 3BV" in narrow and "1 pen." in narrow and narrow.endswith("playing")

    lines = text.result_lines(match, me, 39)
    assert all(len(line) <= 39 for line in lines), lines
    rows = lines[-2:]
    assert len(rows) == 2 and any(row.startswith(">") for row in rows)
    assert all(row.endswith(" new") for row in rows), rows  # the rating column shows
    assert text.result_lines(match, me, 79) == text.result_lines(match, me)

    # On the screen, 40 columns: every seat's line whole, and q in the keys.
    board = client.get(client.new_game("beginner").id)
    scene = Scene(view=board, cursor=(4, 4), origin=(0, 0), seconds=0, watching=False,
                  colour=False, keys=RACE_HELP,
                  panel=("", text.seat_line(playing, True, width=39)))
    out, _ = frame(scene, 40, 24)
    assert out[-1].endswith("q q resign/quit")
    assert any(" 1/11 3BV  1 pen.  playing" in line for line in out)


async def test_a_race_ended_by_its_time_limit_says_so(client: Client) -> None:
    """Seats still playing at the time limit do not read "lost" as if they hit a mine:
    the result says the time was up and that the places go by progress."""
    ada = client.register(unique_name("slow"))
    bob = client.register(unique_name("slow"))
    room = client.new_match("race", "beginner", seats=2, rated=False, time_limit_s=5,
                            player_token=ada.token)
    client.join_match(room.id, player_token=bob.token)
    async with AsyncClient(client.base_url, timeout=30) as aclient:
        async def last() -> MatchView:
            end = None
            async for message in aclient.watch_match(room.id):
                if isinstance(message, MatchSnapshot | MatchUpdate):
                    end = message
            assert isinstance(end, MatchUpdate) and end.change == "ended"
            return end.match

        match = await asyncio.wait_for(last(), 60)
    assert text.ended_by_time(match)
    for width in (None, 39):
        lines = text.result_lines(match, ada.player.id, width)
        assert any(line.startswith("time limit") and "places by progress" in line
                   for line in lines), lines
        assert sum("time up" in line for line in lines) == 2, lines
        assert not any(" lost " in f"{line} " for line in lines), lines
    assert "time limit (5 s) reached: places by progress" in text.result_lines(match)
    resigned, _ = finished_match(client)
    assert not any("time" in line and "limit" in line for line in text.result_lines(resigned))
