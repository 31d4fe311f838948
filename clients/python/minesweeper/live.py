"""A live connection to one game over its WebSocket: messages in, moves out.

The connection resumes by itself. When the socket drops, or a message shows that a
version was missed (a diff that skips one, a heartbeat ahead of the last diff), it
reconnects with ``?since=<last version>`` and the service replays what was missed,
so the messages it yields go up one version at a time with no gaps and no repeats.

Pausing and resuming a game are diffs too (``move.action`` ``"pause"`` or
``"resume"``, with no cell): the first hides the board, the second shows it again.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import time
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeAlias, TypeVar

import msgspec
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake

from . import _http
from .errors import ApiError, StoreUnavailable, error_for
from .wire import (
    Auth,
    ChordMessage,
    Diff,
    Error,
    FlagMessage,
    Heartbeat,
    Hinted,
    Mark,
    MatchHeartbeat,
    MatchServerMessage,
    MatchSnapshot,
    MatchUpdate,
    PlayerServerMessage,
    Reset,
    Result,
    RevealMessage,
    ServerMessage,
    Snapshot,
)

__all__ = ["LiveGame", "LiveMessage"]

#: What iterating a :class:`LiveGame` yields; answers to its own moves are not among them.
LiveMessage: TypeAlias = Snapshot | Diff | Heartbeat | Reset | Hinted

_decoder: msgspec.json.Decoder[ServerMessage] = msgspec.json.Decoder(ServerMessage)


def backoff(tries: int) -> float:
    """Seconds to wait before the ``tries``-th try to resume (from 1)."""
    # The exponent stops growing long before the cap: a float overflows past 2**1023.
    return min(0.05 * 2.0 ** min(tries - 1, 16), BACKOFF_CAP)


def ws_base(base_url: str) -> str:
    """The service's address for sockets: ``ws://`` for ``http://``, ``wss://`` for TLS."""
    scheme, sep, rest = base_url.rstrip("/").partition("://")
    return f"{ {'http': 'ws', 'https': 'wss'}.get(scheme, scheme)}{sep}{rest}"
_encoder = msgspec.json.Encoder()

# How long closing a socket waits for the service's closing handshake (websockets' own
# default is 10 s): quitting must not hang on a service that stopped answering.
CLOSE_TIMEOUT = 1.0
# How long a socket may stay silent before it counts as dropped: the service sends a
# heartbeat every 15 s (its HEARTBEAT_SECONDS) while nothing else happens, so a socket
# with nothing for about twice that is held by a service that stopped answering.
HEARTBEAT_TIMEOUT = 35.0
# Resuming waits 0.05 s before its first try, twice as long before each next, and never
# longer than this between two: the default 8 tries give a service about 11 s to come
# back, and ``retries=None`` outlasts a rolling deploy at one try every 5 s.
BACKOFF_CAP = 5.0

# The service closes a socket that sends more than about 20 messages a second (in bursts
# of up to 40): moves quicker than this wait their turn here rather than lose the
# connection, as a burst of keys after a stalled moment would.
PACE = 18.0
BURST = 30.0


