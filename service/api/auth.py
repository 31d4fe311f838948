"""Who may change a game: the bearer token it was created with, stored only as a hash."""

from __future__ import annotations

import hashlib
import hmac

from starlette.requests import HTTPConnection

from ..store import Record
from . import backends
from .problems import ApiError
from .requests import game_id_of, header


def hash_token(token: str) -> bytes:
    return hashlib.sha256(token.encode()).digest()


def bearer_token(conn: HTTPConnection) -> str:
    """The token of ``Authorization: Bearer <token>``; 401 without one."""
    scheme, _, token = (header(conn, b"authorization") or "").partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise ApiError(
            401, "unauthorized", "moves need 'Authorization: Bearer <token>'",
            {"WWW-Authenticate": 'Bearer realm="games"'},
        )
    return token.strip()


def authorise(record: Record, token_hash: bytes) -> None:
    if not hmac.compare_digest(record.token_hash, token_hash):
        raise ApiError(403, "forbidden", "that token does not belong to this game")


async def load_authorised(conn: HTTPConnection) -> tuple[str, Record]:
    """The game a request may change: its id and the loaded record."""
    game_id = game_id_of(conn)
    token = bearer_token(conn)
    record = await backends.of(conn).games.load(game_id)
    authorise(record, hash_token(token))
    return game_id, record
