"""How soon a moderator's ban reaches the banned player: from the admin page, and from the command line.

Starts ``coloretto serve`` on a new SQLite data directory, makes an administrator (``coloretto admin
promote``), then, ``--runs`` times for each way, signs a new player up, seats them at a game against
a bot with their WebSocket open, bans them, and times:

- **page**: the admin page's ``POST /api/admin/players/NAME/ban``, from the request to its answer,
  and to the banned player's socket being closed by the server (code 4401): the process that made
  the ban acts on it before it answers;
- **cli**: ``coloretto admin ban NAME`` run as an operator runs it (a process of its own, on the same
  database): its run (start to exit: mostly Python's start-up and the package's imports), its start
  to the socket being closed, and the ban's time as the command stored it (its moderation event) to
  the socket being closed: the server reads the moderation events table every ``moderation_poll``
  (1 s), so about half a second on average and at most a second and the read's time.

It prints each figure's median and maximum. This is a benchmark, run by hand; nothing here is a test.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NoReturn

import httpx
from sqlalchemy import select
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect

from coloretto.tools.serve_process import ServeProcess
from coloretto.web.storage.db import open_database, sqlite_url
from coloretto.web.storage.rows import ModerationEventRow
from coloretto.web.table.live import aware

PASSWORD = "a benchmark's password"
#: a hang guard: what is waited for comes within seconds
DEADLINE = 60.0


class Parser(argparse.ArgumentParser):
    """Argument errors as one line, not the usage block and the error."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: {message}\n")


def positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a whole number, not {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"at least 1, not {value}")
    return value


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = Parser(
        prog="moderation_reach.py",
        description="Ban players from the admin page and from coloretto admin while their WebSocket is "
        "open, and time how soon the server closes it.",
    )
    parser.add_argument("--runs", type=positive, default=10, help="bans of each kind (default 10)")
    parser.add_argument("--json", metavar="FILE", type=Path, help="also write the figures to FILE as JSON")
    args = parser.parse_args(argv)
    if args.json is not None and not args.json.parent.is_dir():
        parser.error(f"--json: the folder {args.json.parent} does not exist")
    return args


class Browser:
    """A person's browser: cookies, the security token, a WebSocket to a table."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.http = httpx.Client(base_url=base, timeout=30)
        self.http.get("/api/account")

    def post(self, path: str, body: Any) -> httpx.Response:
        return self.http.post(path, json=body, headers={"X-CSRF-Token": self.http.cookies["coloretto_csrf"]})

    def signup(self, name: str) -> Browser:
        made = self.post("/api/account/signup", {"name": name, "password": PASSWORD})
        if made.status_code != 201:
            raise SystemExit(f"moderation_reach.py: the sign-up of {name} failed: {made.text}")
        return self

    @contextlib.contextmanager
    def seated(self) -> Iterator[ClientConnection]:
        """A game against a random bot, this person at seat 1: the table's socket, its hello said."""
        body = {"seats": [{"kind": "human"}, {"kind": "bot", "bot": "random"}], "creator_name": "x"}
        made = self.post("/api/games", body).json()
        cookies = "; ".join(f"{k}={v}" for k, v in self.http.cookies.items())
        with connect(
            f"{self.base.replace('http://', 'ws://')}/api/games/{made['game']['id']}/ws",
            additional_headers={"Cookie": cookies},
            proxy=None,
        ) as ws:
            ws.send(json.dumps({"type": "hello", "token": made["token"]}))
            while json.loads(ws.recv(timeout=DEADLINE))["type"] != "welcome":
                pass
            yield ws


def closed_at(ws: ClientConnection) -> float:
    """Read until the server closes the socket (code 4401): when, by ``time.perf_counter()``."""
    deadline = time.monotonic() + DEADLINE
    try:
        while time.monotonic() < deadline:
            ws.recv(timeout=deadline - time.monotonic())
    except ConnectionClosed as closed:
        at = time.perf_counter()
        if closed.rcvd is None or closed.rcvd.code != 4401:
            raise SystemExit(f"moderation_reach.py: the socket closed with {closed.rcvd}, not 4401") from None
        return at
    raise SystemExit("moderation_reach.py: the banned player's socket stayed open")


