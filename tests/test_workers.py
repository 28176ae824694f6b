"""The bot pool: bots' moves and hints in worker processes (coloretto.web.runtime.workers).

Most tests share one pool of one worker (started once: a worker's start-up
costs seconds); a test that needs jobs to wait uses a pool that is not
started, so what waits is decided by the test and not by a race with the
worker. Each test runs on an event loop of its own, as the apps of a server's
tests do, against the same pool.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import Awaitable, Callable, Coroutine, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest

from coloretto.actions import DRAW, Action
from coloretto.game import Game, Observation
from coloretto.rules import Rules
from coloretto.web.runtime.workers import (
    BotPool,
    HintValue,
    PoolBusy,
    PoolClosed,
    PoolStatus,
    WorkerDied,
    default_processes,
    shared_pool,
)

REPOSITORY = Path(__file__).resolve().parent.parent
#: only a guard against a hang: a worker's warm-up compiles the kernel on a fresh clone
HANG_GUARD = 300.0

T = TypeVar("T")


def run(coroutine: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(asyncio.wait_for(coroutine, HANG_GUARD))


def position(seed: int = 1) -> Observation:
    """The seat to move's view with a card drawn: several places to put it, so a search bot searches."""
    game = Game.new(Rules(players=3), seed=seed)
    game.push(DRAW)
    seat = game.to_move
    assert seat is not None
    observation = game.observation(seat)
    assert len(observation.legal_actions) > 1
    return observation


