"""The limits per client address shared by the processes of a cluster (Redis), as one process keeps
them alone: the counters on a real redis-server, a Redis that stops answering (each process counts
alone again, then shares again), and two real ``coloretto serve`` processes that limit one client
spreading its requests, game creations and sign-ups over both exactly as one process would."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from coloretto.web.runtime.limits import RETRY_REDIS, LocalCounters, RedisCounters, client_key
from tests.redis_server import RedisServer, redis_server
from tests.servers import Servers, require_postgresql

__all__ = ["redis_server"]  # a fixture, used by name

#: hang guard of the async scenarios (never a speed requirement)
SCENARIO_TIMEOUT = 120.0


def run(scenario: Awaitable[Any]) -> Any:
    return asyncio.run(asyncio.wait_for(scenario, SCENARIO_TIMEOUT))  # type: ignore[arg-type]


async def passes(take: Callable[[], Awaitable[float]], times: int) -> list[bool]:
    return [not await take() for _ in range(times)]


# ------------------------------------------------------------ the counters on a real Redis


def test_two_processes_counting_in_redis_limit_a_client_as_one_process_does(
    redis_server: RedisServer,
) -> None:
    async def scenario() -> None:
        alone = LocalCounters()
        a, b = RedisCounters(redis_server.url), RedisCounters(redis_server.url)
        await a.start()
        await b.start()
        try:
            key = client_key("requests", "203.0.113.9")
            one = await passes(lambda: alone.rate(key, 10), 12)
            counters = [a, b]
            spread = [not await counters[i % 2].rate(key, 10) for i in range(12)]
            assert one == spread == [True] * 10 + [False] * 2
            # what it says to wait: one request's share of the minute, as alone
            assert 5.0 < await a.rate(key, 10) <= 6.0
            assert 5.0 < await alone.rate(key, 10) <= 6.0
            # another address has its own allowance
            assert not await b.rate(client_key("requests", "203.0.113.10"), 10)
            assert a.shared and b.shared
        finally:
            await a.close()
            await b.close()

    run(scenario())


def test_a_window_counts_the_last_minutes_events_and_takes_one_back(redis_server: RedisServer) -> None:
    async def scenario() -> None:
        a, b = RedisCounters(redis_server.url), RedisCounters(redis_server.url)
        await a.start()
        await b.start()
        alone = LocalCounters()
        try:
            key = client_key("creations", "203.0.113.9")
            for counters in (alone, a):
                other = b if counters is a else alone
                assert not await counters.count(key, 3, 60.0, "one")
                assert not await other.count(key, 3, 60.0, "two")
                assert not await counters.count(key, 3, 60.0, "three")
                wait = await other.count(key, 3, 60.0, "four")
                assert 59.0 < wait <= 60.0  # until the first leaves the minute
                await counters.uncount(key, "three")  # a creation refused after all
                assert not await other.count(key, 3, 60.0, "four")
                assert await counters.count(key, 3, 60.0, "five")
            # a short window empties by itself
            assert not await a.count("short", 1, 0.2, "x")
            assert await b.count("short", 1, 0.2, "y")
            deadline = time.monotonic() + 10
            while await b.count("short", 1, 0.2, "y"):
                assert time.monotonic() < deadline
                await asyncio.sleep(0.05)
        finally:
            await a.close()
            await b.close()

    run(scenario())


def test_a_hold_is_one_at_a_time_across_processes(redis_server: RedisServer) -> None:
    async def scenario() -> None:
        a, b = RedisCounters(redis_server.url), RedisCounters(redis_server.url)
        await a.start()
        await b.start()
        try:
            key = client_key("whatif", "203.0.113.9")
            assert await a.hold(key, 30.0)
            assert not await b.hold(key, 30.0)
            assert not await a.hold(key, 30.0)
            await a.let_go(key)
            assert await b.hold(key, 30.0)
            await b.let_go(key)
        finally:
            await a.close()
            await b.close()

    run(scenario())


def test_while_redis_does_not_answer_each_process_counts_alone_then_shares_again(
    redis_server: RedisServer,
) -> None:
    """Neither open nor closed: a process cut off from Redis keeps the limits itself."""

    async def scenario() -> None:
        a, b = RedisCounters(redis_server.url), RedisCounters(redis_server.url)
        await a.start()
        await b.start()
        key = client_key("requests", "203.0.113.9")
        try:
            assert await passes(lambda: a.rate(key, 5), 3) == [True] * 3  # shared: 2 left
            redis_server.pause()
            try:
                started = time.monotonic()
                # each process alone: its own 5, the count in Redis out of reach
                assert await passes(lambda: a.rate(key, 5), 6) == [True] * 5 + [False]
                assert await passes(lambda: b.rate(key, 5), 6) == [True] * 5 + [False]
                # a Redis that does not answer costs a request at most its timeout, not each one
                assert time.monotonic() - started < 5.0
                assert not a.shared and not b.shared
            finally:
                redis_server.resume()
            # once Redis answers again (a process tries it again a second after a failure), the
            # count is the shared one again (a request that timed out may have been counted there
            # all the same: Redis ran it once it woke up): a fresh address shows it
            deadline = time.monotonic() + 10 * RETRY_REDIS + 10
            for counters in (a, b):
                while not counters.shared:
                    await counters.rate(client_key("probe", "x"), 1000)
                    assert time.monotonic() < deadline, "the counters never went back to Redis"
                    await asyncio.sleep(0.05)
            fresh = client_key("requests", "203.0.113.77")
            assert await passes(lambda: a.rate(fresh, 5), 5) == [True] * 5
            assert await passes(lambda: b.rate(fresh, 5), 1) == [False]
        finally:
            await a.close()
            await b.close()

    run(scenario())


# ------------------------------------------------------------ two real processes

#: three clients, one per limit measured (the servers and their readiness polls are on 127.0.0.1)
REQUESTS, CREATIONS, SIGNUPS = "127.0.0.2", "127.0.0.3", "127.0.0.4"
BOTS_ONLY = {"seats": [{"kind": "bot", "bot": "random"}, {"kind": "bot", "bot": "random"}]}
#: 12 requests a minute: a fifth of one refills a second, so that the burst below is all counted
LIMITS = ["--requests-per-minute", "12", "--creations-per-minute", "3", "--signups-per-hour", "2"]


def clients(urls: list[str], address: str) -> list[httpx.Client]:
    transport = lambda: httpx.HTTPTransport(local_address=address)  # noqa: E731
    return [httpx.Client(base_url=url, timeout=15.0, trust_env=False, transport=transport()) for url in urls]


def spread_over(
    urls: list[str], address: str, ask: Callable[[httpx.Client, int], httpx.Response], times: int
) -> list[httpx.Response]:
    """``times`` requests from ``address``, each to the next server in turn."""
    made = clients(urls, address)
    try:
        return [ask(made[i % len(made)], i) for i in range(times)]
    finally:
        for client in made:
            client.close()


def codes(responses: list[httpx.Response]) -> list[int]:
    return [r.status_code for r in responses]


def signup(client: httpx.Client, i: int) -> httpx.Response:
    # the page's security token: a cookie and its header (its GET counts among the requests)
    token = client.cookies.get("coloretto_csrf") or client.get("/api/account").cookies["coloretto_csrf"]
    body = {"name": f"Player{i}", "password": "a long enough password"}
    return client.post("/api/account/signup", json=body, headers={"X-CSRF-Token": token})


@pytest.mark.slow
def test_one_address_spread_over_two_processes_is_limited_as_on_one(
    tmp_path: Path, servers: Servers, compiled_search: None
) -> None:
    from tests.test_cluster_serve import require_local_addresses

    require_local_addresses()
    database_url = require_postgresql()
    alone = servers.one(tmp_path / "alone", args=LIMITS)
    cluster = servers.cluster(tmp_path / "cluster", database_url, server_args={0: LIMITS, 1: LIMITS})
    one, pair = [alone.url], [server.url for server in cluster.servers]
    for urls in (one, pair):
        # HTTP requests a minute: 12 from one address, as fast as they come, whichever process
        answers = spread_over(urls, REQUESTS, lambda c, i: c.get("/api/options"), 13)
        assert codes(answers) == [200] * 12 + [429], urls
        assert answers[-1].json()["error"] == "rate_limited"
        assert int(answers[-1].headers["Retry-After"]) == 5  # a fifth of a request a second
        # games created a minute: 3
        made = spread_over(urls, CREATIONS, lambda c, i: c.post("/api/games", json=BOTS_ONLY), 4)
        assert codes(made) == [201, 201, 201, 429], urls
        assert made[-1].json()["error"] == "too_many_creations"
        assert 1 <= int(made[-1].headers["Retry-After"]) <= 60
        # accounts an hour (counted in the database): 2
        accounts = spread_over(urls, SIGNUPS, signup, 3)
        assert codes(accounts) == [201, 201, 429], urls
        assert accounts[-1].json()["error"] == "too_many_signups"
