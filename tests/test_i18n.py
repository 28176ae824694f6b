"""The web app's languages (issue 13): the catalogues are complete, the language is chosen from the
cookie or Accept-Language, and every answer of the server comes in the client's language."""

from __future__ import annotations

import re
import string
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from babel.messages.catalog import Catalog, Message
from babel.messages.extract import DEFAULT_KEYWORDS, extract_from_dir
from babel.messages.frontend import parse_mapping_cfg
from babel.messages.pofile import read_po

from coloretto.bots.registry import BUILTIN_KINDS
from coloretto.cards import EDITION_DECKS, GOLDEN_JOKER, LAST_ROUND, card_name
from coloretto.errors import ExplainedError
from coloretto.rules import RULE_OPTIONS, Rules, RulesError, rule_option
from coloretto.web import Settings, create_app
from coloretto.web.common import i18n
from coloretto.web.common.schemas import CLIENT_MESSAGE_TYPES
from coloretto.web.pages.i18n_extract import core_messages, error_templates

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

ROOT = Path(__file__).resolve().parents[1]
TEMPLATE = i18n.LOCALE_DIR / "messages.pot"
TRANSLATED = [code for code in i18n.LANGUAGES if code != i18n.DEFAULT_LANGUAGE]
UPDATE = "run pybabel extract and pybabel update as docs/user/languages.md says"


def key(message: Message) -> tuple[str | None, str | tuple[str, ...]]:
    return message.context, message.id if isinstance(message.id, str) else tuple(message.id)


def read(path: Path, locale: str | None = None) -> Catalog:
    with path.open("rb") as file:
        return read_po(file, locale=locale)


def fields(text: str) -> set[str]:
    """The ``str.format`` fields of a message (``{n}``, ``{name}``), as Python reads them."""
    return {name for _, name, _, _ in string.Formatter().parse(text) if name is not None}


# ------------------------------------------------------------- the catalogues


def test_the_committed_template_is_a_fresh_extraction_of_the_sources() -> None:
    """A string added to the code, a page or the core's tables and not extracted fails here."""
    with (ROOT / "babel.cfg").open() as cfg:
        method_map, options_map = parse_mapping_cfg(cfg)
    fresh = {
        (context, message if isinstance(message, str) else tuple(message))
        for _file, _line, message, _comments, context in extract_from_dir(
            str(ROOT), method_map, options_map, keywords={**DEFAULT_KEYWORDS}
        )
    }
    committed = {key(m) for m in read(TEMPLATE) if m.id}
    assert fresh - committed == set(), f"messages missing from {TEMPLATE.name}: {UPDATE}"
    assert committed - fresh == set(), f"messages no longer in the sources: {UPDATE}"


@pytest.mark.parametrize("language", TRANSLATED)
def test_every_message_has_a_translation_with_the_same_fields(language: str) -> None:
    template = read(TEMPLATE)
    catalogue = read(i18n.catalogue_path(language), locale=language)
    wanted = {key(m) for m in template if m.id}
    present = {key(m) for m in catalogue if m.id}
    assert wanted - present == set(), f"{language}: messages not in the catalogue: {UPDATE}"
    assert present - wanted == set(), f"{language}: stale messages in the catalogue: {UPDATE}"
    problems = []
    for message in catalogue:
        if not message.id:
            continue
        if message.fuzzy:
            problems.append(f"fuzzy: {message.id!r}")
        if isinstance(message.id, str):
            if not message.string:
                problems.append(f"untranslated: {message.id!r}")
            elif fields(message.string) != fields(message.id):
                problems.append(f"fields {fields(message.string)} in {message.string!r} for {message.id!r}")
            continue
        forms = list(message.string)
        if len(forms) != catalogue.num_plurals or not all(forms):
            problems.append(f"plural forms {forms!r} for {message.id!r} ({catalogue.num_plurals} wanted)")
            continue
        allowed = fields(message.id[0]) | fields(message.id[1])
        if any(not fields(form) <= allowed for form in forms) or fields(forms[-1]) != fields(message.id[1]):
            problems.append(f"fields of the forms {forms!r} for {message.id!r}")
    assert problems == [], "\n".join(problems)


