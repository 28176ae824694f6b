"""The event bus and game leases (coloretto.web.runtime.cluster) against a real redis-server.

Two RedisBus objects in one test stand for two server processes; the takeover
tests also use a real child process, killed or frozen with a signal.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Coroutine
from pathlib import Path
from typing import Any, TypeVar

import pytest

from coloretto.web.runtime.bus import Bus, BusError, LocalBus
from coloretto.web.runtime.cluster import RedisBus, open_bus
from tests.redis_server import RedisServer, free_port, redis_server, redis_url

__all__ = ["redis_server", "redis_url"]  # fixtures, used by name

REPO = Path(__file__).resolve().parent.parent
T = TypeVar("T")

#: hang guard for whole scenarios: generous, never a speed requirement
SCENARIO_TIMEOUT = 60.0
#: short leases, so that takeovers happen within the test
LEASE = 1.0
RENEW = 0.25


def run(scenario: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(asyncio.wait_for(scenario, SCENARIO_TIMEOUT))


class Inbox:
    """An event handler that keeps what it is given and lets a test wait for it."""

    def __init__(self) -> None:
        self.events: list[tuple[str, dict[str, Any]]] = []
        self._changed = asyncio.Event()

    async def __call__(self, game_id: str, event: dict[str, Any]) -> None:
        self.events.append((game_id, event))
        self._changed.set()

    async def wait_until(self, done: Callable[[list[tuple[str, dict[str, Any]]]], bool]) -> None:
        while not done(self.events):
            self._changed.clear()
            await asyncio.wait_for(self._changed.wait(), 10.0)


async def started(bus: Bus, inbox: Inbox | None = None) -> Bus:
    await bus.start(inbox or Inbox())
    return bus


async def poll(attempt: Callable[[], Awaitable[bool]], within: float, what: str) -> None:
    """Try until ``attempt`` says yes; ``within`` is a hang guard, not a speed test."""
    deadline = time.monotonic() + within
    while not await attempt():
        if time.monotonic() > deadline:
            pytest.fail(f"{what}: not within {within:.1f} s")
        await asyncio.sleep(0.05)


def _task(bus: RedisBus, name: str) -> asyncio.Task[None]:
    (task,) = [task for task in bus._tasks if task.get_name() == name]
    return task


# -- the single-process bus


def test_the_local_bus_owns_every_game_and_tells_nobody() -> None:
    async def scenario() -> None:
        inbox = Inbox()
        bus = open_bus(None)
        assert isinstance(bus, LocalBus)
        await bus.start(inbox)
        assert not bus.owns("g1")
        assert await bus.acquire("g1")
        assert await bus.acquire("g1"), "acquiring a game we hold again is fine"
        assert bus.owns("g1")
        await bus.publish("g1", {"kind": "move", "number": 1})
        assert inbox.events == [], "there is no other process to tell, and never this one"
        assert await bus.holders(["g1", "g2"]) == {"g1": bus.process_id, "g2": None}
        await bus.release("g1")
        assert not bus.owns("g1")
        await bus.acquire("g2")
        await bus.close()
        await bus.close()
        assert not bus.owns("g2")

    run(scenario())


def test_every_bus_has_its_own_process_id() -> None:
    ids = {LocalBus().process_id for _ in range(20)} | {RedisBus("redis://127.0.0.1/0").process_id}
    assert len(ids) == 21
    assert str(os.getpid()) in next(iter(ids))


# -- errors


def test_an_unreachable_redis_is_a_one_line_bus_error_at_start() -> None:
    pytest.importorskip("redis")
    url = f"redis://127.0.0.1:{free_port()}/0"
    bus = open_bus(url)
    assert isinstance(bus, RedisBus), "opening does not connect yet"
    with pytest.raises(BusError) as caught:
        run(bus.start(Inbox()))
    message = str(caught.value)
    assert message.startswith(f"cannot use Redis at {url}: ")
    assert "\n" not in message
    with pytest.raises(BusError, match=r"closed|not started"):
        run(bus.publish("g1", {}))
    run(bus.close())


def test_a_bad_redis_url_is_a_bus_error_at_start() -> None:
    pytest.importorskip("redis")
    with pytest.raises(BusError, match=r"^bad Redis URL http://127\.0\.0\.1/0: .*redis://"):
        run(open_bus("http://127.0.0.1/0").start(Inbox()))


def test_a_password_in_the_url_never_shows_in_the_error() -> None:
    pytest.importorskip("redis")
    url = f"redis://:hunter2@127.0.0.1:{free_port()}/0"
    with pytest.raises(BusError) as caught:
        run(open_bus(url).start(Inbox()))
    assert "hunter2" not in str(caught.value)
    assert ":***@127.0.0.1" in str(caught.value)


def test_redis_without_the_redis_package_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "redis.asyncio", None)  # as if it were not installed
    with pytest.raises(BusError, match=r"pip install 'coloretto\[cluster\]'"):
        run(open_bus("redis://127.0.0.1:6379/0").start(Inbox()))


@pytest.mark.parametrize(
    ("options", "complaint"),
    [
        ({"lease_seconds": 0}, "more than 0 seconds"),
        ({"lease_seconds": 1.0, "renew_every": 1.0}, "more often than they last"),
        ({"renew_every": -1.0}, "more often than they last"),
        ({"prefix": ""}, "prefix"),
    ],
)
def test_bad_lease_settings_are_refused(options: dict[str, Any], complaint: str) -> None:
    with pytest.raises(BusError, match=complaint):
        RedisBus("redis://127.0.0.1/0", **options)


def test_a_bus_used_before_start_says_so(redis_url: str) -> None:
    async def scenario() -> None:
        bus = RedisBus(redis_url)
        with pytest.raises(BusError, match="not started"):
            await bus.publish("g1", {})
        with pytest.raises(BusError, match="not started"):
            await bus.acquire("g1")
        await bus.start(Inbox())
        with pytest.raises(BusError, match="already started"):
            await bus.start(Inbox())
        await bus.close()
        with pytest.raises(BusError, match="closed"):
            await bus.publish("g1", {})
        with pytest.raises(BusError, match="closed"):
            await bus.holders(["g1"])

    run(scenario())


# -- events


def test_two_processes_see_each_others_events_in_order_and_never_their_own(redis_url: str) -> None:
    async def scenario() -> None:
        inbox_a, inbox_b = Inbox(), Inbox()
        a = await started(RedisBus(redis_url), inbox_a)
        b = await started(RedisBus(redis_url), inbox_b)
        try:
            # Many at once (they share round trips) and one by one.
            await asyncio.gather(*(a.publish(f"g{n % 3}", {"n": n}) for n in range(200)))
            for n in range(200, 220):
                await a.publish("g0", {"n": n, "nested": {"cards": ["red", None], "ok": True}})
            await inbox_b.wait_until(lambda events: len(events) >= 220)
            assert [event["n"] for _, event in inbox_b.events] == list(range(220))
            assert [game for game, _ in inbox_b.events[:6]] == ["g0", "g1", "g2", "g0", "g1", "g2"]
            assert inbox_b.events[-1][1]["nested"] == {"cards": ["red", None], "ok": True}
            # B answers after it got everything A published: A's own events, earlier on the
            # channel than this one, would have reached A first.
            await b.publish("g1", {"seen": 220})
            await inbox_a.wait_until(lambda events: len(events) >= 1)
            assert inbox_a.events == [("g1", {"seen": 220})]
            assert len(inbox_b.events) == 220
        finally:
            await a.close()
            await b.close()

    run(scenario())


def test_a_failing_handler_and_malformed_messages_are_logged_and_skipped(
    redis_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    from redis.asyncio import Redis

    async def scenario() -> None:
        received: list[int] = []
        done = asyncio.Event()

        async def fussy(game_id: str, event: dict[str, Any]) -> None:
            if event["n"] == 1:
                raise RuntimeError("the handler broke on n=1")
            received.append(event["n"])
            if event["n"] == 3:
                done.set()

        bus = RedisBus(redis_url)
        await bus.start(fussy)
        other = Redis.from_url(redis_url)  # another process, or anything else on the channel

        async def event(n: int) -> None:
            await other.publish(bus.channel, json.dumps({"origin": "other", "game": "g1", "event": {"n": n}}))

        try:
            await event(0)
            for garbage in (
                b"not json",
                b"\xff\xfe\x00",
                b"[1, 2]",
                b'{"origin": "x", "game": "g1"}',
                b'{"origin": 7, "game": "g1", "event": {}}',
                b'{"origin": "x", "game": "g1", "event": [1]}',
            ):
                await other.publish(bus.channel, garbage)
            for n in (1, 2, 3):
                await event(n)
            await asyncio.wait_for(done.wait(), 10.0)
            assert received == [0, 2, 3]
        finally:
            await other.aclose()
            await bus.close()

    with caplog.at_level(logging.WARNING, logger="coloretto.web.runtime.cluster"):
        run(scenario())
    skipped = [record.getMessage() for record in caplog.records if "malformed message" in record.getMessage()]
    assert len(skipped) == 6
    assert sum("not a JSON object" in message for message in skipped) == 1
    assert sum('a string "origin"' in message for message in skipped) == 3
    failed = [record for record in caplog.records if "handler failed" in record.getMessage()]
    assert len(failed) == 1 and failed[0].exc_info is not None
    assert "n=1" in str(failed[0].exc_info[1])


def test_events_that_are_not_json_are_refused_before_they_leave(redis_url: str) -> None:
    async def scenario() -> None:
        bus = await started(RedisBus(redis_url))
        try:
            with pytest.raises(TypeError):
                await bus.publish("g1", {"when": object()})
            with pytest.raises(ValueError):
                await bus.publish("g1", {"score": float("nan")})
            await bus.publish("g1", {"fine": 1})  # the bus still works
        finally:
            await bus.close()

    run(scenario())


def test_a_dropped_subscription_reconnects_and_says_events_were_missed(
    redis_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    from redis.asyncio import Redis

    async def scenario() -> None:
        inbox = Inbox()
        a = RedisBus(redis_url)
        reconnected = asyncio.Event()
        a.on_reconnect = reconnected.set
        await a.start(inbox)
        b = await started(RedisBus(redis_url))
        raw = Redis.from_url(redis_url)
        try:
            await b.publish("g1", {"n": 0})
            await inbox.wait_until(lambda events: len(events) == 1)
            assert await raw.execute_command("CLIENT", "KILL", "TYPE", "pubsub") >= 1
            await asyncio.wait_for(reconnected.wait(), 10.0)
            await b.publish("g1", {"n": 1})
            await inbox.wait_until(lambda events: len(events) == 2)
            assert [event["n"] for _, event in inbox.events] == [0, 1]
        finally:
            await raw.aclose()
            await a.close()
            await b.close()

    with caplog.at_level(logging.WARNING, logger="coloretto.web.runtime.cluster"):
        run(scenario())
    messages = [record.getMessage() for record in caplog.records]
    assert any("lost the event subscription" in message for message in messages)
    assert any("were missed" in message for message in messages)


def test_publish_and_leases_are_bus_errors_while_redis_is_down(redis_server: RedisServer) -> None:
    async def scenario() -> None:
        bus = RedisBus(redis_server.url, lease_seconds=LEASE, renew_every=RENEW)
        lost: asyncio.Queue[str] = asyncio.Queue()
        bus.on_lost = lost.put_nowait
        await bus.start(Inbox())
        try:
            assert await bus.acquire("g1")
            redis_server.stop()
            with pytest.raises(BusError, match="could not publish"):
                await bus.publish("g1", {"n": 1})
            with pytest.raises(BusError, match="could not take the lease of game g2"):
                await bus.acquire("g2")
            with pytest.raises(BusError, match="could not read the leases"):
                await bus.holders(["g1"])
            # Cut off for longer than a lease, the game may be another's by now.
            assert await asyncio.wait_for(lost.get(), 10.0) == "g1"
            assert not bus.owns("g1")
        finally:
            await bus.close()  # releasing fails and is only logged

    run(scenario())


@pytest.mark.slow
def test_a_redis_that_goes_silent_is_noticed_and_the_subscription_comes_back(
    redis_server: RedisServer,
) -> None:
    class Noticed(logging.Handler):
        def __init__(self) -> None:
            super().__init__()
            self.event = asyncio.Event()

        def emit(self, record: logging.LogRecord) -> None:
            if "lost the event subscription" in record.getMessage():
                self.event.set()

    async def scenario() -> None:
        inbox = Inbox()
        a = RedisBus(redis_server.url, lease_seconds=LEASE, renew_every=RENEW)
        reconnected = asyncio.Event()
        a.on_reconnect = reconnected.set
        await a.start(inbox)
        noticed = Noticed()
        logger = logging.getLogger("coloretto.web.runtime.cluster")
        logger.addHandler(noticed)
        try:
            redis_server.pause()  # no reset, no error: the connection just goes quiet
            await asyncio.wait_for(noticed.event.wait(), 20.0)
            redis_server.resume()
            await asyncio.wait_for(reconnected.wait(), 20.0)
            b = await started(RedisBus(redis_server.url))
            await b.publish("g1", {"n": 1})
            await inbox.wait_until(lambda events: len(events) == 1)
            await b.close()
        finally:
            logger.removeHandler(noticed)
            redis_server.resume()
            await a.close()

    run(scenario())


# -- leases


def test_a_lease_has_one_holder_until_it_is_released(redis_url: str) -> None:
    async def scenario() -> None:
        a = await started(RedisBus(redis_url))
        b = await started(RedisBus(redis_url))
        try:
            assert await a.acquire("g1")
            assert not await b.acquire("g1"), "A holds it"
            assert await a.acquire("g1"), "acquiring our own lease again is fine"
            assert a.owns("g1") and not b.owns("g1")
            assert await b.holders(["g1", "g2"]) == {"g1": a.process_id, "g2": None}
            assert await b.holders([]) == {}
            await b.release("g1")  # not B's: nothing happens
            assert await a.holders(["g1"]) == {"g1": a.process_id}
            assert await b.acquire("g2")
            await a.release("g1")
            assert not a.owns("g1")
            assert await b.acquire("g1")
            assert await a.acquire("g3")
            await a.close()  # releases g3
            assert await b.acquire("g3")
            assert await b.holders(["g1", "g2", "g3"]) == dict.fromkeys(["g1", "g2", "g3"], b.process_id)
        finally:
            await a.close()
            await b.close()

    run(scenario())


def test_leases_are_renewed_past_their_ttl(redis_url: str) -> None:
    from redis.asyncio import Redis

    async def scenario() -> None:
        a = await started(RedisBus(redis_url, lease_seconds=LEASE, renew_every=RENEW))
        b = await started(RedisBus(redis_url, lease_seconds=LEASE, renew_every=RENEW))
        raw = Redis.from_url(redis_url)
        key = a.lease_key("g1")
        try:
            assert await a.acquire("g1")
            last = await raw.pttl(key)
            assert 0 < last <= LEASE * 1000
            renewals = 0

            async def renewed_past_the_first_ttl() -> bool:
                # A renewal shows as the key's TTL going up again; enough of them, and the
                # key has outlived the TTL it was set with.
                nonlocal last, renewals
                ttl = int(await raw.pttl(key))
                assert ttl > 0, "the lease lapsed while A renewed it"
                renewals += ttl > last
                last = ttl
                return renewals > LEASE / RENEW

            await poll(renewed_past_the_first_ttl, 30.0, "renewals")
            assert not await b.acquire("g1")
            assert a.owns("g1")
        finally:
            await raw.aclose()
            await a.close()
            await b.close()

    run(scenario())


def test_a_stopped_owner_loses_its_game_to_another_process(redis_url: str) -> None:
    async def scenario() -> None:
        a = RedisBus(redis_url, lease_seconds=LEASE, renew_every=RENEW)
        lost: list[str] = []
        a.on_lost = lost.append
        await a.start(Inbox())
        b = await started(RedisBus(redis_url, lease_seconds=LEASE, renew_every=RENEW))
        try:
            assert await a.acquire("g1")
            assert await a.acquire("g2")
            # A stops renewing without releasing, as a process does that hangs or dies.
            renewal = _task(a, "bus-renewal")
            renewal.cancel()
            await asyncio.gather(renewal, return_exceptions=True)
            await poll(lambda: b.acquire("g1"), LEASE + RENEW + 5.0, "B taking the lapsed lease")
            assert lost == [], "A has not tried to renew yet"
            await a.release("g2")  # A still gives up what it can
            # A's next renewal finds the lease B's: A is told, and stops running the game.
            await a._renew_owned()
            assert lost == ["g1"]
            assert not a.owns("g1")
            assert await a.holders(["g1"]) == {"g1": b.process_id}
            await a.release("g1")  # a compare-and-delete: B keeps it
            assert await b.holders(["g1"]) == {"g1": b.process_id}
            assert b.owns("g1")
        finally:
            await a.close()
            await b.close()

    run(scenario())


def test_close_ends_a_task_whose_cancellation_was_lost(
    redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """redis-py now and then loses a cancel that lands while a command is on its way
    (seen about once in 500 closes: the renewal task back asleep after its cancel, and
    close() waiting on it for ever). Here the renewal swallows its first cancel on purpose."""

    async def scenario() -> None:
        entered = asyncio.Event()
        swallowed: list[bool] = []

        async def renewal_that_loses_a_cancel() -> None:
            entered.set()
            try:
                await asyncio.sleep(30)
            except asyncio.CancelledError:
                if swallowed:
                    raise
                swallowed.append(True)  # as the library does: carry on as if nothing happened

        bus = RedisBus(redis_url, lease_seconds=LEASE, renew_every=0.01)
        monkeypatch.setattr(bus, "_renew_owned", renewal_that_loses_a_cancel)
        await started(bus)
        await asyncio.wait_for(entered.wait(), 10.0)
        # The hang guard: ten seconds is many times what close() needs.
        await asyncio.wait_for(asyncio.shield(bus.close()), 10.0)
        assert swallowed == [True], "the cancel was lost once, as meant"
        assert all(task.done() for task in bus._tasks)

    run(scenario())


def test_a_lease_we_lost_is_reported_when_we_acquire_it_again(redis_url: str) -> None:
    from redis.asyncio import Redis

    async def scenario() -> None:
        a = RedisBus(redis_url)
        lost: list[str] = []
        a.on_lost = lost.append
        await a.start(Inbox())
        raw = Redis.from_url(redis_url)
        try:
            assert await a.acquire("g1")
            await raw.set(a.lease_key("g1"), "someone-else")  # as if it lapsed and was taken
            assert not await a.acquire("g1")
            assert lost == ["g1"] and not a.owns("g1")
        finally:
            await raw.aclose()
            await a.close()

    run(scenario())


# -- real processes

HOLDER = """
import asyncio, sys
from coloretto.web.runtime.cluster import RedisBus

