"""The server's limits on what one client may ask: bot budgets, games, requests; and their errors."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import websockets

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

from starlette.websockets import WebSocketDisconnect

from coloretto.web import Settings, create_app
from tests.servers import ServeProcess, Servers

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


@pytest.mark.parametrize(
    "bot", ["playout:weights=/etc/passwd", "playout:weights=/no/such.json", "ppo:/etc/x.npz"]
)
def test_a_bot_that_names_a_file_on_the_server_is_refused_without_opening_it(
    client: TestClient, bot: str
) -> None:
    """Whether the file exists or not, the answer is the same: the server's files are not probed."""
    response = bot_game(client, bot)
    assert response.status_code == 400
    body = response.json()
    assert body["error"] == "bad_bot"
    assert "only bots without files may be named here" in body["message"]
    assert not any(word in body["message"] for word in ("JSON", "No such", "no policy", "cannot read"))
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
        assert "hard" in offered and "expert" not in offered  # hard thinks at most 0.5 s, expert 1 s
        response = bot_game(client, "expert")
        assert response.status_code == 400 and response.json()["error"] == "bot_not_allowed"
        assert "0.5 s" in response.json()["message"]
        assert bot_game(client, "hard").status_code == 201


def open_game(client: TestClient, name: str = "Ann") -> Any:
    return client.post(
        "/api/games", json={"seats": [{"kind": "human"}, {"kind": "human"}], "creator_name": name}
    )


def solo_game(client: TestClient) -> Any:
    seats = [{"kind": "human"}, {"kind": "bot", "bot": "random"}]
    return client.post("/api/games", json={"seats": seats, "creator_name": "Solo"})


def other_client(client: TestClient, address: str) -> TestClient:
    """Another client of the same app (the same server), from another address."""
    return TestClient(client.app, client=(address, 50001))


def test_500_open_games_from_one_address_leave_the_others_and_its_own_solo_game_alone(
    client: TestClient,
) -> None:
    answers = [open_game(client) for _ in range(500)]
    created = [a for a in answers if a.status_code == 201]
    refused = [a for a in answers if a.status_code != 201]
    assert len(created) == 5  # max_waiting_per_client
    assert {a.status_code for a in refused} == {429}
    assert {a.json()["error"] for a in refused} == {"too_many_waiting"}
    assert "limit 5 an address" in refused[0].json()["message"]
    assert int(refused[0].headers["Retry-After"]) >= 1
    other = other_client(client, "127.0.0.3")
    assert open_game(other, "Bob").status_code == 201
    assert solo_game(client).status_code == 201  # a game against bots never waits
    listed = client.get("/api/games", params={"status": "open"}).json()["games"]
    assert len(listed) == 6


def test_a_game_against_bots_only_never_counts_as_waiting(client: TestClient) -> None:
    for _ in range(5):
        assert open_game(client).status_code == 201
    assert open_game(client).json()["error"] == "too_many_waiting"
    assert bot_game(client, "random").status_code == 201
    assert solo_game(client).status_code == 201


def test_a_waiting_game_that_starts_frees_its_place(client: TestClient) -> None:
    games = [open_game(client).json()["game"]["id"] for _ in range(5)]
    assert open_game(client).status_code == 429
    bob = other_client(client, "127.0.0.3")
    assert bob.post(f"/api/games/{games[0]}/join", json={"name": "Bob"}).status_code == 200
    assert open_game(client).status_code == 201


def test_creations_a_minute_are_limited_per_address(tmp_path: Path) -> None:
    settings = Settings(bot_delay=0.0, creations_per_minute=3)
    with make_client(tmp_path, settings) as client:
        for _ in range(3):
            assert bot_game(client, "random").status_code == 201
        refused = bot_game(client, "random")
        assert refused.status_code == 429 and refused.json()["error"] == "too_many_creations"
        assert "3 games a minute" in refused.json()["message"]
        assert 1 <= int(refused.headers["Retry-After"]) <= 60
        assert bot_game(other_client(client, "127.0.0.4"), "random").status_code == 201


