"""An account's life cycle: the password changed (other sessions end), "log out everywhere", an
operator's one-time reset link, the account deleted (its name and chat gone from every page and
answer, its games kept with a deleted player's seat), its data exported."""

from __future__ import annotations

import dataclasses
import json
import re
import time
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from starlette.websockets import WebSocketDisconnect

from coloretto.cli import main
from coloretto.web.common.moderation import REPORT_REASONS, Actor
from coloretto.web.pages.routes import STATIC
from coloretto.web.storage import lifecycle as lifecycle_store
from coloretto.web.storage import moderation as moderation_store
from coloretto.web.storage.db import open_database, sqlite_url
from coloretto.web.table.live import hash_token, now_utc
from tests.test_web import auth, play_seats, receive_until
from tests.test_web_accounts import (
    PASSWORD,
    TestClient,
    browser,
    logged_in,
    login,
    make_client,
    post,
    signup,
)
from tests.test_web_moderation import SETTINGS, admin, chat_game, database, say
from tests.test_web_review import poll_review

NEW_PASSWORD = "a brand new passphrase"


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    with make_client(database(tmp_path), SETTINGS) as c:
        yield c


def closed_code(ws: Any) -> int:
    with pytest.raises(WebSocketDisconnect) as closed:
        receive_until(ws, lambda m: False)
    return int(closed.value.code)


# ------------------------------------------------------------------ passwords and sessions


def test_a_password_change_wants_the_old_one_and_ends_every_other_session(client: TestClient) -> None:
    here = logged_in(browser(client, "127.0.0.5"), "Ann")
    there = browser(client, "127.0.0.6")
    assert login(there, "Ann").status_code == 200
    game_id, token, _gus = chat_game(here)
    wrong = post(
        here, "/api/account/password", {"old_password": "not it at all", "new_password": NEW_PASSWORD}
    )
    assert wrong.status_code == 403 and wrong.json()["error"] == "bad_password"
    short = post(here, "/api/account/password", {"old_password": PASSWORD, "new_password": "short"})
    assert short.status_code == 400 and "8 to 128" in short.json()["message"]
    guest = post(client, "/api/account/password", {"old_password": PASSWORD, "new_password": NEW_PASSWORD})
    assert guest.status_code == 401 and guest.json()["error"] == "login_required"
    with (
        there.websocket_connect(f"/api/games/{game_id}/ws") as other,
        here.websocket_connect(f"/api/games/{game_id}/ws") as mine,
    ):
        other.send_json({"type": "hello"})
        mine.send_json({"type": "hello"})
        receive_until(other, lambda m: m["type"] == "welcome")
        receive_until(mine, lambda m: m["type"] == "welcome")
        changed = post(
            here, "/api/account/password", {"old_password": PASSWORD, "new_password": NEW_PASSWORD}
        )
        assert changed.status_code == 200, changed.text
        assert changed.json()["ended"] == 1 and "1 other session" in changed.json()["message"]
        assert receive_until(other, lambda m: m["type"] == "error")["error"] == "session_ended"
        assert closed_code(other) == 4401
        mine.send_json({"type": "ping"})  # this browser's socket stays open
        assert receive_until(mine, lambda m: m["type"] == "pong")
    assert here.get("/api/account").json()["user"]["name"] == "Ann"  # this session is kept
    assert there.get("/api/account").json()["user"] is None
    assert login(there, "Ann").json()["error"] == "bad_login"  # the old password no longer works
    assert login(there, "Ann", NEW_PASSWORD).status_code == 200
    assert token  # the seat stays hers


def test_log_out_everywhere_ends_this_session_too(client: TestClient) -> None:
    here = logged_in(browser(client, "127.0.0.5"), "Ann")
    there = browser(client, "127.0.0.6")
    assert login(there, "Ann").status_code == 200
    assert client.post("/api/account/logout-everywhere").status_code == 401
    done = post(here, "/api/account/logout-everywhere")
    assert done.status_code == 200 and done.json()["user"] is None
    assert "coloretto_session" not in here.cookies
    assert here.get("/api/account").json()["user"] is None
    assert there.get("/api/account").json()["user"] is None


