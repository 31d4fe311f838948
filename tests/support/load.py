"""Driving the service hard: a small keep-alive HTTP/1.1 client, movers that play
real games without ever ending them, and the checks that nothing was lost.

The client is a few lines over asyncio streams rather than a full HTTP library so
that, on a small machine, the load generator costs little next to the server.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import secrets
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import redis

from service import engine

# ---- a minimal HTTP/1.1 client ------------------------------------------------------------


class _ClosedUnanswered(Exception):
    """The connection closed (or was reset) before a byte of the answer came."""

    def __init__(self, cause: Exception) -> None:
        super().__init__(str(cause))
        self.cause = cause


@dataclass
class Reply:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


class Http:
    """One keep-alive connection; reconnects on the next request after an error.

    A request sent on a connection kept from before is sent once more, on a new
    connection, when the old one turns out closed before a byte of the answer came:
    the server closes idle connections (uvicorn after 5 s), and one closing just as a
    request goes out never read it. Browsers and HTTP libraries do the same.
    """

    def __init__(self, base_url: str, timeout: float = 30.0) -> None:
        parts = urlsplit(base_url)
        self.host = parts.hostname or "127.0.0.1"
        self.port = parts.port or 80
        self.timeout = timeout
        # When a list: every byte the server sends is appended to it, one entry a reply.
        self.record: list[bytes] | None = None
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None

    async def close(self) -> None:
        writer, self._reader, self._writer = self._writer, None, None
        if writer is not None:
            writer.close()
            with contextlib.suppress(OSError):
                await writer.wait_closed()

    async def request(
        self,
        method: str,
        path: str,
        body: bytes | None = None,
        headers: dict[str, str] | None = None,
        *,
        raw_headers: Iterable[tuple[bytes, bytes]] = (),
    ) -> Reply:
        lines = [f"{method} {path} HTTP/1.1".encode(), f"Host: {self.host}:{self.port}".encode()]
        if body is not None:
            lines.append(b"Content-Length: %d" % len(body))
        lines += [f"{k}: {v}".encode() for k, v in (headers or {}).items()]
        lines += [k + b": " + v for k, v in raw_headers]
        message = b"\r\n".join(lines) + b"\r\n\r\n" + (body or b"")
        try:
            return await asyncio.wait_for(self._send(message), self.timeout)
        except BaseException:
            await self.close()
            raise

    async def _send(self, message: bytes) -> Reply:
        if self._writer is not None:
            try:
                return await self._exchange(message)
            except _ClosedUnanswered:
                await self.close()
        self._reader, self._writer = await asyncio.open_connection(self.host, self.port)
        try:
            return await self._exchange(message)
        except _ClosedUnanswered as closed:
            # On a fresh connection it is what it seems: the server went away.
            raise closed.cause from None

    async def _exchange(self, message: bytes) -> Reply:
        assert self._reader is not None and self._writer is not None
        try:
            self._writer.write(message)
            await self._writer.drain()
            first = await self._reader.read(1)
        except (ConnectionResetError, BrokenPipeError) as exc:
            raise _ClosedUnanswered(exc) from exc
        if not first:
            raise _ClosedUnanswered(asyncio.IncompleteReadError(b"", None))
        head = first + await self._reader.readuntil(b"\r\n\r\n")
        status_line, *header_lines = head[:-4].decode("latin-1").split("\r\n")
        status = int(status_line.split(" ", 2)[1])
        reply_headers: dict[str, str] = {}
        for line in header_lines:
            name, _, value = line.partition(":")
            reply_headers[name.strip().lower()] = value.strip()
        if "content-length" in reply_headers:
            data = await self._reader.readexactly(int(reply_headers["content-length"]))
        elif reply_headers.get("transfer-encoding", "").lower() == "chunked":
            data = await self._chunks()
        else:
            data = await self._reader.read()
            reply_headers["connection"] = "close"
        if self.record is not None:
            self.record.append(head + data)
        if reply_headers.get("connection", "").lower() == "close":
            await self.close()
        return Reply(status, reply_headers, data)

    async def _chunks(self) -> bytes:
        assert self._reader is not None
        out = bytearray()
        while True:
            size = int((await self._reader.readuntil(b"\r\n")).split(b";")[0], 16)
            if size == 0:
                await self._reader.readuntil(b"\r\n")
                return bytes(out)
            out += await self._reader.readexactly(size)
            await self._reader.readexactly(2)

    async def post_json(
        self, path: str, body: Any, headers: dict[str, str] | None = None
    ) -> Reply:
        data = json.dumps(body).encode()
        return await self.request(
            "POST", path, data, {"Content-Type": "application/json", **(headers or {})}
        )


# ---- games whose layout the load generator knows -------------------------------------------

EXPERT = {"preset": "expert"}


@dataclass
class KnownGame:
    """A seeded game whose mines the test computed from the seed with the engine."""

    id: str
    token: str
    width: int
    height: int
    mines: frozenset[tuple[int, int]]
    first: tuple[int, int]
    # A safe cell no move may open, so the game can never be won while under load.
    reserved: tuple[int, int]
    safe: list[tuple[int, int]] = field(default_factory=list)

    @property
    def auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}


def layout_of(settings: dict[str, Any], seed: int, first: tuple[int, int]) -> set[tuple[int, int]]:
    """The mines the engine places for ``settings``, ``seed`` and a first click at ``first``."""
    if "preset" in settings:
        s = engine.preset(settings["preset"])
    else:
        s = engine.custom(settings["width"], settings["height"], settings["mines"])
    game = engine.new_game(s, seed=seed, now_ms=0, first_click=settings.get("first_click", "zero"))
    game, _ = engine.reveal(game, first[0], first[1], 0)
    return {
        (i % game.width, i // game.width)
        for i in range(game.width * game.height)
        if game.is_mine(i)
    }


def _reserve(width: int, height: int, mines: set[tuple[int, int]]) -> tuple[int, int] | None:
    """A safe cell with no zero around it: no cascade can ever open it."""

    def count(x: int, y: int) -> int:
        return sum((nx, ny) in mines for nx, ny in around(x, y, width, height))

    for y in range(height):
        for x in range(width):
            if (x, y) in mines or count(x, y) == 0:
                continue
            if all((n in mines) or count(*n) > 0 for n in around(x, y, width, height)):
                return (x, y)
    return None


def around(x: int, y: int, width: int, height: int) -> list[tuple[int, int]]:
    return [
        (nx, ny)
        for ny in range(max(0, y - 1), min(height, y + 2))
        for nx in range(max(0, x - 1), min(width, x + 2))
        if (nx, ny) != (x, y)
    ]


async def create_known_game(
    http: Http, settings: dict[str, Any] | None = None, seed: int | None = None
) -> KnownGame:
    """Create a seeded game and make its first click, so the mines are placed and known."""
    settings = settings or EXPERT
    rng = random.Random(seed)
    while True:
        s = rng.randrange(2**63)
        reply = await http.post_json("/games", {**settings, "seed": s})
        assert reply.status == 201, reply.body
        created = reply.json()
        width, height = created["game"]["width"], created["game"]["height"]
        first = (width // 2, height // 2)
        mines = layout_of(settings, s, first)
        reserved = _reserve(width, height, mines)
        if reserved is None:
            continue
        game = KnownGame(created["game"]["id"], created["token"], width, height,
                         frozenset(mines), first, reserved)
        game.safe = [
            (x, y) for y in range(height) for x in range(width)
            if (x, y) not in mines and (x, y) != reserved
        ]
        first_reply = await http.post_json(
            f"/games/{game.id}/reveal", {"x": first[0], "y": first[1]}, game.auth
        )
        assert first_reply.status == 200, first_reply.body
        return game


def pick_move(game: KnownGame, rng: random.Random) -> tuple[str, dict[str, int]]:
    """A move that can never end the game: reveal a safe cell or flag a random one."""
    if rng.random() < 0.5:
        x, y = rng.choice(game.safe)
        return "reveal", {"x": x, "y": y}
    x, y = rng.randrange(game.width), rng.randrange(game.height)
    return "flag", {"x": x, "y": y}


# ---- running movers and what they saw ---------------------------------------------------


@dataclass
class Sample:
    game: str
    status: int
    seconds: float
    # When the request was sent (time.monotonic()).
    at: float = 0.0
    version: int | None = None
    changed: bool = False
    code: str | None = None
    # The answer of an accepted move, kept to compare with what the stream holds.
    body: bytes = b""


@dataclass
class Outcome:
    samples: list[Sample] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    error_times: list[float] = field(default_factory=list)
    # Answers "busy, try again" (503) that the mover retried with the same Idempotency-Key.
    retried: list[Sample] = field(default_factory=list)
    seconds: float = 0.0

    def ok(self) -> list[Sample]:
        return [s for s in self.samples if s.status == 200]

    def statuses(self) -> dict[int, int]:
        out: dict[int, int] = {}
        for s in self.samples:
            out[s.status] = out.get(s.status, 0) + 1
        return dict(sorted(out.items()))

    def rate(self) -> float:
        return len(self.ok()) / self.seconds if self.seconds else 0.0

    def latency_ms(self, q: float) -> float:
        return percentile([s.seconds * 1000 for s in self.ok()], q)


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q / 100 * len(ordered)))]


async def move_once(http: Http, game: KnownGame, action: str, body: dict[str, int],
                    out: Outcome, headers: dict[str, str] | None = None,
                    retry_busy: bool = False) -> Reply:
    """One move, recorded in ``out``. With ``retry_busy``, a 503 (the game's turn did not
    come in time on an overloaded machine) is sent again with the same Idempotency-Key
    after its Retry-After, as a careful client does, and recorded in ``out.retried``."""
    headers = {**game.auth, **(headers or {})}
    if retry_busy:
        headers["Idempotency-Key"] = secrets.token_hex(8)
    while True:
        started = time.perf_counter()
        reply = await http.post_json(f"/games/{game.id}/{action}", body, headers)
        sample = Sample(game.id, reply.status, time.perf_counter() - started,
                        at=time.monotonic() - (time.perf_counter() - started))
        if reply.status == 200:
            diff = reply.json()
            sample.version, sample.changed = diff["version"], bool(diff["cells"])
            if sample.changed:
                sample.body = reply.body
        elif reply.headers.get("content-type", "").startswith("application/problem+json"):
            sample.code = reply.json().get("code")
        if not (retry_busy and reply.status == 503):
            out.samples.append(sample)
            return reply
        out.retried.append(sample)
        await asyncio.sleep(float(reply.headers.get("retry-after", "1")))


async def mover(base_url: str, game: KnownGame, until: float, out: Outcome, seed: int,
                pace: float = 0.0, stop: asyncio.Event | None = None,
                timeout: float = 30.0, retry_busy: bool = False) -> None:
    """Move on ``game`` until ``until`` (a monotonic time) or ``stop``; ``pace`` seconds
    between moves. Connection errors are recorded in ``out.errors``, with a short pause."""
    rng = random.Random(seed)
    http = Http(base_url, timeout)
    try:
        while time.monotonic() < until and not (stop and stop.is_set()):
            action, body = pick_move(game, rng)
            try:
                await move_once(http, game, action, body, out, retry_busy=retry_busy)
            except (OSError, asyncio.IncompleteReadError, TimeoutError) as exc:
                out.errors.append(type(exc).__name__)
                out.error_times.append(time.monotonic())
                await asyncio.sleep(0.05)
            if pace:
                await asyncio.sleep(pace * rng.uniform(0.5, 1.5))
    finally:
        await http.close()


async def run_load(base_urls: str | list[str], games: list[KnownGame], clients: int,
                   seconds: float, seed: int = 0, pace: float = 0.0,
                   stop: asyncio.Event | None = None, out: Outcome | None = None,
                   retry_busy: bool = False) -> Outcome:
    """``clients`` movers spread round-robin over ``games`` (and over the replicas at
    ``base_urls``) for ``seconds`` or until ``stop`` is set."""
    urls = [base_urls] if isinstance(base_urls, str) else base_urls
    out = out if out is not None else Outcome()
    started = time.monotonic()
    until = started + seconds
    await asyncio.gather(*[
        mover(urls[i % len(urls)], games[i % len(games)], until, out, seed + i, pace, stop,
              retry_busy=retry_busy)
        for i in range(clients)
    ])
    out.seconds = time.monotonic() - started
    return out


async def eventually(check: Callable[[], bool], what: str, timeout: float = 60.0,
                     meanwhile: Callable[[], object] | None = None) -> None:
    """Wait, letting the loop run (and calling ``meanwhile`` every 50 ms), until
    ``check()`` holds. ``timeout`` only bounds a hang: on a loaded machine a phase of a
    test lasts until its condition is met, not for a fixed time."""
    try:
        async with asyncio.timeout(timeout):
            while not check():
                await asyncio.sleep(0.05)
                if meanwhile is not None:
                    meanwhile()
    except TimeoutError:
        raise AssertionError(f"{what}: not within {timeout} s") from None


# ---- checks: nothing lost, nothing half-written -------------------------------------------


def assert_versions_contiguous(
    samples: Iterable[Sample], final_version: int, first: int = 1
) -> None:
    """Every accepted move that changed the board got its own version, and together they
    are exactly ``first..final_version``: no update was lost or applied twice."""
    versions = sorted(s.version for s in samples if s.status == 200 and s.changed
                      and s.version is not None)
    assert len(versions) == len(set(versions)), "two accepted moves share a version"
    assert versions == list(range(first, final_version + 1)), (
        f"versions of accepted moves are not {first}..{final_version}: "
        f"{len(versions)} moves, first {versions[:3]}, last {versions[-3:]}"
    )


def replay_board(diffs: Iterable[bytes | dict[str, Any]], width: int, height: int) -> list[str]:
    """An all-hidden board with every diff's cells applied in order."""
    rows = [["#"] * width for _ in range(height)]
    for d in diffs:
        diff = json.loads(d) if isinstance(d, bytes) else d
        for x, y, char in diff["cells"]:
            rows[y][x] = char
    return ["".join(r) for r in rows]


