"""The group-commit writer: many games' writes in one transaction, off the event loop.

A commit is on disk when it returns (SQLite with ``synchronous=FULL``,
PostgreSQL by default), and that fsync costs milliseconds. Committing each
move on the event loop therefore caps the whole server at a few hundred moves
per second and stalls every connection meanwhile. The writer instead runs in
its own thread: it takes everything queued (up to ``max_batch`` jobs), runs
the jobs in order in one session and one transaction, and commits once; one
fsync then stores the moves of many games. Each caller awaits its own job's
result, which arrives only after the COMMIT has returned, so nothing is
acknowledged before it is durable.

A job is a function of the session that does its writes with it and nothing
else: when a batch fails (a job raises, or the COMMIT does) the batch is
rolled back and every job of it runs again alone, in its own transaction, so
that one failing job (say an ``IntegrityError``: another process stored that
move number first) fails only its own caller, with its own exception, and the
other jobs still commit. A job may therefore run twice, and builds the rows it
adds itself.

A caller cancelled while its job is queued does not take the job back: it
still runs and commits, and its result is dropped.

Fault injection, for the durability tests
-----------------------------------------
``COLORETTO_FAULT`` (:mod:`coloretto.web.common.faults`), read when the writer is
constructed, can make the process kill itself with SIGKILL at a chosen COMMIT
(``kill-before-commit:N``: nothing of that transaction is stored;
``kill-after-commit:N``: after the COMMIT returned, before any caller is told),
or raise once in the N-th transaction (``raise:writer:N``).

COMMITs are counted from 1 over the writer's life, each one a transaction
that holds at least one job: a batch, a job run alone after its batch failed,
or a :meth:`GroupCommitWriter.write_blocking` run inline before
:meth:`~GroupCommitWriter.start`. A transaction of nothing but housekeeping
jobs (``write(job, housekeeping=True)``: the periodic purges) is not counted,
so that a test's N-th COMMIT does not depend on when a purge happened to run.
Unset (or empty) it costs nothing; any other
value is a ``ValueError`` at construction.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import os
import queue
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from sqlalchemy.orm import Session, sessionmaker

from coloretto.web.common import metrics
from coloretto.web.common.faults import FAULT_VARIABLE, Fault, faults_from_environment, inject

log = logging.getLogger(__name__)

T = TypeVar("T")
#: does its writes with the session; no side effects outside the session (it may run twice)
Job = Callable[[Session], T]


def _nothing(session: Session) -> None:
    """The job of :meth:`GroupCommitWriter.flush`: writes nothing."""


class StorageError(Exception):
    """The writer could not run a job for a reason of its own (not the job's exception)."""


@dataclass(frozen=True)
class WriterStats:
    """Counts since the writer was made."""

    batches: int = 0  #: transactions taken from the queue (or run inline), not the retries alone
    jobs: int = 0  #: jobs run, each counted once however many times it ran
    failed_batches: int = 0  #: batches rolled back and run again job by job
    largest_batch: int = 0


class _Waiter(Generic[T]):
    """Where a job's outcome goes: an asyncio future on its own loop, or a thread's future."""

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop | None,
        future: asyncio.Future[T] | concurrent.futures.Future[T],
    ) -> None:
        self.loop = loop
        self.future = future

    def deliver(self, result: T | None, error: BaseException | None) -> None:
        if self.loop is None:
            assert isinstance(self.future, concurrent.futures.Future)
            _settle(self.future, result, error)
            return
        with contextlib.suppress(RuntimeError):  # that loop is closed: nobody is left to tell
            self.loop.call_soon_threadsafe(_settle, self.future, result, error)


def _settle(
    future: asyncio.Future[T] | concurrent.futures.Future[T],
    result: T | None,
    error: BaseException | None,
) -> None:
    if future.done():  # a caller cancelled while its job was queued
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(result)  # type: ignore[arg-type]  # result is T whenever error is None


@dataclass
class _Request(Generic[T]):
    job: Job[T]
    waiter: _Waiter[T]
    housekeeping: bool = False