def test_http_requests_a_minute_are_limited_per_address(tmp_path: Path) -> None:
    with make_client(tmp_path, Settings(bot_delay=0.0, requests_per_minute=30)) as client:
        answers = [client.get("/api/health") for _ in range(31)]
        assert [a.status_code for a in answers[:30]] == [200] * 30
        last = answers[30]
        assert last.status_code == 429
        assert last.json()["error"] == "rate_limited" and "30 a minute" in last.json()["message"]
        assert int(last.headers["Retry-After"]) == 2  # half a token a second
        assert other_client(client, "127.0.0.5").get("/api/health").status_code == 200


def test_x_forwarded_for_names_the_client_only_behind_a_trusted_proxy(tmp_path: Path) -> None:
    settings = Settings(bot_delay=0.0, max_waiting_per_client=1, trusted_proxies=("127.0.0.1",))
    with make_client(tmp_path, settings, address="127.0.0.1") as proxy:

        def via(forwarded: str) -> int:
            response = proxy.post(
                "/api/games",
                json={"seats": [{"kind": "human"}, {"kind": "human"}], "creator_name": "Ann"},
                headers={"X-Forwarded-For": forwarded},
            )
            return response.status_code

        assert via("203.0.113.7") == 201
        assert via("203.0.113.7") == 429
        assert via("198.51.100.1, 203.0.113.8") == 201  # the proxy's own hop is the last one
        assert via("203.0.113.8") == 429
        # not from the trusted proxy: the header is ignored, the peer is the client
        stranger = other_client(proxy, "127.0.0.6")
        first = stranger.post(
            "/api/games",
            json={"seats": [{"kind": "human"}, {"kind": "human"}], "creator_name": "Eve"},
            headers={"X-Forwarded-For": "203.0.113.99"},
        )
        second = stranger.post(
            "/api/games",
            json={"seats": [{"kind": "human"}, {"kind": "human"}], "creator_name": "Eve"},
            headers={"X-Forwarded-For": "203.0.113.100"},
        )
        assert (first.status_code, second.status_code) == (201, 429)


def test_a_bad_trusted_proxy_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="not an IP address or network"):
        create_app(f"sqlite:///{tmp_path / 'x.sqlite3'}", Settings(trusted_proxies=("proxy.example",)))


