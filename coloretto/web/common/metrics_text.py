"""``/metrics`` made cheaply: a scrape runs on the server's event loop, so what it costs every
player waits for.

Two things repeat from one scrape to the next and cost most of a scrape when done anew each time
(prometheus-client does both afresh: about 5 ms of the loop for some 330 series):

- **The text.** Every series' name and labels are escaped and joined again, though only its value
  changed. :class:`TextRenderer` asks prometheus-client's own ``generate_latest`` once for each
  metric's header lines and each series' name-and-labels (so the escaping is the library's, byte
  for byte), keeps them, and then writes only the values. A family it cannot write that way (a
  sample with a timestamp, OpenMetrics-only samples) is written by ``generate_latest`` itself.
- **The bot workers' files** (prometheus-client's multiprocess mode). The library decodes and
  parses every key of every file at every scrape; a key never moves once written (the files only
  grow), so :class:`WorkerFiles` parses each once and then reads the values only, and adds them up
  as the library's ``MultiProcessCollector`` does.

``tests/test_metrics_text.py`` holds both to the library: the same text as ``generate_latest``
and the same series and values as ``MultiProcessCollector.merge``.
"""

from __future__ import annotations

import json
import os
import struct
from collections import defaultdict
from collections.abc import Iterable, Iterator
from typing import Any

from prometheus_client.exposition import generate_latest
from prometheus_client.metrics_core import Metric
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.samples import Sample
from prometheus_client.utils import floatToGoString

#: past this many kept lines (labels that keep taking new values), the kept text is made anew
MAX_KEPT = 20_000
#: samples that only OpenMetrics has: generate_latest writes them as families of their own
_OPENMETRICS_SUFFIXES = ("_created", "_gsum", "_gcount")


class _Families:
    """Metric families as a collector (what ``generate_latest`` reads)."""

    def __init__(self, families: Iterable[Metric]) -> None:
        self.families = list(families)

    def collect(self) -> Iterable[Metric]:
        return self.families


class TextRenderer:
    """Prometheus's text format 0.0.4, the same bytes as ``generate_latest``, with each family's
    header and each series' name and labels made once and kept."""

    def __init__(self) -> None:
        self._headers: dict[tuple[str, str, str], str] = {}
        self._prefixes: dict[tuple[str, str, tuple[tuple[str, str], ...]], str] = {}

    def render(self, collector: Any) -> bytes:
        """The text of every family ``collector`` (a registry) gives."""
        if len(self._prefixes) + len(self._headers) > MAX_KEPT:
            self._headers.clear()
            self._prefixes.clear()
        output: list[str] = []
        for family in collector.collect():
            if not self._plain(family):
                output.append(generate_latest(_Families([family])).decode("utf-8"))
                continue
            output.append(self._header(family))
            prefixes = self._prefixes
            for sample in family.samples:
                key = (family.name, sample.name, tuple(sample.labels.items()))
                prefix = prefixes.get(key)
                if prefix is None:
                    prefix = prefixes[key] = self._prefix(family, sample)
                output.append(f"{prefix}{floatToGoString(sample.value)}\n")
        return "".join(output).encode("utf-8")

    @staticmethod
    def _plain(family: Metric) -> bool:
        """Whether every sample is a plain line: no timestamp, none of OpenMetrics' own."""
        for sample in family.samples:
            if sample.timestamp is not None:
                return False
            if (
                sample.name.startswith(family.name)
                and sample.name[len(family.name) :] in _OPENMETRICS_SUFFIXES
            ):
                return False
        return True

    def _header(self, family: Metric) -> str:
        key = (family.name, family.type, family.documentation)
        header = self._headers.get(key)
        if header is None:
            empty = Metric(family.name, family.documentation, family.type)
            header = self._headers[key] = generate_latest(_Families([empty])).decode("utf-8")
        return header

    @staticmethod
    def _prefix(family: Metric, sample: Sample) -> str:
        """The series' line up to its value: the library's line for it, less the value."""
        one = Metric(family.name, family.documentation, family.type)
        one.samples = [Sample(sample.name, sample.labels, 0.0)]
        text = generate_latest(_Families([one])).decode("utf-8")
        line = text.rstrip("\n").rsplit("\n", 1)[-1]
        return line[: line.rindex(" ") + 1]


_unpack_integer = struct.Struct("i").unpack_from
_unpack_two_doubles = struct.Struct("dd").unpack_from

#: a gauge's multiprocess modes whose values add up, or take the least, the most, the latest
_SUMMED = {"sum", "livesum"}
_LEAST = {"min", "livemin"}
_MOST = {"max", "livemax"}
_LATEST = {"mostrecent", "livemostrecent"}
_PER_PROCESS = {"all", "liveall"}
_GAUGE_MODES = _SUMMED | _LEAST | _MOST | _LATEST | _PER_PROCESS


_Key = tuple[str, str, tuple[tuple[str, str], ...], str, float | None]


class _Unreadable(Exception):
    """A file this reader does not know how to add up: the library reads them all instead."""