class LiveGame:
    """One game's live messages, and moves sent over the same socket.

    Use it as an async context manager (it connects on entry and closes on exit)
    and iterate it::

        async with client.connect(game) as live:
            diff = await live.reveal(4, 4)
            async for message in live:
                ...

    Iteration yields :class:`~minesweeper.wire.Snapshot` (first, unless resuming with
    ``since``), :class:`~minesweeper.wire.Diff` per committed move in version order,
    :class:`~minesweeper.wire.Heartbeat` when the game is quiet, and
    :class:`~minesweeper.wire.Reset` when the game was reset, :class:`~minesweeper.wire.Hinted`
    when its player was given a hint (kinds of message newer than
    this client are skipped). It raises the
    :class:`~minesweeper.ApiError` the service reports for the connection (an unknown
    game, a wrong token) and ``ConnectionError`` when it could not resume after
    ``retries`` attempts (``None``: it keeps trying for as long as it is open, one try
    every :data:`BACKOFF_CAP` seconds at most). ``max_size`` is the largest message
    taken, websockets' own 1 MiB by default: the largest board's snapshot fits, and so
    does any diff of it, since the service sends a big change as runs. A socket that
    brings nothing, not even a heartbeat, for ``heartbeat_timeout`` seconds counts as
    dropped, and resumes.
    """

    def __init__(
        self,
        base_url: str,
        game_id: str,
        *,
        token: str | None = None,
        since: int | None = None,
        retries: int | None = 8,
        timeout: float = 10.0,
        max_size: int = 2**20,
        heartbeat_timeout: float = HEARTBEAT_TIMEOUT,
    ) -> None:
        self.url = f"{ws_base(base_url)}/games/{game_id}/events"
        self.game_id = game_id
        #: The last version delivered: where a reconnection resumes.
        self.version = since
        self._token = token
        self._retries = retries
        self._timeout = timeout
        self._max_size = max_size
        self._heartbeat_timeout = heartbeat_timeout
        self._queue: asyncio.Queue[LiveMessage | BaseException | None] = asyncio.Queue(1024)
        self._pending: dict[int, asyncio.Future[Diff]] = {}
        self._ids = itertools.count(1)
        self._auth_id: int | None = None
        self._sockets: AsyncGenerator[_Socket[ServerMessage], None] | None = None
        self._socket: _Socket[ServerMessage] | None = None
        self._ready = asyncio.Event()
        self._opening = asyncio.Lock()
        self._task: asyncio.Task[None] | None = None
        self._failure: BaseException | None = None
        self._closing = False
        self._allowance = BURST
        self._allowance_at = time.monotonic()
        self._pacing = asyncio.Lock()

    # ---- lifetime -------------------------------------------------------------------------

    async def __aenter__(self) -> LiveGame:
        await self.open()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def open(self) -> None:
        """Connect (raising ``OSError`` or a handshake error if the service is not there)."""
        async with self._opening:
            if self._task is None:
                self._sockets = _reconnecting(
                    self._url, self._auth, _decoder,
                    f"lost the live connection to game {self.game_id} and could not resume",
                    retries=self._retries, timeout=self._timeout,
                    heartbeat_timeout=self._heartbeat_timeout, max_size=self._max_size,
                )
                self._opened(await anext(self._sockets))
                self._task = asyncio.create_task(self._run(), name=f"live {self.game_id}")

    async def aclose(self) -> None:
        """Close the socket, waiting at most about :data:`CLOSE_TIMEOUT` for the service."""
        self._closing = True
        if self._socket is not None:
            await _close(self._socket.ws)
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        self._fail_pending(ConnectionError("the live connection was closed"))
        while not self._queue.empty():
            self._queue.get_nowait()
        self._queue.put_nowait(None)

    # ---- messages -------------------------------------------------------------------------

    def __aiter__(self) -> LiveGame:
        return self

    async def __anext__(self) -> LiveMessage:
        if self._task is None and not self._closing:
            await self.open()
        item = await self._queue.get()
        if item is None:
            self._queue.put_nowait(None)
            raise StopAsyncIteration
        if isinstance(item, BaseException):
            self._queue.put_nowait(None)
            raise item
        return item

    # ---- moves ----------------------------------------------------------------------------

    async def reveal(self, x: int, y: int) -> Diff:
        """Reveal ``(x, y)`` over the socket; the move's diff (also delivered in order
        to every watcher, this one included)."""
        return await self._move(lambda i: RevealMessage(x, y, id=i))

    async def flag(self, x: int, y: int, mark: Mark | None = None) -> Diff:
        return await self._move(lambda i: FlagMessage(x, y, mark, id=i))

    async def chord(self, x: int, y: int) -> Diff:
        return await self._move(lambda i: ChordMessage(x, y, id=i))

    async def _move(
        self, message: Callable[[int], RevealMessage | FlagMessage | ChordMessage]
    ) -> Diff:
        """Send a move and wait for its answer: a :class:`~minesweeper.wire.Diff` or an error.

        A move in flight when the socket drops raises ``ConnectionError``; it may or
        may not have been applied (a later diff tells).
        """
        if self._failure is not None:
            raise self._failure
        if self._closing:
            raise ConnectionError("the live connection was closed")
        await self._pace()
        await self.open()
        await self._wait_ready()
        assert self._socket is not None
        request_id = next(self._ids)
        answer = asyncio.get_running_loop().create_future()
        self._pending[request_id] = answer
        try:
            await self._socket.send(message(request_id))
            try:
                return await asyncio.wait_for(answer, self._timeout)
            except TimeoutError:
                raise TimeoutError(f"no answer to the move within {self._timeout:g} s") from None
        except ConnectionClosed as exc:
            raise ConnectionError("the live connection dropped during the move") from exc
        finally:
            self._pending.pop(request_id, None)

    @property
    def connected(self) -> bool:
        """Whether the socket is open now: ``False`` while it resumes after a drop, and
        for good once it could not (iterating then raises ``ConnectionError``)."""
        return self._task is not None and self._failure is None and self._ready.is_set()

    async def _wait_ready(self) -> None:
        """Wait for the socket while it resumes, at most the timeout; at once raise what
        ended the connection if it could not resume."""
        if self._ready.is_set():
            return
        ready = asyncio.create_task(self._ready.wait())
        waiting: set[asyncio.Future[Any]] = {ready}
        if self._task is not None:
            waiting.add(self._task)
        try:
            await asyncio.wait(waiting, timeout=self._timeout, return_when=asyncio.FIRST_COMPLETED)
        finally:
            ready.cancel()
        if self._failure is not None:
            raise self._failure
        if self._closing:
            raise ConnectionError("the live connection was closed")
        if not self._ready.is_set():
            raise TimeoutError(f"the live connection to game {self.game_id} did not resume "
                               f"within {self._timeout:g} s")

    async def _pace(self) -> None:
        """Wait until a message may go without going over :data:`PACE` a second."""
        async with self._pacing:
            now = time.monotonic()
            self._allowance = min(BURST, self._allowance + (now - self._allowance_at) * PACE)
            self._allowance_at = now
            if self._allowance < 1:
                await asyncio.sleep((1 - self._allowance) / PACE)
                self._allowance, self._allowance_at = 1.0, time.monotonic()
            self._allowance -= 1

    # ---- the reader -----------------------------------------------------------------------

    def _url(self) -> str:
        return self.url if self.version is None else f"{self.url}?since={self.version}"

    def _auth(self) -> Auth | None:
        if not self._token:
            return None
        # Nothing answers a good token; a refused one comes back as an error with this id.
        self._auth_id = next(self._ids)
        return Auth(self._token, id=self._auth_id)

    def _opened(self, socket: _Socket[ServerMessage]) -> None:
        self._socket = socket
        self._ready.set()

    async def _run(self) -> None:
        assert self._sockets is not None
        try:
            async with contextlib.aclosing(self._sockets) as sockets:
                while True:
                    assert self._socket is not None
                    await self._pump(self._socket)
                    if self._closing:
                        return
                    self._opened(await anext(sockets))
        except Exception as exc:
            self._failure = exc
            self._fail_pending(exc)
            await self._queue.put(exc)

    async def _pump(self, socket: _Socket[ServerMessage]) -> None:
        """Deliver messages until the socket drops or a version was missed."""
        try:
            async for message in socket:
                if not await self._handle(message):
                    break
        finally:
            self._ready.clear()
        self._fail_pending(ConnectionError("the live connection dropped during the move"))

    async def _handle(self, message: ServerMessage) -> bool:
        """Deliver or route one message; ``False`` to resume from :attr:`version`."""
        match message:
            case Snapshot(game=view):
                self.version = view.version
            case Diff(version=version):
                if self.version is not None:
                    if version <= self.version:
                        return True
                    if version > self.version + 1:
                        return False
                self.version = version
            case Heartbeat(version=version):
                if self.version is not None and version > self.version:
                    return False
            case Result(id=request_id, diff=diff):
                self._answer(request_id, diff)
                return True
            case Error(id=request_id, problem=problem):
                error = error_for(problem)
                if request_id is not None and request_id != self._auth_id:
                    self._answer(request_id, error)
                    return True
                # The connection's own error, or its token refused: every move fails with it.
                if isinstance(error, StoreUnavailable):
                    return False
                raise error
        await self._queue.put(message)
        return True

    def _answer(self, request_id: object, outcome: Diff | ApiError) -> None:
        answer = self._pending.get(request_id) if isinstance(request_id, int) else None
        if answer is None or answer.done():
            return
        if isinstance(outcome, Diff):
            answer.set_result(outcome)
        else:
            answer.set_exception(outcome)

    def _fail_pending(self, exc: BaseException) -> None:
        for answer in self._pending.values():
            if not answer.done():
                answer.set_exception(exc)
        self._pending.clear()

    def __repr__(self) -> str:
        return f"<LiveGame {self.game_id} at version {self.version}>"


