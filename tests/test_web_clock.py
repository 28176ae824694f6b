"""Players who leave: turn clocks, bots that take a seat over and give it back, abandoned games."""

from __future__ import annotations

import time
import warnings
from pathlib import Path
from typing import Any

import pytest

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

from coloretto.web import Settings, create_app
from tests.test_web import auth, state, wait_until

QUICK = Settings(bot_delay=0.0, messages_per_second=1000.0, message_burst=1000, requests_per_minute=0)


def client_with(tmp_path: Path, **changes: Any) -> TestClient:
    settings = Settings(**{**QUICK.__dict__, **changes})
    return TestClient(create_app(f"sqlite:///{tmp_path / 'clock.sqlite3'}", settings))


def create_timed(client: TestClient, clock: dict[str, Any] | None, bots: int = 1) -> tuple[str, str]:
    body: dict[str, Any] = {
        "seats": [{"kind": "human"}] + [{"kind": "bot", "bot": "random"}] * bots,
        "creator_name": "Ann",
    }
    if clock is not None:
        body["clock"] = clock
    response = client.post("/api/games", json=body)
    assert response.status_code == 201, response.text
    created = response.json()
    return created["game"]["id"], created["token"]


def my_turn(current: dict) -> bool:
    return current["to_move"] == 0 and current["game"]["status"] == "playing"


def test_a_timed_table_tells_the_deadline_and_the_banks(tmp_path: Path) -> None:
    with client_with(tmp_path) as client:
        game_id, token = create_timed(client, {"move_seconds": 30, "game_seconds": 600})
        current = wait_until(client, game_id, token, my_turn)
        clock = current["clock"]
        assert clock["move_seconds"] == 30 and clock["game_seconds"] == 600
        assert clock["deadline"] is not None and 0 < clock["seconds_left"] <= 30
        assert len(clock["banks"]) == 2 and 0 < clock["banks"][0] <= 600
        assert current["game"]["clock"] == {"move_seconds": 30, "game_seconds": 600}
        # the person's bank pays for the time the move took; the bot's turns are not clocked
        before = current["move_number"]
        time.sleep(0.2)
        client.post(
            f"/api/games/{game_id}/actions", json={"action": current["legal"][0]}, headers=auth(token)
        )
        after = wait_until(client, game_id, token, lambda s: s["move_number"] > before)
        assert after["clock"]["banks"][0] < 600


def test_an_untimed_table_has_no_clock(tmp_path: Path) -> None:
    with client_with(tmp_path) as client:
        game_id, token = create_timed(client, None)
        current = wait_until(client, game_id, token, my_turn)
        assert current["clock"] is None and current["game"]["clock"] is None


@pytest.mark.parametrize(
    ("clock", "code"),
    [
        ({"move_seconds": 2}, "bad_request"),
        ({"game_seconds": 10}, "bad_request"),
        ({"move_seconds": 30, "extra": 1}, "bad_request"),
        ({}, "bad_clock"),
        ({"move_seconds": None, "game_seconds": None}, "bad_clock"),
    ],
)
def test_a_bad_clock_is_refused_with_what_was_wrong(tmp_path: Path, clock: dict, code: str) -> None:
    with client_with(tmp_path) as client:
        body = {
            "seats": [{"kind": "human"}, {"kind": "bot", "bot": "random"}],
            "creator_name": "A",
            "clock": clock,
        }
        response = client.post("/api/games", json=body)
        assert response.status_code in (400, 422) and response.json()["error"] == code
        assert response.json()["message"]
        assert client.get("/api/games").json()["games"] == []  # nothing was stored


def test_a_person_gone_too_long_is_played_for_and_takes_the_seat_back(tmp_path: Path) -> None:
    """Nobody with the seat's token is connected: after away_after seconds on their turn a bot
    plays for them; a hello with their token gives them the seat back."""
    with client_with(tmp_path, away_after=0.3) as client:
        game_id, token = create_timed(client, {"move_seconds": 3600})
        first = wait_until(client, game_id, token, my_turn)
        taken = wait_until(client, game_id, token, lambda s: s["game"]["seats"][0]["away"])
        played = wait_until(client, game_id, token, lambda s: s["move_number"] > first["move_number"])
        assert played["game"]["seats"][0]["away"]
        with client.websocket_connect(f"/api/games/{game_id}/ws") as ws:
            ws.send_json({"type": "hello", "token": token})
            back = wait_until(client, game_id, token, lambda s: not s["game"]["seats"][0]["away"])
            assert not back["game"]["seats"][0]["away"]
            mine = wait_until(client, game_id, token, my_turn)
            assert mine["legal"] and not mine["game"]["seats"][0]["away"]
            # connected now: the seat stays theirs on their turn (the clock has an hour)
            time.sleep(0.6)
            still = state(client, game_id, token)
            assert still["move_number"] == mine["move_number"] and not still["game"]["seats"][0]["away"]
        assert taken["game"]["status"] == "playing"


