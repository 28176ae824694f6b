"""End to end in a real browser: a whole game by clicking, and two people at one table."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.server import ServerProcess

pytestmark = [pytest.mark.filterwarnings("ignore::DeprecationWarning"), pytest.mark.slow]

TIMEOUT = 15_000  # ms, for any single wait


def new_page(browser: Any, width: int = 1200, height: int = 900) -> Any:
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.errors = errors
    return page


def wait_for_my_turn_or_end(page: Any) -> str:
    page.wait_for_function(
        "document.body.dataset.status === 'finished' || document.body.dataset.turn === 'mine'",
        timeout=TIMEOUT,
    )
    return page.evaluate("document.body.dataset.status")


def move_number(page: Any) -> int:
    return int(page.evaluate("document.body.dataset.move"))


def wait_for_move_after(page: Any, seen: int) -> None:
    page.wait_for_function(f"Number(document.body.dataset.move) > {seen}", timeout=TIMEOUT)


def play_one_turn(page: Any, use_keys: bool = False) -> None:
    """Draw while rows are short, then take the fullest row: by clicks (or keys)."""
    takeable = page.locator(".row.can-take")
    deck_enabled = page.locator("#deck").is_enabled()
    best_take, best_size = None, 0
    for i in range(takeable.count()):
        row = takeable.nth(i)
        size = row.locator(".cards .card").count()
        if size > best_size:
            best_take, best_size = row, size
    before = move_number(page)
    if best_take is not None and (not deck_enabled or best_size >= 2):
        if use_keys:
            page.keyboard.press(best_take.get_attribute("data-row"))
        else:
            best_take.click()
        wait_for_move_after(page, before)
        return
    if page.locator("#pass").is_visible():
        page.click("#pass")
        wait_for_move_after(page, before)
        return
    if use_keys:
        page.keyboard.press("d")
    else:
        page.click("#deck")
    wait_for_move_after(page, before)
    place = page.locator(".row.can-place").first
    place.wait_for(timeout=TIMEOUT)
    before = move_number(page)
    if use_keys:
        page.keyboard.press(place.get_attribute("data-row"))
    else:
        place.click()
    wait_for_move_after(page, before)


def create_game(
    page: Any,
    base: str,
    name: str,
    seats: list[str],
    shot: Path | None = None,
    rules: dict[str, str] | None = None,
) -> str:
    """Fill in the lobby form: ``seats[i]`` is 'human' or 'bot:NAME' (seat 1 is the creator);
    ``rules`` chooses rule options by name."""
    page.goto(base + "/")
    page.fill("#creator-name", name)
    page.select_option("#seat-count", str(len(seats)))
    for i, spec in enumerate(seats):
        page.select_option(f"#seat-{i}", spec)
    if rules:
        page.click("summary")  # open the rule options
        for option, value in rules.items():
            page.select_option(f"#rule-{option}", value)
    if shot is not None:
        page.screenshot(path=str(shot), full_page=True)
    page.click("#create-button")
    page.wait_for_url("**/games/*", timeout=TIMEOUT)
    page.wait_for_selector(".row", timeout=TIMEOUT)
    return page.url.rstrip("/").split("/")[-1]


def test_a_person_plays_three_bots_to_the_end_and_sees_the_scoring(
    server: ServerProcess, browser: Any, screenshots: Path | None
) -> None:
    page = new_page(browser)
    lobby_shot = screenshots / "lobby.png" if screenshots is not None else None
    game_id = create_game(
        page, server.url, "Ann", ["human", "bot:random", "bot:greedy", "bot:random"], lobby_shot
    )
    assert page.locator(".player").count() == 4
    turns = 0
    while wait_for_my_turn_or_end(page) != "finished":
        if turns == 4:
            # The hint button: the analysis of the position, shown beside the table.
            page.click("#hint")
            page.wait_for_function(
                "document.getElementById('hint-text').textContent.startsWith('Hint:')", timeout=TIMEOUT
            )
            assert "to win" in page.inner_text("#hint-text")
            if screenshots is not None:
                page.screenshot(path=str(screenshots / "table.png"), full_page=True)
        play_one_turn(page)
        turns += 1
        assert turns < 200, "the game does not end"
    assert turns >= 5
    final = page.locator("#final")
    final.wait_for(timeout=TIMEOUT)
    assert "wins" in final.inner_text() or "Shared win" in final.inner_text()
    rows = final.locator(".scoring tbody tr")
    assert rows.count() == 4
    # The totals on the screen are the engine's: the record's result says the same.
    record = httpx.get(f"{server.url}/api/games/{game_id}/record").json()
    shown = [int(rows.nth(i).locator("td.total").inner_text()) for i in range(4)]
    assert shown == record["result"]["totals"]
    winners = [i for i in range(4) if "winner" in (rows.nth(i).get_attribute("class") or "")]
    assert winners == record["result"]["winners"]
    assert record["seats"][0] == "Ann"
    if screenshots is not None:
        page.screenshot(path=str(screenshots / "end.png"), full_page=True)
    # The replay viewer steps through the moves to the same end.
    page.click("text=Replay")
    page.wait_for_selector("#slider", timeout=TIMEOUT)
    page.wait_for_function("document.getElementById('position').textContent.includes('move 0')")
    page.keyboard.press("ArrowRight")
    page.wait_for_function("document.getElementById('position').textContent.startsWith('move 1 ')")
    assert "drew" in page.inner_text("#move-text")
    page.keyboard.press("End")
    assert page.locator("#result .scoring tbody tr").count() == 4
    assert page.errors == []


def test_two_people_see_each_others_moves_live(server: ServerProcess, browser: Any) -> None:
    ann = new_page(browser)
    create_game(ann, server.url, "Ann", ["human", "human", "bot:random"])
    assert "Waiting for 1 more player" in ann.inner_text("#turn")
    invite = ann.input_value("#invite-link")
    # Bob opens the invite link in another browser context, on a phone-sized screen.
    bob = new_page(browser, width=390, height=844)
    bob.goto(invite)
    bob.fill("#join-name", "Bob")
    bob.click("#join button[data-seat='1']")
    for page in (ann, bob):
        page.wait_for_function("document.body.dataset.status === 'playing'", timeout=TIMEOUT)
    moves_by = {"Ann": 0, "Bob": 0}
    while min(moves_by.values()) < 3:
        for name, page, other in (("Ann", ann, bob), ("Bob", bob, ann)):
            if page.evaluate("document.body.dataset.turn") != "mine":
                continue
            seen = move_number(other)
            play_one_turn(page, use_keys=name == "Bob")
            moves_by[name] += 1
            # The other person sees the move without reloading.
            wait_for_move_after(other, seen)
            last = page.locator("#log li").last.inner_text()
            other.wait_for_function(
                "text => [...document.querySelectorAll('#log li')].some(li => li.textContent === text)",
                arg=last,
                timeout=TIMEOUT,
            )
        ann.wait_for_timeout(50)
        if ann.evaluate("document.body.dataset.status") == "finished":
            break
    log_text = bob.inner_text("#log")
    assert "Ann " in log_text and "Bob " in log_text
    # A reload puts Bob back in his seat.
    bob.reload()
    bob.wait_for_selector(".player.me", timeout=TIMEOUT)
    assert "Bob" in bob.locator(".player.me .name").inner_text()
    assert ann.errors == [] and bob.errors == []


def test_a_person_chooses_starting_colours_by_click_and_by_key(
    server: ServerProcess, browser: Any, screenshots: Path | None
) -> None:
    page = new_page(browser)
    game_id = create_game(
        page, server.url, "Ann", ["human", "bot:random"], rules={"starting_colours": "chosen"}
    )
    watcher = new_page(browser)
    watcher.goto(f"{server.url}/games/{game_id}")
    chosen: list[str] = []
    for use_key in (False, True):  # two players choose two colours each
        wait_for_my_turn_or_end(page)
        buttons = page.locator("#start-choice button[data-action^='s:']")
        buttons.first.wait_for(timeout=TIMEOUT)
        assert "choose a starting colour" in page.inner_text("#turn")
        free = [buttons.nth(i).get_attribute("data-action") for i in range(buttons.count())]
        # five colours, four choices: at least two are free whoever chooses first
        assert not set(free) & {f"s:{t}" for t in chosen} and len(free) >= 2
        # a spectator sees that colours are being chosen, and has nothing to click
        watcher.wait_for_function(
            f"Number(document.body.dataset.move) === {move_number(page)}", timeout=TIMEOUT
        )
        assert "Starting colours are being chosen" in watcher.inner_text("#start-choice")
        assert watcher.locator("#start-choice button").count() == 0
        if screenshots is not None and not use_key:
            page.screenshot(path=str(screenshots / "choosing.png"), full_page=True)
        before = move_number(page)
        action = free[-1]
        if use_key:
            page.keyboard.press(action[2:].lower())
        else:
            buttons.last.click()
        wait_for_move_after(page, before)
        chosen.append(action[2:])
        mine = page.locator(f".player.me .collection .card[data-card='{action[2:]}']")
        mine.wait_for(timeout=TIMEOUT)
        assert "as a starting colour" in page.locator("#log li").nth(before).inner_text()
    # once every colour is chosen, round 1 begins
    page.wait_for_function("document.getElementById('start-choice').hidden", timeout=TIMEOUT)
    assert page.inner_text("#round").startswith("Round 1")
    log = page.inner_text("#log")
    assert log.count("as a starting colour") == 4
    state = httpx.get(f"{server.url}/api/games/{game_id}").json()
    assert state["start_picks_left"] == 0
    assert [e["move"] for e in state["log"] if e["seat"] == 0][:2] == [f"s:{t}" for t in chosen]
    wait_for_my_turn_or_end(page)
    play_one_turn(page)
    assert page.errors == [] and watcher.errors == []


def test_the_lobby_form_is_the_servers_rule_options(server: ServerProcess, browser: Any) -> None:
    page = new_page(browser)
    page.goto(server.url + "/")
    offered = httpx.get(f"{server.url}/api/options").json()["rules"]
    page.wait_for_selector(f"#rule-{offered[-1]['name']}", state="attached", timeout=TIMEOUT)
    page.click("summary")
    seats = next(o for o in offered if o["set_by_seats"])
    counts = page.locator("#seat-count option").all_inner_texts()
    assert counts == [str(n) for n in range(seats["minimum"], seats["maximum"] + 1)]
    assert page.input_value("#seat-count") == str(seats["default"])
    for option in offered:
        field = page.locator(f"#rule-{option['name']}")
        if option["set_by_seats"]:
            assert field.count() == 0
        elif option["kind"] == "choice":
            assert field.locator("option").all_inner_texts() == option["choices"]
            assert field.input_value() == option["default"]
        else:
            assert field.get_attribute("type") == "number"
            assert field.get_attribute("max") == (
                None if option["maximum"] is None else str(option["maximum"])
            )
            assert field.input_value() == ("" if option["optional"] else str(option["default"]))
    # numbers are sent as numbers, choices as their values
    page.fill("#creator-name", "Ann")
    page.select_option("#seat-count", "2")
    page.select_option("#seat-1", "bot:random")
    page.select_option("#rule-starting_colours", "chosen")
    page.fill("#rule-match_games", "2")
    page.fill("#rule-cards_under_last_round", "10")
    page.click("#create-button")
    page.wait_for_url("**/games/*", timeout=TIMEOUT)
    game_id = page.url.rstrip("/").split("/")[-1]
    rules = httpx.get(f"{server.url}/api/games/{game_id}").json()["game"]["rules"]
    assert (rules["players"], rules["match_games"], rules["cards_under_last_round"]) == (2, 2, 10)
    assert rules["starting_colours"] == "chosen"
    assert page.errors == []
