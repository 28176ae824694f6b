"""What the server counts and measures, for Prometheus (``GET /metrics``; docs/operator/monitoring.md
lists every metric and what it means).

The metrics of the server's own process are defined here, in a registry of their own
(:data:`REGISTRY`), and updated by the layers above (the runtime, the API): an update is a dict
lookup and an increment, a few hundred nanoseconds, with no await and no lock of ours on the move
path. Every label is low-cardinality: a route template (never a raw path), a message type, an error
code, a job kind; never a game id or a client address. The label children the hot paths use are
made once and kept (:class:`Children`).

Gauges of what the runtime holds (games in memory, jobs queued, leases held) are read when
``/metrics`` is asked: each :class:`Source` registered with :func:`watch` says its values. The bot
workers, separate processes, record their own metrics in files (prometheus-client's multiprocess
mode, :mod:`coloretto.web.common.worker_metrics`); their directories, registered with
:func:`add_worker_directory`, are read at the same time.
"""

from __future__ import annotations

import glob
import os
import threading
import weakref
from collections.abc import Iterable, Iterator
from typing import Any, Protocol

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    disable_created_metrics,
)
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.exposition import choose_encoder, generate_latest
from prometheus_client.gc_collector import GCCollector
from prometheus_client.platform_collector import PlatformCollector
from prometheus_client.process_collector import ProcessCollector
from prometheus_client.registry import Collector

from coloretto import __version__
from coloretto.web.common.metrics_text import TextRenderer, WorkerFiles
from coloretto.web.common.worker_metrics import JOB_KINDS

# the _created series would double what is sent and nobody graphs them
disable_created_metrics()

#: the server process's metrics (the workers' are read from their files into the same answer)
REGISTRY = CollectorRegistry(auto_describe=True)


class _ProcessCollector(ProcessCollector):
    """prometheus-client's process metrics, with the open files counted from the size of
    ``/proc/self/fd`` where the kernel gives it (Linux 6.2 and later) instead of by listing the
    directory, which took a millisecond of every scrape with 500 games' sockets open. Elsewhere
    (an older kernel: the size reads 0; no /proc), the library's own collect."""

    def collect(self) -> Iterable[Metric]:
        try:
            open_files = os.stat("/proc/self/fd").st_size
            with open("/proc/self/stat", "rb") as stat:
                parts = stat.read().split(b")")[-1].split()
            with open("/proc/self/limits", "rb") as limits:
                most_files = next(
                    float(line.split()[3]) for line in limits if line.startswith(b"Max open file")
                )
        except (OSError, StopIteration, IndexError, ValueError):
            open_files = 0
        if open_files <= 0 or not self._btime:
            return super().collect()
        ticks = self._ticks
        return [
            GaugeMetricFamily(
                "process_virtual_memory_bytes", "Virtual memory size in bytes.", value=float(parts[20])
            ),
            GaugeMetricFamily(
                "process_resident_memory_bytes",
                "Resident memory size in bytes.",
                value=float(parts[21]) * self._pagesize,
            ),
            GaugeMetricFamily(
                "process_start_time_seconds",
                "Start time of the process since unix epoch in seconds.",
                value=float(parts[19]) / ticks + self._btime,
            ),
            CounterMetricFamily(
                "process_cpu_seconds_total",
                "Total user and system CPU time spent in seconds.",
                value=(float(parts[11]) + float(parts[12])) / ticks,
            ),
            GaugeMetricFamily(
                "process_open_fds", "Number of open file descriptors.", value=float(open_files)
            ),
            GaugeMetricFamily(
                "process_max_fds", "Maximum number of open file descriptors.", value=most_files
            ),
        ]


_ProcessCollector(registry=REGISTRY)
PlatformCollector(registry=REGISTRY)
GCCollector(registry=REGISTRY)

#: a label that would take more values than this is given ``other`` instead (a guard: every label
#: here has a fixed, small set of values)
MAX_LABEL_VALUES = 200
OTHER = "other"

