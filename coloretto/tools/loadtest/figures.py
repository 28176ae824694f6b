"""The load test's figures: latency percentiles, each server's CPU and memory, what a kill did,
and whether every move a client was shown is in the database."""

from __future__ import annotations

import math
import resource
from typing import Any

from coloretto.tools.loadtest.clients import Load
from coloretto.tools.loadtest.servers import StartedServer
from coloretto.tools.serve_process import ServerUsage

#: game ids per query when the acknowledged moves are looked up in the database
IDS_PER_QUERY = 500


def percentile(sorted_values: list[float], p: float) -> float | None:
    """The nearest-rank percentile of values sorted in increasing order (None for none)."""
    if not sorted_values:
        return None
    rank = max(1, math.ceil(p / 100 * len(sorted_values)))
    return sorted_values[rank - 1]


def latency_figures(samples_s: list[float], points: tuple[int, ...]) -> dict[str, Any]:
    values = sorted(samples_s)
    figures: dict[str, Any] = {"count": len(values)}
    for p in points:
        value = percentile(values, p)
        figures[f"p{p}"] = None if value is None else round(value * 1000, 2)
    figures["max"] = round(values[-1] * 1000, 2) if values else None
    return figures


def server_figures(
    server: StartedServer, before: ServerUsage, after: ServerUsage, elapsed: float, kill_time: float | None
) -> dict[str, Any]:
    cpu = after.cpu_seconds - before.cpu_seconds
    if server.restarted and server.cpu_base is not None:  # its processes before the last, and that one
        cpu = server.cpu_carried + after.cpu_seconds - server.cpu_base
    alive = kill_time if server.killed and kill_time is not None else elapsed
    return {
        "url": server.url,
        "pid": server.pid,
        "cpu_seconds": round(cpu, 2),
        "cpu_share_of_one_core": round(cpu / alive, 3) if alive > 0 else None,
        "peak_rss_bytes": after.peak_rss_bytes,
        "rss_bytes": after.rss_bytes,
        "processes": after.processes,
        "killed_at_s": round(kill_time, 3) if server.killed and kill_time is not None else None,
        "restarts": server.restarted,
    }


def total_figures(servers: list[dict[str, Any]], elapsed: float) -> dict[str, Any]:
    cpu = sum(s["cpu_seconds"] for s in servers)
    return {
        "cpu_seconds": round(cpu, 2),
        "cpu_share_of_one_core": round(cpu / elapsed, 3),
        "peak_rss_bytes": sum(s["peak_rss_bytes"] for s in servers),
        "processes": sum(s["processes"] for s in servers),
    }


def kill_figures(load: Load, server: StartedServer, kill_time: float) -> dict[str, Any]:
    games = [t for t in load.tracks if t.at_kill is not None]
    resumed = sorted(t.resumed_after for t in games if t.resumed_after is not None)
    bots = sorted(t.bots_resumed_after for t in games if t.bots_resumed_after is not None)
    if len(resumed) < len(games):
        load.errors["games of the killed server that never moved again"] += len(games) - len(resumed)
    lost = load.clients_on_killed - load.clients_reconnected
    if lost:
        load.errors["clients of the killed server that did not reconnect"] += len(lost)
    survivors = server.survivors()
    if survivors:
        load.errors["processes of the killed server still running"] += len(survivors)

    def seconds(values: list[float], p: float | None = None) -> float | None:
        value = (values[-1] if values else None) if p is None else percentile(values, p)
        return None if value is None else round(value, 3)

    return {
        "url": server.url,
        "pid": server.pid,
        "at_s": round(kill_time, 3),
        "games": len(games),
        "games_resumed": len(resumed),
        "resumed_after_s": seconds(resumed),
        "resumed_after_p50_s": seconds(resumed, 50),
        "bots_resumed": len(bots),
        "bots_resumed_after_s": seconds(bots),
        "clients_connected": len(load.clients_on_killed),
        "clients_reconnected": len(load.clients_on_killed & load.clients_reconnected),
        "connections_refused_or_dropped": load.disconnects_by_kill,
        "processes_left_running": len(survivors),
    }


def restart_figures(load: Load) -> dict[str, Any]:
    """Each restart of --rolling-restart: how its games went on, how its process stopped; the
    games that never moved again and a process that did not exit with 0 count as errors."""
    each = []
    every_game: list[float] = []
    every_pause: list[float] = []
    for restart in load.restarts:
        resumed = sorted(restart.resumed.values())
        paused = sorted(restart.paused.values())
        every_game.extend(resumed)
        every_pause.extend(paused)
        never = len(restart.games) - len(resumed)
        if never:
            load.errors["games of a restarted server that never moved again"] += never
        if restart.exit_status != 0:
            load.errors["restarted servers that did not exit with status 0 after SIGTERM"] += 1
        each.append(
            {
                "url": restart.url,
                "pid": restart.pid,
                "at_s": round(restart.at_s, 3),
                "exit_status": restart.exit_status,
                "exited_after_s": _rounded(restart.exited_after),
                "back_after_s": _rounded(restart.back_after),
                "games": len(restart.games),
                "games_resumed": len(resumed),
                "resumed_after_p50_s": _rounded(percentile(resumed, 50)),
                "resumed_after_p99_s": _rounded(percentile(resumed, 99)),
                "resumed_after_max_s": _rounded(resumed[-1] if resumed else None),
                "longest_wait_p50_s": _rounded(percentile(paused, 50)),
                "longest_wait_max_s": _rounded(paused[-1] if paused else None),
            }
        )
    every_game.sort()
    every_pause.sort()
    return {
        "restarts": each,
        "games": len(every_game),
        "resumed_after_p50_s": _rounded(percentile(every_game, 50)),
        "resumed_after_max_s": _rounded(every_game[-1] if every_game else None),
        "longest_wait_p50_s": _rounded(percentile(every_pause, 50)),
        "longest_wait_max_s": _rounded(every_pause[-1] if every_pause else None),
    }


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


class DatabaseUnreadable(Exception):
    """The moves could not be read back (a --database-url that is wrong, a database gone)."""


def check_database(url: str, load: Load) -> dict[str, Any]:
    """Every move a client was shown, looked up in the database's ``moves`` table."""
    from sqlalchemy import select
    from sqlalchemy.engine import make_url

    from coloretto.web.storage.db import create_db_engine
    from coloretto.web.storage.rows import MoveRow

    shown = {t.game_id: t.moves for t in load.tracks}
    stored: dict[str, dict[int, str]] = {game_id: {} for game_id in shown}
    engine = create_db_engine(url)
    try:
        with engine.connect() as connection:
            ids = list(shown)
            for start in range(0, len(ids), IDS_PER_QUERY):
                chunk = ids[start : start + IDS_PER_QUERY]
                query = select(MoveRow.game_id, MoveRow.number, MoveRow.move).where(
                    MoveRow.game_id.in_(chunk)
                )
                for game_id, number, move in connection.execute(query):
                    stored[game_id][number] = move
    except Exception as exc:
        first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise DatabaseUnreadable(
            f"cannot read the moves from {make_url(url).render_as_string()}: {first_line}"
        ) from exc
    finally:
        engine.dispose()
    missing = changed = checked = 0
    for game_id, moves in shown.items():
        for number, move in moves.items():
            checked += 1
            if number not in stored[game_id]:
                missing += 1
            elif stored[game_id][number] != move:
                changed += 1
    return {
        "url": make_url(url).render_as_string(),  # the password as ***
        "games": len(shown),
        "moves_checked": checked,
        "missing": missing,
        "changed": changed,
    }


def own_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime
