"""A real ``redis-server`` for the tests: on a free loopback port, in memory only, always stopped.

Other test modules take the ``redis_url`` fixture with ``from tests.redis_server import redis_url``
(and ``redis_server`` for the :class:`RedisServer` itself, to stop or pause it). Without a
``redis-server`` on the machine the tests that need one are skipped, except under CI (``CI`` set),
where they fail: CI installs it (``.ci/run``).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

DEBIAN_REDIS_SERVER = "/usr/bin/redis-server"


def redis_server_binary() -> str | None:
    """Debian's ``redis-server``, else the one on PATH, else None."""
    if os.access(DEBIAN_REDIS_SERVER, os.X_OK):
        return DEBIAN_REDIS_SERVER
    return shutil.which("redis-server")


def require_redis_server() -> str:
    """The ``redis-server`` to run; skips the test without one (fails it under CI)."""
    binary = redis_server_binary()
    if binary is None:
        if os.environ.get("CI"):
            pytest.fail(
                "redis-server is not installed, and CI must test against a real one: "
                "install Debian's redis-server package (.ci/run does)",
                pytrace=False,
            )
        pytest.skip("redis-server is not installed (Debian: apt-get install redis-server)")
    return binary


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _answers_ping(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1.0) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(64).startswith(b"+PONG")
    except OSError:
        return False


class RedisServer:
    """One ``redis-server`` process: no snapshots, no append-only file, its files in ``directory``."""

    def __init__(self, directory: Path, binary: str | None = None) -> None:
        self.directory = directory
        self.binary = binary or require_redis_server()
        self.port = 0
        self.proc: subprocess.Popen[bytes] | None = None
        self.log_path = directory / "redis.log"

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self, timeout: float = 20.0) -> RedisServer:
        """Start on a free port and wait until it answers PING. A port taken between
        choosing it and binding it (by another test's process) is retried on another."""
        self.directory.mkdir(parents=True, exist_ok=True)
        for _ in range(5):
            self.port = free_port()
            if self._start_on_port(timeout):
                return self
        raise RuntimeError(f"redis-server found no free port; its log:\n{self._log_tail()}")

    def _start_on_port(self, timeout: float) -> bool:
        command = [
            self.binary,
            "--port",
            str(self.port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            str(self.directory),
            "--daemonize",
            "no",
            "--logfile",
            str(self.log_path),
        ]
        self.proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                self.proc = None
                if "Address already in use" in self._log_tail():
                    return False
                raise RuntimeError(f"redis-server exited at start; its log:\n{self._log_tail()}")
            if _answers_ping(self.port):
                return True
            time.sleep(0.05)  # polling a starting server: no event to wait on
        self.stop()
        raise RuntimeError(f"redis-server did not answer PING in {timeout} s; its log:\n{self._log_tail()}")

    def _log_tail(self) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-20:])
        except OSError:
            return "(no log)"

    def pause(self) -> None:
        """SIGSTOP: the server keeps its connections open and answers nothing, like a machine
        gone from the network."""
        assert self.proc is not None
        self.proc.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGCONT)

    def stop(self) -> None:
        if self.proc is None:
            return
        proc, self.proc = self.proc, None
        if proc.poll() is None:
            proc.send_signal(signal.SIGCONT)  # a paused server cannot act on SIGTERM
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)

    def __enter__(self) -> RedisServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


@contextlib.contextmanager
def running_redis(directory: Path) -> Iterator[RedisServer]:
    with RedisServer(directory) as server:
        yield server


@pytest.fixture
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    """A fresh, empty Redis for one test, stopped after it."""
    with running_redis(tmp_path_factory.mktemp("redis")) as server:
        yield server


@pytest.fixture
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``redis://127.0.0.1:PORT/0`` of a fresh, empty Redis for one test, stopped after it."""
    with running_redis(tmp_path_factory.mktemp("redis")) as server:
        yield server.url
