"""Running a load test or a soak test: the servers started (or given), the clients let loose, the
figures gathered. The command (``coloretto loadtest``) reads the options; this runs them."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from coloretto.tools.loadtest import LoadTestError
from coloretto.tools.loadtest.backup import TakenBackup, backup_during, backup_figures
from coloretto.tools.loadtest.clients import (
    CREATE_CONCURRENCY,
    STALL_SECONDS,
    Load,
    PersonClient,
    Refused,
    poll_health,
    poll_metrics,
)
from coloretto.tools.loadtest.figures import (
    DatabaseUnreadable,
    check_database,
    kill_figures,
    latency_figures,
    own_cpu,
    percentile,
    restart_figures,
    server_figures,
    total_figures,
)
from coloretto.tools.loadtest.restart import rolling_restart
from coloretto.tools.loadtest.servers import StartedServer, wait_for_workers
from coloretto.tools.serve_process import ServerUsage


@dataclass(frozen=True)
class LoadOptions:
    """What a load test is asked for (``coloretto loadtest``'s options; see its help)."""

    games: int = 50
    bots: int = 3
    bot: str = "easy"
    bot_delay: float | None = None
    duration: float = 30.0
    message_rate: float | None = None
    server_arg: tuple[str, ...] = ()
    processes: int | None = None
    database_url: str | None = None
    redis_url: str | None = None
    kill_after: float | None = None
    rolling_restart: float | None = None
    watch_elsewhere: bool = False
    spectators: int = 0  #: connections per game that only watch it
    protocol: int = 2  #: the live protocol the clients speak (coloretto.web.table.changes)
    seed: int = 1
    backup: Path | None = None  #: back the database up into this file during the run
    backup_after: float | None = None  #: when (default: half the duration)


@dataclass(frozen=True)
class SoakOptions:
    """What a soak test is asked for (``coloretto loadtest --soak``'s options)."""

    games: int = 100
    at_once: int = 40
    seed: int = 1
    stall_after: float = 10.0
    bot_delay: float | None = None
    bot_delay_jitter: float | None = None
    message_rate: float | None = None
    server_arg: tuple[str, ...] = ()
    processes: int | None = None
    database_url: str | None = None
    redis_url: str | None = None


async def run_load(args: LoadOptions, given: list[str] | None) -> dict[str, Any]:
    """A load test on the servers at ``given`` (None: started here), as ``args`` says: its report."""
    import httpx

    bot_delay = 0.8 if args.bot_delay is None else args.bot_delay
    servers: list[StartedServer] = []
    if given is None:
        for _ in range(args.processes or 1):
            servers.append(
                StartedServer(
                    bot_delay,
                    1000.0 if args.message_rate is None else args.message_rate,
                    list(args.server_arg),
                    args.database_url,
                    args.redis_url,
                )
            )
    try:
        urls = (
            given
            if given is not None
            else list(await asyncio.gather(*(s.wait_for_address() for s in servers)))
        )
        load = Load(
            urls=urls,
            bots=args.bots,
            bot=args.bot.strip(),
            seed=args.seed,
            watch_elsewhere=args.watch_elsewhere,
            spectators=args.spectators,
            protocol=args.protocol,
        )
        limits = httpx.Limits(
            max_connections=CREATE_CONCURRENCY + 4, max_keepalive_connections=CREATE_CONCURRENCY
        )
        # /api/health has connections of its own: a poll never waits behind the game creations.
        # (and /metrics)
        health_limits = httpx.Limits(max_connections=4 * len(urls), max_keepalive_connections=4 * len(urls))
        async with (
            httpx.AsyncClient(timeout=30, limits=limits) as http,
            httpx.AsyncClient(timeout=30, limits=health_limits) as health_http,
        ):
            for url in urls:
                try:
                    options = (await http.get(f"{url}/api/options")).json()
                except (httpx.HTTPError, ValueError) as exc:
                    raise LoadTestError(f"no coloretto server answers at {url}: {exc}") from None
            # A server listens while its bot workers still warm up: games made before would
            # measure the warm-up, not the server.
            await asyncio.gather(*(wait_for_workers(http, url) for url in urls))
            limits_info = options.get("limits", {})
            load.messages_per_second = float(limits_info.get("messages_per_second", 10))
            load.message_burst = int(limits_info.get("message_burst", 20))
            server_delay = None if not servers else bot_delay
            database_url = servers[0].data_url if servers else args.database_url
            report = await _measure(load, http, health_http, args, servers, server_delay, database_url)
        report["database"] = None
        errors = report["errors"]
        if database_url is not None:
            try:
                report["database"] = database = check_database(database_url, load)
            except DatabaseUnreadable as exc:  # the figures so far are still worth printing
                errors[f"database not checked: {exc}"] = 1
            else:
                if database["missing"]:
                    errors["moves shown to clients but missing in the database"] = database["missing"]
                if database["changed"]:
                    errors["moves shown to clients but stored otherwise"] = database["changed"]
        taken = report.pop("taken_backup")
        report["backup"] = None
        if taken is not None:
            report["backup"] = backup = backup_figures(taken)
            if backup["missing"]:
                errors["moves acknowledged before the backup began but missing in it"] = backup["missing"]
            if backup["changed"]:
                errors["moves acknowledged before the backup began but stored otherwise in it"] = backup[
                    "changed"
                ]
        report["errors"] = dict(sorted(errors.items()))
        return report
    finally:
        for server in servers:
            server.terminate()  # all at once: each may take a moment to finish its games' writes
        for server in servers:
            server.stop()


async def _measure(
    load: Load,
    http: Any,
    health_http: Any,
    args: LoadOptions,
    servers: list[StartedServer],
    bot_delay: float | None,
    database_url: str | None,
) -> dict[str, Any]:
    gate = asyncio.Semaphore(CREATE_CONCURRENCY)
    load.games_wanted = args.games
    clients = [PersonClient(load, index, http, gate) for index in range(args.games)]
    setup_started = time.monotonic()
    tasks = [asyncio.create_task(client.run()) for client in clients]
    health = [asyncio.create_task(poll_health(load, health_http, url)) for url in load.urls]
    health += [asyncio.create_task(poll_metrics(load, health_http, url)) for url in load.urls]
    setup_limit = 30 + 0.2 * args.games
    ready_task = asyncio.create_task(load.all_ready.wait())
    usage_before: list[ServerUsage] = []
    usage_after: list[ServerUsage] = []
    kill_time: float | None = None
    backup_task: asyncio.Task[TakenBackup] | None = None
    taken: TakenBackup | None = None
    try:
        done, _ = await asyncio.wait([ready_task, *tasks], timeout=setup_limit, return_when="FIRST_COMPLETED")
        while ready_task not in done:
            failed = [task for task in done if task is not ready_task]
            for task in failed:
                exc = task.exception()
                if isinstance(exc, Refused):
                    raise LoadTestError(f"the server refused to create a game: {exc}")
                if exc is not None:
                    raise exc
            if time.monotonic() - setup_started > setup_limit:
                load.errors["not every game was connected in time"] += 1
                break
            pending = [t for t in [ready_task, *tasks] if not t.done()]
            done, _ = await asyncio.wait(pending, timeout=setup_limit, return_when="FIRST_COMPLETED")
        setup_seconds = time.monotonic() - setup_started
        usage_before = [server.usage() for server in servers]
        cpu_before = own_cpu()
        load.window_start = time.monotonic()
        if args.backup is not None:
            assert database_url is not None, "checked with the options"
            after = args.duration / 2 if args.backup_after is None else args.backup_after
            backup_task = asyncio.create_task(backup_during(load, database_url, args.backup, after))
        if args.kill_after is not None:
            await asyncio.sleep(args.kill_after)
            kill_time = time.monotonic() - load.window_start
            kill(load, clients, servers[0])
            await asyncio.sleep(args.duration - kill_time)
        elif args.rolling_restart is not None:
            await rolling_restart(load, servers, usage_before, args.rolling_restart, args.redis_url)
            # on to the end of --duration, and a period at least after the last restart
            left = max(args.duration - (time.monotonic() - load.window_start), args.rolling_restart)
            await asyncio.sleep(left)
        else:
            await asyncio.sleep(args.duration)
        elapsed = time.monotonic() - load.window_start
        stall_after = max(STALL_SECONDS, 10 * (bot_delay or 0.0))
        now = time.monotonic()
        stalled = sum(1 for c in clients if c.playing and now - c.last_progress > stall_after)
        if stalled:
            load.errors[f"games without a move in the last {stall_after:g} s"] += stalled
        usage_after = [server.usage() for server in servers]
        cpu_after = own_cpu()
        if backup_task is not None:
            taken = await backup_task  # a backup longer than the run: the games play on meanwhile
        load.stopping = True
    finally:
        load.stopping = True
        if backup_task is not None and not backup_task.done():
            backup_task.cancel()
        ready_task.cancel()
        for task in [*health, *tasks]:
            task.cancel()
        results = await asyncio.gather(*tasks, *health, ready_task, return_exceptions=True)
    for result in results:
        if isinstance(result, Refused):
            load.errors["game creation refused"] += 1
    server_list = [
        server_figures(server, before, after, elapsed, kill_time)
        for server, before, after in zip(servers, usage_before, usage_after, strict=True)
    ]
    for each in server_list:
        each["cpu_seconds_per_1000_moves"] = per_1000_moves(each["cpu_seconds"], load.moves)
    total = total_figures(server_list, elapsed) if server_list else None
    if total is not None:
        total["cpu_seconds_per_1000_moves"] = per_1000_moves(total["cpu_seconds"], load.moves)
    kill_report = None
    if kill_time is not None:
        kill_report = kill_figures(load, servers[0], kill_time)
    restart_report = restart_figures(load) if args.rolling_restart is not None else None
    all_health = [sample for samples in load.health_latencies.values() for sample in samples]
    all_metrics = [sample for samples in load.metrics_latencies.values() for sample in samples]
    metrics_sizes = [size for sizes in load.metrics_sizes.values() for size in sizes]
    process_ids = set().union(*load.processes_seen.values()) if load.processes_seen else set()
    return {
        "url": load.base_url,
        "urls": load.urls,
        "server_started_here": bool(servers),
        "server_processes": len(servers) if servers else len(process_ids),
        "watch_elsewhere": load.watch_elsewhere,
        "bot_delay": bot_delay,
        "games": args.games,
        "bots_per_game": load.bots,
        "bot": load.bot,
        "seed": load.seed,
        "duration_s": round(elapsed, 3),
        "setup_s": round(setup_seconds, 3),
        "games_started": load.games_started,
        "games_by_url": {url: sum(1 for t in load.tracks if t.home == url) for url in load.urls},
        "games_finished": load.games_finished,
        "moves": load.moves,
        "person_moves": load.person_moves,
        "moves_per_second": round(load.moves / elapsed, 1),
        "action_to_broadcast_ms": latency_figures(load.action_latencies, (50, 90, 99)),
        "health_ms": latency_figures(all_health, (50, 99)),
        "health_ms_by_url": {
            url: latency_figures(load.health_latencies.get(url, []), (50, 99)) for url in load.urls
        },
        "metrics_ms": latency_figures(all_metrics, (50, 99)),
        "metrics_bytes": {
            "p50": percentile(sorted(metrics_sizes), 50),
            "max": max(metrics_sizes) if metrics_sizes else None,
        },
        "metrics_unreadable": dict(sorted(load.metrics_problems.items())),
        "spectators_per_game": load.spectators,
        "protocol": load.protocol,
        "sent_to_a_seat": load.seat_traffic.figures(),
        "sent_to_a_spectator": load.spectator_traffic.figures() if load.spectators else None,
        "errors": dict(sorted(load.errors.items())),
        "reconnects": load.reconnects,
        "server": total,
        "servers": server_list,
        "kill": kill_report,
        "restarts": restart_report,
        "restart_reconnects": load.restart_reconnects,
        "routed_around_restarts": load.routed_around,
        "load_generator_cpu_seconds": round(cpu_after - cpu_before, 2),
        "taken_backup": taken,
    }


def per_1000_moves(cpu_seconds: float, moves: int) -> float | None:
    """CPU seconds a server spent per 1,000 moves of the run (None: no move was played)."""
    return round(1000 * cpu_seconds / moves, 2) if moves else None


def kill(load: Load, clients: list[PersonClient], server: StartedServer) -> None:
    """SIGKILL the server; note first which games it ran and which clients it held, so that what
    follows (their next moves, their reconnections) is told apart from ordinary errors."""
    for client in clients:
        track = client.track
        if track is None or track.status != "playing" or not client.playing:
            continue
        if track.home == server.url:
            track.at_kill = track.last_move
        if client.connected_url == server.url:
            load.clients_on_killed.add(client.index)
    load.dead.add(server.url)
    load.killed_at = time.monotonic()
    server.kill()


async def run_soak(args: SoakOptions, given: list[str] | None) -> dict[str, Any]:
    """A soak test on the servers at ``given`` (None: started here), as ``args`` says: its report."""
    import httpx

    from coloretto.tools.loadtest.soak import soak

    bot_delay = 0.0 if args.bot_delay is None else args.bot_delay
    jitter = (
        (0.2 if args.bot_delay is None else 0.0) if args.bot_delay_jitter is None else args.bot_delay_jitter
    )
    servers: list[StartedServer] = []
    if given is None:
        # tables with several people wait for them a moment, all from this one address
        extra = ["--bot-delay-jitter", str(jitter), "--max-waiting-per-client", "0", *args.server_arg]
        for _ in range(args.processes or 1):
            servers.append(
                StartedServer(
                    bot_delay,
                    10.0 if args.message_rate is None else args.message_rate,
                    extra,
                    args.database_url,
                    args.redis_url,
                )
            )
    try:
        urls = (
            given
            if given is not None
            else list(await asyncio.gather(*(s.wait_for_address() for s in servers)))
        )
        connections = min(4 * args.at_once + 8, 512)
        # idle connections are closed here before the server closes them (uvicorn: after 5 s), so
        # that a request never goes out on a connection the server is closing
        limits = httpx.Limits(
            max_connections=connections, max_keepalive_connections=connections, keepalive_expiry=2.0
        )
        async with httpx.AsyncClient(timeout=60, limits=limits) as http:
            for url in urls:
                try:
                    (await http.get(f"{url}/api/options")).raise_for_status()
                except (httpx.HTTPError, ValueError) as exc:
                    raise LoadTestError(f"no coloretto server answers at {url}: {exc}") from None
            await asyncio.gather(*(wait_for_workers(http, url) for url in urls))
            usage_before = [server.usage() for server in servers]
            started = time.monotonic()
            run = await soak(urls, args.games, args.at_once, args.seed, args.stall_after, http)
            elapsed = time.monotonic() - started
            usage_after = [server.usage() for server in servers]
            incidents: dict[str, dict[str, int]] = {}
            for url in urls:
                try:
                    incidents[url] = (await http.get(f"{url}/api/health")).json().get("incidents", {})
                except (httpx.HTTPError, ValueError):
                    incidents[url] = {"unreadable": 1}
        stalls = [stall.as_dict() for stall in run.stalls]
        return {
            "urls": urls,
            "server_started_here": bool(servers),
            "bot_delay": bot_delay if servers else None,
            "bot_delay_jitter": jitter if servers else None,
            "games": args.games,
            "at_once": args.at_once,
            "seed": args.seed,
            "stall_after_s": args.stall_after,
            "duration_s": round(elapsed, 1),
            "tables_started": run.tables_started,
            "games_finished": run.games_finished,
            "stalled": len(stalls),
            "stalled_then_moved_on": sum(1 for stall in stalls if stall["recovered_after_s"] is not None),
            "stalls": stalls,
            "moves": run.moves,
            "moves_per_second": round(run.moves / elapsed, 1) if elapsed > 0 else None,
            "person_behaviour": {
                "acted_twice": run.doubles,
                "acted_over_http": run.rest_actions,
                "dropped_connection": run.drops,
                "http_actions_sent_again": run.http_retries,
                "refused_as_expected": dict(sorted(run.refusals.items())),
            },
            "errors": dict(sorted(run.errors.items())),
            "server_incidents": incidents,
            "servers": [
                {
                    "url": server.url,
                    "cpu_seconds": round(after.cpu_seconds - before.cpu_seconds, 1),
                    "peak_rss_bytes": after.peak_rss_bytes,
                }
                for server, before, after in zip(servers, usage_before, usage_after, strict=True)
            ],
        }
    finally:
        for server in servers:
            server.terminate()
        for server in servers:
            server.stop()
