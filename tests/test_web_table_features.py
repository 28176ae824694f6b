"""At the table: rematch, resign, cancel, private tables, the spectator count and the chat, through
the HTTP API and the WebSocket."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from coloretto.web import Settings
from tests.test_web import (
    FAST,
    TestClient,
    auth,
    choose,
    create,
    is_state,
    live_game,
    make_client,
    play_http,
    play_seats,
    receive_until,
    state,
    wait_until,
)
from tests.test_web_accounts import CHEAP_HASH, browser, logged_in, post


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    with make_client(tmp_path, Settings(**{**FAST.__dict__, "password_cost": CHEAP_HASH})) as c:
        yield c


def join(client: TestClient, game_id: str, name: str, **extra: Any) -> Any:
    return client.post(f"/api/games/{game_id}/join", json={"name": name, **extra})


def play_sessions(players: dict[int, TestClient], game_id: str) -> dict:
    """Play each logged-in person's seat (no token: their session) to the end through the HTTP API."""
    any_client = next(iter(players.values()))
    current = state(any_client, game_id)
    while current["game"]["status"] != "finished":
        seat = current["to_move"]
        if seat in players:
            mine = players[seat].get(f"/api/games/{game_id}").json()
            assert mine["you"] == seat
            response = post(
                players[seat],
                f"/api/games/{game_id}/actions",
                {"action": choose(mine["legal"], mine), "move": mine["move_number"]},
            )
            assert response.status_code == 200, response.text
            current = response.json()
        else:
            number = current["move_number"]
            current = wait_until(any_client, game_id, None, lambda s, n=number: s["move_number"] > n)
    return current


def finished_pair(client: TestClient, **rules: Any) -> tuple[str, str, str]:
    """A finished game of two guests, Ann and Bob: its id and their tokens."""
    created = create(client, ["human", "human"], rules or None)
    game_id, ann = created["game"]["id"], created["token"]
    bob = join(client, game_id, "Bob").json()["token"]
    play_seats(client, game_id, {0: ann, 1: bob})
    return game_id, ann, bob


# ------------------------------------------------------------------ rematch


def test_a_rematch_keeps_each_persons_seat_for_them(client: TestClient) -> None:
    game_id, ann, bob = finished_pair(client, table="violet")
    old = state(client, game_id)
    with client.websocket_connect(f"/api/games/{game_id}/ws") as watcher:
        receive_until(watcher, is_state)
        asked = client.post(f"/api/games/{game_id}/rematch", headers=auth(ann))
        assert asked.status_code == 200, asked.text
        grant = asked.json()
        told = receive_until(watcher, lambda m: m["type"] == "rematch")
        assert told == {"type": "rematch", "game": grant["game"]["id"]}
    new = grant["game"]
    new_id = new["id"]
    assert new_id != game_id and grant["seat"] == 0 and grant["token"]
    assert new["status"] == "open" and new["rematch_of"] == game_id and new["creator_seat"] == 0
    assert new["rules"] == old["game"]["rules"] and new["name"] == old["game"]["name"]
    assert [s["name"] for s in new["seats"]] == ["Ann", None]
    assert new["seats"][1]["reserved"] and new["seats"][1]["free"]
    assert state(client, game_id)["game"]["rematch"] == new_id  # a reload of the old table knows it
    # asked again, by anyone of the game, it is the same game
    again = client.post(f"/api/games/{game_id}/rematch", headers=auth(ann)).json()
    assert again["game"]["id"] == new_id and again["seat"] == 0 and again["token"] is None
    # Bob's seat is his: nobody else takes it, not even with a made-up proof
    stranger = join(client, new_id, "Cy")
    assert stranger.status_code == 409 and stranger.json()["error"] == "reserved"
    assert join(client, new_id, "Cy", seat=1).json()["error"] == "reserved"
    forged = join(client, new_id, "Cy", rematch_token="made-up")
    assert forged.status_code == 403 and forged.json()["error"] == "bad_token"
    taken = join(client, new_id, "Bob", rematch_token=bob)
    assert taken.status_code == 200 and taken.json()["seat"] == 1
    assert taken.json()["game"]["status"] == "playing"
    # the new deal is another one, and Ann's old token is no seat of it
    assert live_game(client, new_id).seed != live_game(client, game_id).seed
    assert client.get(f"/api/games/{new_id}", headers=auth(ann)).json()["error"] == "bad_token"
    assert state(client, new_id, grant["token"])["you"] == 0