class WorkerFiles:
    """The bot workers' metric files, merged as ``MultiProcessCollector.merge(files,
    accumulate=True)`` merges them, each key parsed once."""

    def __init__(self) -> None:
        #: (file, position of the entry) -> (the key's length, what it says: the family, the sample's
        #: name, its labels, the family's help, and a histogram bucket's bound, kept out of its labels)
        self._keys: dict[tuple[str, int], tuple[int, _Key]] = {}

    def merge(self, files: list[str]) -> list[Metric]:
        try:
            return self._merge(files)
        except _Unreadable:
            return list(MultiProcessCollector.merge(files, accumulate=True))

    def _merge(self, files: list[str]) -> list[Metric]:
        if len(self._keys) > MAX_KEPT:
            self._keys.clear()
        families: dict[str, Metric] = {}
        # family -> labels -> (sample name, labels) -> value, in the order first seen
        values: dict[str, dict[Any, dict[Any, float]]] = {}
        latest: dict[str, dict[Any, float]] = {}  # mostrecent gauges: the value's timestamp
        buckets: dict[str, dict[Any, dict[float, float]]] = {}
        for path in files:
            parts = os.path.basename(path).split("_")
            kind = parts[0]
            mode = parts[1] if kind == "gauge" else ""
            if kind not in ("counter", "gauge", "histogram", "summary"):
                raise _Unreadable(path)
            if kind == "gauge" and mode not in _GAUGE_MODES:
                raise _Unreadable(path)
            pid = parts[2][:-3] if kind == "gauge" else ""
            try:
                entries = list(self._entries(path, histogram=kind == "histogram"))
            except FileNotFoundError:
                if kind == "gauge" and mode.startswith("live"):
                    continue  # a worker gone between the listing and now
                raise
            for (metric_name, name, labels, documentation, bound), value, timestamp in entries:
                family = families.get(metric_name)
                if family is None:
                    family = families[metric_name] = Metric(metric_name, documentation, kind)
                    values[metric_name] = {}
                    buckets[metric_name] = defaultdict(lambda: defaultdict(float))
                    latest[metric_name] = {}
                by_labels = values[metric_name]
                if kind == "gauge":
                    if mode in _PER_PROCESS:
                        labels = (*labels, ("pid", pid))
                    series = by_labels.setdefault(labels, {})
                    key = (name, labels)
                    if mode in _SUMMED:
                        series[key] = series.get(key, 0.0) + value
                    elif mode in _LEAST:
                        series[key] = min(series.get(key, value), value)
                    elif mode in _MOST:
                        series[key] = max(series.get(key, value), value)
                    elif mode in _LATEST:
                        seen = latest[metric_name].get(key, 0.0)
                        if seen < float(timestamp or 0):
                            series[key] = value
                            latest[metric_name][key] = float(timestamp or 0)
                    else:
                        series[key] = value
                elif bound is not None:
                    buckets[metric_name][labels][bound] += value
                else:
                    series = by_labels.setdefault(labels, {})
                    key = (name, labels)
                    series[key] = series.get(key, 0.0) + value
        merged: list[Metric] = []
        for metric_name, family in families.items():
            by_labels = values[metric_name]
            for labels, by_bound in buckets[metric_name].items():
                series = by_labels.setdefault(labels, {})
                total = 0.0
                for bound, value in sorted(by_bound.items()):
                    total += value
                    series[(metric_name + "_bucket", (*labels, ("le", floatToGoString(bound))))] = total
                series[(metric_name + "_count", labels)] = total
            family.samples = [
                Sample(name, dict(labels), value)
                for series in by_labels.values()
                for (name, labels), value in series.items()
            ]
            merged.append(family)
        return merged

    def _entries(self, path: str, histogram: bool) -> Iterator[tuple[_Key, float, float]]:
        """(the parsed key, value, timestamp) of each entry of one file (the layout of
        prometheus-client's ``MmapedDict``: the length used, then length-prefixed keys padded to 8
        bytes, each followed by two doubles)."""
        with open(path, "rb") as file:
            data = file.read(4096)
            used = _unpack_integer(data, 0)[0]
            if used > len(data):
                data += file.read(used - len(data))
        keys = self._keys
        position = 8
        while position < used:
            length = _unpack_integer(data, position)[0]
            if length + position > used:
                raise _Unreadable(path)
            known = keys.get((path, position))
            if known is None or known[0] != length:
                encoded = data[position + 4 : position + 4 + length]
                metric_name, name, labels, documentation = json.loads(encoded.decode("utf-8"))
                bound = None
                if histogram and name.endswith("_bucket") and "le" in labels:  # its bound, apart
                    bound = float(labels.pop("le"))
                key = (metric_name, name, tuple(sorted(labels.items())), documentation, bound)
                known = keys[(path, position)] = (length, key)
            position += 4 + length + (8 - (length + 4) % 8)
            value, timestamp = _unpack_two_doubles(data, position)
            yield known[1], value, timestamp
            position += 16
