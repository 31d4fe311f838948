"""The service always ends when it should: on SIGTERM, however soon after start-up it
comes, and by itself when it cannot listen; the match deadlines' poller stops with it
(it used to lose a cancellation that came during one of its Redis calls, and poll on)."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys

from tests.support.servers import ServiceProcess

# Failure bounds, not speed targets: each stop takes well under a second.
EXIT_WITHIN = 30.0
SHUTDOWN_DONE = "Application shutdown complete."


def test_a_service_whose_port_is_taken_exits_by_itself(redis_url: str) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        svc = ServiceProcess({"REDIS_URL": redis_url, "LOG_LEVEL": "info"},
                             port=taken.getsockname()[1])
        svc.proc = subprocess.Popen(
            [sys.executable, "-m", "service"], cwd=svc.root, env=svc.env,
            stdout=svc.log, stderr=subprocess.STDOUT,
        )
        try:
            try:
                code = svc.proc.wait(EXIT_WITHIN)
            except subprocess.TimeoutExpired:
                raise AssertionError(
                    f"still running {EXIT_WITHIN} s on; log:\n{svc.output()}"
                ) from None
            log = svc.output()
            assert "address already in use" in log, log
            assert code != 0, log
            # The lifespan ended, the poller's stop with it, and not by giving up on it.
            assert SHUTDOWN_DONE in log, log
            assert "did not stop" not in log, log
        finally:
            svc.stop()


def test_sigterm_right_after_start_up_always_stops_the_service(redis_url: str) -> None:
    for attempt in range(20):
        svc = ServiceProcess({"REDIS_URL": redis_url, "LOG_LEVEL": "info"})
        try:
            svc.start(ready="/healthz")
            assert svc.proc is not None
            svc.proc.send_signal(signal.SIGTERM)
            try:
                code = svc.proc.wait(EXIT_WITHIN)
            except subprocess.TimeoutExpired:
                raise AssertionError(
                    f"attempt {attempt}: still running {EXIT_WITHIN} s after SIGTERM; "
                    f"log:\n{svc.output()}"
                ) from None
            log = svc.output()
            assert code == 0, (attempt, log)
            assert SHUTDOWN_DONE in log and "did not stop" not in log, (attempt, log)
        finally:
            svc.stop()
