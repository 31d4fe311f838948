"""Clients generated from the served openapi.yaml by the usual generators, with their
default options, and used: each plays a beginner game to its end (asking for hints),
reads its replay, then the problem a move on the finished game gets.

- openapi-python-client: a whole client package;
- datamodel-code-generator: pydantic models, over httpx;
- openapi-typescript: types, over openapi-fetch (tools/play.ts, compiled by tsc).

A generator that says anything about the document (a warning, a skipped operation)
fails the test: what it skipped would be missing from every such client.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import pytest

from tests.contract.conftest import tool_env

pytestmark = pytest.mark.timeout(1800)

FINISHED = ("won", "lost")


def generate(command: list[str], cwd: Path) -> str:
    """Run a generator; its output, which must be empty of any remark."""
    done = subprocess.run(command, cwd=cwd, env=tool_env(), capture_output=True, text=True,
                          timeout=600)
    said = (done.stdout + done.stderr).strip()
    assert done.returncode == 0, said
    return said


def check_summary(summary: dict[str, Any]) -> None:
    assert summary["status"] in FINISHED, summary
    assert summary["moves"] >= 1, summary
    assert summary["replay"] == {"status": summary["status"], "moves": summary["moves"]}, summary
    assert summary["problem"]["status"] == 409, summary
    assert summary["problem"]["type"] == "application/problem+json", summary
    assert summary["problem"]["code"] == "game_over", summary


def play(
    new_game: Callable[[], tuple[str, str]],
    hint: Callable[[str, str], tuple[str, int, int]],
    move: Callable[[str, str, str, int, int], str],
    replay: Callable[[str], tuple[str, int]],
    late_move: Callable[[str, str], tuple[int, str, str]],
) -> dict[str, Any]:
    """A beginner game played by hints to its end, through one generated client's calls."""
    game_id, token = new_game()
    status, moves = "ready", 0
    while status not in FINISHED and moves < 500:
        kind, x, y = hint(game_id, token)
        status = move(game_id, token, "flag" if kind == "mine" else "reveal", x, y)
        moves += 1
    replay_status, replay_moves = replay(game_id)
    code, content_type, problem = late_move(game_id, token)
    return {
        "status": status, "moves": moves,
        "replay": {"status": replay_status, "moves": replay_moves},
        "problem": {"status": code, "type": content_type, "code": problem},
    }


@pytest.fixture
def fresh_imports() -> Iterator[None]:
    """Generated modules are imported for one test only."""
    path, modules = list(sys.path), set(sys.modules)
    yield
    sys.path[:] = path
    for name in set(sys.modules) - modules:
        del sys.modules[name]


# ---- openapi-python-client -----------------------------------------------------------------


def test_openapi_python_client(
    contract_server: str, tmp_path: Path, fresh_imports: None
) -> None:
    said = generate(
        [sys.executable, "-m", "openapi_python_client", "generate",
         "--url", f"{contract_server}/openapi.yaml", "--output-path", str(tmp_path / "client")],
        tmp_path,
    )
    assert said.splitlines() == [f"Generating {tmp_path / 'client'}"], said

    sys.path.insert(0, str(tmp_path / "client"))
    pkg = importlib.import_module("minesweeper_service_client")
    models = importlib.import_module("minesweeper_service_client.models")
    api = {
        name: importlib.import_module(f"minesweeper_service_client.api.{module}.{name}")
        for module, name in [("games", "create_game"), ("games", "replay"), ("moves", "hint"),
                             ("moves", "reveal"), ("moves", "flag")]
    }
    client = pkg.Client(base_url=contract_server)

    def authed(token: str) -> Any:
        return pkg.AuthenticatedClient(base_url=contract_server, token=token)

    def new_game() -> tuple[str, str]:
        body = models.NewGame(preset=models.PresetName.BEGINNER)
        created = api["create_game"].sync(client=client, body=body)
        assert isinstance(created, models.CreatedGame), created
        assert created.game.status == models.Status.READY
        return created.game.id, created.token

    def hint(game_id: str, token: str) -> tuple[str, int, int]:
        answer = api["hint"].sync(game_id, client=authed(token))
        assert isinstance(answer, models.Hint), answer
        return answer.kind.value, answer.x, answer.y

    def move(game_id: str, token: str, action: str, x: int, y: int) -> str:
        if action == "flag":
            body = models.FlagCell(x=x, y=y, mark=models.Mark.FLAG)
        else:
            body = models.Cell(x=x, y=y)
        diff = api[action].sync(game_id, client=authed(token), body=body)
        assert isinstance(diff, models.Diff), diff
        assert diff.move.action == models.MoveAction(action)
        return str(diff.status.value)

    def replay(game_id: str) -> tuple[str, int]:
        answer = api["replay"].sync(game_id, client=client)
        assert isinstance(answer, models.Replay), answer
        assert isinstance(answer.status, models.Outcome)
        return answer.status.value, len(answer.moves)

    def late_move(game_id: str, token: str) -> tuple[int, str, str]:
        response = api["reveal"].sync_detailed(
            game_id, client=authed(token), body=models.Cell(x=0, y=0)
        )
        problem = response.parsed
        assert isinstance(problem, models.Problem), problem
        return int(response.status_code), response.headers["content-type"], problem.code

    check_summary(play(new_game, hint, move, replay, late_move))


