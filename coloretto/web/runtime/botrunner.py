"""The bots and turn clocks of the games this process owns.

A game's bots move and its clock runs only in the process holding its lease
(:mod:`coloretto.web.runtime.cluster`; the single-process server holds every lease).
A bot thinks in a worker process (:mod:`coloretto.web.runtime.workers`), never here,
and without the game's lock, so people keep acting meanwhile; its answer is
played only if the table is still where it was. When a person's turn runs
past their clock, or they have been gone too long on a timed table, a bot
takes the seat over until they come back.

A bot's turn is one task, started by :meth:`BotRunner.schedule` after every
change and tagged with the move it is for. A task that the table has moved
past (a person took the seat back and moved) never holds up the next one:
``schedule`` starts the task for the move now whatever older one is still
finishing. Nothing a turn or a clock raises is swallowed: it is reported to
:mod:`coloretto.web.common.incidents` and the game is put back on its feet
(``Games.recover``). The watchdog (:meth:`BotRunner.stuck`) is the last
guard: a game whose bot or clock should have moved and has not is reported and
recovered the same way.
"""

from __future__ import annotations

import asyncio
import logging
import random
import secrets
import time
from typing import Any, Protocol

from coloretto.actions import Action
from coloretto.bots import BotSpecError, check_bot
from coloretto.web.common.errors import ServiceError
from coloretto.web.common.faults import inject
from coloretto.web.common.incidents import Incidents
from coloretto.web.common.settings import Settings
from coloretto.web.runtime.workers import BotPool
from coloretto.web.table.live import LiveGame, bot_seed, now_utc

log = logging.getLogger("coloretto.web")

#: a bot that has not answered after this long is shown thinking (quick ones never are)
THINKING_AFTER = 0.2
#: seconds a turn that failed waits before the game is read again (a database that is back)
RECOVER_PAUSE = 1.0


class TurnHost(Protocol):
    """What the bots and clocks ask of the games they run (coloretto.web.runtime.games.Games)."""

    settings: Settings
    incidents: Incidents
    stopping: bool

    def owns(self, live: LiveGame) -> bool: ...

    def pool(self) -> BotPool: ...

    def tell_thinking(self, live: LiveGame, seat: int | None) -> None: ...

    async def commit_move(self, live: LiveGame, seat: int, action: Action) -> Any: ...

    async def recover(self, live: LiveGame, pause: float = 0.0) -> None: ...

    async def set_away(self, live: LiveGame, seat: int, away: bool) -> None: ...


