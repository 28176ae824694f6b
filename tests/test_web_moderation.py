"""Moderation through the HTTP API and the WebSocket: the admin routes and their refusals, a ban's
effects (log-in, chat, seat, sessions, the games in play), a hidden message, a game a moderator
ended, players' reports and blocks; and the same actions made by ``coloretto admin`` reaching the
running server."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from starlette.websockets import WebSocketDisconnect

from coloretto.cli import main
from coloretto.web import Settings
from coloretto.web.common.errors import ServiceError
from coloretto.web.common.names import User
from coloretto.web.storage import accounts as accounts_store
from tests.test_web import auth, receive_until
from tests.test_web_accounts import (
    CHEAP_HASH,
    TestClient,
    browser,
    csrf,
    logged_in,
    login,
    make_client,
    post,
    service_of,
)

SETTINGS = Settings(
    bot_delay=0.0,
    messages_per_second=1000.0,
    message_burst=1000,
    requests_per_minute=0,
    password_cost=CHEAP_HASH,
    chat_messages=100,
    moderation_poll=0.2,
)
#: a hang guard only: what a test waits for comes as soon as it can
DEADLINE = 60.0


def database(tmp_path: Path) -> Path:
    """The database file ``coloretto admin --data-dir tmp_path`` opens."""
    return tmp_path / "coloretto.sqlite3"


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    with make_client(database(tmp_path), SETTINGS) as c:
        yield c


def admin_cli(tmp_path: Path, *args: str) -> int:
    return main(["admin", *args, "--data-dir", str(tmp_path)])


def admin(client: TestClient, tmp_path: Path, name: str = "Root") -> TestClient:
    """A browser logged in as a new administrator (an account promoted from the command line)."""
    root = logged_in(browser(client, "127.0.0.9"), name)
    assert admin_cli(tmp_path, "promote", name) == 0
    assert root.get("/api/account").json()["user"]["admin"] is True
    return root


def eventually(check: Callable[[], Any], what: str) -> Any:
    deadline = time.monotonic() + DEADLINE
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.02)
    raise AssertionError(f"{what} did not happen within {DEADLINE:g} s")


def game_with_bot(client: TestClient, **extra: Any) -> dict[str, Any]:
    """A game the client's account plays against a random bot (it starts at once)."""
    response = post(
        client,
        "/api/games",
        {
            "seats": [{"kind": "human"}, {"kind": "bot", "bot": extra.pop("bot", "random")}],
            "creator_name": "x",
            **extra,
        },
    )
    assert response.status_code == 201, response.text
    return dict(response.json())


def chat_game(client: TestClient) -> tuple[str, str, str]:
    """A two-person game: the client's account (seat 1) and the guest Gus (seat 2): id and tokens."""
    created = post(
        client, "/api/games", {"seats": [{"kind": "human"}, {"kind": "human"}], "creator_name": "x"}
    )
    assert created.status_code == 201, created.text
    game_id = created.json()["game"]["id"]
    gus = client.post(f"/api/games/{game_id}/join", json={"name": "Gus"}, headers={"Cookie": ""})
    assert gus.status_code == 200, gus.text
    return game_id, created.json()["token"], gus.json()["token"]


def say(ws: Any, text: str) -> dict[str, Any]:
    """Send a chat message and wait for it to come back: the stored message."""
    ws.send_json({"type": "chat", "text": text})
    answer = receive_until(ws, lambda m: m["type"] in ("chat", "error") and not m.get("history"))
    assert answer["type"] == "chat", answer
    return dict(answer["messages"][0])


ADMIN_ROUTES: list[tuple[str, str, dict[str, Any] | None]] = [
    ("GET", "/api/admin/reports", None),
    ("GET", "/api/admin/audit", None),
    ("POST", "/api/admin/reports/1/resolve", {"reason": ""}),
    ("POST", "/api/admin/games/abc/messages/1/hide", {"reason": "spam"}),
    ("POST", "/api/admin/games/abc/messages/1/show", {"reason": ""}),
    ("POST", "/api/admin/players/Bob/ban", {"reason": "spam"}),
    ("POST", "/api/admin/players/Bob/unban", {"reason": ""}),
    ("POST", "/api/admin/games/abc/end", {"reason": "cheating"}),
]


