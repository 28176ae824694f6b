"""The group-commit writer: batches, one failing job among many, close, and kill -9 at a COMMIT.

Every test runs on SQLite and, when ``COLORETTO_TEST_POSTGRESQL`` names a
server (``.ci/run`` does), on PostgreSQL too. Tests that need jobs to pile up
in one batch hold the writer's thread in a first job (a "gate") until the
others are queued, so the batch sizes are exact rather than likely.
"""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
import threading
import uuid
from collections.abc import Coroutine, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from coloretto.web.runtime.writer import FAULT_VARIABLE, GroupCommitWriter, Job, WriterStats
from coloretto.web.storage.db import open_database
from coloretto.web.storage.rows import GameRow, MoveRow

T = TypeVar("T")

POSTGRESQL = os.environ.get("COLORETTO_TEST_POSTGRESQL")
REPOSITORY = Path(__file__).resolve().parent.parent
#: only a guard against a hang: a passing test takes a fraction of it
HANG_GUARD = 120.0


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'x.sqlite3'}"
    # .ci/run starts a PostgreSQL server and sets the URL: in CI these tests must run.
    if not POSTGRESQL and not os.environ.get("CI"):
        pytest.skip("set COLORETTO_TEST_POSTGRESQL=postgresql://… to test on PostgreSQL (.ci/run does)")
    assert POSTGRESQL, "CI must provide COLORETTO_TEST_POSTGRESQL (see .ci/run)"
    return POSTGRESQL


@pytest.fixture
def sessions(database_url: str) -> Iterator[sessionmaker[Session]]:
    factory = open_database(database_url)
    yield factory
    factory.kw["bind"].dispose()