async def main(url: str, game_id: str) -> None:
    bus = RedisBus(url, lease_seconds=float(sys.argv[3]), renew_every=float(sys.argv[4]))
    bus.on_lost = lambda lost: print(f"lost {lost} owns={bus.owns(lost)}", flush=True)

    async def ignore(game_id: str, event: dict) -> None:
        pass

    await bus.start(ignore)
    assert await bus.acquire(game_id)
    print(f"acquired {bus.process_id}", flush=True)
    await asyncio.Event().wait()

asyncio.run(main(sys.argv[1], sys.argv[2]))
"""


class LeaseHolder:
    """A child process that takes a game's lease and renews it until it is killed."""

    def __init__(self, url: str, game_id: str) -> None:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
        self.proc = subprocess.Popen(
            [sys.executable, "-c", HOLDER, url, game_id, str(LEASE), str(RENEW)],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            cwd=REPO,
            env=env,
        )
        self.lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line.rstrip("\n"))

    async def line(self, starting: str, timeout: float = 30.0) -> str:
        """The child's next line that starts with ``starting`` (its other output is kept for the failure)."""
        seen: list[str] = []
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                line = await asyncio.to_thread(self.lines.get, timeout=0.5)
            except queue.Empty:
                if self.proc.poll() is not None and self.lines.empty():
                    break
                continue
            if line.startswith(starting):
                return line
            seen.append(line)
        pytest.fail(f"the lease holder never printed {starting!r}; it printed: {seen}")

    def signal(self, number: int) -> None:
        self.proc.send_signal(number)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGCONT)
            self.proc.kill()
        self.proc.wait(timeout=10)


