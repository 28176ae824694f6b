"""The site around the tables in a real browser: signing up and logging in, a rated game against the
bots' levels played to the end and the rating it moved on the player's page and the leaderboard,
private tables, cancelling a waiting game, a password guesser shown the wait, a form another site
posts refused, the keyboard, a phone's screen, and axe-core on every page."""

from __future__ import annotations

import http.server
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.axe import assert_accessible
from tests.e2e.test_browser import TIMEOUT, new_page, play_one_turn
from tests.servers import ServeProcess, Servers

pytestmark = [pytest.mark.filterwarnings("ignore::DeprecationWarning"), pytest.mark.slow]

#: ms: a hang guard for a bot's move (the workers warm in the background before the first one)
BOT_TIMEOUT = 180_000
PASSWORD = "a long enough password"
LEVELS = ("easy", "medium", "hard")


@pytest.fixture(scope="module")
def site(module_servers: Servers) -> ServeProcess:
    """Every test signs up from this one address (no hourly limit here); one rated game lists a person."""
    return module_servers.one(
        bot_delay=0.02,
        args=("--signups-per-hour", "0", "--leaderboard-min-games", "1"),
        env={"COLORETTO_REVIEW_BUDGET": "60"},  # a review in seconds: its figures are not looked at
    )


def sign_up(page: Any, base: str, name: str, start: str = "/") -> None:
    """Sign up by the header's link from ``start``; the page comes back there."""
    page.goto(base + start)
    page.click("#signup-link")
    page.wait_for_url(lambda url: "/signup?next=" in url, timeout=TIMEOUT)
    page.wait_for_selector("#account-form[data-ready]", timeout=TIMEOUT)
    page.fill("#account-name-input", name)
    page.fill("#account-password", PASSWORD)
    page.click("#account-submit")
    page.wait_for_selector(f"#account-name:text-is('{name}')", timeout=TIMEOUT)


def signed_up(browser: Any, base: str, name: str) -> Any:
    page = new_page(browser)
    sign_up(page, base, name)
    return page


def wait_for_turn_or_end(page: Any) -> str:
    page.wait_for_function(
        "document.body.dataset.status === 'finished' || document.body.dataset.turn === 'mine'",
        timeout=BOT_TIMEOUT,
    )
    return str(page.evaluate("document.body.dataset.status"))


def lobby_ready(page: Any, base: str) -> None:
    page.goto(base + "/")
    page.wait_for_selector("body[data-lobby='ready']", timeout=4 * TIMEOUT)


def create(
    page: Any,
    base: str,
    seats: list[str],
    name: str | None = None,
    rated: bool = False,
    private: bool = False,
) -> str:
    """The lobby's form, as whoever the page is logged in as (or a guest, who types ``name``)."""
    lobby_ready(page, base)
    if name is not None:
        page.fill("#creator-name", name)
    page.select_option("#seat-count", str(len(seats)))
    if rated:
        page.check("#rated")
    if private:
        page.check("#private")
    for i, spec in enumerate(seats):
        page.select_option(f"#seat-{i}", spec)
    page.click("#create-button")
    page.wait_for_url("**/games/*", timeout=4 * TIMEOUT)
    page.wait_for_selector(".row", timeout=4 * TIMEOUT)
    return str(page.url.rstrip("/").split("/")[-1])


