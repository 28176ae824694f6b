"""The games this process holds in memory, and the one path every move takes.

Each game in progress lives here as a :class:`~coloretto.web.table.live.LiveGame` (the core's
:class:`~coloretto.match.Match` plus the table) and in the database as its rules, its secret seed,
its seats and its accepted moves. A move is checked by the engine, committed by the group-commit
writer (:mod:`coloretto.web.runtime.writer`), and only then played here, shown to every watcher
here (:mod:`coloretto.web.runtime.broadcast`), told to the other server processes
(:mod:`coloretto.web.runtime.sync` sets :attr:`Games.publish`) and followed by the next bot's turn
or clock (:mod:`coloretto.web.runtime.botrunner`). Nothing that goes wrong on that path is
swallowed: it is reported (:mod:`coloretto.web.common.incidents`) and the game is read again from
the database (:meth:`Games.recover`); a watchdog is the last guard.

The features (lobby, seats, play, chat, reviews, accounts …) are handed a :class:`Games` and use
it; this module knows none of them.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import time
from collections import Counter
from collections.abc import Callable, Iterator
from functools import partial
from typing import Any

from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from coloretto.actions import Action
from coloretto.arena.stats import place_seats
from coloretto.game import IllegalActionError
from coloretto.match import Match
from coloretto.rules import Rules
from coloretto.web.common import metrics
from coloretto.web.common.errors import ServiceError
from coloretto.web.common.i18n import explained
from coloretto.web.common.i18n import gettext as _
from coloretto.web.common.incidents import Incidents
from coloretto.web.common.schemas import TableState
from coloretto.web.common.settings import Settings
from coloretto.web.runtime.botrunner import BotRunner
from coloretto.web.runtime.broadcast import Broadcaster
from coloretto.web.runtime.bus import Bus, LocalBus
from coloretto.web.runtime.cluster import RedisBus, cancel_and_wait, open_bus
from coloretto.web.runtime.replay import advance, apply_remote_move, replay_each, replay_stored
from coloretto.web.runtime.workers import BotPool, shared_pool
from coloretto.web.runtime.writer import GroupCommitWriter
from coloretto.web.storage import games as store
from coloretto.web.storage.ratings import rating_job
from coloretto.web.table import views
from coloretto.web.table.live import ENDED, LiveGame, now_utc, stopped_message
from coloretto.web.table.watchers import Subscriber

log = logging.getLogger("coloretto.web")

#: seconds before a state that could not be shown is sent again
RETELL_PAUSE = 0.5
#: games read from the database together (a process adopting a stopped one's games)
READ_TOGETHER = 50
#: reads of a game older than its copy here (see :meth:`Games.refresh`) before the copy is kept
READS_BEHIND = 3
#: the cyclic garbage collector's thresholds while serving (see tune_garbage_collector)
GC_THRESHOLDS = (700, 10, 1_000)

#: pushed to a watcher's queue: its connection closes, after what was queued, with 1012 (service
#: restart): the client reconnects at once (to another process, or to this one once it is back)
RESTART_CLOSE: dict[str, Any] = {"type": "__close__", "code": 1012}

#: tells the other server processes about a change of a game: (game id, event)
Publish = Callable[[str, dict[str, Any]], None]
#: a game's statuses, as /metrics counts the games in memory
GAME_STATUSES = ("open", "playing", *ENDED)


def tune_garbage_collector() -> None:
    """Keep the collector from pausing the event loop. A full collection scans every object the
    server holds (500 games in play: 50-160 ms each, several a minute by Python's defaults, the
    worst waits at the table and on /api/health). What exists at start (the libraries, the games
    loaded) lives as long as the server: it is frozen out of the collector's sight; and full
    collections are made rare. Almost nothing the server makes is freed by the cycle collector
    rather than by reference counting, so memory does not grow for it."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)


