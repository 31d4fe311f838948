"""Live fan-out: one Redis pub/sub listener per process, a bounded queue per subscriber.

A game's diff (or reset) is published once, by the script that commits it, on the
game's channel; what a player's socket is told goes on the player's channel the same
way. Every replica that has subscribers for a channel receives its messages and hands
the same bytes to each local subscriber's queue. A subscriber that falls behind is
marked overflowed instead of buffered without bound; its socket is then closed.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from typing import Any

import redis.exceptions

from .. import metrics
from . import keys
from .connection import Redis
from .errors import StoreUnavailable, redis_errors

log = logging.getLogger(__name__)

# Put in a queue when the listener reconnected: messages may have been missed.
RESYNC = b""


class Subscription:
    def __init__(self, channel: str, size: int) -> None:
        self.channel = channel
        self.queue: asyncio.Queue[bytes] = asyncio.Queue(size)
        self.overflowed = asyncio.Event()

    def offer(self, message: bytes) -> None:
        if self.overflowed.is_set():
            return
        try:
            self.queue.put_nowait(message)
        except asyncio.QueueFull:
            self.overflowed.set()


class Events:
    """subscribe / (start, stop): the whole interface. Publishing is the scripts' part."""

    def __init__(self, redis: Redis, *, queue_size: int = 256) -> None:
        self.redis = redis
        self.queue_size = queue_size
        self._subscribers: dict[str, set[Subscription]] = {}
        self._confirmed: dict[str, asyncio.Event] = {}
        self._pubsub: Any = None
        self._task: asyncio.Task[None] | None = None
        self._lock = asyncio.Lock()

    async def start(self) -> None:
        self._task = asyncio.create_task(self._listen(), name="events-listener")

    async def stop(self) -> None:
        if self._task:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        if self._pubsub is not None:
            with contextlib.suppress(Exception):
                await self._pubsub.aclose()

    def game(self, game_id: str) -> contextlib.AbstractAsyncContextManager[Subscription]:
        """A game's diffs and resets."""
        return self.subscribe(keys.channel(game_id))

    def player(self, player_id: str) -> contextlib.AbstractAsyncContextManager[Subscription]:
        """What a player's socket is told."""
        return self.subscribe(keys.player_channel(player_id))

    @contextlib.asynccontextmanager
    async def subscribe(self, channel: str) -> AsyncIterator[Subscription]:
        """Yields once Redis confirmed the subscription, so nothing published after
        this point can be missed."""
        sub = Subscription(channel, self.queue_size)
        async with self._lock:
            first = channel not in self._subscribers
            self._subscribers.setdefault(channel, set()).add(sub)
            if first:
                self._confirmed[channel] = asyncio.Event()
                try:
                    await self._ensure_pubsub()
                    with redis_errors():
                        await self._pubsub.subscribe(channel)
                except BaseException:
                    # Left registered, the channel would look subscribed to everyone after,
                    # and they would wait for a confirmation that never comes.
                    del self._subscribers[channel], self._confirmed[channel]
                    raise
            confirmed = self._confirmed[channel]
        try:
            try:
                await asyncio.wait_for(confirmed.wait(), timeout=5)
            except TimeoutError:
                raise StoreUnavailable("Redis did not confirm a subscription") from None
            yield sub
        finally:
            async with self._lock:
                subs = self._subscribers.get(channel, set())
                subs.discard(sub)
                if not subs:
                    self._subscribers.pop(channel, None)
                    self._confirmed.pop(channel, None)
                    if self._pubsub is not None:
                        with contextlib.suppress(Exception):
                            await self._pubsub.unsubscribe(channel)

    async def _ensure_pubsub(self) -> None:
        if self._pubsub is None:
            self._pubsub = self.redis.pubsub()

    async def _listen(self) -> None:
        while True:
            try:
                if self._pubsub is None or not self._pubsub.subscribed:
                    await asyncio.sleep(0.05)
                    continue
                message = await self._pubsub.get_message(timeout=1.0)
                if message is not None:
                    self._dispatch(message)
            except asyncio.CancelledError:
                raise
            except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError, OSError):
                metrics.REDIS_ERRORS.inc()
                log.warning("events listener lost Redis; reconnecting")
                await self._reconnect()
            except Exception:  # the listener must outlive any one bad message
                log.exception("events listener error")
                await asyncio.sleep(0.1)

    def _dispatch(self, message: dict[str, Any]) -> None:
        kind = message.get("type")
        channel = message["channel"]
        channel = channel.decode() if isinstance(channel, bytes) else channel
        if kind == "subscribe":
            event = self._confirmed.get(channel)
            if event is not None:
                event.set()
        elif kind == "message":
            for sub in tuple(self._subscribers.get(channel, ())):
                sub.offer(message["data"])

    async def _reconnect(self) -> None:
        async with self._lock:
            if self._pubsub is not None:
                with contextlib.suppress(Exception):
                    await self._pubsub.aclose()
            self._pubsub = None
            while True:
                try:
                    await self._ensure_pubsub()
                    channels = list(self._subscribers)
                    if channels:
                        await self._pubsub.subscribe(*channels)
                    break
                except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError, OSError):
                    self._pubsub = None
                    await asyncio.sleep(0.5)
        # Whatever was published while we were away is in the streams: tell every
        # subscriber to catch up from there.
        for subs in self._subscribers.values():
            for sub in subs:
                sub.offer(RESYNC)
