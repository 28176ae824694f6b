"""``coloretto arena`` and ``coloretto engine`` on the command line."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from coloretto.arena import TournamentConfig, run_tournament
from coloretto.cli import main
from coloretto.rules import Rules


def arena(tmp_path: Path, *extra: str) -> list[str]:
    return [
        "arena",
        "--games",
        "3",
        "--seed",
        "2",
        "--workers",
        "1",
        "--no-progress",
        "--out",
        str(tmp_path / "out"),
        *extra,
    ]


def test_one_against_the_rest_with_rule_options_and_records(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = arena(tmp_path, "--players", "3", "--bot", "greedy", "--against", "random")
    argv += ["--table", "violet", "--edition", "modern", "--records", str(tmp_path / "records")]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "3 of 3 games (complete)" in out
    assert "violet table" in out and "greedy" in out and "head to head" in out
    document = json.loads((tmp_path / "out" / "results.json").read_text())
    assert document["settings"]["lineup"] == ["greedy", "random", "random"]
    assert document["settings"]["rules"]["table"] == "violet"
    assert document["settings"]["rules"]["edition"] == "modern"
    records = sorted((tmp_path / "records").glob("*.json"))
    assert len(records) == 3
    assert main(["replay", str(records[0])]) == 0
    assert "modern edition" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--bot", "grandmaster", "--against", "random"], "unknown bot 'grandmaster'"),
        (["--bot", "greedy", "--bot", "random"], "2 bot(s) for 4 seats"),
        (["--bot", "greedy"] * 4 + ["--against", "random"], "--against has no seat to fill"),
        (["--against", "random"], "at least two different bots"),
        ([], "name the bots"),
        (["--bot", "greedy", "--against", "cmd:"], "give the command after cmd:"),
        (["--bot", "greedy", "--against", "random", "--workers", "0"], "--workers must be at least 1"),
        (["--bot", "greedy", "--against", "random", "--move-time", "0"], "move time must be positive"),
        (["--bot", "greedy", "--against", "random", "--cards-under-last-round", "500"], "more than the deck"),
    ],
)
def test_bad_input_is_one_clear_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flags: list[str], message: str
) -> None:
    assert main(arena(tmp_path, *flags)) == 2
    err = capsys.readouterr().err
    assert message in err
    assert "Traceback" not in err
    assert err.count("\n") == 1


def test_bad_resume_directories(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["arena", "--resume", str(tmp_path / "nowhere")]) == 2
    assert "no such directory" in capsys.readouterr().err
    assert main(["arena", "--resume", str(tmp_path)]) == 2
    assert "holds no tournament" in capsys.readouterr().err
    (tmp_path / "tournament.json").write_text("{not json")
    assert main(["arena", "--resume", str(tmp_path)]) == 2
    assert "cannot read it" in capsys.readouterr().err
    assert main(arena(tmp_path, "--players", "3", "--bot", "greedy", "--against", "random")) == 0
    capsys.readouterr()
    again = arena(tmp_path, "--players", "3", "--bot", "greedy", "--against", "random")
    assert main(again) == 2
    assert "already holds a tournament" in capsys.readouterr().err
    assert main(["arena", "--resume", str(tmp_path / "out"), "--bot", "random"]) == 2
    assert "leave out --bot" in capsys.readouterr().err
    assert main(["arena", "--resume", str(tmp_path / "out"), "--no-progress"]) == 0
    assert "3 of 3 games (complete)" in capsys.readouterr().out


def test_list_bots(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["arena", "--list-bots"]) == 0
    out = capsys.readouterr().out
    assert "greedy" in out and "random" in out and "cmd:COMMAND" in out


def test_engine_refuses_an_unknown_bot(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["engine", "grandmaster"]) == 2
    assert "unknown bot 'grandmaster'" in capsys.readouterr().err


@pytest.mark.slow
def test_ctrl_c_saves_the_games_and_resume_finishes_them(tmp_path: Path) -> None:
    out = tmp_path / "out"
    command = [sys.executable, "-m", "coloretto", "arena", "--bot", "greedy", "--against", "random"]
    command += ["--games", "2000", "--seed", "4", "--workers", "2", "--out", str(out), "--no-progress"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    games = out / "games.jsonl"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if games.exists() and games.read_text().count("\n") >= 8:
            break
        time.sleep(0.05)
    process.send_signal(signal.SIGINT)
    stdout, stderr = process.communicate(timeout=60)
    assert process.returncode == 130, stderr
    assert "INCOMPLETE" in stdout
    assert f"coloretto arena --resume {out}" in stderr
    saved = games.read_text().count("\n")
    document = json.loads((out / "results.json").read_text())
    assert document["interrupted"] is True
    assert 8 <= document["games_played"] == saved < 2000
    # resume, asking for only the first 24 games: the missing ones among them are played
    resumed = subprocess.run(
        [sys.executable, "-m", "coloretto", "arena", "--resume", str(out), "--games", "24", "--no-progress"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert resumed.returncode == 0, resumed.stderr
    assert "24 of 24 games (complete)" in resumed.stdout
    fresh = run_tournament(
        TournamentConfig(Rules(), ("greedy", "random", "random", "random"), games=24, seed=4),
        tmp_path / "fresh",
        backend="serial",
    )
    document = json.loads((out / "results.json").read_text())
    assert document["bots"] == fresh.document["bots"]
    assert document["head_to_head"] == fresh.document["head_to_head"]


def test_ray_missing_or_unreachable_is_a_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    flags = ["--bot", "greedy", "--against", "random", "--backend", "ray"]
    try:
        import ray  # imported first, so that the patch below restores it afterwards
    except ImportError:
        ray = None
    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(sys.modules, "ray", None)  # as if Ray were not installed
        assert main(arena(tmp_path, *flags)) == 2
    assert "pip install 'coloretto[ray]'" in capsys.readouterr().err
    if ray is None:
        pytest.skip("Ray is not installed")
    assert main(arena(tmp_path, *flags, "--address", "127.0.0.1:1")) == 2
    assert "cannot reach the Ray cluster at 127.0.0.1:1" in capsys.readouterr().err
