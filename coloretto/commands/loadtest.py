"""``coloretto loadtest``: many games at once over real WebSockets, and how the server held up.

Each game has one person seat, played by this tool over the game's WebSocket
as soon as it is that seat's turn (a random legal action, ``move`` set), and
bots that the server moves at its bot delay. The tool measures the time from
sending an ``act`` to receiving the state that holds that move, the moves
accepted per second (every move seen in the states, the bots' included),
every server's ``/api/health`` polled ten times a second, every error (a state
older than one the client already saw among them), and, for the servers it
started itself, each one's CPU time and memory.

The games are spread round robin over one or more servers: several ``--url``
(several processes, or one nginx), or ``--processes N`` servers the tool
starts on one PostgreSQL database and one Redis. ``--watch-elsewhere`` sends
each game's WebSocket to another server than the one that created it, so every
state a client sees crossed processes. ``--kill-after`` SIGKILLs the first
started server mid-run and reports how long its games took to move again,
whether the person clients reconnected by themselves (to another server), and
whether any move a client was shown is missing from the database afterwards.

Traffic goes to loopback only, the run lasts ``--duration`` seconds, and the
servers the tool started are stopped and their directory removed at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import os
import random
import resource
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from coloretto.commands import CommandError
from coloretto.commands.options import bot_delay, check_output_file, finite_number, path_arg, seed_arg

LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")
#: HTTP requests in flight at once while games are created: a real lobby does not get hundreds at once
CREATE_CONCURRENCY = 16
SERVER_START_TIMEOUT = 120.0
RECONNECT_PAUSE = 0.5
#: a game in play with no move for this long (or ten bot delays) at the end counts as an error
STALL_SECONDS = 10.0
#: errors in a row on one table (no move accepted in between) before its client gives that game up
MAX_ERRORS_IN_A_ROW = 20
#: how often every server's /api/health is asked
HEALTH_EVERY = 0.1
MAX_PROCESSES = 16
#: game ids per query when the acknowledged moves are looked up in the database
IDS_PER_QUERY = 500


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "loadtest",
        help="load a game server: N games over real WebSockets, latency and throughput",
        description="Play N games at once against game servers (coloretto serve), one person seat "
        "per game played by this tool over the game's WebSocket, the other seats bots. Prints the "
        "time from action to state broadcast (percentiles), moves per second, /api/health latency, "
        "errors, and each server's CPU and memory when the tool started the servers. Without --url "
        "it starts its own server (coloretto serve --port 0) in a temporary directory, or "
        "--processes N of them on one PostgreSQL database and one Redis. Only loopback addresses "
        "are allowed. Exit status 1 when any error was seen.",
    )
    where = parser.add_mutually_exclusive_group()
    where.add_argument(
        "--url",
        action="append",
        default=None,
        help="a running server on this machine, e.g. http://127.0.0.1:8000; repeat it for several "
        "processes (the games are spread over them round robin)",
    )
    where.add_argument(
        "--serve",
        action="store_true",
        help="start the servers for the run (the default without --url), without the limits per "
        "client address (every client of the test is one address), and stop them at the end",
    )
    parser.add_argument(
        "--processes",
        type=int,
        default=None,
        metavar="N",
        help="start N server processes (default 1); 2 or more need --database-url and --redis-url",
    )
    parser.add_argument(
        "--database-url",
        default=None,
        metavar="URL",
        help="the started servers' database, e.g. postgresql://user:pw@127.0.0.1/coloretto (default: "
        "SQLite in the temporary directory), best one of its own: the servers resume every unfinished "
        "game in it; with --url, the given servers' database, for the check that every move a client "
        "was shown is stored",
    )
    parser.add_argument(
        "--redis-url",
        default=None,
        metavar="URL",
        help="the Redis the started servers share, e.g. redis://127.0.0.1:6379/0",
    )
    parser.add_argument(
        "--kill-after",
        type=finite_number,
        default=None,
        metavar="SECONDS",
        help="SIGKILL the first started server this long into the measured time (needs --processes "
        "2 or more) and report how its games went on in the others",
    )
    parser.add_argument(
        "--watch-elsewhere",
        action="store_true",
        help="each game's WebSocket goes to the next server, not the one that created the game "
        "(needs two or more servers)",
    )
    parser.add_argument("--games", type=int, default=50, help="games played at once (default 50)")
    parser.add_argument(
        "--bots", type=int, default=3, help="bot seats per game, besides the person's (1-4, default 3)"
    )
    parser.add_argument("--bot", default="easy", help="the bots' name or difficulty (default easy)")
    parser.add_argument(
        "--bot-delay",
        type=bot_delay,
        default=None,
        metavar="SECONDS",
        help="the started servers' bot delay (default 0.8, as coloretto serve); not with --url",
    )
    parser.add_argument(
        "--duration",
        type=finite_number,
        default=30.0,
        metavar="SECONDS",
        help="measured time (default 30)",
    )
    parser.add_argument(
        "--message-rate",
        type=finite_number,
        default=None,
        metavar="N",
        help="the started servers' WebSocket message rate per client (default 1000, so that the "
        "limit does not throttle the test; with --soak the server's own default, 10, as people "
        "meet it); with --url the client keeps to the server's own limit",
    )
    parser.add_argument(
        "--server-arg",
        action="append",
        default=[],
        metavar="ARG",
        help="one more argument for the started servers' coloretto serve (repeatable), "
        "e.g. --server-arg=--hint-budget=0.5",
    )
    soak = parser.add_argument_group(
        "soak test",
        "--soak plays --games whole games to their end instead of measuring for --duration: tables "
        "with one to three people played by this tool and bots, rules drawn from every rule option, "
        "people who act at once, twice on the same move, over HTTP, and drop their connection now "
        "and then; it reports every game that stalled (no move for --stall-after seconds while "
        "unfinished) with its last moves. Exit status 1 when a game stalled or an error was seen.",
    )
    soak.add_argument(
        "--soak", action="store_true", help="play whole games to their end and count the stalls"
    )
    soak.add_argument(
        "--at-once", type=int, default=40, metavar="N", help="tables in play at once (default 40)"
    )
    soak.add_argument(
        "--stall-after",
        type=finite_number,
        default=10.0,
        metavar="SECONDS",
        help="a table with no new move for this long is stalled (default 10)",
    )
    soak.add_argument(
        "--bot-delay-jitter",
        type=bot_delay,
        default=None,
        metavar="SECONDS",
        help="the started servers' bots wait a further random 0 to SECONDS (default 0.2 with "
        "--soak, when the bot delay is 0 unless given; 0 otherwise)",
    )
    parser.add_argument("--seed", type=seed_arg, default=1, help="seed of the person clients' choices")
    parser.add_argument("--json", type=path_arg, default=None, metavar="FILE", help="also write the figures")
    parser.set_defaults(func=run)


# ---------------------------------------------------------------- figures


def percentile(sorted_values: list[float], p: float) -> float | None:
    """The nearest-rank percentile of values sorted in increasing order (None for none)."""
    if not sorted_values:
        return None
    rank = max(1, math.ceil(p / 100 * len(sorted_values)))
    return sorted_values[rank - 1]


def latency_figures(samples_s: list[float], points: tuple[int, ...]) -> dict[str, Any]:
    values = sorted(samples_s)
    figures: dict[str, Any] = {"count": len(values)}
    for p in points:
        value = percentile(values, p)
        figures[f"p{p}"] = None if value is None else round(value * 1000, 2)
    figures["max"] = round(values[-1] * 1000, 2) if values else None
    return figures


@dataclass
class ServerUsage:
    cpu_seconds: float
    peak_rss_bytes: int
    rss_bytes: int
    processes: int


@dataclass
class GameTrack:
    """One game as its person client saw it: the moves it was shown, for the database check and
    for the figures of a kill."""

    game_id: str
    home: str  #: the server that created it (and, by its lease, runs its bots)
    seat: int
    moves: dict[int, str] = field(default_factory=dict)  #: number -> notation, as shown to the client
    last_move: int = 0
    status: str = "playing"
    at_kill: int | None = None  #: its move number when its server was killed (a game of that server)
    resumed_after: float | None = None  #: seconds from the kill to its next move
    bots_resumed_after: float | None = None  #: seconds from the kill to its next bot move


@dataclass
class Load:
    """What every client of the run shares: where the servers are, the clock, and the counts."""

    urls: list[str]
    bots: int
    bot: str
    seed: int
    watch_elsewhere: bool = False
    messages_per_second: float = math.inf
    message_burst: int = 1
    window_start: float = math.inf  #: moves and latencies count from here on
    stopping: bool = False
    moves: int = 0
    person_moves: int = 0
    games_started: int = 0
    games_finished: int = 0
    reconnects: int = 0
    action_latencies: list[float] = field(default_factory=list)
    health_latencies: dict[str, list[float]] = field(default_factory=dict)
    processes_seen: dict[str, set[str]] = field(default_factory=dict)  #: URL -> bus process ids
    errors: Counter[str] = field(default_factory=Counter)
    games_wanted: int = 0  #: games that must be connected before the measured time begins
    ready: int = 0
    all_ready: asyncio.Event = field(default_factory=asyncio.Event)
    tracks: list[GameTrack] = field(default_factory=list)
    dead: set[str] = field(default_factory=set)  #: servers this tool killed
    killed_at: float | None = None
    disconnects_by_kill: int = 0  #: connections the kill broke or refused: expected, not errors
    clients_on_killed: set[int] = field(default_factory=set)  #: connected there, in play, at the kill
    clients_reconnected: set[int] = field(default_factory=set)  #: of those, back on another server

    @property
    def base_url(self) -> str:
        return self.urls[0]

    def measuring(self) -> bool:
        return not self.stopping and time.monotonic() >= self.window_start

    def error(self, url: str, label: str) -> None:
        """Counts an error, unless it came from a server this tool killed."""
        if url in self.dead:
            self.disconnects_by_kill += 1
        elif not self.stopping:
            self.errors[label] += 1

    def next_live(self, position: int) -> int:
        """The next server after ``position`` that is still running (``position`` itself if none)."""
        for step in range(1, len(self.urls) + 1):
            candidate = (position + step) % len(self.urls)
            if self.urls[candidate] not in self.dead:
                return candidate
        return position

    def live_from(self, position: int) -> int:
        """``position`` if that server still runs, else the next one that does."""
        return position if self.urls[position] not in self.dead else self.next_live(position)


def ws_base(url: str) -> str:
    return "ws" + url.removeprefix("http")


# ----------------------------------------------------------------- server


class StartedServer:
    """``coloretto serve --port 0`` in a subprocess, on a temporary data directory (or the
    database given) and, with ``redis_url``, as one of several processes."""

    def __init__(
        self,
        bot_delay: float,
        message_rate: float,
        extra: list[str],
        database_url: str | None = None,
        redis_url: str | None = None,
    ) -> None:
        self.directory = tempfile.TemporaryDirectory(prefix="coloretto-loadtest-")
        root = Path(self.directory.name)
        self.stdout_path = root / "server.out"
        self.stderr_path = root / "server.err"
        if database_url is None:
            from coloretto.web.storage.db import sqlite_url

            where = ["--data-dir", str(root / "data")]
            self.database_url = sqlite_url(root / "data")
        else:
            where = ["--database-url", database_url]
            self.database_url = database_url
        cluster = ["--redis-url", redis_url] if redis_url else []
        command = [
            sys.executable, "-m", "coloretto", "serve", "--host", "127.0.0.1", "--port", "0",
            *where, *cluster, "--bot-delay", str(bot_delay), "--message-rate", str(message_rate),
            # Every client of the test comes from one address: the limits per address would
            # measure themselves, not the server.
            "--creations-per-minute", "0", "--requests-per-minute", "0", *extra,
        ]  # fmt: skip
        # Output goes to files, not pipes: a pipe nobody reads would block the server once full.
        with self.stdout_path.open("wb") as out, self.stderr_path.open("wb") as err:
            self.process = subprocess.Popen(command, stdout=out, stderr=err, stdin=subprocess.DEVNULL)
        self.url = ""
        self.killed = False
        self.final_usage: ServerUsage | None = None  #: read just before it was killed
        self.left_behind: list[tuple[int, str]] = []  #: (pid, start time) of its children at the kill

    @property
    def pid(self) -> int:
        return self.process.pid

    async def wait_for_address(self) -> str:
        deadline = time.monotonic() + SERVER_START_TIMEOUT
        while time.monotonic() < deadline:
            text = self.stdout_path.read_text(errors="replace")
            for word in text.split():
                if word.startswith("http://"):
                    port = urlsplit(word).port
                    assert port is not None
                    await self._wait_for_listening(port, deadline)
                    self.url = f"http://127.0.0.1:{port}"
                    return self.url
            if self.process.poll() is not None:
                raise CommandError(f"the server did not start: {self._last_error_line()}")
            await asyncio.sleep(0.05)
        raise CommandError(f"the server printed no address within {SERVER_START_TIMEOUT:.0f} s")

    async def _wait_for_listening(self, port: int, deadline: float) -> None:
        """The address is printed once the socket is bound, a moment before the server listens."""
        while time.monotonic() < deadline:
            try:
                _, writer = await asyncio.open_connection("127.0.0.1", port)
            except OSError:
                if self.process.poll() is not None:
                    raise CommandError(f"the server did not start: {self._last_error_line()}") from None
                await asyncio.sleep(0.05)
                continue
            writer.close()
            return
        raise CommandError(f"the server did not listen within {SERVER_START_TIMEOUT:.0f} s")

    def _last_error_line(self) -> str:
        lines = [line for line in self.stderr_path.read_text(errors="replace").splitlines() if line.strip()]
        return lines[-1].strip() if lines else f"exit status {self.process.returncode}"

    def usage(self) -> ServerUsage:
        """CPU seconds (user + system), peak and current RSS of the server and the processes it
        started; what was read just before the kill for a killed server."""
        if self.killed:
            assert self.final_usage is not None
            return self.final_usage
        tick = os.sysconf("SC_CLK_TCK")
        tree = [self.process.pid, *_descendants(self.process.pid)]
        cpu = 0.0
        peak = 0
        rss = 0
        counted = 0
        for pid in tree:
            stat = _read(f"/proc/{pid}/stat")
            status = _read(f"/proc/{pid}/status")
            if stat is None or status is None:
                continue  # it ended meanwhile
            fields = stat.rsplit(")", 1)[1].split()
            # utime, stime, and the waited-for children's cutime, cstime (fields 14-17 of proc(5))
            cpu += sum(int(v) for v in fields[11:15]) / tick
            for line in status.splitlines():
                if line.startswith("VmHWM:"):
                    peak += int(line.split()[1]) * 1024
                elif line.startswith("VmRSS:"):
                    rss += int(line.split()[1]) * 1024
            counted += 1
        return ServerUsage(cpu, peak, rss, counted)

    def kill(self) -> None:
        """SIGKILL, as a machine that dies would: no shutdown code runs. Its worker processes are
        left to notice by themselves; :meth:`survivors` tells which did not."""
        self.final_usage = self.usage()
        self.left_behind = [(pid, start) for pid in _descendants(self.pid) if (start := _start_time(pid))]
        self.process.send_signal(signal.SIGKILL)
        self.killed = True
        self.process.wait()

    def survivors(self) -> list[int]:
        """The killed server's children still running now (not reaped zombies, not reused ids)."""
        return [pid for pid, start in self.left_behind if _start_time(pid) == start and not _zombie(pid)]

    def terminate(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)

    def stop(self) -> None:
        self.terminate()
        if self.process.poll() is None:
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        for pid in self.survivors():  # processes of ours that outlived their server
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        self.directory.cleanup()


