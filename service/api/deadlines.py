"""The service keeps matches' times itself: every replica polls the deadlines (a
waiting match's lapse, a countdown's end, a match's time limit) and acts on the ones
due, each leased to one replica at a time. Starting and ending are changes like any
other (``matches.py``), so whichever replica commits first does it, once; the others
find nothing left to do. An ended match leaves the deadlines only once its ratings are
written.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time

import msgspec

from ..store import GameNotFound, MatchNotFound, MatchState, StoreUnavailable
from . import match_rules, matches
from .backends import Backends
from .match_rules import Changed
from .matches import change_match, settle_end
from .requests import now_ms

log = logging.getLogger(__name__)

POLL_SECONDS = 0.1
# After a failed poll, the next one comes this much later; the same failure again is
# logged at most once in this period.
FAILED_PAUSE_SECONDS = 1.0
FAILURE_LOG_SECONDS = 60.0
LEASE_MS = 5000
# How long shutdown waits for the poller to end, and how often it is cancelled meanwhile.
STOP_SECONDS = 5.0
CANCEL_AGAIN_SECONDS = 0.2


async def due_step(b: Backends, state: MatchState, now: int) -> Changed | None:
    """What the time alone changes: a countdown over, or the time limit reached. A match
    out of time ends at its ``ends_at``, however late the poll that finds it (it waits
    ``SETTLE_MS`` for the moves made in time): its games' clocks stop there, at the time
    limit, as the moves did."""
    if state.status == "waiting":
        lapses = matches.lapses_at(b, state)
        return match_rules.lapse(state, now) if now >= lapses else None
    ends, settles = state.ends_at, match_rules.settles_at(state)
    if state.status in ("countdown", "playing") and ends and settles and now >= settles:
        return match_rules.end(await _as_played(b, state, ends), ends)
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


class _Failing:
    """A poll's failure other than Redis being away (a bug, most likely): logged with its
    traceback when it is new, then, while the same failure repeats every second, one line
    a period saying how many times it did."""

    def __init__(self) -> None:
        self.said = ""
        self.next_at = 0.0
        self.held = 0

    def report(self, exc: Exception) -> None:
        text = f"{type(exc).__name__}: {exc}"
        now = time.monotonic()
        if text == self.said and now < self.next_at:
            self.held += 1
            return
        if text == self.said:
            log.error("match deadlines still fail: %s (%d more times since the last report)",
                      text, self.held)
        else:
            log.error("match deadlines", exc_info=exc)
        self.said, self.next_at, self.held = text, now + FAILURE_LOG_SECONDS, 0

    def over(self) -> None:
        if self.said and self.held:
            log.info("match deadlines: polling again (%d more failures since the last "
                     "report)", self.held)
        elif self.said:
            log.info("match deadlines: polling again")
        self.said, self.held = "", 0


async def run(b: Backends, stop: asyncio.Event | None = None) -> None:
    """Poll for due matches until ``stop`` is set (or the task is cancelled)."""
    if stop is None:
        stop = asyncio.Event()
    outage = False
    failing = _Failing()
    while not stop.is_set():
        pause = POLL_SECONDS
        try:
            for match_id in await b.matches.due(now_ms(), LEASE_MS):
                if stop.is_set():
                    break  # the lease runs out, and another replica takes the match
                try:
                    await tick(b, match_id)
                except (asyncio.CancelledError, StoreUnavailable):
                    raise
                except Exception:  # one match's failure holds up none of the others
                    log.exception("match deadline of %s", match_id)
            if outage:
                log.info("match deadlines: Redis answers again")
                outage = False
            failing.over()
        except asyncio.CancelledError:
            raise
        except StoreUnavailable as exc:
            # An outage is the operator's news once, not a traceback a second; the
            # deadlines wait in Redis and are acted on as soon as it answers again.
            if not outage:
                log.warning("match deadlines wait for Redis: %s", exc)
                outage = True
            pause = FAILED_PAUSE_SECONDS
        except Exception as exc:  # the poller must outlive any one failure
            failing.report(exc)
            pause = FAILED_PAUSE_SECONDS
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(pause):
                await stop.wait()


async def _stopped(task: asyncio.Task[None], stop: asyncio.Event) -> None:
    """Stop the poller, which one cancellation may not do: one that lands as a Redis
    call's answer arrives is lost inside the call (Python 3.11's ``asyncio.wait_for``
    returns the answer instead), and the loop would go on polling. ``stop`` ends the
    loop at its next turn, and the task is cancelled again until it is over. The wait
    is bounded: shutdown goes on without a poller that will not end."""
    stop.set()
    loop = asyncio.get_running_loop()
    deadline = loop.time() + STOP_SECONDS
    while not task.done():
        left = deadline - loop.time()
        if left <= 0:
            log.warning("match deadlines: the poller did not stop within %s s", STOP_SECONDS)
            return
        task.cancel()
        await asyncio.wait({task}, timeout=min(CANCEL_AGAIN_SECONDS, left))
    if not task.cancelled() and task.exception() is not None:
        log.error("match deadlines: the poller failed", exc_info=task.exception())


@contextlib.asynccontextmanager
async def running(b: Backends):  # type: ignore[no-untyped-def]
    stop = asyncio.Event()
    task = asyncio.create_task(run(b, stop), name="match-deadlines")
    try:
        yield
    finally:
        await _stopped(task, stop)
