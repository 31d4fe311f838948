"""Live play in the browser: spectators, moves from other clients, a dropped socket."""

from __future__ import annotations

import json
import re
from typing import Any

from tests.web.support import Api, mine_layout, require_chromium

require_chromium()

from playwright.sync_api import WebSocketRoute, expect  # noqa: E402

from tests.web.conftest import Minesweeper  # noqa: E402

BEGINNER = {"width": 9, "height": 9, "mines": 10}


def board_of(api: Api, game_id: str) -> list[str]:
    return list("".join(api.get(game_id)["board"]))


def first_hidden(ms: Minesweeper) -> tuple[int, int]:
    hidden = next(i for i, s in enumerate(ms.states()) if s == "#")
    return hidden % 9, hidden // 9


def xy(i: int) -> tuple[int, int]:
    return i % 9, i // 9


def record_connection_states(ms: Minesweeper) -> None:
    ms.page.evaluate(
        """() => {
          const el = document.querySelector('#conn');
          window.connStates = [el.dataset.state];
          new MutationObserver(() => connStates.push(el.dataset.state))
            .observe(el, {attributes: true, attributeFilter: ['data-state']});
        }"""
    )


def test_a_spectator_follows_a_game_played_through_the_api(api: Api, ms: Minesweeper) -> None:
    mines = mine_layout(api, {**BEGINNER, "seed": 11}, (4, 4))
    game, token = api.create(**BEGINNER, seed=11)
    gid = game["id"]
    ms.watch(gid)
    expect(ms.page.locator("#watch-banner")).to_be_visible()
    expect(ms.grid).to_have_attribute("aria-readonly", "true")
    expect(ms.page.locator("#conn")).to_have_text("Live")
    assert ms.timer() == 0

    api.move(gid, token, "reveal", 4, 4)
    ms.expect_opened(4, 4)
    expect(ms.page.locator("#timer")).to_have_attribute("data-value", "1")
    hidden = next(i for i, ch in enumerate(board_of(api, gid)) if ch == "#")
    hx, hy = hidden % 9, hidden // 9
    api.move(gid, token, "flag", hx, hy)
    ms.expect_state(hx, hy, "F")
    assert ms.mines_left() == 9
    assert ms.states() == board_of(api, gid)

    # Watching is read-only: clicks do nothing, and send nothing.
    spare = next(i for i, ch in enumerate(board_of(api, gid)) if ch == "#")
    sx, sy = spare % 9, spare // 9
    ms.cell(sx, sy).click()
    ms.cell(sx, sy).click(button="right")
    ms.page.wait_for_timeout(400)
    ms.expect_state(sx, sy, "#")
    clicks = api.get(gid)["stats"]["clicks"]
    assert (clicks["reveal"], clicks["flag"]) == (1, 1)

    # The end shows as it does to the player.
    boom = min(mines - {(hx, hy)})
    api.move(gid, token, "reveal", *boom)
    ms.expect_state(*boom, "X")
    expect(ms.page.locator("#result")).to_contain_text("The player hit a mine.")
    assert ms.face() == "dead"
    assert ms.states() == board_of(api, gid)

    # A reset takes the spectator to the new game.
    new, _ = api.reset(gid, token)
    expect(ms.page).to_have_url(re.compile(f"#/watch/{new['id']}$"))
    expect(ms.page.locator("#frame")).to_have_attribute("data-status", "ready")
    assert set(ms.states()) == {"#"}


def test_moves_in_the_players_page_reach_a_spectator_by_the_share_link(
    ms: Minesweeper, new_ms: Any, browser: Any
) -> None:
    ms.goto()
    ms.page.get_by_role("button", name="Share", exact=True).click()
    link = ms.page.get_by_role("textbox", name="Link").input_value()
    assert link.endswith(f"#/watch/{ms.game_id}")
    ms.page.get_by_role("button", name="Close").click()

    other = browser.new_context()  # another browser: no token there
    try:
        spectator = new_ms(other)
        spectator.page.goto(link)
        spectator.wait_game(ms.game_id)
        expect(spectator.page.locator("#conn")).to_have_text("Live")

        ms.cell(4, 4).click()
        ms.expect_opened(4, 4)
        spectator.expect_opened(4, 4)
        x, y = first_hidden(ms)
        ms.cell(x, y).click(button="right")
        spectator.expect_state(x, y, "F")
        assert spectator.states() == ms.states()
        assert spectator.mines_left() == ms.mines_left() == 9
    finally:
        other.close()