def _read(path: str) -> str | None:
    try:
        return Path(path).read_text()
    except OSError:
        return None


def _start_time(pid: int) -> str | None:
    stat = _read(f"/proc/{pid}/stat")
    return None if stat is None else stat.rsplit(")", 1)[1].split()[19]


def _zombie(pid: int) -> bool:
    stat = _read(f"/proc/{pid}/stat")
    return stat is None or stat.rsplit(")", 1)[1].split()[0] == "Z"


def _descendants(root: int) -> list[int]:
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            stat = _read(f"/proc/{entry}/stat")
            if stat is not None:
                parents[int(entry)] = int(stat.rsplit(")", 1)[1].split()[1])
    found: list[int] = []
    frontier = [root]
    while frontier:
        parent = frontier.pop()
        children = [pid for pid, ppid in parents.items() if ppid == parent]
        found.extend(children)
        frontier.extend(children)
    return found


# ---------------------------------------------------------------- clients


class Refused(Exception):
    """The server refused to create a game for a reason that retrying will not change."""


async def create_game(
    load: Load, http: Any, index: int, gate: asyncio.Semaphore, client: PersonClient | None = None
) -> tuple[str, int, str] | None:
    """A game with the person's seat taken by its creator and bots in the others: it starts at once,
    so it never counts among the games waiting for players. Retries what may pass (429, 5xx, a
    server that does not answer: on the next server); None when the run ends first."""
    body = {
        "name": f"load test {index}",
        "seats": [{"kind": "human"}] + [{"kind": "bot", "bot": load.bot}] * load.bots,
        "creator_name": f"load {index}",
    }
    while not load.stopping:
        url = load.base_url if client is None else client.create_url()
        async with gate:
            try:
                response = await http.post(f"{url}/api/games", json=body)
            except Exception as exc:
                load.error(url, f"http {type(exc).__name__}")
                if client is not None:
                    client.create_at = load.next_live(client.create_at)
                await asyncio.sleep(RECONNECT_PAUSE if url in load.dead else 1.0)
                continue
        if response.status_code == 201:
            data = response.json()
            if client is not None:
                client.created_at_url = url
            return data["game"]["id"], int(data["seat"]), str(data["token"])
        code = _error_code(response)
        load.error(url, f"http {response.status_code} {code}")
        if response.status_code in (400, 403, 404, 409, 422):
            raise Refused(f"{response.status_code} {code}: {_error_message(response)}")
        await asyncio.sleep(_retry_after(response))
    return None


