"""The moderation API: players' reports and blocks, and the administrators' routes behind the admin
page (``/api/admin/…``: a guest is answered 401, a person who is not an administrator 403; like
every state-changing request with a cookie, each wants the ``X-CSRF-Token`` header)."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import FastAPI, Path, Query

from coloretto.web.api.answers import ERRORS
from coloretto.web.api.http import CurrentUser
from coloretto.web.common.admin_schemas import (
    AuditLog,
    BlockList,
    BlockRequest,
    Done,
    ReasonRequest,
    ReportList,
    ReportMade,
    ReportRequest,
)
from coloretto.web.common.i18n import gettext as _
from coloretto.web.common.schemas import NAME_MAX
from coloretto.web.features.moderation import require_admin
from coloretto.web.features.site import Site

GameId = Annotated[str, Path(max_length=16)]
Number = Annotated[int, Path(ge=1, le=2**31 - 1)]
PlayerName = Annotated[str, Path(max_length=NAME_MAX * 4)]


def add_moderation_routes(app: FastAPI, site: Site) -> None:
    """Reports, blocks, and the administrators' routes."""

    # ---------------------------------------------------------- players

    @app.post("/api/reports", tags=["moderation"], status_code=201, responses=ERRORS)
    async def report(body: ReportRequest, user: CurrentUser) -> ReportMade:
        """Report a chat message (``kind`` message, ``game``, ``number``) or a player (``kind``
        player, ``player``: an account's name) to the site's administrators, with a reason and your
        own words (required for ``other``). Logged-in people only; ``reports_per_hour`` an hour."""
        made = await site.reports.report(user, body)
        return ReportMade(id=made, message=_("Thank you: the administrators will look at your report."))

    @app.get("/api/account/blocks", tags=["moderation"], responses=ERRORS)
    async def blocks(user: CurrentUser) -> BlockList:
        """The accounts whose chat is hidden from you."""
        return BlockList(blocks=await site.reports.blocks(user))

    @app.post("/api/account/blocks", tags=["moderation"], responses=ERRORS)
    async def block(body: BlockRequest, user: CurrentUser) -> BlockList:
        """Block an account: its chat messages are never sent to you again (until you unblock it)."""
        await site.reports.block(user, body.player)
        return BlockList(blocks=await site.reports.blocks(user))

    @app.delete("/api/account/blocks/{name}", tags=["moderation"], responses=ERRORS)
    async def unblock(name: PlayerName, user: CurrentUser) -> BlockList:
        """See an account's chat again."""
        await site.reports.unblock(user, name)
        return BlockList(blocks=await site.reports.blocks(user))

    # ---------------------------------------------------------- administrators

    @app.get("/api/admin/reports", tags=["admin"], responses=ERRORS)
    async def reports(
        user: CurrentUser,
        status: Literal["open", "resolved"] = "open",
        limit: Annotated[int, Query(ge=1, le=500)] = 100,
    ) -> ReportList:
        """The reports: the open ones oldest first (the queue), the resolved ones newest first; a
        message's report with the messages around it (hidden ones marked)."""
        require_admin(user)
        found, open_count = await site.moderation.reports(status, limit)
        return ReportList(reports=found, open=open_count)

    @app.post("/api/admin/reports/{report_id}/resolve", tags=["admin"], responses=ERRORS)
    async def resolve(report_id: Number, body: ReasonRequest, user: CurrentUser) -> Done:
        """Close a report (``reason``: a note of what was done)."""
        admin = require_admin(user)
        await site.moderation.resolve(admin, report_id, body.reason)
        return Done(message=_("Report {number} is resolved.", number=report_id))

    @app.post("/api/admin/games/{game_id}/messages/{number}/hide", tags=["admin"], responses=ERRORS)
    async def hide(game_id: GameId, number: Number, body: ReasonRequest, user: CurrentUser) -> Done:
        """Hide a chat message from everyone but the administrators (at once, on every client)."""
        admin = require_admin(user)
        await site.moderation.set_hidden(admin, game_id, number, True, body.reason)
        return Done(message=_("Message {number} of game {game} is hidden.", number=number, game=game_id))

    @app.post("/api/admin/games/{game_id}/messages/{number}/show", tags=["admin"], responses=ERRORS)
    async def show(game_id: GameId, number: Number, body: ReasonRequest, user: CurrentUser) -> Done:
        """Show a hidden chat message again."""
        admin = require_admin(user)
        await site.moderation.set_hidden(admin, game_id, number, False, body.reason)
        return Done(message=_("Message {number} of game {game} is shown again.", number=number, game=game_id))

    @app.post("/api/admin/players/{name}/ban", tags=["admin"], responses=ERRORS)
    async def ban(name: PlayerName, body: ReasonRequest, user: CurrentUser) -> Done:
        """Ban an account (a reason is required): it is logged out everywhere at once, cannot log in,
        chat or sit, and a bot plays its seats in the games in play to their end."""
        admin = require_admin(user)
        banned = await site.moderation.ban(admin, name, body.reason)
        return Done(message=_("{name} is banned.", name=banned))

    @app.post("/api/admin/players/{name}/unban", tags=["admin"], responses=ERRORS)
    async def unban(name: PlayerName, body: ReasonRequest, user: CurrentUser) -> Done:
        """Lift a ban."""
        admin = require_admin(user)
        lifted = await site.moderation.unban(admin, name, body.reason)
        return Done(message=_("{name} is no longer banned.", name=lifted))

    @app.post("/api/admin/games/{game_id}/end", tags=["admin"], responses=ERRORS)
    async def end_game(game_id: GameId, body: ReasonRequest, user: CurrentUser) -> Done:
        """End a game waiting for players or in play (a reason is required): its status becomes
        ``stopped`` with the reason every client is shown; no rating moves."""
        admin = require_admin(user)
        await site.moderation.end_game(admin, game_id, body.reason)
        return Done(message=_("Game {game} is ended.", game=game_id))

    @app.get("/api/admin/audit", tags=["admin"], responses=ERRORS)
    async def audit(
        user: CurrentUser,
        limit: Annotated[int, Query(ge=1, le=500)] = 100,
        before: Annotated[int | None, Query(ge=1, le=2**31 - 1)] = None,
    ) -> AuditLog:
        """Every administrator's action, from the page or the command line, newest first (``before``:
        older than that entry)."""
        require_admin(user)
        return AuditLog(entries=await site.moderation.audit(limit, before))