async def until(condition: Callable[[], object], what: str) -> None:
    """Wait until ``condition()`` holds (the pool's threads change what it reads)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + HANG_GUARD
    while not condition():
        if loop.time() > deadline:
            pytest.fail(f"still waiting for {what}")
        await asyncio.sleep(0.01)


def python(script: str) -> subprocess.CompletedProcess[str]:
    env = dict(
        os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(REPOSITORY), os.environ.get("PYTHONPATH")]))
    )
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)],
        cwd=REPOSITORY,
        env=env,
        capture_output=True,
        text=True,
        timeout=HANG_GUARD,
    )


@pytest.fixture(scope="module")
def pool(compiled_search: None) -> Iterator[BotPool]:
    """One started worker that warmed a hard bot (after this process wrote numba's cache)."""
    pool = BotPool(1, warm=("hard",), max_queued_hints=16)
    pool.start()
    yield pool
    pool.shutdown()


# ---- what the workers answer --------------------------------------------------------------


@pytest.mark.search
@pytest.mark.parametrize("bot", ["random", "greedy", "hard"])
def test_choose_answers_a_legal_action(pool: BotPool, bot: str) -> None:
    for seed in range(3):
        observation = position(seed)
        action = run(pool.choose(f"game-{seed}", bot, observation, seed))
        assert action in observation.legal_actions, (bot, seed, action)


@pytest.mark.search
def test_the_same_seed_makes_the_same_move(pool: BotPool) -> None:
    observation = position(4)
    # a fresh bot per move: nothing but the seed decides (the greedy bot breaks ties at random)
    moves = {run(pool.choose("game", "random", observation, 11)) for _ in range(3)}
    assert len(moves) == 1


@pytest.mark.search
def test_analyze_values_every_legal_action(pool: BotPool) -> None:
    observation = position(2)
    values = run(pool.analyze("game", observation, "50ms", 7))
    assert all(isinstance(value, HintValue) for value in values)
    assert sorted(v.action.id for v in values) == sorted(a.id for a in observation.legal_actions)
    # the move the search plays first (the most simulated), the others by its objective
    assert values[0].simulations == max(v.simulations for v in values)
    assert [v.utility for v in values[1:]] == sorted((v.utility for v in values[1:]), reverse=True)
    assert all(
        0.0 <= v.win_probability <= 1.0 and 0.0 <= v.win_share <= 1.0 and v.simulations > 0 for v in values
    )


@pytest.mark.search
def test_an_error_of_the_bot_reaches_the_caller(pool: BotPool) -> None:
    from coloretto.bots import BotSpecError

    with pytest.raises(BotSpecError, match="unknown bot 'grandmaster'"):
        run(pool.choose("game", "grandmaster", position(), 1))
    with pytest.raises(ValueError, match="cannot read the limit 'a while'"):
        run(pool.analyze("game", position(), "a while", 1))
    # and the worker goes on serving
    assert run(pool.choose("game", "greedy", position(), 1)) in position().legal_actions


# ---- the server's process ------------------------------------------------------------------


def test_importing_the_pool_loads_no_search() -> None:
    result = python(
        """
        import sys
        import coloretto.web.runtime.workers
        print([m for m in ("numba", "coloretto.bots.mcts", "coloretto.analysis") if m in sys.modules])
        """
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


@pytest.mark.search
def test_the_server_process_never_imports_numba() -> None:
    result = python(
        """
        import asyncio, sys
        from coloretto.actions import DRAW
        from coloretto.game import Game
        from coloretto.rules import Rules
        from coloretto.web.runtime.workers import BotPool

        async def main():
            pool = BotPool(1, warm=("hard",))
            pool.start()
            game = Game.new(Rules(players=3), seed=3)
            game.push(DRAW)
            observation = game.observation(game.to_move)
            action = await pool.choose("game", "hard", observation, 1)
            assert action in observation.legal_actions, action
            values = await pool.analyze("game", observation, "50ms", 1)
            assert len(values) == len(observation.legal_actions), values
            await pool.close()
            print([m for m in ("numba", "coloretto.bots.mcts", "coloretto.analysis") if m in sys.modules])

        asyncio.run(main())
        """
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]", result.stdout


@pytest.mark.search
def test_the_event_loop_runs_while_the_workers_warm_up() -> None:
    async def scenario() -> tuple[int, Any, PoolStatus, PoolStatus]:
        ticks = 0

        async def ticker() -> None:
            nonlocal ticks
            while True:
                await asyncio.sleep(0.01)
                ticks += 1

        pool = BotPool(1, warm=("hard",))
        ticking = asyncio.create_task(ticker())
        try:
            pool.start()
            before = pool.status()
            # answered once the worker has started and warmed up
            action = await pool.choose("game", "hard", position(), 1)
            after = pool.status()
        finally:
            ticking.cancel()
            await pool.close()
        return ticks, action, before, after

    ticks, action, before, after = run(scenario())
    assert action in position().legal_actions
    assert not before.warm and before.ready == 0
    assert after.warm and after.ready == 1
    assert ticks >= 5, f"the event loop ticked only {ticks} times while a worker started and warmed up"


# ---- the queue -----------------------------------------------------------------------------


@pytest.mark.search
def test_a_game_asking_many_hints_does_not_hold_up_another_games_bot(pool: BotPool) -> None:
    async def scenario() -> list[str]:
        finished: list[str] = []

        async def job(name: str, work: Awaitable[object]) -> None:
            await work
            finished.append(name)

        observation = position()
        hints = [job(f"hint {i}", pool.analyze("A", observation, "50ms", i)) for i in range(10)]
        bot = job("bot", pool.choose("B", "greedy", observation, 1))
        await asyncio.gather(*hints, bot)
        return finished

    finished = run(scenario())
    # one worker: A's first hint may be running already, then the games take turns
    assert finished.index("bot") <= 2, finished
    assert len(finished) == 11


def test_jobs_wait_until_the_pool_starts_and_games_take_turns() -> None:
    async def scenario() -> tuple[PoolStatus, list[str]]:
        pool = BotPool(1, warm=())
        finished: list[str] = []

        async def job(name: str, work: Awaitable[object]) -> None:
            await work
            finished.append(name)

        try:
            observation = position()
            tasks = [
                asyncio.create_task(job(f"A{i}", pool.choose("A", "random", observation, i)))
                for i in range(4)
            ]
            tasks += [
                asyncio.create_task(job(f"B{i}", pool.choose("B", "random", observation, i)))
                for i in range(2)
            ]
            tasks.append(asyncio.create_task(job("C0", pool.choose("C", "random", observation, 0))))
            await asyncio.sleep(0)  # every task has queued its job
            waiting = pool.status()
            pool.start()
            await asyncio.gather(*tasks)
        finally:
            await pool.close()
        return waiting, finished

    waiting, finished = run(scenario())
    assert waiting == PoolStatus(workers=1, ready=0, queued=7, running=0, warm=False)
    assert finished == ["A0", "B0", "C0", "A1", "B1", "A2", "A3"]


def test_hints_beyond_the_bound_are_refused_and_bot_moves_never() -> None:
    async def scenario() -> None:
        pool = BotPool(1, warm=(), max_queued_hints=3)  # never started: everything waits
        observation = position()
        waiting = [asyncio.create_task(pool.analyze(f"game-{i}", observation, "50ms", i)) for i in range(3)]
        await asyncio.sleep(0)
        assert pool.status().queued == 3
        with pytest.raises(PoolBusy, match="too many hints are waiting"):
            await pool.analyze("game-9", observation, "50ms", 9)
        bots = [asyncio.create_task(pool.choose(f"game-{i}", "greedy", observation, i)) for i in range(5)]
        await asyncio.sleep(0)
        assert pool.status().queued == 8
        # a hint that stops waiting makes room for another
        waiting[0].cancel()
        await asyncio.gather(waiting[0], return_exceptions=True)
        assert pool.status().queued == 7
        another = asyncio.create_task(pool.analyze("game-9", observation, "50ms", 9))
        await asyncio.sleep(0)
        assert pool.status().queued == 8
        await pool.close()
        outcomes = await asyncio.gather(*waiting[1:], *bots, another, return_exceptions=True)
        assert all(isinstance(outcome, PoolClosed) for outcome in outcomes), outcomes

    run(scenario())


def test_a_cancelled_job_leaves_the_queue() -> None:
    async def scenario() -> None:
        pool = BotPool(1, warm=())
        observation = position()
        kept = asyncio.create_task(pool.choose("A", "random", observation, 1))
        dropped = asyncio.create_task(pool.choose("B", "random", observation, 2))
        await asyncio.sleep(0)
        assert pool.status().queued == 2
        dropped.cancel()
        with pytest.raises(asyncio.CancelledError):
            await dropped
        assert pool.status().queued == 1
        pool.start()
        try:
            assert await kept in observation.legal_actions
            assert pool.status().queued == pool.status().running == 0
        finally:
            await pool.close()

    run(scenario())


@pytest.mark.search
def test_a_cancelled_running_job_is_dropped_and_the_next_gets_its_own_answer(pool: BotPool) -> None:
    async def scenario() -> None:
        observation = position()
        thinking = asyncio.create_task(pool.choose("A", "mcts:500ms", observation, 1))
        await until(lambda: pool.status().running == 1, "the bot move to start")
        thinking.cancel()
        with pytest.raises(asyncio.CancelledError):
            await thinking
        # the worker finishes the cancelled move first; its answer must not be taken for this one
        values = await pool.analyze("B", observation, "50ms", 2)
        assert isinstance(values, list) and all(isinstance(v, HintValue) for v in values)
        assert pool.status().running == 0

    run(scenario())


# ---- workers that die ----------------------------------------------------------------------


@pytest.mark.search
def test_a_killed_worker_fails_its_job_and_is_replaced(pool: BotPool) -> None:
    async def scenario() -> None:
        observation = position()
        # a long search: it is still running when its worker is killed
        doomed = asyncio.create_task(pool.choose("A", "mcts:60s", observation, 1))
        await until(pool.running_pids, "the bot move to start")
        (pid,) = pool.running_pids()
        os.kill(pid, signal.SIGKILL)
        with pytest.raises(WorkerDied, match=rf"worker process {pid} died \(exit code -9\)"):
            await doomed
        assert await pool.choose("A", "greedy", observation, 2) in observation.legal_actions
        assert pool.worker_pids()[0] not in (None, pid)
        assert pool.status().ready == 1

    run(scenario())


# ---- status and closing --------------------------------------------------------------------


@pytest.mark.search
def test_status_counts_the_workers(pool: BotPool) -> None:
    run(pool.choose("game", "greedy", position(), 1))  # the worker is up
    status = pool.status()
    assert status == PoolStatus(workers=1, ready=1, queued=0, running=0, warm=True, trips=status.trips)
    assert status.trips >= 1


def test_close_is_idempotent_and_refuses_later_jobs() -> None:
    async def scenario() -> None:
        pool = BotPool(1, warm=())
        pool.start()
        assert await pool.choose("game", "random", position(), 1) in position().legal_actions
        (pid,) = pool.worker_pids()
        assert pid is not None
        await pool.close()
        await pool.close()
        assert pool.closed
        assert pool.status() == PoolStatus(workers=1, ready=0, queued=0, running=0, warm=True, trips=1)
        with pytest.raises(PoolClosed):
            await pool.choose("game", "random", position(), 1)
        with pytest.raises(PoolClosed):
            pool.start()
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)  # the worker has exited (and been reaped)

    run(scenario())


def test_a_pool_never_started_closes_too() -> None:
    pool = BotPool(2, warm=())
    pool.shutdown()
    pool.shutdown()
    assert pool.status() == PoolStatus(workers=2, ready=0, queued=0, running=0, warm=False)


@pytest.mark.search
def test_shared_pool_is_one_started_pool_per_size() -> None:
    # never closed here: the web app's tests in this process use the same pool
    pool = shared_pool()
    assert shared_pool() is pool
    assert shared_pool(default_processes()) is pool
    assert pool.status().workers == default_processes()
    assert run(pool.choose("game", "random", position(), 1)) in position().legal_actions


def test_default_processes_leaves_a_core_to_the_server() -> None:
    assert 1 <= default_processes() <= 4
    assert default_processes() == max(1, min(4, (os.cpu_count() or 1) - 1))


def test_bad_sizes_are_refused() -> None:
    with pytest.raises(ValueError, match="at least one process"):
        BotPool(0)
    with pytest.raises(ValueError, match="max_queued_hints"):
        BotPool(1, max_queued_hints=-1)


def test_quick_bot_moves_of_many_games_go_to_a_worker_together() -> None:
    """Moves of bots that do not search cost less than the trip to a worker: the moves waiting in
    many games go in one message, each still answered to its own game."""

    async def scenario() -> tuple[list[Action], PoolStatus, list[Action]]:
        pool = BotPool(1, warm=())
        observation = position()
        try:
            batched = [
                asyncio.create_task(pool.choose(f"game-{i}", "greedy", observation, i)) for i in range(20)
            ]
            await asyncio.sleep(0)
            pool.start()
            answers = await asyncio.gather(*batched)
            status = pool.status()
            alone = [await pool.choose("game-0", "greedy", observation, i) for i in range(3)]
        finally:
            await pool.close()
        return answers, status, alone

    answers, status, alone = run(scenario())
    legal = set(position().legal_actions)
    assert len(answers) == 20 and all(a in legal for a in answers)
    assert status.trips <= 2  # 20 moves, at most two messages (64 make one batch)
    assert alone == answers[:3]  # a move in a batch is the move the bot makes alone (same seed)
