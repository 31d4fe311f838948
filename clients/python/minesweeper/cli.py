"""``minesweeper``: play and script games from a terminal.

    minesweeper register ada
    minesweeper new --preset expert
    minesweeper show
    minesweeper reveal GAME 4 4
    minesweeper hint GAME
    minesweeper watch GAME
    minesweeper replay GAME
    minesweeper leaderboard expert
    minesweeper profile
    minesweeper play
    minesweeper race --preset expert
    minesweeper match MATCH
    minesweeper leave MATCH

After ``register`` the player's token is saved, and the games made here are theirs.

Exit status: 0; 1 when the service refused or could not be reached; 2 for a mistake on
the command line. Every error is one line on stderr: ``minesweeper: what went wrong``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import re
import sys
from collections.abc import AsyncGenerator, Callable, Sequence
from datetime import UTC, date, datetime
from typing import Any, NoReturn, get_args

import httpx
import msgspec
from websockets.exceptions import InvalidHandshake

from . import text
from ._http import DEFAULT_URL
from .aio import AsyncClient
from .client import Client
from .errors import ApiError
from .game import Game, apply_diff
from .live import LiveMessage
from .play import reason
from .tokens import TokenStore
from .wire import CreatedGame, Diff, GameView, Heartbeat, PresetName, Reset, Snapshot

__all__ = ["main"]

_json = msgspec.json.Encoder()


PRESETS = list(get_args(PresetName))
RETRY_S = 1.0  # how often `watch` tries to get a lost connection back
DEFAULT_TIMEOUT = 10.0  # seconds an answer of the service is waited for


class Stopped(Exception):
    """A command that ended before doing what it was for: its line and exit status."""

    def __init__(self, line: str, status: int) -> None:
        super().__init__(line)
        self.status = status


class Usage(Exception):
    """A mistake on the command line that argparse cannot see."""


class _Parser(argparse.ArgumentParser):
    """argparse, with its mistakes said as every other error is (and exit status 2)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"minesweeper: {message} (see '{self.prog} --help')\n")


_GAME_ID = re.compile(r"[0-9a-f]{32}")


def _game_id(value: str) -> str:
    """GAME: a game's id, 32 hex digits."""
    if not _GAME_ID.fullmatch(value):
        raise argparse.ArgumentTypeError(f"not a game id (32 hex digits): {value!r}")
    return value


def _bounded(what: str, low: int, high: int) -> Callable[[str], int]:
    """An integer argument from ``low`` to ``high``, as the service takes it."""

    def parse(value: str) -> int:
        try:
            number = int(value)
        except ValueError:
            number = low - 1
        if not low <= number <= high:
            raise argparse.ArgumentTypeError(f"not {what} ({low} or more): {value!r}")
        return number

    parse.__name__ = what  # argparse names the type in its messages
    return parse


_coordinate = _bounded("a cell coordinate", 0, 1_000_000)
_seed = _bounded("a seed", 0, 2**63 - 1)
_size = _bounded("a board size", 2, 1_000_000)
_mine_count = _bounded("a number of mines", 1, 1_000_000)
_NAME = re.compile(r"[A-Za-z0-9_\-]{2,20}")


def _name(value: str) -> str:
    """NAME: a player's name, 2 to 20 of A-Z a-z 0-9 _ -."""
    if not _NAME.fullmatch(value):
        raise argparse.ArgumentTypeError(
            f"not a player name (2 to 20 of A-Z a-z 0-9 _ -): {value!r}")
    return value


def _url(value: str) -> str:
    """--url: the service's address, http:// or https:// and a host."""
    scheme, sep, rest = value.partition("://")
    if scheme not in ("http", "https") or not sep or not rest.strip("/"):
        raise argparse.ArgumentTypeError(
            f"not a service URL (http://HOST[:PORT] or https://...): {value!r}")
    return value


def _match_id(value: str) -> str:
    """MATCH: a match's id, 32 hex digits."""
    if not _GAME_ID.fullmatch(value):
        raise argparse.ArgumentTypeError(f"not a match id (32 hex digits): {value!r}")
    return value


def _player_id(value: str) -> str:
    """PLAYER: a player's id, 32 hex digits (the service finds players by id only)."""
    if not _GAME_ID.fullmatch(value):
        raise argparse.ArgumentTypeError(
            f"not a player id (32 hex digits): {value!r}; a player's id is the player_id "
            f"of 'minesweeper leaderboard PRESET --json', or shown by register")
    return value


