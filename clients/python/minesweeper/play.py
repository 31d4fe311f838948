"""``minesweeper play``: the game in a terminal, with cursor keys and colours.

Moves go over the game's WebSocket, which also brings moves made elsewhere (another
terminal, the web page) and keeps the clock in step with the server's timestamps.
No curses: the whole screen (laid out by :mod:`minesweeper.frame` to fit the terminal)
is redrawn with ANSI sequences after every change. Without the game's token it watches:
no move keys, and the end is told as the player's.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import sys
import termios
import time
import tty
from collections.abc import Awaitable, Callable, Coroutine, Iterator
from typing import Any, TypeVar

import httpx
import msgspec
from websockets.exceptions import InvalidHandshake

from . import text
from .aio import AsyncClient
from .errors import ApiError
from .frame import Scene, frame
from .game import Game
from .live import LiveGame
from .tokens import TokenStore
from .wire import Action, Diff, Heartbeat, Hint, Hinted, Reset, Snapshot

__all__ = ["play"]

T = TypeVar("T")

_ARROWS = {b"A": "up", b"B": "down", b"C": "right", b"D": "left"}
# What a watcher cannot do (moving the cursor and starting a game of one's own it can).
_MOVE_KEYS = {"space", "enter", "f", "c", "h", "p"}
_STEPS = {
    "up": (0, -1), "down": (0, 1), "left": (-1, 0), "right": (1, 0),
    "w": (0, -1), "s": (0, 1), "a": (-1, 0), "d": (1, 0),
}
# The network failing under a request: the service is not there, or stopped answering.
_UNREACHABLE = (OSError, httpx.TransportError, TimeoutError)
RETRY_S = 1.0  # how often a new live connection is tried once the last could not resume
OFFLINE = "connection lost: reconnecting... (keys that play are refused until it is back)"
REFUSED_OFFLINE = "not sent: the connection is down, reconnecting... (try again once it is back)"
# A key's request still unanswered after this long shows "sending..." (keys stay live).
SENDING_AFTER_S = 0.3
# What a key asks of the service, run in the order the keys came, one at a time.
Job = Callable[[], Coroutine[Any, Any, None]]


def reason(exc: BaseException) -> str:
    """Why a request failed, in words, also for an exception that has none (a timeout)."""
    if str(exc):
        return str(exc)
    if isinstance(exc, TimeoutError | httpx.TimeoutException):
        return "the service did not answer in time"
    return f"the service could not be reached ({type(exc).__name__})"


def keys(data: bytes) -> Iterator[str]:
    """Key names in a chunk of terminal input: ``up`` ... ``left`` or the character."""
    i = 0
    while i < len(data):
        if data[i : i + 1] == b"\x1b" and data[i + 1 : i + 2] in (b"[", b"O"):
            arrow = _ARROWS.get(data[i + 2 : i + 3])
            if arrow:
                yield arrow
            i += 3
            continue
        yield {b"\r": "enter", b"\n": "enter", b" ": "space", b"\x04": "q"}.get(
            data[i : i + 1], chr(data[i]).lower()
        )
        i += 1


class Terminal:
    """Keys without echo or line buffering, the alternate screen, a hidden cursor;
    everything put back on exit."""

    def __init__(self) -> None:
        self.fd = sys.stdin.fileno()
        self._saved: list[Any] = []

    def __enter__(self) -> Terminal:
        self._saved = termios.tcgetattr(self.fd)
        tty.setcbreak(self.fd)
        self.write("\x1b[?1049h\x1b[?25l")
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.write("\x1b[0m\x1b[?25h\x1b[?1049l")
        termios.tcsetattr(self.fd, termios.TCSADRAIN, self._saved)

    @staticmethod
    def write(data: str) -> None:
        sys.stdout.write(data)
        sys.stdout.flush()

    @staticmethod
    def size() -> tuple[int, int]:
        columns, lines = shutil.get_terminal_size()
        return columns, lines


class Player:
    def __init__(self, client: AsyncClient, game: Game, tokens: TokenStore) -> None:
        self.client = client
        self.game = game
        self.tokens = tokens
        self.colour = text.use_colour(sys.stdout)
        self.hidden = "·" if (sys.stdout.encoding or "").lower().startswith("utf") else "."
        self.cursor = (game.view.width // 2, game.view.height // 2)
        self.origin = (0, 0)
        self.message = ""
        self.offset_ms = 0  # server clock minus ours
        self.live: LiveGame | None = None
        self.hint: Hint | None = None  # shown until the board changes
        self.done = False
        self._offline_shown = False
        self._switch = asyncio.Event()
        # The keys' requests waiting their turn (kind, job): moves, hints, pauses...
        self._jobs: asyncio.Queue[tuple[str, Job]] = asyncio.Queue()
        self.sending = False  # a request has been waiting for its answer a while
        self._move_failed = False

    # ---- the loop -------------------------------------------------------------------------

    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        pressed: asyncio.Queue[bytes] = asyncio.Queue()
        fd = sys.stdin.fileno()
        loop.add_reader(fd, lambda: pressed.put_nowait(os.read(fd, 1024)))
        loop.add_signal_handler(signal.SIGWINCH, self.draw)
        try:
            while not self.done:
                self._switch.clear()
                self.sync_clock(self.game.view.server_time)
                live = self.client.connect(self.game)
                try:
                    await live.open()
                except BaseException:
                    await live.aclose()
                    raise
                self.live = live
                self._jobs = asyncio.Queue()  # nothing pressed for the last game goes on
                try:
                    self.draw()
                    jobs = [self.follow(), self.tick(), self.work(), *self.companions()]
                    tasks = [asyncio.create_task(job) for job in jobs]
                    try:
                        await self.read_keys(pressed)
                    finally:
                        for task in tasks:
                            task.cancel()
                            with contextlib.suppress(BaseException):
                                await task
                finally:
                    await self.live.aclose()
        finally:
            loop.remove_reader(fd)
            loop.remove_signal_handler(signal.SIGWINCH)

    def stop(self) -> None:
        """Leave the screen now, whatever is still being sent."""
        self.done = True
        self._switch.set()

    def later(self, kind: str, job: Job) -> None:
        """Run ``job`` (a request a key asked for) after those asked for before it: keys
        stay live while it waits for the service."""
        self._jobs.put_nowait((kind, job))
        if self.sending:
            self.draw()

    async def work(self) -> None:
        """The keys' requests, one at a time in the order pressed. One that waits long
        shows "sending..."; a move that fails drops the moves pressed after it (they
        were meant to follow it), and says so."""
        while True:
            _, job = await self._jobs.get()
            task = asyncio.create_task(job())
            try:
                await asyncio.wait({task}, timeout=SENDING_AFTER_S)
                if not task.done():
                    self.sending = True
                    self.draw()
                await task
            finally:
                self.sending = False
                if not task.done():
                    task.cancel()
            if self._move_failed:
                self._move_failed = False
                dropped = 0
                kept: list[tuple[str, Job]] = []
                while not self._jobs.empty():
                    each = self._jobs.get_nowait()
                    if each[0] == "move":
                        dropped += 1
                    else:
                        kept.append(each)
                for each in kept:
                    self._jobs.put_nowait(each)
                if dropped:
                    s = "" if dropped == 1 else "s"
                    self.message += f" ({dropped} move{s} pressed after it not sent)"
            self.draw()

    def companions(self) -> list[Coroutine[Any, Any, None]]:
        """What else runs beside the game while the terminal is open."""
        return []

    async def read_keys(self, pressed: asyncio.Queue[bytes]) -> None:
        """Keys until the player is done, or the game is switched for another (by a key,
        or by a companion: a race's rematch that starts)."""
        switched = asyncio.create_task(self._switch.wait())
        try:
            while not self.done and not self._switch.is_set():
                chunk = asyncio.create_task(pressed.get())
                await asyncio.wait((chunk, switched), return_when=asyncio.FIRST_COMPLETED)
                if not chunk.done():
                    chunk.cancel()  # a get cancelled takes nothing off the queue
                    return
                for key in keys(chunk.result()):
                    await self.press(key)
                    if self.done or self._switch.is_set():
                        return
        finally:
            switched.cancel()

    async def follow(self) -> None:
        """Moves from anywhere, the clock, resets; a new live connection when the one
        there was could not resume (the service away longer than it waits)."""
        while True:
            live = self.live
            assert live is not None
            try:
                async for message in live:
                    if isinstance(message, Snapshot):
                        self.game.view = message.game
                        self.sync_clock(message.game.server_time)
                    elif isinstance(message, Diff):
                        await self.absorb(message)
                    elif isinstance(message, Heartbeat):
                        self.sync_clock(message.server_time)
                    elif isinstance(message, Reset):
                        self.message = f"this game was reset; it goes on as {message.next_id}"
                    elif isinstance(message, Hinted) and self.watching:
                        n = message.hints
                        self.message = (f"the player used a hint ({n} so far): "
                                        "the game is not ranked")
                    self.draw()
                return
            except ApiError as exc:
                self.message = f"live updates stopped: {exc}"
                self.draw()
                return
            except _UNREACHABLE:
                pass
            self.show_offline(True)
            await live.aclose()
            self.live = await self.reconnect()

    async def reconnect(self) -> LiveGame:
        """A new live connection to the game, tried every :data:`RETRY_S` until the service
        answers (its snapshot then brings the screen up to date)."""
        while True:
            await asyncio.sleep(RETRY_S)
            live = self.client.connect(self.game)
            try:
                await live.open()
                return live
            except (ApiError, InvalidHandshake, *_UNREACHABLE):
                await live.aclose()
            except BaseException:
                await live.aclose()
                raise

    @property
    def offline(self) -> bool:
        """Whether the game's live connection is down (resuming, or a new one awaited)."""
        return self.live is None or not self.live.connected

    def show_offline(self, offline: bool) -> None:
        """Say the connection was lost, or that it is back (once: the tick watches it)."""
        if offline == self._offline_shown:
            return
        self._offline_shown = offline
        if offline:
            self.message = OFFLINE
        elif self.message in (OFFLINE, REFUSED_OFFLINE):
            self.message = "reconnected"
        self.draw()

    async def tick(self) -> None:
        shown = self.elapsed_ms() // 1000
        while True:
            await asyncio.sleep(0.1)
            self.show_offline(self.offline)
            now = self.elapsed_ms() // 1000
            if now != shown:
                shown = now
                self.draw()

    # ---- keys -----------------------------------------------------------------------------

    @property
    def watching(self) -> bool:
        return self.game.token is None

    async def press(self, key: str) -> None:
        view = self.game.view
        if self.watching and key in _MOVE_KEYS:
            self.message = "watching only: no token for this game here (pass --token)"
        elif key in _STEPS:
            dx, dy = _STEPS[key]
            x, y = self.cursor
            x, y = min(max(x + dx, 0), view.width - 1), min(max(y + dy, 0), view.height - 1)
            self.cursor = (x, y)
        elif key in ("space", "enter", "f", "c"):
            action: Action = "flag" if key == "f" else "chord" if key == "c" else "reveal"
            at = self.cursor  # where the cursor was when the key was pressed
            self.later("move", lambda: self.move(action, at))
        elif key == "h":
            self.later("hint", self.ask_hint)
        elif key == "p":
            self.later("pause", self.toggle_pause)
        elif key == "n":
            self.later("new", self.new_game)
        elif key in ("q", "\x1b"):
            self.done = True
            return
        self.draw()

    def refused(self) -> bool:
        """Whether this terminal cannot play right now, with the reason in the message."""
        if self.watching:
            self.message = "watching only: no token for this game here (pass --token)"
        elif self.game.finished:
            self.message = "the game is over: n for a new game, q to quit"
        elif self.offline:
            # Refused at once, not kept to be sent when the service is back.
            self.message = REFUSED_OFFLINE
        else:
            return False
        return True

    async def move(self, action: Action, at: tuple[int, int] | None = None) -> None:
        if self.refused():
            return
        if self.game.paused:
            self.message = "the game is paused: p to resume"
            return
        assert self.live is not None
        play = {"reveal": self.live.reveal, "flag": self.live.flag, "chord": self.live.chord}
        x, y = self.cursor if at is None else at
        diff = await self.attempt(play[action](x, y), "the move did not go through")
        if diff is None:
            self._move_failed = True
            return
        self.message = ""
        await self.absorb(diff)

    async def attempt(self, call: Awaitable[T], failure: str) -> T | None:
        """The answer to ``call``; or ``None``, with the reason in the message."""
        try:
            return await call
        except ApiError as exc:
            self.message = exc.detail
        except _UNREACHABLE as exc:
            self.message = f"{failure}: {reason(exc)}"
        return None

    async def absorb(self, diff: Diff) -> None:
        self.sync_clock(diff.move.at)
        if diff.cells and diff.version > self.game.view.version:
            self.hint = None  # the board changed (a move's diff comes twice: once is enough)
        if not self.game.apply(diff):
            await self.client.get(self.game)

    async def ask_hint(self) -> None:
        """Ask the service for the next cell: the cursor goes to it, the cell is lit by
        kind and the message says why. The game then counts as assisted."""
        if self.refused():
            return
        if self.game.paused:
            self.message = "the game is paused: p to resume"
            return
        hint = await self.attempt(self.client.hint(self.game), "no hint")
        if hint is None:
            return
        self.hint = hint
        self.cursor = (hint.x, hint.y)
        self.message = text.hint_line(hint)

    async def toggle_pause(self) -> None:
        """Pause (the clock stops, the board is hidden everywhere) or resume."""
        if self.refused():
            return
        change = self.client.resume if self.game.paused else self.client.pause
        diff = await self.attempt(change(self.game), "the game could not be paused or resumed")
        if diff is None:
            return
        self.sync_clock(diff.move.at)
        self.message = "paused: p to resume" if self.game.paused else ""

    async def new_game(self) -> None:
        old = self.game
        try:
            if old.token is not None:
                game = await self.client.reset(old)
            else:
                v = old.view
                game = await self.client.new_game(
                    v.preset, width=None if v.preset else v.width,
                    height=None if v.preset else v.height, mines=None if v.preset else v.mines,
                    first_click=v.first_click, no_guess=v.no_guess,
                    question_marks=v.question_marks,
                )
        except (ApiError, *_UNREACHABLE) as exc:
            self.message = f"no new game: {exc}"
            return
        assert game.token is not None
        with contextlib.suppress(OSError):  # playing on matters more than remembering
            self.tokens.put(game.id, game.token, self.client.base_url)
        self.game = game
        self.hint = None
        self.message = "new game"
        x, y = self.cursor
        self.cursor = (min(x, game.view.width - 1), min(y, game.view.height - 1))
        self._switch.set()

    # ---- the clock ------------------------------------------------------------------------

    def sync_clock(self, stamp: str) -> None:
        self.offset_ms = text.millis(stamp) - time.time_ns() // 1_000_000

    def elapsed_ms(self) -> int:
        """The game's time now: the service's count as of the view, plus the time since
        then unless the game is over or paused (paused time does not count)."""
        v = self.game.view
        if v.started_at is None:
            return 0
        if v.ended_at is not None or v.paused:
            return v.elapsed_ms
        server_now = time.time_ns() // 1_000_000 + self.offset_ms
        return v.elapsed_ms + max(server_now - text.millis(v.server_time), 0)

    # ---- the screen -----------------------------------------------------------------------

    def scene(self) -> Scene:
        """What the screen shows now."""
        return Scene(
            view=self.game.view, cursor=self.cursor, origin=self.origin,
            seconds=self.elapsed_ms() // 1000, watching=self.watching, colour=self.colour,
            hidden=self.hidden, hint=self.hint, message=self.shown_message(),
        )

    def shown_message(self) -> str:
        """The message, or while a request waits for its answer, that it is being sent."""
        if not self.sending:
            return self.message
        waiting = self._jobs.qsize()
        more = f" ({waiting} more waiting)" if waiting else ""
        return f"sending...{more} (q quits)"

    def draw(self) -> None:
        columns, lines = Terminal.size()
        out, self.origin = frame(self.scene(), columns, lines)
        # Home, each line then clear to its end, then clear below: no flicker, no leftovers.
        Terminal.write("\x1b[H" + "\x1b[K\n".join(out) + "\x1b[K\x1b[J")


async def _play(
    url: str, game_id: str | None, token: str | None, options: dict[str, Any], tokens: TokenStore,
    timeout: float = 10.0, playing: list[str] | None = None,
) -> str:
    # New games are the player's the options name, if any.
    async with AsyncClient(url, player_token=options.get("player_token"),
                           timeout=timeout) as client:
        if game_id:
            game = Game(await client.get(game_id), token)
        else:
            game = await client.new_game(**options)
            assert game.token is not None
            with contextlib.suppress(OSError):
                tokens.put(game.id, game.token, client.base_url)
        player = Player(client, game, tokens)
        if playing is not None:
            playing.append(game.id)
        with Terminal():
            await player.run()
        v = player.game.view
        outcome = text.outcome(v, watching=player.watching)
        if outcome is None:
            # The time as the screen's clock had it, not as of the last move.
            now = msgspec.structs.replace(v, elapsed_ms=player.elapsed_ms())
            return f"game {v.id}: {text.status_line(now)}"
        return f"game {v.id}: {outcome}\n{text.stats_line(v.stats)}"


def play(
    url: str, game_id: str | None, token: str | None, options: dict[str, Any], tokens: TokenStore,
    timeout: float = 10.0,
) -> None:
    """Run the terminal game until the player quits."""
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise SystemExit("minesweeper play needs a terminal; see the other commands for scripts")
    playing: list[str] = []
    try:
        print(asyncio.run(_play(url, game_id, token, options, tokens, timeout, playing)))
    except KeyboardInterrupt:
        # The id is how the player gets back to the game, as the line after q says.
        for left in playing:
            print(f"game {left}: interrupted; 'minesweeper play {left}' goes on with it")
        raise