@pytest.mark.parametrize("language", TRANSLATED)
def test_the_plural_forms_follow_the_languages_rules(language: str) -> None:
    """French says 0 point and 2 points, Dutch 0 punten; the browser picks a form by CLDR's plural
    category, which maps onto the catalogue's forms one to one."""
    categories = i18n.plural_categories(language)
    assert sorted(categories.values()) == list(range(read(i18n.catalogue_path(language)).num_plurals))
    token = i18n.current_language.set(language)
    try:
        shown = [i18n.ngettext("{n} point", "{n} points", n) for n in (0, 1, 2)]
    finally:
        i18n.current_language.reset(token)
    expected = {
        "nl": ["0 punten", "1 punt", "2 punten"],
        "fr": ["0\u00a0point", "1\u00a0point", "2\u00a0points"],
        "de": ["0 Punkte", "1 Punkt", "2 Punkte"],
    }
    assert shown == expected[language]


def test_english_is_the_msgids_themselves() -> None:
    assert i18n.translate("Scoring", "en") == "Scoring"
    assert i18n.ngettext("{n} point", "{n} points", 1) == "1 point"
    assert i18n.ngettext("{n} point", "{n} points", 0) == "0 points"
    assert i18n.gettext("seat {seat} is taken", seat=3) == "seat 3 is taken"


# ----------------------------------------------------- what the core keeps in tables


def core_strings() -> list[tuple[str | None, str]]:
    """Every text of the core's tables that the web shows, read from the tables themselves."""
    out: list[tuple[str | None, str]] = []
    for option in RULE_OPTIONS:
        out += [(None, option.label), (None, option.help), *((None, text) for text in option.choice_help)]
        out += [("rule choice", value) for value in option.choices or ()]
    for deck in EDITION_DECKS.values():
        out += [(None, name) for name in (*deck.colour_names, deck.joker_name, deck.plus_two_name)]
    out += [(None, card_name(GOLDEN_JOKER)), (None, card_name(LAST_ROUND))]
    out += [(None, kind.description) for kind in BUILTIN_KINDS]
    return out


def test_the_extractor_gives_every_text_of_the_cores_tables() -> None:
    extracted = {(m[0], m[1]) if isinstance(m, tuple) else (None, m) for m, _note in core_messages()}
    assert set(core_strings()) <= extracted


@pytest.mark.parametrize("language", TRANSLATED)
def test_rule_options_cards_and_bots_are_translated(language: str) -> None:
    catalogue = read(i18n.catalogue_path(language), locale=language)
    missing = [
        (context, text) for context, text in core_strings() if not catalogue.get(text, context=context)
    ]
    assert missing == []
    untranslated = [
        (context, text)
        for context, text in core_strings()
        if not (message := catalogue.get(text, context=context)) or not message.string or message.fuzzy
    ]
    assert untranslated == []


# --------------------------------------------------------------- the core's errors


def illegal_reasons() -> dict[str, BaseException]:
    """Why the core refuses each action that is not legal, at every position of random games in
    every variant that changes what is legal: every reason an illegal action can get (one error of
    each message)."""
    import random

    from coloretto.actions import ALL_ACTIONS
    from coloretto.game import Game, IllegalActionError

    variants = [
        Rules(players=2),
        Rules(players=3, edition="modern", joker_timing="on-take"),
        Rules(players=4, starting_colours="chosen"),
        Rules(players=5, edition="playing-cards", joker_timing="on-take", starting_colours="chosen"),
        Rules(players=3, cards_under_last_round=1),  # the deck runs out in the last round
    ]
    reasons: dict[str, BaseException] = {}
    for seed in range(6):
        for rules in variants:
            game, rng = Game.new(rules, seed=seed), random.Random(seed)
            while True:
                legal = set(game.legal_actions)
                for action in ALL_ACTIONS:
                    if action not in legal:
                        with pytest.raises(IllegalActionError) as info:
                            game.push(action)
                        reasons.setdefault(str(info.value), info.value)
                if game.is_over:
                    break
                choices = sorted(legal, key=lambda a: a.notation())
                # one game in two draws whenever it may: rows fill up, and the deck runs out
                drawing = [a for a in choices if a.notation()[0] in "dp"] if seed % 2 else []
                game.push(rng.choice(drawing or choices))
    return reasons


