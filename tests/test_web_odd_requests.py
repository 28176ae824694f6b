"""Requests a careless or hostile client sends, found by trying the server from outside: each gets a
clear 4xx naming what was wrong, never a 500, and nothing changes."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from coloretto.web import Settings
from coloretto.web.runtime.workers import BotPool
from tests.test_web import FAST, TestClient, auth, create, make_client, state
from tests.test_web_accounts import CHEAP_HASH, browser, logged_in
from tests.test_web_table_features import finished_pair, join

HINTS = Settings(**{**FAST.__dict__, "hint_budget": 0.05, "password_cost": CHEAP_HASH})


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    with make_client(tmp_path, HINTS) as c:
        yield c


def pair(client: TestClient) -> tuple[str, str, str]:
    """A game of two guests in play: its id, then the tokens of the seat to move and the other."""
    created = create(client, ["human", "human"])
    game_id, ann = created["game"]["id"], created["token"]
    bob = join(client, game_id, "Bob").json()["token"]
    tokens = [ann, bob]
    mover = state(client, game_id)["to_move"]
    return game_id, tokens[mover], tokens[1 - mover]


def refused(response: Any, status: int, error: str) -> str:
    assert response.status_code == status, response.text
    assert response.json()["error"] == error, response.text
    return str(response.json()["message"])


# ------------------------------------------------------------------ numbers


@pytest.mark.parametrize("after", [2**63, 2**64, 10**30])
def test_a_chat_position_past_what_a_database_counts_is_refused(client: TestClient, after: int) -> None:
    game_id, _mover, _other = pair(client)
    message = refused(client.get(f"/api/games/{game_id}/chat?after={after}"), 422, "bad_request")
    assert "after" in message
    assert client.get(f"/api/games/{game_id}/chat?after={2**63 - 1}").json()["messages"] == []


def test_a_number_too_long_to_read_is_refused_like_any_unreadable_body(client: TestClient) -> None:
    body = b'{"seats": [{"kind": "human"}, {"kind": "human"}], "rules": {"players": ' + b"9" * 5000 + b"}}"
    response = client.post("/api/games", content=body, headers={"content-type": "application/json"})
    assert "read as JSON" in refused(response, 422, "bad_request")
    assert client.get("/api/games").json()["games"] == []


def test_a_player_count_that_is_no_number_is_named_as_such(client: TestClient) -> None:
    seats = [{"kind": "human"}, {"kind": "human"}]
    message = refused(
        client.post("/api/games", json={"seats": seats, "rules": {"players": "x"}}), 400, "bad_rules"
    )
    assert message == "players must be a whole number, not 'x'"
    message = refused(
        client.post("/api/games", json={"seats": seats, "rules": {"players": 4}}), 400, "bad_rules"
    )
    assert message == "rules say 4 players but 2 seats are given"


# ------------------------------------------------------------------ hints


@pytest.mark.parametrize("budget", [0.00001, 1e-300, 0])
def test_a_hint_budget_below_a_millisecond_is_refused(client: TestClient, budget: float) -> None:
    game_id, mover, _other = pair(client)
    response = client.post(f"/api/games/{game_id}/hint", json={"budget": budget}, headers=auth(mover))
    assert "budget" in refused(response, 422, "bad_request")


def test_a_client_may_ask_for_less_thinking_than_the_servers_hint_budget_never_more(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The bot workers play every table's bots too: one client's hints must not hold them longer
    than the operator's --hint-budget."""
    asked: list[str] = []
    analyze = BotPool.analyze

    async def spy(self: BotPool, game_id: str, observation: Any, budget: str, seed: int) -> Any:
        asked.append(budget)
        return await analyze(self, game_id, observation, budget, seed)

    monkeypatch.setattr(BotPool, "analyze", spy)
    game_id, mover, _other = pair(client)
    for budget in (10, 0.05, 0.01):
        response = client.post(f"/api/games/{game_id}/hint", json={"budget": budget}, headers=auth(mover))
        assert response.status_code == 200, response.text
    assert client.post(f"/api/games/{game_id}/hint", headers=auth(mover)).status_code == 200
    assert asked == ["0.05s", "0.05s", "0.01s", "0.05s"]


# ------------------------------------------------------------------ games not in play


@pytest.mark.parametrize("asked", ["hint", "reclaim"])
def test_a_hint_or_a_reclaim_in_a_game_not_begun_or_over_says_so(client: TestClient, asked: str) -> None:
    created = create(client, ["human", "human"])
    response = client.post(f"/api/games/{created['game']['id']}/{asked}", headers=auth(created["token"]))
    refused(response, 409, "not_started")
    game_id, ann, _bob = finished_pair(client)
    refused(client.post(f"/api/games/{game_id}/{asked}", headers=auth(ann)), 409, "game_over")


def test_a_rematch_of_a_game_not_begun_speaks_of_the_rematch(client: TestClient) -> None:
    created = create(client, ["human", "human"])
    response = client.post(f"/api/games/{created['game']['id']}/rematch", headers=auth(created["token"]))
    assert refused(response, 409, "not_started") == "a rematch is for a game that is over"


# ------------------------------------------------------------------ names


@pytest.mark.parametrize("name", ["%00", "%E2%80%AE", "a%E2%80%8Fb"])
def test_a_name_no_account_can_have_is_quoted_and_has_no_player_page(client: TestClient, name: str) -> None:
    message = refused(client.get(f"/api/players/{name}"), 404, "not_found")
    assert message.startswith("there is no player named '") and message.endswith("'")
    assert not any(c in message for c in "\x00\u202e\u200f")
    refused(client.get(f"/players/{name}"), 404, "not_found")


def test_a_guest_cannot_sit_down_under_an_accounts_name(client: TestClient) -> None:
    logged_in(browser(client, "127.0.0.4"), "Zed")
    created = create(client, ["human", "human"], name="Ann")
    game_id = created["game"]["id"]
    for name in ("Zed", "zED", "ＺＥＤ"):
        message = refused(join(client, game_id, name), 409, "name_taken")
        assert "log in" in message
    body = {"seats": [{"kind": "human"}, {"kind": "bot", "bot": "greedy"}], "creator_name": "zed"}
    refused(client.post("/api/games", json=body), 409, "name_taken")
    assert state(client, game_id)["game"]["status"] == "open"
    assert join(client, game_id, "Zedd").status_code == 200


# ------------------------------------------------------------------ languages


def test_pydantics_boolean_and_choice_messages_are_translated(client: TestClient) -> None:
    dutch = {"Accept-Language": "nl"}
    message = refused(client.get("/api/games?mine=maybe", headers=dutch), 422, "bad_request")
    assert message == "query.mine: Invoer moet true of false zijn, deze invoer is niet te lezen"
    message = refused(client.get("/api/games?status=zzz", headers=dutch), 422, "bad_request")
    assert " of 'stopped'" in message and " or " not in message