def _retry_after(response: Any) -> float:
    """The wait a 429 asks for (Retry-After, in seconds), kept within 1 to 10 s."""
    try:
        return min(10.0, max(1.0, float(response.headers.get("retry-after", 1))))
    except ValueError:
        return 1.0


def _error_code(response: Any) -> str:
    try:
        return str(response.json().get("error", "?"))
    except ValueError:
        return "?"


def _error_message(response: Any) -> str:
    try:
        return str(response.json().get("message", response.text))
    except ValueError:
        return str(response.text[:200])


class TokenBucket:
    """Keeps a client within the server's message limit (the same bucket, a little slower)."""

    def __init__(self, rate: float, burst: int) -> None:
        self.rate = rate * 0.9
        self.burst = float(max(1, burst - 1))
        self.allowance = self.burst
        self.last = time.monotonic()

    async def take(self) -> None:
        if math.isinf(self.rate):
            return
        while True:
            now = time.monotonic()
            self.allowance = min(self.burst, self.allowance + (now - self.last) * self.rate)
            self.last = now
            if self.allowance >= 1.0:
                self.allowance -= 1.0
                return
            await asyncio.sleep((1.0 - self.allowance) / self.rate)


class PersonClient:
    """One person seat: creates its game on its server, connects (to the next server with
    ``--watch-elsewhere``), takes its seat, and acts whenever it is its turn. A connection that
    drops is opened again on the next server still running, with the same token."""

    def __init__(self, load: Load, index: int, http: Any, gate: asyncio.Semaphore) -> None:
        self.load = load
        self.index = index
        self.http = http
        self.gate = gate
        self.rng = random.Random(load.seed * 1_000_003 + index)
        self.first = True
        self.last_progress = time.monotonic()  #: when this client last saw its game move on
        self.playing = False
        self.home = index % len(load.urls)
        self.create_at = self.home
        self.ws_at = self.home
        self.created_at_url = ""
        self.connected_url: str | None = None  #: the server of the open WebSocket
        self.track: GameTrack | None = None
        self.back_after_kill = False  #: dropped by the kill: the next state shows it reconnected

    def create_url(self) -> str:
        self.create_at = self.load.live_from(self.create_at)
        return self.load.urls[self.create_at]

    def ws_url(self) -> str:
        self.ws_at = self.load.live_from(self.ws_at)
        return self.load.urls[self.ws_at]

    async def run(self) -> None:
        import websockets

        load = self.load
        while not load.stopping:
            self.create_at = self.home
            created = await create_game(load, self.http, self.index, self.gate, self)
            if created is None:
                return
            game_id, seat, token = created
            self.track = track = GameTrack(game_id, self.created_at_url, seat)
            load.tracks.append(track)
            load.games_started += 1
            self.last_progress = time.monotonic()
            self.playing = True
            position = load.urls.index(self.created_at_url)
            self.ws_at = load.next_live(position) if load.watch_elsewhere else position
            finished = False
            errors_in_a_row = 0
            while not load.stopping and not finished and errors_in_a_row < MAX_ERRORS_IN_A_ROW:
                url = self.ws_url()
                try:
                    async with websockets.connect(
                        f"{ws_base(url)}/api/games/{game_id}/ws",
                        max_size=2**22,
                        open_timeout=20,
                        close_timeout=1,
                        ping_interval=None,
                    ) as ws:
                        self.connected_url = url
                        await ws.send(json.dumps({"type": "hello", "token": token}))
                        if self.first:
                            self.first = False
                            load.ready += 1
                            if load.ready >= load.games_wanted:
                                load.all_ready.set()
                        finished, errors_in_a_row = await self._play(ws, track, errors_in_a_row)
                except asyncio.CancelledError:
                    raise
                except Exception as exc:
                    if load.stopping:
                        break
                    load.error(url, _disconnect_label(exc))
                    if url in load.dead:
                        self.back_after_kill = self.index in load.clients_on_killed
                    load.reconnects += 1
                    # Any server accepts any client: carry on through the next one.
                    self.ws_at = load.next_live(self.ws_at)
                    await asyncio.sleep(RECONNECT_PAUSE)
                finally:
                    self.connected_url = None
            self.playing = False
            if finished:
                load.games_finished += 1
            elif errors_in_a_row >= MAX_ERRORS_IN_A_ROW:
                load.errors["gave up a game (errors in a row)"] += 1

    async def _play(self, ws: Any, track: GameTrack, errors_in_a_row: int) -> tuple[bool, int]:
        """Read the table's messages until the game ends; acts on its turns. Returns (finished,
        errors in a row)."""
        load = self.load
        bucket = TokenBucket(load.messages_per_second, load.message_burst)
        pending: tuple[int, float] | None = None  # (move number acted on, when the act was sent)
        state: dict[str, Any] | None = None
        retry_at: float | None = None
        seat = track.seat
        while True:
            timeout = None if retry_at is None else max(0.0, retry_at - time.monotonic())
            try:
                raw = await asyncio.wait_for(ws.recv(), timeout)
            except TimeoutError:
                retry_at = None
                pending = None
                if state is not None:
                    pending = await self._act(ws, bucket, seat, state)
                continue
            message = json.loads(raw)
            kind = message.get("type")
            if kind == "state":
                state = message["state"]
                self._saw(track, state)
                number = int(state["move_number"])
                if pending is not None and number > pending[0]:
                    # Only this seat can move while it is its turn: a later move number is its move.
                    if load.measuring() and pending[1] >= load.window_start:
                        load.action_latencies.append(time.monotonic() - pending[1])
                        load.person_moves += 1
                    pending = None
                    errors_in_a_row = 0
                if state["game"]["status"] == "finished":
                    return True, errors_in_a_row
                if pending is None and retry_at is None:
                    pending = await self._act(ws, bucket, seat, state)
            elif kind == "error":
                code = str(message.get("error", "?"))
                if not load.stopping:
                    load.errors[f"ws {code}"] += 1
                errors_in_a_row += 1
                if pending is not None:
                    pending = None
                    # The act was ignored or refused; a refusal for a changed table brings a new
                    # state, anything else would leave the seat waiting: try again shortly.
                    retry_at = time.monotonic() + (
                        1.0 / load.messages_per_second if code == "rate_limited" else 0.05
                    )
                if errors_in_a_row >= MAX_ERRORS_IN_A_ROW:
                    return False, errors_in_a_row
            elif kind == "bye":
                raise ConnectionError("the server said bye")

    def _saw(self, track: GameTrack, state: dict[str, Any]) -> None:
        """A state arrived: count its new moves, remember what was shown, check the order."""
        load = self.load
        now = time.monotonic()
        number = int(state["move_number"])
        track.status = str(state["game"]["status"])
        if self.back_after_kill:
            self.back_after_kill = False
            load.clients_reconnected.add(self.index)
        if number < track.last_move:
            # a server showed an older table than this client already saw: moves seem undone
            if not load.stopping:
                load.errors["states out of order (an older move number than one already seen)"] += 1
            return
        bot_moved = False
        for entry in reversed(state.get("log", [])):
            entry_number = int(entry["number"])
            if entry_number in track.moves:
                break
            track.moves[entry_number] = str(entry["move"])
            if (
                track.at_kill is not None
                and entry_number > track.at_kill
                and int(entry["seat"]) != track.seat
            ):
                bot_moved = True
        if number > track.last_move:
            self.last_progress = now
            if load.measuring():
                load.moves += number - track.last_move
            track.last_move = number
            if track.at_kill is not None and load.killed_at is not None and number > track.at_kill:
                if track.resumed_after is None:
                    track.resumed_after = now - load.killed_at
                if bot_moved and track.bots_resumed_after is None:
                    track.bots_resumed_after = now - load.killed_at

    async def _act(
        self, ws: Any, bucket: TokenBucket, seat: int, state: dict[str, Any]
    ) -> tuple[int, float] | None:
        if state.get("you") != seat or state.get("to_move") != seat or not state.get("legal"):
            return None
        if state["game"]["status"] != "playing" or self.load.stopping:
            return None
        action = self.rng.choice(state["legal"])
        await bucket.take()
        sent = time.monotonic()
        number = int(state["move_number"])
        await ws.send(json.dumps({"type": "act", "action": action, "move": number}))
        return number, sent