def call(client: TestClient, method: str, path: str, body: dict[str, Any] | None, **kwargs: Any) -> Any:
    if method == "GET":
        return client.get(path, **kwargs)
    return client.post(path, json=body, **kwargs)


# ------------------------------------------------------------------ refusals


def test_every_admin_route_refuses_a_guest_a_player_and_a_request_without_the_token(
    client: TestClient, tmp_path: Path
) -> None:
    player = logged_in(browser(client, "127.0.0.5"), "Bob")
    root = admin(client, tmp_path)
    for method, path, body in ADMIN_ROUTES:
        guest = call(client, method, path, body, headers=csrf(client))
        assert guest.status_code == 401 and guest.json()["error"] == "login_required", (path, guest.text)
        refused = call(player, method, path, body, headers=csrf(player))
        assert refused.status_code == 403 and refused.json()["error"] == "forbidden", (path, refused.text)
        if method == "POST":  # an administrator's browser, forged by another site: no token
            forged = root.post(path, json=body)
            assert forged.status_code == 403 and forged.json()["error"] == "csrf", (path, forged.text)
    # the administrator is let through (and told what is wrong with the request)
    assert root.get("/api/admin/reports").status_code == 200
    unknown = post(root, "/api/admin/players/Nobody/ban", {"reason": "spam"})
    assert unknown.status_code == 404 and "Nobody" in unknown.json()["message"]
    no_reason = post(root, "/api/admin/players/Bob/ban", {"reason": "   "})
    assert no_reason.status_code == 400 and no_reason.json()["error"] == "bad_reason"
    too_long = post(root, "/api/admin/games/abc/end", {"reason": "x" * 501})
    assert too_long.status_code == 400 and "500" in too_long.json()["message"]
    bad_number = post(root, "/api/admin/games/abc/messages/0/hide", {"reason": "spam"})
    assert bad_number.status_code == 422
    not_json = root.post("/api/admin/games/abc/end", content=b"{", headers=csrf(root))
    assert not_json.status_code == 422
    # nothing was done: the audit log holds the promotion alone
    assert [e["action"] for e in root.get("/api/admin/audit").json()["entries"]] == ["promote"]


def test_the_admin_page_is_for_administrators_in_every_language(client: TestClient, tmp_path: Path) -> None:
    player = logged_in(browser(client, "127.0.0.5"), "Bob")
    root = admin(client, tmp_path)
    texts = {"en": "administrators", "nl": "beheerders", "fr": "administrateurs", "de": "Administratoren"}
    for language, word in texts.items():
        guest = client.get("/admin", headers={"Accept-Language": language})
        assert guest.status_code == 401 and f'lang="{language}"' in guest.text and word in guest.text
        refused = player.get("/admin", headers={"Accept-Language": language})
        assert refused.status_code == 403 and word in refused.text
        assert 'id="reports"' not in refused.text
    page = root.get("/admin")
    assert page.status_code == 200 and 'id="reports"' in page.text and "/static/js/admin.js" in page.text
    assert "<script>" not in page.text and "onclick" not in page.text


# ------------------------------------------------------------------ bans