@pytest.mark.slow  # plays whole games: seconds
def test_the_second_player_asking_for_the_rematch_sits_down_at_once(client: TestClient) -> None:
    game_id, ann, bob = finished_pair(client)
    new_id = client.post(f"/api/games/{game_id}/rematch", headers=auth(ann)).json()["game"]["id"]
    bobs = client.post(f"/api/games/{game_id}/rematch", headers=auth(bob)).json()
    assert bobs["game"]["id"] == new_id and bobs["seat"] == 1 and bobs["token"]
    assert bobs["game"]["status"] == "playing"
    assert state(client, new_id, bobs["token"])["you"] == 1


def test_a_rematch_against_bots_starts_at_once_with_the_same_bots_and_flags(client: TestClient) -> None:
    body = {
        "seats": [{"kind": "human"}, {"kind": "bot", "bot": "random"}],
        "creator_name": "Ann",
        "clock": {"move_seconds": 600},
        "private": True,
    }
    created = client.post("/api/games", json=body).json()
    game_id, token = created["game"]["id"], created["token"]
    play_http(client, game_id, token)
    grant = client.post(f"/api/games/{game_id}/rematch", headers=auth(token)).json()
    new = grant["game"]
    assert (
        new["status"] == "playing"
        and new["private"]
        and new["clock"] == {"move_seconds": 600, "game_seconds": None}
    )
    assert (
        new["seats"][1]["kind"] == "bot"
        and new["seats"][1]["bot"] == "random"
        and not new["seats"][1]["free"]
    )


def test_who_may_ask_for_a_rematch_and_when(client: TestClient) -> None:
    created = create(client, ["human", "human"])
    game_id, ann = created["game"]["id"], created["token"]
    not_over = client.post(f"/api/games/{game_id}/rematch", headers=auth(ann))
    assert not_over.status_code == 409 and not_over.json()["error"] == "not_started"
    bob = join(client, game_id, "Bob").json()["token"]
    playing = client.post(f"/api/games/{game_id}/rematch", headers=auth(bob))
    assert playing.status_code == 409 and playing.json()["error"] == "in_progress"
    play_seats(client, game_id, {0: ann, 1: bob})
    spectator = client.post(f"/api/games/{game_id}/rematch")
    assert spectator.status_code == 403 and spectator.json()["error"] == "not_seated"


@pytest.mark.slow  # plays whole games: seconds
def test_logged_in_players_get_their_rematch_seats_by_logging_in(client: TestClient) -> None:
    ann = logged_in(client, "Ann")
    created = post(ann, "/api/games", {"seats": [{"kind": "human"}] * 2, "creator_name": "Ann"}).json()
    game_id = created["game"]["id"]
    bob = logged_in(browser(client), "Bob")
    assert post(bob, f"/api/games/{game_id}/join", {}).status_code == 200
    play_sessions({0: ann, 1: bob}, game_id)
    asked = post(bob, f"/api/games/{game_id}/rematch")  # Bob's session, no token
    assert asked.status_code == 200, asked.text
    new = asked.json()["game"]
    assert asked.json()["seat"] == 1 and [s["name"] for s in new["seats"]] == [None, "Bob"]
    assert new["seats"][0]["reserved"]
    guest = post(browser(client, "127.0.0.50"), f"/api/games/{new['id']}/join", {"name": "Eve"})
    assert guest.status_code == 409 and guest.json()["error"] == "reserved"
    # her old seat token, without her session: the seat is her account's, she logs in to take it
    by_token = browser(client, "127.0.0.51").post(
        f"/api/games/{game_id}/rematch", headers=auth(created["token"])
    )
    assert by_token.status_code == 403 and by_token.json()["error"] == "login_required"
    sits = post(ann, f"/api/games/{new['id']}/join", {})
    assert sits.status_code == 200 and sits.json()["seat"] == 0
    assert sits.json()["game"]["status"] == "playing"


