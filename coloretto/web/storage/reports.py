"""Players' reports and blocks in the database: a report waits in the administrators' queue until
one resolves it; a block hides an account's chat from the person who blocked it."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import ColumnElement, delete, func, or_, select
from sqlalchemy.orm import Session

from coloretto.web.common.admin_schemas import AdminChatLine, BlockEntry, ReportView
from coloretto.web.common.errors import ServiceError
from coloretto.web.common.i18n import gettext as _
from coloretto.web.common.moderation import Actor, clean_text
from coloretto.web.storage.moderation import add_audit, add_event, user_names, when
from coloretto.web.storage.rows import BlockRow, ChatRow, ReportRow, UserRow
from coloretto.web.storage.tables import changed_rows
from coloretto.web.table.live import iso

#: messages shown before and after a reported one
CONTEXT = 4


@dataclass(frozen=True)
class ReportedMessage:
    """A chat message as a report sees it: who said it."""

    user_id: int | None
    name: str
    hidden: bool


def reported_message(session: Session, game_id: str, number: int) -> ReportedMessage:
    row = session.get(ChatRow, (game_id, number))
    if row is None:
        raise ServiceError(
            "not_found",
            _("game {game} has no chat message {number}", game=repr(game_id[:16]), number=number),
            404,
        )
    return ReportedMessage(row.user_id, row.name, row.hidden_at is not None)


def add_report(
    session: Session,
    reporter_id: int,
    kind: str,
    game_id: str | None,
    number: int | None,
    reported_id: int | None,
    reported_name: str | None,
    reason: str,
    text: str,
    now: datetime,
) -> int:
    """Store a report; a second open report of the same message or player by the same person is
    refused (``already_reported``)."""
    same = select(ReportRow.id).where(
        ReportRow.reporter_id == reporter_id, ReportRow.status == "open", ReportRow.kind == kind
    )
    if kind == "message":
        same = same.where(ReportRow.game_id == game_id, ReportRow.chat_number == number)
    else:
        same = same.where(ReportRow.reported_id == reported_id)
    if session.scalar(same) is not None:
        raise ServiceError(
            "already_reported", _("you have reported this already: the administrators will look at it"), 409
        )
    row = ReportRow(
        reporter_id=reporter_id,
        kind=kind,
        game_id=game_id,
        chat_number=number,
        reported_id=reported_id,
        reported_name=reported_name,
        reason=reason,
        text=text,
        status="open",
        created_at=now,
    )
    session.add(row)
    session.flush()
    return int(row.id)


def chat_lines(session: Session, game_id: str, number: int) -> list[AdminChatLine]:
    """The messages around one (hidden ones too, marked), oldest first."""
    rows = session.execute(
        select(ChatRow, UserRow.name)
        .outerjoin(UserRow, UserRow.id == ChatRow.user_id)
        .where(
            ChatRow.game_id == game_id,
            ChatRow.number >= number - CONTEXT,
            ChatRow.number <= number + CONTEXT,
        )
        .order_by(ChatRow.number)
    ).all()
    return [
        AdminChatLine(
            number=row.number,
            seat=row.seat,
            name=row.name,
            user=user,
            text=row.text,
            at=iso(row.created_at),
            hidden=row.hidden_at is not None,
            reported=row.number == number,
        )
        for row, user in rows
    ]


def list_reports(session: Session, status: str, limit: int) -> tuple[list[ReportView], int]:
    """Reports of a status, oldest first for the open ones (the queue), newest first for the
    resolved; and how many are open."""
    order = ReportRow.id if status == "open" else ReportRow.id.desc()
    rows = list(
        session.scalars(select(ReportRow).where(ReportRow.status == status).order_by(order).limit(limit))
    )
    ids = {r.reporter_id for r in rows} | {r.reported_id for r in rows if r.reported_id is not None}
    ids |= {r.resolved_by for r in rows if r.resolved_by is not None}
    names = user_names(session, ids)
    banned = {
        int(i)
        for i in session.scalars(
            select(UserRow.id).where(UserRow.id.in_(ids), UserRow.banned_at.is_not(None))
        )
    }
    views = []
    for row in rows:
        reported_name, reported_deleted = row.reported_name, False
        if row.reported_id is not None:
            reported_name, reported_deleted = names.get(row.reported_id, (row.reported_name or "?", False))
        context = []
        if row.kind == "message" and row.game_id is not None and row.chat_number is not None:
            context = chat_lines(session, row.game_id, row.chat_number)
        views.append(
            ReportView(
                id=row.id,
                kind=row.kind,  # type: ignore[arg-type]
                status=row.status,  # type: ignore[arg-type]
                reason=row.reason,  # type: ignore[arg-type]
                text=row.text,
                created_at=iso(row.created_at),
                reporter=names.get(row.reporter_id, ("?", False))[0],
                reported=reported_name,
                reported_account=row.reported_id is not None and not reported_deleted,
                reported_banned=row.reported_id in banned,
                reported_deleted=reported_deleted,
                game=row.game_id,
                number=row.chat_number,
                context=context,
                resolved_at=when(row.resolved_at),
                resolved_by=names[row.resolved_by][0] if row.resolved_by in names else None,
                resolution=row.resolution,
            )
        )
    open_count = session.scalar(select(func.count()).select_from(ReportRow).where(ReportRow.status == "open"))
    return views, int(open_count or 0)


def resolve_report(session: Session, actor: Actor, report_id: int, note: str, now: datetime) -> None:
    """Close a report (``note``: what was done about it)."""
    note = clean_text(note, _("a note"), 500, required=False, code="bad_reason")
    row = session.get(ReportRow, report_id, with_for_update=True)
    if row is None:
        raise ServiceError("not_found", _("there is no report {number}", number=report_id), 404)
    if row.status != "open":
        raise ServiceError(
            "already_resolved", _("report {number} is resolved already", number=report_id), 409
        )
    row.status = "resolved"
    row.resolved_at = now
    row.resolved_by = actor.id
    row.resolution = note
    add_audit(
        session, actor, "resolve-report", f"report {report_id}", now, note, target_user_id=row.reported_id
    )


def open_reports(session: Session) -> int:
    return int(
        session.scalar(select(func.count()).select_from(ReportRow).where(ReportRow.status == "open")) or 0
    )


# ------------------------------------------------------------------ blocks


def block(session: Session, user_id: int, blocked_id: int, now: datetime) -> bool:
    """Hide ``blocked_id``'s chat from ``user_id``; False if it was already."""
    if session.get(BlockRow, (user_id, blocked_id)) is not None:
        return False
    session.add(BlockRow(user_id=user_id, blocked_id=blocked_id, created_at=now))
    add_event(session, "blocks", now, user_id=user_id)
    return True