def _disconnect_label(exc: Exception) -> str:
    received = getattr(exc, "rcvd", None)
    if received is not None:
        return f"disconnect {received.code}"
    if getattr(exc, "rcvd_then_sent", None) is not None or type(exc).__name__.startswith("Connection"):
        return f"disconnect {type(exc).__name__}"
    return f"disconnect {type(exc).__name__}: {str(exc)[:60]}"


async def poll_health(load: Load, http: Any, url: str) -> None:
    """Asks one server's /api/health every HEALTH_EVERY seconds, until it is killed."""
    samples = load.health_latencies.setdefault(url, [])
    seen = load.processes_seen.setdefault(url, set())
    while not load.stopping and url not in load.dead:
        started = time.monotonic()
        try:
            response = await http.get(f"{url}/api/health")
        except Exception as exc:
            load.error(url, f"http {type(exc).__name__} health")
        else:
            if response.status_code != 200:
                load.error(url, f"http {response.status_code} health")
            else:
                try:
                    seen.add(str(response.json().get("process")))
                except ValueError:
                    load.error(url, "http health answer is not JSON")
        elapsed = time.monotonic() - started
        if load.measuring() and started >= load.window_start and url not in load.dead:
            samples.append(elapsed)
        await asyncio.sleep(max(0.0, HEALTH_EVERY - elapsed))


# -------------------------------------------------------------------- run


def check_url(url: str) -> str:
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        raise CommandError(f"--url {url!r} is not a URL like http://127.0.0.1:8000") from None
    if parts.scheme != "http" or parts.hostname not in LOOPBACK_HOSTS or port is None:
        raise CommandError(
            f"--url must be http://127.0.0.1:PORT (or localhost, [::1]): this tool only loads "
            f"a server on this machine, not {url!r}"
        )
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    return f"http://{host}:{port}"


def check_urls(urls: list[str]) -> list[str]:
    checked: list[str] = []
    for url in urls:
        normal = check_url(url)
        if normal in checked:
            raise CommandError(f"--url {url} is given twice: each server once")
        checked.append(normal)
    return checked


