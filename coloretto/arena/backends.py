"""Where games are played: this process, a process pool, or a Ray cluster.

Each backend takes the config and the game numbers still to play and yields
results as games finish, in whatever order they finish; the tournament sorts
them by game number, so the order never changes a figure. Closing the
generator (an interruption) stops the workers.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.util
import os
import signal
import socket
import threading
import time
from collections.abc import Iterator, Sequence
from typing import Any

from coloretto.arena.config import ArenaError, TournamentConfig
from coloretto.arena.external import close_engines
from coloretto.arena.play import play_game

BACKENDS = ("pool", "ray", "serial")


def default_workers() -> int:
    """All the cores this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def play_batch(config: TournamentConfig, games: Sequence[int]) -> list[dict[str, Any]]:
    return [play_game(config, config.task(g)) for g in games]


def batches(games: Sequence[int], workers: int, size: int | None = None) -> list[list[int]]:
    """Small batches: large enough to cost little to send, small enough that
    progress is smooth and an interruption loses little."""
    if size is None:
        size = max(1, min(16, len(games) // (workers * 8) or 1))
    return [list(games[i : i + size]) for i in range(0, len(games), size)]


# ---------------------------------------------------------------- serial


def run_serial(config: TournamentConfig, games: Sequence[int]) -> Iterator[dict[str, Any]]:
    try:
        for g in games:
            yield play_game(config, config.task(g))
    finally:
        close_engines()


# ------------------------------------------------------------------ pool

_WORKER_CONFIG: TournamentConfig | None = None
#: the signals that stop a run (Ctrl-C, and SIGTERM from ``kill`` or a scheduler)
_STOP_SIGNALS = {signal.SIGINT, signal.SIGTERM}
#: how often a worker checks that the process that started it is still there
_PARENT_CHECK_SECONDS = 0.5
#: how long a stopped worker has to close its external programs before it is killed
_WORKER_STOP_SECONDS = 10.0


_STOPPING: Any = None  #: in a worker: the parent's flag, set before it stops the pool


def _pool_init(config: TournamentConfig, stopping: Any) -> None:
    global _WORKER_CONFIG, _STOPPING
    _WORKER_CONFIG = config
    _STOPPING = stopping
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C and stops us
    signal.signal(signal.SIGTERM, _pool_terminated)  # pool.terminate(): stop our programs too
    # born with the stop signals blocked (see run_pool), so that none could end
    # us before the lines above: their handlers are in place now
    _mask_stop_signals(signal.SIG_UNBLOCK)
    multiprocessing.util.Finalize(None, close_engines, exitpriority=10)  # external programs
    threading.Thread(target=_exit_with_parent, args=(os.getppid(),), daemon=True).start()


def _exit_with_parent(parent: int) -> None:
    """End this worker when the parent is gone. A parent stopped while its pool
    was replacing a worker can leave the new one waiting on the task queue's
    lock for ever, holding the parent's stdout open."""
    while os.getppid() == parent:
        time.sleep(_PARENT_CHECK_SECONDS)
    close_engines()
    os._exit(1)


def _mask_stop_signals(how: int) -> set[int | signal.Signals] | None:
    """Block or unblock the stop signals in this thread; the mask before (None
    where threads have no signal masks, as on Windows)."""
    if not hasattr(signal, "pthread_sigmask"):  # pragma: no cover - not POSIX
        return None
    return signal.pthread_sigmask(how, _STOP_SIGNALS)


def _pool_terminated(signum: int, frame: Any) -> None:
    """SIGTERM from the parent's ``pool.terminate()``: stop, with our programs.
    A SIGTERM from outside (``kill`` of the process group) before the parent
    asks is ignored: the parent stops the pool itself, and a worker that died
    first could die holding the task queue's lock, which ``terminate()`` then
    waits for without end."""
    if _STOPPING is not None and not _STOPPING.value:
        return
    close_engines()
    os._exit(1)


def _pool_play(games: list[int]) -> list[dict[str, Any]]:
    assert _WORKER_CONFIG is not None
    return play_batch(_WORKER_CONFIG, games)


def run_pool(config: TournamentConfig, games: Sequence[int], workers: int) -> Iterator[dict[str, Any]]:
    if workers <= 1:
        yield from run_serial(config, games)
        return
    context = multiprocessing.get_context(
        "fork" if "fork" in multiprocessing.get_all_start_methods() else None
    )
    # Workers (and the pool's own threads, which start replacements) are made
    # with the stop signals blocked: a Ctrl-C to the process group in the
    # moment between a fork and the worker's own handlers would otherwise end
    # the worker with a traceback. A signal that comes meanwhile waits and
    # stops the run as soon as the pool is up.
    stopping = context.RawValue("b", 0)
    unblocked = _mask_stop_signals(signal.SIG_BLOCK)
    pool = None
    finished = False
    try:
        try:
            pool = context.Pool(workers, initializer=_pool_init, initargs=(config, stopping))
        finally:
            if unblocked is not None:
                signal.pthread_sigmask(signal.SIG_SETMASK, unblocked)
        for batch in pool.imap_unordered(_pool_play, batches(games, workers)):
            yield from batch
        finished = True
    finally:
        if pool is not None:
            if finished:
                pool.close()
            else:
                stopping.value = 1
                _stop_workers(pool)
                pool.terminate()
            pool.join()


def _stop_workers(pool: Any) -> None:
    """End a stopped run's workers before ``pool.terminate()``, and free the queues' locks a
    worker may have died holding.

    ``terminate()`` first takes the task queue's read lock, which an idle worker holds while it
    waits for a task, and puts a sentinel through the result queue under its write lock. A
    worker that dies holding either (a SIGTERM of the process group delivered late, once the
    stop flag is set, ends it inside that wait) leaves it taken for ever, and ``terminate()``
    waits for it without end. So every worker is killed and reaped first, and then a lock that
    is still taken can only belong to a dead worker: it is released. ``multiprocessing``'s locks
    are semaphores any process may release."""
    workers = list(getattr(pool, "_pool", ()))
    for worker in workers:
        if worker.exitcode is None:
            worker.terminate()  # the stop flag is set: each closes its external programs and exits
    for worker in workers:
        worker.join(_WORKER_STOP_SECONDS)
        if worker.exitcode is None:
            worker.kill()
            worker.join()
    queues = ((getattr(pool, "_inqueue", None), "_rlock"), (getattr(pool, "_outqueue", None), "_wlock"))
    for queue, name in queues:
        lock = getattr(queue, name, None)
        if lock is not None:
            lock.acquire(block=False)  # taken now: by this call, or by a dead worker
            lock.release()


# ------------------------------------------------------------------- ray


def _import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise ArenaError(
            "the Ray backend needs Ray: pip install 'coloretto[ray]' (or pip install ray)"
        ) from None
    return ray


def check_reachable(address: str, seconds: float = 5.0) -> None:
    """Fail fast (Ray itself retries for minutes) when nothing listens at a
    ``host:port`` or ``ray://host:port`` address; ``auto`` and the like pass."""
    target = address.split("://", 1)[-1]
    host, _, port = target.rpartition(":")
    if not host or not port.isdigit():
        return
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=seconds).close()
    except OSError as exc:
        raise ArenaError(f"cannot reach the Ray cluster at {address}: {exc.strerror or exc}") from None


def run_ray(
    config: TournamentConfig,
    games: Sequence[int],
    workers: int | None,
    address: str | None,
) -> Iterator[dict[str, Any]]:
    """Play on a Ray cluster: ``address`` (or ``RAY_ADDRESS``) to join one,
    otherwise a local Ray instance with ``workers`` CPUs. Workers need
    coloretto installed (and any external program's command available)."""
    ray = _import_ray()
    address = address or os.environ.get("RAY_ADDRESS") or None
    started_here = not ray.is_initialized()
    if started_here:
        options: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False}
        if address:
            check_reachable(address)
            options["address"] = address
        elif workers:
            options["num_cpus"] = workers
        try:
            ray.init(**options)
        except Exception as exc:  # ConnectionError and Ray's own errors
            raise ArenaError(f"cannot start or reach Ray ({address or 'local'}): {exc}") from None
    remote = ray.remote(num_cpus=1, max_retries=0)(play_batch)
    cpus = int(ray.cluster_resources().get("CPU", 1))
    config_ref = ray.put(config)
    pending = [remote.remote(config_ref, batch) for batch in batches(games, max(1, cpus))]
    try:
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            for ref in done:
                try:
                    batch_results = ray.get(ref)
                except Exception as exc:
                    raise ArenaError(f"a Ray worker failed: {exc}") from None
                yield from batch_results
    finally:
        for ref in pending:
            ray.cancel(ref, force=True)
        if started_here:
            ray.shutdown()


def run_backend(
    backend: str,
    config: TournamentConfig,
    games: Sequence[int],
    workers: int | None = None,
    address: str | None = None,
) -> Iterator[dict[str, Any]]:
    if backend == "serial":
        return run_serial(config, games)
    if backend == "pool":
        return run_pool(config, games, workers or default_workers())
    if backend == "ray":
        return run_ray(config, games, workers, address)
    raise ArenaError(f"unknown backend {backend!r}: choose one of {', '.join(BACKENDS)}")
