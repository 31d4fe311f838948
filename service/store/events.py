"""Live messages as they happen: one Redis pub/sub listener per process (a connection
per shard, on a Redis 7 cluster), and a bounded queue per subscriber.

A message (a game's diff or reset, ...) is published once, by the script that commits
it, on its channel. Every replica with subscribers on that channel receives it once,
reads it once with the decoder its subscribers share, and hands the same message to
each local subscriber's queue. A subscriber that falls behind is marked overflowed
instead of buffered without bound; its socket is then closed.

The listener waits on its connections and wakes for messages only. A connection that
fails or stays silent past a ping is replaced, and a channel whose slot moved to another
node is subscribed there; messages published meanwhile are lost to pub/sub, so the
channels' subscribers are then told to :data:`RESYNC` from the stream.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
from collections.abc import AsyncIterator, Callable
from typing import Any, Final, Generic, NamedTuple, TypeVar

import redis.exceptions

from .. import metrics
from .errors import StoreUnavailable, Trouble, missing_permission
from .routes import Route, Routing

log = logging.getLogger(__name__)

H = TypeVar("H")

# A connection with no message for this long is pinged; with no answer to the ping for as
# long again, it is taken for dead.
IDLE_SECONDS = 10.0
CONFIRM_SECONDS = 5.0
RECONNECT_SECONDS = 0.5
# After Redis refused a subscription for lack of a permission, the listener tries again
# after this long, twice as long each time it is refused again, up to the most.
REFUSED_SECONDS = 1.0
REFUSED_MOST_SECONDS = 30.0
# What a broken connection raises: redis-py's errors, the socket's, a refusal from a node
# that no longer serves the slot (a response error), and RuntimeError, which is what a
# write on a transport closed under it raises, or a read with no connection left.
_BROKEN = (
    redis.exceptions.ConnectionError,
    redis.exceptions.TimeoutError,
    redis.exceptions.ResponseError,
    OSError,
    RuntimeError,
)


class Message(NamedTuple, Generic[H]):
    """A message as published (the text a socket sends on) and what the decoder read of it."""

    text: str
    head: H


class Resync:
    """Put in a queue when messages may have been missed: read what came since from the
    stream."""


RESYNC: Final = Resync()


class Subscription(Generic[H]):
    def __init__(self, channel: str, size: int) -> None:
        self.channel = channel
        self.queue: asyncio.Queue[Message[H] | Resync] = asyncio.Queue(size)
        self.overflowed = asyncio.Event()

    def offer(self, item: Message[H] | Resync) -> None:
        if self.overflowed.is_set():
            return
        try:
            self.queue.put_nowait(item)
        except asyncio.QueueFull:
            self.overflowed.set()


class _Channel:
    """One channel's local subscribers, the decoder they share, the connection that carries
    it, and whether Redis has confirmed the subscription."""

    __slots__ = ("confirmed", "decode", "link", "name", "refused", "resync", "subscribers")

    def __init__(self, name: str, decode: Callable[[bytes], Any]) -> None:
        self.name = name
        self.decode = decode
        self.subscribers: set[Subscription[Any]] = set()
        self.confirmed = asyncio.Event()
        self.link: _Link | None = None
        # Subscribed again after a failure: tell the subscribers once it is confirmed.
        self.resync = False
        # Why Redis refused the subscription (the user lacks a permission), if it did.
        self.refused: str | None = None

    def deliver(self, data: bytes) -> None:
        message = Message(data.decode(), self.decode(data))
        for sub in tuple(self.subscribers):
            sub.offer(message)

    def confirm(self) -> None:
        self.confirmed.set()
        if self.resync:
            self.resync = False
            for sub in tuple(self.subscribers):
                sub.offer(RESYNC)

    def refuse(self, reason: str) -> None:
        """Redis refused the subscription: those waiting for it are told at once."""
        self.refused = reason
        self.confirmed.set()


class _Link:
    """One pub/sub connection, the channels it carries, and the task that reads it."""

    def __init__(self, node: str, pubsub: Any, sharded: bool) -> None:
        self.node = node
        self.pubsub = pubsub
        self.sharded = sharded
        # For the log: the node, or where the one server's connection went.
        self.where = node or _address(pubsub)
        self.channels: set[bytes] = set()
        self.reader: asyncio.Task[None] | None = None

    async def subscribe(self, *channels: bytes) -> None:
        if self.sharded:
            await self.pubsub.ssubscribe(*channels)
        else:
            await self.pubsub.subscribe(*channels)
        self.channels.update(channels)

    async def unsubscribe(self, channel: bytes) -> None:
        self.channels.discard(channel)
        if self.sharded:
            await self.pubsub.sunsubscribe(channel)
        else:
            await self.pubsub.unsubscribe(channel)

    def forget(self, channel: bytes) -> None:
        """The server dropped the channel (its slot moved away): nobody, redis-py included,
        is to subscribe it here again."""
        self.channels.discard(channel)
        self.pubsub.shard_channels.pop(channel, None)

    async def close(self) -> None:
        if self.reader is not None and self.reader is not asyncio.current_task():
            self.reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.reader
        with contextlib.suppress(Exception):
            await self.pubsub.aclose()


def _address(pubsub: Any) -> str:
    """The address a connected pub/sub connection went to: host:port, or a Unix socket."""
    connection = getattr(pubsub, "connection", None)
    host, port = getattr(connection, "host", None), getattr(connection, "port", None)
    if host:
        return f"{host}:{port}"
    return str(getattr(connection, "path", "") or "the Redis of REDIS_URL")


def _background(coro: Any, name: str) -> asyncio.Task[None]:
    """A task of the listener's own, in a context of its own: it outlives the request
    that happened to start it, whose id must not mark its log lines."""
    task: asyncio.Task[None] = asyncio.create_task(coro, name=name,
                                                   context=contextvars.Context())
    return task


class Events:
    """subscribe / stop: the whole interface. Publishing is the scripts' part."""

    def __init__(self, routing: Routing, *, queue_size: int = 256) -> None:
        self.routing = routing
        self.queue_size = queue_size
        # Keyed by the channel's name as Redis sends it, so a message finds its subscribers
        # without being decoded first.
        self._channels: dict[bytes, _Channel] = {}
        # By node ("" for the one server).
        self._links: dict[str, _Link] = {}
        self._repairs: set[asyncio.Task[None]] = set()
        self._lock = asyncio.Lock()
        # A subscription refused for lack of a permission: said once a period, and tried
        # again after a wait that grows while it lasts.
        self.trouble = Trouble(log)
        self._refused_wait = 0.0

    @property
    def route(self) -> Route:
        """Known before any connection is made (see :meth:`subscribe`)."""
        route = self.routing.route
        assert route is not None
        return route

    async def stop(self) -> None:
        for task in tuple(self._repairs):
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        async with self._lock:
            for link in tuple(self._links.values()):
                await self._drop(link)

    @contextlib.asynccontextmanager
    async def subscribe(
        self, channel: str, decode: Callable[[bytes], H]
    ) -> AsyncIterator[Subscription[H]]:
        """Yields once Redis confirmed the subscription, so nothing published after this
        point can be missed. Every subscriber of one channel passes the same ``decode``."""
        sub: Subscription[H] = Subscription(channel, self.queue_size)
        key = channel.encode()
        failed: set[bytes] = set()
        try:
            await asyncio.wait_for(self.routing.known.wait(), timeout=CONFIRM_SECONDS)
        except TimeoutError:
            raise StoreUnavailable("Redis has not answered since start-up") from None
        async with self._lock:
            entry = self._channels.get(key)
            if entry is None:
                entry = self._channels[key] = _Channel(channel, decode)
                entry.subscribers.add(sub)
                try:
                    failed = await self._attach({key})
                except BaseException:
                    await self._forget(entry)
                    raise
                if key in failed:
                    # Left registered, the channel would look subscribed to everyone after,
                    # and they would wait for a confirmation that may never come.
                    await self._forget(entry)
                    failed.discard(key)
            else:
                if entry.decode != decode:
                    raise ValueError(f"{channel} is read with another decoder")
                entry.subscribers.add(sub)
        if failed:  # the other channels of a connection found broken
            self._repair_later(failed)
        if self._channels.get(key) is not entry:
            raise StoreUnavailable("Redis did not take a subscription")
        try:
            try:
                await asyncio.wait_for(entry.confirmed.wait(), timeout=CONFIRM_SECONDS)
            except TimeoutError:
                raise StoreUnavailable("Redis did not confirm a subscription") from None
            if entry.refused is not None:
                raise StoreUnavailable(entry.refused)
            yield sub
        finally:
            async with self._lock:
                entry.subscribers.discard(sub)
                if not entry.subscribers:
                    await self._forget(entry)

    async def _forget(self, entry: _Channel) -> None:
        """A channel nobody reads any more, under the lock."""
        key = entry.name.encode()
        if self._channels.get(key) is entry:
            del self._channels[key]
            if entry.link is not None:
                with contextlib.suppress(*_BROKEN):
                    await entry.link.unsubscribe(key)

    # ---- connections (each step under the lock) ---------------------------------------------

    async def _link(self, node: str) -> _Link:
        """The connection to ``node``, opened with its first channel."""
        link = self._links.get(node)
        if link is None:
            pubsub: Any = self.route.client(node).pubsub()
            try:
                await pubsub.connect()
            except BaseException:
                with contextlib.suppress(Exception):
                    await pubsub.aclose()
                raise
            link = self._links[node] = _Link(node, pubsub, self.route.sharded)
            link.reader = _background(self._read(link), f"events-reader {link.where}")
        return link

    async def _attach(self, keys: set[bytes]) -> set[bytes]:
        """Subscribe ``keys`` on the connections of their nodes, one command per slot
        (sharded subscriptions cannot span slots). Returns the channels that are not
        subscribed now: these, and those of any connection found broken."""
        failed: set[bytes] = set()
        groups: dict[tuple[str, int], list[bytes]] = {}
        try:
            for key in keys:
                node = self.route.node_of(key)
                groups.setdefault((node, self.route.slot_of(key)), []).append(key)
        except redis.exceptions.RedisClusterException:  # a slot no node serves, for now
            return set(keys)
        for (node, _), group in groups.items():
            link = None
            try:
                link = await self._link(node)
                await link.subscribe(*group)
            except _BROKEN:
                metrics.REDIS_ERRORS.inc()
                failed.update(group)
                if link is not None:
                    failed |= await self._drop(link)
                continue
            for key in group:
                self._channels[key].link = link
        return failed

    async def _drop(self, link: _Link) -> set[bytes]:
        """Close a connection; returns its channels that still have subscribers."""
        if self._links.get(link.node) is link:
            del self._links[link.node]
        orphans = set()
        for key in link.channels:
            entry = self._channels.get(key)
            if entry is not None and entry.link is link:
                entry.link = None
                orphans.add(key)
        await link.close()
        return orphans

    # ---- failures -----------------------------------------------------------------------------

    def _repair_later(self, keys: set[bytes], wait: float = 0.0) -> None:
        task = _background(self._repair(keys, wait), "events-repair")
        self._repairs.add(task)
        task.add_done_callback(self._repairs.discard)

    async def _repair(self, keys: set[bytes], wait: float = 0.0) -> None:
        """Subscribe ``keys`` again wherever their slots are now served (after ``wait``),
        until it works; each channel's subscribers are told to resync once Redis confirms
        it."""
        if wait:
            await asyncio.sleep(wait)
        pending = set(keys)
        while True:
            async with self._lock:
                pending = {k for k in pending if k in self._channels}
                for key in pending:
                    self._channels[key].resync = True
                try:
                    await self.route.refresh()
                    pending = await self._attach(
                        {k for k in pending if self._channels[k].link is None}
                    )
                except Exception as exc:  # the cluster's slot map may not be had yet
                    metrics.REDIS_ERRORS.inc()
                    log.warning("events listener cannot subscribe again yet: %r", exc)
                else:
                    if not pending:
                        return
            await asyncio.sleep(RECONNECT_SECONDS)

    async def _lost(self, link: _Link) -> None:
        async with self._lock:
            orphans = await self._drop(link) if self._links.get(link.node) is link else set()
        if orphans:
            self._repair_later(orphans)

    async def _refused(self, link: _Link, exc: BaseException, missing: str) -> None:
        """Redis refused a subscription on ``link`` for lack of a permission: a setting to
        fix, not a connection to make again at once. Those waiting for a subscription are
        refused; channels already confirmed are subscribed again after a wait."""
        user = self.routing.user
        reason = (f"Redis refused the service's user {user!r} a subscription: it needs "
                  f"{missing} (Redis said: {exc}); live updates are off until it is granted")
        self.trouble.report(logging.ERROR, reason)
        self._refused_wait = min(max(self._refused_wait * 2, REFUSED_SECONDS),
                                 REFUSED_MOST_SECONDS)
        async with self._lock:
            orphans = await self._drop(link) if self._links.get(link.node) is link else set()
            for key in tuple(orphans):
                entry = self._channels[key]
                if not entry.confirmed.is_set():
                    entry.refuse(reason)
                    orphans.discard(key)
        if orphans:
            self._repair_later(orphans, self._refused_wait)

    # ---- reading ------------------------------------------------------------------------------

    async def _read(self, link: _Link) -> None:
        pinged = False
        while True:
            try:
                message = await link.pubsub.get_message(timeout=IDLE_SECONDS)
                if message is None:
                    if pinged:
                        raise redis.exceptions.TimeoutError("no answer to a ping")
                    await link.pubsub.ping()
                    pinged = True
                    continue
                pinged = False
                self._dispatch(link, message)
            except asyncio.CancelledError:
                raise
            except _BROKEN as exc:
                metrics.REDIS_ERRORS.inc()
                missing = missing_permission(exc)
                if missing is not None:
                    await self._refused(link, exc, missing)
                    return
                log.warning("events listener lost Redis node %s; subscribing again", link.where)
                await self._lost(link)
                return
            except Exception:  # the listener must outlive any one bad message
                log.exception("events listener error")
                await asyncio.sleep(0.1)

    def _dispatch(self, link: _Link, message: dict[str, Any]) -> None:
        kind = message["type"]
        entry = self._channels.get(message["channel"])
        if entry is None:
            return
        if kind in ("message", "smessage"):
            entry.deliver(message["data"])
        elif kind in ("subscribe", "ssubscribe"):
            if self._refused_wait:
                self._refused_wait = 0.0
                self.trouble.clear()
            entry.confirm()
        elif kind == "sunsubscribe" and message["channel"] in link.channels:
            # Not asked for: the channel's slot moved to another node.
            log.info("%s moved off Redis node %s; subscribing where it is now",
                     entry.name, link.where)
            link.forget(message["channel"])
            if entry.link is link:
                entry.link = None
            self._repair_later({message["channel"]})
