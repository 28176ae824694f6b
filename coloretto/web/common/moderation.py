"""What moderation and the account's life cycle share across the layers: the reasons a report may
give, how long a reason or a report's words may be, who acted (an administrator on the page, or the
command line), and the label a deleted account's seats show."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from coloretto.web.common.errors import ServiceError
from coloretto.web.common.i18n import N_
from coloretto.web.common.i18n import gettext as _
from coloretto.web.common.names import refuse_unprintable

#: what a seat of a deleted account is called wherever a name is shown (stored in its place; the
#: pages show it in their language: the seat is marked ``deleted``)
DELETED_NAME = N_("deleted player")
#: the reasons a report gives, and what each says (the report's own words come with it)
REPORT_REASONS: dict[str, str] = {
    "spam": N_("spam or advertising"),
    "abuse": N_("insults, harassment or hate"),
    "cheating": N_("cheating or playing unfairly"),
    "name": N_("an offensive name"),
    "other": N_("something else"),
}
#: the characters of a report's own words, of an administrator's reason, at most
REPORT_TEXT_MAX = 500
REASON_MAX = 500
#: what the admin page and ``coloretto admin`` may do, as the audit log names it
AUDIT_ACTIONS = (
    "create-admin",
    "promote",
    "demote",
    "ban",
    "unban",
    "hide-message",
    "show-message",
    "end-game",
    "resolve-report",
    "reset-password",
)

Via = Literal["page", "cli"]


@dataclass(frozen=True)
class Actor:
    """Who did an administrator's action: an admin's account on the page, or the command line
    (``id`` None: whoever runs ``coloretto admin`` on the server's machine)."""

    id: int | None
    name: str
    via: Via

    @classmethod
    def command_line(cls) -> Actor:
        return cls(None, "command line", "cli")


def clean_text(text: str, what: str, longest: int, *, required: bool, code: str = "bad_reason") -> str:
    """A reason or a report's words as stored: one line, printable, at most ``longest`` characters
    (``required``: at least one)."""
    refuse_unprintable(text, what, allowed=frozenset("\t\n\r\u200c\u200d"), code=code)
    cleaned = " ".join(text.split())
    if required and not cleaned:
        raise ServiceError(code, _("{what} cannot be empty", what=what))
    if len(cleaned) > longest:
        raise ServiceError(
            code,
            _(
                "{what} has at most {longest} characters, not {length}",
                what=what,
                longest=longest,
                length=len(cleaned),
            ),
        )
    return cleaned


def clean_reason(reason: str, required: bool = True) -> str:
    """An administrator's reason (a ban, an ended game, a hidden message)."""
    return clean_text(reason, _("a reason"), REASON_MAX, required=required)
