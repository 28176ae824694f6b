"""A real ``coloretto serve`` process for the tests: bound to 127.0.0.1, always shut down."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

import httpx


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class ServerProcess:
    """``python -m coloretto serve`` on a data directory; ``kill()`` is a SIGKILL."""

    def __init__(
        self,
        data_dir: Path,
        bot_delay: float = 0.05,
        port: int | None = None,
        extra_args: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
    ) -> None:
        """``extra_args``: more ``coloretto serve`` flags, e.g. ``("--abandon-after", "0.001")``;
        ``env``: more environment variables, e.g. ``{"COLORETTO_REVIEW_BUDGET": "60"}``."""
        self.data_dir = data_dir
        self.bot_delay = bot_delay
        self.extra_args = tuple(extra_args)
        self.env = dict(env or {})
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen[str] | None = None
        self.output = ""

    def start(self, timeout: float = 20.0) -> ServerProcess:
        command = [
            sys.executable,
            "-m",
            "coloretto",
            "serve",
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--data-dir",
            str(self.data_dir),
            "--bot-delay",
            str(self.bot_delay),
            "--hint-budget",
            "0.1",
            "--message-rate",  # a test clicks faster than a person; the limit has its own tests
            "100",
            "--requests-per-minute",  # tests poll far faster than a person; tested in test_web_limits.py
            "0",
            "--log-level",
            "warning",
            *self.extra_args,
        ]
        env = {**os.environ, "PYTHONUNBUFFERED": "1", **self.env}
        self.proc = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(
                    f"the server exited: {self.proc.stdout.read() if self.proc.stdout else ''}"
                )
            try:
                if httpx.get(f"{self.url}/api/health", timeout=1.0).status_code == 200:
                    return self
            except httpx.HTTPError:
                time.sleep(0.1)
        self.stop()
        raise RuntimeError("the server did not start in time")

    def kill(self) -> None:
        """SIGKILL: no shutdown code runs."""
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=10)
        self._collect()

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            self._collect()
            return
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)
        self._collect()

    def _collect(self) -> None:
        if self.proc is not None and self.proc.stdout is not None and not self.proc.stdout.closed:
            self.output += self.proc.stdout.read()
            self.proc.stdout.close()
