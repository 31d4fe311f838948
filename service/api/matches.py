"""The endpoints of ``/matches`` and the one loop every change to a match goes through:
load, apply a rule (``match_rules.py``), commit against the write counter it was loaded
at, and on a lost race load again. A commit appends the update to the match's stream
and publishes it, as a game's commit does its diff.

What a change leads to happens after its commit: a countdown is put on the deadlines
(``deadlines.py`` starts and ends matches nobody touches), and an ended rated race
writes its ratings. The move service calls :func:`seat_moved` after each move on a
match's game, so the seat's progress (counts only) reaches everybody watching.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import random
import secrets
from collections.abc import Awaitable, Callable

import msgspec
from starlette.requests import HTTPConnection, Request
from starlette.responses import Response

from .. import engine, metrics, store, wire
from ..store import MatchLink, MatchState, Owner, Record, SeatState
from . import backends, endings, match_rules, moves, ratings, seating, views
from .auth import authorised_player, optional_bearer_token, player_of_token
from .backends import Backends
from .boards import random_seed, settings_of
from .match_rules import Changed
from .problems import ApiError
from .requests import now_ms, path_id, read_body
from .responses import MsgspecResponse
from .turns import busy

log = logging.getLogger(__name__)

MAX_ATTEMPTS = 64
_encode = wire.json_encoder.encode

# A rule applied to the match as loaded at the server time: what it changes, or None.
Step = Callable[[MatchState, int], Awaitable[Changed | None]]


def update(changed: Changed, now: int) -> bytes:
    """The update as stored and published: the match as anybody may see it."""
    view = views.match_view(changed.state, now)
    return _encode(wire.MatchUpdate(changed.state.version, changed.change, changed.seat, view))


async def change_match(b: Backends, match_id: str, step: Step) -> tuple[MatchState, MatchState]:
    """Apply ``step`` to the match and commit it: the match before and after.

    A countdown that is over but not yet marked so (the poll that starts the match may
    come a moment after ``starts_at``) is marked first, in its own update: whoever
    watches hears that the match started before anything that happened in it."""
    for attempt in range(MAX_ATTEMPTS):
        rev, state = await b.matches.load(match_id)
        now = now_ms()
        changed = match_rules.go(state, now)
        started = changed is not None
        if changed is None:
            changed = await step(state, now)
        if changed is None:
            return state, state
        new = changed.state
        if new.status == "finished" and state.status != "finished" and new.rated:
            current = await b.matches.ratings(
                ratings.pool(new.seats[0].bot), [s.player_id for s in new.seats]
            )
            new = ratings.with_changes(new, current, await held_seats(b, new))
            changed = Changed(new, changed.change, changed.seat)
        if await b.matches.commit(match_id, rev, new, update(changed, now)):
            metrics.MATCHES.labels(changed.change).inc()
            await _after(b, state, new)
            if started:
                continue  # and now the change asked for, on the match playing
            return state, new
        metrics.CONFLICTS.inc()
        await asyncio.sleep(random.uniform(0, min(0.02, 0.0005 * 2**attempt)))
    raise busy()


async def _after(b: Backends, old: MatchState, new: MatchState) -> None:
    """What a committed change leads to: the next deadline, or the ratings of the end."""
    if new.status == "finished":
        try:
            await settle_end(b, new)
        except Exception as exc:  # the change is committed: its answer stands
            # The poller settles it, at once rather than at the time limit.
            log.warning("match %s: its end is settled later: %r", new.id, exc)
            with contextlib.suppress(Exception):
                await b.matches.schedule(new.id, now_ms())
    elif new.status == "countdown" and old.status == "waiting" and new.starts_at is not None:
        await b.matches.schedule(new.id, new.starts_at)
        if new.ends_at is not None:
            await seating.seated_until(b, [s.player_id for s in new.seats], new.id, new.ends_at)
    elif new.status == "playing" and old.status == "countdown" and new.ends_at is not None:
        await b.matches.schedule(new.id, new.ends_at + match_rules.SETTLE_MS)


async def settle_end(b: Backends, state: MatchState) -> None:
    """What an ended match leads to: its ratings, its entry in each seat's player's
    recent list, and the end of the games it left on (a seat out of time or resigned,
    the co-op game unfinished), which stop at the match's end and show their mines.
    Each is done once however often this runs, and the match leaves the deadlines only
    after all three: until then the poller runs this again, should the replica that
    ended it die first. Whoever takes it off the deadlines then sends every seat's
    player their view, once: a seat that finished early heard of its own game's end,
    not of the places, ratings and recent list the match's end changed."""
    await ratings.apply(b, state)
    now = now_ms()
    # A match that never started (it lapsed) was played by nobody.
    await asyncio.gather(*(
        b.players.add_recent(seat.player_id, recent_entry(state, seat), now)
        for seat in state.seats if state.starts_at is not None
    ))
    games = sorted({s.game_id for s in state.seats if s.game_id is not None})
    ended = await asyncio.gather(
        *(moves.end(b, g, state.ended_at or now) for g in games), return_exceptions=True
    )
    for failed in ended:
        if isinstance(failed, BaseException) and not isinstance(failed, store.GameNotFound):
            raise failed
    await seating.freed(b, [s.player_id for s in state.seats], state.id)
    if await b.matches.unschedule(state.id):
        await asyncio.gather(*(endings.publish_player(b, s.player_id, now) for s in state.seats))


