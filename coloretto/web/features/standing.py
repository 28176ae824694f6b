"""Who may not play, chat or sit, as this server process knows it: the accounts banned or deleted.

Every process reads the set from the database when it starts and keeps it up to date from the
moderation events (:mod:`coloretto.web.features.moderation`), so that checking it costs nothing
on the paths every move and message take. A banned account's sessions are deleted at once, so the
account reaches none of those paths through a log-in; this set also stops a seat's token, kept
by the person, from acting for a banned account's seat before a bot has taken it over.
"""

from __future__ import annotations

from coloretto.web.common.errors import ServiceError
from coloretto.web.common.i18n import gettext as _


class Standing:
    """The accounts this process refuses (banned or deleted)."""

    def __init__(self) -> None:
        self.gone: set[int] = set()

    def refuse(self, user_id: int | None) -> None:
        """Refuse an account that is banned (or deleted)."""
        if user_id is not None and user_id in self.gone:
            raise ServiceError("banned", _("this account is banned: it cannot play, chat or sit down"), 403)