# ------------------------------------------------------------------- resign


def test_a_resigned_seat_is_the_bots_to_the_end(client: TestClient) -> None:
    created = create(client, ["human", "human"])
    game_id, ann = created["game"]["id"], created["token"]
    bob = join(client, game_id, "Bob").json()["token"]
    with client.websocket_connect(f"/api/games/{game_id}/ws") as ws:
        receive_until(ws, is_state)
        ws.send_json({"type": "hello", "token": bob})
        receive_until(ws, lambda m: m["type"] == "welcome")
        ws.send_json({"type": "resign"})
        told = receive_until(ws, lambda m: is_state(m) and m["state"]["game"]["seats"][1]["resigned"])
        assert told["state"]["game"]["seats"][1]["away"]
        ws.send_json({"type": "reclaim"})
        refused = receive_until(ws, lambda m: m["type"] == "error")
        assert refused["error"] == "resigned" and "a bot plays your seat" in refused["message"]
    # the bot plays Bob's seat; he cannot act, take it back, or get it back by coming back
    assert client.post(f"/api/games/{game_id}/reclaim", headers=auth(bob)).json()["error"] == "resigned"
    final = play_http(client, game_id, ann)
    assert final["game"]["status"] == "finished"
    assert final["game"]["seats"][1]["resigned"]
    assert any(entry["seat"] == 1 for entry in final["log"])
    acted = client.post(f"/api/games/{game_id}/actions", json={"action": "d"}, headers=auth(bob))
    assert acted.status_code == 409


def test_resigning_is_for_a_player_of_a_game_in_play(client: TestClient) -> None:
    created = create(client, ["human", "human"])
    game_id, ann = created["game"]["id"], created["token"]
    early = client.post(f"/api/games/{game_id}/resign", headers=auth(ann))
    assert early.status_code == 409 and early.json()["error"] == "not_started"
    bob = join(client, game_id, "Bob").json()["token"]
    assert client.post(f"/api/games/{game_id}/resign").json()["error"] == "not_seated"
    resigned = client.post(f"/api/games/{game_id}/resign", headers=auth(ann))
    assert resigned.status_code == 200 and resigned.json()["game"]["seats"][0]["resigned"]
    assert client.post(f"/api/games/{game_id}/resign", headers=auth(ann)).status_code == 200  # once is enough
    mine = state(client, game_id, ann)
    assert mine["legal"] == []
    refused = client.post(f"/api/games/{game_id}/actions", json={"action": "d"}, headers=auth(ann))
    assert refused.status_code == 409 and refused.json()["error"] in ("resigned", "not_your_turn")
    play_seats(client, game_id, {1: bob})
    over = client.post(f"/api/games/{game_id}/resign", headers=auth(bob))
    assert over.status_code == 409 and over.json()["error"] == "game_over"


# ------------------------------------------------------------------- cancel


def test_the_creator_cancels_a_game_waiting_for_players(client: TestClient) -> None:
    created = create(client, ["human", "human", "human"])
    game_id, ann = created["game"]["id"], created["token"]
    bob = join(client, game_id, "Bob").json()["token"]
    not_hers = client.post(f"/api/games/{game_id}/cancel", headers=auth(bob))
    assert not_hers.status_code == 403 and not_hers.json()["error"] == "not_creator"
    assert client.post(f"/api/games/{game_id}/cancel").json()["error"] == "not_seated"
    with client.websocket_connect(f"/api/games/{game_id}/ws") as ws:
        receive_until(ws, is_state)
        cancelled = client.post(f"/api/games/{game_id}/cancel", headers=auth(ann))
        assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled"
        told = receive_until(ws, lambda m: is_state(m) and m["state"]["game"]["status"] == "cancelled")
        assert told["state"]["to_move"] is None
    assert client.get("/api/games?status=open").json()["games"] == []
    assert [g["id"] for g in client.get("/api/games?status=cancelled").json()["games"]] == [game_id]
    refused = join(client, game_id, "Cy")
    assert refused.status_code == 409 and refused.json()["error"] == "cancelled"
    assert "cancelled by the player who created it" in refused.json()["message"]
    assert client.get(f"/api/games/{game_id}/record").json()["error"] == "cancelled"
    assert client.post(f"/api/games/{game_id}/cancel", headers=auth(ann)).status_code == 200  # already


