"""Several server processes on one database and one Redis: each change told to the others, a
copy kept up to date, the games of a process that died adopted.

Any process accepts any client and applies its actions under the database's guard (one move
number, one move); the process holding a game's lease runs its bots and clock
(:mod:`coloretto.web.runtime.cluster`); every change is published so that watchers anywhere see
it at once; a copy that missed an event (Redis pub/sub is at most once, a process may die between
its commit and its event) is read again from the database. A single process has nothing to tell
and runs every game: then this module only loads nothing and starts nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
from collections.abc import Callable
from functools import partial
from typing import Any

from coloretto.web.common import metrics
from coloretto.web.common.faults import dropped, inject
from coloretto.web.runtime.cluster import RedisBus, cancel_and_wait
from coloretto.web.runtime.games import Games
from coloretto.web.runtime.replay import apply_remote_move
from coloretto.web.storage import games as store
from coloretto.web.table.live import ENDED, LiveGame

log = logging.getLogger("coloretto.web")

#: how often a process tells the others which seats are online through it (they forget after
#: :data:`coloretto.web.table.live.PRESENCE_TTL`)
PRESENCE_EVERY = 10.0
#: the "game" of the events of a hand-over: a draining process names its games ("draining"), the
#: others read them ahead and one says so ("ready"), the drained process gives them up ("released")
RELEASED = "*"
#: how long a process keeps the games it read ahead for a draining one (if another adopted them)
STANDBY_SECONDS = 60.0

#: what a feature does with an event of its own kind from another process (a chat message)
EventHandler = Callable[[LiveGame, dict[str, Any]], None]
#: what a feature does with an event about the whole site from another process (a moderator acted)
SiteHandler = Callable[[dict[str, Any]], None]
#: the "game" that site events are published under (no game's id: those are at most 16 characters)
SITE_EVENTS = "*site*"


class ClusterSync:
    """Joins this process's :class:`~coloretto.web.runtime.games.Games` to the others'."""

    def __init__(self, games: Games) -> None:
        self.games = games
        #: a feature's handler of its own events from other processes, by event type
        self.handlers: dict[str, EventHandler] = {}
        #: a feature's handler of site events (published under :data:`SITE_EVENTS`), by event type
        self.site_handlers: dict[str, SiteHandler] = {}
        self._outbox: asyncio.Queue[tuple[str, dict[str, Any]]] | None = None
        self._tasks: list[asyncio.Task[None]] = []
        #: games in memory the database was ahead of on the last round: game -> (moves, status) stored
        self._behind: dict[str, tuple[int, str]] = {}
        #: set when another process gave its games up (it drains before it exits): adopt at once
        self._adopt_now = asyncio.Event()
        self._adopter: asyncio.Task[None] | None = None
        #: this process drains: it takes and reads ahead no other process's games
        self.leaving = False
        #: set when another process has read this one's games ahead (see prepare_hand_over)
        self._ready_elsewhere = asyncio.Event()
        #: games whose lease this process has just taken and whose copy here may still be behind
        self._adopting: set[str] = set()

    async def start(self) -> None:
        """Listen to the other processes (and, alone, to nobody); with others, publish this
        process's changes, adopt the games without an owner and tell who is online here."""
        bus = self.games.bus
        bus.on_lost = self._lease_lost
        if isinstance(bus, RedisBus):
            bus.on_reconnect = self._resync
        await bus.start(self._on_event)
        if self.games.clustered:
            loop = asyncio.get_running_loop()
            self._outbox = asyncio.Queue()
            self.games.publish = self.publish
            self._tasks.append(loop.create_task(self._publisher(), name="publish events"))
            self._adopter = loop.create_task(self._adopt_loop(), name="adopt games")
            self._tasks.append(self._adopter)
            self._tasks.append(loop.create_task(self._presence_loop(), name="tell presence"))

    async def stop(self) -> None:
        await cancel_and_wait(self._tasks)  # they talk to Redis, which can lose a cancel
        self._tasks = []

    async def stop_adopting(self) -> None:
        """This process is draining: it takes no more games (the others take its own)."""
        self.leaving = True
        if self._adopter is not None:
            await cancel_and_wait([self._adopter])

    async def prepare_hand_over(self, timeout: float) -> float | None:
        """Before a draining process stops its games: tell the others which games it runs, so that
        they read them from the database now, while this one still runs them (their copies then
        follow its moves through the events), and wait until one says it has them, at most
        ``timeout`` seconds. When the games are then given up, the process that adopts them has
        them in memory and runs them at once: nobody waits for a read of hundreds of games. The
        seconds the others took; None when none answered in time (or there is nobody to ask)."""
        games = [game_id for game_id, live in self.games.live.items() if self.games.owns(live)]
        if not self.games.clustered or not games:
            return None
        started = time.monotonic()
        self._ready_elsewhere.clear()
        event = {"type": "draining", "games": games, "origin": self.games.bus.process_id}
        try:
            await self.games.bus.publish(RELEASED, event)
            await asyncio.wait_for(self._ready_elsewhere.wait(), timeout)
        except TimeoutError:
            log.warning("no other process read this one's %d games ahead within %g s", len(games), timeout)
            return None
        except Exception as exc:  # the bus: the others adopt the games when they are given up
            log.warning("could not ask the other processes to read %d games ahead: %s", len(games), exc)
            return None
        return time.monotonic() - started

    async def _read_ahead(self, event: dict[str, Any]) -> None:
        """Another process drains: read its games now (kept in memory a while, and up to date
        through its events), and tell it once they are here."""
        started = now = time.monotonic()
        named = event.get("games")
        games = [g for g in named if isinstance(g, str) and len(g) <= 16] if isinstance(named, list) else []
        standby = {game_id: until for game_id, until in self.games.standby.items() if until > now}
        self.games.standby = standby | dict.fromkeys(games, now + STANDBY_SECONDS)
        loading = self.games.loading([game_id for game_id in games if game_id not in self.games.live])
        # a game that cannot be read is reported where it failed; its adopter reads it again
        await asyncio.gather(*(asyncio.shield(future) for future in loading.values()), return_exceptions=True)
        for game_id in games:  # each game's log written now, not as its clients reconnect here at once
            live = self.games.live.get(game_id)
            if live is not None:
                live.log_json(live.deal)
                await asyncio.sleep(0)
        origin = str(event.get("origin"))
        ready = {"type": "ready", "for": origin, "games": len(games), "origin": self.games.bus.process_id}
        await self.games.bus.publish(RELEASED, ready)
        log.info(
            "read %d games of process %s ahead, which drains (%d were in memory), in %.0f ms",
            len(games),
            origin,
            len(games) - len(loading),
            1000 * (time.monotonic() - started),
        )

    def _on_hand_over(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        if kind == "released":  # a process gave its games up: adopt them now
            self._adopt_now.set()
        elif kind == "draining" and self.games.clustered and not self.leaving:
            self.games.spawn(self._read_ahead(event))
        elif kind == "ready" and event.get("for") == self.games.bus.process_id:
            self._ready_elsewhere.set()

    async def hand_over(self, timeout: float = 5.0) -> list[str]:
        """Give up every lease this process holds, at once, and tell the other processes, which
        adopt those games now rather than when they next look (a process draining before it
        exits, after its accepted writes are stored). The events of those writes go first (within
        ``timeout`` seconds), so that a copy that followed them is found up to date and run at
        once. The games given up."""
        if self._outbox is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._outbox.join(), timeout)
        games = await self.games.bus.release_all()
        for game_id in games:
            live = self.games.live.get(game_id)
            if live is not None:
                self.games.bots.cancel(live)
        if games and self.games.clustered:
            event = {"type": "released", "games": len(games), "origin": self.games.bus.process_id}
            try:
                await self.games.bus.publish(RELEASED, event)
            except Exception:  # the others find the games without an owner on their next look
                log.warning("could not tell the other processes that %d games were given up", len(games))
        return games

    async def catch_up(self, live: LiveGame) -> None:
        """With several processes: a copy of a game run elsewhere is read again if the database has
        moved past it (its owner died between a commit and its event), before a client that
        (re)connects here is shown it."""
        if not self.games.clustered or (self.games.owns(live) and live.id not in self._adopting):
            return
        stored = await self.games.read(partial(store.stored_progress, ids=[live.id]))
        if stored.get(live.id, (live.move_count, live.status)) != (live.move_count, live.status):
            async with live.lock:
                await self.games.refresh(live)
            self.games.tell(live)  # those who watch here already: the moves they have not seen

    def publish(self, game_id: str, event: dict[str, Any]) -> None:
        """Tell the other processes, in order (one task sends them all)."""
        if self._outbox is not None:
            self._outbox.put_nowait((game_id, {**event, "origin": self.games.bus.process_id}))

    async def _publisher(self) -> None:
        assert self._outbox is not None
        while True:
            game_id, event = await self._outbox.get()
            try:
                await self.games.bus.publish(game_id, event)
            except Exception as exc:
                # the other processes read the game again when they see the database ahead of them
                self.games.incidents.record(
                    "publish",
                    self.games.live.get(game_id),
                    f"a {event.get('type')} event could not be published",
                    exc,
                )
            finally:
                self._outbox.task_done()

    async def _on_event(self, game_id: str, event: dict[str, Any]) -> None:
        """Another process changed a game (or said who is online through it). An event that
        cannot be handled is reported and the game read again from the database."""
        if game_id == RELEASED:  # a process drains: it names its games, or gave them up
            self._on_hand_over(event)
            return
        if game_id == SITE_EVENTS:
            handler = self.site_handlers.get(str(event.get("type")))
            if handler is not None:
                try:
                    handler(event)
                except Exception as exc:
                    self.games.incidents.record(
                        "bus", None, f"a site event ({event.get('type')}) failed", exc
                    )
            return
        live = self.games.live.get(game_id)
        if live is None:
            return
        if event.get("type") == "move" and dropped("bus"):
            return  # lost on the way (a test's fault): the next event shows the gap
        try:
            inject("bus")
            await self._apply_event(live, event)
        except Exception as exc:
            what = f"an event from another process ({event.get('type')}) failed"
            self.games.incidents.record("bus", live, what, exc)
            await self.games.recover(live)

    async def _apply_event(self, live: LiveGame, event: dict[str, Any]) -> None:
        kind = event.get("type")
        if kind == "presence":
            seats = frozenset(int(s) for s in event.get("seats", ()))
            spectators = event.get("spectators", 0)
            watching = spectators if isinstance(spectators, int) and spectators >= 0 else 0
            live.remote_online[str(event.get("origin"))] = (seats, watching, time.monotonic())
            for seat in seats:
                live.offline_since.pop(seat, None)
            self.games.fanout.presence(live)
            self.games.bots.schedule(live)
            return
        if kind == "review":  # a review ended in that process: told to the watchers here
            self.games.fanout.message(live, {k: v for k, v in event.items() if k != "origin"})
            return
        handler = self.handlers.get(str(kind))
        if handler is not None:  # a feature's own event (a chat message said through that process)
            handler(live, event)
            return
        if kind == "rematch":
            rematch = event.get("game")
            if isinstance(rematch, str):
                live.rematch_id = rematch
                self.games.fanout.message(live, {"type": "rematch", "game": rematch})
            return
        if kind == "thinking":
            thinker = event.get("seat")
            live.thinking = thinker if isinstance(thinker, int) else None
            self.games.fanout.message(
                live, {"type": "thinking", "seat": live.thinking, "move": live.move_count}
            )
            return
        async with live.lock:
            if kind == "move" and event.get("number") == live.move_count + 1:
                try:
                    apply_remote_move(live, event)
                except Exception as exc:
                    self.games.incidents.record(
                        "bus", live, "a move from another process did not replay", exc
                    )
                    await self.games.refresh(live)
            elif (
                kind == "move" and isinstance(event.get("number"), int) and event["number"] <= live.move_count
            ):
                return  # already played here
            else:  # a gap, or seats and status changed: the database knows
                if kind == "move":
                    metrics.BUS_GAPS.inc()
                    log.info(
                        "game %s: move %s came from another process after move %s here: read again",
                        live.id,
                        event.get("number"),
                        live.move_count,
                    )
                await self.games.refresh(live)
        live.changed_at = time.monotonic()
        self.games.tell(live)
        self.games.bots.schedule(live)
        self.games.evict_soon(live)

    def _resync(self) -> None:
        """Back on Redis after a break: events of the meantime are lost (pub/sub keeps none), so every
        game in memory is read again from the database and its watchers get the whole state."""

        async def resync() -> None:
            for live in list(self.games.live.values()):
                async with live.lock:
                    read = await self.games.read_again(live)
                if read:
                    self.games.going_on(live)

        self.games.spawn(resync())

    def _lease_lost(self, game_id: str) -> None:
        live = self.games.live.get(game_id)
        if live is not None:
            log.warning("game %s: this process no longer runs it (lease lost)", game_id)
            self.games.bots.cancel(live)
            self.games.evict_soon(live)

    async def _adopt_loop(self) -> None:
        """Take over the games no process runs: at once when their owner gave them up as it
        drained, within a few seconds when it died (its leases lapse)."""
        released = False
        while True:
            self._adopt_now.clear()
            try:
                await self._adopt(catch_up=not released)
            except Exception:
                log.exception("games without an owner could not be adopted")
            released = False
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._adopt_now.wait(), self.games.settings.adopt_interval)
                released = True

    async def _adopt(self, catch_up: bool = True) -> None:
        """One round: copies the database moved past read again (``catch_up``; not when games
        were just given up: the copies of those are checked as they are adopted), then the games
        nobody runs adopted."""
        started = time.monotonic()
        if catch_up:
            await self._catch_up()
        ids = await self.games.read(partial(store.unfinished_ids, ended=ENDED))
        if not ids:
            return
        holders = await self.games.bus.holders(ids)
        orphans = [game_id for game_id in ids if holders.get(game_id) is None]
        random.shuffle(orphans)  # several processes adopting at once share the games out
        adopted = await self.games.bus.acquire_many(orphans)
        if not adopted:
            return
        # until each is run here, a client connecting meanwhile has its copy checked (catch_up)
        self._adopting.update(adopted)
        try:
            await self._take_over(adopted, started)
        finally:
            self._adopting.difference_update(adopted)

    async def _take_over(self, adopted: list[str], started: float) -> None:
        """Run the games whose leases were just taken: a copy in memory (kept for watchers, or
        read ahead for a process that drains) at once if the database has not moved past it, the
        others read, a batch at a time."""
        stored = await self.games.read(partial(store.stored_progress, ids=adopted))
        current = [
            game_id
            for game_id in adopted
            if (live := self.games.live.get(game_id)) is not None
            and stored.get(game_id) == (live.move_count, live.status)
        ]
        for game_id in current:
            self._adopted(self.games.live[game_id])
        self._adopting.difference_update(current)
        behind = [
            live for game_id in adopted if game_id not in current and (live := self.games.live.get(game_id))
        ]
        for live in behind:  # a copy nobody watches here is read again with the unread games
            if not live.subscribers:
                del self.games.live[live.id]
        behind = [live for live in behind if live.subscribers]
        unread = [game_id for game_id in adopted if game_id not in self.games.live]
        # read together, a batch at a time (the clients reconnecting here wait for the same reads),
        # and each game run as soon as it is read
        loading = self.games.loading(unread)
        for game_id in unread:
            try:
                live = await asyncio.shield(loading[game_id])
            except Exception:  # reported where it failed: another process may read it
                await self.games.bus.release(game_id)
            else:
                self._adopted(self.games.live.setdefault(game_id, live))
            self._adopting.discard(game_id)
        for live in behind:  # a copy the database has moved past, watched here: read again
            async with live.lock:
                read = await self.games.read_again(live)
            if read:
                self._adopted(live)
            else:
                await self.games.bus.release(live.id)
        log.info(
            "adopted %d games without an owner (%d read from the database) in %.0f ms",
            len(adopted),
            len(unread) + len(behind),
            1000 * (time.monotonic() - started),
        )

    def _adopted(self, live: LiveGame) -> None:
        log.info("game %s adopted: this process runs it now", live.id)
        live.changed_at = time.monotonic()
        self.games.tell(live)
        self.games.bots.schedule(live, resumed=True)

    async def _catch_up(self) -> None:
        """Read again the games in memory that the database has moved past: a process that
        committed a move (or ended a game) and was killed before it published it tells nobody.
        A game is read again only when it was behind on the previous round too, so that events
        still on their way never cost a read."""
        ids = [game_id for game_id, live in self.games.live.items() if live.status not in ENDED]
        if not ids:
            self._behind = {}
            return
        stored = await self.games.read(partial(store.stored_progress, ids=ids))
        behind: dict[str, tuple[int, str]] = {}
        for game_id, (moves, status) in stored.items():
            live = self.games.live.get(game_id)
            if live is None or (moves <= live.move_count and status == live.status):
                continue
            seen = self._behind.get(game_id)
            still_behind = seen is not None and (
                live.move_count < seen[0] or (live.move_count == seen[0] and live.status != seen[1])
            )
            if not still_behind:
                # perhaps an event on its way: look again on the next round
                behind[game_id] = (moves, status)
                continue
            log.warning("game %s: the database is at move %d (%s), never told here", game_id, moves, status)
            async with live.lock:
                read = await self.games.read_again(live)
            if read:
                self.games.going_on(live)
        self._behind = behind

    async def _presence_loop(self) -> None:
        """Say again which seats are online through this process (the others forget after a while)."""
        while True:
            await asyncio.sleep(PRESENCE_EVERY)
            for live in list(self.games.live.values()):
                online, spectators = live.local_presence()
                if online or spectators:
                    self.publish(
                        live.id, {"type": "presence", "seats": sorted(online), "spectators": spectators}
                    )