def test_an_operators_reset_link_sets_the_password_once_within_the_hour(
    client: TestClient, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ann = logged_in(browser(client, "127.0.0.5"), "Ann")
    assert (
        main(
            [
                "admin",
                "reset-password",
                "ann",
                "--data-dir",
                str(tmp_path),
                "--base-url",
                "https://c.example/",
            ]
        )
        == 0
    )
    out, err = capsys.readouterr()
    link = out.strip()
    assert link.startswith("https://c.example/reset/") and "Ann" in err and "once" in err
    path = link.removeprefix("https://c.example")
    token = path.rsplit("/", 1)[1]
    page = client.get(path)
    assert page.status_code == 200 and "Ann" in page.text and 'id="reset-form"' in page.text
    forged = client.post("/api/account/reset", json={"token": token, "password": NEW_PASSWORD})
    assert forged.status_code == 403 and forged.json()["error"] == "csrf"  # one of the account's doors
    short = post(client, "/api/account/reset", {"token": token, "password": "short"})
    assert short.status_code == 400
    done = post(client, "/api/account/reset", {"token": token, "password": NEW_PASSWORD})
    assert done.status_code == 200, done.text
    assert ann.get("/api/account").json()["user"] is None  # every session ended
    assert login(ann, "Ann", NEW_PASSWORD).status_code == 200
    used = post(client, "/api/account/reset", {"token": token, "password": "yet another password"})
    assert used.status_code == 404 and used.json()["error"] == "bad_reset_link"
    gone = client.get(path)
    assert gone.status_code == 404 and 'id="reset-form"' not in gone.text
    # a newer link replaces an older one
    main(["admin", "reset-password", "Ann", "--data-dir", str(tmp_path)])
    first = capsys.readouterr().out.strip()
    assert first.startswith("/reset/")  # no --base-url: the path, on the site's address
    main(["admin", "reset-password", "Ann", "--data-dir", str(tmp_path)])
    second = capsys.readouterr().out.strip()
    replaced = post(
        client, "/api/account/reset", {"token": first.rsplit("/", 1)[1], "password": NEW_PASSWORD}
    )
    assert replaced.status_code == 404
    assert client.get(second).status_code == 200
    # a link is good for an hour: one made two hours ago is refused
    sessions = open_database(sqlite_url(tmp_path))
    with sessions() as session, session.begin():
        user = moderation_store.account(session, "Ann")
        old = now_utc() - timedelta(hours=2)
        made = (hash_token("an-old-token"), old, old + timedelta(hours=1))
        lifecycle_store.add_reset(session, Actor.command_line(), user, *made)
    expired = post(client, "/api/account/reset", {"token": "an-old-token", "password": NEW_PASSWORD})
    assert expired.status_code == 404 and expired.json()["error"] == "bad_reset_link"
    entries = admin(client, tmp_path).get("/api/admin/audit").json()["entries"]
    assert [e["action"] for e in entries].count("reset-password") == 4


# ------------------------------------------------------------------ the pages

#: what a Content-Security-Policy without 'unsafe-inline' refuses: a script written into the page,
#: an event handler attribute, a style attribute or element
INLINE = re.compile(r"<script(?![^>]*\bsrc=)[^>]*>|\son[a-z]+\s*=|\sstyle\s*=|<style\b", re.IGNORECASE)
TEMPLATES = STATIC.with_name("templates")


def test_no_template_writes_a_script_a_handler_or_a_style_into_its_page() -> None:
    templates = sorted(TEMPLATES.glob("*.html"))
    assert {"admin.html", "settings.html", "reset.html", "report_dialog.html"} <= {t.name for t in templates}
    for template in templates:
        found = INLINE.search(template.read_text("utf-8"))
        assert found is None, f"{template.name}: {found and found.group(0)!r}"


def test_the_account_page_asks_a_guest_to_log_in_and_gives_a_person_every_form(
    client: TestClient, tmp_path: Path
) -> None:
    guest = client.get("/account")
    assert guest.status_code == 200 and 'href="/login?next=/account"' in guest.text
    assert 'id="password-form"' not in guest.text
    ann = logged_in(browser(client, "127.0.0.5"), "Ann")
    page = ann.get("/account")
    for form in ("password-form", "logout-everywhere", "blocks", "export-link", "delete-form"):
        assert f'id="{form}"' in page.text, form
    assert "Your account: Ann" in page.text and "/static/js/settings.js" in page.text
    assert 'id="account-link"' in page.text and 'id="admin-link"' not in page.text  # not an admin
    assert 'id="admin-link"' in admin(client, tmp_path).get("/account").text
    dutch = ann.get("/account", headers={"Accept-Language": "nl"})
    assert 'lang="nl"' in dutch.text and "Je account: Ann" in dutch.text
    # a table's and a player's page carry the report dialog, with every reason
    for path in ("/games/abc", "/players/Ann"):
        shown = ann.get(path).text
        assert 'id="report-dialog"' in shown, path
        assert all(f'<option value="{code}">' in shown for code in REPORT_REASONS), path
    for shown in (guest.text, page.text, client.get("/reset/no-such-link").text):
        assert INLINE.search(shown) is None


# ------------------------------------------------------------------ deletion


NAME = "Zebulon"


def texts_of(client: TestClient, paths: list[str]) -> dict[str, str]:
    answers = {}
    for path in paths:
        response = client.get(path)
        assert response.status_code == 200, (path, response.text)
        answers[path] = response.text
    return answers


def mentions(answers: dict[str, str]) -> list[str]:
    return [path for path, text in answers.items() if NAME.casefold() in text.casefold()]


def until(check: Callable[[], Any]) -> Any:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.02)
    raise AssertionError("it did not happen")


