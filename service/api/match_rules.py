"""A match's rules as pure functions over its stored state: who may sit down or leave,
when it starts and ends, what a seat's game counts for, and the places. Each takes the
state and the server time and returns the new state and what changed (the update's
``change`` and seat), or raises the refusal; nothing here does I/O.
"""

from __future__ import annotations

from typing import NamedTuple

import msgspec

from .. import engine, wire
from ..store import MatchState, SeatState
from .problems import ApiError

COUNTDOWN_MS = 3000
# A move checked before the time limit may reach Redis a little after it: it still lands
# until LATE_MOVE_MS past the limit, by Redis's clock, and the match ends SETTLE_MS past
# it, by the ending replica's, once every such move has landed or been refused. So the
# end counts each seat's game as the game itself stays (a win just in time is a win);
# the gap between the two covers clocks that differ.
LATE_MOVE_MS = 500
SETTLE_MS = 1000
_replace = msgspec.structs.replace


class Changed(NamedTuple):
    state: MatchState
    change: wire.MatchChange
    seat: int | None


def seated(state: MatchState, player_id: str) -> int | None:
    """The seat of ``player_id``, or None."""
    for i, seat in enumerate(state.seats):
        if seat.player_id == player_id:
            return i
    return None


def _moved(state: MatchState, seats: tuple[SeatState, ...], change: wire.MatchChange,
           seat: int | None, **fields: object) -> Changed:
    return Changed(
        _replace(state, seats=seats, version=state.version + 1, **fields), change, seat
    )


def join(state: MatchState, seat: SeatState) -> Changed:
    if seated(state, seat.player_id) is not None:
        raise ApiError(409, "already_seated", "you already have a seat in this match")
    if state.invited and seat.player_id not in state.invited:
        raise ApiError(403, "forbidden", "a rematch is for the players of the match before it")
    if state.status == "finished":
        raise ApiError(409, "match_started", "the match is over")
    if state.status != "waiting":
        raise ApiError(409, "match_started", "the match has started")
    if len(state.seats) >= state.capacity:
        raise ApiError(409, "match_full", "every seat of the match is taken")
    return _moved(state, (*state.seats, seat), "joined", len(state.seats))


def leave(state: MatchState, player_id: str, now: int) -> Changed:
    """Before the start the seat is freed, and the last seat freed ends the match (it
    was nobody's any more: unrated, nobody placed); after the start the seat resigns,
    until the time limit: from ``ends_at`` on the match is over as it stood then,
    whether or not a poll has ended it yet, and a resignation is refused as a move is."""
    i = seated(state, player_id)
    if i is None:
        raise ApiError(409, "not_seated", "you have no seat in this match")
    if state.status == "waiting":
        seats = state.seats[:i] + state.seats[i + 1 :]
        if not seats:
            return _moved(state, seats, "left", i, status="finished", ended_at=now, rated=False)
        return _moved(state, seats, "left", i)
    if state.status == "finished" or state.seats[i].status not in ("playing", "waiting"):
        raise ApiError(409, "game_over", "your seat has finished")
    if state.ends_at is not None and now >= state.ends_at:
        raise ApiError(409, "game_over", "the match's time is up")
    seats = _with(state.seats, i, status="resigned")
    return finish_if_done(_moved(state, seats, "resigned", i), now)


def settles_at(state: MatchState) -> int | None:
    """When the time limit ends the match (still at ``ends_at``, as it stood then)."""
    return None if state.ends_at is None else state.ends_at + SETTLE_MS


def can_rematch(state: MatchState, player_id: str) -> None:
    """Who may ask for a rematch, and when: a player of the match, once it is over."""
    if seated(state, player_id) is None:
        raise ApiError(409, "not_seated", "you had no seat in this match")
    if state.status != "finished":
        raise ApiError(409, "game_in_progress", "the match is not over yet")


def rematch(state: MatchState, rematch_id: str, seat: SeatState, now: int) -> MatchState:
    """The match after ``state``: its settings and its players, ``seat`` (who asked
    first) in the creator's seat, as many seats as it had players; it starts when they
    have all sat down, or when the creator starts it. Rated as the match was asked to
    be, whether or not it counted in the end."""
    asked = state.rated if state.asked_rated is None else state.asked_rated
    return _replace(
        state, id=rematch_id, status="waiting", version=1, created_at=now, rated=asked,
        asked_rated=asked,
        capacity=len(state.seats), seats=(seat,), starts_at=None, ends_at=None,
        ended_at=None, rematch_id=None, invited=tuple(s.player_id for s in state.seats),
        rematch_of=state.id,
    )


def point_to_rematch(state: MatchState, player_id: str, rematch_id: str) -> Changed | None:
    """The finished match names its rematch, once, so that everybody watching hears of
    it; the update's seat is the one that asked first."""
    if state.rematch_id is not None:
        return None
    return Changed(
        _replace(state, version=state.version + 1, rematch_id=rematch_id), "rematch",
        seated(state, player_id),
    )


