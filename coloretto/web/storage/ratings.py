"""Ratings in the database: each player's rating, moved in the same transaction as the last move of
a rated game, its history, the leaderboard and a player's page."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import insert, select, update
from sqlalchemy.orm import Session, selectinload

from coloretto.rules import Rules
from coloretto.web.common.schemas import RatingChange, RatingValue
from coloretto.web.storage.accounts import StoredUser, stored_user
from coloretto.web.storage.rows import (
    GameRow,
    RatingHistoryRow,
    RatingRow,
    ReviewRow,
    SeatRow,
    UserRow,
)
from coloretto.web.storage.tables import changed_rows, listed_seats
from coloretto.web.table.live import LiveGame, SeatState, aware

#: openskill's Plackett-Luce defaults: every player starts here
DEFAULT_MU = 25.0
DEFAULT_SIGMA = 25.0 / 3.0


def user_player(user_id: int) -> str:
    """The ratings table's key of a person."""
    return f"user:{user_id}"


def bot_player(level: str) -> str:
    """The ratings table's key of a bot's difficulty level: one player per level."""
    return f"bot:{level}"


@dataclass(frozen=True)
class RatingJob:
    """A rated game's result, for :func:`apply_ratings`: each seat's player and rank."""

    game_id: str
    players: tuple[str, ...]  #: user:ID or bot:LEVEL, per seat
    user_ids: tuple[int | None, ...]
    ranks: tuple[float, ...]  #: 1 first, ties shared, resigned seats last


def rating_job(live: LiveGame, ranks: tuple[float, ...]) -> RatingJob:
    """What a rated game's last move stores with it: every seat's player and rank."""
    players = []
    for seat in live.seats:
        if seat.kind == "bot":
            players.append(bot_player(str(seat.bot)))
        else:
            assert seat.user_id is not None, "a rated table's people are logged in"
            players.append(user_player(seat.user_id))
    return RatingJob(
        game_id=live.id,
        players=tuple(players),
        user_ids=tuple(seat.user_id if seat.kind == "human" else None for seat in live.seats),
        ranks=ranks,
    )


def _ensure_ratings(session: Session, players: dict[str, int | None], now: datetime) -> None:
    """A ratings row at the default for each player that has none (two processes may add one at once)."""
    values = [
        {"player": p, "user_id": u, "mu": DEFAULT_MU, "sigma": DEFAULT_SIGMA, "games": 0, "updated_at": now}
        for p, u in players.items()
    ]
    dialect = session.get_bind().dialect.name
    if dialect == "postgresql":
        from sqlalchemy.dialects.postgresql import insert as postgresql_insert

        session.execute(postgresql_insert(RatingRow).values(values).on_conflict_do_nothing())
    elif dialect == "sqlite":
        from sqlalchemy.dialects.sqlite import insert as sqlite_insert

        session.execute(sqlite_insert(RatingRow).values(values).on_conflict_do_nothing())
    else:  # pragma: no cover - the server runs on SQLite or PostgreSQL
        known = set(session.scalars(select(RatingRow.player).where(RatingRow.player.in_(list(players)))))
        missing = [v for v in values if v["player"] not in known]
        if missing:
            session.execute(insert(RatingRow), missing)


def apply_ratings(session: Session, job: RatingJob, now: datetime) -> list[RatingChange] | None:
    """Update every seat's rating from a rated game's result, once: the game is marked in this
    transaction, so that a second call (another process, a job run again) changes nothing and
    answers None. The players' rows are locked in the order of their keys (PostgreSQL), so that
    games ending at once in two processes update them one after the other."""
    from coloretto.arena.stats import rate_game

    marked = changed_rows(
        session.execute(
            update(GameRow)
            .where(GameRow.id == job.game_id, GameRow.rated.is_(True), GameRow.ratings_applied.is_(False))
            .values(ratings_applied=True)
        )
    )
    if not marked:
        return None
    _ensure_ratings(session, dict(zip(job.players, job.user_ids)), now)
    rows = {
        row.player: row
        for row in session.scalars(
            select(RatingRow)
            .where(RatingRow.player.in_(sorted(set(job.players))))
            .order_by(RatingRow.player)
            .with_for_update()
        )
    }
    before = {player: (row.mu, row.sigma) for player, row in rows.items()}
    after = {**before, **rate_game(before, job.players, job.ranks)}
    for player, row in rows.items():
        row.mu, row.sigma = after[player]
        row.games += 1
        row.updated_at = now
    for seat, player in enumerate(job.players):
        session.add(
            RatingHistoryRow(
                game_id=job.game_id,
                seat=seat,
                player=player,
                rank=job.ranks[seat],
                mu_before=before[player][0],
                sigma_before=before[player][1],
                mu_after=after[player][0],
                sigma_after=after[player][1],
                created_at=now,
            )
        )
    session.flush()
    return rating_changes(session, job.game_id)