def stored_game(r: redis.Redis, game_id: str) -> engine.Game:
    snap = r.hget(f"ms:{{{game_id}}}:game", "snap")
    assert snap is not None, f"game {game_id} is gone"
    return engine.decode(snap)  # type: ignore[arg-type]


def diff_entries(r: redis.Redis, game_id: str) -> list[tuple[int, bytes]]:
    """The diffs on the game's stream, as (version, diff): entries ``<version>-0``. The
    notices between them (a reset, a hint given) take ``<version>-1``, ``-2``..."""
    entries: list[Any] = r.xrange(f"ms:{{{game_id}}}:events")  # type: ignore[assignment]
    ids = [eid.split(b"-") for eid, _ in entries]
    return [(int(v), fields[b"d"]) for (v, seq), (_, fields) in zip(ids, entries, strict=True)
            if seq == b"0"]


def assert_stream_replays(r: redis.Redis, game_id: str) -> engine.Game:
    """The game loads, its stream holds versions 1..version with no gap, and replaying
    the stream's diffs onto an all-hidden board gives exactly the stored board."""
    game = stored_game(r, game_id)
    entries = diff_entries(r, game_id)
    ids = [version for version, _ in entries]
    assert ids == list(range(1, game.version + 1)), (
        f"stream of {game_id} holds {len(ids)} diffs for version {game.version}"
    )
    diffs = [d for _, d in entries]
    for version, d in zip(ids, diffs, strict=True):
        assert json.loads(d)["version"] == version
    assert replay_board(diffs, game.width, game.height) == game.board()
    return game