@pytest.mark.slow
@pytest.mark.search
def test_a_deleted_accounts_name_and_chat_are_gone_from_every_page_and_answer(tmp_path: Path) -> None:
    settings = dataclasses.replace(SETTINGS, leaderboard_min_games=0, review_budget=30)
    with make_client(database(tmp_path), settings) as client:
        zeb = logged_in(browser(client, "127.0.0.5"), NAME)
        carol = logged_in(browser(client, "127.0.0.6"), "Carol")
        # a rated game Zebulon and Carol play to its end, with a chat message and a review
        rated = post(zeb, "/api/games", {"seats": [{"kind": "human"}, {"kind": "human"}], "creator_name": "x",
                                          "rated": True, "name": f"{NAME}'s table"}).json()  # fmt: skip
        finished_id = rated["game"]["id"]
        carol_seat = post(carol, f"/api/games/{finished_id}/join", {}).json()
        with zeb.websocket_connect(f"/api/games/{finished_id}/ws") as ws:
            ws.send_json({"type": "hello", "token": rated["token"]})
            say(ws, f"gg from {NAME}")
        play_seats(client, finished_id, {0: rated["token"], 1: carol_seat["token"]})
        assert client.post(f"/api/games/{finished_id}/review").status_code == 202
        poll_review(client, finished_id, lambda body: body["status"] == "done")
        # a game in play with the guest Gus, which Carol watches
        playing_id, zeb_token, gus_token = chat_game(zeb)
        with zeb.websocket_connect(f"/api/games/{playing_id}/ws") as ws:
            ws.send_json({"type": "hello", "token": zeb_token})
            said = say(ws, f"hello, {NAME} here")
        root = admin(client, tmp_path)
        report = {
            "kind": "message",
            "game": playing_id,
            "number": said["number"],
            "reason": "spam",
            "text": "x",
        }
        assert post(carol, "/api/reports", report).status_code == 201
        assert (
            post(carol, "/api/reports", {"kind": "player", "player": NAME, "reason": "name"}).status_code
            == 201
        )
        assert post(zeb, "/api/account/blocks", {"player": "Carol"}).status_code == 200
        assert post(carol, "/api/account/blocks", {"player": NAME}).status_code == 200
        assert post(root, f"/api/admin/players/{NAME}/ban", {"reason": "a test"}).status_code == 200
        assert post(root, f"/api/admin/players/{NAME}/unban", {"reason": "a test"}).status_code == 200
        assert login(zeb, NAME).status_code == 200
        paths = [
            "/api/games", "/api/games?status=finished", "/api/games?status=playing", "/api/games?status=open",
            f"/api/games/{finished_id}", f"/api/games/{playing_id}", f"/api/games/{finished_id}/record",
            f"/api/games/{finished_id}/replay", f"/api/games/{finished_id}/review",
            f"/api/games/{finished_id}/chat", f"/api/games/{playing_id}/chat", "/api/leaderboard",
            "/api/players/Carol", "/", "/leaderboard", f"/games/{playing_id}", "/players/Carol",
        ]  # fmt: skip
        admin_paths = [
            "/api/admin/reports",
            "/api/admin/audit",
            "/api/admin/reports?status=resolved",
            "/admin",
        ]
        before = mentions(texts_of(client, paths)) + mentions(texts_of(root, admin_paths))
        # the search finds the name wherever it was shown (pages are filled in by their scripts)
        assert set(before) >= set(paths[:13]) - {"/api/games?status=open"} | set(admin_paths[:2])
        # a guest watches the game in play while the account is deleted (not Carol: she blocked
        # Zebulon, so his messages never reach her sockets)
        with client.websocket_connect(f"/api/games/{playing_id}/ws") as watcher:
            receive_until(watcher, lambda m: m["type"] == "chat")
            wrong = post(zeb, "/api/account/delete", {"password": "not my password"})
            assert wrong.status_code == 403 and wrong.json()["error"] == "bad_password"
            deleted = post(zeb, "/api/account/delete", {"password": PASSWORD})
            assert deleted.status_code == 200 and deleted.json()["user"] is None
            after = []
            while True:
                message = watcher.receive_json()
                after.append(json.dumps(message))
                if message["type"] == "state" and message["state"]["game"]["seats"][0]["deleted"]:
                    break
            assert any('"chat_removed"' in text for text in after)
            seat = json.loads(after[-1])["state"]["game"]["seats"][0]
            assert seat["name"] == "deleted player" and not seat["account"]
            assert not [text for text in after if NAME.casefold() in text.casefold()]
        # a bot plays the deleted player's seat in the game in play
        until(lambda: client.get(f"/api/games/{playing_id}").json()["game"]["seats"][0]["resigned"])
        answers = texts_of(client, paths) | texts_of(root, admin_paths)
        answers["carol's games"] = carol.get("/api/games?mine=true").text
        answers["carol's blocks"] = carol.get("/api/account/blocks").text
        answers["gus's seat"] = client.get(f"/api/games/{playing_id}", headers=auth(gus_token)).text
        with client.websocket_connect(f"/api/games/{finished_id}/ws") as ws:
            ws.send_json({"type": "ping"})  # everything a new socket is sent comes before the pong
            sent = [ws.receive_json()]
            while sent[-1]["type"] != "pong":
                sent.append(ws.receive_json())
            assert sent[0]["type"] == "state"
            answers["a new socket"] = json.dumps(sent)
        assert mentions(answers) == []
        finished = json.loads(answers[f"/api/games/{finished_id}"])
        assert finished["game"]["seats"][0]["deleted"] and finished["game"]["name"] == "2-player game"
        assert [r["player"] for r in finished["ratings"]] == ["deleted player", "Carol"]
        assert json.loads(answers[f"/api/games/{finished_id}/chat"])["messages"] == []
        board = [
            e["name"] for e in json.loads(answers["/api/leaderboard"])["players"] if e["kind"] == "person"
        ]
        assert board == ["Carol"]
        opponents = json.loads(answers["/api/players/Carol"])["results"][0]["opponents"]
        assert (
            opponents[0]["name"] == "deleted player"
            and opponents[0]["deleted"]
            and not opponents[0]["account"]
        )
        assert client.get(f"/api/players/{NAME}").status_code == 404
        # the name stays reserved, and the account is no more
        assert login(zeb, NAME).json()["error"] == "bad_login"
        assert signup(browser(client, "127.0.0.8"), NAME.upper()).json()["error"] == "name_taken"
        guest = client.post(
            "/api/games",
            json={"seats": [{"kind": "human"}, {"kind": "bot", "bot": "random"}], "creator_name": NAME},
        )
        assert guest.status_code == 409 and guest.json()["error"] == "name_taken"
        assert main(["admin", "promote", NAME, "--data-dir", str(tmp_path)]) == 2


