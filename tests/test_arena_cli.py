"""``coloretto arena`` and ``coloretto engine`` on the command line."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from coloretto.arena import TournamentConfig, run_tournament
from coloretto.arena.config import ArenaError
from coloretto.arena.tournament import load_settings
from coloretto.cli import build_parser, main
from coloretto.commands.options import rules_from_args
from coloretto.game import Game
from coloretto.match import match_game_seed
from coloretto.record import GameRecord
from coloretto.rules import RULE_OPTIONS, Rules, StartingColours
from tests.helpers import argument_error


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
        (
            ["--bot", "greedy", "--against", "random", "--match-games", "9"],
            "match_games must be a whole number from 1 to 8, not 9",
        ),
        (
            ["--bot", "greedy", "--against", "random", "--cards-under-last-round", "lots"],
            "cards_under_last_round must be a whole number, not 'lots'",
        ),
        (
            ["--bot", "greedy", "--against", "random", "--players", "6"],
            "Coloretto is for 2 to 5 players, not 6",
        ),
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


@pytest.mark.parametrize("command", ["arena", "play", "bench"])
def test_every_rule_option_is_a_flag_with_its_choices_explained(
    command: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "10000")  # no line breaks inside a choice's name
    with pytest.raises(SystemExit):
        main([command, "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    for option in RULE_OPTIONS:
        if option.name == "players" and command == "bench":
            continue  # bench has --player-counts instead
        assert option.flag in help_text, option.flag
        for choice in option.choices or ():
            assert f"{choice}: {' '.join(option.describe_choice(choice).split())}" in help_text
    assert "--starting-colours {dealt,chosen}" in help_text


def test_rule_flags_make_the_rules_and_leave_the_rest_at_their_defaults() -> None:
    parser = build_parser()
    args = parser.parse_args(
        ["arena", "--starting-colours", "chosen", "--players", "3", "--match-games", "2"]
    )
    assert rules_from_args(args) == Rules(players=3, starting_colours=StartingColours.CHOSEN, match_games=2)
    args = parser.parse_args(["arena", "--cards-under-last-round", "default", "--table", "violet"])
    assert rules_from_args(args) == Rules(table="violet")
    args = parser.parse_args(["play", "--seats", "random,human", "--cards-under-last-round", "3"])
    assert rules_from_args(args, players=2) == Rules(players=2, cards_under_last_round=3)
    assert rules_from_args(parser.parse_args(["bench"]), players=5) == Rules(players=5)


def test_a_match_deals_the_games_that_match_deals(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = arena(tmp_path, "--players", "3", "--bot", "greedy", "--against", "random", "--match-games", "2")
    assert main([*argv, "--records", str(tmp_path / "records")]) == 0
    capsys.readouterr()
    deal_seeds = {
        str(result["deal"]): result["seed"]
        for result in map(json.loads, (tmp_path / "out" / "games.jsonl").read_text().splitlines())
    }
    records = sorted((tmp_path / "records").glob("*.json"))
    assert len(records) == 6
    for path in records:
        record = GameRecord.from_json(path.read_text())
        number = int(record.tags["match_game"])
        expected = Game.new(record.rules, seed=match_game_seed(deal_seeds[record.tags["deal"]], number))
        setup = record.initial_game().setup
        assert (setup.deck, setup.starting_cards, setup.first_player) == (
            expected.setup.deck,
            expected.setup.starting_cards,
            expected.setup.first_player,
        )


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


def processes_in_group(group: int) -> list[int]:
    """The live processes of a process group (Linux: read from /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if os.getpgid(int(entry.name)) == group and "State:\tZ" not in (entry / "status").read_text():
                    found.append(int(entry.name))
            except (ProcessLookupError, FileNotFoundError, PermissionError):
                pass
    return found


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads processes from /proc")
def test_workers_end_when_the_arena_is_killed(tmp_path: Path) -> None:
    """SIGKILL gives the arena no chance to stop its pool: the workers notice
    that their parent is gone and end too, rather than play on unseen."""
    out = tmp_path / "out"
    command = [sys.executable, "-m", "coloretto", "arena", "--bot", "greedy", "--against", "random"]
    command += ["--games", "4000", "--seed", "4", "--workers", "2", "--out", str(out), "--no-progress"]
    process = subprocess.Popen(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    games = out / "games.jsonl"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not (games.exists() and games.read_text().count("\n") >= 8):
        time.sleep(0.05)
    assert len(processes_in_group(process.pid)) == 3  # the arena and its two workers
    process.kill()
    process.wait(timeout=10)
    deadline = time.monotonic() + 20
    while processes_in_group(process.pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = processes_in_group(process.pid)
    for pid in left:  # leave nothing running after the test, whatever it finds
        os.kill(pid, signal.SIGKILL)
    assert left == []


ORPHAN = """
import os, sys, threading, time
from coloretto.arena import backends
child = os.fork()
if child == 0:  # a worker stuck for ever, as on a lock its dead parent's pool left held
    os.setpgid(0, 0)
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)  # not the test's pipe: its reader waits for every holder to close it
    os.dup2(null, 2)
    threading.Thread(target=backends._exit_with_parent, args=(os.getppid(),), daemon=True).start()
    threading.Event().wait()
print(child, flush=True)
time.sleep(0.5)
os._exit(0)  # the parent goes without stopping its worker
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="forks a worker")
def test_a_stuck_worker_ends_when_its_parent_is_gone() -> None:
    done = subprocess.run([sys.executable, "-c", ORPHAN], capture_output=True, text=True, timeout=60)
    orphan = int(done.stdout.split()[0])
    deadline = time.monotonic() + 20
    while processes_in_group(orphan) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = processes_in_group(orphan)
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert left == []


@pytest.mark.slow
@pytest.mark.parametrize("signal_name", ["SIGINT", "SIGTERM"])
def test_a_stop_signal_saves_the_games_and_resume_finishes_them(tmp_path: Path, signal_name: str) -> None:
    """Ctrl-C at a terminal, or SIGTERM to the whole process group (a batch
    scheduler or ``kill`` stopping the job, the pool's workers included): the
    games saved so far are summarised, no worker prints a traceback, and
    ``--resume`` plays the rest as an uninterrupted run would have."""
    out = tmp_path / "out"
    command = [sys.executable, "-m", "coloretto", "arena", "--bot", "greedy", "--against", "random"]
    command += ["--games", "2000", "--seed", "4", "--workers", "2", "--out", str(out), "--no-progress"]
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    games = out / "games.jsonl"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if games.exists() and games.read_text().count("\n") >= 8:
            break
        time.sleep(0.05)
    os.killpg(process.pid, getattr(signal, signal_name))  # as a terminal or a scheduler signals a job
    stdout, stderr = process.communicate(timeout=60)
    assert process.returncode == 130, stderr
    assert "Traceback" not in stderr
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


def test_an_out_or_records_that_is_a_file_is_one_line_and_nothing_is_made(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = tmp_path / "good.json"
    other.write_text('{"mine": true}\n')
    out = tmp_path / "out"
    lineup = ["arena", "--players", "2", "--bot", "greedy", "--against", "random", "--games", "2"]
    for flags, message in (
        (["--out", str(other)], f"--out {other}: it is a file, not a directory"),
        (["--out", str(other / "deeper")], f"--out {other / 'deeper'}: {other} is not a directory"),
        (["--out", str(out), "--records", str(other)], f"--records {other}: it is a file, not a directory"),
    ):
        assert main([*lineup, *flags]) == 2
        err = capsys.readouterr().err
        assert err.strip() == f"coloretto arena: error: {message}"
        assert other.read_text() == '{"mine": true}\n'
        assert not out.exists()  # --records is refused before --out is made


def test_empty_and_endless_values_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lineup = ["arena", "--players", "2", "--bot", "greedy", "--against", "random", "--games", "2"]
    assert argument_error([*lineup, "--out", ""], capsys).endswith("argument --out: the path is empty")
    assert argument_error([*lineup, "--records", " "], capsys).endswith("the path is empty")
    for flag in ("--move-time", "--time-margin", "--startup-time"):
        for value in ("inf", "nan", "-inf"):
            line = argument_error([*lineup, f"{flag}={value}"], capsys)
            assert line.endswith(f"argument {flag}: must be a finite number, not {value!r}")
        assert "must be at most 3600 seconds" in argument_error([*lineup, flag, "1e308"], capsys)
    assert not any(Path.cwd().glob("results.json"))


def test_settings_with_endless_times_are_refused() -> None:
    with pytest.raises(ArenaError, match="finite"):
        TournamentConfig(Rules(players=2), ("greedy", "random"), games=2, seed=1, move_time=math.inf)


def test_resume_reports_bytes_that_are_not_text_with_their_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(arena(tmp_path, "--players", "2", "--bot", "greedy", "--against", "random")) == 0
    capsys.readouterr()
    games = tmp_path / "out" / "games.jsonl"
    lines = games.read_bytes().split(b"\n")
    games.write_bytes(b"\n".join([lines[0], b"\xff\xfe not text", *lines[1:]]))
    assert main(["arena", "--resume", str(tmp_path / "out"), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert err.strip().splitlines()[-1].startswith(f"coloretto arena: error: {games}, line 2: not UTF-8 text")


def test_resume_of_a_file_says_it_is_not_a_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    file = tmp_path / "good.json"
    file.write_text("{}")
    assert main(["arena", "--resume", str(file)]) == 2
    err = capsys.readouterr().err
    assert f"{file} is not a directory" in err and "no such directory" not in err


def test_records_go_to_a_folder_of_their_own_found_from_anywhere(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(arena(tmp_path, "--bot", "greedy", "--against", "random", "--records", "records")) == 0
    _, records = load_settings(tmp_path / "out")
    assert records == tmp_path / "records"  # absolute: a --resume from elsewhere writes there too
    capsys.readouterr()
    # a second tournament would write its game-000000.json over the first one's, among its others
    second = arena(tmp_path, "--bot", "greedy", "--against", "random", "--records", "records")
    second[second.index("--out") + 1] = str(tmp_path / "out2")
    assert main(second) == 2
    assert "records already holds game records" in capsys.readouterr().err
