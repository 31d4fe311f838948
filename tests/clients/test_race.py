"""``minesweeper race`` and ``minesweeper match`` in a pseudo-terminal, against an
opponent played through the SDK on a second service process."""

from __future__ import annotations

import re
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pexpect
import pytest
import redis
from minesweeper import Client, Game, NotStarted, text
from minesweeper.tokens import TokenStore

from tests.matches.conftest import LIMITS_OFF, mines_of
from tests.support.play import unique_name
from tests.support.servers import running_service

from .conftest import command
from .test_play import Terminal

SEEK = re.compile(r"seek ([0-9a-f]{32}): waiting for an opponent")


@pytest.fixture(scope="module")
def replicas(redis_url: str) -> Iterator[tuple[str, str]]:
    """Two service processes on the session's Redis, without rate limits (a race sends
    its moves as fast as keys come)."""
    with running_service(redis_url, **LIMITS_OFF) as one, \
            running_service(redis_url, **LIMITS_OFF) as two:
        yield one.url, two.url


@pytest.fixture
def store(redis_url: str) -> Iterator[redis.Redis]:
    r = redis.Redis.from_url(redis_url)
    try:
        yield r
    finally:
        r.close()


@pytest.fixture
def racers(cli_env: dict[str, str]) -> Iterator[list[Terminal]]:
    opened: list[Terminal] = []
    yield opened
    for t in opened:
        t.close()


