"""An account's life cycle: a password changed (the old one required), "log out everywhere", a
password reset by an operator's one-time link, the account deleted, its data downloaded.

- **Changing the password** wants the old one and ends every other session of the account (every
  other browser is logged out, its WebSockets closed); this one stays logged in.
- **Log out everywhere** ends every session of the account, this one too.
- **A reset link** (``coloretto admin reset-password NAME``) is ``/reset/TOKEN``: a random token
  whose SHA-256 digest is stored, valid an hour, used once; making a new one voids the old. Its
  page sets a new password and ends every session of the account.
- **Deleting the account** wants the password; see
  :func:`coloretto.web.storage.lifecycle.delete_account` for what goes and what stays. The name
  stays reserved: nobody can take it (or sit as a guest under it) again.
- **The export** is a JSON document: the profile, every game played (its moves and links), the
  rating and its history, every chat message, the reports made, the blocks, the sessions.

A wrong password counts as a failed log-in of the account's name and of the address (the same
throttle as the log-in's), so a browser left logged in cannot be used to guess it.
"""

from __future__ import annotations

import secrets
from datetime import timedelta
from functools import partial
from typing import Any

from coloretto.web.common.errors import ServiceError
from coloretto.web.common.i18n import gettext as _
from coloretto.web.common.names import User
from coloretto.web.features.accounts import Accounts
from coloretto.web.features.moderation import Moderation
from coloretto.web.runtime.games import Games
from coloretto.web.storage import accounts as accounts_store
from coloretto.web.storage import lifecycle as store
from coloretto.web.storage import moderation as moderation_store
from coloretto.web.table.live import hash_token, iso, now_utc

#: how long a reset link is valid
RESET_VALID = timedelta(hours=1)


def reset_path(token: str) -> str:
    return f"/reset/{token}"


def new_reset_token() -> tuple[str, str]:
    """A reset link's token and the digest that is stored."""
    token = secrets.token_urlsafe(32)
    return token, hash_token(token)


class AccountLife:
    """Passwords changed and reset, sessions ended, accounts deleted and exported."""

    def __init__(self, games: Games, accounts: Accounts, moderation: Moderation) -> None:
        self.games = games
        self.accounts = accounts
        self.moderation = moderation

    async def change_password(
        self, user: User, session_token: str | None, old: str, new: str, client: str
    ) -> int:
        """Set a new password; every other session of the account ends. How many ended."""
        await self.accounts.require_password(user, old, client)
        password_hash = await self.accounts.hash(new)
        keep = hash_token(session_token) if session_token else None
        now = now_utc()

        def change(session: Any) -> int:
            accounts_store.set_password_hash(session, user_id=user.id, password_hash=password_hash)
            ended = accounts_store.end_sessions(session, user.id, keep=keep)
            moderation_store.add_event(session, "sessions_ended", now, user_id=user.id, data={"keep": keep})
            return ended

        ended: int = await self.games.write(change)
        await self.moderation.acted()
        return ended

    async def logout_everywhere(self, user: User) -> int:
        """End every session of the account (this one too); how many."""
        now = now_utc()

        def end(session: Any) -> int:
            ended = accounts_store.end_sessions(session, user.id)
            moderation_store.add_event(session, "sessions_ended", now, user_id=user.id)
            return ended

        ended: int = await self.games.write(end)
        await self.moderation.acted()
        return ended

    # ------------------------------------------------------------ reset links

    async def reset_account(self, token: str) -> str:
        """The name of the account a reset link is for (refused when used, expired or unknown)."""
        stored = await self.games.read(partial(store.reset_user, token_hash=hash_token(token), now=now_utc()))
        if stored is None:
            raise self._bad_link()
        return str(stored.name)

    async def reset(self, token: str, password: str) -> None:
        """Set the password of a reset link's account; the link is used up and every session of
        the account ends."""
        password_hash = await self.accounts.hash(password)
        done = await self.games.write(
            partial(store.use_reset, token_hash=hash_token(token), password_hash=password_hash, now=now_utc())
        )
        if done is None:
            raise self._bad_link()
        await self.moderation.acted()

    @staticmethod
    def _bad_link() -> ServiceError:
        return ServiceError(
            "bad_reset_link",
            _(
                "this reset link is not valid: it was used already, it expired (after an hour), or a "
                "newer one replaced it"
            ),
            404,
        )

    # ------------------------------------------------------------ deletion and export

    async def delete(self, user: User, password: str, client: str) -> None:
        """Delete the account (its password to confirm)."""
        await self.accounts.require_password(user, password, client)
        await self.games.write(partial(store.delete_account, user_id=user.id, now=now_utc()))
        await self.moderation.acted()

    async def export(self, user: User, site: str) -> dict[str, Any]:
        data: dict[str, Any] = await self.games.read(
            partial(store.export_account, user_id=user.id, site=site)
        )
        return {"exported_at": iso(now_utc()), **data}
