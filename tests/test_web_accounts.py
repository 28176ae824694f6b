"""Accounts through the HTTP API and the WebSocket: sign-up, log-in, log-out, the password guesser
slowed down (on two servers sharing a database too), the CSRF token, the cookies' flags, and a
seat that follows its account to another browser but never acts for anyone else's."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from datetime import timedelta
from functools import partial
from http.cookies import SimpleCookie
from pathlib import Path
from typing import Any

import pytest

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

from coloretto.web import Settings, create_app
from coloretto.web.features.accounts import address_digest, name_key
from coloretto.web.features.site import Site
from coloretto.web.storage import accounts as store
from coloretto.web.table.live import now_utc
from tests.test_web import auth, is_state, receive_until

#: Argon2id at its cheapest, so that a test's log-ins take milliseconds (the server's default is
#: argon2-cffi's own: 64 MiB and three passes, about a third of a second here)
CHEAP_HASH = (1, 8, 1)
SETTINGS = Settings(
    bot_delay=0.0,
    messages_per_second=1000.0,
    message_burst=1000,
    requests_per_minute=0,
    password_cost=CHEAP_HASH,
)
PASSWORD = "correct horse battery"


def make_client(
    path: Path,
    settings: Settings = SETTINGS,
    *,
    address: str = "127.0.0.2",
    base_url: str = "http://testserver",
) -> TestClient:
    """A browser of its own (a cookie jar) on the app of the database ``path``."""
    return TestClient(create_app(f"sqlite:///{path}", settings), client=(address, 50000), base_url=base_url)


def browser(client: TestClient, address: str = "127.0.0.3") -> TestClient:
    """Another browser (its own cookies) on the same server."""
    return TestClient(client.app, client=(address, 50001))


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    with make_client(tmp_path / "accounts.sqlite3") as c:
        yield c


def service_of(client: TestClient) -> Site:
    return client.app.state.site  # type: ignore[attr-defined,no-any-return]


def csrf(client: TestClient) -> dict[str, str]:
    """The security token header a page of the site sends (it reads the cookie the server set)."""
    if "coloretto_csrf" not in client.cookies:
        client.get("/api/account")
    return {"X-CSRF-Token": client.cookies["coloretto_csrf"]}


def signup(client: TestClient, name: str, password: str = PASSWORD) -> Any:
    return client.post("/api/account/signup", json={"name": name, "password": password}, headers=csrf(client))


def login(client: TestClient, name: str, password: str = PASSWORD) -> Any:
    return client.post("/api/account/login", json={"name": name, "password": password}, headers=csrf(client))


def logged_in(client: TestClient, name: str) -> TestClient:
    """``client`` with a new account ``name``, logged in."""
    response = signup(client, name)
    assert response.status_code == 201, response.text
    return client


def post(client: TestClient, path: str, body: Any = None, **kwargs: Any) -> Any:
    """A state-changing request as the site's pages send it: with the security token."""
    headers = {**csrf(client), **kwargs.pop("headers", {})}
    return client.post(path, json=body, headers=headers, **kwargs)


def cookies_set(response: Any) -> dict[str, dict[str, Any]]:
    """Each cookie the answer sets, with its attributes (lower-case names; flags as True)."""
    found: dict[str, dict[str, Any]] = {}
    for header in response.headers.get_list("set-cookie"):
        jar: SimpleCookie = SimpleCookie()
        jar.load(header)
        for name, morsel in jar.items():
            attributes = {key: value for key, value in morsel.items() if value}
            found[name] = {"value": morsel.value, **attributes}
            # SimpleCookie keeps flags as empty strings unless present: read them off the header
            lowered = header.lower()
            found[name]["httponly"] = "httponly" in lowered
            found[name]["secure"] = "; secure" in lowered
    return found


def two_seat_game(client: TestClient, **extra: Any) -> dict[str, Any]:
    response = post(
        client,
        "/api/games",
        {"seats": [{"kind": "human"}, {"kind": "human"}], "creator_name": "Ann", **extra},
    )
    assert response.status_code == 201, response.text
    created: dict[str, Any] = response.json()
    return created


