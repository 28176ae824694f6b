"""The servers a load test starts itself: ``coloretto serve --port 0`` in a subprocess on a
temporary data directory (or the database given), their CPU and memory read from ``/proc``."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from coloretto.tools.loadtest import LoadTestError

SERVER_START_TIMEOUT = 120.0


@dataclass
class ServerUsage:
    cpu_seconds: float
    peak_rss_bytes: int
    rss_bytes: int
    processes: int


class StartedServer:
    """``coloretto serve --port 0`` in a subprocess, on a temporary data directory (or the
    database given) and, with ``redis_url``, as one of several processes."""

    def __init__(
        self,
        bot_delay: float,
        message_rate: float,
        extra: list[str],
        database_url: str | None = None,
        redis_url: str | None = None,
    ) -> None:
        self.directory = tempfile.TemporaryDirectory(prefix="coloretto-loadtest-")
        root = Path(self.directory.name)
        self.stdout_path = root / "server.out"
        self.stderr_path = root / "server.err"
        if database_url is None:
            from coloretto.web.storage.db import sqlite_url

            where = ["--data-dir", str(root / "data")]
            self.database_url = sqlite_url(root / "data")
        else:
            where = ["--database-url", database_url]
            self.database_url = database_url
        cluster = ["--redis-url", redis_url] if redis_url else []
        command = [
            sys.executable, "-m", "coloretto", "serve", "--host", "127.0.0.1", "--port", "0",
            *where, *cluster, "--bot-delay", str(bot_delay), "--message-rate", str(message_rate),
            # Every client of the test comes from one address: the limits per address would
            # measure themselves, not the server.
            "--creations-per-minute", "0", "--requests-per-minute", "0", *extra,
        ]  # fmt: skip
        # Output goes to files, not pipes: a pipe nobody reads would block the server once full.
        with self.stdout_path.open("wb") as out, self.stderr_path.open("wb") as err:
            self.process = subprocess.Popen(command, stdout=out, stderr=err, stdin=subprocess.DEVNULL)
        self.url = ""
        self.killed = False
        self.final_usage: ServerUsage | None = None  #: read just before it was killed
        self.left_behind: list[tuple[int, str]] = []  #: (pid, start time) of its children at the kill

    @property
    def pid(self) -> int:
        return self.process.pid

    async def wait_for_address(self) -> str:
        deadline = time.monotonic() + SERVER_START_TIMEOUT
        while time.monotonic() < deadline:
            text = self.stdout_path.read_text(errors="replace")
            for word in text.split():
                if word.startswith("http://"):
                    port = urlsplit(word).port
                    assert port is not None
                    await self._wait_for_listening(port, deadline)
                    self.url = f"http://127.0.0.1:{port}"
                    return self.url
            if self.process.poll() is not None:
                raise LoadTestError(f"the server did not start: {self._last_error_line()}")
            await asyncio.sleep(0.05)
        raise LoadTestError(f"the server printed no address within {SERVER_START_TIMEOUT:.0f} s")

    async def _wait_for_listening(self, port: int, deadline: float) -> None:
        """The address is printed once the socket is bound, a moment before the server listens."""
        while time.monotonic() < deadline:
            try:
                _, writer = await asyncio.open_connection("127.0.0.1", port)
            except OSError:
                if self.process.poll() is not None:
                    raise LoadTestError(f"the server did not start: {self._last_error_line()}") from None
                await asyncio.sleep(0.05)
                continue
            writer.close()
            return
        raise LoadTestError(f"the server did not listen within {SERVER_START_TIMEOUT:.0f} s")

    def _last_error_line(self) -> str:
        lines = [line for line in self.stderr_path.read_text(errors="replace").splitlines() if line.strip()]
        return lines[-1].strip() if lines else f"exit status {self.process.returncode}"

    def usage(self) -> ServerUsage:
        """CPU seconds (user + system), peak and current RSS of the server and the processes it
        started; what was read just before the kill for a killed server."""
        if self.killed:
            assert self.final_usage is not None
            return self.final_usage
        tick = os.sysconf("SC_CLK_TCK")
        tree = [self.process.pid, *_descendants(self.process.pid)]
        cpu = 0.0
        peak = 0
        rss = 0
        counted = 0
        for pid in tree:
            stat = _read(f"/proc/{pid}/stat")
            status = _read(f"/proc/{pid}/status")
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

    def kill(self) -> None:
        """SIGKILL, as a machine that dies would: no shutdown code runs. Its worker processes are
        left to notice by themselves; :meth:`survivors` tells which did not."""
        self.final_usage = self.usage()
        self.left_behind = [(pid, start) for pid in _descendants(self.pid) if (start := _start_time(pid))]
        self.process.send_signal(signal.SIGKILL)
        self.killed = True
        self.process.wait()

    def survivors(self) -> list[int]:
        """The killed server's children still running now (not reaped zombies, not reused ids)."""
        return [pid for pid, start in self.left_behind if _start_time(pid) == start and not _zombie(pid)]

    def terminate(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)

    def stop(self) -> None:
        self.terminate()
        if self.process.poll() is None:
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        for pid in self.survivors():  # processes of ours that outlived their server
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        self.directory.cleanup()


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


def _descendants(root: int) -> list[int]:
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


async def wait_for_workers(http: Any, url: str) -> None:
    """Until the server's /api/health says every bot worker is ready (a server that does not say
    counts as ready)."""
    deadline = time.monotonic() + SERVER_START_TIMEOUT
    while time.monotonic() < deadline:
        try:
            workers = (await http.get(f"{url}/api/health")).json().get("workers") or {}
        except Exception:
            workers = {}  # not answering yet is no reason to stop waiting
        else:
            if int(workers.get("ready", 0)) >= int(workers.get("processes", 0)):
                return
        await asyncio.sleep(0.1)
    raise LoadTestError(f"the bot workers of {url} were not ready within {SERVER_START_TIMEOUT:.0f} s")
