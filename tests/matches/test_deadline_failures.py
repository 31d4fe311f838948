"""The match-deadline poller outlives any failure, and a failure that repeats every
second is logged in full once, then once a period, not a traceback a second."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from types import SimpleNamespace

import pytest
import redis.asyncio

from service.api import deadlines
from service.store import MatchStore, keys
from tests.support.servers import RedisServer


@pytest.fixture
async def own_redis() -> AsyncIterator[redis.asyncio.Redis]:
    """A Redis of the test's own: its deadlines are broken on purpose."""
    server = RedisServer().start()
    client = redis.asyncio.Redis.from_url(server.url)
    try:
        yield client
    finally:
        await client.aclose()
        server.cleanup()


async def test_a_failure_that_repeats_is_logged_once_a_period(
    own_redis: redis.asyncio.Redis,
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture,
) -> None:
    """The deadlines' key holds a string, so every poll fails with Redis's WRONGTYPE:
    a failure that is not Redis being away."""
    monkeypatch.setattr(deadlines, "FAILED_PAUSE_SECONDS", 0.01)
    monkeypatch.setattr(deadlines, "FAILURE_LOG_SECONDS", 0.5)
    caplog.set_level(logging.INFO, logger=deadlines.log.name)
    await own_redis.set(keys.match_deadlines(), "not a sorted set")
    # The poller reads nothing of the service but its matches' store.
    b = SimpleNamespace(matches=MatchStore(own_redis, ttl_seconds=60))
    stop = asyncio.Event()
    poller = asyncio.create_task(deadlines.run(b, stop))  # type: ignore[arg-type]
    try:
        await asyncio.sleep(0.3)
        said = [r for r in caplog.records if r.name == deadlines.log.name]
        # One traceback, for the first of many failures.
        assert [(r.levelno, r.getMessage(), r.exc_info is not None) for r in said] == [
            (logging.ERROR, "match deadlines", True)]
        await asyncio.sleep(0.5)  # the period is over: one line, with the count
        said = [r for r in caplog.records if r.name == deadlines.log.name]
        assert len(said) == 2 and said[1].exc_info is None, said
        assert said[1].getMessage().startswith("match deadlines still fail: "), said[1]
        assert "WRONGTYPE" in said[1].getMessage()
        assert "more times since the last report)" in said[1].getMessage()
        await own_redis.delete(keys.match_deadlines())
        await asyncio.sleep(0.3)
        said = [r for r in caplog.records if r.name == deadlines.log.name]
        assert said[2].getMessage().startswith("match deadlines: polling again (")
        assert len(said) == 3
    finally:
        stop.set()
        await poller