# ------------------------------------------------------------------ the doors


def test_sign_up_log_out_log_in_and_who_is_logged_in(client: TestClient) -> None:
    guest = client.get("/api/account").json()
    assert guest["user"] is None and guest["csrf_token"] == client.cookies["coloretto_csrf"]
    made = signup(client, "  Ann   Smith ")
    assert made.status_code == 201, made.text
    user = made.json()["user"]
    assert user["name"] == "Ann Smith"  # cleaned as every name is
    assert user["rating"] == {"mu": 25.0, "sigma": 8.333, "ordinal": 0.0, "games": 0}
    assert made.json()["csrf_token"] == client.cookies["coloretto_csrf"]  # a new one, set with the session
    assert client.get("/api/account").json()["user"]["name"] == "Ann Smith"
    session = client.cookies["coloretto_session"]
    out = post(client, "/api/account/logout")
    assert out.status_code == 200 and out.json()["user"] is None
    assert "coloretto_session" not in client.cookies
    assert client.get("/api/account").json()["user"] is None
    # the session is gone from the server too: its cookie, kept by someone, logs nobody in
    thief = browser(client)
    thief.cookies.set("coloretto_session", session)
    assert thief.get("/api/account").json()["user"] is None
    again = login(client, "ANN SMITH")  # any case
    assert again.status_code == 200 and again.json()["user"]["name"] == "Ann Smith"
    assert client.cookies["coloretto_session"] != session


def test_a_name_is_one_account_whatever_its_case(client: TestClient) -> None:
    assert signup(client, "Ann").status_code == 201
    for other in ("ANN", "ann", "ＡＮＮ"):  # fullwidth letters are the same name too
        taken = signup(browser(client), other)
        assert taken.status_code == 409 and taken.json()["error"] == "name_taken", other
        assert other in taken.json()["message"] or "ANN" in taken.json()["message"].upper()


@pytest.mark.parametrize(
    ("name", "password", "status", "code", "part"),
    [
        ("", PASSWORD, 400, "bad_name", "cannot be empty"),
        ("   ", PASSWORD, 400, "bad_name", "cannot be empty"),
        ("\u202eAnn", PASSWORD, 400, "bad_name", "U+202E at character 1"),
        ("Ann\x00", PASSWORD, 400, "bad_name", "U+0000 at character 4"),
        ("A" * 41, PASSWORD, 400, "bad_name", "at most 40 characters"),
        ("Ann", "short", 400, "bad_password", "8 to 128 characters, not 5"),
        ("Ann", "x" * 129, 400, "bad_password", "not 129"),
        ("Ann", None, 422, "bad_request", "password"),
    ],
)
def test_bad_names_and_passwords_are_refused_and_make_no_account(
    client: TestClient, name: str, password: str | None, status: int, code: str, part: str
) -> None:
    body = {"name": name} if password is None else {"name": name, "password": password}
    response = client.post("/api/account/signup", json=body, headers=csrf(client))
    assert response.status_code == status, response.text
    assert response.json()["error"] == code and part in response.json()["message"]
    assert "coloretto_session" not in client.cookies
    assert login(client, "Ann").json()["error"] == "bad_login"


def test_a_wrong_password_and_an_unknown_name_get_the_same_answer(client: TestClient) -> None:
    logged_in(client, "Ann")
    post(client, "/api/account/logout")
    wrong = login(client, "Ann", "not the password")
    unknown = login(client, "Nobody", PASSWORD)
    assert wrong.status_code == unknown.status_code == 401
    assert wrong.json() == unknown.json() == {"error": "bad_login", "message": "wrong name or password"}
    assert client.get("/api/account").json()["user"] is None


# --------------------------------------------------------------- the guesser


def guesses(client: TestClient, name: str, count: int, password: str = "guess guess") -> list[int]:
    return [login(client, name, password).status_code for _ in range(count)]