def test_a_ban_ends_the_sessions_refuses_log_in_chat_and_seat_and_a_bot_takes_the_games_in_play(
    client: TestClient, tmp_path: Path
) -> None:
    bob = logged_in(browser(client, "127.0.0.5"), "Bob")
    other_browser = browser(client, "127.0.0.6")
    assert login(other_browser, "Bob").status_code == 200
    game = game_with_bot(bob, bot="random")
    game_id, token = game["game"]["id"], game["token"]
    root = admin(client, tmp_path)
    with bob.websocket_connect(f"/api/games/{game_id}/ws") as ws:
        ws.send_json({"type": "hello", "token": token})
        receive_until(ws, lambda m: m["type"] == "welcome")
        banned = post(root, "/api/admin/players/bob/ban", {"reason": "insults in the chat"})
        assert banned.status_code == 200 and banned.json()["message"] == "Bob is banned."
        told = receive_until(ws, lambda m: m["type"] == "error")
        assert told["error"] == "banned"
        with pytest.raises(WebSocketDisconnect) as closed:
            receive_until(ws, lambda m: False)
        assert closed.value.code == 4401
    # every session ended at once: both browsers are guests
    assert bob.get("/api/account").json()["user"] is None
    assert other_browser.get("/api/account").json()["user"] is None
    refused = login(bob, "Bob")
    assert refused.status_code == 403 and refused.json()["error"] == "banned"
    assert "insults in the chat" in refused.json()["message"]
    assert login(bob, "Bob", "a wrong password").json()["error"] == "bad_login"  # nothing said to a guesser
    # a bot plays the seat to the end (the game finishes), and the seat token no longer acts or chats
    finished = eventually(
        lambda: (s := client.get(f"/api/games/{game_id}").json())["game"]["status"] == "finished" and s,
        "the bot finishing the banned player's game",
    )
    assert finished["game"]["seats"][0]["resigned"] and finished["game"]["seats"][0]["away"]
    with client.websocket_connect(f"/api/games/{game_id}/ws") as ws:
        ws.send_json({"type": "hello", "token": token})
        ws.send_json({"type": "chat", "text": "I am back"})
        refused_chat = receive_until(ws, lambda m: m["type"] == "error")
        assert refused_chat["error"] == "banned"
    # a seat is refused to the account too (its sessions are gone: this is the server's second guard)
    site = service_of(client)
    stored = client.portal.call(site.games.read, partial(accounts_store.user_by_key, name_key="bob"))  # type: ignore[union-attr]
    cy = logged_in(browser(client, "127.0.0.7"), "Cy")
    waiting = post(cy, "/api/games", {"seats": [{"kind": "human"}, {"kind": "human"}], "creator_name": "x"})
    with pytest.raises(ServiceError) as sat:
        client.portal.call(  # type: ignore[union-attr]
            site.seats.join,
            waiting.json()["game"]["id"],
            None,
            None,
            User(stored.id, "Bob", stored.created_at),
        )
    assert sat.value.code == "banned"
    # the audit log says who banned whom, why
    entry = root.get("/api/admin/audit").json()["entries"][0]
    assert (entry["actor"], entry["via"], entry["action"], entry["target"]) == ("Root", "page", "ban", "Bob")
    assert entry["reason"] == "insults in the chat"
    # unbanned, Bob logs in again; the seat the bot took stays the bot's
    assert post(root, "/api/admin/players/Bob/unban", {"reason": "served"}).status_code == 200
    assert login(bob, "Bob").status_code == 200
    again = post(root, "/api/admin/players/Bob/unban", {"reason": ""})
    assert again.status_code == 409 and again.json()["error"] == "not_banned"
    admin_ban = post(root, "/api/admin/players/Root/ban", {"reason": "oops"})
    assert admin_ban.status_code == 409 and admin_ban.json()["error"] == "is_admin"


# ------------------------------------------------------------------ chat and games


