"""A table's chat in the database: messages numbered per game, read back in order."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from coloretto.web.common.schemas import ChatEntry
from coloretto.web.storage.reports import visible_to
from coloretto.web.storage.rows import (
    ChatRow,
    UserRow,
)
from coloretto.web.storage.tables import GAMES
from coloretto.web.table.live import aware


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


def read_chat(
    session: Session, game_id: str, after: int = 0, limit: int = 200, viewer: int | None = None
) -> list[ChatEntry]:
    """The game's messages numbered after ``after``, oldest first (``limit`` of them at most):
    not those a moderator hid, nor, for a logged-in ``viewer``, those of the accounts they blocked."""
    query = (
        select(ChatRow, UserRow.name)
        .outerjoin(UserRow, UserRow.id == ChatRow.user_id)
        .where(ChatRow.game_id == game_id, ChatRow.number > after, ChatRow.hidden_at.is_(None))
        .order_by(ChatRow.number)
        .limit(limit)
    )
    if viewer is not None:
        query = query.where(visible_to(viewer))
    return [_chat_entry(row, user) for row, user in session.execute(query).all()]


def last_chat(session: Session, game_id: str, count: int) -> list[ChatEntry]:
    """The game's last ``count`` messages that a moderator did not hide, oldest first (each
    watcher is then sent those of them it may see)."""
    rows = session.execute(
        select(ChatRow, UserRow.name)
        .outerjoin(UserRow, UserRow.id == ChatRow.user_id)
        .where(ChatRow.game_id == game_id, ChatRow.hidden_at.is_(None))
        .order_by(ChatRow.number.desc())
        .limit(count)
    ).all()
    return [_chat_entry(row, user) for row, user in reversed(rows)]


def chat_entry(session: Session, game_id: str, number: int) -> ChatEntry | None:
    """One message (a moderator showed it again), None if it is gone or hidden."""
    found = session.execute(
        select(ChatRow, UserRow.name)
        .outerjoin(UserRow, UserRow.id == ChatRow.user_id)
        .where(ChatRow.game_id == game_id, ChatRow.number == number, ChatRow.hidden_at.is_(None))
    ).first()
    return None if found is None else _chat_entry(found[0], found[1])
