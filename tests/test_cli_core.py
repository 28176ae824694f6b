"""The score, replay and bench commands, run as a user would run them."""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from coloretto import Game, Rules
from coloretto.cards import EDITION_DECKS, Edition, card_name
from coloretto.cli import EXIT_BROKEN_PIPE, main
from coloretto.commands.options import finite_number
from coloretto.record import GameRecord
from coloretto.rules import JokerTiming
from tests.helpers import argument_error


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
        (["red=2", "red=3"], "red is given twice ('red=2' and 'red=3')"),
        (["red=2", "blue=1", "R=1"], "red is given twice ('red=2' and 'R=1')"),
    ],
)
def test_score_bad_input_exits_2_without_traceback(args: list[str], message: str) -> None:
    result = run_cli("score", *args)
    assert result.returncode == 2
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def test_score_with_no_cards_is_an_empty_collection(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["score", "--table", "brown", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["total"] == 0 and data["colours"] == {} and data["joker_colours"] == []
    assert main(["score", "--table", "violet"]) == 0
    out = capsys.readouterr().out
    assert "collection" in out and "0" in out


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


@pytest.mark.slow
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


def test_bench_times_reviews(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "--games", "1", "--runs", "1", "--player-counts", "2", "--review", "1"]) == 0
    out = capsys.readouterr().out
    pattern = r"2 players: median +[0-9.]+ s a game \(max [0-9.]+; \d+ moves, \d+ positions searched\)"
    assert re.search(pattern, out)
    assert main(["bench", "--review", "-1"]) == 2


def on_take_game_with_named_jokers() -> Game:
    """A finished game in which jokers were named as they were taken, by two seats or more."""
    rules = Rules(players=3, edition=Edition.MODERN, joker_timing=JokerTiming.ON_TAKE)
    for seed in range(200):
        game = Game.new(rules, seed=seed)
        rng = random.Random(seed)
        while not game.is_over:
            game.push(rng.choice(game.legal_actions))
        if sum(1 for seat in range(3) if game.named_jokers(seat)) >= 2:
            return game
    raise AssertionError("no game of 200 named jokers for two seats")


def test_replay_shows_the_jokers_named_on_take(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    game = on_take_game_with_named_jokers()
    path = tmp_path / "on-take.json"
    path.write_text(GameRecord.from_game(game, seats=["Ann", "Bob", "Cy"]).to_json())
    assert main(["replay", str(path), "--json"]) == 0
    players = json.loads(capsys.readouterr().out)["players"]
    names = EDITION_DECKS[game.rules.edition].colour_names
    for seat, player in enumerate(players):
        named = game.named_jokers(seat)
        assert player["named_jokers"] == [
            {"joker": card_name(joker, game.rules.edition), "colour": names[colour]}
            for joker, colour in named
        ]
        # Jokers named on take leave the scoring nothing to choose: they are all the named ones.
        assert player["joker_colours"] == [names[colour] for _, colour in named]
    assert main(["replay", str(path)]) == 0
    table = capsys.readouterr().out
    for seat in range(3):
        for joker, colour in game.named_jokers(seat):
            assert f"{card_name(joker, game.rules.edition)}: {names[colour]}" in table


def replay_of(tmp_path: Path, change: Callable[[dict[str, Any]], object], *options: str) -> str:
    """stderr of replaying the record of ``write_record`` after ``change``; it must exit 2."""
    path, _ = write_record(tmp_path)
    data = json.loads(path.read_text())
    changed = change(data)
    bad = tmp_path / "bad.json"
    bad.write_text(changed if isinstance(changed, str) else json.dumps(data))
    result = run_cli("replay", str(bad), *options)
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr and result.stdout == ""
    assert len(result.stderr.strip().splitlines()) == 1
    return result.stderr


@pytest.mark.slow
def test_replay_refuses_a_result_that_is_not_the_games(tmp_path: Path) -> None:
    def totals_not_a_list(data: dict[str, Any]) -> None:
        data["result"]["totals"] = 31

    assert "result.totals must be a list of whole numbers, not 31" in replay_of(tmp_path, totals_not_a_list)

    def other_winners(data: dict[str, Any]) -> None:
        data["result"]["winners"] = [seat for seat in range(3) if seat not in data["result"]["winners"]][:1]

    assert "the recorded winners" in replay_of(tmp_path, other_winners, "--json")

    def unfinished(data: dict[str, Any]) -> None:
        data["moves"] = data["moves"][:30]

    assert "has a result, but its game is not over after its 30 moves" in replay_of(tmp_path, unfinished)


@pytest.mark.parametrize("options", [(), ("--json",)])
@pytest.mark.parametrize("names", [["Ann", "Bob"], ["Ann", "Bob", "Cy", "Di"]])
def test_replay_refuses_seats_that_do_not_match_the_players(
    tmp_path: Path, names: list[str], options: tuple[str, ...]
) -> None:
    def rename(data: dict[str, Any]) -> None:
        data["seats"] = names

    message = replay_of(tmp_path, rename, *options)
    assert f"seats has {len(names)} name(s), but the rules are for 3 players" in message


def test_replay_with_unnamed_seats_counts_them_from_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, _ = write_record(tmp_path)
    data = json.loads(path.read_text())
    data["seats"] = []
    path.write_text(json.dumps(data))
    assert main(["replay", str(path)]) == 0
    table = capsys.readouterr().out
    assert "seat 1" in table and "seat 3" in table and "seat 0" not in table
    assert main(["replay", str(path), "--json"]) == 0
    assert [p["seat"] for p in json.loads(capsys.readouterr().out)["players"]] == [0, 1, 2]


@pytest.mark.slow
def test_replay_refuses_json_nested_too_deep(tmp_path: Path) -> None:
    message = replay_of(tmp_path, lambda data: "[" * 100_000 + "]" * 100_000)
    assert "the JSON is nested too deeply" in message

    def deep_tag(data: dict[str, Any]) -> None:
        data["tags"] = {"note": json.loads("[" * 500 + "]" * 500)}

    assert "tags is nested too deeply" in replay_of(tmp_path, deep_tag)


@pytest.mark.parametrize(
    "command",
    [
        ("score", "red=3", "blue=2", "--json"),
        ("score", "red=3"),
        ("replay", "RECORD"),
        ("replay", "RECORD", "--json"),
    ],
)
def test_a_closed_stdout_ends_the_command_quietly(tmp_path: Path, command: tuple[str, ...]) -> None:
    """``coloretto … | head``: the reader has gone before the output is written."""
    path, _ = write_record(tmp_path)
    args = [str(path) if word == "RECORD" else word for word in command]
    read_end, write_end = os.pipe()
    os.close(read_end)  # every write to the pipe now fails with EPIPE
    try:
        result = subprocess.run(
            [sys.executable, "-m", "coloretto", *args], stdout=write_end, stderr=subprocess.PIPE, text=True
        )
    finally:
        os.close(write_end)
    assert result.returncode == EXIT_BROKEN_PIPE
    assert result.stderr == ""


def test_score_takes_cards_after_the_options(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["score", "red=3", "--edition", "modern", "golden=1", "--json"]) == 0
    mixed = json.loads(capsys.readouterr().out)
    assert main(["score", "--edition", "modern", "--json", "red=3", "golden=1"]) == 0
    assert mixed == json.loads(capsys.readouterr().out)
    assert mixed["total"] == 10  # four red: the golden joker counts as one


def test_replay_of_an_empty_path_says_it_is_empty(capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        argument_error(["replay", ""], capsys)
        == "coloretto replay: error: argument record: the path is empty"
    )


@pytest.mark.parametrize(
    ("argv", "error"),
    [
        (["serve", "--bot-delay", "nan"], "argument --bot-delay: must be a finite number, not 'nan'"),
        (["serve", "--max-bot-time", "inf"], "argument --max-bot-time: must be a finite number, not 'inf'"),
        (["serve", "--hint-budget", "1e308"], "argument --hint-budget: must be at most 3600 seconds"),
        (["serve", "--message-rate", "infinity"], "argument --message-rate: must be a finite number"),
        (["serve", "--waiting-expiry", "nan"], "argument --waiting-expiry: must be a finite number"),
        (["serve", "--abandon-after", "1e300"], "argument --abandon-after: must be at most 8760 hours"),
        (["serve", "--data-dir", ""], "argument --data-dir: the path is empty"),
        (["serve", "--adopt-interval", "nan"], "argument --adopt-interval: must be a finite number"),
        (["loadtest", "--duration", "inf"], "argument --duration: must be a finite number"),
        (["loadtest", "--bot-delay", "nan"], "argument --bot-delay: must be a finite number"),
        (["train-ppo", "--minutes", "inf"], "argument --minutes: must be a finite number"),
        (["train", "--out", ""], "argument --out: the path is empty"),
        (["tune-playout", "--out", ""], "argument --out: the path is empty"),
        (["seed-ratings", "--out", ""], "argument --out: the path is empty"),
        (["analyze", "game.json", "--plot", ""], "argument --plot: the path is empty"),
    ],
)
def test_every_float_option_is_finite_and_every_path_non_empty(
    argv: list[str], error: str, capsys: pytest.CaptureFixture[str]
) -> None:
    line = argument_error(argv, capsys)
    assert line.startswith(f"coloretto {argv[0]}: error: {error}")


@pytest.mark.parametrize(
    "command",
    [
        ["play", "--seats", "greedy,greedy"],
        ["arena", "--bot", "greedy", "--against", "random"],
        ["analyze", "game.json"],
        ["bench"],
        ["calibrate"],
        ["explore-rules"],
        ["ladder", "mcts:{n}"],
        ["loadtest"],
        ["seed-ratings"],
        ["train"],
        ["train-ppo"],
        ["tune", "mcts:200"],
        ["tune-playout"],
    ],
)
@pytest.mark.parametrize("seed", ["-5", "1.5", str(2**63)])
def test_every_seed_is_a_whole_number_from_0(
    command: list[str], seed: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Python's generator seeds with the absolute value: -5 would deal the games of 5."""
    line = argument_error([*command, "--seed", seed], capsys)
    assert line.startswith(f"coloretto {command[0]}: error: argument --seed: a seed is a whole number")


def test_the_number_reader_refuses_what_float_lets_through() -> None:
    for text in ("inf", "-inf", "nan", "Infinity", "1e400"):
        with pytest.raises(argparse.ArgumentTypeError, match="finite"):
            finite_number(text)
    assert finite_number(" 0.25 ") == 0.25
    with pytest.raises(argparse.ArgumentTypeError, match="not a number"):
        finite_number("soon")
