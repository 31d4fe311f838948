"""Nothing hidden leaves the server before a game ends, tokens guard every change, and
guessing ids or tokens is rate limited.

Games are played to the end over HTTP and WebSocket while every byte the server sends
is recorded (status lines, headers, bodies, socket messages). Once a game is over its
replay tells the seed and the mines; the bytes recorded before the end must then show
no mine, no seed in any form, no hash of the token and no daily secret, and every
number they show must be right for a safe cell. The service's info-level log is held
to the same standard.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import random
import secrets
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import msgspec
import numpy as np
import pytest
import redis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from websockets.asyncio.client import ClientConnection, connect

from service.engine import grid
from service.store import keys
from tests.support.load import Http, Reply, around, layout_of, ws_url
from tests.support.play import stored_mines
from tests.support.servers import RedisServer, ServiceProcess

END = frozenset({"won", "lost"})
HIDDEN_ONLY = frozenset("#F?")
SHOWN_AFTER_END = frozenset("*X!")


# ---- recording -----------------------------------------------------------------------------


@dataclass
class Recording:
    """Everything one game's clients received, split at the moment the game ended."""

    before: list[bytes] = field(default_factory=list)
    after: list[bytes] = field(default_factory=list)
    ended: bool = False

    def add(self, data: bytes, ends: bool = False) -> None:
        if ends:
            self.ended = True
        (self.after if self.ended else self.before).append(data)


def ends_game(body: bytes) -> bool:
    """Does this payload show a finished game (a final diff, a final view)?"""
    try:
        data = json.loads(body)
    except ValueError:
        return False
    found = False

    def walk(node: Any) -> None:
        nonlocal found
        if isinstance(node, dict):
            if node.get("status") in END:
                found = True
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(data)
    return found


class Client:
    """HTTP for one game, every reply recorded into the game's :class:`Recording`."""

    def __init__(self, base_url: str, rec: Recording) -> None:
        self.http = Http(base_url)
        self.http.record = []
        self.rec = rec
        self.game_id = ""
        self.token = ""

    async def call(self, method: str, path: str, body: Any = None,
                   headers: dict[str, str] | None = None) -> Reply:
        data = None if body is None else json.dumps(body).encode()
        hdrs = {"Content-Type": "application/json", **(headers or {})}
        reply = await self.http.request(method, path, data, hdrs)
        assert self.http.record is not None
        raw = self.http.record.pop()
        self.rec.add(raw, ends_game(reply.body))
        assert reply.status < 500, reply.body
        return reply

    async def create(self, **settings_: Any) -> dict[str, Any]:
        reply = await self.call("POST", "/games", settings_)
        assert reply.status == 201, reply.body
        created: dict[str, Any] = reply.json()
        self.game_id, self.token = created["game"]["id"], created["token"]
        return created["game"]  # type: ignore[no-any-return]

    @property
    def auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}

    async def move(self, action: str, x: int, y: int, **extra: Any) -> Reply:
        headers = extra.pop("headers", {})
        return await self.call("POST", f"/games/{self.game_id}/{action}",
                               {"x": x, "y": y, **extra}, {**self.auth, **headers})

    async def view(self) -> dict[str, Any]:
        reply = await self.call("GET", f"/games/{self.game_id}")
        assert reply.status == 200
        data: dict[str, Any] = reply.json()
        return data


async def listen(base_url: str, game_id: str, rec: Recording, since: int | None = None) -> None:
    """A subscriber recording every message (and the upgrade's headers) until the end."""
    async with connect(ws_url(base_url, game_id, since)) as ws:
        head = ws.response
        assert head is not None
        rec.add(str(head.headers).encode())
        async for message in ws:
            data = message.encode() if isinstance(message, str) else message
            rec.add(data, ends_game(data))
            if rec.ended:
                return


# ---- what must not be in the bytes ---------------------------------------------------------


def encodings(raw: bytes) -> list[bytes]:
    return [
        raw, raw.hex().encode(), raw.hex().upper().encode(),
        base64.b64encode(raw), base64.b64encode(raw).rstrip(b"="),
        base64.urlsafe_b64encode(raw), base64.urlsafe_b64encode(raw).rstrip(b"="),
    ]


