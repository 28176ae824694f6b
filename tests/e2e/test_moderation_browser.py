"""Moderation and the account's own page in a real browser, under the site's Content-Security-Policy
(no inline script or style: a page that needed one breaks here, and the browser's report of it
fails the test, see tests/e2e/conftest.py): a player reports a chat message, an administrator finds
it on /admin, hides it and bans its speaker; a person changes their password on /account."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from coloretto.cli import main
from tests.e2e.axe import assert_accessible
from tests.e2e.test_browser import TIMEOUT, new_page
from tests.servers import ServeProcess, Servers

pytestmark = [pytest.mark.filterwarnings("ignore::DeprecationWarning"), pytest.mark.slow]

PASSWORD = "a long enough password"
NEW_PASSWORD = "another long passphrase"
SPAM = "buy cheap chips at spam.example"
#: a hang guard for what the servers do within about a second
DEADLINE = 60.0

SIGN_UP = """async ([name, password]) => {
  const { api } = await import("/static/js/common.js");
  return (await api("/api/account/signup", { method: "POST", body: { name, password } })).user.name;
}"""

CREATE = """async () => {
  const { api } = await import("/static/js/common.js");
  const body = { seats: [{ kind: "human" }, { kind: "human" }], creator_name: "x" };
  return (await api("/api/games", { method: "POST", body })).game.id;
}"""

JOIN = """async ([id]) => {
  const { api } = await import("/static/js/common.js");
  return (await api(`/api/games/${id}/join`, { method: "POST", body: {} })).seat;
}"""


@pytest.fixture(scope="module")
def site(module_servers: Servers) -> ServeProcess:
    """A server whose moderation events are read often (what an action does is seen at once anyway,
    on the one process); sign-ups unlimited from the tests' one address."""
    return module_servers.one(bot_delay=0.02, args=("--signups-per-hour", "0"))


def strict_page(browser: Any, base: str) -> Any:
    """A page in a context of its own, under the policy the site sends with every answer;
    ``page.violations`` gathers what the browser refused by it (the ``browser`` fixture fails the
    test on them too)."""
    page = new_page(browser)
    violations: list[str] = []
    page.on("console", lambda m: violations.append(m.text) if "Content Security Policy" in m.text else None)
    page.violations = violations
    return page


def signed_up(browser: Any, base: str, name: str) -> Any:
    page = strict_page(browser, base)
    policy = page.goto(base + "/rules").headers["content-security-policy"]
    assert "script-src 'self';" in policy and "style-src 'self';" in policy and "unsafe" not in policy
    assert page.evaluate(SIGN_UP, [name, PASSWORD]) == name
    return page


def clean(*pages: Any) -> None:
    """No script error and nothing the policy refused, on any of the pages."""
    for page in pages:
        assert page.errors == [], page.errors
        assert page.violations == [], page.violations


def eventually(check: Any, what: str) -> Any:
    deadline = time.monotonic() + DEADLINE
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.05)  # polling a server's state: no event to wait on from here
    raise AssertionError(f"{what} did not happen within {DEADLINE:g} s")


def game_of(base: str, game_id: str) -> Any:
    return httpx.get(f"{base}/api/games/{game_id}", timeout=10).json()["game"]


def fits_a_phone(page: Any) -> None:
    """The page, as it is now, passes axe-core and is no wider than a phone's screen."""
    size = page.viewport_size
    page.set_viewport_size({"width": 390, "height": 844})
    assert_accessible(page)
    wider = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    assert wider <= 0, f"{page.url} is {wider} px wider than a phone's screen"
    page.set_viewport_size(size)


def reason_dialog(page: Any, reason: str) -> None:
    """Give an action's reason in the admin page's dialog, and confirm."""
    page.wait_for_selector("#reason-dialog[open]", timeout=TIMEOUT)
    page.fill("#reason-text", reason)
    page.click("#reason-ok")
    page.wait_for_selector("#reason-dialog", state="hidden", timeout=TIMEOUT)


