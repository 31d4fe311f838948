"""No hidden information leaves the server before the game ends.

A twin game (same seed, settings and first click) is lost on purpose to learn where
the mines are; then a player's game in progress is played through every endpoint and
the WebSockets (the game's and the player's), and every byte it sends (bodies,
headers, messages, the service log) is checked for the seed, the tokens and their
hashes (the game's, its player's, another player's), the packed layout and any mine
position.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import httpx
from websockets.sync.client import ClientConnection, connect

from tests.support.play import PLAYING_CHARS, Api, apply_cells, learn_mines, neighbours, positions
from tests.support.servers import running_service

SEED = 7_351_906_417_235_588_193
SETTINGS = {"width": 16, "height": 16, "mines": 40, "seed": SEED, "question_marks": True}
FIRST = (8, 8)
FORBIDDEN_KEYS = {"seed", "layout", "token_hash", "tok", "snap", "rev", "mine", "mines_at"}


def packed(mines: set[tuple[int, int]], width: int, height: int) -> bytes:
    bits = bytearray((width * height + 7) // 8)
    for x, y in mines:
        i = y * width + x
        bits[i >> 3] |= 0x80 >> (i & 7)
    return bytes(bits)


def encodings(secret: bytes) -> list[str]:
    return [secret.hex(), secret.hex().upper(), base64.b64encode(secret).decode(),
            base64.urlsafe_b64encode(secret).decode().rstrip("=")]


class Recorder:
    """Everything the service sent, as text, plus every board and diff seen."""

    def __init__(self) -> None:
        self.texts: list[tuple[str, str]] = []
        self.boards: list[list[str]] = []
        self.cells: list[list[Any]] = []

    def response(self, what: str, r: httpx.Response) -> httpx.Response:
        assert r.status_code < 500, (what, r.text)
        headers = "\n".join(f"{k}: {v}" for k, v in r.headers.items())
        self.texts.append((what, headers + "\n" + r.text))
        if r.headers.get("content-type", "").startswith("application/json"):
            self.json(what, r.json())
        elif r.headers.get("content-type", "").startswith("text/plain"):
            self.boards.append([line for line in r.text.splitlines() if line][:-1])
        return r

    def message(self, what: str, raw: str | bytes) -> dict[str, Any]:
        text = raw if isinstance(raw, str) else raw.decode()
        self.texts.append((what, text))
        data: dict[str, Any] = json.loads(text)
        self.json(what, data)
        return data

    def json(self, what: str, data: Any) -> None:
        for key, value in walk(data):
            assert key.lower() not in FORBIDDEN_KEYS, (what, key)
            if key == "board":
                self.boards.append(value)
            elif key == "cells":
                self.cells.append(value)


def walk(data: Any) -> Iterator[tuple[str, Any]]:
    if isinstance(data, dict):
        for key, value in data.items():
            yield key, value
            yield from walk(value)
    elif isinstance(data, list):
        for item in data:
            yield from walk(item)


def test_no_secret_leaves_the_server_while_a_game_is_on(redis_url: str) -> None:
    with running_service(redis_url, LOG_LEVEL="info") as svc, \
            httpx.Client(base_url=svc.url, timeout=30) as c, contextlib.ExitStack() as stack:
        api = Api(c)
        mines = learn_mines(api, SETTINGS, FIRST)
        rec = Recorder()

        registered = rec.response("register", c.post("/players", json={}))
        player_id, player_token = registered.json()["player"]["id"], registered.json()["token"]
        player_auth = {"Authorization": f"Bearer {player_token}"}
        other = rec.response("register other", c.post("/players", json={"bot": True}))
        other_token = other.json()["token"]
        created = rec.response("create", c.post("/games", json=SETTINGS, headers=player_auth))
        game_id, token = created.json()["game"]["id"], created.json()["token"]
        assert created.json()["game"]["player_id"] == player_id
        auth = {"Authorization": f"Bearer {token}"}
        host = urlsplit(svc.url).netloc
        ws_url = f"ws://{host}/games/{game_id}/events"
        sockets: list[tuple[str, ClientConnection]] = []

        def ws(name: str, query: str = "") -> ClientConnection:
            conn = stack.enter_context(connect(ws_url + query, open_timeout=30))
            sockets.append((name, conn))
            return conn

        watcher = ws("watcher")
        rec.message("snapshot", watcher.recv(timeout=30))

        def move(action: str, x: int, y: int, **extra: Any) -> dict[str, Any]:
            headers = {**auth, **extra.pop("headers", {})}
            r = c.post(f"/games/{game_id}/{action}", json={"x": x, "y": y, **extra},
                       headers=headers)
            data: dict[str, Any] = rec.response(f"{action} {x},{y}", r).json()
            return data

        board = apply_cells(created.json()["game"]["board"], move("reveal", *FIRST)["cells"])
        # Correct flags around a number, then a chord that opens its safe neighbours.
        target = None
        for x, y in sorted(positions(board, "12345678")):
            around = list(neighbours(x, y, 16, 16))
            hidden = [p for p in around if board[p[1]][p[0]] == "#"]
            if any(p not in mines for p in hidden) and any(p in mines for p in hidden):
                target = (x, y)
                break
        assert target is not None
        for p in neighbours(*target, 16, 16):
            if p in mines:
                board = apply_cells(board, move("flag", *p)["cells"])
        chord = move("chord", *target)
        assert chord["cells"], chord
        board = apply_cells(board, chord["cells"])
        safe_hidden = sorted(positions(board, "#") - mines)
        mine_hidden = sorted(positions(board, "#") & mines)
        move("flag", *safe_hidden[0])  # a wrong flag
        move("flag", *mine_hidden[0], mark="question")
        move("flag", *safe_hidden[1], mark="question")
        move("reveal", *mine_hidden[0])  # no-op on a question mark
        move("reveal", *safe_hidden[2], headers={"Idempotency-Key": "secret-check"})
        move("reveal", *safe_hidden[2], headers={"Idempotency-Key": "secret-check"})
        move("chord", *safe_hidden[3])

        # Errors of every kind, on a game in progress.
        for what, r in [
            ("401", c.post(f"/games/{game_id}/reveal", json={"x": 0, "y": 0})),
            ("403", c.post(f"/games/{game_id}/reveal", json={"x": 0, "y": 0},
                           headers={"Authorization": "Bearer nope"})),
            ("412", c.post(f"/games/{game_id}/reveal", json={"x": 0, "y": 0},
                           headers={**auth, "If-Match": '"0"'})),
            ("422 range", c.post(f"/games/{game_id}/reveal", json={"x": 16, "y": 0},
                                 headers=auth)),
            ("422 key", c.post(f"/games/{game_id}/reveal", json={"x": 1, "y": 0},
                               headers={**auth, "Idempotency-Key": "secret-check"})),
            ("400", c.post(f"/games/{game_id}/flag", content=b"{", headers=auth)),
            ("413", c.post(f"/games/{game_id}/flag", content=b"[" * 20_000, headers=auth)),
        ]:
            rec.response(what, r)
            assert r.status_code >= 400

        # The player's token moves too; another player's does not, nor is a game token
        # a player's.
        move("flag", *safe_hidden[6], headers=player_auth)
        other_auth = {"Authorization": f"Bearer {other_token}"}
        for what, r in [
            ("other's token", c.post(f"/games/{game_id}/flag", json={"x": 0, "y": 0},
                                     headers=other_auth)),
            ("game token as a player's", c.get("/players/me", headers=auth)),
            ("no player", c.get("/players/me")),
            ("unknown player", c.get(f"/players/{'0' * 32}")),
        ]:
            rec.response(what, r)
            assert r.status_code in (401, 403, 404), (what, r.text)

        # Every read.
        rec.response("view", c.get(f"/games/{game_id}"))
        rec.response("text", c.get(f"/games/{game_id}", headers={"Accept": "text/plain"}))
        rec.response("player", c.get(f"/players/{player_id}"))
        rec.response("me", c.get("/players/me", headers=player_auth))
        rec.response("other", c.get(f"/players/{other.json()['player']['id']}"))

        # The player's own socket: a wrong token, then the right one and a rename.
        player_ws = f"ws://{host}/players/me/events"
        with connect(player_ws, open_timeout=30) as refused:
            refused.send(json.dumps({"type": "auth", "token": token}))
            rec.message("player socket, game token", refused.recv(timeout=30))
        own = stack.enter_context(connect(player_ws, open_timeout=30))
        own.send(json.dumps({"type": "auth", "token": player_token}))
        rec.message("player socket", own.recv(timeout=30))
        renamed = rec.response("rename", c.patch(
            "/players/me", json={"name": f"renamed-{player_id[:6]}"}, headers=player_auth))
        assert renamed.status_code == 200
        update = rec.message("player socket update", own.recv(timeout=30))
        assert update["player"]["name"] == renamed.json()["name"]
        own.close()

        # Moves and errors over the socket, and replays from the stream.
        mover = ws("mover")
        rec.message("mover snapshot", mover.recv(timeout=30))
        mover.send(json.dumps({"type": "reveal", "x": 0, "y": 0, "id": 1}))
        rec.message("unauthorised", mover.recv(timeout=30))
        mover.send(json.dumps({"type": "auth", "token": "wrong"}))
        rec.message("bad auth", mover.recv(timeout=30))
        mover.send(json.dumps({"type": "auth", "token": token}))
        mover.send(json.dumps({"type": "flag", "x": safe_hidden[4][0], "y": safe_hidden[4][1],
                               "id": "f"}))
        mover.send(json.dumps({"type": "reveal", "x": 99, "y": 0, "id": "r"}))
        mover.send("{not json")
        results = 0
        while results < 3:
            message = rec.message("mover", mover.recv(timeout=30))
            results += message["type"] in ("result", "error")
        ws("replay", "?since=0")
        # One more move, so every socket has a diff still to come whatever it has read.
        move("flag", *safe_hidden[5])
        view = c.get(f"/games/{game_id}").json()
        assert view["status"] == "playing"
        final = view["version"]
        for name, conn in sockets:
            version = 0
            while version < final:
                message = rec.message(name, conn.recv(timeout=30))
                version = message.get("version", message.get("game", {}).get("version", version))
            conn.close()

        # The service's own log at info level.
        log = svc.output()

    hashes = [hashlib.sha256(t.encode()).digest() for t in (token, player_token, other_token)]
    layout = packed(mines, 16, 16)
    needles = [str(SEED), f"{SEED:x}", f"{SEED:X}", *(e for h in hashes for e in encodings(h)),
               *encodings(layout), *encodings(SEED.to_bytes(8, "big")),
               *encodings(SEED.to_bytes(8, "little"))]
    texts = [*rec.texts, ("service log", log)]
    # Each token is in the one answer that hands it out, and nowhere else.
    shown = {token: "create", player_token: "register", other_token: "register other"}
    for what, text in texts:
        for needle in needles:
            assert needle not in text, (what, needle)
        for secret, where in shown.items():
            if what != where:
                assert secret not in text, (what, where)

    # Every board and every changed cell shows only what a player may see.
    assert len(rec.boards) >= 4 and len(rec.cells) >= 10
    for board in rec.boards:
        assert len(board) == 16 and all(len(row) == 16 for row in board)
        assert set("".join(board)) <= PLAYING_CHARS
        for x, y in mines:
            assert board[y][x] in "#F?"
    for cells in rec.cells:
        for x, y, char in cells:
            assert char in PLAYING_CHARS
            if (x, y) in mines:
                assert char in "#F?"
