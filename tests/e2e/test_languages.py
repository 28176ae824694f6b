"""The web app in a real browser in Dutch, French and German: chosen from the browser's language,
switched by the player, and the same words as the server's in English."""

from __future__ import annotations

import time
from typing import Any

import httpx
import pytest

from tests.e2e.axe import assert_accessible
from tests.servers import ServeProcess

pytestmark = [pytest.mark.filterwarnings("ignore::DeprecationWarning"), pytest.mark.slow]

TIMEOUT = 15_000  # ms, for any single wait
BOT_TIMEOUT = 180_000  # ms: the server's bot workers warm in the background before the first bot moves


def new_page(browser: Any, locale: str | None = None) -> Any:
    context = browser.new_context(viewport={"width": 1200, "height": 900}, locale=locale)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.errors = errors
    return page


def test_the_lobby_speaks_dutch_switches_to_french_and_the_rules_to_german(
    server: ServeProcess, browser: Any
) -> None:
    page = new_page(browser, locale="nl-NL")  # Accept-Language: nl-NL
    page.goto(server.url + "/")
    page.wait_for_selector("#rule-edition option", state="attached", timeout=TIMEOUT)
    assert page.get_attribute("html", "lang") == "nl"
    assert page.title() == "Coloretto — lobby"
    # the page's own text (the server's template) and the form built by the browser (its catalogue)
    assert page.inner_text("#create-title") == "Nieuw spel"
    assert page.inner_text("#create-button") == "Aanmaken en gaan zitten"
    assert page.inner_text("label:has(#creator-name) span") == "Je naam"
    assert page.get_attribute("#creator-name", "placeholder") == "je naam"
    assert page.locator("#clock-kind option").all_inner_texts() == [
        "Geen klok",
        "Seconden per zet",
        "Minuten per spel",
        "Allebei",
    ]
    assert page.locator("label[for='seat-0']").inner_text() == "Plaats 1"
    assert page.locator("#seat-1 option").first.inner_text() == "een mens (uitnodigen met een link)"
    # the rule options as the server's /api/options gives them in Dutch: labels, choices, help
    offered = httpx.get(f"{server.url}/api/options", headers={"Accept-Language": "nl"}).json()["rules"]
    edition = next(o for o in offered if o["name"] == "edition")
    page.click("summary")
    assert page.locator("#rule-edition option").all_inner_texts() == ["klassiek", "modern", "speelkaarten"]
    assert edition["choice_labels"] == ["klassiek", "modern", "speelkaarten"]
    assert page.locator("label:has(#rule-edition) > span").first.inner_text() == "Editie"
    assert page.inner_text("#rule-edition-help") == "welk kaartspel: drie jokers"
    page.wait_for_selector("#open-games .empty, #open-games table", timeout=TIMEOUT)
    assert page.locator("nav.languages a[aria-current]").inner_text() == "Nederlands"
    # the header and the lobby's tables in Dutch: a guest is invited to log in for a rated one
    assert page.locator("nav.site a").all_inner_texts() == ["Lobby", "Ranglijst", "Spelregels"]
    assert page.get_attribute("nav.site", "aria-label") == "Site"
    assert (page.inner_text("#login-link"), page.inner_text("#signup-link")) == ("Inloggen", "Registreren")
    assert page.locator(".skip-link").inner_text() == "Naar de inhoud"
    assert page.inner_text("#rated-guest") == (
        "Spellen met rating zijn voor ingelogde spelers: log in of registreer je om er een te spelen."
    )
    assert page.inner_text("label[for='private']") == "Privé"
    assert page.inner_text("#private-help").startswith("Niet te zien in de lobby")
    assert_accessible(page)

    # The switcher: French, remembered (the cookie wins over the browser's Dutch) on every page.
    page.click("nav.languages a[data-lang='fr']")
    page.wait_for_function("document.documentElement.lang === 'fr'", timeout=TIMEOUT)
    page.wait_for_selector("#rule-edition option", state="attached", timeout=TIMEOUT)
    assert page.url.rstrip("/") == server.url  # back at the page's own address, no ?lang=
    assert page.inner_text("#create-title") == "Nouvelle partie"
    french = page.locator("#rule-edition option").all_text_contents()  # closed <details>: not rendered
    assert french == ["classique", "moderne", "cartes à jouer"]
    assert page.locator("#clock-kind option").first.inner_text() == "Sans pendule"
    page.goto(server.url + "/rules")
    assert page.get_attribute("html", "lang") == "fr"
    assert page.inner_text("h1") == "Comment jouer à Coloretto"

    # The rules page in German, by the German switch.
    page.click("nav.languages a[data-lang='de']")
    page.wait_for_function("document.documentElement.lang === 'de'", timeout=TIMEOUT)
    assert page.inner_text("h1") == "So spielt man Coloretto"
    rules = page.inner_text("main")
    for term in ("Letzte-Runde-Karte", "goldene Joker", "„+2“-Karten", "Reihe", "Wertungstabelle"):
        assert term in rules, term
    assert "Gelb" in page.inner_text("main p:has(.card.c0)")
    assert page.errors == []


