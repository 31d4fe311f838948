"""The server processes a test run starts, found again at its end.

The test process becomes a child subreaper: a server whose parent died before it (an
embedded Redis whose service was killed) is handed to the test process instead of
init, so it is still among the run's descendants, and nothing the tests started can
outlive the run unnoticed.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
import sys
import time

import psutil

PR_SET_CHILD_SUBREAPER = 36


def adopt_orphans() -> bool:
    """Makes this process the subreaper of its descendants (Linux only)."""
    if not sys.platform.startswith("linux"):
        return False
    libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
    return bool(libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0)


def is_server(proc: psutil.Process) -> bool:
    """A Redis server or sentinel, uvicorn, or ``python -m service``, and not yet ended."""
    try:
        if proc.status() == psutil.STATUS_ZOMBIE:
            return False
        name, cmdline = proc.name(), proc.cmdline()
    except psutil.Error:
        return False
    program = os.path.basename(cmdline[0].split(" ")[0]) if cmdline else name
    if "redis-server" in (name, program) or program == "uvicorn":
        return True
    modules = {cmdline[i + 1] for i, arg in enumerate(cmdline[:-1]) if arg == "-m"}
    return bool(modules & {"service", "uvicorn"})


def servers_left() -> list[psutil.Process]:
    return [p for p in psutil.Process().children(recursive=True) if is_server(p)]


def describe(proc: psutil.Process) -> str:
    """Its pid and command line, and the test that started it (children inherit the
    PYTEST_CURRENT_TEST that pytest sets while a test runs)."""
    try:
        started_by = proc.environ().get("PYTEST_CURRENT_TEST", "outside any test")
        return f"{proc.pid} {' '.join(proc.cmdline()).strip()[:200]} (from {started_by})"
    except psutil.Error:
        return str(proc.pid)


def reap_zombies() -> None:
    """Collects the exit status of adopted orphans that have ended."""
    for child in psutil.Process().children():
        with contextlib.suppress(psutil.Error, ChildProcessError):
            if child.status() == psutil.STATUS_ZOMBIE:
                os.waitpid(child.pid, os.WNOHANG)


def stop_all(procs: list[psutil.Process], timeout: float = 10.0) -> None:
    for proc in procs:
        with contextlib.suppress(psutil.Error):
            proc.terminate()
    _, alive = psutil.wait_procs(procs, timeout=timeout)
    for proc in alive:
        with contextlib.suppress(psutil.Error):
            proc.kill()
    psutil.wait_procs(alive, timeout=5)
    reap_zombies()


def leftovers(grace: float = 5.0) -> list[str]:
    """The servers still running after ``grace`` seconds, described, then stopped."""
    deadline = time.monotonic() + grace
    left = servers_left()
    while left and time.monotonic() < deadline:
        time.sleep(0.1)
        reap_zombies()
        left = servers_left()
    found = [describe(p) for p in left]
    stop_all(left)
    return found
