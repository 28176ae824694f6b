"""Several real ``coloretto serve`` processes on one PostgreSQL database and one Redis, and nginx in
front of them (docs/nginx.conf): watchers anywhere see every move in order, a process SIGKILLed
mid-game loses no acknowledged move and its games go on in another within seconds, a move is
committed before anyone is told, clients reconnect through nginx, nothing secret leaks.

Clients are real WebSockets and HTTP requests on loopback; servers and nginx are processes of
their own (tests/servers.py). Waits are for events (a message, a state); the timeouts
are hang guards. The one bound measured is the issue's: a dead owner's bots move again within
5 s.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import signal
import socket
import time
from collections.abc import Callable, Coroutine
from itertools import pairwise
from pathlib import Path
from typing import Any, TypeVar

import httpx
import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake

from coloretto.commands import serve
from coloretto.match import Match
from coloretto.rules import Rules
from coloretto.tools.loadtest.clients import TableCopy
from coloretto.web.common.faults import FAULT_VARIABLE
from coloretto.web.table.live import ENDED
from tests.servers import (
    NGINX_SITE,
    REPO,
    Cluster,
    ServeProcess,
    Servers,
    require_postgresql,
    stored_moves,
    stored_seed,
)
from tests.test_web import keys_of, order_forms

T = TypeVar("T")

#: hang guards, never speed requirements
SCENARIO_TIMEOUT = 240.0
MESSAGE_TIMEOUT = 30.0
#: the issue's bound: a dead owner's games go on in another process within 5 s (plus a margin for
#: a loaded machine: the states travel over a WebSocket and the test reads them in Python)
TAKEOVER_BOUND = 5.0 + 1.0


def run(scenario: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(asyncio.wait_for(scenario, SCENARIO_TIMEOUT))


@pytest.fixture
def database_url(request: pytest.FixtureRequest) -> str:
    """PostgreSQL for the cluster, after the session's first search (the ``compiled_search``
    fixture) has run in this process."""
    url = require_postgresql()
    request.getfixturevalue("compiled_search")
    return url


def http(base_url: str, **kwargs: Any) -> httpx.Client:
    return httpx.Client(base_url=base_url, timeout=15.0, trust_env=False, **kwargs)


def create_game(base_url: str, seats: list[str], creator: str | None = "Ann", **extra: Any) -> dict[str, Any]:
    """POST /api/games: ``seats`` are "human" or a bot's name."""
    body: dict[str, Any] = {
        "seats": [{"kind": "human"} if s == "human" else {"kind": "bot", "bot": s} for s in seats],
        **extra,
    }
    if creator is not None:
        body["creator_name"] = creator
    with http(base_url) as client:
        response = client.post("/api/games", json=body)
    assert response.status_code == 201, response.text
    created: dict[str, Any] = response.json()
    return created


def join_game(base_url: str, game_id: str, name: str) -> str:
    with http(base_url) as client:
        response = client.post(f"/api/games/{game_id}/join", json={"name": name})
    assert response.status_code == 200, response.text
    return str(response.json()["token"])


def table_state(base_url: str, game_id: str, token: str | None = None) -> dict[str, Any]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    with http(base_url) as client:
        response = client.get(f"/api/games/{game_id}", headers=headers)
    assert response.status_code == 200, response.text
    state: dict[str, Any] = response.json()
    return state


def choose(state: dict[str, Any]) -> str:
    """A simple policy: take a row of two or more cards, else draw."""
    legal: list[str] = state["legal"]
    full = [a for a in legal if a.startswith("t") and len(state["rows"][int(a[1:]) - 1]["cards"]) >= 2]
    if full or "d" not in legal:
        return (full or legal)[0]
    return "d"


def over(state: dict[str, Any]) -> bool:
    return state["game"]["status"] in ENDED