def test_sign_up_log_in_play_a_rated_game_and_see_the_rating_move(
    site: ServeProcess, browser: Any, screenshots: Path | None
) -> None:
    # Sign up from the leaderboard: back on it, logged in.
    first = new_page(browser)
    sign_up(first, site.url, "Zoe", start="/leaderboard")
    assert first.url == site.url + "/leaderboard"
    first.context.close()

    # Log in in a fresh browser: a wrong password is said beside the form, then the right one.
    page = new_page(browser)
    lobby_ready(page, site.url)
    assert page.locator("#rated").count() == 0  # a guest: no rated checkbox, an invitation to log in
    assert "Rated games are for logged-in players" in page.inner_text("#rated-guest")
    page.click("#login-link")
    page.wait_for_selector("#account-form[data-ready]", timeout=TIMEOUT)
    page.fill("#account-name-input", "zoe")  # any case
    page.fill("#account-password", "not the password")
    page.click("#account-submit")
    error = page.locator("#account-error")
    error.wait_for(timeout=TIMEOUT)
    assert error.inner_text() == "wrong name or password"
    assert page.get_attribute("#account-password", "aria-invalid") == "true"
    page.fill("#account-password", PASSWORD)
    page.click("#account-submit")
    page.wait_for_selector("#account-name:text-is('Zoe')", timeout=TIMEOUT)
    assert page.url.rstrip("/") == site.url  # back in the lobby, where the log-in began

    # A rated table offers only the bots' levels; three of them, and Zoe.
    lobby_ready(page, site.url)
    assert page.inner_text("#sitting-as") == "You sit down as Zoe."
    page.select_option("#seat-count", "4")
    page.select_option("#seat-1", "bot:random")
    page.check("#rated")
    disabled = page.locator("#seat-1 option[disabled]").all_inner_texts()
    assert disabled and all("difficulty" not in text for text in disabled)
    assert page.input_value("#seat-1") != "bot:random"  # a bot that is no level was changed for one
    game_id = create(page, site.url, ["human", *(f"bot:{level}" for level in LEVELS)], rated=True)
    summary = httpx.get(f"{site.url}/api/games/{game_id}").json()["game"]
    assert summary["rated"] and summary["seats"][0]["name"] == "Zoe"

    # Played to the end through the page, by clicks and keys; axe on the table in play and at the end.
    turns = 0
    while wait_for_turn_or_end(page) != "finished":
        if turns == 2:
            assert_accessible(page)
        play_one_turn(page, use_keys=turns % 2 == 1)
        turns += 1
        assert turns < 200, "the game does not end"
    page.locator("#final").wait_for(timeout=TIMEOUT)
    assert_accessible(page)
    assert httpx.post(f"{site.url}/api/games/{game_id}/review").status_code == 202  # for the accuracy
    ratings = httpx.get(f"{site.url}/api/games/{game_id}").json()["ratings"]
    mine = next(r for r in ratings if r["seat"] == 0)
    change = mine["after"]["ordinal"] - mine["before"]["ordinal"]

    # The player page: the header's name leads there; the rating moved, the game is listed.
    page.click("#account-name")
    page.wait_for_selector("body[data-ready='true']", timeout=TIMEOUT)
    assert page.inner_text("h1") == "Zoe"
    shown_rating = float(page.inner_text("#stat-rating .figure").replace("−", "-"))
    assert abs(shown_rating - mine["after"]["ordinal"]) <= 0.051
    assert page.inner_text("#stat-rated .figure") == "1"
    row = page.locator(f"#results tr[data-game='{game_id}']")
    assert row.count() == 1
    sign = "+" if change > 0 else "−"
    shown_change = row.locator(".rating-change").inner_text()
    assert shown_change[0] == sign and abs(float(shown_change[1:]) - abs(change)) <= 0.051
    assert row.locator("td").nth(5).inner_text() == "yes"
    review = row.locator("a", has_text="review")
    assert review.get_attribute("href") == f"/games/{game_id}/replay#review-panel"
    assert page.locator("#rating-chart").get_attribute("role") == "img"
    page.click("#history-details summary")
    history = page.locator("#history-table tbody tr td").all_inner_texts()
    assert history[2] == shown_change  # the table says what the chart shows: from 0 to the rating
    assert_accessible(page)
    page.set_viewport_size({"width": 390, "height": 844})  # a phone: the results scroll in their box
    assert_accessible(page)
    assert overflow(page) <= 0
    page.set_viewport_size({"width": 1200, "height": 900})

    # Once the game's review is done, its accuracy is listed, and the mean; its replay passes axe.
    wait_for_review(site.url, game_id)
    page.reload()
    page.wait_for_selector("body[data-ready='true']", timeout=TIMEOUT)
    accuracy = page.locator(f"#results tr[data-game='{game_id}'] td.accuracy").inner_text()
    assert accuracy.endswith("%") and page.inner_text("#stat-accuracy .figure") == accuracy
    if screenshots is not None:
        page.screenshot(path=str(screenshots / "player.png"), full_page=True)
    page.click(f"#results tr[data-game='{game_id}'] a:text-is('{summary['name']}')")
    page.wait_for_selector("body[data-review='done']", timeout=TIMEOUT)
    assert_accessible(page)
    page.keyboard.press("End")
    page.locator("#result .scoring").wait_for(timeout=TIMEOUT)
    assert_accessible(page)
    page.set_viewport_size({"width": 390, "height": 844})
    assert_accessible(page)
    assert overflow(page) <= 0
    page.set_viewport_size({"width": 1200, "height": 900})

    # The leaderboard: Zoe and every level, the bots marked as bots, by rating.
    page.click("nav.site a:text-is('Leaderboard')")
    page.wait_for_selector("body[data-ready='true']", timeout=TIMEOUT)
    rows = page.locator(".ranking tbody tr")
    names = rows.evaluate_all("rows => rows.map(r => [r.dataset.kind, r.dataset.name])")
    assert ["person", "Zoe"] in names
    assert sorted(n for kind, n in names if kind == "bot") == ["easy", "expert", "hard", "medium"]
    assert page.locator(".ranking tr[data-kind='bot'] .pill.bot").count() == 4
    shown = [float(x.replace("−", "-")) for x in page.locator(".ranking td.rating").all_inner_texts()]
    assert shown == sorted(shown, reverse=True)
    assert page.locator("tr.me th a").get_attribute("href") == "/players/Zoe"
    assert_accessible(page)
    assert page.errors == []