async def _close(ws: ClientConnection) -> None:
    """Close ``ws`` without waiting long for a service that does not answer."""
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(ws.close(), 2 * CLOSE_TIMEOUT)


M = TypeVar("M")


@dataclass
class _Socket(Generic[M]):
    """One socket of a stream. Iterating it gives its messages, decoded, and ends when
    it drops or brings nothing, not even a heartbeat, for ``heartbeat_timeout`` seconds."""

    ws: ClientConnection
    decoder: msgspec.json.Decoder[M]
    heartbeat_timeout: float

    async def send(self, message: msgspec.Struct) -> None:
        await self.ws.send(_encoder.encode(message).decode())

    def __aiter__(self) -> _Socket[M]:
        return self

    async def __anext__(self) -> M:
        while True:
            try:
                raw = await asyncio.wait_for(self.ws.recv(), self.heartbeat_timeout)
            except (ConnectionClosed, TimeoutError):
                # Dropped, or so long silent (no heartbeat) that the service stopped answering.
                raise StopAsyncIteration from None
            try:
                return self.decoder.decode(raw)
            except msgspec.ValidationError:
                continue  # a kind of message newer than this client: not for it


async def _reconnecting(
    url: Callable[[], str],
    hello: Callable[[], Auth | None],
    decoder: msgspec.json.Decoder[M],
    lost: str,
    *,
    retries: int | None,
    timeout: float,
    heartbeat_timeout: float,
    max_size: int = 2**20,
) -> AsyncGenerator[_Socket[M], None]:
    """The sockets of a stream that resumes, one after another: the next is asked for
    once the last dropped, went silent or showed a missed version, and connects to
    ``url()`` as it is then, which says where to resume; ``hello()`` is sent first, if
    anything. The first connection's failure is raised as it is; after that the n-th try
    waits ``backoff(n)``, and ``ConnectionError(lost)`` comes once ``retries`` tries in a
    row failed (``None``: never). A socket is closed once the next is asked for, or this
    is closed."""

    async def connected() -> _Socket[M] | None:
        ws = await connect(
            url(), open_timeout=timeout, close_timeout=CLOSE_TIMEOUT,
            max_size=max_size, user_agent_header=_http.USER_AGENT,
        )
        socket = _Socket(ws, decoder, heartbeat_timeout)
        message = hello()
        if message is not None:
            try:
                await socket.send(message)
            except ConnectionClosed:
                # Closed as soon as it opened: a dropped socket, though the try succeeded.
                await _close(ws)
                return None
        return socket

    socket = await connected()
    while True:
        if socket is not None:
            try:
                yield socket
            finally:
                await _close(socket.ws)
        tries = 0
        last: BaseException | None = None
        while True:
            if retries is not None and tries >= retries:
                raise ConnectionError(lost) from last
            tries += 1
            await asyncio.sleep(backoff(tries))
            try:
                socket = await connected()
                break
            except (OSError, InvalidHandshake, TimeoutError) as exc:
                last = exc