@dataclass
class Secrets:
    seed: int
    mines: set[tuple[int, int]]
    width: int
    height: int
    token: str
    daily_secret: bytes | None = None

    def forms(self) -> list[bytes]:
        out = [str(self.seed).encode(), f"{self.seed:x}".encode(), f"{self.seed:X}".encode(),
               f"{self.seed:016x}".encode()]
        out += encodings(self.seed.to_bytes(8, "big")) + encodings(self.seed.to_bytes(8, "little"))
        digest = hashlib.sha256(self.token.encode()).digest()
        out += [*encodings(digest), digest[:12].hex().encode()]
        mines = np.zeros((self.height, self.width), dtype=bool)
        for x, y in self.mines:
            mines[y, x] = True
        out += encodings(grid.pack(mines))
        rows = ["".join("*" if mines[y, x] else "." for x in range(self.width))
                for y in range(self.height)]
        out += [r.encode() for r in rows if "*" in r]
        if self.daily_secret:
            out += encodings(self.daily_secret)
        return out

    def count(self, x: int, y: int) -> int:
        return sum(n in self.mines for n in around(x, y, self.width, self.height))


def check_cell(s: Secrets, x: int, y: int, char: str, where: str) -> None:
    assert char not in SHOWN_AFTER_END, f"{char!r} at ({x}, {y}) before the end, in {where}"
    if char in HIDDEN_ONLY:
        return
    assert (x, y) not in s.mines, f"the mine at ({x}, {y}) shows as {char!r} in {where}"
    assert int(char) == s.count(x, y), f"({x}, {y}) shows {char}, not {s.count(x, y)}"


def check_payload(s: Secrets, node: Any, where: str) -> int:
    """Every board and diff inside ``node``; how many cells were checked."""
    checked = 0
    if isinstance(node, dict):
        if isinstance(node.get("board"), list) and node.get("width") == s.width:
            for y, row in enumerate(node["board"]):
                for x, char in enumerate(row):
                    check_cell(s, x, y, char, where)
                    checked += 1
        if isinstance(node.get("cells"), list):
            for x, y, char in node["cells"]:
                check_cell(s, x, y, char, where)
                checked += 1
        for value in node.values():
            checked += check_payload(s, value, where)
    elif isinstance(node, list):
        for value in node:
            checked += check_payload(s, value, where)
    return checked


def assert_nothing_leaked(rec: Recording, s: Secrets) -> int:
    """The bytes received before the end hold no secret; how many cells were checked."""
    assert rec.ended and rec.before and rec.after
    forms = s.forms()
    checked = 0
    for i, data in enumerate(rec.before):
        where = f"payload {i}: {data[:120]!r}"
        for form in forms:
            assert form not in data, f"a secret ({form[:20]!r}) was sent in {where}"
        body = data.split(b"\r\n\r\n", 1)[1] if data.startswith(b"HTTP/") else data
        if body.startswith((b"{", b"[")):
            checked += check_payload(s, json.loads(body), where)
        elif data.startswith(b"HTTP/") and b"text/plain" in data.split(b"\r\n\r\n")[0]:
            rows = body.decode().split("\n\n")[0].splitlines()
            if len(rows) != s.height or {len(row) for row in rows} != {s.width}:
                continue  # not a board (the metrics are text too)
            for y, row in enumerate(rows):
                for x, char in enumerate(row):
                    check_cell(s, x, y, char, where)
                    checked += 1
    return checked


async def secrets_after_end(c: Client, r: redis.Redis) -> Secrets:
    """Once the game is over, its replay tells everything that was hidden (a daily
    board's once its day is over: here, moved back to one long gone)."""
    if r.hget(keys.game(c.game_id), "daily"):
        r.hset(keys.game(c.game_id), "daily", "2001-01-01")
    reply = await c.call("GET", f"/games/{c.game_id}/replay")
    assert reply.status == 200, reply.body
    replay = reply.json()
    mines = {(x, y) for y, row in enumerate(replay["layout"]) for x, ch in enumerate(row)
             if ch == "*"}
    daily = r.get("ms:secret:daily") if replay["daily"] else None
    return Secrets(replay["seed"], mines, replay["width"], replay["height"], c.token,
                   daily)  # type: ignore[arg-type]


