"""The site: the games in memory (the runtime) and every feature, put together once, started and
stopped in order. The HTTP and WebSocket routes (:mod:`coloretto.web.api`) and the pages
(:mod:`coloretto.web.pages`) are handed a :class:`Site` and call its parts.

Each feature is handed what it needs (the games, another feature) when it is made here; none
imports an orchestrator, and the runtime below knows none of them.
"""

from __future__ import annotations

import asyncio
import logging

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
from coloretto.web.runtime.cluster import Bus, cancel_and_wait
from coloretto.web.runtime.games import Games, tune_garbage_collector
from coloretto.web.runtime.sync import ClusterSync
from coloretto.web.runtime.workers import BotPool

log = logging.getLogger("coloretto.web")

#: how often games are expired, abandoned, and dropped from memory when nobody here needs them
SWEEP_EVERY = 5.0


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
        #: the accounts banned or deleted, as this process knows them (kept by the moderation)
        self.standing = Standing()
        self.seats = Seats(self.games, self.standing)
        self.lobby = Lobby(self.games, self.seats)
        self.rematches = Rematches(self.games, self.lobby, self.seats)
        self.play = Play(self.games, self.seats)
        self.chat = Chat(self.games, self.standing)
        self.sync.handlers["chat"] = self.chat.from_elsewhere
        self.hints = Hints(self.games, self.seats)
        self.records = Records(self.games)
        self.ratings = Ratings(self.games)
        self.accounts = Accounts(self.games, self.ratings)
        self.reviews = Reviews(self.games, self.records)
        self.readiness = Readiness(self.games)
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
        await self.games.start()
        await self.sync.start()
        await self.moderation.start()
        await self.lobby.expire_waiting()
        self._tasks.append(asyncio.get_running_loop().create_task(self._sweep(), name="sweep"))
        tune_garbage_collector()

    async def stop(self) -> None:
        self.games.stopping = True
        await self.reviews.stop()  # before the writer closes: each stores that it stopped
        await cancel_and_wait(self._tasks)
        await self.moderation.stop()
        await self.sync.stop()
        await self.games.stop()
        await self.readiness.close()

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
