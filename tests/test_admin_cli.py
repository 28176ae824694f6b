"""``coloretto admin``: its error messages (one line, exit status 2), and its actions reaching the
server processes running on the same database: one real server on SQLite, and two on PostgreSQL
and Redis."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect

from coloretto.cli import main
from coloretto.web.features.accounts import hash_password
from coloretto.web.storage import accounts as accounts_store
from coloretto.web.storage.db import open_database, sqlite_url
from coloretto.web.table.live import now_utc
from tests.servers import ServeProcess, Servers, require_postgresql

REPO = Path(__file__).resolve().parent.parent
PASSWORD = "correct horse battery"
#: a hang guard: what a test waits for comes as soon as the servers act on it (about a second)
DEADLINE = 60.0


def cli(*args: str, data_dir: Path | None = None, url: str | None = None, stdin: str | None = None) -> Any:
    """``coloretto admin …`` in a process of its own, as an operator runs it."""
    where = ["--data-dir", str(data_dir)] if data_dir is not None else ["--database-url", str(url)]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run(
        [sys.executable, "-m", "coloretto", "admin", *args[:1], *where, *args[1:]],
        capture_output=True,
        text=True,
        input=stdin,
        env=env,
        timeout=120,
        check=False,
    )


def add_account(url: str, name: str) -> None:
    """An ordinary account, made in the database as a sign-up makes it (no server needed)."""
    sessions = open_database(url)
    with sessions() as session, session.begin():
        accounts_store.insert_user(
            session,
            name=name,
            name_key=name.casefold(),
            password_hash=hash_password(PASSWORD, (1, 8, 1)),
            now=now_utc(),
        )


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["admin", *args])
    out, err = capsys.readouterr()
    return code, out, err


# ------------------------------------------------------------------ the errors


def test_every_mistake_is_one_line_on_stderr_and_exit_status_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = ["--data-dir", str(tmp_path)]
    missing = run(capsys, "promote", "Ann", "--data-dir", str(tmp_path / "nowhere"))
    assert missing[0] == 2 and "there is no data directory" in missing[2]
    password = tmp_path / "password"
    password.write_text(PASSWORD + "\n")
    code, out, _err = run(capsys, "create-admin", "Root", "--password-file", str(password), *data)
    assert code == 0 and "administrator Root created" in out
    add_account(sqlite_url(tmp_path), "Ann")
    cases: list[tuple[list[str], str]] = [
        (["promote", "Nobody"], "there is no account named 'Nobody'"),
        (["demote", "Ann"], "Ann is not an administrator"),
        (["demote", "root"], "Root is the site's last administrator: promote another account first"),
        (["promote", "ROOT"], "Root is an administrator already"),
        (["create-admin", "ann", "--password-file", str(password)], "the name ann is taken"),
        (["create-admin", "Bad\u202ename", "--password-file", str(password)], "U+202E"),
        (["create-admin", "Eve", "--password-file", str(tmp_path / "none")], "cannot read the password"),
        (["ban", "Nobody", "--reason", "spam"], "there is no account named 'Nobody'"),
        (
            ["ban", "Root", "--reason", "spam"],
            "Root is an administrator: demote the account before banning it",
        ),
        (["ban", "Ann", "--reason", "   "], "a reason cannot be empty"),
        (["unban", "Ann"], "Ann is not banned"),
        (["end-game", "nosuchgame", "--reason", "x"], "there is no game 'nosuchgame'"),
        (["end-game", "x" * 40, "--reason", "x"], "there is no game"),
        (["hide-message", "abc", "--reason", "x"], "a message is GAME:NUMBER"),
        (["hide-message", "abc:0", "--reason", "x"], "a message is GAME:NUMBER"),
        (["hide-message", "abc:3", "--reason", "x"], "game 'abc' has no chat message 3"),
        (["resolve-report", "7"], "there is no report 7"),
        (["reports", "--limit", "0"], "--limit is 1 to 500, not 0"),
        (["reset-password", "Nobody"], "there is no account named 'Nobody'"),
        (["reset-password", "Ann", "--base-url", "ftp://host"], "--base-url is the site's address"),
    ]
    for args, said in cases:
        code, out, err = run(capsys, *args, *data)
        assert code == 2, (args, out, err)
        assert said in err and err.startswith("coloretto admin: error: "), (args, err)
        assert err.count("\n") == 1 and out == "", (args, out, err)
    empty = tmp_path / "empty"
    empty.write_text("\n")
    code, _out, err = run(capsys, "create-admin", "Eve", "--password-file", str(empty), *data)
    assert code == 2 and "holds no password" in err
    short = tmp_path / "short"
    short.write_text("short\n")
    code, _out, err = run(capsys, "create-admin", "Eve", "--password-file", str(short), *data)
    assert code == 2 and "a password has 8 to 128 characters, not 5" in err
    # argparse's own: a ban needs its reason
    with pytest.raises(SystemExit) as usage:
        main(["admin", "ban", "Ann", *data])
    assert usage.value.code == 2 and "--reason" in capsys.readouterr().err
    bad_url = run(capsys, "audit", "--database-url", "postgresql://nobody:nothing@127.0.0.1:1/none")
    assert bad_url[0] == 2 and "cannot open the database" in bad_url[2] and "nothing" not in bad_url[2]
    # nothing was changed by any of them: the audit log holds the creation alone
    code, out, _err = run(capsys, "audit", *data)
    assert code == 0 and out.splitlines()[0].endswith("command line (cli) create-admin Root")
    assert len(out.splitlines()) == 1


def test_a_password_from_standard_input_and_never_from_the_arguments(tmp_path: Path) -> None:
    made = cli("create-admin", "Root", "--password-file", "-", data_dir=tmp_path, stdin=PASSWORD + "\n")
    assert made.returncode == 0, made.stderr
    # no terminal and no file: the password is never taken from anywhere else
    asked = cli("create-admin", "Eve", data_dir=tmp_path, stdin="")
    assert asked.returncode == 2 and "give --password-file" in asked.stderr
    sessions = open_database(sqlite_url(tmp_path))
    with sessions() as session:
        root = accounts_store.user_by_key(session, "root")
        assert root is not None and root.is_admin and PASSWORD not in root.password_hash


# ------------------------------------------------------------------ a running server


class Browser:
    """A person's browser on a real server: its cookies, the security token, a WebSocket."""

    def __init__(self, base: str) -> None:
        self.http = httpx.Client(base_url=base, timeout=30)
        self.base = base
        self.http.get("/api/account")

    def post(self, path: str, body: Any = None, token: str | None = None) -> httpx.Response:
        headers = {"X-CSRF-Token": self.http.cookies["coloretto_csrf"]}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        return self.http.post(path, json=body, headers=headers)

    def signup(self, name: str) -> Browser:
        made = self.post("/api/account/signup", {"name": name, "password": PASSWORD})
        assert made.status_code == 201, made.text
        return self

    def socket(self, game_id: str) -> ClientConnection:
        """The game's WebSocket, with this browser's cookies (use it in a ``with``)."""
        cookies = "; ".join(f"{k}={v}" for k, v in self.http.cookies.items())
        ws_base = self.base.replace("http://", "ws://")
        return connect(
            f"{ws_base}/api/games/{game_id}/ws", additional_headers={"Cookie": cookies}, proxy=None
        )


