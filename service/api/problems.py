"""Every error becomes an RFC 9457 problem with a stable ``code``.

Handlers raise; the exception handlers here turn engine, store and HTTP errors
into problems, so no handler builds an error response itself.
"""

from __future__ import annotations

import logging
from http import HTTPStatus

import msgspec
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response

from .. import engine, store
from ..store.errors import outage
from ..wire import Problem, RequestId
from .responses import ProblemResponse

log = logging.getLogger(__name__)

# engine error code -> HTTP status
_ENGINE_STATUS = {"invalid_request": 422, "game_over": 409, "paused": 409}
# HTTP status -> code, for errors raised by the framework itself
_STATUS_CODE = {
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    409: "game_over",
    412: "version_conflict",
    413: "too_large",
    429: "rate_limited",
    503: "store_unavailable",
}


class ApiError(Exception):
    def __init__(
        self, status: int, code: str, detail: str, headers: dict[str, str] | None = None,
        *, match_id: str | None = None, request_id: RequestId | None = None,
    ) -> None:
        super().__init__(detail)
        self.status = status
        self.code = code
        self.detail = detail
        self.headers = headers
        # ``already_playing``: the match that holds the player.
        self.match_id = match_id
        # A socket message's ``id``: the refusal that ends a socket carries it back too.
        self.request_id = request_id


def problem(status: int, code: str, detail: str, match_id: str | None = None) -> Problem:
    return Problem(
        title=HTTPStatus(status).phrase, status=status, code=code, detail=detail,
        match_id=match_id,
    )


def api_error_of(exc: Exception) -> ApiError:
    """The problem for anything a request can run into."""
    if isinstance(exc, ApiError):
        return exc
    if isinstance(exc, engine.EngineError):
        return ApiError(_ENGINE_STATUS.get(exc.code, 422), exc.code, str(exc))
    if isinstance(exc, store.GameNotFound):
        return ApiError(404, "not_found", "no such game (it may have expired)")
    if isinstance(exc, store.MatchNotFound):
        return ApiError(404, "not_found", "no such match (it may have expired)")
    if isinstance(exc, store.SeekNotFound):
        return ApiError(404, "not_found", "no such seek")
    if isinstance(exc, store.StoreUnavailable):
        outage.report(exc)
        return ApiError(
            503, "store_unavailable", "the game store is unreachable; try again shortly",
            {"Retry-After": "1"},
        )
    if isinstance(exc, msgspec.ValidationError):
        return ApiError(422, "invalid_request", str(exc))
    if isinstance(exc, msgspec.DecodeError):
        return ApiError(400, "invalid_request", f"the body is not valid JSON: {exc}")
    # The JSON decoder's own limits: text that is not UTF-8, nesting deeper than it follows.
    if isinstance(exc, UnicodeDecodeError):
        return ApiError(400, "invalid_request", "the body is not valid UTF-8")
    if isinstance(exc, RecursionError):
        return ApiError(400, "invalid_request", "the body is nested too deeply")
    if isinstance(exc, ClientDisconnect):
        # Nobody will read the answer; not a server failure either.
        return ApiError(400, "invalid_request", "the client went away mid-request")
    if isinstance(exc, HTTPException):
        code = _STATUS_CODE.get(exc.status_code, "invalid_request")
        return ApiError(exc.status_code, code, str(exc.detail), dict(exc.headers or {}))
    raise exc


def respond(err: ApiError) -> Response:
    return ProblemResponse(
        problem(err.status, err.code, err.detail, err.match_id), status_code=err.status,
        headers=err.headers,
    )


async def handle(request: Request, exc: Exception) -> Response:
    return respond(api_error_of(exc))


async def handle_unexpected(request: Request, exc: Exception) -> Response:
    """A bug, not bad input: logged in full, answered without internals."""
    log.exception("unhandled error on %s %s", request.method, request.url.path, exc_info=exc)
    return respond(ApiError(500, "internal_error", "the server failed; the game is unchanged"))


HANDLED: tuple[type[Exception], ...] = (
    ApiError,
    engine.EngineError,
    store.StoreError,
    msgspec.ValidationError,
    msgspec.DecodeError,
    UnicodeDecodeError,
    RecursionError,
    ClientDisconnect,
    HTTPException,
)
