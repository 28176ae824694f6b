"""The load test's and the soak test's reports, as printed."""

from __future__ import annotations

from typing import Any


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:,.1f} ms"


def _s(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f} s"


def _mib(value: int) -> str:
    return f"{value / 2**20:,.0f} MiB" if value >= 10 * 2**20 else f"{value / 2**20:,.1f} MiB"


def print_report(report: dict[str, Any]) -> None:
    delay = report["bot_delay"]
    where = "started here" if report["server_started_here"] else "given"
    delay_text = f"bot delay {delay:g} s" if delay is not None else "the server's bot delay"
    urls = report["urls"]
    servers_text = f"server {urls[0]}" if len(urls) == 1 else f"{len(urls)} servers {', '.join(urls)}"
    print(
        f"coloretto loadtest: {report['games']} games at once, 1 person + {report['bots_per_game']} "
        f"{report['bot']} bots each, {delay_text}, {report['duration_s']:.1f} s measured "
        f"(set-up {report['setup_s']:.1f} s), {servers_text} ({where})"
    )
    if len(urls) > 1:
        spread = ", ".join(f"{count} on {url}" for url, count in report["games_by_url"].items())
        elsewhere = (
            "; each game's WebSocket on the next server after the one that created it"
            if report["watch_elsewhere"]
            else ""
        )
        print(f"            games created {spread}{elsewhere}")
    print(
        f"games       {report['games_started']} started, {report['games_finished']} finished "
        "(a finished game is replaced by a new one)"
    )
    print(
        f"moves       {report['moves']:,} accepted, {report['person_moves']:,} of them by the person "
        f"clients: {report['moves_per_second']:,.1f} moves/s"
    )
    _print_traffic(report)
    act = report["action_to_broadcast_ms"]
    print(
        f"action → broadcast  p50 {_ms(act['p50'])}  p90 {_ms(act['p90'])}  p99 {_ms(act['p99'])}  "
        f"max {_ms(act['max'])}  ({act['count']:,} actions)"
    )
    health = report["health_ms"]
    print(
        f"/api/health         p50 {_ms(health['p50'])}  p99 {_ms(health['p99'])}  "
        f"max {_ms(health['max'])}  ({health['count']} polls)"
    )
    _print_metrics(report)
    if len(urls) > 1:
        for url, figures in report["health_ms_by_url"].items():
            print(
                f"  {url}  p50 {_ms(figures['p50'])}  p99 {_ms(figures['p99'])}  "
                f"max {_ms(figures['max'])}  ({figures['count']} polls)"
            )
    kill = report["kill"]
    if kill is not None:
        print(
            f"kill        SIGKILL to {kill['url']} (pid {kill['pid']}) at {kill['at_s']:.1f} s: "
            f"{kill['games_resumed']} of its {kill['games']} games moved again, resumed after "
            f"{_s(kill['resumed_after_s'])} (p50 {_s(kill['resumed_after_p50_s'])}); its bots moved "
            f"again after {_s(kill['bots_resumed_after_s'])} ({kill['bots_resumed']} games)"
        )
        print(
            f"            {kill['clients_reconnected']} of the {kill['clients_connected']} clients "
            f"connected to it reconnected elsewhere by themselves; {kill['processes_left_running']} of "
            "its processes left running"
        )
    restarts = report.get("restarts")
    if restarts is not None:
        print_restarts(report, restarts)
    database = report["database"]
    if database is not None:
        print(
            f"database    {database['moves_checked']:,} moves shown to clients ({database['games']} games): "
            f"{database['missing']} missing in the database, {database['changed']} stored otherwise"
        )
    backup = report.get("backup")
    if backup is not None:
        kind = "SQLite online backup" if backup["kind"] == "sqlite" else "pg_dump -Fc"
        print(
            f"backup      {kind} {backup['file']} begun at {backup['at_s']:.1f} s, taken in "
            f"{backup['seconds']:.2f} s, {_mib(backup['size_bytes'])}"
        )
        print(
            f"            {backup['moves_acknowledged_before']:,} moves acknowledged to clients before it "
            f"began ({backup['games']} games): {backup['missing']} missing in it, {backup['changed']} "
            f"stored otherwise; it holds {backup['moves_in_backup_of_those_games']:,} moves of those games"
        )
    errors = report["errors"]
    listed = ", ".join(f"{code} × {count}" for code, count in errors.items()) if errors else "none"
    print(f"errors      {listed}")
    if kill is not None:
        print(
            f"            (not errors: {kill['connections_refused_or_dropped']} connections or requests the "
            "kill dropped or refused)"
        )
    server = report["server"]
    if server is None:
        print(
            "server      CPU and memory not measured (the server was not started by this tool)"
            + (f"; {report['server_processes']} processes answered" if len(urls) > 1 else "")
        )
    else:
        print(
            f"server      CPU {server['cpu_seconds']:.1f} s ({server['cpu_share_of_one_core']:.0%} of one "
            f"core{_per_1000(server)}), peak RSS {_mib(server['peak_rss_bytes'])} ({server['processes']} "
            f"process{'es' if server['processes'] != 1 else ''})"
        )
        if len(report["servers"]) > 1:
            for number, each in enumerate(report["servers"], 1):
                share = each["cpu_share_of_one_core"]
                killed = "" if each["killed_at_s"] is None else f", killed at {each['killed_at_s']:.1f} s"
                print(
                    f"  process {number} {each['url']} pid {each['pid']}: CPU {each['cpu_seconds']:.1f} s "
                    f"({'-' if share is None else f'{share:.0%}'} of one core{_per_1000(each)}), peak RSS "
                    f"{_mib(each['peak_rss_bytes'])}, RSS {_mib(each['rss_bytes'])} "
                    f"({each['processes']} processes{killed})"
                )
    print(f"this tool   CPU {report['load_generator_cpu_seconds']:.1f} s (it runs on the same machine)")


