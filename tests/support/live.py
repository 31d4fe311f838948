"""WebSocket helpers for tests: a subscriber that records every message, and a raw
client that can stop reading to play a slow consumer."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import os
import socket
import struct
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from .play import apply_cells

Message = dict[str, Any]


def ws_url(base: str, game_id: str, since: int | None = None) -> str:
    query = "" if since is None else f"?since={since}"
    return f"ws://{urlsplit(base).netloc}/games/{game_id}/events{query}"


class Watcher:
    """A subscriber that reads every message in the background and lets a test await
    the moment a condition on what it has seen becomes true."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.messages: list[Message] = []
        # Set once the socket is closed: the close code the server sent (1006 for none).
        self.close_code: int | None = None
        self._changed = asyncio.Condition()
        self._ws: ClientConnection | None = None
        self._task: asyncio.Task[None] | None = None

    async def __aenter__(self) -> Watcher:
        self._ws = await connect(self.url, max_size=None, open_timeout=30)
        self._task = asyncio.create_task(self._read())
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    @property
    def ws(self) -> ClientConnection:
        assert self._ws is not None
        return self._ws

    async def close(self) -> None:
        if self._ws is not None:
            await self._ws.close()
        if self._task is not None:
            await self._task

    async def send(self, message: Message | str) -> None:
        await self.ws.send(message if isinstance(message, str) else json.dumps(message))

    async def _read(self) -> None:
        with contextlib.suppress(ConnectionClosed):
            async for raw in self.ws:
                async with self._changed:
                    self.messages.append(json.loads(raw))
                    self._changed.notify_all()
        async with self._changed:
            self.close_code = self.ws.close_code or 1006
            self._changed.notify_all()

    async def wait(self, predicate: Callable[[list[Message]], bool], timeout: float = 60) -> None:
        async def check() -> None:
            async with self._changed:
                while not predicate(self.messages):
                    if self.close_code is not None:
                        raise AssertionError(
                            f"socket closed with {self.close_code}; seen {self.summary()}")
                    await self._changed.wait()

        try:
            await asyncio.wait_for(check(), timeout)
        except TimeoutError:
            raise AssertionError(f"not seen within {timeout} s; seen {self.summary()}") from None

    async def wait_closed(self, timeout: float = 60) -> int:
        """The close code, once the socket is closed."""

        async def check() -> int:
            async with self._changed:
                while self.close_code is None:
                    await self._changed.wait()
                return self.close_code

        return await asyncio.wait_for(check(), timeout)

    async def until_version(self, version: int, timeout: float = 60) -> None:
        await self.wait(lambda ms: self.version >= version, timeout)

    async def next_of(self, kind: str, after: int = 0, timeout: float = 60) -> Message:
        """The first message of ``kind`` at index ``after`` or later."""
        await self.wait(lambda ms: any(m["type"] == kind for m in ms[after:]), timeout)
        return next(m for m in self.messages[after:] if m["type"] == kind)

    @property
    def version(self) -> int:
        version = 0
        for m in self.messages:
            if m["type"] == "snapshot":
                version = m["game"]["version"]
            elif m["type"] == "diff":
                version = max(version, m["version"])
        return version

    def of(self, kind: str) -> list[Message]:
        return [m for m in self.messages if m["type"] == kind]

    def summary(self) -> str:
        kinds = [m["type"] + (f"@{m['version']}" if "version" in m else "") for m in self.messages]
        return f"{len(kinds)} messages: {kinds[:5]} ... {kinds[-5:]}"


def replay(messages: list[Message]) -> dict[str, Any]:
    """The game state a client builds from a snapshot and the diffs after it."""
    state: dict[str, Any] = {}
    for m in messages:
        if m["type"] == "snapshot":
            g = m["game"]
            state = {k: g[k] for k in ("version", "status", "mines_left", "board")}
        elif m["type"] == "diff":
            assert state, "a diff before any snapshot"
            assert m["version"] == state["version"] + 1, (m["version"], state["version"])
            state["board"] = apply_cells(state["board"], m["cells"])
            state.update(version=m["version"], status=m["status"], mines_left=m["mines_left"])
    return state


class RawSocket:
    """A WebSocket client on a plain socket with a small receive buffer, so that by not
    reading it fills the server's buffers like a stalled consumer would.

    It also asks for small segments: the server's kernel sizes its send buffer from the
    segment size, so on loopback (64 KiB segments) it would otherwise hold megabytes
    before the server notices anything."""

    def __init__(self, url: str, rcvbuf: int = 4096) -> None:
        parts = urlsplit(url)
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG, 536)
        self.sock.settimeout(30)
        self.sock.connect((parts.hostname, parts.port))
        key = base64.b64encode(os.urandom(16)).decode()
        path = parts.path + (f"?{parts.query}" if parts.query else "")
        self.sock.sendall(
            f"GET {path} HTTP/1.1\r\nHost: {parts.netloc}\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
            "Sec-WebSocket-Version: 13\r\n\r\n".encode()
        )
        self.buffer = b""
        while b"\r\n\r\n" not in self.buffer:
            chunk = self.sock.recv(1)  # byte by byte: leave every frame in the kernel
            if not chunk:
                raise ConnectionError("closed during the handshake")
            self.buffer += chunk
        head = self.buffer.split(b"\r\n", 1)[0]
        assert b" 101 " in head, head
        self.buffer = b""

    def _read(self, n: int) -> bytes:
        while len(self.buffer) < n:
            chunk = self.sock.recv(1 << 16)
            if not chunk:
                raise EOFError("the server closed the connection")
            self.buffer += chunk
        out, self.buffer = self.buffer[:n], self.buffer[n:]
        return out

    def frames(self) -> list[tuple[int, bytes]]:
        """Read every frame up to and including the close frame (opcode 8)."""
        out: list[tuple[int, bytes]] = []
        while True:
            b0, b1 = self._read(2)
            opcode, length = b0 & 0x0F, b1 & 0x7F
            if length == 126:
                (length,) = struct.unpack("!H", self._read(2))
            elif length == 127:
                (length,) = struct.unpack("!Q", self._read(8))
            out.append((opcode, self._read(length)))
            if opcode == 8:
                return out

    def close(self) -> None:
        self.sock.close()


def close_code(payload: bytes) -> int:
    return int(struct.unpack("!H", payload[:2])[0]) if len(payload) >= 2 else 1005