# ---- the games -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def chatty(redis_server: RedisServer) -> Iterator[ServiceProcess]:
    """A service logging at info level (every request): the log must keep secrets too."""
    svc = ServiceProcess({"REDIS_URL": redis_server.url, "LOG_LEVEL": "info"}).start()
    try:
        yield svc
    finally:
        svc.stop()


def hidden(board: list[str]) -> list[tuple[int, int]]:
    return [(x, y) for y, row in enumerate(board) for x, c in enumerate(row) if c == "#"]


def apply(board: list[str], cells: list[list[Any]]) -> list[str]:
    rows = [list(r) for r in board]
    for x, y, ch in cells:
        rows[y][x] = ch
    return ["".join(r) for r in rows]


async def win_over_http(c: Client, seed: int) -> None:
    """A won game using every kind of request a player makes along the way."""
    settings_ = {"preset": "intermediate", "seed": seed, "question_marks": True}
    game = await c.create(**settings_)
    first = (8, 8)
    mines = layout_of(settings_, seed, first)
    w, h = game["width"], game["height"]
    await c.call("GET", f"/games/{c.game_id}", headers={"Accept": "text/plain"})
    await c.call("POST", f"/games/{c.game_id}/hint", headers=c.auth)
    await c.move("flag", 0, 0)
    await c.move("flag", 0, 0, mark="question")
    await c.move("flag", 0, 0, mark="none")
    diff = (await c.move("reveal", *first)).json()
    board = apply(game["board"], diff["cells"])
    await c.call("POST", f"/games/{c.game_id}/pause", headers=c.auth)
    await c.view()
    await c.call("GET", f"/games/{c.game_id}", headers={"Accept": "text/plain"})
    await c.call("POST", f"/games/{c.game_id}/resume", headers=c.auth)
    # Errors along the way: a stale version, a wrong token, an early replay, a bad cell.
    await c.move("flag", 1, 1, headers={"If-Match": '"0"'})
    await c.call("POST", f"/games/{c.game_id}/flag", {"x": 1, "y": 1},
                 {"Authorization": "Bearer " + secrets.token_urlsafe(32)})
    await c.call("GET", f"/games/{c.game_id}/replay")
    await c.move("reveal", w, h)
    await c.call("GET", "/leaderboards/intermediate")
    await c.call("GET", "/metrics")
    # Flag every mine next to an opened number (twice with the same key), chord, hint.
    key = 0
    for x, y in sorted(mines):
        if any(board[ny][nx] not in "#F?" for nx, ny in around(x, y, w, h)):
            key += 1
            for _ in range(2):
                await c.move("flag", x, y, mark="flag", headers={"Idempotency-Key": f"k{key}"})
            board = apply(board, [[x, y, "F"]])
    for y, row in enumerate(board):
        for x, char in enumerate(row):
            if char in "12345678":
                reply = await c.move("chord", x, y)
                board = apply(board, reply.json()["cells"])
    await c.call("POST", f"/games/{c.game_id}/hint", headers=c.auth)
    while True:
        todo = [p for p in hidden(board) if p not in mines]
        if not todo:
            break
        reply = await c.move("reveal", *todo[0])
        board = apply(board, reply.json()["cells"])
    assert (await c.view())["status"] == "won"


