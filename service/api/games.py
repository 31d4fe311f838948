"""Game endpoints. Thin: decode, authorise, load, apply the engine, commit, encode."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import logging
import random
import re
import secrets
from collections.abc import Callable
from typing import Any, TypeVar

import msgspec
from starlette.concurrency import run_in_threadpool
from starlette.requests import ClientDisconnect, Request
from starlette.responses import PlainTextResponse, Response

from .. import engine, metrics, store, wire
from ..store import Record
from . import backends, daily, views
from .backends import Backends
from .limits import client_address, refusal
from .problems import ApiError
from .responses import MsgspecResponse

T = TypeVar("T")
log = logging.getLogger(__name__)

MAX_ATTEMPTS = 64
_GAME_ID = re.compile(r"[0-9a-f]{32}")
_IDEMPOTENCY_KEY = re.compile(r"[\x21-\x7e]{1,128}")
_IF_MATCH = re.compile(r'\s*(?:W/)?"?(\d{1,18})"?\s*')

_decoders: dict[type[Any], msgspec.json.Decoder[Any]] = {
    kind: msgspec.json.Decoder(kind) for kind in (wire.NewGame, wire.Cell, wire.FlagCell)
}


class Idempotent(msgspec.Struct, array_like=True):
    """The first answer to a request with an ``Idempotency-Key``."""

    fingerprint: bytes
    status: int
    body: bytes


_idempotent = msgspec.msgpack.Decoder(Idempotent)
_msgpack = msgspec.msgpack.Encoder()


def hash_token(token: str) -> bytes:
    return hashlib.sha256(token.encode()).digest()


_HEADERS = "minesweeper.headers"


def header(request: Request, name: bytes) -> str | None:
    """A request header by its lower-case name (the first, if sent twice).

    The headers are put in a dict once per request: ``request.headers.get`` scans
    them all for every name, and a move asks for four.
    """
    found: dict[bytes, bytes] | None = request.scope.get(_HEADERS)
    if found is None:
        found = request.scope[_HEADERS] = dict(reversed(request.scope["headers"]))
    value = found.get(name)
    return None if value is None else value.decode("latin-1")


async def read_body(request: Request, kind: type[T], *, empty_ok: bool = False) -> T:
    limit = backends.of(request).config.max_body
    declared = header(request, b"content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise ApiError(413, "too_large", f"the body is larger than {limit} bytes")
    # The ASGI messages themselves, not ``request.stream()``: a JSON move is one
    # message, and the generator costs more than reading it.
    body = b""
    while True:
        message = await request.receive()
        if message["type"] == "http.disconnect":
            raise ClientDisconnect()
        body += message.get("body", b"")
        if len(body) > limit:
            raise ApiError(413, "too_large", f"the body is larger than {limit} bytes")
        if not message.get("more_body", False):
            break
    if not body and empty_ok:  # no body at all; whitespace is not JSON
        body = b"{}"
    try:
        decoded: T = _decoders[kind].decode(body)
    except msgspec.ValidationError:
        # A field can fail before the parser reaches a syntax error: malformed JSON is a 400.
        msgspec.json.decode(body)
        raise
    return decoded


def game_id_of(request: Request) -> str:
    game_id: str = request.path_params["game_id"]
    if not _GAME_ID.fullmatch(game_id):
        raise ApiError(404, "not_found", "no such game")
    return game_id


def bearer_token(request: Request) -> str:
    scheme, _, token = (header(request, b"authorization") or "").partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise ApiError(
            401, "unauthorized", "moves need 'Authorization: Bearer <token>'",
            {"WWW-Authenticate": 'Bearer realm="games"'},
        )
    return token.strip()


def authorise(record: Record, token_hash: bytes) -> None:
    if not hmac.compare_digest(record.token_hash, token_hash):
        raise ApiError(403, "forbidden", "that token does not belong to this game")


async def load_authorised(request: Request) -> tuple[str, str, Record]:
    """The game a request may change: its id, the caller's token and the loaded record."""
    game_id = game_id_of(request)
    token = bearer_token(request)
    record = await backends.of(request).games.load(game_id)
    authorise(record, hash_token(token))
    return game_id, token, record