#: seconds: from a millisecond to ten seconds (an action's time to its broadcast)
LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
#: seconds, fewer: series that are many (one per route and method) cost /metrics lines and time
REQUEST_BUCKETS = (0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0)
#: the writer's transactions: from a fraction of a millisecond (SQLite in memory) to seconds
COMMIT_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)
#: jobs in one transaction (the writer takes at most 500)
BATCH_BUCKETS = (1, 2, 5, 10, 20, 50, 100, 200, 500)
#: HTTP methods counted by name; any other is ``other``
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
#: the route of a request that matched none (an unknown path: its 404)
UNMATCHED = "unmatched"


class Children(dict[Any, Any]):
    """A metric's children by label values, each made on first use and kept: after the first, an
    update is a dict lookup. A key is one label's value or a tuple of them; past ``limit`` keys
    (:data:`MAX_LABEL_VALUES`), a new one is counted as ``other``."""

    def __init__(self, metric: Any, limit: int = MAX_LABEL_VALUES) -> None:
        super().__init__()
        self.metric = metric
        self.limit = limit
        self._lock = threading.Lock()

    def __missing__(self, key: Any) -> Any:
        values = key if isinstance(key, tuple) else (key,)
        with self._lock:
            if key in self:
                return dict.__getitem__(self, key)
            if len(self) >= self.limit:
                return self.metric.labels(*(OTHER for _ in values))
            child = self.metric.labels(*values)
            self[key] = child
            return child


def _children(metric: Any, *keys: Any) -> Children:
    """The children of ``metric``, those of ``keys`` made now (their series start at 0)."""
    children = Children(metric)
    for key in keys:
        children[key]  # made by __missing__
    return children


def _counter(name: str, documentation: str, labels: tuple[str, ...] = ()) -> Counter:
    return Counter(name, documentation, labels, registry=REGISTRY)


def _histogram(
    name: str, documentation: str, buckets: tuple[float, ...], labels: tuple[str, ...] = ()
) -> Histogram:
    return Histogram(name, documentation, labels, buckets=buckets, registry=REGISTRY)


# ------------------------------------------------------------------ the server

BUILD_INFO = Gauge("coloretto_build_info", "The server's version (always 1).", ["version"], registry=REGISTRY)
BUILD_INFO.labels(__version__).set(1)

#: the WebSocket messages a client may send, and what a message that is none of them counts as
CLIENT_TYPES = ("hello", "act", "hint", "reclaim", "resign", "chat", "ping")
#: not looked at (over the rate), not JSON text or not an object, an object of no known type
UNREAD, INVALID, UNKNOWN = "unread", "invalid", "unknown"
#: what the server sends on a WebSocket
SERVER_TYPES = (
    "state",
    "welcome",
    "error",
    "hint",
    "thinking",
    "review",
    "chat",
    "chat_removed",
    "rematch",
    "pong",
)
#: who moved
MOVERS = ("person", "bot")
#: how a person's action came
VIA = ("websocket", "http")

HTTP_REQUESTS = _counter(
    "coloretto_http_requests_total",
    "HTTP requests answered, by route template, method and status code.",
    ("route", "method", "status"),
)
HTTP_DURATION = _histogram(
    "coloretto_http_request_duration_seconds",
    "Time from an HTTP request's arrival to the end of its answer, by route template and method.",
    REQUEST_BUCKETS,
    ("route", "method"),
)
#: routes x methods x status codes: bounded, but larger than one label's values
http_requests = Children(HTTP_REQUESTS, limit=5000)
http_duration = Children(HTTP_DURATION, limit=1000)

