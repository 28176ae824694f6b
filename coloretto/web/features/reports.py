"""Players' reports and blocks.

**Reporting** a chat message or a player is for logged-in people only: a report names who made it
(an administrator may need to ask, and a guest could flood the queue under any number of names).
A report gives a reason from a fixed list (spam, abuse, cheating, an offensive name, something
else) and the person's own words (at most 500 characters; required for "something else"). One
account makes at most ``reports_per_hour`` reports an hour (counted in the database, for every
process at once), and one open report per message or player. A person cannot report themselves
or their own message. The report waits in the admin page's queue until an administrator resolves
it.

**Blocking** an account hides its chat from the person who blocked it, everywhere and for good
(until they unblock it): the server never sends them its messages, neither in a chat history
(HTTP) nor over any WebSocket, on any process. Only accounts can be blocked (a guest has no name
of their own to block by: the chat's mute, in the browser, silences everyone), and only by a
logged-in person (the block is kept with their account). Blocking changes nothing else: the other
still sees their messages, and they can still sit at the same table.
"""

from __future__ import annotations

import math
from datetime import timedelta
from functools import partial

from coloretto.web.common.admin_schemas import BlockEntry, ReportRequest
from coloretto.web.common.errors import ServiceError
from coloretto.web.common.i18n import gettext as _
from coloretto.web.common.moderation import REPORT_TEXT_MAX, clean_text
from coloretto.web.common.names import User
from coloretto.web.features.moderation import Moderation
from coloretto.web.runtime.games import Games
from coloretto.web.storage import accounts as accounts_store
from coloretto.web.storage import moderation as moderation_store
from coloretto.web.storage import reports as store
from coloretto.web.table.live import now_utc

#: the window reports per account are counted over (seconds)
REPORT_WINDOW = 3600.0


def require_login(user: User | None, what: str) -> User:
    if user is None:
        raise ServiceError("login_required", what, 403)
    return user


class Reports:
    """What players report and whom they block."""

    def __init__(self, games: Games, moderation: Moderation) -> None:
        self.games = games
        self.moderation = moderation
        self.settings = games.settings

    async def _check_rate(self, user: User) -> str:
        """Refuse a report over the account's allowance; the key to count it under."""
        key = f"report:{user.id}"
        allowed = self.settings.reports_per_hour
        if allowed <= 0:
            return key
        now = now_utc()
        counts = await self.games.read(
            partial(accounts_store.throttle_counts, keys=[key], since=now - timedelta(seconds=REPORT_WINDOW))
        )
        made, _latest = counts.get(key, (0, now))
        if made >= allowed:
            wait = REPORT_WINDOW / allowed
            raise ServiceError(
                "too_many_reports",
                _(
                    "at most {count} reports an hour: try again in {minutes} min",
                    count=allowed,
                    minutes=math.ceil(wait / 60),
                ),
                429,
                retry_after=wait,
            )
        return key

    async def report(self, user: User | None, request: ReportRequest) -> int:
        """Store a report (its number)."""
        reporter = require_login(user, _("log in to report a message or a player"))
        self.moderation.standing.refuse(reporter.id)
        text = clean_text(
            request.text,
            _("a report's words"),
            REPORT_TEXT_MAX,
            required=request.reason == "other",
            code="bad_report",
        )
        game_id, number = request.game, request.number
        reported_id: int | None = None
        reported_name: str | None = None
        if request.kind == "message":
            if game_id is None or number is None:
                raise ServiceError("bad_report", _("a message's report names its game and its number"))
            message = await self.games.read(partial(store.reported_message, game_id=game_id, number=number))
            if message.user_id == reporter.id:
                raise ServiceError("bad_report", _("you cannot report your own message"))
            reported_id, reported_name = message.user_id, message.name
        else:
            if not request.player:
                raise ServiceError("bad_report", _("a player's report names the player"))
            stored = await self.games.read(partial(moderation_store.account, name=request.player))
            if stored.id == reporter.id:
                raise ServiceError("bad_report", _("you cannot report yourself"))
            reported_id, reported_name = stored.id, stored.name
            if game_id is not None:
                await self.games.get_live(game_id)  # the game it happened in exists
        key = await self._check_rate(reporter)
        now = now_utc()

        def store_report(session: object) -> int:
            made = store.add_report(
                session,  # type: ignore[arg-type]
                reporter_id=reporter.id,
                kind=request.kind,
                game_id=game_id,
                number=number if request.kind == "message" else None,
                reported_id=reported_id,
                reported_name=reported_name,
                reason=request.reason,
                text=text,
                now=now,
            )
            accounts_store.add_throttle(session, keys=[key], now=now)  # type: ignore[arg-type]
            return made

        made: int = await self.games.write(store_report)
        return made

    # ------------------------------------------------------------ blocks

    async def block(self, user: User | None, name: str) -> str:
        """Hide an account's chat from the logged-in person; the account's name."""
        me = require_login(user, _("log in to block a player"))
        other = await self.games.read(partial(moderation_store.account, name=name))
        if other.id == me.id:
            raise ServiceError("bad_block", _("you cannot block yourself"))
        await self.games.write(partial(store.block, user_id=me.id, blocked_id=other.id, now=now_utc()))
        await self.moderation.acted()
        return str(other.name)

    async def unblock(self, user: User | None, name: str) -> str:
        me = require_login(user, _("log in to unblock a player"))
        other = await self.games.read(partial(moderation_store.account, name=name))
        if not await self.games.write(
            partial(store.unblock, user_id=me.id, blocked_id=other.id, now=now_utc())
        ):
            raise ServiceError("not_blocked", _("you have not blocked {name}", name=other.name), 409)
        await self.moderation.acted()
        return str(other.name)

    async def blocks(self, user: User | None) -> list[BlockEntry]:
        me = require_login(user, _("log in to see the players you blocked"))
        entries: list[BlockEntry] = await self.games.read(partial(store.blocks_of, user_id=me.id))
        return entries