async def lose_over_websocket(base_url: str, c: Client, seed: int) -> None:
    """A game played over a socket (auth, moves, a wrong flag, a chord) and lost."""
    settings_ = {"preset": "expert", "seed": seed, "first_click": "safe"}
    game = await c.create(**settings_)
    first = (3, 3)
    mines = layout_of(settings_, seed, first)
    w = game["width"]
    async with connect(ws_url(base_url, c.game_id)) as ws:
        head = ws.response
        assert head is not None
        c.rec.add(str(head.headers).encode())
        await take(ws, c.rec)  # the snapshot

        async def send(message: dict[str, Any]) -> dict[str, Any]:
            await ws.send(json.dumps(message))
            while True:
                answer = await take(ws, c.rec)
                if answer["type"] in ("result", "error"):
                    return answer

        assert (await send({"type": "reveal", "x": 0, "y": 0, "id": 0}))["type"] == "error"
        assert (await send({"type": "auth", "token": "wrong"}))["type"] == "error"
        await ws.send(json.dumps({"type": "auth", "token": c.token}))  # no answer when right
        board = apply(game["board"], (await send({"type": "reveal", "x": first[0],
                                                  "y": first[1], "id": 1}))["diff"]["cells"])
        safe = [p for p in hidden(board) if p not in mines]
        await send({"type": "flag", "x": safe[0][0], "y": safe[0][1], "id": "wrong flag"})
        for n, (x, y) in enumerate(safe[1:6]):
            answer = await send({"type": "reveal", "x": x, "y": y, "id": n + 2})
            board = apply(board, answer["diff"]["cells"])
        numbers = [(x, y) for y, row in enumerate(board) for x, ch in enumerate(row)
                   if ch in "12345678"]
        await send({"type": "chord", "x": numbers[0][0], "y": numbers[0][1], "id": "chord"})
        await send({"type": "reveal", "x": w + 5, "y": 0, "id": "off the board"})
        x, y = sorted(mines)[0]
        answer = await send({"type": "reveal", "x": x, "y": y, "id": "boom"})
        assert answer["diff"]["status"] == "lost"


async def take(ws: ClientConnection, rec: Recording) -> dict[str, Any]:
    message = await asyncio.wait_for(ws.recv(), 60)
    data = message.encode() if isinstance(message, str) else message
    rec.add(data, ends_game(data))
    result: dict[str, Any] = json.loads(data)
    return result


async def reveal_until_over(c: Client, board: list[str], rng: random.Random) -> None:
    while True:
        x, y = rng.choice(hidden(board))
        diff = (await c.move("reveal", x, y)).json()
        board = apply(board, diff["cells"])
        if diff["status"] in END:
            return


async def test_no_hidden_information_leaves_before_the_end(
    chatty: ServiceProcess, redis_server: RedisServer, figures: list[str]
) -> None:
    r = redis.Redis.from_url(redis_server.url)
    rng = random.Random(8)
    played: list[tuple[str, Client]] = []
    listeners: list[asyncio.Task[None]] = []

    async def start(name: str) -> Client:
        c = Client(chatty.url, Recording())
        played.append((name, c))
        return c

    # 1. Won over HTTP, with a subscriber watching from before the first move.
    c = await start("won over HTTP")
    seed = rng.randrange(2**40, 2**63)
    watch_rec = Recording()
    won = asyncio.create_task(win_over_http(c, seed))
    while not c.game_id:
        await asyncio.sleep(0.01)
    listeners.append(asyncio.create_task(listen(chatty.url, c.game_id, watch_rec)))
    await won

    # 2. Lost over a WebSocket.
    c = await start("lost over a socket")
    await lose_over_websocket(chatty.url, c, rng.randrange(2**40, 2**63))

    # 3. Mines placed at creation (first_click none), played until it ends.
    c = await start("first_click none")
    game = await c.create(preset="beginner", seed=rng.randrange(2**40, 2**63), first_click="none")
    await reveal_until_over(c, game["board"], rng)

    # 4. Today's daily board, whose seed comes from a server secret: every player gets
    # the same mines, which no game shows today, so they are read from a twin as stored,
    # and this one is won.
    twin = Client(chatty.url, Recording())
    await twin.create(daily="beginner")
    mines = stored_mines(redis_server.url, twin.game_id)
    await twin.http.close()
    c = await start("daily")
    board = (await c.create(daily="beginner"))["board"]
    while safe := [p for p in hidden(board) if p not in mines]:
        board = apply(board, (await c.move("reveal", *safe[0])).json()["cells"])
    assert (await c.view())["status"] == "won"

    # 5. A no-guess board with a seed of the server's choosing.
    c = await start("no guess")
    game = await c.create(preset="beginner", no_guess=True)
    await reveal_until_over(c, game["board"], rng)

    await asyncio.wait_for(asyncio.gather(*listeners), 120)
    lines = []
    for name, c in played:
        s = await secrets_after_end(c, r)
        checked = assert_nothing_leaked(c.rec, s)
        # The check has teeth: what was sent once the game was over shows its mines or seed.
        with pytest.raises(AssertionError):
            assert_nothing_leaked(Recording(c.rec.after, c.rec.after, True), s)
        lines.append(f"{name}: {len(c.rec.before)} payloads, {checked} cells")
        if name == "won over HTTP":
            assert_nothing_leaked(watch_rec, s)
        # The log at info level keeps every secret too (the token itself included).
        log = chatty.output().encode()
        for form in [*s.forms(), c.token.encode()]:
            assert form not in log, f"the {name} game's secret {form[:20]!r} is in the log"
        await c.http.close()
    figures.append("leak check before the end: " + "; ".join(lines))