# ---- create, read, reset -------------------------------------------------------------------


def settings_of(body: wire.NewGame, max_cells: int) -> engine.Settings:
    sizes = (body.width, body.height, body.mines)
    named = body.daily or body.preset
    if body.daily and body.preset:
        raise ApiError(422, "invalid_request", "give a preset or a daily board, not both")
    if body.daily and (body.seed is not None or body.first_click != "zero"):
        raise ApiError(422, "invalid_request", "a daily board sets its own seed and start")
    if named is not None:
        if any(v is not None for v in sizes):
            raise ApiError(
                422, "invalid_request", "give a preset or width/height/mines, not both"
            )
        return engine.preset(named)
    if all(v is None for v in sizes):
        return engine.preset("beginner")
    if body.width is None or body.height is None or body.mines is None:
        raise ApiError(422, "invalid_request", "a custom board needs width, height and mines")
    return engine.custom(body.width, body.height, body.mines, max_cells=max_cells)


async def start_game(
    request: Request, settings: engine.Settings, options: wire.NewGame
) -> Response:
    b = backends.of(request)
    now = views.now_ms()
    date = None
    if options.daily:
        date = daily.today(now)
        secret = await b.leaderboards.daily_secret()
        seed = daily.seed(secret, date, options.daily, options.no_guess)
        game = daily.board(settings, seed, options.no_guess, now)
    else:
        game = engine.new_game(
            settings,
            seed=options.seed if options.seed is not None else secrets.randbits(64),
            now_ms=now,
            first_click=options.first_click,
            no_guess=options.no_guess,
            question_marks=options.question_marks,
        )
    # A chosen seed makes the board knowable in advance: such games are not ranked.
    ranked = settings.preset is not None and options.seed is None
    game_id = secrets.token_hex(16)
    token = secrets.token_urlsafe(32)
    await b.games.create(
        game_id, game, hash_token(token), options.player, daily=date, ranked=ranked
    )
    view = views.game_view(game_id, game, now, player=options.player, daily=date)
    return MsgspecResponse(
        wire.CreatedGame(game=view, token=token),
        status_code=201,
        headers={"Location": f"/games/{game_id}"},
    )


async def create_game(request: Request) -> Response:
    body = await read_body(request, wire.NewGame, empty_ok=True)
    settings = settings_of(body, backends.of(request).config.max_cells)
    return await start_game(request, settings, body)


def _wants_text(request: Request) -> bool:
    accept = request.headers.get("accept", "")
    return "text/plain" in accept and "application/json" not in accept


async def get_game(request: Request) -> Response:
    game_id = game_id_of(request)
    record = await backends.of(request).games.load(game_id)
    now = views.now_ms()
    if _wants_text(request):
        return PlainTextResponse(views.board_text(game_id, record.game, now))
    return MsgspecResponse(views.record_view(game_id, record, now))


async def reset_game(request: Request) -> Response:
    game_id, _, record = await load_authorised(request)
    b = backends.of(request)
    old = record.game
    settings = engine.Settings(old.width, old.height, old.mines, old.preset)
    options = wire.NewGame(
        first_click=old.first_click,
        no_guess=old.no_guess,
        question_marks=old.question_marks,
        player=record.player,
    )
    response = await start_game(request, settings, options)
    next_id = response.headers["location"].rsplit("/", 1)[1]
    await b.games.set_next(game_id, next_id)
    await b.live.publish(game_id, wire.json_encoder.encode(wire.Reset(next_id)))
    return response


# ---- moves ---------------------------------------------------------------------------------


def _if_match(request: Request) -> int | None:
    given = header(request, b"if-match")
    if given is None:
        return None
    m = _IF_MATCH.fullmatch(given)
    if not m:
        raise ApiError(400, "invalid_request", 'If-Match takes a game version, e.g. "7"')
    return int(m.group(1))


