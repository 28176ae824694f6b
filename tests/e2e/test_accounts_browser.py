"""In a real browser: the pages' ``api()`` sends the security token, so a logged-in browser still
creates games by the lobby's form, while a request a script makes without the token is refused."""

from __future__ import annotations

from typing import Any

import pytest

from tests.e2e.test_browser import TIMEOUT, new_page
from tests.servers import ServeProcess

pytestmark = [pytest.mark.filterwarnings("ignore::DeprecationWarning"), pytest.mark.slow]

SIGN_UP = """async () => {
  const { api } = await import("/static/js/common.js");
  const body = { name: "Eve", password: "a long password" };
  const answer = await api("/api/account/signup", { method: "POST", body });
  return answer.user.name;
}"""

FORGED = """async () => {
  const response = await fetch("/api/games", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ seats: [{ kind: "human" }, { kind: "bot", bot: "random" }], creator_name: "Eve" }),
  });
  return [response.status, (await response.json()).error];
}"""


def test_a_logged_in_browser_plays_through_the_pages_and_a_tokenless_request_is_refused(
    server: ServeProcess, browser: Any
) -> None:
    page = new_page(browser)
    page.goto(server.url + "/")
    assert page.evaluate("document.cookie").count("coloretto_csrf=") == 1  # readable by the page
    assert page.evaluate(SIGN_UP) == "Eve"
    assert "coloretto_session" not in page.evaluate("document.cookie")  # HttpOnly
    assert page.evaluate(FORGED) == [403, "csrf"]
    # logged in, the lobby asks for no name: she sits under her account's
    page.goto(server.url + "/")
    page.wait_for_selector("#sitting-as", timeout=TIMEOUT)
    assert page.locator("#creator-name").count() == 0
    page.wait_for_selector("#seat-1 option", state="attached", timeout=TIMEOUT)
    page.select_option("#seat-count", "2")
    page.select_option("#seat-1", "bot:random")
    page.click("#create-button")
    page.wait_for_url("**/games/*", timeout=4 * TIMEOUT)
    game_id = page.url.rstrip("/").split("/")[-1]
    page.wait_for_selector("#players", timeout=TIMEOUT)
    assert "Eve" in page.locator("#players").inner_text()  # she sits under her account's name
    other = page.context.new_page()  # another tab, with no seat token: her seat by her session
    other.goto(server.url + "/")
    you = other.evaluate("async (id) => (await (await fetch(`/api/games/${id}`)).json()).you", game_id)
    assert you == 0
    assert page.errors == []