def _per_1000(server: dict[str, Any]) -> str:
    per = server.get("cpu_seconds_per_1000_moves")
    return "" if per is None else f", {per:.2f} s per 1,000 moves"


def _print_traffic(report: dict[str, Any]) -> None:
    """What the WebSockets sent, per move each watcher saw."""
    parts = []
    for label, key in (("a seat's client", "sent_to_a_seat"), ("a spectator", "sent_to_a_spectator")):
        sent = report.get(key)
        if sent is None or sent["bytes_per_move"] is None:
            continue
        parts.append(
            f"{label} {sent['bytes_per_move']:,} bytes per move ({sent['messages']:,} messages of "
            f"{sent['bytes_per_message']:,} bytes on average)"
        )
    if parts:
        print(f"sent        (protocol {report.get('protocol', 1)}) {'; '.join(parts)}")


def _print_metrics(report: dict[str, Any]) -> None:
    metrics, size = report["metrics_ms"], report["metrics_bytes"]
    unreadable = report["metrics_unreadable"]
    refused = (
        f"; not readable: {', '.join(f'{k} × {v}' for k, v in unreadable.items())}" if unreadable else ""
    )
    if metrics["count"]:
        print(
            f"/metrics            p50 {_ms(metrics['p50'])}  p99 {_ms(metrics['p99'])}  "
            f"max {_ms(metrics['max'])}  ({metrics['count']} polls, {size['p50']:,} bytes, at most "
            f"{size['max']:,}){refused}"
        )
    else:
        print(f"/metrics            not measured{refused}")


def print_restarts(report: dict[str, Any], restarts: dict[str, Any]) -> None:
    for number, each in enumerate(restarts["restarts"], 1):
        print(
            f"restart {number}   SIGTERM to {each['url']} (pid {each['pid']}) at {each['at_s']:.1f} s: exit "
            f"status {each['exit_status']} after {_s(each['exited_after_s'])}, serving again after "
            f"{_s(each['back_after_s'])}; {each['games_resumed']} of its {each['games']} games moved again, "
            f"after p50 {_ms_of(each['resumed_after_p50_s'])}, p99 {_ms_of(each['resumed_after_p99_s'])}, "
            f"max {_ms_of(each['resumed_after_max_s'])}; the longest wait for a move at one of its "
            f"tables p50 {_ms_of(each['longest_wait_p50_s'])}, max {_ms_of(each['longest_wait_max_s'])}"
        )
    worst, median = _ms_of(restarts["resumed_after_max_s"]), _ms_of(restarts["resumed_after_p50_s"])
    print(
        f"restarts    every restarted server's games moved again within {worst} of its SIGTERM "
        f"(p50 {median}, {restarts['games']} games), none waited longer than "
        f"{_ms_of(restarts['longest_wait_max_s'])} for a move (p50 {_ms_of(restarts['longest_wait_p50_s'])}) "
        f"until it moved through another server; {report['restart_reconnects']} WebSockets closed "
        f"with 1012 reconnected at once, {report['routed_around_restarts']} requests or connections "
        "to a restarting server went to another (not errors)"
    )


def _ms_of(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds * 1000:,.0f} ms"


def print_soak_report(report: dict[str, Any]) -> None:
    urls = report["urls"]
    where = "started here" if report["server_started_here"] else "given"
    delay = (
        f"bot delay {report['bot_delay']:g} s + 0 to {report['bot_delay_jitter']:g} s"
        if report["bot_delay"] is not None
        else "the servers' bot delay"
    )
    print(
        f"coloretto loadtest --soak: {report['games']} whole games, {report['at_once']} at once, seed "
        f"{report['seed']}, {delay}, {len(urls)} server{'s' if len(urls) != 1 else ''} ({where}) "
        f"{', '.join(urls)}"
    )
    print(
        f"games       {report['tables_started']} started, {report['games_finished']} finished in "
        f"{report['duration_s']:.0f} s; {report['moves']:,} moves ({report['moves_per_second']:,} moves/s)"
    )
    print(
        f"stalled     {report['stalled']} (no move for {report['stall_after_s']:g} s while unfinished; "
        f"{report['stalled_then_moved_on']} of them moved on later)"
    )
    for stall in report["stalls"]:
        server = stall["server"]
        print(
            f"  {stall['game']} on {stall['url']}: seen up to move {stall['seen_move']}; the server: "
            f"move {server.get('move_number')}, seat {server.get('to_move')} to move, last moves "
            f"{server.get('last_moves')}; moved on after {stall['recovered_after_s']} s"
        )
        print(f"    {stall['table']}")
        for who, client in stall["clients"].items():
            print(f"    {who}: on {client['server']}, saw move {client['seen']}")
    people = report["person_behaviour"]
    print(
        f"people      acted twice {people['acted_twice']:,} times, over HTTP {people['acted_over_http']:,}, "
        f"dropped their connection {people['dropped_connection']:,}; refused as expected "
        f"{people['refused_as_expected']}"
    )
    errors = report["errors"]
    print(f"errors      {', '.join(f'{k} × {v}' for k, v in errors.items()) if errors else 'none'}")
    for url, counts in report["server_incidents"].items():
        print(f"incidents   {url}: {counts or 'none'}")
    for each in report["servers"]:
        print(
            f"server      {each['url']}: CPU {each['cpu_seconds']:.0f} s, "
            f"peak RSS {_mib(each['peak_rss_bytes'])}"
        )
