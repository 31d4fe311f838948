"""What a request says: its headers, JSON body, game or player id, ``If-Match`` and
``Idempotency-Key``, the client's address, and the server time it is handled at."""

from __future__ import annotations

import re
import time
from typing import Any, TypeVar

import msgspec
from starlette.requests import ClientDisconnect, HTTPConnection, Request
from starlette.types import Scope

from .. import wire
from . import backends
from .problems import ApiError

T = TypeVar("T")

# Game and player ids alike: 128 random bits in lower-case hex.
_GAME_ID = re.compile(r"[0-9a-f]{32}")
_IDEMPOTENCY_KEY = re.compile(r"[\x21-\x7e]{1,128}")
_IF_MATCH = re.compile(r'\s*(?:W/)?"?(\d{1,18})"?\s*')
_HEADERS = "minesweeper.headers"

_decoders: dict[type[Any], msgspec.json.Decoder[Any]] = {
    kind: msgspec.json.Decoder(kind)
    for kind in (
        wire.NewGame, wire.Cell, wire.FlagCell, wire.NewPlayer, wire.PlayerRename,
        wire.NewMatch, wire.NewSeek,
    )
}


def now_ms() -> int:
    """Server time: the only clock the games know."""
    return time.time_ns() // 1_000_000


def query_flag(conn: HTTPConnection, name: str) -> bool:
    """A yes-or-no query parameter, false when absent: ``true`` or ``false``, or ``1``
    or ``0``, the same on every endpoint that takes one."""
    raw = conn.query_params.get(name)
    if raw in (None, "false", "0"):
        return False
    if raw in ("true", "1"):
        return True
    raise ApiError(422, "invalid_request", f"{name} is true or false")


def client_address(scope: Scope) -> str:
    client = scope.get("client")
    return str(client[0]) if client else "unknown"


def header(conn: HTTPConnection, name: bytes) -> str | None:
    """A request header by its lower-case name (the first, if sent twice).

    The headers are put in a dict once per request: ``request.headers.get`` scans
    them all for every name, and a move asks for four.
    """
    found: dict[bytes, bytes] | None = conn.scope.get(_HEADERS)
    if found is None:
        found = conn.scope[_HEADERS] = dict(reversed(conn.scope["headers"]))
    value = found.get(name)
    return None if value is None else value.decode("latin-1")


async def read_body(request: Request, kind: type[T], *, empty_ok: bool = False) -> T:
    """The JSON body as ``kind``; 413 past the configured size."""
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
    decoded: T = wire.decode(_decoders[kind], body)
    return decoded


def game_id_of(conn: HTTPConnection) -> str:
    """The game id in the path; an id that cannot exist is a 404 like an unknown one."""
    game_id: str = conn.path_params["game_id"]
    if not _GAME_ID.fullmatch(game_id):
        raise ApiError(404, "not_found", "no such game")
    return game_id


def path_id(conn: HTTPConnection, name: str, what: str) -> str:
    """The id ``name`` in the path (a match's, a seek's); one that cannot exist is a 404."""
    found: str = conn.path_params[name]
    if not _GAME_ID.fullmatch(found):
        raise ApiError(404, "not_found", f"no such {what}")
    return found


def player_id_of(conn: HTTPConnection) -> str:
    """The player id in the path; an id that cannot exist is a 404 like an unknown one."""
    player_id: str = conn.path_params["player_id"]
    if not _GAME_ID.fullmatch(player_id):
        raise ApiError(404, "not_found", "no such player")
    return player_id


def if_match(request: Request) -> int | None:
    """The version an ``If-Match`` header asks the game to be at."""
    given = header(request, b"if-match")
    if given is None or given.strip() == "*":
        # "*" asks only that the game exist (RFC 9110), which every move checks anyway.
        return None
    m = _IF_MATCH.fullmatch(given)
    if not m:
        raise ApiError(400, "invalid_request", 'If-Match takes a game version, e.g. "7", or *')
    return int(m.group(1))


def idempotency_key(request: Request) -> str | None:
    key = header(request, b"idempotency-key")
    if key is not None and not _IDEMPOTENCY_KEY.fullmatch(key):
        raise ApiError(400, "invalid_request", "Idempotency-Key is 1 to 128 visible characters")
    return key


def wants_text(request: Request) -> bool:
    """Whether the client asked for the board as text (curl with ``Accept: text/plain``)."""
    accept = header(request, b"accept") or ""
    return "text/plain" in accept and "application/json" not in accept