def _limit(value: str) -> int:
    """``--limit``: how many places, 1 to 100."""
    try:
        limit = int(value)
    except ValueError:
        limit = 0
    if not 1 <= limit <= 100:
        raise argparse.ArgumentTypeError(f"not a number from 1 to 100: {value!r}")
    return limit


def _seconds(value: str) -> float:
    """``--timeout``: seconds, more than 0."""
    try:
        seconds = float(value)
    except ValueError:
        seconds = 0.0
    if not 0 < seconds <= 86400 or seconds != seconds:
        raise argparse.ArgumentTypeError(f"not a number of seconds (more than 0): {value!r}")
    return seconds


def _date(value: str) -> str:
    """``--date``: YYYY-MM-DD, or ``today`` (in UTC, as the service dates daily boards)."""
    if value == "today":
        return datetime.now(UTC).date().isoformat()
    try:
        return date.fromisoformat(value).isoformat()
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a date (YYYY-MM-DD): {value!r}") from None


# ---- arguments ---------------------------------------------------------------------------


def _parser() -> argparse.ArgumentParser:
    # --url and --json work before or after the command.
    shared = _Parser(add_help=False)
    shared.add_argument(
        "--url", default=argparse.SUPPRESS, type=_url,
        help=f"service URL (default $MINESWEEPER_URL or {DEFAULT_URL})",
    )
    shared.add_argument(
        "--json", action="store_true", default=argparse.SUPPRESS,
        help="print the service's JSON instead of text",
    )
    shared.add_argument(
        "--timeout", type=_seconds, metavar="SECONDS", default=argparse.SUPPRESS,
        help=f"how long to wait for each answer of the service (default "
             f"$MINESWEEPER_TIMEOUT or {DEFAULT_TIMEOUT:g})",
    )
    parser = _Parser(
        prog="minesweeper", parents=[shared],
        description="Play Minesweeper against a Minesweeper service.",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(name: str, help: str) -> argparse.ArgumentParser:
        return commands.add_parser(name, parents=[shared], help=help, description=help)

    def board_options(p: argparse.ArgumentParser) -> None:
        p.add_argument("--preset", choices=PRESETS)
        p.add_argument("--width", type=_size, help="with --height and --mines: a custom board")
        p.add_argument("--height", type=_size)
        p.add_argument("--mines", type=_mine_count)
        p.add_argument("--seed", type=_seed, help="the same seed gives the same board")
        p.add_argument("--first-click", choices=["zero", "safe", "none"],
                       help="what the first reveal is sure to hit (default: zero)")
        p.add_argument("--no-guess", action="store_true",
                       help="a board that can be solved without guessing")
        p.add_argument("--question-marks", action="store_true",
                       help="flag cycles hidden -> flag -> question")
        # Gone: a name is a registered player's now. Kept to say so.
        p.add_argument("--player", help=argparse.SUPPRESS)
        p.add_argument("--anonymous", action="store_true",
                       help="not the registered player's game: counted nowhere")
        p.add_argument("--daily", choices=PRESETS, metavar="PRESET",
                       help="today's board of PRESET: the same mines for everyone, a start "
                            "already open, a leaderboard of its own")

    def game_argument(p: argparse.ArgumentParser, *, token: bool = True) -> None:
        p.add_argument("game", metavar="GAME", type=_game_id, help="game id")
        if token:
            p.add_argument("--token", help="the game's token (default: the one saved by new)")

    def move_arguments(p: argparse.ArgumentParser) -> None:
        game_argument(p)
        p.add_argument("x", type=_coordinate, help="column, 0 at the left")
        p.add_argument("y", type=_coordinate, help="row, 0 at the top")
        p.add_argument("--if-match", type=int, metavar="VERSION",
                       help="only if the game is still at VERSION")
        p.add_argument("--idempotency-key", metavar="KEY",
                       help="a retry with the same key is applied once")

    board_options(command("new", "start a game and save its token"))
    show = command("show", "print a game's board")
    show.add_argument("game", metavar="GAME", type=_game_id, nargs="?",
                      help="game id (default: the last game made here)")
    move_arguments(command("reveal", "reveal a cell"))
    flag = command("flag", "flag a cell (again: unflag)")
    move_arguments(flag)
    flag.add_argument("--mark", choices=["flag", "question", "none"],
                      help="set this mark instead of cycling")
    move_arguments(command("chord", "reveal around a number whose mines are all flagged"))
    game_argument(command("reset", "start a new game with the same settings"))
    game_argument(command("hint", "suggest the next cell and say why (the game becomes "
                                  "assisted and leaves the leaderboards)"))
    game_argument(command("pause", "stop the clock and hide the board"))
    game_argument(command("resume", "start the clock again and show the board"))
    game_argument(command("replay", "a finished game: its moves with their times, the mines, "
                                    "and whether a losing click was a forced guess"),
                  token=False)
    board = command("leaderboard", "the best times of players' won games played without hints")
    board.add_argument("preset", metavar="PRESET", choices=PRESETS,
                       help=", ".join(PRESETS))
    board.add_argument("--no-guess", action="store_true", help="the no-guess boards' times")
    board.add_argument("--bots", action="store_true", help="the bots' board, not the humans'")
    board.add_argument("--date", type=_date, metavar="YYYY-MM-DD",
                       help="the daily board of that day (or 'today')")
    board.add_argument("--limit", type=_limit, default=10, metavar="N",
                       help="how many places, 1 to 100 (default 10)")
    watch = command("watch", "print a game's moves as they happen")
    game_argument(watch, token=False)
    watch.add_argument("--since", type=int, metavar="VERSION",
                       help="start with the moves after VERSION")
    watch.add_argument("--follow", action="store_true",
                       help="keep going after the end, following resets to the next game")
    watch.add_argument("--board", action="store_true", help="print the board after every move")
    register = command("register", "register a player and save the token: the games made "
                                    "here are then theirs, in their stats and on leaderboards")
    register.add_argument("name", metavar="NAME", nargs="?", type=_name,
                          help="2 to 20 of A-Z a-z 0-9 _ - (none: a guest's made-up name)")
    register.add_argument("--bot", action="store_true",
                          help="the player is a program: ranked only against programs")
    profile = command("profile", "a player's stats and last games (yours by default)")
    profile.add_argument("player", metavar="PLAYER", nargs="?", type=_player_id,
                         help="a player id (32 hex digits)")
    rename = command("rename", "give the registered player a new name")
    rename.add_argument("name", metavar="NAME", type=_name, help="2 to 20 of A-Z a-z 0-9 _ -")
    play = command("play", "play in the terminal (a new game, or GAME)")
    play.add_argument("game", metavar="GAME", type=_game_id, nargs="?",
                      help="a game to go on with")
    play.add_argument("--token", help="the game's token (default: the saved one)")
    board_options(play)
    race = command("race", "find an opponent and race them on identical boards, in the "
                           "terminal (a registered player's rated race)")
    race.add_argument("--preset", choices=PRESETS, default="beginner",
                      help="the board (default: beginner)")
    race.add_argument("--guess", action="store_true",
                      help="a board that may need guesses (default: a no-guess board)")
    match = command("match", "take a seat in a private match and race in it; watch it "
                             "when it started without you")
    match.add_argument("match", metavar="MATCH", help="match id")
    leave = command("leave", "give up your seat in a match without its screen: freed "
                             "before the start, resigned after it")
    leave.add_argument("match", metavar="MATCH", type=_match_id, help="match id")
    return parser


# ---- commands ----------------------------------------------------------------------------


def _timeout_from_env() -> float:
    given = os.environ.get("MINESWEEPER_TIMEOUT")
    if not given:
        return DEFAULT_TIMEOUT
    try:
        return _seconds(given)
    except argparse.ArgumentTypeError as exc:
        raise Usage(f"MINESWEEPER_TIMEOUT: {exc}") from None


class Cli:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        given = getattr(args, "url", None) or os.environ.get("MINESWEEPER_URL")
        self.url: str = given or DEFAULT_URL
        self.json: bool = getattr(args, "json", False)
        self.timeout: float = getattr(args, "timeout", None) or _timeout_from_env()
        self.tokens = TokenStore()
        self.colour = text.use_colour(sys.stdout)

    def out(self, line: str = "") -> None:
        print(line, flush=True)

    def dump(self, value: Any) -> None:
        self.out(_json.encode(value).decode())

    def token(self) -> str:
        token: str | None = self.args.token or self.tokens.get(self.args.game)
        if token is None:
            raise Usage(f"no saved token for game {self.args.game}; pass --token")
        return token

    def board(self, client: Client, game_id: str, mark: tuple[int, int] | None = None) -> None:
        board, _, status = client.board_text(game_id).rstrip("\n").rpartition("\n\n")
        for line in text.board_lines(board.splitlines(), self.colour, mark):
            self.out(line)
        self.out()
        self.out(status)

    def show_view(self, view: GameView) -> None:
        board = ["#" * view.width] * view.height if view.paused else view.board
        for line in text.board_lines(board, self.colour):
            self.out(line)
        self.out()
        self.out(text.status_line(view))

    def player_token(self) -> str:
        token = self.tokens.player(self.url)
        if token is None:
            raise Usage(f"no player registered here for {self.url}: run minesweeper register")
        return token

    def new_game_options(self) -> dict[str, Any]:
        a = self.args
        if a.player is not None:
            raise Usage("--player is gone: run 'minesweeper register NAME' once, and the games "
                        "made here are that player's")
        custom = (a.width, a.height, a.mines)
        if a.preset and any(v is not None for v in custom):
            raise Usage("give --preset or --width/--height/--mines, not both")
        if a.daily and (a.preset or any(v is not None for v in (*custom, a.seed, a.first_click))):
            raise Usage("--daily is the day's own board: no --preset, size, --seed or "
                        "--first-click with it")
        if any(v is not None for v in custom) and any(v is None for v in custom):
            raise Usage("a custom board needs --width, --height and --mines together")
        return dict(
            preset=a.preset, width=a.width, height=a.height, mines=a.mines, seed=a.seed,
            first_click=a.first_click or "zero", no_guess=a.no_guess,
            question_marks=a.question_marks, daily=a.daily,
            player_token=None if a.anonymous else self.tokens.player(self.url),
        )

    def created(self, game: Game) -> None:
        assert game.token is not None
        saved = "token saved"
        try:
            self.tokens.put(game.id, game.token, self.url)
        except OSError as exc:
            print(f"minesweeper: could not save the token in {self.tokens.path}: {exc}",
                  file=sys.stderr)
            saved = f"token {game.token}"
        if self.json:
            self.dump(CreatedGame(game.view, game.token))
            return
        self.out(f"game {game.id}  {text.describe(game.view)}  ({saved})")
        self.show_view(game.view)

    # one method per command

    def new(self, client: Client) -> None:
        self.created(client.new_game(**self.new_game_options()))

    def show(self, client: Client) -> None:
        game_id = self.args.game or self.tokens.last(self.url)
        if game_id is None:
            raise Usage("no game made or played here yet: give its GAME id")
        if self.json:
            self.dump(client.get(game_id))
        else:
            self.board(client, game_id)

    def reset(self, client: Client) -> None:
        self.created(client.reset(self.args.game, token=self.token()))

    def move(self, client: Client) -> None:
        a = self.args
        act: Callable[..., Diff] = getattr(client, a.command)
        extra = {"mark": a.mark} if a.command == "flag" and a.mark else {}
        diff = act(
            a.game, a.x, a.y, token=self.token(), if_match=a.if_match,
            idempotency_key=a.idempotency_key, **extra,
        )
        if self.json:
            self.dump(diff)
            return
        self.out(text.diff_line(diff))
        self.board(client, a.game)

    reveal = flag = chord = move

    def hint(self, client: Client) -> None:
        hint = client.hint(self.args.game, token=self.token())
        if self.json:
            self.dump(hint)
            return
        self.out(text.hint_line(hint))
        self.board(client, self.args.game, mark=(hint.x, hint.y))

    def pause(self, client: Client) -> None:
        a = self.args
        act = client.pause if a.command == "pause" else client.resume
        diff = act(a.game, token=self.token())
        if self.json:
            self.dump(diff)
            return
        self.out(text.diff_line(diff))
        if a.command == "resume":
            self.board(client, a.game)

    resume = pause

    def replay(self, client: Client) -> None:
        replay = client.replay(self.args.game)
        if self.json:
            self.dump(replay)
            return
        for line in text.replay_lines(replay):
            self.out(line)

    def leaderboard(self, client: Client) -> None:
        a = self.args
        board = client.leaderboard(
            a.preset, no_guess=a.no_guess, date=a.date, limit=a.limit, bot=a.bots
        )
        if self.json:
            self.dump(board)
            return
        for line in text.leaderboard_lines(board):
            self.out(line)

    def register(self, client: Client) -> None:
        created = client.register(self.args.name, bot=self.args.bot)
        saved = "token saved: the games made here are theirs"
        try:
            self.tokens.put_player(self.url, created.token)
        except OSError as exc:
            print(f"minesweeper: could not save the token in {self.tokens.path}: {exc}",
                  file=sys.stderr)
            saved = f"token {created.token}"
        if self.json:
            self.dump(created)
            return
        kind = "bot" if created.player.bot else "player"
        self.out(f"{kind} {created.player.name} ({created.player.id})  ({saved})")

    def profile(self, client: Client) -> None:
        a = self.args
        player = client.player(a.player) if a.player else client.me(
            player_token=self.player_token()
        )
        if self.json:
            self.dump(player)
            return
        for line in text.profile_lines(player):
            self.out(line)

    def rename(self, client: Client) -> None:
        player = client.rename(self.args.name, player_token=self.player_token())
        if self.json:
            self.dump(player)
            return
        self.out(f"now called {player.name}")

    def leave(self, client: Client) -> None:
        token = self.player_token()
        me = client.me(player_token=token)
        match = client.leave_match(self.args.match, player_token=token)
        if self.json:
            self.dump(match)
            return
        seat = next((s for s in match.seats if s.player.id == me.id), None)
        if seat is None:
            self.out(f"left match {match.id} before its start: the seat is free")
            return
        what = "left the team's game of" if match.mode == "coop" else "resigned from"
        after = "it is over" if match.status == "finished" else "it goes on without you"
        self.out(f"{what} match {match.id}: {after}")

    async def watch(self) -> None:
        a = self.args
        game_id, since = a.game, a.since
        async with AsyncClient(self.url, timeout=self.timeout) as client:
            while game_id is not None:
                game_id = await self._watch(client, game_id, since)
                since = None

    async def _watch(self, client: AsyncClient, game_id: str, since: int | None) -> str | None:
        """Print one game's messages until it ends; the next game's id with ``--follow``."""
        async with contextlib.aclosing(self._messages(client, game_id, since)) as messages:
            return await self._print(client, game_id, messages)

    async def _messages(
        self, client: AsyncClient, game_id: str, since: int | None
    ) -> AsyncGenerator[LiveMessage, None]:
        """The game's messages, the connection got back as often as it is lost (said on
        stderr) once it was there; a first connection that fails raises."""
        version, connected, lost = since, False, False
        while True:
            try:
                async with client.connect(game_id, since=version, retries=1) as live:
                    connected = True
                    if lost:
                        print("minesweeper: reconnected", file=sys.stderr, flush=True)
                        lost = False
                    async for message in live:
                        if isinstance(message, Snapshot):
                            version = message.game.version
                        elif isinstance(message, Diff):
                            version = message.version
                        yield message
                return
            except (OSError, InvalidHandshake, TimeoutError):
                if not connected:
                    raise
                if not lost:
                    print("minesweeper: connection lost: reconnecting...", file=sys.stderr,
                          flush=True)
                    lost = True
                await asyncio.sleep(RETRY_S)

    async def _print(
        self, client: AsyncClient, game_id: str, messages: AsyncGenerator[LiveMessage, None]
    ) -> str | None:
        a = self.args
        view: GameView | None = None
        async for message in messages:
            if self.json and not isinstance(message, Heartbeat):
                self.dump(message)
            if isinstance(message, Reset):
                if not self.json:
                    self.out(f"reset: play goes on in game {message.next_id}")
                return message.next_id if a.follow else None
            if isinstance(message, Snapshot):
                view, status = message.game, message.game.status
                if not self.json:
                    self.out(f"game {game_id}  {text.describe(view)}")
                    self.show_view(view)
            elif isinstance(message, Diff):
                view, status = await self._follow(client, game_id, view, message), message.status
                if not self.json:
                    self.out(text.diff_line(message))
                    if a.board:
                        self.show_view(view)
            else:
                continue
            if status in ("won", "lost") and not a.follow:
                if not self.json:
                    if isinstance(message, Diff) and not a.board:
                        self.show_view(view)
                    self.out(text.outcome(view, watching=True) or "")
                    self.out(text.stats_line(view.stats))
                return None
        return None

    async def _follow(
        self, client: AsyncClient, game_id: str, view: GameView | None, diff: Diff
    ) -> GameView:
        """The view after ``diff``; fetched when there is none to update (``--since``)."""
        if view is not None and diff.version <= view.version:
            return view
        if view is not None and diff.version == view.version + 1:
            return apply_diff(view, diff)
        return await client.get(game_id)

    def play(self) -> None:
        from .play import play

        a = self.args
        if self.json:
            raise Usage("--json: play is a game on the screen, with no JSON to print; "
                        "'minesweeper watch GAME --json' prints a game's moves")
        if not (sys.stdin.isatty() and sys.stdout.isatty()):
            raise Usage("minesweeper play needs a terminal; see the other commands for scripts")
        if text.dumb_terminal():
            raise Usage("minesweeper play needs a terminal that can draw a screen, and "
                        "TERM=dumb cannot; see the other commands for scripts")
        token = a.token or (self.tokens.get(a.game) if a.game else None)
        options = {} if a.game else self.new_game_options()
        play(self.url, a.game, token, options, self.tokens, self.timeout)


    def race(self) -> None:
        from . import race

        a = self.args
        match_id = getattr(a, "match", None)
        if self.json:
            if match_id is None:
                raise Usage("--json: race is played on the screen, with no JSON to print; "
                            "'minesweeper match MATCH --json' prints a match's updates")
            asyncio.run(race.print_json(self.url, self.tokens.player(self.url), match_id,
                                        self.dump, self.timeout))
            return
        token = self.tokens.player(self.url)
        if match_id is None:
            token = self.player_token()
        terminal = sys.stdin.isatty() and sys.stdout.isatty() and not text.dumb_terminal()
        if match_id is None and not terminal:
            raise Usage("minesweeper race needs a terminal that can draw a screen"
                        + (" (TERM=dumb cannot)" if text.dumb_terminal() else ""))
        try:
            last = asyncio.run(race.run(
                self.url, token, self.tokens, self.out, preset=getattr(a, "preset", "beginner"),
                no_guess=not getattr(a, "guess", False), match_id=match_id, terminal=terminal,
                timeout=self.timeout,
            ))
        except race.Cancelled as exc:
            raise Stopped(str(exc), 130) from None
        except race.Unpaired as exc:
            raise Stopped(str(exc), 1) from None
        if last:
            self.out(last)

    match = race


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        cli = Cli(args)
    except Usage as exc:
        print(f"minesweeper: {exc}", file=sys.stderr)
        return 2
    try:
        if args.command == "watch":
            asyncio.run(cli.watch())
        elif args.command == "play":
            cli.play()
        elif args.command in ("race", "match"):
            cli.race()
        else:
            with Client(cli.url, timeout=cli.timeout) as client:
                getattr(cli, args.command)(client)
    except ApiError as exc:
        p = exc.problem
        print(f"minesweeper: {p.detail} ({p.code})", file=sys.stderr)
        return 1
    except Stopped as exc:
        print(f"minesweeper: {exc}", file=sys.stderr)
        return exc.status
    except Usage as exc:
        print(f"minesweeper: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # Whoever read the output stopped (``| head``): not the service's fault. Point
        # stdout at nothing so flushing it on the way out raises nothing more.
        with contextlib.suppress(OSError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except (httpx.TimeoutException, TimeoutError) as exc:
        if isinstance(exc, httpx.ConnectTimeout):
            print(f"minesweeper: cannot reach {cli.url}: no connection within "
                  f"{cli.timeout:g} s", file=sys.stderr)
        else:
            # Connected, but the service did not answer: not "cannot reach".
            print(f"minesweeper: no answer from {cli.url} within {cli.timeout:g} s "
                  f"(--timeout sets how long to wait)", file=sys.stderr)
        return 1
    except (httpx.TransportError, OSError) as exc:
        print(f"minesweeper: cannot reach {cli.url}: {reason(exc)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
