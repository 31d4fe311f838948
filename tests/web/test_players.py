"""Players in the browser: the guest made on the first visit, renaming it, the profile
page with its stats and replays, on a desktop and on a phone."""

from __future__ import annotations

import json
import random
import re
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from tests.support.solve import HUMAN_PACE, win
from tests.web.support import ARTIFACTS, Api, mine_layout, require_chromium, token_script

require_chromium()

from playwright.sync_api import Browser, Locator, Page, expect  # noqa: E402

from tests.web.conftest import Minesweeper  # noqa: E402
from tests.web.test_layout import PHONE  # noqa: E402

GUEST = re.compile(r"^[A-Z][a-z]+[A-Z][a-z]+-\d{1,4}$")


def kept_player(page: Page) -> dict[str, Any]:
    """The player this browser keeps: ``id``, ``name``, ``token``."""
    player: dict[str, Any] = page.evaluate("JSON.parse(localStorage.getItem('minesweeper.player'))")
    assert player, "the page keeps no player"
    return player


def player_button(page: Page) -> Locator:
    return page.get_by_role("link", name=re.compile("^Your profile"))


def expect_in_viewport(locator: Locator) -> None:
    expect(locator).to_be_visible()
    expect(locator).to_be_in_viewport()


def unique_name(prefix: str) -> str:
    return f"{prefix}-{random.randrange(10**6):06d}"


def test_a_first_visit_makes_a_guest_whose_games_are_theirs_and_who_can_rename(
    api: Api, ms: Minesweeper
) -> None:
    ms.goto()
    page = ms.page
    button = player_button(page)
    expect_in_viewport(button)
    expect(page.locator("#player-label")).to_have_text(GUEST)
    name = page.locator("#player-label").inner_text()
    player = kept_player(page)
    assert player["name"] == name
    expect(page.locator(".toast", has_text=f"You are playing as {name}.")).to_be_in_viewport()
    # The first game is already the guest's: made with the player's token.
    game = api.get(ms.game_id)
    assert (game["player_id"], game["player"]) == (player["id"], name)

    # The notice's "Change name" opens the profile with the name ready to type.
    page.locator(".toast").get_by_role("button", name="Change name").click()
    expect(page).to_have_url(re.compile(f"#/player/{player['id']}$"))
    profile = page.locator("#profile")
    expect_in_viewport(profile.get_by_role("heading", name=name, exact=True))
    expect(profile.get_by_text("You", exact=True)).to_be_visible()
    expect(page.locator("#game")).to_be_hidden()
    field = profile.get_by_label("Your name")
    expect(field).to_be_focused()
    expect(field).to_have_value(name)

    # A name somebody has, in any case, is refused with the reason.
    taken = unique_name("Taken")
    assert api.http.post("/players", json={"name": taken}).status_code == 201
    field.fill(taken.lower())
    profile.get_by_role("button", name="Rename").click()
    alert = profile.get_by_role("alert")
    expect_in_viewport(alert)
    expect(alert).to_have_text(
        f"“{taken.lower()}” is taken: names are unique, ignoring upper and lower case."
        " Try another one."
    )
    expect(field).to_have_attribute("aria-invalid", "true")
    expect(field).to_be_focused()
    # A name outside the rules is refused before it is sent.
    field.fill("Ada Lovelace")
    expect(profile.locator("#rename-error")).to_be_empty()
    page.keyboard.press("Enter")
    expect(alert).to_contain_text("letters, digits, dashes (-) or underscores (_), no spaces")
    assert api.http.get(f"/players/{player['id']}").json()["name"] == name

    renamed = unique_name("Ada")
    field.fill(renamed)
    page.keyboard.press("Enter")
    expect(profile.get_by_role("status").filter(has_text="Renamed")).to_have_text(
        f"Renamed: you are {renamed} now, on every game and leaderboard entry."
    )
    expect(profile.get_by_role("heading", name=renamed, exact=True)).to_be_visible()
    expect(page.locator("#player-label")).to_have_text(renamed)
    assert api.http.get(f"/players/{player['id']}").json()["name"] == renamed
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "web-profile-rename.png"))

    # Back to the game, which is still the player's; a reload keeps the player.
    profile.get_by_role("button", name="Back to the game").click()
    ms.wait_game(game["id"])
    expect(page.locator("#game")).to_be_visible()
    # The button went with the profile: the board has the keyboard focus, not the page.
    expect(page.locator("#board [role=gridcell]:focus")).to_have_count(1)
    page.reload()
    expect(page.locator("#player-label")).to_have_text(renamed)
    assert kept_player(page)["id"] == player["id"]
    expect(page.locator(".toast", has_text="You are playing as")).to_have_count(0)


