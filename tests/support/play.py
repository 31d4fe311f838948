"""Playing games over HTTP in tests: a thin client, board helpers, and learning a layout.

Same seed, settings and first click give the same board, so a test learns where the
mines are by losing one game on purpose and then plays a twin of it.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import httpx

Board = list[str]
Mines = set[tuple[int, int]]
Cells = Iterable[tuple[int, int, str] | list[Any]]

HIDDEN_CHARS = frozenset("#F?")
PLAYING_CHARS = frozenset("#F?012345678")


@dataclass
class Game:
    """A game created through the API: its id, token and the view it was created with."""

    id: str
    token: str
    view: dict[str, Any]

    @property
    def auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}


@dataclass
class Player:
    """A player registered through the API: id, token and the view it was registered with."""

    id: str
    token: str
    view: dict[str, Any]

    @property
    def name(self) -> str:
        return str(self.view["name"])

    @property
    def auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}


def unique_name(prefix: str = "p") -> str:
    """A valid name nobody has yet."""
    return f"{prefix}-{secrets.token_hex(5)}"[:20]


class Api:
    """Synchronous helper over :class:`httpx.Client` for the game and player endpoints."""

    def __init__(self, client: httpx.Client) -> None:
        self.client = client

    def create(self, *, owner: Player | None = None, **body: Any) -> Game:
        """A new game; ``owner``'s when given (made with the player's token)."""
        r = self.client.post("/games", json=body, headers=owner.auth if owner else {})
        assert r.status_code == 201, r.text
        data = r.json()
        return Game(data["game"]["id"], data["token"], data["game"])

    def register(self, name: str | None = None, *, bot: bool = False) -> Player:
        """A new player named ``name`` (a new unique name when not given)."""
        r = self.client.post("/players", json={"name": name or unique_name(), "bot": bot})
        assert r.status_code == 201, r.text
        data = r.json()
        return Player(data["player"]["id"], data["token"], data["player"])

    def player(self, player: Player | str) -> dict[str, Any]:
        player_id = player if isinstance(player, str) else player.id
        r = self.client.get(f"/players/{player_id}")
        assert r.status_code == 200, r.text
        data: dict[str, Any] = r.json()
        return data

    def view(self, game: Game | str) -> dict[str, Any]:
        game_id = game if isinstance(game, str) else game.id
        r = self.client.get(f"/games/{game_id}")
        assert r.status_code == 200, r.text
        data: dict[str, Any] = r.json()
        return data

    def move(
        self, game: Game, action: str, x: int, y: int, *, expect: int = 200, **extra: Any
    ) -> dict[str, Any]:
        headers = {**game.auth, **extra.pop("headers", {})}
        r = self.client.post(
            f"/games/{game.id}/{action}", json={"x": x, "y": y, **extra}, headers=headers
        )
        assert r.status_code == expect, r.text
        data: dict[str, Any] = r.json()
        return data

    def reveal(self, game: Game, x: int, y: int, **kw: Any) -> dict[str, Any]:
        return self.move(game, "reveal", x, y, **kw)

    def flag(self, game: Game, x: int, y: int, **kw: Any) -> dict[str, Any]:
        return self.move(game, "flag", x, y, **kw)

    def chord(self, game: Game, x: int, y: int, **kw: Any) -> dict[str, Any]:
        return self.move(game, "chord", x, y, **kw)


def apply_cells(board: Board, cells: Cells) -> Board:
    """``board`` with the ``[x, y, chars]`` changes of a diff applied (runs too)."""
    rows = [list(row) for row in board]
    for x, y, chars in cells:
        rows[y][x : x + len(chars)] = chars
    return ["".join(row) for row in rows]


def one_click_win(width: int, height: int, start: tuple[int, int]) -> int:
    """A seed whose lone mine a first click at ``start`` clears in one cascade.

    Not every seed does: a mine one cell in from an edge leaves the edge cell beside
    it closed, since all that cell's neighbours are the mine and numbers around it,
    and no zero opens it (about one board in 250).
    """
    from service import engine

    settings = engine.custom(width, height, 1)
    for seed in range(100):
        game = engine.new_game(settings, seed=seed, now_ms=0)
        if engine.reveal(game, *start, 0)[0].status == "won":
            return seed
    raise AssertionError("no seed in 100 is won by one click")


def positions(board: Board, chars: str) -> set[tuple[int, int]]:
    return {(x, y) for y, row in enumerate(board) for x, c in enumerate(row) if c in chars}


def neighbours(x: int, y: int, width: int, height: int) -> Iterator[tuple[int, int]]:
    for ny in range(max(0, y - 1), min(height, y + 2)):
        for nx in range(max(0, x - 1), min(width, x + 2)):
            if (nx, ny) != (x, y):
                yield nx, ny


def learn_mines(api: Api, settings: dict[str, Any], first: tuple[int, int]) -> Mines:
    """The mines of the board that ``settings`` (with a seed) and ``first`` click make.

    Plays a throwaway twin: the first click, then reveals hidden cells until one explodes;
    a lost board shows every mine.
    """
    assert "seed" in settings, "only a seeded board can be learnt"
    game = api.create(**settings)
    diff = api.reveal(game, *first)
    board = apply_cells(game.view["board"], diff["cells"])
    while diff["status"] == "playing":
        x, y = min(positions(board, "#"), key=lambda p: (p[1], p[0]))
        diff = api.reveal(game, x, y)
        board = apply_cells(board, diff["cells"])
    assert diff["status"] == "lost", diff
    board = api.view(game)["board"]
    return positions(board, "*X")


def stored_mines(redis_url: str, game_id: str) -> Mines:
    """The mines of a game whose layout no loss shows in full (a daily board's, today),
    read from its stored snapshot. The game must have placed them (a daily board has)."""
    import redis

    from service import engine
    from service.store import keys

    with redis.Redis.from_url(redis_url) as r:
        snap = engine.decode(r.hget(keys.game(game_id), "snap"))  # type: ignore[arg-type]
    assert snap.placed
    return {(i % snap.width, i // snap.width) for i in range(snap.width * snap.height)
            if snap.is_mine(i)}


def win(api: Api, game: Game, mines: Mines, first: tuple[int, int]) -> list[dict[str, Any]]:
    """Win ``game`` (whose mines are known) by revealing every safe cell; its diffs."""
    diffs = [api.reveal(game, *first)]
    board = apply_cells(game.view["board"], diffs[0]["cells"])
    while diffs[-1]["status"] == "playing":
        x, y = min(positions(board, "#") - mines, key=lambda p: (p[1], p[0]))
        diffs.append(api.reveal(game, x, y))
        board = apply_cells(board, diffs[-1]["cells"])
    return diffs
