"""The HTTP server around the app: uvicorn's, with a drain on SIGTERM (and Ctrl+C), so that a
restart of one process among several is not seen by anyone.

On the signal the process at once stops listening (new connections are refused, so nginx sends
them to another process) and drains the site (:meth:`~coloretto.web.features.site.Site.drain`):
the other processes read its games ahead while it runs them on; then no bot turn, clock or
adoption starts here any more, the clients' messages being handled are answered and the
accepted writes committed, every game's lease is given up, the other processes told to take the
games now, and every WebSocket client is closed with 1012 (service restart: it reconnects at
once). Then uvicorn's own shutdown: the HTTP requests in flight are answered (for
at most ``timeout_graceful_shutdown`` seconds), the site stops (the writer, the bus, the bot
workers). A process that drained completely exits with status 0; one whose writes did not
finish within the drain's timeout exits with status 1.
"""

from __future__ import annotations

import asyncio
import signal
import socket
from types import FrameType

import uvicorn

from coloretto.web.features.site import Site


class DrainingServer(uvicorn.Server):
    """uvicorn's :class:`uvicorn.Server`, which drains ``site`` before it shuts down."""

    def __init__(self, config: uvicorn.Config, site: Site, drain_timeout: float = 10.0) -> None:
        super().__init__(config)
        self.site = site
        self.drain_timeout = drain_timeout
        #: None until a drain ran; then whether it finished its writes in time
        self.drained: bool | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._drain: asyncio.Task[None] | None = None

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        self._loop = asyncio.get_running_loop()
        await super().startup(sockets)

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        super().handle_exit(sig, frame)
        # uvicorn looks at its flag ten times a second: the drain begins now, not up to 0.1 s later
        if self.started and self._loop is not None and self._drain is None:
            self._loop.call_soon_threadsafe(self._begin_drain)

    def _begin_drain(self) -> None:
        if self._drain is None:
            self._drain = asyncio.get_running_loop().create_task(self._drain_site(), name="drain")

    async def _drain_site(self) -> None:
        for server in self.servers:
            server.close()  # no new connection: refused, so that a proxy tries another process
        try:
            self.drained = await self.site.drain(self.drain_timeout)
        except Exception:
            self.drained = False
            raise

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        self._begin_drain()
        assert self._drain is not None
        try:
            await self._drain
        finally:
            await super().shutdown(sockets)
            if self.drained:
                # a drained process has done what SIGTERM asks: it exits with status 0 rather
                # than die of the signal, which uvicorn raises again once it is done
                self._captured_signals = [s for s in self._captured_signals if s != signal.SIGTERM]