def test_two_tabs_of_the_player_stay_in_step(ms: Minesweeper, new_ms: Any) -> None:
    ms.goto()
    second = new_ms()  # same browser: it holds the token too
    second.goto(f"#/game/{ms.game_id}")
    second.wait_game(ms.game_id)
    expect(second.page.locator("#watch-banner")).to_be_hidden()
    ms.cell(4, 4).click()
    second.expect_opened(4, 4)
    x, y = first_hidden(second)
    second.cell(x, y).click(button="right")
    ms.expect_state(x, y, "F")
    assert ms.states() == second.states()


def test_the_players_moves_go_over_the_games_socket(api: Api, ms: Minesweeper) -> None:
    game, token = api.create(**BEGINNER, seed=13)
    gid = game["id"]
    sent: list[dict[str, Any]] = []
    posts: list[str] = []

    def relay(ws: WebSocketRoute) -> None:
        server = ws.connect_to_server()

        def up(message: str | bytes) -> None:
            sent.append(json.loads(message))
            server.send(message)

        ws.on_message(up)

    ms.page.route_web_socket(re.compile(r"/games/[0-9a-f]+/events"), relay)
    # The first visit registers the page's player (POST /players): only moves are counted.
    ms.page.on(
        "request",
        lambda r: posts.append(r.url) if r.method == "POST" and "/games/" in r.url else None,
    )
    ms.play(gid, token)
    ms.cell(4, 4).click()
    ms.expect_opened(4, 4)
    x, y = first_hidden(ms)
    ms.cell(x, y).click(button="right")
    ms.expect_state(x, y, "F")

    assert posts == [], "no move goes over HTTP"
    assert [m["type"] for m in sent] == ["auth", "reveal", "flag"], sent
    assert sent[0]["token"] == token
    reveal, flag = sent[1], sent[2]
    assert (reveal["x"], reveal["y"], flag["x"], flag["y"]) == (4, 4, x, y)
    assert reveal["id"] != flag["id"]
    assert ms.states() == board_of(api, gid)
    clicks = api.get(gid)["stats"]["clicks"]
    assert (clicks["reveal"], clicks["flag"]) == (1, 1), "each move played once"


def test_a_dropped_connection_resumes_with_since(api: Api, ms: Minesweeper) -> None:
    game, token = api.create(**BEGINNER, seed=12)
    gid = game["id"]
    sockets: list[WebSocketRoute] = []
    stalled = {"on": False}

    def relay(ws: WebSocketRoute) -> None:
        server = ws.connect_to_server()

        def down(message: str | bytes) -> None:
            if not stalled["on"]:
                ws.send(message)

        server.on_message(down)
        sockets.append(ws)

    ms.page.route_web_socket(re.compile(r"/games/[0-9a-f]+/events"), relay)
    ms.watch(gid)
    expect(ms.page.locator("#conn")).to_have_text("Live")
    record_connection_states(ms)

    api.move(gid, token, "reveal", 4, 4)
    ms.expect_opened(4, 4)
    # The network stalls: the next move does not arrive...
    stalled["on"] = True
    hidden = next(i for i, ch in enumerate(board_of(api, gid)) if ch == "#")
    x, y = hidden % 9, hidden // 9
    api.move(gid, token, "flag", x, y)
    ms.page.wait_for_timeout(500)
    ms.expect_state(x, y, "#")
    # ...then the socket drops; the page reconnects from the version it holds.
    stalled["on"] = False
    sockets[0].close(code=4000, reason="dropped")
    ms.expect_state(x, y, "F")
    assert len(sockets) == 2
    assert re.search(r"[?&]since=1(&|$)", sockets[1].url), sockets[1].url
    expect(ms.page.locator("#conn")).to_have_text("Live")
    states = ms.page.evaluate("connStates")
    assert "reconnecting" in states and states[-1] == "live", states
    assert ms.states() == board_of(api, gid)


def record_connection_texts(ms: Minesweeper) -> None:
    """Keep every text written to the connection's live region: each write is spoken."""
    ms.page.evaluate(
        """() => {
          const el = document.querySelector('#conn');
          window.connTexts = [];
          new MutationObserver(() => connTexts.push(el.textContent))
            .observe(el, {childList: true, characterData: true, subtree: true});
        }"""
    )


