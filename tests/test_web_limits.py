"""The server's limits on what one client may ask: bot budgets, games, requests; and their errors."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

from coloretto.web import Settings, create_app

FAST = Settings(bot_delay=0.0, messages_per_second=1000.0, message_burst=1000)


def make_client(tmp_path: Path, settings: Settings = FAST, address: str = "127.0.0.2") -> TestClient:
    return TestClient(
        create_app(f"sqlite:///{tmp_path / 'limits.sqlite3'}", settings), client=(address, 50000)
    )


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    with make_client(tmp_path) as c:
        yield c


def bot_game(client: TestClient, bot: str, seats: int = 2) -> Any:
    return client.post("/api/games", json={"seats": [{"kind": "bot", "bot": bot}] * seats})


@pytest.mark.parametrize("bot", ["mcts:600s", "mcts:2.5s", "mcts:20001", "mcts:100000,10s"])
def test_a_bot_over_the_budget_cap_is_refused_naming_the_cap(client: TestClient, bot: str) -> None:
    response = bot_game(client, bot)
    assert response.status_code == 400
    body = response.json()
    assert body["error"] == "bot_not_allowed"
    assert "2 s" in body["message"] and "20000 iterations" in body["message"]
    assert bot in body["message"] and "seat 1" in body["message"]
    assert client.get("/api/games").json()["games"] == []


@pytest.mark.parametrize("bot", ["mcts:2s", "mcts:250ms", "mcts:20000", "mcts:1000000,1s", "mcts:500,9s"])
def test_a_bot_within_the_cap_is_accepted(client: TestClient, bot: str) -> None:
    assert bot_game(client, bot).status_code == 201


def test_every_difficulty_level_within_the_cap_is_offered_and_accepted(client: TestClient) -> None:
    options = client.get("/api/options").json()
    assert options["limits"]["max_bot_time"] == 2.0 and options["limits"]["max_bot_iterations"] == 20000
    offered = {b["name"] for b in options["bots"]}
    assert {"easy", "medium", "hard", "expert"} <= offered
    for level in ("easy", "medium", "hard", "expert"):
        assert bot_game(client, level).status_code == 201, level


def test_a_lower_cap_refuses_and_hides_the_levels_over_it(tmp_path: Path) -> None:
    with make_client(tmp_path, Settings(bot_delay=0.0, max_bot_time=0.5)) as client:
        offered = {b["name"] for b in client.get("/api/options").json()["bots"]}
        assert "hard" in offered and "expert" not in offered  # hard thinks 0.25 s, expert 1 s
        response = bot_game(client, "expert")
        assert response.status_code == 400 and response.json()["error"] == "bot_not_allowed"
        assert "0.5 s" in response.json()["message"]
        assert bot_game(client, "hard").status_code == 201
