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
import contextlib
import logging
import time
from typing import Any

import redis.asyncio as aioredis
import redis.exceptions

from . import keys
from .connection import (
    COMMAND_TIMEOUT,
    Redis,
    RedisCluster,
    connect_node,
    connect_pubsub,
    user_of,
)
from .errors import (
    StoreUnavailable,
    Trouble,
    missing_command,
    missing_permission,
    redis_errors,
    writes_refused,
)

log = logging.getLogger(__name__)

SHARDED_SINCE = (7, 0)
RETRY_SECONDS = 0.5


async def _version(client: Redis, **target: Any) -> str:
    """The server's version from HELLO, which any user may send; from INFO for a server
    too old for HELLO without arguments."""
    try:
        hello: Any = await client.execute_command("HELLO", **target)
    except redis.exceptions.ResponseError:
        info = await client.info("server", **target)
        return str(info["redis_version"])
    if isinstance(hello, list):  # RESP2: the map's keys and values in turn
        hello = dict(zip(hello[::2], hello[1::2], strict=True))
    version = hello.get(b"version", hello.get("version"))
    return version.decode() if isinstance(version, bytes) else str(version)


async def sharded(client: Redis, user: str = "default", trouble: Trouble | None = None) -> bool:
    """Whether every server the service writes to has sharded pub/sub; waits for Redis."""
    trouble = trouble or Trouble(log)
    while True:
        try:
            if isinstance(client, RedisCluster):
                await client.initialize()
                versions = [
                    await _version(client, target_nodes=node) for node in client.get_primaries()
                ]
            else:
                versions = [await _version(client)]
            break
        except redis.exceptions.AuthenticationError as exc:
            trouble.report(logging.ERROR, f"Redis refused the service's credentials (user "
                           f"{user!r}; check the user and password in REDIS_URL): {exc}")
        except redis.exceptions.NoPermissionError as exc:
            trouble.report(logging.ERROR, f"Redis user {user!r} may run neither HELLO nor "
                           f"INFO ({exc}), so the service cannot learn the server's version: "
                           f"grant it +hello (ACL SETUSER {user} +hello)")
        except redis.exceptions.RedisClusterException as exc:
            if NOT_A_CLUSTER in str(exc):
                trouble.report(logging.ERROR, "REDIS_CLUSTER is on (or REDIS_URL is "
                               "redis+cluster://) but the Redis in REDIS_URL is not a node of a "
                               "cluster: turn REDIS_CLUSTER off, or name a cluster node")
            else:  # no node of the URL's cluster answers
                trouble.report(logging.WARNING, f"waiting for Redis to tell its version: "
                               f"{exc}", problem=False)
        except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError, OSError) as exc:
            trouble.report(logging.WARNING, f"waiting for Redis to tell its version: {exc}",
                           problem=False)
        await asyncio.sleep(RETRY_SECONDS)
    trouble.clear()
    return all(version_of(v) >= SHARDED_SINCE for v in versions)


NOT_A_CLUSTER = "Cluster mode is not enabled"
# A channel of each kind the service publishes on, for ones no subscriber reads: an ACL
# that lets the service publish on these lets it publish on all of its channels.
PROBE_CHANNELS = (
    keys.channel("readiness"),
    keys.player_channel("readiness"),
    keys.match_channel("readiness"),
)


def version_of(text: str) -> tuple[int, ...]:
    """A Redis version's major and minor, to compare: "7.0.15" -> (7, 0)."""
    return tuple(int(part) for part in text.split(".")[:2])


COMMANDS = ("PUBLISH", "SPUBLISH")
# How long the readiness check's key lives.
READINESS_KEY_MS = 10_000
# Redis's settings and the user's permissions (a write, INFO, a publish and a subscription
# on a channel of each kind) are asked again at most this often, whatever asks.
CHECK_SECONDS = 5.0


def publishing(command: str, script: str) -> str:
    """``script`` with ``PUBLISH`` set to the command it publishes with. A script per
    command, rather than the command among its arguments, leaves each script's arguments
    its own."""
    return f"local PUBLISH = '{command}'\n{_MAY_PUBLISH}\n{script}"