def can_start(state: MatchState, player_id: str) -> bool:
    """Whether the creator's start has a countdown to begin: not when it counts down
    already (the last seat filled as the creator asked, or the start came twice), which
    is the start asked for, answered as it is."""
    if state.status not in ("waiting", "countdown"):
        raise ApiError(409, "match_started", "the match has started")
    if not state.seats or state.seats[0].player_id != player_id:
        raise ApiError(403, "forbidden", "only the match's creator (seat 0) starts it")
    if state.status == "countdown":
        return False
    if len(state.seats) < 2:
        raise ApiError(409, "not_started", "a match starts with at least 2 seats taken")
    return True


def begin(state: MatchState, game_ids: list[str], board: engine.Game, starts: int, *,
          rated: bool) -> Changed:
    """The countdown: the boards are made (``board`` as every seat finds it, its start
    opened), and play starts at ``starts``, the instant every seat's game clock was given."""
    bbbv, done = board.bbbv, engine.bbbv_done(board)
    seats = tuple(
        _replace(seat, status="playing", bbbv=bbbv, bbbv_done=done,
                 game_id=game_ids[i % len(game_ids)])
        for i, seat in enumerate(state.seats)
    )
    return _moved(
        state, seats, "countdown", None, status="countdown", starts_at=starts,
        ends_at=starts + state.time_limit_s * 1000, rated=rated,
    )


def go(state: MatchState, now: int) -> Changed | None:
    """The countdown is over: the match is playing."""
    if state.status != "countdown" or state.starts_at is None or now < state.starts_at:
        return None
    return _moved(state, state.seats, "started", None, status="playing")


def progress(state: MatchState, seat: int | None, game: engine.Game, now: int) -> Changed | None:
    """A seat's game moved (``seat`` None: the co-op game, every seat's): its counts,
    and its end; the match ends when every seat is done."""
    if state.status == "finished":
        return None
    targets = range(len(state.seats)) if seat is None else [seat]
    status: wire.SeatStatus = "playing"
    time_ms = None
    if game.finished:
        status = "won" if game.status == "won" else "lost"
        started = state.starts_at if state.starts_at is not None else game.started_at or now
        time_ms = (game.ended_at or now) - started + engine.PENALTY_MS * game.penalties
    bbbv_done = engine.bbbv_done(game)
    seats = state.seats
    for i in targets:
        s = seats[i]
        # A seat done, or counted from a later version of its game, is left as it is;
        # so is one whose counts the move left as they were (a flag, say): announced,
        # such moves would tell everybody when and how often the seat moves.
        if s.status != "playing" or s.counted >= game.version:
            continue
        if status == "playing" and (s.bbbv_done, s.bbbv, s.penalties) == (
            bbbv_done, game.bbbv, game.penalties
        ):
            continue
        seats = _with(
            seats, i, status=status, time_ms=time_ms, counted=game.version,
            bbbv_done=bbbv_done, bbbv=game.bbbv, penalties=game.penalties,
        )
    if seats == state.seats:
        return None
    change: wire.MatchChange = "finished" if game.finished else "progress"
    return finish_if_done(_moved(state, seats, change, seat), now)


def lapse(state: MatchState, now: int) -> Changed:
    """A match still waiting for its start past its time ends, as a match its last seat
    left does: unrated, nobody placed. Its seats would otherwise hold their players
    (one match at a time) until each came back to leave it."""
    return _moved(state, state.seats, "ended", None, status="finished", ended_at=now,
                  rated=False)


def finish_if_done(changed: Changed, now: int) -> Changed:
    state = changed.state
    if state.status in ("countdown", "playing") and all(
        s.status != "playing" for s in state.seats
    ):
        return Changed(end(state, now, bump=False).state, changed.change, changed.seat)
    return changed


def end(state: MatchState, now: int, *, bump: bool = True) -> Changed:
    """The match is over: seats still playing ran out of time (lost); the places. A
    match over before its start (every seat left in the countdown) rates nobody."""
    seats = tuple(
        _replace(s, status="lost") if s.status == "playing" else s for s in state.seats
    )
    ranked = places(seats, coop=state.mode == "coop")
    seats = tuple(_replace(s, place=p) for s, p in zip(seats, ranked, strict=True))
    fields: dict[str, object] = {"status": "finished", "ended_at": now, "seats": seats}
    if state.starts_at is not None and now < state.starts_at:
        fields["rated"] = False  # over before it started (every seat left): nobody played
    if bump:
        return Changed(
            _replace(state, version=state.version + 1, **fields), "ended", None
        )
    return Changed(_replace(state, **fields), "ended", None)


def places(seats: tuple[SeatState, ...], *, coop: bool = False) -> list[int]:
    """Seats that cleared their board by time with penalties; then the others by
    ``bbbv_done``, more first; resigned seats last. Equal results share a place."""
    if coop:
        return [1] * len(seats)

    def key(s: SeatState) -> tuple[int, int]:
        if s.status == "won":
            return (0, s.time_ms or 0)
        if s.status == "resigned":
            return (2, 0)
        return (1, -s.bbbv_done)

    keys = [key(s) for s in seats]
    return [1 + sum(1 for other in keys if other < mine) for mine in keys]


def _with(seats: tuple[SeatState, ...], i: int, **fields: object) -> tuple[SeatState, ...]:
    return (*seats[:i], _replace(seats[i], **fields), *seats[i + 1:])
