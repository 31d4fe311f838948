"""``minesweeper race`` and ``minesweeper match``: an opponent found (or a private match
joined), the race played in the terminal beside every opponent's live progress, and the
table of places, times and rating changes at the end.

Waiting for a match to start is plain lines on the normal screen, and Ctrl-C then gives
the place up (the seek is deleted, the seat freed) rather than leaving it to expire. Ctrl-C on the
race screen quits the program but not the race: the seat plays on, and the line left
on the normal screen says how to get back to it. A seat resigned with ``q q`` stays on
the screen until the match ends, for its result and the rematch. The
race itself is :mod:`.play`'s terminal game on the seat's own board, with the match's
socket feeding the opponents' counts: nothing of their boards is ever sent.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import time
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator
from typing import Any, TypeVar

import msgspec
from websockets.exceptions import WebSocketException

from . import text
from .aio import AsyncClient
from .errors import ApiError, error_for
from .frame import Scene
from .game import Game
from .play import _UNREACHABLE, Player, Terminal
from .tokens import TokenStore
from .wire import (
    Error,
    MatchHeartbeat,
    MatchServerMessage,
    MatchSnapshot,
    MatchStatus,
    MatchUpdate,
    MatchView,
    PresetName,
    Seat,
)

__all__ = ["RACE_HELP", "Cancelled", "Racer", "Unpaired", "find_match", "run"]

T = TypeVar("T")
Say = Callable[[str], None]

RACE_HELP = "arrows/wasd move  space reveal  f flag  c chord  q q resign/quit"
COOP_HELP = "arrows/wasd move  space reveal  f flag  c chord  q q leave/quit"
# Once the seat's race is over (cleared, lost, resigned, or the match ended).
RACE_OVER_HELP = "arrows/wasd look around  q quit"
POLL_S = 0.5  # how often a waiting seek is polled: polling also keeps it alive
RECONNECTS = 8  # tries to get a dropped match socket back before giving up


class Cancelled(Exception):
    """The player gave up waiting with Ctrl-C; the place they held is given back."""


class Unpaired(Exception):
    """The seek ended without an opponent (it expired)."""


@contextlib.contextmanager
def _interruptible() -> Iterator[asyncio.Event]:
    """Ctrl-C sets the event instead of raising in the middle of a request, so that
    what was being waited for can be given back before leaving."""
    loop = asyncio.get_running_loop()
    pressed = asyncio.Event()
    loop.add_signal_handler(signal.SIGINT, pressed.set)
    try:
        yield pressed
    finally:
        loop.remove_signal_handler(signal.SIGINT)


async def _unless(pressed: asyncio.Event, job: Coroutine[Any, Any, T]) -> T | None:
    """``job``'s result, or ``None`` when Ctrl-C came first (the job is then cancelled)."""
    task = asyncio.create_task(job)
    stop = asyncio.create_task(pressed.wait())
    await asyncio.wait((task, stop), return_when=asyncio.FIRST_COMPLETED)
    stop.cancel()
    if task.done():
        return task.result()
    task.cancel()
    with contextlib.suppress(BaseException):
        await task
    return None


async def find_match(
    client: AsyncClient, preset: PresetName, no_guess: bool, say: Say
) -> str:
    """Seek an opponent until paired: the match's id. Ctrl-C cancels the seek and
    raises :class:`Cancelled`; a seek that ends unpaired raises :class:`Unpaired`."""
    with _interruptible() as pressed:
        seek = await client.seek(preset, no_guess=no_guess)
        if seek.status == "waiting":
            board = f"{preset}{' no-guess' if no_guess else ''}"
            say(f"seek {seek.id}: waiting for an opponent for a rated {board} race "
                f"(Ctrl-C cancels)")
        while seek.status == "waiting":
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(pressed.wait(), POLL_S)
            if pressed.is_set():
                seek = await client.cancel_seek(seek.id)
                if seek.status == "matched" and seek.match_id is not None:
                    # Paired in the meantime: resign, so the opponent is not left waiting.
                    with contextlib.suppress(ApiError, *_UNREACHABLE):
                        await client.leave_match(seek.match_id)
                raise Cancelled(f"seek {seek.id} cancelled")
            seek = await client.get_seek(seek.id)
    if seek.status != "matched" or seek.match_id is None:
        raise Unpaired(f"seek {seek.id} {seek.status} before an opponent was found")
    return seek.match_id


