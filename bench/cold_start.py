#!/usr/bin/env python3
"""The first game with a searching bot on a fresh install: does the server stay responsive?

Issue 11's target: "The first game with a ``hard`` or ``expert`` bot on a fresh install:
``/api/health`` stays under 100 ms throughout", and issue 16's: the first move of any bot takes
at most 2 s. This script starts ``python3 -B -m coloretto serve`` on a new data directory as on a
fresh install: no bytecode is read or written (``-B``, ``PYTHONDONTWRITEBYTECODE`` for the bot
workers it spawns, and ``PYTHONPYCACHEPREFIX`` pointing at a new, empty folder), so every module
is compiled from source as the first time. The search kernel is a C extension built by the
install: it has no cache, and nothing of it compiles here. From the moment the server answers the
script polls ``GET /api/health`` every 20 ms on one keep-alive connection. At once it creates a
game of one person and two bots, plays the person's turns over the game's WebSocket (the first
legal action, at once) and waits for the first bot move, then for the bot workers to report warm
(``workers.ready == workers.processes``) and two more bot moves.

It prints when the server answered, when its workers were warm, when the first bot moved (from
the start and from the game's creation), and the latency of every health request over the whole
run: p50, p99, max, how many, and whether the max stayed under 100 ms. ``--json FILE`` writes the
same figures. It exits 1 if the empty bytecode folder was written to (the run was not cold).

On a small shared machine a slow answer may be the machine's, not the server's: the same poll
goes, all along, to a control, a bare asyncio responder in a process of its own that does
nothing else. A spike in both at once is the machine (CPU taken by other processes); a spike
in the server's alone is the server.

The script imports nothing from coloretto, so it measures whichever coloretto the server
imports: run it with ``PYTHONPATH=/some/worktree`` to measure another version. A server whose
``/api/health`` has no ``workers`` (one that ran bots in its own process) counts as warm at its
first bot move.

This is a benchmark, run by hand on a quiet machine; nothing here is a test.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

BOTS = ("hard", "expert")
#: start to start of two health requests
POLL_INTERVAL = 0.020
#: the issue's target for the slowest health request
TARGET_MS = 100.0
#: bot moves to see after the first, once the workers are warm
MORE_BOT_MOVES = 2
PERSON_SEAT_NAME = "bench"


class Parser(argparse.ArgumentParser):
    """Argument errors as one line, not the usage block and the error."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: {message}\n")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = Parser(
        prog="cold_start.py",
        description="Start coloretto serve as on a fresh install (no bytecode cache), play the first game "
        "against two searching bots, and measure the first bot move and /api/health latency all along "
        "(targets: first move within 2 s of the game, health max under 100 ms).",
    )
    parser.add_argument(
        "--bot", default="hard", choices=BOTS, help="the bots' difficulty level (default hard)"
    )
    parser.add_argument("--json", metavar="FILE", help="also write the figures to FILE as JSON")
    parser.add_argument(
        "--timeout",
        type=float,
        default=300.0,
        metavar="SECONDS",
        help="give up after this long (a hang guard; default 300)",
    )
    args = parser.parse_args(argv)
    if not args.timeout > 0:
        parser.error(f"--timeout must be > 0 seconds, not {args.timeout:g}")
    if args.json is not None:
        folder = Path(args.json).resolve().parent
        if not folder.is_dir():
            parser.error(f"--json {args.json}: the folder {folder} does not exist")
    return args


class BenchError(Exception):
    """The run could not be measured (the server did not start, a hang guard ran out)."""


# ---------------------------------------------------------------- /api/health


