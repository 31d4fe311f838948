"""schemathesis against the running service, with all of its checks.

Every HTTP operation of ``openapi.yaml`` is called with generated requests, valid
and invalid, and every answer must match the document. Requests on a game need a
real one: :class:`GameAuth` replaces a well-formed generated game id by a game
created for that request (a finished one for the replay) and supplies its bearer
token, so that moves reach the engine instead of stopping at 404 or 403. Requests
with a malformed id, or with the token left out on purpose, go out as generated.
A stateful run then follows the document's links: create, read, play, reset, replay.
"""

from __future__ import annotations

import os
import re
from collections import Counter, defaultdict
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, settings

GAME_ID = re.compile(r"[0-9a-f]{32}")
# Per operation; CONTRACT_MAX_EXAMPLES=500 searches harder (and takes minutes).
MAX_EXAMPLES = int(os.environ.get("CONTRACT_MAX_EXAMPLES", "30"))
# The WebSocket upgrade is not an HTTP exchange: test_live_messages.py covers it.
NOT_HTTP = "/games/{game_id}/events"

# What a schema cannot say: whether a cell is on this game's board, whether a board of
# that size and mine count can exist, and the game's version. Valid-looking moves may
# meet 412 and 422, and a valid-looking new game 422 (e.g. 10 mines on 3x3 cells).
_ACCEPTED = ["2xx", "401", "403", "404", "409", "429"]
_BOARD_DEPENDENT = [
    {
        "include-operation-id": op,
        "checks": {"positive_data_acceptance": {"expected-statuses": [*_ACCEPTED, *extra]}},
    }
    for op, extra in [
        ("createGame", ["422"]),
        ("reveal", ["412", "422"]),
        ("flag", ["412", "422"]),
        ("chord", ["412", "422"]),
    ]
]
_SETTINGS: dict[str, Any] = {
    "deadline": None, "database": None, "suppress_health_check": list(HealthCheck),
}


class Games:
    """Real games for generated requests, and the tokens of the games seen so far."""

    def __init__(self, base_url: str) -> None:
        self.http = httpx.Client(base_url=base_url, timeout=10)
        self.tokens: dict[str, str] = {}

    def remember(self, answer: Any) -> None:
        """Note the token of a game a request created (``CreatedGame``)."""
        if isinstance(answer, dict) and isinstance(answer.get("game"), dict):
            self.tokens[answer["game"]["id"]] = answer["token"]

    def new(self, **options: Any) -> tuple[str, str]:
        answer = self.http.post("/games", json=options or {"preset": "beginner"})
        assert answer.status_code == 201, answer.text
        self.remember(answer.json())
        body = answer.json()
        return body["game"]["id"], body["token"]

    def finished(self) -> tuple[str, str]:
        """A small dense board played cell by cell until it is won or lost."""
        game_id, token = self.new(width=4, height=4, mines=7, first_click="none")
        auth = {"Authorization": f"Bearer {token}"}
        for y in range(4):
            for x in range(4):
                diff = self.http.post(f"/games/{game_id}/reveal", json={"x": x, "y": y},
                                      headers=auth)
                if diff.json()["status"] in ("won", "lost"):
                    return game_id, token
        raise AssertionError("a 4x4 board played in full has ended")

    def close(self) -> None:
        self.http.close()


def game_auth(games: Games) -> type:
    class GameAuth:
        """A real game (and its token) in place of a generated, well-formed game id."""

        def get(self, case: schemathesis.Case[Any], context: Any) -> tuple[str, str] | None:
            game_id = (case.path_parameters or {}).get("game_id")
            if not isinstance(game_id, str) or not GAME_ID.fullmatch(game_id):
                return None  # no game, or a malformed id on purpose: sent as generated
            if game_id in games.tokens:
                return game_id, games.tokens[game_id]
            return games.finished() if case.operation.path.endswith("/replay") else games.new()

        def set(self, case: schemathesis.Case[Any], data: tuple[str, str], context: Any) -> None:
            game_id, token = data
            case.path_parameters["game_id"] = game_id
            if case.operation.definition.raw.get("security"):
                case.headers["Authorization"] = f"Bearer {token}"

    return GameAuth


def load(base_url: str, games: Games) -> Any:
    """The document as the service serves it, with real games for the generated ids."""
    config = schemathesis.Config.from_dict(
        {
            "base-url": base_url,
            "generation": {"max-examples": MAX_EXAMPLES},
            "checks": {"enabled": True},
            "operations": _BOARD_DEPENDENT,
        }
    )
    schema = schemathesis.openapi.from_url(f"{base_url}/openapi.yaml", config=config)
    schema.auth(refresh_interval=None)(game_auth(games))
    return schema


@pytest.fixture(scope="module")
def games(contract_server: str) -> Iterator[Games]:
    games = Games(contract_server)
    yield games
    games.close()


@pytest.fixture(scope="module")
def api_schema(contract_server: str, games: Games) -> Any:
    return load(contract_server, games)


SEEN: defaultdict[str, Counter[int]] = defaultdict(Counter)
schema = schemathesis.pytest.from_fixture("api_schema").exclude(path=NOT_HTTP)


@schema.parametrize()
@settings(max_examples=MAX_EXAMPLES, **_SETTINGS)
def test_api(case: schemathesis.Case[Any]) -> None:
    response = case.call_and_validate()
    SEEN[case.operation.label][response.status_code] += 1


def test_requests_reached_the_handlers() -> None:
    """The generated requests got past the id and token checks to the games themselves."""
    if not SEEN:
        pytest.skip("runs after test_api")
    for label in (
        "POST /games", "GET /games/{game_id}", "POST /games/{game_id}/reveal",
        "POST /games/{game_id}/flag", "POST /games/{game_id}/chord",
        "POST /games/{game_id}/pause", "POST /games/{game_id}/resume",
        "POST /games/{game_id}/hint", "POST /games/{game_id}/reset",
        "GET /games/{game_id}/replay", "GET /leaderboards/{preset}",
    ):
        assert any(200 <= s < 300 for s in SEEN[label]), (label, dict(SEEN[label]))


def test_board_as_text(api_schema: Any, games: Games, contract_server: str) -> None:
    """``Accept: text/plain`` is the documented alternative answer of GET /games/{game_id}."""
    game_id, _ = games.new()
    operation = api_schema["/games/{game_id}"]["GET"]
    case = operation.Case(path_parameters={"game_id": game_id}, headers={"Accept": "text/plain"})
    response = case.call_and_validate(base_url=contract_server)
    assert response.headers["content-type"][0].startswith("text/plain")
    assert response.text.splitlines()[0] == "#########"


def test_stateful(api_schema: Any, games: Games) -> None:
    """Sequences along the links: a game is created, then read, played, reset, replayed."""
    steps: Counter[str] = Counter()

    class Workflow(api_schema.exclude(path=NOT_HTTP).as_state_machine()):  # type: ignore[misc]
        def after_call(self, response: Any, case: schemathesis.Case[Any]) -> None:
            if response.status_code in (200, 201):
                steps[case.operation.label] += 1
                games.remember(response.json())

    Workflow.run(settings=settings(max_examples=25, stateful_step_count=6, **_SETTINGS))
    assert steps["POST /games"], steps
    assert sum(steps.values()) > steps["POST /games"], "no link was followed"
