"""The bot pool's parts beside the pool itself (:mod:`coloretto.web.runtime.workers`): its errors
and status, the kinds of job, which bot moves are quick enough to batch, and handing a job's answer
to the event loop that waits for it."""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from dataclasses import dataclass, field
from typing import Any, Literal


class PoolBusy(Exception):
    """A hint refused because the hint queue is full."""


class PoolClosed(RuntimeError):
    """A job submitted to, or still waiting in, a pool that is closed."""


class WorkerDied(RuntimeError):
    """The worker process running a job died (killed or crashed) before it answered."""


class ReviewFailed(RuntimeError):
    """A review that could not be finished (a task's worker died twice); the message says why."""


@dataclass(frozen=True)
class PoolStatus:
    """What ``/api/health`` shows of the pool."""

    workers: int  #: worker processes the pool keeps
    ready: int  #: of them, started, warmed and serving now
    queued: int  #: jobs waiting for a worker
    running: int  #: jobs a worker is running
    warm: bool  #: every worker has finished its first warm-up
    trips: int = 0  #: messages sent to workers so far (a batch of quick moves is one)


def default_processes() -> int:
    """One worker per core but one (the server's own), at least one and at most four."""
    return max(1, min(4, (os.cpu_count() or 1) - 1))


JobKind = Literal["choose", "analyze", "review", "whatif"]
#: the jobs counted against ``max_queued_hints`` (and refused with PoolBusy beyond it)
HINT_KINDS = frozenset({"analyze", "whatif"})


@dataclass(eq=False)
class Job:
    """A job for a worker: queued, run, then answered to the loop that waits for it."""

    game_id: str
    kind: JobKind
    #: what the worker needs besides the kind: (bot, observation, seed), (observation, budget, seed)
    #: or (review task,)
    arguments: tuple[Any, ...]
    loop: asyncio.AbstractEventLoop
    future: asyncio.Future[Any]
    state: Literal["queued", "running", "done"] = "queued"
    queued_at: float = field(default_factory=time.perf_counter)  #: for the queue's wait, in /metrics


#: quick bot moves sent to a worker in one message, at most: more answers arriving at once make a
#: longer burst of work on the event loop (500 games: p99 action to broadcast 60-70 ms with 16,
#: 110-130 ms with 64), fewer make more trips
BATCH_LIMIT = 16
_quick_bots: dict[str, bool] = {}


def is_quick(job: Job) -> bool:
    """A bot move that takes no search (random, greedy, heuristic): batched with others."""
    if job.kind != "choose":
        return False
    name = job.arguments[0]
    quick = _quick_bots.get(name)
    if quick is None:
        from coloretto.bots import BotSpecError, check_bot

        try:
            quick = check_bot(name).limit is None
        except BotSpecError:
            quick = False  # it fails alone, with its own error
        if len(_quick_bots) < 1000:
            _quick_bots[name] = quick
    return quick


def describe(job: Job) -> str:
    if job.kind == "choose":
        return f"bot move ({job.arguments[0]})"
    return "review job" if job.kind == "review" else "analysis"


def deliver(job: Job, value: Any = None, error: BaseException | None = None) -> None:
    """Hand a job's answer to the loop that waits for it (from the pool's thread)."""

    def settle() -> None:
        if job.future.done():  # cancelled: nobody wants the answer
            return
        if error is not None:
            job.future.set_exception(error)
        else:
            job.future.set_result(value)

    with contextlib.suppress(RuntimeError):  # that loop is closed: nobody is waiting
        job.loop.call_soon_threadsafe(settle)
