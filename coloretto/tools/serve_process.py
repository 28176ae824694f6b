"""``coloretto serve`` in a process of its own: the one way the load test and the test suite run a
real server.

A :class:`ServeProcess` runs ``python -m coloretto serve`` on a directory of its own (its SQLite
database, unless a ``database_url`` is given, and its log ``server.log``), on a free port (the
server binds port 0 and prints its address: no race for a port) or on a port given (a restart on
the same address). It runs in a session of its own, so that stopping it also ends the bot workers
it started; ``kill()`` is a SIGKILL of the server alone, as a machine that dies. Its CPU time and
memory are read from ``/proc``.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

#: the longest a server may take to start (its bot workers import everything, and a fresh clone has
#: no bytecode yet): a hang guard, not a speed requirement
START_TIMEOUT = 180.0


class ServeError(RuntimeError):
    """The server did not start, or did not get ready: the message says why (its last words)."""


@dataclass(frozen=True)
class ServerUsage:
    """CPU seconds (user + system) and memory of a server and the processes it started."""

    cpu_seconds: float
    peak_rss_bytes: int
    rss_bytes: int
    processes: int


class ServeProcess:
    """One ``coloretto serve`` (see the module's docstring)."""

    def __init__(
        self,
        directory: Path,
        *,
        database_url: str | None = None,
        redis_url: str | None = None,
        bot_delay: float = 0.05,
        port: int = 0,
        args: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        log_level: str = "info",
    ) -> None:
        self.directory = Path(directory)
        self.database_url = database_url
        self.redis_url = redis_url
        self.bot_delay = bot_delay
        self.port = port
        self.args = tuple(args)
        self.env = dict(env or {})
        self.log_level = log_level
        self.log_path = self.directory / "server.log"
        self.proc: subprocess.Popen[bytes] | None = None
        self.process_id = ""  #: the bus's name of the process, as /api/health says
        self.killed = False
        self.final_usage: ServerUsage | None = None  #: read just before it was killed
        self.left_behind: list[tuple[int, str]] = []  #: (pid, start time) of its children at a kill
        self._log_from = 0  #: where this run's lines begin in the log (it is kept across restarts)

    # ------------------------------------------------------------------ where

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def ws_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}"

    @property
    def data_url(self) -> str:
        """The server's database: the one given, else the SQLite file in its directory."""
        if self.database_url is not None:
            return self.database_url
        from coloretto.web.storage.db import sqlite_url

        return sqlite_url(self.directory)

    @property
    def pid(self) -> int:
        assert self.proc is not None, "the server was not launched"
        return self.proc.pid

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    # ------------------------------------------------------------------ start

    def launch(self) -> ServeProcess:
        """Start the process; :meth:`wait_ready` (or :meth:`start`) waits until it serves."""
        self.directory.mkdir(parents=True, exist_ok=True)
        where = (
            ["--database-url", self.database_url]
            if self.database_url
            else ["--data-dir", str(self.directory)]
        )
        command = [
            sys.executable, "-m", "coloretto", "serve", "--host", "127.0.0.1", "--port", str(self.port),
            *where, *(["--redis-url", self.redis_url] if self.redis_url else []),
            "--bot-delay", str(self.bot_delay), "--log-level", self.log_level, *self.args,
        ]  # fmt: skip
        env = {**os.environ, "PYTHONUNBUFFERED": "1", **self.env}
        self._log_from = self.log_path.stat().st_size if self.log_path.exists() else 0
        self.killed = False
        # the output goes to a file, never a pipe: a pipe nobody reads would stop the server once full
        with self.log_path.open("ab") as log:
            self.proc = subprocess.Popen(
                command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env,
                start_new_session=True,
            )  # fmt: skip
        return self

    def wait_ready(self, timeout: float = START_TIMEOUT, workers: bool = True) -> ServeProcess:
        """Wait until it answers ``/api/health`` (with every bot worker warm, unless ``workers`` is
        False); a server that exits or does not get there is a :class:`ServeError`."""
        import httpx

        assert self.proc is not None, "launch() first"
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise ServeError(
                    f"the server exited at start: {self.last_error_line()}\n{self.output_tail()}"
                )
            if not self.port:
                self.port = self._printed_port() or 0
            if self.port:
                with contextlib.suppress(httpx.HTTPError, ValueError):
                    health = self.health()
                    ready = health.get("workers") or {}
                    if not workers or int(ready.get("ready", 0)) >= int(ready.get("processes", 0)):
                        self.process_id = str(health.get("process", ""))
                        return self
            time.sleep(0.05)  # a starting server has no event to wait on
        self.stop()
        raise ServeError(f"the server was not ready within {timeout:.0f} s:\n{self.output_tail()}")

    async def wait_ready_async(self, timeout: float = START_TIMEOUT, workers: bool = True) -> ServeProcess:
        """:meth:`wait_ready` for a caller on an event loop (it waits in a thread)."""
        return await asyncio.to_thread(self.wait_ready, timeout, workers)

    def start(self, timeout: float = START_TIMEOUT, workers: bool = True) -> ServeProcess:
        return self.launch().wait_ready(timeout, workers)

    def _printed_port(self) -> int | None:
        """The port the server printed (it binds port 0 and says where it listens)."""
        for word in self.output.split():
            if word.startswith("http://"):
                with contextlib.suppress(ValueError):
                    return urlsplit(word).port
        return None

    # ------------------------------------------------------------------ asking

    def health(self) -> dict[str, Any]:
        import httpx

        response = httpx.get(f"{self.url}/api/health", timeout=5.0)
        response.raise_for_status()
        data: dict[str, Any] = response.json()
        return data

    @property
    def output(self) -> str:
        """What this run of the server has written (its log since the last launch)."""
        try:
            with self.log_path.open("rb") as log:
                log.seek(self._log_from)
                return log.read().decode(errors="replace")
        except OSError:
            return ""

    def output_tail(self, lines: int = 40) -> str:
        return "\n".join(self.output.splitlines()[-lines:])

    def last_error_line(self) -> str:
        lines = [line for line in self.output.splitlines() if line.strip()]
        if lines:
            return lines[-1].strip()
        return f"exit status {self.proc.returncode if self.proc else '?'}"

    def usage(self) -> ServerUsage:
        """CPU seconds (user + system), peak and current RSS of the server and the processes it
        started; for a killed server, what was read just before the kill."""
        if self.killed:
            assert self.final_usage is not None
            return self.final_usage
        tick = os.sysconf("SC_CLK_TCK")
        cpu = 0.0
        peak = rss = counted = 0
        for pid in [self.pid, *descendants(self.pid)]:
            stat, status = _read(f"/proc/{pid}/stat"), _read(f"/proc/{pid}/status")
            if stat is None or status is None:
                continue  # it ended meanwhile
            fields = stat.rsplit(")", 1)[1].split()
            # utime, stime, and the waited-for children's cutime, cstime (fields 14-17 of proc(5))
            cpu += sum(int(v) for v in fields[11:15]) / tick
            for line in status.splitlines():
                if line.startswith("VmHWM:"):
                    peak += int(line.split()[1]) * 1024
                elif line.startswith("VmRSS:"):
                    rss += int(line.split()[1]) * 1024
            counted += 1
        return ServerUsage(cpu, peak, rss, counted)

    # ------------------------------------------------------------------ stop

    def kill(self) -> None:
        """SIGKILL, as a machine that dies would: no shutdown code runs. Its worker processes are
        left to notice by themselves; :meth:`survivors` tells which did not."""
        self.final_usage = self.usage()
        self.left_behind = [(pid, start) for pid in descendants(self.pid) if (start := _start_time(pid))]
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.killed = True
        self.proc.wait(timeout=10)

    def survivors(self) -> list[int]:
        """A killed server's children still running now (not reaped zombies, not reused ids)."""
        return [pid for pid, start in self.left_behind if _start_time(pid) == start and not _zombie(pid)]

    def terminate(self) -> None:
        """SIGTERM, as systemd stops a service (it does not wait)."""
        if self.alive:
            assert self.proc is not None
            self.proc.send_signal(signal.SIGTERM)

    def wait_exit(self, timeout: float) -> int:
        """Wait for the process to end (a fault it was told to die of, a SIGTERM): its status."""
        assert self.proc is not None
        return self.proc.wait(timeout=timeout)

    def stop(self) -> None:
        """Stop the server (SIGTERM, then SIGKILL if it lingers) and whatever of its session is left."""
        if self.proc is None:
            return
        proc, self.proc = self.proc, None
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)  # a worker of a killed server, not yet gone
        self.proc = None


def _read(path: str) -> str | None:
    try:
        return Path(path).read_text()
    except OSError:
        return None


def _start_time(pid: int) -> str | None:
    stat = _read(f"/proc/{pid}/stat")
    return None if stat is None else stat.rsplit(")", 1)[1].split()[19]


def _zombie(pid: int) -> bool:
    stat = _read(f"/proc/{pid}/stat")
    return stat is None or stat.rsplit(")", 1)[1].split()[0] == "Z"


def descendants(root: int) -> list[int]:
    """Every process started by ``root``, its children's children too (read from /proc)."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            stat = _read(f"/proc/{entry}/stat")
            if stat is not None:
                parents[int(entry)] = int(stat.rsplit(")", 1)[1].split()[1])
    found: list[int] = []
    frontier = [root]
    while frontier:
        parent = frontier.pop()
        children = [pid for pid, ppid in parents.items() if ppid == parent]
        found.extend(children)
        frontier.extend(children)
    return found