def test_a_reported_message_is_hidden_and_its_speaker_banned_from_the_admin_page(
    site: ServeProcess, browser: Any
) -> None:
    base = site.url
    bob = signed_up(browser, base, "Bob")
    carol = signed_up(browser, base, "Carol")
    root = signed_up(browser, base, "Root")
    assert main(["admin", "promote", "Root", "--data-dir", str(site.directory)]) == 0
    game_id = bob.evaluate(CREATE)
    assert carol.evaluate(JOIN, [game_id]) == 1
    for page in (bob, carol):
        page.goto(f"{base}/games/{game_id}")
        page.wait_for_selector("#chat-form:not([hidden])", timeout=TIMEOUT)
    # Bob says something; Carol reports it (Bob has no Report button on his own words)
    bob.fill("#chat-input", SPAM)
    bob.click("#chat-send")
    line = f"#chat-messages li:has-text('{SPAM}')"
    bob.wait_for_selector(line, timeout=TIMEOUT)
    assert bob.locator(f"{line} .chat-report").count() == 0
    carol.click(f"{line} .chat-report", timeout=TIMEOUT)
    carol.wait_for_selector("#report-dialog[open]", timeout=TIMEOUT)
    assert SPAM in carol.inner_text("#report-about") and "Bob" in carol.inner_text("#report-about")
    carol.select_option("#report-reason", "spam")
    carol.fill("#report-text", "an advertisement in the chat")
    carol.click("#report-send")
    carol.wait_for_selector("#toast:has-text('Thank you')", timeout=TIMEOUT)
    assert not carol.locator("#report-dialog").evaluate("d => d.open")
    # the administrator finds it at the head of the queue, with the message reported marked
    root.goto(base + "/admin")
    report = root.locator(".report[data-status='open']").filter(has_text=SPAM)
    report.wait_for(timeout=TIMEOUT)
    text = report.inner_text()
    assert "spam or advertising" in text and "by Carol" in text and "an advertisement in the chat" in text
    assert SPAM in report.locator(".report-context li.reported").inner_text()
    assert_accessible(root)
    fits_a_phone(root)
    # hidden: gone from both players' chats at once, marked hidden on the admin page
    report.get_by_role("button", name="Hide the message", exact=True).click()
    reason_dialog(root, "advertising")
    root.wait_for_selector("#admin-status:has-text('is hidden')", timeout=TIMEOUT)
    carol.wait_for_selector(line, state="detached", timeout=TIMEOUT)
    bob.wait_for_selector(line, state="detached", timeout=TIMEOUT)
    report.locator(".report-context li.reported .pill:has-text('hidden')").wait_for(timeout=TIMEOUT)
    chat = httpx.get(f"{base}/api/games/{game_id}/chat", timeout=10).json()["messages"]
    assert [m["text"] for m in chat] == []
    # banned: Bob's page comes back as a guest's, a bot takes his seat, he cannot log in again
    report.get_by_role("button", name="Ban Bob", exact=True).click()
    reason_dialog(root, "spam in the chat")
    root.wait_for_selector("#admin-status:has-text('Bob is banned')", timeout=TIMEOUT)
    bob.wait_for_selector("#login-link", timeout=TIMEOUT)
    seat = eventually(
        lambda: (
            (s := httpx.get(f"{base}/api/games/{game_id}", timeout=10).json()["game"]["seats"][0])["resigned"]
            and s
        ),
        "a bot taking the banned player's seat",
    )
    assert seat["away"]
    bob.goto(base + "/login")
    bob.wait_for_selector("#account-form[data-ready]", timeout=TIMEOUT)
    bob.fill("#account-name-input", "Bob")
    bob.fill("#account-password", PASSWORD)
    bob.click("#account-submit")
    bob.wait_for_selector("#account-error:has-text('spam in the chat')", timeout=TIMEOUT)
    # the audit log shows both actions, newest first; the report is resolved and leaves the queue
    root.wait_for_selector("#audit tr[data-action='ban']", timeout=TIMEOUT)
    actions = root.locator("#audit tbody tr").evaluate_all("rows => rows.map((r) => r.dataset.action)")
    assert actions[:2] == ["ban", "hide-message"]
    assert "spam in the chat" in root.inner_text("#audit tbody tr:first-child")
    report.get_by_role("button", name="Resolve", exact=True).click()
    reason_dialog(root, "hidden and banned")
    root.wait_for_selector("#reports .empty", timeout=TIMEOUT)
    root.click("#show-resolved")
    resolved = root.locator(".report[data-status='resolved']").filter(has_text=SPAM)
    resolved.wait_for(timeout=TIMEOUT)
    assert "hidden and banned" in resolved.inner_text()
    # Carol is no administrator: the page says so, and she sees no link to it
    carol.goto(base + "/admin")
    assert (
        carol.locator("#forbidden-text").inner_text().startswith("This page is for the site's administrators")
    )
    assert carol.locator("#admin-link").count() == 0 and root.locator("#admin-link").count() == 1
    clean(bob, carol, root)


