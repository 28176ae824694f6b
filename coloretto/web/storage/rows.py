"""The database tables: a game (its rules and secret seed), its seats, its moves, its reviews and
its chat; the accounts of people who log in, their sessions and ratings.

A game is stored as its setup plus the list of accepted moves, nothing else:
the position is rebuilt by replaying the moves. The ``seed`` column deals the
match (every game of it) and is secret while the match is in progress; it
never leaves the server then.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    false,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship


def utcnow() -> datetime:
    return datetime.now(UTC)


class Base(DeclarativeBase):
    pass


class GameRow(Base):
    __tablename__ = "games"

    id: Mapped[str] = mapped_column(String(16), primary_key=True)
    name: Mapped[str] = mapped_column(String(80))
    #: open, playing, finished, expired (nobody came to play), abandoned (nobody could finish it),
    #: cancelled (by its creator while it waited for players)
    status: Mapped[str] = mapped_column(String(16), index=True)
    rules: Mapped[dict[str, Any]] = mapped_column(JSON)
    seed: Mapped[int] = mapped_column(BigInteger)  #: secret while the match is in progress
    move_count: Mapped[int] = mapped_column(Integer, default=0)
    result: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    #: the table's turn clock: seconds for each move, and each seat's bank for the whole match
    move_seconds: Mapped[int | None] = mapped_column(Integer, nullable=True)
    game_seconds: Mapped[int | None] = mapped_column(Integer, nullable=True)
    #: when the seat to move began its turn (the clock of a game resumed by another process)
    turn_started_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    #: a digest of the address that created it (games waiting per client, counted on any process)
    creator: Mapped[str | None] = mapped_column(String(64), nullable=True, index=True)
    #: the seat of the person who created it (who may cancel it while it waits for players)
    creator_seat: Mapped[int | None] = mapped_column(Integer, nullable=True)
    #: a rated table: its people are logged in, its bots difficulty levels, and its result moves ratings
    rated: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    #: a private table: never listed, reached by its link only
    private: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    #: the ratings were updated from its result: set in the transaction that updates them, so that
    #: they are updated once whichever process finishes the game
    ratings_applied: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    #: the rematch made of this finished game, and the game this one is the rematch of
    rematch_id: Mapped[str | None] = mapped_column(String(16), nullable=True)
    rematch_of: Mapped[str | None] = mapped_column(String(16), nullable=True)
    #: why a moderator ended it (status ``stopped``)
    stop_reason: Mapped[str | None] = mapped_column(Text, nullable=True)

    seats: Mapped[list[SeatRow]] = relationship(
        back_populates="game", order_by="SeatRow.seat", cascade="all, delete-orphan"
    )


class SeatRow(Base):
    __tablename__ = "seats"
    #: one seat per account and game (NULLs, the guests' and bots' seats, never collide)
    __table_args__ = (Index("uq_seats_game_user", "game_id", "user_id", unique=True),)

    game_id: Mapped[str] = mapped_column(ForeignKey("games.id", ondelete="CASCADE"), primary_key=True)
    seat: Mapped[int] = mapped_column(Integer, primary_key=True)
    kind: Mapped[str] = mapped_column(String(8))  #: human or bot
    bot: Mapped[str | None] = mapped_column(String(64), nullable=True)
    name: Mapped[str | None] = mapped_column(String(40), nullable=True)  #: None: not taken yet
    token_hash: Mapped[str | None] = mapped_column(String(64), nullable=True, unique=True)
    joined_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    #: a person's seat a bot plays for now (the clock ran out, or the person was gone too long)
    away: Mapped[bool] = mapped_column(Boolean, default=False, server_default="0")
    time_used: Mapped[float] = mapped_column(Float, default=0.0, server_default="0")  #: of the bank
    #: the account whose seat it is (a person logged in), or, while the seat is free, for whom it is
    #: kept (a rematch's seat)
    user_id: Mapped[int | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL"), nullable=True, index=True
    )
    #: a person who resigned: a bot plays the seat to the end, and it ranks below everyone else
    resigned: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    #: a free rematch seat kept for a guest: the digest of their seat token in the game before
    reserved_hash: Mapped[str | None] = mapped_column(String(64), nullable=True)
    #: the account that held it was deleted: its name is gone, the seat shows "deleted player"
    deleted: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())

    game: Mapped[GameRow] = relationship(back_populates="seats")


class MoveRow(Base):
    """One accepted action, in the record notation (with the cards it turned over)."""

    __tablename__ = "moves"
    game_id: Mapped[str] = mapped_column(ForeignKey("games.id", ondelete="CASCADE"), primary_key=True)
    number: Mapped[int] = mapped_column(Integer, primary_key=True)  #: 1, 2, … over the whole match
    deal: Mapped[int] = mapped_column(Integer)  #: which game of the match, from 1
    seat: Mapped[int] = mapped_column(Integer)
    move: Mapped[str] = mapped_column(String(32))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class ReviewRow(Base):
    """The review of one game of a finished match at one budget (:mod:`coloretto.web.features.reviews`):
    its progress while it runs, the review's JSON once it is done."""

    __tablename__ = "reviews"
    game_id: Mapped[str] = mapped_column(ForeignKey("games.id", ondelete="CASCADE"), primary_key=True)
    deal: Mapped[int] = mapped_column(Integer, primary_key=True)  #: which game of the match, from 1
    budget: Mapped[int] = mapped_column(Integer, primary_key=True)  #: iterations per position
    status: Mapped[str] = mapped_column(String(16))  #: running, done, failed
    done: Mapped[int] = mapped_column(Integer, default=0, server_default="0")  #: tasks finished
    total: Mapped[int] = mapped_column(Integer, default=0, server_default="0")  #: tasks of the plan
    data: Mapped[str | None] = mapped_column(Text, nullable=True)  #: ``Review.to_json()`` once done
    error: Mapped[str | None] = mapped_column(Text, nullable=True)  #: why it failed
    #: written at least every few seconds while it runs: a review left running by a process that died
    #: is told by its age
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class ChatRow(Base):
    """One chat message at a table, stored as the person typed it (text, never markup)."""

    __tablename__ = "chat_messages"
    game_id: Mapped[str] = mapped_column(ForeignKey("games.id", ondelete="CASCADE"), primary_key=True)
    number: Mapped[int] = mapped_column(Integer, primary_key=True)  #: 1, 2, … per game
    seat: Mapped[int | None] = mapped_column(Integer, nullable=True)  #: None: a spectator
    user_id: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"), nullable=True)
    name: Mapped[str] = mapped_column(String(40))  #: the name shown when it was said
    text: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    #: hidden by a moderator: shown to nobody but the administrators
    hidden_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)