def test_a_game_that_began_cannot_be_cancelled(client: TestClient) -> None:
    created = create(client, ["human", "random"])
    response = client.post(f"/api/games/{created['game']['id']}/cancel", headers=auth(created["token"]))
    assert response.status_code == 409 and response.json()["error"] == "not_open"


# ------------------------------------------------------------------ private


def test_a_private_table_is_never_listed_and_reached_by_its_link(client: TestClient) -> None:
    body = {"seats": [{"kind": "human"}, {"kind": "human"}], "creator_name": "Ann", "private": True}
    created = client.post("/api/games", json=body).json()
    game_id = created["game"]["id"]
    assert created["game"]["private"]
    assert all(
        game_id not in json.dumps(client.get(f"/api/games?status={s}").json()) for s in ("open", "playing")
    )
    assert client.get("/api/games").json()["games"] == []
    assert state(client, game_id)["game"]["private"]
    assert join(client, game_id, "Bob").status_code == 200
    assert client.get("/api/games").json()["games"] == []


# --------------------------------------------------------------- spectators


def test_the_table_says_how_many_watch(client: TestClient) -> None:
    created = create(client, ["human", "human"])
    game_id, ann = created["game"]["id"], created["token"]
    url = f"/api/games/{game_id}/ws"
    with client.websocket_connect(url) as seated, client.websocket_connect(url) as first:
        seated.send_json({"type": "hello", "token": ann})
        receive_until(seated, lambda m: m["type"] == "welcome")
        receive_until(seated, lambda m: is_state(m) and m["state"]["spectators"] == 1)
        with client.websocket_connect(url) as second:
            receive_until(second, lambda m: is_state(m) and m["state"]["spectators"] == 2)
            receive_until(seated, lambda m: is_state(m) and m["state"]["spectators"] == 2)
            assert state(client, game_id)["spectators"] == 2
        receive_until(first, lambda m: is_state(m) and m["state"]["spectators"] == 1)
    assert state(client, game_id)["spectators"] == 0


# -------------------------------------------------------------------- chat


def chat_messages(ws: Any, history: bool = False) -> list[dict]:
    return receive_until(ws, lambda m: m["type"] == "chat" and m["history"] is history)["messages"]


def error_of(ws: Any, message: dict) -> dict:
    ws.send_json(message)
    return receive_until(ws, lambda m: m["type"] == "error")


def test_players_chat_and_everyone_watching_reads_it_as_text(client: TestClient) -> None:
    created = create(client, ["human", "human"])
    game_id, ann = created["game"]["id"], created["token"]
    url = f"/api/games/{game_id}/ws"
    markup = '<script>alert("hi")</script> &amp; <b>bold</b> 👨‍👩‍👧'
    with client.websocket_connect(url) as player, client.websocket_connect(url) as spectator:
        receive_until(spectator, is_state)
        refused = error_of(spectator, {"type": "chat", "text": "hello"})
        assert refused["error"] == "login_required" and "log in" in refused["message"]
        player.send_json({"type": "hello", "token": ann})
        receive_until(player, lambda m: m["type"] == "welcome")
        player.send_json({"type": "chat", "text": f"  {markup}\n second   line "})
        for ws in (player, spectator):
            (entry,) = chat_messages(ws)
            assert entry["text"] == f"{markup} second line"  # one line, as typed, never escaped
            assert (entry["number"], entry["seat"], entry["name"], entry["user"]) == (1, 0, "Ann", None)
    response = client.get(f"/api/games/{game_id}/chat")
    assert response.headers["content-type"] == "application/json"
    assert response.json()["messages"][0]["text"] == f"{markup} second line"
    assert "<script>" in response.text  # JSON text: the browser's job is to show it as text
    with client.websocket_connect(url) as late:  # a reload gets the history
        receive_until(late, is_state)
        (old,) = chat_messages(late, history=True)
        assert old["text"] == f"{markup} second line"