def recent_entry(state: MatchState, seat: SeatState) -> store.Recent:
    """A finished match in a seat's player's recent list: won when the seat placed first
    having cleared the board (co-op: when the team did). Its time is the seat's, or for
    a seat the end stopped (out of time, or resigned: its game plays on to the end) the
    time from the start to the end, as its game's clock shows."""
    elapsed = seat.time_ms
    if elapsed is None:
        start, end = state.starts_at, state.ended_at
        elapsed = 0 if start is None or end is None else max(0, end - start)
    return store.Recent(
        id=state.id, kind="match", preset=state.preset, no_guess=state.no_guess, daily=None,
        won=seat.status == "won" and seat.place == 1, elapsed_ms=elapsed,
        bbbv_per_s_milli=0, assisted=False, ended_at=state.ended_at or 0,
    )


# ---- creating and starting -----------------------------------------------------------------


def new_state(match_id: str, body: wire.NewMatch, settings: engine.Settings, now: int,
              seats: tuple[SeatState, ...]) -> MatchState:
    # The board's settings are judged now, not at the start.
    engine.new_game(settings, seed=0, now_ms=now, no_guess=body.no_guess)
    if len(seats) > body.seats:
        raise ApiError(422, "invalid_request", "more players than seats")
    rated = body.mode == "race" and body.rated is not False
    return MatchState(
        id=match_id, mode=body.mode, status="waiting", version=1, width=settings.width,
        height=settings.height, mines=settings.mines, preset=settings.preset,
        no_guess=body.no_guess, rated=rated, on_mine=body.on_mine,
        time_limit_s=body.time_limit_s, capacity=body.seats, created_at=now, seats=seats,
        asked_rated=rated,
    )


async def seat_of(b: Backends, owner: Owner) -> SeatState:
    rating = await ratings.rating_of(b, owner.player_id, owner.bot)
    return SeatState(
        player_id=owner.player_id, name=owner.name, bot=owner.bot,
        rating=rating.rating if rating else None,
    )


async def create(request: Request) -> Response:
    body = await read_body(request, wire.NewMatch)
    settings = settings_of(
        wire.NewGame(preset=body.preset, width=body.width, height=body.height, mines=body.mines),
        backends.of(request).config.max_cells,
    )
    owner = await authorised_player(request)
    b = backends.of(request)
    now = now_ms()
    state = new_state(
        secrets.token_hex(16), body, settings, now, (await seat_of(b, owner),)
    )
    await seating.claim(b, owner.player_id, state.id)
    try:
        await b.matches.create(state, update(Changed(state, "joined", 0), now))
    except BaseException:
        await seating.release(b, owner.player_id, state.id)
        raise
    await b.matches.schedule(state.id, lapses_at(b, state), first=True)
    metrics.MATCHES.labels("created").inc()
    view = views.match_view(state, now, owner.player_id)
    return MsgspecResponse(
        wire.CreatedMatch(match=view), status_code=201, headers={"Location": f"/matches/{state.id}"}
    )


async def held_seats(b: Backends, state: MatchState) -> frozenset[int]:
    """The race seats whose win is held (a human's no person could play: its game says
    why), which the race's ratings leave out."""
    won = [(i, s.game_id) for i, s in enumerate(state.seats)
           if s.status == "won" and not s.bot and s.game_id is not None]
    found = await asyncio.gather(*(b.games.load(g) for _, g in won), return_exceptions=True)
    held: set[int] = set()
    for (i, _), record in zip(won, found, strict=True):
        if isinstance(record, store.GameNotFound):
            continue
        if isinstance(record, BaseException):
            raise record
        if record.held:
            held.add(i)
    return frozenset(held)


def lapses_at(b: Backends, state: MatchState) -> int:
    """When a match still waiting for its start ends (``match_rules.lapse``)."""
    return state.created_at + round(b.config.match_wait * 1000)


