"""Names people give (a seat's, a game's, an account's), cleaned the same way everywhere, text
holding a control or direction-changing character refused, saying which and where; and who is
logged in (:class:`User`), whose name is theirs whatever its case (:func:`name_key`)."""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from datetime import datetime

from coloretto.web.common.errors import ServiceError
from coloretto.web.common.i18n import gettext as _
from coloretto.web.common.schemas import NAME_MAX

#: characters a name may not hold: controls, and the format characters (bidi overrides and
#: isolates U+202A-U+202E, U+2066-U+2069, marks U+200E/U+200F, zero-width ones), surrogates,
#: private-use and unassigned code points, line and paragraph separators
UNPRINTABLE_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})


def refuse_unprintable(
    text: str, what: str, allowed: frozenset[str] = frozenset(), code: str = "bad_name"
) -> None:
    """Refuse text holding a control or direction-changing character (but those ``allowed``),
    naming the first and where it is (the same check on every database: PostgreSQL refuses a
    NUL, SQLite would keep it)."""
    for i, char in enumerate(text):
        if char not in allowed and unicodedata.category(char) in UNPRINTABLE_CATEGORIES:
            raise ServiceError(
                code,
                _(
                    "{what} may hold only printable characters: {code} at character {position} is a "
                    "control or direction-changing character",
                    what=what,
                    code=f"U+{ord(char):04X}",
                    position=i + 1,
                ),
            )


def clean_name(name: str, what: str | None = None, longest: int = NAME_MAX) -> str:
    """A name as shown at the table: runs of spaces made one, stripped; printable characters only.
    ``what`` names it in the errors (default: "a name", in the current language)."""
    what = what or _("a name")
    refuse_unprintable(name, what)
    cleaned = " ".join(name.split())
    if not cleaned:
        raise ServiceError("bad_name", _("{what} cannot be empty", what=what))
    if len(cleaned) > longest:
        raise ServiceError(
            "bad_name",
            _(
                "{what} has at most {longest} characters, not {length}",
                what=what,
                longest=longest,
                length=len(cleaned),
            ),
        )
    return cleaned


@dataclass(frozen=True)
class User:
    """A logged-in person."""

    id: int
    name: str
    created_at: datetime
    is_admin: bool = False  #: an administrator of the site (the admin page, its API)


def name_key(name: str) -> str:
    """What makes two names the same account: compatibility forms and case do not count.

    >>> name_key("Ann") == name_key("ANN") == name_key("ａｎｎ")
    True
    """
    return unicodedata.normalize("NFKC", name).casefold()