@dataclass
class HealthPoller:
    """Polls ``/api/health`` on its own thread, so that the game client's work never delays a
    request; one ``httpx.Client`` keeps one connection open, as a monitor would."""

    url: str
    name: str  #: of the thread
    started: float  #: time.monotonic() when the server was started
    timeout: float
    #: (seconds since start, latency in seconds) of every answered request after the first
    samples: list[tuple[float, float]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    answered_at: float | None = None  #: seconds from start to the first answer
    warm_at: float | None = None  #: seconds from start to workers.ready == workers.processes
    workers_reported: bool | None = None  #: whether /api/health has "workers" (None: no answer yet)
    workers: dict[str, Any] | None = None  #: the last "workers" seen
    answered: threading.Event = field(default_factory=threading.Event)
    warm: threading.Event = field(default_factory=threading.Event)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=self.timeout)

    def _run(self) -> None:
        import httpx

        with httpx.Client(base_url=self.url, timeout=self.timeout) as client:
            next_at = time.monotonic()
            while not self._stop.is_set():
                sent = time.monotonic()
                try:
                    response = client.get("/api/health")
                    response.raise_for_status()
                    body = response.json()
                except httpx.HTTPError as exc:
                    # Before the first answer the server is still starting: not an error.
                    if self.answered_at is not None:
                        self.errors.append(f"{sent - self.started:.2f} s: {type(exc).__name__}: {exc}")
                else:
                    self._record(sent, time.monotonic(), body)
                next_at += POLL_INTERVAL
                delay = next_at - time.monotonic()
                if delay > 0:
                    self._stop.wait(delay)
                else:  # a slow answer: the next request goes at once, the schedule starts again
                    next_at = time.monotonic()

    def _record(self, sent: float, received: float, body: dict[str, Any]) -> None:
        if self.answered_at is None:
            # The first request waited for the server to listen, not on it: timing starts here.
            self.answered_at = received - self.started
            self.answered.set()
        else:
            self.samples.append((sent - self.started, received - sent))
        workers = body.get("workers")
        self.workers_reported = isinstance(workers, dict)
        if isinstance(workers, dict):
            self.workers = workers
            processes, ready = workers.get("processes"), workers.get("ready")
            if self.warm_at is None and isinstance(processes, int) and processes > 0 and ready == processes:
                self.warm_at = received - self.started
                self.warm.set()


# ---------------------------------------------------------------- the control

#: the control: answers every request on a connection at once, and does nothing else
CONTROL_SERVER = r"""
import asyncio

ANSWER = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 11\r\n\r\n{\"ok\":true}"


class Control(asyncio.Protocol):
    def connection_made(self, transport):
        self.transport, self.buffer = transport, b""

    def data_received(self, data):
        self.buffer += data
        while b"\r\n\r\n" in self.buffer:
            _, self.buffer = self.buffer.split(b"\r\n\r\n", 1)
            self.transport.write(ANSWER)


async def main():
    server = await asyncio.get_running_loop().create_server(Control, "127.0.0.1", 0)
    print(server.sockets[0].getsockname()[1], flush=True)
    await server.serve_forever()


asyncio.run(main())
"""


class ControlServer:
    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", CONTROL_SERVER],
            stdout=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            text=True,
        )
        assert self.process.stdout is not None
        line = self.process.stdout.readline()  # its port, then it writes nothing more
        if not line.strip().isdigit():
            self.stop()
            raise BenchError("the control server did not start")
        self.url = f"http://127.0.0.1:{int(line)}"

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=10)


# ---------------------------------------------------------------- the server


