"""The service keeps matches' times itself: every replica polls the deadlines (a
countdown's end, a match's time limit) and acts on the ones due, each leased to one
replica at a time. Starting and ending are changes like any other (``matches.py``), so
whichever replica commits first does it, once; the others find nothing left to do.
An ended match leaves the deadlines only once its ratings are written.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

import msgspec

from ..store import GameNotFound, MatchNotFound, MatchState, StoreUnavailable
from . import match_rules
from .backends import Backends
from .match_rules import Changed
from .matches import change_match, settle_end
from .requests import now_ms

log = logging.getLogger(__name__)

POLL_SECONDS = 0.1
LEASE_MS = 5000


async def due_step(b: Backends, state: MatchState, now: int) -> Changed | None:
    """What the time alone changes: a countdown over, or the time limit reached."""
    ending = state.ends_at is not None and now >= state.ends_at
    if state.status in ("countdown", "playing") and ending:
        return match_rules.end(await _as_played(b, state, now), now)
    return match_rules.go(state, now)


async def _as_played(b: Backends, state: MatchState, now: int) -> MatchState:
    """The match with its seats as their games stand: a seat's last move before the
    time limit (its win, say) may be committed on its game and not yet counted on the
    match. In the same version: the end is the one change."""
    seats = state.seats
    games = {s.game_id for s in seats if s.status == "playing" and s.game_id is not None}
    loaded = await asyncio.gather(*(b.games.load(g) for g in sorted(games)),
                                  return_exceptions=True)
    for record in loaded:
        if isinstance(record, GameNotFound):
            continue
        if isinstance(record, BaseException):
            raise record
        seat = None if record.seat < 0 else record.seat
        moved = match_rules.progress(msgspec.structs.replace(state, seats=seats), seat,
                                     record.game, now)
        if moved is not None:
            seats = moved.state.seats
    return msgspec.structs.replace(state, seats=seats)


async def tick(b: Backends, match_id: str) -> None:
    async def step(state: MatchState, now: int) -> Changed | None:
        return await due_step(b, state, now)

    try:
        _, state = await change_match(b, match_id, step)
    except MatchNotFound:
        await b.matches.unschedule(match_id)
        return
    if state.status == "finished":
        # The replica that ended it may have died before settling it.
        await settle_end(b, state)


async def run(b: Backends) -> None:
    """Poll for due matches until cancelled."""
    outage = False
    while True:
        try:
            for match_id in await b.matches.due(now_ms(), LEASE_MS):
                try:
                    await tick(b, match_id)
                except (asyncio.CancelledError, StoreUnavailable):
                    raise
                except Exception:  # one match's failure holds up none of the others
                    log.exception("match deadline of %s", match_id)
            if outage:
                log.info("match deadlines: Redis answers again")
                outage = False
        except asyncio.CancelledError:
            raise
        except StoreUnavailable as exc:
            # An outage is the operator's news once, not a traceback a second; the
            # deadlines wait in Redis and are acted on as soon as it answers again.
            if not outage:
                log.warning("match deadlines wait for Redis: %s", exc)
                outage = True
            await asyncio.sleep(1)
        except Exception:  # the poller must outlive any one failure
            log.exception("match deadlines")
            await asyncio.sleep(1)
        await asyncio.sleep(POLL_SECONDS)


@contextlib.asynccontextmanager
async def running(b: Backends):  # type: ignore[no-untyped-def]
    task = asyncio.create_task(run(b), name="match-deadlines")
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
