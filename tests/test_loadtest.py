"""``coloretto loadtest``: short runs against real servers, and its argument errors.

These check what the tool reports and that it cleans up after itself, never how fast anything is.
"""

from __future__ import annotations

import asyncio
import json
import os
import tempfile
from pathlib import Path
from typing import Any

import httpx
import pytest

from coloretto.cli import main
from coloretto.tools.loadtest.figures import percentile
from coloretto.tools.loadtest.servers import StartedServer
from coloretto.web.storage.backup import check_database
from tests.redis_server import redis_url

__all__ = ["redis_url"]  # a fixture, used by name

POSTGRESQL = os.environ.get("COLORETTO_TEST_POSTGRESQL")
PG = "postgresql://load:load@127.0.0.1:5432/load"
REDIS = "redis://127.0.0.1:6379/0"


def check_figures(report: dict[str, Any]) -> None:
    assert report["moves"] > 0 and report["person_moves"] > 0
    assert report["moves"] > report["person_moves"]  # the bots' moves are counted too
    assert report["moves_per_second"] == pytest.approx(report["moves"] / report["duration_s"], rel=0.01)
    assert report["errors"] == {} and report["reconnects"] == 0
    act = report["action_to_broadcast_ms"]
    assert act["count"] == report["person_moves"]
    assert 0 < act["p50"] <= act["p90"] <= act["p99"] <= act["max"]
    health = report["health_ms"]
    assert health["count"] >= 1 and 0 < health["p50"] <= health["p99"] <= health["max"]
    assert report["games_started"] >= report["games"]


def test_a_short_run_on_its_own_server(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # where the server's data directory goes
    out_file = tmp_path / "figures.json"
    args = ["loadtest", "--games", "3", "--duration", "2", "--bot-delay", "0", "--spectators", "1"]
    assert main([*args, "--json", str(out_file)]) == 0
    printed = capsys.readouterr().out
    report = json.loads(out_file.read_text())
    check_figures(report)
    assert report["games"] == 3 and report["bots_per_game"] == 3 and report["bot_delay"] == 0
    assert report["server_started_here"] is True
    server = report["server"]
    assert server["cpu_seconds"] > 0 and server["peak_rss_bytes"] > 10 * 2**20 and server["processes"] >= 1
    # What is printed is what is written.
    act = report["action_to_broadcast_ms"]
    assert f"{report['moves']:,} accepted" in printed
    assert f"{report['moves_per_second']:,.1f} moves/s" in printed
    assert f"p50 {act['p50']:,.1f} ms" in printed and f"p99 {act['p99']:,.1f} ms" in printed
    assert "errors      none" in printed and f"CPU {server['cpu_seconds']:.1f} s" in printed
    # what the WebSockets sent, per move each watcher saw, and the CPU each move cost
    seat, spectator = report["sent_to_a_seat"], report["sent_to_a_spectator"]
    assert report["spectators_per_game"] == 1 and report["protocol"] == 2  # the browser's
    assert "sent        (protocol 2) " in printed
    assert seat["moves_seen"] == report["moves"] and seat["bytes"] > seat["messages"] > 0
    assert seat["bytes_per_move"] == round(seat["bytes"] / seat["moves_seen"])
    assert 0 < spectator["moves_seen"] <= report["moves"] and spectator["bytes"] > spectator["messages"] > 0
    assert spectator["bytes_per_move"] == round(spectator["bytes"] / spectator["moves_seen"])
    assert f"a spectator {spectator['bytes_per_move']:,} bytes per move" in printed
    assert f"a seat's client {seat['bytes_per_move']:,} bytes per move" in printed
    per_1000 = server["cpu_seconds_per_1000_moves"]
    assert per_1000 == pytest.approx(1000 * server["cpu_seconds"] / report["moves"], abs=0.01)
    assert f"{per_1000:.2f} s per 1,000 moves" in printed
    # /metrics is polled beside /api/health: its time and its size
    metrics, size = report["metrics_ms"], report["metrics_bytes"]
    assert metrics["count"] >= 1 and 0 < metrics["p50"] <= metrics["p99"] <= metrics["max"]
    assert 1000 < size["p50"] <= size["max"] and report["metrics_unreadable"] == {}
    assert f"/metrics            p50 {metrics['p50']:,.1f} ms" in printed
    assert f"{size['p50']:,} bytes" in printed
    # The server is stopped and its data directory removed.
    assert [p.name for p in tmp_path.iterdir()] == ["figures.json"]
    with pytest.raises(httpx.HTTPError):
        httpx.get(f"{report['url']}/api/health", timeout=1)


@pytest.mark.slow
def test_a_backup_taken_mid_run_holds_every_move_acknowledged_before_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    servers = tmp_path / "servers"
    servers.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(servers))
    backup, out_file = tmp_path / "mid-run.sqlite3", tmp_path / "figures.json"
    args = ["loadtest", "--games", "3", "--duration", "4", "--bot-delay", "0.05", "--json", str(out_file)]
    assert main([*args, "--backup", str(backup), "--backup-after", "2"]) == 0
    printed = capsys.readouterr().out
    report = json.loads(out_file.read_text())
    check_figures(report)
    taken = report["backup"]
    assert taken["kind"] == "sqlite" and taken["file"] == str(backup)
    assert 2 <= taken["at_s"] < 4  # when it was asked for (a busy machine may start it late)
    assert taken["games"] >= 3 and taken["moves_acknowledged_before"] > 0
    assert taken["missing"] == 0 and taken["changed"] == 0
    assert taken["moves_in_backup_of_those_games"] >= taken["moves_acknowledged_before"]
    # the games went on after the backup began: the run's own check saw more moves than it noted
    assert report["database"]["moves_checked"] > taken["moves_acknowledged_before"]
    # the backup is a whole database of coloretto's, as coloretto restore checks one
    facts = check_database(backup, known_revision=True)
    assert facts.moves >= taken["moves_acknowledged_before"] and taken["size_bytes"] == backup.stat().st_size
    assert "SQLite online backup" in printed and "0 missing in it, 0 stored otherwise" in printed
    assert sorted(p.name for p in tmp_path.iterdir()) == ["figures.json", "mid-run.sqlite3", "servers"]
    assert list(servers.iterdir()) == []  # the server's data directory removed


