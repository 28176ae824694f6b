"""Several server processes on one Redis: an event bus and game leases.

Each game in progress is run (its bots, its clocks) by one process at a time:
the one holding the game's **lease**, a Redis key that names the process and
lapses unless renewed. Every change a process makes is **published**, so that a
watcher connected to any other process sees it at once. When a process dies its
leases lapse within ``lease_seconds`` and another process takes them.

:class:`~coloretto.web.runtime.bus.LocalBus` is the single-process default (no
Redis, nothing to install): nobody else to tell, every lease is ours.
:class:`RedisBus` is the real one; :func:`open_bus` picks between them from
``--redis-url``. Both are a :class:`~coloretto.web.runtime.bus.Bus`, which is
what the games use.

Pub/sub delivers at most once: events published while a subscriber is cut off
from Redis never reach it (:attr:`RedisBus.on_reconnect` says when that may have
happened, so the caller can resend whole states from the database).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

from coloretto.web.common import metrics
from coloretto.web.runtime.bus import Bus, BusError, EventHandler, LocalBus

if TYPE_CHECKING:
    from redis.asyncio import Redis
    from redis.asyncio.client import PubSub

log = logging.getLogger("coloretto.web.runtime.cluster")

# Extends the lease only while it still names us: a process that stalled past
# its lease must not take back a game another process has taken meanwhile.
_RENEW = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
    return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
"""

# SET NX PX takes a free lease; one we already hold is extended instead, so
# that acquire is idempotent.
_ACQUIRE = """
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
    return 1
end
if redis.call('GET', KEYS[1]) == ARGV[1] then
    redis.call('PEXPIRE', KEYS[1], ARGV[2])
    return 1
end
return 0
"""

# Deletes the lease only while it names us (a lapsed lease may be another's by now).
_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
    return redis.call('DEL', KEYS[1])
