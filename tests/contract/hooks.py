"""What schemathesis needs to know of this service, for its CLI and for pytest alike.

``schemathesis --config-file tests/contract/schemathesis.toml run`` loads this module
(the config's ``hooks``); test_schemathesis.py imports it.

- Real games for generated requests: a well-formed generated game id is replaced by a
  game created for that request (a finished one for the replay), and the request gets
  its bearer token, so that moves reach the engine instead of stopping at 404 or 403.
  Requests on a player (and new games, which may be a player's) get a registered
  player's id and token the same way.
  A malformed id, or a token left out on purpose, goes out as generated. Games that
  requests create (the stateful phase follows the links from ``POST /games``) are
  remembered with their tokens, so the moves that follow are played with them.
- What a schema cannot say: whether a cell is on this game's board, whether a board of
  that size and mine count can exist, and the game's version. The config lets 412 and
  422 answer valid-looking requests of the operations concerned, and the check
  ``refusals_are_board_dependent`` makes sure that every such refusal had one of those
  reasons; any other refusal of a request the document admits is a failure.
- With ``CONTRACT_CALLS`` set to a file, every call is noted there (a JSON line of its
  phase, operation and status), for test_schemathesis.py to see what the run reached.
"""

from __future__ import annotations

import json
import os
import re
import threading
from typing import Any

import httpx
import schemathesis
from schemathesis.generation import GenerationMode

from service import engine
from service.engine.errors import InvalidSettings

GAME_ID = re.compile(r"[0-9a-f]{32}")


class Games:
    """Real games for generated requests, and the tokens of the games seen so far."""

    def __init__(self) -> None:
        self.tokens: dict[str, str] = {}
        self.views: dict[str, dict[str, Any]] = {}  # each game as it was created
        # (game id, Idempotency-Key) of the moves that were played with a key
        self.keys: set[tuple[str, str]] = set()
        self.clients: dict[str, httpx.Client] = {}
        self.lock = threading.Lock()
        self._player: tuple[str, str] | None = None

    def http(self, base_url: str) -> httpx.Client:
        with self.lock:
            if base_url not in self.clients:
                self.clients[base_url] = httpx.Client(base_url=base_url, timeout=30)
            return self.clients[base_url]

    def remember(self, answer: Any) -> None:
        """Note the token of a game a request created (``CreatedGame``)."""
        if isinstance(answer, dict) and isinstance(answer.get("game"), dict):
            self.tokens[answer["game"]["id"]] = answer["token"]
            self.views[answer["game"]["id"]] = answer["game"]

    def player(self, base_url: str) -> tuple[str, str]:
        """A registered player: id and token (the same one for the whole run)."""
        with self.lock:
            if self._player is None:
                answer = httpx.post(f"{base_url}/players", json={}, timeout=30)
                assert answer.status_code == 201, answer.text
                body = answer.json()
                self._player = (body["player"]["id"], body["token"])
            return self._player

    def new(self, base_url: str, **options: Any) -> tuple[str, str]:
        answer = self.http(base_url).post("/games", json=options or {"preset": "beginner"})
        assert answer.status_code == 201, answer.text
        body = answer.json()
        self.remember(body)
        return body["game"]["id"], body["token"]

    def finished(self, base_url: str) -> tuple[str, str]:
        """A small dense board played cell by cell until it is won or lost."""
        game_id, token = self.new(base_url, width=4, height=4, mines=7, first_click="none")
        auth = {"Authorization": f"Bearer {token}"}
        for y in range(4):
            for x in range(4):
                diff = self.http(base_url).post(
                    f"/games/{game_id}/reveal", json={"x": x, "y": y}, headers=auth
                )
                if diff.json()["status"] in ("won", "lost"):
                    return game_id, token
        raise AssertionError("a 4x4 board played in full has ended")

    def free(self, base_url: str, answer: httpx.Response) -> bool:
        """A player sits in one match at a time: when ``answer`` says the run's player
        is in another (``already_playing``), they leave it; True when they did."""
        if answer.status_code != 409 or answer.json().get("code") != "already_playing":
            return False
        _, token = self.player(base_url)
        self.http(base_url).post(
            f"/matches/{answer.json()['match_id']}/leave",
            headers={"Authorization": f"Bearer {token}"},
        )
        return True

    def match(self, base_url: str) -> str:
        """A new match of the run's player, waiting for an opponent (leaving the one
        they were in)."""
        _, token = self.player(base_url)
        for _ in range(3):
            answer = self.http(base_url).post(
                "/matches", json={"mode": "race", "preset": "beginner"},
                headers={"Authorization": f"Bearer {token}"},
            )
            if not self.free(base_url, answer):
                break
        assert answer.status_code == 201, answer.text
        match_id: str = answer.json()["match"]["id"]
        return match_id

    def seek(self, base_url: str) -> str:
        """A new seek of the run's player (never paired with the same player's)."""
        _, token = self.player(base_url)
        for _ in range(3):
            answer = self.http(base_url).post(
                "/seeks", json={"preset": "expert"}, headers={"Authorization": f"Bearer {token}"}
            )
            if not self.free(base_url, answer):
                break
        assert answer.status_code == 201, answer.text
        seek_id: str = answer.json()["seek"]["id"]
        return seek_id

    def close(self) -> None:
        for client in self.clients.values():
            client.close()
        self.clients.clear()


GAMES = Games()


def _for_a_player(case: schemathesis.Case) -> bool:
    """Whether the operation takes a player: their id, or their token."""
    op = case.operation
    return op.path.startswith(("/players/", "/matches", "/seeks")) or (
        (op.method.upper(), op.path) == ("POST", "/games")
    )


