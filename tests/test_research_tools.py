"""The research tools (coloretto tune, ladder, explore-rules): tiny runs write
their files with figures that agree with each other and with the arena's own,
the same seed gives the same files, and bad input gets a clear error."""

from __future__ import annotations

import csv
import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coloretto.bots import check_bot, split_bot_list
from coloretto.cli import main
from coloretto.record import GameRecord
from coloretto.research.common import ResearchError, Where, field_lineup, paired_difference
from coloretto.research.explore import explore_rules, option_values, r_squared, seat_bots
from coloretto.research.ladder import ladder, parse_budgets, rung_names
from coloretto.research.tune import TUNABLE, ParamRange, read_base, search_space, tune
from coloretto.rules import RULE_OPTIONS, Rules, rule_option
from tests.helpers import argument_error

SERIAL = Where("serial")
THREE = Rules(players=3)  # three seatings of one bot against two: a deal is three games


def rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def games_of(arena_dir: Path) -> list[dict[str, Any]]:
    lines = (arena_dir / "games.jsonl").read_text(encoding="utf-8").splitlines()
    return sorted((json.loads(line) for line in lines), key=lambda r: r["game"])


def without(document: Any, key: str) -> Any:
    """The document with every ``key`` left out (timings differ between runs)."""
    if isinstance(document, dict):
        return {k: without(v, key) for k, v in document.items() if k != key}
    if isinstance(document, list):
        return [without(v, key) for v in document]
    return document


# ------------------------------------------------------------------ tune