def stream_diffs(r: redis.Redis, game_id: str) -> dict[int, bytes]:
    """The game's stream: version -> the diff's bytes."""
    return dict(diff_entries(r, game_id))


def assert_acknowledged_kept(samples: Iterable[Sample], r: redis.Redis) -> int:
    """Every move the service answered 200 (with a change) is in its game's stream,
    byte for byte the answer the client got; the number of such moves."""
    streams: dict[str, dict[int, bytes]] = {}
    count = 0
    for s in samples:
        if s.status != 200 or not s.changed or s.version is None:
            continue
        if s.game not in streams:
            streams[s.game] = stream_diffs(r, s.game)
        kept = streams[s.game].get(s.version)
        assert kept == s.body, f"acknowledged move {s.game} v{s.version} is not in the stream"
        count += 1
    return count


# ---- live: what a WebSocket subscriber receives ------------------------------------------


def ws_url(base_url: str, game_id: str, since: int | None = None) -> str:
    url = base_url.replace("http://", "ws://", 1) + f"/games/{game_id}/events"
    return url if since is None else f"{url}?since={since}"


async def collect_live(base_url: str, game_id: str, since: int | None, until: int,
                       received: list[tuple[int, bytes]] | None = None,
                       timeout: float = 60.0) -> list[tuple[int, bytes]]:
    """Diffs (version, bytes) from a subscription until version ``until`` arrived.

    A snapshot first (no ``since``) is recorded as version ``-v``. ``received`` may be
    given to watch progress from outside."""
    from websockets.asyncio.client import connect

    out = received if received is not None else []
    async with asyncio.timeout(timeout), connect(ws_url(base_url, game_id, since)) as ws:
        async for message in ws:
            data = message.encode() if isinstance(message, str) else message
            head = json.loads(data)
            if head["type"] == "snapshot":
                out.append((-head["game"]["version"], data))
                if head["game"]["version"] >= until:
                    break
            elif head["type"] == "diff":
                out.append((head["version"], data))
                if head["version"] >= until:
                    break
    return out