def expect_normal_look(ms: Minesweeper, x: int, y: int, like: tuple[int, int]) -> None:
    """Cell (x, y) is hidden and painted as the hidden cell ``like`` is, not as pending."""
    ms.expect_state(x, y, "#")
    expect(ms.cell(x, y)).not_to_have_class(re.compile(r"\bpending\b"))
    ms.expect_painted(x, y, tuple(ms.painted(*like)))


def test_going_offline_says_so_at_once_and_a_move_then_gives_up_in_time(
    context: Any, ms: Minesweeper
) -> None:
    ms.goto()
    ms.cell(4, 4).click()
    ms.expect_opened(4, 4)
    conn = ms.page.locator("#conn")
    record_connection_texts(ms)

    context.set_offline(True)
    expect(conn).to_have_text("Connection lost: reconnecting…")
    expect(conn).to_be_in_viewport()
    hidden = [i for i, s in enumerate(ms.states()) if s == "#"]
    (x, y), other = xy(hidden[0]), xy(hidden[-1])
    ms.cell(x, y).click()
    expect(ms.cell(x, y)).to_have_class(re.compile(r"\bpending\b"))
    # The move waits for a socket as long as promised, then says it was not played.
    toast = ms.page.locator("#toasts")
    expect(toast).to_have_text(
        re.compile("The server cannot be reached; that move was not played."), timeout=15_000
    )
    expect(toast.locator(".toast").first).to_be_in_viewport()
    expect_normal_look(ms, x, y, other)
    expect(conn).to_have_text("Connection lost: reconnecting…")

    context.set_offline(False)
    expect(conn).to_have_text("")
    texts = ms.page.evaluate("connTexts")
    assert texts.count("Connection lost: reconnecting…") == 1, texts
    ms.cell(x, y).click(button="right")
    ms.expect_state(x, y, "F")


def test_a_move_the_server_never_answers_is_given_up_in_time(
    api: Api, ms: Minesweeper
) -> None:
    game, token = api.create(**BEGINNER, seed=12)
    gid = game["id"]
    sockets: list[WebSocketRoute] = []
    silent = {"on": False}

    def relay(ws: WebSocketRoute) -> None:
        server = ws.connect_to_server()

        # A network gone quiet: what the page sends is lost, and nothing closes.
        def up(message: str | bytes) -> None:
            if not silent["on"]:
                server.send(message)

        ws.on_message(up)
        sockets.append(ws)

    ms.page.route_web_socket(re.compile(r"/games/[0-9a-f]+/events"), relay)
    ms.play(gid, token)
    ms.cell(4, 4).click()
    ms.expect_opened(4, 4)
    hidden = [i for i, ch in enumerate(board_of(api, gid)) if ch == "#"]
    (x, y), other = xy(hidden[0]), xy(hidden[-1])
    conn = ms.page.locator("#conn")
    record_connection_texts(ms)

    silent["on"] = True
    ms.cell(x, y).click()
    expect(ms.cell(x, y)).to_have_class(re.compile(r"\bpending\b"))
    toast = ms.page.locator("#toasts")
    expect(toast).to_have_text(
        re.compile(
            "No answer to that move: reconnecting. The board will show whether it was played."
        ),
        timeout=15_000,
    )
    expect(toast.locator(".toast").first).to_be_in_viewport()
    silent["on"] = False
    expect_normal_look(ms, x, y, other)
    # The page dialled again and is back in step.
    expect(conn).to_have_text("")
    assert len(sockets) == 2
    assert "Connection lost: reconnecting…" in ms.page.evaluate("connTexts")
    assert ms.states() == board_of(api, gid)


def test_a_spectators_live_status_is_said_once_not_after_every_move(
    api: Api, ms: Minesweeper
) -> None:
    game, token = api.create(**BEGINNER, seed=11)
    gid = game["id"]
    ms.watch(gid)
    conn = ms.page.locator("#conn")
    expect(conn).to_have_text("Live")
    expect(conn).to_be_in_viewport()
    record_connection_texts(ms)

    api.move(gid, token, "reveal", 4, 4)
    ms.expect_opened(4, 4)
    hidden = [i for i, ch in enumerate(board_of(api, gid)) if ch == "#"]
    for i in hidden[:2]:
        api.move(gid, token, "flag", *xy(i))
        ms.expect_state(*xy(hidden[0]), "F")
    ms.expect_state(*xy(hidden[1]), "F")
    expect(conn).to_have_text("Live")
    assert ms.page.evaluate("connTexts") == [], "a live region rewritten is read out again"
