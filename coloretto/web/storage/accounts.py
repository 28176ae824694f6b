"""Accounts in the database: users, their sessions, and the throttle of failed log-ins and sign-ups."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import delete, func, insert, select, update
from sqlalchemy.orm import Session

from coloretto.web.storage.rows import (
    SessionRow,
    ThrottleRow,
    UserRow,
)
from coloretto.web.table.live import aware


@dataclass(frozen=True)
class StoredUser:
    id: int
    name: str
    password_hash: str
    created_at: datetime


def stored_user(row: UserRow) -> StoredUser:
    return StoredUser(row.id, row.name, row.password_hash, aware(row.created_at))


def user_by_key(session: Session, name_key: str) -> StoredUser | None:
    row = session.scalars(select(UserRow).where(UserRow.name_key == name_key)).first()
    return None if row is None else stored_user(row)


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
    return None if row is None else stored_user(row)


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