def test_a_person_changes_their_password_and_every_other_browser_is_logged_out(
    site: ServeProcess, browser: Any, tmp_path: Path
) -> None:
    base = site.url
    dana = signed_up(browser, base, "Dana")
    elsewhere = strict_page(browser, base)  # Dana's other browser, logged in too
    elsewhere.goto(base + "/login")
    elsewhere.wait_for_selector("#account-form[data-ready]", timeout=TIMEOUT)
    elsewhere.fill("#account-name-input", "Dana")
    elsewhere.fill("#account-password", PASSWORD)
    elsewhere.click("#account-submit")
    elsewhere.wait_for_selector("#account-name:text-is('Dana')", timeout=TIMEOUT)
    dana.goto(base + "/")
    dana.click("#account-link")
    dana.wait_for_url(f"{base}/account", timeout=TIMEOUT)
    dana.wait_for_selector("body[data-ready]", timeout=TIMEOUT)
    assert dana.inner_text("#settings-title") == "Your account: Dana"
    assert_accessible(dana)
    fits_a_phone(dana)
    # the page's own checks, then the server's: the old password must be right
    dana.fill("#old-password", PASSWORD)
    dana.fill("#new-password", NEW_PASSWORD)
    dana.fill("#new-password-again", NEW_PASSWORD + "!")
    dana.click("#password-submit")
    dana.wait_for_selector("#password-error:has-text('differ')", timeout=TIMEOUT)
    dana.fill("#old-password", "not the password at all")
    dana.fill("#new-password-again", NEW_PASSWORD)
    dana.click("#password-submit")
    dana.wait_for_selector("#password-error:not([hidden])", timeout=TIMEOUT)
    assert (
        dana.locator("#password-error").inner_text() != ""
        and dana.locator("#settings-status").inner_text() == ""
    )
    assert dana.evaluate("document.activeElement.id") == "old-password"
    dana.fill("#old-password", PASSWORD)
    dana.click("#password-submit")
    dana.wait_for_selector("#settings-status:has-text('1 other session was logged out')", timeout=TIMEOUT)
    assert dana.input_value("#new-password") == "" and dana.locator("#password-error").is_hidden()
    # this browser stays logged in; the other one is a guest's on its next page
    dana.reload()
    dana.wait_for_selector("#account-name:text-is('Dana')", timeout=TIMEOUT)
    elsewhere.goto(base + "/")
    elsewhere.wait_for_selector("#login-link", timeout=TIMEOUT)
    elsewhere.goto(base + "/login")
    elsewhere.wait_for_selector("#account-form[data-ready]", timeout=TIMEOUT)
    elsewhere.fill("#account-name-input", "Dana")
    elsewhere.fill("#account-password", PASSWORD)
    elsewhere.click("#account-submit")
    elsewhere.wait_for_selector("#account-error:not([hidden])", timeout=TIMEOUT)
    elsewhere.fill("#account-password", NEW_PASSWORD)
    elsewhere.click("#account-submit")
    elsewhere.wait_for_selector("#account-name:text-is('Dana')", timeout=TIMEOUT)
    # the data: a JSON file of the account
    dana.wait_for_selector("#export-link", timeout=TIMEOUT)
    with dana.expect_download(timeout=TIMEOUT) as download:
        dana.click("#export-link")
    saved = tmp_path / "export.json"
    download.value.save_as(saved)
    exported = json.loads(saved.read_text("utf-8"))
    assert exported["format"] == "coloretto-account-export" and exported["profile"]["name"] == "Dana"
    assert len(exported["sessions"]) == 2  # this browser's and the other's new one
    clean(dana, elsewhere)