async def begin(b: Backends, match_id: str, by: str | None = None) -> MatchState:
    """Start the match: make every seat's board and count down. ``by`` is the player
    who asked (the creator); None when the match filled up or was paired, and then it
    starts only full as it is now: a seat freed since it filled (a leave that crossed
    the last join) leaves it waiting."""

    # The boards are made once per line-up of players, however often the commit is
    # retried: a retry after a lost race would otherwise build them again.
    made: dict[tuple[str, ...], tuple[list[str], engine.Game, int]] = {}

    async def step(state: MatchState, now: int) -> Changed | None:
        if by is not None:
            if not match_rules.can_start(state, by):
                return None
        elif state.status != "waiting" or len(state.seats) < state.capacity:
            return None
        line_up = tuple(s.player_id for s in state.seats)
        if line_up not in made:
            made[line_up] = await _make_boards(b, state, now)
        game_ids, board, starts = made[line_up]
        together = ratings.rated_together([s.bot for s in state.seats])
        return match_rules.begin(state, game_ids, board, starts, rated=state.rated and together)

    _, new = await change_match(b, match_id, step)
    return new


async def _make_boards(
    b: Backends, state: MatchState, now: int
) -> tuple[list[str], engine.Game, int]:
    """The boards of a starting match: one seed and its start cell opened for every seat
    (a race's copies, each its player's), or the one co-op game every seat may move on;
    and the instant play starts, a countdown after they are made (a big no-guess board
    takes a while to build, and that is no player's time)."""
    settings = engine.Settings(state.width, state.height, state.mines, state.preset)

    def make() -> tuple[engine.Game, list[engine.ChangedCell]]:
        fresh = engine.new_game(
            settings, seed=random_seed(), now_ms=now, no_guess=state.no_guess,
            on_mine=state.on_mine,
        )
        game, opened = engine.open_start(fresh, now)
        # A race seat's loss keeps the layout the others play to itself until the end.
        return msgspec.structs.replace(game, layout_shared=state.mode == "race"), opened

    heavy = moves.slow(state.width * state.height, building=state.no_guess)
    game, opened = await moves.off_loop(b, make, heavy=heavy)
    starts = now_ms() + match_rules.COUNTDOWN_MS
    ends = starts + state.time_limit_s * 1000
    # Every seat's clock starts at the same server instant.
    game = msgspec.structs.replace(game, started_at=starts)
    credentials = await asyncio.gather(*(b.players.credentials(s.player_id) for s in state.seats))
    owners = []
    for seat, found in zip(state.seats, credentials, strict=True):
        if found is None:
            raise ApiError(409, "not_seated", f"the player of seat {seat.name!r} is gone")
        owners.append(Owner(seat.player_id, seat.name, found[0], seat.bot))
    # Nobody holds a match game's own token: its players move with theirs.
    nobody = secrets.token_bytes(32)
    if state.mode == "coop":
        game_id = secrets.token_hex(16)
        coop = tuple((o.player_id, o.token_hash) for o in owners)
        link = MatchLink(state.id, -1, starts, ends, coop)
        await b.games.create(game_id, game, nobody, None, opened=opened, match=link)
        return [game_id], game, starts
    game_ids = [secrets.token_hex(16) for _ in owners]
    await asyncio.gather(*(
        b.games.create(
            gid, game, nobody, owner, opened=opened, match=MatchLink(state.id, i, starts, ends)
        )
        for i, (gid, owner) in enumerate(zip(game_ids, owners, strict=True))
    ))
    return game_ids, game, starts


# ---- the endpoints -------------------------------------------------------------------------


def match_id_of(conn: HTTPConnection) -> str:
    return path_id(conn, "match_id", "match")


async def viewer_of(conn: HTTPConnection) -> str | None:
    """The player a read speaks for, if it carries a token."""
    token = optional_bearer_token(conn)
    return (await player_of_token(conn, token)).player_id if token is not None else None


async def get_match(request: Request) -> Response:
    match_id = match_id_of(request)
    viewer = await viewer_of(request)
    _, state = await backends.of(request).matches.load(match_id)
    return MsgspecResponse(views.match_view(state, now_ms(), viewer))


async def join(request: Request) -> Response:
    match_id = match_id_of(request)
    owner = await authorised_player(request)
    b = backends.of(request)
    seat = await seat_of(b, owner)
    _, state = await b.matches.load(match_id)
    match_rules.join(state, seat)  # a refusal for this match comes before one for another

    async def step(state: MatchState, now: int) -> Changed | None:
        return match_rules.join(state, seat)

    state = await _seated(b, owner.player_id, match_id, step)
    if len(state.seats) == state.capacity:
        state = await begin(b, match_id)
    return MsgspecResponse(views.match_view(state, now_ms(), owner.player_id))