WELCOME = "You are playing as"


def test_the_welcome_notice_follows_a_rename_and_new_games_take_the_new_name(
    api: Api, ms: Minesweeper
) -> None:
    ms.goto()
    page = ms.page
    expect(page.locator("#player-label")).to_have_text(GUEST)
    name = page.locator("#player-label").inner_text()
    welcome = page.locator(".toast", has_text=WELCOME)
    expect(welcome).to_have_text(re.compile(f"^{WELCOME} {name}\\."))
    first = ms.game_id

    # Renamed from the profile (the top bar's link), with the notice still on show.
    player_button(page).click()
    field = page.locator("#profile").get_by_label("Your name")
    renamed = unique_name("Bea")
    field.fill(renamed)
    page.keyboard.press("Enter")
    expect(page.locator("#player-label")).to_have_text(renamed)
    page.locator("#profile").get_by_role("button", name="Back to the game").click()
    ms.wait_game(first)
    expect(page.locator("#game")).to_be_visible()
    # Nothing on the page names the player by the old name any more: the game made under
    # it says whose it is by the name they have now.
    expect(page.locator(".toast", has_text=name)).to_have_count(0)
    expect(page.locator("#notes")).not_to_contain_text(name)
    expect(page.locator('#game-tags [data-tag="player"]')).to_have_text(f"Playing as {renamed}")

    # A new game from the face (a reset) is made under the new name.
    ms.cell(4, 4).click()
    expect(ms.cell(4, 4)).not_to_have_attribute("data-state", "#")
    page.locator("#face").click()
    # The tag names the player as they are now on either game: the address tells them apart.
    expect(page).not_to_have_url(re.compile(f"{first}$"))
    expect(page.locator('#game-tags [data-tag="player"]')).to_have_text(f"Playing as {renamed}")
    reset = page.evaluate("location.hash").rsplit("/", 1)[-1]
    assert reset != first and api.get(reset)["player"] == renamed
    page.reload()
    expect(page.locator('#game-tags [data-tag="player"]')).to_have_text(f"Playing as {renamed}")
    expect(page.locator(".toast", has_text=WELCOME)).to_have_count(0)


def test_a_first_visit_to_watch_a_game_does_not_say_who_you_are_playing_as(
    api: Api, ms: Minesweeper
) -> None:
    game, token = api.create(preset="beginner", seed=5)
    api.move(game["id"], token, "reveal", 4, 4)
    ms.watch(game["id"])
    page = ms.page
    expect(page.locator("#watch-banner")).to_contain_text("only its player can move")
    expect(page.locator("#player-label")).to_have_text(GUEST)
    name = page.locator("#player-label").inner_text()
    expect(page.locator("#conn")).to_have_text("Live")
    expect(page.locator(".toast", has_text=WELCOME)).to_have_count(0)
    # Once the visitor plays a game of their own, the page says whose it is.
    page.get_by_role("button", name="Play your own game", exact=True).click()
    expect(page.locator("#watch-banner")).to_be_hidden()
    welcome = page.locator(".toast", has_text=WELCOME)
    expect(welcome).to_have_text(re.compile(f"^{WELCOME} {name}\\."))


def test_the_welcome_notice_gives_way_to_the_result(api: Api, ms: Minesweeper) -> None:
    # One mine: the first click opens all but a few cells, and the game is soon won.
    settings = {"width": 9, "height": 9, "mines": 1, "seed": 11}
    mines = mine_layout(api, settings, (4, 4))
    game, token = api.create(**settings)
    # This browser made that game and left it unfinished: the first visit resumes it.
    ms.page.add_init_script(
        token_script(game["id"], token)
        + f"localStorage.setItem('minesweeper.last', {json.dumps(json.dumps(game['id']))});"
    )
    ms.goto()
    ms.wait_game(game["id"])
    page = ms.page
    welcome = page.locator(".toast", has_text=WELCOME)
    expect(welcome).to_be_visible()
    ms.cell(4, 4).click()
    ms.expect_opened(4, 4)
    for y in range(9):
        for x in range(9):
            if (x, y) not in mines and ms.state(x, y) == "#":
                ms.cell(x, y).click()
                ms.expect_opened(x, y)
    result = page.locator("#result")
    expect(result).to_contain_text("You won!")
    # The notice was about playing: the result takes its place, and the board its room.
    expect(welcome).to_have_count(0)