def other_errors() -> dict[str, BaseException]:
    """One message of each kind of the core's other errors that a client can cause."""
    from coloretto.actions import parse_action
    from coloretto.bots import BotSpecError, check_bot
    from coloretto.cards import NotationError, parse_card, parse_colour

    jobs: list[tuple[Any, type[Exception]]] = [
        (lambda: parse_action("t9", rows=3), NotationError),
        (lambda: parse_action("zz", rows=3), NotationError),
        (lambda: parse_card("violet"), NotationError),
        (lambda: parse_colour("joker"), NotationError),
        (lambda: Rules.from_dict({"table": "purple"}), RulesError),
        (lambda: Rules.from_dict({"players": 9}), RulesError),
        (lambda: Rules.from_dict({"match_games": 99}), RulesError),
        (lambda: Rules.from_dict({"match_games": "two"}), RulesError),
        (lambda: Rules.from_dict({"cards_under_last_round": -1}), RulesError),
        (lambda: Rules.from_dict({"cards_under_last_round": 500}), RulesError),
        (lambda: Rules.from_dict({"colour": 3}), RulesError),
        (lambda: Rules.from_dict([]), RulesError),  # type: ignore[arg-type]
        (lambda: check_bot("grandmaster"), BotSpecError),
        (lambda: check_bot(" "), BotSpecError),
        (lambda: rule_option("colourz"), RulesError),
        (lambda: check_bot("hard:1s"), BotSpecError),
        (lambda: check_bot("mcts:fast"), BotSpecError),
        (lambda: check_bot("ppo:/srv/policy.npz", files=False), BotSpecError),
    ]
    messages: dict[str, BaseException] = {}
    for job, error in jobs:
        with pytest.raises(error) as info:
            job()
        messages[str(info.value)] = info.value
    return messages


def templates_of(error: BaseException) -> set[str]:
    """The templates an error is told with: its own and those of the reasons inside it."""
    assert isinstance(error, ExplainedError), f"{type(error).__name__}: {error}"
    inner = [value for value in error.fields.values() if isinstance(value, ExplainedError)]
    return {error.template}.union(*(templates_of(value) for value in inner))


def test_the_cores_errors_are_translated_from_their_templates() -> None:
    """Every reason the core gives for an illegal action, and its other errors a client can cause,
    is an explained error whose template (and the reason's inside it: a bot name's problem) is in
    the catalogue, translated in every language; the web says it in the client's language, and in
    English exactly as the core does."""
    errors = {**illegal_reasons(), **other_errors()}
    said = set().union(*(templates_of(error) for error in errors.values()))
    raised = {
        template
        for path in ("game/illegal.py", "actions.py", "cards.py", "rules.py", "bots/registry.py")
        for _line, template, _error in error_templates((ROOT / "coloretto" / path).read_text())
    }
    # every template these modules raise with is met by the games and names above (a bot's option
    # problem made at run time, "cannot read the limit 'fast' …", is said as the core says it)
    assert sorted(raised - said) == []
    for language in TRANSLATED:
        catalogue = read(i18n.catalogue_path(language), locale=language)
        missing = [t for t in raised if not (m := catalogue.get(t)) or not m.string or m.fuzzy]
        assert missing == [], language
    by_message = {message: error for message, error in errors.items()}
    token = i18n.current_language.set("nl")
    try:
        assert i18n.explained(by_message["table must be one of brown, violet, not 'purple'"]) == (
            "table moet een van brown, violet zijn, niet 'purple'"
        )
        assert i18n.explained(by_message["p1: there is no drawn card to place: draw first"]) == (
            "p1: er is geen getrokken kaart om te leggen: trek eerst"
        )
        assert i18n.explained(
            by_message[
                "bot 'ppo:/srv/policy.npz': it names a file (/srv/policy.npz), "
                "and only bots without files may be named here"
            ]
        ) == (
            "bot 'ppo:/srv/policy.npz': hij noemt een bestand (/srv/policy.npz), en hier mogen alleen "
            "bots zonder bestanden worden gekozen"
        )
        assert i18n.explained(ValueError("something else")) == "something else"
    finally:
        i18n.current_language.reset(token)
    assert all(i18n.explained(error) == message for message, error in errors.items())  # English