async def leave(request: Request) -> Response:
    match_id = match_id_of(request)
    owner = await authorised_player(request)

    async def step(state: MatchState, now: int) -> Changed | None:
        return match_rules.leave(state, owner.player_id, now)

    b = backends.of(request)
    before, state = await change_match(b, match_id, step)
    if before.status == "waiting":  # the seat is free, and so is its player
        await b.matches.release_seat(owner.player_id, match_id)
    return MsgspecResponse(views.match_view(state, now_ms(), owner.player_id))


async def _seated(b: Backends, player_id: str, match_id: str, step: Step) -> MatchState:
    """Seat the player by ``step``, holding them for this match (``seating.py``): a
    player already in another unfinished match is refused; the hold goes again should
    the seat be refused."""
    taken = await seating.claim(b, player_id, match_id)
    try:
        _, state = await change_match(b, match_id, step)
    except BaseException:
        if taken:
            await seating.release(b, player_id, match_id)
        raise
    return state


def rematch_id_of(match_id: str) -> str:
    """The id of a match's rematch: one for every player who asks, on any replica, so
    they all meet in one match even when they ask at the same instant."""
    return hashlib.blake2b(f"rematch {match_id}".encode(), digest_size=16).hexdigest()


async def rematch(request: Request) -> Response:
    """The same match again with the same players: the first who asks makes it (and the
    finished match names it, for everybody watching); the others sit down in it."""
    match_id = match_id_of(request)
    owner = await authorised_player(request)
    b = backends.of(request)
    _, old = await b.matches.load(match_id)
    match_rules.can_rematch(old, owner.player_id)
    seat = await seat_of(b, owner)
    new_id = rematch_id_of(match_id)
    now = now_ms()
    state = match_rules.rematch(old, new_id, seat, now)
    taken = await seating.claim(b, owner.player_id, new_id)
    try:
        made = await b.matches.create(state, update(Changed(state, "joined", 0), now))
        if made:
            metrics.MATCHES.labels("created").inc()
            await b.matches.schedule(new_id, lapses_at(b, state), first=True)
        else:

            async def sit(state: MatchState, now: int) -> Changed | None:
                if match_rules.seated(state, owner.player_id) is not None:
                    return None  # asked twice: the rematch it is in
                return match_rules.join(state, seat)

            before, state = await change_match(b, new_id, sit)
            if state is not before and len(state.seats) == state.capacity:
                state = await begin(b, new_id)
    except BaseException:
        if taken:
            await seating.release(b, owner.player_id, new_id)
        raise

    async def point(state: MatchState, now: int) -> Changed | None:
        return match_rules.point_to_rematch(state, owner.player_id, new_id)

    await change_match(b, match_id, point)
    if not made:
        # The rematch as it is now: another player may have filled and started it since.
        _, state = await b.matches.load(new_id)
    return MsgspecResponse(
        wire.CreatedMatch(match=views.match_view(state, now_ms(), owner.player_id)),
        status_code=201 if made else 200, headers={"Location": f"/matches/{new_id}"},
    )


async def start(request: Request) -> Response:
    match_id = match_id_of(request)
    owner = await authorised_player(request)
    state = await begin(backends.of(request), match_id, owner.player_id)
    return MsgspecResponse(views.match_view(state, now_ms(), owner.player_id))


# ---- moves on a match's games --------------------------------------------------------------


def check_window(record: Record, now: int) -> None:
    """A match's game takes moves from ``starts_at`` until the match's end."""
    if record.window is None:
        return
    starts, ends = record.window
    if now < starts:
        raise ApiError(409, "not_started", f"the match starts in {starts - now} ms")
    if now >= ends:
        raise ApiError(409, "game_over", "the match's time is up")


async def check_seat(b: Backends, record: Record, mover: str | None) -> None:
    """A match's game takes a change only from a seat still in the match, while it is on:
    a resigned seat is out of the race, and an ended match's boards are public."""
    assert record.match_id is not None
    _, state = await b.matches.load(record.match_id)
    if state.status == "finished":
        raise ApiError(409, "game_over", "the match has ended")
    seat = record.seat if record.seat >= 0 else None
    if seat is None and mover is not None:  # the co-op game: the mover's seat
        seat = match_rules.seated(state, mover)
    if seat is not None and state.seats[seat].status == "resigned":
        raise ApiError(409, "game_over", "you resigned from the match")


async def seat_moved(b: Backends, record: Record, game: engine.Game) -> None:
    """Count a committed move of a match's game in its seat's (or, co-op, every seat's)
    progress."""
    assert record.match_id is not None
    seat = None if record.seat < 0 else record.seat

    async def step(state: MatchState, now: int) -> Changed | None:
        return match_rules.progress(state, seat, game, now)

    await change_match(b, record.match_id, step)