def test_a_password_guesser_is_slowed_down_even_with_the_right_password(tmp_path: Path) -> None:
    settings = Settings(password_cost=CHEAP_HASH, login_failures=3, login_lock=30.0, requests_per_minute=0)
    with make_client(tmp_path / "a.sqlite3", settings) as client:
        logged_in(client, "Ann")
        post(client, "/api/account/logout")
        assert guesses(client, "Ann", 3) == [401, 401, 401]
        locked = login(client, "Ann", PASSWORD)  # the right one: refused as well, unchecked
        assert locked.status_code == 429 and locked.json()["error"] == "too_many_logins"
        assert 25 <= int(locked.headers["Retry-After"]) <= 30
        assert "try again in" in locked.json()["message"]
        assert "coloretto_session" not in client.cookies
        # another name from the same address is not locked (the address allows 20)
        logged_in(browser(client), "Bob")
        assert login(client, "Bob").status_code == 200


def test_the_wait_doubles_with_each_failure_after_the_allowed_ones(tmp_path: Path) -> None:
    settings = Settings(password_cost=CHEAP_HASH, login_failures=3, login_lock=30.0, requests_per_minute=0)
    with make_client(tmp_path / "a.sqlite3", settings, address="127.0.0.5") as client:
        logged_in(client, "Ann")
        post(client, "/api/account/logout")
        service = service_of(client)
        keys = [f"login-name:{name_key('Ann')}"]
        # three failures 40 s ago: their 30 s wait is over, so the next attempt is looked at
        past = now_utc() - timedelta(seconds=40)
        client.portal.call(service.games.write, partial(store.add_throttle, keys=keys, now=past))  # type: ignore[union-attr]
        client.portal.call(service.games.write, partial(store.add_throttle, keys=keys * 2, now=past))  # type: ignore[union-attr]
        assert login(client, "Ann", "still guessing").status_code == 401  # the fourth failure
        locked = login(client, "Ann", PASSWORD)
        assert locked.status_code == 429
        assert 55 <= int(locked.headers["Retry-After"]) <= 60  # twice the first wait


def test_a_success_forgets_the_names_failures(client: TestClient) -> None:
    logged_in(client, "Ann")
    post(client, "/api/account/logout")
    assert guesses(client, "Ann", 4) == [401] * 4  # one short of the lock
    assert login(client, "Ann").status_code == 200
    post(client, "/api/account/logout")
    assert guesses(client, "Ann", 4) == [401] * 4  # counted from nothing again
    assert login(client, "Ann").status_code == 200


def test_the_lock_holds_on_another_server_sharing_the_database(tmp_path: Path) -> None:
    path = tmp_path / "shared.sqlite3"
    with make_client(path) as first, make_client(path, address="127.0.0.7") as second:
        logged_in(first, "Ann")
        post(first, "/api/account/logout")
        assert guesses(first, "Ann", 5) == [401] * 5
        # the other process refuses the name at once, the right password included
        refused = login(second, "Ann")
        assert refused.status_code == 429 and refused.json()["error"] == "too_many_logins"
        assert int(refused.headers["Retry-After"]) >= 1


def test_an_address_guessing_many_names_is_slowed_down(tmp_path: Path) -> None:
    settings = Settings(password_cost=CHEAP_HASH, login_address_failures=4, requests_per_minute=0)
    with make_client(tmp_path / "a.sqlite3", settings, address="127.0.0.9") as sprayer:
        logged_in(browser(sprayer), "Ann")
        statuses = [login(sprayer, name, "password1").status_code for name in ("Ann", "Bob", "Cy", "Di")]
        assert statuses == [401] * 4
        refused = login(sprayer, "Ed", "password1")
        assert refused.status_code == 429 and refused.json()["error"] == "too_many_logins"
        assert login(browser(sprayer, "127.0.0.10"), "Ann").status_code == 200  # others may log in


