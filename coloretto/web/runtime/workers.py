"""Bots and hints in worker processes: the server's process only waits for them.

A bot's move and a hint are searches: seconds of CPU, and the first MCTS bot
of a process imports the search and its compiled kernel. Run on the
server's event loop or in its threads they freeze or starve every game, so
:class:`BotPool` runs them in a few worker processes instead:

- the workers are started (``spawn``: never a fork of a process that holds an
  event loop and threads) and warmed when the server starts, one after another
  (so that starting them does not take every core at once); a job submitted
  before then waits in the queue, the event loop stays free;
- jobs wait in one queue per game and the free worker takes the next job
  round-robin over the games with jobs waiting, so a game asking many hints
  cannot hold up another game's bot move;
- bot moves are always accepted (a game has at most one waiting); hints beyond
  ``max_queued_hints`` waiting are refused at once with :class:`PoolBusy`;
- a worker that dies fails the job it ran with :class:`WorkerDied` and is
  replaced; an exception raised by the bot or the analysis reaches the caller;
- a game's review (:meth:`BotPool.run_review`) is many short jobs, one per
  task of :func:`coloretto.review.plan_review`, fed a few at a time (one more
  than the workers it may use) in a queue of the review's own, served in turn with the
  games; and review jobs run on at most ``review_workers`` workers at once
  (one fewer than the workers, at least one), so that a bot's move or a hint
  waits at most for one review job to end, never behind a whole review.

The pool is driven by threads of its own, one per worker, not by an event
loop: its coroutines may be awaited from any loop (a test client runs each app
on a loop of its own), and everything that waits on a worker (pickling,
pipes, joins) happens off the loop. This module imports neither the compiled
kernel nor the bots' search: only the workers do.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import logging
import multiprocessing
import os
import pickle
import threading
import time
from collections import Counter, OrderedDict, deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from coloretto.actions import Action
from coloretto.game import Observation
from coloretto.web.common import metrics, worker_metrics
from coloretto.web.common.i18n import gettext
from coloretto.web.runtime.pool_parts import (
    BATCH_LIMIT,
    HINT_KINDS,
    Job,
    JobKind,
    PoolBusy,
    PoolClosed,
    PoolStatus,
    ReviewFailed,
    WorkerDied,
    default_processes,
    deliver,
    describe,
    is_quick,
)
from coloretto.web.runtime.worker_jobs import HintValue, PositionOutlook, worker_main

if TYPE_CHECKING:
    from multiprocessing.connection import Connection
    from multiprocessing.process import BaseProcess

__all__ = [
    "BotPool",
    "HintValue",
    "PoolBusy",
    "PoolClosed",
    "PoolStatus",
    "PositionOutlook",
    "ReviewFailed",
    "WorkerDied",
    "default_processes",
    "shared_pool",
]

log = logging.getLogger(__name__)

#: the longest a worker that failed to start is left before the next try
_MAX_RESTART_DELAY = 30.0
#: how long a worker asked to stop may take before it is terminated
_STOP_GRACE = 5.0
#: how often an idle worker is looked at: one that died meanwhile (killed, out of memory) is replaced
#: before the next job needs it
_IDLE_CHECK = 1.0


@dataclass(eq=False)
class _Slot:
    """One worker process and the thread that feeds it."""

    index: int
    process: BaseProcess | None = None
    connection: Connection | None = None
    ready: bool = False
    #: the jobs the worker runs now: one, or a batch of quick bot moves
    jobs: list[Job] = field(default_factory=list)
    thread: threading.Thread | None = field(default=None, repr=False)


class BotPool:
    """Worker processes that choose bots' moves and analyse positions for hints.

    ``start()`` returns at once; ``choose`` and ``analyze`` are awaited from
    any event loop (jobs submitted before ``start()`` or before a worker is
    warm wait in the queue); ``close()`` stops the workers (queued jobs fail
    with :class:`PoolClosed`). ``processes=None``: :func:`default_processes`."""

    def __init__(
        self,
        processes: int | None = None,
        *,
        warm: tuple[str, ...] = ("hard",),
        max_queued_hints: int = 16,
        review_workers: int | None = None,
        job_timeout: float | None = 120.0,
    ) -> None:
        if processes is None:
            processes = default_processes()
        if processes < 1:
            raise ValueError(f"a bot pool needs at least one process, not {processes}")
        if max_queued_hints < 0:
            raise ValueError(f"max_queued_hints must be 0 or more, not {max_queued_hints}")
        self.processes = processes
        self.warm = tuple(warm)
        self.max_queued_hints = max_queued_hints
        #: seconds a worker may take over one trip (a job, or a batch of quick moves) before it is
        #: taken for hung: killed and replaced, its jobs failed with WorkerDied (None: no limit)
        self.job_timeout = job_timeout
        #: workers that may run review jobs at once: the others stay free for bots and hints
        self.review_workers = max(1, processes - 1) if review_workers is None else max(1, review_workers)
        self._lock = threading.Lock()
        self._work = threading.Condition(self._lock)
        #: one worker warms at a time, so that their starts do not all compete for the cores
        self._warm_turn = threading.Lock()
        self._stopping = threading.Event()
        self._queues: OrderedDict[str, deque[Job]] = OrderedDict()
        self._queued = 0
        self._queued_hints = 0
        self._running = 0
        self._running_reviews = 0
        self._trips = 0
        self._ever_warmed: set[int] = set()  # the slots whose workers have finished a warm-up
        self._slots = [_Slot(i) for i in range(processes)]
        self._started = False
        self._closed = False
        #: where the workers write their metrics (made by start(), removed by shutdown())
        self.metrics_directory: str | None = None

    # ---- the server's side --------------------------------------------------------------

    def start(self) -> None:
        """Start the workers in the background and return at once (idempotent)."""
        with self._lock:
            if self._closed:
                raise PoolClosed("the bot pool is closed")
            if self._started:
                return
            self._started = True
            self.metrics_directory = worker_metrics.new_directory()
            metrics.add_worker_directory(self.metrics_directory)
            metrics.watch(self)
            for slot in self._slots:
                # daemon threads: a forgotten pool must not keep the interpreter from exiting
                slot.thread = threading.Thread(
                    target=self._serve, args=(slot,), name=f"coloretto-bot-pool-{slot.index}", daemon=True
                )
                slot.thread.start()

    async def choose(self, game_id: str, bot: str, observation: Observation, seed: int) -> Action:
        """The move of a fresh ``make_bot(bot, seed)`` in ``observation``."""
        action: Action = await self._submit(game_id, "choose", (bot, observation, seed))
        return action

    async def analyze(
        self, game_id: str, observation: Observation, budget: str, seed: int
    ) -> list[HintValue]:
        """``coloretto.analysis.analyze(observation, budget, seed)``, best first; :class:`PoolBusy`
        when ``max_queued_hints`` hints are waiting already."""
        values: list[HintValue] = await self._submit(game_id, "analyze", (observation, budget, seed))
        return values

    async def whatif(
        self, game_id: str, observation: Observation, budget: int, seed: int
    ) -> tuple[list[HintValue], PositionOutlook]:
        """The analysis of a position of a what-if line: ``coloretto.analysis.analyze_position`` (the
        mover's actions, best first, and every seat's outlook, from one search) at ``budget``
        iterations. Counted as a hint: :class:`PoolBusy` when too many wait."""
        answer: tuple[list[HintValue], PositionOutlook] = await self._submit(
            game_id, "whatif", (observation, budget, seed)
        )
        return answer

    async def review_task(self, queue: str, task: Any, retries: int = 1) -> Any:
        """``coloretto.review.run_task(task)`` in a worker (its TaskResult), in the queue named
        ``queue``. A worker that dies while it runs the task: the task runs again (first in its
        queue), up to ``retries`` times, then :class:`ReviewFailed`."""
        for attempt in range(retries + 1):
            try:
                return await self._submit(queue, "review", (task,), first=attempt > 0)
            except WorkerDied as exc:
                if attempt >= retries:
                    raise ReviewFailed(
                        f"the review stopped: a worker process died {attempt + 1} times while it analysed "
                        f"position {getattr(task, 'key', '?')} ({exc})"
                    ) from exc
                log.warning("a review job's worker died; the job runs again (%s)", exc)
        raise AssertionError("unreachable")

    async def run_review(
        self,
        queue: str,
        plan: Any,
        progress: Callable[[int, int], None] | None = None,
        in_flight: int | None = None,
    ) -> Any:
        """Every task of ``plan`` (a :class:`coloretto.review.ReviewPlan`) run in the workers, at
        most ``in_flight`` at once (default: one more than ``review_workers``, so that a worker
        that ends a job finds the next one waiting) in the queue ``queue`` (one per
        review: it takes its turn with the games), then ``coloretto.review.assemble``d (in a thread)
        into the :class:`coloretto.review.Review`. ``progress(done, total)`` is called as tasks
        finish. Raises :class:`ReviewFailed` when a task's worker died twice, or the task's own
        exception."""
        from coloretto.review import assemble

        tasks = list(plan.tasks)
        total = len(tasks)
        results: dict[Any, Any] = {}
        width = max(1, min(in_flight or self.review_workers + 1, total or 1))
        waiting = iter(tasks)

        async def feed() -> None:
            for task in waiting:  # shared by the feeders: each task is taken once
                results[task.key] = await self.review_task(queue, task)
                if progress is not None:
                    progress(len(results), total)

        feeders = [asyncio.ensure_future(feed()) for _ in range(width)]
        try:
            await asyncio.gather(*feeders)
        except BaseException:
            for feeder in feeders:
                feeder.cancel()
            await asyncio.gather(*feeders, return_exceptions=True)
            raise
        return await asyncio.to_thread(assemble, plan, results)

    @property
    def closed(self) -> bool:
        return self._closed

    def status(self) -> PoolStatus:
        with self._lock:
            return PoolStatus(
                workers=self.processes,
                ready=sum(slot.ready for slot in self._slots),
                queued=self._queued,
                running=self._running,
                warm=len(self._ever_warmed) == self.processes,
                trips=self._trips,
            )

    def metric_samples(self) -> Iterator[metrics.Sample]:
        """The pool's gauges for ``/metrics``: its workers, and its jobs waiting (by kind) and running."""
        with self._lock:
            queued: Counter[str] = Counter(job.kind for jobs in self._queues.values() for job in jobs)
            ready = sum(slot.ready for slot in self._slots)
            running = self._running
        yield "coloretto_worker_processes", (), float(self.processes)
        yield "coloretto_worker_processes_ready", (), float(ready)
        yield "coloretto_worker_jobs_running", (), float(running)
        for kind, label in metrics.JOB_KINDS.items():
            yield "coloretto_worker_queue_depth", (label,), float(queued[kind])

    def worker_pids(self) -> tuple[int | None, ...]:
        """The process id of each worker (None while one is not started), in worker order."""
        with self._lock:
            return tuple(slot.process.pid if slot.process else None for slot in self._slots)

    def running_pids(self) -> tuple[int, ...]:
        """The process ids of the workers that are running a job now."""
        with self._lock:
            return tuple(
                slot.process.pid
                for slot in self._slots
                if slot.jobs and slot.process and slot.process.pid is not None
            )

    async def close(self) -> None:
        """Stop the workers; jobs still waiting fail with :class:`PoolClosed` (idempotent)."""
        await asyncio.to_thread(self.shutdown)

    def shutdown(self) -> None:
        """:meth:`close` for callers without an event loop (``atexit``); blocks until the workers are gone."""
        with self._work:
            self._closed = True
            self._stopping.set()
            abandoned = [job for jobs in self._queues.values() for job in jobs]
            self._queues.clear()
            self._queued = self._queued_hints = 0
            for job in abandoned:
                job.state = "done"
            # idle workers are asked to stop by their threads; busy or warming ones are stopped here
            doomed = [
                slot.process for slot in self._slots if slot.process and not (slot.ready and not slot.jobs)
            ]
            self._work.notify_all()
        for job in abandoned:
            deliver(job, error=PoolClosed("the bot pool was closed before this job ran"))
        for process in doomed:
            with contextlib.suppress(Exception):  # it may have ended already
                process.terminate()
        for slot in self._slots:
            if slot.thread is not None and slot.thread is not threading.current_thread():
                slot.thread.join(_STOP_GRACE * 2)
        metrics.unwatch(self)
        directory, self.metrics_directory = self.metrics_directory, None
        if directory is not None:
            metrics.remove_worker_directory(directory)
            worker_metrics.remove_directory(directory)

    async def _submit(
        self, game_id: str, kind: JobKind, arguments: tuple[Any, ...], first: bool = False
    ) -> Any:
        """Queue a job (``first``: at the head of its game's queue) and wait for its answer."""
        loop = asyncio.get_running_loop()
        job = Job(game_id, kind, arguments, loop, loop.create_future())
        with self._work:
            if self._closed:
                raise PoolClosed("the bot pool is closed")
            if kind in HINT_KINDS and self._queued_hints >= self.max_queued_hints:
                raise PoolBusy(
                    gettext(
                        "too many hints are waiting ({waiting}, at most {limit}): ask again in a moment",
                        waiting=self._queued_hints,
                        limit=self.max_queued_hints,
                    )
                )
            jobs = self._queues.setdefault(game_id, deque())
            if first:
                jobs.appendleft(job)
            else:
                jobs.append(job)
            self._queued += 1
            self._queued_hints += kind in HINT_KINDS
            self._work.notify()
        try:
            return await job.future
        except asyncio.CancelledError:
            self._withdraw(job)
            raise

    def _withdraw(self, job: Job) -> None:
        """Take a cancelled job out of its queue; a running one finishes and its answer is dropped."""
        with self._lock:
            if job.state != "queued":
                return
            jobs = self._queues[job.game_id]
            jobs.remove(job)
            if not jobs:
                del self._queues[job.game_id]
            job.state = "done"
            self._queued -= 1
            self._queued_hints -= job.kind in HINT_KINDS

    # ---- the pool's threads: one per worker ---------------------------------------------

    def _serve(self, slot: _Slot) -> None:
        delay = 0.5
        while not self._stopping.is_set():
            try:
                if not self._launch(slot):
                    if self._stopping.wait(delay):
                        return
                    delay = min(delay * 2, _MAX_RESTART_DELAY)
                    continue
                delay = 0.5
                while True:
                    jobs = self._next_jobs(slot)
                    if jobs is None:
                        self._stop_worker(slot)
                        return
                    if not jobs:  # it died while idle
                        self._died_idle(slot)
                        break
                    if not self._run(slot, jobs):
                        break  # the worker died: start another
            except Exception:
                # a fault of the pool itself: fail the job it held rather than leave its caller
                # waiting for ever, and start the slot again with a fresh worker
                log.exception("bot worker %s failed", slot.index)
                self._abandon(slot)
                if self._stopping.wait(delay):
                    return

    def _abandon(self, slot: _Slot) -> None:
        with self._lock:
            jobs, slot.jobs = slot.jobs, []
            process = slot.process
            self._running -= len(jobs)
            self._running_reviews -= sum(job.kind == "review" for job in jobs)
            for job in jobs:
                job.state = "done"
            self._work.notify_all()
        for job in jobs:
            deliver(job, error=RuntimeError(f"the bot pool failed while it ran this {describe(job)}"))
        if process is not None:
            with contextlib.suppress(Exception):
                process.kill()
                process.join(_STOP_GRACE)
        self._forget_worker(slot)

    def _launch(self, slot: _Slot) -> bool:
        """Start and warm the slot's worker; False if it died on the way (or the pool closed)."""
        with self._warm_turn:
            if self._stopping.is_set():
                return False
            context = multiprocessing.get_context("spawn")
            ours, theirs = context.Pipe(duplex=True)
            process = context.Process(
                target=worker_main,
                args=(theirs, self.warm, self.metrics_directory),
                name=f"coloretto-bot-worker-{slot.index}",
                daemon=True,  # ended by multiprocessing at exit if the pool was never closed
            )
            try:
                process.start()
            except Exception:
                # e.g. a main module that starts a server on import, without the
                # ``if __name__ == "__main__"`` guard that "spawn" needs
                log.exception("bot worker %s could not be started", slot.index)
                metrics.worker_restarts["failed_start"].inc()
                ours.close()
                theirs.close()
                return False
            theirs.close()  # the worker holds the other end: its death reads as end of file here
            with self._lock:
                slot.process, slot.connection = process, ours
                closed = self._closed
            if closed:
                process.terminate()
            try:
                kind, _pid, problem = pickle.loads(ours.recv_bytes())
            except (EOFError, OSError):
                self._forget_worker(slot)
                if not self._stopping.is_set():
                    metrics.worker_restarts["failed_start"].inc()
                    log.error(
                        "bot worker %s died while warming up (exit code %s)", slot.index, process.exitcode
                    )
                return False
            assert kind == "ready", kind
            if problem:
                log.warning("bot worker %s could not warm up %s: %s", slot.index, self.warm, problem)
            with self._lock:
                slot.ready = True
                self._ever_warmed.add(slot.index)
            return True

    def _next_jobs(self, slot: _Slot) -> list[Job] | None:
        """The next job, round-robin over the games with jobs waiting; None once the pool closes, and
        none (an empty list) when the slot's worker died while it waited for one.
        A quick bot's move (one that does not search) comes with the other games' quick moves
        waiting, up to :data:`BATCH_LIMIT`: one trip to the worker for them all."""
        with self._work:
            while not self._closed and (first := self._next_queue()) is None:
                self._work.wait(_IDLE_CHECK)
                process = slot.process
                if process is not None and not process.is_alive() and self._next_queue() is None:
                    return []
            if self._closed:
                return None
            assert first is not None
            jobs = [self._pop(first)]
            if is_quick(jobs[0]):
                for game_id in list(self._queues)[: BATCH_LIMIT * 2]:
                    if len(jobs) >= BATCH_LIMIT:
                        break
                    if is_quick(self._queues[game_id][0]):
                        jobs.append(self._pop(game_id))
            now = time.perf_counter()
            for job in jobs:
                job.state = "running"
                metrics.worker_wait[metrics.JOB_KINDS[job.kind]].observe(now - job.queued_at)
            self._running += len(jobs)
            self._running_reviews += sum(job.kind == "review" for job in jobs)
            slot.jobs = list(jobs)  # a copy: finished jobs leave it while the batch is answered
            return jobs

    def _next_queue(self) -> str | None:
        """The first queue in turn whose next job may run now (the caller holds the lock): a review
        job only while fewer than ``review_workers`` run."""
        reviews_full = self._running_reviews >= self.review_workers
        for game_id, jobs in self._queues.items():
            if not (reviews_full and jobs[0].kind == "review"):
                return game_id
        return None

    def _pop(self, game_id: str) -> Job:
        """The first job of a game's queue (the caller holds the lock); the game goes to the back."""
        jobs = self._queues[game_id]
        job = jobs.popleft()
        if jobs:
            self._queues.move_to_end(game_id)
        else:
            del self._queues[game_id]
        self._queued -= 1
        self._queued_hints -= job.kind in HINT_KINDS
        return job

    def _run(self, slot: _Slot, jobs: list[Job]) -> bool:
        """Run ``jobs`` on the slot's worker; False if the worker died."""
        connection, process = slot.connection, slot.process
        assert connection is not None and process is not None
        try:
            if len(jobs) == 1:
                request = pickle.dumps((jobs[0].kind, *jobs[0].arguments))
            else:
                request = pickle.dumps(("batch", [(job.kind, *job.arguments) for job in jobs]))
        except Exception as exc:
            for job in jobs:
                self._finish(
                    slot, job, error=TypeError(f"the {describe(job)} could not be sent to a worker: {exc}")
                )
            return True
        with self._lock:
            self._trips += 1
        hung = False
        try:
            connection.send_bytes(request)
            if self.job_timeout is not None and not connection.poll(self.job_timeout):
                hung = True
                log.error(
                    "bot worker %s (process %s) did not answer in %g s: taken for hung and killed",
                    slot.index,
                    process.pid,
                    self.job_timeout,
                )
                process.kill()
                raise EOFError
            reply = connection.recv_bytes()
        except (EOFError, OSError):
            process.join(_STOP_GRACE)
            self._forget_worker(slot)
            if not self._closed:
                metrics.worker_restarts["hung" if hung else "died"].inc()
            for job in jobs:
                if self._closed:
                    error: Exception = PoolClosed(f"the bot pool was closed while this {describe(job)} ran")
                elif hung:
                    error = WorkerDied(
                        f"the worker process {process.pid} did not answer this {describe(job)} in "
                        f"{self.job_timeout:g} s and was killed; the pool starts a new worker"
                    )
                else:
                    error = WorkerDied(
                        f"the worker process {process.pid} died (exit code {process.exitcode}) while it ran "
                        f"this {describe(job)}; the pool starts a new worker"
                    )
                    log.error("%s", error)
                self._finish(slot, job, error=error)
            return False
        try:
            outcome, value = pickle.loads(reply)
            replies = value if len(jobs) > 1 and outcome == "ok" else [(outcome, value)]
            if len(replies) != len(jobs):
                raise ValueError(f"{len(replies)} answers for {len(jobs)} jobs")
        except Exception as exc:
            for job in jobs:
                self._finish(slot, job, error=RuntimeError(f"a worker's answer could not be read: {exc}"))
            return True
        for job, (outcome, value) in zip(jobs, replies):
            if outcome == "ok":
                self._finish(slot, job, value=value)
            else:
                self._finish(slot, job, error=value)
        return True

    def _died_idle(self, slot: _Slot) -> None:
        process = slot.process
        if process is not None:
            process.join(_STOP_GRACE)
            log.error(
                "bot worker %s (process %s) died while idle (exit code %s); the pool starts a new worker",
                slot.index,
                process.pid,
                process.exitcode,
            )
        self._forget_worker(slot)
        if not self._closed:
            metrics.worker_restarts["died"].inc()

    def _finish(self, slot: _Slot, job: Job, value: Any = None, error: BaseException | None = None) -> None:
        with self._lock:
            if job in slot.jobs:
                slot.jobs.remove(job)
            job.state = "done"
            self._running -= 1
            if job.kind == "review":
                self._running_reviews -= 1
                self._work.notify()  # a review job waiting for its turn may run now
        deliver(job, value, error)

    def _forget_worker(self, slot: _Slot) -> None:
        with self._lock:
            connection, process = slot.connection, slot.process
            slot.process = slot.connection = None
            slot.ready = False
            directory = self.metrics_directory
        if connection is not None:
            connection.close()
        if process is not None and process.pid is not None and directory is not None:
            worker_metrics.forget_worker(process.pid, directory)

    def _stop_worker(self, slot: _Slot) -> None:
        """Ask an idle worker to exit, and make sure it has."""
        connection, process = slot.connection, slot.process
        if connection is not None:
            with contextlib.suppress(OSError):
                connection.send_bytes(pickle.dumps(None))
        if process is not None:
            process.join(_STOP_GRACE)
            if process.exitcode is None:
                process.terminate()
                process.join(_STOP_GRACE)
        self._forget_worker(slot)


# ---- the shared pool ------------------------------------------------------------------------

_shared: dict[int, tuple[int, BotPool]] = {}
_shared_lock = threading.Lock()


def shared_pool(processes: int | None = None, job_timeout: float | None = 120.0) -> BotPool:
    """The started pool of ``processes`` workers (None: :func:`default_processes`) of this
    process: every app created in it uses the same one (with the ``job_timeout`` given last);
    it is closed at exit."""
    size = default_processes() if processes is None else processes
    with _shared_lock:
        owner, pool = _shared.get(size, (0, None))
        # a pool's threads do not survive a fork, nor does a closed pool serve
        if pool is None or owner != os.getpid() or pool.closed:
            pool = BotPool(size, job_timeout=job_timeout)
            pool.start()
            _shared[size] = (os.getpid(), pool)
            atexit.register(pool.shutdown)
        pool.job_timeout = job_timeout
        return pool