# A match's or a seek's id in the path: a real one, made by the run's player.
_MADE = {"match_id": Games.match, "seek_id": Games.seek}


@schemathesis.auth(refresh_interval=None)
class GameAuth:
    """A real game (and its token) in place of a generated, well-formed game id; a
    registered player (and their token) where an operation takes a player."""

    def get(self, case: schemathesis.Case, context: Any) -> tuple[str, str] | None:
        if _for_a_player(case):
            params = case.path_parameters or {}
            base_url = context.operation.base_url
            for name, make in _MADE.items():
                if name in params:
                    if not isinstance(params[name], str) or not GAME_ID.fullmatch(params[name]):
                        return None  # a malformed id on purpose: sent as generated
                    return make(GAMES, base_url), GAMES.player(base_url)[1]
            player_id = params.get("player_id", "0" * 32)
            if not isinstance(player_id, str) or not GAME_ID.fullmatch(player_id):
                return None  # a malformed id on purpose: sent as generated
            return GAMES.player(base_url)
        game_id = (case.path_parameters or {}).get("game_id")
        if not isinstance(game_id, str) or not GAME_ID.fullmatch(game_id):
            return None  # no game, or a malformed id on purpose: sent as generated
        if game_id in GAMES.tokens:
            return game_id, GAMES.tokens[game_id]
        base_url = context.operation.base_url
        if case.operation.path.endswith("/replay"):
            return GAMES.finished(base_url)
        return GAMES.new(base_url)

    def set(self, case: schemathesis.Case, data: tuple[str, str], context: Any) -> None:
        some_id, token = data
        if not _for_a_player(case):
            case.path_parameters["game_id"] = some_id
        else:
            for name in ("player_id", *_MADE):
                if name in (case.path_parameters or {}):
                    case.path_parameters[name] = some_id
        if case.operation.definition.raw.get("security"):
            case.headers = {**(case.headers or {}), "Authorization": f"Bearer {token}"}


def _header(case: schemathesis.Case, name: str) -> str | None:
    sent = {k.lower(): v for k, v in (case.headers or {}).items()}
    value = sent.get(name)
    return value if isinstance(value, str) else None


@schemathesis.hook
def after_call(context: Any, case: schemathesis.Case, response: Any) -> None:
    if response.status_code == 201:
        GAMES.remember(response.json())
    key = _header(case, "idempotency-key")
    if response.status_code == 200 and key is not None:
        GAMES.keys.add((case.path_parameters["game_id"], key))
    calls = os.environ.get("CONTRACT_CALLS")
    if calls:
        phase = case.meta.phase.name.value if case.meta is not None else None
        line = {"phase": phase, "operation": case.operation.label, "status": response.status_code}
        with open(calls, "a") as out:
            out.write(json.dumps(line) + "\n")


# ---- refusals a schema cannot foresee --------------------------------------------------


def _impossible_board(body: dict[str, Any]) -> str | None:
    """Why a new game of ``body`` (valid by the document) cannot be made, if it cannot."""
    width, height, mines = body.get("width"), body.get("height"), body.get("mines")
    if width is not None and height is not None and mines is not None:
        try:
            engine.custom(int(width), int(height), int(mines))
        except InvalidSettings as exc:
            return str(exc)
        if body.get("no_guess"):
            from service.engine.noguess import check_settings

            try:
                check_settings(int(width), int(height), int(mines))
            except InvalidSettings as exc:
                return str(exc)
    return None


def _refused_move(game: dict[str, Any], body: dict[str, Any]) -> str | None:
    """Why a move of ``body`` (valid by the document) cannot be played on ``game``, if so."""
    x, y = body.get("x"), body.get("y")
    if isinstance(x, int | float) and isinstance(y, int | float) and (
        x >= game["width"] or y >= game["height"]
    ):
        return f"({x}, {y}) is off the {game['width']}x{game['height']} board"
    if body.get("mark") == "question" and not game["question_marks"]:
        return "the game has no question marks"
    return None


def reason_for_refusal(case: schemathesis.Case, status: int) -> str | None:
    """The board-dependent reason a request the document admits was refused, if any."""
    op = case.operation.definition.raw.get("operationId")
    body = case.body if isinstance(case.body, dict) else {}
    if status == 412 and op in ("reveal", "flag", "chord"):
        return "If-Match names another version" if _header(case, "if-match") else None
    if status != 422:
        return None
    if op == "createGame":
        return _impossible_board(body)
    if op == "createMatch":
        # A match's board is no-guess unless the body says otherwise.
        return _impossible_board({"no_guess": True, **body})
    if op in ("reveal", "flag", "chord"):
        key = _header(case, "idempotency-key")
        if key is not None and (case.path_parameters["game_id"], key) in GAMES.keys:
            return "the Idempotency-Key was used for another move of this game"
        game = GAMES.views.get(case.path_parameters["game_id"])
        return None if game is None else _refused_move(game, body)
    return None


@schemathesis.check
def refusals_are_board_dependent(ctx: Any, response: Any, case: schemathesis.Case) -> None:
    """A 412 or 422 to a request the document admits had a reason the document gives."""
    meta = case.meta
    if meta is None or meta.generation.mode != GenerationMode.POSITIVE:
        return
    if response.status_code not in (412, 422):
        return
    if reason_for_refusal(case, response.status_code) is None:
        raise AssertionError(
            f"a request the document admits was refused with {response.status_code} "
            f"for no reason the document gives: {response.text}"
        )