@pytest.mark.parametrize(
    ("text", "code", "part"),
    [
        ("", "bad_chat", "cannot be empty"),
        (" \n\t ", "bad_chat", "cannot be empty"),
        ("x" * 301, "bad_chat", "at most 300 characters, not 301"),
        ("evil \u202e text", "bad_chat", "U+202E at character 6"),
        ("bell \u0007", "bad_chat", "U+0007"),
    ],
)
def test_a_chat_message_is_one_printable_line_of_300_characters_at_most(
    client: TestClient, text: str, code: str, part: str
) -> None:
    created = create(client, ["human", "human"])
    game_id, ann = created["game"]["id"], created["token"]
    with client.websocket_connect(f"/api/games/{game_id}/ws") as ws:
        ws.send_json({"type": "hello", "token": ann})
        receive_until(ws, lambda m: m["type"] == "welcome")
        refused = error_of(ws, {"type": "chat", "text": text})
        assert refused["error"] == code and part in refused["message"]
        ws.send_json({"type": "chat", "text": "x" * 300})  # the longest allowed
        assert chat_messages(ws)[0]["text"] == "x" * 300
    assert [m["number"] for m in client.get(f"/api/games/{game_id}/chat").json()["messages"]] == [1]


def test_chat_is_limited_per_seat_and_the_history_to_the_last_messages(tmp_path: Path) -> None:
    settings = Settings(**{**FAST.__dict__, "chat_messages": 3, "chat_seconds": 60.0, "chat_history": 2})
    with make_client(tmp_path, settings) as client:
        created = create(client, ["human", "human"])
        game_id, ann = created["game"]["id"], created["token"]
        url = f"/api/games/{game_id}/ws"
        with client.websocket_connect(url) as first, client.websocket_connect(url) as second:
            for ws in (first, second):
                ws.send_json({"type": "hello", "token": ann})
                receive_until(ws, lambda m: m["type"] == "welcome")
            for i in range(3):
                first.send_json({"type": "chat", "text": f"message {i + 1}"})
                assert chat_messages(first)[0]["text"] == f"message {i + 1}"
            refused = error_of(first, {"type": "chat", "text": "one too many"})
            assert (
                refused["error"] == "rate_limited"
                and "at most 3 chat messages in 60 seconds" in refused["message"]
            )
            # the seat's limit holds on its other connection too
            assert error_of(second, {"type": "chat", "text": "from my phone"})["error"] == "rate_limited"
        with client.websocket_connect(url) as late:
            assert [m["text"] for m in chat_messages(late, history=True)] == ["message 2", "message 3"]
        after = client.get(f"/api/games/{game_id}/chat", params={"after": 1}).json()["messages"]
        assert [m["number"] for m in after] == [2, 3]
        assert client.get("/api/games/nothing/chat").json()["error"] == "not_found"


def test_logged_in_spectators_chat_under_their_account(client: TestClient) -> None:
    created = create(client, ["human", "human"])
    game_id = created["game"]["id"]
    carol = logged_in(browser(client), "Carol")
    with carol.websocket_connect(f"/api/games/{game_id}/ws") as ws:
        receive_until(ws, is_state)
        ws.send_json({"type": "chat", "text": "good luck"})
        (entry,) = chat_messages(ws)
        assert (entry["seat"], entry["name"], entry["user"]) == (None, "Carol", "Carol")