def rating_value(mu: float, sigma: float) -> RatingValue:
    return RatingValue(mu=round(mu, 3), sigma=round(sigma, 3), ordinal=round(mu - 3 * sigma, 3))


def player_names(session: Session, players: list[str]) -> dict[str, str]:
    """The name shown for each player key: a person's account name, a bot's level."""
    ids = {int(p.split(":", 1)[1]): p for p in players if p.startswith("user:")}
    names = {p: p.split(":", 1)[1] for p in players if p.startswith("bot:")}
    if ids:
        for user_id, name in session.execute(
            select(UserRow.id, UserRow.name).where(UserRow.id.in_(list(ids)))
        ):
            names[ids[int(user_id)]] = str(name)
    return names


def rating_changes(session: Session, game_id: str) -> list[RatingChange] | None:
    """Each seat's rating before and after a rated game that is over (None: not rated yet)."""
    rows = list(
        session.scalars(
            select(RatingHistoryRow)
            .where(RatingHistoryRow.game_id == game_id)
            .order_by(RatingHistoryRow.seat)
        )
    )
    if not rows:
        return None
    names = player_names(session, [row.player for row in rows])
    return [
        RatingChange(
            seat=row.seat,
            player=names.get(row.player, row.player),
            rank=row.rank,
            before=rating_value(row.mu_before, row.sigma_before),
            after=rating_value(row.mu_after, row.sigma_after),
        )
        for row in rows
    ]


@dataclass(frozen=True)
class StoredRating:
    player: str
    name: str
    user_id: int | None
    mu: float
    sigma: float
    games: int


def ratings_of(session: Session, players: list[str]) -> dict[str, StoredRating]:
    """The stored ratings of these players (those with none are left out)."""
    rows = list(session.scalars(select(RatingRow).where(RatingRow.player.in_(players))))
    names = player_names(session, [row.player for row in rows])
    return {
        row.player: StoredRating(
            row.player, names.get(row.player, row.player), row.user_id, row.mu, row.sigma, row.games
        )
        for row in rows
    }


def leaderboard(session: Session, min_games: int, limit: int) -> list[StoredRating]:
    """People with at least ``min_games`` rated games, best ordinal first (``limit`` of them), and
    every bot level that has a rating."""
    ordinal = RatingRow.mu - 3 * RatingRow.sigma
    people = session.execute(
        select(RatingRow, UserRow.name)
        .join(UserRow, UserRow.id == RatingRow.user_id)
        .where(RatingRow.games >= min_games, UserRow.deleted_at.is_(None))
        .order_by(ordinal.desc(), RatingRow.games.desc())
        .limit(limit)
    ).all()
    bots = session.scalars(select(RatingRow).where(RatingRow.player.like("bot:%")))
    out = [StoredRating(r.player, str(name), r.user_id, r.mu, r.sigma, r.games) for r, name in people]
    out += [StoredRating(r.player, r.player.split(":", 1)[1], None, r.mu, r.sigma, r.games) for r in bots]
    return out


# -------------------------------------------------------------- player pages


@dataclass(frozen=True)
class PlayedGame:
    """A finished game a person played, as their page lists it."""

    id: str
    name: str
    private: bool
    rated: bool
    rules: Rules
    ended_at: datetime
    result: dict[str, Any]
    seats: list[SeatState]
    seat: int
    rating_before: tuple[float, float] | None
    rating_after: tuple[float, float] | None
    accuracies: list[float]  #: the seat's accuracy in each reviewed game of the match


@dataclass(frozen=True)
class RatingStep:
    game_id: str
    private: bool
    at: datetime
    mu: float
    sigma: float


@dataclass(frozen=True)
class PlayerData:
    user: StoredUser
    rating: StoredRating | None
    games: int
    wins: int
    results: list[PlayedGame]
    history: list[RatingStep]


def seat_accuracy(review_json: str, seat: int) -> float | None:
    """The seat's accuracy in a stored review (``coloretto.review``'s JSON), reading its summary
    only: a review holds every position of the game, and a page lists many."""
    decoder = json.JSONDecoder()
    start = review_json.rfind('"summary":')
    try:
        if start >= 0:
            summary, _ = decoder.raw_decode(review_json, review_json.index("[", start))
        else:
            summary = json.loads(review_json)["summary"]
        for line in summary:
            if int(line["seat"]) == seat:
                return float(line["accuracy"])
    except (ValueError, KeyError, TypeError):
        return None
    return None