class Server:
    """``python3 -B -m coloretto serve --port 0`` on a new data directory, reading and writing no
    bytecode (an empty ``PYTHONPYCACHEPREFIX``).

    It runs in the temporary folder, not here: ``python -m`` puts the working directory first
    on ``sys.path``, which would import the checkout's coloretto whatever ``PYTHONPATH`` says."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.data_dir = root / "data"
        self.pycache = root / "pycache"
        self.pycache.mkdir()
        # -B covers the server; the variable covers the bot workers it spawns too
        self.env = {**os.environ, "PYTHONPYCACHEPREFIX": str(self.pycache), "PYTHONDONTWRITEBYTECODE": "1"}
        self.stdout_path = root / "server.out"
        self.stderr_path = root / "server.err"
        self.process: subprocess.Popen[bytes] | None = None

    def coloretto_imported(self) -> str:
        """Where the server's ``import coloretto`` finds the package (the version measured)."""
        found = subprocess.run(
            [sys.executable, "-B", "-c", "import coloretto; print(coloretto.__file__)"],
            cwd=self.root, env=self.env, capture_output=True, text=True, check=False,
        )  # fmt: skip
        if found.returncode != 0:
            raise BenchError(f"the server cannot import coloretto: {found.stderr.strip().splitlines()[-1:]}")
        return str(Path(found.stdout.strip()).parent)

    def start(self) -> None:
        command = [
            sys.executable, "-B", "-m", "coloretto", "serve", "--host", "127.0.0.1", "--port", "0",
            "--data-dir", str(self.data_dir),
            # One client polls 50 times a second: the per-address limits would refuse it.
            "--requests-per-minute", "0", "--creations-per-minute", "0",
        ]  # fmt: skip
        # Output goes to files: a pipe nobody reads would block the server once full.
        with self.stdout_path.open("wb") as out, self.stderr_path.open("wb") as err:
            self.process = subprocess.Popen(
                command, cwd=self.root, env=self.env, stdout=out, stderr=err,
                stdin=subprocess.DEVNULL, start_new_session=True,
            )  # fmt: skip

    async def address(self, deadline: float) -> str:
        """The address it prints once its socket is bound."""
        assert self.process is not None
        while time.monotonic() < deadline:
            for word in self.stdout_path.read_text(errors="replace").split():
                if word.startswith("http://"):
                    return word.rstrip("/")
            if self.process.poll() is not None:
                raise BenchError(f"the server did not start: {self.last_error_line()}")
            await asyncio.sleep(0.02)
        raise BenchError("the server printed no address in time")

    def last_error_line(self) -> str:
        lines = [line for line in self.stderr_path.read_text(errors="replace").splitlines() if line.strip()]
        assert self.process is not None
        return lines[-1].strip() if lines else f"exit status {self.process.returncode}"

    def cache_files(self) -> int:
        return sum(1 for path in self.pycache.rglob("*") if path.is_file())

    def stop(self) -> None:
        """SIGTERM, then SIGKILL to its session (its bot workers) if it does not stop in time."""
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=15)


# ---------------------------------------------------------------- the game


@dataclass
class GameClient:
    """The person of the game: creates it, takes the seat over the WebSocket, plays the first
    legal action whenever it is their turn, and notes when each bot move is seen."""

    url: str
    bot: str
    started: float
    game_id: str = ""
    seat: int = -1
    token: str = ""
    bot_seats: set[int] = field(default_factory=set)
    bot_moves: list[float] = field(default_factory=list)  #: seconds from start to each bot move seen
    person_moves: int = 0
    _seen_numbers: set[int] = field(default_factory=set)
    _acted_at: int = -1

    async def create(self) -> None:
        import httpx

        seats = [{"kind": "human"}, {"kind": "bot", "bot": self.bot}, {"kind": "bot", "bot": self.bot}]
        body = {"name": "cold start", "seats": seats, "creator_name": PERSON_SEAT_NAME}
        async with httpx.AsyncClient(base_url=self.url, timeout=60) as client:
            response = await client.post("/api/games", json=body)
        if response.status_code != 201:
            raise BenchError(f"creating the game answered {response.status_code}: {response.text[:300]}")
        created = response.json()
        self.game_id = created["game"]["id"]
        self.seat = created["seat"]
        self.token = created["token"]
        self.bot_seats = {s["seat"] for s in created["game"]["seats"] if s["kind"] == "bot"}

    async def play(self, done: asyncio.Event, deadline: float) -> None:
        """Play until ``done`` is set, reading every message."""
        import websockets

        ws_url = "ws" + self.url.removeprefix("http") + f"/api/games/{self.game_id}/ws"
        async with websockets.connect(ws_url, max_size=None) as ws:
            await ws.send(json.dumps({"type": "hello", "token": self.token}))
            while not done.is_set():
                if time.monotonic() > deadline:
                    raise BenchError(f"hang guard: only {len(self.bot_moves)} bot moves seen in time")
                try:
                    text = await asyncio.wait_for(ws.recv(), timeout=0.1)
                except TimeoutError:
                    continue
                message = json.loads(text)
                if message.get("type") == "error":
                    raise BenchError(f"the server sent an error: {message}")
                if message.get("type") == "state":
                    await self._on_state(ws, message["state"])

    async def _on_state(self, ws: Any, state: dict[str, Any]) -> None:
        now = time.monotonic() - self.started
        for entry in state.get("log", []):
            number = entry["number"]
            if number in self._seen_numbers:
                continue
            self._seen_numbers.add(number)
            if entry["seat"] in self.bot_seats:
                self.bot_moves.append(now)
        number = state["move_number"]
        mine = state.get("you") == self.seat and state["to_move"] == self.seat and state["legal"]
        if mine and self._acted_at != number:  # one action per position: the state after it comes next
            self._acted_at = number
            self.person_moves += 1
            await ws.send(json.dumps({"type": "act", "action": state["legal"][0], "move": number}))