@pytest.fixture(autouse=True)
def _no_fault(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(FAULT_VARIABLE, raising=False)


def new_id() -> str:
    """Game ids of their own: the PostgreSQL test database is shared with other tests."""
    return uuid.uuid4().hex[:16]


def insert_game(game_id: str) -> Job[str]:
    def job(session: Session) -> str:
        session.add(GameRow(id=game_id, name="writer test", status="open", rules={}, seed=7))
        return game_id

    return job


def insert_move(game_id: str, number: int, move: str = "draw") -> Job[int]:
    def job(session: Session) -> int:
        session.add(MoveRow(game_id=game_id, number=number, deal=1, seat=0, move=move))
        return number

    return job


def stored_games(sessions: sessionmaker[Session], ids: list[str]) -> set[str]:
    with sessions() as session:
        return set(session.scalars(select(GameRow.id).where(GameRow.id.in_(ids))))


def stored_moves(sessions: sessionmaker[Session], game_id: str) -> dict[int, str]:
    with sessions() as session:
        rows = session.execute(select(MoveRow.number, MoveRow.move).where(MoveRow.game_id == game_id))
        return {number: move for number, move in rows}


class Gate:
    """A job that holds the writer's thread until opened, so that other jobs queue behind it."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.opened = threading.Event()

    def job(self, _session: Session) -> str:
        self.entered.set()
        if not self.opened.wait(HANG_GUARD):
            raise TimeoutError("the gate was never opened")
        return "gate"

    async def hold(self, writer: GroupCommitWriter) -> asyncio.Task[str]:
        """Queue the gate and return once the writer's thread is inside it."""
        task = asyncio.create_task(writer.write(self.job))
        if not await asyncio.to_thread(self.entered.wait, HANG_GUARD):
            raise TimeoutError("the writer never ran the gate")
        return task

    def open(self) -> None:
        self.opened.set()


async def queued(writer: GroupCommitWriter, jobs: list[Job[T]]) -> list[asyncio.Task[T]]:
    """Tasks writing the jobs, returned once every job is on the writer's queue.

    ``write`` queues its job before its first ``await``, and a new task takes
    its first step at the loop's next turn, in order of creation; one bare
    yield (``sleep(0)`` is not a timer) lets them all take it.
    """
    tasks = [asyncio.create_task(writer.write(job)) for job in jobs]
    await asyncio.sleep(0)
    return tasks


def run(coroutine: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(asyncio.wait_for(coroutine, HANG_GUARD))


def started(sessions: sessionmaker[Session], **options: Any) -> GroupCommitWriter:
    writer = GroupCommitWriter(sessions, **options)
    writer.start()
    return writer


# ----------------------------------------------------------------- batches


def test_two_hundred_concurrent_writes_all_commit_in_fewer_batches(sessions: sessionmaker[Session]) -> None:
    ids = [new_id() for _ in range(200)]
    writer = started(sessions)

    async def main() -> list[str]:
        results = await asyncio.gather(*(writer.write(insert_game(game_id)) for game_id in ids))
        await writer.close()
        return results

    assert run(main()) == ids
    assert stored_games(sessions, ids) == set(ids)
    stats = writer.stats
    assert stats.jobs == 200 and stats.failed_batches == 0
    assert stats.batches < stats.jobs


def test_jobs_queued_behind_a_running_batch_commit_together(sessions: sessionmaker[Session]) -> None:
    ids = [new_id() for _ in range(199)]
    writer = started(sessions)
    gate = Gate()

    async def main() -> tuple[str, list[str]]:
        held = await gate.hold(writer)
        tasks = await queued(writer, [insert_game(game_id) for game_id in ids])
        assert not any(task.done() for task in tasks)  # nothing is told before its COMMIT
        gate.open()
        results = await asyncio.gather(*tasks)
        await writer.close()
        return await held, results

    assert run(main()) == ("gate", ids)
    assert stored_games(sessions, ids) == set(ids)
    assert writer.stats == WriterStats(batches=2, jobs=200, failed_batches=0, largest_batch=199)


def test_a_batch_holds_at_most_max_batch_jobs(sessions: sessionmaker[Session]) -> None:
    ids = [new_id() for _ in range(120)]
    writer = started(sessions, max_batch=50)
    gate = Gate()

    async def main() -> None:
        held = await gate.hold(writer)
        tasks = await queued(writer, [insert_game(game_id) for game_id in ids])
        gate.open()
        await asyncio.gather(held, *tasks)
        await writer.close()

    run(main())
    assert stored_games(sessions, ids) == set(ids)
    assert writer.stats == WriterStats(batches=4, jobs=121, failed_batches=0, largest_batch=50)


def test_max_batch_must_be_positive(sessions: sessionmaker[Session]) -> None:
    with pytest.raises(ValueError, match="max_batch must be at least 1"):
        GroupCommitWriter(sessions, max_batch=0)


def test_each_result_goes_to_the_loop_that_awaited_it(sessions: sessionmaker[Session]) -> None:
    """Two threads, each with its own event loop, share one writer."""
    writer = started(sessions)
    ids = {name: [new_id() for _ in range(30)] for name in ("left", "right")}
    results: dict[str, list[str]] = {}

    def client(name: str) -> None:
        async def main() -> list[str]:
            return list(await asyncio.gather(*(writer.write(insert_game(i)) for i in ids[name])))

        results[name] = run(main())

    threads = [threading.Thread(target=client, args=(name,)) for name in ids]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(HANG_GUARD)
    run(writer.close())
    assert results == ids
    assert stored_games(sessions, ids["left"] + ids["right"]) == set(ids["left"] + ids["right"])


# ----------------------------------------------------------------- failures


def test_a_duplicate_move_fails_only_its_caller(sessions: sessionmaker[Session]) -> None:
    """Another process stored move 1 first: that COMMIT fails, the moves around it are stored."""
    game_id = new_id()
    writer = GroupCommitWriter(sessions)
    writer.write_blocking(insert_game(game_id))
    writer.write_blocking(insert_move(game_id, 1, "first"))
    writer.start()
    gate = Gate()

    async def main() -> list[int | BaseException]:
        held = await gate.hold(writer)
        jobs = [insert_move(game_id, 2), insert_move(game_id, 1, "again"), insert_move(game_id, 3)]
        tasks = await queued(writer, jobs)
        gate.open()
        await held
        outcome = await asyncio.gather(*tasks, return_exceptions=True)
        await writer.close()
        return outcome

    second, duplicate, third = run(main())
    assert (second, third) == (2, 3)
    assert isinstance(duplicate, IntegrityError)
    assert stored_moves(sessions, game_id) == {1: "first", 2: "draw", 3: "draw"}
    stats = writer.stats
    assert stats.failed_batches == 1 and stats.largest_batch == 3


def test_a_job_that_raises_fails_only_its_caller_with_its_own_exception(
    sessions: sessionmaker[Session],
) -> None:
    game_id, orphan = new_id(), new_id()
    writer = GroupCommitWriter(sessions)
    writer.write_blocking(insert_game(game_id))
    writer.start()
    gate = Gate()
    refusal = LookupError("no such seat")

    def refuses(session: Session) -> None:
        session.add(MoveRow(game_id=game_id, number=99, deal=1, seat=0, move="draw"))
        raise refusal

    async def main() -> list[Any]:
        held = await gate.hold(writer)
        # a move of a game that does not exist breaks a foreign key: that one fails at COMMIT
        tasks = await queued(
            writer, [insert_move(game_id, 1), refuses, insert_move(orphan, 1), insert_move(game_id, 2)]
        )
        gate.open()
        await held
        outcome = await asyncio.gather(*tasks, return_exceptions=True)
        await writer.close()
        return outcome

    first, refused, orphaned, second = run(main())
    assert (first, second) == (1, 2)
    assert refused is refusal  # delivered unchanged
    assert isinstance(orphaned, IntegrityError)
    assert stored_moves(sessions, game_id) == {1: "draw", 2: "draw"}  # the refused job's move rolled back
    assert stored_moves(sessions, orphan) == {}
    assert writer.stats.failed_batches == 1


def test_a_failing_job_alone_in_its_batch_is_not_run_twice(sessions: sessionmaker[Session]) -> None:
    writer = started(sessions)
    calls: list[int] = []

    def fails(_session: Session) -> None:
        calls.append(1)
        raise ValueError("bad move")

    async def main() -> None:
        with pytest.raises(ValueError, match="bad move"):
            await writer.write(fails)
        await writer.close()

    run(main())
    assert calls == [1]
    assert writer.stats == WriterStats(batches=1, jobs=1, failed_batches=0, largest_batch=1)


def test_a_caller_cancelled_while_queued_leaves_the_others_untouched(sessions: sessionmaker[Session]) -> None:
    """Its job still commits (documented): the writer cannot take back what it may have begun."""
    cancelled_id, later_id = new_id(), new_id()
    writer = started(sessions)
    gate = Gate()
    loop_errors: list[dict[str, Any]] = []

    async def main() -> str:
        asyncio.get_running_loop().set_exception_handler(lambda _loop, context: loop_errors.append(context))
        held = await gate.hold(writer)
        (task,) = await queued(writer, [insert_game(cancelled_id)])
        task.cancel()
        gate.open()
        await held
        result = await writer.write(insert_game(later_id))
        await writer.close()
        assert task.cancelled()
        return result

    assert run(main()) == later_id
    assert stored_games(sessions, [cancelled_id, later_id]) == {cancelled_id, later_id}
    assert loop_errors == []


def test_write_blocking_from_inside_a_job_is_refused(sessions: sessionmaker[Session]) -> None:
    writer = started(sessions)

    def nested(_session: Session) -> None:
        writer.write_blocking(insert_game(new_id()))

    with pytest.raises(RuntimeError, match="would wait on itself"):
        writer.write_blocking(nested)
    run(writer.close())


# ----------------------------------------------------------------- results, start and close


def test_results_come_back_and_write_blocking_works_before_and_after_start(
    sessions: sessionmaker[Session],
) -> None:
    before, after, awaited = new_id(), new_id(), new_id()
    writer = GroupCommitWriter(sessions, name=f"writer-{before}")

    async def too_early() -> None:
        await writer.write(insert_game(awaited))

    with pytest.raises(RuntimeError, match="not started"):
        run(too_early())
    # before start() it runs inline, in this thread: committed when it returns
    assert writer.write_blocking(insert_game(before)) == before
    assert stored_games(sessions, [before]) == {before}
    assert writer.stats == WriterStats(batches=1, jobs=1, failed_batches=0, largest_batch=1)
    with pytest.raises(IntegrityError):  # a job's exception comes back unchanged inline too
        writer.write_blocking(insert_game(before))

    writer.start()
    writer.start()  # idempotent: still one thread
    assert [t.name for t in threading.enumerate()].count(f"writer-{before}") == 1
    assert writer.write_blocking(insert_game(after)) == after
    assert run(writer.write(insert_game(awaited))) == awaited

    def name_of_first(session: Session) -> str | None:
        row = session.get(GameRow, before)
        return None if row is None else row.name

    assert writer.write_blocking(name_of_first) == "writer test"
    run(writer.close())
    assert stored_games(sessions, [before, after, awaited]) == {before, after, awaited}


def test_close_drains_the_queue_then_refuses_writes(sessions: sessionmaker[Session]) -> None:
    ids = [new_id() for _ in range(20)]
    writer = started(sessions, name=f"writer-{ids[0]}")
    gate = Gate()

    async def main() -> list[str]:
        held = await gate.hold(writer)
        tasks = await queued(writer, [insert_game(game_id) for game_id in ids])
        closing = asyncio.create_task(writer.close())
        await asyncio.sleep(0)  # close() has begun: what it found queued is still to be written
        gate.open()
        await closing
        assert all(task.done() for task in tasks)
        await held
        with pytest.raises(RuntimeError, match="the writer is closed"):
            await writer.write(insert_game(new_id()))
        await writer.close()  # a second close is harmless
        return [task.result() for task in tasks]

    assert run(main()) == ids
    assert stored_games(sessions, ids) == set(ids)
    assert f"writer-{ids[0]}" not in [t.name for t in threading.enumerate()]
    with pytest.raises(RuntimeError, match="the writer is closed"):
        writer.write_blocking(insert_game(new_id()))
    with pytest.raises(RuntimeError, match="the writer is closed"):
        writer.start()


def test_close_before_start_refuses_writes(sessions: sessionmaker[Session]) -> None:
    writer = GroupCommitWriter(sessions)
    run(writer.close())
    with pytest.raises(RuntimeError, match="the writer is closed"):
        writer.write_blocking(insert_game(new_id()))


# ----------------------------------------------------------------- kill -9 at a COMMIT

CHILD = """
import asyncio, sys
from coloretto.web.storage.db import open_database
from coloretto.web.storage.rows import GameRow
from coloretto.web.runtime.writer import GroupCommitWriter

url, *ids = sys.argv[1:]
writer = GroupCommitWriter(open_database(url))
writer.start()

async def main():
    for game_id in ids:
        # an id written as "housekeeping:ID" is a housekeeping job, which the faults do not count
        housekeeping = game_id.startswith("housekeeping:")
        game_id = game_id.removeprefix("housekeeping:")
        job = lambda session, game_id=game_id: session.add(
            GameRow(id=game_id, name="killed", status="open", rules={}, seed=1)
        )
        await writer.write(job, housekeeping=housekeeping)
        print("acknowledged", game_id, flush=True)
    await writer.close()

asyncio.run(main())
"""


def run_child(database_url: str, ids: list[str], fault: str | None) -> subprocess.CompletedProcess[str]:
    env = dict(
        os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(REPOSITORY), os.environ.get("PYTHONPATH")]))
    )
    env.pop(FAULT_VARIABLE, None)
    if fault is not None:
        env[FAULT_VARIABLE] = fault
    return subprocess.run(
        [sys.executable, "-c", CHILD, database_url, *ids],
        env=env,
        capture_output=True,
        text=True,
        timeout=HANG_GUARD,
        check=False,
    )


