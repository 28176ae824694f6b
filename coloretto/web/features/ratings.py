"""Ratings: openskill's Plackett-Luce for multiplayer results, a leaderboard and player pages.

A rated table's people are logged in and its bots are difficulty levels. When its match is
over, every seat's rating moves once, from the final standings (the core's: totals, and the
rules' tie-break; tied seats share a rank; a seat whose person resigned ranks below every seat
whose person did not, as the arena places a forfeit). Each bot level is one player
(``bot:hard``), so that a person sees where they stand against ``easy`` … ``expert``; a level
seated twice in one game gets the mean of its seats' updates, as in the arena.

The update is made in the transaction that stores the match's last move, and the game is marked
rated in it: whichever process plays that move, the ratings move once. Each seat's rating before
and after is kept (``rating_history``), for the table's end screen and the player's chart. A
rating is shown as its ordinal, mu - 3 sigma (openskill's conservative estimate: a new player
starts at 0 and climbs as their games make the estimate surer).
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

from coloretto.web.common.errors import ServiceError
from coloretto.web.common.i18n import gettext as _
from coloretto.web.common.schemas import (
    Leaderboard,
    LeaderboardEntry,
    Opponent,
    PlayerPage,
    PlayerResult,
    Rating,
    RatingPoint,
)
from coloretto.web.runtime.games import Games
from coloretto.web.storage import accounts as accounts_store
from coloretto.web.storage import ratings as store
from coloretto.web.table.live import iso, seat_label

if TYPE_CHECKING:
    from coloretto.web.common.names import User

#: the bots' difficulty levels: the only bots of a rated table, each rated as one player
DIFFICULTIES = ("easy", "medium", "hard", "expert")
#: results a player page lists at most
MAX_RESULTS = 100


def rating(mu: float, sigma: float, games: int) -> Rating:
    value = store.rating_value(mu, sigma)
    return Rating(mu=value.mu, sigma=value.sigma, ordinal=value.ordinal, games=games)


def stored_rating(stored: store.StoredRating | None) -> Rating:
    if stored is None:
        return rating(store.DEFAULT_MU, store.DEFAULT_SIGMA, 0)
    return rating(stored.mu, stored.sigma, stored.games)


def ordinal(mu: float, sigma: float) -> float:
    return mu - 3 * sigma


class Ratings:
    """The leaderboard and player pages, read from the database on request."""

    def __init__(self, games: Games) -> None:
        self.games = games
        self.settings = games.settings

    async def rating_of_user(self, user_id: int) -> Rating:
        player = store.user_player(user_id)
        found = await self.games.read(partial(store.ratings_of, players=[player]))
        return stored_rating(found.get(player))

    async def leaderboard(self, limit: int) -> Leaderboard:
        min_games = self.settings.leaderboard_min_games
        rows: list[store.StoredRating] = await self.games.read(
            partial(store.leaderboard, min_games=min_games, limit=limit)
        )
        entries: list[tuple[str, str, Rating]] = [
            ("bot" if row.user_id is None else "person", row.name, stored_rating(row)) for row in rows
        ]
        rated_bots = {name for kind, name, _rating in entries if kind == "bot"}
        # every level is listed, one that never played a rated game at the rating everyone starts at
        entries += [("bot", level, stored_rating(None)) for level in DIFFICULTIES if level not in rated_bots]
        entries.sort(key=lambda e: (-e[2].ordinal, -e[2].games, e[0], e[1].casefold()))
        return Leaderboard(
            players=[
                LeaderboardEntry(rank=i + 1, kind=kind, name=name, rating=value)  # type: ignore[arg-type]
                for i, (kind, name, value) in enumerate(entries)
            ],
            min_games=min_games,
        )

    async def player_page(self, name: str, viewer: User | None, limit: int) -> PlayerPage:
        from coloretto.web.common.names import name_key

        missing = ServiceError("not_found", _("there is no player named {name}", name=repr(name[:40])), 404)
        # the name as an account's is cleaned: its runs of spaces made one
        stored = await self.games.read(
            partial(accounts_store.user_by_key, name_key=name_key(" ".join(name.split())))
        )
        if stored is None:
            raise missing
        data: store.PlayerData | None = await self.games.read(
            partial(store.player_data, user_id=stored.id, limit=min(limit, MAX_RESULTS))
        )
        if data is None:
            raise missing
        own = viewer is not None and viewer.id == stored.id

        def shown(game_id: str, private: bool) -> str | None:
            # another person's private table stays unlisted: its link is not given away here
            return game_id if own or not private else None

        from coloretto.web.table.views import rules_summary, rules_text

        results = []
        for game in data.results:
            ranks = game.result.get("ranks")
            totals = game.result.get("totals") or [0] * len(game.seats)
            winners = game.result.get("winners") or []
            rank = float(ranks[game.seat]) if ranks else _rank_by_totals(totals, game.seat)
            change = None
            if game.rating_before is not None and game.rating_after is not None:
                change = round(ordinal(*game.rating_after) - ordinal(*game.rating_before), 3)
            results.append(
                PlayerResult(
                    game=shown(game.id, game.private),
                    name=game.name,
                    date=iso(game.ended_at),
                    rules_text=rules_text(game.rules),
                    rules_summary=list(rules_summary(game.rules)),
                    seat=game.seat,
                    opponents=[
                        Opponent(
                            seat=i,
                            name=seat_label(i, s),
                            kind=s.kind,  # type: ignore[arg-type]
                            bot=s.bot,
                            account=s.user_id is not None and not s.deleted,
                            deleted=s.deleted,
                        )
                        for i, s in enumerate(game.seats)
                        if i != game.seat
                    ],
                    rank=rank,
                    score=int(totals[game.seat]),
                    won=game.seat in winners,
                    resigned=game.seats[game.seat].resigned,
                    rated=game.rated,
                    rating_change=change,
                    accuracy=round(sum(game.accuracies) / len(game.accuracies), 1)
                    if game.accuracies
                    else None,
                )
            )
        accuracies = [r.accuracy for r in results if r.accuracy is not None]
        return PlayerPage(
            name=stored.name,
            created_at=iso(stored.created_at),
            rating=stored_rating(data.rating),
            games=data.games,
            wins=data.wins,
            results=results,
            history=[
                RatingPoint(
                    game=shown(step.game_id, step.private),
                    at=iso(step.at),
                    rating=store.rating_value(step.mu, step.sigma),
                )
                for step in data.history
            ],
            accuracy=round(sum(accuracies) / len(accuracies), 1) if accuracies else None,
        )


def _rank_by_totals(totals: list[int], seat: int) -> float:
    """A game stored before ranks were: its place by total alone, ties shared."""
    above = sum(1 for t in totals if t > totals[seat])
    level = sum(1 for t in totals if t == totals[seat])
    return above + (level + 1) / 2