def player_token_forms(token: str) -> list[bytes]:
    """The token, its secret half (the id before the dot is public) and its hash."""
    secret = token.split(".", 1)[1]
    digest = hashlib.sha256(token.encode()).digest()
    return [token.encode(), secret.encode(), *encodings(digest), digest[:12].hex().encode()]


async def test_a_players_token_is_sent_once_and_never_again(chatty: ServiceProcess) -> None:
    """The reply to ``POST /players`` is the only place a player's token is ever shown:
    not in a game made or played with it, in the player's views, on either socket,
    in a refusal, nor in the log, before or after the game ends."""
    rec = Recording()
    c = Client(chatty.url, rec)
    name = f"leak{secrets.token_hex(4)}"
    registered = await c.call("POST", "/players", {"name": name})
    assert registered.status == 201, registered.body
    token, player_id = registered.json()["token"], registered.json()["player"]["id"]
    shown = rec.before.pop()
    forms = player_token_forms(token)
    # The check has teeth: the one reply that shows the token is caught by it.
    assert any(form in shown for form in forms)
    c.token = token
    mine = {"Authorization": f"Bearer {token}"}

    async with connect(chatty.url.replace("http://", "ws://", 1) + "/players/me/events") as own:
        await own.send(json.dumps({"type": "auth", "token": token}))
        assert (await take(own, rec))["type"] == "player"
        settings_ = {"preset": "beginner", "seed": 90210}
        made = await c.call("POST", "/games", settings_, mine)
        assert made.status == 201, made.body
        c.game_id = made.json()["game"]["id"]
        game_token = made.json()["token"]
        assert made.json()["game"]["player_id"] == player_id and game_token != token
        first = (4, 4)
        mines = layout_of(settings_, 90210, first)
        await c.call("GET", "/players/me", headers=mine)
        await c.call("PATCH", "/players/me", {"name": name + "x"}, mine)
        await c.call("GET", f"/players/{player_id}")
        await c.call("GET", "/players/me",
                     headers={"Authorization": f"Bearer {token[:-1]}A"})  # refused
        await c.call("POST", "/players", {"name": name + "x"})  # the name is taken
        board = apply(made.json()["game"]["board"],
                      (await c.move("reveal", *first)).json()["cells"])
        await c.move("flag", *sorted(mines)[0])
        await c.call("POST", f"/games/{c.game_id}/hint", headers=mine)
        await c.view()
        # The game's socket, authenticated with the player's token, makes one move.
        async with connect(ws_url(chatty.url, c.game_id)) as ws:
            head = ws.response
            assert head is not None
            rec.add(str(head.headers).encode())
            await take(ws, rec)  # the snapshot
            await ws.send(json.dumps({"type": "auth", "token": token}))
            x, y = next(p for p in hidden(board) if p not in mines)
            await ws.send(json.dumps({"type": "reveal", "x": x, "y": y, "id": 1}))
            while (answer := await take(ws, rec))["type"] != "result":
                assert answer["type"] != "error", answer
            board = apply(board, answer["diff"]["cells"])
        while safe := [p for p in hidden(board) if p not in mines]:
            board = apply(board, (await c.move("reveal", *safe[0])).json()["cells"])
        assert (await c.view())["status"] == "won"
        # The player's socket shows the won game among the player's recent ones.
        while not (await take(own, rec)).get("player", {}).get("recent"):
            pass
    await c.call("GET", f"/games/{c.game_id}/replay")
    await c.call("GET", "/leaderboards/beginner")
    await c.call("GET", f"/players/{player_id}")

    sent = rec.before + rec.after
    assert len(sent) > 20
    for data in sent:
        for form in forms:
            assert form not in data, f"the player's token ({form[:12]!r}) in {data[:160]!r}"
    log = chatty.output().encode()
    assert player_id.encode() in log  # the log was read, and it names the player
    for form in forms:
        assert form not in log, f"the player's token ({form[:12]!r}) is in the log"
    await c.http.close()


