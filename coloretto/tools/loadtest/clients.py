"""The load test's clients: one person seat per game, played over the game's WebSocket as soon as
it is that seat's turn, and the polls of every server's ``/api/health`` and ``/metrics``."""

from __future__ import annotations

import asyncio
import json
import math
import random
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from coloretto.web.table.changes import apply_change

#: HTTP requests in flight at once while games are created: a real lobby does not get hundreds at once
CREATE_CONCURRENCY = 16

RECONNECT_PAUSE = 0.5
#: between tries to reach a server that is being restarted (one process alone: until it is back)
RESTART_PAUSE = 0.1
#: close codes of a server that asks its clients to reconnect: going away, service restart
RESTART_CLOSES = (1001, 1012)

#: a game in play with no move for this long (or ten bot delays) at the end counts as an error
STALL_SECONDS = 10.0

#: errors in a row on one table (no move accepted in between) before its client gives that game up
MAX_ERRORS_IN_A_ROW = 20

#: how often every server's /api/health is asked
HEALTH_EVERY = 0.1
#: how often every server's /metrics is asked (Prometheus asks every 15 s or so; this is to measure it)
METRICS_EVERY = 0.5


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
    moved_at: float = 0.0  #: monotonic time its client last saw it move
    #: restarts of its server it has not moved since through another server
    restarts: list[Restart] = field(default_factory=list)


@dataclass
class Restart:
    """One server restarted by ``--rolling-restart``: SIGTERM, its exit, its start again on the
    same port, and when each game it ran moved again."""

    url: str
    pid: int
    at: float  #: monotonic time of the SIGTERM
    at_s: float  #: seconds into the measured time
    games: dict[str, int]  #: the games it ran (held the lease of) -> their move number at the SIGTERM
    resumed: dict[str, float] = field(default_factory=dict)  #: game -> seconds until its next move
    #: game -> the longest its client waited for a move, from the SIGTERM until the game moved
    #: through another server (or after this one was back): what a person at that table noticed
    paused: dict[str, float] = field(default_factory=dict)
    exit_status: int | None = None
    exited_after: float | None = None  #: seconds from the SIGTERM until the process had exited
    back_after: float | None = None  #: seconds from the SIGTERM until it served again (workers warm)


@dataclass
class Traffic:
    """What one kind of watcher (a seat's client, a spectator) was sent in the measured time."""

    size: int = 0  #: bytes
    messages: int = 0
    moves: int = 0  #: the moves those messages showed (each watcher counts each move it saw)

    def add(self, raw: str | bytes) -> None:
        self.size += len(raw) if isinstance(raw, bytes) else len(raw.encode())
        self.messages += 1

    def figures(self) -> dict[str, Any]:
        return {
            "bytes": self.size,
            "messages": self.messages,
            "moves_seen": self.moves,
            "bytes_per_move": round(self.size / self.moves) if self.moves else None,
            "bytes_per_message": round(self.size / self.messages) if self.messages else None,
        }


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
    metrics_latencies: dict[str, list[float]] = field(default_factory=dict)
    metrics_sizes: dict[str, list[int]] = field(default_factory=dict)  #: URL -> bytes of each answer
    #: what kept /metrics from being read (not a load error: a server behind a proxy does not serve it)
    metrics_problems: Counter[str] = field(default_factory=Counter)
    processes_seen: dict[str, set[str]] = field(default_factory=dict)  #: URL -> bus process ids
    errors: Counter[str] = field(default_factory=Counter)
    games_wanted: int = 0  #: games that must be connected before the measured time begins
    ready: int = 0
    all_ready: asyncio.Event = field(default_factory=asyncio.Event)
    tracks: list[GameTrack] = field(default_factory=list)
    dead: set[str] = field(default_factory=set)  #: servers this tool killed
    restarting: set[str] = field(default_factory=set)  #: servers this tool is restarting now
    restarts: list[Restart] = field(default_factory=list)
    restart_reconnects: int = 0  #: connections a restarting server closed (1012): reconnected at once
    routed_around: int = 0  #: requests and connections refused by a restarting server, sent elsewhere
    killed_at: float | None = None
    disconnects_by_kill: int = 0  #: connections the kill broke or refused: expected, not errors
    clients_on_killed: set[int] = field(default_factory=set)  #: connected there, in play, at the kill
    clients_reconnected: set[int] = field(default_factory=set)  #: of those, back on another server
    spectators: int = 0  #: connections per game that only watch (``--spectators``)
    protocol: int = 2  #: the live protocol its clients speak (``--protocol``)
    #: what the WebSockets brought in the measured time: bytes, messages, and the moves they showed
    seat_traffic: Traffic = field(default_factory=lambda: Traffic())
    spectator_traffic: Traffic = field(default_factory=lambda: Traffic())

    @property
    def base_url(self) -> str:
        return self.urls[0]

    def measuring(self) -> bool:
        return not self.stopping and time.monotonic() >= self.window_start

    def error(self, url: str, label: str) -> None:
        """Counts an error, unless it came from a server this tool killed, or one it is restarting
        (refused: a proxy in front would have sent it to another process; the client tries there)."""
        if url in self.dead:
            self.disconnects_by_kill += 1
        elif url in self.restarting:
            self.routed_around += 1
        elif not self.stopping:
            self.errors[label] += 1

    def away(self, url: str) -> bool:
        """The server is killed or being restarted: sent nothing new."""
        return url in self.dead or url in self.restarting

    def next_live(self, position: int) -> int:
        """The next server after ``position`` that is still running (``position`` itself if none)."""
        for step in range(1, len(self.urls) + 1):
            candidate = (position + step) % len(self.urls)
            if not self.away(self.urls[candidate]):
                return candidate
        return position

    def live_from(self, position: int) -> int:
        """``position`` if that server still runs, else the next one that does."""
        return position if not self.away(self.urls[position]) else self.next_live(position)

    def pause_after_failure(self, url: str) -> float:
        if url in self.restarting:
            return RESTART_PAUSE
        return RECONNECT_PAUSE if url in self.dead else 1.0