def register(url: str, env: dict[str, str], *, bot: bool = False) -> tuple[str, str]:
    """A player registered with the command (its token saved): name and token."""
    name = unique_name("racer")
    done = subprocess.run([*command(), "register", name, "--url", url, *(["--bot"] * bot)],
                          env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    token = TokenStore(Path(env["MINESWEEPER_TOKENS"])).player(url)
    assert token is not None
    return name, token


def race(racers: list[Terminal], url: str, env: dict[str, str], *args: str) -> Terminal:
    t = Terminal(url, env, *args, verb="race")
    racers.append(t)
    return t


def play_out(client: Client, game: Game, mines: set[tuple[int, int]]) -> None:
    """Reveal every safe hidden cell of ``game`` once the race lets moves in."""
    v = game.view
    for y in range(v.height):
        for x in range(v.width):
            if (x, y) in mines or game[x, y] != "#":
                continue
            while True:
                try:
                    client.reveal(game, x, y)
                    break
                except NotStarted:
                    time.sleep(0.1)


def test_race_against_an_sdk_opponent(
    replicas: tuple[str, str], cli_env: dict[str, str], racers: list[Terminal],
    store: redis.Redis,
) -> None:
    one, two = replicas
    # Bots: keys sent as fast as a script sends them would hold a human's win off the
    # ratings, and the table below shows them.
    name, token = register(one, cli_env, bot=True)
    t = race(racers, one, cli_env, "--preset", "beginner")
    t.expect(SEEK.pattern)
    with Client(two, timeout=30) as b, Client(one, timeout=30, player_token=token) as a:
        bob = b.register(unique_name("bob"), bot=True)
        b.player_token = bob.token
        seek = b.seek("beginner", no_guess=True)
        assert seek.status == "matched" and seek.match_id is not None
        match_id = seek.match_id
        # Before the race: who the opponent is, then the countdown beside both seats.
        t.expect(f"matched: rated race, beginner 9x9, 10 mines, no-guess, 5 s a mine, "
                 f"match {match_id}")
        t.expect(f"against {bob.player.name} \\(new\\)")
        t.expect(r"time 0   starts in [123]")
        # The start, opened for every seat, counts in the progress from the countdown on;
        # the seats are ready until it is over.
        t.expect(rf"> {name}\s+new\s+[1-9]\d*/\d+\s+3BV  0 penalties\s+ready")
        theirs = b.match(match_id)
        mine = a.match(match_id)
        (their_game,) = [s.game_id for s in theirs.seats if s.player.id == bob.player.id]
        (my_game,) = [s.game_id for s in mine.seats if s.player.name == name]
        assert their_game is not None and my_game is not None
        mines = mines_of(store, their_game)
        assert mines == mines_of(store, my_game)  # the same board for both

        # Bob blunders once: the terminal shows his penalty live, counts only.
        t.expect(r"time \d+   racing")
        bobs = Game(b.get(their_game), bob.token)
        mine_cell = sorted(mines)[0]
        while True:
            try:
                b.reveal(bobs, *mine_cell)
                break
            except NotStarted:
                time.sleep(0.1)
        t.expect(rf"  {bob.player.name}\s+new\s+\d+/\d+\s+3BV  1 penalty\s+playing")

        # The terminal player clears the board with keys.
        board = a.get(my_game).board
        t.cursor = (4, 4)
        for y, row in enumerate(board):
            for x, c in enumerate(row):
                if c == "#" and (x, y) not in mines:
                    t.go(x, y)
                    t.send(" ")
        t.expect(r"won: waiting for the others")
        t.expect("arrows/wasd look around  q quit")  # no resigning a race that is won
        assert a.get(my_game).status == "won"

        # Bob finishes second; the result table shows places, times and ratings.
        play_out(b, bobs, mines)
        t.expect("race over")
        t.expect(rf">     1  {name}\s+\d+\.\ds\s+0  1500 -> \d+ \(\+\d+\)")
        t.expect(rf"      2  {bob.player.name}\s+\d+\.\ds\s+1  1500 -> \d+ \(-\d+\)")
        out = t.quit()
        # Back on the normal screen, the table stays.
        assert re.search(rf">     1  {name}\s+\d+\.\ds\s+0  1500 -> \d+ \(\+\d+\)", out)
        end = b.match(match_id)
        assert end.status == "finished"
        places = {s.player.name: s.place for s in end.seats}
        assert places == {name: 1, bob.player.name: 2}
    # The profile shows the race rating and the match first among the last games.
    done = subprocess.run([*command(), "profile", "--url", one], env=cli_env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    rating = r"^rating \(race\): \d+ \+/- \d+, 1 game, provisional$"
    assert re.search(rating, done.stdout, re.M), done.stdout
    last = done.stdout.split("last games:\n", 1)[1].splitlines()[0]
    assert re.search(rf"won .* match, beginner no-guess  {match_id}$", last), last


def test_ctrl_c_while_waiting_cancels_the_seek(
    replicas: tuple[str, str], cli_env: dict[str, str], racers: list[Terminal],
) -> None:
    one, _ = replicas
    register(one, cli_env)
    t = race(racers, one, cli_env, "--preset", "intermediate", "--guess")
    seek_id = t.expect(SEEK.pattern).group(1)
    with Client(one, timeout=30) as client:
        assert client.get_seek(seek_id).status == "waiting"
        t.send("\x03")
        t.expect(f"seek {seek_id} cancelled")
        t.child.expect(pexpect.EOF)
        t.child.close()
        assert t.child.exitstatus == 130
        assert client.get_seek(seek_id).status == "cancelled"


def test_race_usage_and_refusals(
    replicas: tuple[str, str], cli_env: dict[str, str]
) -> None:
    one, _ = replicas

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*command(), *args, "--url", one], env=cli_env,
                              capture_output=True, text=True, timeout=60)

    nobody = run("race")
    assert nobody.returncode == 2 and "minesweeper register" in nobody.stderr
    assert len(nobody.stderr.strip().splitlines()) == 1
    register(one, cli_env)
    piped = run("race")  # stdin and stdout are pipes here
    assert piped.returncode == 2 and "needs a terminal" in piped.stderr
    assert run("race", "--preset", "huge").returncode == 2
    unknown = run("match", "0" * 32)
    assert unknown.returncode == 1 and "(not_found)" in unknown.stderr
    assert len(unknown.stderr.strip().splitlines()) == 1


def test_waiting_for_a_match_to_fill_says_who_is_seated_once(
    replicas: tuple[str, str], cli_env: dict[str, str], racers: list[Terminal],
) -> None:
    """The socket sends the match again after its auth: the line is said once anyway,
    and again only when somebody else sits down."""
    one, two = replicas
    name, _ = register(one, cli_env)
    with Client(two, timeout=30) as b:
        alice = b.register(unique_name("alice"))
        b.player_token = alice.token
        match = b.new_match("race", "beginner", seats=3, rated=False)
        t = Terminal(one, cli_env, match.id, verb="match")
        racers.append(t)
        t.expect(f"2 seated \\({alice.player.name}, {name}\\)")
        with pytest.raises(pexpect.TIMEOUT):
            t.child.expect("seated", timeout=2)
        with Client(one, timeout=30) as c:
            carol = c.register(unique_name("carol"))
            c.player_token = carol.token
            c.join_match(match.id)
        t.expect(r"starts in [123]")
        t.send("\x03")
        t.child.expect(pexpect.EOF)


