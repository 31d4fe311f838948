"""schemathesis against the running service: its CLI, with every check and every phase.

``schemathesis run`` calls every HTTP operation of the served ``openapi.yaml`` with
generated requests, valid and invalid: the documents' examples, the boundaries of
each schema (coverage), random ones (fuzzing), then sequences along the document's
links (stateful: create, read, play, reset, replay). Every answer must match the
document, every request the document admits must be accepted (or refused for a
reason the document gives), and every request it refuses must be refused. The hooks
in hooks.py supply real games and their tokens, so that moves reach the engine; the
config (schemathesis.toml) lists the refusals a schema cannot foresee.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis

from tests.contract import hooks

ROOT = Path(__file__).resolve().parents[2]
CONFIG = Path(__file__).with_name("schemathesis.toml")
# Per operation and phase; CONTRACT_MAX_EXAMPLES=500 searches harder (and takes minutes).
MAX_EXAMPLES = int(os.environ.get("CONTRACT_MAX_EXAMPLES", "30"))
# One seed, so that a run's stateful walk (which links it follows from which answers) is
# the same on every machine; CONTRACT_SEED searches elsewhere. A new operation changes
# the walk: seed 1's stopped playing moves when the rematch came.
SEED = int(os.environ.get("CONTRACT_SEED", "2"))
# Plain requests to the WebSocket addresses are refused (404, as documented): no request
# to them is accepted. test_live_messages.py covers the sockets.
SOCKETS = [
    "GET /games/{game_id}/events", "GET /players/me/events", "GET /matches/{match_id}/events"
]
MOVES = ("reveal", "flag", "chord", "pause", "resume", "hint", "reset")

pytestmark = pytest.mark.timeout(1500)


@pytest.fixture(scope="module")
def run(contract_server: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The JSON report of one ``schemathesis run`` against the contract server."""
    folder = tmp_path_factory.mktemp("schemathesis")
    report, calls = folder / "report.json", folder / "calls.jsonl"
    command = [
        sys.executable, "-m", "schemathesis.cli", "--config-file", str(CONFIG), "--no-color",
        "run", "--url", contract_server, f"{contract_server}/openapi.yaml",
        "--checks", "all", "--phases", "examples,coverage,fuzzing,stateful",
        "--max-examples", str(MAX_EXAMPLES), "--workers", "1", "--seed", str(SEED),
        "--report", "json", "--report-json-path", str(report),
    ]
    # cwd: the hooks (tests.contract.hooks) and the service import from this tree.
    done = subprocess.run(
        command, cwd=ROOT, env={**os.environ, "CONTRACT_CALLS": str(calls)},
        capture_output=True, text=True, timeout=1200,
    )
    assert report.exists(), done.stdout[-4000:] + done.stderr[-4000:]
    result: dict[str, Any] = json.loads(report.read_text())
    result["output"] = done.stdout
    result["returncode"] = done.returncode
    result["calls"] = [json.loads(line) for line in calls.read_text().splitlines()]
    return result


def test_schemathesis_finds_nothing(run: dict[str, Any]) -> None:
    tail = run["output"][-6000:]
    assert run["returncode"] == 0, tail
    assert run["failures"] == [] and run["errors"] == [], tail
    assert run["operations"]["errored"] == 0 and run["operations"]["skipped"] == 0, tail
    assert {name: phase["status"] for name, phase in run["phases"].items()} == {
        "examples": "success", "coverage": "success", "fuzzing": "success", "stateful": "success"
    }, tail


def test_every_operation_was_tested(run: dict[str, Any]) -> None:
    operations = run["operations"]
    assert operations["tested"] == operations["total"] == operations["selected"]


def test_requests_reached_the_handlers(run: dict[str, Any]) -> None:
    """Generated requests got past the id and token checks to the games themselves."""
    accepted = {
        label: sum(phase["accepted"] for phase in phases.values())
        for label, phases in run["valid_rates"].items()
    }
    for label in (
        "POST /games", "GET /games/{game_id}", "POST /games/{game_id}/reveal",
        "POST /games/{game_id}/flag", "POST /games/{game_id}/chord",
        "POST /games/{game_id}/pause", "POST /games/{game_id}/resume",
        "POST /games/{game_id}/hint", "POST /games/{game_id}/reset",
        "GET /games/{game_id}/replay", "GET /leaderboards/{preset}",
        "POST /players", "GET /players/me", "PATCH /players/me", "GET /players/{player_id}",
    ):
        assert accepted.get(label), (label, run["valid_rates"].get(label))
    assert sorted(run["warnings"]["missing_test_data"]) == sorted(SOCKETS)


def test_stateful_sequences_played_the_games_they_made(run: dict[str, Any]) -> None:
    """Along the links, moves on the games the sequence created were played, not refused:
    the hooks gave them the tokens those games came with."""
    stateful = Counter(
        (call["operation"].rsplit("/", 1)[1], call["status"])
        for call in run["calls"] if call["phase"] == "stateful"
    )
    assert stateful[("games", 201)], stateful
    played = {move for (move, status) in stateful if move in MOVES and status in (200, 201)}
    assert len(played) >= 3, stateful


@pytest.fixture
def games() -> Iterator[hooks.Games]:
    yield hooks.GAMES
    hooks.GAMES.close()


def test_board_as_text(contract_server: str, games: hooks.Games) -> None:
    """``Accept: text/plain`` is the documented alternative answer of GET /games/{game_id}."""
    schema = schemathesis.openapi.from_url(f"{contract_server}/openapi.yaml")
    game_id, _ = games.new(contract_server)
    operation = schema["/games/{game_id}"]["GET"]
    case = operation.Case(path_parameters={"game_id": game_id}, headers={"Accept": "text/plain"})
    response = case.call_and_validate(base_url=contract_server)
    assert response.headers["content-type"][0].startswith("text/plain")
    assert response.text.splitlines()[0] == "#########"
