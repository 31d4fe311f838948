"""The move service: every change a player makes to a stored game goes through
:func:`change`.

One loop for all of them: take the game from this process's cache, or load it (a
move takes its rate limits in the same round trip), check the token, apply a pure
engine change, and commit it against the write it was read at; a move on a cached
game takes its limits in the commit, so it costs one round trip. On a lost race the
commit answers with the game as the other write left it, and the change is applied
again to that.
Moves, pause and resume, and hints come through here, and (:func:`end`) the end a
match's end makes of its unfinished games. A change that ends a player's game also
counts it in the player's stats with the same commit, and is then ranked
(``endings.py``); a match's moves belong here too.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import random
from collections.abc import Callable
from typing import Any, Literal, NamedTuple, TypeVar

import msgspec
from starlette.concurrency import run_in_threadpool

from .. import engine, metrics, store, wire
from ..store import Record
from . import endings, match_rules, matches, views
from .auth import authorise, hash_token, owns
from .backends import Backends
from .problems import ApiError
from .ratelimit import refusal
from .requests import now_ms
from .turns import busy, turn

log = logging.getLogger(__name__)

T = TypeVar("T")

MAX_ATTEMPTS = 64
_CELL_MOVES = frozenset({"reveal", "flag", "chord"})
# Boards past this many cells make whole-board work long enough to stall other requests.
HEAVY_CELLS = 65_536
# How long a slow change waits for its turn among the others before a 503.
HEAVY_WAIT = 30.0

_encode = wire.json_encoder.encode
_idempotent = msgspec.msgpack.Encoder()
# The metric children of the changes that make diffs, looked up once: ``labels`` takes a lock.
_COMMITTED = {
    kind: metrics.MOVES.labels(kind) for kind in ("reveal", "flag", "chord", "pause", "resume")
}


class Outcome(NamedTuple):
    """What a change made of a game."""

    game: engine.Game
    # The caller's answer.
    answer: bytes
    # For the game's event stream and subscribers: the diff, when the version moved on.
    diff: bytes | None


# A change: the game as loaded and the server time -> its outcome. Pure, and applied
# again to the newer game when a commit loses a race.
Step = Callable[[engine.Game, int], Outcome]


async def move(
    b: Backends,
    game_id: str,
    token: str,
    cell_move: engine.Move,
    *,
    address: str,
    idempotency_key: str | None = None,
    if_match: int | None = None,
) -> bytes:
    """A move on a cell, from HTTP or a socket (the same answer, byte for byte)."""
    idempotency = None
    if idempotency_key is not None:
        fingerprint = hashlib.sha256(_encode(cell_move)).digest()
        idempotency = (idempotency_key, fingerprint)

    def apply(game: engine.Game, now: int) -> tuple[engine.Game, list[engine.ChangedCell]]:
        return engine.apply(game, cell_move, now)

    m = cell_move
    step = _diffed(apply, m.action, m.x, m.y, m.mark)
    return await change(
        b, game_id, token, m.action, step,
        address=address, if_match=if_match, idempotency=idempotency,
    )


async def pause(
    b: Backends, game_id: str, token: str, action: Literal["pause", "resume"]
) -> bytes:
    """Pause or resume the game: a diff with no cells."""
    apply = engine.pause if action == "pause" else engine.resume
    return await change(b, game_id, token, action, _diffed(apply, action))


async def hint(b: Backends, game_id: str, token: str) -> bytes:
    """The next cell to play; the game counts it, and whoever watches is told."""
    hints = 0

    def step(game: engine.Game, now: int) -> Outcome:
        nonlocal hints
        advice = engine.advise(game)
        counted, _ = engine.count_hint(game, now)
        hints = counted.clicks.hints
        return Outcome(counted, _encode(wire.Hint(**msgspec.structs.asdict(advice))), None)

    answer = await change(b, game_id, token, "hint", step)
    try:
        await b.games.notify(game_id, _encode(wire.Hinted(hints=hints)))
    except (store.StoreUnavailable, store.GameNotFound):
        # The hint is counted and answered; only the watchers' notice is lost.
        log.warning("could not tell the watchers of game %s about a hint", game_id)
    return answer


def _diffed(
    apply: Callable[[engine.Game, int], tuple[engine.Game, list[engine.ChangedCell]]],
    action: wire.MoveAction,
    x: int | None = None,
    y: int | None = None,
    mark: engine.Mark | None = None,
) -> Step:
    """A change answered with its diff, which subscribers get too when it changed the game."""

    def step(game: engine.Game, now: int) -> Outcome:
        changed, cells = apply(game, now)
        played = views.played(action, x, y, now, mark)
        diff = _encode(views.diff(changed, played, cells, now))
        return Outcome(changed, diff, diff if changed.version != game.version else None)

    return step


async def change(
    b: Backends,
    game_id: str,
    token: str,
    kind: wire.MoveAction | Literal["hint"],
    step: Step,
    *,
    address: str | None = None,
    if_match: int | None = None,
    idempotency: tuple[str, bytes] | None = None,
) -> bytes:
    """Apply ``step`` to the game and commit it, applying it again on a lost race.

    ``kind`` names the change in the metrics. ``address`` is given for a move: it
    takes the rate limits of the address and of the token, in the commit when the
    game is cached here, else in its load. ``if_match`` is the version the game must
    be at; ``idempotency`` the request's key and fingerprint, whose first answer a
    retry gets again.
    """
    token_hash = hash_token(token)
    key, fingerprint = idempotency if idempotency else (None, b"")
    takes = _takes(b, token_hash, address)
    async with turn(game_id):
        record = _cached(b, game_id, token_hash, if_match)
        cached = record is not None
        if record is None:
            record = await _load(b, game_id, key, takes)
            takes = []
        seated = record.match_id is None  # a match's mover is checked once, before a commit
        for attempt in range(MAX_ATTEMPTS):
            now = now_ms()
            try:
                answer, outcome = await _apply(
                    b, record, token_hash, fingerprint, if_match, kind, step, now
                )
            except Exception:
                if not cached:
                    raise
                answer, outcome = None, None
            if outcome is None:
                if not cached:
                    assert answer is not None
                    if record.idempotent is not None and record.game.finished:
                        await _after_end_again(b, game_id, record)
                    return answer
                # A copy may be behind: only a change it commits is answered from it.
                # Anything else (an error, nothing to store) is answered from the game
                # as loaded, which takes the limits too.
                record, cached = await _load(b, game_id, key, takes), False
                takes = []
                continue
            if not seated:
                try:
                    await matches.check_seat(b, record, authorise(record, token_hash))
                except ApiError:
                    if not cached:
                        raise
                    # A copy behind the stored game, which may hold this very move (a
                    # retry through another replica): its first answer is the one due.
                    record, cached = await _load(b, game_id, key, takes), False
                    takes = []
                    continue
                seated = True
            saved = (key, _idempotent.encode((fingerprint, outcome.answer))) if key else None
            ending = None
            if record.player_id is not None and endings.ends(record, outcome.game):
                ending = await endings.prepare(b, game_id, record, outcome.game, now)
            newer = await _commit(
                b, game_id, record, outcome, saved, takes, ending, now, closes_at(record)
            )
            takes = []
            if newer is None:
                if outcome.diff is not None:
                    _COMMITTED[kind].inc()
                if ending is not None:
                    await endings.settle(b, game_id, record, outcome.game, ending, now)
                if record.match_id is not None and outcome.diff is not None:
                    await matches.seat_moved(b, record, outcome.game)
                return outcome.answer
            # Another change won the race (or the copy was behind): apply this one to
            # the game it left, at once the first time; after that back off a little,
            # with jitter, and load the game again.
            metrics.CONFLICTS.inc()
            record, cached = newer, False
            if attempt > 0 and newer.idempotent is None:
                await asyncio.sleep(random.uniform(0, min(0.02, 0.0005 * 2**attempt)))
                record = await b.games.load(game_id, key)
    metrics.EXHAUSTED.inc()
    raise busy()


_ENDED = _diffed(engine.end, "end")


async def end(b: Backends, game_id: str, at: int) -> None:
    """End a match's game that its match's end left on (``engine.end``), its clock
    stopped at ``at``, the match's end, or show the mines a race seat's loss held back:
    the service's own change, taken by no token. Whichever replica gets there first
    commits it; the others find nothing left to do. It takes no turn: the move that
    ended the match may hold this game's. Its player's socket hears of it with the rest
    of the match's end."""
    record = await b.games.load(game_id)
    for _ in range(MAX_ATTEMPTS):
        now = now_ms()
        outcome = _ENDED(record.game, at)
        if outcome.game.version == record.game.version:
            return  # over already, and nothing held back to show
        ending = None
        if record.player_id is not None and not record.game.finished:
            ending = await endings.prepare(b, game_id, record, outcome.game, now)
        newer = await _commit(b, game_id, record, outcome, None, [], ending, now)
        if newer is None:
            if ending is not None:
                await endings.settle(b, game_id, record, outcome.game, ending, now, tell=False)
            return
        metrics.CONFLICTS.inc()
        record = newer
    metrics.EXHAUSTED.inc()
    raise busy()