def to_fixed(value: float, digits: int) -> str:
    """``value.toFixed(digits)`` as the page writes it: halves of the exact binary value
    round up (4.125 is "4.13"), where Python's format rounds them to even ("4.12")."""
    return str(Decimal(value).quantize(Decimal(1).scaleb(-digits), ROUND_HALF_UP))


def test_a_won_game_shows_on_the_profile_with_its_stats_and_its_replay_opens(
    api: Api, ms: Minesweeper
) -> None:
    ms.goto()
    page = ms.page
    expect(page.locator("#player-label")).to_have_text(GUEST)
    player = kept_player(page)
    # A win of this browser's player, at a person's pace so that it counts as a best.
    game_id, _ = win(api.http, preset="beginner", player_token=player["token"], pace=HUMAN_PACE)
    stats = api.http.get(f"/players/{player['id']}").json()["stats"]["beginner"]["classic"]
    won = api.get(game_id)
    assert stats["won"] >= 1 and stats["best_ms"] is not None

    # The header's link opens the profile, from the keyboard too.
    player_button(page).focus()
    page.keyboard.press("Enter")
    expect(page).to_have_url(re.compile(f"#/player/{player['id']}$"))
    profile = page.locator("#profile")
    expect_in_viewport(profile.get_by_role("heading", name=player["name"], exact=True))
    row = profile.locator('tr[data-board="beginner-classic"]')
    expect_in_viewport(row)
    cells = row.locator("td")
    expect(row.locator("th")).to_have_text("Beginner")
    expect(cells.nth(0)).to_have_text(f"{stats['won']} of {stats['played']}")
    expect(cells.nth(1)).to_have_text(f"{stats['best_ms'] / 1000:.3f} s")
    expect(cells.nth(2)).to_have_text(to_fixed(stats["best_bbbv_per_s"], 2))
    expect(cells.nth(3)).to_have_text(f"{stats['streak']} (best {stats['best_streak']})")
    # Boards not played show nothing.
    expect(profile.locator('tr[data-board="expert-noguess"] td').nth(0)).to_have_text("0 of 0")
    expect(profile.locator('tr[data-board="expert-noguess"] td').nth(1)).to_have_text("—")

    item = profile.locator(f'#profile-recent li[data-game-id="{game_id}"]')
    expect_in_viewport(item)
    expect(profile.locator("#profile-recent li").first).to_have_attribute("data-game-id", game_id)
    expect(item).to_contain_text("Won")
    expect(item).to_contain_text(f"Beginner · {won['elapsed_ms'] / 1000:.3f} s")
    page.screenshot(path=str(ARTIFACTS / "web-profile.png"))

    item.get_by_role("button", name=re.compile("^Replay: won, Beginner")).click()
    expect(page).to_have_url(re.compile(f"#/replay/{game_id}$"))
    expect_in_viewport(page.get_by_role("heading", name=f"Replay: {player['name']} won"))
    page.keyboard.press("End")
    expect(page.locator("#replay-frame")).to_have_attribute("data-status", "won")
    # Back goes to the profile it came from; Escape from there to the game.
    page.get_by_role("button", name="Back to the game").click()
    expect(page).to_have_url(re.compile(f"#/player/{player['id']}$"))
    expect_in_viewport(profile.get_by_role("heading", name=player["name"], exact=True))
    page.keyboard.press("Escape")
    expect(page.locator("#game")).to_be_visible()
    expect(page).to_have_title("Minesweeper")
    expect(page).to_have_url(re.compile(r"#/game/[0-9a-f]{32}$"))