# ---------------------------------------------------------------- choosing the language


def test_accept_language_is_read_with_its_q_values() -> None:
    assert i18n.accepted_languages("fr-CH, fr;q=0.9, en;q=0.8, de;q=0.7, *;q=0.5") == [
        "fr-ch",
        "fr",
        "en",
        "de",
    ]
    assert i18n.accepted_languages("de;q=0.5, nl;q=0.8, es") == ["es", "nl", "de"]
    assert i18n.accepted_languages("nl;q=0, de;q=bad, fr;q=2") == []
    assert i18n.negotiate("de;q=0.5, nl;q=0.8, es") == "nl"
    assert i18n.negotiate("nl-NL,nl;q=0.9") == "nl"
    assert i18n.negotiate("EN-us") == "en"
    assert i18n.negotiate("es, pt-BR") == "en"
    assert i18n.negotiate("") == "en"
    assert i18n.negotiate(None) == "en"


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    path = tmp_path_factory.mktemp("i18n") / "web.sqlite3"
    settings = Settings(bot_delay=0.0, requests_per_minute=0, max_body_bytes=2048)
    with TestClient(create_app(f"sqlite:///{path}", settings)) as c:
        yield c


def page_language(client: TestClient, path: str, **headers: str) -> str:
    response = client.get(path, headers=headers)
    assert response.status_code == 200, response.text
    match = re.search(r'<html lang="(\w+)">', response.text)
    assert match is not None
    return match.group(1)


def test_the_page_language_comes_from_the_cookie_else_accept_language_else_english(
    client: TestClient,
) -> None:
    assert page_language(client, "/") == "en"
    assert page_language(client, "/", **{"Accept-Language": "de;q=0.5, nl;q=0.8"}) == "nl"
    assert page_language(client, "/rules", **{"Accept-Language": "de-AT"}) == "de"
    assert page_language(client, "/", **{"Accept-Language": "es, it;q=0.9"}) == "en"
    # the switcher's cookie wins over the browser's languages; one the app does not speak is ignored
    assert page_language(client, "/", **{"Accept-Language": "nl", "Cookie": "lang=fr"}) == "fr"
    assert page_language(client, "/", **{"Accept-Language": "nl", "Cookie": "lang=xx"}) == "nl"
    response = client.get("/", headers={"Accept-Language": "nl"})
    assert "Accept-Language" in response.headers["vary"] and "Cookie" in response.headers["vary"]


def test_every_page_is_served_in_every_language_with_its_switcher(client: TestClient) -> None:
    titles = {
        "en": "Coloretto — rules",
        "nl": "Coloretto — spelregels",
        "fr": "Coloretto — règles",
        "de": "Coloretto — Regeln",
    }
    for language in i18n.LANGUAGES:
        pages = ("/", "/games/abc", "/games/abc/replay?game=2", "/rules", "/login", "/signup", "/leaderboard")
        for path in (*pages, "/players/Ann"):
            assert page_language(client, path, Cookie=f"lang={language}") == language
        text = client.get("/rules", headers={"Cookie": f"lang={language}"}).text
        assert f"<title>{titles[language]}</title>" in text
        for code, name in i18n.LANGUAGE_NAMES.items():
            assert f'hreflang="{code}"' in text and f">{name}</a>" in text
        assert f'content="/api/i18n/{language}?v={i18n.catalogue_version(language)}"' in text


