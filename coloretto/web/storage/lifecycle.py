"""An account's life cycle in the database: one-time password reset links, the deletion of an
account (its personal data and chat gone, its finished games kept with its seats shown as a
deleted player), and the export of everything the site keeps about it."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from urllib.parse import quote

from sqlalchemy import delete, select, update
from sqlalchemy.orm import Session

from coloretto.web.common.errors import ServiceError
from coloretto.web.common.i18n import gettext as _
from coloretto.web.common.moderation import DELETED_NAME, Actor
from coloretto.web.storage.accounts import StoredUser, end_sessions, reserved_key, stored_user
from coloretto.web.storage.moderation import add_audit, add_event, refuse_last_admin, when
from coloretto.web.storage.ratings import user_player
from coloretto.web.storage.rows import (
    AuditRow,
    BlockRow,
    ChatRow,
    GameRow,
    MoveRow,
    PasswordResetRow,
    RatingHistoryRow,
    RatingRow,
    ReportRow,
    ReviewRow,
    SeatRow,
    SessionRow,
    ThrottleRow,
    UserRow,
)
from coloretto.web.table.live import aware, iso

# ------------------------------------------------------------------ password resets


def add_reset(
    session: Session, actor: Actor, user: StoredUser, token_hash: str, now: datetime, expires: datetime
) -> None:
    """A new reset link for the account; any earlier one it had is void from now on."""
    session.execute(delete(PasswordResetRow).where(PasswordResetRow.user_id == user.id))
    session.add(PasswordResetRow(token_hash=token_hash, user_id=user.id, created_at=now, expires_at=expires))
    add_audit(session, actor, "reset-password", user.name, now, target_user_id=user.id)


def reset_user(session: Session, token_hash: str, now: datetime) -> StoredUser | None:
    """The account a reset link's token is for, if the link is unused and not expired."""
    row = session.scalars(
        select(UserRow)
        .join(PasswordResetRow, PasswordResetRow.user_id == UserRow.id)
        .where(
            PasswordResetRow.token_hash == token_hash,
            PasswordResetRow.used_at.is_(None),
            PasswordResetRow.expires_at > now,
            UserRow.deleted_at.is_(None),
        )
    ).first()
    return None if row is None else stored_user(row)


def use_reset(session: Session, token_hash: str, password_hash: str, now: datetime) -> int | None:
    """Set the password of a reset link's account and use the link up (once: a second use finds it
    used); every session of the account ends. The account's id, None when the link is no good."""
    reset = session.get(PasswordResetRow, token_hash, with_for_update=True)
    if reset is None or reset.used_at is not None or aware(reset.expires_at) <= now:
        return None
    user = session.get(UserRow, reset.user_id)
    if user is None or user.deleted_at is not None:
        return None
    reset.used_at = now
    user.password_hash = password_hash
    end_sessions(session, user.id)
    add_event(session, "sessions_ended", now, user_id=user.id)
    return int(user.id)


def purge_resets(session: Session, now: datetime) -> None:
    session.execute(delete(PasswordResetRow).where(PasswordResetRow.expires_at <= now))


# ------------------------------------------------------------------ deletion


@dataclass
class Deleted:
    """What an account's deletion changed that server processes hold in memory."""

    user_id: int
    games: list[str] = field(default_factory=list)  #: games where it sat, or had a seat kept
    chat: dict[str, list[int]] = field(default_factory=dict)  #: the messages removed, per game


def _anonymise_review(data: str, seats: set[int]) -> str:
    """A stored review with the names of ``seats`` replaced by the deleted player's label."""
    try:
        review = json.loads(data)
        for seat in seats:
            if 0 <= seat < len(review.get("seats", ())):
                review["seats"][seat] = DELETED_NAME
        for line in review.get("summary", ()):
            if isinstance(line, dict) and line.get("seat") in seats:
                line["name"] = DELETED_NAME
        return json.dumps(review, ensure_ascii=False)
    except (ValueError, TypeError, AttributeError):  # not a review this code wrote: nothing kept
        return "{}"