def test_a_hidden_message_disappears_for_everyone_at_once_and_after_a_reload(
    client: TestClient, tmp_path: Path
) -> None:
    ann = logged_in(browser(client, "127.0.0.5"), "Ann")
    game_id, ann_token, gus_token = chat_game(ann)
    root = admin(client, tmp_path)
    with (
        ann.websocket_connect(f"/api/games/{game_id}/ws") as speaker,
        client.websocket_connect(f"/api/games/{game_id}/ws") as watcher,
    ):
        speaker.send_json({"type": "hello", "token": ann_token})
        watcher.send_json({"type": "hello", "token": gus_token})
        kept = say(speaker, "good luck")
        bad = say(speaker, "something rude")
        receive_until(watcher, lambda m: m["type"] == "chat" and m["messages"][-1]["number"] == bad["number"])
        hidden = post(root, f"/api/admin/games/{game_id}/messages/{bad['number']}/hide", {"reason": "rude"})
        assert hidden.status_code == 200, hidden.text
        for ws in (speaker, watcher):
            taken = receive_until(ws, lambda m: m["type"] == "chat_removed")
            assert taken["numbers"] == [bad["number"]]
    texts = [m["text"] for m in client.get(f"/api/games/{game_id}/chat").json()["messages"]]
    assert texts == ["good luck"]
    with client.websocket_connect(f"/api/games/{game_id}/ws") as reloaded:
        history = receive_until(reloaded, lambda m: m["type"] == "chat")
        assert [m["number"] for m in history["messages"]] == [kept["number"]]
    again = post(root, f"/api/admin/games/{game_id}/messages/{bad['number']}/hide", {"reason": "rude"})
    assert again.status_code == 409 and again.json()["error"] == "already_hidden"
    missing = post(root, f"/api/admin/games/{game_id}/messages/99/hide", {"reason": "rude"})
    assert missing.status_code == 404 and missing.json()["error"] == "not_found"
    # shown again: back for everyone
    with client.websocket_connect(f"/api/games/{game_id}/ws") as watcher:
        receive_until(watcher, lambda m: m["type"] == "chat")
        shown = post(
            root, f"/api/admin/games/{game_id}/messages/{bad['number']}/show", {"reason": "a mistake"}
        )
        assert shown.status_code == 200, shown.text
        back = receive_until(watcher, lambda m: m["type"] == "chat" and m["history"])
        assert back["messages"][0]["text"] == "something rude"
    texts = [m["text"] for m in client.get(f"/api/games/{game_id}/chat").json()["messages"]]
    assert texts == ["good luck", "something rude"]
    actions = [(e["action"], e["target"]) for e in root.get("/api/admin/audit").json()["entries"][:2]]
    target = f"game {game_id} message {bad['number']}"
    assert actions == [("show-message", target), ("hide-message", target)]


def test_an_ended_game_stops_for_every_client_with_its_reason_and_rates_nobody(
    client: TestClient, tmp_path: Path
) -> None:
    bob = logged_in(browser(client, "127.0.0.5"), "Bob")
    game_id, bob_token, gus_token = chat_game(bob)
    rated = game_with_bot(bob, bot="easy", rated=True)
    root = admin(client, tmp_path)
    with client.websocket_connect(f"/api/games/{game_id}/ws") as watcher:
        watcher.send_json({"type": "hello", "token": gus_token})
        receive_until(watcher, lambda m: m["type"] == "state" and m["state"]["you"] == 1)
        ended = post(root, f"/api/admin/games/{game_id}/end", {"reason": "  cheating with   two accounts "})
        assert ended.status_code == 200, ended.text
        stopped = receive_until(
            watcher, lambda m: m["type"] == "state" and m["state"]["game"]["status"] == "stopped"
        )
        assert stopped["state"]["game"]["stop_reason"] == "cheating with two accounts"
        assert stopped["state"]["legal"] == [] and stopped["state"]["to_move"] is None
        watcher.send_json({"type": "act", "action": "d"})
        refused = receive_until(watcher, lambda m: m["type"] == "error")
        assert refused["error"] == "stopped" and "cheating with two accounts" in refused["message"]
    move = post(bob, f"/api/games/{game_id}/actions", {"action": "d"}, headers=auth(bob_token))
    assert move.status_code == 409 and move.json()["error"] == "stopped"
    listed = client.get("/api/games?status=stopped").json()["games"]
    assert [g["id"] for g in listed] == [game_id]
    again = post(root, f"/api/admin/games/{game_id}/end", {"reason": "again"})
    assert again.status_code == 409 and again.json()["error"] == "not_in_play"
    unknown = post(root, "/api/admin/games/nosuchgame/end", {"reason": "x"})
    assert unknown.status_code == 404
    # a rated game ended moves no rating
    rated_id = rated["game"]["id"]
    assert post(root, f"/api/admin/games/{rated_id}/end", {"reason": "test"}).status_code == 200
    assert client.get(f"/api/games/{rated_id}").json()["ratings"] is None
    assert client.get("/api/players/Bob").json()["rating"]["games"] == 0