# Asked before a script writes anything, so that a publish Redis would refuse (a user
# without the channel) leaves everything as it was; published last, so that a write Redis
# refuses (out of memory) sends nothing. Redis 6 has no check: the publish fails there.
_MAY_PUBLISH = """local function check_publish(channel)
  if redis.acl_check_cmd and not redis.acl_check_cmd(PUBLISH, channel, '') then
    return redis.error_reply('NOPERM this user may not publish on ' .. channel)
  end
end"""


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
        self.user = user_of(url)
        self.publish: str | None = None
        self.route: Route | None = None
        self.known = asyncio.Event()
        self.trouble = Trouble(log)
        # What the last check of Redis's settings and permissions found (None: nothing),
        # logged when found (then once a period while it lasts), and when it is fixed.
        self.unfit: str | None = None
        self._unfit_said = Trouble(log)
        self._checking = asyncio.Lock()
        self._next_check = 0.0
        # The subscription probe's connection to each node, kept from one check to the next.
        self._probes: dict[str, Any] = {}

    def command(self) -> str:
        """The command that publishes: the scripts' and :meth:`send`'s."""
        if self.publish is None:
            raise StoreUnavailable(self.trouble.problem or "Redis has not answered since start-up")
        return self.publish

    async def send(self, channel: str, message: bytes) -> None:
        """Publish from here rather than from a script."""
        with redis_errors():
            await self._client.execute_command(self.command(), channel, message)

    async def learn(self) -> None:
        is_sharded = await sharded(self._client, self.user, self.trouble)
        self.route = route(self._url, self._client, is_sharded=is_sharded)
        self.publish = "SPUBLISH" if is_sharded else "PUBLISH"
        self.known.set()
        log.info("live messages use %s pub/sub", "sharded" if is_sharded else "classic")
        with contextlib.suppress(StoreUnavailable):
            await self.not_ready()

    async def may_not_publish(self) -> str | None:
        """Why the service's Redis user may not publish on its channels (None: it may)."""
        command = self.command()
        for channel in PROBE_CHANNELS:
            try:
                await self._client.execute_command(command, channel, b"")
            except (redis.exceptions.RedisError, redis.exceptions.RedisClusterException,
                    OSError) as exc:
                if not isinstance(exc, redis.exceptions.NoPermissionError):
                    raise StoreUnavailable(str(exc) or type(exc).__name__) from exc
                return self._denied("publish on", channel, exc)
        return None

    def _denied(self, doing: str, channel: str, exc: BaseException) -> str:
        """What to grant the user, by what Redis says is missing: the command or the
        channel."""
        name = missing_command(exc)
        if name is not None:
            grant = f"grant it the command (ACL SETUSER {self.user} +{name})"
        else:
            grant = (f"grant it those channels (ACL SETUSER {self.user} '&ms:*'), or every "
                     f"channel (allchannels)")
        return (f"Redis user {self.user!r} may not {doing} the service's channels such as "
                f"{channel} ({exc}): {grant}")

    async def may_not_subscribe(self) -> str | None:
        """Why the service's Redis user may not subscribe to its channels (None: it may),
        asked on a connection of the listener's kind, to the node that serves each probe
        channel."""
        route = self.route
        assert route is not None
        nodes: dict[str, list[str]] = {}
        try:
            for channel in PROBE_CHANNELS:
                nodes.setdefault(route.node_of(channel.encode()), []).append(channel)
        except redis.exceptions.RedisClusterException as exc:
            raise StoreUnavailable(str(exc) or type(exc).__name__) from exc
        for node, channels in nodes.items():
            kept = node in self._probes
            try:
                denied = await self._may_subscribe_on(route, node, channels)
            except StoreUnavailable:
                if not kept:
                    raise
                # The connection kept from the last check may have died meanwhile (Redis
                # restarted): a new one says whether Redis is away.
                denied = await self._may_subscribe_on(route, node, channels)
            if denied is not None:
                return denied
        for node in set(self._probes) - set(nodes):  # a node that serves none of them now
            await self._close_probe(self._probes.pop(node))
        return None

    async def _may_subscribe_on(self, route: Route, node: str, channels: list[str]) -> str | None:
        """Subscribe to ``channels`` and unsubscribe again, on the probe's connection to
        ``node``, kept for the next check while it works."""
        pubsub: Any = self._probes.pop(node, None)
        if pubsub is None:
            pubsub = route.client(node).pubsub()
        try:
            for channel in channels:
                try:
                    await self._subscribed(pubsub, route.sharded, channel)
                except redis.exceptions.NoPermissionError as exc:
                    await self._close_probe(pubsub)
                    return self._denied("subscribe to", channel, exc)
                await self._unsubscribed(pubsub, route.sharded, channel)
        except (redis.exceptions.RedisError, redis.exceptions.RedisClusterException,
                OSError, TimeoutError) as exc:
            await self._close_probe(pubsub)
            raise StoreUnavailable(str(exc) or type(exc).__name__) from exc
        except BaseException:
            await self._close_probe(pubsub)
            raise
        self._probes[node] = pubsub
        return None

    @staticmethod
    async def _close_probe(pubsub: Any) -> None:
        with contextlib.suppress(Exception):
            await pubsub.aclose()

    @staticmethod
    async def _subscribed(pubsub: Any, is_sharded: bool, channel: str) -> None:
        """Subscribe, and wait for Redis's confirmation (or its refusal, raised)."""
        if is_sharded:
            await pubsub.ssubscribe(channel)
        else:
            await pubsub.subscribe(channel)
        async with asyncio.timeout(COMMAND_TIMEOUT):
            while True:
                message = await pubsub.get_message(timeout=COMMAND_TIMEOUT)
                if message is not None and message["type"] in ("subscribe", "ssubscribe"):
                    return

    @staticmethod
    async def _unsubscribed(pubsub: Any, is_sharded: bool, channel: str) -> None:
        """Unsubscribe, and wait for Redis's confirmation: the connection is left as it
        was, for the next check."""
        if is_sharded:
            await pubsub.sunsubscribe(channel)
        else:
            await pubsub.unsubscribe(channel)
        async with asyncio.timeout(COMMAND_TIMEOUT):
            while pubsub.subscribed:
                await pubsub.get_message(timeout=COMMAND_TIMEOUT)

    async def may_not_write(self) -> str | None:
        """Why Redis refuses writes (None: it takes them): a short-lived key is written."""
        try:
            with redis_errors():
                await self._client.set(keys.readiness(), b"1", px=READINESS_KEY_MS)
        except StoreUnavailable as exc:
            if exc.refused is not None:
                return exc.refused
            cause = exc.__cause__
            missing = missing_permission(cause) if cause is not None else None
            if missing is not None:
                return f"Redis user {self.user!r} may not write: it needs {missing}"
            raise
        writes_refused.clear()
        return None

    async def evicts(self) -> str | None:
        """Why Redis may drop the service's data (None: it may not, or the user may not
        run INFO to tell): a ``maxmemory-policy`` other than ``noeviction`` evicts games
        and players when memory is full."""
        with redis_errors():
            try:
                if isinstance(self._client, RedisCluster):
                    policies = [
                        str((await self._client.info("memory", target_nodes=node))
                            .get("maxmemory_policy", "noeviction"))
                        for node in self._client.get_primaries()
                    ]
                else:
                    info = await self._client.info("memory")
                    policies = [str(info.get("maxmemory_policy", "noeviction"))]
            except redis.exceptions.NoPermissionError:
                return None  # a managed Redis may keep INFO from its users: not a fault
        wrong = sorted({p for p in policies if p != "noeviction"})
        if not wrong:
            return None
        return (f"Redis's maxmemory-policy is {', '.join(wrong)}: when its memory is full "
                f"it deletes keys, and games and players vanish; set maxmemory-policy "
                f"noeviction (CONFIG SET maxmemory-policy noeviction, and in redis.conf)")

    async def not_ready(self) -> str | None:
        """Why the service cannot serve, as far as its Redis's settings and permissions
        tell (None: they are fine), as last checked. They are checked again once the last
        check is :data:`CHECK_SECONDS` old, or at once when a write was refused since a
        check found nothing. Raises :class:`StoreUnavailable` while Redis is away."""
        if self.trouble.problem is not None:
            return self.trouble.problem
        async with self._checking:
            refused = writes_refused.problem is not None and self.unfit is None
            if time.monotonic() < self._next_check and not refused:
                return self.unfit
            self.unfit = await self._check()
            self._next_check = time.monotonic() + CHECK_SECONDS
            return self.unfit

    async def _check(self) -> str | None:
        """Redis's settings and the user's permissions, asked of Redis. What is wrong is
        logged when found (a refused write by the store, which says it for every kind of
        write), and once it is fixed, a line says so."""
        refused = await self.may_not_write()
        if refused is not None:
            return refused
        unfit = (await self.evicts() or await self.may_not_publish()
                 or await self.may_not_subscribe())
        if unfit is None:
            self._unfit_said.clear()  # "Redis answers as configured again", if it said one
        else:
            self._unfit_said.report(logging.ERROR, unfit)
        return unfit

    async def aclose(self) -> None:
        for pubsub in self._probes.values():
            await self._close_probe(pubsub)
        self._probes.clear()
        if self.route is not None:
            await self.route.aclose()
