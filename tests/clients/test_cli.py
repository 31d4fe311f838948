"""The ``minesweeper`` command, run as a subprocess against a live service."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import msgspec
from minesweeper import Client
from minesweeper.wire import CreatedGame, Diff, GameView, Hint, Leaderboard, Replay, Snapshot

from tests.support import solve
from tests.support.play import unique_name

from .conftest import FIRST, command, mines_of, safe_cells


def new_game(cli: Any, *args: str) -> CreatedGame:
    return msgspec.json.decode(cli("new", "--json", *args).stdout, type=CreatedGame)


def test_help(cli: Any) -> None:
    out = cli("--help", url=False).stdout
    for name in ("new", "show", "reveal", "flag", "chord", "watch", "play", "hint", "pause",
                 "resume", "replay", "leaderboard", "register", "profile", "rename", "race",
                 "match", "leave"):
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


def test_usage_mistakes_exit_2_and_refusals_1_in_one_style(cli: Any) -> None:
    """A mistake on the command line is the user's (2), a refusal the service's (1); each
    is one line, ``minesweeper: what went wrong``."""
    game_id = new_game(cli).game.id
    usage = [
        (("reveal", "not-an-id", "0", "0"), "not a game id"),
        (("show", "1234"), "not a game id"),
        (("reveal", "0" * 32, "0", "0"), "no saved token for game"),
        (("leaderboard", "expert", "--limit", "0"), "not a number from 1 to 100"),
        (("leaderboard", "expert", "--date", "2026-13-45"), "not a date"),
        (("reveal", game_id, "x", "0"), "not a cell coordinate"),
        (("new", "--preset", "expert", "--width", "9"), "not both"),
    ]
    for args, words in usage:
        done = cli(*args, check=False)
        assert done.returncode == 2, (args, done.stderr)
        assert done.stderr.startswith("minesweeper: ") and words in done.stderr, done.stderr
        assert done.stderr.count("\n") == 1, done.stderr
    refused = [
        (("show", "0" * 32), "(not_found)"),
        (("reveal", game_id, "50", "0"), "(invalid_request)"),
        (("replay", game_id), "(game_in_progress)"),
    ]
    for args, code in refused:
        done = cli(*args, check=False)
        assert done.returncode == 1, (args, done.stderr)
        assert done.stderr.startswith("minesweeper: ") and done.stderr.rstrip().endswith(code)
        assert done.stderr.count("\n") == 1, done.stderr


def test_bad_values_are_caught_here_not_sent(cli: Any, cli_env: dict[str, str]) -> None:
    """Values the service would refuse are the command line's mistakes: exit 2 and one
    clean line, before anything is sent."""
    game_id = new_game(cli).game.id
    usage = [
        (("reveal", game_id, "-1", "1"), "not a cell coordinate (0 or more): '-1'"),
        (("flag", game_id, "1", "-3"), "not a cell coordinate"),
        (("new", "--seed", "-5"), "not a seed (0 or more): '-5'"),
        (("new", "--width", "5"), "needs --width, --height and --mines together"),
        (("new", "--width", "1", "--height", "5", "--mines", "1"), "not a board size"),
        (("new", "--width", "5", "--height", "5", "--mines", "0"), "not a number of mines"),
        (("rename", "a b"), "not a player name (2 to 20 of A-Z a-z 0-9 _ -): 'a b'"),
        (("register", "x"), "not a player name"),
    ]
    for args, words in usage:
        done = cli(*args, check=False)
        assert done.returncode == 2, (args, done.stderr)
        assert done.stderr.startswith("minesweeper: ") and words in done.stderr, done.stderr
        assert done.stderr.count("\n") == 1, done.stderr
    for url in ("notaurl", "ftp://host", "http://"):
        done = cli("--url", url, "new", check=False, url=False)
        assert done.returncode == 2, (url, done.stderr)
        assert f"not a service URL (http://HOST[:PORT] or https://...): '{url}'" in done.stderr
    assert cli("show", game_id).stdout.count("version 0") == 1, "nothing was sent"
    # Without a terminal, play says so as race does: a mistake of how it was run.
    for verb in ("play",):
        done = cli(verb, check=False)
        assert done.returncode == 2 and "needs a terminal" in done.stderr, done.stderr
        assert done.stderr.startswith("minesweeper: ") and done.stderr.count("\n") == 1


def test_show_defaults_to_the_last_game_made_here(cli: Any, cli_env: dict[str, str]) -> None:
    first = new_game(cli, "--seed", "320").game.id
    second = new_game(cli, "--preset", "intermediate").game.id
    assert first != second
    out = cli("show").stdout
    assert out.count("#" * 16) == 16, "the intermediate board, made last"
    assert msgspec.json.decode(cli("show", "--json").stdout, type=GameView).id == second
    # The player registered since is kept in the same file, and is no game.
    cli("register", unique_name())
    assert msgspec.json.decode(cli("show", "--json").stdout, type=GameView).id == second
    none = Path(cli_env["MINESWEEPER_TOKENS"]).with_name("none.json")
    empty = {**cli_env, "MINESWEEPER_TOKENS": str(none)}
    nothing = subprocess.run([*command(), "show"], env=empty, capture_output=True, text=True,
                             timeout=60)
    assert nothing.returncode == 2 and "no game made or played here yet" in nothing.stderr


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


def test_ctrl_c_stops_a_watch_with_status_130(
    live_server: str, cli_env: dict[str, str]
) -> None:
    """As ``play`` and ``race``: an interrupted command says so in its status."""
    with Client(live_server) as client:
        game = client.new_game("beginner")
    proc = watch(live_server, cli_env, game.id, "--json")
    try:
        assert proc.stdout is not None and proc.stdout.readline()  # the snapshot: watching
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 130, err


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
    assert lines[-2].startswith("The player hit a mine after ")  # told as the player's end
    assert lines[-1].startswith("clicks 3 (") and lines[-1].endswith("  unassisted")
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


# ---- hints, pauses, replays, leaderboards, daily boards ------------------------------------


def test_hint(cli: Any, live_server: str) -> None:
    game_id = new_game(cli, "--seed", "310").game.id
    out = cli("hint", game_id).stdout.splitlines()
    assert out[0] == "hint: (4, 4) is safe: the first click never hits a mine"
    assert out[1:10] == ["#" * 9] * 9
    cli("reveal", game_id, *map(str, FIRST))
    hint = msgspec.json.decode(cli("hint", game_id, "--json").stdout, type=Hint)
    with Client(live_server) as client:
        view = client.get(game_id)
    assert view.board[hint.y][hint.x] == "#" and hint.kind in ("safe", "mine", "guess")
    assert view.stats.hints == 2 and view.stats.assisted
    wrong = cli("hint", game_id, "--token", "nope", check=False)
    assert wrong.returncode == 1 and "(forbidden)" in wrong.stderr


def test_pause_and_resume(cli: Any, live_server: str) -> None:
    game_id = new_game(cli, "--seed", "311").game.id
    cli("reveal", game_id, *map(str, FIRST))
    with Client(live_server) as client:
        board = client.get(game_id).board
        out = cli("pause", game_id).stdout
        assert out.startswith("v2 pause: clock stopped, board hidden  playing  mines left 10")
        paused = client.get(game_id)
        assert paused.paused and all(set(row) == {"#"} for row in paused.board)
        refused = cli("reveal", game_id, "0", "0", check=False)
        assert refused.returncode == 1 and "(paused)" in refused.stderr
        for command_ in ("hint", "flag"):
            args = [game_id] if command_ == "hint" else [game_id, "0", "0"]
            assert "(paused)" in cli(command_, *args, check=False).stderr
        diff = msgspec.json.decode(cli("resume", game_id, "--json").stdout, type=Diff)
        assert (diff.version, diff.move.action, diff.move.x, diff.move.y) == (3, "resume",
                                                                              None, None)
        assert client.get(game_id).board == board
        out = cli("pause", game_id, "--json").stdout
        assert msgspec.json.decode(out, type=Diff).move.action == "pause"
        out = cli("resume", game_id).stdout
        assert out.startswith("v5 resume: clock running, board shown")
        assert "\n".join(board) in out  # the board is back, and printed


def test_replay_after_a_loss(cli: Any, live_server: str) -> None:
    with Client(live_server) as client:
        mines = mines_of(client, seed=312, preset="beginner")
    name = unique_name("cli")
    cli("register", name)
    game_id = new_game(cli, "--seed", "312").game.id
    mx, my = sorted(mines)[-1]
    cli("flag", game_id, str(mx), str(my), "--mark", "flag")  # before the clock starts
    cli("reveal", game_id, *map(str, FIRST))
    early = cli("replay", game_id, check=False)
    assert early.returncode == 1 and "(game_in_progress)" in early.stderr
    cli("pause", game_id)
    cli("resume", game_id)
    fx, fy = fatal = sorted(mines)[0]
    cli("reveal", game_id, *map(str, fatal))
    lines = cli("replay", game_id).stdout.splitlines()
    assert re.fullmatch(rf"game {game_id}  beginner 9x9, 10 mines  lost in \d+\.\ds", lines[0])
    assert lines[1] == f"player {name}  seed 312"
    assert lines[2] == "5 moves (time from the first reveal):"
    moves = [line.split() for line in lines[3:8]]
    assert [m[0] for m in moves] == ["v1", "v2", "v3", "v4", "v5"]
    assert [m[2:] for m in moves] == [["flag", f"{mx},{my}", "(flag)"], ["reveal", "4,4"],
                                      ["pause"], ["resume"], ["reveal", f"{fx},{fy}"]]
    times = [float(m[1].rstrip("s")) for m in moves]
    assert times[0] < 0 and times[1] == 0.0 and times == sorted(times)
    assert lines[8] == "mines (* mine, . safe, X the fatal click):"
    layout = lines[9:18]
    assert {(x, y) for y, row in enumerate(layout) for x, c in enumerate(row) if c in "*X"} \
        == mines
    assert layout[fy][fx] == "X" and "".join(layout).count("X") == 1
    assert lines[18] == f"the fatal click at {fx},{fy} was a mistake: a cell was certainly safe"
    assert lines[19].startswith("clicks 3 (") and lines[19].endswith("unassisted")
    replay = msgspec.json.decode(cli("replay", game_id, "--json").stdout, type=Replay)
    assert replay.fatal is not None and not replay.fatal.forced_guess
    assert len(replay.moves) == 5 and replay.complete


def test_replay_of_a_forced_guess(cli: Any, live_server: str) -> None:
    with Client(live_server) as client:
        mines = mines_of(client, seed=313, preset="beginner", first_click="none")
    game_id = new_game(cli, "--seed", "313", "--first-click", "none").game.id
    x, y = sorted(mines)[-1]
    cli("reveal", game_id, str(x), str(y))
    out = cli("replay", game_id).stdout
    assert f"the fatal click at {x},{y} was a forced guess: no cell was certainly safe" in out
    assert "1 move (time from the first reveal):" in out


def test_leaderboard_after_a_win(cli: Any, live_server: str) -> None:
    name = unique_name("cli")
    bot = json.loads(cli("register", name, "--bot", "--json").stdout)
    with httpx.Client(base_url=live_server, timeout=30) as http:
        game_id, _ = solve.win(http, preset="beginner", player_token=bot["token"])
    board = msgspec.json.decode(
        cli("leaderboard", "beginner", "--bots", "--limit", "100", "--json").stdout,
        type=Leaderboard,
    )
    assert board.bot
    entry = next((e for e in board.entries if e.game_id == game_id), None)
    if entry is None:  # a board shared with other tests, full of faster times
        assert len(board.entries) == 100
        return
    assert entry.player_id == bot["player"]["id"]
    lines = cli("leaderboard", "beginner", "--bots", "--limit", "100").stdout.splitlines()
    assert lines[0] == "beginner, classic, bots: best times"
    assert lines[1].split() == ["rank", "time", "3BV", "3BV/s", "player", "when"]
    row = lines[1 + entry.rank].split()
    assert row[0] == str(entry.rank) and row[4] == name
    assert row[1] == f"{entry.elapsed_ms / 1000:.3f}s" and row[2] == str(entry.bbbv)
    assert " ".join(row[5:]) == entry.ended_at[:16].replace("T", " ")
    top = cli("leaderboard", "beginner", "--bots", "--limit", "1").stdout.splitlines()
    assert top[:3] == lines[:3] and len(top) == 3


def test_leaderboard_options(cli: Any) -> None:
    out = cli("leaderboard", "expert", "--no-guess", "--date", "2001-01-01").stdout
    assert out.splitlines() == ["daily board of 2001-01-01: expert, no-guess: best times",
                                "no wins yet"]
    today = datetime.now(UTC).date().isoformat()
    board = msgspec.json.decode(
        cli("leaderboard", "intermediate", "--date", "today", "--json").stdout, type=Leaderboard
    )
    assert board.date in (today, datetime.now(UTC).date().isoformat())
    assert (board.preset, board.no_guess) == ("intermediate", False)
    bad = cli("leaderboard", "expert", "--date", "yesterday", check=False)
    assert bad.returncode == 2 and "not a date" in bad.stderr
    assert cli("leaderboard", "huge", check=False).returncode == 2
    for limit in ("0", "1000", "ten"):
        wrong = cli("leaderboard", "expert", "--limit", limit, check=False)
        assert wrong.returncode == 2, limit
        assert wrong.stderr.startswith("minesweeper: argument --limit: not a number from 1 to 100")


def test_new_daily_and_no_guess(cli: Any, live_server: str) -> None:
    created = new_game(cli, "--daily", "beginner", "--no-guess")
    v = created.game
    assert v.daily == v.created_at[:10] and v.preset == "beginner" and v.no_guess
    assert v.player is None and v.status == "playing" and v.started_at is None
    out = cli("new", "--daily", "beginner", "--no-guess").stdout
    assert out.splitlines()[0].endswith("beginner 9x9, 10 mines  (token saved)")
    assert "\n".join(v.board) in out  # the day's board, the same start for everyone
    cli("reveal", created.game.id, *map(str, next(
        (x, y) for y, row in enumerate(v.board) for x, c in enumerate(row) if c == "0")))
    plain = new_game(cli, "--no-guess")
    assert plain.game.no_guess and plain.game.daily is None
    for extra in (["--seed", "1"], ["--preset", "expert"], ["--first-click", "safe"],
                  ["--width", "9"]):
        mixed = cli("new", "--daily", "expert", *extra, check=False)
        assert mixed.returncode == 2 and "--daily" in mixed.stderr
    # A name is a registered player's now: --player says where to go instead.
    gone = cli("new", "--player", "someone", check=False)
    assert gone.returncode == 2 and "minesweeper register" in gone.stderr


def test_watch_prints_pause_and_resume(live_server: str, cli_env: dict[str, str]) -> None:
    with Client(live_server) as client:
        mines = mines_of(client, seed=314, preset="beginner")
        game = client.new_game("beginner", seed=314)
        client.reveal(game, *FIRST)
        board = game.view.board
        proc = watch(live_server, cli_env, game.id, "--board")
        try:
            assert proc.stdout is not None
            assert proc.stdout.readline().startswith(f"game {game.id}")  # subscribed
            client.pause(game)
            client.resume(game)
            client.flag(game, *safe_cells(game, mines)[0])
            client.reveal(game, *sorted(mines)[0])
            out, err = proc.communicate(timeout=30)
        finally:
            proc.kill()
    assert proc.returncode == 0, err
    # What came before the pause may have been read with the first line: look from it on.
    lines = out.splitlines()
    paused = lines.index(next(line for line in lines if line.startswith("v2 pause")))
    assert lines[paused].startswith("v2 pause: clock stopped, board hidden  playing")
    assert lines[paused + 1:paused + 10] == ["#" * 9] * 9  # what a watcher sees while paused
    assert lines[paused + 11].startswith("playing (paused)  mines left 10")
    assert lines[paused + 12].startswith("v3 resume: clock running, board shown  playing")
    assert lines[paused + 13:paused + 22] == board
    assert any(line.startswith("v5 reveal") and "lost" in line for line in lines)
    assert lines[-2].startswith("The player hit a mine after ")  # told as the player's end