_match_messages: msgspec.json.Decoder[MatchServerMessage] = msgspec.json.Decoder(
    MatchServerMessage
)


async def watch_match(
    base_url: str,
    match_id: str,
    since: int | None,
    token: str | None,
    timeout: float,
    retries: int | None = 8,
    heartbeat_timeout: float = HEARTBEAT_TIMEOUT,
    *,
    until_finished: bool = True,
) -> AsyncGenerator[MatchServerMessage, None]:
    """A match's socket, decoded: first the match, then its updates (and heartbeats and
    co-op cursors); with ``token`` (a seated player's) the player's own seat shows (the
    service sends the match again once the token is taken: only that one is yielded).
    It ends after the snapshot or update that shows the match ``finished`` (the service
    keeps a finished match's socket open); with ``until_finished=False`` it goes on,
    for the updates after the end (a rematch asked for).

    It resumes as :class:`LiveGame` does: after a dropped socket, an update that skips
    a version or a heartbeat ahead of the last update, it connects again with
    ``?since=`` the last version it yielded, so updates go up one version at a time; a
    socket silent for ``heartbeat_timeout`` seconds (no heartbeat) counts as dropped.
    An error the service sends is yielded, and the watch ends with it. The first
    connection's failure is raised at once (``OSError`` or a
    handshake error), as :meth:`LiveGame.open` does; a lost one that did not come back
    after ``retries`` attempts raises ``ConnectionError`` (``retries=None``: it never
    gives up).
    """
    base = f"{ws_base(base_url)}/matches/{match_id}/events"
    version = since
    sockets = _reconnecting(
        lambda: base if version is None else f"{base}?since={version}",
        lambda: None if token is None else Auth(token=token), _match_messages,
        f"lost the socket of match {match_id} and could not resume",
        retries=retries, timeout=timeout, heartbeat_timeout=heartbeat_timeout,
    )
    async with contextlib.aclosing(sockets):
        async for socket in sockets:
            refused = False
            # With a token and no ``since`` the match comes twice: before the auth is taken
            # and after it (with the seat's own game). The first is held, and yielded only
            # if something other than the second comes next. A resume gets the match before
            # the auth only when its updates are gone: nothing is held then, lest the match
            # wait for the next heartbeat.
            held: MatchSnapshot | None = None
            first = version is None
            async for message in socket:
                match message:
                    case MatchSnapshot(match=view):
                        version = view.version
                    case MatchUpdate(version=number):
                        if version is not None and number <= version:
                            continue
                        if version is not None and number > version + 1:
                            break
                        version = number
                    case MatchHeartbeat(version=number):
                        if version is not None and number > version:
                            break
                    case Error(problem=problem):
                        if isinstance(error_for(problem), StoreUnavailable):
                            break
                        refused = True
                if isinstance(message, MatchSnapshot) and token is not None and first:
                    first, held = False, message
                    continue
                first = False
                if held is not None and not isinstance(message, MatchSnapshot):
                    yield held
                held = None
                yield message
                if refused:
                    return
                if (until_finished and isinstance(message, MatchSnapshot | MatchUpdate)
                        and message.match.status == "finished"):
                    return
            if held is not None:
                yield held