def test_sign_ups_are_limited_per_address(tmp_path: Path) -> None:
    settings = Settings(password_cost=CHEAP_HASH, signups_per_hour=2, requests_per_minute=0)
    with make_client(tmp_path / "a.sqlite3", settings) as client:
        assert signup(client, "Ann").status_code == 201
        assert signup(browser(client, "127.0.0.2"), "Bob").status_code == 201
        refused = signup(browser(client, "127.0.0.2"), "Cy")
        assert refused.status_code == 429 and refused.json()["error"] == "too_many_signups"
        assert int(refused.headers["Retry-After"]) > 0
        assert signup(browser(client, "127.0.0.20"), "Cy").status_code == 201


# ------------------------------------------------------------------- CSRF


def test_a_state_changing_request_with_a_cookie_needs_the_security_token(client: TestClient) -> None:
    logged_in(client, "Ann")
    body = {"seats": [{"kind": "human"}, {"kind": "bot", "bot": "random"}], "creator_name": "Ann"}
    missing = client.post("/api/games", json=body)
    assert missing.status_code == 403
    assert missing.json() == {
        "error": "csrf",
        "message": "the page's security token is missing or wrong: reload the page",
    }
    wrong = client.post("/api/games", json=body, headers={"X-CSRF-Token": "not-the-token"})
    assert wrong.status_code == 403 and wrong.json()["error"] == "csrf"
    assert client.get("/api/games").json()["games"] == []  # nothing was made
    made = client.post("/api/games", json=body, headers=csrf(client))
    assert made.status_code == 201
    game_id = made.json()["game"]["id"]
    # a forged action would need the token as well; reading needs nothing
    assert client.post(f"/api/games/{game_id}/actions", json={"action": "d"}).json()["error"] == "csrf"
    assert client.get(f"/api/games/{game_id}").json()["you"] == 0


def test_the_account_doors_want_the_token_even_without_a_cookie(client: TestClient) -> None:
    logged_in(client, "Ann")
    fresh = browser(client)
    for path in ("/api/account/signup", "/api/account/login", "/api/account/logout"):
        refused = fresh.post(path, json={"name": "Ann", "password": PASSWORD})
        assert refused.status_code == 403 and refused.json()["error"] == "csrf", path
    assert "coloretto_session" not in fresh.cookies


def test_requests_without_a_session_cookie_need_no_token(client: TestClient) -> None:
    """API clients with seat tokens carry no ambient authority: the token cookie alone is none."""
    body = {"seats": [{"kind": "human"}, {"kind": "bot", "bot": "random"}], "creator_name": "Ann"}
    client.cookies.clear()
    made = client.post("/api/games", json=body)  # no cookie at all
    assert made.status_code == 201
    assert "coloretto_csrf" in client.cookies  # set on the answer, as on any answer
    again = client.post("/api/games", json=body)  # the token's own cookie only
    assert again.status_code == 201, again.text
    token = again.json()["token"]
    played = client.post(
        f"/api/games/{again.json()['game']['id']}/actions", json={"action": "d"}, headers=auth(token)
    )
    assert played.status_code in (200, 409), played.text  # 409: the bot's turn first


def test_the_token_cookie_is_readable_by_the_page_and_strict(client: TestClient) -> None:
    first = client.get("/")
    token = cookies_set(first)["coloretto_csrf"]
    assert token["path"] == "/" and token["samesite"].lower() == "strict"
    assert not token["httponly"] and not token["secure"]
    assert len(token["value"]) >= 40
    assert "coloretto_csrf" not in cookies_set(client.get("/api/options"))  # set once, then kept


# ----------------------------------------------------------------- cookies


def test_the_session_cookie_is_http_only_lax_and_lasts_30_days(client: TestClient) -> None:
    session = cookies_set(signup(client, "Ann"))["coloretto_session"]
    assert session["httponly"] and session["samesite"].lower() == "lax" and session["path"] == "/"
    assert session["max-age"] == str(30 * 86400)
    assert not session["secure"]  # plain http: a Secure cookie would never come back
    assert len(session["value"]) >= 40


def test_cookies_are_secure_over_https(tmp_path: Path) -> None:
    with make_client(tmp_path / "a.sqlite3", base_url="https://testserver") as client:
        made = signup(client, "Ann")
        assert made.status_code == 201
        assert cookies_set(made)["coloretto_session"]["secure"]
        assert cookies_set(made)["coloretto_csrf"]["secure"]


