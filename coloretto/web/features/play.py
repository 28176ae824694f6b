"""A seat's own moves: an action, taking the seat back from the bot that played for it, resigning."""

from __future__ import annotations

import logging
from functools import partial

from coloretto.web.common.errors import ServiceError
from coloretto.web.common.i18n import explained
from coloretto.web.common.i18n import gettext as _
from coloretto.web.features.seats import Seats
from coloretto.web.runtime.games import Games
from coloretto.web.storage import games as store
from coloretto.web.table.live import (
    LiveGame,
    now_utc,
    refuse_unless_playing,
    resigned_message,
)

log = logging.getLogger("coloretto.web")


class Play:
    """A person's actions at the table."""

    def __init__(self, games: Games, seats: Seats) -> None:
        self.games = games
        self.seats = seats

    async def act(
        self, game_id: str, token: str | None, text: str, expect_move: int | None, user_id: int | None = None
    ) -> LiveGame:
        """Play one action for the token's seat (or the logged-in account's): checked, committed,
        then broadcast."""
        live = await self.games.get_live(game_id)
        await self.act_as(live, await self.seats.find_seat(live, token, user_id), text, expect_move)
        return live

    async def act_as(self, live: LiveGame, seat: int | None, text: str, expect_move: int | None) -> None:
        if seat is None:
            raise ServiceError("not_seated", _("you are watching this game: take a seat to play"), 403)
        async with live.lock:
            if self.games.clustered and expect_move is not None and expect_move > live.move_count:
                # the client has seen a newer table than this copy: the move that made it reached the
                # client through another process before its event reached this one
                await self.games.refresh(live)
            refuse_unless_playing(live)
            self.seats.standing.refuse(live.seats[seat].user_id)  # a bot takes a banned account's seat
            if live.seats[seat].resigned:
                raise ServiceError("resigned", resigned_message(), 409)
            if expect_move is not None and expect_move != live.move_count:
                raise ServiceError(
                    "stale",
                    _(
                        "the table has changed (move {move}, you saw move {seen}): look again",
                        move=live.move_count,
                        seen=expect_move,
                    ),
                    409,
                )
            to_move = live.game.to_move
            if to_move != seat:
                who = live.names()[to_move] if to_move is not None else _("nobody")
                raise ServiceError("not_your_turn", _("it is {who}'s turn, not yours", who=who), 409)
            try:
                action = live.game.parse_action(text)
            except ValueError as exc:  # NotationError: the text is no action
                raise ServiceError("bad_action", explained(exc)) from None
            if live.seats[seat].away:  # a person who moves is back: the bot stops playing for them
                await self.games.set_away_locked(live, seat, False)
            await self.games.commit_move(live, seat, action)

    async def reclaim(self, live: LiveGame, seat: int | None, asked: bool = False) -> None:
        """A person with the seat's token is back: a bot that played for them stops. A seat whose
        person resigned stays the bot's (``asked``: the person asked for it, and is told so)."""
        if seat is None:
            return
        if asked:
            refuse_unless_playing(live)
        if not live.seats[seat].away or live.status != "playing":
            return
        if live.seats[seat].resigned:
            if asked:
                raise ServiceError("resigned", resigned_message(), 409)
            return
        await self.games.set_away(live, seat, False)

    async def resign(self, live: LiveGame, seat: int | None) -> None:
        """A person gives the game up: the takeover bot plays their seat to the end, for good, and
        the seat ranks below every other."""
        if seat is None:
            raise ServiceError("not_seated", _("only a player can resign"), 403)
        not_begun = _("the game has not begun: there is nothing to resign (its creator may cancel it)")
        refuse_unless_playing(live, not_begun)
        async with live.lock:
            refuse_unless_playing(live, not_begun)
            if live.seats[seat].resigned:
                return  # asked again (a second click, a retry): it is done already
            now = now_utc()
            restarts = live.game.to_move == seat and not live.seats[seat].away
            try:
                await self.games.write(
                    partial(store.resign_seat, game_id=live.id, seat=seat, now=now, turn_restarts=restarts)
                )
            except Exception as exc:
                log.exception("game %s: a resignation could not be stored", live.id)
                raise ServiceError(
                    "storage", _("the resignation could not be saved: try again"), 503
                ) from exc
            live.seats[seat].resigned = True
            live.seats[seat].away = True
            if restarts:
                live.turn_started_at = now
        self.games.changed(live, {"type": "reload"})