def _idempotency_key(request: Request) -> str | None:
    key = header(request, b"idempotency-key")
    if key is not None and not _IDEMPOTENCY_KEY.fullmatch(key):
        raise ApiError(400, "invalid_request", "Idempotency-Key is 1 to 128 visible characters")
    return key


async def _load_limited(
    b: Backends, game_id: str, token_hash: bytes, key: str | None, address: str | None
) -> Record:
    """Load the game and take the move's rate limits in the same round trip."""
    if not b.limits.any:
        return await b.games.load(game_id, key)
    groups = (b.limits.client(address) if address else [], b.limits.move(token_hash))
    try:
        return await b.games.load(
            game_id, key, takes=[g for g in groups if g], now_ms=views.now_ms()
        )
    except store.RateLimited as limited:
        raise refusal(limited.wait_ms, "move") from None


# Longer than a move takes with Redis answering within its command timeout.
TURN_TIMEOUT = 3.0


class _Turn:
    """A game's lock in this process, and how many moves hold it or wait for it."""

    __slots__ = ("lock", "moves")

    def __init__(self) -> None:
        self.lock = asyncio.Lock()
        self.moves = 0


# Moves on one game take turns within a process rather than racing each other through
# Redis: under contention, optimistic retries alone waste most round trips and can run
# out of attempts. Across processes the commit's version check still decides. Only
# games with a move in flight have an entry.
_turns: dict[str, _Turn] = {}


def busy() -> ApiError:
    """A game whose writes keep racing, or whose turn does not come in time."""
    return ApiError(
        503, "store_unavailable", "the game is too busy right now; try again",
        {"Retry-After": "1"},
    )


async def _take_turn(game_id: str) -> _Turn:
    """This process's turn on a game, waited for at most TURN_TIMEOUT; end it with
    ``_end_turn``."""
    turn = _turns.get(game_id)
    if turn is None:
        turn = _turns[game_id] = _Turn()
    turn.moves += 1
    if not turn.lock.locked():
        await turn.lock.acquire()  # free: taken at once, no timer needed
        return turn
    try:
        async with asyncio.timeout(TURN_TIMEOUT):
            await turn.lock.acquire()
    except BaseException as exc:  # a timeout, or the client went away while waiting
        _leave(game_id, turn)
        if isinstance(exc, TimeoutError):
            raise busy() from None
        raise
    return turn


def _end_turn(game_id: str, turn: _Turn) -> None:
    turn.lock.release()
    _leave(game_id, turn)


def _leave(game_id: str, turn: _Turn) -> None:
    turn.moves -= 1
    if not turn.moves:
        del _turns[game_id]


async def play(
    b: Backends,
    game_id: str,
    token: str,
    move: engine.Move,
    *,
    address: str | None = None,
    if_match: int | None = None,
    idempotency: tuple[str, bytes] | None = None,
) -> bytes:
    """Apply ``move`` and commit it, re-applying on a lost race; the encoded diff.

    Shared by HTTP and WebSocket moves, so both answer with the same bytes.
    """
    token_hash = hash_token(token)
    turn = await _take_turn(game_id)
    try:
        key, fingerprint = idempotency if idempotency else (None, b"")
        for attempt in range(MAX_ATTEMPTS):
            if attempt == 0:
                record = await _load_limited(b, game_id, token_hash, key, address)
            else:
                record = await b.games.load(game_id, key)
            authorise(record, token_hash)
            if record.idempotent is not None:
                first = _idempotent.decode(record.idempotent)
                if first.fingerprint != fingerprint:
                    raise ApiError(
                        422, "invalid_request", "that Idempotency-Key was used for another request"
                    )
                return first.body
            if if_match is not None and record.game.version != if_match:
                raise ApiError(
                    412, "version_conflict",
                    f"the game is at version {record.game.version}, not {if_match}",
                )
            now = views.now_ms()
            game, cells = await off_loop(
                engine.apply, record.game, move, now, heavy=heavy(record.game)
            )
            played = views.played(move.action, move.x, move.y, now, move.mark)
            body = wire.json_encoder.encode(views.diff(game, played, cells, now))
            saved = (key, _msgpack.encode(Idempotent(fingerprint, 200, body))) if key else None
            if await b.games.commit(game_id, record.rev, game, body if cells else None, saved):
                if cells:
                    _MOVES[move.action].inc()
                if game.status == "won" and record.game.status != "won":
                    await enter_leaderboard(b, game_id, record, game)
                return body
            # Another move won the race: back off a little, with jitter, and play on its result.
            metrics.CONFLICTS.inc()
            await asyncio.sleep(random.uniform(0, min(0.02, 0.0005 * 2**attempt)))
        metrics.EXHAUSTED.inc()
        raise busy()
    finally:
        _end_turn(game_id, turn)