class UserRow(Base):
    """A person's account: a name unique whatever its case, and an Argon2id hash of the password."""

    __tablename__ = "users"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    name: Mapped[str] = mapped_column(String(40))  #: as the person typed it (cleaned)
    #: the name's key: NFKC, case-folded; unique, so "Ann" and "ANN" are one name
    name_key: Mapped[str] = mapped_column(String(160), unique=True)
    password_hash: Mapped[str] = mapped_column(String(255))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    #: an administrator: the admin page and its API, and ``coloretto admin`` names them
    is_admin: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    #: banned by a moderator: cannot log in, chat or sit (``ban_reason`` says why)
    banned_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    ban_reason: Mapped[str | None] = mapped_column(Text, nullable=True)
    #: deleted by its person: the row stays (its id is never given again) with no name, no password
    deleted_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)


class SessionRow(Base):
    """A logged-in browser: the cookie holds a random token, the database only its digest."""

    __tablename__ = "user_sessions"
    token_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), index=True)


class ThrottleRow(Base):
    """One counted event of a limit every process shares: a failed login (per name, per address),
    a sign-up (per address). Old rows are deleted."""

    __tablename__ = "throttle_events"
    __table_args__ = (Index("ix_throttle_events_key_at", "key", "at"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    key: Mapped[str] = mapped_column(String(200))  #: e.g. login-name:<name key>, signup-address:<digest>
    at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow, index=True)


class RatingRow(Base):
    """A player's openskill rating (Plackett-Luce): a person's (``user:ID``) or a bot level's
    (``bot:hard``)."""

    __tablename__ = "ratings"
    player: Mapped[str] = mapped_column(String(40), primary_key=True)
    user_id: Mapped[int | None] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), nullable=True, unique=True
    )
    mu: Mapped[float] = mapped_column(Float)
    sigma: Mapped[float] = mapped_column(Float)
    games: Mapped[int] = mapped_column(Integer, default=0, server_default="0")  #: rated games
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class RatingHistoryRow(Base):
    """A seat's rating before and after a rated game, and its rank there (1 first, ties shared)."""

    __tablename__ = "rating_history"
    __table_args__ = (Index("ix_rating_history_player_at", "player", "created_at"),)
    game_id: Mapped[str] = mapped_column(ForeignKey("games.id", ondelete="CASCADE"), primary_key=True)
    seat: Mapped[int] = mapped_column(Integer, primary_key=True)
    player: Mapped[str] = mapped_column(String(40))
    rank: Mapped[float] = mapped_column(Float)
    mu_before: Mapped[float] = mapped_column(Float)
    sigma_before: Mapped[float] = mapped_column(Float)
    mu_after: Mapped[float] = mapped_column(Float)
    sigma_after: Mapped[float] = mapped_column(Float)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class BlockRow(Base):
    """A person who hides another's chat from themselves (both logged in)."""

    __tablename__ = "blocks"
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), primary_key=True)
    blocked_id: Mapped[int] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), primary_key=True, index=True
    )
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class ReportRow(Base):
    """A player's report of a chat message (``game_id``, ``chat_number``) or of a player, with a
    reason from a fixed list and their own words; open until an administrator resolves it."""

    __tablename__ = "reports"
    __table_args__ = (
        Index("ix_reports_status_created", "status", "created_at"),
        {"sqlite_autoincrement": True},
    )
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    reporter_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    kind: Mapped[str] = mapped_column(String(16))  #: message or player
    game_id: Mapped[str | None] = mapped_column(ForeignKey("games.id", ondelete="CASCADE"), nullable=True)
    chat_number: Mapped[int | None] = mapped_column(Integer, nullable=True)
    reported_id: Mapped[int | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL"), nullable=True, index=True
    )
    #: the name the reported person had (a guest's seat name, for a guest's message)
    reported_name: Mapped[str | None] = mapped_column(String(40), nullable=True)
    reason: Mapped[str] = mapped_column(String(16))
    text: Mapped[str] = mapped_column(Text, default="", server_default="")
    status: Mapped[str] = mapped_column(String(16), default="open", server_default="open")
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    resolved_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    resolved_by: Mapped[int | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL"), nullable=True
    )
    resolution: Mapped[str | None] = mapped_column(Text, nullable=True)