end
return 0
"""

#: reconnection waits double from the first to the last
_BACKOFF_FIRST = 0.05
_BACKOFF_MAX = 2.0
#: a backlog of received events this long is worth a warning (the handler cannot keep up)
_BACKLOG_WARNING = 10_000
#: how long close() gives a cancelled task before cancelling it again
_CANCEL_RETRY_SECONDS = 0.5


@dataclass
class _Lease:
    #: monotonic time after which Redis may have let the lease lapse (counted from when
    #: the last successful renewal was *sent*, so it errs early)
    deadline: float
    #: bumped at every acquire, so that a renewal answered about an older holding is ignored
    generation: int


def redacted(url: str) -> str:
    """``url`` without its password, for messages and logs.

    >>> redacted("redis://:s3cret@db.example:6380/1")
    'redis://:***@db.example:6380/1'
    >>> redacted("redis://127.0.0.1:6379/0")
    'redis://127.0.0.1:6379/0'
    """
    try:
        parts = urlsplit(url)
        if parts.password is None:
            return url
        user = parts.username or ""
        host = parts.hostname or ""
        if ":" in host:
            host = f"[{host}]"  # IPv6
        port = f":{parts.port}" if parts.port is not None else ""
        return urlunsplit(parts._replace(netloc=f"{user}:***@{host}{port}"))
    except ValueError:
        return "<a malformed URL>"


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text or type(exc).__name__


class RedisBus(Bus):
    """The bus on a Redis server: one pub/sub channel for events, one key per lease.

    Keys: ``{prefix}:lease:{game_id}`` holds the owner's :attr:`process_id` with a
    ``lease_seconds`` TTL, renewed every ``renew_every`` seconds; events go on the
    channel ``{prefix}:events`` as ``{"origin": process_id, "game": id, "event": {...}}``.
    """

    def __init__(
        self, url: str, *, lease_seconds: float = 3.0, renew_every: float = 1.0, prefix: str = "coloretto"
    ) -> None:
        if not lease_seconds > 0:
            raise BusError(f"the lease must last more than 0 seconds, not {lease_seconds}")
        if not 0 < renew_every < lease_seconds:
            raise BusError(
                f"leases must be renewed more often than they last: every {renew_every} s "
                f"is not between 0 and the lease's {lease_seconds} s"
            )
        if not prefix:
            raise BusError("the Redis key prefix must not be empty")
        super().__init__(lease_seconds)
        self.url = url
        self.renew_every = renew_every
        self.prefix = prefix
        self.channel = f"{prefix}:events"
        #: called (on the event loop) when the event subscription was lost and is back:
        #: events published meanwhile did not arrive
        self.on_reconnect: Callable[[], None] | None = None
        self._on_event: EventHandler | None = None
        self._client: Redis | None = None
        self._subscriber: Redis | None = None
        self._pubsub: PubSub | None = None
        self._owned: dict[str, _Lease] = {}
        self._generation = 0
        self._received: asyncio.Queue[tuple[str, dict[str, Any]]] = asyncio.Queue()
        self._outbox: list[tuple[bytes, asyncio.Future[None]]] = []
        self._outbox_ready = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []
        self._writer: asyncio.Task[None] | None = None
        self._started = False
        self._closed = False
        self._renewal_failing = False

    def lease_key(self, game_id: str) -> str:
        return f"{self.prefix}:lease:{game_id}"

    # -- start and stop

    async def start(self, on_event: EventHandler) -> None:
        if self._closed:
            raise BusError("the bus is closed")
        if self._started:
            raise BusError("the bus is already started")
        try:
            from redis.asyncio import Redis
            from redis.asyncio.retry import Retry
            from redis.backoff import NoBackoff
            from redis.exceptions import RedisError
        except ImportError:
            raise BusError(
                "Redis needs the redis package: pip install 'coloretto[cluster]' (or 'redis>=5.0.1')"
            ) from None

        where = redacted(self.url)
        timeouts: dict[str, Any] = {
            # a Redis that does not answer within a lease has cost us our leases anyway
            "socket_timeout": self.lease_seconds,
            "socket_connect_timeout": self.lease_seconds,
            "socket_keepalive": True,
        }
        try:
            # Commands retry once at once (a pooled connection the server dropped
            # is replaced); beyond that the caller hears BusError and decides.
            self._client = Redis.from_url(self.url, retry=Retry(NoBackoff(), 1), **timeouts)
            # The subscription never retries by itself: the reader reconnects, logs
            # it and tells on_reconnect, since events were missed meanwhile.
            self._subscriber = Redis.from_url(self.url, retry=Retry(NoBackoff(), 0), **timeouts)
        except ValueError as exc:
            raise BusError(f"bad Redis URL {where}: {_one_line(exc)}") from None
        try:
            await self._client.ping()
            self._pubsub = await self._subscribe()
        except (RedisError, OSError) as exc:
            await self._close_clients()
            raise BusError(f"cannot use Redis at {where}: {_one_line(exc)}") from None
        self._on_event = on_event
        self._started = True
        self._tasks = [
            asyncio.create_task(self._read_forever(), name="bus-reader"),
            asyncio.create_task(self._dispatch_forever(), name="bus-dispatcher"),
            asyncio.create_task(self._renew_forever(), name="bus-renewal"),
        ]
        self._writer = asyncio.create_task(self._write_forever(), name="bus-writer")
        log.info("bus: process %s on Redis at %s", self.process_id, where)

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if not self._started:
            await self._close_clients()
            return
        await cancel_and_wait(self._tasks)
        # What was published before close still goes out (other processes' watchers
        # see the last moves), unless Redis does not answer.
        if self._writer is not None:
            self._outbox_ready.set()
            await asyncio.wait({self._writer}, timeout=self.lease_seconds)
            await cancel_and_wait([self._writer])
        self._fail_outbox(BusError("the bus was closed before the event was sent"))
        await self.release_all()
        await self._close_clients()

    async def release_all(self) -> list[str]:
        from redis.exceptions import RedisError

        games = list(self._owned)
        self._owned.clear()
        metrics.LEASES_RELEASED.inc(len(games))
        if not games or self._client is None:
            return games
        try:
            async with self._client.pipeline(transaction=False) as pipe:
                for game_id in games:
                    pipe.eval(_RELEASE, 1, self.lease_key(game_id), self.process_id)
                await pipe.execute()
        except (RedisError, OSError) as exc:
            log.warning(
                "bus: could not release %d leases (%s); they lapse within %s s",
                len(games),
                _one_line(exc),
                self.lease_seconds,
            )
        return games

    async def _close_clients(self) -> None:
        if self._pubsub is not None:
            with contextlib.suppress(Exception):
                await self._pubsub.aclose()
            self._pubsub = None
        for client in (self._subscriber, self._client):
            if client is not None:
                with contextlib.suppress(Exception):
                    await client.aclose()
        self._client = self._subscriber = None

    def _require_open(self) -> Redis:
        if self._closed:
            raise BusError("the bus is closed")
        if not self._started or self._client is None:
            raise BusError("the bus is not started (call start() first)")
        return self._client

    # -- events

    async def publish(self, game_id: str, event: dict[str, Any]) -> None:
        self._require_open()
        payload = json.dumps(
            {"origin": self.process_id, "game": game_id, "event": event},
            separators=(",", ":"),
            allow_nan=False,
        ).encode()
        # Publishes go out in call order through one writer, many to a round trip
        # when they come faster than Redis answers.
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._outbox.append((payload, future))
        self._outbox_ready.set()
        await future

    async def _write_forever(self) -> None:
        while True:
            await self._outbox_ready.wait()
            self._outbox_ready.clear()
            while self._outbox:
                batch, self._outbox = self._outbox, []
                await self._send(batch)
            if self._closed:
                return

    async def _send(self, batch: list[tuple[bytes, asyncio.Future[None]]]) -> None:
        from redis.exceptions import RedisError

        assert self._client is not None
        error: BaseException | None = None
        try:
            async with self._client.pipeline(transaction=False) as pipe:
                for payload, _ in batch:
                    pipe.publish(self.channel, payload)
                await pipe.execute()
        except (RedisError, OSError) as exc:
            error = BusError(f"could not publish to Redis at {redacted(self.url)}: {_one_line(exc)}")
        except BaseException:
            for _, future in batch:
                if not future.done():
                    future.set_exception(BusError("the bus was closed before the event was sent"))
            raise
        for _, future in batch:
            if future.done():
                continue  # its publisher gave up waiting
            if error is None:
                future.set_result(None)
            else:
                future.set_exception(error)

    def _fail_outbox(self, error: BusError) -> None:
        batch, self._outbox = self._outbox, []
        for _, future in batch:
            if not future.done():
                future.set_exception(error)

    async def _subscribe(self) -> PubSub:
        assert self._subscriber is not None
        pubsub = self._subscriber.pubsub(ignore_subscribe_messages=True)
        try:
            await pubsub.subscribe(self.channel)
        except BaseException:
            with contextlib.suppress(Exception):
                await pubsub.aclose()
            raise
        return pubsub

    async def _read_forever(self) -> None:
        from redis.exceptions import RedisError

        backoff = _BACKOFF_FIRST
        lost_at: float | None = None
        while not self._closed:
            try:
                if self._pubsub is None:
                    self._pubsub = await self._subscribe()
                    missed = time.monotonic() - (lost_at or 0.0)
                    log.warning(
                        "bus: event subscription back; events published in the last %.1f s were missed",
                        missed,
                    )
                    lost_at, backoff = None, _BACKOFF_FIRST
                    self._call(self.on_reconnect)
                await self._read(self._pubsub)
            except (RedisError, OSError) as exc:
                if lost_at is None:
                    lost_at = time.monotonic()
                    log.warning(
                        "bus: lost the event subscription to Redis at %s (%s); reconnecting",
                        redacted(self.url),
                        _one_line(exc),
                    )
                else:
                    log.debug("bus: resubscribing failed: %s", _one_line(exc))
                if self._pubsub is not None:
                    with contextlib.suppress(Exception):
                        await self._pubsub.aclose()
                    self._pubsub = None
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, _BACKOFF_MAX)

    async def _read(self, pubsub: PubSub) -> None:
        """Queue every message until the connection fails.

        A connection that dies without a word (a machine gone, a network cut) would
        leave the read waiting forever: after ``lease_seconds`` of silence a PING is
        sent, and silence for as long again counts as a lost connection.
        """
        from redis.exceptions import ConnectionError as RedisConnectionError

        silence = max(self.lease_seconds, 1.0)
        last_heard = time.monotonic()
        pinged_at: float | None = None
        while not self._closed:
            message = await pubsub.get_message(timeout=silence / 2)
            now = time.monotonic()
            if message is not None:
                last_heard, pinged_at = now, None
                if message.get("type") == "message":
                    self._receive(message.get("data"))
            elif pinged_at is None and now - last_heard >= silence:
                await pubsub.ping()
                pinged_at = now
            elif pinged_at is not None and now - pinged_at >= silence:
                raise RedisConnectionError(f"Redis did not answer a PING in {silence} s")

    def _receive(self, data: object) -> None:
        try:
            if not isinstance(data, bytes | str):
                raise ValueError(f"the message is a {type(data).__name__}")
            message = json.loads(data)
            if not isinstance(message, dict):
                raise ValueError("the message is not a JSON object")
            origin, game_id, event = message.get("origin"), message.get("game"), message.get("event")
            if not isinstance(origin, str) or not isinstance(game_id, str) or not isinstance(event, dict):
                raise ValueError('it needs a string "origin", a string "game" and an object "event"')
        except ValueError as exc:  # UnicodeDecodeError and json's errors are ValueErrors
            log.warning("bus: skipped a malformed message on %s: %s", self.channel, _one_line(exc))
            return
        if origin == self.process_id:
            return  # our own, already handled here
        self._received.put_nowait((game_id, event))
        if self._received.qsize() == _BACKLOG_WARNING:
            log.warning("bus: %d received events wait for the handler", _BACKLOG_WARNING)

    async def _dispatch_forever(self) -> None:
        # Apart from the reader, so that a slow handler never stalls reading (Redis
        # drops a subscriber whose output buffer grows too long, losing events).
        assert self._on_event is not None
        while not self._closed:
            game_id, event = await self._received.get()
            try:
                await self._on_event(game_id, event)
            except Exception:
                log.exception("bus: the event handler failed on an event of game %s", game_id)

    # -- leases

    async def acquire(self, game_id: str) -> bool:
        from redis.exceptions import RedisError

        client = self._require_open()
        sent = time.monotonic()
        self._generation += 1
        generation = self._generation
        try:
            taken = await client.eval(_ACQUIRE, 1, self.lease_key(game_id), self.process_id, self._lease_ms)
        except (RedisError, OSError) as exc:
            raise BusError(f"could not take the lease of game {game_id}: {_one_line(exc)}") from None
        if taken:
            if game_id not in self._owned:
                metrics.LEASES_GAINED.inc()
            self._owned[game_id] = _Lease(deadline=sent + self.lease_seconds, generation=generation)
            return True
        if self._owned.pop(game_id, None) is not None:
            self._lost(game_id)  # we thought it ours, and another process holds it
        return False

    async def acquire_many(self, game_ids: list[str]) -> list[str]:
        """Every lease in one round trip (a drained process's hundreds of games, adopted)."""
        from redis.exceptions import RedisError

        client = self._require_open()
        if not game_ids:
            return []
        sent, first = time.monotonic(), self._generation + 1
        self._generation += len(game_ids)
        generations = range(first, self._generation + 1)
        try:
            async with client.pipeline(transaction=False) as pipe:
                for game_id in game_ids:
                    pipe.eval(_ACQUIRE, 1, self.lease_key(game_id), self.process_id, self._lease_ms)
                results = await pipe.execute()
        except (RedisError, OSError) as exc:
            raise BusError(f"could not take the leases of {len(game_ids)} games: {_one_line(exc)}") from None
        taken = []
        for game_id, generation, result in zip(game_ids, generations, results, strict=True):
            if result:
                self._owned[game_id] = _Lease(deadline=sent + self.lease_seconds, generation=generation)
                taken.append(game_id)
            elif self._owned.pop(game_id, None) is not None:
                self._lost(game_id)
        return taken

    async def release(self, game_id: str) -> None:
        """Give the lease up. A Redis failure is logged, not raised: the lease lapses by
        itself within ``lease_seconds``."""
        from redis.exceptions import RedisError

        client = self._require_open()
        if self._owned.pop(game_id, None) is not None:
            metrics.LEASES_RELEASED.inc()
        try:
            await client.eval(_RELEASE, 1, self.lease_key(game_id), self.process_id)
        except (RedisError, OSError) as exc:
            log.warning(
                "bus: could not release the lease of game %s (%s); it lapses within %s s",
                game_id,
                _one_line(exc),
                self.lease_seconds,
            )

    def owns(self, game_id: str) -> bool:
        lease = self._owned.get(game_id)
        return lease is not None and time.monotonic() < lease.deadline

    def owned(self) -> list[str]:
        """The games whose leases we hold."""
        return [game_id for game_id in self._owned if self.owns(game_id)]

    async def holders(self, game_ids: list[str]) -> dict[str, str | None]:
        from redis.exceptions import RedisError

        client = self._require_open()
        if not game_ids:
            return {}
        try:
            values = await client.mget([self.lease_key(game_id) for game_id in game_ids])
        except (RedisError, OSError) as exc:
            raise BusError(f"could not read the leases: {_one_line(exc)}") from None
        return {
            game_id: value.decode() if isinstance(value, bytes) else value
            for game_id, value in zip(game_ids, values)
        }

    @property
    def _lease_ms(self) -> int:
        return max(1, round(self.lease_seconds * 1000))

    async def _renew_forever(self) -> None:
        while not self._closed:
            await asyncio.sleep(self.renew_every)
            try:
                await self._renew_owned()
            except Exception:
                log.exception("bus: lease renewal failed")

    async def _renew_owned(self) -> None:
        """Extend every lease we hold, in one round trip; drop the ones we lost."""
        from redis.exceptions import RedisError

        if not self._owned or self._client is None:
            return
        round_ = [(game_id, lease.generation) for game_id, lease in self._owned.items()]
        sent = time.monotonic()
        try:
            async with self._client.pipeline(transaction=False) as pipe:
                for game_id, _ in round_:
                    pipe.eval(_RENEW, 1, self.lease_key(game_id), self.process_id, self._lease_ms)
                results = await pipe.execute()
        except (RedisError, OSError) as exc:
            if not self._renewal_failing:
                log.warning("bus: could not renew %d leases: %s", len(round_), _one_line(exc))
            self._renewal_failing = True
            # Cut off from Redis past a lease, another process may hold our games by now.
            now = time.monotonic()
            for game_id, held in list(self._owned.items()):
                if now >= held.deadline:
                    del self._owned[game_id]
                    self._lost(game_id)
            return
        if self._renewal_failing:
            log.warning("bus: lease renewal works again")
            self._renewal_failing = False
        for (game_id, generation), renewed in zip(round_, results):
            lease = self._owned.get(game_id)
            if lease is None or lease.generation != generation:
                continue  # released or taken again while the renewal was on its way
            if renewed:
                lease.deadline = sent + self.lease_seconds
            else:
                del self._owned[game_id]
                self._lost(game_id)

    def _lost(self, game_id: str) -> None:
        metrics.LEASES_LOST.inc()
        log.warning("bus: lost the lease of game %s", game_id, extra={"game": game_id})
        if self.on_lost is not None:
            try:
                self.on_lost(game_id)
            except Exception:
                log.exception("bus: on_lost failed for game %s", game_id)

    @staticmethod
    def _call(callback: Callable[[], None] | None) -> None:
        if callback is None:
            return
        try:
            callback()
        except Exception:
            log.exception("bus: on_reconnect failed")


async def cancel_and_wait(tasks: Sequence[asyncio.Task[Any]]) -> None:
    """Cancel the tasks and wait until they have ended, cancelling again any that go on.

    redis-py can lose a cancellation that lands while a command or a read is on its
    way (seen about once in 500 closes, a renewal task back asleep after its cancel),
    and a single cancel then left close() waiting forever. The loops also stop once
    the bus is closed, so a lost cancel costs at most one more turn of a loop.
    """
    pending = {task for task in tasks if not task.done()}
    while pending:
        for task in pending:
            task.cancel()
        _, pending = await asyncio.wait(pending, timeout=_CANCEL_RETRY_SECONDS)
    await asyncio.gather(*tasks, return_exceptions=True)


def open_bus(redis_url: str | None, *, lease_seconds: float = 3.0, renew_every: float = 1.0) -> Bus:
    """The bus for ``--redis-url``: :class:`LocalBus` without one, else :class:`RedisBus`
    (a bad URL or an unreachable Redis is a :class:`BusError` at :meth:`Bus.start`)."""
    if redis_url is None:
        return LocalBus(lease_seconds)
    return RedisBus(redis_url, lease_seconds=lease_seconds, renew_every=renew_every)
