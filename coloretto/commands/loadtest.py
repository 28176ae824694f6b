"""``coloretto loadtest``: many games at once over real WebSockets, and how the server held up.

Each game has one person seat, played by this tool over the game's WebSocket
as soon as it is that seat's turn (a random legal action, ``move`` set), and
bots that the server moves at its bot delay. The tool measures the time from
sending an ``act`` to receiving the state that holds that move, the moves
accepted per second (every move seen in the states, the bots' included),
``/api/health`` polled once a second, every error, and, when it started the
server itself, the server's CPU time and peak memory.

Traffic goes to loopback only, the run lasts ``--duration`` seconds, and a
server the tool started is stopped and its data directory removed at the end.
"""

from __future__ import annotations

import argparse
import asyncio
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

from coloretto.cli import CommandError

LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")
#: HTTP requests in flight at once while games are created: a real lobby does not get hundreds at once
CREATE_CONCURRENCY = 16
SERVER_START_TIMEOUT = 120.0
RECONNECT_PAUSE = 0.5
#: a game in play with no move for this long (or ten bot delays) at the end counts as an error
STALL_SECONDS = 10.0
#: errors in a row on one table (no move accepted in between) before its client gives that game up
MAX_ERRORS_IN_A_ROW = 20


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "loadtest",
        help="load a game server: N games over real WebSockets, latency and throughput",
        description="Play N games at once against a game server (coloretto serve), one person seat "
        "per game played by this tool over the game's WebSocket, the other seats bots. Prints the "
        "time from action to state broadcast (percentiles), moves per second, /api/health latency, "
        "errors, and the server's CPU and memory when the tool started the server. Without --url it "
        "starts its own server (coloretto serve --port 0) in a temporary directory. Only loopback "
        "addresses are allowed. Exit status 1 when any error was seen.",
    )
    where = parser.add_mutually_exclusive_group()
    where.add_argument(
        "--url", default=None, help="a running server on this machine, e.g. http://127.0.0.1:8000"
    )
    where.add_argument(
        "--serve",
        action="store_true",
        help="start a server for the run (the default without --url), without the limits per client "
        "address (every client of the test is one address), and stop it at the end",
    )
    parser.add_argument("--games", type=int, default=50, help="games played at once (default 50)")
    parser.add_argument(
        "--bots", type=int, default=3, help="bot seats per game, besides the person's (1-4, default 3)"
    )
    parser.add_argument("--bot", default="easy", help="the bots' name or difficulty (default easy)")
    parser.add_argument(
        "--bot-delay",
        type=float,
        default=None,
        metavar="SECONDS",
        help="the started server's bot delay (default 0.8, as coloretto serve); not with --url",
    )
    parser.add_argument(
        "--duration", type=float, default=30.0, metavar="SECONDS", help="measured time (default 30)"
    )
    parser.add_argument(
        "--message-rate",
        type=float,
        default=1000.0,
        metavar="N",
        help="the started server's WebSocket message rate per client (default 1000, so that the "
        "limit does not throttle the test); with --url the client keeps to the server's own limit",
    )
    parser.add_argument(
        "--server-arg",
        action="append",
        default=[],
        metavar="ARG",
        help="one more argument for the started server's coloretto serve (repeatable), "
        "e.g. --server-arg=--hint-budget=0.5",
    )
    parser.add_argument("--seed", type=int, default=1, help="seed of the person clients' choices")
    parser.add_argument("--json", type=Path, default=None, metavar="FILE", help="also write the figures")
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
    processes: int


@dataclass
class Load:
    """What every client of the run shares: where the server is, the clock, and the counts."""

    base_url: str
    bots: int
    bot: str
    seed: int
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
    health_latencies: list[float] = field(default_factory=list)
    errors: Counter[str] = field(default_factory=Counter)
    games_wanted: int = 0  #: games that must be connected before the measured time begins
    ready: int = 0
    all_ready: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def ws_base(self) -> str:
        return "ws" + self.base_url.removeprefix("http")

    def measuring(self) -> bool:
        return not self.stopping and time.monotonic() >= self.window_start


# ----------------------------------------------------------------- server