# ---- tokens --------------------------------------------------------------------------------


MUTATIONS = ["reveal", "flag", "chord", "pause", "resume", "hint", "reset"]


@pytest.fixture(scope="module")
def two_games(chatty: ServiceProcess) -> tuple[dict[str, Any], dict[str, Any]]:
    async def make() -> tuple[dict[str, Any], dict[str, Any]]:
        http = Http(chatty.url)
        made = []
        for _ in range(2):
            reply = await http.post_json("/games", {"preset": "beginner"})
            made.append(reply.json())
        first = made[0]
        # In play, with a flag down, so that every kind of move could change it.
        auth = {"Authorization": f"Bearer {first['token']}"}
        await http.post_json(f"/games/{first['game']['id']}/reveal", {"x": 4, "y": 4}, auth)
        await http.post_json(f"/games/{first['game']['id']}/flag", {"x": 0, "y": 0}, auth)
        await http.close()
        return made[0], made[1]

    return asyncio.run(make())


def wrong_tokens(token: str, other: str) -> st.SearchStrategy[str | None]:
    digest = hashlib.sha256(token.encode())
    near = [
        other, token[:-1], token + "A", token.upper(), token.swapcase(), token[1:],
        digest.hexdigest(), base64.b64encode(digest.digest()).decode(), "", token[:8],
        token.replace(token[0], "0" if token[0] != "0" else "1"), f"{token} {token}",
    ]
    # Anything a header may carry (bytes outside it are the HTTP server's business).
    visible = st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=80)
    return st.one_of(st.none(), st.sampled_from(near), visible)


def authorization(token: str | None, scheme: str) -> dict[str, str]:
    value = f"{scheme} {token}".strip()
    return {} if token is None or not value else {"Authorization": value}


@settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_wrong_or_missing_tokens_never_change_a_game(
    chatty: ServiceProcess, redis_server: RedisServer, two_games: Any, data: st.DataObject
) -> None:
    import httpx

    game, other = two_games
    game_id, token = game["game"]["id"], game["token"]
    r = redis.Redis.from_url(redis_server.url)
    key = f"ms:{{{game_id}}}:game"
    before = r.hgetall(key)
    guess = data.draw(wrong_tokens(token, other["token"]), label="token")
    scheme = data.draw(st.sampled_from(["Bearer", "bearer", "Basic", "Token", ""]), label="scheme")
    action = data.draw(st.sampled_from(MUTATIONS), label="action")
    body = {} if action in ("pause", "resume", "hint", "reset") else {"x": 0, "y": 0}
    headers = authorization(guess, scheme)
    reply = httpx.post(f"{chatty.url}/games/{game_id}/{action}", json=body, headers=headers,
                       timeout=10)
    assert reply.status_code in (401, 403), reply.text
    assert reply.headers["content-type"].startswith("application/problem+json")
    assert reply.json()["code"] == ("unauthorized" if reply.status_code == 401 else "forbidden")
    # Not a byte of the game changed: no click counted, no version, no next game.
    assert r.hgetall(key) == before


