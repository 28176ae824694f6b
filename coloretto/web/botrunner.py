"""The bots and turn clocks of the games this process owns.

A game's bots move and its clock runs only in the process holding its lease
(:mod:`coloretto.web.cluster`; the single-process server holds every lease).
A bot thinks in a worker process (:mod:`coloretto.web.workers`), never here,
and without the game's lock, so people keep acting meanwhile; its answer is
played only if the table is still where it was. When a person's turn runs
past their clock, or they have been gone too long on a timed table, a bot
takes the seat over until they come back.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
from typing import TYPE_CHECKING

from coloretto.actions import Action
from coloretto.web.live import LiveGame, bot_seed, now_utc

if TYPE_CHECKING:
    from coloretto.web.service import GameService

log = logging.getLogger("coloretto.web")

#: a bot that has not answered after this long is shown thinking (quick ones never are)
THINKING_AFTER = 0.2


class BotRunner:
    def __init__(self, service: GameService) -> None:
        self.service = service
        self.settings = service.settings

    def schedule(self, live: LiveGame) -> None:
        """After any change: a bot to move moves (after the bot delay); a person's clock is set."""
        if not self.service.owns(live):
            self.cancel(live)
            return
        self._arm_clock(live)
        if live.status != "playing" or (live.bot_task is not None and not live.bot_task.done()):
            return
        seat = live.game.to_move
        if seat is None or not live.bot_plays(seat):
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        live.bot_task = loop.create_task(self._turn(live, live.move_count), name=f"bot {live.id}")

    def cancel(self, live: LiveGame) -> None:
        """This process no longer runs the game (lease lost, game over)."""
        if live.clock_timer is not None:
            live.clock_timer.cancel()
            live.clock_timer = None
        if live.bot_task is not None and not live.bot_task.done():
            live.bot_task.cancel()
        live.bot_task = None

    async def _turn(self, live: LiveGame, expected: int) -> None:
        service = self.service
        try:
            await asyncio.sleep(self.settings.bot_delay)
            if live.move_count != expected or live.status != "playing":
                return
            seat = live.game.to_move
            if seat is None or not live.bot_plays(seat):
                return
            observation = live.game.observation(seat)
            name = live.bot_name(seat, self.settings.takeover_bot)
            seed = bot_seed(live.seed, seat, live.deal, expected)
            loop = asyncio.get_running_loop()
            shown = loop.call_later(THINKING_AFTER, service.tell_thinking, live, seat)
            action: Action | None
            try:
                action = await service.pool().choose(live.id, name, observation, seed)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("game %s: bot %s failed; it plays a random legal move", live.id, name)
                action = None
            finally:
                shown.cancel()
                if live.thinking is not None:
                    service.tell_thinking(live, None)
            async with live.lock:
                # the table may have moved on while the bot thought (a person took the seat back)
                if live.move_count != expected or live.status != "playing" or live.game.to_move != seat:
                    return
                if not live.bot_plays(seat):
                    return
                legal = live.game.legal_actions
                if action not in legal:
                    action = legal[secrets.randbelow(len(legal))]
                try:
                    write = await service.commit_move(live, seat, action)
                except Exception as exc:
                    log.error("game %s: bot move not stored: %s", live.id, exc)
                    write = None
            live.bot_task = None
            if write is None:
                await asyncio.sleep(1.0)  # the database may be back, or the table has moved on
                self.schedule(live)
                return
            service.after_move(live, write)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("game %s: bot turn failed", live.id)
            live.bot_task = None

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
            max(0.0, wait) + 0.01, lambda: loop.create_task(self._check_clock(live, expected, seat))
        )

    async def _check_clock(self, live: LiveGame, expected: int, seat: int) -> None:
        live.clock_timer = None
        if live.move_count != expected or live.game.to_move != seat or live.bot_plays(seat):
            return
        deadline = live.turn_deadline()
        if deadline is None:
            return
        out_of_time = now_utc() >= deadline
        gone = seat not in live.online() and (
            time.monotonic() - live.offline_since.get(seat, time.monotonic()) >= self.settings.away_after
        )
        if not (out_of_time or gone):
            self.schedule(live)  # woken early (presence changed): set the clock again
            return
        why = "ran out of time" if out_of_time else "has been gone too long"
        log.info("game %s: seat %d %s: a bot plays for it", live.id, seat + 1, why)
        with contextlib.suppress(Exception):
            await self.service.set_away(live, seat, True)
