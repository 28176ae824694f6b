"""A game must never stop silently (issue 32): the ways a game in play stopped, each fixed, the
watchdog that catches what no fix foresaw, and a fault injected in every step of the live path.

Each of the first tests stopped a game for good before its fix (the watchdog, which would heal
it ten seconds later, is turned off there so that the fix alone is what passes); waits are hang
guards, never speed requirements.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

from coloretto.game import Game
from coloretto.match import Match
from coloretto.rules import Rules
from coloretto.web import Settings, create_app
from coloretto.web.common.faults import FAULT_VARIABLE, Fault, parse_faults, reset_counts
from coloretto.web.runtime.botrunner import BotRunner
from coloretto.web.runtime.workers import BotPool, WorkerDied
from coloretto.web.table.live import LiveGame, SeatState, now_utc
from tests.redis_server import redis_url
from tests.servers import ServeProcess, Servers
from tests.test_cluster_serve import database_url
from tests.test_web import auth, create, service_of, state

__all__ = ["database_url", "redis_url"]  # fixtures, used by name

#: no watchdog: a stall stays a stall, so that a test shows its fix, not the safety net
NO_WATCHDOG = dict(stuck_after=3600.0)
QUICK = dict(messages_per_second=1000.0, message_burst=1000, requests_per_minute=0)
#: a hang guard for one bot move once the workers are warm
MOVE_GUARD = 30.0
#: a hang guard for a whole game of bots
GAME_GUARD = 120.0


def client_with(tmp_path: Path, **changes: Any) -> TestClient:
    settings = Settings(**{**Settings().__dict__, **QUICK, **changes})
    return TestClient(create_app(f"sqlite:///{tmp_path / 'live.sqlite3'}", settings))


def wait_for(condition: Callable[[], bool], guard: float, what: str) -> None:
    deadline = time.monotonic() + guard
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {guard:g} s")
        time.sleep(0.01)


def workers_warm(client: TestClient) -> None:
    """The bot workers have started (a fresh clone's first one takes seconds): the guards after
    this are for the game, not the start-up."""

    def warm() -> bool:
        workers = client.get("/api/health").json()["workers"]
        return bool(workers["ready"] == workers["processes"])

    wait_for(warm, 120.0, "the bot workers did not start")


def on_loop(client: TestClient, coroutine: Any) -> Any:
    """Run a coroutine on the app's own event loop (where its games live)."""
    return client.portal.call(lambda: coroutine)  # type: ignore[union-attr]


@contextlib.contextmanager
def writer_held_at_a_bots_commit(client: TestClient, live: LiveGame) -> Iterator[None]:
    """The app's writer held (a job that waits) until a bot of ``live`` is storing its move; let
    go, and its queue written, when the block ends."""
    gate = threading.Event()
    writer = service_of(client).games.writer

    async def hold_the_writer() -> None:
        await writer.write(lambda session: gate.wait(MOVE_GUARD))

    holding = client.portal.start_task_soon(hold_the_writer)  # type: ignore[union-attr]
    try:
        wait_for(lambda: live.bot_phase == "commit", MOVE_GUARD, "no bot came to store its move")
        yield
    finally:
        gate.set()
    holding.result(MOVE_GUARD)


# ------------------------------------------------------------- found by the soak test


def test_every_message_refused_for_the_rate_is_answered(tmp_path: Path) -> None:
    """A refused message used to be answered at most once a second: a person's move refused in the
    same second as an earlier message was dropped without a word, and their client waited for a
    table that could not change (the soak test's stalls at the default message rate)."""
    with client_with(tmp_path, bot_delay=0.0, messages_per_second=1.0, message_burst=1) as client:
        created = create(client, ["human", "random"])
        with client.websocket_connect(f"/api/games/{created['game']['id']}/ws") as ws:
            for _ in range(3):
                ws.send_json({"type": "ping"})
            time.sleep(1.1)  # one message passes again
            ws.send_json({"type": "ping"})
            replies = []
            while len(replies) < 4 and (not replies or replies[-1]["type"] != "pong" or len(replies) == 1):
                message = ws.receive_json()
                if message["type"] in ("pong", "error"):
                    replies.append(message)
    assert [r["type"] for r in replies] == ["pong", "error", "error", "pong"]
    for refused in replies[1:3]:
        assert refused["error"] == "rate_limited" and "send it again" in refused["message"]
        assert 0 < refused["retry_after"] <= 1.0


def test_a_person_back_in_their_seat_who_moves_at_once_does_not_stop_the_next_bot(tmp_path: Path) -> None:
    """A bot playing for a person who was away waits its delay; the person takes the seat back
    and moves meanwhile. The waiting turn used to block the next one: the bot of the next seat
    never moved."""
    with client_with(tmp_path, bot_delay=1.0, **NO_WATCHDOG) as client:
        created = create(client, ["human", "random"])
        game_id, token = created["game"]["id"], created["token"]
        workers_warm(client)
        wait_for(lambda: state(client, game_id, token)["to_move"] == 0, MOVE_GUARD, "Ann's turn never came")
        service = service_of(client)
        live = service.games.live[game_id]
        on_loop(client, service.games.set_away(live, 0, True))  # gone: a bot plays for her, after its delay
        # back at once, she plays her whole turn herself before that bot's delay is over
        while (current := state(client, game_id, token))["to_move"] == 0:
            move = current["move_number"]
            answer = client.post(
                f"/api/games/{game_id}/actions",
                json={"action": current["legal"][-1], "move": move},
                headers=auth(token),
            )
            assert answer.status_code == 200, answer.text
        seen = state(client, game_id)["move_number"]
        assert state(client, game_id)["to_move"] == 1  # the other bot's turn
        wait_for(
            lambda: state(client, game_id)["move_number"] > seen,
            MOVE_GUARD,
            "the next seat's bot never moved",
        )


def test_a_bot_turn_stopped_while_its_move_is_stored_still_plays_and_tells_it(tmp_path: Path) -> None:
    """A turn cancelled while its move was being written (its process lost the game's lease, or
    was stopping) left the move in the database and the table in memory a move behind: nothing
    told, and no bot moved again. The write and what follows it now always run to their end."""
    with client_with(tmp_path, bot_delay=0.05, **NO_WATCHDOG) as client:
        created = create(client, ["random", "random"])
        game_id = created["game"]["id"]
        workers_warm(client)
        service = service_of(client)
        live = service.games.live[game_id]
        with writer_held_at_a_bots_commit(client, live):
            before = live.move_count

            async def cancel_the_turn() -> None:
                assert live.bot_task is not None
                live.bot_task.cancel()
                await asyncio.sleep(0.05)

            on_loop(client, cancel_the_turn())
        wait_for(lambda: live.move_count > before + 1, MOVE_GUARD, "the game stopped after the stored move")
        stored = state(client, game_id)["move_number"]
        assert stored > before


def test_a_game_run_again_while_its_bots_move_is_stored_starts_no_second_turn_for_that_move(
    tmp_path: Path,
) -> None:
    """A process that stops running a game (a lease lost to a late renewal) and runs it again at
    once (takes the lease back) while its bot's move is being stored: the turn storing it goes on,
    and no second turn starts for that move number (its write would fail the whole group commit)."""
    with client_with(tmp_path, bot_delay=0.05, **NO_WATCHDOG) as client:
        created = create(client, ["random", "random"])
        game_id = created["game"]["id"]
        workers_warm(client)
        service = service_of(client)
        live = service.games.live[game_id]
        with writer_held_at_a_bots_commit(client, live):
            before, storing = live.move_count, live.bot_task

            async def lose_and_take_back() -> asyncio.Task[None] | None:
                service.games.bots.cancel(live)
                service.games.bots.schedule(live, resumed=True)
                await asyncio.sleep(0.05)
                return live.bot_task

            assert on_loop(client, lose_and_take_back()) is storing
            assert storing is not None and not storing.done()
        wait_for(lambda: live.move_count > before + 1, MOVE_GUARD, "the game stopped after the stored move")
        assert state(client, game_id)["move_number"] > before
        assert service.incidents.counts() == {}


def test_a_read_older_than_the_copy_never_puts_the_table_back_a_move(tmp_path: Path) -> None:
    """A read of the game that began before a move of this process was committed, and ended after
    that move was played and shown here (its caller cancelled, so the game's lock was free while
    the move was written): taking it put the table in memory back a move under clients already
    shown the newer one, and a person who then acted on the table they saw was refused as
    'stale', with nobody left to move the game on. The older read is not taken: the game is read
    again."""
    with client_with(tmp_path, bot_delay=0.05, **NO_WATCHDOG) as client:
        created = create(client, ["random", "random"])
        game_id = created["game"]["id"]
        workers_warm(client)
        service = service_of(client)
        games = service.games
        live = games.live[game_id]
        old = on_loop(client, games.stored(game_id))
        wait_for(lambda: live.move_count > len(old.moves), MOVE_GUARD, "no bot moved")
        real_stored, reads = games.stored, []

        async def the_old_read_first(game_id: str) -> Any:
            reads.append(game_id)
            return old if len(reads) == 1 else await real_stored(game_id)

        async def refresh_after_an_old_read() -> tuple[int, int, int]:
            async with live.lock:
                before = live.move_count
                games.stored = the_old_read_first  # type: ignore[method-assign]
                try:
                    await games.refresh(live)
                finally:
                    del games.stored
                stored = await real_stored(game_id)
                return before, live.move_count, len(stored.moves)

        before, after, in_database = on_loop(client, refresh_after_an_old_read())
        assert len(reads) == 2  # the old read, then one that is not older than the copy
        assert len(old.moves) < before <= after == in_database


def test_an_old_copy_of_a_game_runs_no_bot_beside_the_copy_in_memory(tmp_path: Path) -> None:
    """A process adopting games drops a copy the database has moved past and reads it again;
    an event from another process, applied to the old object it took before, then set a bot
    going on that object (the process held the lease by then). The old copy, no longer in
    memory, was never stopped: two copies wrote the game's moves, every second write failed
    its whole group commit (a rolling restart's adopter wrote batches of 200 again one by one).
    Only the copy in memory runs a bot."""
    with client_with(tmp_path, bot_delay=0.05, **NO_WATCHDOG) as client:
        created = create(client, ["random", "random"])
        game_id = created["game"]["id"]
        workers_warm(client)
        games = service_of(client).games
        old = games.live[game_id]
        wait_for(lambda: old.move_count > 2, MOVE_GUARD, "no bot moved")

        async def read_again_then_schedule_the_old_copy() -> bool:
            async with old.lock:
                games.bots.cancel(old)
                fresh = await games.replayed(game_id)
                games.live[game_id] = fresh  # what an adoption does with a copy behind
                games.bots.schedule(fresh, resumed=True)
            games.bots.schedule(old)  # what an event applied to the old object did next
            return old.bot_task is not None and not old.bot_task.done()

        assert not on_loop(client, read_again_then_schedule_the_old_copy())
        fresh = games.live[game_id]
        moved_from = fresh.move_count
        wait_for(lambda: fresh.move_count > moved_from + 6, MOVE_GUARD, "the game stopped")
        assert games.writer.stats.failed_batches == 0
        assert service_of(client).incidents.counts() == {}


@contextlib.contextmanager
def two_processes_at_a_duel(
    tmp_path: Path, redis_url: str
) -> Iterator[tuple[TestClient, TestClient, str, dict[int, str]]]:
    """Two processes on one database and Redis, and a game of Ann and Bob created through the
    first, of which the second has a copy: the processes, the game, each seat's token."""
    database = f"sqlite:///{tmp_path / 'shared.sqlite3'}"
    settings = Settings(**{**Settings().__dict__, **QUICK, "bot_delay": 0.0, "redis_url": redis_url})
    with TestClient(create_app(database, settings)) as a, TestClient(create_app(database, settings)) as b:
        created = create(a, ["human", "human"])
        game_id, ann = created["game"]["id"], created["token"]
        bob = a.post(f"/api/games/{game_id}/join", json={"name": "Bob"}).json()["token"]
        assert state(b, game_id)["move_number"] == 0  # b has its copy now
        yield a, b, game_id, {0: ann, 1: bob}


def test_an_action_through_a_process_a_move_behind_its_client_is_played(
    tmp_path: Path, redis_url: str
) -> None:
    """Two processes: a person saw move N through one (it told them first) and acted through the
    other before that one heard of move N. The action was refused as stale although the client
    was ahead, and the client, waiting for a newer table, waited for ever (the two-process soak
    test's stalls). The process behind now reads the game again first."""
    with two_processes_at_a_duel(tmp_path, redis_url) as (a, b, game_id, tokens):
        held = asyncio.Event()
        service_b = service_of(b)
        deliver = service_b.games.bus._on_event  # type: ignore[attr-defined]

        async def late(game: str, event: dict[str, Any]) -> None:  # the event is on its way
            await held.wait()
            await deliver(game, event)

        service_b.games.bus._on_event = late  # type: ignore[attr-defined]
        first = state(a, game_id)
        mover = first["to_move"]
        played = a.post(
            f"/api/games/{game_id}/actions", json={"action": "d", "move": 0}, headers=auth(tokens[mover])
        )
        assert played.status_code == 200, played.text
        assert service_b.games.live[game_id].move_count == 0  # b has not heard of move 1
        after = played.json()
        answer = b.post(
            f"/api/games/{game_id}/actions",
            json={"action": after["legal"][0], "move": 1},
            headers=auth(tokens[after["to_move"]]),
        )
        assert answer.status_code == 200, answer.text
        assert answer.json()["move_number"] == 2
        on_loop(b, _set(held))
        wait_for(lambda: state(a, game_id)["move_number"] == 2, MOVE_GUARD, "a never heard of move 2")


def test_a_client_connecting_to_a_copy_moves_behind_is_shown_no_older_table(
    tmp_path: Path, redis_url: str
) -> None:
    """Two processes: a client saw move N through one and reconnects to the other, whose copy
    missed the last moves' events (a rolling restart's clients do this at once). That copy is read
    again before the client is shown it; the moves it missed were told one by one to everyone
    watching it, the client already subscribed among them: it was shown moves 1 and 2 after move
    3, as if moves were undone. A client is now sent nothing before its own first, whole table."""
    with two_processes_at_a_duel(tmp_path, redis_url) as (a, b, game_id, tokens):
        service_b = service_of(b)

        async def lost(game: str, event: dict[str, Any]) -> None:  # b hears of no move
            return None

        service_b.games.bus._on_event = lost  # type: ignore[attr-defined]
        for number in range(3):
            token = tokens[state(a, game_id)["to_move"]]
            legal = state(a, game_id, token)["legal"]
            played = a.post(
                f"/api/games/{game_id}/actions",
                json={"action": legal[0], "move": number},
                headers=auth(token),
            )
            assert played.status_code == 200, played.text
        assert service_b.games.live[game_id].move_count == 0
        shown: list[int] = []
        with b.websocket_connect(f"/api/games/{game_id}/ws") as ws:
            while not shown or shown[-1] < 3:
                message = ws.receive_json()
                if message["type"] == "state":
                    shown.append(message["state"]["move_number"])
        assert shown == [3]


def test_a_finished_game_leaving_memory_gives_its_lease_up(tmp_path: Path, redis_url: str) -> None:
    """With several processes a finished game nobody watches leaves memory and its lease is given
    up at once (not renewed for as long as the process lives)."""
    database = f"sqlite:///{tmp_path / 'lease.sqlite3'}"
    settings = Settings(**{**Settings().__dict__, **QUICK, "bot_delay": 0.0, "redis_url": redis_url})
    with TestClient(create_app(database, settings)) as client:
        workers_warm(client)
        game_id = create(client, ["random", "random"])["game"]["id"]
        wait_for(lambda: state(client, game_id)["game"]["status"] == "finished", GAME_GUARD, "no end")
        games = service_of(client).games
        wait_for(lambda: game_id not in games.live, MOVE_GUARD, "the finished game stayed in memory")

        def given_up() -> bool:
            holders = on_loop(client, games.bus.holders([game_id]))
            return not games.bus.owns(game_id) and holders[game_id] is None

        wait_for(given_up, MOVE_GUARD, "the finished game's lease was kept")


async def _set(event: asyncio.Event) -> None:
    event.set()


# ------------------------------------------------------------------- the watchdog


def test_the_watchdog_finds_a_game_whose_bot_never_started_and_puts_it_back_on_its_feet(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with client_with(tmp_path, bot_delay=0.0, stuck_after=0.5, watchdog_every=0.1) as client:
        created = create(client, ["random", "random"])
        game_id = created["game"]["id"]
        workers_warm(client)
        service = service_of(client)
        live = service.games.live[game_id]
        wait_for(lambda: live.move_count >= 3, MOVE_GUARD, "the game did not begin")

        async def lose_the_wake_up() -> int:
            # what a lost wake-up leaves: a bot to move and no turn of it under way
            service.games.stopping = True  # nothing starts the next turn ...
            await asyncio.sleep(0.2)
            if live.bot_task is not None:
                live.bot_task.cancel()
            live.bot_task = None
            service.games.stopping = False  # ... until the watchdog finds the game
            return live.move_count

        with caplog.at_level(logging.ERROR, logger="coloretto.web.common.incidents"):
            stopped_at = on_loop(client, lose_the_wake_up())
            wait_for(lambda: live.status == "finished", GAME_GUARD, "the watchdog did not restart the game")
        assert service.incidents.counts().get("watchdog", 0) >= 1
        assert any(
            f"game {game_id} at move" in r.getMessage() and "the game is stuck" in r.getMessage()
            for r in caplog.records
        ), [r.getMessage() for r in caplog.records]
        assert live.move_count > stopped_at


class OwnsEverything:
    """What BotRunner.stuck asks of its service: the settings, and whether it runs the game."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.stopping = False

    def owns(self, live: LiveGame) -> bool:
        return True


def test_a_stuck_game_is_told_by_the_watchdog_for_each_reason() -> None:
    """BotRunner.stuck, for each way a game can be late (and not for a bot that thinks)."""
    runner = BotRunner(OwnsEverything(Settings(bot_delay=0.5, stuck_after=10.0)))  # type: ignore[arg-type]
    rules = Rules(players=2)
    bots = [SeatState("bot", "random", None, None), SeatState("bot", "random", None, None)]
    live = LiveGame(
        id="g", name="g", status="playing", rules=rules, seed=1, seats=bots,
        created_at=now_utc(), updated_at=now_utc(), match=Match(rules, 1),
    )  # fmt: skip
    assert runner.stuck(live) is None  # it just changed
    live.changed_at -= 11.0
    assert "no turn of it began" in (runner.stuck(live) or "")

    async def turns() -> None:
        live.bot_task = asyncio.get_running_loop().create_task(asyncio.sleep(60))  # under way
        live.bot_move = live.move_count
        for phase, late, stuck in [("think", 600.0, False), ("lock", 11.0, True), ("commit", 11.0, True)]:
            live.bot_phase, live.bot_phase_at = phase, time.monotonic() - late
            assert (runner.stuck(live) is not None) is stuck, phase
        live.bot_move = live.move_count - 1  # a turn for an earlier move does not count
        assert "no turn of it began" in (runner.stuck(live) or "")
        live.bot_task.cancel()

    asyncio.run(turns())
    live.status = "finished"
    assert runner.stuck(live) is None


# ------------------------------------------------------------- the bot workers' limit


def test_a_worker_that_never_answers_is_killed_and_its_job_failed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(FAULT_VARIABLE, "hang:worker:1")
    pool = BotPool(1, warm=(), job_timeout=2.0)
    pool.start()
    try:
        wait_for(lambda: pool.status().ready == 1, 120.0, "the worker did not start")
        monkeypatch.delenv(FAULT_VARIABLE)  # the worker that hangs has it; its replacement will not
        hung = pool.worker_pids()
        game = Game.new(Rules(players=2), seed=3)
        observation = game.observation(game.to_move or 0)

        async def scenario() -> None:
            with pytest.raises(WorkerDied, match="did not answer"):
                await asyncio.wait_for(pool.choose("g", "random", observation, 1), 60.0)
            action = await asyncio.wait_for(pool.choose("g", "random", observation, 1), 60.0)
            assert action in observation.legal_actions

        asyncio.run(scenario())
        assert pool.worker_pids() != hung  # killed and replaced
    finally:
        pool.shutdown()


# ------------------------------------------------------------------- fault injection


@pytest.mark.parametrize(
    ("value", "faults"),
    [
        ("raise:bot:3", (Fault("raise", 3, "bot"),)),
        (
            "kill-after-commit:2,raise:broadcast:1",
            (Fault("kill-after-commit", 2), Fault("raise", 1, "broadcast")),
        ),
        ("hang:worker:1", (Fault("hang", 1, "worker"),)),
        ("hang:warmup:1", (Fault("hang", 1, "warmup"),)),
        ("drop:bus:5", (Fault("drop", 5, "bus"),)),
        ("", ()),
    ],
)
def test_the_faults_are_read_from_the_switch(value: str, faults: tuple[Fault, ...]) -> None:
    assert parse_faults(value) == faults


@pytest.mark.parametrize(
    "value", ["raise:nowhere:1", "raise:bot:0", "raise:bot", "hang:bot:1", "raise:bot:1,x", "drop:writer:1"]
)
def test_a_malformed_fault_says_what_it_should_be(value: str) -> None:
    with pytest.raises(ValueError, match="raise:STEP:N"):
        parse_faults(value)


def test_a_drop_fault_loses_only_the_run_it_names(monkeypatch: pytest.MonkeyPatch) -> None:
    from coloretto.web.common.faults import dropped

    reset_counts()
    monkeypatch.setenv(FAULT_VARIABLE, "drop:bus:2,drop:bus:4")
    assert [dropped("bus") for _ in range(5)] == [False, True, False, True, False]
    monkeypatch.delenv(FAULT_VARIABLE)
    assert not dropped("bus")
    reset_counts()


def finished(server: ServeProcess, game_id: str, guard: float = GAME_GUARD) -> dict[str, Any]:
    deadline = time.monotonic() + guard
    while time.monotonic() < deadline:
        current: dict[str, Any] = httpx.get(f"{server.url}/api/games/{game_id}", timeout=10).json()
        if current["game"]["status"] == "finished":
            return current
        time.sleep(0.1)
    raise AssertionError(f"game {game_id} did not finish:\n{server.output_tail()}")


def create_on(server: ServeProcess, body: dict[str, Any]) -> dict[str, Any]:
    response = httpx.post(f"{server.url}/api/games", json=body, timeout=30)
    assert response.status_code == 201, response.text
    created: dict[str, Any] = response.json()
    return created


async def watch(url: str, game_id: str, until: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
    """A spectator until ``until(state)``: every state sent to it, read."""
    import websockets

    async with websockets.connect(f"{url}/api/games/{game_id}/ws", max_size=2**23) as ws:
        while True:
            message = json.loads(await asyncio.wait_for(ws.recv(), GAME_GUARD))
            if message["type"] == "state" and until(message["state"]):
                state: dict[str, Any] = message["state"]
                return state


def reported(output: str, step: str, game_id: str) -> bool:
    """The incident's log line: its step, its game and move, the injected fault's traceback."""
    lines = output.splitlines()
    return any(
        f"game {game_id} at move" in line and f"({step})" in line and "InjectedFault" in output
        for line in lines
        if line.startswith("ERROR coloretto.web.common.incidents")
    )


@pytest.mark.slow
@pytest.mark.parametrize("step", ["writer", "bot", "worker", "broadcast"])
def test_a_fault_in_a_step_of_the_live_path_is_reported_and_the_game_finishes(
    step: str, tmp_path: Path, servers: Servers
) -> None:
    server = servers.one(tmp_path, bot_delay=0.0, env={FAULT_VARIABLE: f"raise:{step}:4"})
    try:
        created = create_on(server, {"seats": [{"kind": "bot", "bot": "random"}] * 3})
        game_id = created["game"]["id"]
        # a spectator from the first move, so that every state is sent to someone
        end = asyncio.run(watch(server.ws_url, game_id, lambda s: s["game"]["status"] == "finished"))
        assert end["move_number"] > 0
        finished(server, game_id)
        health = server.health()
        assert health["incidents"].get(step if step != "worker" else "worker", 0) >= 1, health
        assert reported(server.output, step, game_id), server.output_tail(60)
    finally:
        server.stop()


@pytest.mark.slow
def test_a_fault_in_a_turn_clock_is_reported_and_the_game_finishes(tmp_path: Path, servers: Servers) -> None:
    """Ann never moves: her clock runs out, its check fails once, and a bot still takes her seat
    over and plays the game to its end."""
    server = servers.one(tmp_path, bot_delay=0.0, env={FAULT_VARIABLE: "raise:clock:1"})
    try:
        created = create_on(
            server,
            {
                "seats": [{"kind": "human"}, {"kind": "bot", "bot": "random"}],
                "creator_name": "Ann",
                "clock": {"move_seconds": 5},
            },
        )
        game_id = created["game"]["id"]
        finished(server, game_id)
        assert server.health()["incidents"].get("clock") == 1
        assert reported(server.output, "clock", game_id), server.output_tail(60)
    finally:
        server.stop()


@pytest.mark.slow
def test_a_fault_in_the_bus_is_reported_and_the_game_finishes_for_the_other_process(
    database_url: str, tmp_path: Path, servers: Servers
) -> None:
    """The game runs in one process; its watcher is on the other, whose handling of an event
    fails once: that process reads the game again, and its watcher sees the game to its end."""
    with servers.cluster(
        tmp_path, database_url, bot_delay=0.02, server_env={1: {FAULT_VARIABLE: "raise:bus:5"}}
    ) as cluster:
        a, b = cluster.servers
        created = create_on(a, {"seats": [{"kind": "bot", "bot": "random"}] * 2})
        game_id = created["game"]["id"]
        end = asyncio.run(watch(b.ws_url, game_id, lambda s: s["game"]["status"] == "finished"))
        assert end["game"]["status"] == "finished"
        assert b.health()["incidents"].get("bus") == 1
        assert reported(b.output, "bus", game_id), b.output_tail(60)


@pytest.fixture(autouse=True)
def _fresh_fault_counts() -> None:
    reset_counts()
