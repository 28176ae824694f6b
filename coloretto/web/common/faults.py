"""Fault injection for the tests of the live path: ``COLORETTO_FAULT`` names the faults.

The variable holds one fault or several, separated by commas:

``kill-before-commit:N``
    SIGKILL the process just before the writer's N-th COMMIT (nothing of it is stored);
``kill-after-commit:N``
    SIGKILL the process just after the N-th COMMIT returned, before any caller is told;
``raise:STEP:N``
    raise :class:`InjectedFault` once, the N-th time STEP runs in this process. The steps are
    the live path's: ``writer`` (a transaction, before its COMMIT), ``bot`` (a bot's turn, once
    its delay is over), ``worker`` (a job in a bot worker process), ``clock`` (a turn clock's
    check), ``broadcast`` (a state sent to a game's watchers) and ``bus`` (an event from another
    server process, as it is handled);
``hang:worker:N``
    the bot worker's N-th job never answers (the worker sleeps for an hour), as a worker stuck in
    a bug would: the pool's time limit must find it;
``hang:warmup:1``
    every bot worker's warm-up never ends (each worker warms up once, counting for itself): the
    server runs with its workers never warm (``/api/health/ready`` says so);
``drop:bus:N``
    the N-th move event from another server process is lost before it is handled, as Redis
    pub/sub, which delivers at most once, can lose one: the process must see the gap in the
    game's move numbers at the next event and read the game again.

Unset (or empty) it costs nothing; anything else is a ``ValueError`` when it is read (the
writer reads it at construction, so a server with a bad value does not start). Each process
counts for itself: a worker process inherits the variable and counts its own jobs.
"""

from __future__ import annotations

import os
import threading
import time
from collections import Counter
from dataclasses import dataclass

FAULT_VARIABLE = "COLORETTO_FAULT"
KILL_KINDS = ("kill-before-commit", "kill-after-commit")
STEPS = ("writer", "bot", "worker", "clock", "broadcast", "bus")
#: the steps a ``hang`` fault may stop
HANG_STEPS = ("worker", "warmup")
#: what a ``drop`` fault may lose: a move event from another process
DROP_STEPS = ("bus",)
GRAMMAR = (
    "expected kill-before-commit:N, kill-after-commit:N, raise:STEP:N (STEP one of "
    + ", ".join(STEPS)
    + ") or hang:STEP:N (STEP one of "
    + ", ".join(HANG_STEPS)
    + "), drop:STEP:N (STEP one of "
    + ", ".join(DROP_STEPS)
    + "; N = 1, 2, …), several separated by commas"
)
#: how long a ``hang`` fault sleeps: far beyond any time limit
HANG_SECONDS = 3600.0


class InjectedFault(RuntimeError):
    """The exception a ``raise:STEP:N`` fault raises."""


@dataclass(frozen=True)
class Fault:
    """Kill the process just before or after the ``number``-th COMMIT, or raise at the
    ``number``-th run of ``step``."""

    kind: str  #: "kill-before-commit", "kill-after-commit", "raise", "hang" or "drop"
    number: int
    step: str = "writer"

    @classmethod
    def parse(cls, value: str) -> Fault:
        parts = value.strip().split(":")
        problem = ValueError(f"{FAULT_VARIABLE}={value!r} is not a fault: {GRAMMAR}")
        if parts[0] in KILL_KINDS and len(parts) == 2:
            kind, step, number = parts[0], "writer", parts[1]
        elif parts[0] == "raise" and len(parts) == 3 and parts[1] in STEPS:
            kind, step, number = "raise", parts[1], parts[2]
        elif parts[0] == "hang" and len(parts) == 3 and parts[1] in HANG_STEPS:
            kind, step, number = "hang", parts[1], parts[2]
        elif parts[0] == "drop" and len(parts) == 3 and parts[1] in DROP_STEPS:
            kind, step, number = "drop", parts[1], parts[2]
        else:
            raise problem
        if not number.isdigit() or int(number) < 1:
            raise problem
        return cls(kind, int(number), step)


def parse_faults(value: str) -> tuple[Fault, ...]:
    """Every fault of a ``COLORETTO_FAULT`` value ("" is none)."""
    if not value.strip():
        return ()
    return tuple(Fault.parse(part) for part in value.split(","))


def faults_from_environment() -> tuple[Fault, ...]:
    """The faults ``COLORETTO_FAULT`` names now."""
    return parse_faults(os.environ.get(FAULT_VARIABLE, ""))


#: runs counted by (the faults' kinds, step): a raise and a drop at one step count apart
_runs: Counter[tuple[tuple[str, ...], str]] = Counter()
_lock = threading.Lock()


def _asked(step: str, kinds: tuple[str, ...]) -> tuple[str | None, int]:
    """Count one run of ``step`` for faults of ``kinds``: the kind of the fault that asks for this
    run (None: none) and the run's number. Without ``COLORETTO_FAULT`` it only looks it up."""
    value = os.environ.get(FAULT_VARIABLE)
    if not value:
        return None, 0
    wanted = {f.number: f.kind for f in parse_faults(value) if f.kind in kinds and f.step == step}
    if not wanted:
        return None, 0
    with _lock:
        _runs[(kinds, step)] += 1
        run = _runs[(kinds, step)]
    return wanted.get(run), run


def inject(step: str) -> None:
    """Count one run of ``step``; raise :class:`InjectedFault` (or hang) if a fault asks for this
    run. Without ``COLORETTO_FAULT`` it only looks the variable up."""
    kind, run = _asked(step, ("raise", "hang"))
    if kind == "hang":
        time.sleep(HANG_SECONDS)
    if kind == "raise":
        raise InjectedFault(f"{FAULT_VARIABLE}: a fault injected in step {step!r} (its run {run})")


def dropped(step: str) -> bool:
    """Count one run of ``step``; True if a ``drop`` fault asks for this one to be lost."""
    return _asked(step, ("drop",))[0] == "drop"


def reset_counts() -> None:
    """Forget the runs counted so far (for tests that set the variable again)."""
    with _lock:
        _runs.clear()