# ---- datamodel-code-generator --------------------------------------------------------------


def test_datamodel_code_generator(
    contract_server: str, tmp_path: Path, fresh_imports: None
) -> None:
    target = tmp_path / "wire_models.py"
    said = generate(
        [sys.executable, "-m", "datamodel_code_generator",
         "--url", f"{contract_server}/openapi.yaml", "--allow-private-network",
         "--input-file-type", "openapi", "--output", str(target),
         # The generator warns when these are left to its defaults, which are changing.
         "--formatters", "builtin", "--output-model-type", "pydantic_v2.BaseModel"],
        tmp_path,
    )
    assert said == "", said
    spec = importlib.util.spec_from_file_location("wire_models", target)
    assert spec is not None and spec.loader is not None
    models: ModuleType = importlib.util.module_from_spec(spec)
    sys.modules["wire_models"] = models  # for pydantic to resolve the annotations
    spec.loader.exec_module(models)

    http = httpx.Client(base_url=contract_server, timeout=30)

    def send(method: str, url: str, body: Any = None, token: str | None = None) -> Any:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        payload = None if body is None else body.model_dump(mode="json", exclude_none=True)
        return http.request(method, url, json=payload, headers=headers)

    def new_game() -> tuple[str, str]:
        answer = send("POST", "/games", models.NewGame(preset=models.PresetName.beginner))
        created = models.CreatedGame.model_validate_json(answer.content)
        return created.game.id, created.token

    def hint(game_id: str, token: str) -> tuple[str, int, int]:
        answer = send("POST", f"/games/{game_id}/hint", token=token)
        advice = models.Hint.model_validate_json(answer.content)
        return advice.kind.value, advice.x, advice.y

    def move(game_id: str, token: str, action: str, x: int, y: int) -> str:
        body = (models.FlagCell(x=x, y=y, mark=models.Mark.flag) if action == "flag"
                else models.Cell(x=x, y=y))
        answer = send("POST", f"/games/{game_id}/{action}", body, token)
        diff = models.Diff.model_validate_json(answer.content)
        return str(diff.status.value)

    def replay(game_id: str) -> tuple[str, int]:
        answer = models.Replay.model_validate_json(send("GET", f"/games/{game_id}/replay").content)
        return answer.status.value, len(answer.moves)

    def late_move(game_id: str, token: str) -> tuple[int, str, str]:
        answer = send("POST", f"/games/{game_id}/reveal", models.Cell(x=0, y=0), token)
        problem = models.Problem.model_validate_json(answer.content)
        return answer.status_code, answer.headers["content-type"], problem.code

    try:
        check_summary(play(new_game, hint, move, replay, late_move))
    finally:
        http.close()


# ---- openapi-typescript --------------------------------------------------------------------


def test_openapi_typescript(contract_server: str, npm_tools: Path) -> None:
    build = npm_tools / "build"
    shutil.rmtree(build, ignore_errors=True)
    build.mkdir()
    said = generate(
        ["openapi-typescript", f"{contract_server}/openapi.yaml", "-o", str(build / "api.d.ts")],
        npm_tools,
    )
    # Its whole output: its name, then the file it wrote.
    lines = said.splitlines()
    assert len(lines) == 2 and lines[0].startswith("✨ openapi-typescript"), said
    assert lines[1].startswith("🚀") and "api.d.ts" in lines[1], said

    shutil.copy(npm_tools / "play.ts", build / "play.ts")
    compiled = subprocess.run(["tsc", "-p", "tsconfig.json"], cwd=npm_tools, env=tool_env(),
                              capture_output=True, text=True, timeout=600)
    assert compiled.returncode == 0, compiled.stdout + compiled.stderr

    ran = subprocess.run(["node", str(build / "play.js"), contract_server], cwd=npm_tools,
                         env=tool_env(), capture_output=True, text=True, timeout=600)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    check_summary(json.loads(ran.stdout))
