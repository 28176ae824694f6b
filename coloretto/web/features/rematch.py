"""Rematches: a new game of a finished one, with the same seats, rules and clock, asked for by any
of its players; asked again, by anyone, it is the same game."""

from __future__ import annotations

import logging
import secrets

from coloretto.web.common.errors import ServiceError
from coloretto.web.common.i18n import gettext as _
from coloretto.web.common.names import User
from coloretto.web.features.lobby import Lobby, creator_digest
from coloretto.web.features.seats import Seats
from coloretto.web.runtime.games import Games
from coloretto.web.storage import games as store
from coloretto.web.table.live import (
    LiveGame,
    SeatState,
    hash_token,
    now_utc,
    refuse_ended,
    seat_label,
)

log = logging.getLogger("coloretto.web")


class Rematches:
    """Makes the rematch of a finished game and seats its players."""

    def __init__(self, games: Games, lobby: Lobby, seats: Seats) -> None:
        self.games = games
        self.lobby = lobby
        self.seats = seats
        self.settings = games.settings

    async def rematch(
        self, game_id: str, token: str | None, user: User | None, client: str = "local"
    ) -> tuple[LiveGame, int | None, str | None]:
        """A new game of a finished one, asked for by one of its players: the same seats (people
        and bots), rules, clock, and rated and private flags, a new deal. Asked again, by anyone,
        it is the same game. Its bots sit at once and so does whoever asks; every other person's
        seat is kept for them (an account's for its login, a guest's for their old seat token).
        Every watcher of the finished game is told ``{"type": "rematch", "game": ID}``. The answer:
        the new game, the asker's seat there, and its token when it was taken for them now."""
        old = await self.games.get_live(game_id)
        seat = await self.seats.find_seat(old, token, user.id if user is not None else None)
        if seat is None:
            raise ServiceError("not_seated", _("only a player of this game can ask for a rematch"), 403)
        if old.status != "finished":
            if old.status in ("playing", "open"):
                code = "in_progress" if old.status == "playing" else "not_started"
                raise ServiceError(code, _("a rematch is for a game that is over"), 409)
            refuse_ended(old)  # abandoned, expired or cancelled: says which
        if old.rematch_id is None:
            made = await self.make_rematch(old, seat, user, client)
            if made is not None:
                return made
        assert old.rematch_id is not None
        new = await self.games.get_live(old.rematch_id)
        mine = old.seats[seat]
        async with new.lock:
            if user is not None and (held := new.seat_of_user(user.id)) is not None:
                return new, held, None
            kept = new.seats[seat]
            if not kept.free or new.status != "open":
                # taken: by them (their seat is kept for nobody else), or the game went on without them
                return new, (seat if kept.name and kept.user_id == mine.user_id else None), None
            if kept.user_id is not None and user is None:
                raise ServiceError(
                    "login_required", _("your seat of the rematch is your account's: log in to take it"), 403
                )
            name = user.name if user is not None else seat_label(seat, mine)
            proof = mine.token_hash if kept.reserved_hash is not None else None
            taken, new_token = await self.seats.take_seat_locked(new, name, seat, user, proof)
        self.games.changed(new, {"type": "reload"})
        return new, taken, new_token

    async def make_rematch(
        self, old: LiveGame, seat: int, user: User | None, client: str
    ) -> tuple[LiveGame, int, str] | None:
        """Make the rematch, the asker seated: the new game, their seat and its token; None when
        another player (here or through another process) made it first."""
        async with old.lock:
            if old.rematch_id is not None:
                return None
            token = secrets.token_urlsafe(24)
            seats: list[SeatState] = []
            for i, was in enumerate(old.seats):
                if was.kind == "bot":
                    seats.append(SeatState("bot", was.bot, None, None))
                elif i == seat:  # the asker sits at once
                    bound = (
                        was.user_id if was.user_id is not None else (user.id if user is not None else None)
                    )
                    name = user.name if user is not None and bound == user.id else seat_label(i, was)
                    seats.append(SeatState("human", None, name, hash_token(token), user_id=bound))
                else:  # kept for its person: an account's by its login, a guest's by their old token
                    reserved = None if was.user_id is not None else was.token_hash
                    seats.append(
                        SeatState("human", None, None, None, user_id=was.user_id, reserved_hash=reserved)
                    )
            waits = any(s.free for s in seats)
            counted = await self.lobby.may_create(client, waits)
            now = now_utc()
            new = store.NewGame(
                id=store.new_game_id(),
                name=old.name,
                status="open" if waits else "playing",
                rules=old.rules.to_dict(),
                seed=secrets.randbelow(2**63),
                seats=seats,
                created_at=now,
                move_seconds=old.move_seconds,
                game_seconds=old.game_seconds,
                creator=creator_digest(client) if waits else None,
                creator_seat=seat,
                rated=old.rated,
                private=old.private,
                rematch_of=old.id,
            )
            made = await self.games.store_new_game(new, store.create_rematch, old_id=old.id)
            if made is None:  # a player asked through another process first: that is the rematch
                await self.lobby.uncount_creation(client, counted)
                await self.games.refresh(old)
                if old.rematch_id is None:  # pragma: no cover - the database answered its id
                    raise ServiceError("storage", _("the rematch could not be read: try again"), 503)
                return None
            old.rematch_id = new.id
        message = {"type": "rematch", "game": new.id}
        self.games.fanout.message(old, message)
        self.games.tell(old)
        self.games.publish(old.id, message)
        return made, seat, token
