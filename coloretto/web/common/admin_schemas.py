"""The shapes of what moderation and the account's life cycle send and take: reports, blocks, the
admin page's queue and audit log, a password's change and reset, the export of an account."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from coloretto.web.common.moderation import REASON_MAX, REPORT_TEXT_MAX
from coloretto.web.common.schemas import NAME_MAX, PASSWORD_MAX, TOKEN_MAX, Strict

ReportReason = Literal["spam", "abuse", "cheating", "name", "other"]

# ------------------------------------------------------------------ requests


class ReportRequest(Strict):
    """A report of a chat message (``game`` and ``number``) or of a player (``player``: an account's
    name; ``game`` may say where it happened)."""

    kind: Literal["message", "player"]
    game: str | None = Field(None, max_length=16, description="the game (a message's, or where it happened)")
    number: int | None = Field(None, ge=1, le=2**31 - 1, description="the chat message's number")
    player: str | None = Field(None, max_length=NAME_MAX * 4, description="the account reported")
    reason: ReportReason = Field(
        description="spam, abuse (insults, harassment, hate), cheating, name (an offensive name), other"
    )
    text: str = Field(
        "",
        max_length=REPORT_TEXT_MAX * 4,
        description=f"your own words, at most {REPORT_TEXT_MAX} characters",
    )


class BlockRequest(Strict):
    player: str = Field(max_length=NAME_MAX * 4, description="the account whose chat you no longer see")


class ReasonRequest(Strict):
    reason: str = Field("", max_length=REASON_MAX * 4, description=f"why, at most {REASON_MAX} characters")


class PasswordChange(Strict):
    old_password: str = Field(max_length=PASSWORD_MAX * 4)
    new_password: str = Field(max_length=PASSWORD_MAX * 4)


class PasswordCheck(Strict):
    password: str = Field(max_length=PASSWORD_MAX * 4, description="the account's password, to confirm")


class PasswordReset(Strict):
    token: str = Field(max_length=TOKEN_MAX, description="the token of the reset link (/reset/TOKEN)")
    password: str = Field(max_length=PASSWORD_MAX * 4, description="the new password")


# ------------------------------------------------------------------ answers


class Done(BaseModel):
    """What an action did, in words (the request's language)."""

    ok: bool = True
    message: str


class ReportMade(BaseModel):
    id: int
    message: str


class BlockEntry(BaseModel):
    name: str
    since: str


class BlockList(BaseModel):
    blocks: list[BlockEntry] = Field(description="the accounts whose chat is hidden from you, newest first")


class SessionsEnded(BaseModel):
    ended: int = Field(description="sessions ended (other browsers logged out)")
    message: str


class ResetLink(BaseModel):
    """A one-time password reset link (``coloretto admin reset-password``)."""

    path: str = Field(description="/reset/TOKEN")
    expires_at: str


class AdminChatLine(BaseModel):
    number: int
    seat: int | None
    name: str
    user: str | None = Field(description="the speaker's account, if logged in")
    text: str
    at: str
    hidden: bool = Field(description="hidden by a moderator: only administrators see it")
    reported: bool = Field(False, description="the message the report is about")


class ReportView(BaseModel):
    id: int
    kind: Literal["message", "player"]
    status: Literal["open", "resolved"]
    reason: ReportReason
    text: str = Field(description="the reporter's own words")
    created_at: str
    reporter: str = Field(description="who reported (their account's name)")
    reported: str | None = Field(description="the name of the player reported (a guest's seat name too)")
    reported_account: bool = Field(description="the player reported has an account (it can be banned)")
    reported_banned: bool = False
    reported_deleted: bool = False
    game: str | None
    number: int | None
    context: list[AdminChatLine] = Field(
        default_factory=list, description="a message's report: the messages around it, it marked"
    )
    resolved_at: str | None = None
    resolved_by: str | None = None
    resolution: str | None = None


class ReportList(BaseModel):
    reports: list[ReportView]
    open: int = Field(description="reports waiting for an administrator")


class AuditEntry(BaseModel):
    id: int
    at: str
    actor: str = Field(description="the administrator, or 'command line'")
    via: Literal["page", "cli"]
    action: str
    target: str
    reason: str


class AuditLog(BaseModel):
    entries: list[AuditEntry] = Field(description="newest first")


class AccountExport(BaseModel):
    """Everything the site keeps about an account (GET /api/account/export)."""

    format: str = "coloretto-account-export"
    version: int = 1
    exported_at: str
    profile: dict[str, Any]
    games: list[dict[str, Any]]
    ratings: dict[str, Any]
    chat: list[dict[str, Any]]
    reports: list[dict[str, Any]]
    blocks: list[dict[str, Any]]
    sessions: list[dict[str, Any]]