class AuditRow(Base):
    """One administrator's action, from the admin page or the command line: who, what, on whom or
    which game, why, when."""

    __tablename__ = "audit_log"
    __table_args__ = ({"sqlite_autoincrement": True},)
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow, index=True)
    actor_id: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"), nullable=True)
    actor: Mapped[str] = mapped_column(String(80))  #: the administrator's name, or "command line"
    via: Mapped[str] = mapped_column(String(8))  #: page or cli
    action: Mapped[str] = mapped_column(String(32))
    target: Mapped[str] = mapped_column(String(120))  #: an account's name, a game, a message, a report
    target_user_id: Mapped[int | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL"), nullable=True
    )
    reason: Mapped[str] = mapped_column(Text, default="", server_default="")


class ModerationEventRow(Base):
    """What a moderator, a person's own account action or the command line changed that every server
    process must act on (a socket to close, a chat message to take back, a game to read again):
    each process reads the new rows about once a second (:mod:`coloretto.web.features.moderation`).
    Old rows are deleted."""

    __tablename__ = "moderation_events"
    __table_args__ = ({"sqlite_autoincrement": True},)
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow, index=True)
    kind: Mapped[str] = mapped_column(String(32))
    user_id: Mapped[int | None] = mapped_column(Integer, nullable=True)
    game_id: Mapped[str | None] = mapped_column(String(16), nullable=True)
    data: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)


class PasswordResetRow(Base):
    """A one-time password reset link an operator made: the digest of its token, valid an hour."""

    __tablename__ = "password_resets"
    token_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    used_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
