"""The endpoints of ``/games``: create, read and reset a game, and every change a player
makes to one (moves, pause and resume, hints). Each decodes the request and hands
the change to the move service (``moves.py``). A game created with a player's token
is that player's."""

from __future__ import annotations

import functools
import secrets
from collections.abc import Awaitable, Callable

import msgspec
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response

from .. import engine, wire
from ..store import Owner, board_name
from . import backends, daily, moves, views
from .auth import (
    bearer_token,
    hash_token,
    load_authorised,
    optional_bearer_token,
    player_of_token,
)
from .backends import Backends
from .boards import random_seed, settings_of
from .problems import ApiError
from .requests import (
    client_address,
    game_id_of,
    idempotency_key,
    if_match,
    now_ms,
    read_body,
    wants_text,
)
from .responses import MsgspecResponse

# ---- create, read, reset -------------------------------------------------------------------


# ``player`` once took any name; a name is now a player's own (``POST /players``).
NO_PLAYER_FIELD = (
    "'player' is no longer taken: register with POST /players and create games with "
    "the player's token ('Authorization: Bearer <token>'); the game then shows the "
    "player's name"
)


async def start_game(
    b: Backends, settings: engine.Settings, options: wire.NewGame, owner: Owner | None
) -> wire.CreatedGame:
    """Make and store a new game, ``owner``'s if given: its view and its token."""
    now = now_ms()
    date = None
    opened: list[engine.ChangedCell] = []
    if options.daily_preset:
        date = daily.today(now)
        secret = await b.leaderboards.daily_secret()
        seed = daily.seed(secret, date, options.daily_preset, options.no_guess)
        fresh = engine.new_game(settings, seed=seed, now_ms=now, no_guess=options.no_guess)
        game, opened = engine.open_start(fresh, now)
    else:
        game = engine.new_game(
            settings,
            seed=options.seed if options.seed is not None else random_seed(),
            now_ms=now,
            first_click=options.first_click,
            no_guess=options.no_guess,
            question_marks=options.question_marks,
        )
    # A chosen seed makes the board knowable in advance: such games are not ranked, nor
    # a player's second go at a daily board.
    ranked = settings.preset is not None and options.seed is None
    if date is not None:
        board = board_name(settings.preset or "", options.no_guess, date, bot=False)
        ranked = owner is not None and await b.leaderboards.first_daily_go(board, owner.player_id)
        # Its mines are everybody's today: a loss shows the one hit, the day's end the rest.
        game = msgspec.structs.replace(game, layout_shared=True)
    game_id = secrets.token_hex(16)
    token = secrets.token_urlsafe(32)
    await b.games.create(
        game_id, game, hash_token(token), owner, daily=date, ranked=ranked, opened=opened
    )
    view = views.game_view(
        game_id, game, now,
        player_id=owner.player_id if owner else None,
        player=owner.name if owner else None,
        daily=date,
        ranked=owner is not None and ranked,
    )
    return wire.CreatedGame(game=view, token=token)


def _created(created: wire.CreatedGame) -> Response:
    return MsgspecResponse(
        created, status_code=201, headers={"Location": f"/games/{created.game.id}"}
    )


async def create_game(request: Request) -> Response:
    try:
        body = await read_body(request, wire.NewGame, empty_ok=True)
    except msgspec.ValidationError as exc:
        if "unknown field `player`" in str(exc):
            raise ApiError(422, "invalid_request", NO_PLAYER_FIELD) from None
        raise
    # The body first: a request that cannot make a game is refused for that, whoever sent it.
    token = optional_bearer_token(request)
    owner = await player_of_token(request, token) if token is not None else None
    b = backends.of(request)
    return _created(await start_game(b, settings_of(body, b.config.max_cells), body, owner))


async def get_game(request: Request) -> Response:
    game_id = game_id_of(request)
    record = await backends.of(request).games.load(game_id)
    now = now_ms()
    if wants_text(request):
        return PlainTextResponse(views.board_text(game_id, views.record_game(record, now), now))
    return MsgspecResponse(views.record_view(game_id, record, now))


async def reset_game(request: Request) -> Response:
    """A new game with the old one's settings; the old one names it from now on."""
    game_id, record = await load_authorised(request)
    if record.match_id is not None:
        # A new board for one seat would take it out of the race it is in.
        raise ApiError(409, "match_started", "a match's game is not reset")
    b = backends.of(request)
    old = record.game
    settings = engine.Settings(old.width, old.height, old.mines, old.preset)
    options = wire.NewGame(
        first_click=old.first_click, no_guess=old.no_guess, question_marks=old.question_marks
    )
    owner = record.owner
    if owner is not None:
        # The new game is made now: under the name the player has now, not the old game's.
        now_named = (await b.players.names_of([owner.player_id])).get(owner.player_id)
        if now_named is not None and now_named != owner.name:
            owner = msgspec.structs.replace(owner, name=now_named)
    created = await start_game(b, settings, options, owner)
    next_id = created.game.id
    await b.games.reset(game_id, next_id, wire.json_encoder.encode(wire.Reset(next_id)))
    return _created(created)


# ---- changes -------------------------------------------------------------------------------


def _move_endpoint(action: engine.Action) -> Callable[[Request], Awaitable[Response]]:
    kind: type[wire.Cell] | type[wire.FlagCell] = wire.FlagCell if action == "flag" else wire.Cell

    async def endpoint(request: Request) -> Response:
        game_id = game_id_of(request)
        body = await read_body(request, kind)
        token = bearer_token(request)
        move = engine.Move(action, body.x, body.y, getattr(body, "mark", None))
        diff = await moves.move(
            backends.of(request), game_id, token, move,
            address=client_address(request.scope),
            idempotency_key=idempotency_key(request), if_match=if_match(request),
        )
        return MsgspecResponse(diff)

    endpoint.__name__ = action
    return endpoint


def _bodyless_endpoint(
    name: str, change: Callable[[Backends, str, str], Awaitable[bytes]]
) -> Callable[[Request], Awaitable[Response]]:
    """An endpoint that takes no body: pause, resume and hint."""

    async def endpoint(request: Request) -> Response:
        game_id = game_id_of(request)
        answer = await change(backends.of(request), game_id, bearer_token(request))
        return MsgspecResponse(answer)

    endpoint.__name__ = name
    return endpoint


reveal = _move_endpoint("reveal")
flag = _move_endpoint("flag")
chord = _move_endpoint("chord")
pause = _bodyless_endpoint("pause", functools.partial(moves.pause, action="pause"))
resume = _bodyless_endpoint("resume", functools.partial(moves.pause, action="resume"))
hint = _bodyless_endpoint("hint", moves.hint)
