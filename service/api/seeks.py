"""Matchmaking: ``/seeks``. A seek waits in its pool (same settings; humans and bots
apart) until a seek whose rating is within reach arrives; the reach widens the longer
they wait. Pairing is one script in Redis (``store/pair.lua``), so no seek pairs twice
whichever replicas its player reached. The replica that made the pair makes the match,
a rated 2-seat race counting down at once, and tells both players' sockets.

A seek expires ``SEEK_EXPIRY`` seconds after its player last polled it, unless the
player's socket is open. An open socket also does for its player what a poll does
(``advance``): a client that only listens there is paired as its reach widens, and gets
its match should the replica that paired it die before making it.
"""

from __future__ import annotations

import asyncio
import secrets
from typing import cast

from starlette.requests import HTTPConnection, Request
from starlette.responses import Response

from .. import engine, metrics, wire
from ..store import MatchNotFound, Owner, Seek, SeekNotFound
from . import backends, matches, ratings, seating
from .auth import authorised_player
from .backends import Backends
from .match_rules import Changed
from .problems import ApiError
from .requests import now_ms, path_id, read_body
from .responses import MsgspecResponse
from .turns import busy

# Rating points two seeks may differ by at first, and how fast that widens (per second).
WINDOW = 100.0
WIDENING = 50.0
# How long the replica that paired two seeks has to make their match before a poll of
# either seek makes it instead.
MAKE_GRACE_MS = 2000
_encode = wire.json_encoder.encode


# Said on the player's channel when the player seeks: a socket of theirs, on any replica,
# then moves the seek on (it reads nothing while there is no seek to move), and keeps
# the word to itself.
SEEKING = '{"type":"seeking"}'


def pool_of(body: wire.NewSeek, bot: bool) -> str:
    board = "noguess" if body.no_guess else "classic"
    return f"{body.mode}:{body.preset}:{board}:{'bot' if bot else 'human'}"


def view(seek: Seek) -> wire.SeekView:
    return wire.SeekView(id=seek.id, status=seek.status, match_id=seek.match_id)


async def _pair(b: Backends, seek_id: str, pool: str, owner_id: str) -> None:
    """Try to pair the seek; when this call made a pair, make its match."""
    expiry = int(b.config.seek_expiry * 1000)
    status, match_id, partner, partner_player = await b.matches.pair(
        seek_id, pool, now_ms(), expiry_ms=expiry, window=WINDOW, widening=WIDENING
    )
    if status == "matched" and partner:
        await _make_match(b, match_id, pool, [partner_player, owner_id])


async def _make_match(b: Backends, match_id: str, pool: str, player_ids: list[str]) -> None:
    _, name, board, _ = pool.split(":")
    preset = cast(engine.PresetName, name)
    found = await asyncio.gather(*(b.players.credentials(pid) for pid in player_ids))
    owners = [
        Owner(pid, name, token_hash, bot)
        for pid, (token_hash, bot, name) in zip(player_ids, [f for f in found if f], strict=True)
    ]
    # The pair holds both players: whatever else took them since refuses its seat,
    # having seen this pair's seek (``seating.py``).
    for pid in player_ids:
        await b.matches.claim_seat(pid, match_id, now_ms(), seating.ttl_ms(b), force=True)
    seats = tuple(await asyncio.gather(*(matches.seat_of(b, o) for o in owners)))
    body = wire.NewMatch(mode="race", preset=preset, no_guess=board == "noguess", rated=True)
    now = now_ms()
    state = matches.new_state(match_id, body, engine.preset(preset), now, seats)
    # Made once, started once, whoever gets here first: the replica that paired the
    # seeks, or a poll after it died.
    if await b.matches.create(state, matches.update(Changed(state, "joined", None), now)):
        metrics.MATCHES.labels("created").inc()
    await matches.begin(b, match_id)
    notice = _encode(wire.Matched(match_id=match_id))
    await asyncio.gather(*(b.players.publish(pid, notice) for pid in player_ids))


async def create(request: Request) -> Response:
    body = await read_body(request, wire.NewSeek, empty_ok=True)
    owner = await authorised_player(request)
    b = backends.of(request)
    rating = await ratings.rating_of(b, owner.player_id, owner.bot)
    await seating.check(b, owner.player_id)
    seek_id = secrets.token_hex(16)
    pool = pool_of(body, owner.bot)
    await _add(b, seek_id, owner.player_id, pool, rating.rating if rating else ratings.MU)
    # A match that took the player since the check above (a join through another
    # replica) wins, unless this seek paired first: then that join is refused.
    held = await seating.holding(b, owner.player_id, await b.matches.seat_claim(owner.player_id))
    if held is not None and await b.matches.cancel_seek(seek_id, pool):
        raise seating.refusal(held)
    await _pair(b, seek_id, pool, owner.player_id)
    await b.players.publish(owner.player_id, SEEKING.encode())
    seek, _ = await b.matches.seek(seek_id)
    return MsgspecResponse(
        wire.CreatedSeek(seek=view(seek)), status_code=201,
        headers={"Location": f"/seeks/{seek_id}"},
    )