def test_the_last_administrator_cannot_delete_their_account(client: TestClient, tmp_path: Path) -> None:
    root = admin(client, tmp_path)
    refused = post(root, "/api/account/delete", {"password": PASSWORD})
    assert refused.status_code == 409 and refused.json()["error"] == "last_admin"
    assert root.get("/api/account").json()["user"]["name"] == "Root"


# ------------------------------------------------------------------ export


def test_the_export_holds_the_profile_games_ratings_chat_reports_and_blocks(client: TestClient) -> None:
    ann = logged_in(browser(client, "127.0.0.5"), "Ann")
    logged_in(browser(client, "127.0.0.6"), "Bob")
    game_id, token, gus = chat_game(ann)
    with ann.websocket_connect(f"/api/games/{game_id}/ws") as ws:
        ws.send_json({"type": "hello", "token": token})
        say(ws, "my words")
    # one move, by whichever seat the deal made first to move
    first = client.get(f"/api/games/{game_id}").json()["to_move"]
    moved = client.post(
        f"/api/games/{game_id}/actions",
        json={"action": "d", "move": 0},
        headers=auth(token if first == 0 else gus),
    )
    assert moved.status_code == 200, moved.text
    assert (
        post(
            ann, "/api/reports", {"kind": "player", "player": "Bob", "reason": "name", "text": "his name"}
        ).status_code
        == 201
    )
    assert post(ann, "/api/account/blocks", {"player": "Bob"}).status_code == 200
    assert client.get("/api/account/export").status_code == 401
    response = ann.get("/api/account/export")
    assert response.status_code == 200
    assert response.headers["content-disposition"] == 'attachment; filename="coloretto-account.json"'
    data = response.json()
    assert data["format"] == "coloretto-account-export" and data["version"] == 1
    assert data["profile"]["name"] == "Ann" and data["profile"]["player_page"].endswith("/players/Ann")
    (game,) = data["games"]
    assert (game["id"], game["seat"], game["status"], game["seats"]) == (
        game_id,
        0,
        "playing",
        ["Ann", "Gus"],
    )
    assert len(game["moves"]) == 1 and game["link"].endswith(f"/games/{game_id}")
    assert data["ratings"] == {"current": None, "history": []}
    assert [(c["game"], c["text"]) for c in data["chat"]] == [(game_id, "my words")]
    assert [(r["kind"], r["player"], r["reason"], r["text"]) for r in data["reports"]] == [
        ("player", "Bob", "name", "his name")
    ]
    assert [b["player"] for b in data["blocks"]] == ["Bob"]
    assert len(data["sessions"]) == 1 and "token" not in json.dumps(data["sessions"])
