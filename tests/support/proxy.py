"""A small TCP proxy for fault tests: put it between the service and Redis, then make
the link slow, drop its connections, swallow its bytes or refuse new connections.

It runs its own asyncio loop in a thread, so a test (sync or async) can change its
behaviour at any moment while a service process talks through it.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from typing import Any


class ChaosProxy:
    """Forwards 127.0.0.1:<port> to ``target``, with faults on demand.

    - ``latency``: seconds added to every chunk, each way (order and throughput kept);
    - ``blackhole``: bytes are read and thrown away, connections stay open (a silent peer);
    - ``refuse``: new connections are closed at once;
    - :meth:`drop_all`: every open connection is reset;
    - :meth:`drop_reply_to`: the next request holding some bytes reaches the server, and
      its connection is reset when the answer comes, so the client never reads it;
    - :meth:`hold_request`: the next request holding some bytes reaches the server late.
    """

    def __init__(self, target_port: int, target_host: str = "127.0.0.1") -> None:
        self.target = (target_host, target_port)
        self.latency = 0.0
        self.blackhole = False
        self.refuse = False
        self.port = 0
        self.connections = 0
        self.dropped = 0
        self.dropped_replies = 0
        self._drop_reply_to: bytes | None = None
        self._hold: tuple[bytes, float] | None = None
        self._pairs: set[tuple[asyncio.BaseTransport, asyncio.BaseTransport]] = set()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run, name="chaos-proxy", daemon=True)
        self._ready = threading.Event()
        self._server: asyncio.base_events.Server | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> ChaosProxy:
        self._thread.start()
        if not self._ready.wait(10):
            raise TimeoutError("proxy did not start")
        return self

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._server = self._loop.run_until_complete(
            asyncio.start_server(self._handle, "127.0.0.1", 0)
        )
        self.port = int(self._server.sockets[0].getsockname()[1])
        self._ready.set()
        self._loop.run_forever()

    def _call(self, fn: Any) -> Any:
        async def wrapped() -> Any:
            return fn()

        return asyncio.run_coroutine_threadsafe(wrapped(), self._loop).result(10)

    def drop_all(self) -> int:
        """Reset every open connection; how many there were."""

        def drop() -> int:
            pairs = list(self._pairs)
            self._pairs.clear()
            for pair in pairs:
                for t in pair:
                    t.abort()  # type: ignore[attr-defined]
            self.dropped += len(pairs)
            return len(pairs)

        return int(self._call(drop))

    def drop_reply_to(self, needle: bytes) -> None:
        """Lose the answer to the next request that holds ``needle``: the server has run
        it, the client sees its connection reset."""
        self._drop_reply_to = needle

    def hold_request(self, needle: bytes, seconds: float) -> None:
        """Send the next request that holds ``needle`` on ``seconds`` late (and what
        follows it on its connection: the order stays)."""
        self._hold = (needle, seconds)

    def heal(self) -> None:
        self.latency, self.blackhole, self.refuse = 0.0, False, False

    def stop(self) -> None:
        if not self._thread.is_alive():
            return

        async def close() -> None:
            if self._server is not None:
                self._server.close()
            for pair in list(self._pairs):
                for t in pair:
                    t.abort()  # type: ignore[attr-defined]
            # Every connection's tasks end here, so none is left pending when the loop stops.
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

        asyncio.run_coroutine_threadsafe(close(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        if self.refuse:
            writer.transport.abort()
            return
        try:
            up_reader, up_writer = await asyncio.open_connection(*self.target)
        except OSError:
            writer.transport.abort()
            return
        pair = (writer.transport, up_writer.transport)
        self._pairs.add(pair)
        # Set when a request whose answer is to be lost went up this connection.
        doomed = asyncio.Event()
        try:
            await asyncio.gather(
                self._pipe(reader, up_writer, watch=doomed),
                self._pipe(up_reader, writer, doomed=(doomed, pair)),
            )
        finally:
            self._pairs.discard(pair)
            for t in pair:
                t.abort()

    async def _pipe(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        *,
        watch: asyncio.Event | None = None,
        doomed: tuple[asyncio.Event, tuple[Any, Any]] | None = None,
    ) -> None:
        """Forward one direction. ``watch`` (requests) is set when a request whose answer
        is to be lost passes; ``doomed`` (answers) resets the pair instead of delivering."""
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[tuple[float, bytes] | None] = asyncio.Queue()

        async def deliver() -> None:
            while (item := await queue.get()) is not None:
                due, data = item
                delay = due - loop.time()
                if delay > 0:
                    await asyncio.sleep(delay)
                if doomed is not None and doomed[0].is_set():
                    self.dropped_replies += 1
                    self._pairs.discard(doomed[1])
                    for t in doomed[1]:
                        t.abort()
                    return
                if not self.blackhole:
                    writer.write(data)
                    await writer.drain()

        delivery = asyncio.create_task(deliver())
        try:
            while data := await reader.read(65536):
                needle = self._drop_reply_to
                if watch is not None and needle is not None and needle in data:
                    self._drop_reply_to = None
                    watch.set()
                late = 0.0
                if watch is not None and self._hold is not None and self._hold[0] in data:
                    late, self._hold = self._hold[1], None
                if not self.blackhole:
                    queue.put_nowait((loop.time() + self.latency + late, data))
        except OSError:
            pass
        finally:
            queue.put_nowait(None)
            with contextlib.suppress(OSError, asyncio.CancelledError):
                await delivery
            writer.transport.abort()