class Follower:
    """A subscriber that behaves as a client should: on a lost socket it reconnects,
    to the next replica in ``urls``, with ``since`` set to the last version it has.

    ``diffs`` maps each version received to its bytes; a version received twice or
    out of order is recorded in ``problems``."""

    def __init__(self, urls: list[str], game_id: str) -> None:
        self.urls = urls
        self.game_id = game_id
        self.diffs: dict[int, bytes] = {}
        self.start: int | None = None
        self.version = 0
        self.reconnects = 0
        self.problems: list[str] = []
        self.closes: list[int | None] = []
        self.target: int | None = None
        self._task: asyncio.Task[None] | None = None
        self.connected = asyncio.Event()

    def run(self) -> Follower:
        self._task = asyncio.create_task(self._follow())
        return self

    async def finish(self, target: int, timeout: float = 60.0) -> None:
        """Wait until version ``target`` arrived, then stop."""
        self.target = target
        assert self._task is not None
        await asyncio.wait_for(self._task, timeout)

    def _done(self) -> bool:
        return self.target is not None and self.version >= self.target

    async def _follow(self) -> None:
        from websockets.asyncio.client import connect
        from websockets.exceptions import WebSocketException

        index = 0
        since: int | None = None
        while not self._done():
            try:
                async with connect(ws_url(self.urls[index], self.game_id, since),
                                   open_timeout=30) as ws:
                    while not self._done():
                        try:
                            message = await asyncio.wait_for(ws.recv(), 0.25)
                        except TimeoutError:
                            continue
                        self._take(message.encode() if isinstance(message, str) else message)
                        since = self.version
                        self.connected.set()
            except (OSError, WebSocketException, TimeoutError) as exc:
                code = getattr(getattr(exc, "rcvd", None), "code", None)
                self.closes.append(code)
                self.reconnects += 1
                index = (index + 1) % len(self.urls)
                await asyncio.sleep(0.05)

    def _take(self, data: bytes) -> None:
        head = json.loads(data)
        if head["type"] == "snapshot":
            version = head["game"]["version"]
            if self.start is None:
                self.start = self.version = version
            elif version != self.version:
                self.problems.append(f"snapshot at {version} after {self.version}")
                self.version = version
        elif head["type"] == "diff":
            version = head["version"]
            if version != self.version + 1:
                self.problems.append(f"diff {version} after {self.version}")
            if version in self.diffs:
                self.problems.append(f"diff {version} twice")
            self.diffs[version] = data
            self.version = max(self.version, version)

    def assert_complete(self, stream: dict[int, bytes]) -> None:
        """Every version after the first snapshot exactly once, in order, as in the stream."""
        assert not self.problems, self.problems[:5]
        assert self.start is not None
        assert sorted(self.diffs) == list(range(self.start + 1, self.version + 1))
        for version, data in self.diffs.items():
            assert stream[version] == data, f"diff {version} differs from the stream"