def test_cookies_are_secure_behind_a_trusted_proxy_that_says_https(tmp_path: Path) -> None:
    settings = Settings(password_cost=CHEAP_HASH, trusted_proxies=("127.0.0.1",), requests_per_minute=0)
    https = {"X-Forwarded-Proto": "https", "X-Forwarded-For": "203.0.113.5"}
    with make_client(tmp_path / "a.sqlite3", settings, address="127.0.0.1") as proxy:
        first = cookies_set(proxy.get("/api/account", headers=https))["coloretto_csrf"]
        assert first["secure"]
        # the browser talks https to the proxy: it sends the Secure cookie back (this client, on
        # plain http to the server, would not by itself)
        proxy.cookies.clear()
        token = first["value"]
        made = proxy.post(
            "/api/account/signup",
            json={"name": "Ann", "password": PASSWORD},
            headers={**https, "Cookie": f"coloretto_csrf={token}", "X-CSRF-Token": token},
        )
        assert made.status_code == 201 and cookies_set(made)["coloretto_session"]["secure"]
    # a client that is no proxy cannot make the server believe it came over https
    with make_client(tmp_path / "b.sqlite3", settings, address="127.0.0.2") as client:
        made = client.post(
            "/api/account/signup",
            json={"name": "Ann", "password": PASSWORD},
            headers={**https, **csrf(client)},
        )
        assert made.status_code == 201 and not cookies_set(made)["coloretto_session"]["secure"]


@pytest.mark.parametrize(("mode", "secure"), [("always", True), ("never", False)])
def test_secure_cookies_can_be_forced(tmp_path: Path, mode: str, secure: bool) -> None:
    settings = Settings(password_cost=CHEAP_HASH, secure_cookies=mode, requests_per_minute=0)
    with make_client(tmp_path / "a.sqlite3", settings, base_url="https://testserver") as client:
        assert cookies_set(signup(client, "Ann"))["coloretto_session"]["secure"] is secure


def test_a_bad_secure_cookies_setting_is_refused() -> None:
    with pytest.raises(ValueError, match="secure_cookies must be one of auto, always, never"):
        Settings(secure_cookies="sometimes")


# ------------------------------------------------------ seats and sessions


def test_a_seat_follows_its_account_to_another_browser(client: TestClient) -> None:
    logged_in(client, "Ann")
    created = two_seat_game(client, creator_name="Whoever")
    game_id = created["game"]["id"]
    seat = created["game"]["seats"][0]
    assert seat["name"] == "Ann" and seat["account"]  # a logged-in person sits under their account
    bob = logged_in(browser(client), "Bob")
    assert post(bob, f"/api/games/{game_id}/join", {}).status_code == 200  # no name needed
    laptop = browser(client, "127.0.0.30")  # Ann again, elsewhere, with no seat token
    assert login(laptop, "Ann").status_code == 200
    state = laptop.get(f"/api/games/{game_id}").json()
    assert state["you"] == 0
    ann_moves = state["to_move"] == 0
    mover = laptop if ann_moves else bob
    legal = mover.get(f"/api/games/{game_id}").json()["legal"]
    played = post(mover, f"/api/games/{game_id}/actions", {"action": legal[0]})
    assert played.status_code == 200, played.text
    with laptop.websocket_connect(f"/api/games/{game_id}/ws") as ws:
        receive_until(ws, is_state)
        ws.send_json({"type": "hello"})  # no token: the session that came with the handshake
        welcome = receive_until(ws, lambda m: m["type"] == "welcome")
        assert welcome == {"type": "welcome", "seat": 0, "user": "Ann"}
        mine = receive_until(ws, lambda m: is_state(m) and m["state"]["you"] == 0)["state"]
        assert mine["move_number"] == 1


