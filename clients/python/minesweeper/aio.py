"""The asynchronous client: one method per endpoint, awaited, answers decoded into
wire Structs; and games followed live over WebSocket.

The synchronous :class:`~minesweeper.Client` in ``client.py`` is written from this
file by ``python -m tests.clients.sync_client``: the same class without ``async``,
``await`` and the live section, so the two cannot drift apart.
"""

from __future__ import annotations

import contextlib  # async only
from collections.abc import AsyncGenerator  # async only
from datetime import date as Date

import httpx

from . import _http
from .game import Game
from .live import HEARTBEAT_TIMEOUT, LiveGame, LiveMessage  # async only
from .live import player_events as _player_events  # async only
from .live import watch_match as _watch_match  # async only
from .wire import (
    Action,
    CreatedGame,
    CreatedMatch,
    CreatedPlayer,
    CreatedSeek,
    Diff,
    FirstClick,
    GameView,
    Hint,
    Leaderboard,
    Mark,
    MatchMode,
    MatchServerMessage,  # async only
    MatchView,
    NewMatch,
    NewSeek,
    OnMine,
    PauseAction,
    PlayerRename,
    PlayerServerMessage,  # async only
    PlayerView,
    PresetName,
    RatingList,
    Replay,
    SeekView,
)

__all__ = ["AsyncClient"]