def admin_command(directory: Path, *args: str) -> subprocess.Popen[str]:
    """``coloretto admin …`` started in a process of its own, as an operator runs it."""
    return subprocess.Popen(
        [sys.executable, "-m", "coloretto", "admin", *args, "--data-dir", str(directory)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finished(command: subprocess.Popen[str]) -> float:
    """When the command exited (``time.perf_counter()``); a failure stops the benchmark."""
    _out, err = command.communicate(timeout=120)
    at = time.perf_counter()
    if command.returncode != 0:
        raise SystemExit(f"moderation_reach.py: coloretto admin failed: {err.strip()}")
    return at


def last_event_at(directory: Path) -> float:
    """When the newest moderation event was stored (the command's ban), on this machine's clock."""
    sessions = open_database(sqlite_url(directory))
    try:
        with sessions() as session:
            at = session.scalar(select(ModerationEventRow.at).order_by(ModerationEventRow.id.desc()).limit(1))
    finally:
        sessions.kw["bind"].dispose()
    if at is None:
        raise SystemExit("moderation_reach.py: the ban stored no moderation event")
    return aware(at).timestamp()


def summary(values: list[float]) -> dict[str, float]:
    return {"median_ms": statistics.median(values) * 1000, "max_ms": max(values) * 1000}


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="moderation-reach-") as folder:
        directory = Path(folder)
        server = ServeProcess(directory, args=("--signups-per-hour", "0")).start()
        try:
            root = Browser(server.url).signup("Root")
            finished(admin_command(directory, "promote", "Root"))
            answered, closed_page, cli_ran, cli_start_closed, closed_cli = [], [], [], [], []
            for run in range(args.runs):
                name = f"PagePlayer{run}"
                with Browser(server.url).signup(name).seated() as ws:
                    start = time.perf_counter()
                    banned = root.post(f"/api/admin/players/{name}/ban", {"reason": "a benchmark"})
                    answered.append(time.perf_counter() - start)
                    if banned.status_code != 200:
                        raise SystemExit(f"moderation_reach.py: the ban failed: {banned.text}")
                    closed_page.append(closed_at(ws) - start)
                name = f"CliPlayer{run}"
                with Browser(server.url).signup(name).seated() as ws:
                    start = time.perf_counter()
                    command = admin_command(directory, "ban", name, "--reason", "a benchmark")
                    closed = closed_at(ws)
                    closed_wall = time.time()
                    cli_ran.append(finished(command) - start)
                    stored = last_event_at(directory)
                    cli_start_closed.append(closed - start)
                    closed_cli.append(closed_wall - stored)
        finally:
            server.stop()
    figures = {
        "runs": args.runs,
        "page_answer": summary(answered),
        "page_socket_closed": summary(closed_page),
        "cli_command": summary(cli_ran),
        "cli_start_to_socket_closed": summary(cli_start_closed),
        "cli_stored_to_socket_closed": summary(closed_cli),
    }
    print(f"{args.runs} bans each way, one server on SQLite:")
    for key, label in (
        ("page_answer", "admin page: the ban's answer"),
        ("page_socket_closed", "admin page: request to the socket closed"),
        ("cli_command", "coloretto admin ban: the command's run"),
        ("cli_start_to_socket_closed", "coloretto admin ban: its start to the socket closed"),
        ("cli_stored_to_socket_closed", "coloretto admin ban: the ban stored to the socket closed"),
    ):
        median, most = figures[key]["median_ms"], figures[key]["max_ms"]
        print(f"  {label:<56} median {median:7.1f} ms, max {most:7.1f} ms")
    if args.json is not None:
        args.json.write_text(json.dumps(figures, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
