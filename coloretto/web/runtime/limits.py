"""What one client address may do, counted: HTTP requests a minute (and WebSocket handshakes),
games created a minute, what-if lines worked out at once.

Alone, a process counts in its memory (:class:`LocalCounters`). With ``--redis-url`` every
process counts in Redis (:class:`RedisCounters`), each count one atomic Lua script with Redis's own
clock, so that N processes behind a proxy give one client the limits of one, wherever its requests
land: requests are a token bucket kept as its "theoretical arrival time" (GCRA: one key per client,
one round trip), creations a sliding window of the last minute's creations (a sorted set), a
what-if a key that exists while it is worked out (``SET NX PX``).

**When Redis cannot be reached** the limits do not stop: each process counts on its own again
(the limits hold per process, so a client gets at most N times them behind N processes, as before
there was Redis) until Redis answers again; it is tried again every :data:`RETRY_REDIS` seconds,
and a Redis that does not answer costs a request at most :data:`REDIS_TIMEOUT`. Neither open (no
limit at all while Redis is down, which a flood could wait for) nor closed (every client refused
while Redis restarts, which is most of the site down for a counter).

The keys are ``{prefix}:limit:{kind}:{digest of the address}``: Redis holds no client address.
The login and sign-up throttles are not here: they are counted in the database
(:mod:`coloretto.web.features.accounts`), shared by every process already, and kept across a
restart of Redis, which keeps nothing else that matters.
"""

from __future__ import annotations

import hashlib
import logging
import math
import time
from abc import ABC, abstractmethod
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from redis.asyncio import Redis

log = logging.getLogger("coloretto.web.runtime.limits")

#: seconds a Redis command may take before the count falls back to this process's own
REDIS_TIMEOUT = 0.5
#: after a failure, Redis is tried again this long later (meanwhile the counts are local)
RETRY_REDIS = 1.0
#: clients a process keeps counts for before it forgets the ones whose counts have run out
LOCAL_KEYS = 50_000
#: what RedisCounters._ask answers when Redis cannot be reached
UNREACHABLE: Any = object()

# GCRA: the bucket is full again at the "theoretical arrival time" (TAT) kept in the key. A request
# moves it on by the interval between two requests; it passes while the TAT stays within a burst
# of now. ARGV: the interval (ms), the burst (ms). Answers 0 (passed, counted) or the ms to wait.
_RATE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local interval = tonumber(ARGV[1])
local tat = tonumber(redis.call('GET', KEYS[1]) or now)
if tat < now then tat = now end
local after = tat + interval
local wait = after - now - tonumber(ARGV[2])
if wait > 0 then return math.ceil(wait) end
redis.call('SET', KEYS[1], tostring(after), 'PX', math.ceil(after - now))
return 0
"""

# A sliding window: the members (one per event) scored by when they came. ARGV: the limit, the
# window (ms), the new member. Answers 0 (counted) or the ms until the oldest leaves the window.
_WINDOW = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local window = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then
    local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
    return math.max(1, math.ceil(tonumber(oldest[2]) + window - now))
end
redis.call('ZADD', KEYS[1], now, ARGV[3])
redis.call('PEXPIRE', KEYS[1], math.ceil(window))
return 0
"""


def client_key(kind: str, client: str) -> str:
    """``kind:digest``: what is counted, for whom (the address itself is not kept)."""
    return f"{kind}:{hashlib.sha256(f'limit:{client}'.encode()).hexdigest()[:24]}"


class Counters(ABC):
    """The counts of what clients do, per key (:func:`client_key`)."""

    @abstractmethod
    async def start(self) -> None:
        """Connect (nothing to do alone)."""

    @abstractmethod
    async def close(self) -> None:
        """Disconnect."""

    @abstractmethod
    async def rate(self, key: str, per_minute: int) -> float:
        """Count one request of ``key``'s allowance, ``per_minute`` a minute in bursts of as many
        (a token bucket): 0.0 when it passes, else the seconds until one would (not counted)."""

    @abstractmethod
    async def count(self, key: str, limit: int, seconds: float, member: str) -> float:
        """Count ``member`` among ``key``'s events of the last ``seconds``, at most ``limit``: 0.0
        when counted, else the seconds until the oldest leaves the window (not counted)."""

    @abstractmethod
    async def uncount(self, key: str, member: str) -> None:
        """Take back ``member`` (counted for something that was then refused for another reason)."""

    @abstractmethod
    async def hold(self, key: str, seconds: float) -> bool:
        """Take ``key`` for at most ``seconds`` if nobody holds it: whether it was free."""

    @abstractmethod
    async def let_go(self, key: str) -> None:
        """Free ``key``."""