@pytest.mark.parametrize(
    ("fault", "stored", "acknowledged"),
    [
        # killed between COMMIT and acknowledgement: stored, though nobody was told
        ("kill-after-commit:1", 1, 0),
        # killed between accept and COMMIT: not stored, and nobody was told
        ("kill-before-commit:1", 0, 0),
        ("kill-before-commit:2", 1, 1),
        ("kill-after-commit:2", 2, 1),
    ],
)
def test_kill_at_a_commit_loses_nothing_acknowledged(
    sessions: sessionmaker[Session], database_url: str, fault: str, stored: int, acknowledged: int
) -> None:
    ids = [new_id() for _ in range(3)]
    child = run_child(database_url, ids, fault)
    assert child.returncode == -9, child.stderr
    assert child.stdout.split() == [word for i in ids[:acknowledged] for word in ("acknowledged", i)]
    assert stored_games(sessions, ids) == set(ids[:stored])


def test_a_housekeeping_commit_is_not_counted_by_the_faults(
    sessions: sessionmaker[Session], database_url: str
) -> None:
    """A purge committed between two moves must not move the COMMIT a fault is aimed at."""
    ids = [new_id() for _ in range(3)]
    child = run_child(database_url, [f"housekeeping:{ids[0]}", ids[1], ids[2]], "kill-after-commit:1")
    assert child.returncode == -9, child.stderr
    assert child.stdout.split() == ["acknowledged", ids[0]]  # the purge, then death after ids[1]
    assert stored_games(sessions, ids) == set(ids[:2])


def test_without_a_fault_the_child_writes_everything(
    sessions: sessionmaker[Session], database_url: str
) -> None:
    ids = [new_id() for _ in range(3)]
    child = run_child(database_url, ids, None)
    assert child.returncode == 0, child.stderr
    assert stored_games(sessions, ids) == set(ids)


@pytest.mark.parametrize(
    "value",
    [
        "kill",
        "kill-after-commit",
        "kill-after-commit:",
        "kill-after-commit:0",
        "kill-after-commit:x",
        "kill-after-commit:-1",
        "explode:1",
        "kill-during-commit:1",
    ],
)
def test_a_malformed_fault_is_refused_at_construction(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv(FAULT_VARIABLE, value)
    expected = (
        f"{FAULT_VARIABLE}='{value}' is not a fault: expected kill-before-commit:N, kill-after-commit:N,"
    )
    with pytest.raises(ValueError, match=re.escape(expected)):
        GroupCommitWriter(sessionmaker())  # refused before it touches any database


def test_an_empty_fault_is_no_fault(sessions: sessionmaker[Session], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(FAULT_VARIABLE, "")
    game_id = new_id()
    assert GroupCommitWriter(sessions).write_blocking(insert_game(game_id)) == game_id