WEBSOCKETS_OPEN = Gauge("coloretto_websocket_connections", "Game WebSockets open now.", registry=REGISTRY)
WEBSOCKET_RECEIVED = _counter(
    "coloretto_websocket_messages_received_total",
    "WebSocket messages received, by type (unread: refused for the rate or size before being read; "
    "invalid: not a JSON object; unknown: an object of no known type).",
    ("type",),
)
WEBSOCKET_SENT = _counter(
    "coloretto_websocket_messages_sent_total", "WebSocket messages sent, by type.", ("type",)
)
WEBSOCKET_REFUSED = _counter(
    "coloretto_websocket_messages_refused_total",
    "WebSocket messages answered with an error instead of being done, by error code.",
    ("error",),
)
websocket_received = _children(WEBSOCKET_RECEIVED, *CLIENT_TYPES, UNREAD, INVALID, UNKNOWN)
websocket_sent = _children(WEBSOCKET_SENT, *SERVER_TYPES)
websocket_refused = _children(WEBSOCKET_REFUSED, "rate_limited")

ACTION_BROADCAST = _histogram(
    "coloretto_action_broadcast_seconds",
    "Time from receiving a person's action to sending the state that holds it: on the acting "
    "person's own WebSocket (via=websocket), or as the answer to the HTTP action (via=http).",
    LATENCY_BUCKETS,
    ("via",),
)
action_broadcast = _children(ACTION_BROADCAST, *VIA)

MOVES_COMMITTED = _counter(
    "coloretto_moves_committed_total",
    "Moves stored by this process, by who moved (a bot: a bot's seat or a person's taken over).",
    ("by",),
)
moves_committed = _children(MOVES_COMMITTED, *MOVERS)

WRITER_BATCH = _histogram(
    "coloretto_writer_batch_size", "Writes in each transaction of the group-commit writer.", BATCH_BUCKETS
)
WRITER_COMMIT = _histogram(
    "coloretto_writer_commit_duration_seconds",
    "Time of each transaction of the group-commit writer: its statements and its COMMIT (the fsync).",
    COMMIT_BUCKETS,
)
WRITER_FAILED = _counter(
    "coloretto_writer_failed_batches_total",
    "Writer transactions rolled back and run again write by write (one write of them failed).",
)

WORKER_WAIT = _histogram(
    "coloretto_worker_job_wait_seconds",
    "Time a bot worker job waited in the queue for a worker, by kind.",
    REQUEST_BUCKETS,
    ("kind",),
)
worker_wait = _children(WORKER_WAIT, *JOB_KINDS.values())
WORKER_RESTARTS = _counter(
    "coloretto_worker_restarts_total",
    "Bot worker processes replaced, by why (died: exited or was killed; hung: over --worker-timeout "
    "and killed; failed_start: could not be started or died while warming up).",
    ("reason",),
)
worker_restarts = _children(WORKER_RESTARTS, "died", "hung", "failed_start")

LEASES_GAINED = _counter(
    "coloretto_leases_gained_total", "Game leases this process took (several processes: --redis-url)."
)
LEASES_LOST = _counter(
    "coloretto_leases_lost_total",
    "Game leases this process lost: not renewed in time (Redis unreachable, the process stalled), or "
    "found held by another process.",
)
LEASES_RELEASED = _counter(
    "coloretto_leases_released_total", "Game leases this process gave up (a game over, or left to another)."
)

BUS_GAPS = _counter(
    "coloretto_bus_gaps_total",
    "Move events from other processes that came after a gap in their game's move numbers (an event "
    "lost on the way: Redis pub/sub delivers at most once): the game was read again at once.",
)

ERRORS = _counter(
    "coloretto_errors_total",
    "Errors answered to clients (HTTP error answers and WebSocket error messages), by error code.",
    ("code",),
)
errors = Children(ERRORS)

INCIDENTS = _counter(
    "coloretto_incidents_total",
    "Faults of the live path, each logged with its game and move, by step (/api/health counts them too).",
    ("step",),
)
incidents = Children(INCIDENTS)


# ------------------------------------------------------------------ read when asked


