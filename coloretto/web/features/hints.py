"""Hints: the analysis of a player's position, worked out in a worker process.

One hint per seat at a time; the worker pool bounds how many wait in all
(more are refused with ``busy``) and serves the games in turn.
"""

from __future__ import annotations

import importlib.util
import logging
import secrets

from coloretto.web.common.errors import ServiceError
from coloretto.web.common.i18n import gettext as _
from coloretto.web.common.schemas import Hint, HintAction
from coloretto.web.features.seats import Seats
from coloretto.web.runtime.games import Games
from coloretto.web.runtime.workers import PoolBusy
from coloretto.web.table.live import LiveGame, refuse_unless_playing, resigned_message

log = logging.getLogger("coloretto.web")


def hints_available() -> bool:
    return importlib.util.find_spec("coloretto.analysis") is not None


class Hints:
    """A seat's hint: the analysis of its position, in a worker."""

    def __init__(self, games: Games, seats: Seats) -> None:
        self.games = games
        self.seats = seats
        self.pool = games.pool
        self.default_budget = games.settings.hint_budget
        self._asking: set[tuple[str, int]] = set()

    async def hint(
        self, game_id: str, token: str | None, budget: float | None = None, user_id: int | None = None
    ) -> Hint:
        live = await self.games.get_live(game_id)
        return await self.hint_for(live, await self.seats.find_seat(live, token, user_id), budget)

    async def hint_for(self, live: LiveGame, seat: int | None, budget: float | None = None) -> Hint:
        """Every legal action of the seat's position with its win chance and expected score: the
        move the search would play first, then by the search's objective. A resigned seat gets
        none."""
        if seat is not None and live.seats[seat].resigned:
            raise ServiceError("resigned", resigned_message(), 409)
        if not hints_available():
            raise ServiceError("no_hints", _("hints are not available on this server"), 404)
        if seat is None:
            raise ServiceError("not_seated", _("only a player can ask for a hint"), 403)
        refuse_unless_playing(live)
        if live.game.to_move != seat:
            raise ServiceError("not_your_turn", _("a hint is for your own turn"), 409)
        key = (live.id, seat)
        if key in self._asking:
            raise ServiceError("busy", _("your last hint is still being worked out"), 429, retry_after=1.0)
        observation = live.game.observation(seat)
        move = live.move_count
        # a client may ask for less thinking, never more: the bot workers serve every game's bots
        # too, so the operator's budget bounds what one player can hold them for
        seconds = min(budget or self.default_budget, self.default_budget)
        self._asking.add(key)
        try:
            values = await self.pool().analyze(
                live.id, observation, f"{seconds:g}s", secrets.randbelow(2**31)
            )
        except PoolBusy as exc:
            raise ServiceError("busy", str(exc), 429, retry_after=2.0) from None
        finally:
            self._asking.discard(key)
        legal = set(observation.legal_actions)
        if any(v.action not in legal for v in values):
            # never advise a move the rules forbid, whatever the analysis answers
            log.error("game %s: the analysis answered actions that are not legal", live.id)
            raise ServiceError("no_hint", _("there is no hint for this decision"), 409)
        edition = live.rules.edition
        actions = [
            HintAction(
                action=v.action.notation(edition),
                expected_score=round(float(v.expected_score), 2),
                win_probability=round(float(v.win_probability), 3),
                simulations=int(v.simulations),
                win_share=round(float(v.win_share), 3),
                utility=round(float(v.utility), 4),
            )
            for v in values
        ]
        return Hint(move=move, best=actions[0].action if actions else None, actions=actions)
