"""Every read and write of the game server's database, as plain functions of a session.

Writes are jobs for :class:`coloretto.web.writer.GroupCommitWriter` (many of
them share one transaction, one fsync); reads run in a thread. The database
is the guard between server processes: a move is stored under its number
(the primary key), so two processes can never store two moves with one
number, and a seat is taken only while its row says it is free.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast

from sqlalchemy import CursorResult, Result, Table, bindparam, delete, func, insert, select, update
from sqlalchemy.orm import Session, selectinload

from coloretto.match import Match
from coloretto.rules import Rules
from coloretto.web.live import LiveGame, SeatState, aware
from coloretto.web.models import (
    ChatRow,
    GameRow,
    MoveRow,
    RatingHistoryRow,
    RatingRow,
    ReviewRow,
    SeatRow,
    SessionRow,
    ThrottleRow,
    UserRow,
)
from coloretto.web.schemas import ChatEntry, RatingChange, RatingValue

GAMES = cast(Table, GameRow.__table__)
SEATS = cast(Table, SeatRow.__table__)
MOVES = cast(Table, MoveRow.__table__)


def changed_rows(result: Result[Any]) -> int:
    """The rows an UPDATE changed (every driver here reports it)."""
    return int(cast(CursorResult[Any], result).rowcount)


@dataclass(frozen=True)
class NewGame:
    id: str
    name: str
    status: str
    rules: dict[str, Any]
    seed: int
    seats: list[SeatState]
    created_at: datetime
    move_seconds: int | None
    game_seconds: int | None
    creator: str | None
    creator_seat: int | None = None
    rated: bool = False
    private: bool = False
    rematch_of: str | None = None


def insert_game(session: Session, new: NewGame) -> None:
    playing = new.status == "playing"
    session.add(
        GameRow(
            id=new.id,
            name=new.name,
            status=new.status,
            rules=new.rules,
            seed=new.seed,
            move_count=0,
            created_at=new.created_at,
            updated_at=new.created_at,
            move_seconds=new.move_seconds,
            game_seconds=new.game_seconds,
            turn_started_at=new.created_at if playing else None,
            creator=new.creator,
            creator_seat=new.creator_seat,
            rated=new.rated,
            private=new.private,
            rematch_of=new.rematch_of,
        )
    )
    # the seats go in after the game (their foreign key), in the same transaction
    session.flush()
    for i, s in enumerate(new.seats):
        session.add(
            SeatRow(
                game_id=new.id,
                seat=i,
                kind=s.kind,
                bot=s.bot,
                name=s.name,
                token_hash=s.token_hash,
                joined_at=new.created_at if s.name else None,
                user_id=s.user_id,
                reserved_hash=s.reserved_hash,
            )
        )


@dataclass(frozen=True)
class SeatTaken:
    taken: bool  #: False: someone (perhaps on another process) took it first
    starts: bool  #: it was the last free seat: the game began


def take_seat(
    session: Session,
    game_id: str,
    seat: int,
    name: str,
    token_hash: str,
    now: datetime,
    user_id: int | None = None,
) -> SeatTaken:
    """Give a free seat to a person (``user_id``: logged in, the seat is their account's). The
    game's row is locked first, so that two processes giving away the last two seats at once
    agree on which of them starts the game. An account that holds another seat of the game
    already is an IntegrityError (one seat per account and game)."""
    game = session.get(GameRow, game_id, with_for_update=True)
    if game is None or game.status != "open":
        return SeatTaken(False, False)
    taken = changed_rows(
        session.execute(
            update(SeatRow)
            .where(SeatRow.game_id == game_id, SeatRow.seat == seat, SeatRow.name.is_(None))
            .values(name=name, token_hash=token_hash, joined_at=now, user_id=user_id, reserved_hash=None)
        )
    )
    if not taken:
        return SeatTaken(False, False)
    free = session.scalar(
        select(func.count())
        .select_from(SeatRow)
        .where(SeatRow.game_id == game_id, SeatRow.kind == "human", SeatRow.name.is_(None))
    )
    game.updated_at = now
    starts = not free
    if starts:
        game.status = "playing"
        game.turn_started_at = now
    return SeatTaken(True, starts)


@dataclass(frozen=True)
class MoveWrite:
    game_id: str
    number: int  #: over the whole match, from 1: the guard against a second move with this number
    deal: int
    seat: int
    move: str  #: the record notation
    at: datetime
    status: str  #: the game's status once this move is counted
    result: dict[str, Any] | None
    time_used: float | None  #: the seat's bank spent, when the table has one and a person moved
    #: the last move of a rated game: the ratings it moves, in the same transaction
    ratings: RatingJob | None = None


#: the statements of a move, made once: executed with each move's values, they are compiled once too
_INSERT_MOVE = MOVES.insert()
_UPDATE_GAME = (
    GAMES.update()
    .where(GAMES.c.id == bindparam("game"))
    .values(
        move_count=bindparam("number"),
        status=bindparam("status"),
        updated_at=bindparam("at"),
        result=bindparam("result"),
        turn_started_at=bindparam("at"),
    )
)
_UPDATE_BANK = (
    SEATS.update()
    .where(SEATS.c.game_id == bindparam("game"), SEATS.c.seat == bindparam("seat_number"))
    .values(time_used=bindparam("time_used"))
)


def store_move(session: Session, write: MoveWrite) -> list[RatingChange] | None:
    """Raises IntegrityError when a move with this number is already stored. Core statements on the
    session's connection: the ORM's unit of work costs more than the statements themselves. The
    last move of a rated game moves the ratings too: their changes are the answer."""
    connection = session.connection()
    connection.execute(
        _INSERT_MOVE,
        {
            "game_id": write.game_id,
            "number": write.number,
            "deal": write.deal,
            "seat": write.seat,
            "move": write.move,
            "created_at": write.at,
        },
    )
    connection.execute(
        _UPDATE_GAME,
        {
            "game": write.game_id,
            "number": write.number,
            "status": write.status,
            "at": write.at,
            "result": write.result,
        },
    )
    if write.time_used is not None:
        connection.execute(
            _UPDATE_BANK, {"game": write.game_id, "seat_number": write.seat, "time_used": write.time_used}
        )
    if write.ratings is not None:
        return apply_ratings(session, write.ratings, write.at)
    return None


def end_games(session: Session, ids: list[str], was: str, becomes: str, now: datetime) -> list[str]:
    """Move games still in status ``was`` to ``becomes`` (expired, abandoned); the ids changed."""
    changed = []
    for game_id in ids:
        done = changed_rows(
            session.execute(
                update(GameRow)
                .where(GameRow.id == game_id, GameRow.status == was)
                .values(status=becomes, updated_at=now)
            )
        )
        if done:
            changed.append(game_id)
    return changed


def set_away(
    session: Session,
    game_id: str,
    seat: int,
    away: bool,
    now: datetime,
    turn_restarts: bool,
    time_used: float | None = None,
) -> bool:
    """A bot takes a person's seat over (away) or the person takes it back; False if it already was.
    ``time_used``: the seat's bank spent, with the turn that ran out."""
    changed = changed_rows(
        session.execute(
            update(SeatRow)
            .where(SeatRow.game_id == game_id, SeatRow.seat == seat, SeatRow.away.is_(not away))
            .values(away=away)
        )
    )
    if changed and time_used is not None:
        session.execute(
            update(SeatRow)
            .where(SeatRow.game_id == game_id, SeatRow.seat == seat)
            .values(time_used=time_used)
        )
    if changed and turn_restarts:
        session.execute(update(GameRow).where(GameRow.id == game_id).values(turn_started_at=now))
    return bool(changed)


# ------------------------------------------------------------------- reads


@dataclass(frozen=True)
class StoredGame:
    """A game as the database holds it: its setup and its moves, not yet replayed."""

    live: LiveGame  #: with a fresh match: the moves below are not played yet
    moves: list[tuple[int, int, str]]  #: (number, seat, notation)


def read_game(session: Session, game_id: str) -> StoredGame | None:
    row = session.get(GameRow, game_id)
    if row is None:
        return None
    seats = [
        SeatState(
            s.kind,
            s.bot,
            s.name,
            s.token_hash,
            bool(s.away),
            float(s.time_used),
            s.user_id,
            bool(s.resigned),
            s.reserved_hash,
        )
        for s in row.seats
    ]
    moves = session.execute(
        select(MoveRow.number, MoveRow.seat, MoveRow.move)
        .where(MoveRow.game_id == game_id)
        .order_by(MoveRow.number)
    ).all()
    rules = Rules.from_dict(row.rules)
    live = LiveGame(
        id=row.id,
        name=row.name,
        status=row.status,
        rules=rules,
        seed=row.seed,
        seats=seats,
        created_at=row.created_at,
        updated_at=row.updated_at,
        match=Match(rules, row.seed),
        move_seconds=row.move_seconds,
        game_seconds=row.game_seconds,
        turn_started_at=row.turn_started_at,
        rated=bool(row.rated),
        private=bool(row.private),
        creator_seat=row.creator_seat,
        rematch_id=row.rematch_id,
        rematch_of=row.rematch_of,
        rating_changes=rating_changes(session, game_id) if row.ratings_applied else None,
    )
    return StoredGame(live, [(n, s, m) for n, s, m in moves])


def unfinished_ids(session: Session, ended: tuple[str, ...]) -> list[str]:
    return list(session.scalars(select(GameRow.id).where(GameRow.status.not_in(ended))).all())


def stored_progress(session: Session, ids: list[str]) -> dict[str, tuple[int, str]]:
    """Each game's move count and status in the database (games not stored are left out)."""
    games = GAMES.c
    rows = session.execute(select(games.id, games.move_count, games.status).where(games.id.in_(ids))).all()
    return {game_id: (int(moves), str(status)) for game_id, moves, status in rows}


def count_waiting(session: Session, creator: str | None = None) -> int:
    query = select(func.count()).select_from(GameRow).where(GameRow.status == "open")
    if creator is not None:
        query = query.where(GameRow.creator == creator)
    return int(session.scalar(query) or 0)


def stale_ids(session: Session, status: str, before: datetime) -> list[str]:
    """Games in ``status`` with no change since ``before``."""
    return list(
        session.scalars(
            select(GameRow.id).where(GameRow.status == status, GameRow.updated_at <= before)
        ).all()
    )


def created_before(session: Session, status: str, before: datetime) -> list[str]:
    return list(
        session.scalars(
            select(GameRow.id).where(GameRow.status == status, GameRow.created_at <= before)
        ).all()
    )


@dataclass(frozen=True)
class ListedGame:
    id: str
    name: str
    status: str
    rules: Rules
    seats: list[SeatState]
    moves: int
    created_at: datetime
    updated_at: datetime
    result: dict[str, Any] | None
    move_seconds: int | None
    game_seconds: int | None
    rated: bool = False
    private: bool = False
    creator_seat: int | None = None
    rematch_id: str | None = None
    rematch_of: str | None = None


def listed_seats(row: GameRow) -> list[SeatState]:
    """A game's seats as a listing shows them: no token digest (a reservation only as a mark)."""
    return [
        SeatState(
            s.kind,
            s.bot,
            s.name,
            None,
            bool(s.away),
            user_id=s.user_id,
            resigned=bool(s.resigned),
            reserved_hash="kept" if s.reserved_hash else None,
        )
        for s in row.seats
    ]


def list_games(
    session: Session, status: str | None, limit: int, user_id: int | None = None
) -> list[ListedGame]:
    """The games listed in the lobby, newest activity first: private tables never are. With
    ``user_id``: the games of that account (a seat of theirs, or one kept for them), private too."""
    query = (
        select(GameRow).options(selectinload(GameRow.seats)).order_by(GameRow.updated_at.desc()).limit(limit)
    )
    if user_id is None:
        query = query.where(GameRow.private.is_(False))
    else:
        query = query.where(GameRow.id.in_(select(SeatRow.game_id).where(SeatRow.user_id == user_id)))
    if status:
        query = query.where(GameRow.status == status)
    out = []
    for row in session.scalars(query).all():
        seats = listed_seats(row)
        out.append(
            ListedGame(
                row.id,
                row.name,
                row.status,
                Rules.from_dict(row.rules),
                seats,
                row.move_count,
                row.created_at,
                row.updated_at,
                row.result,
                row.move_seconds,
                row.game_seconds,
                bool(row.rated),
                bool(row.private),
                row.creator_seat,
                row.rematch_id,
                row.rematch_of,
            )
        )
    return out


# ------------------------------------------------------------------- reviews


@dataclass(frozen=True)
class StoredReview:
    """A review's row: its progress while it runs, its JSON text once done."""

    game_id: str
    deal: int
    budget: int
    status: str  #: running, done, failed
    done: int
    total: int
    data: str | None
    error: str | None
    updated_at: datetime


def read_review(session: Session, game_id: str, deal: int, budget: int) -> StoredReview | None:
    row = session.get(ReviewRow, (game_id, deal, budget))
    if row is None:
        return None
    return StoredReview(
        row.game_id,
        row.deal,
        row.budget,
        row.status,
        row.done,
        row.total,
        row.data,
        row.error,
        aware(row.updated_at),
    )


def claim_review(
    session: Session, game_id: str, deal: int, budget: int, total: int, now: datetime, stale_before: datetime
) -> bool:
    """Mark a review running (from scratch) unless it is done, or running and updated since
    ``stale_before`` (another process works on it); True if this caller is to run it. The row is
    locked first (PostgreSQL), so that of two processes only one claims it; a row inserted by
    another process at the same moment is an IntegrityError, for the caller to read again."""
    row = session.get(ReviewRow, (game_id, deal, budget), with_for_update=True)
    if row is None:
        session.add(
            ReviewRow(
                game_id=game_id,
                deal=deal,
                budget=budget,
                status="running",
                done=0,
                total=total,
                data=None,
                error=None,
                updated_at=now,
            )
        )
        session.flush()
        return True
    if row.status == "done" or (row.status == "running" and aware(row.updated_at) > stale_before):
        return False
    row.status, row.done, row.total, row.updated_at = "running", 0, total, now
    row.data = row.error = None
    return True


def review_progress(session: Session, game_id: str, deal: int, budget: int, done: int, now: datetime) -> None:
    """A running review's progress (and that it is alive)."""
    session.execute(
        update(ReviewRow)
        .where(
            ReviewRow.game_id == game_id,
            ReviewRow.deal == deal,
            ReviewRow.budget == budget,
            ReviewRow.status == "running",
        )
        .values(done=done, updated_at=now)
    )


def end_review(
    session: Session,
    game_id: str,
    deal: int,
    budget: int,
    status: str,
    now: datetime,
    data: str | None = None,
    error: str | None = None,
    done: int | None = None,
) -> None:
    """A review done (``data``: its JSON) or failed (``error``: why)."""
    values: dict[str, Any] = {"status": status, "data": data, "error": error, "updated_at": now}
    if done is not None:
        values["done"] = done
    session.execute(
        update(ReviewRow)
        .where(ReviewRow.game_id == game_id, ReviewRow.deal == deal, ReviewRow.budget == budget)
        .values(**values)
    )


# ---------------------------------------------------------------- table features


def resign_seat(session: Session, game_id: str, seat: int, now: datetime, turn_restarts: bool) -> bool:
    """A person gives the game up: the seat is a bot's to the end (away) and marked resigned for
    good; False if it already was."""
    changed = changed_rows(
        session.execute(
            update(SeatRow)
            .where(SeatRow.game_id == game_id, SeatRow.seat == seat, SeatRow.resigned.is_(False))
            .values(resigned=True, away=True)
        )
    )
    if changed and turn_restarts:
        session.execute(update(GameRow).where(GameRow.id == game_id).values(turn_started_at=now))
    return bool(changed)


def create_rematch(session: Session, old_id: str, new: NewGame) -> str:
    """Store ``new`` as the rematch of the finished game ``old_id`` unless it has one already: the
    id of the rematch either way. The old game's row is locked first, so that players of two
    processes asking at once get the same new game."""
    existing = session.execute(
        select(GAMES.c.rematch_id).where(GAMES.c.id == old_id).with_for_update()
    ).scalar_one_or_none()
    if existing:
        return str(existing)
    insert_game(session, new)
    session.execute(update(GameRow).where(GameRow.id == old_id).values(rematch_id=new.id))
    return new.id


# ------------------------------------------------------------------- chat


def _chat_entry(row: ChatRow, user: str | None) -> ChatEntry:
    return ChatEntry(
        number=row.number,
        seat=row.seat,
        name=row.name,
        user=user,
        text=row.text,
        at=aware(row.created_at).isoformat(timespec="seconds"),
    )


def add_chat(
    session: Session,
    game_id: str,
    seat: int | None,
    user_id: int | None,
    user_name: str | None,
    name: str,
    text: str,
    now: datetime,
) -> ChatEntry:
    """Store a chat message under the game's next number. The game's row is locked first
    (PostgreSQL), so that two processes number their messages one after the other; the number
    is the primary key, so that they could never store two under one number."""
    session.execute(select(GAMES.c.id).where(GAMES.c.id == game_id).with_for_update())
    last = session.scalar(select(func.max(ChatRow.number)).where(ChatRow.game_id == game_id))
    row = ChatRow(
        game_id=game_id,
        number=int(last or 0) + 1,
        seat=seat,
        user_id=user_id,
        name=name,
        text=text,
        created_at=now,
    )
    session.add(row)
    session.flush()
    return _chat_entry(row, user_name)


def read_chat(session: Session, game_id: str, after: int = 0, limit: int = 200) -> list[ChatEntry]:
    """The game's messages numbered after ``after``, oldest first (``limit`` of them at most)."""
    rows = session.execute(
        select(ChatRow, UserRow.name)
        .outerjoin(UserRow, UserRow.id == ChatRow.user_id)
        .where(ChatRow.game_id == game_id, ChatRow.number > after)
        .order_by(ChatRow.number)
        .limit(limit)
    ).all()
    return [_chat_entry(row, user) for row, user in rows]


def last_chat(session: Session, game_id: str, count: int) -> list[ChatEntry]:
    """The game's last ``count`` messages, oldest first."""
    rows = session.execute(
        select(ChatRow, UserRow.name)
        .outerjoin(UserRow, UserRow.id == ChatRow.user_id)
        .where(ChatRow.game_id == game_id)
        .order_by(ChatRow.number.desc())
        .limit(count)
    ).all()
    return [_chat_entry(row, user) for row, user in reversed(rows)]


# ---------------------------------------------------------------- accounts


@dataclass(frozen=True)
class StoredUser:
    id: int
    name: str
    password_hash: str
    created_at: datetime


def _user(row: UserRow) -> StoredUser:
    return StoredUser(row.id, row.name, row.password_hash, aware(row.created_at))


def user_by_key(session: Session, name_key: str) -> StoredUser | None:
    row = session.scalars(select(UserRow).where(UserRow.name_key == name_key)).first()
    return None if row is None else _user(row)


def insert_user(session: Session, name: str, name_key: str, password_hash: str, now: datetime) -> int:
    """A new account's id; an IntegrityError when the name (any case) is taken."""
    row = UserRow(name=name, name_key=name_key, password_hash=password_hash, created_at=now)
    session.add(row)
    session.flush()
    return int(row.id)


def set_password_hash(session: Session, user_id: int, password_hash: str) -> None:
    session.execute(update(UserRow).where(UserRow.id == user_id).values(password_hash=password_hash))


def add_session(session: Session, token_hash: str, user_id: int, now: datetime, expires: datetime) -> None:
    session.add(SessionRow(token_hash=token_hash, user_id=user_id, created_at=now, expires_at=expires))


def session_user(session: Session, token_hash: str, now: datetime) -> StoredUser | None:
    """The account a session token's digest logs in, unless the session has expired."""
    row = session.scalars(
        select(UserRow)
        .join(SessionRow, SessionRow.user_id == UserRow.id)
        .where(SessionRow.token_hash == token_hash, SessionRow.expires_at > now)
    ).first()
    return None if row is None else _user(row)


def delete_session(session: Session, token_hash: str) -> None:
    session.execute(delete(SessionRow).where(SessionRow.token_hash == token_hash))


def throttle_counts(session: Session, keys: list[str], since: datetime) -> dict[str, tuple[int, datetime]]:
    """For each key with events since ``since``: how many, and the latest."""
    rows = session.execute(
        select(ThrottleRow.key, func.count(), func.max(ThrottleRow.at))
        .where(ThrottleRow.key.in_(keys), ThrottleRow.at > since)
        .group_by(ThrottleRow.key)
    ).all()
    return {str(key): (int(count), aware(latest)) for key, count, latest in rows}


def add_throttle(session: Session, keys: list[str], now: datetime) -> None:
    session.execute(insert(ThrottleRow), [{"key": key, "at": now} for key in keys])


def clear_throttle(session: Session, key: str) -> None:
    session.execute(delete(ThrottleRow).where(ThrottleRow.key == key))


def purge_accounts(session: Session, events_before: datetime, now: datetime) -> None:
    """Forget throttle events too old to count, and sessions that have expired."""
    session.execute(delete(ThrottleRow).where(ThrottleRow.at < events_before))
    session.execute(delete(SessionRow).where(SessionRow.expires_at <= now))


# ----------------------------------------------------------------- ratings

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
        .where(RatingRow.games >= min_games)
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
    return PlayerData(_user(user_row), rating, len(finished), wins, results, history)


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
