"""Accounts: sign-up, log-in, sessions, and a password guesser slowed down.

A person may play as a guest (a seat token kept in the browser) or log in with a name and a
password. The password is kept as an Argon2id hash (argon2-cffi); hashing and checking one
takes the cores and Argon2's memory for a while, so it runs in a thread, a few at a time
(``max_hashing``: one per two cores), and a flood of log-ins waits its turn instead of taking
the cores from the games.

A log-in is a **session**: a random token in an HttpOnly cookie (``coloretto_session``), its
SHA-256 digest a row of ``user_sessions`` with its expiry, so that every process of a cluster
knows it; logging out deletes the row.

**Guessing** is slowed down in the database, for every process at once: failed log-ins are
counted per account name and per client address (``throttle_events``); once a name has
``login_failures`` of them within ``login_window`` seconds (an address
``login_address_failures``), its next attempt must wait ``login_lock`` seconds after the last
failure, twice as long after each further failure (at most the window). Attempts in that time
are refused before the password is looked at, a right one too (else the wait would stop
nobody). A successful log-in forgets its name's failures (not its address's: an attacker who
owns one account would otherwise reset their count with it). Sign-ups are counted per
address (``signups_per_hour``).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import math
import secrets
from collections.abc import AsyncIterator
from datetime import datetime, timedelta
from functools import partial
from typing import TYPE_CHECKING, Any

from sqlalchemy.exc import IntegrityError

from coloretto.web.common.errors import ServiceError
from coloretto.web.common.i18n import gettext as _
from coloretto.web.common.names import User, clean_name, name_key
from coloretto.web.common.schemas import PASSWORD_MAX, PASSWORD_MIN, Account, Rating, UserInfo
from coloretto.web.features.ratings import Ratings
from coloretto.web.runtime.games import Games
from coloretto.web.storage import accounts as store
from coloretto.web.storage.ratings import DEFAULT_MU, DEFAULT_SIGMA
from coloretto.web.table.live import hash_token, iso, now_utc

if TYPE_CHECKING:
    from argon2 import PasswordHasher


SESSION_COOKIE = "coloretto_session"
#: the window over which sign-ups per address are counted
SIGNUP_WINDOW = 3600.0
#: how often old throttle events and expired sessions are deleted
PURGE_EVERY = 300.0


def address_digest(client: str) -> str:
    """What the database keeps of a client's address: enough to count, not the address."""
    return hashlib.sha256(f"address:{client}".encode()).hexdigest()[:32]


def check_password(password: str) -> None:
    if not PASSWORD_MIN <= len(password) <= PASSWORD_MAX:
        raise ServiceError(
            "bad_password",
            _(
                "a password has {least} to {most} characters, not {count}",
                least=PASSWORD_MIN,
                most=PASSWORD_MAX,
                count=len(password),
            ),
        )


def lock_seconds(failures: int, allowed: int, first: float, longest: float) -> float:
    """How long after the last failure the next attempt waits: nothing below ``allowed``
    failures, then ``first`` seconds, doubling with each failure more, ``longest`` at most.

    >>> [lock_seconds(n, 5, 30.0, 900.0) for n in (4, 5, 6, 7, 10)]
    [0.0, 30.0, 60.0, 120.0, 900.0]
    """
    if failures < allowed:
        return 0.0
    return min(longest, first * 2.0 ** min(failures - allowed, 30))


