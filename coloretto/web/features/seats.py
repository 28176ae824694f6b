"""Seats: a person sits down (a guest under a name, an account under its own), and is known again
by their seat's token or their account, wherever they log in."""

from __future__ import annotations

import logging
import secrets
import time
from functools import partial

from sqlalchemy.exc import IntegrityError

from coloretto.web.common.errors import ServiceError
from coloretto.web.common.i18n import gettext as _
from coloretto.web.common.names import User, clean_name, name_key
from coloretto.web.features.standing import Standing
from coloretto.web.runtime.games import Games
from coloretto.web.storage import accounts as accounts_store
from coloretto.web.storage import games as store
from coloretto.web.table.live import (
    EXPIRED_MESSAGE,
    LiveGame,
    cancelled_message,
    hash_token,
    now_utc,
)

log = logging.getLogger("coloretto.web")


class Seats:
    """Who sits where, and taking a free seat."""

    def __init__(self, games: Games, standing: Standing | None = None) -> None:
        self.games = games
        self.standing = standing or Standing()
        self.settings = games.settings

    async def join(
        self,
        game_id: str,
        name: str | None,
        seat: int | None,
        user: User | None = None,
        rematch_token: str | None = None,
    ) -> tuple[LiveGame, int, str]:
        """Take a free seat: a guest under ``name``, a logged-in person under their account's name
        (the seat theirs wherever they log in). A rematch's seat kept for someone is theirs alone:
        an account's by logging in, a guest's by ``rematch_token``, their token of the game before."""
        live = await self.games.get_live(game_id)
        if user is not None:
            self.standing.refuse(user.id)
            name = user.name
        elif name is None:
            raise ServiceError("bad_name", _("give your name to sit down"))
        else:
            name = await self.guest_name(name)
        proof = hash_token(rematch_token) if rematch_token else None
        async with live.lock:
            seat, token = await self.take_seat_locked(live, name, seat, user, proof)
        self.games.changed(live, {"type": "reload"})
        return live, seat, token

    async def guest_name(self, name: str) -> str:
        """A guest's seat name, cleaned; an account's name (in any case; a deleted account's too,
        which stays reserved) is refused, so that a guest cannot sit at a table as someone with an
        account."""
        cleaned = clean_name(name)
        if await self.games.read(partial(accounts_store.name_in_use, name_key=name_key(cleaned))):
            raise ServiceError(
                "name_taken",
                _(
                    "{name} is the name of an account: log in to play under it, or choose another name",
                    name=cleaned,
                ),
                409,
            )
        return cleaned

    async def take_seat_locked(
        self, live: LiveGame, name: str, seat: int | None, user: User | None, proof: str | None
    ) -> tuple[int, str]:
        """Give a free seat to a person (the caller holds the game's lock): the seat and its token."""
        if live.status == "expired":
            raise ServiceError("expired", _(EXPIRED_MESSAGE), 409)
        if live.status == "cancelled":
            raise ServiceError("cancelled", cancelled_message(), 409)
        if live.status != "open":
            raise ServiceError("not_open", _("this game has already started: you can watch it"), 409)
        if live.rated and user is None:
            raise ServiceError(
                "login_required", _("the people of a rated table are logged in: log in to sit down"), 403
            )
        if user is not None and (held := live.seat_of_user(user.id)) is not None:
            raise ServiceError(
                "already_seated", _("you already sit at seat {seat} of this game", seat=held + 1), 409
            )
        free = [i for i, s in enumerate(live.seats) if s.free]

        def kept_for_me(i: int) -> bool:
            kept = live.seats[i]
            if user is not None and kept.user_id == user.id:
                return True
            return (
                proof is not None
                and kept.reserved_hash is not None
                and secrets.compare_digest(kept.reserved_hash, proof)
            )

        mine = [i for i in free if kept_for_me(i)]
        unkept = [i for i in free if not live.seats[i].reserved]
        if proof is not None and not any(
            kept_for_me(i) for i in range(len(live.seats)) if live.seats[i].reserved_hash
        ):
            raise ServiceError("bad_token", _("this token keeps no seat of this game"), 403)
        if seat is None:
            if not (mine or unkept):
                if free:
                    raise ServiceError(
                        "reserved",
                        _("every free seat is kept for a player of the game before (a rematch)"),
                        409,
                    )
                raise ServiceError("no_free_seat", _("every seat is taken"), 409)
            seat = (mine or unkept)[0]
        elif not 0 <= seat < len(live.seats):
            raise ServiceError("bad_seat", _("there is no seat {seat} in this game", seat=seat + 1))
        elif seat not in free:
            what = (
                _("seat {seat} is a bot's", seat=seat + 1)
                if live.seats[seat].kind == "bot"
                else _("seat {seat} is taken", seat=seat + 1)
            )
            raise ServiceError("seat_taken", what, 409)
        elif live.seats[seat].reserved and seat not in mine:
            raise ServiceError(
                "reserved",
                _("seat {seat} is kept for a player of the game before (a rematch)", seat=seat + 1),
                409,
            )
        token = secrets.token_urlsafe(24)
        now = now_utc()
        user_id = user.id if user is not None else None
        try:
            taken = await self.games.write(
                partial(
                    store.take_seat,
                    game_id=live.id,
                    seat=seat,
                    name=name,
                    token_hash=hash_token(token),
                    now=now,
                    user_id=user_id,
                )
            )
        except IntegrityError:  # the account took another seat through another process meanwhile
            await self.games.refresh(live)
            raise ServiceError("already_seated", _("you already sit at this game"), 409) from None
        except Exception as exc:
            log.exception("game %s: a seat could not be stored", live.id)
            raise ServiceError("storage", _("the seat could not be saved: try again"), 503) from exc
        if not taken.taken:  # another server process gave it away first
            await self.games.refresh(live)
            raise ServiceError("seat_taken", _("seat {seat} is taken", seat=seat + 1), 409)
        taker = live.seats[seat]
        taker.name, taker.token_hash = name, hash_token(token)
        taker.user_id, taker.reserved_hash = user_id, None
        live.updated_at = now
        if taken.starts:
            live.status = "playing"
            live.turn_started_at = now
        return seat, token

    async def find_seat(self, live: LiveGame, token: str | None, user_id: int | None = None) -> int | None:
        """The seat of a token (:meth:`seat_of`), else of a logged-in account (``user_id``): None
        for a spectator. With several processes a seat taken through another one may not have
        reached this copy yet: a token of no seat here, or an account that holds none while the
        game waits for players, reads the game again first (at most once a second)."""
        if not token:
            if user_id is None:
                return None
            seat = live.seat_of_user(user_id)
            if (
                seat is None
                and self.games.clustered
                and live.status == "open"
                and time.monotonic() - live.read_at >= 1.0
            ):
                async with live.lock:
                    await self.games.refresh(live)
                self.games.tell(live)
                seat = live.seat_of_user(user_id)
            return seat
        try:
            return self.seat_of(live, token)
        except ServiceError:
            # a wrong token costs a read of the game at most once a second
            if not self.games.clustered or time.monotonic() - live.read_at < 1.0:
                raise
        async with live.lock:
            await self.games.refresh(live)
        self.games.tell(live)
        return self.seat_of(live, token)

    def seat_of(self, live: LiveGame, token: str | None) -> int | None:
        """The seat a token holds in this game; None for no token. A wrong token is an error."""
        if not token:
            return None
        digest = hash_token(token)
        for i, s in enumerate(live.seats):
            if s.token_hash is not None and secrets.compare_digest(s.token_hash, digest):
                return i
        raise ServiceError("bad_token", _("this seat token does not belong to any seat of this game"), 403)
