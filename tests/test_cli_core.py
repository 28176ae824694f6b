"""The score, replay and bench commands, run as a user would run them."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

from coloretto import Game, Rules
from coloretto.cli import main
from coloretto.record import GameRecord


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "coloretto", *args], capture_output=True, text=True, timeout=120
    )


def test_score_prints_the_breakdown(capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        main(["score", "green=6", "yellow=4", "red=3", "blue=2", "joker=1", "plus2=1", "--table", "brown"])
        == 0
    )
    out = capsys.readouterr().out
    assert "41" in out and "yellow" in out


def test_score_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["score", "green=6", "yellow=4", "red=3", "blue=2", "plus2=1", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["total"] == 36
    assert data["minus_colours"] == ["blue"]
    assert data["colours"]["blue"] == {"cards": 2, "points": -3}
    assert data["plus_two_points"] == 2


def test_score_violet_and_playing_cards(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["score", "red=3", "blue=3", "green=3", "joker=1", "--table", "violet", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["total"] == 23
    args = ["score", "planets=6", "diamonds=4", "hearts=3", "clubs=2", "wild=1", "zero=1"]
    assert main([*args, "--edition", "playing-cards", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["total"] == 41 and data["joker_colours"] == ["diamonds"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["purple=2"], "unknown card 'purple'"),
        (["red=-1"], "cannot be negative"),
        (["red=10"], "more than the classic edition has"),
        (["joker=4"], "more than the classic edition has"),
        (["plus2=11"], "more than the classic edition has"),
        (["red=x"], "whole number"),
        (["red"], "NAME=COUNT"),
    ],
)
def test_score_bad_input_exits_2_without_traceback(args: list[str], message: str) -> None:
    result = run_cli("score", *args)
    assert result.returncode == 2
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def write_record(tmp_path: Path, players: int = 3) -> tuple[Path, Game]:
    game = Game.new(Rules(players=players), seed=5)
    rng = random.Random(5)
    while not game.is_over:
        game.push(rng.choice(game.legal_actions))
    path = tmp_path / "game.json"
    path.write_text(GameRecord.from_game(game, seats=["Ann", "Bob", "Cy"]).to_json())
    return path, game


def test_replay_prints_final_scores(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path, game = write_record(tmp_path)
    assert main(["replay", str(path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["finished"] is True
    assert data["winners"] == list(game.winners())
    assert [p["total"] for p in data["players"]] == [s.total for s in game.scores()]
    assert main(["replay", str(path)]) == 0
    assert "Ann" in capsys.readouterr().out


def test_replay_reports_bad_records(tmp_path: Path) -> None:
    path, _ = write_record(tmp_path)
    data = json.loads(path.read_text())
    data["moves"][5] = "t3"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))
    result = run_cli("replay", str(bad))
    assert result.returncode == 2
    assert "move 6" in result.stderr and "Traceback" not in result.stderr
    missing = run_cli("replay", str(tmp_path / "nope.json"))
    assert missing.returncode == 2 and "no such file" in missing.stderr
    truncated = tmp_path / "cut.json"
    truncated.write_text(path.read_text()[:100])
    result = run_cli("replay", str(truncated))
    assert result.returncode == 2 and "not valid JSON" in result.stderr


def test_bench_reports_games_per_second(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "--games", "20", "--runs", "2", "--player-counts", "2,4"]) == 0
    out = capsys.readouterr().out
    assert "2 players: median" in out and "4 players: median" in out
    assert main(["bench", "--games", "0"]) == 2