def test_a_session_never_acts_for_another_seat(client: TestClient) -> None:
    ann = logged_in(client, "Ann")
    created = two_seat_game(ann)
    game_id, ann_token = created["game"]["id"], created["token"]
    bob = logged_in(browser(client), "Bob")
    assert post(bob, f"/api/games/{game_id}/join", {}).json()["seat"] == 1
    state = ann.get(f"/api/games/{game_id}").json()
    waiting = bob if state["to_move"] == 0 else ann  # whoever is not to move
    waiting_seat = 1 if waiting is bob else 0
    refused = post(waiting, f"/api/games/{game_id}/actions", {"action": "d"})
    assert refused.status_code == 409 and refused.json()["error"] == "not_your_turn"
    assert waiting.get(f"/api/games/{game_id}").json()["you"] == waiting_seat
    # a third account, and a guest, have no seat here: their session plays nothing
    carol = logged_in(browser(client, "127.0.0.40"), "Carol")
    for outsider in (carol, browser(client, "127.0.0.41")):
        assert outsider.get(f"/api/games/{game_id}").json()["you"] is None
        response = post(outsider, f"/api/games/{game_id}/actions", {"action": "d"})
        assert response.status_code == 403 and response.json()["error"] == "not_seated"
    with carol.websocket_connect(f"/api/games/{game_id}/ws") as ws:
        receive_until(ws, is_state)
        ws.send_json({"type": "hello"})
        assert receive_until(ws, lambda m: m["type"] == "welcome")["seat"] is None
    # Bob's session with Ann's token: the token is what the request proves, and it is Ann's seat
    assert bob.get(f"/api/games/{game_id}", headers=auth(ann_token)).json()["you"] == 0
    assert ann.get(f"/api/games/{game_id}", headers=auth("made-up")).json()["error"] == "bad_token"


def test_an_account_takes_one_seat_of_a_game(client: TestClient) -> None:
    ann = logged_in(client, "Ann")
    game_id = post(ann, "/api/games", {"seats": [{"kind": "human"}] * 3, "creator_name": "Ann"}).json()[
        "game"
    ]["id"]
    again = post(ann, f"/api/games/{game_id}/join", {})
    assert again.status_code == 409 and again.json()["error"] == "already_seated"
    assert "seat 1" in again.json()["message"]
    guest = post(browser(client), f"/api/games/{game_id}/join", {})
    assert guest.status_code == 400 and guest.json()["error"] == "bad_name"  # a guest gives a name


def test_rated_tables_seat_logged_in_people_and_level_bots(client: TestClient) -> None:
    rated = {"seats": [{"kind": "human"}, {"kind": "human"}, {"kind": "bot", "bot": "hard"}], "rated": True}
    guest = post(client, "/api/games", {**rated, "creator_name": "Ann"})
    assert guest.status_code == 403 and guest.json()["error"] == "login_required"
    ann = logged_in(browser(client), "Ann")
    made = post(ann, "/api/games", {**rated, "creator_name": "Ann"})
    assert made.status_code == 201 and made.json()["game"]["rated"] is True
    game_id = made.json()["game"]["id"]
    refused = post(client, f"/api/games/{game_id}/join", {"name": "Gus"})
    assert refused.status_code == 403 and refused.json()["error"] == "login_required"
    assert "log in" in refused.json()["message"]
    for bot in ("greedy", "mcts:500", "random"):
        seats = [{"kind": "human"}, {"kind": "bot", "bot": bot}]
        wrong = post(ann, "/api/games", {"seats": seats, "creator_name": "Ann", "rated": True})
        assert wrong.status_code == 400 and wrong.json()["error"] == "bad_bot", bot
        assert "easy, medium, hard, expert" in wrong.json()["message"]
    bots_only = post(ann, "/api/games", {"seats": [{"kind": "bot", "bot": "easy"}] * 2, "rated": True})
    assert bots_only.status_code == 400 and bots_only.json()["error"] == "bad_seat"


