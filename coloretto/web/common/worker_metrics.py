"""What a bot worker process records about itself, for the server's ``/metrics``.

The workers are processes of their own, so their metrics live in files: prometheus-client's
multiprocess mode, in a directory that each server process makes for its workers when its pool
starts (:func:`new_directory`), reads at every ``/metrics``
(:mod:`coloretto.web.common.metrics`), cleans of a dead worker's files
(:func:`forget_worker`, prometheus-client's ``mark_process_dead``) and removes when the pool closes
(:func:`remove_directory`). A directory left by a server that was killed is removed by the next
server that starts on the machine.

Only a worker switches to the multiprocess mode (:meth:`WorkerMetrics.start`): the server's own
metrics stay in its memory, where an update costs least.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import tempfile
from dataclasses import dataclass
from typing import Any

#: the worker jobs' kinds as labels: a bot's move, a hint, a position of a review, a what-if line
JOB_KINDS = {"choose": "bot", "analyze": "hint", "review": "review", "whatif": "whatif"}
OUTCOMES = ("ok", "error")
#: a job's run time in a worker: a quick bot's move takes well under a millisecond, a review's
#: position or a strong bot's move seconds
JOB_BUCKETS = (0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 120.0)
WARMUP_BUCKETS = (0.1, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0)

#: the directories' names: ``coloretto-metrics-PID-RANDOM`` in the temporary directory
PREFIX = "coloretto-metrics-"
_OWN_NAME = re.compile(re.escape(PREFIX) + r"(\d+)-")


def new_directory() -> str:
    """A fresh directory for one server process's workers; first, the directories of server
    processes that no longer run (killed before they could remove theirs) are removed."""
    base = tempfile.gettempdir()
    with contextlib.suppress(OSError):
        for name in os.listdir(base):
            found = _OWN_NAME.match(name)
            if found and not _running(int(found.group(1))):
                shutil.rmtree(os.path.join(base, name), ignore_errors=True)
    return tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-", dir=base)


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def forget_worker(pid: int, directory: str) -> None:
    """A worker process is gone: its live gauges no longer count (its counters and histograms are
    kept, so that totals never go back)."""
    from prometheus_client import multiprocess

    with contextlib.suppress(OSError):
        multiprocess.mark_process_dead(pid, directory)


def remove_directory(directory: str) -> None:
    shutil.rmtree(directory, ignore_errors=True)


def resident_bytes() -> float:
    """This process's resident memory (Linux: /proc/self/statm; elsewhere its peak)."""
    try:
        with open("/proc/self/statm") as statm:
            return float(int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE"))
    except (OSError, ValueError, IndexError):
        import resource

        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return float(peak if os.uname().sysname == "Darwin" else peak * 1024)


@dataclass(frozen=True)
class WorkerMetrics:
    """A worker's metrics, written to its files in the server's directory."""

    duration: Any
    jobs: Any
    iterations: Any
    warmup: Any
    memory: Any

    @classmethod
    def start(cls, directory: str) -> WorkerMetrics:
        """Switch this process (a worker, before it makes any metric) to files in ``directory``,
        and make the metrics, every kind's series at 0."""
        os.environ["PROMETHEUS_MULTIPROC_DIR"] = directory
        from prometheus_client import Counter, Gauge, Histogram, values

        values.ValueClass = values.MultiProcessValue()
        duration = Histogram(
            "coloretto_worker_job_duration_seconds",
            "Time a bot worker took over one job, measured in the worker, by kind.",
            ["kind"],
            buckets=JOB_BUCKETS,
            registry=None,
        )
        jobs = Counter(
            "coloretto_worker_jobs_total",
            "Jobs the bot workers ran, by kind and outcome (error: the bot or the analysis raised).",
            ["kind", "outcome"],
            registry=None,
        )
        iterations = Counter(
            "coloretto_worker_search_iterations_total",
            "Search iterations (simulated games) the bot workers ran, by kind.",
            ["kind"],
            registry=None,
        )
        warmup = Histogram(
            "coloretto_worker_warmup_duration_seconds",
            "Time a bot worker took to warm up (import the search and its kernel, one move).",
            buckets=WARMUP_BUCKETS,
            registry=None,
        )
        memory = Gauge(
            "coloretto_worker_resident_memory_bytes",
            "Resident memory of the bot worker processes running now, summed.",
            registry=None,
            multiprocess_mode="livesum",
        )
        for kind in JOB_KINDS.values():
            duration.labels(kind)
            iterations.labels(kind)
            for outcome in OUTCOMES:
                jobs.labels(kind, outcome)
        return cls(duration, jobs, iterations, warmup, memory)

    def warmed(self, seconds: float) -> None:
        self.warmup.observe(seconds)
        self.memory.set(resident_bytes())

    def job(self, kind: str, seconds: float, ok: bool, iterations: int) -> None:
        label = JOB_KINDS.get(kind, "other")
        self.duration.labels(label).observe(seconds)
        self.jobs.labels(label, "ok" if ok else "error").inc()
        if iterations:
            self.iterations.labels(label).inc(iterations)

    def after_jobs(self) -> None:
        self.memory.set(resident_bytes())