def wait_for_review(base: str, game_id: str) -> None:
    deadline = time.monotonic() + BOT_TIMEOUT / 1000
    while (status := httpx.get(f"{base}/api/games/{game_id}/review").json()["status"]) != "done":
        assert status in ("running", "none") and time.monotonic() < deadline, f"the review is {status}"
        time.sleep(0.2)


def test_a_private_game_is_not_listed_but_its_link_works(site: ServeProcess, browser: Any) -> None:
    ann = new_page(browser)
    game_id = create(ann, site.url, ["human", "human"], name="Ann", private=True)
    invite = ann.input_value("#invite-link")
    # Bob's lobby lists it nowhere; Ann's lists it under her games
    bob = new_page(browser)
    lobby_ready(bob, site.url)
    assert bob.locator(f"tr[data-game='{game_id}']").count() == 0
    assert all(g["id"] != game_id for g in httpx.get(f"{site.url}/api/games?status=open").json()["games"])
    lobby_ready(ann, site.url)
    mine = ann.locator(f"#my-games tr[data-game='{game_id}']")
    assert mine.count() == 1 and "private" in mine.inner_text()
    # the link takes Bob to the table, where he sits down
    bob.goto(invite)
    bob.fill("#join-name", "Bob")
    bob.click("#join button[data-seat='1']")
    bob.wait_for_function("document.body.dataset.status === 'playing'", timeout=TIMEOUT)
    assert bob.errors == [] and ann.errors == []


def test_a_creator_cancels_a_waiting_game_from_the_lobby(site: ServeProcess, browser: Any) -> None:
    """A guest's listed game by its token; a logged-in person's private one by the session."""
    guest = new_page(browser)
    listed_id = create(guest, site.url, ["human", "human"], name="Cy")
    person = signed_up(browser, site.url, "Dee")
    private_id = create(person, site.url, ["human", "human", "bot:easy"], private=True)
    for page, game_id in ((guest, listed_id), (person, private_id)):
        lobby_ready(page, site.url)
        row = page.locator(f"#my-games tr[data-game='{game_id}']")
        assert "waiting for 1 more player" in row.inner_text()
        page.locator(f"#my-games tr[data-game='{game_id}'] button.cancel-game").click()
        row.wait_for(state="detached", timeout=TIMEOUT)
        assert httpx.get(f"{site.url}/api/games/{game_id}").json()["game"]["status"] == "cancelled"
        assert page.locator(f"tr[data-game='{game_id}']").count() == 0  # nor in the open games
        assert page.errors == []


def test_the_login_form_shows_a_password_guesser_the_wait(site: ServeProcess, browser: Any) -> None:
    with httpx.Client(base_url=site.url) as guesser:
        guesser.get("/api/account")
        header = {"X-CSRF-Token": guesser.cookies["coloretto_csrf"]}
        answers = [
            guesser.post("/api/account/login", json={"name": "Gus", "password": f"guess {i}"}, headers=header)
            for i in range(5)
        ]
    assert [a.status_code for a in answers] == [401] * 5
    page = new_page(browser)
    page.goto(site.url + "/login")
    page.wait_for_selector("#account-form[data-ready]", timeout=TIMEOUT)
    page.fill("#account-name-input", "Gus")
    page.fill("#account-password", "guess 9999")
    page.click("#account-submit")
    wait = page.locator("#account-wait")
    wait.wait_for(timeout=TIMEOUT)
    assert "too many failed log-ins for this name or from this address: try again in" in page.inner_text(
        "#account-error"
    )
    seconds = int(wait.get_attribute("data-seconds") or "0")
    assert 0 < seconds <= 30
    assert wait.inner_text() == f"You can try again in {seconds} seconds."
    assert page.locator("#account-submit").is_disabled()
    page.wait_for_function(
        f"Number(document.getElementById('account-wait').dataset.seconds) < {seconds}", timeout=TIMEOUT
    )
    assert page.errors == []


