"""Whether this process should be sent traffic: ``GET /api/health/ready``.

Ready means every check passes: the database answers a query, Redis answers PING (with
``--redis-url``), the bot workers are warm, the database's schema is at the migrations' newest
revision, and the process is not shutting down. Each check has :data:`CHECK_TIMEOUT` seconds; a
database that does not answer is asked again only once the question before has been answered (or
given up by the driver), so that a load balancer polling a process whose database is gone does not
pile up threads waiting on it.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sqlalchemy import text
from sqlalchemy.orm import Session

from coloretto.web.common.i18n import gettext as _
from coloretto.web.common.i18n import number
from coloretto.web.runtime.games import Games
from coloretto.web.storage.db import head_revisions, stored_revisions

if TYPE_CHECKING:
    from redis.asyncio import Redis

#: seconds each check may take before it counts as failed
CHECK_TIMEOUT = 2.0


@dataclass(frozen=True)
class Check:
    """One check's outcome: ``problem`` says what is wrong (None: it passed)."""

    problem: str | None
    seconds: float
    details: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        answer: dict[str, Any] = {"ok": self.problem is None, "ms": round(self.seconds * 1000, 1)}
        answer.update(self.details)
        if self.problem is not None:
            answer["problem"] = self.problem
        return answer


def _one_line(exc: BaseException) -> str:
    text_ = " ".join(str(exc).split())
    return text_[:300] or type(exc).__name__


def _probe(session: Session) -> tuple[tuple[str, ...] | None, str | None]:
    """Query the database (an exception: it does not answer), then read its schema's revisions:
    (the revisions, None) or (None, why they could not be read)."""
    session.execute(text("SELECT 1"))
    try:
        return stored_revisions(session), None
    except Exception as exc:
        return None, _one_line(exc)


class Readiness:
    """The checks of ``/api/health/ready``."""

    def __init__(self, games: Games, draining: Callable[[], bool] | None = None) -> None:
        self.games = games
        #: whether the process drains before it exits (SIGTERM): not ready from its first moment
        self.draining = draining if draining is not None else (lambda: False)
        self._probing: asyncio.Future[tuple[tuple[str, ...] | None, str | None]] | None = None
        self._redis: Redis | None = None

    async def check(self) -> tuple[bool, dict[str, Any]]:
        """(ready, the answer's body: ``ready``, ``failed`` (the names of the checks that did not
        pass), ``checks`` (each one's ``ok``, ``ms``, and ``problem`` when it failed), ``process``)."""
        checks: dict[str, Check] = {}
        if self.games.settings.redis_url:
            (database, migrations), redis = await asyncio.gather(self._database_checks(), self._redis_check())
            checks["database"], checks["redis"] = database, redis
        else:
            checks["database"], migrations = await self._database_checks()
        checks["workers"] = self._workers_check()
        checks["migrations"] = migrations
        if self.games.stopping or self.draining():
            checks["stopping"] = Check(_("the server is shutting down"), 0.0)
        failed = [name for name, check in checks.items() if check.problem is not None]
        return not failed, {
            "ready": not failed,
            "failed": failed,
            "checks": {name: check.as_dict() for name, check in checks.items()},
            "process": self.games.bus.process_id,
        }

    async def _database_checks(self) -> tuple[Check, Check]:
        started = time.perf_counter()
        if self._probing is None or self._probing.done():
            self._probing = asyncio.ensure_future(self.games.read(_probe))
            self._probing.add_done_callback(_retrieve)
        try:
            revisions, problem = await asyncio.wait_for(asyncio.shield(self._probing), CHECK_TIMEOUT)
        except TimeoutError:
            seconds = time.perf_counter() - started
            why = _("the database did not answer within {seconds} s", seconds=number(CHECK_TIMEOUT))
            return Check(why, seconds), Check(_("not checked: the database did not answer"), 0.0)
        except Exception as exc:
            seconds = time.perf_counter() - started
            why = _("the database could not be queried: {problem}", problem=_one_line(exc))
            return Check(why, seconds), Check(_("not checked: the database did not answer"), 0.0)
        seconds = time.perf_counter() - started
        database = Check(None, seconds)
        head = head_revisions()
        if revisions is None:
            why = _("the schema's revision could not be read: {problem}", problem=problem)
            return database, Check(why, 0.0, {"head": ", ".join(head)})
        details = {"revision": ", ".join(revisions) or None, "head": ", ".join(head)}
        if revisions != head:
            why = _(
                "the database's schema is at revision {stored}, this server's code is at {head}",
                stored=", ".join(revisions) or "-",
                head=", ".join(head),
            )
            return database, Check(why, 0.0, details)
        return database, Check(None, 0.0, details)

    async def _redis_check(self) -> Check:
        from redis.asyncio import Redis
        from redis.exceptions import RedisError

        url = self.games.settings.redis_url
        assert url is not None
        started = time.perf_counter()
        if self._redis is None:
            self._redis = Redis.from_url(
                url, socket_timeout=CHECK_TIMEOUT, socket_connect_timeout=CHECK_TIMEOUT
            )
        try:
            await asyncio.wait_for(self._redis.ping(), CHECK_TIMEOUT)
        except (RedisError, OSError, TimeoutError) as exc:
            # a connection left half-way through a command is not used again
            with contextlib.suppress(Exception):
                await self._redis.connection_pool.disconnect()
            problem = (
                _one_line(exc)
                if str(exc).strip()
                else _("no answer within {seconds} s", seconds=number(CHECK_TIMEOUT))
            )
            return Check(
                _("Redis did not answer PING: {problem}", problem=problem), time.perf_counter() - started
            )
        return Check(None, time.perf_counter() - started)

    def _workers_check(self) -> Check:
        status = self.games.pool().status()
        details = {"processes": status.workers, "ready": status.ready, "warm": status.warm}
        if not status.warm or status.ready < 1:
            why = _(
                "the bot workers are not warm ({ready} of {processes} ready)",
                ready=status.ready,
                processes=status.workers,
            )
            return Check(why, 0.0, details)
        return Check(None, 0.0, details)

    async def close(self) -> None:
        if self._redis is not None:
            with contextlib.suppress(Exception):
                await self._redis.aclose()
            self._redis = None


def _retrieve(future: asyncio.Future[Any]) -> None:
    """Take a finished probe's exception, so that one nobody waited for is not reported as lost."""
    if not future.cancelled():
        future.exception()