def check_database_url(url: str, shared: bool) -> None:
    """A PostgreSQL (or SQLite) URL on this machine; PostgreSQL when several processes share it."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    try:
        parsed = make_url(url)
    except (ArgumentError, ValueError):
        raise CommandError(
            f"--database-url {url!r} is not a database URL like postgresql://user:pw@127.0.0.1/coloretto"
        ) from None
    backend = parsed.get_backend_name()
    if backend not in ("postgresql", "sqlite"):
        raise CommandError(f"--database-url must be postgresql://… (or sqlite:///…), not {backend}://")
    if shared and backend != "postgresql":
        raise CommandError(
            "--processes 2 or more share one database: --database-url must be postgresql://…, "
            "not an SQLite file"
        )
    if parsed.host not in (None, "", *LOOPBACK_HOSTS):
        raise CommandError(
            f"--database-url must be on this machine (127.0.0.1, localhost or a socket), not {parsed.host}"
        )


def check_redis_url(url: str) -> None:
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a bad port
    except ValueError:
        raise CommandError(f"--redis-url {url!r} is not a URL like redis://127.0.0.1:6379/0") from None
    if parts.scheme != "redis" or parts.hostname not in LOOPBACK_HOSTS:
        raise CommandError(
            f"--redis-url must be redis://127.0.0.1:PORT/DB (or localhost, [::1]): a Redis on this "
            f"machine, not {url!r}"
        )


def check_args(args: argparse.Namespace) -> None:
    if args.soak:
        check_soak_args(args)
    elif not 1 <= args.games <= 5000:
        raise CommandError(f"--games must be 1 to 5000, not {args.games}")
    if not 1 <= args.bots <= 4:
        raise CommandError(f"--bots must be 1 to 4 (a game has 2 to 5 seats), not {args.bots}")
    if not 0 < args.duration <= 3600:
        raise CommandError(f"--duration must be more than 0 and at most 3600 seconds, not {args.duration:g}")
    if args.bot_delay is not None and args.url:
        raise CommandError(
            "--bot-delay sets the server this tool starts; with --url the server's own applies"
        )
    if args.bot_delay is not None and not 0 <= args.bot_delay <= 60:
        raise CommandError(f"--bot-delay must be 0 to 60 seconds, not {args.bot_delay:g}")
    if args.message_rate is not None and not args.message_rate > 0:
        raise CommandError(f"--message-rate must be more than 0, not {args.message_rate:g}")
    if not args.bot.strip():
        raise CommandError("--bot cannot be empty")
    processes = args.processes
    if processes is not None:
        if args.url:
            raise CommandError("--processes starts the servers itself: not with --url")
        if not 1 <= processes <= MAX_PROCESSES:
            raise CommandError(f"--processes must be 1 to {MAX_PROCESSES}, not {processes}")
    if args.redis_url is not None:
        if args.url:
            raise CommandError("--redis-url sets the servers this tool starts; not with --url")
        check_redis_url(args.redis_url)
        if args.database_url is None:
            raise CommandError(
                "--redis-url joins several server processes: give them one --database-url postgresql://…"
            )
    if processes is not None and processes >= 2 and (args.database_url is None or args.redis_url is None):
        raise CommandError(
            f"--processes {processes} runs several servers on one database: give --database-url "
            "postgresql://… and --redis-url redis://…"
        )
    if args.database_url is not None:
        check_database_url(args.database_url, shared=args.redis_url is not None)
    if args.kill_after is not None:
        if processes is None or processes < 2:
            raise CommandError(
                "--kill-after SIGKILLs one of the servers this tool starts: it needs --processes 2 or "
                "more, for the games to go on in the others"
            )
        if not 0 < args.kill_after < args.duration:
            raise CommandError(
                f"--kill-after must be more than 0 and less than --duration ({args.duration:g} s), "
                f"not {args.kill_after:g}"
            )
    if args.json is not None:
        check_output_file(args.json, "--json")  # now, not after the whole run
    servers = len(args.url) if args.url else (processes or 1)
    if args.watch_elsewhere and servers < 2:
        raise CommandError(
            "--watch-elsewhere sends each game's WebSocket to another server: it needs two or more "
            "(--url twice, or --processes 2)"
        )


def check_soak_args(args: argparse.Namespace) -> None:
    """The options of --soak, and those it does not take."""
    if not 1 <= args.games <= 100_000:
        raise CommandError(f"--games (whole games, with --soak) must be 1 to 100000, not {args.games}")
    if not 1 <= args.at_once <= 5000:
        raise CommandError(f"--at-once must be 1 to 5000, not {args.at_once}")
    if not 0 < args.stall_after <= 3600:
        raise CommandError(
            f"--stall-after must be more than 0 and at most 3600 seconds, not {args.stall_after:g}"
        )
    if args.kill_after is not None:
        raise CommandError("--kill-after is for the timed load test, not --soak")
    if args.bot_delay_jitter is not None and args.url:
        raise CommandError("--bot-delay-jitter sets the servers this tool starts; not with --url")


def run(args: argparse.Namespace) -> int:
    check_args(args)
    urls = check_urls(args.url) if args.url else None
    try:
        import httpx  # noqa: F401
        import websockets  # noqa: F401
    except ImportError as exc:
        raise CommandError(f"the load test needs {exc.name}: pip install -e '.[dev]'") from None
    if args.soak:
        return run_soak(args, urls)
    report = asyncio.run(_run(args, urls))
    print_report(report)
    if args.json is not None:
        try:
            args.json.write_text(json.dumps(report, indent=2) + "\n")
        except OSError as exc:
            raise CommandError(f"cannot write {args.json}: {exc.strerror or exc}") from None
    return 1 if report["errors"] else 0


async def _run(args: argparse.Namespace, given: list[str] | None) -> dict[str, Any]:
    import httpx

    bot_delay = 0.8 if args.bot_delay is None else args.bot_delay
    servers: list[StartedServer] = []
    if given is None:
        for _ in range(args.processes or 1):
            servers.append(
                StartedServer(
                    bot_delay,
                    1000.0 if args.message_rate is None else args.message_rate,
                    list(args.server_arg),
                    args.database_url,
                    args.redis_url,
                )
            )
    try:
        urls = (
            given
            if given is not None
            else list(await asyncio.gather(*(s.wait_for_address() for s in servers)))
        )
        load = Load(
            urls=urls,
            bots=args.bots,
            bot=args.bot.strip(),
            seed=args.seed,
            watch_elsewhere=args.watch_elsewhere,
        )
        limits = httpx.Limits(
            max_connections=CREATE_CONCURRENCY + 4, max_keepalive_connections=CREATE_CONCURRENCY
        )
        # /api/health has connections of its own: a poll never waits behind the game creations.
        health_limits = httpx.Limits(max_connections=2 * len(urls), max_keepalive_connections=2 * len(urls))
        async with (
            httpx.AsyncClient(timeout=30, limits=limits) as http,
            httpx.AsyncClient(timeout=30, limits=health_limits) as health_http,
        ):
            for url in urls:
                try:
                    options = (await http.get(f"{url}/api/options")).json()
                except (httpx.HTTPError, ValueError) as exc:
                    raise CommandError(f"no coloretto server answers at {url}: {exc}") from None
            # A server listens while its bot workers still warm up: games made before would
            # measure the warm-up, not the server.
            await asyncio.gather(*(wait_for_workers(http, url) for url in urls))
            limits_info = options.get("limits", {})
            load.messages_per_second = float(limits_info.get("messages_per_second", 10))
            load.message_burst = int(limits_info.get("message_burst", 20))
            server_delay = None if not servers else bot_delay
            report = await _measure(load, http, health_http, args, servers, server_delay)
        database_url = servers[0].database_url if servers else args.database_url
        report["database"] = None
        errors = report["errors"]
        if database_url is not None:
            try:
                report["database"] = database = check_database(database_url, load)
            except DatabaseUnreadable as exc:  # the figures so far are still worth printing
                errors[f"database not checked: {exc}"] = 1
            else:
                if database["missing"]:
                    errors["moves shown to clients but missing in the database"] = database["missing"]
                if database["changed"]:
                    errors["moves shown to clients but stored otherwise"] = database["changed"]
        report["errors"] = dict(sorted(errors.items()))
        return report
    finally:
        for server in servers:
            server.terminate()  # all at once: each may take a moment to finish its games' writes
        for server in servers:
            server.stop()


async def wait_for_workers(http: Any, url: str) -> None:
    """Until the server's /api/health says every bot worker is ready (a server that does not say
    counts as ready)."""
    deadline = time.monotonic() + SERVER_START_TIMEOUT
    while time.monotonic() < deadline:
        try:
            workers = (await http.get(f"{url}/api/health")).json().get("workers") or {}
        except Exception:
            workers = {}  # not answering yet is no reason to stop waiting
        else:
            if int(workers.get("ready", 0)) >= int(workers.get("processes", 0)):
                return
        await asyncio.sleep(0.1)
    raise CommandError(f"the bot workers of {url} were not ready within {SERVER_START_TIMEOUT:.0f} s")


async def _measure(
    load: Load,
    http: Any,
    health_http: Any,
    args: argparse.Namespace,
    servers: list[StartedServer],
    bot_delay: float | None,
) -> dict[str, Any]:
    gate = asyncio.Semaphore(CREATE_CONCURRENCY)
    load.games_wanted = args.games
    clients = [PersonClient(load, index, http, gate) for index in range(args.games)]
    setup_started = time.monotonic()
    tasks = [asyncio.create_task(client.run()) for client in clients]
    health = [asyncio.create_task(poll_health(load, health_http, url)) for url in load.urls]
    setup_limit = 30 + 0.2 * args.games
    ready_task = asyncio.create_task(load.all_ready.wait())
    usage_before: list[ServerUsage] = []
    usage_after: list[ServerUsage] = []
    kill_time: float | None = None
    try:
        done, _ = await asyncio.wait([ready_task, *tasks], timeout=setup_limit, return_when="FIRST_COMPLETED")
        while ready_task not in done:
            failed = [task for task in done if task is not ready_task]
            for task in failed:
                exc = task.exception()
                if isinstance(exc, Refused):
                    raise CommandError(f"the server refused to create a game: {exc}")
                if exc is not None:
                    raise exc
            if time.monotonic() - setup_started > setup_limit:
                load.errors["not every game was connected in time"] += 1
                break
            pending = [t for t in [ready_task, *tasks] if not t.done()]
            done, _ = await asyncio.wait(pending, timeout=setup_limit, return_when="FIRST_COMPLETED")
        setup_seconds = time.monotonic() - setup_started
        usage_before = [server.usage() for server in servers]
        cpu_before = _own_cpu()
        load.window_start = time.monotonic()
        if args.kill_after is not None:
            await asyncio.sleep(args.kill_after)
            kill_time = time.monotonic() - load.window_start
            kill(load, clients, servers[0])
            await asyncio.sleep(args.duration - kill_time)
        else:
            await asyncio.sleep(args.duration)
        elapsed = time.monotonic() - load.window_start
        stall_after = max(STALL_SECONDS, 10 * (bot_delay or 0.0))
        now = time.monotonic()
        stalled = sum(1 for c in clients if c.playing and now - c.last_progress > stall_after)
        if stalled:
            load.errors[f"games without a move in the last {stall_after:g} s"] += stalled
        usage_after = [server.usage() for server in servers]
        cpu_after = _own_cpu()
        load.stopping = True
    finally:
        load.stopping = True
        ready_task.cancel()
        for task in [*health, *tasks]:
            task.cancel()
        results = await asyncio.gather(*tasks, *health, ready_task, return_exceptions=True)
    for result in results:
        if isinstance(result, Refused):
            load.errors["game creation refused"] += 1
    server_list = [
        _server_figures(server, before, after, elapsed, kill_time)
        for server, before, after in zip(servers, usage_before, usage_after, strict=True)
    ]
    kill_figures = None
    if kill_time is not None:
        kill_figures = _kill_figures(load, servers[0], kill_time)
    all_health = [sample for samples in load.health_latencies.values() for sample in samples]
    process_ids = set().union(*load.processes_seen.values()) if load.processes_seen else set()
    return {
        "url": load.base_url,
        "urls": load.urls,
        "server_started_here": bool(servers),
        "server_processes": len(servers) if servers else len(process_ids),
        "watch_elsewhere": load.watch_elsewhere,
        "bot_delay": bot_delay,
        "games": args.games,
        "bots_per_game": load.bots,
        "bot": load.bot,
        "seed": load.seed,
        "duration_s": round(elapsed, 3),
        "setup_s": round(setup_seconds, 3),
        "games_started": load.games_started,
        "games_by_url": {url: sum(1 for t in load.tracks if t.home == url) for url in load.urls},
        "games_finished": load.games_finished,
        "moves": load.moves,
        "person_moves": load.person_moves,
        "moves_per_second": round(load.moves / elapsed, 1),
        "action_to_broadcast_ms": latency_figures(load.action_latencies, (50, 90, 99)),
        "health_ms": latency_figures(all_health, (50, 99)),
        "health_ms_by_url": {
            url: latency_figures(load.health_latencies.get(url, []), (50, 99)) for url in load.urls
        },
        "errors": dict(sorted(load.errors.items())),
        "reconnects": load.reconnects,
        "server": _total(server_list, elapsed) if server_list else None,
        "servers": server_list,
        "kill": kill_figures,
        "load_generator_cpu_seconds": round(cpu_after - cpu_before, 2),
    }


def kill(load: Load, clients: list[PersonClient], server: StartedServer) -> None:
    """SIGKILL the server; note first which games it ran and which clients it held, so that what
    follows (their next moves, their reconnections) is told apart from ordinary errors."""
    for client in clients:
        track = client.track
        if track is None or track.status != "playing" or not client.playing:
            continue
        if track.home == server.url:
            track.at_kill = track.last_move
        if client.connected_url == server.url:
            load.clients_on_killed.add(client.index)
    load.dead.add(server.url)
    load.killed_at = time.monotonic()
    server.kill()


def _server_figures(
    server: StartedServer, before: ServerUsage, after: ServerUsage, elapsed: float, kill_time: float | None
) -> dict[str, Any]:
    cpu = after.cpu_seconds - before.cpu_seconds
    alive = kill_time if server.killed and kill_time is not None else elapsed
    return {
        "url": server.url,
        "pid": server.pid,
        "cpu_seconds": round(cpu, 2),
        "cpu_share_of_one_core": round(cpu / alive, 3) if alive > 0 else None,
        "peak_rss_bytes": after.peak_rss_bytes,
        "rss_bytes": after.rss_bytes,
        "processes": after.processes,
        "killed_at_s": round(kill_time, 3) if server.killed and kill_time is not None else None,
    }


def _total(servers: list[dict[str, Any]], elapsed: float) -> dict[str, Any]:
    cpu = sum(s["cpu_seconds"] for s in servers)
    return {
        "cpu_seconds": round(cpu, 2),
        "cpu_share_of_one_core": round(cpu / elapsed, 3),
        "peak_rss_bytes": sum(s["peak_rss_bytes"] for s in servers),
        "processes": sum(s["processes"] for s in servers),
    }


def _kill_figures(load: Load, server: StartedServer, kill_time: float) -> dict[str, Any]:
    games = [t for t in load.tracks if t.at_kill is not None]
    resumed = sorted(t.resumed_after for t in games if t.resumed_after is not None)
    bots = sorted(t.bots_resumed_after for t in games if t.bots_resumed_after is not None)
    if len(resumed) < len(games):
        load.errors["games of the killed server that never moved again"] += len(games) - len(resumed)
    lost = load.clients_on_killed - load.clients_reconnected
    if lost:
        load.errors["clients of the killed server that did not reconnect"] += len(lost)
    survivors = server.survivors()
    if survivors:
        load.errors["processes of the killed server still running"] += len(survivors)

    def seconds(values: list[float], p: float | None = None) -> float | None:
        value = (values[-1] if values else None) if p is None else percentile(values, p)
        return None if value is None else round(value, 3)

    return {
        "url": server.url,
        "pid": server.pid,
        "at_s": round(kill_time, 3),
        "games": len(games),
        "games_resumed": len(resumed),
        "resumed_after_s": seconds(resumed),
        "resumed_after_p50_s": seconds(resumed, 50),
        "bots_resumed": len(bots),
        "bots_resumed_after_s": seconds(bots),
        "clients_connected": len(load.clients_on_killed),
        "clients_reconnected": len(load.clients_on_killed & load.clients_reconnected),
        "connections_refused_or_dropped": load.disconnects_by_kill,
        "processes_left_running": len(survivors),
    }


class DatabaseUnreadable(Exception):
    """The moves could not be read back (a --database-url that is wrong, a database gone)."""


def check_database(url: str, load: Load) -> dict[str, Any]:
    """Every move a client was shown, looked up in the database's ``moves`` table."""
    from sqlalchemy import select
    from sqlalchemy.engine import make_url

    from coloretto.web.storage.db import create_db_engine
    from coloretto.web.storage.rows import MoveRow

    shown = {t.game_id: t.moves for t in load.tracks}
    stored: dict[str, dict[int, str]] = {game_id: {} for game_id in shown}
    engine = create_db_engine(url)
    try:
        with engine.connect() as connection:
            ids = list(shown)
            for start in range(0, len(ids), IDS_PER_QUERY):
                chunk = ids[start : start + IDS_PER_QUERY]
                query = select(MoveRow.game_id, MoveRow.number, MoveRow.move).where(
                    MoveRow.game_id.in_(chunk)
                )
                for game_id, number, move in connection.execute(query):
                    stored[game_id][number] = move
    except Exception as exc:
        first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise DatabaseUnreadable(
            f"cannot read the moves from {make_url(url).render_as_string()}: {first_line}"
        ) from exc
    finally:
        engine.dispose()
    missing = changed = checked = 0
    for game_id, moves in shown.items():
        for number, move in moves.items():
            checked += 1
            if number not in stored[game_id]:
                missing += 1
            elif stored[game_id][number] != move:
                changed += 1
    return {
        "url": make_url(url).render_as_string(),  # the password as ***
        "games": len(shown),
        "moves_checked": checked,
        "missing": missing,
        "changed": changed,
    }