class LocalCounters(Counters):
    """This process's own counts, in its memory (one process; the fallback of :class:`RedisCounters`)."""

    def __init__(self) -> None:
        self._arrivals: dict[str, float] = {}  #: key -> the bucket's theoretical arrival time
        self._windows: dict[str, OrderedDict[str, float]] = {}  #: key -> member -> when counted
        self._holds: dict[str, float] = {}  #: key -> until when

    async def start(self) -> None:
        pass

    async def close(self) -> None:
        pass

    async def rate(self, key: str, per_minute: int) -> float:
        now = time.monotonic()
        interval = 60.0 / per_minute
        if len(self._arrivals) > LOCAL_KEYS:  # forget the clients whose bucket is full again
            self._arrivals = {k: tat for k, tat in self._arrivals.items() if tat > now}
        after = max(self._arrivals.get(key, now), now) + interval
        wait = after - now - 60.0
        if wait > 1e-9:
            return wait
        self._arrivals[key] = after
        return 0.0

    async def count(self, key: str, limit: int, seconds: float, member: str) -> float:
        now = time.monotonic()
        if len(self._windows) > LOCAL_KEYS:  # forget the clients with nothing left in their window
            self._windows = {
                k: w for k, w in self._windows.items() if w and next(reversed(w.values())) > now - seconds
            }
        window = self._windows.setdefault(key, OrderedDict())
        while window and next(iter(window.values())) <= now - seconds:
            window.popitem(last=False)
        if len(window) >= limit:
            return max(1e-3, next(iter(window.values())) + seconds - now)
        window[member] = now
        return 0.0

    async def uncount(self, key: str, member: str) -> None:
        window = self._windows.get(key)
        if window is not None:
            window.pop(member, None)

    async def hold(self, key: str, seconds: float) -> bool:
        now = time.monotonic()
        if self._holds.get(key, 0.0) > now:
            return False
        if len(self._holds) > LOCAL_KEYS:
            self._holds = {k: until for k, until in self._holds.items() if until > now}
        self._holds[key] = now + seconds
        return True

    async def let_go(self, key: str) -> None:
        self._holds.pop(key, None)


class RedisCounters(Counters):
    """Every process's counts, in Redis; this process's own while Redis cannot be reached."""

    def __init__(self, url: str, prefix: str = "coloretto") -> None:
        self.url = url
        self.prefix = prefix
        self.local = LocalCounters()  #: the counts while Redis cannot be reached
        self._client: Redis | None = None
        self._down_until = 0.0  #: monotonic time before which Redis is not tried again
        self._failing = False

    def key(self, key: str) -> str:
        return f"{self.prefix}:limit:{key}"

    async def start(self) -> None:
        from redis.asyncio import Redis

        self._client = Redis.from_url(
            self.url, socket_timeout=REDIS_TIMEOUT, socket_connect_timeout=REDIS_TIMEOUT
        )

    async def close(self) -> None:
        if self._client is not None:
            client, self._client = self._client, None
            await client.aclose()

    @property
    def shared(self) -> bool:
        """Whether the counts are Redis's now (False while it cannot be reached)."""
        return self._client is not None and not self._failing

    async def _ask(self, method: str, *args: Any, **options: Any) -> Any:
        """A command on Redis; :data:`UNREACHABLE` when it cannot be reached (then the caller
        counts locally)."""
        from redis.exceptions import RedisError

        if self._client is None or time.monotonic() < self._down_until:
            return UNREACHABLE
        try:
            answer = await getattr(self._client, method)(*args, **options)
        except (RedisError, OSError, TimeoutError) as exc:
            self._down_until = time.monotonic() + RETRY_REDIS
            if not self._failing:
                log.warning(
                    "the limits per client are counted by this process alone: Redis cannot be "
                    "reached (%s); trying again every %g s",
                    " ".join(str(exc).split()) or type(exc).__name__,
                    RETRY_REDIS,
                )
            self._failing = True
            return UNREACHABLE
        if self._failing:
            log.warning("the limits per client are counted in Redis again, for every process")
            self._failing = False
        return answer

    async def rate(self, key: str, per_minute: int) -> float:
        interval = 60_000 / per_minute
        waited = await self._ask("eval", _RATE, 1, self.key(key), repr(interval), "60000")
        if waited is UNREACHABLE:
            return await self.local.rate(key, per_minute)
        return int(waited) / 1000

    async def count(self, key: str, limit: int, seconds: float, member: str) -> float:
        window = str(math.ceil(seconds * 1000))
        waited = await self._ask("eval", _WINDOW, 1, self.key(key), str(limit), window, member)
        if waited is UNREACHABLE:
            return await self.local.count(key, limit, seconds, member)
        return int(waited) / 1000

    async def uncount(self, key: str, member: str) -> None:
        await self.local.uncount(key, member)
        await self._ask("zrem", self.key(key), member)

    async def hold(self, key: str, seconds: float) -> bool:
        taken = await self._ask("set", self.key(key), b"1", px=math.ceil(seconds * 1000), nx=True)
        if taken is UNREACHABLE:
            return await self.local.hold(key, seconds)
        return bool(taken)

    async def let_go(self, key: str) -> None:
        await self.local.let_go(key)
        await self._ask("delete", self.key(key))


def open_counters(redis_url: str | None) -> Counters:
    """The counters for ``--redis-url``: this process's own without one, else Redis's."""
    return LocalCounters() if redis_url is None else RedisCounters(redis_url)