def delete_account(session: Session, user_id: int, now: datetime) -> Deleted:
    """Delete a person's account: the name (kept only as a digest, so that it stays taken), the
    password, sessions, reset links, ratings, blocks, reports made and every chat message are gone;
    the seats they held show "deleted player" (in finished games, and in games in play, where a bot
    takes them over: the ``account_deleted`` event); games they named get a plain name again;
    reviews, rating changes and the audit log no longer name them. The row itself stays, empty, so
    that its number is never another account's."""
    user = session.get(UserRow, user_id, with_for_update=True)
    if user is None or user.deleted_at is not None:
        raise ServiceError("not_found", _("there is no such account"), 404)
    if user.is_admin:
        refuse_last_admin(
            session, _("this is the site's last administrator account: make another administrator first")
        )
    done = Deleted(user_id)
    for game_id, number in session.execute(
        select(ChatRow.game_id, ChatRow.number).where(ChatRow.user_id == user_id)
    ).all():
        done.chat.setdefault(str(game_id), []).append(int(number))
    session.execute(delete(ChatRow).where(ChatRow.user_id == user_id))
    seats = session.execute(
        select(SeatRow.game_id, SeatRow.seat, SeatRow.name, GameRow.creator_seat, GameRow.rules)
        .join(GameRow, GameRow.id == SeatRow.game_id)
        .where(SeatRow.user_id == user_id)
    ).all()
    held: dict[str, set[int]] = {}
    for game_id, seat, name, creator_seat, rules in seats:
        done.games.append(str(game_id))
        if name is None:
            continue  # a rematch's seat kept for them: freed below
        held.setdefault(str(game_id), set()).add(int(seat))
        if creator_seat == seat:  # the game's name was theirs to give: a plain one instead
            players = int((rules or {}).get("players", 0)) or len(held[str(game_id)])
            session.execute(
                update(GameRow).where(GameRow.id == game_id).values(name=f"{players}-player game")
            )
    waiting = select(GameRow.id).where(GameRow.status == "open")
    # a seat of a game still waiting for players is given up: someone else may take it
    session.execute(
        update(SeatRow)
        .where(SeatRow.user_id == user_id, SeatRow.game_id.in_(waiting))
        .values(name=None, token_hash=None, joined_at=None, user_id=None)
    )
    session.execute(
        update(SeatRow)
        .where(SeatRow.user_id == user_id, SeatRow.name.is_not(None))
        .values(name=DELETED_NAME, deleted=True, token_hash=None)
    )
    session.execute(
        update(SeatRow).where(SeatRow.user_id == user_id, SeatRow.name.is_(None)).values(user_id=None)
    )
    if held:
        for review in session.scalars(
            select(ReviewRow).where(ReviewRow.game_id.in_(list(held)), ReviewRow.data.is_not(None))
        ):
            review.data = _anonymise_review(review.data or "", held[review.game_id])
    session.execute(delete(RatingRow).where(RatingRow.user_id == user_id))
    session.execute(delete(BlockRow).where((BlockRow.user_id == user_id) | (BlockRow.blocked_id == user_id)))
    session.execute(delete(ReportRow).where(ReportRow.reporter_id == user_id))
    session.execute(
        update(ReportRow).where(ReportRow.reported_id == user_id).values(reported_name=DELETED_NAME)
    )
    session.execute(update(AuditRow).where(AuditRow.target_user_id == user_id).values(target=DELETED_NAME))
    session.execute(update(AuditRow).where(AuditRow.actor_id == user_id).values(actor=DELETED_NAME))
    session.execute(delete(ThrottleRow).where(ThrottleRow.key == f"login-name:{user.name_key}"))
    session.execute(delete(SessionRow).where(SessionRow.user_id == user_id))
    session.execute(delete(PasswordResetRow).where(PasswordResetRow.user_id == user_id))
    user.name = DELETED_NAME
    user.name_key = reserved_key(user.name_key)
    user.password_hash = ""
    user.is_admin = False
    user.ban_reason = None
    user.deleted_at = now
    done.games = sorted(set(done.games) | set(done.chat))
    add_event(session, "account_deleted", now, user_id=user_id, data={"games": done.games, "chat": done.chat})
    return done


# ------------------------------------------------------------------ export


