"""The cheap ``/metrics`` (coloretto.web.common.metrics_text) says exactly what prometheus-client
says: the same text as ``generate_latest``, scrape after scrape as values and series change, and
the same merged series as ``MultiProcessCollector.merge`` over files the library's own multiprocess
mode wrote in other processes."""

from __future__ import annotations

import math
import subprocess
import sys
import textwrap
from pathlib import Path

from prometheus_client import CollectorRegistry, Counter, Enum, Gauge, Histogram, Info, Summary
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.exposition import generate_latest
from prometheus_client.multiprocess import MultiProcessCollector

from coloretto.web.common import metrics
from coloretto.web.common.metrics_text import TextRenderer, WorkerFiles

AWKWARD = ["plain", 'a "quoted" one', "back\\slash", "new\nline", "ünïcödé", ""]


class _Stamped:
    """A collector whose sample carries a timestamp (a line the renderer leaves to the library)."""

    def __init__(self) -> None:
        self.value = 1.0

    def collect(self) -> list[GaugeMetricFamily]:
        family = GaugeMetricFamily("stamped_value", "A gauge with a timestamp.", labels=["where"])
        family.add_metric(["here"], self.value, timestamp=1_700_000_000.5)
        return [family]


def test_the_text_is_generate_latests_scrape_after_scrape() -> None:
    registry = CollectorRegistry()
    counter = Counter("things", "Things counted,\nwith a \\ in the help.", ["kind"], registry=registry)
    gauge = Gauge("level", "A level.", ["a", "b"], registry=registry)
    histogram = Histogram(
        "latency_seconds", "Latency.", ["route"], buckets=(0.01, 0.1, 1.0), registry=registry
    )
    summary = Summary("sizes", "Sizes.", registry=registry)
    Info("build", "Build.", registry=registry).info({"version": "1.2.3"})
    state = Enum("phase", "Phase.", states=["one", "two"], registry=registry)
    stamped = _Stamped()
    registry.register(stamped)
    renderer = TextRenderer()
    for round_ in range(4):
        for index, value in enumerate(AWKWARD[: 2 + round_]):
            counter.labels(value).inc(index + 0.5)
            gauge.labels(value, str(round_)).set(-index * 1.25 if round_ % 2 else math.inf)
            histogram.labels(value).observe(0.05 * index)
        summary.observe(round_ * 3)
        state.state("two" if round_ % 2 else "one")
        stamped.value = round_ / 3
        assert renderer.render(registry) == generate_latest(registry), f"scrape {round_ + 1}"


def test_the_servers_own_registry_renders_as_the_library_does() -> None:
    metrics.http_requests[("/api/games/{game_id}", "GET", "200")].inc()
    metrics.action_broadcast["websocket"].observe(0.003)
    renderer = TextRenderer()
    for _ in range(2):
        ours = renderer.render(metrics.REGISTRY).decode()
        theirs = generate_latest(metrics.REGISTRY).decode()
        # the process's CPU time, memory and the collector's counts move between the two calls
        moving = ("process_", "python_gc_")
        assert [line for line in ours.splitlines() if not line.startswith(moving)] == [
            line for line in theirs.splitlines() if not line.startswith(moving)
        ]


WRITER = textwrap.dedent(
    """
    import os, sys
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = sys.argv[1]
    from prometheus_client import Gauge, Summary
    from coloretto.web.common.worker_metrics import WorkerMetrics
    worker = WorkerMetrics.start(sys.argv[1])
    step = int(sys.argv[2])
    worker.warmed(0.3 * step)
    kinds = ["choose", "analyze", "review", "whatif"]
    for index in range(step + 3):
        worker.job(kinds[index % 4], 0.002 * index * step, index % 5 != 4, 100 * index)
    worker.after_jobs()
    modes = ("all", "liveall", "min", "livemin", "max", "livemax", "sum", "livesum")
    for mode in modes + ("mostrecent", "livemostrecent"):
        gauge = Gauge("mode_" + mode, "A gauge.", ["seat"], registry=None, multiprocess_mode=mode)
        gauge.labels("a").set(step * 2.5 - 4)
        gauge.labels("b " + str(step)).set(step)
    Summary("a_summary", "A summary.", registry=None).observe(step)
    """
)


def _write(directory: Path, step: int) -> None:
    subprocess.run([sys.executable, "-c", WRITER, str(directory), str(step)], check=True, timeout=120)


def _series(families: object) -> dict[tuple[str, str, str, frozenset[tuple[str, str]]], float]:
    found: dict[tuple[str, str, str, frozenset[tuple[str, str]]], float] = {}
    for family in families:  # type: ignore[attr-defined]
        for sample in family.samples:
            found[(family.name, family.type, sample.name, frozenset(sample.labels.items()))] = sample.value
    return found


def test_the_worker_files_merge_as_the_library_merges_them(tmp_path: Path) -> None:
    files = WorkerFiles()
    for step in (1, 2, 3):
        _write(tmp_path, step)  # a new process each time: files of three workers
        paths = sorted(str(path) for path in tmp_path.glob("*.db"))
        ours = _series(files.merge(paths))
        theirs = _series(MultiProcessCollector.merge(paths, accumulate=True))
        assert ours == theirs, f"after worker {step}"
        assert any(name == "coloretto_worker_job_duration_seconds_bucket" for _, _, name, _ in ours)
    # a worker's live gauges go when it is gone; what is left still merges the same
    pid = sorted(tmp_path.glob("gauge_liveall_*.db"))[0].name.split("_")[2][:-3]
    from prometheus_client import multiprocess

    multiprocess.mark_process_dead(int(pid), str(tmp_path))
    paths = sorted(str(path) for path in tmp_path.glob("*.db"))
    assert _series(files.merge(paths)) == _series(MultiProcessCollector.merge(paths, accumulate=True))


def test_the_process_metrics_are_the_librarys_with_the_open_files_counted() -> None:
    import os
    import socket

    from prometheus_client import ProcessCollector

    ours_collector = next(c for c in metrics.REGISTRY._collector_to_names if isinstance(c, ProcessCollector))
    library = ProcessCollector(registry=None)

    def read(collector: object) -> dict[str, tuple[str, str, float]]:
        return {
            family.name: (family.type, family.documentation, family.samples[0].value)
            for family in collector.collect()  # type: ignore[attr-defined]
        }

    before = read(ours_collector)
    sockets = [socket.socket() for _ in range(40)]
    try:
        during = read(ours_collector)
        theirs = read(library)
        listed = len(os.listdir("/proc/self/fd")) - 1  # less the listing's own
    finally:
        for each in sockets:
            each.close()
    assert {name: kind[:2] for name, kind in during.items()} == {
        name: kind[:2] for name, kind in theirs.items()
    }
    # the size of /proc/self/fd where the kernel gives it; the library's listing (which counts its
    # own descriptor) on an older one
    assert listed <= during["process_open_fds"][2] <= listed + 1
    assert during["process_open_fds"][2] - before["process_open_fds"][2] == 40
    assert during["process_max_fds"][2] == theirs["process_max_fds"][2]
    assert (
        abs(during["process_resident_memory_bytes"][2] - theirs["process_resident_memory_bytes"][2])
        < 64 << 20
    )