async def _after_end_again(b: Backends, game_id: str, record: Record) -> None:
    """A move sent again after its game ended: what the ending commit sets off (the
    leaderboard, the match's count of the seat) may have been cut short, the replica
    or Redis gone between the commit and its answer; and the retry is answered from the
    stored answer, so nothing else would do it. Both steps change nothing when done
    twice."""
    if record.player_id is not None:
        await endings.settle_again(b, game_id, record)
    if record.match_id is not None:
        await matches.seat_moved(b, record, record.game)


async def _apply(
    b: Backends, record: Record, token_hash: bytes, fingerprint: bytes, if_match: int | None,
    kind: wire.MoveAction | Literal["hint"], step: Step, now: int,
) -> tuple[bytes | None, Outcome | None]:
    """The change to ``record``: an answer with nothing to store, or an outcome to commit."""
    mover = authorise(record, token_hash)
    if record.idempotent is not None:  # a retry: its first answer, whatever time it is
        return _first_answer(record.idempotent, fingerprint), None
    if record.window is not None:
        if kind not in _CELL_MOVES:
            # Played against the match's clock, like its reset (also a 409 ``match_started``).
            raise ApiError(409, "match_started", f"a match's game takes no {kind}")
        matches.check_window(record, now)
    if if_match is not None and record.game.version != if_match:
        raise ApiError(
            412, "version_conflict",
            f"the game is at version {record.game.version}, not {if_match}",
        )
    outcome = await off_loop(b, step, record.game, now, heavy=heavy(record.game))
    if record.coop and mover is not None:
        outcome = _attributed(outcome, mover)
    if outcome.game == record.game:
        return outcome.answer, None  # nothing to store
    return None, outcome