def test_the_switcher_sets_the_cookie_and_comes_back_to_the_same_page(client: TestClient) -> None:
    response = client.get("/games/abc/replay?game=2&lang=de", follow_redirects=False)
    client.cookies.clear()  # the client keeps cookies, as a browser would: the other tests send their own
    assert response.status_code == 303
    assert response.headers["location"] == "/games/abc/replay?game=2"
    cookie = response.headers["set-cookie"]
    assert cookie.startswith("lang=de;") and "Path=/" in cookie and "SameSite=lax" in cookie
    refused = client.get("/rules?lang=xx", follow_redirects=False, headers={"Accept-Language": "nl"})
    assert refused.status_code == 400
    assert "lang=" not in refused.headers.get("set-cookie", "")  # the page's CSRF cookie may come
    assert refused.json() == {
        "error": "bad_language",
        "message": "de taal 'xx' bestaat hier niet: de talen zijn en, nl, fr, de",
    }


def test_the_browser_gets_the_same_catalogue_as_json(client: TestClient) -> None:
    version = i18n.catalogue_version("de")
    response = client.get(f"/api/i18n/de?v={version}")
    assert response.status_code == 200 and "immutable" in response.headers["cache-control"]
    data = response.json()
    assert data["language"] == "de" and data["plural"] == {"one": 0, "other": 1}
    assert data["messages"]["Review this game"] == "Diese Partie analysieren"
    assert data["messages"]["{n} point"] == ["{n} Punkt", "{n} Punkte"]
    assert data["messages"]["rule choice\u0004brown"] == "Braun"
    assert client.get("/api/i18n/de?v=old").headers["cache-control"] == "no-cache"
    assert client.get("/api/i18n/en").json()["messages"] == {}
    missing = client.get("/api/i18n/xx", headers={"Accept-Language": "fr"})
    assert missing.status_code == 404 and missing.json()["message"].startswith("la langue 'xx' n'existe pas")


# ---------------------------------------------------------- the server's answers


def test_http_errors_come_in_the_clients_language(client: TestClient) -> None:
    dutch = {"Accept-Language": "nl"}
    missing = client.post("/api/games/nope/join", json={"name": "Ann"}, headers=dutch)
    assert missing.status_code == 404 and missing.json()["message"] == "er is geen spel 'nope'"
    english = client.post("/api/games/nope/join", json={"name": "Ann"})
    assert english.json()["message"] == "there is no game 'nope'"
    # validation, the core's rule errors, the body limit (a middleware) and unknown paths too
    bad = client.post("/api/games", json={"seats": [{"kind": "robot"}]}, headers=dutch)
    assert (
        bad.status_code == 422 and bad.json()["message"] == "seats.0.kind: Invoer moet 'human' of 'bot' zijn"
    )
    rules = client.post(
        "/api/games",
        json={"seats": [{"kind": "human"}] * 2, "creator_name": "Ann", "rules": {"players": 3, "table": "x"}},
    )
    assert rules.json()["message"] == "rules say 3 players but 2 seats are given"
    purple = client.post(
        "/api/games",
        json={"seats": [{"kind": "human"}, {"kind": "human"}], "rules": {"table": "purple"}},
        headers={"Accept-Language": "de"},
    )
    assert purple.json() == {
        "error": "bad_rules",
        "message": "table muss einer der Werte brown, violet sein, nicht 'purple'",
    }
    big = client.post(
        "/api/games", content=b"{" + b" " * 4096 + b"}", headers={**dutch, "Content-Type": "application/json"}
    )
    assert (
        big.status_code == 413
        and big.json()["message"] == "de inhoud van een verzoek is beperkt tot 2048 bytes"
    )
    nowhere = client.get("/api/nowhere", headers={"Accept-Language": "fr"})
    assert nowhere.json() == {"error": "not_found", "message": "Introuvable"}


