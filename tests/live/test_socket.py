"""The socket itself: moves with auth and correlated results, bad messages, heartbeats,
unknown games, and a consumer too slow to keep up."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator

import httpx
import pytest

from tests.live.test_fanout import TIMEOUT, create, move
from tests.support.live import RawSocket, Watcher, close_code, ws_url
from tests.support.servers import running_service


async def test_moves_over_the_socket_need_auth_and_get_correlated_results(
    replicas: tuple[str, str],
) -> None:
    a, b = replicas
    async with httpx.AsyncClient(base_url=a, timeout=TIMEOUT) as c:
        game = await create(c, preset="beginner", seed=1)
        other = await create(c, preset="beginner")
        async with Watcher(ws_url(a, game.id)) as player, Watcher(ws_url(b, game.id)) as fan:
            await player.next_of("snapshot")
            await fan.next_of("snapshot")
            await player.send({"type": "reveal", "x": 4, "y": 4, "id": "early"})
            err = await player.next_of("error")
            assert err["id"] == "early" and err["problem"]["code"] == "unauthorized"
            await player.send({"type": "auth", "token": other.token})
            err = await player.next_of("error", after=player.messages.index(err) + 1)
            assert err["problem"]["code"] == "forbidden" and err["problem"]["status"] == 403
            await player.send({"type": "auth", "token": game.token})
            await player.send({"type": "reveal", "x": 4, "y": 4, "id": 1})
            result = await player.next_of("result")
            assert result["id"] == 1
            diff = result["diff"]
            assert diff["type"] == "diff" and diff["version"] == 1 and diff["cells"]
            # Everyone on the game, on any replica, gets the same diff; the mover too.
            await fan.until_version(1)
            await player.until_version(1)
            assert fan.of("diff") == [diff] and player.of("diff") == [diff]
            # The same move over HTTP answers the same way: a no-op now.
            again = await move(c, game, "reveal", 4, 4)
            await player.send({"type": "reveal", "x": 4, "y": 4, "id": "again"})
            await player.wait(lambda ms: any(m.get("id") == "again" for m in ms))
            answer = next(m for m in player.messages if m.get("id") == "again")
            assert answer["diff"]["cells"] == again["cells"] == []
            # Flags with explicit marks, and a chord, over the socket.
            await player.send({"type": "flag", "x": 7, "y": 5, "mark": "flag", "id": "f"})
            await player.send({"type": "chord", "x": 6, "y": 6, "id": "c"})
            await player.wait(lambda ms: any(m.get("id") == "c" for m in ms))
            chord = next(m for m in player.messages if m.get("id") == "c")
            assert chord["type"] == "result" and chord["diff"]["version"] == 3
            await fan.until_version(3)
            view = (await c.get(f"/games/{game.id}")).json()
            assert view["version"] == 3 and view["board"][5][7] == "F"


BAD_MESSAGES: list[tuple[str, str | None]] = [
    ("not json", None),
    ("", None),
    ("[1, 2, 3]", None),
    ('{"type": "dance"}', None),
    ('{"no": "type"}', None),
    ('{"type": "reveal", "x": 0, "y": 0, "id": "noauth"}', "noauth"),
    ('{"type": "auth", "token": "wrong"}', None),
    ('{"type": "auth"}', None),
    ('{"type": "auth", "token": 5}', None),
]
AFTER_AUTH: list[tuple[str, str | None]] = [
    ('{"type": "reveal", "x": 9, "y": 0, "id": "off"}', "off"),
    ('{"type": "reveal", "x": -1, "y": 0, "id": "neg"}', None),
    ('{"type": "flag", "x": 0, "y": 99999999, "id": "far"}', None),
    ('{"type": "chord", "x": "1", "y": 0, "id": "str"}', None),
    ('{"type": "reveal", "x": 1, "id": "half"}', None),
    ('{"type": "flag", "x": 1, "y": 1, "mark": "bomb", "id": "mark"}', None),
    ('{"type": "flag", "x": 1, "y": 1, "mark": "question", "id": "q"}', "q"),
    ('{"type": "reveal", "x": 1, "y": 1, "colour": "red"}', None),
    ('{"type": "reveal", "x": 1, "y": 1, "id": {"nested": true}}', None),
    ('{"type": "reveal", "x": 1, "y": 1, "id": "' + "i" * 65 + '"}', None),
]


async def test_bad_messages_get_errors_and_break_nothing(replicas: tuple[str, str]) -> None:
    a, b = replicas
    async with httpx.AsyncClient(base_url=a, timeout=TIMEOUT) as c:
        game = await create(c, preset="beginner")
        async with Watcher(ws_url(a, game.id)) as bad, Watcher(ws_url(a, game.id)) as good, \
                Watcher(ws_url(b, game.id)) as far:
            for w in (bad, good, far):
                await w.next_of("snapshot")

            async def expect_errors(messages: list[tuple[str, str | None]]) -> None:
                # Paced under the socket's message rate: this is about content, not floods.
                for text, request_id in messages:
                    start = len(bad.messages)
                    await bad.send(text)
                    err = await bad.next_of("error", after=start)
                    problem = err["problem"]
                    assert problem["code"] in ("invalid_request", "unauthorized", "forbidden")
                    assert problem["status"] in (400, 401, 403, 422) and problem["detail"]
                    if request_id is not None:
                        assert err["id"] == request_id, (text, err)

            await expect_errors(BAD_MESSAGES)
            await bad.send({"type": "auth", "token": game.token})
            await expect_errors(AFTER_AUTH)
            # Binary frames are not part of the protocol either.
            start = len(bad.messages)
            await bad.ws.send(b"\x00\x01")
            assert (await bad.next_of("error", after=start))["problem"]["code"] == "invalid_request"
            # The bad socket, its neighbours and the other replica all still work.
            await bad.send({"type": "flag", "x": 0, "y": 0, "id": "ok"})
            for w in (bad, good, far):
                await w.until_version(1)
            result = next(m for m in bad.messages if m.get("id") == "ok")
            assert result["type"] == "result" and result["diff"] == good.of("diff")[0]
            assert good.close_code is None and far.close_code is None
        assert (await c.get("/healthz")).status_code == 200
        assert (await c.get(f"/games/{game.id}")).json()["version"] == 1


async def test_unknown_games_and_bad_since_are_refused(live_server: str) -> None:
    for path, code in [(("0" * 32), "not_found"), ("nope", "not_found")]:
        async with Watcher(ws_url(live_server, path)) as w:
            closed = await w.wait_closed()
            assert closed != 1000 or w.of("error")
            errors = w.of("error")
            assert errors and errors[0]["problem"]["code"] == code, w.messages
    async with httpx.AsyncClient(base_url=live_server, timeout=TIMEOUT) as c:
        game = await create(c, preset="beginner")
    for since in ("-1", "abc", "1" * 30):
        async with Watcher(ws_url(live_server, game.id) + f"?since={since}") as w:
            await w.wait_closed()
            assert w.of("error")[0]["problem"]["code"] == "invalid_request"


@pytest.fixture(scope="module")
def quick_heartbeat(redis_url: str) -> Iterator[str]:
    with running_service(redis_url, HEARTBEAT_SECONDS="0.3") as svc:
        yield svc.url


async def test_heartbeat_carries_the_version(quick_heartbeat: str) -> None:
    async with httpx.AsyncClient(base_url=quick_heartbeat, timeout=TIMEOUT) as c:
        game = await create(c, preset="beginner")
        async with Watcher(ws_url(quick_heartbeat, game.id)) as w:
            await w.next_of("snapshot")
            # The first comes after the quiet it is set to, not seconds more.
            beat = await w.next_of("heartbeat", timeout=3)
            assert beat["version"] == 0 and beat["server_time"].endswith("Z")
            await move(c, game, "flag", 0, 0)
            await move(c, game, "flag", 1, 0)
            await w.until_version(2)
            seen = len(w.messages)
            beat = await w.next_of("heartbeat", after=seen)
            assert beat["version"] == 2
            # A client that only saw heartbeats can tell it is up to date.
            assert all(m["version"] <= 2 for m in w.of("heartbeat"))


async def test_a_subscriber_that_does_not_read_is_dropped_with_1013(
    live_server: str,
) -> None:
    """A stalled socket is closed with 1013 while the others keep flowing.

    On a large board with few mines the first reveal opens almost everything: its diff
    (compact, yet some 400 kB) alone is more than the socket buffers of a client that does
    not read can hold, so the flags after it pile up in the server's 256-message queue
    until it overflows, or the send waiting on the client times out."""
    moves = 300
    async with httpx.AsyncClient(base_url=live_server, timeout=TIMEOUT,
                                 limits=httpx.Limits(max_connections=8)) as c:
        game = await create(c, width=1000, height=400, mines=400, seed=5)
        stalled = await asyncio.to_thread(RawSocket, ws_url(live_server, game.id))
        try:
            async with Watcher(ws_url(live_server, game.id)) as good:
                await good.next_of("snapshot")
                opened = await move(c, game, "reveal", 500, 200)
                assert sum(len(chars) for _, _, chars in opened["cells"]) > 300_000
                board = (await c.get(f"/games/{game.id}")).json()["board"]
                x, y = next((x, y) for y, row in enumerate(board)
                            for x, ch in enumerate(row) if ch == "#")
                for _ in range(moves):
                    await move(c, game, "flag", x, y)
                await good.until_version(moves + 1, timeout=120)
                assert [m["version"] for m in good.of("diff")] == list(range(1, moves + 2))
                # Only now read what the stalled client was sent: it ends in a 1013 close.
                frames = await asyncio.to_thread(stalled.frames)
                opcode, payload = frames[-1]
                assert opcode == 8 and close_code(payload) == 1013, payload
                texts = [json.loads(p) for op, p in frames if op == 1]
                assert texts[0]["type"] == "snapshot"
                got = [m["version"] for m in texts if m["type"] == "diff"]
                assert got == list(range(1, len(got) + 1)) and len(got) < moves
                # The good subscriber is still live.
                await move(c, game, "flag", x, y)
                await good.until_version(moves + 2)
                assert good.close_code is None
        finally:
            stalled.close()
        # The dropped client resumes with since and catches up.
        since = got[-1] if got else 0
        async with Watcher(ws_url(live_server, game.id, since=since)) as back:
            await back.until_version(moves + 2, timeout=120)
            assert not back.of("snapshot")
            assert [m["version"] for m in back.of("diff")] == list(range(since + 1, moves + 3))


async def test_a_socket_that_catches_up_on_a_paused_game_sees_no_cells(
    replicas: tuple[str, str],
) -> None:
    """Pausing hides the board: a client that (re)connects with ``since`` while the game
    is paused gets a paused snapshot, not the missed diffs' cells; the board comes back
    once the game is resumed."""
    a, b = replicas
    async with httpx.AsyncClient(base_url=a, timeout=TIMEOUT) as c:
        game = await create(c, preset="beginner", seed=1)
        opened = await move(c, game, "reveal", 4, 4)
        assert opened["cells"]
        await move(c, game, "flag", 7, 5)
        paused = await c.post(f"/games/{game.id}/pause", headers=game.auth)
        assert paused.status_code == 200
        async with Watcher(ws_url(b, game.id, since=0)) as late:
            snapshot = await late.next_of("snapshot")
            game_view = snapshot["game"]
            assert game_view["paused"] is True and game_view["version"] == 3
            assert set("".join(game_view["board"])) == {"#"}
            assert not [m for m in late.messages if m.get("cells")]
            resumed = await c.post(f"/games/{game.id}/resume", headers=game.auth)
            assert resumed.status_code == 200
            await late.until_version(4)
            shown = await late.next_of("snapshot", after=late.messages.index(snapshot) + 1)
            assert shown["game"]["board"][5][7] == "F" and shown["game"]["paused"] is False
        # Caught up across a pause and a resume: the diffs, cells and all.
        async with Watcher(ws_url(a, game.id, since=0)) as later:
            await later.until_version(4)
            assert [m["version"] for m in later.of("diff")] == [1, 2, 3, 4]
            assert later.of("diff")[0]["cells"] == opened["cells"]