def wait_until_finished(base: str, game_id: str) -> dict[str, Any]:
    deadline = time.monotonic() + BOT_TIMEOUT / 1000
    while time.monotonic() < deadline:
        state = httpx.get(f"{base}/api/games/{game_id}", timeout=10).json()
        if state["game"]["status"] == "finished":
            return dict(state)
        time.sleep(0.2)
    raise AssertionError(f"game {game_id} did not finish")


def test_a_table_tells_its_moves_in_english_as_the_server_and_in_dutch_its_own_way(
    server: ServeProcess, browser: Any
) -> None:
    rules = {
        "edition": "modern",
        "joker_timing": "on-take",
        "round_starter": "next-player",
        "plus_colours": "most-cards",
        "tie_break": "fewer-minus",
        "starting_colours": "chosen",
        "cards_under_last_round": 20,
    }
    seats = [{"kind": "bot", "bot": bot} for bot in ("random", "greedy", "random")]
    created = httpx.post(f"{server.url}/api/games", json={"seats": seats, "rules": rules}, timeout=10)
    assert created.status_code == 201, created.text
    game_id = created.json()["game"]["id"]
    state = wait_until_finished(server.url, game_id)

    # English (no Accept-Language of its own: the browser's default is en-US): word for word the
    # server's own move log and rules text, which the page now writes itself from the structured log
    english = new_page(browser)
    english.goto(f"{server.url}/games/{game_id}")
    english.wait_for_function("document.body.dataset.status === 'finished'", timeout=TIMEOUT)
    shown = english.locator("#log li").all_inner_texts()
    assert shown == [entry["text"] for entry in state["log"]]
    assert english.inner_text("#rules-text") == state["game"]["rules_text"]

    # Dutch: the same moves in Dutch, 999 Games' words (groep), the names of the cards translated.
    dutch = new_page(browser, locale="nl-NL")
    dutch.goto(f"{server.url}/games/{game_id}")
    dutch.wait_for_function("document.body.dataset.status === 'finished'", timeout=TIMEOUT)
    log = dutch.locator("#log li").all_inner_texts()
    assert len(log) == len(state["log"])
    names = [seat["name"] for seat in state["game"]["seats"]]
    for entry, text in zip(state["log"], log):
        who = names[entry["seat"]]
        action = entry["move"].split()[0]
        if action == "d":
            assert f"{who} trok " in text, text
        elif action.startswith("t"):
            assert f"{who} nam groep {action[1:]}: " in text, text
        elif action.startswith("p"):
            assert f" bij groep {action[1:]}" in text, text
        elif action.startswith("s:"):
            assert "als startkleur" in text, text
    assert dutch.inner_text("#rules-text").startswith("3 spelers, moderne editie, bruine scorekaart")
    assert dutch.inner_text("#turn") == "Het spel is afgelopen"
    scores = dutch.locator("#players .score").all_inner_texts()
    assert all(text.endswith((" punt", " punten")) for text in scores), scores
    assert dutch.locator("#final th").first.inner_text() == "speler"
    assert english.errors == [] and dutch.errors == []
