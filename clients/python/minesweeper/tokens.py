"""Tokens of the games this machine created, so later commands can move without
``--token``, and of the player registered here for each service, so new games are theirs.

A small JSON file, readable by its owner only: ``$MINESWEEPER_TOKENS`` if set, else
``$XDG_STATE_HOME/minesweeper/tokens.json`` (``~/.local/state/...`` by default).
Games expire on the service after a week of inactivity, so the file keeps only the
most recent games; a player's token is kept until another replaces it.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import time
from pathlib import Path

import msgspec

__all__ = ["TokenStore", "default_path"]

KEEP = 500


class _Entry(msgspec.Struct):
    token: str
    url: str
    saved_at: int


# Players' entries are keyed by this and the service's URL; games' by their ids.
_PLAYER = "player@"


def _base(url: str) -> str:
    return url.rstrip("/")


def default_path() -> Path:
    explicit = os.environ.get("MINESWEEPER_TOKENS")
    if explicit:
        return Path(explicit).expanduser()
    state = os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state"
    return Path(state) / "minesweeper" / "tokens.json"


class TokenStore:
    def __init__(self, path: Path | None = None) -> None:
        self.path = path or default_path()

    def _load(self) -> dict[str, _Entry]:
        try:
            return msgspec.json.decode(self.path.read_bytes(), type=dict[str, _Entry])
        except FileNotFoundError:
            return {}
        except (msgspec.DecodeError, OSError):
            return {}

    def get(self, game_id: str) -> str | None:
        entry = self._load().get(game_id)
        return entry.token if entry else None

    def last(self, url: str) -> str | None:
        """The id of the game saved last for the service at ``url``."""
        last: tuple[int, str] | None = None
        for game_id, entry in self._load().items():  # oldest first
            same = _base(entry.url) == _base(url) and not game_id.startswith(_PLAYER)
            if same and (last is None or entry.saved_at >= last[0]):
                last = (entry.saved_at, game_id)
        return last[1] if last else None

    def put(self, game_id: str, token: str, url: str) -> None:
        entries = self._load()
        entries[game_id] = _Entry(token, url, int(time.time()))
        players = {k: v for k, v in entries.items() if k.startswith(_PLAYER)}
        games = [(k, v) for k, v in entries.items() if not k.startswith(_PLAYER)]
        newest = sorted(games, key=lambda kv: kv[1].saved_at)[-KEEP:]
        self._write({**players, **dict(newest)})

    def player(self, url: str) -> str | None:
        """The token of the player registered on the service at ``url``."""
        entry = self._load().get(_PLAYER + _base(url))
        return entry.token if entry else None

    def put_player(self, url: str, token: str) -> None:
        self.put(_PLAYER + _base(url), token, _base(url))

    def _write(self, entries: dict[str, _Entry]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd, tmp = tempfile.mkstemp(prefix=".tokens-", dir=self.path.parent)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(msgspec.json.format(msgspec.json.encode(entries)))
            os.chmod(tmp, 0o600)
            os.replace(tmp, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
