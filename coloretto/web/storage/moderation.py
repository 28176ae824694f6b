"""Moderation in the database: administrators, bans, hidden chat messages, games a moderator ended,
the audit log, and the events that tell every server process about them.

Each administrator's action is one function of the session that checks its target, makes the
change, writes its line of the audit log and the event the server processes act on (a
:class:`~coloretto.web.storage.rows.ModerationEventRow`), all in one transaction: the admin page
(through the group-commit writer) and ``coloretto admin`` (on a session of its own, with a server
running on the same database or not) call the same functions, so that both do exactly the same.
A refused action is a :class:`~coloretto.web.common.errors.ServiceError` saying why; nothing of
it is stored.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import delete, func, select, update
from sqlalchemy.orm import Session

from coloretto.web.common.admin_schemas import AuditEntry
from coloretto.web.common.errors import ServiceError
from coloretto.web.common.i18n import gettext as _
from coloretto.web.common.moderation import Actor, clean_reason
from coloretto.web.common.names import name_key
from coloretto.web.storage.accounts import StoredUser, end_sessions, stored_user
from coloretto.web.storage.rows import (
    AuditRow,
    ChatRow,
    GameRow,
    ModerationEventRow,
    PasswordResetRow,
    UserRow,
)
from coloretto.web.table.live import aware, iso

#: the statuses of a game a moderator may end: waiting for players, or in play
STOPPABLE = ("open", "playing")


# ------------------------------------------------------------------ events


@dataclass(frozen=True)
class StoredEvent:
    """A change every server process acts on (see :mod:`coloretto.web.features.moderation`)."""

    id: int
    kind: str
    user_id: int | None
    game_id: str | None
    data: dict[str, Any]


def add_event(
    session: Session,
    kind: str,
    now: datetime,
    user_id: int | None = None,
    game_id: str | None = None,
    data: dict[str, Any] | None = None,
) -> None:
    session.add(ModerationEventRow(at=now, kind=kind, user_id=user_id, game_id=game_id, data=data or {}))


def events_after(session: Session, after: int, limit: int = 500) -> list[StoredEvent]:
    """The events numbered after ``after``, oldest first."""
    rows = session.scalars(
        select(ModerationEventRow)
        .where(ModerationEventRow.id > after)
        .order_by(ModerationEventRow.id)
        .limit(limit)
    )
    return [StoredEvent(r.id, r.kind, r.user_id, r.game_id, dict(r.data or {})) for r in rows]


def last_event_id(session: Session) -> int:
    return int(session.scalar(select(func.max(ModerationEventRow.id))) or 0)


def purge_events(session: Session, before: datetime) -> None:
    """Forget events older than ``before`` (every process acted on them long ago)."""
    session.execute(delete(ModerationEventRow).where(ModerationEventRow.at < before))


# ------------------------------------------------------------------ the audit log


def add_audit(
    session: Session,
    actor: Actor,
    action: str,
    target: str,
    now: datetime,
    reason: str = "",
    target_user_id: int | None = None,
) -> None:
    session.add(
        AuditRow(
            at=now,
            actor_id=actor.id,
            actor=actor.name[:80],
            via=actor.via,
            action=action,
            target=target[:120],
            target_user_id=target_user_id,
            reason=reason,
        )
    )


def read_audit(session: Session, limit: int, before: int | None = None) -> list[AuditEntry]:
    """The audit log, newest first (``before``: only entries numbered below it)."""
    query = select(AuditRow).order_by(AuditRow.id.desc()).limit(limit)
    if before is not None:
        query = query.where(AuditRow.id < before)
    return [
        AuditEntry(
            id=row.id,
            at=iso(row.at),
            actor=row.actor,
            via=row.via,  # type: ignore[arg-type]
            action=row.action,
            target=row.target,
            reason=row.reason,
        )
        for row in session.scalars(query)
    ]


# ------------------------------------------------------------------ accounts


def account_row(session: Session, name: str, *, lock: bool = False) -> UserRow:
    """The account of a name (any case; not a deleted one), or ``not_found``."""
    query = select(UserRow).where(
        UserRow.name_key == name_key(" ".join(name.split())), UserRow.deleted_at.is_(None)
    )
    if lock:
        query = query.with_for_update()
    row = session.scalars(query).first()
    if row is None:
        raise ServiceError("not_found", _("there is no account named {name}", name=repr(name[:40])), 404)
    return row


def account(session: Session, name: str) -> StoredUser:
    return stored_user(account_row(session, name))


def admin_count(session: Session) -> int:
    return int(
        session.scalar(
            select(func.count())
            .select_from(UserRow)
            .where(UserRow.is_admin.is_(True), UserRow.deleted_at.is_(None))
        )
        or 0
    )


def refuse_last_admin(session: Session, what: str) -> None:
    """Refuse to take away the site's last administrator (the admins' rows are locked first, so
    that two demotions at once cannot both pass)."""
    admins = session.scalars(
        select(UserRow.id)
        .where(UserRow.is_admin.is_(True), UserRow.deleted_at.is_(None))
        .order_by(UserRow.id)
        .with_for_update()
    ).all()
    if len(admins) <= 1:
        raise ServiceError("last_admin", what, 409)


def set_admin(session: Session, actor: Actor, name: str, admin: bool, now: datetime) -> StoredUser:
    """Promote an account to administrator, or demote one (never the last)."""
    row = account_row(session, name, lock=True)
    if admin:
        if row.is_admin:
            raise ServiceError("already_admin", _("{name} is an administrator already", name=row.name), 409)
        if row.banned_at is not None:
            raise ServiceError(
                "banned",
                _("{name} is banned: unban the account before making it an administrator", name=row.name),
                409,
            )
    else:
        if not row.is_admin:
            raise ServiceError("not_admin", _("{name} is not an administrator", name=row.name), 409)
        refuse_last_admin(
            session,
            _("{name} is the site's last administrator: promote another account first", name=row.name),
        )
    row.is_admin = admin
    add_audit(session, actor, "promote" if admin else "demote", row.name, now, target_user_id=row.id)
    return stored_user(row)


def create_admin(
    session: Session, actor: Actor, name: str, key: str, password_hash: str, now: datetime
) -> int:
    """A new administrator's account (the name checked and free: the caller's work)."""
    row = UserRow(name=name, name_key=key, password_hash=password_hash, created_at=now, is_admin=True)
    session.add(row)
    session.flush()
    add_audit(session, actor, "create-admin", name, now, target_user_id=row.id)
    return int(row.id)


def ban(session: Session, actor: Actor, name: str, reason: str, now: datetime) -> StoredUser:
    """Ban an account: it cannot log in, chat or sit; its sessions and reset links end now, and
    every server process hands its seats in games in play to a bot (the ``ban`` event)."""
    reason = clean_reason(reason)
    row = account_row(session, name, lock=True)
    if row.is_admin:
        raise ServiceError(
            "is_admin",
            _("{name} is an administrator: demote the account before banning it", name=row.name),
            409,
        )
    if row.banned_at is not None:
        raise ServiceError("already_banned", _("{name} is banned already", name=row.name), 409)
    row.banned_at = now
    row.ban_reason = reason
    end_sessions(session, row.id)
    session.execute(delete(PasswordResetRow).where(PasswordResetRow.user_id == row.id))
    add_event(session, "ban", now, user_id=row.id)
    add_audit(session, actor, "ban", row.name, now, reason, target_user_id=row.id)
    return stored_user(row)


def unban(session: Session, actor: Actor, name: str, reason: str, now: datetime) -> StoredUser:
    """Lift a ban: the account may log in again (seats a bot took over stay the bot's)."""
    reason = clean_reason(reason, required=False)
    row = account_row(session, name, lock=True)
    if row.banned_at is None:
        raise ServiceError("not_banned", _("{name} is not banned", name=row.name), 409)
    row.banned_at = None
    row.ban_reason = None
    add_event(session, "unban", now, user_id=row.id)
    add_audit(session, actor, "unban", row.name, now, reason, target_user_id=row.id)
    return stored_user(row)


def gone_ids(session: Session) -> set[int]:
    """The accounts banned or deleted: none of them may play, chat or sit."""
    return {
        int(user_id)
        for user_id in session.scalars(
            select(UserRow.id).where((UserRow.banned_at.is_not(None)) | (UserRow.deleted_at.is_not(None)))
        )
    }


# ------------------------------------------------------------------ chat and games


def message_target(game_id: str, number: int) -> str:
    return f"game {game_id} message {number}"


def set_hidden(
    session: Session, actor: Actor, game_id: str, number: int, hidden: bool, reason: str, now: datetime
) -> None:
    """Hide a chat message from everyone but the administrators, or show it again."""
    reason = clean_reason(reason, required=hidden)
    row = session.get(ChatRow, (game_id, number), with_for_update=True)
    if row is None:
        raise ServiceError(
            "not_found",
            _("game {game} has no chat message {number}", game=repr(game_id[:16]), number=number),
            404,
        )
    if hidden and row.hidden_at is not None:
        raise ServiceError("already_hidden", _("the message is hidden already"), 409)
    if not hidden and row.hidden_at is None:
        raise ServiceError("not_hidden", _("the message is not hidden"), 409)
    row.hidden_at = now if hidden else None
    add_event(
        session, "chat_hidden" if hidden else "chat_shown", now, game_id=game_id, data={"number": number}
    )
    add_audit(
        session,
        actor,
        "hide-message" if hidden else "show-message",
        message_target(game_id, number),
        now,
        reason,
        target_user_id=row.user_id,
    )


def stop_game(session: Session, actor: Actor, game_id: str, reason: str, now: datetime) -> None:
    """End a game waiting for players or in play: ``stopped``, with the reason every client is
    shown; no rating moves. A move on its way (from any process) is refused by its own write."""
    reason = clean_reason(reason)
    game = session.get(GameRow, game_id, with_for_update=True) if len(game_id) <= 16 else None
    if game is None:
        raise ServiceError("not_found", _("there is no game {game}", game=repr(game_id[:20])), 404)
    if game.status not in STOPPABLE:
        raise ServiceError(
            "not_in_play",
            _(
                "game {game} is {status}: only a game waiting for players or in play can be ended",
                game=game_id,
                status=game.status,
            ),
            409,
        )
    session.execute(
        update(GameRow)
        .where(GameRow.id == game_id, GameRow.status.in_(STOPPABLE))
        .values(status="stopped", stop_reason=reason, updated_at=now)
    )
    add_event(session, "game_stopped", now, game_id=game_id)
    add_audit(session, actor, "end-game", f"game {game_id}", now, reason)


def user_names(session: Session, ids: set[int]) -> dict[int, tuple[str, bool]]:
    """Each account's name and whether it is deleted (its name is then the label's)."""
    if not ids:
        return {}
    rows = session.execute(select(UserRow.id, UserRow.name, UserRow.deleted_at).where(UserRow.id.in_(ids)))
    return {int(i): (str(name), deleted is not None) for i, name, deleted in rows}


def when(moment: datetime | None) -> str | None:
    return None if moment is None else aware(moment).isoformat(timespec="seconds")