# ---------------------------------------------------------------- the run


def percentile(sorted_values: list[float], fraction: float) -> float:
    """Nearest rank: the smallest value with at least ``fraction`` of them at or below it."""
    rank = max(1, math.ceil(len(sorted_values) * fraction))
    return sorted_values[rank - 1]


def latency_figures(poller: HealthPoller) -> dict[str, Any]:
    latencies = sorted(latency * 1000 for _, latency in poller.samples)
    if not latencies:
        raise BenchError(f"{poller.name}: no request answered after the first")
    slowest = sorted(poller.samples, key=lambda sample: sample[1], reverse=True)[:5]
    return {
        "count": len(latencies),
        "errors": poller.errors,
        "p50_ms": round(percentile(latencies, 0.50), 2),
        "p99_ms": round(percentile(latencies, 0.99), 2),
        "max_ms": round(latencies[-1], 2),
        "max_at_s": round(slowest[0][0], 3),
        "over_100ms": sum(1 for latency in latencies if latency >= TARGET_MS),
        #: (seconds since start, ms): when the worst answers were asked
        "slowest": [(round(at, 3), round(latency * 1000, 1)) for at, latency in slowest],
    }


def unshared_spikes(poller: HealthPoller, control: HealthPoller) -> list[tuple[float, float]]:
    """The server's answers of TARGET_MS or more that no control request overlapping them in time
    shared (took at least half as long): (seconds since start, ms)."""
    unshared = []
    for at, latency in poller.samples:
        if latency * 1000 < TARGET_MS:
            continue
        shared = any(
            other_at < at + latency and at < other_at + other and other >= latency / 2
            for other_at, other in control.samples
        )
        if not shared:
            unshared.append((round(at, 3), round(latency * 1000, 1)))
    return unshared


async def measure(bot: str, timeout: float) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="coloretto-cold-start-") as folder:
        server = Server(Path(folder))
        coloretto_path = server.coloretto_imported()
        cache_files_before = server.cache_files()
        control = ControlServer()
        started = time.monotonic()
        deadline = started + timeout
        poller: HealthPoller | None = None
        control_poller = HealthPoller(control.url, "control-poller", started, timeout)
        try:
            server.start()
            url = await server.address(deadline)
            poller = HealthPoller(url, "health-poller", started, timeout)
            poller.start()
            while not poller.answered.is_set():
                if server.process is not None and server.process.poll() is not None:
                    raise BenchError(f"the server stopped: {server.last_error_line()}")
                if time.monotonic() > deadline:
                    raise BenchError("hang guard: the server never answered /api/health")
                await asyncio.sleep(0.005)
            control_poller.start()
            client = GameClient(url, bot, started)
            await client.create()
            created_at = time.monotonic() - started
            done = asyncio.Event()

            async def watch() -> None:
                """Done once warm and MORE_BOT_MOVES bot moves after the first were seen."""
                assert poller is not None
                while True:
                    warm = poller.warm.is_set() or (poller.workers_reported is False and client.bot_moves)
                    if warm and len(client.bot_moves) >= 1 + MORE_BOT_MOVES:
                        done.set()
                        return
                    await asyncio.sleep(0.02)

            watcher = asyncio.create_task(watch())
            try:
                await client.play(done, deadline)
            finally:
                watcher.cancel()
        finally:
            if poller is not None:
                poller.stop()
            control_poller.stop()
            control.stop()
            server.stop()
        cache_files_after = server.cache_files()

    assert poller.answered_at is not None
    health = latency_figures(poller)
    first_bot_move = client.bot_moves[0]
    warm_at = poller.warm_at if poller.workers_reported else first_bot_move
    return {
        "bot": bot,
        "coloretto": coloretto_path,
        "workers_in_health": bool(poller.workers_reported),
        "workers": poller.workers,
        "answered_s": round(poller.answered_at, 3),
        "warm_s": round(warm_at, 3) if warm_at is not None else None,
        "game_created_s": round(created_at, 3),
        "first_bot_move_s": round(first_bot_move, 3),
        #: from the game's creation (the server's bot delay, 0.8 s by default, included)
        "first_bot_move_after_creation_s": round(first_bot_move - created_at, 3),
        "bot_moves_s": [round(t, 3) for t in client.bot_moves],
        "person_moves": client.person_moves,
        "health": health,
        "under_100ms": health["max_ms"] < TARGET_MS and not poller.errors,
        "control": latency_figures(control_poller),
        #: the server's answers of 100 ms or more while the control answered in time: the server's own
        "over_100ms_not_in_control": unshared_spikes(poller, control_poller),
        #: files in the empty bytecode folder before and after: 0 and 0 in a cold run
        "pycache_files_before": cache_files_before,
        "pycache_files_written": cache_files_after - cache_files_before,
    }


