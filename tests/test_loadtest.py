"""``coloretto loadtest``: short runs against real servers, and its argument errors.

These check what the tool reports and that it cleans up after itself, never how fast anything is.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
from pathlib import Path
from typing import Any

import httpx
import pytest

from coloretto.cli import main
from coloretto.commands.loadtest import StartedServer, percentile


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
    args = ["loadtest", "--games", "3", "--duration", "2", "--bot-delay", "0", "--json", str(out_file)]
    assert main(args) == 0
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
    # The server is stopped and its data directory removed.
    assert [p.name for p in tmp_path.iterdir()] == ["figures.json"]
    with pytest.raises(httpx.HTTPError):
        httpx.get(f"{report['url']}/api/health", timeout=1)


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
        (["--duration", "0"], "--duration must be more than 0"),
        (["--bot-delay", "-1"], "--bot-delay must be 0 to 60"),
        (["--url", "http://127.0.0.1:8000", "--bot-delay", "0"], "--bot-delay sets the server"),
        (["--url", "http://192.0.2.1:8000"], "only loads a server on this machine"),
        (["--url", "https://localhost:8000"], "--url must be http://127.0.0.1:PORT"),
        (["--url", "http://localhost"], "--url must be http://127.0.0.1:PORT"),
        (["--url", "http://[::1"], "is not a URL"),
        (["--message-rate", "0"], "--message-rate must be more than 0"),
        (["--bot", " "], "--bot cannot be empty"),
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
    from tests.e2e.server import free_port

    assert main(["loadtest", "--url", f"http://127.0.0.1:{free_port()}", "--duration", "1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no coloretto server answers" in err


def test_percentiles_by_nearest_rank() -> None:
    values = [float(v) for v in range(1, 101)]
    assert [percentile(values, p) for p in (50, 90, 99, 100)] == [50.0, 90.0, 99.0, 100.0]
    assert percentile([3.0], 99) == 3.0 and percentile([], 50) is None
    assert percentile([1.0, 2.0], 50) == 1.0 and percentile([1.0, 2.0], 51) == 2.0