def test_another_players_profile_has_no_rename_and_a_bad_address_says_so(
    api: Api, ms: Minesweeper
) -> None:
    other = api.http.post("/players", json={"name": unique_name("Other")}).json()["player"]
    ms.page.goto(f"{ms.base_url}/#/player/{other['id']}")
    profile = ms.page.locator("#profile")
    expect_in_viewport(profile.get_by_role("heading", name=other["name"], exact=True))
    expect(profile.get_by_text("You", exact=True)).to_have_count(0)
    expect(ms.page).to_have_title(f"{other['name']} — Minesweeper")
    expect(profile.get_by_label("Your name")).to_be_hidden()
    expect(profile.locator("#profile-recent + p")).to_have_text("No finished games yet.")
    ms.page.goto(f"{ms.base_url}/#/player/{'0' * 32}")
    expect(profile.get_by_role("status").first).to_have_text("There is no such player.")
    # The page's own player was made all the same, and "Back" opens a game.
    profile.get_by_role("button", name="Back to the game").click()
    expect(ms.page.locator("#board [data-i]").first).to_be_visible()
    expect(ms.page.locator("#player-label")).to_have_text(GUEST)


def test_the_profile_on_a_phone(browser: Browser, live_server: str, api: Api) -> None:
    ctx = browser.new_context(**PHONE)
    try:
        ms = Minesweeper(ctx.new_page(), live_server)
        ms.goto()
        page = ms.page
        width = PHONE["viewport"]["width"]
        button = player_button(page)
        expect_in_viewport(button)
        expect(page.locator("#player-label")).to_have_text(GUEST)
        box = button.bounding_box()
        assert box and box["x"] >= 0 and box["x"] + box["width"] <= width
        name = page.locator("#player-label").inner_text()
        button.tap()
        profile = page.locator("#profile")
        expect_in_viewport(profile.get_by_role("heading", name=name, exact=True))
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        for selector in ("#rename-form", "#rename-input", "#rename-save", "#profile-stats-title",
                         "#profile-close"):
            box = page.locator(selector).bounding_box()
            assert box, selector
            assert box["x"] >= 0 and box["x"] + box["width"] <= width + 0.5, (selector, box)
        renamed = unique_name("Phone")
        profile.get_by_label("Your name").fill(renamed)
        profile.get_by_role("button", name="Rename").tap()
        expect(page.locator("#player-label")).to_have_text(renamed)
        # The stats fit the phone's width: no sideways scrolling to read them.
        stats = page.locator("#profile-stats")
        stats.scroll_into_view_if_needed()
        box = stats.bounding_box()
        assert box and box["x"] >= 0 and box["x"] + box["width"] <= width, box
        page.screenshot(path=str(ARTIFACTS / "web-profile-phone.png"), full_page=True)
        assert not ms.errors
    finally:
        ctx.close()


def test_a_game_made_before_the_player_is_followed_by_one_of_the_players(
    api: Api, ms: Minesweeper
) -> None:
    # A game from before this browser had a player: anonymous, and a reset keeps that.
    game, token = api.create(preset="beginner")
    ms.play(game["id"], token)
    page = ms.page
    expect(page.locator("#player-label")).to_have_text(GUEST)
    player = kept_player(page)
    ms.cell(4, 4).click()
    ms.expect_opened(4, 4)
    page.locator("#face").click()
    expect(page).not_to_have_url(re.compile(game["id"]))
    fresh = api.get(ms.game_id)
    assert (fresh["player_id"], fresh["player"]) == (player["id"], player["name"])
    # The player's own games are reset as before: the old one names the new one.
    page.locator("#face").click()
    expect(page).not_to_have_url(re.compile(fresh["id"]))
    assert api.get(fresh["id"])["next_id"] == ms.game_id
    assert api.get(ms.game_id)["player_id"] == player["id"]


def test_a_win_held_off_the_peoples_board_says_why(api: Api, ms: Minesweeper) -> None:
    ms.goto()
    page = ms.page
    expect(page.locator("#player-label")).to_have_text(GUEST)
    player = kept_player(page)
    # Played as fast as the service answers: no person clears a board at that pace. On a
    # slow machine a win may still look human, so play until the service holds one.
    for _ in range(5):
        game_id, _token = win(api.http, preset="beginner", player_token=player["token"])
        held = api.get(game_id)["held"]
        if held:
            break
    assert held, "no win at machine pace was held"
    ms.watch(game_id)
    note = page.locator("#result").get_by_text("Not on the people's leaderboard")
    expect_in_viewport(note)
    expect(note).to_contain_text(held["detail"])
    expect(page.locator("#result").get_by_text(re.compile("^Ranked #"))).to_have_count(0)