_MOVES = {action: metrics.MOVES.labels(action) for action in ("reveal", "flag", "chord")}

# Boards past this many cells make whole-board work long enough to stall other requests.
HEAVY_CELLS = 65_536


def heavy(game: engine.Game) -> bool:
    """Whether a move may take long: a big board, or a no-guess board still to be built."""
    return game.width * game.height > HEAVY_CELLS or (game.no_guess and not game.placed)


async def off_loop(fn: Callable[..., T], *args: Any, heavy: bool) -> T:
    """Run ``fn`` in a worker thread when it may be slow, so other games keep moving;
    a quick move stays on the loop, where a thread hop would cost more than the move."""
    if heavy:
        return await run_in_threadpool(fn, *args)
    return fn(*args)


async def enter_leaderboard(b: Backends, game_id: str, record: Record, game: engine.Game) -> None:
    """Rank a win: presets only, no chosen seed, no hints."""
    if game.preset is None or game.clicks.hints or not (record.ranked or record.daily):
        return
    entry = store.Entry(
        game_id=game_id,
        player=record.player or "anonymous",
        elapsed_ms=game.elapsed_ms(game.ended_at or 0),
        ended_at=game.ended_at or 0,
        bbbv=game.bbbv,
    )
    board = store.board_name(game.preset, game.no_guess, record.daily)
    try:
        await b.leaderboards.record(board, entry)
    except store.StoreUnavailable:
        # The win itself is committed; only its ranking is lost.
        log.warning("could not enter game %s in leaderboard %s", game_id, board)


def _move_endpoint(action: engine.Action) -> Any:
    kind: type[wire.Cell] | type[wire.FlagCell] = wire.FlagCell if action == "flag" else wire.Cell

    async def endpoint(request: Request) -> Response:
        game_id = game_id_of(request)
        body = await read_body(request, kind)
        token = bearer_token(request)
        move = engine.Move(action, body.x, body.y, getattr(body, "mark", None))
        key = _idempotency_key(request)
        idempotency = None
        if key is not None:
            fingerprint = hashlib.sha256(wire.json_encoder.encode(move)).digest()
            idempotency = (key, fingerprint)
        diff = await play(
            backends.of(request), game_id, token, move,
            address=client_address(request.scope),
            if_match=_if_match(request), idempotency=idempotency,
        )
        return MsgspecResponse(diff)

    endpoint.__name__ = action
    return endpoint


reveal = _move_endpoint("reveal")
flag = _move_endpoint("flag")
chord = _move_endpoint("chord")


# ---- pause and resume ----------------------------------------------------------------------


def _pause_endpoint(action: str) -> Any:
    change = engine.pause if action == "pause" else engine.resume

    async def endpoint(request: Request) -> Response:
        game_id, _, record = await load_authorised(request)
        b = backends.of(request)
        for _attempt in range(MAX_ATTEMPTS):
            now = views.now_ms()
            game, _ = change(record.game, now)
            cells = views.board_changes(record.game, game)
            played = views.played("pause" if action == "pause" else "resume", None, None, now)
            body = wire.json_encoder.encode(views.diff(game, played, cells, now))
            changed = game.version != record.game.version
            if not changed or await b.games.commit(game_id, record.rev, game, body):
                return MsgspecResponse(body)
            record = await b.games.load(game_id)
        raise busy()

    endpoint.__name__ = action
    return endpoint


pause = _pause_endpoint("pause")
resume = _pause_endpoint("resume")