class AsyncClient:
    """Talks to one service over HTTP::

        async with AsyncClient("http://127.0.0.1:8000") as client:
            game = await client.new_game("beginner")
            await client.reveal(game, 4, 4)
            print("\\n".join(game.view.board))

    Moves take a :class:`Game` handle (its token is used and its view kept current)
    or a game id with ``token=``. With ``player_token`` (from :meth:`register`) the
    games this client makes are that player's: they count in the player's stats and
    may enter the leaderboards. ``http`` is an ``httpx.AsyncClient`` of your own (its
    ``base_url`` wins over ``base_url``). Errors raise :class:`~minesweeper.ApiError`
    subclasses; network failures raise ``httpx.TransportError``.
    """

    def __init__(
        self,
        base_url: str = _http.DEFAULT_URL,
        *,
        timeout: float = 10.0,
        player_token: str | None = None,
        http: httpx.AsyncClient | None = None,
        heartbeat_timeout: float = HEARTBEAT_TIMEOUT,  # async only
    ) -> None:
        self._http = http or httpx.AsyncClient(
            base_url=base_url, timeout=timeout, headers={"User-Agent": _http.USER_AGENT}
        )
        self.base_url = str(self._http.base_url).rstrip("/")
        #: Seconds a request may wait for the service.
        self.timeout = timeout
        #: The player whose games this client makes, and who :meth:`me` is.
        self.player_token = player_token
        #: Seconds a live socket may bring nothing, not even a heartbeat, before it  # async only
        #: counts as dropped and is resumed (the service's heartbeat: every 15 s).  # async only
        self.heartbeat_timeout = heartbeat_timeout  # async only

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    # ---- games ----------------------------------------------------------------------------

    async def new_game(
        self,
        preset: PresetName | None = None,
        *,
        width: int | None = None,
        height: int | None = None,
        mines: int | None = None,
        seed: int | None = None,
        first_click: FirstClick = "zero",
        no_guess: bool = False,
        question_marks: bool = False,
        daily: PresetName | None = None,
        player_token: str | None = None,
    ) -> Game:
        """Start a game from a preset or a custom ``width``/``height``/``mines``
        (neither: beginner). ``seed`` makes the board reproducible, ``no_guess`` makes
        one that logic alone solves. ``daily="expert"`` starts today's shared board for
        that preset instead: the same mines for every player, a start already opened, a
        leaderboard of its own. The game is the player's whose token is ``player_token``
        (or the client's :attr:`player_token`); without one it is anonymous."""
        body = _http.new_game_body(
            preset=preset, width=width, height=height, mines=mines, seed=seed,
            first_click=first_click, no_guess=no_guess, question_marks=question_marks,
            daily=daily,
        )
        headers = {"Content-Type": "application/json",
                   **_http.auth(player_token or self.player_token)}
        response = await self._http.post("/games", content=body, headers=headers)
        created = _http.decode(response, CreatedGame)
        return Game(created.game, created.token)

    async def get(self, game: Game | str) -> GameView:
        """The game's current view (and, for a handle, the handle's new view)."""
        view = _http.decode(await self._http.get(f"/games/{_http.game_id(game)}"), GameView)
        if isinstance(game, Game):
            game.view = view
        return view

    async def board_text(self, game: Game | str) -> str:
        """The board as the service renders it for a terminal: rows, then a status line."""
        response = await self._http.get(
            f"/games/{_http.game_id(game)}", headers={"Accept": "text/plain"}
        )
        return _http.check(response).text

    async def reset(self, game: Game | str, *, token: str | None = None) -> Game:
        """A new game with the same settings (new id, new token); watchers of the old
        game receive a :class:`~minesweeper.wire.Reset` naming it."""
        response = await self._http.post(
            f"/games/{_http.game_id(game)}/reset",
            headers=_http.auth(_http.token_of(game, token)),
        )
        created = _http.decode(response, CreatedGame)
        return Game(created.game, created.token)

    async def replay(self, game: Game | str) -> Replay:
        """A finished game in full: its settings, the mines, every move with its server
        time, and for a loss whether the fatal click was a forced guess. Before the end
        (of a race seat's game: of its match) it raises :class:`~minesweeper.GameInProgress`."""
        response = await self._http.get(f"/games/{_http.game_id(game)}/replay")
        return _http.decode(response, Replay)

    async def leaderboard(
        self,
        preset: PresetName,
        no_guess: bool = False,
        date: Date | str | None = None,
        limit: int = 10,
        *,
        bot: bool = False,
    ) -> Leaderboard:
        """The best times of players' won, unassisted games of ``preset`` (``no_guess``
        boards apart), or of that day's daily board with ``date``; the fastest ``limit``
        (1-100). The humans' board, or with ``bot`` the bots'."""
        response = await self._http.get(
            f"/leaderboards/{preset}",
            params=_http.leaderboard_params(no_guess, date, limit, bot),
        )
        return _http.decode(response, Leaderboard)

    # ---- players --------------------------------------------------------------------------

    async def register(self, name: str | None = None, *, bot: bool = False) -> CreatedPlayer:
        """A new player named ``name`` (none: a guest, with a name the service makes up),
        and the player's token, shown only now: keep it, and pass it as ``player_token``
        for games that are the player's. ``bot=True`` marks a program, ranked only
        against programs. A name somebody has raises :class:`~minesweeper.NameTaken`."""
        response = await self._http.post(
            "/players", content=_http.new_player_body(name, bot),
            headers={"Content-Type": "application/json"},
        )
        return _http.decode(response, CreatedPlayer)

    async def player(self, player_id: str) -> PlayerView:
        """A player's profile: name, stats per preset, ratings, the last games."""
        return _http.decode(await self._http.get(f"/players/{player_id}"), PlayerView)

    async def me(self, *, player_token: str | None = None) -> PlayerView:
        """The player whose token this is (``player_token``, or the client's)."""
        response = await self._http.get(
            "/players/me", headers=_http.auth(player_token or self.player_token)
        )
        return _http.decode(response, PlayerView)

    async def rename(self, name: str, *, player_token: str | None = None) -> PlayerView:
        """Give the player a new name; their games and leaderboard entries stay theirs."""
        response = await self._http.patch(
            "/players/me", content=_http.encode(PlayerRename(name)),
            headers={"Content-Type": "application/json",
                     **_http.auth(player_token or self.player_token)},
        )
        return _http.decode(response, PlayerView)

    # ---- matches --------------------------------------------------------------------------

    async def new_match(
        self,
        mode: MatchMode = "race",
        preset: PresetName | None = None,
        *,
        width: int | None = None,
        height: int | None = None,
        mines: int | None = None,
        no_guess: bool = True,
        seats: int = 2,
        rated: bool | None = None,
        on_mine: OnMine = "penalty",
        time_limit_s: int = 600,
        player_token: str | None = None,
    ) -> MatchView:
        """Open a match (a ``race`` on copies of one board, or ``coop`` on one game) and
        take its first seat. It starts by itself once every seat is taken."""
        body = NewMatch(
            mode=mode, preset=preset, width=width, height=height, mines=mines,
            no_guess=no_guess, seats=seats, rated=rated, on_mine=on_mine,
            time_limit_s=time_limit_s,
        )
        response = await self._http.post(
            "/matches", content=_http.encode(body),
            headers={"Content-Type": "application/json",
                     **_http.auth(player_token or self.player_token)},
        )
        return _http.decode(response, CreatedMatch).match

    async def match(self, match_id: str, *, player_token: str | None = None) -> MatchView:
        """The match; with the player's token, their own race seat's ``game_id`` too."""
        token = player_token or self.player_token
        response = await self._http.get(f"/matches/{match_id}", headers=_http.auth(token))
        return _http.decode(response, MatchView)

    async def join_match(self, match_id: str, *, player_token: str | None = None) -> MatchView:
        """Take a seat (the last free one starts the match)."""
        return await self._match_change(match_id, "join", player_token)

    async def leave_match(self, match_id: str, *, player_token: str | None = None) -> MatchView:
        """Leave before the start, or resign after it."""
        return await self._match_change(match_id, "leave", player_token)

    async def start_match(self, match_id: str, *, player_token: str | None = None) -> MatchView:
        """Start with the seats taken so far (the creator only; at least 2 seats)."""
        return await self._match_change(match_id, "start", player_token)

    async def seat_game(self, match_id: str, *, player_token: str | None = None) -> Game:
        """A handle on the player's own game in the match (their race seat's, or the co-op
        team's), kept current by moves made through it with the player's token.
        ``LookupError`` when the player has no seat, or the match no boards yet
        (``waiting``: the boards are made when its countdown begins)."""
        token = player_token or self.player_token
        me = await self.me(player_token=token)
        view = await self.match(match_id, player_token=token)
        game_id = next((s.game_id for s in view.seats if s.player.id == me.id), None)
        if game_id is None:
            state = "no seat" if all(s.player.id != me.id for s in view.seats) else "no game yet"
            raise LookupError(f"{me.name} has {state} in match {match_id}")
        return Game(await self.get(game_id), token)

    async def rematch(self, match_id: str, *, player_token: str | None = None) -> MatchView:
        """The same match again with the same players, once it is over: made by the first
        who asks (seat 0), joined by the others; ``rematch_id`` on the old match names it."""
        response = await self._http.post(
            f"/matches/{match_id}/rematch",
            headers=_http.auth(player_token or self.player_token),
        )
        return _http.decode(response, CreatedMatch).match

    async def _match_change(
        self, match_id: str, change: str, player_token: str | None
    ) -> MatchView:
        response = await self._http.post(
            f"/matches/{match_id}/{change}",
            headers=_http.auth(player_token or self.player_token),
        )
        return _http.decode(response, MatchView)

    async def seek(
        self, preset: PresetName = "beginner", *, no_guess: bool = True,
        player_token: str | None = None,
    ) -> SeekView:
        """Look for an opponent for a rated race: a seek ``waiting`` until it is
        ``matched`` (its ``match_id`` then names the race, whose countdown has begun),
        ``expired`` (30 s after the last poll, unless the player's socket is open) or
        ``cancelled``. Poll it with :meth:`get_seek`, or listen on the player's socket for
        its ``Matched`` (``player_events``, of the asynchronous client)."""
        response = await self._http.post(
            "/seeks", content=_http.encode(NewSeek(preset=preset, no_guess=no_guess)),
            headers={"Content-Type": "application/json",
                     **_http.auth(player_token or self.player_token)},
        )
        return _http.decode(response, CreatedSeek).seek

    async def get_seek(self, seek_id: str) -> SeekView:
        """The seek now; polling keeps it alive."""
        return _http.decode(await self._http.get(f"/seeks/{seek_id}"), SeekView)

    async def cancel_seek(self, seek_id: str, *, player_token: str | None = None) -> SeekView:
        """Withdraw a waiting seek: ``cancelled``. One that paired already stays
        ``matched`` and its match goes on: :meth:`leave_match` withdraws from that."""
        response = await self._http.delete(
            f"/seeks/{seek_id}", headers=_http.auth(player_token or self.player_token)
        )
        return _http.decode(response, SeekView)

    async def race_ratings(self, *, limit: int = 20, bot: bool = False) -> RatingList:
        """The best race ratings, humans' or (``bot=True``) bots'."""
        params = {"limit": str(limit), "bot": "true" if bot else "false"}
        return _http.decode(await self._http.get("/ratings/race", params=params), RatingList)

    # ---- help and pauses ------------------------------------------------------------------

    async def hint(self, game: Game | str, *, token: str | None = None) -> Hint:
        """A cell to play next: certainly safe, certainly a mine, or the safest guess, with
        the reason. The service counts it: a hinted game is assisted and is not ranked."""
        response = await self._http.post(
            f"/games/{_http.game_id(game)}/hint",
            headers=_http.auth(_http.token_of(game, token)),
        )
        return _http.decode(response, Hint)

    async def pause(self, game: Game | str, *, token: str | None = None) -> Diff:
        """Stop the clock and hide the board from every view and watcher; moves raise
        :class:`~minesweeper.Paused` until :meth:`resume`. Pausing a paused game is a no-op."""
        return await self._pause(game, "pause", token)

    async def resume(self, game: Game | str, *, token: str | None = None) -> Diff:
        """Start the clock again and show the board."""
        return await self._pause(game, "resume", token)

    async def _pause(
        self, game: Game | str, action: PauseAction, token: str | None
    ) -> Diff:
        response = await self._http.post(
            f"/games/{_http.game_id(game)}/{action}",
            headers=_http.auth(_http.token_of(game, token)),
        )
        diff = _http.decode(response, Diff)
        # A resume lists no cells: a board fetched while paused (every cell `#`) is fetched again.
        if isinstance(game, Game) and (not game.apply(diff) or action == "resume"):
            await self.get(game)
        return diff

    # ---- moves ----------------------------------------------------------------------------

    async def reveal(
        self,
        game: Game | str,
        x: int,
        y: int,
        *,
        token: str | None = None,
        if_match: int | None = None,
        idempotency_key: str | None = None,
    ) -> Diff:
        """Open cell ``(x, y)``. The first reveal starts the clock; a mine ends the game."""
        return await self._move(game, "reveal", x, y, None, token, if_match, idempotency_key)

    async def flag(
        self,
        game: Game | str,
        x: int,
        y: int,
        mark: Mark | None = None,
        *,
        token: str | None = None,
        if_match: int | None = None,
        idempotency_key: str | None = None,
    ) -> Diff:
        """Cycle the mark of cell ``(x, y)``, or set it: ``"flag"``, ``"question"``, ``"none"``."""
        return await self._move(game, "flag", x, y, mark, token, if_match, idempotency_key)

    async def chord(
        self,
        game: Game | str,
        x: int,
        y: int,
        *,
        token: str | None = None,
        if_match: int | None = None,
        idempotency_key: str | None = None,
    ) -> Diff:
        """Open the unmarked neighbours of the number at ``(x, y)`` once it has as many
        flags around it as its count."""
        return await self._move(game, "chord", x, y, None, token, if_match, idempotency_key)

    async def _move(
        self,
        game: Game | str,
        action: Action,
        x: int,
        y: int,
        mark: Mark | None,
        token: str | None,
        if_match: int | None,
        idempotency_key: str | None,
    ) -> Diff:
        response = await self._http.post(
            f"/games/{_http.game_id(game)}/{action}",
            content=_http.move_body(action, x, y, mark),
            headers=_http.move_headers(_http.token_of(game, token), if_match, idempotency_key),
        )
        diff = _http.decode(response, Diff)
        # The move that ends the game: the whole view once more, for what a diff does not
        # carry (``held``, why a win stays off the leaderboards).
        if isinstance(game, Game) and (not game.apply(diff) or diff.status in ("won", "lost")):
            await self.get(game)
        return diff

    def __repr__(self) -> str:
        return f"<AsyncClient {self.base_url}>"

    # ---- live (async only: the synchronous client ends here) ------------------------------

    def connect(
        self,
        game: Game | str,
        *,
        since: int | None = None,
        token: str | None = None,
        retries: int | None = 8,
    ) -> LiveGame:
        """A live connection to ``game``, to use with ``async with``: iterate it for
        messages, and with a token (the handle's, or ``token=``) send moves over it."""
        return LiveGame(
            self.base_url, _http.game_id(game), token=_http.token_of(game, token),
            since=since, retries=retries, timeout=self.timeout,
            heartbeat_timeout=self.heartbeat_timeout,
        )

    async def watch(
        self, game: Game | str, since: int | None = None, *, retries: int | None = 8
    ) -> AsyncGenerator[LiveMessage, None]:
        """Every live message of ``game``: a snapshot (or, with ``since``, the diffs
        after that version), then each diff in order, heartbeats and resets. Resumes
        with ``since`` by itself after a dropped connection or a missed version;
        ``ConnectionError`` when it could not after ``retries`` tries (about 11 s of
        outage for the default 8; ``None``: it keeps trying)."""
        async with LiveGame(self.base_url, _http.game_id(game), since=since,
                            retries=retries, timeout=self.timeout,
                            heartbeat_timeout=self.heartbeat_timeout) as live:
            async for message in live:
                yield message

    async def watch_match(
        self,
        match_id: str,
        *,
        since: int | None = None,
        player_token: str | None = None,
        retries: int | None = 8,
        until_finished: bool = True,
    ) -> AsyncGenerator[MatchServerMessage, None]:
        """Every message of a match's socket: the match, then each update in order (and
        heartbeats, co-op cursors), resuming with ``since`` by itself after a dropped
        connection or a missed version. With the player's token (``player_token`` or the
        client's) the match shows the player's own race seat's game. It ends after the
        match or update that shows the match ``finished``, unless ``until_finished`` is
        false (then it goes on with the updates after the end: a rematch asked for).
        ``retries=None`` keeps resuming however long the service is away."""
        token = player_token or self.player_token
        messages = _watch_match(self.base_url, match_id, since, token, self.timeout, retries,
                                self.heartbeat_timeout, until_finished=until_finished)
        async with contextlib.aclosing(messages):  # a caller who stops closes the socket
            async for message in messages:
                yield message

    async def player_events(
        self, *, player_token: str | None = None, retries: int | None = 8
    ) -> AsyncGenerator[PlayerServerMessage, None]:
        """The player's own socket (``player_token``, or the client's): a
        :class:`~minesweeper.PlayerSnapshot` first and whenever the player changed, a
        :class:`~minesweeper.Matched` naming the match when their seek pairs (again
        after a resume while they still play it), and heartbeats. While it is open the
        seek does not expire and goes on pairing: a bot may seek, then only listen here.
        Resumes by itself like :meth:`watch_match`; a refused token raises its
        :class:`~minesweeper.ApiError`."""
        token = player_token or self.player_token
        if token is None:
            raise ValueError("player_events needs a player's token")
        messages = _player_events(self.base_url, token, self.timeout, retries,
                                  self.heartbeat_timeout)
        async with contextlib.aclosing(messages):  # a caller who stops closes the socket
            async for message in messages:
                yield message