# ------------------------------------------------------------------ reports and blocks


def test_players_report_messages_and_players_and_administrators_resolve_them(
    tmp_path: Path,
) -> None:
    settings = Settings(**{**SETTINGS.__dict__, "reports_per_hour": 3})
    with make_client(database(tmp_path), settings) as client:
        ann = logged_in(browser(client, "127.0.0.5"), "Ann")
        game_id, ann_token, gus_token = chat_game(ann)
        with ann.websocket_connect(f"/api/games/{game_id}/ws") as ws:
            ws.send_json({"type": "hello", "token": ann_token})
            mine = say(ws, "hello there")
        with client.websocket_connect(f"/api/games/{game_id}/ws") as ws:
            ws.send_json({"type": "hello", "token": gus_token})
            rude = say(ws, "you play like a potato")
        body = {
            "kind": "message",
            "game": game_id,
            "number": rude["number"],
            "reason": "abuse",
            "text": "rude",
        }
        guest = post(client, "/api/reports", body)
        assert guest.status_code == 403 and guest.json()["error"] == "login_required"
        made = post(ann, "/api/reports", body)
        assert made.status_code == 201, made.text
        assert post(ann, "/api/reports", body).json()["error"] == "already_reported"
        own = post(ann, "/api/reports", {**body, "number": mine["number"]})
        assert own.status_code == 400 and own.json()["error"] == "bad_report"
        assert post(ann, "/api/reports", {**body, "reason": "rudeness"}).status_code == 422
        other = post(ann, "/api/reports", {**body, "reason": "other", "text": "  "})
        assert other.status_code == 400 and other.json()["error"] == "bad_report"
        long = post(ann, "/api/reports", {**body, "text": "x" * 501})
        assert long.status_code == 400 and "500" in long.json()["message"]
        missing = post(ann, "/api/reports", {**body, "number": 99})
        assert missing.status_code == 404
        bob = logged_in(browser(client, "127.0.0.6"), "Bob")
        assert (
            post(ann, "/api/reports", {"kind": "player", "player": "BOB", "reason": "name"}).status_code
            == 201
        )
        assert (
            post(ann, "/api/reports", {"kind": "player", "player": "Ann", "reason": "name"}).status_code
            == 400
        )
        assert (
            post(ann, "/api/reports", {"kind": "player", "player": "Zed", "reason": "name"}).status_code
            == 404
        )
        assert (
            post(bob, "/api/reports", {"kind": "player", "player": "Ann", "reason": "cheating"}).status_code
            == 201
        )
        root = admin(client, tmp_path)
        queue = root.get("/api/admin/reports").json()
        assert queue["open"] == 3 and [r["kind"] for r in queue["reports"]] == ["message", "player", "player"]
        message = queue["reports"][0]
        assert (message["reporter"], message["reported"], message["reason"], message["text"]) == (
            "Ann",
            "Gus",
            "abuse",
            "rude",
        )
        assert not message["reported_account"]  # a guest: nothing to ban, the message can be hidden
        context = [(line["text"], line["reported"]) for line in message["context"]]
        assert context == [("hello there", False), ("you play like a potato", True)]
        assert queue["reports"][1]["reported"] == "Bob" and queue["reports"][1]["reported_account"]
        done = post(root, f"/api/admin/reports/{message['id']}/resolve", {"reason": "message hidden"})
        assert done.status_code == 200, done.text
        assert post(root, f"/api/admin/reports/{message['id']}/resolve", {"reason": ""}).status_code == 409
        assert post(root, "/api/admin/reports/999/resolve", {"reason": ""}).status_code == 404
        assert root.get("/api/admin/reports").json()["open"] == 2
        resolved = root.get("/api/admin/reports?status=resolved").json()["reports"]
        assert [(r["id"], r["resolved_by"], r["resolution"]) for r in resolved] == [
            (message["id"], "Root", "message hidden")
        ]
        assert root.get("/api/admin/reports?status=maybe").status_code == 422
        # at most reports_per_hour (3) an account: the refused ones did not count
        third = post(ann, "/api/reports", {"kind": "player", "player": "Root", "reason": "spam"})
        assert third.status_code == 201
        limited = post(ann, "/api/reports", {"kind": "player", "player": "Bob", "reason": "cheating"})
        assert limited.status_code == 429 and limited.json()["error"] == "too_many_reports"