def _own_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:,.1f} ms"


def _s(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f} s"


def _mib(value: int) -> str:
    return f"{value / 2**20:,.0f} MiB"


def print_report(report: dict[str, Any]) -> None:
    delay = report["bot_delay"]
    where = "started here" if report["server_started_here"] else "given"
    delay_text = f"bot delay {delay:g} s" if delay is not None else "the server's bot delay"
    urls = report["urls"]
    servers_text = f"server {urls[0]}" if len(urls) == 1 else f"{len(urls)} servers {', '.join(urls)}"
    print(
        f"coloretto loadtest: {report['games']} games at once, 1 person + {report['bots_per_game']} "
        f"{report['bot']} bots each, {delay_text}, {report['duration_s']:.1f} s measured "
        f"(set-up {report['setup_s']:.1f} s), {servers_text} ({where})"
    )
    if len(urls) > 1:
        spread = ", ".join(f"{count} on {url}" for url, count in report["games_by_url"].items())
        elsewhere = (
            "; each game's WebSocket on the next server after the one that created it"
            if report["watch_elsewhere"]
            else ""
        )
        print(f"            games created {spread}{elsewhere}")
    print(
        f"games       {report['games_started']} started, {report['games_finished']} finished "
        "(a finished game is replaced by a new one)"
    )
    print(
        f"moves       {report['moves']:,} accepted, {report['person_moves']:,} of them by the person "
        f"clients: {report['moves_per_second']:,.1f} moves/s"
    )
    act = report["action_to_broadcast_ms"]
    print(
        f"action → broadcast  p50 {_ms(act['p50'])}  p90 {_ms(act['p90'])}  p99 {_ms(act['p99'])}  "
        f"max {_ms(act['max'])}  ({act['count']:,} actions)"
    )
    health = report["health_ms"]
    print(
        f"/api/health         p50 {_ms(health['p50'])}  p99 {_ms(health['p99'])}  "
        f"max {_ms(health['max'])}  ({health['count']} polls)"
    )
    if len(urls) > 1:
        for url, figures in report["health_ms_by_url"].items():
            print(
                f"  {url}  p50 {_ms(figures['p50'])}  p99 {_ms(figures['p99'])}  "
                f"max {_ms(figures['max'])}  ({figures['count']} polls)"
            )
    kill = report["kill"]
    if kill is not None:
        print(
            f"kill        SIGKILL to {kill['url']} (pid {kill['pid']}) at {kill['at_s']:.1f} s: "
            f"{kill['games_resumed']} of its {kill['games']} games moved again, resumed after "
            f"{_s(kill['resumed_after_s'])} (p50 {_s(kill['resumed_after_p50_s'])}); its bots moved "
            f"again after {_s(kill['bots_resumed_after_s'])} ({kill['bots_resumed']} games)"
        )
        print(
            f"            {kill['clients_reconnected']} of the {kill['clients_connected']} clients "
            f"connected to it reconnected elsewhere by themselves; {kill['processes_left_running']} of "
            "its processes left running"
        )
    database = report["database"]
    if database is not None:
        print(
            f"database    {database['moves_checked']:,} moves shown to clients ({database['games']} games): "
            f"{database['missing']} missing in the database, {database['changed']} stored otherwise"
        )
    errors = report["errors"]
    listed = ", ".join(f"{code} × {count}" for code, count in errors.items()) if errors else "none"
    print(f"errors      {listed}")
    if kill is not None:
        print(
            f"            (not errors: {kill['connections_refused_or_dropped']} connections or requests the "
            "kill dropped or refused)"
        )
    server = report["server"]
    if server is None:
        print(
            "server      CPU and memory not measured (the server was not started by this tool)"
            + (f"; {report['server_processes']} processes answered" if len(urls) > 1 else "")
        )
    else:
        print(
            f"server      CPU {server['cpu_seconds']:.1f} s ({server['cpu_share_of_one_core']:.0%} of one "
            f"core), peak RSS {_mib(server['peak_rss_bytes'])} ({server['processes']} process"
            f"{'es' if server['processes'] != 1 else ''})"
        )
        if len(report["servers"]) > 1:
            for number, each in enumerate(report["servers"], 1):
                share = each["cpu_share_of_one_core"]
                killed = "" if each["killed_at_s"] is None else f", killed at {each['killed_at_s']:.1f} s"
                print(
                    f"  process {number} {each['url']} pid {each['pid']}: CPU {each['cpu_seconds']:.1f} s "
                    f"({'-' if share is None else f'{share:.0%}'} of one core), peak RSS "
                    f"{_mib(each['peak_rss_bytes'])}, RSS {_mib(each['rss_bytes'])} "
                    f"({each['processes']} processes{killed})"
                )
    print(f"this tool   CPU {report['load_generator_cpu_seconds']:.1f} s (it runs on the same machine)")