class Table:
    """One WebSocket on a game: keeps every message's text (for the secrecy checks) and hands the
    messages out in order."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        #: how long a message may take: a hang guard, longer where the server waits on purpose
        self.timeout = MESSAGE_TIMEOUT
        self.texts: list[str] = []
        self.states: list[dict[str, Any]] = []

    @classmethod
    async def open(
        cls, ws_base: str, game_id: str, *, local_address: str | None = None, origin: str | None = None
    ) -> Table:
        extra: dict[str, Any] = {"local_addr": (local_address, 0)} if local_address else {}
        ws = await connect(
            f"{ws_base}/api/games/{game_id}/ws",
            proxy=None,
            origin=origin,  # type: ignore[arg-type]
            open_timeout=MESSAGE_TIMEOUT,
            max_size=2**22,
            **extra,
        )
        return cls(ws)

    async def send(self, message: dict[str, Any]) -> None:
        await self.ws.send(json.dumps(message))

    async def receive(self) -> dict[str, Any]:
        text = await asyncio.wait_for(self.ws.recv(), self.timeout)
        assert isinstance(text, str)
        self.texts.append(text)
        message: dict[str, Any] = json.loads(text)
        if message["type"] == "state":
            self.states.append(message["state"])
        return message

    async def state_where(self, done: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        while True:
            message = await self.receive()
            if message["type"] == "state" and done(message["state"]):
                return message["state"]

    async def close(self) -> None:
        await self.ws.close()


class Player:
    """A person's seat played over a :class:`Table`: acts as soon as it is their turn, once per
    move number, and keeps the moves the server acknowledged (a state holding them)."""

    def __init__(self, table: Table, token: str) -> None:
        self.table = table
        self.token = token
        self.seat: int | None = None
        self.acted_at = -1  #: the move number of the table this seat last acted on
        self.acknowledged: list[str] = []  #: the log of the last state this seat was sent

    async def hello(self) -> None:
        await self.table.send({"type": "hello", "token": self.token})
        while True:
            message = await self.table.receive()
            if message["type"] == "welcome":
                self.seat = message["seat"]
                return

    async def play_until(self, done: Callable[[dict[str, Any]], bool] = over) -> dict[str, Any]:
        """Play on; return the first state (of this seat's own view) for which ``done`` holds,
        without acting on it."""
        while True:
            message = await self.table.receive()
            if message["type"] == "error":
                assert message["error"] in ("stale", "not_your_turn"), message
                # the table moved on under the move: look again (hello sends this seat's view)
                self.acted_at = -1
                await self.table.send({"type": "hello", "token": self.token})
                continue
            if message["type"] != "state":
                continue
            state = message["state"]
            if state["you"] != self.seat:  # the spectator's view sent before hello
                continue
            self.acknowledged = [entry["move"] for entry in state["log"]]
            if done(state):
                return state
            if state["legal"] and state["move_number"] != self.acted_at:
                self.acted_at = state["move_number"]
                await self.table.send({"type": "act", "action": choose(state), "move": state["move_number"]})


async def watch_to_end(table: Table) -> list[dict[str, Any]]:
    """Every state a watcher gets until the game is over."""
    await table.state_where(over)
    return table.states


def assert_every_move_in_order(states: list[dict[str, Any]], moves: list[str], *, from_start: bool) -> None:
    """The states a watcher got: one per move at least, none skipped, none out of order, the
    last one the finished game, the moves those in the database."""
    numbers = [s["move_number"] for s in states]
    steps = {b - a for a, b in pairwise(numbers)}
    assert steps <= {0, 1}, f"a watcher's states skipped or went back: {numbers}"
    if from_start:
        assert numbers[0] == 0, numbers
    assert numbers[-1] == len(moves), (numbers[-1], len(moves))
    assert states[-1]["game"]["status"] == "finished"
    assert [entry["move"] for entry in states[-1]["log"]] == moves


def assert_no_tracebacks(cluster: Cluster, *, dead: tuple[int, ...] = ()) -> None:
    for i, server in enumerate(cluster.servers):
        if i not in dead:
            assert "Traceback" not in server.output, server.output_tail(80)


# ------------------------------------------------------------------ fan-out


def test_watchers_on_the_other_process_see_every_move_in_order(
    database_url: str, tmp_path: Path, servers: Servers
) -> None:
    with servers.cluster(tmp_path, database_url, bot_delay=0.02) as cluster:
        a, b = cluster.servers
        # a game created on each process, waiting for its person (so that watchers see move 0)
        games = []
        for owner, other in ((a, b), (b, a)):
            created = create_game(owner.url, ["human", "random", "greedy", "random"], creator=None)
            games.append((owner, other, created["game"]["id"]))

        async def scenario() -> None:
            watchers: list[tuple[str, Table]] = []
            for owner, other, game_id in games:
                for server in (other, other, owner):  # two on the other process, one on the owner
                    table = await Table.open(server.ws_url, game_id)
                    await table.state_where(lambda s: s["move_number"] == 0)
                    watchers.append((game_id, table))
            players = []
            for owner, _other, game_id in games:
                token = join_game(owner.url, game_id, "Bea")  # the game starts: the owner's bots move
                player = Player(await Table.open(owner.ws_url, game_id), token)
                await player.hello()
                players.append(player)
            # one more watcher on each game, from the other process, once play is under way
            late: list[tuple[str, Table]] = []
            for _owner, other, game_id in games:
                table = await Table.open(other.ws_url, game_id)
                late.append((game_id, table))
            results = await asyncio.gather(
                *(p.play_until() for p in players),
                *(watch_to_end(t) for _, t in watchers),
                *(watch_to_end(t) for _, t in late),
            )
            finals, seen = results[: len(players)], results[len(players) :]
            assert all(final["game"]["status"] == "finished" for final in finals)
            for i, ((game_id, _), states) in enumerate(zip(watchers + late, seen, strict=True)):
                moves = stored_moves(cluster.engine, game_id)
                assert len(moves) > 40  # a whole game of four
                assert_every_move_in_order(states, moves, from_start=i < len(watchers))
            for table in [t for _, t in watchers + late] + [p.table for p in players]:
                await table.close()

        run(scenario())
        assert_no_tracebacks(cluster)


def test_a_move_event_lost_on_the_way_is_repaired_at_the_next_one(
    database_url: str, tmp_path: Path, servers: Servers
) -> None:
    # B loses the 5th move event A publishes (Redis pub/sub delivers at most once) and looks for
    # copies the database moved past only every 10 minutes: only the gap in the move numbers,
    # seen at the next event, can put its watchers right
    with servers.cluster(
        tmp_path,
        database_url,
        bot_delay=0.02,
        server_args={1: ["--adopt-interval", "600"]},
        server_env={1: {FAULT_VARIABLE: "drop:bus:5"}},
    ) as cluster:
        a, b = cluster.servers
        created = create_game(a.url, ["human", "random", "greedy", "random"], creator=None)
        game_id = created["game"]["id"]

        async def rebuilt_to_end(ws: ClientConnection) -> list[dict[str, Any]]:
            """The tables a protocol-2 watcher rebuilds from the whole table and its changes."""
            copy, tables = TableCopy(), []
            while not (tables and over(tables[-1])):
                table = copy.take(json.loads(await asyncio.wait_for(ws.recv(), MESSAGE_TIMEOUT)))
                assert not copy.out_of_step, "a change that did not follow the version the watcher had"
                if table is not None:
                    tables.append(table)
            return tables

        async def scenario() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
            watcher = await Table.open(b.ws_url, game_id)
            await watcher.state_where(lambda s: s["move_number"] == 0)
            changes = await connect(f"{b.ws_url}/api/games/{game_id}/ws?protocol=2", proxy=None)
            token = join_game(a.url, game_id, "Bea")
            player = Player(await Table.open(a.ws_url, game_id), token)
            await player.hello()
            final, states, tables = await asyncio.gather(
                player.play_until(), watch_to_end(watcher), rebuilt_to_end(changes)
            )
            assert final["game"]["status"] == "finished"
            for ws in (watcher.ws, changes, player.table.ws):
                await ws.close()
            return states, tables

        states, tables = run(scenario())
        assert tables[-1] == states[-1]  # the protocol-2 watcher's table, rebuilt, is the whole one
        assert sorted(
            {later["move_number"] - earlier["move_number"] for earlier, later in pairwise(tables)}
        ) == [0, 1]
        moves = stored_moves(cluster.engine, game_id)
        numbers = [s["move_number"] for s in states]
        steps = [later - earlier for earlier, later in pairwise(numbers)]
        # B read the game again when move 6 came after its move 4, and its watcher was shown every
        # move in order all the same, the lost one included
        assert sorted(set(steps)) == [0, 1], numbers
        assert numbers[-1] == len(moves) > 40
        for state in states:
            assert [entry["move"] for entry in state["log"]] == moves[: state["move_number"]]
        assert states[-1]["game"]["status"] == "finished"
        exported = httpx.get(f"{b.url}/metrics", timeout=10).text
        assert re.search(r"^coloretto_bus_gaps_total 1\.0$", exported, re.M), exported[-2000:]
        assert f"game {game_id}: move 6 came from another process after move 4 here: read again" in b.output
        assert_no_tracebacks(cluster)


# ----------------------------------------------------------------- takeover


@pytest.mark.slow
@pytest.mark.parametrize("how", ["SIGKILL", "SIGTERM"])
def test_a_dead_owners_game_goes_on_in_the_other_process_within_5_s(
    database_url: str, tmp_path: Path, how: str, servers: Servers
) -> None:
    """SIGKILL: the owner's lease lapses; SIGTERM (a service stopped): the owner gives it up."""
    # A's bots wait 2 s before they move: a window in which to kill A with a bot to move and the
    # person's last move acknowledged; B's bots move at once once B runs the game.
    with servers.cluster(tmp_path, database_url, bot_delay=(2.0, 0.05)) as cluster:
        a, b = cluster.servers
        created = create_game(a.url, ["human", "random", "greedy"])
        game_id, token = created["game"]["id"], created["token"]
        assert cluster.lease_holder(game_id) == a.process_id == a.health()["process"]
        assert b.process_id != a.process_id

        def bots_to_move_after_my_move(state: dict[str, Any]) -> bool:
            log = state["log"]
            return (
                state["move_number"] >= 4
                and state["game"]["status"] == "playing"
                and state["to_move"] != state["you"]
                and bool(log)
                and log[-1]["seat"] == state["you"]
            )

        async def scenario() -> None:
            player = Player(await Table.open(b.ws_url, game_id), token)  # the person is on B
            await player.hello()
            at_kill = await player.play_until(bots_to_move_after_my_move)
            killed_at = time.monotonic()
            if how == "SIGKILL":
                a.kill()
            else:
                # uvicorn shuts down, then dies of the signal it caught, as a service should
                a.terminate()
                assert a.wait_exit(timeout=30) in (0, -signal.SIGTERM)
                assert "Application shutdown complete" in a.output
            acknowledged = list(player.acknowledged)
            stored = stored_moves(cluster.engine, game_id)
            if how == "SIGKILL":  # nothing acknowledged is lost, and A's bot had not moved (2 s)
                assert stored == acknowledged
            else:
                # nothing acknowledged is lost; B may run the game already (A handed it over), and
                # a drain that took longer than the bot's 2 s (a loaded machine) may have let A's
                # bot commit its move first, which is kept
                assert stored[: len(acknowledged)] == acknowledged
            moved = await player.table.state_where(lambda s: s["move_number"] > at_kill["move_number"])
            took = time.monotonic() - killed_at
            print(f"after {how} of the owner, its bots moved again (on B) in {took:.2f} s")
            assert took <= TAKEOVER_BOUND, f"the game went on {took:.2f} s after its owner died"
            assert moved["log"][: len(acknowledged)] == at_kill["log"]
            assert cluster.lease_holder(game_id) == b.process_id
            final = await player.play_until()
            assert final["game"]["status"] == "finished"
            moves = stored_moves(cluster.engine, game_id)
            assert moves[: len(acknowledged)] == acknowledged
            assert [entry["move"] for entry in final["log"]] == moves
            await player.table.close()

        run(scenario())
        assert_no_tracebacks(cluster, dead=(0,))


# --------------------------------------------------------------- durability


@pytest.mark.slow
@pytest.mark.parametrize("fault", ["kill-after-commit", "kill-before-commit"])
def test_a_move_is_committed_before_anyone_is_told_on_two_processes(
    database_url: str, tmp_path: Path, fault: str, servers: Servers
) -> None:
    """The person plays through A, whose writer commits nothing but the person's moves (B created
    the game and runs its bots): A kills itself just before or just after its 3rd COMMIT."""
    env = {0: {"COLORETTO_FAULT": f"{fault}:3"}}
    with servers.cluster(tmp_path, database_url, bot_delay=0.05, server_env=env) as cluster:
        a, b = cluster.servers
        created = create_game(b.url, ["human", "random", "greedy"])
        game_id, token = created["game"]["id"], created["token"]

        async def scenario() -> None:
            player = Player(await Table.open(a.ws_url, game_id), token)
            await player.hello()
            with pytest.raises(ConnectionClosed):
                await player.play_until(lambda s: False)
            assert a.wait_exit(timeout=MESSAGE_TIMEOUT) != 0  # it died of the fault
            acted_at = player.acted_at  # the move number the last act was sent at
            moves = stored_moves(cluster.engine, game_id)
            told = max(s["move_number"] for s in player.table.states)
            assert told == acted_at  # the person was never told of the move A died on
            if fault == "kill-after-commit":
                # committed, so it is stored, and B (which runs the game) shows it
                assert len(moves) == acted_at + 1
                deadline = time.monotonic() + MESSAGE_TIMEOUT
                while table_state(b.url, game_id)["move_number"] <= acted_at:
                    assert time.monotonic() < deadline, "B never showed the move A committed"
                    await asyncio.sleep(0.1)
            else:
                assert len(moves) == acted_at  # not committed: not stored, not played anywhere
                assert table_state(b.url, game_id, token)["move_number"] == acted_at
            # the person comes back through B and finishes the game
            player = Player(await Table.open(b.ws_url, game_id), token)
            await player.hello()
            final = await player.play_until()
            assert final["game"]["status"] == "finished"
            moves = stored_moves(cluster.engine, game_id)
            assert [entry["move"] for entry in final["log"]] == moves
            await player.table.close()

        run(scenario())
        assert_no_tracebacks(cluster, dead=(0,))


# -------------------------------------------------------------- behind nginx

ANN, BOB = "127.0.0.2", "127.0.0.3"  #: two clients' addresses (nginx and the servers are on 127.0.0.1)
AGAINST_BOTS = {
    "seats": [{"kind": "human"}, {"kind": "bot", "bot": "random"}, {"kind": "bot", "bot": "greedy"}],
    "creator_name": "Ann",
}
WAITING = {"seats": [{"kind": "human"}, {"kind": "human"}], "creator_name": "Ann"}


def require_local_addresses() -> None:
    """Linux answers on the whole of 127.0.0.0/8: clients can come from addresses of their own."""
    try:
        with socket.socket() as sock:
            sock.bind((BOB, 0))
    except OSError:
        pytest.skip(f"this system does not answer on {ANN} and {BOB} (Linux does)")


def client_from(base_url: str, address: str) -> httpx.Client:
    return http(base_url, transport=httpx.HTTPTransport(local_address=address))


async def reconnect(ws_base: str, game_id: str, token: str, origin: str) -> Player:
    """What the table page does when its socket closes: open a new one, say hello with the token."""
    for _ in range(100):
        try:
            table = await Table.open(ws_base, game_id, local_address=ANN, origin=origin)
        except (OSError, InvalidHandshake):
            await asyncio.sleep(0.1)  # the page waits 0.5 s, doubling: a test need not
            continue
        player = Player(table, token)
        await player.hello()
        return player
    raise AssertionError("the client could not reconnect through nginx")


@pytest.mark.slow
def test_through_nginx_a_client_plays_and_reconnects_when_its_process_dies(
    database_url: str, tmp_path: Path, servers: Servers
) -> None:
    require_local_addresses()
    args = {i: ["--trusted-proxy", "127.0.0.1", "--max-waiting-per-client", "1"] for i in range(2)}
    with servers.cluster(tmp_path, database_url, nginx=True, bot_delay=0.05, server_args=args) as cluster:
        assert cluster.nginx is not None
        front, front_ws = cluster.nginx.url, cluster.nginx.ws_url
        with client_from(front, ANN) as ann, client_from(front, BOB) as bob:
            # round robin: requests reach both processes
            processes = {ann.get("/api/health").json()["process"] for _ in range(6)}
            assert processes == {s.process_id for s in cluster.servers}
            # The limits see each client's own address (X-Forwarded-For from nginx), whichever process
            # answers: Ann's second game waiting for players is refused, even when she claims another
            # address herself, and Bob's first is not.
            assert ann.post("/api/games", json=WAITING).status_code == 201
            refused = ann.post("/api/games", json=WAITING, headers={"X-Forwarded-For": "198.51.100.7"})
            assert refused.status_code == 429, refused.text
            assert refused.json()["error"] == "too_many_waiting"
            assert bob.post("/api/games", json=WAITING).status_code == 201
            games = [ann.post("/api/games", json=AGAINST_BOTS).json() for _ in range(2)]
        origin = front  # the table page nginx serves opens the socket: its Origin is the site's

        async def scenario() -> None:
            refused = await Table.open(front_ws, games[0]["game"]["id"], origin="https://elsewhere.example")
            message = await refused.receive()
            assert message["type"] == "error" and message["error"] == "bad_origin", message
            # a whole game over a WebSocket through nginx
            first = await reconnect(front_ws, games[0]["game"]["id"], games[0]["token"], origin)
            final = await first.play_until()
            assert final["game"]["status"] == "finished"
            assert [e["move"] for e in final["log"]] == stored_moves(cluster.engine, games[0]["game"]["id"])
            await first.table.close()
            # Another, during which the process that runs it, and that her WebSocket goes through,
            # is SIGKILLed: she must reconnect, and the other process must take the game over.
            # Round robin sends her next WebSocket to the next process: open one until it is that.
            game_id, token = games[1]["game"]["id"], games[1]["token"]
            owner = cluster.server_of(str(cluster.lease_holder(game_id)))
            for _ in range(6):
                player = await reconnect(front_ws, game_id, token, origin)
                if await asyncio.to_thread(server_holding_a_websocket, cluster) is owner:
                    break
                await player.table.close()
            else:
                pytest.fail("nginx never sent the WebSocket to the process running the game")
            at_kill = await player.play_until(lambda s: s["move_number"] >= 6)
            owner.kill()
            with pytest.raises(ConnectionClosed):
                await player.play_until(lambda s: False)
            acknowledged = list(player.acknowledged)
            player = await reconnect(front_ws, game_id, token, origin)  # nginx skips the dead one
            final = await player.play_until()
            assert final["game"]["status"] == "finished"
            assert final["move_number"] > at_kill["move_number"]
            moves = stored_moves(cluster.engine, game_id)
            assert moves[: len(acknowledged)] == acknowledged
            assert [e["move"] for e in final["log"]] == moves
            await player.table.close()
            await refused.close()

        run(scenario())
        dead = tuple(i for i, s in enumerate(cluster.servers) if not s.alive)
        assert len(dead) == 1
        assert_no_tracebacks(cluster, dead=dead)


def established_connections(port: int) -> int:
    """Open TCP connections to a local listening port, from /proc/net/tcp (Linux)."""
    count = 0
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            local, state = fields[1], fields[3]
            if state == "01" and int(local.rsplit(":", 1)[1], 16) == port:
                count += 1
    return count


def server_holding_a_websocket(cluster: Cluster) -> ServeProcess:
    """The one server process with a connection open from nginx: the WebSocket's (nginx keeps no
    idle connections to them, and no request is in flight)."""
    deadline = time.monotonic() + MESSAGE_TIMEOUT
    while True:
        counts = {server.port: established_connections(server.port) for server in cluster.servers}
        holding = [server for server in cluster.servers if counts[server.port] > 0]
        if len(holding) == 1 and counts[holding[0].port] == 1:
            return holding[0]
        assert time.monotonic() < deadline, f"connections to the servers: {counts}"
        time.sleep(0.05)  # connections of earlier requests still closing: no event to wait on


def first_creations(server: ServeProcess, address: str, claims: list[str]) -> list[int]:
    """Statuses of games waiting for players created from ``address``, one per claimed
    X-Forwarded-For; the server allows one waiting game per client."""
    with client_from(server.url, address) as client:
        return [
            client.post("/api/games", json=WAITING, headers={"X-Forwarded-For": claim}).status_code
            for claim in claims
        ]


def test_x_forwarded_for_is_believed_from_a_trusted_proxy_only(
    compiled_search: None, tmp_path: Path, servers: Servers
) -> None:
    require_local_addresses()
    args = ["--trusted-proxy", ANN, "--max-waiting-per-client", "1"]
    server = servers.one(tmp_path, args=args)
    try:
        # the proxy names two clients: each may have its game waiting
        assert first_creations(server, ANN, ["203.0.113.1", "203.0.113.2"]) == [201, 201]
        # a client that is no proxy claims to be two others: it is one client still
        assert first_creations(server, BOB, ["203.0.113.3", "203.0.113.4"]) == [201, 429]
    finally:
        server.stop()


def test_x_forwarded_for_from_loopback_is_not_believed_without_trusted_proxy(
    compiled_search: None, tmp_path: Path, servers: Servers
) -> None:
    server = servers.one(tmp_path, args=["--max-waiting-per-client", "1"])
    try:
        assert first_creations(server, "127.0.0.1", ["203.0.113.1", "203.0.113.2"]) == [201, 429]
    finally:
        server.stop()


# ------------------------------------------------------------------ secrecy


def test_nothing_a_person_or_spectator_on_the_other_process_gets_holds_the_seed_or_deck(
    database_url: str, tmp_path: Path, servers: Servers
) -> None:
    with servers.cluster(tmp_path, database_url, bot_delay=0.02) as cluster:
        a, b = cluster.servers
        created = create_game(a.url, ["human", "human", "greedy"], rules={"edition": "modern"})
        game_id, ann = created["game"]["id"], created["token"]
        texts: list[str] = [json.dumps(created)]
        seed = stored_seed(cluster.engine, game_id)

        async def scenario() -> None:
            spectator = await Table.open(b.ws_url, game_id)
            await spectator.state_where(lambda s: True)
            with http(b.url) as client:
                joined = client.post(f"/api/games/{game_id}/join", json={"name": "Bob"})
            texts.append(joined.text)
            bob = Player(await Table.open(b.ws_url, game_id), joined.json()["token"])  # on B
            ann_player = Player(await Table.open(a.ws_url, game_id), ann)  # on A, which runs the game
            await bob.hello()
            await ann_player.hello()
            polls: list[str] = []

            async def poll_b() -> None:
                with http(b.url) as client:
                    while True:
                        for path in (f"/api/games/{game_id}", "/api/games"):
                            response = await asyncio.to_thread(client.get, path)
                            polls.append(response.text)
                            if path != "/api/games" and over(response.json()):
                                return
                        bob_view = await asyncio.to_thread(
                            client.get,
                            f"/api/games/{game_id}",
                            headers={"Authorization": f"Bearer {bob.token}"},
                        )
                        polls.append(bob_view.text)

            await asyncio.gather(bob.play_until(), ann_player.play_until(), watch_to_end(spectator), poll_b())
            texts.extend(polls)
            texts.extend(bob.table.texts)
            texts.extend(spectator.texts)
            for table in (spectator, bob.table, ann_player.table):
                await table.close()

        run(scenario())
        rules = Rules.from_dict(table_state(a.url, game_id)["game"]["rules"])
        game = Match(rules, seed).game
        forms = order_forms(game.setup.deck, rules.edition)
        secrets = {str(seed), str(game.setup.seed)}
        assert len(texts) > 100
        in_progress = [t for t in texts if '"status":"finished"' not in t.replace(" ", "")]
        assert len(in_progress) > 50
        for text in in_progress:
            for secret in secrets:
                assert secret not in text
            assert not keys_of(json.loads(text)) & {"deck", "seed", "setup"}
            compact = json.dumps(json.loads(text), separators=(",", ":"))
            for form in forms:
                assert form not in text and form not in compact, form
        assert_no_tracebacks(cluster)


# ----------------------------------------------------------- the deploy guide

DEPLOY_GUIDE = REPO / "docs" / "operator" / "deploy.md"


def test_the_deploy_guide_shows_the_nginx_configuration_the_tests_run() -> None:
    guide = DEPLOY_GUIDE.read_text("utf-8")
    blocks = re.findall(r"^```nginx\n(.*?)^```$", guide, re.MULTILINE | re.DOTALL)
    assert blocks == [NGINX_SITE.read_text("utf-8")]


def serve_options() -> set[str]:
    parser = argparse.ArgumentParser()
    serve.register(parser.add_subparsers())
    subcommands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return set(subcommands.choices["serve"]._option_string_actions)


def test_every_serve_option_the_deploy_guide_names_exists() -> None:
    guide = DEPLOY_GUIDE.read_text("utf-8")
    commands = re.findall(r"coloretto serve (?:[^\n]*\\\n)*[^\n]*", guide)
    assert len(commands) >= 2  # the shell's and the systemd unit's
    named = {option for command in commands for option in re.findall(r"(?<![\w-])--[a-z][a-z-]*", command)}
    named |= set(re.findall(r"`(--[a-z][a-z-]*)", guide))
    assert {"--redis-url", "--database-url", "--trusted-proxy", "--allowed-origin", "--bot-workers"} <= named
    assert named <= serve_options(), named - serve_options()
