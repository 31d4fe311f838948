"""The endpoints of ``/players``: register (with a name, or as a guest with a made-up
one), read a player, and read or rename oneself with the player's token."""

from __future__ import annotations

import secrets

from starlette.requests import Request
from starlette.responses import Response

from .. import wire
from ..store import Owner, PlayerRecord
from . import backends, names, ratings
from .auth import authorised_player, hash_token, new_player_token
from .backends import Backends
from .problems import ApiError
from .requests import client_address, now_ms, player_id_of, read_body
from .responses import MsgspecResponse

# Made-up names tried before a guest's registration gives up.
GUEST_TRIES = 8


def name_taken(name: str) -> ApiError:
    return ApiError(409, "name_taken", f"somebody is already called {name!r} (ignoring case)")


async def register(request: Request) -> Response:
    b = backends.of(request)
    await b.rate_limits.register(client_address(request.scope))
    body = await read_body(request, wire.NewPlayer, empty_ok=True)
    player_id = secrets.token_hex(16)
    token = new_player_token(player_id)
    now = now_ms()
    tries = [body.name] if body.name else [names.guest_name() for _ in range(GUEST_TRIES)]
    for name in tries:
        if await b.players.register(player_id, hash_token(token), name, bot=body.bot, now_ms=now):
            break
    else:
        raise name_taken(tries[-1])
    player = await _load(b, player_id)
    return MsgspecResponse(
        wire.CreatedPlayer(player=await ratings.player_view(b, player), token=token),
        status_code=201,
        headers={"Location": f"/players/{player_id}"},
    )


async def get_player(request: Request) -> Response:
    player = await _load(backends.of(request), player_id_of(request))
    return MsgspecResponse(await ratings.player_view(backends.of(request), player, public=True))


async def me(request: Request) -> Response:
    """``GET /players/me``, and ``PATCH`` to rename."""
    owner = await authorised_player(request)
    if request.method == "PATCH":
        return await rename(request, owner)
    b = backends.of(request)
    return MsgspecResponse(await ratings.player_view(b, await _load(b, owner.player_id)))


async def rename(request: Request, owner: Owner) -> Response:
    body = await read_body(request, wire.PlayerRename)
    b = backends.of(request)
    if not await b.players.claim(owner.player_id, body.name):
        raise name_taken(body.name)
    view = await ratings.player_view(b, await _load(b, owner.player_id))
    await b.players.publish(
        owner.player_id, wire.json_encoder.encode(wire.PlayerSnapshot(view))
    )
    return MsgspecResponse(view)


async def _load(b: Backends, player_id: str) -> PlayerRecord:
    player = await b.players.load(player_id, now_ms())
    if player is None:
        raise ApiError(404, "not_found", "no such player")
    return player