# ------------------------------------------------------------------ soak


def run_soak(args: argparse.Namespace, given: list[str] | None) -> int:
    report = asyncio.run(_run_soak(args, given))
    print_soak_report(report)
    if args.json is not None:
        try:
            args.json.write_text(json.dumps(report, indent=2) + "\n")
        except OSError as exc:
            raise CommandError(f"cannot write {args.json}: {exc.strerror or exc}") from None
    return 1 if report["stalled"] or report["errors"] else 0


async def _run_soak(args: argparse.Namespace, given: list[str] | None) -> dict[str, Any]:
    import httpx

    from coloretto.tools.soak import soak

    bot_delay = 0.0 if args.bot_delay is None else args.bot_delay
    jitter = (
        (0.2 if args.bot_delay is None else 0.0) if args.bot_delay_jitter is None else args.bot_delay_jitter
    )
    servers: list[StartedServer] = []
    if given is None:
        # tables with several people wait for them a moment, all from this one address
        extra = ["--bot-delay-jitter", str(jitter), "--max-waiting-per-client", "0", *args.server_arg]
        for _ in range(args.processes or 1):
            servers.append(
                StartedServer(
                    bot_delay,
                    10.0 if args.message_rate is None else args.message_rate,
                    extra,
                    args.database_url,
                    args.redis_url,
                )
            )
    try:
        urls = (
            given
            if given is not None
            else list(await asyncio.gather(*(s.wait_for_address() for s in servers)))
        )
        connections = min(4 * args.at_once + 8, 512)
        # idle connections are closed here before the server closes them (uvicorn: after 5 s), so
        # that a request never goes out on a connection the server is closing
        limits = httpx.Limits(
            max_connections=connections, max_keepalive_connections=connections, keepalive_expiry=2.0
        )
        async with httpx.AsyncClient(timeout=60, limits=limits) as http:
            for url in urls:
                try:
                    (await http.get(f"{url}/api/options")).raise_for_status()
                except (httpx.HTTPError, ValueError) as exc:
                    raise CommandError(f"no coloretto server answers at {url}: {exc}") from None
            await asyncio.gather(*(wait_for_workers(http, url) for url in urls))
            usage_before = [server.usage() for server in servers]
            started = time.monotonic()
            run = await soak(urls, args.games, args.at_once, args.seed, args.stall_after, http)
            elapsed = time.monotonic() - started
            usage_after = [server.usage() for server in servers]
            incidents: dict[str, dict[str, int]] = {}
            for url in urls:
                try:
                    incidents[url] = (await http.get(f"{url}/api/health")).json().get("incidents", {})
                except (httpx.HTTPError, ValueError):
                    incidents[url] = {"unreadable": 1}
        stalls = [stall.as_dict() for stall in run.stalls]
        return {
            "urls": urls,
            "server_started_here": bool(servers),
            "bot_delay": bot_delay if servers else None,
            "bot_delay_jitter": jitter if servers else None,
            "games": args.games,
            "at_once": args.at_once,
            "seed": args.seed,
            "stall_after_s": args.stall_after,
            "duration_s": round(elapsed, 1),
            "tables_started": run.tables_started,
            "games_finished": run.games_finished,
            "stalled": len(stalls),
            "stalled_then_moved_on": sum(1 for stall in stalls if stall["recovered_after_s"] is not None),
            "stalls": stalls,
            "moves": run.moves,
            "moves_per_second": round(run.moves / elapsed, 1) if elapsed > 0 else None,
            "person_behaviour": {
                "acted_twice": run.doubles,
                "acted_over_http": run.rest_actions,
                "dropped_connection": run.drops,
                "http_actions_sent_again": run.http_retries,
                "refused_as_expected": dict(sorted(run.refusals.items())),
            },
            "errors": dict(sorted(run.errors.items())),
            "server_incidents": incidents,
            "servers": [
                {
                    "url": server.url,
                    "cpu_seconds": round(after.cpu_seconds - before.cpu_seconds, 1),
                    "peak_rss_bytes": after.peak_rss_bytes,
                }
                for server, before, after in zip(servers, usage_before, usage_after, strict=True)
            ],
        }
    finally:
        for server in servers:
            server.terminate()
        for server in servers:
            server.stop()