def unblock(session: Session, user_id: int, blocked_id: int, now: datetime) -> bool:
    """Show ``blocked_id``'s chat to ``user_id`` again; False if it was not blocked."""
    done = changed_rows(
        session.execute(
            delete(BlockRow).where(BlockRow.user_id == user_id, BlockRow.blocked_id == blocked_id)
        )
    )
    if done:
        add_event(session, "blocks", now, user_id=user_id)
    return bool(done)


def blocked_ids(session: Session, user_id: int) -> frozenset[int]:
    return frozenset(
        int(i) for i in session.scalars(select(BlockRow.blocked_id).where(BlockRow.user_id == user_id))
    )


def blocks_of(session: Session, user_id: int) -> list[BlockEntry]:
    """The accounts a person blocked (deleted ones left out: there is nobody left to block)."""
    rows = session.execute(
        select(UserRow.name, BlockRow.created_at)
        .join(UserRow, UserRow.id == BlockRow.blocked_id)
        .where(BlockRow.user_id == user_id, UserRow.deleted_at.is_(None))
        .order_by(BlockRow.created_at.desc())
    ).all()
    return [BlockEntry(name=str(name), since=iso(at)) for name, at in rows]


def visible_to(user_id: int) -> ColumnElement[bool]:
    """A condition on chat messages: not said by an account ``user_id`` blocked (a guest's are)."""
    return or_(
        ChatRow.user_id.is_(None),
        ~ChatRow.user_id.in_(select(BlockRow.blocked_id).where(BlockRow.user_id == user_id)),
    )