class GroupCommitWriter:
    """Commits queued jobs in batches, one transaction per batch, in a thread of its own."""

    def __init__(
        self,
        sessions: sessionmaker[Session],
        *,
        max_batch: int = 500,
        name: str = "coloretto-writer",
    ) -> None:
        if max_batch < 1:
            raise ValueError(f"max_batch must be at least 1, not {max_batch}")
        self._sessions = sessions
        self._max_batch = max_batch
        self._name = name
        self._faults: tuple[Fault, ...] = faults_from_environment()
        self._queue: queue.SimpleQueue[_Request[Any] | None] = queue.SimpleQueue()
        # Held while deciding whether a job may still be queued, so that no job
        # lands behind the stop marker (it would never run). Reentrant: a job run
        # inline may itself call write_blocking.
        self._lock = threading.RLock()
        self._closed = False
        self._thread: threading.Thread | None = None
        self._commits = 0
        self._stats = WriterStats()
        self._stats_lock = threading.Lock()

    # ------------------------------------------------------------ public

    def start(self) -> None:
        """Start the writer's thread; a second call does nothing."""
        with self._lock:
            if self._closed:
                raise RuntimeError("the writer is closed")
            if self._thread is not None:
                return
            # A daemon: a process that exits without close() must not hang on an
            # idle queue; what was queued then was not acknowledged either.
            self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
            self._thread.start()

    async def write(self, job: Job[T], *, housekeeping: bool = False) -> T:
        """Queue ``job``; its result once its transaction has committed (or its exception).

        ``housekeeping`` marks a job that no player waits on (a purge): the fault
        injection does not count its COMMIT."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        self._enqueue(_Request(job, _Waiter(loop, future), housekeeping), inline_allowed=False)
        return await future

    def write_blocking(self, job: Job[T]) -> T:
        """:meth:`write` for code not on an event loop; before :meth:`start` it runs inline."""
        if threading.current_thread() is self._thread:
            raise RuntimeError("write_blocking called from a writer job: it would wait on itself")
        future: concurrent.futures.Future[T] = concurrent.futures.Future()
        with self._lock:  # held through an inline run: start() waits for it to end
            if not self._enqueue(_Request(job, _Waiter(None, future)), inline_allowed=True):
                return self._run_inline(job)
        return future.result()

    async def flush(self) -> None:
        """Wait until every job queued before this call has committed (or failed): an empty
        transaction queued behind them, answered in order (a server draining before it exits)."""
        await self.write(_nothing)

    async def close(self) -> None:
        """Write every job queued so far, then stop the thread; safe to call again."""
        with self._lock:
            first_close = not self._closed
            self._closed = True
            thread = self._thread
            if first_close and thread is not None:
                self._queue.put(None)  # the stop marker: what is queued before it is written
        if thread is not None and thread.is_alive():
            await asyncio.to_thread(thread.join)

    def queued(self) -> int:
        """Jobs waiting for the writer's thread now (approximately: it takes them meanwhile)."""
        return self._queue.qsize()

    @property
    def stats(self) -> WriterStats:
        with self._stats_lock:
            return self._stats

    # ------------------------------------------------------------ the caller's side

    def _enqueue(self, request: _Request[Any], *, inline_allowed: bool) -> bool:
        """Queue the request; False when it should run inline instead (not started yet)."""
        with self._lock:
            if self._closed:
                raise RuntimeError("the writer is closed")
            if self._thread is None:
                if inline_allowed:
                    return False
                raise RuntimeError("the writer is not started: call start() first")
            self._queue.put(request)
            return True

    def _run_inline(self, job: Job[T]) -> T:
        self._count(1, failed=False)
        result: T = self._transaction([job])[0]
        return result

    # ------------------------------------------------------------ the writer's thread

    def _run(self) -> None:
        while True:
            first = self._queue.get()  # blocks: an idle writer costs nothing
            if first is None:
                return
            batch = [first]
            stopping = False
            while len(batch) < self._max_batch:
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
                if item is None:
                    stopping = True
                    break
                batch.append(item)
            try:
                self._write_batch(batch)
            except BaseException as exc:  # a fault of the writer's own: no caller may hang on it
                log.exception("the writer failed on a batch of %d writes", len(batch))
                error = StorageError(f"the writer failed: {exc!r}")
                for request in batch:
                    request.waiter.deliver(None, error)
            if stopping:
                return

    def _write_batch(self, batch: list[_Request[Any]]) -> None:
        try:
            results = self._transaction(
                [request.job for request in batch],
                counted=not all(request.housekeeping for request in batch),
            )
        except Exception as exc:
            if len(batch) == 1:
                self._count(1, failed=False)
                batch[0].waiter.deliver(None, exc)
                return
            log.info("a batch of %d writes failed (%s); writing them one by one", len(batch), exc)
            metrics.WRITER_FAILED.inc()
            self._count(len(batch), failed=True)
            for request in batch:
                self._write_alone(request)
            return
        self._count(len(batch), failed=False)
        for request, result in zip(batch, results, strict=True):
            request.waiter.deliver(result, None)

    def _write_alone(self, request: _Request[Any]) -> None:
        try:
            (result,) = self._transaction([request.job], counted=not request.housekeeping)
        except Exception as exc:
            request.waiter.deliver(None, exc)
        else:
            request.waiter.deliver(result, None)

    def _transaction(self, jobs: list[Job[Any]], *, counted: bool = True) -> list[Any]:
        """Run the jobs in one transaction and commit it; the results, in order.

        ``counted``: whether this COMMIT counts for the faults (not when all is housekeeping)."""
        started = time.perf_counter()
        with self._sessions() as session:
            with session.begin():  # rolls back when a job or the COMMIT raises
                results = [job(session) for job in jobs]
                if counted:
                    inject("writer")
                    self._commits += 1
                    self._kill_if_asked("kill-before-commit")
            if counted:
                self._kill_if_asked("kill-after-commit")  # leaving session.begin() committed
        metrics.WRITER_COMMIT.observe(time.perf_counter() - started)
        metrics.WRITER_BATCH.observe(len(jobs))
        return results

    def _kill_if_asked(self, kind: str) -> None:
        if any(fault.kind == kind and fault.number == self._commits for fault in self._faults):
            log.warning("%s=%s:%d: killing the process", FAULT_VARIABLE, kind, self._commits)
            os.kill(os.getpid(), signal.SIGKILL)

    def _count(self, jobs: int, *, failed: bool) -> None:
        with self._stats_lock:
            stats = self._stats
            self._stats = WriterStats(
                batches=stats.batches + 1,
                jobs=stats.jobs + jobs,
                failed_batches=stats.failed_batches + failed,
                largest_batch=max(stats.largest_batch, jobs),
            )
