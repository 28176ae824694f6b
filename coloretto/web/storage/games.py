"""The games in the database: created, seats taken, moves stored (a move under its number: two
processes can never store two moves with one number), read back, listed, ended.

Writes are jobs for :class:`coloretto.web.runtime.writer.GroupCommitWriter` (many of them share one
transaction, one fsync); reads run in a thread. Every function takes the session.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import bindparam, func, select, update
from sqlalchemy.orm import Session, selectinload

from coloretto.match import Match
from coloretto.rules import Rules
from coloretto.web.common.schemas import RatingChange
from coloretto.web.storage.ratings import RatingJob, apply_ratings, rating_changes
from coloretto.web.storage.rows import (
    GameRow,
    MoveRow,
    SeatRow,
)
from coloretto.web.storage.tables import GAMES, MOVES, SEATS, changed_rows, listed_seats
from coloretto.web.table.live import LiveGame, SeatState
from coloretto.web.table.views import ListedGame


def new_game_id() -> str:
    """A game's id: 8 characters of the URL-safe alphabet (48 random bits), never beginning with
    '-', which a command line would take for an option (``coloretto admin end-game ID``)."""
    while True:
        game_id = secrets.token_urlsafe(6)
        if not game_id.startswith("-"):
            return game_id


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
    # a game a moderator ended takes no move more, whichever process it came through
    .where(GAMES.c.id == bindparam("game"), GAMES.c.status != "stopped")
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


class GameStopped(Exception):
    """A move for a game a moderator ended (its transaction is rolled back: the move is not stored)."""


def store_move(session: Session, write: MoveWrite) -> list[RatingChange] | None:
    """Raises IntegrityError when a move with this number is already stored, :class:`GameStopped`
    when a moderator ended the game. Core statements on the session's connection: the ORM's unit of
    work costs more than the statements themselves. The last move of a rated game moves the
    ratings too: their changes are the answer."""
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
    updated = connection.execute(
        _UPDATE_GAME,
        {
            "game": write.game_id,
            "number": write.number,
            "status": write.status,
            "at": write.at,
            "result": write.result,
        },
    )
    if not changed_rows(updated):
        raise GameStopped(write.game_id)
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
    return read_games(session, [game_id]).get(game_id)


def read_games(session: Session, ids: list[str]) -> dict[str, StoredGame]:
    """The games stored under ``ids`` (those that are not are left out), in three queries however
    many there are: a process adopting a restarted one's hundreds of games reads them at once."""
    rows = session.scalars(
        select(GameRow).where(GameRow.id.in_(ids)).options(selectinload(GameRow.seats))
    ).all()
    moves: dict[str, list[tuple[int, int, str]]] = {row.id: [] for row in rows}
    if moves:
        for game_id, number, seat, move in session.execute(
            select(MoveRow.game_id, MoveRow.number, MoveRow.seat, MoveRow.move)
            .where(MoveRow.game_id.in_(list(moves)))
            .order_by(MoveRow.game_id, MoveRow.number)
        ):
            moves[game_id].append((number, seat, move))
    return {row.id: StoredGame(_live_of(session, row), moves[row.id]) for row in rows}


def _live_of(session: Session, row: GameRow) -> LiveGame:
    """A game row as a game in memory, before its moves are played."""
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
            bool(s.deleted),
        )
        for s in row.seats
    ]
    rules = Rules.from_dict(row.rules)
    return LiveGame(
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
        rating_changes=rating_changes(session, row.id) if row.ratings_applied else None,
        stop_reason=row.stop_reason,
    )


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
                row.stop_reason,
            )
        )
    return out


# ------------------------------------------------------------------- reviews


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
