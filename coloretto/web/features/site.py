"""The site: the games in memory (the runtime) and every feature, put together once, started and
stopped in order. The HTTP and WebSocket routes (:mod:`coloretto.web.api`) and the pages
(:mod:`coloretto.web.pages`) are handed a :class:`Site` and call its parts.

Each feature is handed what it needs (the games, another feature) when it is made here; none
imports an orchestrator, and the runtime below knows none of them.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Protocol

from sqlalchemy.orm import Session, sessionmaker

from coloretto.web.common.incidents import Incidents
from coloretto.web.common.settings import Settings
from coloretto.web.features.accounts import Accounts
from coloretto.web.features.chat import Chat
from coloretto.web.features.hints import Hints
from coloretto.web.features.lifecycle import AccountLife
from coloretto.web.features.lobby import Lobby
from coloretto.web.features.moderation import Moderation
from coloretto.web.features.play import Play
from coloretto.web.features.ratings import Ratings
from coloretto.web.features.readiness import Readiness
from coloretto.web.features.records import Records
from coloretto.web.features.rematch import Rematches
from coloretto.web.features.reports import Reports
from coloretto.web.features.reviews import Reviews
from coloretto.web.features.seats import Seats
from coloretto.web.features.standing import Standing
from coloretto.web.runtime.bus import Bus
from coloretto.web.runtime.cluster import cancel_and_wait
from coloretto.web.runtime.games import Games, tune_garbage_collector
from coloretto.web.runtime.limits import open_counters
from coloretto.web.runtime.sync import ClusterSync
from coloretto.web.runtime.workers import BotPool

log = logging.getLogger("coloretto.web")

#: how often games are expired, abandoned, and dropped from memory when nobody here needs them
SWEEP_EVERY = 5.0
#: a draining process tells its clients to reconnect in this many slices (Settings.reconnect_spread)
RECONNECT_SLICES = 10


class Connection(Protocol):
    """A client's open connection (a table's WebSocket), as the drain stops it."""

    def stop_reading(self) -> None:
        """Handle no more of the client's messages (one being handled is answered)."""

    async def settled(self) -> None:
        """Return once no message of the client is being handled."""

    def close_for_restart(self) -> None:
        """Send what is queued for the client, then close: 1012, reconnect (elsewhere)."""

    def start_reading(self) -> None:
        """Handle the client's messages again (its game is run by another process now)."""


