"""The bus between server processes, as the games use it (:class:`Bus`: events told to the other
processes, game leases), and the bus of a process alone (:class:`LocalBus`: nobody else to tell,
every lease is ours). The real one, on Redis, is :class:`~coloretto.web.runtime.cluster.RedisBus`;
:func:`~coloretto.web.runtime.cluster.open_bus` picks between them from ``--redis-url``.
"""

from __future__ import annotations

import os
import secrets
import socket
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable
from typing import Any

#: ``(game_id, event)``: an event another process published
EventHandler = Callable[[str, dict[str, Any]], Awaitable[None]]


class BusError(Exception):
    """Redis cannot be used: a bad URL, an unreachable server, a dropped connection,
    or a bus used before :meth:`Bus.start` or after :meth:`Bus.close`."""


def new_process_id() -> str:
    """``host-pid-random``: unique per process start, readable in ``redis-cli``."""
    return f"{socket.gethostname()}-{os.getpid()}-{secrets.token_hex(4)}"


class Bus(ABC):
    """How server processes tell each other about changes and share out games."""

    process_id: str
    #: seconds a lease lasts unless renewed: how long a dead process's games wait for a new owner
    lease_seconds: float
    #: called (on the event loop) with a game whose lease could not be renewed: stop running it
    on_lost: Callable[[str], None] | None

    def __init__(self, lease_seconds: float) -> None:
        self.process_id = new_process_id()
        self.lease_seconds = lease_seconds
        self.on_lost = None

    @abstractmethod
    async def start(self, on_event: EventHandler) -> None:
        """Connect; from now on other processes' events go to ``on_event``, one at a time, in order."""

    @abstractmethod
    async def publish(self, game_id: str, event: dict[str, Any]) -> None:
        """Tell every other process (not this one) about ``event`` (a JSON-able dict), in
        publish order."""

    @abstractmethod
    async def acquire(self, game_id: str) -> bool:
        """Take the game's lease if it is free or already ours; False if another process holds it."""

    async def acquire_many(self, game_ids: list[str]) -> list[str]:
        """:meth:`acquire` for several games (in one round trip where the bus can): those taken."""
        return [game_id for game_id in game_ids if await self.acquire(game_id)]

    @abstractmethod
    async def release(self, game_id: str) -> None:
        """Give the game's lease up (if it is ours)."""

    @abstractmethod
    async def release_all(self) -> list[str]:
        """Give up every lease we hold, at once (a process draining before it exits): the games
        given up. A Redis failure is logged, not raised: those leases lapse by themselves."""

    @abstractmethod
    def owns(self, game_id: str) -> bool:
        """Whether we hold the game's lease, as of its last renewal."""

    @abstractmethod
    async def holders(self, game_ids: list[str]) -> dict[str, str | None]:
        """The process holding each game's lease; None for a free one."""

    @abstractmethod
    async def close(self) -> None:
        """Release our leases and stop; closing again does nothing."""


class LocalBus(Bus):
    """One process: there is nobody to tell and every lease is ours."""

    def __init__(self, lease_seconds: float = 3.0) -> None:
        super().__init__(lease_seconds)
        self._owned: set[str] = set()

    async def start(self, on_event: EventHandler) -> None:
        pass  # no other process will ever publish

    async def publish(self, game_id: str, event: dict[str, Any]) -> None:
        pass

    async def acquire(self, game_id: str) -> bool:
        self._owned.add(game_id)
        return True

    async def release(self, game_id: str) -> None:
        self._owned.discard(game_id)

    async def release_all(self) -> list[str]:
        games = sorted(self._owned)
        self._owned.clear()
        return games

    def owns(self, game_id: str) -> bool:
        return game_id in self._owned

    async def holders(self, game_ids: list[str]) -> dict[str, str | None]:
        return {game_id: self.process_id if game_id in self._owned else None for game_id in game_ids}

    async def close(self) -> None:
        self._owned.clear()