class StartedServer:
    """``coloretto serve --port 0`` in a subprocess, on a temporary data directory."""

    def __init__(self, bot_delay: float, message_rate: float, extra: list[str]) -> None:
        self.directory = tempfile.TemporaryDirectory(prefix="coloretto-loadtest-")
        root = Path(self.directory.name)
        self.stdout_path = root / "server.out"
        self.stderr_path = root / "server.err"
        command = [
            sys.executable, "-m", "coloretto", "serve", "--host", "127.0.0.1", "--port", "0",
            "--data-dir", str(root / "data"), "--bot-delay", str(bot_delay),
            "--message-rate", str(message_rate),
            # Every client of the test comes from one address: the limits per address would
            # measure themselves, not the server.
            "--creations-per-minute", "0", "--requests-per-minute", "0", *extra,
        ]  # fmt: skip
        # Output goes to files, not pipes: a pipe nobody reads would block the server once full.
        with self.stdout_path.open("wb") as out, self.stderr_path.open("wb") as err:
            self.process = subprocess.Popen(command, stdout=out, stderr=err, stdin=subprocess.DEVNULL)
        self.url = ""

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
        """CPU seconds (user + system) and peak RSS of the server and the processes it started."""
        tick = os.sysconf("SC_CLK_TCK")
        tree = [self.process.pid, *_descendants(self.process.pid)]
        cpu = 0.0
        peak = 0
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
            counted += 1
        return ServerUsage(cpu, peak, counted)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.directory.cleanup()


def _read(path: str) -> str | None:
    try:
        return Path(path).read_text()
    except OSError:
        return None


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
    load: Load, http: Any, index: int, gate: asyncio.Semaphore
) -> tuple[str, int, str] | None:
    """A game with the person's seat taken by its creator and bots in the others: it starts at once,
    so it never counts among the games waiting for players. Retries what may pass (429, 5xx);
    None when the run ends first."""
    body = {
        "name": f"load test {index}",
        "seats": [{"kind": "human"}] + [{"kind": "bot", "bot": load.bot}] * load.bots,
        "creator_name": f"load {index}",
    }
    while not load.stopping:
        async with gate:
            try:
                response = await http.post(f"{load.base_url}/api/games", json=body)
            except Exception as exc:
                load.errors[f"http {type(exc).__name__}"] += 1
                await asyncio.sleep(1.0)
                continue
        if response.status_code == 201:
            data = response.json()
            return data["game"]["id"], int(data["seat"]), str(data["token"])
        code = _error_code(response)
        load.errors[f"http {response.status_code} {code}"] += 1
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
    """One person seat: connects, takes its seat, and acts whenever it is its turn."""

    def __init__(self, load: Load, index: int, http: Any, gate: asyncio.Semaphore) -> None:
        self.load = load
        self.index = index
        self.http = http
        self.gate = gate
        self.rng = random.Random(load.seed * 1_000_003 + index)
        self.first = True
        self.last_progress = time.monotonic()  #: when this client last saw its game move on
        self.playing = False

    async def run(self) -> None:
        import websockets

        load = self.load
        while not load.stopping:
            created = await create_game(load, self.http, self.index, self.gate)
            if created is None:
                return
            game_id, seat, token = created
            load.games_started += 1
            self.last_progress = time.monotonic()
            self.playing = True
            finished = False
            errors_in_a_row = 0
            last_move = 0
            while not load.stopping and not finished and errors_in_a_row < MAX_ERRORS_IN_A_ROW:
                try:
                    async with websockets.connect(
                        f"{load.ws_base}/api/games/{game_id}/ws",
                        max_size=2**22,
                        open_timeout=20,
                        close_timeout=1,
                        ping_interval=None,
                    ) as ws:
                        await ws.send(json.dumps({"type": "hello", "token": token}))
                        if self.first:
                            self.first = False
                            load.ready += 1
                            if load.ready >= load.games_wanted:
                                load.all_ready.set()
                        finished, errors_in_a_row, last_move = await self._play(
                            ws, seat, errors_in_a_row, last_move
                        )
                except asyncio.CancelledError:
                    raise
                except Exception as exc:
                    if load.stopping:
                        break
                    load.errors[_disconnect_label(exc)] += 1
                    load.reconnects += 1
                    await asyncio.sleep(RECONNECT_PAUSE)
            self.playing = False
            if finished:
                load.games_finished += 1
            elif errors_in_a_row >= MAX_ERRORS_IN_A_ROW:
                load.errors["gave up a game (errors in a row)"] += 1

    async def _play(self, ws: Any, seat: int, errors_in_a_row: int, last_move: int) -> tuple[bool, int, int]:
        """Read the table's messages until the game ends; acts on its turns. Returns (finished,
        errors in a row, the last move number seen)."""
        load = self.load
        bucket = TokenBucket(load.messages_per_second, load.message_burst)
        pending: tuple[int, float] | None = None  # (move number acted on, when the act was sent)
        state: dict[str, Any] | None = None
        retry_at: float | None = None
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
                number = int(state["move_number"])
                if number > last_move:
                    self.last_progress = time.monotonic()
                    if load.measuring():
                        load.moves += number - last_move
                last_move = max(last_move, number)
                if pending is not None and number > pending[0]:
                    # Only this seat can move while it is its turn: a later move number is its move.
                    if load.measuring() and pending[1] >= load.window_start:
                        load.action_latencies.append(time.monotonic() - pending[1])
                        load.person_moves += 1
                    pending = None
                    errors_in_a_row = 0
                if state["game"]["status"] == "finished":
                    return True, errors_in_a_row, last_move
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
                    return False, errors_in_a_row, last_move
            elif kind == "bye":
                raise ConnectionError("the server said bye")

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