def ws_base(url: str) -> str:
    return "ws" + url.removeprefix("http")


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
                await asyncio.sleep(load.pause_after_failure(url))
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


def open_table(url: str, game_id: str, protocol: int) -> Any:
    """The game's WebSocket on the server at ``url`` (an async context manager), speaking the
    live ``protocol``."""
    import websockets

    return websockets.connect(
        f"{ws_base(url)}/api/games/{game_id}/ws?protocol={protocol}",
        max_size=2**22,
        open_timeout=20,
        close_timeout=1,
        ping_interval=None,
    )


class TableCopy:
    """The table as a client has it: each whole table sent, and (protocol 2) each change applied
    to it. A change that does not follow the version it has leaves it out of step: the client asks
    for the whole table (``sync``)."""

    def __init__(self) -> None:
        self.state: dict[str, Any] | None = None
        self.version: int | None = None
        self.out_of_step = False

    def take(self, message: dict[str, Any]) -> dict[str, Any] | None:
        """The table after ``message``; None when it is not a table's (or does not follow)."""
        kind = message.get("type")
        if kind == "state":
            self.state, self.version, self.out_of_step = message["state"], message.get("v"), False
            return self.state
        if kind != "change":
            return None
        if self.state is None or message.get("from") != self.version:
            self.out_of_step = True
            return None
        self.state, self.version = apply_change(self.state, message), message.get("v")
        return self.state

    async def sync_if_out_of_step(self, ws: Any) -> None:
        if self.out_of_step:
            self.out_of_step = False  # asked once: the whole table answers
            await ws.send(json.dumps({"type": "sync"}))