async def _started(client: AsyncClient, match_id: str, say: Say) -> MatchView:
    """The match once it has left ``waiting``, saying who sat down meanwhile (once: the
    socket sends the match again after its auth)."""
    said = ""
    async for message in client.watch_match(match_id):
        if isinstance(message, Error):
            raise error_for(message.problem)
        if isinstance(message, MatchSnapshot | MatchUpdate):
            match = message.match
            if match.status != "waiting":
                return match
            names = ", ".join(s.player.name for s in match.seats)
            line = f"{len(match.seats)} seated ({names}); the match starts when it is full"
            if line != said:
                say(line)
                said = line
    raise ConnectionError(f"the socket of match {match_id} closed")


def _seat(match: MatchView, player_id: str) -> Seat | None:
    return next((s for s in match.seats if s.player.id == player_id), None)


class Racer(Player):
    """The terminal game on the seat's own board, with the match around it: the
    countdown, every seat's counts as they change, and the result at the end; then, if
    the players ask for it, the rematch on the same screen."""

    def __init__(
        self, client: AsyncClient, game: Game, tokens: TokenStore, match: MatchView, me: str
    ) -> None:
        super().__init__(client, game, tokens)
        self.match = match
        self.me = me
        self.resigning = False
        # While a rematch waits for its players: the finished match it is the rematch of.
        self.previous: MatchView | None = None
        # Whether a rematch of the finished match was asked for, and by whom when it was
        # another player and the update said so (their name), until this terminal joins it.
        self.offered = False
        self.offered_by: str | None = None

        self.interrupted = False

    @property
    def what(self) -> str:
        """What the players play: a race, or (co-op) one game together."""
        return "game" if self.match.mode == "coop" else "race"

    def interrupt(self) -> None:
        """Ctrl-C: leave the screen (the seat stays as it is)."""
        self.interrupted = True
        self.stop()

    def companions(self) -> list[Coroutine[Any, Any, None]]:
        return [self.follow_match(self.match.id)]

    async def follow_match(self, match_id: str) -> None:
        """The match's updates (the client resumes them after a dropped socket); after
        its end, the rematch a player asks for; a rematch waited for, until it starts."""
        try:
            messages = self.client.watch_match(match_id, retries=RECONNECTS, until_finished=False)
            async for message in messages:
                if self.match.id != match_id:
                    return  # gone on to the rematch
                if isinstance(message, Error):
                    self.message = f"match updates stopped: {message.problem.detail}"
                    self.draw()
                    return
                if isinstance(message, MatchHeartbeat):
                    self.sync_clock(message.server_time)
                    continue
                if not isinstance(message, MatchSnapshot | MatchUpdate):
                    continue
                if message.match.version >= self.match.version:
                    self.match = message.match
                    self.sync_clock(self.match.server_time)
                m = self.match
                if m.status == "finished":
                    if m.rematch_id is not None and not self.offered:
                        asker = message.seat if isinstance(message, MatchUpdate) else None
                        if self.asked_by(m, asker) == self.me:
                            continue  # this terminal's own asking: it goes on by itself
                        self.offered = True
                        self.offered_by = self.asked_by(m, asker)
                    self.message = text.race_over(self.offered_by, offered=self.offered)
                elif m.status == "waiting" and self.previous is not None:
                    self.message = text.rematch_waiting(self.missing())
                elif self.previous is not None:  # the rematch started: its own board
                    await self.trying(self.enter(m))
                    self.draw()
                    return
                self.draw()
        except (WebSocketException, *_UNREACHABLE):
            pass
        self.message = "lost the match's updates"
        self.draw()

    def asked_by(self, match: MatchView, seat: int | None) -> str | None:
        """Who asked for the rematch of ``match``: this player's id when it was them,
        else the name of the player in the update's ``seat`` (``None``: not known)."""
        if seat is None or seat >= len(match.seats):
            return None
        player = match.seats[seat].player
        return self.me if player.id == self.me else player.name

    def missing(self) -> list[str]:
        """The players of the previous match not seated in its rematch yet."""
        if self.previous is None:
            return []
        seated = {s.player.id for s in self.match.seats}
        return [s.player.name for s in self.previous.seats if s.player.id not in seated]

    # ---- the rematch ------------------------------------------------------------------

    async def ask_rematch(self) -> None:
        """Ask for the rematch of the finished match (or join the one asked for): the
        screen goes on in it, waiting for the others or straight into the countdown."""
        if self.match.status == "waiting":
            self.message = text.rematch_waiting(self.missing())
            return
        await self.trying(self._ask_rematch())

    async def _ask_rematch(self) -> None:
        rematch = await self.client.rematch(self.match.id)
        if rematch.status == "waiting":
            self.previous, self.match = self.match, rematch
            self.offered, self.offered_by = False, None
            self.message = text.rematch_waiting(self.missing())
            self._switch.set()  # follow the rematch's socket now
        else:
            await self.enter(rematch)

    async def trying(self, job: Coroutine[Any, Any, None]) -> None:
        """``job``, a step into a rematch; what stopped it, if anything, in the message."""
        try:
            await job
        except ApiError as exc:
            self.message = text.rematch_refused(exc.detail, exc.problem.code)
        except _UNREACHABLE as exc:
            self.message = text.rematch_refused(str(exc) or "the service did not answer")

    async def enter(self, match: MatchView) -> None:
        """Go on in ``match``, a rematch that has started: its seat's own board."""
        seat = _seat(match, self.me)
        if seat is None or seat.game_id is None:  # the game of the seat, with the token
            match = await self.client.match(match.id)
            seat = _seat(match, self.me)
        if seat is None or seat.game_id is None:
            self.message = text.rematch_refused("", "match_started")
            return
        self.game = Game(await self.client.get(seat.game_id), self.game.token)
        self.match = match
        self.sync_clock(match.server_time)
        self.previous = self.offered_by = self.hint = None
        self.offered = self.resigning = False
        self.cursor = (self.game.view.width // 2, self.game.view.height // 2)
        self.message = text.rematch_started(match.id)
        self._switch.set()

    async def leave_rematch(self) -> None:
        """Give up the seat of a rematch still waiting, and leave."""
        if await self.attempt(self.client.leave_match(self.match.id), "not left") is not None:
            self.stop()

    # ---- the match's clock ------------------------------------------------------------

    def server_now(self) -> int:
        return time.time_ns() // 1_000_000 + self.offset_ms

    def elapsed_ms(self) -> int:
        """The race's time: below zero during the countdown, the seat's own time (with
        its penalties) once it finished."""
        seat, m = _seat(self.match, self.me), self.match
        if seat is not None and seat.time_ms is not None:
            return seat.time_ms
        if m.starts_at is None:
            return 0
        end = text.millis(m.ended_at) if m.ended_at is not None else self.server_now()
        return end - text.millis(m.starts_at)

    # ---- keys -------------------------------------------------------------------------

    def racing(self) -> bool:
        seat = _seat(self.match, self.me)
        return self.match.status != "finished" and seat is not None and seat.status == "playing"

    def refused(self) -> bool:
        if self.racing():
            return super().refused()
        if self.match.status == "finished":
            self.message = text.race_over(self.offered_by, offered=self.offered)
        elif self.match.status == "waiting":
            self.message = text.rematch_waiting(self.missing())
        else:
            self.message = text.resigned(self.match) if self.resigned() else (
                f"your {self.what} is over: q to quit")
        return True

    def resigned(self) -> bool:
        seat = _seat(self.match, self.me)
        return seat is not None and seat.status == "resigned"

    async def press(self, key: str) -> None:
        quitting = key in ("q", "\x1b")
        waiting = self.match.status == "waiting"
        if quitting and self.racing() and not self.resigning:
            self.resigning = True
            self.message = (
                "q again leaves the game, the team plays on (anything else plays on)"
                if self.match.mode == "coop" else
                "q again resigns the race (anything else plays on)"
            )
        elif quitting and self.racing():
            self.resigning = False
            self.later("resign", self.resign)
        elif quitting and waiting and self.previous is not None:
            self.later("leave", self.leave_rematch)
        elif key == "r" and not self.racing():
            self.later("rematch", self.ask_rematch)
        elif key in ("h", "p", "n"):
            self.message = "no hints, pauses or new games in a race"
        else:
            self.resigning = False
            await super().press(key)
            return
        self.draw()

    async def resign(self) -> None:
        """Resign (co-op: leave the game to the team) and stay: the result, and the
        rematch ``r`` asks for, can only come once the others are done."""
        match = await self.attempt(self.client.leave_match(self.match.id), "not resigned")
        if match is None:
            return
        if match.version >= self.match.version:
            self.match = match
        if self.match.status != "finished":
            self.message = text.resigned(self.match)

    # ---- the screen -------------------------------------------------------------------

    def scene(self) -> Scene:
        v, m = self.game.view, self.match
        seat = _seat(m, self.me)
        elapsed = self.elapsed_ms()
        if m.status == "finished":
            state = f"{self.what} over"
        elif m.status == "waiting":
            state = "rematch: waiting for the players"
        elif elapsed < 0:
            state = f"starts in {-(elapsed // 1000)}"
        elif seat is not None and seat.status != "playing":
            state = f"{seat.status}: waiting for the others"
        else:
            state = "playing together" if m.mode == "coop" else "racing"
        width = Terminal.size()[0] - 1  # the screen's: no line is as wide as the terminal
        if m.status == "finished":
            seats = text.result_lines(m, self.me, width)
        elif m.status == "waiting" and self.previous is not None:
            seats = text.rematch_seat_lines(m, self.previous, self.me)
            # The rematch's board is not dealt yet: the old one's place, all hidden.
            v = msgspec.structs.replace(
                v, board=["#" * v.width] * v.height, mines_left=v.mines, status="ready"
            )
        else:
            starting: MatchStatus = "countdown" if elapsed < 0 else "playing"
            seats = [text.seat_line(s, s.player.id == self.me, match=starting, width=width)
                     for s in m.seats]
        if m.status == "finished":
            keys = text.RACE_OVER_KEYS
        elif m.status == "waiting":
            keys = text.REMATCH_WAITING_KEYS
        else:
            playing = COOP_HELP if m.mode == "coop" else RACE_HELP
            keys = playing if self.racing() else RACE_OVER_HELP
        return msgspec.structs.replace(
            super().scene(),
            view=v,
            title=(
                f"{m.mode.capitalize()}  {text.describe_match(m)}",
                f"mines left {v.mines_left}   time {max(elapsed, 0) // 1000}   {state}",
            ),
            panel=("", *seats),
            keys=keys,
        )


async def _spectate(client: AsyncClient, match_id: str, say: Say) -> None:
    """A match as lines: each update with its seat's counts, then the result."""
    async with contextlib.aclosing(client.watch_match(match_id)) as messages:
        await _say_match(messages, say)


async def _say_match(messages: AsyncIterator[MatchServerMessage], say: Say) -> None:
    """Lines until the match's end, and its rematch when one was asked for (named, for
    the watcher to follow)."""
    async for message in messages:
        if isinstance(message, Error):
            raise error_for(message.problem)
        if isinstance(message, MatchSnapshot):
            m = message.match
            say(f"match {m.id}  {text.describe_match(m)}  {m.status}")
            for each in m.seats:
                say(text.seat_line(each, match=m.status))
        elif isinstance(message, MatchUpdate):
            m = message.match
            which = message.seat
            seat = m.seats[which] if which is not None and which < len(m.seats) else None
            say(f"v{message.version} {message.change}"
                + (f": {text.seat_line(seat, match=m.status).strip()}" if seat is not None else ""))
        else:
            continue
        if m.status == "finished":
            for line in text.result_lines(m):
                say(line)
            if m.rematch_id is not None:
                say(text.rematch_asked(m.rematch_id))
            return


async def print_json(
    url: str, player_token: str | None, match_id: str, dump: Callable[[Any], None],
    timeout: float = 10.0,
) -> None:
    """A match's snapshot and updates, each a line of JSON, until it is over."""
    async with (
        AsyncClient(url, player_token=player_token, timeout=timeout) as client,
        contextlib.aclosing(client.watch_match(match_id)) as messages,
    ):
        async for message in messages:
            if isinstance(message, Error):
                raise error_for(message.problem)
            if isinstance(message, MatchSnapshot | MatchUpdate):
                dump(message)


async def run(
    url: str,
    player_token: str | None,
    tokens: TokenStore,
    say: Say,
    *,
    preset: PresetName = "beginner",
    no_guess: bool = True,
    match_id: str | None = None,
    terminal: bool = True,
    timeout: float = 10.0,
) -> str:
    """Find (or join) a match and race in it; the last words for the normal screen.
    Without a seat (no player, or a match that started without them) it is watched."""
    async with AsyncClient(url, player_token=player_token, timeout=timeout) as client:
        me = (await client.me()).id if player_token else None
        if match_id is None:
            match_id = await find_match(client, preset, no_guess, say)
        match = await client.match(match_id)
        # A seat is taken only where it can be played: in a terminal.
        if me is not None and terminal and match.status == "waiting" and _seat(match, me) is None:
            match = await client.join_match(match_id)
        seat = _seat(match, me) if me is not None else None
        if seat is None or match.status == "finished" or not terminal:
            await _spectate(client, match_id, say)
            return ""
        assert me is not None
        if match.status == "waiting":
            with _interruptible() as pressed:
                started = await _unless(pressed, _started(client, match_id, say))
                if started is None:
                    await client.leave_match(match_id)
                    raise Cancelled(f"left match {match_id} before it started")
            match = await client.match(match_id)
        seat = _seat(match, me)
        assert seat is not None and seat.game_id is not None
        others = [s for s in match.seats if s.player.id != me]
        say(f"matched: {text.describe_match(match)}, match {match.id}")
        for other in others:
            say(f"  against {other.player.name} ({text.rating(other.player.rating)})")
        game = Game(await client.get(seat.game_id), player_token)
        racer = Racer(client, game, tokens, match, me)
        loop = asyncio.get_running_loop()
        # Ctrl-C leaves the screen as q does, the terminal put back; the seat is not given up.
        loop.add_signal_handler(signal.SIGINT, racer.interrupt)
        try:
            with Terminal():
                await racer.run()
        finally:
            loop.remove_signal_handler(signal.SIGINT)
        end = racer.match
        if racer.interrupted and racer.racing():
            raise Cancelled(text.left_seat_playing(end))
        width = Terminal.size()[0] - 1
        if end.status == "finished":
            return "\n".join(text.result_lines(end, me, width))
        if end.status == "waiting" and racer.previous is not None:
            return "\n".join([*text.result_lines(racer.previous, me, width),
                              text.rematch_left(end.id)])
        if end.mode == "coop":
            return f"you left the game; the team plays on: minesweeper match {end.id} to watch it"
        if racer.resigned():
            return f"you resigned; the race goes on: minesweeper match {end.id} to watch it"
        return f"you left the race; it goes on: minesweeper match {end.id} to watch it"