_player_messages: msgspec.json.Decoder[PlayerServerMessage] = msgspec.json.Decoder(
    PlayerServerMessage
)


async def player_events(
    base_url: str,
    token: str,
    timeout: float,
    retries: int | None = 8,
    heartbeat_timeout: float = HEARTBEAT_TIMEOUT,
) -> AsyncGenerator[PlayerServerMessage, None]:
    """The player's own socket, decoded: the player (a ``PlayerSnapshot``), then the
    player again whenever they changed, a ``Matched`` when their seek pairs, and
    heartbeats. While it is open the player's seek stays alive and goes on pairing.

    After a dropped socket, or one silent for ``heartbeat_timeout`` seconds, it connects
    again (the player comes first again, and ``Matched`` again if the seek paired into a
    match the player still plays, perhaps meanwhile); ``ConnectionError`` once ``retries``
    tries in a row failed (``None``: never). The first connection's failure is raised at
    once, and so is the :class:`~minesweeper.ApiError` of a refused token.
    """
    url = f"{ws_base(base_url)}/players/me/events"
    sockets = _reconnecting(
        lambda: url, lambda: Auth(token=token), _player_messages,
        "lost the player's socket and could not resume",
        retries=retries, timeout=timeout, heartbeat_timeout=heartbeat_timeout,
    )
    async with contextlib.aclosing(sockets):
        async for socket in sockets:
            async for message in socket:
                if isinstance(message, Error):
                    error = error_for(message.problem)
                    if isinstance(error, StoreUnavailable):
                        break
                    raise error
                yield message