async def poll_health(load: Load, http: Any) -> None:
    while not load.stopping:
        started = time.monotonic()
        try:
            response = await http.get(f"{load.base_url}/api/health")
            if response.status_code != 200:
                load.errors[f"http {response.status_code} health"] += 1
        except Exception as exc:
            load.errors[f"http {type(exc).__name__} health"] += 1
        elapsed = time.monotonic() - started
        if load.measuring() and started >= load.window_start:
            load.health_latencies.append(elapsed)
        await asyncio.sleep(max(0.0, 1.0 - elapsed))


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


def check_args(args: argparse.Namespace) -> None:
    if not 1 <= args.games <= 5000:
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
    if not args.message_rate > 0:
        raise CommandError(f"--message-rate must be more than 0, not {args.message_rate:g}")
    if not args.bot.strip():
        raise CommandError("--bot cannot be empty")


def run(args: argparse.Namespace) -> int:
    check_args(args)
    base_url = check_url(args.url) if args.url else None
    try:
        import httpx  # noqa: F401
        import websockets  # noqa: F401
    except ImportError as exc:
        raise CommandError(f"the load test needs {exc.name}: pip install -e '.[dev]'") from None
    report = asyncio.run(_run(args, base_url))
    print_report(report)
    if args.json is not None:
        try:
            args.json.write_text(json.dumps(report, indent=2) + "\n")
        except OSError as exc:
            raise CommandError(f"cannot write {args.json}: {exc.strerror or exc}") from None
    return 1 if report["errors"] else 0


async def _run(args: argparse.Namespace, base_url: str | None) -> dict[str, Any]:
    import httpx

    bot_delay = 0.8 if args.bot_delay is None else args.bot_delay
    server: StartedServer | None = None
    if base_url is None:
        server = StartedServer(bot_delay, args.message_rate, list(args.server_arg))
    try:
        if server is not None:
            base_url = await server.wait_for_address()
        assert base_url is not None
        load = Load(base_url=base_url, bots=args.bots, bot=args.bot.strip(), seed=args.seed)
        limits = httpx.Limits(
            max_connections=CREATE_CONCURRENCY + 4, max_keepalive_connections=CREATE_CONCURRENCY
        )
        async with httpx.AsyncClient(timeout=30, limits=limits) as http:
            try:
                options = (await http.get(f"{base_url}/api/options")).json()
            except (httpx.HTTPError, ValueError) as exc:
                raise CommandError(f"no coloretto server answers at {base_url}: {exc}") from None
            limits_info = options.get("limits", {})
            load.messages_per_second = float(limits_info.get("messages_per_second", 10))
            load.message_burst = int(limits_info.get("message_burst", 20))
            server_delay = None if server is None else bot_delay
            return await _measure(load, http, args, server, server_delay)
    finally:
        if server is not None:
            server.stop()


