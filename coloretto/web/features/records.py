"""A finished game's record (with its deck) and its replay, frame by frame."""

from __future__ import annotations

import logging

from coloretto.record import GameRecord
from coloretto.web.common.errors import ServiceError
from coloretto.web.common.i18n import gettext as _
from coloretto.web.common.schemas import (
    Replay,
)
from coloretto.web.runtime.games import Games
from coloretto.web.table import views
from coloretto.web.table.live import (
    ABANDONED_MESSAGE,
    EXPIRED_MESSAGE,
    LiveGame,
    cancelled_message,
)

log = logging.getLogger("coloretto.web")


class Records:
    """The records and replays of finished games."""

    def __init__(self, games: Games) -> None:
        self.games = games

    async def finished(self, game_id: str) -> LiveGame:
        live = await self.games.get_live(game_id)
        if live.status == "expired":
            raise ServiceError("expired", _("{reason}: it has no record", reason=_(EXPIRED_MESSAGE)), 409)
        if live.status == "abandoned":
            raise ServiceError("abandoned", _("{reason}: it has no record", reason=_(ABANDONED_MESSAGE)), 409)
        if live.status == "cancelled":
            raise ServiceError("cancelled", cancelled_message(), 409)
        if live.status != "finished":
            raise ServiceError(
                "in_progress", _("the record of a game is available once the game (the match) is over"), 409
            )
        return live

    async def record(self, game_id: str, deal: int = 1) -> GameRecord:
        live = await self.finished(game_id)
        if not 1 <= deal <= len(live.games):
            raise ServiceError(
                "not_found", _("this match has games 1 to {games}", games=len(live.games)), 404
            )
        tags = {
            "site": "coloretto serve",
            "game": live.id,
            "name": live.name,
            "date": live.created_at.date().isoformat(),
        }
        if live.rules.match_games > 1:
            tags.update(live.match.progress(deal).to_tags())
        return GameRecord.from_game(live.games[deal - 1], seats=live.names(), tags=tags, include_deck=True)

    async def replay(self, game_id: str, deal: int = 1) -> Replay:
        live = await self.finished(game_id)
        if not 1 <= deal <= len(live.games):
            raise ServiceError(
                "not_found", _("this match has games 1 to {games}", games=len(live.games)), 404
            )
        return views.replay(live, deal)