class Accounts:
    """The accounts of one server process (the database is shared with the others)."""

    def __init__(self, games: Games, ratings: Ratings) -> None:
        self.games = games
        self.ratings = ratings
        self.settings = games.settings
        self._hasher: PasswordHasher | None = None
        self._slots: asyncio.Semaphore | None = None
        self._waiting = 0
        self._dummy_hash: str | None = None
        self._purged_at = 0.0

    # ------------------------------------------------------------ hashing

    @property
    def hasher(self) -> PasswordHasher:
        if self._hasher is None:
            from argon2 import PasswordHasher

            cost = self.settings.password_cost
            if cost is None:
                self._hasher = PasswordHasher()
            else:
                time_cost, memory_kib, parallelism = cost
                self._hasher = PasswordHasher(
                    time_cost=time_cost, memory_cost=memory_kib, parallelism=parallelism
                )
        return self._hasher

    @contextlib.asynccontextmanager
    async def _hashing_slot(self) -> AsyncIterator[None]:
        """One of the few passwords hashed at once; refused as busy when too many wait."""
        if self._slots is None:
            self._slots = asyncio.Semaphore(self.settings.hashing_slots())
        if self._waiting >= self.settings.max_hashing_waiting:
            raise ServiceError(
                "busy",
                _("the server is checking many passwords: try again in a moment"),
                429,
                retry_after=2.0,
            )
        self._waiting += 1
        try:
            async with self._slots:
                yield
        finally:
            self._waiting -= 1

    def _verify(self, password_hash: str, password: str) -> bool:
        from argon2.exceptions import InvalidHashError, VerificationError

        try:
            return bool(self.hasher.verify(password_hash, password))
        except (VerificationError, InvalidHashError):
            return False

    async def _dummy(self) -> str:
        """A hash to check unknown names against, so that they take as long as known ones."""
        if self._dummy_hash is None:
            self._dummy_hash = await asyncio.to_thread(self.hasher.hash, secrets.token_urlsafe(16))
        return self._dummy_hash

    # ------------------------------------------------------------ sessions

    async def user_of(self, token: str | None) -> User | None:
        """The person a session cookie logs in (None: a guest, or a session that expired or ended)."""
        if not token or len(token) > 128:
            return None
        stored = await self.games.read(
            partial(store.session_user, token_hash=hash_token(token), now=now_utc())
        )
        return None if stored is None else User(stored.id, stored.name, stored.created_at, stored.is_admin)

    def _session_job(self, user_id: int, token: str, now: datetime) -> Any:
        """A write job: the session row of a token just given to the user."""
        expires = now + timedelta(days=self.settings.session_days)
        return partial(
            store.add_session, token_hash=hash_token(token), user_id=user_id, now=now, expires=expires
        )

    async def logout(self, token: str | None) -> None:
        if token and len(token) <= 128:
            await self.games.write(partial(store.delete_session, token_hash=hash_token(token)))

    # ------------------------------------------------------------ throttling

    def _login_keys(self, key: str, client: str) -> dict[str, int]:
        """The throttle keys of a log-in and the failures each allows."""
        return {
            f"login-name:{key}": self.settings.login_failures,
            f"login-address:{address_digest(client)}": self.settings.login_address_failures,
        }

    async def _check_lock(self, keys: dict[str, int]) -> None:
        settings = self.settings
        now = now_utc()
        since = now - timedelta(seconds=settings.login_window)
        counts = await self.games.read(partial(store.throttle_counts, keys=list(keys), since=since))
        wait = 0.0
        for key, allowed in keys.items():
            if key not in counts or allowed <= 0:
                continue
            failures, last = counts[key]
            lock = lock_seconds(failures, allowed, settings.login_lock, settings.login_window)
            wait = max(wait, (last - now).total_seconds() + lock)
        if wait > 0:
            seconds = math.ceil(wait)
            raise ServiceError(
                "too_many_logins",
                _(
                    "too many failed log-ins for this name or from this address: try again in {seconds} s",
                    seconds=seconds,
                ),
                429,
                retry_after=seconds,
            )

    async def _check_signups(self, client: str) -> str:
        """Refuse a sign-up over the address's allowance; the key to count it under."""
        key = f"signup-address:{address_digest(client)}"
        allowed = self.settings.signups_per_hour
        if allowed <= 0:
            return key
        now = now_utc()
        since = now - timedelta(seconds=SIGNUP_WINDOW)
        counts = await self.games.read(partial(store.throttle_counts, keys=[key], since=since))
        made, _latest = counts.get(key, (0, now))
        if made >= allowed:
            raise ServiceError(
                "too_many_signups",
                _("at most {count} accounts an hour can be made from one address", count=allowed),
                429,
                retry_after=SIGNUP_WINDOW / allowed,
            )
        return key

    async def purge(self) -> None:
        """Now and then: forget throttle events too old to count, and expired sessions."""
        now = now_utc()
        if (now.timestamp() - self._purged_at) < PURGE_EVERY:
            return
        self._purged_at = now.timestamp()
        oldest = now - timedelta(seconds=max(self.settings.login_window, SIGNUP_WINDOW))
        await self.games.write(
            partial(store.purge_accounts, events_before=oldest, now=now), housekeeping=True
        )

    # ------------------------------------------------------------ the three doors

    async def signup(self, name: str, password: str, client: str) -> tuple[User, str]:
        """A new account, logged in: the user and the session's token."""
        name = clean_name(name, _("an account's name"))
        check_password(password)
        key = name_key(name)
        throttle_key = await self._check_signups(client)
        taken = ServiceError("name_taken", _("the name {name} is taken: choose another", name=name), 409)
        if await self.games.read(partial(store.name_in_use, name_key=key)):  # a deleted one's too
            raise taken
        async with self._hashing_slot():
            password_hash = await asyncio.to_thread(self.hasher.hash, password)
        now = now_utc()
        token = secrets.token_urlsafe(32)

        def create(session: Any) -> int:
            user_id = store.insert_user(
                session, name=name, name_key=key, password_hash=password_hash, now=now
            )
            store.add_throttle(session, keys=[throttle_key], now=now)
            self._session_job(user_id, token, now)(session)
            return user_id

        try:
            user_id = await self.games.write(create)
        except IntegrityError:  # the same name, made at the same moment
            raise taken from None
        return User(user_id, name, now), token

    async def login(self, name: str, password: str, client: str) -> tuple[User, str]:
        """Log in: the user and a new session's token. A wrong name or password is one error."""
        name = clean_name(name, _("an account's name"))
        key = name_key(name)
        keys = self._login_keys(key, client)
        await self._check_lock(keys)  # a locked name costs nobody a hash
        async with self._hashing_slot():
            await self._check_lock(keys)  # failures counted while this one waited its turn
            stored = await self.games.read(partial(store.user_by_key, name_key=key))
            password_hash = stored.password_hash if stored is not None else await self._dummy()
            right = await asyncio.to_thread(self._verify, password_hash, password)
            if not right or stored is None:
                await self.games.write(partial(store.add_throttle, keys=list(keys), now=now_utc()))
                raise ServiceError("bad_login", _("wrong name or password"), 401)
            if stored.banned_at is not None:  # said only to whoever knows the password
                raise ServiceError(
                    "banned",
                    _("this account is banned: {reason}", reason=stored.ban_reason or "—"),
                    403,
                )
            rehash = self.hasher.check_needs_rehash(stored.password_hash)
            new_hash = await asyncio.to_thread(self.hasher.hash, password) if rehash else None
        now = now_utc()
        token = secrets.token_urlsafe(32)
        name_throttle = next(iter(keys))

        def start(session: Any) -> None:
            store.clear_throttle(session, key=name_throttle)
            if new_hash is not None:  # the server's hashing cost changed since: the hash follows it
                store.set_password_hash(session, user_id=stored.id, password_hash=new_hash)
            self._session_job(stored.id, token, now)(session)

        await self.games.write(start)
        return User(stored.id, stored.name, stored.created_at, stored.is_admin), token

    # ------------------------------------------------------------ passwords

    async def verify(self, user_id: int, password: str) -> bool:
        """Whether ``password`` is the account's (checked in its turn, as a log-in's is)."""
        stored = await self.games.read(partial(store.user_by_id, user_id=user_id))
        async with self._hashing_slot():
            password_hash = stored.password_hash if stored is not None else await self._dummy()
            right = await asyncio.to_thread(self._verify, password_hash, password)
        return right and stored is not None

    async def require_password(self, user: User, password: str, client: str) -> None:
        """Refuse a wrong password for an account action (a failure counts as a failed log-in: the
        same throttle stops a guesser who found a logged-in browser)."""
        keys = self._login_keys(name_key(user.name), client)
        await self._check_lock(keys)
        if not await self.verify(user.id, password):
            await self.games.write(partial(store.add_throttle, keys=list(keys), now=now_utc()))
            raise ServiceError("bad_password", _("the password is wrong"), 403)

    async def hash(self, password: str) -> str:
        """A new password's hash (checked for its length first)."""
        check_password(password)
        async with self._hashing_slot():
            return await asyncio.to_thread(self.hasher.hash, password)

    # ------------------------------------------------------------ answers

    async def account(self, user: User | None, csrf_token: str) -> Account:
        if user is None:
            return Account(user=None, csrf_token=csrf_token)
        rating = await self.ratings.rating_of_user(user.id)
        return Account(
            user=UserInfo(
                name=user.name, created_at=iso(user.created_at), rating=rating, admin=user.is_admin
            ),
            csrf_token=csrf_token,
        )


def hash_password(password: str, cost: tuple[int, int, int] | None = None) -> str:
    """A password's Argon2id hash outside a server (``coloretto admin create-admin``): the server's
    own hashing cost is argon2-cffi's default unless ``cost`` says otherwise; a log-in rehashes a
    password hashed at another cost."""
    from argon2 import PasswordHasher

    check_password(password)
    if cost is None:
        return PasswordHasher().hash(password)
    time_cost, memory_kib, parallelism = cost
    return PasswordHasher(time_cost=time_cost, memory_cost=memory_kib, parallelism=parallelism).hash(password)


def default_rating() -> Rating:
    return Rating(
        mu=round(DEFAULT_MU, 3),
        sigma=round(DEFAULT_SIGMA, 3),
        ordinal=round(DEFAULT_MU - 3 * DEFAULT_SIGMA, 3),
        games=0,
    )