def _cached(b: Backends, game_id: str, token_hash: bytes, if_match: int | None) -> Record | None:
    """This process's copy of the game, when a change may start from it: its token's (or
    its player's), and at the version ``If-Match`` names (a copy behind would answer 412
    wrongly)."""
    record = b.games.cached(game_id)
    if record is None or not owns(record, token_hash):
        return None
    if if_match is not None and record.game.version != if_match:
        return None
    return record


def _takes(b: Backends, token_hash: bytes, address: str | None) -> list[list[store.Take]]:
    """The rate-limit buckets a move takes, in groups of one hash tag each: its
    address's and its token's."""
    rate_limits = b.rate_limits
    if address is None or not rate_limits.limits.any:
        return []
    return [g for g in (rate_limits.client(address), rate_limits.move(token_hash)) if g]


async def _load(
    b: Backends, game_id: str, key: str | None, takes: list[list[store.Take]]
) -> Record:
    """Load the game and take ``takes`` in the same round trip."""
    if not takes:
        return await b.games.load(game_id, key)
    try:
        return await b.games.load(game_id, key, takes=takes, now_ms=now_ms())
    except store.RateLimited as limited:
        raise refusal(limited.wait_ms, "move") from None


async def _commit(
    b: Backends,
    game_id: str,
    record: Record,
    outcome: Outcome,
    saved: tuple[str, bytes] | None,
    takes: list[list[store.Take]],
    ending: endings.Ending | None,
    now: int,
    closes: int | None = None,
) -> Record | None:
    try:
        return await b.games.commit(
            game_id, record, outcome.game, outcome.diff, saved,
            takes=[t for group in takes for t in group], now_ms=now, closes_at=closes,
            **(endings.commit_options(record, ending) if ending else {}),
        )
    except store.RateLimited as limited:
        raise refusal(limited.wait_ms, "move") from None
    except store.TooLate:
        raise ApiError(409, "game_over", "the match's time is up") from None


