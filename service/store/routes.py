"""Where live messages travel: which publish command the scripts use, and which Redis
node a process's pub/sub connection for a channel goes to.

Redis 7 has sharded pub/sub: a message sent with ``SPUBLISH`` reaches the nodes of its
channel's shard only, where a classic ``PUBLISH`` is relayed to every node of a cluster,
so fan-out traffic would grow with the cluster. When every primary runs Redis 7 or later
the service uses it, and a replica's listener keeps one connection per primary; older
servers (the embedded Redis is 6.2) keep classic pub/sub on one connection. The choice
is made once, when Redis first answers after start-up: publishers and listeners of every
replica must agree on it, so nothing is guessed. The service starts without waiting for
it, so its health check answers while Redis is away.

redis-py's own cluster pub/sub is not used for this: it reads its per-node connections
in turn with a timeout each (a poll), and moves subscriptions after a topology change
without telling its caller, whose subscribers would then miss messages unawares.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import redis.asyncio as aioredis
import redis.exceptions

from .connection import Redis, RedisCluster, connect_node, connect_pubsub
from .errors import StoreUnavailable, redis_errors

log = logging.getLogger(__name__)

SHARDED_SINCE = (7, 0)
RETRY_SECONDS = 0.5


async def sharded(client: Redis) -> bool:
    """Whether every server the service writes to has sharded pub/sub; waits for Redis."""
    while True:
        try:
            if isinstance(client, RedisCluster):
                await client.initialize()
                versions = [
                    (await client.info("server", target_nodes=node))["redis_version"]
                    for node in client.get_primaries()
                ]
            else:
                versions = [(await client.info("server"))["redis_version"]]
            break
        except (
            redis.exceptions.ConnectionError,
            redis.exceptions.TimeoutError,
            redis.exceptions.RedisClusterException,  # no node of the URL's cluster answers
            OSError,
        ):
            log.warning("waiting for Redis to tell its version")
            await asyncio.sleep(RETRY_SECONDS)
    return all(version_of(v) >= SHARDED_SINCE for v in versions)


def version_of(text: str) -> tuple[int, ...]:
    """A Redis version's major and minor, to compare: "7.0.15" -> (7, 0)."""
    return tuple(int(part) for part in text.split(".")[:2])


COMMANDS = ("PUBLISH", "SPUBLISH")


def publishing(command: str, script: str) -> str:
    """``script`` with ``PUBLISH`` set to the command it publishes with. A script per
    command, rather than the command among its arguments, leaves each script's arguments
    its own."""
    return f"local PUBLISH = '{command}'\n{script}"


class OneServer:
    """Every channel on one connection: a single server or Sentinel's primary, or for
    classic pub/sub any node of a cluster, which relays every message to every node."""

    def __init__(self, url: str, *, cluster: bool, is_sharded: bool) -> None:
        self.sharded = is_sharded
        self._client = connect_pubsub(url, cluster=cluster)

    def node_of(self, channel: bytes) -> str:
        return ""

    def slot_of(self, channel: bytes) -> int:
        return 0

    def client(self, node: str) -> aioredis.Redis:
        return self._client

    async def refresh(self) -> None:
        """Nothing to learn: the one server is where it was."""

    async def aclose(self) -> None:
        await self._client.aclose()


class Shards:
    """A connection per primary of a Redis 7 cluster, for the channels of its slots. The
    slot map is the command client's own, read again after a connection failed or a
    channel's slot moved."""

    sharded = True

    def __init__(self, url: str, cluster: RedisCluster) -> None:
        self._url = url
        self._cluster = cluster
        self._clients: dict[str, aioredis.Redis] = {}

    def node_of(self, channel: bytes) -> str:
        """The primary that serves the channel's slot (SlotNotCoveredError while none does)."""
        node: Any = self._cluster.get_node_from_key(channel.decode())
        return str(node.name)

    def slot_of(self, channel: bytes) -> int:
        return self._cluster.keyslot(channel)

    def client(self, node: str) -> aioredis.Redis:
        if node not in self._clients:
            host, _, port = node.rpartition(":")
            self._clients[node] = connect_node(self._url, host, int(port))
        return self._clients[node]

    async def refresh(self) -> None:
        await self._cluster.nodes_manager.initialize()

    async def aclose(self) -> None:
        for client in self._clients.values():
            await client.aclose()
        self._clients.clear()


Route = OneServer | Shards


def route(url: str, client: Redis, *, is_sharded: bool) -> Route:
    """Where the listener's connections go, for the Redis that ``client`` writes to."""
    if is_sharded and isinstance(client, RedisCluster):
        return Shards(url, client)
    return OneServer(url, cluster=isinstance(client, RedisCluster), is_sharded=is_sharded)


def command_of(routing: Routing | None) -> str:
    """The command a store's scripts publish with: classic PUBLISH without a routing
    (a store made on its own, as tests and benchmarks do)."""
    return routing.command() if routing is not None else "PUBLISH"


async def send(routing: Routing | None, redis: Redis, channel: str, message: bytes) -> None:
    """Publish from outside a script, with the routing's command (classic PUBLISH
    without one)."""
    if routing is not None:
        await routing.send(channel, message)
        return
    with redis_errors():
        await redis.publish(channel, message)


class Routing:
    """The pub/sub the service uses: the scripts' publish command and the listener's
    route, both unknown (None) until :meth:`learn` has heard from Redis."""

    def __init__(self, url: str, client: Redis) -> None:
        self._url = url
        self._client = client
        self.publish: str | None = None
        self.route: Route | None = None
        self.known = asyncio.Event()

    def command(self) -> str:
        """The command that publishes: the scripts' and :meth:`send`'s."""
        if self.publish is None:
            raise StoreUnavailable("Redis has not answered since start-up")
        return self.publish

    async def send(self, channel: str, message: bytes) -> None:
        """Publish from here rather than from a script."""
        with redis_errors():
            await self._client.execute_command(self.command(), channel, message)

    async def learn(self) -> None:
        is_sharded = await sharded(self._client)
        self.route = route(self._url, self._client, is_sharded=is_sharded)
        self.publish = "SPUBLISH" if is_sharded else "PUBLISH"
        self.known.set()
        log.info("live messages use %s pub/sub", "sharded" if is_sharded else "classic")

    async def aclose(self) -> None:
        if self.route is not None:
            await self.route.aclose()
