"""The match-deadline poller outlives any failure, and a failure that repeats every
second is logged in full once, then once a period, not a traceback a second."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from service.api import deadlines


class _Matches:
    """A store whose deadlines fail to load for a reason that is not Redis being away."""

    def __init__(self) -> None:
        self.fails = True
        self.polls = 0

    async def due(self, now: int, lease_ms: int) -> list[str]:
        self.polls += 1
        if self.fails:
            raise RuntimeError("the deadlines cannot be read")
        return []


class _Backends:
    def __init__(self) -> None:
        self.matches = _Matches()


async def test_a_failure_that_repeats_is_logged_once_a_period(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(deadlines, "FAILED_PAUSE_SECONDS", 0.01)
    monkeypatch.setattr(deadlines, "FAILURE_LOG_SECONDS", 0.5)
    caplog.set_level(logging.INFO, logger=deadlines.log.name)
    b: Any = _Backends()
    stop = asyncio.Event()
    poller = asyncio.create_task(deadlines.run(b, stop))
    try:
        await asyncio.sleep(0.3)
        assert b.matches.polls >= 10
        said = [r for r in caplog.records if r.name == deadlines.log.name]
        # One traceback, for the first of ten failures and more.
        assert [(r.levelno, r.getMessage(), r.exc_info is not None) for r in said] == [
            (logging.ERROR, "match deadlines", True)]
        await asyncio.sleep(0.5)  # the period is over: one line, with the count
        said = [r for r in caplog.records if r.name == deadlines.log.name]
        assert len(said) == 2 and said[1].exc_info is None, said
        assert said[1].getMessage().startswith(
            "match deadlines still fail: RuntimeError: the deadlines cannot be read (")
        assert "more times since the last report)" in said[1].getMessage()
        b.matches.fails = False
        await asyncio.sleep(0.3)
        said = [r for r in caplog.records if r.name == deadlines.log.name]
        assert said[2].getMessage().startswith("match deadlines: polling again (")
        assert len(said) == 3
    finally:
        stop.set()
        await poller
