"""Prometheus metrics. With several worker processes they are collected through
prometheus_client's multiprocess mode (PROMETHEUS_MULTIPROC_DIR, set by ``python -m service``)."""

from __future__ import annotations

import os

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


def render() -> tuple[bytes, str]:
    if "PROMETHEUS_MULTIPROC_DIR" in os.environ:
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
        return generate_latest(registry), CONTENT_TYPE_LATEST
    return generate_latest(), CONTENT_TYPE_LATEST
