"""A stopped pool run ends even when a worker died holding one of the pool's queue locks (a
SIGTERM of the process group that reached a worker late, while it waited for a task): the
stop used to wait on that lock for ever (seen once as a `coloretto tune` that never exited)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

SCRIPT = textwrap.dedent(
    """
    import multiprocessing, os, signal, time
    from coloretto.arena.backends import run_pool
    from coloretto.arena.config import TournamentConfig
    from coloretto.rules import Rules

    config = TournamentConfig(Rules(players=2), ("random", "random"), games=4, seed=1)
    stream = run_pool(config, list(range(4)), workers=2)
    next(stream)  # the pool is up and has played
    workers = multiprocessing.active_children()
    assert len(workers) == 2, workers
    # four games are two batches, played: both workers idle soon, one waiting for a task with
    # the task queue's read lock (were one still busy, its death would leave no lock taken)
    time.sleep(0.5)
    for worker in workers:
        os.kill(worker.pid, signal.SIGKILL)
    for worker in workers:
        worker.join()
    stream.close()  # the stop: it must not wait for a lock a dead worker holds
    print("stopped")
    """
)


@pytest.mark.slow
def test_a_pool_whose_workers_died_holding_its_locks_still_stops() -> None:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "stopped"
