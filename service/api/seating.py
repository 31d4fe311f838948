"""A player plays in at most one match at a time (a seat still to play, in a match
waiting, counting down or playing): creating a match, joining one, seeking a race or
sitting down in a rematch while another holds them is refused with 409
``already_playing``, naming that match.

The hold is a claim on the player's own slot (``store.MatchStore.claim_seat``), taken
before the seat and released when a seat is freed before the start or the match ends;
it expires with the match's life (refreshed to its time limit at the start), so a
replica that dies between two steps leaves nobody held for long. A claim counts only
while its match is unfinished and seats the player in a seat still to play (not won,
lost or resigned), or for a short grace while the step that took it is still seating
them; anything else is found over and taken over.

A seek is on another slot (every seek's): taking a claim cancels the player's waiting
seek, and a seek that has already paired holds the player for its match, which the
pair claims when it is made. Both sides look at the other after writing their own, so
of a seek and a join at the same instant one wins, whichever replicas they reached.
"""

from __future__ import annotations

import contextlib

from ..store import MatchNotFound, Seek, SeekNotFound
from . import match_rules
from .backends import Backends
from .problems import ApiError
from .requests import now_ms
from .turns import busy

# How long a claim holds the player before its match seats them (the step seating them
# is under way), and a pair of seeks before its match is made.
GRACE_MS = 10_000
PAIR_GRACE_MS = 60_000
# A started match's claim outlives its time limit by this much, should its end be late.
AFTER_END_MS = 60_000
ATTEMPTS = 8


def refusal(match_id: str) -> ApiError:
    return ApiError(
        409, "already_playing",
        f"you are already in match {match_id}: go back to it, or leave it first",
        match_id=match_id,
    )


def ttl_ms(b: Backends) -> int:
    """A claim before its match starts: as long as an untouched match is kept."""
    return b.config.game_ttl * 1000


async def _holds(b: Backends, player_id: str, match_id: str, since: int, grace: int) -> bool:
    """Whether the match holds the player: unfinished and seating them in a seat still to
    play, or still within ``grace`` of ``since`` (about to seat them, or about to be
    made). A seat that has won, lost or resigned has nothing left to play: its player is
    free while the others play on."""
    try:
        _, state = await b.matches.load(match_id)
    except MatchNotFound:
        return now_ms() - since < grace
    if state.status == "finished":
        return False
    seat = match_rules.seated(state, player_id)
    if seat is not None:
        return state.seats[seat].status in ("waiting", "playing")
    return now_ms() - since < grace


async def holding(b: Backends, player_id: str, claim: str | None) -> str | None:
    """The match a stored claim holds the player in, or None when it is over."""
    if claim is None:
        return None
    match_id, _, since = claim.partition(" ")
    held = await _holds(b, player_id, match_id, int(since or 0), GRACE_MS)
    return match_id if held else None


async def seek_holding(b: Backends, seek: Seek) -> str | None:
    """The match a paired seek holds its player in, or None when it is over."""
    if seek.status != "matched" or seek.match_id is None:
        return None
    held = await _holds(b, seek.player_id, seek.match_id, seek.paired_at or 0, PAIR_GRACE_MS)
    return seek.match_id if held else None


async def check(b: Backends, player_id: str) -> None:
    """Refuse if a match holds the player."""
    held = await holding(b, player_id, await b.matches.seat_claim(player_id))
    if held is not None:
        raise refusal(held)


async def claim(b: Backends, player_id: str, match_id: str) -> bool:
    """Hold the player for ``match_id`` before seating them, or refuse: True when taken
    now (the caller releases it should the seat be refused), False when it was the
    match's already."""
    replacing = None
    for _ in range(ATTEMPTS):
        status, found = await b.matches.claim_seat(
            player_id, match_id, now_ms(), ttl_ms(b), replacing=replacing
        )
        if status == "held":
            return False
        if status == "taken":
            try:
                await _no_seek(b, player_id, match_id)
            except ApiError:
                await b.matches.release_seat(player_id, match_id)
                raise
            return True
        held = await holding(b, player_id, found)
        if held is not None:
            raise refusal(held)
        replacing = found
    raise busy()


async def _no_seek(b: Backends, player_id: str, match_id: str) -> None:
    """The player's waiting seek is cancelled; one that paired (for another match not
    over yet) refuses the seat."""
    seek_id = await b.matches.player_seek(player_id)
    if seek_id is None:
        return
    try:
        seek, pool = await b.matches.seek(seek_id)
        if seek.status == "waiting":
            await b.matches.cancel_seek(seek_id, pool)
            seek, _ = await b.matches.seek(seek_id)
    except SeekNotFound:
        return
    if seek.match_id == match_id:
        return
    held = await seek_holding(b, seek)
    if held is not None:
        raise refusal(held)


async def release(b: Backends, player_id: str, match_id: str) -> None:
    """The player is free again, unless the match seats them after all (a seat refused
    to one request that another of theirs took)."""
    with contextlib.suppress(MatchNotFound):
        _, state = await b.matches.load(match_id)
        if state.status != "finished" and match_rules.seated(state, player_id) is not None:
            return
    await b.matches.release_seat(player_id, match_id)


async def seated_until(b: Backends, player_ids: list[str], match_id: str, ends_at: int) -> None:
    """A started match holds its players until a while after its time limit."""
    ttl = max(1, ends_at - now_ms()) + AFTER_END_MS
    for pid in player_ids:
        await b.matches.refresh_seat(pid, match_id, ttl)


async def freed(b: Backends, player_ids: list[str], match_id: str) -> None:
    """The match is over (or a seat was freed before the start): its players are free."""
    for pid in player_ids:
        await b.matches.release_seat(pid, match_id)