async def test_a_token_works_only_on_its_own_game(
    chatty: ServiceProcess, redis_server: RedisServer, two_games: Any
) -> None:
    game, other = two_games
    r = redis.Redis.from_url(redis_server.url)
    http = Http(chatty.url)
    for target, token in ((game, other["token"]), (other, game["token"])):
        gid = target["game"]["id"]
        before = r.hgetall(f"ms:{{{gid}}}:game")
        auth = {"Authorization": f"Bearer {token}"}
        for action in MUTATIONS:
            reply = await http.post_json(f"/games/{gid}/{action}", {"x": 1, "y": 1}, auth)
            assert reply.status == 403, (action, reply.body)
            assert reply.json()["code"] == "forbidden"
        # Over a socket, too: the auth fails and moves stay unauthorised.
        async with connect(ws_url(chatty.url, gid)) as ws:
            await ws.recv()
            await ws.send(json.dumps({"type": "auth", "token": token}))
            assert json.loads(await ws.recv())["problem"]["code"] == "forbidden"
            await ws.send(json.dumps({"type": "flag", "x": 1, "y": 1, "id": 1}))
            assert json.loads(await ws.recv())["problem"]["code"] == "unauthorized"
        assert r.hgetall(f"ms:{{{gid}}}:game") == before
    await http.close()


# ---- guessing is rate limited --------------------------------------------------------------

FAILURES_PER_MINUTE = 20
# The bucket gives back one failure every 3 s, so guessing that takes a while gets an
# extra guess for each 3 s it took; on a quick machine, at most this many.
SLACK = 3


@pytest.fixture(scope="module")
def guarded() -> Iterator[ServiceProcess]:
    """A service with the failed-auth limit on, on a Redis of its own (the buckets are
    per address, and every test here comes from 127.0.0.1)."""
    server = RedisServer().start()
    svc = ServiceProcess({"REDIS_URL": server.url,
                          "AUTH_FAILURE_LIMIT": str(FAILURES_PER_MINUTE)}).start()
    try:
        yield svc
    finally:
        svc.stop()
        server.cleanup()


def assert_rate_limited(reply: Reply) -> int:
    assert reply.status == 429, (reply.status, reply.body)
    assert reply.headers["content-type"].startswith("application/problem+json")
    assert reply.json()["code"] == "rate_limited"
    retry_after = int(reply.headers["retry-after"])
    assert retry_after >= 1
    return retry_after


async def guesses_until_limited(send: Any, limit: int) -> tuple[int, Reply]:
    """Wrong guesses until one is refused: how many got through, and the refusal. They
    are the bucket's FAILURES_PER_MINUTE, plus what it gained while the guessing lasted."""
    started = time.monotonic()
    for n in range(limit):
        reply = await send(n)
        if reply.status == 429:
            gained = (time.monotonic() - started) * FAILURES_PER_MINUTE / 60
            assert FAILURES_PER_MINUTE <= n <= FAILURES_PER_MINUTE + max(SLACK, int(gained) + 1)
            return n, reply
    raise AssertionError(f"{limit} wrong guesses and still no 429")


async def flush_limits(url: str) -> None:
    r = redis.asyncio.Redis.from_url(url)
    async for key in r.scan_iter("ms:{rl:*"):
        await r.delete(key)
    await r.aclose()


async def test_guessing_game_ids_is_rate_limited(guarded: ServiceProcess) -> None:
    await flush_limits(guarded.env["REDIS_URL"])
    http = Http(guarded.url)
    created = (await http.post_json("/games", {})).json()

    async def guess(n: int) -> Reply:
        return await http.request("GET", f"/games/{secrets.token_hex(16)}")

    _, reply = await guesses_until_limited(guess, 3 * FAILURES_PER_MINUTE)
    wait = assert_rate_limited(reply)
    # The address is held back as a whole, not only for the failing path...
    assert_rate_limited(await http.request("GET", f"/games/{created['game']['id']}"))
    # ... until the bucket refills as Retry-After said.
    await asyncio.sleep(wait)
    assert (await http.request("GET", f"/games/{created['game']['id']}")).status == 200
    await http.close()


