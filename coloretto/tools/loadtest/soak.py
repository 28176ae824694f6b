"""The soak test: many whole games to their end over real WebSockets, and every game that stalled.

Each table is a game with one to three people, played by this tool, and bots in
the other seats; its rules are drawn from the core's option table (every
edition, joker timing, scoring table, round starter, player count …) from the
run's seed. The people behave as impatient players and buggy clients do:

- they act the moment it is their turn, the state after a bot's move included
  (some after a pause of a few milliseconds);
- now and then they send the same action twice, or act over HTTP instead of
  the WebSocket;
- now and then one drops the connection mid-game and comes back a moment
  later with the same seat token;
- some tables have a spectator, who only reads.

A table is **stalled** when no new move reached any of its clients for
``stall_after`` seconds while its game was unfinished. A stalled table is
reported with what the server says of it (whose turn, its last moves) and is
then given as long again: the report tells whether it moved on by itself (the
server's watchdog) or not at all.

A table's people and spectators each keep the move log they were shown; at the
end of every game the tool checks that each client saw every move, in order,
with no gap it did not fill from a later state.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from coloretto.rules import RULE_OPTIONS

#: bots the tables draw from: the quick ones most often (a soak wants many moves), a search now and then
SOAK_BOTS = ("random", "greedy", "easy", "medium", "heuristic", "builder", "random", "greedy", "mcts:40")
#: rule options left at their default in a soak (a match of many games makes a table last long)
MATCH_GAMES_AT_MOST = 2
#: how often a person does each odd thing, per move of theirs
TWICE_CHANCE = 0.15
REST_CHANCE = 0.08
DROP_CHANCE = 0.01
PAUSE_CHANCE = 0.3
PAUSE_LONGEST = 0.03
SPECTATOR_CHANCE = 0.25


@dataclass(frozen=True)
class TablePlan:
    """One table of the soak: its rules, who sits where, and whether someone watches."""

    index: int
    rules: dict[str, Any]
    seats: tuple[str, ...]  #: "human" or a bot's name, per seat
    spectator: bool
    seed: int

    @property
    def people(self) -> int:
        return sum(1 for seat in self.seats if seat == "human")

    def describe(self) -> str:
        rules = ", ".join(f"{k}={v}" for k, v in sorted(self.rules.items()))
        return f"table {self.index}: seats {list(self.seats)}; {rules}"


def plan_table(index: int, seed: int) -> TablePlan:
    """Table ``index`` of a run with ``seed``: the same table on every machine."""
    rng = random.Random(f"soak:{seed}:{index}")
    rules: dict[str, Any] = {}
    players = rng.randint(2, 5)
    for option in RULE_OPTIONS:
        if option.name == "players":
            continue
        if option.choices is not None:
            rules[option.name] = rng.choice(option.choices)
        elif option.name == "match_games":
            rules[option.name] = 1 if rng.random() < 0.85 else rng.randint(2, MATCH_GAMES_AT_MOST)
        elif option.optional and rng.random() < 0.8:
            continue  # the edition's own number
        else:
            low = option.minimum or 0
            rules[option.name] = rng.randint(low, low + 15)
    people = rng.randint(1, min(3, players))
    seats = ["human"] * people + [rng.choice(SOAK_BOTS) for _ in range(players - people)]
    rng.shuffle(seats)
    return TablePlan(index, rules, tuple(seats), rng.random() < SPECTATOR_CHANCE, rng.getrandbits(63))


@dataclass
class Stall:
    """A table where no move came for ``stall_after`` seconds while its game was unfinished."""

    table: str
    game_id: str
    url: str
    seen_move: int  #: the highest move number any of its clients was shown
    server: dict[str, Any]  #: what the server's public state said then
    clients: dict[str, dict[str, Any]]  #: each client: the server it is connected to, the move it saw
    recovered_after: float | None = None  #: seconds from the stall to its next move, if it came

    def as_dict(self) -> dict[str, Any]:
        return {
            "table": self.table,
            "game": self.game_id,
            "url": self.url,
            "seen_move": self.seen_move,
            "server": self.server,
            "clients": self.clients,
            "recovered_after_s": None if self.recovered_after is None else round(self.recovered_after, 2),
        }


@dataclass
class SoakRun:
    """What the tables of a run share: the servers, the counts and the stalls."""

    urls: list[str]
    seed: int
    stall_after: float
    tables_started: int = 0
    games_finished: int = 0
    moves: int = 0
    drops: int = 0
    doubles: int = 0
    rest_actions: int = 0
    stalls: list[Stall] = field(default_factory=list)
    errors: Counter[str] = field(default_factory=Counter)
    refusals: Counter[str] = field(default_factory=Counter)  #: expected refusals (a double's "stale")
    http_retries: int = 0  #: HTTP actions sent again after the connection failed

    def url_of(self, index: int) -> str:
        return self.urls[index % len(self.urls)]


class Table:
    """One game of the soak, from its creation to its end (or to being given up after a stall)."""

    def __init__(self, run: SoakRun, plan: TablePlan, http: Any) -> None:
        self.run = run
        self.plan = plan
        self.http = http
        self.url = run.url_of(plan.index)
        self.rng = random.Random(plan.seed)
        self.game_id = ""
        self.seen = 0  #: the highest move number any client of the table was shown
        self.progress_at = time.monotonic()
        self.finished = asyncio.Event()
        self.status = "open"
        self.connections = 0  #: opened so far (each on the next server)
        #: each client ("seat 2", "spectator"): the server it is connected to, the last move it saw
        self.clients: dict[str, dict[str, Any]] = {}

    async def run_to_end(self) -> None:
        seats = await self._create()
        clients = [
            asyncio.create_task(self._person(seat, token, random.Random(self.rng.getrandbits(63))))
            for seat, token in seats
        ]
        if self.plan.spectator:
            clients.append(asyncio.create_task(self._spectator()))
        try:
            await self._watch()
        finally:
            for task in clients:
                task.cancel()
            results = await asyncio.gather(*clients, return_exceptions=True)
        for result in results:
            if isinstance(result, Exception) and not isinstance(result, asyncio.CancelledError):
                self.run.errors[f"client failed: {type(result).__name__}: {str(result)[:80]}"] += 1

    async def _create(self) -> list[tuple[int, str]]:
        plan = self.plan
        body = {
            "name": f"soak {plan.index}",
            "seats": [{"kind": "human"} if s == "human" else {"kind": "bot", "bot": s} for s in plan.seats],
            "creator_name": f"soak {plan.index}",
            "rules": plan.rules,
        }
        response = await self.http.post(f"{self.url}/api/games", json=body)
        if response.status_code != 201:
            raise RuntimeError(f"creation refused: {response.status_code} {response.text[:200]}")
        created = response.json()
        self.game_id = created["game"]["id"]
        seats = [(int(created["seat"]), str(created["token"]))]
        for other in range(plan.people - 1):
            joined = await self.http.post(
                f"{self.url}/api/games/{self.game_id}/join", json={"name": f"soak {plan.index}.{other + 2}"}
            )
            if joined.status_code != 200:
                raise RuntimeError(f"join refused: {joined.status_code} {joined.text[:200]}")
            body = joined.json()
            seats.append((int(body["seat"]), str(body["token"])))
        self.run.tables_started += 1
        self.progress_at = time.monotonic()
        return seats

    async def _watch(self) -> None:
        """Until the game is over: a table without a new move for ``stall_after`` is a stall."""
        stall: Stall | None = None
        while not self.finished.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.finished.wait(), 0.25)
            quiet = time.monotonic() - self.progress_at
            if self.finished.is_set():
                break
            if stall is None and quiet > self.run.stall_after:
                view = await self._server_view()
                clients = {who: dict(client) for who, client in self.clients.items()}
                stall = Stall(self.plan.describe(), self.game_id, self.url, self.seen, view, clients)
                self.run.stalls.append(stall)
                stalled_at, seen_then = time.monotonic(), self.seen
            elif stall is not None:
                if stall.recovered_after is None and self.seen > seen_then:
                    stall.recovered_after = time.monotonic() - stalled_at
                if time.monotonic() - stalled_at > self.run.stall_after and self.seen == seen_then:
                    return  # given up: it did not move on by itself
        if self.status == "finished":
            self.run.games_finished += 1

    async def _server_view(self) -> dict[str, Any]:
        try:
            response = await self.http.get(f"{self.url}/api/games/{self.game_id}")
            state = response.json()
            return {
                "move_number": state.get("move_number"),
                "to_move": state.get("to_move"),
                "status": state.get("game", {}).get("status"),
                "thinking": state.get("thinking"),
                "last_moves": [entry.get("move") for entry in state.get("log", [])[-4:]],
            }
        except Exception as exc:
            return {"unreadable": f"{type(exc).__name__}: {exc}"}

    def _saw(self, state: dict[str, Any], log: dict[int, str], who: str) -> None:
        """A state reached a client: new moves are progress; its log must extend what it saw."""
        number = int(state["move_number"])
        self.clients[who]["seen"] = number
        for entry in state.get("log", []):
            move = int(entry["number"])
            text = str(entry["move"])
            if log.setdefault(move, text) != text:
                self.run.errors["a move shown differently in a later state"] += 1
        if number > self.seen:
            self.run.moves += number - self.seen
            self.seen = number
            self.progress_at = time.monotonic()
        status = str(state["game"]["status"])
        if status != "playing" and status != "open":
            self.status = status
            self.finished.set()

    def _another_server(self) -> str:
        """With several servers, each connection and HTTP action goes to the next one in turn
        after the table's own: every change crosses processes on its way to some client."""
        self.connections += 1
        urls = self.run.urls
        return urls[(urls.index(self.url) + self.connections) % len(urls)]

    async def _connect(self, who: str) -> Any:
        import websockets

        server = self._another_server()
        self.clients[who] = {"server": server, "seen": self.clients.get(who, {}).get("seen")}
        ws_url = "ws" + server.removeprefix("http") + f"/api/games/{self.game_id}/ws"
        return await websockets.connect(ws_url, max_size=2**23, open_timeout=30, ping_interval=None)

    async def _person(self, seat: int, token: str, rng: random.Random) -> None:
        log: dict[int, str] = {}
        while not self.finished.is_set():
            ws = await self._connect(f"seat {seat + 1}")
            try:
                await ws.send(json.dumps({"type": "hello", "token": token}))
                dropped = await self._play(ws, seat, token, rng, log)
            finally:
                await ws.close()
            if not dropped:
                return
            self.run.drops += 1
            await asyncio.sleep(rng.uniform(0.0, 0.5))

    async def _play(self, ws: Any, seat: int, token: str, rng: random.Random, log: dict[int, str]) -> bool:
        """Read and act until the game ends (False) or this person drops the connection (True)."""
        last_act: str | None = None  # the last action sent, as JSON: sent again if refused for the rate
        async for raw in ws:
            message = json.loads(raw)
            kind = message.get("type")
            if kind == "error":
                code = str(message.get("error"))
                if code in ("stale", "not_your_turn"):
                    self.run.refusals[code] += 1  # a double's second copy, a table that moved on
                elif code == "rate_limited" and last_act is not None:
                    # as a person would: the move did not go through, so it is made again
                    self.run.refusals[code] += 1
                    await asyncio.sleep(float(message.get("retry_after", 0.1)) + 0.01)
                    await ws.send(last_act)
                else:
                    self.run.errors[f"ws {code}: {str(message.get('message'))[:60]}"] += 1
                continue
            if kind != "state":
                continue
            state = message["state"]
            self._saw(state, log, f"seat {seat + 1}")
            if self.finished.is_set():
                return False
            if state.get("you") != seat or state.get("to_move") != seat or not state.get("legal"):
                continue
            if rng.random() < DROP_CHANCE:
                return True
            if rng.random() < PAUSE_CHANCE:
                await asyncio.sleep(rng.uniform(0.0, PAUSE_LONGEST))
            action = rng.choice(state["legal"])
            move = int(state["move_number"])
            act = json.dumps({"type": "act", "action": action, "move": move})
            if rng.random() < REST_CHANCE:
                self.run.rest_actions += 1
                await self._act_over_http(token, action, move)
            else:
                await ws.send(act)
                last_act = act
            if rng.random() < TWICE_CHANCE:
                self.run.doubles += 1
                await ws.send(act)
        if not self.finished.is_set():
            self.run.errors["the server closed a person's WebSocket mid-game"] += 1
        return False

    async def _act_over_http(self, token: str, action: str, move: int) -> None:
        import httpx

        for attempt in range(3):
            try:
                response = await self.http.post(
                    f"{self._another_server()}/api/games/{self.game_id}/actions",
                    json={"action": action, "move": move},
                    headers={"Authorization": f"Bearer {token}"},
                )
                break
            except httpx.TransportError:
                # as a person would, clicking again: the move number makes a repeat harmless
                self.run.http_retries += 1
                if attempt == 2:
                    raise
                await asyncio.sleep(0.2)
        if response.status_code == 409:
            self.run.refusals[str(response.json().get("error"))] += 1
        elif response.status_code != 200:
            self.run.errors[f"http act {response.status_code}: {response.text[:60]}"] += 1

    async def _spectator(self) -> None:
        log: dict[int, str] = {}
        ws = await self._connect("spectator")
        try:
            async for raw in ws:
                message = json.loads(raw)
                if message.get("type") == "state":
                    self._saw(message["state"], log, "spectator")
                    if self.finished.is_set():
                        return
        finally:
            await ws.close()


async def soak(
    urls: list[str], games: int, at_once: int, seed: int, stall_after: float, http: Any
) -> SoakRun:
    """Play ``games`` whole games on the servers at ``urls``, ``at_once`` tables at a time."""
    run = SoakRun(urls=urls, seed=seed, stall_after=stall_after)
    next_index = 0

    async def table_loop() -> None:
        nonlocal next_index
        while next_index < games:
            index = next_index
            next_index += 1
            table = Table(run, plan_table(index, seed), http)
            try:
                await table.run_to_end()
            except Exception as exc:
                run.errors[f"table failed: {type(exc).__name__}: {str(exc)[:120]}"] += 1

    await asyncio.gather(*(table_loop() for _ in range(min(at_once, games))))
    return run