#: gauges whose values the sources give when /metrics is asked: name -> (help, label names)
GAUGES: dict[str, tuple[str, tuple[str, ...]]] = {
    "coloretto_games_in_memory": ("Games this process holds in memory, by status.", ("status",)),
    "coloretto_worker_processes": ("Bot worker processes this process keeps.", ()),
    "coloretto_worker_processes_ready": ("Of them, started, warmed up and serving now.", ()),
    "coloretto_worker_queue_depth": ("Bot worker jobs waiting for a worker, by kind.", ("kind",)),
    "coloretto_worker_jobs_running": ("Bot worker jobs a worker runs now.", ()),
    "coloretto_writer_queue_depth": ("Writes queued for the group-commit writer.", ()),
    "coloretto_leases_held": ("Game leases this process holds (several processes: --redis-url).", ()),
}

Sample = tuple[str, tuple[str, ...], float]


class Source(Protocol):
    """Something whose gauges are read when ``/metrics`` is asked."""

    def metric_samples(self) -> Iterable[Sample]:
        """(a name of :data:`GAUGES`, its label values, the value) for each of its gauges."""
        ...


_sources: weakref.WeakSet[Any] = weakref.WeakSet()
_worker_directories: set[str] = set()
_lock = threading.Lock()


def watch(source: Source) -> None:
    """Read ``source``'s gauges at every ``/metrics`` until :func:`unwatch` (kept weakly)."""
    with _lock:
        _sources.add(source)


def unwatch(source: Source) -> None:
    with _lock:
        _sources.discard(source)


def add_worker_directory(path: str) -> None:
    """Read the metric files of the bot workers in ``path`` at every ``/metrics``."""
    with _lock:
        _worker_directories.add(path)


def remove_worker_directory(path: str) -> None:
    with _lock:
        _worker_directories.discard(path)


class _SourcesCollector(Collector):
    """The gauges of :data:`GAUGES`, summed over the sources (one process has one of each)."""

    def collect(self) -> Iterator[Metric]:
        with _lock:
            sources = list(_sources)
        values: dict[str, dict[tuple[str, ...], float]] = {name: {} for name in GAUGES}
        for source in sources:
            for name, labels, value in source.metric_samples():
                found = values[name]
                found[labels] = found.get(labels, 0.0) + value
        for name, (documentation, label_names) in GAUGES.items():
            family = GaugeMetricFamily(name, documentation, labels=label_names)
            for labels, value in sorted(values[name].items()):
                family.add_metric(labels, value)
            if not label_names and not values[name]:
                family.add_metric((), 0.0)
            yield family

    def describe(self) -> Iterator[Metric]:
        for name, (documentation, label_names) in GAUGES.items():
            yield GaugeMetricFamily(name, documentation, labels=label_names)


class _WorkerFilesCollector(Collector):
    """The bot workers' metrics, merged from their files (prometheus-client's multiprocess mode)."""

    def __init__(self) -> None:
        self.files = WorkerFiles()

    def collect(self) -> Iterator[Metric]:
        with _lock:
            directories = sorted(_worker_directories)
        files = [path for directory in directories for path in glob.glob(os.path.join(directory, "*.db"))]
        if not files:
            return
        try:
            yield from self.files.merge(files)
        except FileNotFoundError:  # a directory removed meanwhile (the pool closed): next time
            return

    def describe(self) -> Iterator[Metric]:
        return iter(())  # what the workers record is known from their files only


REGISTRY.register(_SourcesCollector())
REGISTRY.register(_WorkerFilesCollector())


def exposition(accept: str | None) -> tuple[bytes, str]:
    """Every metric, in the format the ``Accept`` header asks for (Prometheus's text format unless
    it asks for OpenMetrics): the body and its content type."""
    encoder, content_type = choose_encoder(accept or "")
    if encoder is generate_latest:
        return _text.render(REGISTRY), content_type
    return encoder(REGISTRY), content_type


#: the text format's lines as they repeat from one scrape to the next (see metrics_text)
_text = TextRenderer()