def test_websocket_errors_come_in_the_language_of_its_handshake(client: TestClient) -> None:
    created = client.post(
        "/api/games", json={"seats": [{"kind": "human"}, {"kind": "human"}], "creator_name": "Ann"}
    )
    game_id = created.json()["game"]["id"]
    url = f"/api/games/{game_id}/ws"
    with client.websocket_connect(url, headers={"Accept-Language": "nl-BE, en;q=0.5"}) as ws:
        assert ws.receive_json()["type"] == "state"
        ws.send_text('{"type": "bogus"}')
        error = ws.receive_json()
        assert error["error"] == "unknown_type"
        assert error["message"] == "onbekend berichttype 'bogus': verwacht een van " + ", ".join(
            CLIENT_MESSAGE_TYPES
        )
        ws.send_json({"type": "act", "action": "d"})
        watching = ws.receive_json()
        assert watching == {
            "type": "error",
            "error": "not_seated",
            "message": "je kijkt naar dit spel: neem een plaats in om mee te spelen",
        }
    with client.websocket_connect(url, headers={"Cookie": "lang=de", "Accept-Language": "nl"}) as ws:
        assert ws.receive_json()["type"] == "state"
        ws.send_text("[1, 2")
        assert ws.receive_json()["message"].startswith("kein gültiges JSON (")


def test_an_illegal_move_says_the_cores_reason_in_the_clients_language(client: TestClient) -> None:
    created = client.post(
        "/api/games", json={"seats": [{"kind": "human"}, {"kind": "human"}], "creator_name": "Ann"}
    ).json()
    game_id = created["game"]["id"]
    joined = client.post(f"/api/games/{game_id}/join", json={"name": "Bob"}).json()
    tokens = {created["seat"]: created["token"], joined["seat"]: joined["token"]}
    to_move = client.get(f"/api/games/{game_id}").json()["to_move"]
    headers = {"Authorization": f"Bearer {tokens[to_move]}", "Accept-Language": "fr"}
    refused = client.post(f"/api/games/{game_id}/actions", json={"action": "p1"}, headers=headers)
    assert refused.status_code == 400
    assert refused.json()["message"] == (
        "coup illégal\u00a0: p1\u00a0: il n'y a pas de carte piochée à poser\u00a0: piochez d'abord"
    )
    other = {"Authorization": f"Bearer {tokens[1 - to_move]}", "Accept-Language": "de"}
    wrong_turn = client.post(f"/api/games/{game_id}/actions", json={"action": "d"}, headers=other)
    who = ["Ann", "Bob"][to_move]
    assert wrong_turn.json()["message"] == f"{who} ist am Zug, nicht du"


def test_the_options_come_in_the_clients_language(client: TestClient) -> None:
    options = client.get("/api/options", headers={"Accept-Language": "de"}).json()
    by_name = {option["name"]: option for option in options["rules"]}
    assert by_name["edition"]["label"] == "Ausgabe"
    assert by_name["edition"]["choices"] == ["classic", "modern", "playing-cards"]  # the values stay
    assert by_name["edition"]["choice_labels"] == ["klassisch", "modern", "Spielkarten"]
    assert by_name["table"]["choice_help"][1] == "1 4 8 7 6 5: mehr als drei Karten einer Farbe kosten Punkte"
    assert by_name["players"]["choice_labels"] is None
    bots = {bot["name"]: bot["description"] for bot in options["bots"]}
    assert bots["random"] == "zufällige erlaubte Züge"
    english = client.get("/api/options").json()
    assert english["rules"][1]["choice_labels"] == english["rules"][1]["choices"]
    assert english["rules"][1]["label"] == RULE_OPTIONS[1].label


def test_a_games_default_name_is_in_its_creators_language(client: TestClient) -> None:
    body = {"seats": [{"kind": "human"}, {"kind": "human"}, {"kind": "human"}], "creator_name": "Ann"}
    assert client.post("/api/games", json=body, headers={"Accept-Language": "fr"}).json()["game"]["name"] == (
        "partie à 3 joueurs"
    )
    assert client.post("/api/games", json=body).json()["game"]["name"] == "3-player game"