def test_a_coop_match_speaks_of_the_team_not_a_race(
    replicas: tuple[str, str], cli_env: dict[str, str], racers: list[Terminal],
) -> None:
    one, two = replicas
    register(one, cli_env)
    with Client(two, timeout=30) as b:
        alice = b.register(unique_name("alice"))
        b.player_token = alice.token
        match = b.new_match("coop", "beginner", seats=2)
        t = Terminal(one, cli_env, match.id, verb="match")
        racers.append(t)
        t.expect(r"starts in [123]")
        t.expect(r"time \d+   playing together")
        t.expect("q q leave/quit")
        t.send("q")
        t.expect("q again leaves the game, the team plays on")
        t.send("q")
        t.expect(re.escape(text.resigned(match)))  # the screen stays, for the team's end
        assert f"you left the game; the team plays on: minesweeper match {match.id}" in t.quit()
        assert b.match(match.id).status == "playing"


def test_match_joins_a_private_race_and_a_spectator_watches(
    replicas: tuple[str, str], cli_env: dict[str, str], racers: list[Terminal], tmp_path: Path,
) -> None:
    one, two = replicas
    name, _ = register(one, cli_env)
    with Client(two, timeout=30) as b:
        alice = b.register(unique_name("alice"))
        b.player_token = alice.token
        match = b.new_match("race", "beginner", seats=2, rated=False)
        t = Terminal(one, cli_env, match.id, verb="match")
        racers.append(t)
        # Taking the last seat starts the match: the countdown, then the race.
        t.expect(f"against {alice.player.name}")
        t.expect(r"starts in [123]")
        t.expect(rf"  {alice.player.name}\s+new\s+[1-9]\d*/\d+\s+3BV  0 penalties\s+ready")
        assert b.match(match.id).status in ("countdown", "playing")
        # Somebody without a seat (and without a player) follows it as lines.
        nobody = {**cli_env, "MINESWEEPER_TOKENS": str(tmp_path / "nobody.json")}
        watcher = subprocess.Popen([*command(), "match", match.id, "--url", two], env=nobody,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            t.expect(r"time \d+   racing")
            t.send("q")
            t.expect("q again resigns the race")
            t.send("q")
            t.expect(re.escape(text.resigned(match)))
            assert f"you resigned; the race goes on: minesweeper match {match.id}" in t.quit()
            seats = {s.player.name: s.status for s in b.match(match.id).seats}
            assert seats == {name: "resigned", alice.player.name: "playing"}
            b.leave_match(match.id)
            out, err = watcher.communicate(timeout=60)
        finally:
            if watcher.poll() is None:
                watcher.kill()
                watcher.wait()
    assert watcher.returncode == 0, err
    assert err == "", "the spectator's socket closed with the match, quietly"
    lines = out.splitlines()
    assert lines[0].startswith(f"match {match.id}  race, beginner 9x9")
    assert any(line.startswith("v") and "resigned" in line and name in line for line in lines)
    assert "race over: race, beginner 9x9, 10 mines, no-guess, 5 s a mine" in lines
    # Alice asks for a rematch: watching the old match again names it, to be followed.
    with Client(two, timeout=30, player_token=alice.token) as c:
        rematch = c.rematch(match.id)
    again = subprocess.run([*command(), "match", match.id, "--url", one], env=nobody,
                           capture_output=True, text=True, timeout=60)
    assert again.returncode == 0, again.stderr
    assert again.stdout.splitlines()[-1] == (
        f"a rematch was asked for: minesweeper match {rematch.id} to watch it"
    ), again.stdout
    # The match's end ended both resigned seats' games: no mine was hit, and it says so.
    with Client(one, timeout=30) as c:
        game_id = next(s.game_id for s in c.match(match.id).seats if s.player.id == alice.player.id)
    done = subprocess.run([*command(), "watch", str(game_id), "--url", one], env=nobody,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "The match is over: the board was not cleared" in done.stdout
    assert "hit a mine" not in done.stdout


def finished_race(
    racers: list[Terminal], one: str, cli_env: dict[str, str], a: Client, b: Client,
    *others: Client,
) -> tuple[Terminal, str]:
    """A private race of ``b``'s player (who opens it), ``others`` and the terminal's
    (``a``'s), played to its end by everybody resigning: the terminal showing the
    result, and the match's id."""
    match = b.new_match("race", "beginner", seats=2 + len(others), rated=False)
    for other in others:
        other.join_match(match.id)
    t = Terminal(one, cli_env, match.id, verb="match")
    racers.append(t)
    t.expect(r"starts in [123]")  # the race is on the terminal's screen
    for player in (a, b, *others):
        player.leave_match(match.id)
    t.expect("race over")
    t.expect(re.escape(text.race_over()))  # "the race is over: r for a rematch, q to quit"
    t.expect(re.escape(text.RACE_OVER_KEYS))
    return t, match.id


def sdk_player(url: str, prefix: str) -> tuple[Client, str]:
    """A client of a newly registered player, and the player's name."""
    c = Client(url, timeout=30)
    player = c.register(unique_name(prefix))
    c.player_token = player.token
    return c, player.player.name


def test_r_asks_for_a_rematch_and_goes_on_in_it(
    replicas: tuple[str, str], cli_env: dict[str, str], racers: list[Terminal],
) -> None:
    one, two = replicas
    name, token = register(one, cli_env)
    b, bob = sdk_player(two, "bob")
    with b, Client(one, timeout=30, player_token=token) as a:
        t, old = finished_race(racers, one, cli_env, a, b)
        # r asks for it: the rematch waits for Bob, on the same screen.
        t.send("r")
        t.expect(rf">\s{name}\s+new  seated")
        t.expect(rf"  {bob}\s+new  not seated yet")
        t.expect(re.escape(text.rematch_waiting([bob])))
        t.expect(re.escape(text.REMATCH_WAITING_KEYS))
        made = a.match(old)
        assert made.rematch_id is not None
        waiting = a.match(made.rematch_id)
        assert waiting.status == "waiting" and [s.player.name for s in waiting.seats] == [name]

        # Bob joins through the SDK: it starts, and the terminal goes straight on in it,
        # counting down beside both seats.
        new = b.rematch(old)
        assert new.id == made.rematch_id and new.status == "countdown"
        assert [s.player.name for s in new.seats] == [name, bob]
        t.expect(re.escape(text.rematch_started(new.id)))
        t.expect(r"time 0   starts in [123]")
        t.expect(rf"> {name}\s+new\s+[1-9]\d*/\d+\s+3BV  0 penalties\s+ready")
        t.expect(rf"  {bob}\s+new\s+[1-9]\d*/\d+\s+3BV  0 penalties\s+ready")
        t.expect(re.escape(text.rematch_started(new.id)))

        # The rematch's race is the terminal's: its own new board, and q q resigns it.
        t.expect(r"time \d+   racing")
        (mine,) = [s.game_id for s in a.match(new.id).seats if s.player.name == name]
        assert mine is not None and a.get(mine).status in ("ready", "playing")
        t.send("q")
        t.expect("q again resigns the race")
        t.send("q")
        t.expect(re.escape(text.resigned(new)))
        assert f"minesweeper match {new.id}" in t.quit()
        seats = {s.player.name: s.status for s in b.match(new.id).seats}
        assert seats == {name: "resigned", bob: "playing"}
        b.leave_match(new.id)


def test_a_resigned_seat_stays_for_the_result_and_its_rematch(
    replicas: tuple[str, str], cli_env: dict[str, str], racers: list[Terminal],
) -> None:
    """q q resigns but keeps the screen: once the others are done the result shows,
    and r asks for the rematch there."""
    one, two = replicas
    name, _ = register(one, cli_env)
    b, bob = sdk_player(two, "bob")
    with b:
        match = b.new_match("race", "beginner", seats=2, rated=False)
        t = Terminal(one, cli_env, match.id, verb="match")
        racers.append(t)
        t.expect(r"time \d+   racing")
        t.send("qq")
        t.expect(re.escape(text.resigned(match)))
        t.expect(r"resigned: waiting for the others")
        seats = {s.player.name: s.status for s in b.match(match.id).seats}
        assert seats == {name: "resigned", bob: "playing"}
        b.leave_match(match.id)
        t.expect("race over")
        t.expect(re.escape(text.RACE_OVER_KEYS))
        t.send("r")
        t.expect(re.escape(text.rematch_waiting([bob])))
        rematch_id = b.match(match.id).rematch_id
        assert rematch_id is not None
        t.send("q")  # gives the rematch's seat back, and leaves
        t.child.expect(pexpect.EOF)
        assert b.match(rematch_id).status == "finished"


def test_another_players_rematch_is_offered_and_r_joins_it(
    replicas: tuple[str, str], cli_env: dict[str, str], racers: list[Terminal], tmp_path: Path,
) -> None:
    one, two = replicas
    name, token = register(one, cli_env)
    b, bob = sdk_player(two, "bob")
    with b, Client(one, timeout=30, player_token=token) as a:
        t, old = finished_race(racers, one, cli_env, a, b)
        # Bob asks first: the result stays, and the screen says so in words.
        new = b.rematch(old)
        assert new.status == "waiting"
        t.expect(re.escape(text.race_over(bob)))  # "bob wants a rematch: r to join"
        assert text.race_over(bob) == f"{bob} wants a rematch: r to join"
        t.expect(re.escape(text.RACE_OVER_KEYS))
        # Somebody watching the finished match now is told where its players went.
        nobody = {**cli_env, "MINESWEEPER_TOKENS": str(tmp_path / "nobody.json")}
        watched = subprocess.run([*command(), "match", old, "--url", two], env=nobody,
                                 capture_output=True, text=True, timeout=60)
        assert watched.returncode == 0, watched.stderr
        assert watched.stdout.splitlines()[-1] == text.rematch_asked(new.id)
        # r joins it; the last seat starts it, and the screen counts down in it.
        t.send("r")
        t.expect(re.escape(text.rematch_started(new.id)))
        t.expect(r"starts in [123]")
        t.expect(rf"  {bob}\s+new\s+[1-9]\d*/\d+\s+3BV  0 penalties\s+ready")
        t.expect(rf"> {name}\s+new\s+[1-9]\d*/\d+\s+3BV  0 penalties\s+ready")
        started = b.match(new.id)
        assert started.status in ("countdown", "playing")
        assert [s.player.name for s in started.seats] == [bob, name]
        for player in (a, b):
            player.leave_match(new.id)
        t.expect("race over")
        t.expect(re.escape(text.RACE_OVER_KEYS))  # and a rematch of the rematch on offer
        out = t.quit()
    assert "race over: race, beginner 9x9" in out


def test_a_rematch_that_started_without_the_terminal_is_said_in_words(
    replicas: tuple[str, str], cli_env: dict[str, str], racers: list[Terminal],
) -> None:
    one, two = replicas
    _, token = register(one, cli_env)
    b, bob = sdk_player(two, "bob")
    c, carol = sdk_player(one, "carol")
    with b, c, Client(one, timeout=30, player_token=token) as a:
        t, old = finished_race(racers, one, cli_env, a, b, c)
        new = b.rematch(old)
        t.expect(re.escape(text.race_over(bob)))
        c.rematch(old)
        b.start_match(new.id)  # Bob, in the first seat, does not wait for the terminal
        t.send("r")
        t.expect(re.escape(text.rematch_refused("", "match_started")))
        t.expect(re.escape(text.RACE_OVER_KEYS))  # still the old match's result
        out = t.quit()
        assert "Traceback" not in out
        assert [s.player.name for s in b.match(new.id).seats] == [bob, carol]
        for player in (b, c):
            player.leave_match(new.id)


def test_ctrl_c_in_the_race_leaves_the_screen_and_says_how_to_get_back(
    replicas: tuple[str, str], cli_env: dict[str, str], racers: list[Terminal],
) -> None:
    """Ctrl-C during the countdown or the race quits the program, the terminal put back,
    and says the seat plays on and how to get back to it; the seat is not resigned."""
    one, two = replicas
    name, _ = register(one, cli_env)
    b, _ = sdk_player(two, "ctrlc")
    with b:
        match = b.new_match("race", "beginner", seats=2, rated=False)
        t = Terminal(one, cli_env, match.id, verb="match")
        racers.append(t)
        t.expect(r"starts in [123]")
        t.send("\x03")
        t.child.expect(pexpect.EOF)
        t.child.close()
        assert t.child.exitstatus == 130
        out = str(t.child.before)
        assert "\x1b[?1049l" in out  # back on the normal screen
        assert "your seat is still playing" in out
        assert f"minesweeper match {match.id} to get back to it" in out
        seats = {s.player.name: s.status for s in b.match(match.id).seats}
        assert seats[name] == "playing"
        # And back: the seat's screen again.
        again = Terminal(one, cli_env, match.id, verb="match")
        racers.append(again)
        again.expect(r"time \d+   racing")
        again.send("\x03")
        again.child.expect(pexpect.EOF)
        again.child.close()
        assert again.child.exitstatus == 130
        b.leave_match(match.id)
