"""Who may do what: a game's bearer token changes that game; a player's token makes
games that are theirs, changes those games, and speaks for the player. Tokens are
stored only as hashes and compared in constant time.

A player's token starts with the player's id (``<id>.<secret>``), so the one hash it
is checked against is found without an index of tokens.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets

from starlette.requests import HTTPConnection

from ..store import Owner, Record
from . import backends
from .problems import ApiError
from .requests import game_id_of, header

_PLAYER_TOKEN = re.compile(r"([0-9a-f]{32})\.[A-Za-z0-9_\-]{20,100}")


def hash_token(token: str) -> bytes:
    return hashlib.sha256(token.encode()).digest()


def new_player_token(player_id: str) -> str:
    return f"{player_id}.{secrets.token_urlsafe(32)}"


def bearer_token(conn: HTTPConnection) -> str:
    """The token of ``Authorization: Bearer <token>``; 401 without one."""
    scheme, _, token = (header(conn, b"authorization") or "").partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise unauthorized("moves need 'Authorization: Bearer <token>'")
    return token.strip()


def optional_bearer_token(conn: HTTPConnection) -> str | None:
    """The bearer token, if the request carries an ``Authorization`` header; 401 when
    that header is not a bearer token."""
    given = header(conn, b"authorization")
    if given is None:
        return None
    scheme, _, token = given.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise unauthorized("'Authorization' takes 'Bearer <token>'")
    return token.strip()


def unauthorized(detail: str) -> ApiError:
    return ApiError(401, "unauthorized", detail, {"WWW-Authenticate": 'Bearer realm="games"'})


def _holder(record: Record, token_hash: bytes) -> tuple[bool, str | None]:
    """Whether the token is the game's own, its player's, or (a co-op match's game) a
    seated player's; and the id of the player whose it is, if a player's. Every
    comparison is made, whichever matches, so the time taken tells nothing."""
    game = hmac.compare_digest(record.token_hash, token_hash)
    player = hmac.compare_digest(record.player_token_hash or b"", token_hash)
    mover = record.player_id if player else None
    for player_id, seated in record.coop:
        if hmac.compare_digest(seated, token_hash):
            mover = player_id
    return game or player or mover is not None, mover


def owns(record: Record, token_hash: bytes) -> bool:
    """Whether the token may change the game."""
    return _holder(record, token_hash)[0]


def authorise(record: Record, token_hash: bytes) -> str | None:
    """The player whose token changes the game (None: the game's own token); 403 when
    the token may not change it."""
    owned, mover = _holder(record, token_hash)
    if not owned:
        raise ApiError(403, "forbidden", "that token does not belong to this game")
    return mover


async def load_authorised(conn: HTTPConnection) -> tuple[str, Record]:
    """The game a request may change: its id and the loaded record."""
    game_id = game_id_of(conn)
    token = bearer_token(conn)
    record = await backends.of(conn).games.load(game_id)
    authorise(record, hash_token(token))
    return game_id, record


async def player_of_token(conn: HTTPConnection, token: str) -> Owner:
    """The player whose token ``token`` is; 401 when it is nobody's."""
    found = _PLAYER_TOKEN.fullmatch(token)
    credentials = await backends.of(conn).players.credentials(found[1]) if found else None
    # A hash is compared even when there is no such player, so that a guess costs the
    # same either way.
    token_hash = hash_token(token)
    stored, bot, name = credentials or (b"", False, "")
    if not hmac.compare_digest(stored, token_hash) or found is None or credentials is None:
        raise unauthorized("that is not a player's token")
    return Owner(found[1], name, token_hash, bot)


async def authorised_player(conn: HTTPConnection) -> Owner:
    """The player a request speaks for, from its bearer token; 401 otherwise."""
    token = optional_bearer_token(conn)
    if token is None:
        raise unauthorized("send the player's token: 'Authorization: Bearer <token>'")
    return await player_of_token(conn, token)
