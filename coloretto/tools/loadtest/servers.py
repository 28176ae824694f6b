"""The servers a load test starts itself: ``coloretto serve --port 0`` in a subprocess on a
temporary data directory (or the database given), their CPU and memory read from ``/proc``."""

from __future__ import annotations

import asyncio
import tempfile
import time
from pathlib import Path
from typing import Any

from coloretto.tools.loadtest import LoadTestError
from coloretto.tools.serve_process import START_TIMEOUT as SERVER_START_TIMEOUT
from coloretto.tools.serve_process import ServeError, ServeProcess


class StartedServer(ServeProcess):
    """A server the load test starts: on a temporary directory (or the database given), with the
    limits per client address lifted (every client of the test is one address: the limits would
    measure themselves, not the server); its directory is removed when it stops."""

    def __init__(
        self,
        bot_delay: float,
        message_rate: float,
        extra: list[str],
        database_url: str | None = None,
        redis_url: str | None = None,
    ) -> None:
        self._temporary = tempfile.TemporaryDirectory(prefix="coloretto-loadtest-")
        args = [
            "--message-rate",
            str(message_rate),
            "--creations-per-minute",
            "0",
            "--requests-per-minute",
            "0",
        ]
        super().__init__(
            Path(self._temporary.name),
            database_url=database_url,
            redis_url=redis_url,
            bot_delay=bot_delay,
            args=[*args, *extra],
            log_level="warning",
        )
        #: restarts (--rolling-restart); the CPU seconds of its processes before the last one, and
        #: that one's CPU seconds when it started counting
        self.restarted = 0
        self.cpu_carried = 0.0
        self.cpu_base: float | None = None
        self.launch()

    async def wait_for_address(self) -> str:
        """The server's address, once it listens (its workers may still be warming)."""
        try:
            await self.wait_ready_async(SERVER_START_TIMEOUT, workers=False)
        except ServeError as exc:
            raise LoadTestError(str(exc).splitlines()[0]) from None
        return self.url

    def stop(self) -> None:
        super().stop()
        self._temporary.cleanup()


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
