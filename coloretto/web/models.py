"""The database tables: a game (its rules and secret seed), its seats, its moves and its reviews.

A game is stored as its setup plus the list of accepted moves, nothing else:
the position is rebuilt by replaying the moves. The ``seed`` column deals the
match (every game of it) and is secret while the match is in progress; it
never leaves the server then.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import JSON, BigInteger, Boolean, DateTime, Float, ForeignKey, Integer, String, Text
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship


def utcnow() -> datetime:
    return datetime.now(UTC)


class Base(DeclarativeBase):
    pass


class GameRow(Base):
    __tablename__ = "games"

    id: Mapped[str] = mapped_column(String(16), primary_key=True)
    name: Mapped[str] = mapped_column(String(80))
    #: open, playing, finished, expired (nobody came to play), abandoned (nobody could finish it)
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

    seats: Mapped[list[SeatRow]] = relationship(
        back_populates="game", order_by="SeatRow.seat", cascade="all, delete-orphan"
    )


class SeatRow(Base):
    __tablename__ = "seats"

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
    """The review of one game of a finished match at one budget (:mod:`coloretto.web.reviews`):
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