class Site:
    """Every part of the game server of one process."""

    def __init__(
        self,
        sessions: sessionmaker[Session],
        settings: Settings | None = None,
        *,
        bus: Bus | None = None,
        pool: BotPool | None = None,
    ) -> None:
        self.games = Games(sessions, settings, bus=bus, pool=pool)
        self.settings = self.games.settings
        self.sync = ClusterSync(self.games)
        #: what each client address may do, counted (in Redis for every process, with one)
        self.limits = open_counters(self.settings.redis_url)
        #: the accounts banned or deleted, as this process knows them (kept by the moderation)
        self.standing = Standing()
        self.seats = Seats(self.games, self.standing)
        self.lobby = Lobby(self.games, self.seats, self.limits)
        self.rematches = Rematches(self.games, self.lobby, self.seats)
        self.play = Play(self.games, self.seats)
        self.chat = Chat(self.games, self.standing)
        self.sync.handlers["chat"] = self.chat.from_elsewhere
        self.hints = Hints(self.games, self.seats)
        self.records = Records(self.games)
        self.ratings = Ratings(self.games)
        self.accounts = Accounts(self.games, self.ratings)
        self.reviews = Reviews(self.games, self.records, self.limits)
        #: the clients connected here (the api's table WebSockets), for the drain
        self.connections: set[Connection] = set()
        #: set once the drain began (SIGTERM): no new connection is kept, no game taken on
        self.draining = False
        self.readiness = Readiness(self.games, draining=lambda: self.draining)
        self.moderation = Moderation(self.games, self.sync, self.play, self.chat, self.standing)
        self.reports = Reports(self.games, self.moderation)
        self.lifecycle = AccountLife(self.games, self.accounts, self.moderation)
        self._tasks: list[asyncio.Task[None]] = []

    @property
    def incidents(self) -> Incidents:
        return self.games.incidents

    async def start(self) -> None:
        """The writer, the bot workers and the bus; the games this process runs (their bots move);
        then the sweep of games nobody plays."""
        await self.limits.start()
        await self.games.start()
        await self.sync.start()
        await self.moderation.start()
        await self.lobby.expire_waiting()
        self._tasks.append(asyncio.get_running_loop().create_task(self._sweep(), name="sweep"))
        tune_garbage_collector()

    async def drain(self, timeout: float) -> bool:
        """Before the process exits (SIGTERM; the server has stopped accepting connections): with
        other processes, they first read this one's games ahead while it runs them on (for
        ``timeout`` seconds at most); then no bot turn, clock or adoption starts here any more;
        the clients' messages being handled are answered and the writes accepted committed
        (within ``timeout`` seconds); then every lease is given up at once and the other
        processes told, so that they run these games now, and every client told to reconnect
        (close 1012, after what was queued for it: the state that answers its last move); with
        other processes, a slice of the clients at a time, shown meanwhile the moves made in the
        process that runs their games now (:meth:`_relay_then_close`). False when the writes did
        not finish in time."""
        if self.draining:
            return True
        self.draining = True
        await self.sync.stop_adopting()
        read_ahead = await self.sync.prepare_hand_over(timeout)
        deadline = time.monotonic() + timeout
        self.games.stopping = True
        for live in list(self.games.live.values()):
            self.games.bots.cancel(live)  # a move being stored is still stored and told
        connections = list(self.connections)
        for connection in connections:
            connection.stop_reading()
        settled = True
        if connections:
            waits = [asyncio.ensure_future(c.settled()) for c in connections]
            _, pending = await asyncio.wait(waits, timeout=timeout)
            for wait in pending:
                wait.cancel()
            settled = not pending
        settled = await self.games.settle(max(0.0, deadline - time.monotonic())) and settled
        # the games first: the process that adopts them runs them (read ahead, or read together)
        # before the clients reconnecting there each ask for theirs
        given_up = await self.sync.hand_over(max(0.5, deadline - time.monotonic()))
        if read_ahead is not None and self.settings.reconnect_spread > 0 and connections:
            settled = await self._relay_then_close(connections, deadline) and settled
        else:
            for connection in connections:
                connection.close_for_restart()
        log.log(
            logging.INFO if settled else logging.WARNING,
            "drained: %d clients told to reconnect, %d games given up%s%s",
            len(connections),
            len(given_up),
            "" if read_ahead is None else f" (read ahead by another process in {1000 * read_ahead:.0f} ms)",
            "" if settled else f"; writes still unfinished after {timeout:g} s",
        )
        return settled

    async def _relay_then_close(self, connections: list[Connection], deadline: float) -> bool:
        """The games are run by another process now; its moves reach the copies here through the
        bus, and this process shows them to its clients and writes their moves (as any process
        does for a game run elsewhere) while it tells them to reconnect, a slice at a time over
        :attr:`Settings.reconnect_spread` seconds: the players see no pause, and the process
        taking the games over is not sent every client in the same instant. The writes accepted
        meanwhile are stored before it returns; False when they were not, in time."""
        for connection in connections:
            connection.start_reading()
        slices = min(len(connections), RECONNECT_SLICES)
        pause = self.settings.reconnect_spread / slices
        settled = True
        for index in range(slices):
            await asyncio.sleep(pause)
            part = connections[index::slices]
            for connection in part:
                connection.stop_reading()
            waits = [asyncio.ensure_future(c.settled()) for c in part]
            _, pending = await asyncio.wait(waits, timeout=max(0.1, deadline - time.monotonic()))
            for wait in pending:
                wait.cancel()
            settled = settled and not pending
            for connection in part:
                connection.close_for_restart()
        return await self.games.settle(max(0.1, deadline - time.monotonic())) and settled

    async def stop(self) -> None:
        self.games.stopping = True
        await self.reviews.stop()  # before the writer closes: each stores that it stopped
        await cancel_and_wait(self._tasks)
        await self.moderation.stop()
        await self.sync.stop()
        await self.games.stop()
        await self.readiness.close()
        await self.limits.close()

    async def _sweep(self) -> None:
        """Expire waiting games, abandon stalled ones, drop from memory the games nobody here needs,
        forget old log-in attempts (creating and listing games expire them too)."""
        period = min(SWEEP_EVERY, max(0.05, self.settings.waiting_expiry / 4))
        while True:
            await asyncio.sleep(period)
            try:
                for live in list(self.games.live.values()):
                    self.games.evict_soon(live)
                await self.lobby.sweep()
                await self.accounts.purge()
            except Exception:  # the database may be back on the next round
                log.exception("games could not be expired or abandoned")