async def _add(b: Backends, seek_id: str, player_id: str, pool: str, rating: float) -> None:
    """Add the seek as the player's latest: a player seeks one race at a time, so the
    seek it replaces is cancelled if it still waits, and one that paired refuses it
    while its match is not over."""
    latest = await b.matches.player_seek(player_id)
    over = False
    for _ in range(seating.ATTEMPTS):
        status, found = await b.matches.add_seek(
            seek_id, player_id, pool, rating, now_ms(), latest=latest, latest_over=over
        )
        if status == "added":
            return
        if status == "matched" and found is not None:
            try:
                paired, _ = await b.matches.seek(found)
            except SeekNotFound:
                paired = None
            held = await seating.seek_holding(b, paired) if paired else None
            if held is not None:
                raise seating.refusal(held)
            over = True
        else:
            over = False
        latest = found
    raise busy()


def seek_id_of(conn: HTTPConnection) -> str:
    return path_id(conn, "seek_id", "seek")


async def seek(request: Request) -> Response:
    """``GET`` polls a seek, ``DELETE`` cancels it."""
    if request.method == "DELETE":
        return await cancel(request)
    return await get_seek(request)


async def get_seek(request: Request) -> Response:
    """A poll: the seek stays alive, and pairs if its widened reach now finds a partner."""
    seek_id = seek_id_of(request)
    b = backends.of(request)
    seek, pool = await b.matches.seek(seek_id)
    if seek.status == "waiting":
        await _pair(b, seek_id, pool, seek.player_id)
        # Alive from now on: the check above judged the time since the last poll.
        await b.matches.touch_seek(seek_id, now_ms())
        seek, _ = await b.matches.seek(seek_id)
    elif seek.status == "matched":
        await _made(b, seek, pool)
    return MsgspecResponse(view(seek))


async def _made(b: Backends, seek: Seek, pool: str) -> None:
    """The match of a matched seek exists and has started, made here if the replica that
    paired the seeks died before it could."""
    if seek.match_id is None or seek.paired_at is None or len(seek.players) != 2:
        return
    if now_ms() - seek.paired_at < MAKE_GRACE_MS:
        return
    try:
        _, state = await b.matches.load(seek.match_id)
    except MatchNotFound:
        await _make_match(b, seek.match_id, pool, list(seek.players))
        return
    if state.status == "waiting":
        await matches.begin(b, seek.match_id)


async def advance(b: Backends, player_id: str, settled: set[str], *, touch: bool) -> bool:
    """What a poll of the player's latest seek would do, keeping it alive when ``touch``;
    whether the seek still needs it (waiting, or paired and its match perhaps still to
    make). ``settled`` holds the seeks found past needing it, not read again."""
    seek_id = await b.matches.player_seek(player_id)
    if seek_id is None or seek_id in settled:
        return False
    try:
        seek, pool = await b.matches.seek(seek_id)
    except SeekNotFound:
        return False
    if seek.status == "waiting":
        await _pair(b, seek_id, pool, player_id)
        if touch:
            await b.matches.touch_seek(seek_id, now_ms())
        return True
    if seek.status == "matched" and seek.match_id is not None:
        await _made(b, seek, pool)
        if seek.paired_at is None or now_ms() - seek.paired_at < MAKE_GRACE_MS:
            return True
    settled.add(seek_id)
    return False


async def live_pair(b: Backends, player_id: str) -> str | None:
    """The match the player's latest seek paired into, while the player still plays
    in it: the ``matched`` notice goes out once, so a socket opened (or resumed) since
    is told this way. None too while the match is still to be made: its maker tells."""
    seek_id = await b.matches.player_seek(player_id)
    if seek_id is None:
        return None
    try:
        seek, _ = await b.matches.seek(seek_id)
        if seek.status != "matched" or seek.match_id is None:
            return None
        _, state = await b.matches.load(seek.match_id)
    except (SeekNotFound, MatchNotFound):
        return None
    seated = any(s.player_id == player_id and s.status in ("waiting", "playing")
                 for s in state.seats)
    return seek.match_id if seated and state.status != "finished" else None


async def cancel(request: Request) -> Response:
    seek_id = seek_id_of(request)
    owner = await authorised_player(request)
    b = backends.of(request)
    seek, pool = await b.matches.seek(seek_id)
    if seek.player_id != owner.player_id:
        raise ApiError(403, "forbidden", "that seek is another player's")
    await b.matches.cancel_seek(seek_id, pool)
    seek, _ = await b.matches.seek(seek_id)
    return MsgspecResponse(view(seek))