def export_account(session: Session, user_id: int, site: str) -> dict[str, Any]:
    """Everything the site keeps about an account, as plain data (``site``: the address links start
    with, or "" for paths)."""
    user = session.get(UserRow, user_id)
    if user is None or user.deleted_at is not None:
        raise ServiceError("not_found", _("there is no such account"), 404)
    games = []
    seat_rows = session.execute(
        select(SeatRow, GameRow)
        .join(GameRow, GameRow.id == SeatRow.game_id)
        .where(SeatRow.user_id == user_id, SeatRow.name.is_not(None))
        .order_by(GameRow.created_at)
    ).all()
    ids = [game.id for _seat, game in seat_rows]
    moves: dict[str, list[str]] = {}
    if ids:
        for game_id, move in session.execute(
            select(MoveRow.game_id, MoveRow.move)
            .where(MoveRow.game_id.in_(ids))
            .order_by(MoveRow.game_id, MoveRow.number)
        ):
            moves.setdefault(str(game_id), []).append(str(move))
    for seat, game in seat_rows:
        others = session.scalars(
            select(SeatRow).where(SeatRow.game_id == game.id).order_by(SeatRow.seat)
        ).all()
        games.append(
            {
                "id": game.id,
                "name": game.name,
                "status": game.status,
                "seat": seat.seat,
                "seats": [s.name if s.kind == "human" else f"bot:{s.bot}" for s in others],
                "rated": bool(game.rated),
                "private": bool(game.private),
                "resigned": bool(seat.resigned),
                "created_at": iso(game.created_at),
                "updated_at": iso(game.updated_at),
                "result": game.result,
                "rules": game.rules,
                "moves": moves.get(game.id, []),
                "link": f"{site}/games/{game.id}",
                "record": f"{site}/api/games/{game.id}/record" if game.status == "finished" else None,
            }
        )
    player = user_player(user_id)
    rating = session.get(RatingRow, player)
    history = [
        {
            "game": row.game_id,
            "seat": row.seat,
            "rank": row.rank,
            "mu_before": row.mu_before,
            "sigma_before": row.sigma_before,
            "mu_after": row.mu_after,
            "sigma_after": row.sigma_after,
            "at": iso(row.created_at),
        }
        for row in session.scalars(
            select(RatingHistoryRow)
            .where(RatingHistoryRow.player == player)
            .order_by(RatingHistoryRow.created_at)
        )
    ]
    chat = [
        {"game": row.game_id, "number": row.number, "text": row.text, "name": row.name,
         "at": iso(row.created_at), "hidden_by_moderator": row.hidden_at is not None}
        for row in session.scalars(
            select(ChatRow).where(ChatRow.user_id == user_id).order_by(ChatRow.created_at, ChatRow.number)
        )
    ]  # fmt: skip
    reports = [
        {"kind": row.kind, "game": row.game_id, "message": row.chat_number, "player": row.reported_name,
         "reason": row.reason, "text": row.text, "status": row.status, "at": iso(row.created_at),
         "resolved_at": when(row.resolved_at)}
        for row in session.scalars(
            select(ReportRow).where(ReportRow.reporter_id == user_id).order_by(ReportRow.id)
        )
    ]  # fmt: skip
    blocks = [
        {"player": name, "since": iso(at)}
        for name, at in session.execute(
            select(UserRow.name, BlockRow.created_at)
            .join(UserRow, UserRow.id == BlockRow.blocked_id)
            .where(BlockRow.user_id == user_id, UserRow.deleted_at.is_(None))
            .order_by(BlockRow.created_at)
        )
    ]
    sessions = [
        {"created_at": iso(row.created_at), "expires_at": iso(row.expires_at)}
        for row in session.scalars(select(SessionRow).where(SessionRow.user_id == user_id))
    ]
    return {
        "profile": {
            "name": user.name,
            "created_at": iso(user.created_at),
            "administrator": bool(user.is_admin),
            "player_page": f"{site}/players/{quote(user.name)}",
        },
        "games": games,
        "ratings": {
            "current": None
            if rating is None
            else {
                "mu": rating.mu,
                "sigma": rating.sigma,
                "ordinal": rating.mu - 3 * rating.sigma,
                "games": rating.games,
            },
            "history": history,
        },
        "chat": chat,
        "reports": reports,
        "blocks": blocks,
        "sessions": sessions,
    }