@pytest.fixture(scope="module")
def tuned(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    out = tmp_path_factory.mktemp("tune") / "run"
    document = tune(
        "mcts:20", ["greedy"], THREE, out, trials=3, games=3, seed=5, params=["c=0.2:1.5", "take=2:14"],
        confirm=3, where=SERIAL,
    )  # fmt: skip
    return out, document


def test_tune_writes_every_trial_on_the_same_deals(tuned: tuple[Path, dict[str, Any]]) -> None:
    out, document = tuned
    for name in ("trials.csv", "trials.json", "history.png"):
        assert (out / name).stat().st_size > 0
    assert json.loads((out / "trials.json").read_text(encoding="utf-8")) == document
    trials = document["trials"]
    assert [t["trial"] for t in trials] == [0, 1, 2]
    assert trials[0]["bot"] == "mcts:20"  # the bot as given comes first, at its own settings
    assert trials[0]["c"] == 0.7 and trials[0]["take"] == 6.0
    table = rows(out / "trials.csv")
    assert [r["bot"] for r in table] == [t["bot"] for t in trials]
    deals = None
    for trial in trials:
        check_bot(trial["bot"])  # every name tried is a bot
        assert 0.2 <= trial["c"] <= 1.5 and 2 <= trial["take"] <= 14
        assert trial["games"] == 3
        low, high = trial["win_share_ci"]
        assert low <= trial["win_share"] <= high
        played = games_of(out / "trials" / f"trial-{trial['trial']:03d}")
        seats = [(r["seed"], r["bots"].index(trial["bot"])) for r in played]
        assert deals is None or seats == deals  # common random numbers: same deals, same seats
        deals = seats
        shares = [r["win_shares"][r["bots"].index(trial["bot"])] for r in played]
        assert trial["win_share"] == pytest.approx(sum(shares) / len(shares))
    best = document["best"]
    key = [(t["win_share"], t["mean_margin"]) for t in trials]
    assert (best["win_share"], best["mean_margin"]) == max(key)
    assert best["bot"] == next(t["bot"] for t in trials if t["trial"] == best["trial"])


def test_tune_confirms_the_best_on_fresh_deals(tuned: tuple[Path, dict[str, Any]]) -> None:
    out, document = tuned
    confirm = document["confirm"]
    assert confirm["best"]["bot"] == document["best"]["bot"] and confirm["untuned"]["bot"] == "mcts:20"
    tuning_seeds = {r["seed"] for r in games_of(out / "trials" / "trial-000")}
    fresh = games_of(out / "confirm" / "best")  # the bot as given plays there too when it was the best
    assert tuning_seeds.isdisjoint(r["seed"] for r in fresh)
    if confirm["best"]["bot"] != "mcts:20":
        untuned = games_of(out / "confirm" / "untuned")
        assert [(r["seed"], r["bots"].index("mcts:20")) for r in untuned] == [
            (r["seed"], r["bots"].index(confirm["best"]["bot"])) for r in fresh
        ]  # the same fresh deals and seats for both
    diff = confirm["win_share_difference"]
    assert diff["games"] == 3
    assert diff["mean"] == pytest.approx(confirm["best"]["win_share"] - confirm["untuned"]["win_share"])


def test_tune_confirms_against_the_bot_as_given_on_the_same_fresh_deals(tmp_path: Path) -> None:
    # a range without the bot's own c: no trial is the bot as given, so the best differs from it
    document = tune(
        "mcts:20", ["greedy"], THREE, tmp_path / "run", trials=1, games=3, seed=2, params=["c=1:1.5"],
        confirm=3, where=SERIAL,
    )  # fmt: skip
    best = document["best"]["bot"]
    assert best != "mcts:20" and 1 <= document["trials"][0]["c"] <= 1.5
    fresh = games_of(tmp_path / "run" / "confirm" / "best")
    untuned = games_of(tmp_path / "run" / "confirm" / "untuned")
    assert [(r["seed"], r["bots"].index(best)) for r in fresh] == [
        (r["seed"], r["bots"].index("mcts:20")) for r in untuned
    ]
    shares = [
        f["win_shares"][f["bots"].index(best)] - u["win_shares"][u["bots"].index("mcts:20")]
        for f, u in zip(fresh, untuned)
    ]
    assert document["confirm"]["win_share_difference"]["mean"] == pytest.approx(sum(shares) / 3)


def test_tune_same_seed_same_files(tmp_path: Path, tuned: tuple[Path, dict[str, Any]]) -> None:
    _, document = tuned
    again = tune(
        "mcts:20", ["greedy"], THREE, tmp_path / "again", trials=3, games=3, seed=5,
        params=["c=0.2:1.5", "take=2:14"], confirm=3, where=SERIAL,
    )  # fmt: skip
    assert again == document
    other = tune(
        "mcts:20",
        ["greedy"],
        THREE,
        tmp_path / "other",
        trials=2,
        games=3,
        seed=6,
        params=["c=0.2:1.5"],
        where=SERIAL,
    )
    assert [t["bot"] for t in other["trials"]][1] not in {t["bot"] for t in document["trials"]}


def test_tune_search_space() -> None:
    base = read_base("mcts:500,take=12")
    assert [p.name for p in search_space(base, None)] == ["c", "win", "explore"]  # take is fixed by the name
    assert search_space(base, ["take=4:16"]) == (ParamRange("take", 4.0, 16.0),)
    assert base.with_values({"take": 9.5, "c": 0.4}) == "mcts:500,take=9.5,c=0.4"
    assert ParamRange("c", 0.1, 2.0).rounded(0.55555) == 0.56
    assert ParamRange("take", 0.0, 20.0).rounded(19.99) == 20.0
    for kind, params in TUNABLE.items():  # the default ranges are inside what the bots accept
        for p in params:
            check_bot(f"{kind}:100,{p.name}={p.low:g}")
            check_bot(f"{kind}:100,{p.name}={p.high:g}")


@pytest.mark.parametrize(
    ("bot", "params", "message"),
    [
        ("greedy", None, "no numeric options to tune"),
        ("hard", None, "difficulty level"),
        ("grandmaster", None, "unknown bot"),
        ("mcts:500", ["c"], "NAME=LOW:HIGH"),
        ("mcts:500", ["c=1:x"], "must be numbers"),
        ("mcts:500", ["c=2:1"], "LOW must be less than HIGH"),
        ("mcts:500", ["depth=1:2"], "no numeric option 'depth'"),
        ("mcts:500", ["win=0:2"], "win must lie in"),
        ("mcts:500", ["c=0.1:1", "c=1:2"], "twice"),
        ("mcts:500,c=1,win=0.5,take=8,explore=0.1", None, "fixes every option"),
    ],
)
def test_tune_refuses_bad_input(tmp_path: Path, bot: str, params: list[str] | None, message: str) -> None:
    with pytest.raises(ResearchError, match=message):
        tune(bot, ["greedy"], THREE, tmp_path / "out", trials=1, games=1, params=params, where=SERIAL)
    assert not (tmp_path / "out").exists()  # refused before anything was played or written


def test_field_lineup_errors() -> None:
    assert field_lineup("mcts:20", ["greedy"], 4) == ("mcts:20", "greedy", "greedy", "greedy")
    assert field_lineup("mcts:20", ["greedy", "random"], 3) == ("mcts:20", "greedy", "random")
    with pytest.raises(ResearchError, match="2 opponents for the 3 other seats"):
        field_lineup("mcts:20", ["greedy", "random"], 4)
    with pytest.raises(ResearchError, match="also in the field"):
        field_lineup("greedy", ["greedy"], 3)
    with pytest.raises(ResearchError, match="opponent: unknown bot"):
        field_lineup("mcts:20", ["nobody"], 3)


def test_tune_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["tune", "mcts:20", "--against", "greedy", "--players", "3", "--trials", "2", "--games", "3"]
    assert main([*argv, "--param", "c=0.3:1.2", "--workers", "1", "--out", str(tmp_path / "t")]) == 0
    printed = capsys.readouterr().out.strip().splitlines()
    document = json.loads((tmp_path / "t" / "trials.json").read_text(encoding="utf-8"))
    assert printed[-1] == document["best"]["bot"]  # the last line is the best bot's name
    assert main([*argv, "--out", str(tmp_path / "t")]) == 2  # the directory holds a run already
    assert "not empty" in capsys.readouterr().err
    assert main(["tune", "heuristic", "--against", "greedy", "--out", str(tmp_path / "h")]) == 2
    assert "no numeric options" in capsys.readouterr().err
    assert main([*argv, "--param", "explore=0:3", "--out", str(tmp_path / "x")]) == 2
    assert "explore must lie in [0, 1]" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.parametrize("signal_name", ["SIGINT", "SIGTERM"])
def test_a_stopped_tune_keeps_its_finished_trials(tmp_path: Path, signal_name: str) -> None:
    """Ctrl-C or SIGTERM to the whole process group (a terminal or a batch
    scheduler stopping the job): the finished trials are written, the best
    among them is printed, unconfirmed, with no traceback, and they are the
    trials an uninterrupted run of that many trials gives."""
    out = tmp_path / "t"
    command = [sys.executable, "-m", "coloretto", "tune", "mcts:20", "--against", "greedy", "--players", "3"]
    command += ["--trials", "500", "--games", "3", "--seed", "5", "--confirm", "3"]
    command += ["--param", "c=0.2:1.5", "--param", "take=2:14"]
    command += ["--workers", "2", "--out", str(out)]
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and process.poll() is None:
        if (out / "trials").is_dir() and len(list((out / "trials").iterdir())) > 3:
            break  # three trials' games finished, the fourth's begun
        time.sleep(0.05)
    os.killpg(process.pid, getattr(signal, signal_name))
    stdout, stderr = process.communicate(timeout=120)
    assert process.returncode == 130, stderr
    assert "Traceback" not in stderr
    document = json.loads((out / "trials.json").read_text(encoding="utf-8"))
    finished = len(document["trials"])
    assert document["interrupted"] is True and "confirm" not in document
    assert 3 <= finished < 500
    assert f"interrupted: the best of the {finished} finished trials of 500, not confirmed" in stderr
    assert stdout.strip().splitlines()[-1] == document["best"]["bot"]
    assert len(rows(out / "trials.csv")) == finished
    whole = tune(
        "mcts:20", ["greedy"], THREE, tmp_path / "whole", trials=finished, games=3, seed=5,
        params=["c=0.2:1.5", "take=2:14"], where=SERIAL,
    )  # fmt: skip
    assert without(document["trials"], "seconds") == without(whole["trials"], "seconds")


# ---------------------------------------------------------------- ladder


def test_ladder_rungs_on_the_same_deals(tmp_path: Path) -> None:
    out = tmp_path / "ladder"
    document = ladder("mcts:{n},take=12", [40, 10], ["greedy"], THREE, out, games=3, seed=3, where=SERIAL)
    for name in ("ladder.csv", "ladder.json", "ladder.png"):
        assert (out / name).stat().st_size > 0
    rungs = document["rungs"]
    assert [r["budget"] for r in rungs] == [10, 40]  # in order of budget
    assert [r["bot"] for r in rungs] == ["mcts:10,take=12", "mcts:40,take=12"]
    assert [r["bot"] for r in rows(out / "ladder.csv")] == [r["bot"] for r in rungs]
    assert document["parity"] == pytest.approx(1 / 3, abs=1e-6)
    seeds = []
    for index, rung in enumerate(rungs):
        played = games_of(out / "rungs" / f"{index:02d}-{rung['budget']:g}")
        seeds.append([(r["seed"], r["bots"].index(rung["bot"])) for r in played])
        shares = [r["win_shares"][r["bots"].index(rung["bot"])] for r in played]
        assert rung["win_share"] == pytest.approx(sum(shares) / len(shares))
        assert rung["seconds_per_move"] > 0 and rung["timed_moves"] > 0
        # the timed game is the arena's game 0: the rung moved as often there
        assert rung["timed_moves"] == played[0]["moves"] - _others_moves(played[0], rung)
    assert seeds[0] == seeds[1]
    again = ladder(
        "mcts:{n},take=12", [10, 40], ["greedy"], THREE, tmp_path / "again", games=3, seed=3, where=SERIAL
    )
    assert without(again, "seconds_per_move") == without(document, "seconds_per_move")


def _others_moves(result: dict[str, Any], rung: dict[str, Any]) -> int:
    """The moves of game 0 not made by the rung's seat (replayed from the deal)."""
    from coloretto.arena import TournamentConfig
    from coloretto.bots import make_bot
    from coloretto.game import Game, GameSetup, deal
    from coloretto.match import match_game_seed

    config = TournamentConfig(THREE, (rung["bot"], "greedy", "greedy"), games=3, seed=3)
    task = config.task(0)
    seats = config.seatings[task.seating]
    game_seed = match_game_seed(config.deal_seed(0), 1)
    setup = deal(THREE, game_seed)
    game = Game(GameSetup(THREE, setup.deck, setup.starting_cards, setup.first_player, game_seed))
    bots = [make_bot(s, config.bot_seed(task, seat)) for seat, s in enumerate(seats)]
    others = 0
    while not game.is_over:
        seat = game.to_move
        assert seat is not None
        others += seats[seat] != rung["bot"]
        game.push(bots[seat].choose(game.observation(seat)))
    assert result["scores"] == [s.total for s in game.scores()]  # the same game as the arena's
    return others


@pytest.mark.parametrize(
    ("text", "message"),
    [("", "not a number"), ("250,abc", "'abc' is not a number"), ("0,10", "not a positive"),
     ("-5", "not a positive"), ("10,10", "given twice"), ("inf", "not a positive")],
)  # fmt: skip
def test_ladder_refuses_bad_budgets(text: str, message: str) -> None:
    with pytest.raises(ResearchError, match=message):
        parse_budgets(text)


def test_ladder_needs_a_placeholder_and_bots(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert parse_budgets("250, 1000,4000") == (250.0, 1000.0, 4000.0)
    assert rung_names("mcts:{n}s", [0.5]) == ("mcts:0.5s",)
    with pytest.raises(ResearchError, match=r"has no \{n\}"):
        rung_names("mcts:500", [1, 2])
    with pytest.raises(ResearchError, match="rung: bot 'greedy:10'"):
        rung_names("greedy:{n}", [10])
    assert (
        main(["ladder", "mcts", "--budgets", "1,2", "--against", "greedy", "--out", str(tmp_path / "a")]) == 2
    )
    assert "has no {n} for the budget" in capsys.readouterr().err
    assert (
        main(["ladder", "mcts:{n}", "--budgets", "1,x", "--against", "greedy", "--out", str(tmp_path / "b")])
        == 2
    )
    assert "'x' is not a number" in capsys.readouterr().err
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


@pytest.mark.slow
def test_ladder_on_ray_gives_the_serial_figures(tmp_path: Path) -> None:
    args: dict[str, Any] = {"games": 3, "seed": 2, "timed_games": 0}
    serial = ladder("mcts:{n}", [10], ["greedy"], THREE, tmp_path / "serial", where=SERIAL, **args)
    on_ray = ladder("mcts:{n}", [10], ["greedy"], THREE, tmp_path / "ray", where=Where("ray", 2), **args)
    assert on_ray == serial


# --------------------------------------------------------- explore-rules


@pytest.fixture(scope="module")
def explored(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    out = tmp_path_factory.mktemp("explore") / "run"
    document = explore_rules(
        "table", THREE, out, bots=["greedy", "random"], games=3, review_games=2, review_budget=4, seed=9,
        where=Where("serial", 1),
    )  # fmt: skip
    return out, document


def test_explore_measures_every_choice(explored: tuple[Path, dict[str, Any]]) -> None:
    out, document = explored
    for name in ("explore.csv", "explore.json", "explore.png"):
        assert (out / name).stat().st_size > 0
    choices = list(rule_option("table").choices or ())
    assert [r["value"] for r in document["values"]] == choices
    assert [r["value"] for r in rows(out / "explore.csv")] == choices
    for index, row in enumerate(document["values"]):
        assert row["rules"]["table"] == row["value"] and row["bots"] == ["greedy", "random", "greedy"]
        here = out / "values" / f"{index:02d}-{row['value']}"
        played = games_of(here / "arena")
        assert row["games"] == len(played) == 3
        assert row["actions"] == pytest.approx(sum(r["moves"] for r in played) / 3)
        assert row["winning_score"] == pytest.approx(sum(max(r["scores"]) for r in played) / 3)
        assert row["spread"] == pytest.approx(sum(max(r["scores"]) - min(r["scores"]) for r in played) / 3)
        records = [
            GameRecord.from_json((here / "records" / f"game-{g:06d}.json").read_text()) for g in range(3)
        ]
        first = sum(r["win_shares"][rec.first_player] for r, rec in zip(played, records)) / 3
        assert row["first_player_win_share"] == pytest.approx(first)
        low, high = row["first_player_win_share_ci"]
        assert 0 <= low <= first <= high <= 1
        rounds = [sum(e.round_ended for e in rec.replay().events()) for rec in records]
        assert row["rounds"] == pytest.approx(sum(rounds) / 3)
        samples = document["luck_samples"][row["value"]]
        assert row["luck_samples"] == len(samples) == 2 * 3  # two reviewed games, three seats
        for sample in samples:
            game = played[sample["game"]]
            others = [s for seat, s in enumerate(game["scores"]) if seat != sample["seat"]]
            assert sample["margin"] == game["scores"][sample["seat"]] - max(others)
        r2 = row["luck_r2_points"]
        assert r2 is None or 0 <= r2 <= 1


def test_explore_same_seed_same_files(tmp_path: Path, explored: tuple[Path, dict[str, Any]]) -> None:
    out, document = explored
    again = explore_rules(
        "table", THREE, tmp_path / "again", bots=["greedy", "random"], games=3, review_games=2,
        review_budget=4, seed=9, where=Where("serial", 1),
    )  # fmt: skip
    assert again == document
    for name in ("explore.csv", "explore.json"):
        assert (tmp_path / "again" / name).read_bytes() == (out / name).read_bytes()


def test_explore_values_come_from_the_rule_options() -> None:
    for option in RULE_OPTIONS:
        if option.choices is not None:
            assert option_values(option.name, None)[1] == tuple(option.parse(c) for c in option.choices)
        elif option.maximum is not None:
            assert option_values(option.name, None)[1] == tuple(
                range(option.minimum or 0, option.maximum + 1)
            )
        else:
            with pytest.raises(ResearchError, match="--values"):
                option_values(option.name, None)
    option, values = option_values("joker-timing", ["on-take"])
    assert option.name == "joker_timing" and [option.to_json(v) for v in values] == ["on-take"]
    assert option_values("cards_under_last_round", ["default", "5"])[1] == (None, 5)


@pytest.mark.parametrize(
    ("option", "values", "message"),
    [("colour", None, "unknown rule option 'colour'"), ("table", ["green"], "must be one of brown, violet"),
     ("table", ["brown", "brown"], "twice"), ("players", ["9"], "2 to 5 players, not 9"),
     ("cards_under_last_round", None, "give the numbers to try with --values"),
     ("cards_under_last_round", ["900"], "more than the deck holds")],
)  # fmt: skip
def test_explore_refuses_bad_options(
    tmp_path: Path, option: str, values: list[str] | None, message: str
) -> None:
    with pytest.raises(ResearchError, match=message):
        explore_rules(option, THREE, tmp_path / "out", values=values, games=1, where=SERIAL)
    assert not (tmp_path / "out").exists()


def test_explore_command_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = ["--out", str(tmp_path / "out")]
    cases = [
        (["--option", "table", "--table", "violet"], "leave out its flag, --table"),
        (["--option", "players", "--players", "3"], "leave out its flag, --players"),
        (["--option", "table", "--bots", "heuristic,grandmaster"], "unknown bot 'grandmaster'"),
        (["--option", "table", "--review-budget", "0"], "--review-budget must be at least 1"),
        (["--option", "edition", "--values", "classic,deluxe"], "edition must be one of"),
    ]
    for flags, message in cases:
        assert main(["explore-rules", *flags, *out]) == 2
        err = capsys.readouterr().err
        assert message in err and err.count("\n") == 1 and "Traceback" not in err  # one clear line
    assert not (tmp_path / "out").exists()


def test_bot_lists() -> None:
    assert split_bot_list("heuristic,greedy") == ["heuristic", "greedy"]
    assert split_bot_list("mcts:500,take=12,greedy, mcts:1s") == ["mcts:500,take=12", "greedy", "mcts:1s"]
    assert seat_bots(["heuristic", "greedy"], 5) == (
        "heuristic",
        "greedy",
        "heuristic",
        "greedy",
        "heuristic",
    )
    with pytest.raises(ResearchError, match="at least one bot"):
        seat_bots([], 4)


# ------------------------------------------------------------ statistics


def test_r_squared_known_values() -> None:
    assert r_squared([1, 2, 3, 4], [3, 5, 7, 9]) == pytest.approx(1.0)
    assert r_squared([1, 2, 3, 4], [9, 7, 5, 3]) == pytest.approx(1.0)
    assert r_squared([0, 1, 2, 3], [0, 1, 1, 0]) == pytest.approx(0.0)
    assert math.isnan(r_squared([1, 2], [1, 2])) and math.isnan(r_squared([1, 1, 1], [1, 2, 3]))


@settings(max_examples=50, deadline=None)
@given(
    st.lists(st.tuples(st.integers(-50, 50), st.integers(-50, 50)), min_size=3, max_size=30),
    st.integers(1, 5),
    st.integers(-10, 10),
)
def test_r_squared_is_a_share_and_ignores_units(
    points: list[tuple[int, int]], scale: int, shift: int
) -> None:
    xs = [float(x) for x, _ in points]
    ys = [float(y) for _, y in points]
    r2 = r_squared(xs, ys)
    if math.isnan(r2):
        return
    assert -1e-9 <= r2 <= 1 + 1e-9
    assert r_squared([scale * x + shift for x in xs], ys) == pytest.approx(r2)
    assert r_squared(ys, xs) == pytest.approx(r2)  # symmetric: the squared correlation


def test_paired_difference() -> None:
    diff = paired_difference([1.0, 0.0, 1.0, 0.5], [0.0, 0.0, 1.0, 0.5])
    assert diff["mean"] == 0.25 and diff["games"] == 4
    assert diff["ci"][0] < 0.25 < diff["ci"][1]
    with pytest.raises(ValueError, match="same games"):
        paired_difference([1.0], [1.0, 0.0])


def test_a_family_with_the_budget_twice_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(ResearchError, match=r"has \{n\} 2 times"):
        rung_names("mcts:{n}{n}", [10, 20])
    argv = ["ladder", "mcts:{n}{n}", "--budgets", "10,20", "--against", "greedy", "--games", "1"]
    assert main([*argv, "--out", str(tmp_path / "l")]) == 2
    assert "has {n} 2 times" in capsys.readouterr().err
    assert not (tmp_path / "l").exists()


@pytest.mark.parametrize(
    "argv",
    [
        ["tune", "mcts:20", "--against", "greedy"],
        ["ladder", "mcts:{n}", "--against", "greedy", "--budgets", "10"],
    ],
)
def test_an_empty_or_file_out_is_refused(
    argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert argument_error([*argv, "--out", ""], capsys).endswith("argument --out: the path is empty")
    file = tmp_path / "results.json"
    file.write_text("{}")
    assert main([*argv, "--out", str(file / "run")]) == 2
    assert f"{file} is not a directory" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("command", "shipped", "what"),
    [
        (["tune-playout", "--players", "4", "--trials", "1", "--games", "2", "--confirm", "2"],
         "playout.json", "playout weights"),
        (["train", "--players", "4", "--games", "10", "--positions", "1"], "value.json", "value model"),
    ],
)  # fmt: skip
def test_a_run_for_some_player_counts_keeps_a_files_others(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: list[str], shipped: str, what: str
) -> None:
    import coloretto.bots

    out = tmp_path / shipped
    before = (Path(coloretto.bots.__file__).parent / shipped).read_bytes()
    out.write_bytes(before)
    assert main([*command, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"--out {out} holds the {what} for 2, 3 and 5 players too" in err
    assert "give --players 2,3,4,5" in err
    assert out.read_bytes() == before  # refused before any work, the file untouched


def test_calibrate_keeps_a_maps_other_player_counts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import coloretto.bots

    mapped = tmp_path / "calibration.json"
    mapped.write_bytes((Path(coloretto.bots.__file__).parent / "calibration.json").read_bytes())
    assert (
        main(
            [
                "calibrate",
                "--players",
                "3",
                "--games",
                "2",
                "--map",
                str(mapped),
                "--out",
                str(tmp_path / "o"),
            ]
        )
        == 2
    )
    assert f"--map {mapped} holds the calibration map for 2, 4 and 5 players too" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()