class Games:
    """The games in memory here: loaded, played, shown, recovered; the bots and clocks of those
    this process runs."""

    def __init__(
        self,
        sessions: sessionmaker[Session],
        settings: Settings | None = None,
        *,
        bus: Bus | None = None,
        pool: BotPool | None = None,
    ) -> None:
        self.sessions = sessions
        self.settings = settings or Settings()
        self.live: dict[str, LiveGame] = {}
        self.writer = GroupCommitWriter(sessions)
        self.bus = bus if bus is not None else open_bus(self.settings.redis_url)
        self._pool = pool
        self.fanout = Broadcaster(self.live_view, self.settings.presence_interval)
        #: the live path's errors, logged and counted (see coloretto.web.common.incidents)
        self.incidents = Incidents()
        self.fanout.incidents = self.incidents
        self.bots = BotRunner(self)
        #: set once stop() begins: no bot turn or clock starts any more
        self.stopping = False
        #: tells the other processes (set by coloretto.web.runtime.sync; alone, nobody to tell)
        self.publish: Publish = lambda game_id, event: None
        #: game -> monotonic time until which it stays in memory though nobody watches it here (its
        #: process drains and this one may adopt it: coloretto.web.runtime.sync reads it ahead)
        self.standby: dict[str, float] = {}
        self._loading: dict[str, asyncio.Future[LiveGame]] = {}
        #: moves on their way to the database (each runs to its end, see commit_move)
        self._committing: set[asyncio.Task[store.MoveWrite]] = set()
        self._tasks: list[asyncio.Task[None]] = []
        self._background: set[asyncio.Task[Any]] = set()

    # ---------------------------------------------------------------- start

    async def start(self) -> None:
        """Start the writer and the bot workers (warming in the background); alone (no other
        process), load every unfinished game and let the bots whose turn it is move; start the
        watchdog."""
        self.writer.start()
        self.pool()
        metrics.watch(self)
        if not self.clustered:
            ids = await self.read(partial(store.unfinished_ids, ended=ENDED))
            for game_id in ids:
                try:
                    live = await self.replayed(game_id)
                except Exception:  # a corrupt game must not keep the others from starting
                    log.exception("game %s could not be loaded", game_id)
                    continue
                await self.bus.acquire(game_id)
                self.live[game_id] = live
            for live in self.live.values():
                self.bots.schedule(live, resumed=True)
        self._tasks.append(asyncio.get_running_loop().create_task(self._watchdog(), name="watchdog"))

    async def stop(self) -> None:
        """Stop every bot and clock, tell every watcher here the server is going, write what was
        accepted, and close the bus."""
        self.stopping = True
        metrics.unwatch(self)
        await cancel_and_wait(self._tasks)
        self._tasks = []
        tasks = [lv.bot_task for lv in self.live.values() if lv.bot_task and not lv.bot_task.done()]
        for live in self.live.values():
            self.bots.cancel(live)
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        for live in self.live.values():
            for sub in list(live.subscribers):
                sub.push(RESTART_CLOSE)  # the messages queued first, then: reconnect
        await self.writer.close()
        with contextlib.suppress(Exception):
            await self.bus.close()

    def metric_samples(self) -> Iterator[metrics.Sample]:
        """The gauges of ``/metrics`` this process's games give: the games in memory by status,
        the writes queued, the leases held."""
        statuses = Counter(live.status for live in list(self.live.values()))
        for status in (*GAME_STATUSES, *sorted(set(statuses) - set(GAME_STATUSES))):
            yield "coloretto_games_in_memory", (status,), float(statuses[status])
        yield "coloretto_writer_queue_depth", (), float(self.writer.queued())
        if isinstance(self.bus, RedisBus):
            yield "coloretto_leases_held", (), float(len(self.bus.owned()))

    async def settle(self, timeout: float) -> bool:
        """Wait until the moves on their way to the database and every write queued before are
        committed (a server draining before it exits); False if that took over ``timeout``."""
        deadline = time.monotonic() + timeout
        if self._committing:
            _, pending = await asyncio.wait(set(self._committing), timeout=timeout)
            if pending:
                return False
        try:
            await asyncio.wait_for(self.writer.flush(), max(0.0, deadline - time.monotonic()))
        except TimeoutError:
            return False
        return True

    @property
    def clustered(self) -> bool:
        """Other server processes share the database (a Redis bus joins them)."""
        return not isinstance(self.bus, LocalBus)

    def pool(self) -> BotPool:
        if self._pool is None:
            self._pool = shared_pool(self.settings.bot_workers, self.settings.worker_job_timeout)
        return self._pool

    def owns(self, live: LiveGame) -> bool:
        """Whether this process runs this copy of the game: it holds the game's lease, and
        ``live`` is the copy in memory. An older object of the same game (dropped from memory and
        read again, while an event or a request still held it) runs no bot or clock: it would
        write the game's moves beside the copy in memory, each failing on the other's."""
        return self.bus.owns(live.id) and self.live.get(live.id) is live

    async def read(self, job: Any) -> Any:
        """A read of the database, in a thread: the event loop only waits."""

        def run() -> Any:
            with self.sessions() as session:
                return job(session)

        return await asyncio.to_thread(run)

    async def write(self, job: Any, *, housekeeping: bool = False) -> Any:
        return await self.writer.write(job, housekeeping=housekeeping)

    async def stored(self, game_id: str) -> store.StoredGame:
        stored = await self.read(partial(store.read_game, game_id=game_id))
        if stored is None:
            raise ServiceError("not_found", _("there is no game {game}", game=repr(game_id)), 404)
        return stored

    async def replayed(self, game_id: str) -> LiveGame:
        return await asyncio.to_thread(replay_stored, await self.stored(game_id))

    async def get_live(self, game_id: str, keep: bool = False) -> LiveGame:
        """The game in memory, read from the database if it is not. A game in progress stays in
        memory while it is watched here (else until the next sweep), kept up to date through the
        other processes' events; a game that is over only with ``keep`` (a client that watches
        it: its chat, who watches and its rematch are still told)."""
        live = self.live.get(game_id)
        if live is None:
            live = await self._load(game_id)
        if keep and live.status in ENDED:
            live = self.live.setdefault(game_id, live)
        return live

    async def _load(self, game_id: str) -> LiveGame:
        if len(game_id) > 16:
            raise ServiceError("not_found", _("there is no such game"), 404)
        return await asyncio.shield(self.loading([game_id])[game_id])

    def loading(self, game_ids: list[str]) -> dict[str, asyncio.Future[LiveGame]]:
        """Each game's read from the database (:meth:`get_live` for many: a process adopting
        another's games): the one under way, or one begun now for every game not being read yet,
        :data:`READ_TOGETHER` at a time, in the order given (whoever asks meanwhile waits for the
        same read). A future answers the game in memory, or a ServiceError."""
        futures = {game_id: self._loading[game_id] for game_id in game_ids if game_id in self._loading}
        new = [game_id for game_id in dict.fromkeys(game_ids) if game_id not in futures]
        if new:
            loop = asyncio.get_running_loop()
            for game_id in new:
                futures[game_id] = self._loading[game_id] = loop.create_future()
                # retrieved here: a reader that gave up waiting leaves no "never retrieved" warning
                futures[game_id].add_done_callback(lambda f: f.cancelled() or f.exception())
            self.spawn(self._read_games(new))
        return futures

    async def _read_games(self, game_ids: list[str]) -> None:
        """Read and replay the games, a batch at a time, and tell their readers (:meth:`loading`)."""
        for start in range(0, len(game_ids), READ_TOGETHER):
            batch = game_ids[start : start + READ_TOGETHER]
            replayed: dict[str, LiveGame | Exception] = {}
            try:
                stored = await self.read(partial(store.read_games, ids=batch))
                replayed = await asyncio.to_thread(replay_each, stored)
            except Exception as exc:
                replayed = dict.fromkeys(batch, exc)
            for game_id in batch:
                self._told(game_id, self._loading.pop(game_id), replayed.get(game_id))

    def _told(
        self, game_id: str, future: asyncio.Future[LiveGame], result: LiveGame | Exception | None
    ) -> None:
        if isinstance(result, LiveGame):
            future.set_result(self.live.setdefault(game_id, result) if result.status not in ENDED else result)
        elif result is None:
            future.set_exception(
                ServiceError("not_found", _("there is no game {game}", game=repr(game_id)), 404)
            )
        else:
            log.error("game %s could not be loaded", game_id, exc_info=result)
            problem = _("game {game} cannot be rebuilt: {problem}", game=game_id, problem=result)
            future.set_exception(ServiceError("unreadable", problem, 500))

    async def refresh(self, live: LiveGame) -> None:
        """Read the game again from the database (another process changed it). Holds its lock.

        A read with fewer moves than this copy has played is older than the copy: a move of this
        process committed after the read began (its caller cancelled, the lock was free), and was
        played here since. Such a read is not taken (it would put the table back a move, under
        clients already shown the newer one); the game is read again, and after
        :data:`READS_BEHIND` such reads this copy, newer than all of them, stays."""
        for _read in range(READS_BEHIND):
            stored = await self.stored(live.id)
            fresh = await asyncio.to_thread(replay_stored, stored)
            if fresh.move_count >= live.move_count:
                self.step_to(live, stored.moves, fresh)
                return

    def step_to(self, live: LiveGame, moves: list[tuple[int, int, str]], fresh: LiveGame) -> None:
        """Make ``live`` the ``fresh`` copy of the same game just replayed from the database's
        ``moves``. Its watchers are shown every move in order, those this process was never told
        about too (an event that came late, a process killed between its commit and its event, a
        game adopted from another process): the missing moves but the last are played here one
        by one, each one's state sent; the caller sends the last. Table animations follow them."""
        for number, seat, text in moves[live.move_count : -1]:
            if number != live.move_count + 1 or live.status in ENDED or not live.subscribers:
                break
            try:
                apply_remote_move(live, {"move": text, "seat": seat, "at": fresh.updated_at.isoformat()})
            except Exception:  # this copy went another way: the fresh one replaces it at once
                break
            self.tell(live)
        live.take_state_of(fresh)
        live.read_at = time.monotonic()

    async def store_new_game(self, new: store.NewGame, write: Any, **args: Any) -> LiveGame | None:
        """Store a new game with ``write(session, new=new, **args)`` (which answers the id of the
        game it stored, or of another one it found instead, or None) and run it here; None when
        ``write`` stored another game instead."""
        # the lease first: once the game is stored, another process's adoption could take it, and
        # this process would run a game none of its clients are connected to
        try:
            if not await self.bus.acquire(new.id):
                raise RuntimeError(f"the lease of the new game {new.id} is held by another process")
            stored = await self.write(partial(write, new=new, **args))
        except Exception as exc:
            log.exception("a game could not be stored")
            with contextlib.suppress(Exception):
                await self.bus.release(new.id)
            raise ServiceError("storage", _("the game could not be saved: try again"), 503) from exc
        if stored is not None and stored != new.id:
            await self.bus.release(new.id)
            return None
        rules = Rules.from_dict(new.rules)
        live = LiveGame(
            id=new.id,
            name=new.name,
            status=new.status,
            rules=rules,
            seed=new.seed,
            seats=new.seats,
            created_at=new.created_at,
            updated_at=new.created_at,
            match=Match(rules, new.seed),
            move_seconds=new.move_seconds,
            game_seconds=new.game_seconds,
            turn_started_at=new.created_at if new.status == "playing" else None,
            rated=new.rated,
            private=new.private,
            creator_seat=new.creator_seat,
            rematch_of=new.rematch_of,
        )
        self.live[new.id] = live
        self.bots.schedule(live)
        return live

    async def end_games(self, games: list[LiveGame], was: str, becomes: str) -> None:
        if not games:
            return
        now = now_utc()
        changed = set(
            await self.write(
                partial(store.end_games, ids=[lv.id for lv in games], was=was, becomes=becomes, now=now)
            )
        )
        for live in games:
            if live.id not in changed:
                continue
            live.status = becomes
            live.updated_at = now
            self.bots.cancel(live)
            self.changed(live, {"type": "reload"})

    async def commit_move(self, live: LiveGame, seat: int, action: Action) -> store.MoveWrite:
        """Store an action (the caller holds the game's lock), then play it here, tell everyone and
        let the next bot or clock run. Nothing is played, and nobody told, before the move is
        committed: the game is only looked ahead in to write it down.

        Once the move is on its way to the database this runs to its end even if the caller is
        cancelled meanwhile (a bot's turn given up, a connection closed, the server stopping): a
        stored move is always played here and told, never left in the database alone with the
        table in memory a move behind and nobody to move it on.

        Raises ServiceError: illegal, stale (another process stored a move first), storage."""
        match = live.match
        try:
            notation = match.push(action).notation(live.rules.edition)
        except IllegalActionError as exc:
            raise ServiceError("illegal", _("illegal move: {reason}", reason=explained(exc))) from None
        status, result, ratings = live.status, None, None
        if match.is_over:
            # the core's standings; a seat whose person resigned ranks below every other (its bot
            # played on, but the person gave the game up)
            placing = place_seats(
                match.totals(), match.minus_points(), [s.resigned for s in live.seats], live.rules
            )
            status, result = "finished", {**match.result(), "ranks": list(placing.ranks)}
            if live.rated:
                ratings = rating_job(live, placing.ranks)
        number, deal = live.move_count, live.deal
        match.pop()
        now = now_utc()
        time_used = None
        if live.game_seconds is not None and not live.bot_plays(seat):
            time_used = live.seats[seat].time_used + live.time_spent(now)
        write = store.MoveWrite(
            live.id, number, deal, seat, notation, now, status, result, time_used, ratings
        )
        task = asyncio.ensure_future(self._commit(live, write, action))
        self._committing.add(task)
        task.add_done_callback(self._committing.discard)
        return await asyncio.shield(task)

    async def _commit(self, live: LiveGame, write: store.MoveWrite, action: Action) -> store.MoveWrite:
        number = write.number
        try:
            changes = await self.write(partial(store.store_move, write=write))
        except IntegrityError:
            # another process stored a move with this number first: catch up with the database,
            # and show the table as it is (that process may have died before it could tell anyone)
            await self.caught_up(live)
            raise ServiceError(
                "stale", _("the table has changed (move {move}): look again", move=live.move_count), 409
            ) from None
        except store.GameStopped:
            # a moderator ended the game (perhaps through another process, or the command line):
            # nothing was stored; the table is read again and shown ended
            await self.caught_up(live)
            raise ServiceError("stopped", stopped_message(live.stop_reason), 409) from None
        except Exception as exc:
            self.incidents.record("writer", live, f"move {number + 1} could not be stored", exc)
            raise ServiceError(
                "storage", _("the move could not be saved; nothing was played: try again"), 503
            ) from exc
        metrics.moves_committed["bot" if live.bot_plays(write.seat) else "person"].inc()
        try:
            self._play(live, write, action)
        except Exception as exc:
            # stored, but this copy of the game would not take it: the database's is the game
            self.incidents.record("recover", live, f"move {number + 1} was stored but not played here", exc)
            self.spawn(self.recover(live))
            return write
        if changes is not None:
            live.rating_changes = changes
        self.after_move(live, write)
        return write

    async def caught_up(self, live: LiveGame) -> None:
        """Read the game again (the caller holds its lock), show it and let its bot or clock run;
        a game that cannot be read is left to :meth:`recover`."""
        if await self.read_again(live):
            self.going_on(live)
        else:
            self.spawn(self.recover(live, pause=RETELL_PAUSE))

    async def read_again(self, live: LiveGame) -> bool:
        """:meth:`_refresh`, the caller holding the game's lock; False (reported) when it failed."""
        try:
            await self.refresh(live)
        except Exception as exc:
            self.incidents.record("recover", live, "the game could not be read again", exc)
            return False
        return True

    def going_on(self, live: LiveGame) -> None:
        """The game as read again: every watcher here shown it, its bot or clock set going."""
        live.changed_at = time.monotonic()
        if not self.fanout.state(live):  # sent again by the next change (no loop of retries)
            self.incidents.record("recover", live, "the game was read again but could not be shown")
        self.bots.schedule(live)
        self.evict_soon(live)

    def _play(self, live: LiveGame, write: store.MoveWrite, action: Action) -> None:
        """Play a committed move in memory."""
        live.match.push(action)
        live.updated_at = write.at
        live.turn_started_at = write.at
        if write.time_used is not None:
            live.seats[write.seat].time_used = write.time_used
        if write.status == "finished":
            live.status = "finished"
        advance(live)

    def after_move(self, live: LiveGame, write: store.MoveWrite) -> None:
        """Tell everyone, here and in the other processes, then let the next bot or clock run."""
        event = {
            "type": "move",
            "number": write.number,
            "seat": write.seat,
            "move": write.move,
            "at": write.at.isoformat(),
            "time_used": write.time_used,
        }
        if write.status == "finished" and live.rating_changes is not None:
            event["ratings"] = [change.model_dump(mode="json") for change in live.rating_changes]
        self.changed(live, event)

    def changed(self, live: LiveGame, event: dict[str, Any]) -> None:
        """The table changed: every watcher here is shown it, the other processes told, the next
        bot or clock set going. Each step runs whatever the one before it raised."""
        live.changed_at = time.monotonic()
        self.tell(live)
        self.publish(live.id, event)
        try:
            self.bots.schedule(live)
        except Exception as exc:
            self.incidents.record("bot", live, "the next bot or clock could not be set going", exc)
            self.spawn(self.recover(live, pause=1.0))
        self.evict_soon(live)

    def tell(self, live: LiveGame) -> None:
        """Show every watcher here the table; a watcher whose view could not be made is sent it
        again a moment later (and the game read again from the database if it fails once more)."""
        if not self.fanout.state(live):
            self.spawn(self._tell_again(live))

    async def _tell_again(self, live: LiveGame) -> None:
        await asyncio.sleep(RETELL_PAUSE)
        if not self.fanout.state(live):
            await self.recover(live)

    async def recover(self, live: LiveGame, pause: float = 0.0) -> None:
        """Put a game back on its feet after a fault: read it again from the database (a move
        stored but not played here is played now), show every watcher here the whole table, and
        let its bot or clock run. A game that cannot be read is left to the next try: the
        watchdog's, or (with several processes) another process's, to which its lease is given."""
        if pause:
            await asyncio.sleep(pause)
        if self.stopping:
            return
        async with live.lock:
            read = await self.read_again(live)
        if read:
            self.going_on(live)
        elif self.clustered and self.owns(live):
            self.bots.cancel(live)
            await self.bus.release(live.id)  # another process adopts it

    async def set_away(self, live: LiveGame, seat: int, away: bool) -> None:
        async with live.lock:
            changed = await self.set_away_locked(live, seat, away)
        if changed:
            self.changed(live, {"type": "reload"})

    async def set_away_locked(self, live: LiveGame, seat: int, away: bool) -> bool:
        """A bot takes a person's seat over, or the person takes it back (their turn starts again)."""
        if live.seats[seat].away == away or live.seats[seat].kind != "human":
            return False
        now = now_utc()
        restarts = not away and live.game.to_move == seat
        time_used = None
        if away and live.game_seconds is not None and live.game.to_move == seat:
            # the turn that ran out is paid from the bank, as if the person had moved at its end
            time_used = live.seats[seat].time_used + live.time_spent(now)
        await self.write(
            partial(
                store.set_away,
                game_id=live.id,
                seat=seat,
                away=away,
                now=now,
                turn_restarts=restarts,
                time_used=time_used,
            )
        )
        live.seats[seat].away = away
        if time_used is not None:
            live.seats[seat].time_used = time_used
        if restarts:
            live.turn_started_at = now
        return True

    def state(self, live: LiveGame, seat: int | None) -> TableState:
        return views.table_state(live, seat, self.settings.bot_delay)

    def live_view(self, live: LiveGame, seat: int | None, shared: dict[str, Any] | None) -> dict[str, Any]:
        """:meth:`state` as the live messages send it (:func:`views.live_view`)."""
        return views.live_view(live, seat, self.settings.bot_delay, shared)

    def tell_thinking(self, live: LiveGame, seat: int | None) -> None:
        """A bot has been thinking a while (or has answered): shown at the table, everywhere."""
        live.thinking = seat
        message = {"type": "thinking", "seat": seat, "move": live.move_count}
        self.fanout.message(live, message)
        self.publish(live.id, message)

    def subscribe(self, live: LiveGame, sub: Subscriber) -> LiveGame:
        """Add a watcher to the game; the answer is the copy it watches: the one in memory, which
        ``live`` may no longer be (dropped from memory while the client connected, it is kept
        again)."""
        live = self.live.setdefault(live.id, live)
        if len(live.subscribers) >= self.settings.max_connections_per_game:
            raise ServiceError(
                "too_many_connections",
                _(
                    "this game already has {connections} connections (limit {limit})",
                    connections=len(live.subscribers),
                    limit=self.settings.max_connections_per_game,
                ),
                429,
            )
        before = live.local_presence()
        live.subscribers.add(sub)
        self.seat_changed(live, before)
        return live

    def unsubscribe(self, live: LiveGame, sub: Subscriber) -> None:
        before = live.local_presence()
        live.subscribers.discard(sub)
        self.seat_changed(live, before)
        self.evict_soon(live)

    def seat_changed(self, live: LiveGame, before: tuple[frozenset[int], int]) -> None:
        """A watcher here came, took a seat or left (``before``: who was connected here, as
        :meth:`LiveGame.local_presence` said): the others see who is online and how many watch
        (soon), the other processes are told, and the owner's clock knows who has gone."""
        now = live.local_presence()
        if now == before:
            return
        self.fanout.presence(live)
        self.publish(live.id, {"type": "presence", "seats": sorted(now[0]), "spectators": now[1]})
        if now[0] == before[0]:
            return
        for seat in before[0] - now[0]:
            if seat not in live.online():
                live.offline_since[seat] = time.monotonic()
        for seat in now[0] - before[0]:
            live.offline_since.pop(seat, None)
        self.bots.schedule(live)

    def send_state(self, live: LiveGame, sub: Subscriber) -> None:
        if not self.fanout.one(live, sub):
            self.spawn(self._tell_again(live))

    def evict_soon(self, live: LiveGame) -> None:
        """A game nobody watches here leaves memory when it is over or another process runs it:
        it is read from the database again on demand (a game in :attr:`standby` stays a while)."""
        if live.subscribers or self.live.get(live.id) is not live:
            return
        if live.status not in ENDED and self.standby.get(live.id, 0.0) > time.monotonic():
            return
        owned = self.owns(live)  # asked before it leaves memory: only the copy in memory is owned
        if live.status in ENDED or not owned:
            del self.live[live.id]
            self.bots.cancel(live)
            if owned:
                self.spawn(self.bus.release(live.id))

    def spawn(self, coroutine: Any) -> None:
        """Run ``coroutine`` in the background, kept until it ends; what it raises is reported."""
        task = asyncio.get_running_loop().create_task(coroutine)
        self._background.add(task)
        task.add_done_callback(self._background_done)

    def _background_done(self, task: asyncio.Task[Any]) -> None:
        self._background.discard(task)
        if not task.cancelled() and (error := task.exception()) is not None:
            self.incidents.record("background", None, f"a background task ({task.get_name()}) failed", error)

    async def _watchdog(self) -> None:
        """The last guard of every game this process runs: one whose bot or clock should have
        moved it on by now and has not (:meth:`BotRunner.stuck`) is reported and recovered. With
        several processes each looks at the games whose leases it holds; a game whose owner died
        is adopted by another (a lease nobody renews lapses)."""
        while True:
            await asyncio.sleep(self.settings.watchdog_every)
            for live in list(self.live.values()):
                try:
                    why = self.bots.stuck(live)
                except Exception as exc:
                    self.incidents.record("watchdog", live, "the watchdog could not look at the game", exc)
                    continue
                if why is None:
                    continue
                self.incidents.record("watchdog", live, f"the game is stuck: {why}; it is read again")
                task = live.bot_task
                if task is not None and not task.done():
                    task.cancel()  # a move it was storing is still played (commit_move)
                live.bot_task = None
                live.changed_at = time.monotonic()  # looked at again only after another stuck_after
                self.spawn(self.recover(live))