class BotRunner:
    """The bots' turns and the turn clocks of the games a :class:`TurnHost` runs."""

    def __init__(self, service: TurnHost) -> None:
        self.service = service
        self.settings = service.settings

    def schedule(self, live: LiveGame, *, resumed: bool = False) -> None:
        """After any change: a bot to move moves (after the bot delay); a person's clock is set.
        ``resumed``: the turn began before this process ran the game (it adopted the game from a
        process that stopped, or was restarted itself): the bot waits only what is left of its
        delay, counted from the turn's start, not a whole delay more than people saw it wait."""
        if not self.service.owns(live) or self.service.stopping:
            self.cancel(live)
            return
        self._arm_clock(live)
        if live.status != "playing" or self.turn_running(live):
            return
        seat = live.game.to_move
        if seat is None or not live.bot_plays(seat):
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        live.bot_move = live.move_count
        self._phase(live, "delay")
        live.bot_task = loop.create_task(self._turn(live, live.move_count, resumed), name=f"bot {live.id}")

    @staticmethod
    def turn_running(live: LiveGame) -> bool:
        """A bot's turn for the move the table is at now is under way (one for an earlier move
        that is still finishing does not count: it will see the table has moved on)."""
        task = live.bot_task
        return task is not None and not task.done() and live.bot_move == live.move_count

    def cancel(self, live: LiveGame) -> None:
        """This process no longer runs the game (lease lost, game over, the server stopping). A
        turn whose move is being stored is left to end: its move is stored, played and told
        whatever happens (Games.commit_move finishes what it began), and while it is under way no
        other turn starts for the same move (this process running the game again at once, after
        a lease lost to a late renewal, would store a second move with its number)."""
        if live.clock_timer is not None:
            live.clock_timer.cancel()
            live.clock_timer = None
        if live.clock_task is not None and not live.clock_task.done():
            live.clock_task.cancel()
        live.clock_task = None
        storing = live.bot_phase == "commit" and self.turn_running(live)
        if not storing:
            if live.bot_task is not None and not live.bot_task.done():
                live.bot_task.cancel()
            live.bot_task = None

    @staticmethod
    def _phase(live: LiveGame, phase: str) -> None:
        live.bot_phase = phase
        live.bot_phase_at = time.monotonic()

    async def _turn(self, live: LiveGame, expected: int, resumed: bool) -> None:
        try:
            await self._play_turn(live, expected, resumed)
        except asyncio.CancelledError:
            raise
        except ServiceError:  # its move was not stored (reported where it happened): try again
            await self._recover_later(live)
        except Exception as exc:
            self.service.incidents.record("bot", live, "a bot's turn failed", exc)
            await self._recover_later(live)
        finally:
            if live.bot_task is asyncio.current_task():
                self._phase(live, "")

    async def _recover_later(self, live: LiveGame) -> None:
        """After a failed turn: the game read again from the database, its bot set going again."""
        if live.bot_task is asyncio.current_task():
            live.bot_task = None
        await asyncio.sleep(RECOVER_PAUSE)
        await self.service.recover(live)

    def delay(self, live: LiveGame, expected: int) -> float:
        """The bot delay, and a little more drawn from the game's seed (``bot_delay_jitter``)."""
        jitter = self.settings.bot_delay_jitter
        if jitter <= 0:
            return self.settings.bot_delay
        rng = random.Random(bot_seed(live.seed, -1, live.deal, expected))
        return self.settings.bot_delay + rng.uniform(0.0, jitter)

    async def _play_turn(self, live: LiveGame, expected: int, resumed: bool) -> None:
        service = self.service
        delay = self.delay(live, expected)
        if resumed:  # what is left of it (a turn whose start is not known waits it all)
            delay = max(0.0, delay - live.time_spent(now_utc()))
        await asyncio.sleep(delay)
        if live.move_count != expected or live.status != "playing" or not service.owns(live):
            return
        seat = live.game.to_move
        if seat is None or not live.bot_plays(seat):
            return
        inject("bot")
        observation = live.game.observation(seat)
        name = live.bot_name(seat, self.settings.takeover_bot)
        seed = bot_seed(live.seed, seat, live.deal, expected)
        loop = asyncio.get_running_loop()
        shown = loop.call_later(THINKING_AFTER, service.tell_thinking, live, seat)
        self._phase(live, "think")
        action: Action | None
        try:
            action = await service.pool().choose(live.id, name, observation, seed)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            service.incidents.record("worker", live, f"bot {name} failed; it plays a random legal move", exc)
            action = None
        finally:
            shown.cancel()
            if live.thinking is not None:
                service.tell_thinking(live, None)
        self._phase(live, "lock")
        async with live.lock:
            # the table may have moved on while the bot thought (a person took the seat back)
            if live.move_count != expected or live.status != "playing" or live.game.to_move != seat:
                return
            if not live.bot_plays(seat):
                return
            legal = live.game.legal_actions
            if action not in legal:
                action = legal[secrets.randbelow(len(legal))]
            self._phase(live, "commit")
            # stored, played here and told to everyone as one step (see Games.commit_move);
            # a failure is raised here and the game is read again after a pause
            await service.commit_move(live, seat, action)

    def budget(self, live: LiveGame, seat: int) -> float:
        """Seconds the bot of ``seat`` may think: its time budget, or the server's cap on one."""
        try:
            limit = check_bot(live.bot_name(seat, self.settings.takeover_bot), files=False).limit
        except BotSpecError:
            return self.settings.max_bot_time
        if limit is None:
            return 0.0
        return limit.time if limit.time is not None else self.settings.max_bot_time

    # ------------------------------------------------------------ the watchdog

    def stuck(self, live: LiveGame) -> str | None:
        """Why a game this process runs should have moved by now and has not; None if it is fine.

        A bot to move with no turn under way for longer than its delay (a turn that was never
        started: a lost wake-up); a turn waiting for the game's lock or for its move to be stored
        for longer than ``stuck_after``; a person's clock that ran out ``stuck_after`` ago without
        its check having run. A bot that waits for a worker is not stuck: the pool answers every
        job, or fails it, within its own time limit."""
        if live.status != "playing" or not self.service.owns(live):
            return None
        seat = live.game.to_move
        margin = self.settings.stuck_after
        now = time.monotonic()
        if seat is None:
            return "the game is in play but nobody is to move" if now - live.changed_at > margin else None
        if live.bot_plays(seat):
            if not self.turn_running(live):
                waited = now - live.changed_at
                allowed = self.settings.bot_delay + self.settings.bot_delay_jitter + margin
                if waited > allowed:
                    return f"a bot is to move (seat {seat + 1}) and no turn of it began in {waited:.0f} s"
                return None
            phase, since = live.bot_phase, now - live.bot_phase_at
            if phase == "delay":
                allowed = self.settings.bot_delay + self.settings.bot_delay_jitter + margin
            elif phase in ("lock", "commit"):
                allowed = margin
            else:
                return None  # thinking: the pool's own time limit answers for it
            if since > allowed:
                return f"the bot of seat {seat + 1} has been in its {phase!r} step for {since:.0f} s"
            return None
        deadline = live.turn_deadline()
        if deadline is not None and (now_utc() - deadline).total_seconds() > margin:
            return f"seat {seat + 1}'s clock ran out {(now_utc() - deadline).total_seconds():.0f} s ago"
        return None

    # ------------------------------------------------------------ clocks

    def _arm_clock(self, live: LiveGame) -> None:
        """Wake up when the person to move runs out of time, or has been gone too long."""
        if live.clock_timer is not None:
            live.clock_timer.cancel()
            live.clock_timer = None
        deadline = live.turn_deadline()
        if deadline is None:
            return
        seat = live.game.to_move
        assert seat is not None
        wait = (deadline - now_utc()).total_seconds()
        if seat not in live.online():
            gone = live.offline_since.setdefault(seat, time.monotonic())
            wait = min(wait, gone + self.settings.away_after - time.monotonic())
        else:
            live.offline_since.pop(seat, None)
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        expected = live.move_count
        live.clock_timer = loop.call_later(
            max(0.0, wait) + 0.01, self._start_clock_check, live, expected, seat
        )

    def _start_clock_check(self, live: LiveGame, expected: int, seat: int) -> None:
        live.clock_timer = None
        # kept, so that the task is not collected while it waits for the game's lock
        live.clock_task = asyncio.get_running_loop().create_task(
            self._check_clock(live, expected, seat), name=f"clock {live.id}"
        )

    async def _check_clock(self, live: LiveGame, expected: int, seat: int) -> None:
        try:
            await self._run_clock(live, expected, seat)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            self.service.incidents.record("clock", live, "a turn clock's check failed", exc)
            await asyncio.sleep(RECOVER_PAUSE)
            await self.service.recover(live)

    async def _run_clock(self, live: LiveGame, expected: int, seat: int) -> None:
        if live.move_count != expected or live.game.to_move != seat or live.bot_plays(seat):
            return
        deadline = live.turn_deadline()
        if deadline is None:
            return
        inject("clock")
        out_of_time = now_utc() >= deadline
        gone = seat not in live.online() and (
            time.monotonic() - live.offline_since.get(seat, time.monotonic()) >= self.settings.away_after
        )
        if not (out_of_time or gone):
            self.schedule(live)  # woken early (presence changed): set the clock again
            return
        why = "ran out of time" if out_of_time else "has been gone too long"
        log.info("game %s: seat %d %s: a bot plays for it", live.id, seat + 1, why)
        await self.service.set_away(live, seat, True)
