"""Accounts in the database: users, their sessions, and the throttle of failed log-ins and sign-ups."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import delete, func, insert, select, update
from sqlalchemy.orm import Session

from coloretto.web.storage.rows import (
    SessionRow,
    ThrottleRow,
    UserRow,
)
from coloretto.web.storage.tables import changed_rows
from coloretto.web.table.live import aware


@dataclass(frozen=True)
class StoredUser:
    id: int
    name: str
    password_hash: str
    created_at: datetime
    is_admin: bool = False
    banned_at: datetime | None = None
    ban_reason: str | None = None


def stored_user(row: UserRow) -> StoredUser:
    return StoredUser(
        row.id,
        row.name,
        row.password_hash,
        aware(row.created_at),
        bool(row.is_admin),
        aware(row.banned_at) if row.banned_at is not None else None,
        row.ban_reason,
    )


def user_by_key(session: Session, name_key: str) -> StoredUser | None:
    """The account of a name's key (a deleted account has none: its key is replaced)."""
    row = session.scalars(select(UserRow).where(UserRow.name_key == name_key)).first()
    return None if row is None else stored_user(row)


def user_by_id(session: Session, user_id: int) -> StoredUser | None:
    """An account that is not deleted."""
    row = session.get(UserRow, user_id)
    return None if row is None or row.deleted_at is not None else stored_user(row)


def reserved_key(name_key: str) -> str:
    """What a deleted account keeps of its name: a digest of its key, so that the name stays taken
    (nobody else can appear under it) and the name itself is gone."""
    return "deleted:" + hashlib.sha256(name_key.encode()).hexdigest()


def name_in_use(session: Session, name_key: str) -> bool:
    """An account has the name, or had it and was deleted (the name stays reserved)."""
    found = session.scalar(
        select(func.count())
        .select_from(UserRow)
        .where(UserRow.name_key.in_([name_key, reserved_key(name_key)]))
    )
    return bool(found)


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
    """The account a session token's digest logs in, unless the session has expired (or the
    account was banned or deleted since: their sessions are deleted then, this is a second guard)."""
    row = session.scalars(
        select(UserRow)
        .join(SessionRow, SessionRow.user_id == UserRow.id)
        .where(
            SessionRow.token_hash == token_hash,
            SessionRow.expires_at > now,
            UserRow.banned_at.is_(None),
            UserRow.deleted_at.is_(None),
        )
    ).first()
    return None if row is None else stored_user(row)


def delete_session(session: Session, token_hash: str) -> None:
    session.execute(delete(SessionRow).where(SessionRow.token_hash == token_hash))


def end_sessions(session: Session, user_id: int, keep: str | None = None) -> int:
    """End every session of the account (but the one whose digest is ``keep``); how many ended."""
    query = delete(SessionRow).where(SessionRow.user_id == user_id)
    if keep is not None:
        query = query.where(SessionRow.token_hash != keep)
    return changed_rows(session.execute(query))


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
