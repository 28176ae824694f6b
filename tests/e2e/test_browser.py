"""End to end in a real browser: a whole game by clicking, two people at one table, turn clocks,
seats a bot takes over, bots shown thinking, abandoned games."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.servers import ServeProcess, Servers

pytestmark = [pytest.mark.filterwarnings("ignore::DeprecationWarning"), pytest.mark.slow]

TIMEOUT = 15_000  # ms, for any single wait
#: ms, for a wait on a bot's move: a hang guard; the server's bot workers warm in the background
#: (importing the search, with no bytecode on a fresh clone) before the first bot moves
BOT_TIMEOUT = 180_000

#: records, as the page changes, what flashes by too briefly to poll for: each "thinking…" shown
#: (with its seat and whether it is a polite live region) and every value your seat's countdown shows
WATCH_SCRIPT = """
window.__seen = { thinking: [], countdowns: [] };
new MutationObserver(() => {
  for (const slot of document.querySelectorAll("#players .thinking.on")) {
    const live = slot.getAttribute("aria-live");
    window.__seen.thinking.push({ seat: slot.dataset.seat, text: slot.textContent, live });
  }
  const time = document.querySelector(".player.me .countdown .time");
  const seen = window.__seen.countdowns;
  if (time && seen[seen.length - 1] !== time.textContent) seen.push(time.textContent);
}).observe(document, { subtree: true, childList: true, characterData: true, attributes: true });
"""


@pytest.fixture(scope="module")
def clock_server(module_servers: Servers) -> ServeProcess:
    """Bots slow enough that a person can click between their moves, and untimed games abandoned
    3.6 s after their last move (the sweep looks every 5 s)."""
    return module_servers.one(bot_delay=0.4, args=("--abandon-after", "0.001"))


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
    """Draw while rows are short, then take the fullest row: by clicks (or keys). A card drawn
    already (by a bot that played the seat) is placed first."""
    if page.locator(".row.can-place").count():
        before = move_number(page)
        page.locator(".row.can-place").first.click()
        wait_for_move_after(page, before)
        return
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
    clock: dict[str, str] | None = None,
) -> str:
    """Fill in the lobby form: ``seats[i]`` is 'human' or 'bot:NAME' (seat 1 is the creator);
    ``rules`` chooses rule options by name; ``clock`` is ``{"kind": "move"|"game"|"both",
    "move_seconds": "5", "game_minutes": "10"}``."""
    page.goto(base + "/")
    page.fill("#creator-name", name)
    page.select_option("#seat-count", str(len(seats)))
    for i, spec in enumerate(seats):
        page.select_option(f"#seat-{i}", spec)
    if rules:
        page.click("summary")  # open the rule options
        for option, value in rules.items():
            page.select_option(f"#rule-{option}", value)
    if clock:
        page.select_option("#clock-kind", clock["kind"])
        if "move_seconds" in clock:
            page.fill("#clock-move-seconds", clock["move_seconds"])
        if "game_minutes" in clock:
            page.fill("#clock-game-minutes", clock["game_minutes"])
    if shot is not None:
        page.screenshot(path=str(shot), full_page=True)
    page.click("#create-button")
    # hang guards only: on a busy 2-core machine (bot workers compiling the kernel) a first
    # creation and page load can take longer than a single wait elsewhere
    page.wait_for_url("**/games/*", timeout=4 * TIMEOUT)
    page.wait_for_selector(".row", timeout=4 * TIMEOUT)
    return page.url.rstrip("/").split("/")[-1]


def test_a_person_plays_three_bots_to_the_end_and_sees_the_scoring(
    server: ServeProcess, browser: Any, screenshots: Path | None
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


def test_two_people_see_each_others_moves_live(server: ServeProcess, browser: Any) -> None:
    ann = new_page(browser)
    received: list[str] = []  # what Ann's page is sent over its WebSocket

    def on_socket(socket: Any) -> None:
        socket.on("framereceived", lambda frame: received.append(frame if isinstance(frame, str) else ""))

    ann.on("websocket", on_socket)
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
    # the page speaks protocol 2: the table once, then each move as what changed in it
    kinds = [json.loads(text)["type"] for text in received if text]
    assert kinds.count("change") > kinds.count("state") > 0, kinds
    # A reload puts Bob back in his seat.
    bob.reload()
    bob.wait_for_selector(".player.me", timeout=TIMEOUT)
    assert "Bob" in bob.locator(".player.me .name").inner_text()
    assert ann.errors == [] and bob.errors == []


def test_a_name_typed_to_join_survives_a_state_that_comes_before_the_click(
    server: ServeProcess, browser: Any
) -> None:
    """Every state redraws the join box; one that comes between typing and clicking once sent an
    empty name (a flake of the two-people test)."""
    ann = new_page(browser)
    create_game(ann, server.url, "Ann", ["human", "human"])
    invite = ann.input_value("#invite-link")
    bob = new_page(browser)
    bob.goto(invite)
    bob.fill("#join-name", "Bob")
    bob.evaluate("document.getElementById('join-name').dataset.mark = 'typed'")
    ann.context.close()  # Ann goes offline: every watcher gets a new state, Bob's box is redrawn
    bob.wait_for_function(
        "document.getElementById('join-name') && !document.getElementById('join-name').dataset.mark",
        timeout=TIMEOUT,
    )
    assert bob.input_value("#join-name") == "Bob"
    bob.click("#join button[data-seat='1']")
    bob.wait_for_function("document.body.dataset.status === 'playing'", timeout=TIMEOUT)
    assert bob.errors == []


def test_a_name_typed_before_the_lobby_has_loaded_is_kept(server: ServeProcess, browser: Any) -> None:
    """The lobby once filled in the remembered name (none, here) when its options arrived, over a
    name typed meanwhile, and the creation stopped at "type your name first" (a CI flake)."""
    page = new_page(browser)
    held: list[Any] = []
    page.route("**/api/options", lambda route: held.append(route))
    page.goto(server.url + "/")
    for _ in range(200):  # the request is made by the page's script, after the load
        if held:
            break
        page.wait_for_timeout(25)
    assert held, "the lobby did not ask for its options"
    page.fill("#creator-name", "Ann")
    held[0].continue_()
    page.select_option("#seat-count", "2")
    page.select_option("#seat-1", "bot:random")
    assert page.input_value("#creator-name") == "Ann"
    page.click("#create-button")
    page.wait_for_url("**/games/*", timeout=4 * TIMEOUT)
    game_id = page.url.rstrip("/").split("/")[-1]
    game = httpx.get(f"{server.url}/api/games/{game_id}").json()["game"]
    assert game["seats"][0]["name"] == "Ann"
    assert page.errors == []


def test_a_person_chooses_starting_colours_by_click_and_by_key(
    server: ServeProcess, browser: Any, screenshots: Path | None
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


def test_the_lobby_form_is_the_servers_rule_options(server: ServeProcess, browser: Any) -> None:
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


def my_moves(page: Any) -> int:
    return int(page.locator("#log li[data-seat='0']").count())


def test_a_timed_seat_left_alone_is_played_by_a_bot_until_its_person_takes_it_back(
    clock_server: ServeProcess, browser: Any
) -> None:
    page = new_page(browser)
    page.add_init_script(WATCH_SCRIPT)
    seats = ["human", "bot:random", "bot:greedy", "bot:random"]
    game_id = create_game(page, clock_server.url, "Ann", seats, clock={"kind": "move", "move_seconds": "5"})
    assert httpx.get(f"{clock_server.url}/api/games/{game_id}").json()["game"]["clock"] == {
        "move_seconds": 5,
        "game_seconds": None,
    }
    assert page.inner_text("#clock-info") == "Clock: 5 s a move"
    assert page.locator(".player .bank").count() == 0  # no bank without game_seconds
    # On my turn my seat counts down from 5 s, in red (under 10 s) ...
    page.wait_for_function("document.body.dataset.turn === 'mine'", timeout=BOT_TIMEOUT)
    countdown = page.locator(".player.me .countdown")
    countdown.wait_for(timeout=TIMEOUT)
    assert "low" in (countdown.get_attribute("class") or "")
    assert page.locator(".countdown").count() == 1  # only the seat to move has one
    # ... and when I do nothing, a bot plays for me once the 5 s are out
    banner = page.locator("#away-banner")
    banner.wait_for(state="visible", timeout=BOT_TIMEOUT)
    assert "Your time ran out: a bot is playing for you" in banner.inner_text()
    assert page.inner_text(".player.me .away-note") == "a bot plays for Ann"
    shown = [int(text.split()[0]) for text in page.evaluate("window.__seen.countdowns")]
    assert len(shown) >= 2 and all(0 <= value <= 5 for value in shown), shown
    assert shown[-1] < shown[0], f"the countdown did not tick down: {shown}"
    assert page.locator(".player.me .countdown").count() == 0  # a bot's turn runs no clock
    before = my_moves(page)
    page.wait_for_function(
        f"document.querySelectorAll(\"#log li[data-seat='0']\").length > {before}", timeout=BOT_TIMEOUT
    )
    assert httpx.get(f"{clock_server.url}/api/games/{game_id}").json()["game"]["seats"][0]["away"]
    # Taking the seat back: the banner goes, and my next turn is mine to play
    page.click("#reclaim")
    banner.wait_for(state="hidden", timeout=TIMEOUT)
    assert page.locator(".player.me .away-note").count() == 0
    page.wait_for_function(
        "document.body.dataset.turn === 'mine' && document.getElementById('away-banner').hidden",
        timeout=BOT_TIMEOUT,
    )
    offered = page.locator(".row.can-take, .row.can-place, #pass:visible, #deck:enabled").count()
    assert offered > 0, "no legal action is offered on my turn"
    page.locator(".player.me .countdown").wait_for(timeout=TIMEOUT)
    mine = my_moves(page)
    play_one_turn(page)
    assert my_moves(page) > mine
    assert httpx.get(f"{clock_server.url}/api/games/{game_id}").json()["game"]["seats"][0]["away"] is False
    assert page.errors == []
    page.context.close()  # the game goes on, a bot playing for Ann again: no need to follow it


def test_a_bot_that_thinks_is_shown_thinking(server: ServeProcess, browser: Any) -> None:
    page = new_page(browser)
    page.add_init_script(WATCH_SCRIPT)
    # expert is tree search for a second a move: longer than the 0.2 s a bot may take unseen
    # (hard's 8,000 iterations can take less in two players); a spectator of two bots sees
    # what the players would
    create_game(page, server.url, "Ann", ["bot:expert", "bot:random"])
    page.wait_for_function("window.__seen.thinking.some(t => t.seat === '0')", timeout=BOT_TIMEOUT)
    seen = page.evaluate("window.__seen.thinking")
    assert all(t["text"] == "thinking…" and t["live"] == "polite" for t in seen), seen
    # each state ends the thinking it answers: none is left once the game is over
    page.wait_for_function("document.body.dataset.status === 'finished'", timeout=BOT_TIMEOUT)
    assert page.locator("#players .thinking.on").count() == 0
    assert page.errors == []


def test_the_lobby_offers_a_clock_and_lists_it(server: ServeProcess, browser: Any) -> None:
    page = new_page(browser)
    page.goto(server.url + "/")
    page.wait_for_selector("#seat-0 option", state="attached", timeout=TIMEOUT)
    assert page.input_value("#clock-kind") == "none"
    assert page.locator("#clock-kind option").all_inner_texts() == [
        "No clock",
        "Seconds per move",
        "Minutes per game",
        "Both",
    ]
    assert not page.locator("#clock-move-seconds").is_visible()
    assert not page.locator("#clock-game-minutes").is_visible()
    page.select_option("#seat-count", "2")
    page.select_option("#seat-0", "bot:random")
    page.select_option("#seat-1", "bot:random")
    page.select_option("#clock-kind", "both")
    # out of the server's range (30 s to 24 h a game): the form is not sent
    page.fill("#clock-move-seconds", "20")
    page.fill("#clock-game-minutes", "0.25")
    page.click("#create-button")
    assert page.evaluate("document.getElementById('clock-game-minutes').validity.valid") is False
    assert page.url.rstrip("/") == server.url
    page.fill("#clock-game-minutes", "2.5")
    page.click("#create-button")
    page.wait_for_url("**/games/*", timeout=TIMEOUT)
    game_id = page.url.rstrip("/").split("/")[-1]
    game = httpx.get(f"{server.url}/api/games/{game_id}").json()["game"]
    assert game["clock"] == {"move_seconds": 20, "game_seconds": 150}
    page.wait_for_selector("#clock-info:not([hidden])", timeout=TIMEOUT)
    assert page.inner_text("#clock-info") == "Clock: 20 s a move, 2.5 min a game"
    # the lobby lists the game with its clock (playing or finished by now: two quick bots)
    page.goto(server.url + "/")
    listed = page.locator(f"tr[data-game='{game_id}'] .clock-note")
    listed.wait_for(timeout=TIMEOUT)
    assert listed.inner_text() == "Clock: 20 s a move, 2.5 min a game"
    assert page.errors == []


def test_a_timed_table_shows_each_seats_bank(clock_server: ServeProcess, browser: Any) -> None:
    page = new_page(browser)
    game_id = create_game(
        page, clock_server.url, "Ann", ["human", "bot:random"], clock={"kind": "game", "game_minutes": "10"}
    )
    assert page.inner_text("#clock-info") == "Clock: 10 min a game"
    page.wait_for_function("document.body.dataset.turn === 'mine'", timeout=BOT_TIMEOUT)
    # a person's seat has a bank, a bot's none (bots run no clock)
    assert page.locator(".player .bank").count() == 1
    assert page.inner_text(".player.me .bank").startswith("bank ")
    # my turn's countdown is what is left of my bank: at most ten minutes
    countdown = page.locator(".player.me .countdown .time").inner_text()
    minutes, seconds = countdown.split(":")
    assert 0 <= int(minutes) * 60 + int(seconds) <= 600
    assert "low" not in (page.locator(".player.me .countdown").get_attribute("class") or "")
    play_one_turn(page)
    state = httpx.get(f"{clock_server.url}/api/games/{game_id}").json()
    assert len(state["clock"]["banks"]) == 2
    assert page.errors == []


def test_an_untimed_game_nobody_moves_in_ends_abandoned(clock_server: ServeProcess, browser: Any) -> None:
    page = new_page(browser)
    game_id = create_game(page, clock_server.url, "Ann", ["human", "bot:random"])
    page.wait_for_function("document.body.dataset.turn === 'mine'", timeout=BOT_TIMEOUT)
    # nobody moves: the server ends the game a few seconds later, and the open page is told
    page.wait_for_function("document.body.dataset.status === 'abandoned'", timeout=60_000)
    assert page.inner_text("#turn") == "This game was abandoned: nobody moved for too long"
    assert page.locator("#deck").is_disabled()
    page.goto(clock_server.url + "/")
    listed = page.locator(f"#finished-games tr[data-game='{game_id}']")
    listed.wait_for(timeout=TIMEOUT)
    assert listed.get_attribute("data-status") == "abandoned"
    assert listed.locator(".pill.abandoned").inner_text() == "abandoned"
    assert listed.locator("a", has_text="View").get_attribute("href") == f"/games/{game_id}"
    assert page.errors == []


def test_the_table_reconnects_by_itself_and_says_hello_again(
    tmp_path: Path, browser: Any, servers: Servers
) -> None:
    first = servers.one(tmp_path, bot_delay=0.02)
    try:
        page = new_page(browser)
        game_id = create_game(page, first.url, "Ann", ["human", "bot:random"])
        wait_for_my_turn_or_end(page)
        page.wait_for_function(
            "document.getElementById('connection').textContent === 'connected · seat 1'", timeout=TIMEOUT
        )
        seen = move_number(page)
        first.kill()
        page.wait_for_function(
            "document.getElementById('connection').textContent.includes('reconnecting')", timeout=TIMEOUT
        )
    finally:
        first.stop()
    again = servers.one(tmp_path, bot_delay=0.02, port=first.port)
    try:
        # the page's own retries find the new process: its hello takes Ann's seat again
        page.wait_for_function(
            "document.getElementById('connection').textContent === 'connected · seat 1'", timeout=60_000
        )
        assert move_number(page) == seen
        wait_for_my_turn_or_end(page)
        play_one_turn(page)
        state = httpx.get(f"{again.url}/api/games/{game_id}").json()
        assert state["move_number"] > seen
        assert page.errors == []
        page.context.close()  # before its server goes: it would only go on reconnecting
    finally:
        again.stop()