def test_the_openapi_schema_describes_the_accounts(client: TestClient) -> None:
    schema = client.get("/openapi.json").json()
    paths = set(schema["paths"])
    assert {
        "/api/account", "/api/account/signup", "/api/account/login", "/api/account/logout",
        "/api/leaderboard", "/api/players/{name}", "/api/games/{game_id}/rematch",
        "/api/games/{game_id}/resign", "/api/games/{game_id}/cancel", "/api/games/{game_id}/chat",
    } <= paths  # fmt: skip
    components = set(schema["components"]["schemas"])
    assert {"Account", "Credentials", "Leaderboard", "PlayerPage", "ChatLog", "RematchGrant"} <= components


def test_address_digests_name_nobody() -> None:
    assert "127.0.0.1" not in address_digest("127.0.0.1")
    assert address_digest("127.0.0.1") != address_digest("127.0.0.2")


# ------------------------------------------------------------------ your games, the site's pages


def listed(client: TestClient, status: str, mine: bool = False) -> list[str]:
    response = client.get("/api/games", params={"status": status, **({"mine": "true"} if mine else {})})
    assert response.status_code == 200, response.text
    return [game["id"] for game in response.json()["games"]]


def test_an_account_lists_its_own_games_private_ones_too(client: TestClient) -> None:
    ann = logged_in(client, "Ann")
    public = two_seat_game(ann)["game"]["id"]
    private = two_seat_game(ann, private=True)["game"]["id"]
    against_a_bot = {"seats": [{"kind": "human"}, {"kind": "bot", "bot": "random"}], "creator_name": "Ann"}
    playing = post(ann, "/api/games", against_a_bot).json()["game"]["id"]
    bob = logged_in(browser(client), "Bob")
    bobs = two_seat_game(bob, private=True)["game"]["id"]
    assert set(listed(ann, "open", mine=True)) == {public, private}
    assert listed(ann, "playing", mine=True) == [playing]
    assert listed(bob, "open", mine=True) == [bobs]
    # the lobby's own lists never show a private table, whoever asks
    assert listed(ann, "open") == [public]
    # a game Bob joins is his too
    assert post(bob, f"/api/games/{public}/join", {}).status_code == 200
    assert public in listed(bob, "playing", mine=True)
    assert public in listed(ann, "playing", mine=True)
    guest = browser(client, "127.0.0.9").get("/api/games", params={"mine": "true"})
    assert guest.status_code == 403 and guest.json()["error"] == "login_required"


def test_the_header_names_who_is_logged_in_and_leads_back_after_logging_in(client: TestClient) -> None:
    guest = client.get("/games/abc/replay?game=2").text
    assert '<a id="login-link" href="/login?next=/games/abc/replay%3Fgame%3D2"' in guest
    assert 'id="logout"' not in guest and 'data-user="' not in guest
    ann = logged_in(client, "Ann Lee")
    page = ann.get("/leaderboard").text
    assert '<a id="account-name" href="/players/Ann%20Lee"' in page
    assert 'id="logout"' in page and 'data-user="Ann Lee"' in page
    assert '<a href="/leaderboard" aria-current="page">Leaderboard</a>' in page
    # the lobby asks a logged-in person for no name: they sit under their account's
    lobby = ann.get("/").text
    assert 'id="creator-name"' not in lobby and 'id="rated"' in lobby
    assert "You sit down as <strong>Ann Lee</strong>." in lobby
    assert 'id="creator-name"' in browser(client).get("/").text  # a guest's lobby does


@pytest.mark.parametrize(
    ("target", "back"),
    [
        ("/games/x?game=2", "/games/x?game=2"),
        ("//evil.example/", "/"),
        ("https://evil.example/", "/"),
        ("/\\evil.example", "/"),
        ("/signup?next=/rules", "/"),
        ("", "/"),
    ],
)
def test_a_log_in_leads_back_to_this_site_only(client: TestClient, target: str, back: str) -> None:
    page = client.get("/login", params={"next": target}).text
    assert f'data-next="{back}"' in page


def test_the_account_pages_state_the_password_rules(client: TestClient) -> None:
    signup_page = client.get("/signup").text
    assert 'minlength="8" maxlength="128"' in signup_page and 'autocomplete="new-password"' in signup_page
    assert "8 to 128 characters" in signup_page
    assert 'autocomplete="current-password"' in client.get("/login").text