FORGERY = """<!doctype html><html lang="en"><title>another site</title>
<form id="logout" method="post" action="{base}/api/account/logout"><button>win a prize</button></form>
<form id="login" method="post" enctype="text/plain" action="{base}/api/account/login">
<input type="hidden" name='{{"name": "Mallory", "password": "mallory' value=' password"}}'>
<button>win another prize</button></form>"""


def loopback_site(address: str, html: str) -> tuple[http.server.ThreadingHTTPServer, str]:
    """A page served from another loopback address: another site, to the browser."""

    class Page(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = html.encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    try:
        server = http.server.ThreadingHTTPServer((address, 0), Page)
    except OSError as exc:  # pragma: no cover - a loopback without 127.0.0.2
        pytest.skip(f"cannot serve from {address}: {exc}")
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://{address}:{server.server_address[1]}/"


def test_a_form_another_site_posts_is_refused(site: ServeProcess, browser: Any) -> None:
    httpx.post(
        f"{site.url}/api/account/signup",
        json={"name": "Mallory", "password": "mallory= password"},  # what the forged form sends
        headers={"X-CSRF-Token": "x", "Cookie": "coloretto_csrf=x"},
    )
    page = signed_up(browser, site.url, "Val")
    other, address = loopback_site("127.0.0.2", FORGERY.format(base=site.url))
    try:
        for form in ("logout", "login"):
            page.goto(address)
            with page.expect_navigation(timeout=TIMEOUT):
                page.click(f"#{form} button")
            assert page.url.startswith(site.url)
            assert '"error":"csrf"' in page.inner_text("body").replace(" ", "")
    finally:
        other.shutdown()
    # still Val: neither logged out nor logged in as Mallory
    page.goto(site.url + "/")
    assert page.inner_text("#account-name") == "Val"
    assert page.errors == []


def focus_ring(page: Any) -> str:
    return str(page.evaluate("getComputedStyle(document.activeElement).outlineStyle"))


def test_sign_up_and_create_a_game_by_keyboard_alone(site: ServeProcess, browser: Any) -> None:
    page = new_page(browser)
    page.goto(site.url + "/signup")
    page.wait_for_selector("#account-form[data-ready]", timeout=TIMEOUT)
    # the skip link first, then the header's links, then the form
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.className") == "skip-link"
    page.keyboard.press("Enter")  # past the header, to the form
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.id") == "account-name-input"
    assert focus_ring(page) != "none"
    page.keyboard.type("Kit")
    page.keyboard.press("Tab")
    page.keyboard.type("short")
    page.keyboard.press("Enter")
    assert "A password has 8 to 128 characters; this one has 5." in page.inner_text("#account-error")
    assert page.evaluate("document.activeElement.id") == "account-password"
    page.keyboard.press("Control+a")
    page.keyboard.type(PASSWORD)
    page.keyboard.press("Enter")
    page.wait_for_selector("#account-name:text-is('Kit')", timeout=TIMEOUT)

    # the lobby by keys: Tab to each control, Space for the checkboxes, Enter to create
    lobby_ready(page, site.url)
    stops: list[str] = []
    for _ in range(40):
        page.keyboard.press("Tab")
        here = page.evaluate("document.activeElement.id || document.activeElement.tagName")
        assert focus_ring(page) != "none", here
        stops.append(here)
        if here == "private":
            page.keyboard.press("Space")
        if here == "create-button":
            break
    controls = (
        "account-name",
        "logout",
        "game-name",
        "seat-count",
        "seat-0",
        "seat-1",
        "clock-kind",
        "rated",
    )
    for control in controls:
        assert control in stops, (control, stops)
    assert page.is_checked("#private") and not page.is_checked("#rated")
    page.keyboard.press("Enter")
    page.wait_for_url("**/games/*", timeout=4 * TIMEOUT)
    game_id = page.url.rstrip("/").split("/")[-1]
    assert httpx.get(f"{site.url}/api/games/{game_id}").json()["game"]["private"] is True
    assert page.errors == []


def finished_game(base: str) -> str:
    seats = [{"kind": "bot", "bot": "random"}, {"kind": "bot", "bot": "greedy"}]
    game_id = str(httpx.post(f"{base}/api/games", json={"seats": seats}).json()["game"]["id"])
    deadline = time.monotonic() + BOT_TIMEOUT / 1000
    while httpx.get(f"{base}/api/games/{game_id}").json()["game"]["status"] != "finished":
        assert time.monotonic() < deadline, "the bots' game does not end"
        time.sleep(0.2)
    return game_id


def overflow(page: Any) -> int:
    return int(page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth"))


@pytest.mark.parametrize("width", [1200, 390])
def test_every_page_passes_axe_and_fits_the_screen(site: ServeProcess, browser: Any, width: int) -> None:
    game_id = finished_game(site.url)
    page = new_page(browser, width=width, height=844)
    sign_up(page, site.url, f"Axe{width}")
    guest = new_page(browser, width=width, height=844)
    pages = {
        "/": "body[data-lobby='ready']",
        "/rules": "h1",
        "/leaderboard": "body[data-ready='true']",
        f"/players/Axe{width}": "body[data-ready='true']",
        f"/games/{game_id}/replay": "#position:not(:empty)",
    }
    for viewer in (page, guest):
        for path, ready in pages.items():
            viewer.goto(site.url + path)
            viewer.wait_for_selector(ready, timeout=4 * TIMEOUT)
            assert_accessible(viewer)
            assert overflow(viewer) <= 0, f"{path} is wider than {width} px"
    for path in ("/login", "/signup"):
        guest.goto(site.url + path)
        guest.wait_for_selector("#account-form[data-ready]", timeout=TIMEOUT)
        assert_accessible(guest)
        assert overflow(guest) <= 0, f"{path} is wider than {width} px"
    assert page.errors == [] and guest.errors == []


def test_a_phones_lobby_full_of_games_fits_its_screen(site: ServeProcess, browser: Any) -> None:
    long_name = "A game with a rather long name for a phone"
    for _ in range(3):
        seats = [{"kind": "human"}, {"kind": "human"}, {"kind": "bot", "bot": "random"}]
        body = {"seats": seats, "creator_name": "Somebody with a long name", "name": long_name,
                "clock": {"move_seconds": 30, "game_seconds": 600}}  # fmt: skip
        assert httpx.post(f"{site.url}/api/games", json=body).status_code == 201
    finished_game(site.url)
    # a 390 px phone, and a narrower one in German, whose words are the longest
    for locale, width in (("en-US", 390), ("de-DE", 320)):
        context = browser.new_context(viewport={"width": width, "height": 844}, locale=locale)
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda exc, seen=errors: seen.append(str(exc)))
        lobby_ready(page, site.url)
        page.fill("#creator-name", "Ann")
        page.click("summary")  # the rule options open too
        page.select_option("#clock-kind", "both")  # and both clock fields
        assert page.locator("#open-games tr").count() >= 3
        assert overflow(page) <= 0, f"the lobby is wider than {width} px in {locale}"
        assert_accessible(page)
        assert errors == []
        context.close()


def test_the_lobby_keeps_the_focus_while_its_lists_refresh(site: ServeProcess, browser: Any) -> None:
    page = new_page(browser)
    create(page, site.url, ["human", "human", "human"], name="Eli")
    other = new_page(browser)
    lobby_ready(other, site.url)
    join = other.locator("#open-games a.button").first
    label = join.get_attribute("aria-label")
    join.focus()
    before = move_number_of_lists(other)
    httpx.post(  # a new game: the list changes and is drawn again
        f"{site.url}/api/games",
        json={"seats": [{"kind": "human"}, {"kind": "human"}], "creator_name": "Fay"},
    )
    other.wait_for_function(f"document.querySelectorAll('#open-games tr').length > {before}", timeout=TIMEOUT)
    assert other.evaluate("document.activeElement.getAttribute('aria-label')") == label
    assert page.errors == [] and other.errors == []


def move_number_of_lists(page: Any) -> int:
    return int(page.evaluate("document.querySelectorAll('#open-games tr').length"))