def test_a_seat_whose_clock_runs_out_is_taken_over_and_reclaimed(tmp_path: Path) -> None:
    with client_with(tmp_path) as client:
        game_id, token = create_timed(client, {"move_seconds": 5})
        with client.websocket_connect(f"/api/games/{game_id}/ws") as ws:
            ws.send_json({"type": "hello", "token": token})
            first = wait_until(client, game_id, token, my_turn)
            # connected but idle: the move clock runs out, and a bot plays for the seat
            taken = wait_until(client, game_id, token, lambda s: s["game"]["seats"][0]["away"])
            assert taken["game"]["seats"][0]["online"]
            wait_until(client, game_id, token, lambda s: s["move_number"] > first["move_number"])
            ws.send_json({"type": "reclaim"})
            back = wait_until(client, game_id, token, lambda s: not s["game"]["seats"][0]["away"])
            assert back["game"]["status"] == "playing"


def test_reclaim_over_http_needs_the_seat_token(tmp_path: Path) -> None:
    with client_with(tmp_path, away_after=0.2) as client:
        game_id, token = create_timed(client, {"move_seconds": 3600})
        wait_until(client, game_id, token, lambda s: s["game"]["seats"][0]["away"])
        refused = client.post(f"/api/games/{game_id}/reclaim")
        assert refused.status_code == 403 and refused.json()["error"] == "not_seated"
        wrong = client.post(f"/api/games/{game_id}/reclaim", headers=auth("not-a-token"))
        assert wrong.status_code == 403 and wrong.json()["error"] == "bad_token"
        back = client.post(f"/api/games/{game_id}/reclaim", headers=auth(token))
        assert back.status_code == 200 and not back.json()["game"]["seats"][0]["away"]


def test_a_seat_taken_over_stays_so_after_a_restart(tmp_path: Path) -> None:
    with client_with(tmp_path, away_after=0.2) as client:
        game_id, token = create_timed(client, {"move_seconds": 3600})
        wait_until(client, game_id, token, lambda s: s["game"]["seats"][0]["away"])
    with client_with(tmp_path, away_after=0.2) as client:
        again = state(client, game_id, token)
        assert again["game"]["seats"][0]["away"] and again["game"]["clock"]["move_seconds"] == 3600


def test_an_untimed_game_nobody_moves_in_ends_abandoned(tmp_path: Path) -> None:
    with client_with(tmp_path, abandon_after=0.3, waiting_expiry=0.4) as client:
        game_id, token = create_timed(client, None)
        current = wait_until(client, game_id, token, my_turn)
        ended = wait_until(client, game_id, token, lambda s: s["game"]["status"] == "abandoned")
        assert ended["to_move"] is None and ended["legal"] == []
        refused = client.post(
            f"/api/games/{game_id}/actions", json={"action": current["legal"][0]}, headers=auth(token)
        )
        assert refused.status_code == 409 and refused.json()["error"] == "abandoned"
        listed = client.get("/api/games", params={"status": "abandoned"}).json()["games"]
        assert [g["id"] for g in listed] == [game_id]


def test_a_game_people_keep_playing_is_not_abandoned(tmp_path: Path) -> None:
    with client_with(tmp_path, abandon_after=0.5, waiting_expiry=0.4) as client:
        game_id, token = create_timed(client, None)
        for _ in range(6):
            current = wait_until(client, game_id, token, my_turn)
            client.post(
                f"/api/games/{game_id}/actions", json={"action": current["legal"][0]}, headers=auth(token)
            )
            time.sleep(0.2)
        assert state(client, game_id, token)["game"]["status"] == "playing"


def test_a_bot_that_thinks_a_while_is_shown_thinking(tmp_path: Path) -> None:
    with client_with(tmp_path, max_bot_time=1.0) as client:
        response = client.post(
            "/api/games",
            json={"seats": [{"kind": "human"}, {"kind": "bot", "bot": "mcts:0.5s"}], "creator_name": "Ann"},
        )
        created = response.json()
        game_id, token = created["game"]["id"], created["token"]
        with client.websocket_connect(f"/api/games/{game_id}/ws") as ws:
            ws.send_json({"type": "hello", "token": token})
            told: list[Any] = []
            for _ in range(400):
                message = ws.receive_json()
                if message["type"] == "thinking":
                    told.append(message["seat"])
                    if None in told:
                        break
                elif message["type"] == "state" and message["state"]["legal"]:
                    ws.send_json({"type": "act", "action": message["state"]["legal"][0]})
            assert told[0] == 1 and None in told  # seat 2 thought, then answered


def test_a_turn_that_runs_out_is_paid_from_the_bank(tmp_path: Path) -> None:
    """Taking the seat back does not refill the bank: the turn that ran out was spent."""
    with client_with(tmp_path, away_after=0.5) as client:
        game_id, token = create_timed(client, {"game_seconds": 600})
        wait_until(client, game_id, token, my_turn)
        taken = wait_until(client, game_id, token, lambda s: s["game"]["seats"][0]["away"])
        spent = 600 - taken["clock"]["banks"][0]
        assert spent >= 0.4  # it was gone half a second on its turn before the bot took over
        back = client.post(f"/api/games/{game_id}/reclaim", headers=auth(token)).json()
        assert 600 - back["clock"]["banks"][0] >= spent - 0.05