def player_data(session: Session, user_id: int, limit: int) -> PlayerData | None:
    """A person's finished games (the latest ``limit`` with their details), wins and rating history."""
    user_row = session.get(UserRow, user_id)
    if user_row is None:
        return None
    finished = session.execute(
        select(SeatRow.game_id, SeatRow.seat, GameRow.result)
        .join(GameRow, GameRow.id == SeatRow.game_id)
        .where(SeatRow.user_id == user_id, SeatRow.name.is_not(None), GameRow.status == "finished")
    ).all()
    wins = sum(1 for _game, seat, result in finished if result and seat in result.get("winners", ()))
    latest = list(
        session.scalars(
            select(GameRow)
            .join(SeatRow, SeatRow.game_id == GameRow.id)
            .options(selectinload(GameRow.seats))
            .where(SeatRow.user_id == user_id, SeatRow.name.is_not(None), GameRow.status == "finished")
            .order_by(GameRow.updated_at.desc())
            .limit(limit)
        )
    )
    ids = [row.id for row in latest]
    player = user_player(user_id)
    changes = {
        row.game_id: row
        for row in session.scalars(
            select(RatingHistoryRow).where(
                RatingHistoryRow.player == player, RatingHistoryRow.game_id.in_(ids)
            )
        )
    }
    reviews: dict[tuple[str, int], tuple[int, str]] = {}  # (game, deal) -> the done review of most budget
    for game_id, deal, budget, data in session.execute(
        select(ReviewRow.game_id, ReviewRow.deal, ReviewRow.budget, ReviewRow.data).where(
            ReviewRow.game_id.in_(ids), ReviewRow.status == "done"
        )
    ):
        if data and budget > reviews.get((game_id, deal), (-1, ""))[0]:
            reviews[(game_id, deal)] = (budget, data)
    results = []
    for row in latest:
        seat = next(s.seat for s in row.seats if s.user_id == user_id and s.name)
        change = changes.get(row.id)
        accuracies = [
            accuracy
            for (game_id, _deal), (_budget, data) in sorted(reviews.items())
            if game_id == row.id and (accuracy := seat_accuracy(data, seat)) is not None
        ]
        results.append(
            PlayedGame(
                id=row.id,
                name=row.name,
                private=bool(row.private),
                rated=bool(row.rated),
                rules=Rules.from_dict(row.rules),
                ended_at=aware(row.updated_at),
                result=row.result or {},
                seats=listed_seats(row),
                seat=seat,
                rating_before=None if change is None else (change.mu_before, change.sigma_before),
                rating_after=None if change is None else (change.mu_after, change.sigma_after),
                accuracies=accuracies,
            )
        )
    history = [
        RatingStep(game_id, bool(private), aware(at), mu, sigma)
        for game_id, private, at, mu, sigma in session.execute(
            select(
                RatingHistoryRow.game_id,
                GameRow.private,
                RatingHistoryRow.created_at,
                RatingHistoryRow.mu_after,
                RatingHistoryRow.sigma_after,
            )
            .join(GameRow, GameRow.id == RatingHistoryRow.game_id)
            .where(RatingHistoryRow.player == player)
            .order_by(RatingHistoryRow.created_at, RatingHistoryRow.game_id)
        )
    ]
    rating = ratings_of(session, [player]).get(player)
    return PlayerData(stored_user(user_row), rating, len(finished), wins, results, history)


def seed_bot_ratings(
    session: Session, games: list[tuple[tuple[str, ...], tuple[float, ...]]], now: datetime
) -> list[StoredRating]:
    """Rate games among bot levels (each: every seat's level and rank, in the order played) from
    their stored ratings: ``coloretto seed-ratings``. No game of the site is made or marked; the
    levels' rows are locked while they are updated (a server may be rating games meanwhile)."""
    from coloretto.arena.stats import rate_game

    players = sorted({bot_player(level) for levels, _ranks in games for level in levels})
    if not players:
        return []
    _ensure_ratings(session, dict.fromkeys(players), now)
    rows = {
        row.player: row
        for row in session.scalars(
            select(RatingRow)
            .where(RatingRow.player.in_(players))
            .order_by(RatingRow.player)
            .with_for_update()
        )
    }
    ratings = {player: (row.mu, row.sigma) for player, row in rows.items()}
    for levels, ranks in games:
        seats = [bot_player(level) for level in levels]
        ratings.update(rate_game(ratings, seats, ranks))
        for player in set(seats):
            rows[player].games += 1
    for player, row in rows.items():
        row.mu, row.sigma = ratings[player]
        row.updated_at = now
    session.flush()
    return [
        StoredRating(p, p.split(":", 1)[1], None, rows[p].mu, rows[p].sigma, rows[p].games) for p in players
    ]