async def _measure(
    load: Load, http: Any, args: argparse.Namespace, server: StartedServer | None, bot_delay: float | None
) -> dict[str, Any]:
    gate = asyncio.Semaphore(CREATE_CONCURRENCY)
    load.games_wanted = args.games
    clients = [PersonClient(load, index, http, gate) for index in range(args.games)]
    setup_started = time.monotonic()
    tasks = [asyncio.create_task(client.run()) for client in clients]
    health = asyncio.create_task(poll_health(load, http))
    setup_limit = 30 + 0.2 * args.games
    ready_task = asyncio.create_task(load.all_ready.wait())
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
        usage_before = server.usage() if server is not None else None
        cpu_before = _own_cpu()
        load.window_start = time.monotonic()
        await asyncio.sleep(args.duration)
        elapsed = time.monotonic() - load.window_start
        stall_after = max(STALL_SECONDS, 10 * (bot_delay or 0.0))
        now = time.monotonic()
        stalled = sum(1 for c in clients if c.playing and now - c.last_progress > stall_after)
        if stalled:
            load.errors[f"games without a move in the last {stall_after:g} s"] += stalled
        usage_after = server.usage() if server is not None else None
        cpu_after = _own_cpu()
        load.stopping = True
    finally:
        load.stopping = True
        ready_task.cancel()
        health.cancel()
        for task in tasks:
            task.cancel()
        results = await asyncio.gather(*tasks, health, ready_task, return_exceptions=True)
    for result in results:
        if isinstance(result, Refused):
            load.errors["game creation refused"] += 1
    server_figures: dict[str, Any] | None = None
    if usage_before is not None and usage_after is not None:
        cpu = usage_after.cpu_seconds - usage_before.cpu_seconds
        server_figures = {
            "cpu_seconds": round(cpu, 2),
            "cpu_share_of_one_core": round(cpu / elapsed, 3),
            "peak_rss_bytes": usage_after.peak_rss_bytes,
            "processes": usage_after.processes,
        }
    return {
        "url": load.base_url,
        "server_started_here": server is not None,
        "bot_delay": bot_delay,
        "games": args.games,
        "bots_per_game": load.bots,
        "bot": load.bot,
        "seed": load.seed,
        "duration_s": round(elapsed, 3),
        "setup_s": round(setup_seconds, 3),
        "games_started": load.games_started,
        "games_finished": load.games_finished,
        "moves": load.moves,
        "person_moves": load.person_moves,
        "moves_per_second": round(load.moves / elapsed, 1),
        "action_to_broadcast_ms": latency_figures(load.action_latencies, (50, 90, 99)),
        "health_ms": latency_figures(load.health_latencies, (50, 99)),
        "errors": dict(sorted(load.errors.items())),
        "reconnects": load.reconnects,
        "server": server_figures,
        "load_generator_cpu_seconds": round(cpu_after - cpu_before, 2),
    }


def _own_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:,.1f} ms"


def print_report(report: dict[str, Any]) -> None:
    delay = report["bot_delay"]
    where = "started here" if report["server_started_here"] else "given"
    delay_text = f"bot delay {delay:g} s" if delay is not None else "the server's bot delay"
    print(
        f"coloretto loadtest: {report['games']} games at once, 1 person + {report['bots_per_game']} "
        f"{report['bot']} bots each, {delay_text}, {report['duration_s']:.1f} s measured "
        f"(set-up {report['setup_s']:.1f} s), server {report['url']} ({where})"
    )
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
    errors = report["errors"]
    listed = ", ".join(f"{code} × {count}" for code, count in errors.items()) if errors else "none"
    print(f"errors      {listed}")
    server = report["server"]
    if server is None:
        print("server      CPU and memory not measured (the server was not started by this tool)")
    else:
        print(
            f"server      CPU {server['cpu_seconds']:.1f} s ({server['cpu_share_of_one_core']:.0%} of one "
            f"core), peak RSS {server['peak_rss_bytes'] / 2**20:,.0f} MiB ({server['processes']} process"
            f"{'es' if server['processes'] != 1 else ''})"
        )
    print(f"this tool   CPU {report['load_generator_cpu_seconds']:.1f} s (it runs on the same machine)")