def latency_line(figures: dict[str, Any]) -> str:
    return (
        f"{figures['count']} requests: p50 {figures['p50_ms']:.1f} ms, p99 {figures['p99_ms']:.1f} ms, "
        f"max {figures['max_ms']:.1f} ms (at {figures['max_at_s']:.2f} s), "
        f"{figures['over_100ms']} at 100 ms or more, {len(figures['errors'])} errors"
    )


def slowest_line(figures: dict[str, Any]) -> str:
    return ", ".join(f"{ms:.0f} ms at {at:.2f} s" for at, ms in figures["slowest"])


def verdict(result: dict[str, Any]) -> str:
    if result["under_100ms"]:
        return "yes"
    unshared = result["over_100ms_not_in_control"]
    if result["health"]["errors"] or unshared:
        return (
            f"NO: {len(unshared)} of its slow answers the control did not share (the server's, or bad luck)"
        )
    return "NO, but the control was as slow at each of those moments (the machine's CPU, not the server)"


def report(result: dict[str, Any]) -> str:
    health, control = result["health"], result["control"]
    warm_note = (
        f"(workers {result['workers']['ready']}/{result['workers']['processes']})"
        if result["workers_in_health"]
        else "(no workers in /api/health: counted as warm at the first bot move)"
    )
    cache = result["pycache_files_before"] + result["pycache_files_written"]
    cache_note = (
        "empty all along: every module was compiled from source, none read from a cache"
        if cache == 0
        else f"{cache} files in it: the run was NOT cold"
    )
    lines = [
        f"coloretto from {result['coloretto']}; bots: two {result['bot']}",
        f"server answered      {result['answered_s']:7.2f} s after start",
        f"bot workers warm     {result['warm_s']:7.2f} s  {warm_note}",
        f"first bot move       {result['first_bot_move_s']:7.2f} s  "
        f"({result['first_bot_move_after_creation_s']:.2f} s after the game was created, "
        "the server's bot delay included)",
        "bot moves seen       " + ", ".join(f"{t:.2f}" for t in result["bot_moves_s"]) + " s",
        f"/api/health          {latency_line(health)}",
        f"  slowest            {slowest_line(health)}",
        f"max under 100 ms     {verdict(result)}",
        f"control (the machine) {latency_line(control)}",
        f"  slowest            {slowest_line(control)}",
        f"bytecode cache       {cache_note}",
    ]
    lines += [f"  health error: {error}" for error in health["errors"][:5]]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        result = asyncio.run(measure(args.bot, args.timeout))
    except BenchError as exc:
        print(f"cold_start.py: {exc}", file=sys.stderr)
        return 1
    print(report(result))
    if args.json is not None:
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n")
    return 0 if result["pycache_files_before"] + result["pycache_files_written"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
