"""The site's pages under its Content-Security-Policy in a real browser: every page works (its scripts
run, its styles apply, its WebSocket connects) with nothing refused; what the policy forbids, a
script or a style written into a page, is refused by the browser and seen by the tests (the
``browser`` fixture fails any test whose pages the policy refused anything of:
tests/e2e/conftest.py); and no other site can show a page of this one in a frame."""

from __future__ import annotations

from typing import Any

import pytest

from coloretto.cli import main
from tests.e2e.conftest import CSP_VIOLATION, WatchedBrowser
from tests.e2e.test_browser import TIMEOUT, create_game, new_page, play_one_turn, wait_for_my_turn_or_end
from tests.e2e.test_site import finished_game, loopback_site, sign_up
from tests.servers import ServeProcess, Servers

pytestmark = [pytest.mark.filterwarnings("ignore::DeprecationWarning"), pytest.mark.slow]


@pytest.fixture(scope="module")
def site(module_servers: Servers) -> ServeProcess:
    return module_servers.one(bot_delay=0.02, args=("--signups-per-hour", "0"))


def is_violation(message: Any) -> bool:
    return CSP_VIOLATION in message.text


def test_every_page_works_under_the_policy_with_nothing_refused(
    site: ServeProcess, browser: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    base = site.url
    finished = finished_game(base)
    page = new_page(browser)
    sign_up(page, base, "Policy")
    assert main(["admin", "promote", "Policy", "--data-dir", str(site.directory)]) == 0
    answer = page.goto(base + "/")
    policy = answer.headers["content-security-policy"]
    assert "script-src 'self';" in policy and "style-src 'self';" in policy and "unsafe" not in policy
    pages = {
        "/": "body[data-lobby='ready']",
        "/rules": "h1",
        "/leaderboard": "body[data-ready='true']",
        "/players/Policy": "body[data-ready='true']",
        f"/games/{finished}": "#final",
        f"/games/{finished}/replay": "#position:not(:empty)",
        "/account": "body[data-ready='true'] #password-form",
        "/admin": "body[data-ready='true'] #reports",
    }
    for path, ready in pages.items():
        page.goto(base + path)
        page.wait_for_selector(ready, timeout=4 * TIMEOUT)
    guest = new_page(browser)
    for path in ("/login", "/signup"):
        guest.goto(base + path)
        guest.wait_for_selector("#account-form[data-ready]", timeout=TIMEOUT)
    # a reset link the operator made, and the page a guest is shown of /admin
    capsys.readouterr()  # the promotion's line, printed before
    assert main(["admin", "reset-password", "Policy", "--data-dir", str(site.directory)]) == 0
    link = capsys.readouterr().out.strip()
    guest.goto(base + link)
    guest.wait_for_selector("body[data-ready='true'] #reset-form", timeout=TIMEOUT)
    guest.goto(base + "/admin")
    guest.wait_for_selector("#forbidden-text", timeout=TIMEOUT)
    # a table in play: the lobby's form, the WebSocket, the cards drawn and their animations (the
    # scripts set styles through the CSSOM, which the policy allows)
    create_game(guest, base, "Guest", ["human", "bot:random"])
    guest.wait_for_function("document.getElementById('connection').textContent === 'connected · seat 1'")
    for _ in range(3):
        if wait_for_my_turn_or_end(guest) != "playing":
            break
        play_one_turn(guest)
    assert guest.locator(".player.me .name").inner_text() == "Guest"
    assert page.errors == [] and guest.errors == []
    for viewer in (page, guest):
        viewer.context.close()


def test_what_the_policy_forbids_is_refused_and_the_tests_see_it(site: ServeProcess, browser: Any) -> None:
    assert isinstance(browser, WatchedBrowser)
    page = new_page(browser)
    page.goto(site.url + "/rules")
    page.wait_for_selector("h1")
    with page.expect_console_message(is_violation, timeout=TIMEOUT):
        page.evaluate(
            """() => {
              window.ran = false;
              const script = document.createElement("script");
              script.textContent = "window.ran = true";
              document.body.append(script);
            }"""
        )
    assert page.evaluate("window.ran") is False
    with page.expect_console_message(is_violation, timeout=TIMEOUT):
        page.evaluate(
            """() => {
              const box = document.createElement("div");
              box.id = "styled";
              box.setAttribute("style", "color: rgb(1, 2, 3)");
              document.body.append(box);
            }"""
        )
    assert page.evaluate("getComputedStyle(document.getElementById('styled')).color") != "rgb(1, 2, 3)"
    # what the site's own scripts do is allowed: a style set through the CSSOM
    page.evaluate("document.getElementById('styled').style.color = 'rgb(1, 2, 3)'")
    assert page.evaluate("getComputedStyle(document.getElementById('styled')).color") == "rgb(1, 2, 3)"
    refused = browser.take_violations()  # taken: this test's violations are its point, not its failure
    assert len(refused) == 2, refused
    assert "script-src 'self'" in refused[0] and "style-src 'self'" in refused[1], refused
    page.context.close()


def test_another_site_cannot_show_a_page_of_this_one_in_a_frame(site: ServeProcess, browser: Any) -> None:
    html = f'<!doctype html><html lang="en"><title>another site</title><iframe src="{site.url}/login">'
    other, address = loopback_site("127.0.0.2", html)
    page = new_page(browser)
    try:
        with page.expect_console_message(is_violation, timeout=TIMEOUT):
            page.goto(address)
        (framed,) = [frame for frame in page.frames if frame != page.main_frame]
        assert framed.query_selector("#account-form") is None
    finally:
        other.shutdown()
    refused = browser.take_violations()
    assert refused and all("frame-ancestors 'none'" in v for v in refused), refused
    assert page.errors == []
    page.context.close()