def test_a_backup_file_that_is_not_a_backup_is_refused_before_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    notes = tmp_path / "notes.txt"
    notes.write_text("someone's notes\n")
    assert main(["loadtest", "--duration", "1", "--backup", str(notes)]) == 2
    err = capsys.readouterr().err
    assert err == (
        f"coloretto loadtest: error: --backup {notes} exists and is not a backup (an SQLite file or a "
        "pg_dump -Fc dump): choose another name\n"
    )
    assert notes.read_text() == "someone's notes\n"
    assert list(tmp_path.iterdir()) == [notes]  # no server was started


@pytest.mark.slow
def test_a_run_against_a_given_server_keeps_to_its_message_limit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The server's own limit of 10 messages a second, and bots that never wait: the person
    # clients would act faster than that if the tool did not keep to the limit.
    server = StartedServer(bot_delay=0.0, message_rate=10, extra=[])
    try:
        url = asyncio.run(server.wait_for_address())
        out_file = tmp_path / "figures.json"
        args = ["loadtest", "--url", url, "--games", "2", "--bots", "1", "--duration", "2"]
        assert main([*args, "--seed", "7", "--json", str(out_file)]) == 0
    finally:
        server.stop()
    report = json.loads(out_file.read_text())
    check_figures(report)
    assert report["server_started_here"] is False and report["server"] is None
    assert report["bot_delay"] is None and report["bots_per_game"] == 1
    assert "not measured" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--games", "0"], "--games must be 1 to 5000"),
        (["--bots", "5"], "--bots must be 1 to 4"),
        (["--spectators", "-1"], "--spectators must be 0 to 100 per game"),
        (["--duration", "0"], "--duration must be more than 0"),
        (["--bot-delay", "-1"], "--bot-delay must be 0 to 60"),
        (["--url", "http://127.0.0.1:8000", "--bot-delay", "0"], "--bot-delay sets the server"),
        (["--url", "http://192.0.2.1:8000"], "only loads a server on this machine"),
        (["--url", "https://localhost:8000"], "--url must be http://127.0.0.1:PORT"),
        (["--url", "http://localhost"], "--url must be http://127.0.0.1:PORT"),
        (["--url", "http://[::1"], "is not a URL"),
        (["--message-rate", "0"], "--message-rate must be more than 0"),
        (["--bot", " "], "--bot cannot be empty"),
        (["--url", "http://127.0.0.1:8000", "--url", "http://127.0.0.1:8000/"], "is given twice"),
        (["--url", "http://127.0.0.1:8000", "--url", "http://192.0.2.1:8000"], "only loads a server"),
        (["--processes", "0"], "--processes must be 1 to 16"),
        (["--processes", "2", "--url", "http://127.0.0.1:8000"], "--processes starts the servers itself"),
        (["--processes", "2"], "--processes 2 runs several servers on one database"),
        (["--processes", "3", "--database-url", PG], "give --database-url postgresql://… and --redis-url"),
        (["--processes", "2", "--redis-url", REDIS], "give them one --database-url"),
        (["--redis-url", REDIS, "--url", "http://127.0.0.1:8000"], "--redis-url sets the servers"),
        (["--database-url", PG, "--redis-url", "redis://192.0.2.1:6379/0"], "a Redis on this machine"),
        (["--database-url", PG, "--redis-url", "http://127.0.0.1:6379/0"], "--redis-url must be redis://"),
        (["--database-url", PG, "--redis-url", "redis://127.0.0.1:99999/0"], "is not a URL like redis://"),
        (["--database-url", "no url at all"], "is not a database URL"),
        (["--database-url", "mysql://a:b@127.0.0.1/x"], "must be postgresql://… (or sqlite:///…), not mysql"),
        (["--database-url", "postgresql://a:b@192.0.2.1/x"], "must be on this machine"),
        (
            ["--processes", "2", "--database-url", "sqlite:///x.db", "--redis-url", REDIS],
            "must be postgresql://…, not an SQLite file",
        ),
        (["--kill-after", "5"], "--kill-after SIGKILLs one of the servers this tool starts"),
        (
            ["--url", "http://127.0.0.1:1", "--url", "http://127.0.0.1:2", "--kill-after", "1"],
            "--processes 2",
        ),
        (
            ["--processes", "1", "--database-url", PG, "--redis-url", REDIS, "--kill-after", "1"],
            "it needs --processes 2 or more",
        ),
        (
            ["--processes", "2", "--database-url", PG, "--redis-url", REDIS, "--kill-after", "0"],
            "--kill-after must be more than 0 and less than --duration (30 s)",
        ),
        (
            [
                "--processes",
                "2",
                "--database-url",
                PG,
                "--redis-url",
                REDIS,
                "--duration",
                "5",
                "--kill-after",
                "5",
            ],
            "less than --duration (5 s), not 5",
        ),
        (["--watch-elsewhere"], "--watch-elsewhere sends each game's WebSocket to another server"),
        (["--url", "http://127.0.0.1:8000", "--watch-elsewhere"], "it needs two or more"),
        (["--backup-after", "3"], "--backup-after says when the --backup FILE begins: give --backup too"),
        (["--url", "http://127.0.0.1:8000", "--backup", "b.sqlite3"], "give it as --database-url"),
        (["--backup", "/nonexistent-folder-of-the-test/b.sqlite3"], "does not exist"),
        (["--backup", "b.sqlite3", "--backup-after", "0"], "--backup-after must be more than 0 and less"),
        (["--backup", "b.sqlite3", "--backup-after", "30"], "less than --duration (30 s), not 30"),
        (["--backup", "same.json", "--json", "same.json"], "--backup and --json name the same file"),
        (
            ["--url", "http://127.0.0.1:8000", "--rolling-restart", "5"],
            "--rolling-restart restarts the servers",
        ),
        (["--rolling-restart", "0"], "--rolling-restart must be 1 to 600 seconds, not 0"),
        (
            [
                "--processes",
                "2",
                "--database-url",
                PG,
                "--redis-url",
                REDIS,
                "--kill-after",
                "1",
                "--rolling-restart",
                "5",
            ],
            "--rolling-restart and --kill-after are two different tests",
        ),
    ],
)
def test_argument_errors_are_one_line_and_exit_2(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["loadtest", *args]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("coloretto loadtest: error: ") and message in err


def test_a_bot_the_server_does_not_know_is_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    assert main(["loadtest", "--games", "2", "--duration", "1", "--bot", "nosuchbot"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "refused to create a game" in err and "nosuchbot" in err
    assert list(tmp_path.iterdir()) == []


def test_nobody_answering_at_the_url_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    from tests.redis_server import free_port

    assert main(["loadtest", "--url", f"http://127.0.0.1:{free_port()}", "--duration", "1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no coloretto server answers" in err


def test_percentiles_by_nearest_rank() -> None:
    values = [float(v) for v in range(1, 101)]
    assert [percentile(values, p) for p in (50, 90, 99, 100)] == [50.0, 90.0, 99.0, 100.0]
    assert percentile([3.0], 99) == 3.0 and percentile([], 50) is None
    assert percentile([1.0, 2.0], 50) == 1.0 and percentile([1.0, 2.0], 51) == 2.0


@pytest.mark.slow
def test_games_are_spread_over_several_given_servers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Two servers that share nothing: each game's client must stay with the server that created it.
    servers = [StartedServer(bot_delay=0.0, message_rate=1000, extra=[]) for _ in range(2)]
    try:

        async def addresses() -> list[str]:
            return list(await asyncio.gather(*(server.wait_for_address() for server in servers)))

        urls = asyncio.run(addresses())
        out_file = tmp_path / "figures.json"
        args = ["loadtest", "--url", urls[0], "--url", urls[1], "--games", "4", "--bots", "1"]
        assert main([*args, "--duration", "2", "--json", str(out_file)]) == 0
    finally:
        for server in servers:
            server.stop()
    report = json.loads(out_file.read_text())
    check_figures(report)
    assert (
        report["urls"] == urls
        and report["games_by_url"][urls[0]] >= 2
        and report["games_by_url"][urls[1]] >= 2
    )
    assert report["server_processes"] == 2  # two bus process ids answered /api/health
    assert all(report["health_ms_by_url"][url]["count"] >= 1 for url in urls)
    assert report["kill"] is None and report["database"] is None and report["watch_elsewhere"] is False
    printed = capsys.readouterr().out
    assert f"2 servers {urls[0]}, {urls[1]}" in printed and "2 processes answered" in printed


def drop_tables(url: str) -> None:
    from coloretto.web.storage.db import create_db_engine
    from tests.servers import reset_database

    engine = create_db_engine(url)
    try:
        # The started servers would resume every unfinished game an earlier run left here.
        reset_database(engine)
    finally:
        engine.dispose()


@pytest.mark.slow
@pytest.mark.skipif(
    not POSTGRESQL and not os.environ.get("CI"),
    reason="set COLORETTO_TEST_POSTGRESQL=postgresql://… to test on PostgreSQL (.ci/run does)",
)
def test_two_processes_on_postgresql_and_redis_survive_a_sigkill(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, redis_url: str
) -> None:
    assert POSTGRESQL, "CI must provide COLORETTO_TEST_POSTGRESQL (see .ci/run)"
    drop_tables(POSTGRESQL)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    out_file = tmp_path / "figures.json"
    args = ["--processes", "2", "--database-url", POSTGRESQL, "--redis-url", redis_url, "--watch-elsewhere"]
    options = ["--games", "6", "--bots", "2", "--bot-delay", "0.1", "--duration", "9", "--kill-after", "2"]
    code = main(["loadtest", *args, *options, "--json", str(out_file)])
    printed = capsys.readouterr().out
    report = json.loads(out_file.read_text())
    assert report["errors"] == {}, printed
    assert code == 0
    assert report["server_processes"] == 2 and len(report["servers"]) == 2 and report["watch_elsewhere"]
    first, second = report["servers"]
    assert first["killed_at_s"] == pytest.approx(2, abs=1) and second["killed_at_s"] is None
    assert first["cpu_seconds"] > 0 and second["cpu_seconds"] > 0 and second["peak_rss_bytes"] > 10 * 2**20
    kill = report["kill"]
    assert kill["url"] == first["url"] and kill["games"] >= 1
    # Its games went on in the other process, their bots too (how fast is a figure, never asserted).
    assert kill["games_resumed"] == kill["games"] and kill["resumed_after_s"] is not None
    assert kill["bots_resumed"] == kill["games"]
    # Each game's WebSocket was on the other process: the killed one held the other games' clients,
    # and every one of them came back by itself.
    assert kill["clients_connected"] >= 1 and kill["clients_reconnected"] == kill["clients_connected"]
    assert kill["processes_left_running"] == 0
    database = report["database"]
    assert database["moves_checked"] >= report["moves"] > 0
    assert database["missing"] == 0 and database["changed"] == 0
    assert "resumed after" in printed and "0 missing in the database" in printed
    # Both servers are stopped and their directories removed.
    assert [p.name for p in tmp_path.iterdir()] == ["figures.json"]
    for server in report["servers"]:
        with pytest.raises(httpx.HTTPError):
            httpx.get(f"{server['url']}/api/health", timeout=1)


def check_restarts(report: dict[str, Any], printed: str, servers: int) -> None:
    """Every started server restarted once, drained cleanly, and lost nothing."""
    assert report["errors"] == {}, printed
    restarts = report["restarts"]["restarts"]
    assert [r["url"] for r in restarts] == [s["url"] for s in report["servers"]]
    assert [s["restarts"] for s in report["servers"]] == [1] * servers
    for restart in restarts:
        assert restart["exit_status"] == 0
        assert restart["exited_after_s"] is not None and restart["back_after_s"] >= restart["exited_after_s"]
        # its games all moved again (how fast is a figure for the documentation, never asserted),
        # and the longest wait at each of its tables is measured until it moved through another
        assert restart["games_resumed"] == restart["games"]
        if restart["games"]:
            assert 0 < restart["longest_wait_p50_s"] <= restart["longest_wait_max_s"]
    assert report["restarts"]["games"] >= 1
    assert report["restart_reconnects"] >= 1  # tables closed with 1012 came back at once
    database = report["database"]
    assert database["moves_checked"] >= report["moves"] > 0
    assert database["missing"] == 0 and database["changed"] == 0
    assert (
        "exit status 0" in printed
        and "none waited longer than" in printed
        and "0 missing in the database" in printed
        and "errors      none" in printed
    )


@pytest.mark.slow
@pytest.mark.skipif(
    not POSTGRESQL and not os.environ.get("CI"),
    reason="set COLORETTO_TEST_POSTGRESQL=postgresql://… to test on PostgreSQL (.ci/run does)",
)
def test_a_rolling_restart_of_two_processes_shows_clients_no_error_and_loses_no_move(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, redis_url: str
) -> None:
    assert POSTGRESQL, "CI must provide COLORETTO_TEST_POSTGRESQL (see .ci/run)"
    drop_tables(POSTGRESQL)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    out_file = tmp_path / "figures.json"
    args = ["--processes", "2", "--database-url", POSTGRESQL, "--redis-url", redis_url]
    options = [
        "--games",
        "8",
        "--bots",
        "2",
        "--bot-delay",
        "0.1",
        "--duration",
        "3",
        "--rolling-restart",
        "2",
    ]
    code = main(["loadtest", *args, *options, "--server-arg=--bot-workers=1", "--json", str(out_file)])
    printed = capsys.readouterr().out
    report = json.loads(out_file.read_text())
    check_restarts(report, printed, servers=2)
    assert code == 0
    assert "restart 2   SIGTERM to" in printed
    assert [p.name for p in tmp_path.iterdir()] == ["figures.json"]


@pytest.mark.slow
def test_a_restart_of_one_process_on_sqlite_loses_no_move_and_its_clients_come_back(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Alone there is nowhere else to go: the clients try again until the server is back."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    out_file = tmp_path / "figures.json"
    options = [
        "--games",
        "4",
        "--bots",
        "2",
        "--bot-delay",
        "0.1",
        "--duration",
        "3",
        "--rolling-restart",
        "2",
    ]
    code = main(["loadtest", *options, "--server-arg=--bot-workers=1", "--json", str(out_file)])
    printed = capsys.readouterr().out
    report = json.loads(out_file.read_text())
    check_restarts(report, printed, servers=1)
    assert code == 0
    (restart,) = report["restarts"]["restarts"]
    assert restart["games"] >= 1  # alone, it runs every game
    assert report["routed_around_restarts"] >= 1  # refused while it restarted: tried again


def test_a_json_file_that_cannot_be_written_is_refused_before_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    target = tmp_path / "nowhere" / "x.json"
    assert main(["loadtest", "--duration", "1", "--json", str(target)]) == 2
    err = capsys.readouterr().err
    assert (
        err == f"coloretto loadtest: error: --json {target}: the directory {target.parent} does not exist\n"
    )
    assert list(tmp_path.iterdir()) == []  # no server was started


# ------------------------------------------------------------------ the soak test


def test_a_short_soak_plays_every_game_to_its_end(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    out_file = tmp_path / "soak.json"
    args = ["loadtest", "--soak", "--games", "6", "--at-once", "3", "--seed", "2", "--json", str(out_file)]
    assert main(args) == 0
    printed = capsys.readouterr().out
    report = json.loads(out_file.read_text())
    assert report["tables_started"] == report["games_finished"] == 6
    assert report["stalled"] == 0 and report["stalls"] == [] and report["errors"] == {}
    assert report["moves"] > 6 * 20  # whole games, every seat's moves counted
    assert report["bot_delay"] == 0 and report["bot_delay_jitter"] == 0.2
    (incidents,) = report["server_incidents"].values()
    assert incidents == {}
    assert "stalled     0 (no move for 10 s while unfinished" in printed and "errors      none" in printed
    assert [p.name for p in tmp_path.iterdir()] == ["soak.json"]  # its server stopped and removed


def test_the_soak_tables_cover_every_rule_option_and_are_the_same_for_a_seed() -> None:
    from coloretto.rules import RULE_OPTIONS
    from coloretto.tools.loadtest.soak import plan_table

    plans = [plan_table(index, seed=7) for index in range(300)]
    assert plans == [plan_table(index, seed=7) for index in range(300)]
    assert plans != [plan_table(index, seed=8) for index in range(300)]
    for option in RULE_OPTIONS:
        if option.choices is not None:
            assert {p.rules[option.name] for p in plans} == set(option.choices), option.name
    assert {len(p.seats) for p in plans} == {2, 3, 4, 5}
    assert {p.people for p in plans} == {1, 2, 3}
    assert any(p.spectator for p in plans) and not all(p.spectator for p in plans)
    assert {p.rules["match_games"] for p in plans} == {1, 2}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--soak", "--games", "0"], "--games (whole games, with --soak) must be 1 to 100000"),
        (["--soak", "--at-once", "0"], "--at-once must be 1 to 5000"),
        (["--soak", "--stall-after", "0"], "--stall-after must be more than 0"),
        (["--soak", "--processes", "2", "--database-url", PG, "--redis-url", REDIS, "--kill-after", "3"],
         "--kill-after is for the timed load test"),
        (["--soak", "--url", "http://127.0.0.1:8000", "--bot-delay-jitter", "0.1"],
         "--bot-delay-jitter sets"),
        (["--soak", "--backup", "b.sqlite3"], "--backup is for the timed load test, not --soak"),
        (["--soak", "--backup-after", "3"], "--backup is for the timed load test, not --soak"),
        (["--soak", "--rolling-restart", "5"], "--rolling-restart is for the timed load test"),
        (["--soak", "--spectators", "2"], "--spectators is for the timed load test, not --soak"),
    ],
)  # fmt: skip
def test_soak_argument_errors_are_one_line_and_exit_2(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["loadtest", *args]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("coloretto loadtest: error: ") and message in err