def print_soak_report(report: dict[str, Any]) -> None:
    urls = report["urls"]
    where = "started here" if report["server_started_here"] else "given"
    delay = (
        f"bot delay {report['bot_delay']:g} s + 0 to {report['bot_delay_jitter']:g} s"
        if report["bot_delay"] is not None
        else "the servers' bot delay"
    )
    print(
        f"coloretto loadtest --soak: {report['games']} whole games, {report['at_once']} at once, seed "
        f"{report['seed']}, {delay}, {len(urls)} server{'s' if len(urls) != 1 else ''} ({where}) "
        f"{', '.join(urls)}"
    )
    print(
        f"games       {report['tables_started']} started, {report['games_finished']} finished in "
        f"{report['duration_s']:.0f} s; {report['moves']:,} moves ({report['moves_per_second']:,} moves/s)"
    )
    print(
        f"stalled     {report['stalled']} (no move for {report['stall_after_s']:g} s while unfinished; "
        f"{report['stalled_then_moved_on']} of them moved on later)"
    )
    for stall in report["stalls"]:
        server = stall["server"]
        print(
            f"  {stall['game']} on {stall['url']}: seen up to move {stall['seen_move']}; the server: "
            f"move {server.get('move_number')}, seat {server.get('to_move')} to move, last moves "
            f"{server.get('last_moves')}; moved on after {stall['recovered_after_s']} s"
        )
        print(f"    {stall['table']}")
        for who, client in stall["clients"].items():
            print(f"    {who}: on {client['server']}, saw move {client['seen']}")
    people = report["person_behaviour"]
    print(
        f"people      acted twice {people['acted_twice']:,} times, over HTTP {people['acted_over_http']:,}, "
        f"dropped their connection {people['dropped_connection']:,}; refused as expected "
        f"{people['refused_as_expected']}"
    )
    errors = report["errors"]
    print(f"errors      {', '.join(f'{k} × {v}' for k, v in errors.items()) if errors else 'none'}")
    for url, counts in report["server_incidents"].items():
        print(f"incidents   {url}: {counts or 'none'}")
    for each in report["servers"]:
        print(
            f"server      {each['url']}: CPU {each['cpu_seconds']:.0f} s, "
            f"peak RSS {_mib(each['peak_rss_bytes'])}"
        )