async def watch_as_spectator(load: Load, url: str, game_id: str) -> None:
    """A spectator of the game: connects (again, through the next server still running, if its
    connection drops) and reads every message, counting what it was sent; says nothing but
    ``sync`` when a change did not follow."""

    last_move = -1
    position = load.urls.index(url)
    while not load.stopping:
        position = load.live_from(position)
        table = TableCopy()
        try:
            async with open_table(load.urls[position], game_id, load.protocol) as ws:
                async for raw in ws:
                    counted = load.measuring()
                    if counted:
                        load.spectator_traffic.add(raw)
                    state = table.take(json.loads(raw))
                    if state is None:
                        await table.sync_if_out_of_step(ws)
                        continue
                    number = int(state["move_number"])
                    if number > last_move:
                        if counted and last_move >= 0:
                            load.spectator_traffic.moves += number - last_move
                        last_move = number
                    if state["game"]["status"] == "finished":
                        return
        except asyncio.CancelledError:
            raise
        except Exception:  # its server restarts or was killed: the person's client counts that
            position = load.next_live(position)
            await asyncio.sleep(RECONNECT_PAUSE)


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
            watchers = [
                asyncio.create_task(watch_as_spectator(load, load.urls[self.ws_at], game_id))
                for _ in range(load.spectators)
            ]
            finished = False
            errors_in_a_row = 0
            while not load.stopping and not finished and errors_in_a_row < MAX_ERRORS_IN_A_ROW:
                url = self.ws_url()
                try:
                    async with open_table(url, game_id, load.protocol) as ws:
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
                    self.ws_at = load.next_live(self.ws_at)
                    if _closed_for_restart(exc):
                        # the server drains before it restarts: reconnect at once, quietly (the
                        # table page does the same), to another process if there is one
                        load.restart_reconnects += 1
                        continue
                    load.error(url, _disconnect_label(exc))
                    if url in load.dead:
                        self.back_after_kill = self.index in load.clients_on_killed
                    load.reconnects += 1
                    # Any server accepts any client: carry on through the next one.
                    await asyncio.sleep(RESTART_PAUSE if url in load.restarting else RECONNECT_PAUSE)
                finally:
                    self.connected_url = None
            self.playing = False
            for watcher in watchers:
                watcher.cancel()
            await asyncio.gather(*watchers, return_exceptions=True)
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
        table = TableCopy()
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
            if load.measuring():
                load.seat_traffic.add(raw)
            message = json.loads(raw)
            kind = message.get("type")
            if kind in ("state", "change"):
                taken = table.take(message)
                if taken is None:
                    await table.sync_if_out_of_step(ws)
                    continue
                state = taken
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
                load.seat_traffic.moves += number - track.last_move
            track.last_move = number
            game_id, elsewhere = track.game_id, self.connected_url
            for restart in track.restarts:
                waited = now - max(track.moved_at, restart.at)
                restart.paused[game_id] = max(restart.paused.get(game_id, 0.0), waited)
                if number > restart.games[game_id] and game_id not in restart.resumed:
                    restart.resumed[game_id] = now - restart.at
            # followed until it moves through another server (its own: it moved on before it stopped)
            track.restarts = [r for r in track.restarts if elsewhere == r.url and r.back_after is None]
            track.moved_at = now
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


def _closed_for_restart(exc: Exception) -> bool:
    """The server closed the connection asking the client to reconnect (it restarts)."""
    received = getattr(exc, "rcvd", None)
    return received is not None and received.code in RESTART_CLOSES


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
        if url in load.restarting:
            await asyncio.sleep(HEALTH_EVERY)
            continue
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
        if load.measuring() and started >= load.window_start and not load.away(url):
            samples.append(elapsed)
        await asyncio.sleep(max(0.0, HEALTH_EVERY - elapsed))


async def poll_metrics(load: Load, http: Any, url: str) -> None:
    """Asks one server's /metrics every METRICS_EVERY seconds, until it is killed: the time and the
    size of each answer. A refusal (a server reached through a proxy does not serve it) is noted,
    not counted as an error of the load."""
    samples = load.metrics_latencies.setdefault(url, [])
    sizes = load.metrics_sizes.setdefault(url, [])
    while not load.stopping and url not in load.dead:
        if url in load.restarting:  # as /api/health: a restarting server is not asked
            await asyncio.sleep(METRICS_EVERY)
            continue
        started = time.monotonic()
        try:
            response = await http.get(f"{url}/metrics")
        except Exception as exc:
            ok = False
            if not load.away(url) and not load.stopping:
                load.metrics_problems[f"{type(exc).__name__}"] += 1
        else:
            ok = response.status_code == 200
            if not ok:
                load.metrics_problems[f"HTTP {response.status_code}"] += 1
        elapsed = time.monotonic() - started
        if ok and load.measuring() and started >= load.window_start and not load.away(url):
            samples.append(elapsed)
            sizes.append(len(response.content))
        await asyncio.sleep(max(0.0, METRICS_EVERY - elapsed))
