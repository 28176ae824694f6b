"""The table page in a real browser (issue 13): two people chat (markup stays text) and one mutes it,
they play a bot to the end and rematch into the same seats; resigning after a confirmation (a bot
finishes); cancelling a waiting game; private and rated tables and their spectators; the turn told
in the tab's title and by a sound a player may switch on; the row nobody took leaving a two-player
game; the reconnection banner and the stale table; the cards' animations, and none with reduced
motion; a whole game by keyboard alone; the end on a phone; and axe-core finds nothing serious or
critical during play and at the end."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.axe import assert_accessible
from tests.e2e.test_browser import BOT_TIMEOUT, TIMEOUT, move_number, play_one_turn, wait_for_my_turn_or_end
from tests.servers import ServeProcess, Servers

pytestmark = [pytest.mark.filterwarnings("ignore::DeprecationWarning"), pytest.mark.slow]

#: a chat message that would run a script if a page ever read it as markup
MARKUP = '<b>hi</b><img src=x onerror="window.__injected = true">'

#: records every class anim-… that appears on the page (the animations flash by too fast to poll)
ANIMATION_WATCH = """
window.__animations = [];
new MutationObserver((records) => {
  for (const record of records) {
    const nodes = record.type === "attributes" ? [record.target] : [...record.addedNodes];
    for (const node of nodes) {
      if (node.nodeType !== 1) continue;
      for (const name of node.classList) if (name.startsWith("anim-")) window.__animations.push(name);
    }
  }
}).observe(document, { subtree: true, childList: true, attributes: true, attributeFilter: ["class"] });
"""

#: counts the tones the page makes (each note of the turn's sound is an oscillator)
AUDIO_WATCH = """
window.__tones = 0;
if (window.AudioContext) {
  const Real = window.AudioContext;
  window.AudioContext = class extends Real {
    createOscillator() { window.__tones += 1; return super.createOscillator(); }
  };
}
"""


def create(base: str, seats: list[str], name: str = "Ann", **extra: Any) -> tuple[str, str]:
    """A game made through the API (``seats``: 'human' or a bot's name): its id and the creator's token."""
    body = {
        "seats": [{"kind": "human"} if s == "human" else {"kind": "bot", "bot": s} for s in seats],
        "creator_name": name,
        **extra,
    }
    answer = httpx.post(f"{base}/api/games", json=body, timeout=30)
    assert answer.status_code == 201, answer.text
    return answer.json()["game"]["id"], answer.json()["token"]


def open_table(
    browser: Any,
    base: str,
    game_id: str,
    seat: int | None = None,
    token: str | None = None,
    width: int = 1200,
    height: int = 900,
    scripts: tuple[str, ...] = (),
    **context: Any,
) -> Any:
    """The table page in a new browser context: a seat's, its token in the page's storage as the
    lobby leaves it, or a spectator's."""
    ctx = browser.new_context(viewport={"width": width, "height": height}, **context)
    if token is not None:
        held = json.dumps({"seat": seat, "token": token})
        ctx.add_init_script(f"localStorage.setItem('coloretto.seat.{game_id}', '{held}')")
    for script in scripts:
        ctx.add_init_script(script)
    page = ctx.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.errors = errors
    page.goto(f"{base}/games/{game_id}")
    page.wait_for_selector("#rows .row", timeout=4 * TIMEOUT)
    return page


def state_of(base: str, game_id: str) -> dict[str, Any]:
    return dict(httpx.get(f"{base}/api/games/{game_id}", timeout=30).json())


def wait_for_text(page: Any, selector: str, text: str, exact: bool = False) -> None:
    """Until the element's text holds ``text`` (or is it, ``exact``)."""
    page.wait_for_function(
        "([s, t, exact]) => { const n = document.querySelector(s);"
        " return n !== null && (exact ? n.textContent === t : n.textContent.includes(t)); }",
        arg=[selector, text, exact],
        timeout=TIMEOUT,
    )


def say(page: Any, text: str) -> None:
    page.fill("#chat-input", text)
    page.press("#chat-input", "Enter")


def play_to_the_end(base: str, game_id: str, pages: dict[int, Any]) -> None:
    """Each page (``pages`` by seat) plays its seat by clicks on its turn, until the game is over."""
    watcher = next(iter(pages.values()))
    for _ in range(600):
        state = state_of(base, game_id)
        if state["game"]["status"] == "finished":
            return
        page = pages.get(state["to_move"])
        if page is None:  # a bot's turn
            watcher.wait_for_function(
                "n => Number(document.body.dataset.move) > n || document.body.dataset.status === 'finished'",
                arg=state["move_number"],
                timeout=BOT_TIMEOUT,
            )
            continue
        page.wait_for_function(
            "moves => document.body.dataset.turn === 'mine' && document.body.dataset.live === 'yes'"
            " && Number(document.body.dataset.move) >= moves",
            arg=state["move_number"],
            timeout=TIMEOUT,
        )
        play_one_turn(page)
    raise AssertionError("the game does not end")


def test_two_people_chat_mute_play_a_bot_to_the_end_and_rematch_into_their_seats(
    server: ServeProcess, browser: Any
) -> None:
    # the last-round card deep in the deck: a short game
    game_id, token = create(server.url, ["human", "human", "random"], rules={"cards_under_last_round": 44})
    ann = open_table(browser, server.url, game_id, 0, token, scripts=(AUDIO_WATCH,))
    # the invite panel while a seat is free, not after
    assert ann.locator("#invite-panel").is_visible()
    bob = open_table(browser, server.url, game_id)
    bob.fill("#join-name", "Bob")
    bob.click("#join button[data-seat='1']")
    for page in (ann, bob):
        page.wait_for_function("document.body.dataset.status === 'playing'", timeout=TIMEOUT)
    ann.locator("#invite-panel").wait_for(state="hidden", timeout=TIMEOUT)

    # markup typed in the chat is shown as the characters typed, on both pages, and runs nothing
    say(ann, MARKUP)
    for page in (ann, bob):
        page.wait_for_function("document.querySelectorAll('#chat-messages li').length === 1", timeout=TIMEOUT)
        line = page.locator("#chat-messages li").first
        assert line.locator(".chat-text").inner_text() == MARKUP
        assert line.locator(".chat-name").inner_text() == "Ann"
        assert line.locator("time").count() == 1
        assert page.locator("#chat-messages b, #chat-messages img").count() == 0
        assert page.evaluate("window.__injected") is None
    # Bob mutes the chat: no message shown, a count of what came instead; his browser remembers it
    bob.click("#chat-mute")
    assert bob.get_attribute("#chat-mute", "aria-pressed") == "true"
    assert bob.locator("#chat-messages").is_hidden()
    say(ann, "gl hf")
    wait_for_text(bob, "#chat-unread", "1 unread", exact=True)
    assert "1 message came since" in bob.inner_text("#chat-muted-note")
    assert bob.locator("#chat-messages").is_hidden()
    bob.reload()
    bob.wait_for_selector("#rows .row", timeout=TIMEOUT)
    assert bob.get_attribute("#chat-mute", "aria-pressed") == "true"
    assert bob.locator("#chat-messages").is_hidden()
    bob.click("#chat-mute")
    bob.wait_for_function("document.querySelectorAll('#chat-messages li').length === 2", timeout=TIMEOUT)
    assert bob.locator("#chat-messages li .chat-text").all_inner_texts() == [MARKUP, "gl hf"]
    # the server's refusals are said in the chat: a message too long (given back to its box), too many
    long = "x" * 301
    say(ann, long)
    wait_for_text(ann, "#chat-error", "at most 300 characters")
    assert ann.input_value("#chat-input") == long
    assert "301 of 300 characters" in ann.inner_text("#chat-count")
    for k in range(6):  # five in ten seconds at most: the sixth at the latest is refused
        say(ann, f"quick {k}")
    wait_for_text(ann, "#chat-error", "at most 5 chat messages")
    assert ann.locator("#chat-error").get_attribute("role") == "alert"

    play_to_the_end(server.url, game_id, {0: ann, 1: bob})
    for page in (ann, bob):
        page.wait_for_function("document.body.dataset.status === 'finished'", timeout=TIMEOUT)
        assert page.locator("#final .scoring tbody tr").count() == 3
        assert "Last round" not in page.inner_text("#deck-info")
        assert page.inner_text("#deck-info") == page.inner_text("#final h2")
    # the sound is off until a player switches it on: none was made
    assert ann.evaluate("window.__tones") == 0

    # Ann asks for a rematch and sits in it; Bob is offered it and lands in his own seat by himself
    old = state_of(server.url, game_id)
    ann.click("#final .rematch")
    ann.wait_for_url(lambda url: game_id not in url, timeout=TIMEOUT)
    new_id = ann.url.rstrip("/").split("/")[-1]
    bob.locator("#rematch-offer").wait_for(timeout=TIMEOUT)
    assert "A rematch is ready" in bob.inner_text("#rematch-offer")
    bob.click("#rematch-go")
    bob.wait_for_url(f"**/games/{new_id}", timeout=TIMEOUT)
    ann.wait_for_function(
        "document.getElementById('connection').textContent === 'connected · seat 1'", timeout=TIMEOUT
    )
    bob.wait_for_function(
        "document.getElementById('connection').textContent === 'connected · seat 2'", timeout=TIMEOUT
    )
    ann.wait_for_function("document.body.dataset.status === 'playing'", timeout=TIMEOUT)
    new = state_of(server.url, new_id)
    assert new["game"]["rematch_of"] == game_id
    assert [s["name"] for s in new["game"]["seats"]] == [s["name"] for s in old["game"]["seats"]]
    assert new["game"]["rules"] == old["game"]["rules"]
    assert ann.errors == [] and bob.errors == []


def play_out_by_api(base: str, game_id: str, tokens: dict[int, str]) -> None:
    """Every person's seat (``tokens``) plays its first legal action until the game is over."""
    with httpx.Client(base_url=base, timeout=30) as client:
        for _ in range(2000):
            state = client.get(f"/api/games/{game_id}").json()
            if state["game"]["status"] == "finished":
                return
            token = tokens[state["to_move"]]
            mine = client.get(f"/api/games/{game_id}", headers={"Authorization": f"Bearer {token}"}).json()
            action = next((a for a in mine["legal"] if a.startswith("t")), mine["legal"][0])
            client.post(
                f"/api/games/{game_id}/actions",
                json={"action": action, "move": mine["move_number"]},
                headers={"Authorization": f"Bearer {token}"},
            )
    raise AssertionError("the game does not end")


def test_a_guest_opening_the_rematchs_link_takes_the_seat_kept_for_them(
    server: ServeProcess, browser: Any
) -> None:
    game_id, ann_token = create(server.url, ["human", "human"])
    joined = httpx.post(f"{server.url}/api/games/{game_id}/join", json={"name": "Bob"}, timeout=30).json()
    play_out_by_api(server.url, game_id, {0: ann_token, 1: joined["token"]})
    made = httpx.post(
        f"{server.url}/api/games/{game_id}/rematch",
        headers={"Authorization": f"Bearer {ann_token}"},
        timeout=30,
    ).json()
    new_id = made["game"]["id"]
    # Bob's browser kept his token of the game before; he follows a link to the new one
    bob = open_table(browser, server.url, game_id, 1, joined["token"])
    bob.goto(f"{server.url}/games/{new_id}")
    bob.wait_for_function(
        "document.getElementById('connection').textContent === 'connected · seat 2'", timeout=TIMEOUT
    )
    bob.wait_for_function("document.body.dataset.status === 'playing'", timeout=TIMEOUT)
    assert [s["name"] for s in state_of(server.url, new_id)["game"]["seats"]] == ["Ann", "Bob"]
    assert bob.errors == []


def test_a_player_resigns_after_a_confirmation_and_a_bot_finishes_the_game(
    server: ServeProcess, browser: Any
) -> None:
    game_id, token = create(server.url, ["human", "random"])
    page = open_table(browser, server.url, game_id, 0, token, scripts=(AUDIO_WATCH,))
    hints: list[dict[str, Any]] = []

    def on_socket(ws: Any) -> None:
        def frame(payload: Any) -> None:
            if isinstance(payload, str) and payload.startswith('{"type":"hint"'):
                hints.append(json.loads(payload))

        ws.on("framereceived", frame)

    page.on("websocket", on_socket)
    page.reload()
    page.wait_for_selector("#rows .row", timeout=TIMEOUT)
    # the tab's title says whose turn it is
    wait_for_my_turn_or_end(page)
    page.wait_for_function("document.title === '● Your turn — Coloretto'", timeout=TIMEOUT)
    # the sound, off by default, switched on and remembered: it plays when a turn becomes mine
    assert not page.is_checked("#sound-toggle")
    page.check("#sound-toggle")
    assert page.evaluate("localStorage.getItem('coloretto.sound')") == "1"
    tones = page.evaluate("window.__tones")
    for _ in range(12):  # until a turn of mine ends, the bot's comes and then mine again
        if wait_for_my_turn_or_end(page) == "finished" or page.evaluate("window.__tones") > tones:
            break
        play_one_turn(page)
    assert page.evaluate("window.__tones") > tones
    assert page.evaluate("document.title") == "● Your turn — Coloretto"

    # the hint outlines the row (or the deck) it suggests
    page.keyboard.press("h")
    wait_for_text(page, "#hint-text", "Hint:")
    best = hints[-1]["best"]
    if best == "d":
        assert page.locator("#deck.hinted").count() == 1 and page.locator(".row.hinted").count() == 0
    else:
        outlined = page.locator(".row.hinted")
        assert outlined.count() == 1 and outlined.get_attribute("data-row") == best[1:]
        assert outlined.get_attribute("data-action") == best
    # screen readers: each card, row and seat has its words; no serious or critical axe violation
    label = page.locator("#rows .row").first.get_attribute("aria-label") or ""
    assert label.startswith("Row 1: ") and ("place" in label or "taken" in label or "full" in label)
    assert page.locator(".player.me").get_attribute("aria-label").startswith("Ann, ")
    assert_accessible(page)

    # resigning asks first; Escape keeps the seat
    page.click("#resign")
    assert page.locator("#confirm").is_visible()
    assert page.evaluate("document.activeElement.id") == "confirm-no"
    page.keyboard.press("Escape")
    assert page.locator("#confirm").is_hidden()
    assert state_of(server.url, game_id)["game"]["seats"][0]["resigned"] is False
    page.click("#resign")
    page.click("#confirm-yes")
    page.locator(".player.me.resigned").wait_for(timeout=TIMEOUT)
    assert page.inner_text(".player.me .away-note") == "resigned: a bot finishes the game for Ann"
    assert "You resigned" in page.inner_text("#away-banner")
    assert page.locator("#reclaim").is_hidden() and page.locator("#resign").is_hidden()
    # the bot plays the seat to the end
    page.wait_for_function("document.body.dataset.status === 'finished'", timeout=BOT_TIMEOUT)
    final = state_of(server.url, game_id)
    assert final["game"]["seats"][0]["resigned"] is True
    assert "Last round" not in page.inner_text("#deck-info")
    assert page.inner_text("#turn") == "Game over"
    # two players: the cards of the rows nobody took are shown out of the game, as the server counts them
    removed = page.locator("#removed")
    assert removed.is_visible()
    counts = page.locator("#removed .fan").evaluate_all("fans => fans.map(f => Number(f.dataset.count))")
    assert sum(counts) == sum(final["removed_cards"]) > 0
    assert_accessible(page)
    assert page.errors == []


def test_the_creator_cancels_a_waiting_private_table_its_spectators_counted(
    server: ServeProcess, browser: Any
) -> None:
    game_id, token = create(server.url, ["human", "human"], private=True)
    ann = open_table(browser, server.url, game_id, 0, token)
    assert ann.inner_text("#table-flags .private") == "private"
    assert ann.locator("#table-flags .rated").count() == 0
    assert ann.locator("#invite-panel").is_visible()
    watcher = open_table(browser, server.url, game_id)
    ann.wait_for_function(
        "document.querySelector('#table-flags .spectators').textContent === '1 spectator'", timeout=TIMEOUT
    )
    # a guest who watches reads the chat but cannot write in it
    assert watcher.locator("#chat-form").is_hidden()
    assert "log in to chat" in watcher.inner_text("#chat-note")
    assert watcher.locator("#cancel-game").is_hidden()
    assert_accessible(ann)
    ann.click("#cancel-game")
    ann.click("#confirm-no")
    assert state_of(server.url, game_id)["game"]["status"] == "open"
    ann.click("#cancel-game")
    ann.click("#confirm-yes")
    for page in (ann, watcher):
        page.wait_for_function("document.body.dataset.status === 'cancelled'", timeout=TIMEOUT)
        assert page.inner_text("#turn") == "This game was cancelled by its creator"
        assert page.locator("#invite-panel").is_hidden() and page.locator("#join").is_hidden()
    assert ann.errors == [] and watcher.errors == []


SIGN_UP_AND_CREATE = """async () => {
  const { api } = await import("/static/js/common.js");
  await api("/api/account/signup", { method: "POST", body: { name: "Eve", password: "a long password" } });
  const made = await api("/api/games", {
    method: "POST",
    body: { seats: [{ kind: "human" }, { kind: "bot", bot: "easy" }], rated: true, creator_name: "Eve" },
  });
  return made.game.id;
}"""


def test_a_rated_table_says_so_and_its_logged_in_player_chats(server: ServeProcess, browser: Any) -> None:
    ctx = browser.new_context(viewport={"width": 1200, "height": 900})
    page = ctx.new_page()
    page.goto(server.url + "/rules")
    game_id = page.evaluate(SIGN_UP_AND_CREATE)
    page.goto(f"{server.url}/games/{game_id}")
    page.wait_for_function("document.getElementById('connection').textContent === 'connected · seat 1'")
    assert page.inner_text("#table-flags .rated") == "rated"
    say(page, "hello from Eve")
    page.wait_for_function("document.querySelectorAll('#chat-messages li').length === 1", timeout=TIMEOUT)
    assert page.inner_text("#chat-messages .chat-name") == "Eve"
    ctx.close()


def tab_to(page: Any, selector: str, presses: int = 60) -> None:
    """Press Tab until the focus is on an element that matches ``selector``."""
    for _ in range(presses):
        if page.evaluate("s => document.activeElement?.matches(s) ?? false", selector):
            assert page.evaluate("document.activeElement.matches(':focus-visible')"), "the focus is not shown"
            return
        page.keyboard.press("Tab")
    raise AssertionError(f"Tab never reached {selector}")


def test_a_whole_game_by_keyboard_alone(server: ServeProcess, browser: Any) -> None:
    game_id, token = create(server.url, ["human", "random"])
    page = open_table(browser, server.url, game_id, 0, token)
    turns = 0
    while wait_for_my_turn_or_end(page) != "finished":
        page.wait_for_function("document.body.dataset.live === 'yes'", timeout=TIMEOUT)
        before = move_number(page)
        if page.locator(".row.can-place").count():
            tab_to(page, ".row.can-place")
            page.keyboard.press("Enter")
        else:
            fullest, size = None, 0
            for row in page.locator(".row.can-take").all():
                cards = row.locator(".cards .card").count()
                if cards > size:
                    fullest, size = row.get_attribute("data-row"), cards
            if fullest is not None and (size >= 2 or page.locator("#deck").is_disabled()):
                if turns % 2:
                    page.keyboard.press(fullest)  # the row's number key
                else:
                    tab_to(page, f".row[data-row='{fullest}']")
                    page.keyboard.press("Enter")
            elif page.locator("#pass").is_visible():
                tab_to(page, "#pass")
                page.keyboard.press("Enter")
            elif turns % 3 == 1:
                page.keyboard.press("d")
            else:
                tab_to(page, "#deck")
                page.keyboard.press("Enter")
        page.wait_for_function(f"Number(document.body.dataset.move) > {before}", timeout=TIMEOUT)
        turns += 1
        assert turns < 200, "the game does not end"
    assert turns >= 8
    final = state_of(server.url, game_id)
    assert final["game"]["status"] == "finished" and len([e for e in final["log"] if e["seat"] == 0]) >= turns
    # the end's buttons by keyboard too: the rematch
    tab_to(page, "#final .rematch")
    page.keyboard.press("Enter")
    page.wait_for_url(lambda url: game_id not in url, timeout=TIMEOUT)
    page.wait_for_function(
        "document.getElementById('connection').textContent === 'connected · seat 1'", timeout=TIMEOUT
    )
    assert page.errors == []


def test_the_end_fits_a_phone_and_the_keys_legend_is_not_shown_there(
    server: ServeProcess, browser: Any, screenshots: Path | None
) -> None:
    game_id, token = create(server.url, ["human", "random", "random", "random"])
    page = open_table(browser, server.url, game_id, 0, token, width=390, height=844, has_touch=True)
    assert page.locator("#keys-legend").is_hidden()
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    page.click("#resign")
    page.click("#confirm-yes")
    page.wait_for_function("document.body.dataset.status === 'finished'", timeout=BOT_TIMEOUT)
    scoring = page.locator("#final .scoring")
    scoring.wait_for(timeout=TIMEOUT)
    assert page.evaluate("document.documentElement.scrollWidth") <= 390, "the page overflows sideways"
    box = scoring.bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 390
    for cell in page.locator("#final .scoring td").all():  # the "+2" and total columns too
        cell_box = cell.bounding_box()
        assert cell_box is not None and cell_box["x"] + cell_box["width"] <= 390, cell.inner_text()
    totals = [int(t) for t in page.locator("#final .scoring td.total").all_inner_texts()]
    assert totals == state_of(server.url, game_id)["match"]["deals"][0]["totals"]
    if screenshots is not None:
        page.screenshot(path=str(screenshots / "end-phone.png"), full_page=True)
    assert page.errors == []


@pytest.fixture
def lone_server(tmp_path: Path, servers: Servers) -> ServeProcess:
    return servers.one(tmp_path, bot_delay=0.02)


def test_a_lost_connection_is_said_and_the_table_marked_stale_until_it_is_live_again(
    lone_server: ServeProcess, tmp_path: Path, browser: Any, servers: Servers
) -> None:
    game_id, token = create(lone_server.url, ["human", "random"])
    page = open_table(browser, lone_server.url, game_id, 0, token)
    wait_for_my_turn_or_end(page)
    page.wait_for_function("document.body.dataset.live === 'yes'", timeout=TIMEOUT)
    assert page.locator("#connection-banner").is_hidden() and page.locator("#stale-pill").is_hidden()
    seen = move_number(page)
    lone_server.kill()
    banner = page.locator("#connection-banner")
    banner.wait_for(timeout=TIMEOUT)
    assert "Connection lost" in banner.inner_text()
    page.wait_for_function(
        "/attempt \\d+/.test(document.getElementById('connection-banner-text').textContent)", timeout=TIMEOUT
    )
    assert page.evaluate("document.body.dataset.live") == "no"
    assert "stale" in (page.get_attribute("#table-area", "class") or "")
    assert page.inner_text("#stale-pill") == "not live"
    # nothing can be played on a table that is not live, though it is my turn on it
    assert page.locator("#deck").is_disabled()
    assert page.locator(".row.can-place, .row.can-take").count() == 0
    page.keyboard.press("d")
    assert move_number(page) == seen
    again = servers.one(tmp_path, bot_delay=0.02, port=lone_server.port)
    try:
        page.wait_for_function("document.body.dataset.live === 'yes'", timeout=60_000)
        assert banner.is_hidden() and page.locator("#stale-pill").is_hidden()
        assert "stale" not in (page.get_attribute("#table-area", "class") or "")
        wait_for_my_turn_or_end(page)
        play_one_turn(page)
        assert move_number(page) > seen
        assert page.errors == []
        page.context.close()  # before its server goes: it would only go on reconnecting
    finally:
        again.stop()


def watch_animations(page: Any, moves: int) -> list[str]:
    """Play ``moves`` of my turns (or to the end) and return the animation classes seen meanwhile."""
    for _ in range(moves):
        if wait_for_my_turn_or_end(page) == "finished":
            break
        play_one_turn(page)
    return list(page.evaluate("window.__animations"))


def test_cards_move_as_they_are_played_and_stay_still_with_reduced_motion(
    server: ServeProcess, browser: Any
) -> None:
    game_id, token = create(server.url, ["human", "random"])
    page = open_table(browser, server.url, game_id, 0, token, scripts=(ANIMATION_WATCH,))
    wait_for_my_turn_or_end(page)
    # a state sent again (a spectator comes: the seats' states are sent anew) moves nothing
    page.evaluate("window.__animations = []")
    seen = move_number(page)
    watcher = open_table(browser, server.url, game_id)
    page.wait_for_function(
        "document.querySelector('#table-flags .spectators').textContent === '1 spectator'", timeout=TIMEOUT
    )
    assert move_number(page) == seen  # my turn: nothing moved
    assert page.evaluate("window.__animations") == []
    watcher.context.close()
    shown = set(watch_animations(page, 12))
    assert {"anim-draw", "anim-place", "anim-take"} <= shown, shown
    # the copies that fly are gone once they have landed, and never take a click
    page.wait_for_function("document.querySelectorAll('.ghost').length === 0", timeout=TIMEOUT)
    assert page.errors == []

    game_id, token = create(server.url, ["human", "random"])
    calm = open_table(
        browser, server.url, game_id, 0, token, scripts=(ANIMATION_WATCH,), reduced_motion="reduce"
    )
    assert watch_animations(calm, 12) == []
    assert calm.errors == []