def closes_at(record: Record) -> int | None:
    """Until when a move on a match's game may land, checked in time as it was."""
    return None if record.window is None else record.window[1] + match_rules.LATE_MOVE_MS


_diff = msgspec.json.Decoder(wire.Diff)


def _attributed(outcome: Outcome, by: str) -> Outcome:
    """A co-op game's change, its diff saying who made it."""
    answer = _encode(msgspec.structs.replace(_diff.decode(outcome.answer), by=by))
    return outcome._replace(answer=answer, diff=answer if outcome.diff is not None else None)


def _first_answer(stored: bytes, fingerprint: bytes) -> bytes:
    """The answer kept for an idempotency key, if the retry is the same request."""
    first = msgspec.msgpack.decode(stored)
    # The fingerprint comes first and the answer last (older records hold a status
    # between the two).
    if first[0] != fingerprint:
        raise ApiError(422, "invalid_request", "that Idempotency-Key was used for another request")
    answer: bytes = first[-1]
    return answer


def heavy(game: engine.Game) -> bool:
    """Whether a change may take long: a big board, or a no-guess board still to be built."""
    return slow(game.width * game.height, building=game.no_guess and not game.placed)


def slow(cells: int, *, building: bool) -> bool:
    """Whether work on a board of ``cells`` may take long: a big board, or the build of
    a no-guess one."""
    return cells > HEAVY_CELLS or building


async def off_loop(b: Backends, fn: Callable[..., T], *args: Any, heavy: bool) -> T:
    """Run ``fn`` in a worker thread when it may be slow, so other games keep moving;
    a quick change stays on the loop, where a thread hop would cost more than it.

    Slow ones take turns, as many at once as the process has cores: more would only
    share the cores (and the interpreter's lock) with each other and with the loop,
    every one of them slower and every other game's moves too."""
    if not heavy:
        return fn(*args)
    slots = b.heavy
    metrics.HEAVY.labels("waiting").inc()
    try:
        await asyncio.wait_for(slots.acquire(), HEAVY_WAIT)
    except TimeoutError:
        raise busy() from None
    finally:
        metrics.HEAVY.labels("waiting").dec()
    metrics.HEAVY.labels("running").inc()
    work = asyncio.ensure_future(run_in_threadpool(fn, *args))

    def done(finished: asyncio.Future[T]) -> None:
        # When the thread is done, not when its caller is: a caller cancelled (its
        # socket gone) leaves the work running, and its slot taken until it ends.
        metrics.HEAVY.labels("running").dec()
        slots.release()
        if not finished.cancelled():
            finished.exception()  # a cancelled caller's error is nobody's to log

    work.add_done_callback(done)
    return await asyncio.shield(work)