async def test_guessing_tokens_is_rate_limited(
    guarded: ServiceProcess, figures: list[str]
) -> None:
    await flush_limits(guarded.env["REDIS_URL"])
    http = Http(guarded.url)
    created = (await http.post_json("/games", {"preset": "beginner"})).json()
    gid = created["game"]["id"]
    before = (await http.request("GET", f"/games/{gid}")).json()

    async def guess(n: int) -> Reply:
        auth = {"Authorization": f"Bearer {secrets.token_urlsafe(32)}"}
        return await http.post_json(f"/games/{gid}/reveal", {"x": n % 9, "y": 0}, auth)

    tries, reply = await guesses_until_limited(guess, 3 * FAILURES_PER_MINUTE)
    assert_rate_limited(reply)
    # The right token from the same address waits too, and nothing changed.
    good = {"Authorization": f"Bearer {created['token']}"}
    assert_rate_limited(await http.post_json(f"/games/{gid}/reveal", {"x": 4, "y": 4}, good))
    await flush_limits(guarded.env["REDIS_URL"])
    after = (await http.request("GET", f"/games/{gid}")).json()
    assert after["version"] == before["version"] == 0 and after["board"] == before["board"]
    figures.append(f"guessing: 429 rate_limited after {tries} wrong tokens "
                   f"(AUTH_FAILURE_LIMIT={FAILURES_PER_MINUTE}/min), Retry-After "
                   f"{reply.headers['retry-after']} s")
    await http.close()


@pytest.mark.parametrize(
    ("method", "path"),
    [("POST", "/matches"), ("POST", "/seeks"), ("GET", "/players/me"),
     ("POST", "/matches/{id}/join"), ("GET", "/seeks/{id}")],
)
async def test_guessing_on_matches_and_seeks_is_rate_limited(
    guarded: ServiceProcess, method: str, path: str
) -> None:
    """Wrong player tokens and made-up ids draw on the failure budget on every route
    that takes them."""
    await flush_limits(guarded.env["REDIS_URL"])
    http = Http(guarded.url)

    async def guess(n: int) -> Reply:
        auth = {"Authorization": f"Bearer {secrets.token_urlsafe(32)}"}
        body = b'{"mode": "race", "preset": "beginner"}' if method == "POST" else b""
        reply = await http.request(method, path.format(id=secrets.token_hex(16)), body,
                                   {**auth, "Content-Type": "application/json"})
        assert reply.status in (401, 404, 429), (reply.status, reply.body)
        return reply

    _, reply = await guesses_until_limited(guess, 3 * FAILURES_PER_MINUTE)
    assert_rate_limited(reply)
    await flush_limits(guarded.env["REDIS_URL"])
    await http.close()


async def test_guessing_over_websockets_is_rate_limited(guarded: ServiceProcess) -> None:
    """Unknown games and wrong tokens on sockets draw on the same failure budget."""
    await flush_limits(guarded.env["REDIS_URL"])
    http = Http(guarded.url)
    created = (await http.post_json("/games", {"preset": "beginner"})).json()
    gid = created["game"]["id"]

    async def guess_id(n: int) -> Reply:
        async with connect(ws_url(guarded.url, secrets.token_hex(16))) as ws:
            problem = msgspec.json.decode(await ws.recv())["problem"]
        return Reply(problem["status"], {"content-type": "application/problem+json"},
                     json.dumps(problem).encode())

    await guesses_until_limited(guess_id, 3 * FAILURES_PER_MINUTE)
    await flush_limits(guarded.env["REDIS_URL"])

    async with connect(ws_url(guarded.url, gid)) as ws:
        await ws.recv()

        async def guess_token(n: int) -> Reply:
            await ws.send(json.dumps({"type": "auth", "token": secrets.token_urlsafe(32)}))
            problem = json.loads(await ws.recv())["problem"]
            return Reply(problem["status"], {}, json.dumps(problem).encode())

        await guesses_until_limited(guess_token, 3 * FAILURES_PER_MINUTE)
    await http.close()