def test_a_killed_process_s_game_is_taken_over_within_a_lease(redis_url: str) -> None:
    from redis.asyncio import Redis

    async def scenario() -> None:
        holder = LeaseHolder(redis_url, "g1")
        bus = await started(RedisBus(redis_url, lease_seconds=LEASE, renew_every=RENEW))
        raw = Redis.from_url(redis_url)
        try:
            process_id = (await holder.line("acquired ")).split(" ", 1)[1]
            assert await bus.holders(["g1"]) == {"g1": process_id}
            assert not await bus.acquire("g1")
            # What bounds the takeover: the lease's TTL, at most lease_seconds from any moment.
            assert 0 < await raw.pttl(bus.lease_key("g1")) <= LEASE * 1000
            holder.signal(signal.SIGKILL)
            await poll(lambda: bus.acquire("g1"), LEASE + 1.0, "taking over the killed process's game")
            assert await bus.holders(["g1"]) == {"g1": bus.process_id}
        finally:
            holder.stop()
            await raw.aclose()
            await bus.close()

    run(scenario())


@pytest.mark.slow
def test_a_frozen_process_is_told_it_lost_its_game_when_it_wakes(redis_url: str) -> None:
    async def scenario() -> None:
        holder = LeaseHolder(redis_url, "g1")
        bus = await started(RedisBus(redis_url, lease_seconds=LEASE, renew_every=RENEW))
        try:
            await holder.line("acquired ")
            holder.signal(signal.SIGSTOP)  # a long pause: a swapped-out or suspended machine
            await poll(lambda: bus.acquire("g1"), LEASE + 5.0, "taking over the frozen process's game")
            holder.signal(signal.SIGCONT)
            assert await holder.line("lost ") == "lost g1 owns=False"
            assert await bus.holders(["g1"]) == {"g1": bus.process_id}
            assert bus.owns("g1")
        finally:
            holder.stop()
            await bus.close()

    run(scenario())
