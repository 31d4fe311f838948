"""Prometheus metrics. With several worker processes they are collected through
prometheus_client's multiprocess mode (PROMETHEUS_MULTIPROC_DIR, set by ``python -m service``)."""

from __future__ import annotations

import contextlib
import os
import re

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
    multiprocess,
)

REQUESTS = Counter(
    "ms_http_requests_total", "HTTP requests answered", ["route", "method", "status"]
)
LATENCY = Histogram(
    "ms_http_request_duration_seconds",
    "Time to answer an HTTP request",
    ["route", "method"],
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5),
)
MOVES = Counter("ms_moves_total", "Moves committed, by kind", ["action"])
CONFLICTS = Counter("ms_commit_conflicts_total", "Commits that lost a race and were retried")
EXHAUSTED = Counter("ms_commit_retries_exhausted_total", "Moves given up after too many races")
SUBSCRIBERS = Gauge(
    "ms_live_subscribers", "Open WebSocket subscriptions", multiprocess_mode="livesum"
)
HEAVY = Gauge(
    "ms_heavy_changes", "Slow changes (big boards, no-guess builds), running or waiting",
    ["state"], multiprocess_mode="livesum",
)
MATCHES = Counter(
    "ms_match_changes_total",
    "Match changes committed, by kind (created, joined, countdown, ended, rematch, ...)",
    ["change"],
)
DROPPED = Counter("ms_live_dropped_total", "Subscribers closed for falling behind")
REDIS_ERRORS = Counter("ms_redis_errors_total", "Redis calls that failed or timed out")
LIMITED = Counter("ms_rate_limited_total", "Requests refused by a rate limit", ["scope"])


def redis_errors() -> float:
    """How many Redis calls of this process have failed so far."""
    for metric in REDIS_ERRORS.collect():
        for sample in metric.samples:
            if sample.name.endswith("_total"):
                return sample.value
    return 0.0


_LIVE_FILE = re.compile(r"gauge_live\w*_(\d+)\.db")


def _forget_the_dead(directory: str) -> None:
    """Drops the live gauges (open sockets, slow changes) of worker processes that have
    died: a worker's files stay in the folder after it, and a replaced worker's sockets
    would otherwise count for good."""
    for name in os.listdir(directory):
        found = _LIVE_FILE.fullmatch(name)
        if found is None:
            continue
        pid = int(found[1])
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            # Another worker's /metrics may be dropping them at the same moment.
            with contextlib.suppress(FileNotFoundError):
                multiprocess.mark_process_dead(pid, directory)  # type: ignore[no-untyped-call]
        except PermissionError:
            pass  # alive, another user's: not a worker of ours, and not ours to drop


def render() -> tuple[bytes, str]:
    directory = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    if directory is not None:
        _forget_the_dead(directory)
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
        return generate_latest(registry), CONTENT_TYPE_LATEST
    return generate_latest(), CONTENT_TYPE_LATEST
