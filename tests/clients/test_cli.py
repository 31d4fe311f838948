"""The ``minesweeper`` command, run as a subprocess against a live service."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import msgspec
from minesweeper import Client

from service.wire import CreatedGame, Diff, GameView, Snapshot

from .conftest import FIRST, command, mines_of


def new_game(cli: Any, *args: str) -> CreatedGame:
    return msgspec.json.decode(cli("new", "--json", *args).stdout, type=CreatedGame)


def test_help(cli: Any) -> None:
    out = cli("--help", url=False).stdout
    for name in ("new", "show", "reveal", "flag", "chord", "watch", "play"):
        assert name in out


def test_new_saves_the_token(cli: Any, cli_env: dict[str, str]) -> None:
    done = cli("new", "--preset", "intermediate", "--seed", "5")
    first = done.stdout.splitlines()[0]
    assert first.startswith("game ") and "intermediate 16x16, 40 mines" in first
    game_id = first.split()[1]
    saved = json.loads(Path(cli_env["MINESWEEPER_TOKENS"]).read_text())
    assert set(saved) == {game_id} and saved[game_id]["token"]
    assert Path(cli_env["MINESWEEPER_TOKENS"]).stat().st_mode & 0o777 == 0o600
    assert done.stdout.count("#" * 16) == 16 and "ready  mines left 40" in done.stdout


def test_moves_without_passing_the_token(cli: Any, live_server: str) -> None:
    created = new_game(cli, "--width", "9", "--height", "9", "--mines", "10", "--seed", "301")
    game_id = created.game.id
    out = cli("reveal", game_id, *map(str, FIRST)).stdout
    assert out.startswith("v1 reveal 4,4: ") and "playing" in out
    with Client(live_server) as client:
        view = client.get(game_id)
        hidden = next((x, y) for y, row in enumerate(view.board) for x, c in enumerate(row)
                      if c == "#")
        board = client.board_text(game_id)
    assert "\n".join(view.board) in out
    assert board.splitlines()[-1].split("time")[0] in out
    x, y = map(str, hidden)
    diff = msgspec.json.decode(cli("flag", game_id, x, y, "--json").stdout, type=Diff)
    assert diff.cells == [(hidden[0], hidden[1], "F")] and diff.mines_left == 9
    diff = msgspec.json.decode(
        cli("flag", game_id, x, y, "--mark", "none", "--json").stdout, type=Diff
    )
    assert diff.cells == [(hidden[0], hidden[1], "#")]
    out = cli("chord", game_id, *map(str, FIRST)).stdout
    assert out.startswith("v3 chord 4,4: no change")
    # --if-match and --idempotency-key reach the service
    stale = cli("flag", game_id, x, y, "--if-match", "1", check=False)
    assert stale.returncode == 1 and "version_conflict" in stale.stderr
    once = cli("flag", game_id, x, y, "--idempotency-key", "k1", "--json").stdout
    assert cli("flag", game_id, x, y, "--idempotency-key", "k1", "--json").stdout == once


def test_show(cli: Any, live_server: str) -> None:
    created = new_game(cli, "--seed", "302")
    cli("reveal", created.game.id, "0", "0")
    with Client(live_server) as client:
        expected = client.board_text(created.game.id)
    out = cli("show", created.game.id).stdout
    rows, status = expected.split("\n\n")
    assert out.startswith(rows) and status.split("time")[0] in out
    view = msgspec.json.decode(cli("show", created.game.id, "--json").stdout, type=GameView)
    assert view.id == created.game.id and view.version == 1


def test_url_from_the_environment(live_server: str, cli_env: dict[str, str]) -> None:
    env = {**cli_env, "MINESWEEPER_URL": live_server}
    done = subprocess.run([*command(), "new", "--json"], env=env, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert msgspec.json.decode(done.stdout, type=CreatedGame).game.preset == "beginner"


def test_reset(cli: Any) -> None:
    created = new_game(cli, "--preset", "expert", "--no-guess")
    fresh = msgspec.json.decode(cli("reset", created.game.id, "--json").stdout, type=CreatedGame)
    assert fresh.game.id != created.game.id and fresh.game.preset == "expert"
    assert fresh.game.no_guess
    cli("reveal", fresh.game.id, "0", "0")  # the new token was saved too


def test_errors(cli: Any, cli_env: dict[str, str]) -> None:
    created = new_game(cli)
    game_id = created.game.id
    unknown = "0" * 32
    no_token = cli("reveal", unknown, "0", "0", check=False)
    assert no_token.returncode == 2 and "no saved token" in no_token.stderr
    wrong = cli("reveal", game_id, "0", "0", "--token", "nope", check=False)
    assert wrong.returncode == 1 and "(forbidden)" in wrong.stderr
    missing = cli("show", unknown, check=False)
    assert missing.returncode == 1 and "(not_found)" in missing.stderr
    off = cli("reveal", game_id, "50", "0", check=False)
    assert off.returncode == 1 and "(invalid_request)" in off.stderr
    both = cli("new", "--preset", "expert", "--width", "9", check=False)
    assert both.returncode == 2
    down = subprocess.run([*command(), "show", game_id, "--url", "http://127.0.0.1:9"],
                          env=cli_env, capture_output=True, text=True, timeout=60)
    assert down.returncode == 1 and "cannot reach" in down.stderr
    assert not Path(cli_env["MINESWEEPER_TOKENS"]).with_name("x").exists()


def watch(live_server: str, env: dict[str, str], *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [*command(), "watch", *args, "--url", live_server], env=env, text=True,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )


def test_watch_prints_moves_until_the_end(live_server: str, cli_env: dict[str, str]) -> None:
    with Client(live_server) as client:
        mines = mines_of(client, seed=303, preset="beginner")
        game = client.new_game("beginner", seed=303)
        proc = watch(live_server, cli_env, game.id, "--json")
        try:
            assert proc.stdout is not None
            snapshot = msgspec.json.decode(proc.stdout.readline(), type=Snapshot)
            assert snapshot.game.id == game.id
            client.reveal(game, *FIRST)
            client.reveal(game, *sorted(mines)[0])
            out, err = proc.communicate(timeout=30)
        finally:
            proc.kill()
    assert proc.returncode == 0, err
    diffs = [msgspec.json.decode(line, type=Diff) for line in out.splitlines()]
    assert [(d.version, d.status) for d in diffs] == [(1, "playing"), (2, "lost")]


def test_watch_text_from_since(live_server: str, cli_env: dict[str, str]) -> None:
    with Client(live_server) as client:
        mines = mines_of(client, seed=304, preset="beginner")
        game = client.new_game("beginner", seed=304)
        client.reveal(game, *FIRST)
        flag = sorted(mines)[-1]
        client.flag(game, *flag)
        client.reveal(game, *sorted(mines)[0])
    proc = watch(live_server, cli_env, game.id, "--since", "1")
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    lines = out.splitlines()
    assert lines[0] == f"v2 flag {flag[0]},{flag[1]}: 1 cell  playing  mines left 9  " + \
        lines[0].split("  ")[-1]
    assert lines[1].startswith("v3 reveal") and "lost" in lines[1]
    assert lines[-1].startswith("Boom!")
    assert "X" in out and "\n".join(game.view.board) in out


def test_watch_follows_a_reset(live_server: str, cli_env: dict[str, str]) -> None:
    with Client(live_server) as client:
        game = client.new_game("beginner")
        proc = watch(live_server, cli_env, game.id)
        try:
            assert proc.stdout is not None
            assert proc.stdout.readline().startswith(f"game {game.id}")
            fresh = client.reset(game)
            out, err = proc.communicate(timeout=30)
        finally:
            proc.kill()
    assert proc.returncode == 0, err
    assert f"reset: play goes on in game {fresh.id}" in out


def test_module_entry_point(cli_env: dict[str, str]) -> None:
    done = subprocess.run(["python", "-m", "minesweeper", "--help"], env=cli_env,
                          capture_output=True, text=True, timeout=60, cwd=os.getcwd())
    assert done.returncode == 0 and "play" in done.stdout


def test_new_prints_the_token_it_cannot_save(
    live_server: str, cli_env: dict[str, str], tmp_path: Path
) -> None:
    (tmp_path / "a-file").write_text("")
    env = {**cli_env, "MINESWEEPER_TOKENS": str(tmp_path / "a-file" / "tokens.json")}
    done = subprocess.run([*command(), "new", "--url", live_server], env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "could not save the token" in done.stderr
    token = done.stdout.splitlines()[0].rsplit("(token ", 1)[1].rstrip(")")
    game_id = done.stdout.split()[1]
    with Client(live_server) as client:
        assert client.flag(game_id, 0, 0, token=token).mines_left == 9