def test_a_blocked_players_chat_is_never_sent_to_the_person_who_blocked_it(client: TestClient) -> None:
    bob = logged_in(browser(client, "127.0.0.5"), "Bob")
    carol = logged_in(browser(client, "127.0.0.6"), "Carol")
    game_id, bob_token, _gus = chat_game(bob)
    guest = post(client, "/api/account/blocks", {"player": "Bob"})
    assert guest.status_code == 403 and guest.json()["error"] == "login_required"
    assert post(carol, "/api/account/blocks", {"player": "Carol"}).json()["error"] == "bad_block"
    assert post(carol, "/api/account/blocks", {"player": "Nobody"}).status_code == 404
    with (
        bob.websocket_connect(f"/api/games/{game_id}/ws") as speaker,
        carol.websocket_connect(f"/api/games/{game_id}/ws") as reader,
        client.websocket_connect(f"/api/games/{game_id}/ws") as other,
    ):
        speaker.send_json({"type": "hello", "token": bob_token})
        before = say(speaker, "first words")
        receive_until(reader, lambda m: m["type"] == "chat" and not m["history"])
        blocked = post(carol, "/api/account/blocks", {"player": "bob"})
        assert blocked.status_code == 200 and [b["name"] for b in blocked.json()["blocks"]] == ["Bob"]
        taken = receive_until(reader, lambda m: m["type"] == "chat_removed")
        assert taken["numbers"] == [before["number"]]
        say(speaker, "second words")
        receive_until(other, lambda m: m["type"] == "chat" and m["messages"][-1]["text"] == "second words")
        reader.send_json({"type": "chat", "text": "I said this"})  # a spectator logged in: her own come back
        mine = receive_until(reader, lambda m: m["type"] in ("chat", "chat_removed"))
        assert [m["text"] for m in mine["messages"]] == ["I said this"]  # not Bob's "second words"
    assert [m["text"] for m in carol.get(f"/api/games/{game_id}/chat").json()["messages"]] == ["I said this"]
    assert len(client.get(f"/api/games/{game_id}/chat").json()["messages"]) == 3
    with carol.websocket_connect(f"/api/games/{game_id}/ws") as reloaded:
        history = receive_until(reloaded, lambda m: m["type"] == "chat")
        assert [m["text"] for m in history["messages"]] == ["I said this"]
        unblocked = carol.delete("/api/account/blocks/BOB", headers=csrf(carol))
        assert unblocked.status_code == 200 and unblocked.json()["blocks"] == []
        back = receive_until(reloaded, lambda m: m["type"] == "chat" and m["history"])
        assert [m["text"] for m in back["messages"]] == ["first words", "second words"]
    assert len(carol.get(f"/api/games/{game_id}/chat").json()["messages"]) == 3
    again = carol.delete("/api/account/blocks/Bob", headers=csrf(carol))
    assert again.status_code == 409 and again.json()["error"] == "not_blocked"
    assert carol.get("/api/account/blocks").json()["blocks"] == []