def poll(check: Any, within: float = 10.0) -> Any:
    """Ask again (every 20 ms, a few requests) until ``check()`` answers something true."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        answer = check()
        if answer:
            return answer
        time.sleep(0.02)
    raise AssertionError(f"the server never got there in {within} s")


def test_a_game_waiting_too_long_expires_is_stored_so_and_is_no_longer_open(tmp_path: Path) -> None:
    settings = Settings(bot_delay=0.0, waiting_expiry=0.2)
    with make_client(tmp_path, settings) as client:
        created = open_game(client).json()
        game_id, token = created["game"]["id"], created["token"]
        solo = solo_game(client).json()["game"]["id"]  # playing at once: it never expires
        with client.websocket_connect(f"/api/games/{game_id}/ws") as ws:
            assert ws.receive_json()["state"]["game"]["status"] == "open"
            expired = poll(lambda: client.get("/api/games", params={"status": "expired"}).json()["games"])
            assert [g["id"] for g in expired] == [game_id]
            told = ws.receive_json()
            while told["type"] != "state" or told["state"]["game"]["status"] != "expired":
                told = ws.receive_json()  # watchers are told
        assert client.get("/api/games", params={"status": "open"}).json()["games"] == []
        assert client.get(f"/api/games/{solo}").json()["game"]["status"] == "playing"
        bob = other_client(client, "127.0.0.3").post(f"/api/games/{game_id}/join", json={"name": "Bob"})
        assert bob.status_code == 409 and bob.json()["error"] == "expired"
        acted = client.post(
            f"/api/games/{game_id}/actions",
            json={"action": "d"},
            headers={"Authorization": f"Bearer {token}"},
        )
        assert acted.status_code == 409 and acted.json()["error"] == "expired"
        assert client.get(f"/api/games/{game_id}/replay").json()["error"] == "expired"
        # an expired game no longer counts as waiting for its creator
        for _ in range(5):
            assert open_game(client).status_code == 201
    with make_client(tmp_path, settings) as again:  # stored so: a new server knows it
        assert again.get(f"/api/games/{game_id}").json()["game"]["status"] == "expired"
        assert game_id not in again.app.state.site.games.live  # type: ignore[attr-defined]


# ------------------------------------------------------------------ names


@pytest.mark.parametrize(
    ("name", "part"),
    [
        ("Ann\x00", "U+0000 at character 4"),
        ("\u202eevil", "U+202E at character 1"),
        ("a\u2066b", "U+2066"),
        ("a\u200fb", "U+200F"),
        ("bell\x07", "U+0007"),
        ("line\u2028two", "U+2028"),
        ("   ", "cannot be empty"),
    ],
)
def test_names_hold_printable_characters_only(client: TestClient, name: str, part: str) -> None:
    created = client.post("/api/games", json={"seats": [{"kind": "human"}] * 2, "creator_name": name})
    assert created.status_code == 400 and created.json()["error"] == "bad_name"
    assert part in created.json()["message"]
    titled = client.post("/api/games", json={"seats": [{"kind": "bot"}] * 2, "name": name + "x"})
    if name.strip():
        assert titled.status_code == 400 and titled.json()["error"] == "bad_name"
        assert "a game's name" in titled.json()["message"]
    game = open_game(client).json()["game"]["id"]
    joined = client.post(f"/api/games/{game}/join", json={"name": name})
    assert joined.status_code == 400 and joined.json()["error"] == "bad_name"
    assert state_of(client, game)["game"]["seats"][1]["free"]


def state_of(client: TestClient, game_id: str) -> Any:
    return client.get(f"/api/games/{game_id}").json()


def test_names_are_stripped_and_spaces_made_one(client: TestClient) -> None:
    created = client.post(
        "/api/games",
        json={"seats": [{"kind": "human"}] * 2, "creator_name": "  Ann   Lee ", "name": " Friday  night "},
    )
    game = created.json()["game"]
    assert game["name"] == "Friday night" and game["seats"][0]["name"] == "Ann Lee"
    accents = client.post(f"/api/games/{game['id']}/join", json={"name": "Zoë 李"})
    assert accents.status_code == 200 and accents.json()["game"]["seats"][1]["name"] == "Zoë 李"


POSTGRESQL = os.environ.get("COLORETTO_TEST_POSTGRESQL")


@pytest.mark.skipif(
    not POSTGRESQL and not os.environ.get("CI"),
    reason="set COLORETTO_TEST_POSTGRESQL=postgresql://… to test on PostgreSQL (.ci/run does)",
)
def test_a_nul_or_a_bidi_override_in_a_name_is_refused_on_postgresql_too() -> None:
    assert POSTGRESQL, "CI must provide COLORETTO_TEST_POSTGRESQL (see .ci/run)"
    with TestClient(create_app(POSTGRESQL, FAST), client=("127.0.0.9", 50000)) as client:
        for name in ("Ann\x00", "\u202eAnn"):
            created = client.post("/api/games", json={"seats": [{"kind": "human"}] * 2, "creator_name": name})
            assert created.status_code == 400 and created.json()["error"] == "bad_name", created.text
            titled = client.post("/api/games", json={"seats": [{"kind": "bot"}] * 2, "name": name})
            assert titled.status_code == 400 and titled.json()["error"] == "bad_name", titled.text
        game = solo_game(client).json()["game"]["id"]
        assert client.get(f"/api/games/{game}").status_code == 200


# ------------------------------------------------- malformed input, one error format


@pytest.mark.parametrize(
    ("body", "part"),
    [
        (b'{"name": "\xff\xfe", "seats": []}', "not UTF-8 text (byte 11"),
        (b"[" * 3000 + b"]" * 3000, "more than 32 deep"),
        (b'{"seats": ' + b"[" * 40 + b"]" * 40 + b"}", "more than 32 deep"),
    ],
)
def test_malformed_bodies_answer_the_documented_error_format(
    client: TestClient, body: bytes, part: str
) -> None:
    response = client.post("/api/games", content=body, headers={"Content-Type": "application/json"})
    assert response.status_code == 422
    assert set(response.json()) == {"error", "message"} and response.json()["error"] == "bad_request"
    assert part in response.json()["message"]


def test_brackets_inside_strings_are_not_nesting(client: TestClient) -> None:
    name = '[[[[{{{{"\\' * 10
    response = client.post("/api/games", json={"seats": [{"kind": "bot"}] * 2, "name": name[:60]})
    assert response.status_code == 201, response.text


def test_framework_errors_answer_the_documented_error_format(client: TestClient) -> None:
    assert client.get("/api/nothing").json() == {"error": "not_found", "message": "Not Found"}
    wrong = client.delete("/api/games")
    assert wrong.status_code == 405 and wrong.json()["error"] == "method_not_allowed"


def test_a_chunked_body_over_16_kib_is_413(client: TestClient) -> None:
    def chunks() -> Iterator[bytes]:
        yield b'{"seats": [], "name": "'
        for _ in range(20):
            yield b"x" * 1024
        yield b'"}'

    response = client.post("/api/games", content=chunks(), headers={"Content-Type": "application/json"})
    assert response.status_code == 413
    assert response.json() == {"error": "too_large", "message": "request bodies are limited to 16384 bytes"}

    def small() -> Iterator[bytes]:
        yield b'{"seats": [{"kind": "bot"}, '
        yield b'{"kind": "bot"}]}'

    assert (
        client.post("/api/games", content=small(), headers={"Content-Type": "application/json"}).status_code
        == 201
    )


def test_a_deeply_nested_websocket_message_gets_an_error_and_the_connection_stays(client: TestClient) -> None:
    game = bot_game(client, "random").json()["game"]["id"]
    with client.websocket_connect(f"/api/games/{game}/ws") as ws:
        assert ws.receive_json()["type"] == "state"
        ws.send_text("[" * 2000 + "]" * 2000)  # 4 KB
        answer = ws.receive_json()
        while answer["type"] == "state":
            answer = ws.receive_json()
        assert answer["type"] == "error" and answer["error"] == "bad_json" and "32 deep" in answer["message"]
        ws.send_json({"type": "ping"})
        answer = ws.receive_json()
        while answer["type"] == "state":
            answer = ws.receive_json()
        assert answer == {"type": "pong"}


# ------------------------------------------------------------- the real server


def from_address(server: ServeProcess, address: str) -> httpx.Client:
    """A client whose socket is bound to ``address`` (127.0.0.x: a different client each)."""
    transport = httpx.HTTPTransport(local_address=address)
    return httpx.Client(base_url=server.url, transport=transport, timeout=10.0)


def test_the_real_server_keeps_one_address_from_filling_the_lobby_and_reads_chunked_bodies(
    tmp_path: Path, servers: Servers
) -> None:
    server = servers.one(tmp_path)
    try:
        with from_address(server, "127.0.0.2") as ann, from_address(server, "127.0.0.3") as bob:
            body = {"seats": [{"kind": "human"}, {"kind": "human"}], "creator_name": "Ann"}
            answers = [ann.post("/api/games", json=body) for _ in range(500)]
            assert [a.status_code for a in answers].count(201) == 5
            assert {a.json()["error"] for a in answers if a.status_code != 201} == {"too_many_waiting"}
            assert bob.post("/api/games", json={**body, "creator_name": "Bob"}).status_code == 201
            solo = {"seats": [{"kind": "human"}, {"kind": "bot", "bot": "easy"}], "creator_name": "Ann"}
            assert ann.post("/api/games", json=solo).status_code == 201

            def chunks() -> Iterator[bytes]:
                for _ in range(20):
                    yield b"x" * 1024

            chunked = bob.post("/api/games", content=chunks(), headers={"Content-Type": "application/json"})
            assert chunked.status_code == 413 and chunked.json()["error"] == "too_large"
            assert "content-length" not in {k.lower() for k in chunked.request.headers}
    finally:
        server.stop()


async def _switch_seats_under_watchers(server: ServeProcess, watchers: int, switches: int) -> list[int]:
    """A seat switches ``switches`` times between its token and none while ``watchers`` spectators
    watch; answers the state messages each spectator got until the seat shows online at the end."""
    async with httpx.AsyncClient(base_url=server.url) as http:
        created = await http.post(
            "/api/games", json={"seats": [{"kind": "human"}, {"kind": "human"}], "creator_name": "Ann"}
        )
    game_id, token = created.json()["game"]["id"], created.json()["token"]
    url = f"ws://127.0.0.1:{server.port}/api/games/{game_id}/ws"
    spectators = [await websockets.connect(url) for _ in range(watchers)]
    for ws in spectators:
        assert json.loads(await ws.recv())["type"] == "state"
    async with websockets.connect(url, max_queue=None) as seat:  # it reads all it is sent
        assert json.loads(await seat.recv())["type"] == "state"
        for i in range(switches):
            await seat.send(json.dumps({"type": "hello", "token": token if i % 2 == 0 else None}))
        await seat.send(json.dumps({"type": "hello", "token": token}))  # online at the end

        async def count(ws: Any) -> int:
            states = 0
            while True:
                message = json.loads(await asyncio.wait_for(ws.recv(), timeout=10))
                if message["type"] == "state":
                    states += 1
                    if message["state"]["game"]["seats"][0]["online"]:
                        return states

        counts = list(await asyncio.gather(*(count(ws) for ws in spectators)))
    await asyncio.gather(*(ws.close() for ws in spectators))
    return counts


def test_seat_switches_make_a_few_state_messages_for_watchers_not_one_per_switch(
    tmp_path: Path, servers: Servers
) -> None:
    server = servers.one(tmp_path)
    try:
        counts = asyncio.run(_switch_seats_under_watchers(server, watchers=60, switches=99))
    finally:
        server.stop()
    assert len(counts) == 60
    assert max(counts) <= 10, counts  # one per 0.5 s of switching at most (it was 100 each)


# ------------------------------------------------------------------ origin


def test_the_websocket_refuses_pages_of_other_sites(tmp_path: Path) -> None:
    settings = Settings(bot_delay=0.0, allowed_origins=("https://games.example",))
    with make_client(tmp_path, settings) as client:
        game = bot_game(client, "random").json()["game"]["id"]
        url = f"/api/games/{game}/ws"
        for origin in ("https://evil.example", "http://testserver.evil.example", "null"):
            with client.websocket_connect(url, headers={"Origin": origin}) as ws:
                error = ws.receive_json()
                assert error["type"] == "error" and error["error"] == "bad_origin"
                assert origin in error["message"]
                with pytest.raises(WebSocketDisconnect) as closed:
                    ws.receive_json()
                assert closed.value.code == 1008 and closed.value.reason == "origin not allowed"
        for origin in ("http://testserver", "https://games.example", None):
            headers = {"Origin": origin} if origin else {}
            with client.websocket_connect(url, headers=headers) as ws:
                assert ws.receive_json()["type"] == "state", origin


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--trusted-proxy", "proxy.example"], "--trusted-proxy 'proxy.example' is not an IP address"),
        (["--requests-per-minute", "-1"], "--requests-per-minute must be ≥ 0"),
        (["--max-bot-time", "0"], "--max-bot-time must be > 0"),
        (["--waiting-expiry", "0"], "--waiting-expiry must be > 0"),
        (["--review-budget", "0"], "--review-budget must be at least 1"),
        (["--max-running-reviews", "0"], "--max-running-reviews must be at least 1"),
    ],
)
def test_bad_limits_on_the_command_line_are_one_line_errors(
    tmp_path: Path, flags: list[str], message: str
) -> None:
    command = [sys.executable, "-m", "coloretto", "serve", "--data-dir", str(tmp_path), "--port", "0", *flags]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert message in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_a_bad_review_setting_in_the_environment_is_a_one_line_error(tmp_path: Path) -> None:
    command = [sys.executable, "-m", "coloretto", "serve", "--data-dir", str(tmp_path), "--port", "0"]
    env = {**os.environ, "COLORETTO_REVIEW_BUDGET": "lots"}
    done = subprocess.run(command, capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode == 2
    assert "$COLORETTO_REVIEW_BUDGET must be a whole number, not 'lots'" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
