"""The synchronous client: one method per endpoint, answers decoded into Structs.

Written from ``aio.py`` by ``python -m tests.clients.sync_client``: edit that file,
not this one.
"""

from __future__ import annotations

from datetime import date as Date

import httpx

from . import _http
from .game import Game
from .wire import (
    Action,
    CreatedGame,
    CreatedPlayer,
    Diff,
    FirstClick,
    GameView,
    Hint,
    Leaderboard,
    Mark,
    PauseAction,
    PlayerRename,
    PlayerView,
    PresetName,
    Replay,
)

__all__ = ["Client"]


class Client:
    """Talks to one service over HTTP::

        with Client("http://127.0.0.1:8000") as client:
            game = client.new_game("beginner")
            client.reveal(game, 4, 4)
            print("\\n".join(game.view.board))

    Moves take a :class:`Game` handle (its token is used and its view kept current)
    or a game id with ``token=``. With ``player_token`` (from :meth:`register`) the
    games this client makes are that player's: they count in the player's stats and
    may enter the leaderboards. ``http`` is an ``httpx.Client`` of your own (its
    ``base_url`` wins over ``base_url``). Errors raise :class:`~minesweeper.ApiError`
    subclasses; network failures raise ``httpx.TransportError``.
    """

    def __init__(
        self,
        base_url: str = _http.DEFAULT_URL,
        *,
        timeout: float = 10.0,
        player_token: str | None = None,
        http: httpx.Client | None = None,
    ) -> None:
        self._http = http or httpx.Client(
            base_url=base_url, timeout=timeout, headers={"User-Agent": _http.USER_AGENT}
        )
        self.base_url = str(self._http.base_url).rstrip("/")
        #: Seconds a request may wait for the service.
        self.timeout = timeout
        #: The player whose games this client makes, and who :meth:`me` is.
        self.player_token = player_token

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    # ---- games ----------------------------------------------------------------------------

    def new_game(
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
        response = self._http.post("/games", content=body, headers=headers)
        created = _http.decode(response, CreatedGame)
        return Game(created.game, created.token)

    def get(self, game: Game | str) -> GameView:
        """The game's current view (and, for a handle, the handle's new view)."""
        view = _http.decode(self._http.get(f"/games/{_http.game_id(game)}"), GameView)
        if isinstance(game, Game):
            game.view = view
        return view

    def board_text(self, game: Game | str) -> str:
        """The board as the service renders it for a terminal: rows, then a status line."""
        response = self._http.get(
            f"/games/{_http.game_id(game)}", headers={"Accept": "text/plain"}
        )
        return _http.check(response).text

    def reset(self, game: Game | str, *, token: str | None = None) -> Game:
        """A new game with the same settings (new id, new token); watchers of the old
        game receive a :class:`~minesweeper.wire.Reset` naming it."""
        response = self._http.post(
            f"/games/{_http.game_id(game)}/reset",
            headers=_http.auth(_http.token_of(game, token)),
        )
        created = _http.decode(response, CreatedGame)
        return Game(created.game, created.token)

    def replay(self, game: Game | str) -> Replay:
        """A finished game in full: its settings, the mines, every move with its server
        time, and for a loss whether the fatal click was a forced guess. Before the end
        it raises :class:`~minesweeper.GameInProgress`."""
        response = self._http.get(f"/games/{_http.game_id(game)}/replay")
        return _http.decode(response, Replay)

    def leaderboard(
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
        response = self._http.get(
            f"/leaderboards/{preset}",
            params=_http.leaderboard_params(no_guess, date, limit, bot),
        )
        return _http.decode(response, Leaderboard)

    # ---- players --------------------------------------------------------------------------

    def register(self, name: str | None = None, *, bot: bool = False) -> CreatedPlayer:
        """A new player named ``name`` (none: a guest, with a name the service makes up),
        and the player's token, shown only now: keep it, and pass it as ``player_token``
        for games that are the player's. ``bot=True`` marks a program, ranked only
        against programs. A name somebody has raises :class:`~minesweeper.NameTaken`."""
        response = self._http.post(
            "/players", content=_http.new_player_body(name, bot),
            headers={"Content-Type": "application/json"},
        )
        return _http.decode(response, CreatedPlayer)

    def player(self, player_id: str) -> PlayerView:
        """A player's profile: name, stats per preset, ratings, the last games."""
        return _http.decode(self._http.get(f"/players/{player_id}"), PlayerView)

    def me(self, *, player_token: str | None = None) -> PlayerView:
        """The player whose token this is (``player_token``, or the client's)."""
        response = self._http.get(
            "/players/me", headers=_http.auth(player_token or self.player_token)
        )
        return _http.decode(response, PlayerView)

    def rename(self, name: str, *, player_token: str | None = None) -> PlayerView:
        """Give the player a new name; their games and leaderboard entries stay theirs."""
        response = self._http.patch(
            "/players/me", content=_http.encode(PlayerRename(name)),
            headers={"Content-Type": "application/json",
                     **_http.auth(player_token or self.player_token)},
        )
        return _http.decode(response, PlayerView)

    # ---- help and pauses ------------------------------------------------------------------

    def hint(self, game: Game | str, *, token: str | None = None) -> Hint:
        """A cell to play next: certainly safe, certainly a mine, or the safest guess, with
        the reason. The service counts it: a hinted game is assisted and is not ranked."""
        response = self._http.post(
            f"/games/{_http.game_id(game)}/hint",
            headers=_http.auth(_http.token_of(game, token)),
        )
        return _http.decode(response, Hint)

    def pause(self, game: Game | str, *, token: str | None = None) -> Diff:
        """Stop the clock and hide the board from every view and watcher; moves raise
        :class:`~minesweeper.Paused` until :meth:`resume`. Pausing a paused game is a no-op."""
        return self._pause(game, "pause", token)

    def resume(self, game: Game | str, *, token: str | None = None) -> Diff:
        """Start the clock again and show the board."""
        return self._pause(game, "resume", token)

    def _pause(
        self, game: Game | str, action: PauseAction, token: str | None
    ) -> Diff:
        response = self._http.post(
            f"/games/{_http.game_id(game)}/{action}",
            headers=_http.auth(_http.token_of(game, token)),
        )
        diff = _http.decode(response, Diff)
        # A resume lists no cells: a board fetched while paused (every cell `#`) is fetched again.
        if isinstance(game, Game) and (not game.apply(diff) or action == "resume"):
            self.get(game)
        return diff

    # ---- moves ----------------------------------------------------------------------------

    def reveal(
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
        return self._move(game, "reveal", x, y, None, token, if_match, idempotency_key)

    def flag(
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
        return self._move(game, "flag", x, y, mark, token, if_match, idempotency_key)

    def chord(
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
        return self._move(game, "chord", x, y, None, token, if_match, idempotency_key)

    def _move(
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
        response = self._http.post(
            f"/games/{_http.game_id(game)}/{action}",
            content=_http.move_body(action, x, y, mark),
            headers=_http.move_headers(_http.token_of(game, token), if_match, idempotency_key),
        )
        diff = _http.decode(response, Diff)
        if isinstance(game, Game) and not game.apply(diff):
            self.get(game)
        return diff

    def __repr__(self) -> str:
        return f"<Client {self.base_url}>"