def hello(ws: ClientConnection, token: str | None) -> ClientConnection:
    ws.send(json.dumps({"type": "hello", "token": token}))
    return ws


def until(ws: ClientConnection, done: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
    deadline = time.monotonic() + DEADLINE
    while time.monotonic() < deadline:
        message = json.loads(ws.recv(timeout=deadline - time.monotonic()))
        if done(message):
            return dict(message)
    raise AssertionError("the message did not come")


def closed_with(ws: ClientConnection) -> int | None:
    """Read until the server closes the socket: its close code."""
    with pytest.raises(ConnectionClosed) as closed:
        until(ws, lambda m: False)
    return closed.value.rcvd.code if closed.value.rcvd is not None else None


def two_person_game(bob: Browser, gus: Browser) -> tuple[str, str, str]:
    created = bob.post("/api/games", {"seats": [{"kind": "human"}, {"kind": "human"}], "creator_name": "x"})
    assert created.status_code == 201, created.text
    game_id = created.json()["game"]["id"]
    joined = gus.post(f"/api/games/{game_id}/join", {"name": "Gus"})
    assert joined.status_code == 200, joined.text
    return game_id, created.json()["token"], joined.json()["token"]


def chat(ws: ClientConnection, text: str) -> int:
    ws.send(json.dumps({"type": "chat", "text": text}))
    said = until(ws, lambda m: m["type"] == "chat" and not m["history"] and m["messages"][-1]["text"] == text)
    return int(said["messages"][-1]["number"])


@pytest.mark.slow
def test_the_command_lines_actions_reach_a_running_server(servers: Servers, tmp_path: Path) -> None:
    server: ServeProcess = servers.one(tmp_path / "site")
    bob = Browser(server.url).signup("Bob")
    gus = Browser(server.url)
    game_id, bob_token, gus_token = two_person_game(bob, gus)
    with bob.socket(game_id) as bob_ws, gus.socket(game_id) as gus_ws:
        hello(bob_ws, bob_token)
        hello(gus_ws, gus_token)
        check_cli_actions(server, bob, gus, game_id, bob_ws, gus_ws)
    log = cli("audit", data_dir=server.directory)
    assert [line.split(" (cli) ")[1].split()[0] for line in log.stdout.splitlines()] == [
        "end-game",
        "ban",
        "hide-message",
    ]
    assert all(" command line (cli) " in line for line in log.stdout.splitlines())


def check_cli_actions(
    server: ServeProcess,
    bob: Browser,
    gus: Browser,
    game_id: str,
    bob_ws: ClientConnection,
    gus_ws: ClientConnection,
) -> None:
    number = chat(bob_ws, "a message to hide")
    until(gus_ws, lambda m: m["type"] == "chat" and m["messages"][-1]["number"] == number)
    data = server.directory
    hidden = cli("hide-message", "--reason", "rude", "--", f"{game_id}:{number}", data_dir=data)
    assert hidden.returncode == 0, hidden.stderr
    assert until(gus_ws, lambda m: m["type"] == "chat_removed")["numbers"] == [number]
    assert gus.http.get(f"/api/games/{game_id}/chat").json()["messages"] == []
    banned = cli("ban", "bob", "--reason", "spam in the chat", data_dir=data)
    assert banned.returncode == 0 and "Bob is banned" in banned.stdout, banned.stderr
    assert until(bob_ws, lambda m: m["type"] == "error")["error"] == "banned"
    assert closed_with(bob_ws) == 4401
    assert bob.http.get("/api/account").json()["user"] is None  # its session ended at once
    seat = until(gus_ws, lambda m: m["type"] == "state" and m["state"]["game"]["seats"][0]["resigned"])
    assert seat["state"]["game"]["seats"][0]["away"]  # the takeover bot plays it
    ended = cli("end-game", "--reason", "moderator test", "--", game_id, data_dir=data)
    assert ended.returncode == 0, ended.stderr
    stopped = until(gus_ws, lambda m: m["type"] == "state" and m["state"]["game"]["status"] == "stopped")
    assert stopped["state"]["game"]["stop_reason"] == "moderator test"


@pytest.mark.slow
def test_the_command_line_and_the_page_reach_every_process_of_a_cluster(
    servers: Servers, tmp_path: Path
) -> None:
    url = require_postgresql()
    cluster = servers.cluster(tmp_path / "cluster", url, size=2)
    a, b = cluster.servers
    bob = Browser(a.url).signup("Bob")
    gus = Browser(b.url)
    game_id, bob_token, gus_token = two_person_game(bob, gus)
    with bob.socket(game_id) as bob_ws, gus.socket(game_id) as gus_ws:
        hello(bob_ws, bob_token)
        hello(gus_ws, gus_token)
        check_cluster(cluster, url, game_id, bob_ws, gus_ws)


def check_cluster(
    cluster: Any, url: str, game_id: str, bob_ws: ClientConnection, gus_ws: ClientConnection
) -> None:
    a, b = cluster.servers
    until(gus_ws, lambda m: m["type"] == "state" and m["state"]["you"] == 1)
    made = cli("create-admin", "Root", "--password-file", "-", url=url, stdin=PASSWORD + "\n")
    assert made.returncode == 0, made.stderr
    root = Browser(b.url)
    assert root.post("/api/account/login", {"name": "Root", "password": PASSWORD}).status_code == 200
    # a ban on process b closes Bob's socket on process a
    assert root.post("/api/admin/players/Bob/ban", {"reason": "spam"}).status_code == 200
    assert until(bob_ws, lambda m: m["type"] == "error")["error"] == "banned"
    assert closed_with(bob_ws) == 4401
    # the command line on PostgreSQL ends the game for the watchers of either process
    # "--" as an operator would write it for an id of a game made before ids never began with "-"
    ended = cli("end-game", "--reason", "cluster test", "--", game_id, url=url)
    assert ended.returncode == 0, ended.stderr
    stopped = until(gus_ws, lambda m: m["type"] == "state" and m["state"]["game"]["status"] == "stopped")
    assert stopped["state"]["game"]["stop_reason"] == "cluster test"
    for server in (a, b):  # the process without the socket learns it from the events (polled)
        deadline = time.monotonic() + 30
        status = ""
        while time.monotonic() < deadline:
            status = httpx.get(f"{server.url}/api/games/{game_id}").json()["game"]["status"]
            if status == "stopped":
                break
            time.sleep(0.1)
        assert status == "stopped", f"{server.url} still says {status!r}"


def test_a_new_game_id_never_begins_with_a_dash(monkeypatch: pytest.MonkeyPatch) -> None:
    """A game id beginning with '-' (one in 64 of ``token_urlsafe``) was taken for an option by
    ``coloretto admin end-game ID``: such a draw is drawn again."""
    from coloretto.web.storage import games as games_store

    draws = iter(["-Ab3_xyz", "--Zq9k0w", "Qw-_9kLm"])
    monkeypatch.setattr(games_store.secrets, "token_urlsafe", lambda size: next(draws))
    assert games_store.new_game_id() == "Qw-_9kLm"
