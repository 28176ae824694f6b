"""Win-chance calibration: the isotonic fit, the measures, the shipped map, the analysis
applying it, and the calibrate command on a tiny size (the figures are benchmarks, not tests)."""

from __future__ import annotations

import csv
import json
import math
import shlex
from pathlib import Path

import numpy as np
import pytest

from coloretto.analysis import analyze, evaluate
from coloretto.bots import calibration as C
from coloretto.bots.calibration import (
    Calibration,
    CalibrationError,
    MonotoneMap,
    brier_score,
    expected_calibration_error,
    isotonic_fit,
    logistic_fit,
    reliability,
    shipped_calibration,
)
from coloretto.cli import build_parser, main
from coloretto.commands import calibrate as calibrate_command
from coloretto.commands.calibrate import Plan, plan_from_args
from coloretto.game import Game
from coloretto.rules import Rules
from tests.helpers import argument_error

# --------------------------------------------------------------- the fit


def _overconfident_sample(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Predictions twice as far from 1/2 in log-odds as the truth, and outcomes drawn from the truth."""
    rng = np.random.default_rng(seed)
    truth = rng.uniform(0.05, 0.95, n)
    logit = np.log(truth / (1 - truth))
    predicted = 1 / (1 + np.exp(-2 * logit))
    return predicted, (rng.uniform(size=n) < truth).astype(float)


def test_the_isotonic_fit_is_monotone_and_reduces_the_calibration_error_on_held_out_data() -> None:
    fit_p, fit_y = _overconfident_sample(4000, seed=1)
    test_p, test_y = _overconfident_sample(4000, seed=2)
    mapping = isotonic_fit(fit_p, fit_y)
    assert all(b > a for a, b in zip(mapping.x, mapping.x[1:]))
    assert all(b >= a for a, b in zip(mapping.y, mapping.y[1:]))
    grid = mapping.apply(np.linspace(0, 1, 201))
    assert np.all(np.diff(grid) >= 0) and grid.min() >= 0 and grid.max() <= 1
    raw = expected_calibration_error(test_p, test_y)
    calibrated = expected_calibration_error(mapping.apply(test_p), test_y)
    assert raw > 0.08  # the sample is badly overconfident ...
    assert calibrated < raw / 3 and calibrated < 0.04  # ... and the map mends it on other data
    assert brier_score(mapping.apply(test_p), test_y) < brier_score(test_p, test_y)


def test_the_logistic_fit_recovers_an_overconfidence_and_mends_it_on_held_out_data() -> None:
    fit_p, fit_y = _overconfident_sample(4000, seed=3)
    test_p, test_y = _overconfident_sample(4000, seed=4)
    fit = logistic_fit(fit_p, fit_y)
    assert fit.slope == pytest.approx(0.5, abs=0.06)  # predictions twice as far out in log-odds
    assert fit.intercept == pytest.approx(0.0, abs=0.08)
    mapping = fit.as_map()
    assert mapping(0.0) == 0.0 and mapping(1.0) == 1.0  # certainty stays certainty
    grid = np.linspace(0, 1, 1001)
    assert np.all(np.diff(mapping.apply(grid)) >= 0)
    assert np.max(np.abs(mapping.apply(grid) - fit.apply(grid))) < 0.01  # the sampled map follows the curve
    raw = expected_calibration_error(test_p, test_y)
    calibrated = expected_calibration_error(mapping.apply(test_p), test_y)
    assert calibrated < raw / 3 and calibrated < 0.04
    assert brier_score(mapping.apply(test_p), test_y) < brier_score(test_p, test_y)


def test_a_logistic_fit_that_would_decrease_is_refused() -> None:
    with pytest.raises(CalibrationError, match="does not increase"):
        logistic_fit([0.1, 0.2, 0.8, 0.9], [1.0, 1.0, 0.0, 0.0])


def test_pool_adjacent_violators_pools_exactly_the_violating_blocks() -> None:
    fitted = isotonic_fit([0.1, 0.2, 0.3, 0.4, 0.5], [0.0, 0.6, 0.2, 0.9, 0.8])
    assert fitted.x == pytest.approx((0.1, 0.25, 0.45))
    assert fitted.y == pytest.approx((0.0, 0.4, 0.85))
    # weights count as repeated points; equal predictions are one point
    weighted = isotonic_fit([0.2, 0.8], [1.0, 0.0], weights=[3, 1])
    repeated = isotonic_fit([0.2, 0.2, 0.2, 0.8], [1.0, 1.0, 1.0, 0.0])
    assert weighted.x == pytest.approx(repeated.x) and weighted.x == pytest.approx((0.35,))
    assert weighted.y == pytest.approx(repeated.y) and weighted.y == pytest.approx((0.75,))
    already = isotonic_fit([0.1, 0.5, 0.9], [0.1, 0.5, 0.9])
    assert already.x == pytest.approx((0.1, 0.5, 0.9)) and already.y == pytest.approx((0.1, 0.5, 0.9))
    assert already(0.3) == pytest.approx(0.3) and already(0.0) == pytest.approx(0.1)  # flat past the ends


@pytest.mark.parametrize(
    ("predictions", "outcomes", "weights", "message"),
    [
        ([], [], None, "at least one prediction"),
        ([0.5], [0.5, 1.0], None, "the same length"),
        ([1.5], [1.0], None, r"lie in \[0, 1\]"),
        ([math.nan], [1.0], None, r"lie in \[0, 1\]"),
        ([0.5], [1.0], [0.0], "weights must be positive"),
    ],
)
def test_bad_fit_input_is_refused_clearly(
    predictions: list[float], outcomes: list[float], weights: list[float] | None, message: str
) -> None:
    with pytest.raises(CalibrationError, match=message):
        isotonic_fit(predictions, outcomes, weights)


def test_the_measures_on_known_values() -> None:
    predictions = [0.1, 0.1, 0.9, 0.9]
    outcomes = [0.0, 1.0, 1.0, 1.0]
    # two bins of 10 at 0.1 and 0.9: |0.1 − 0.5| and |0.9 − 1|, each half the predictions
    assert expected_calibration_error(predictions, outcomes, bins=10) == pytest.approx(0.25)
    assert brier_score(predictions, outcomes) == pytest.approx((0.01 + 0.81 + 0.01 + 0.01) / 4)
    table = reliability(predictions, outcomes, bins=10)
    assert len(table) == 10 and [b.count for b in table] == [0, 2, 0, 0, 0, 0, 0, 0, 0, 2]
    assert reliability([1.0], [1.0], bins=4)[-1].count == 1  # the last bin is closed
    assert expected_calibration_error([0.5, 0.5], [0.0, 1.0]) == 0.0
    with pytest.raises(CalibrationError, match="no predictions"):
        brier_score([], [])


def test_a_map_must_be_monotone_and_inside_the_unit_interval() -> None:
    with pytest.raises(CalibrationError, match="must not decrease"):
        MonotoneMap((0.1, 0.5), (0.6, 0.4))
    with pytest.raises(CalibrationError, match="must increase"):
        MonotoneMap((0.5, 0.5), (0.1, 0.2))
    with pytest.raises(CalibrationError, match=r"\[0, 1\]"):
        MonotoneMap((0.1, 0.5), (0.1, 1.2))
    with pytest.raises(CalibrationError, match="as many x as y"):
        MonotoneMap((0.1,), ())


def test_a_calibration_file_round_trips_and_bad_files_say_what_is_wrong(tmp_path: Path) -> None:
    calibration = Calibration({4: MonotoneMap((0.1, 0.9), (0.2, 0.6))}, {"command": "coloretto calibrate"})
    path = tmp_path / "map.json"
    calibration.write(path)
    back = Calibration.read(path)
    assert back.maps == calibration.maps and back.source["command"] == "coloretto calibrate"
    assert back.win_chance(4, 0.5) == pytest.approx(0.4)
    assert back.win_chance(3, 0.5) == 0.5  # no map for 3 players: the raw share
    with pytest.raises(CalibrationError, match="cannot read it"):
        Calibration.read(tmp_path / "missing.json")
    path.write_text("{")
    with pytest.raises(CalibrationError, match="not JSON"):
        Calibration.read(path)
    path.write_text(json.dumps({"format": 99}))
    with pytest.raises(CalibrationError, match="format 1"):
        Calibration.read(path)
    path.write_text(json.dumps({"format": 1, "maps": {"7": {"x": [0.5], "y": [0.5]}}}))
    with pytest.raises(CalibrationError, match="per player count"):
        Calibration.read(path)


def test_seat_chances_are_mapped_and_add_up_to_one() -> None:
    calibration = Calibration({3: MonotoneMap((0.0, 1.0), (0.2, 0.5))})
    chances = calibration.seat_chances([0.8, 0.2, 0.0])
    assert sum(chances) == pytest.approx(1.0)
    assert chances[0] > chances[1] > chances[2] > 0  # the order kept, pulled towards the middle
    assert chances[0] < 0.8


# ---------------------------------------------------------- the shipped map


def test_the_shipped_map_is_monotone_covers_every_player_count_and_says_where_it_came_from() -> None:
    calibration = shipped_calibration()
    assert calibration is not None, "coloretto/bots/calibration.json is shipped in the package"
    assert sorted(calibration.maps) == [2, 3, 4, 5]
    for mapping in calibration.maps.values():
        values = mapping.apply(np.linspace(0, 1, 101))
        assert np.all(np.diff(values) >= 0) and values.min() >= 0 and values.max() <= 1
    source = calibration.source
    for key in ("command", "seed", "bot", "budget", "rollout", "settings", "search_digest", "coloretto"):
        assert key in source, key
    assert source["rollout"] == "greedy" and calibration.applies_to("greedy")
    from coloretto.analysis import DEFAULT_BUDGET

    assert source["budget"] == DEFAULT_BUDGET
    # the recorded command is one the calibrate command reads back into the same plan
    words = shlex.split(source["command"])
    assert words[:2] == ["coloretto", "calibrate"]
    plan = plan_from_args(build_parser().parse_args(words[1:]))
    assert plan.seed == source["seed"] and plan.bot == source["bot"] and plan.budget == source["budget"]
    assert plan.players == (2, 3, 4, 5)
    for players in ("2", "3", "4", "5"):
        figures = calibration.figures[players]
        assert figures["positions"] >= 2000
        assert {"ece", "brier"} <= set(figures["seat_calibrated"]) and {"ece", "brier"} <= set(
            figures["seat_raw"]
        )


# ------------------------------------------------------- the analysis applies it


def _position() -> Game:
    game = Game.new(Rules(players=4), seed=5)
    for _ in range(9):
        game.push(game.legal_actions[0])
    return game


HALVING = Calibration({n: MonotoneMap((0.0, 1.0), (0.0, 0.5)) for n in (2, 3, 4, 5)}, {"rollout": "greedy"})


@pytest.mark.search
def test_the_analysis_reports_mapped_chances_and_keeps_the_raw_share(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("coloretto.analysis.shipped_calibration", lambda: HALVING)
    game = _position()
    lines = analyze(game, budget=300, seed=3)
    assert lines
    for line in lines:
        assert line.win_probability == pytest.approx(line.win_share / 2)
    raw = analyze(game, budget=300, seed=3, calibrated=False)
    assert [r.win_share for r in raw] == [line.win_share for line in lines]
    assert all(r.win_probability == r.win_share for r in raw)
    # a map fitted on greedy playouts says nothing of random ones: the raw share
    assert all(v.win_probability == v.win_share for v in analyze(game, budget=100, seed=3, rollout="random"))

    value = evaluate(game, budget=300, seed=3)
    assert value.win_probabilities == pytest.approx(HALVING.seat_chances(value.win_shares))
    assert sum(value.win_probabilities) == pytest.approx(1.0)
    raw_value = evaluate(game, budget=300, seed=3, calibrated=False)
    assert raw_value.win_probabilities == raw_value.win_shares == value.win_shares


@pytest.mark.search
def test_the_shipped_map_is_what_the_analysis_applies() -> None:
    calibration = shipped_calibration()
    assert calibration is not None
    game = _position()
    for line in analyze(game, budget=300, seed=4):
        assert line.win_probability == pytest.approx(calibration.win_chance(4, line.win_share))
    value = evaluate(game, budget=300, seed=4)
    assert value.win_probabilities == pytest.approx(calibration.seat_chances(value.win_shares))


@pytest.mark.search
def test_the_first_line_is_the_move_the_search_plays_and_the_rest_follow_its_objective() -> None:
    from coloretto.bots.limits import Limit
    from coloretto.bots.mcts import search_position
    from coloretto.bots.mcts_options import Settings

    game = _position()
    lines = analyze(game, budget=400, seed=6)
    floor = max(8, 400 // (4 * len(game.legal_actions)))
    search = search_position(game, Limit(iterations=400), 6, Settings(), root_floor=floor)
    assert lines[0].action == search.best_action()
    assert lines[0].simulations == max(line.simulations for line in lines)
    rest = [line.utility for line in lines[1:]]
    assert rest == sorted(rest, reverse=True)


# ------------------------------------------------------------ the command

TINY = ["--players", "2,4", "--games", "2", "--positions", "3", "--actions", "1", "--budget", "60",
        "--bot", "mcts:30", "--seed", "5"]  # fmt: skip


@pytest.mark.search
def test_the_calibrate_command_writes_samples_report_diagram_and_map(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    assert main(["calibrate", *TINY, "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "ECE" in printed and "Brier" in printed
    for name in ("samples.csv", "report.json", "reliability.png", "calibration.json"):
        assert (out / name).stat().st_size > 0, name
    assert (out / "reliability.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with (out / "samples.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    seats = [r for r in rows if r["kind"] == "seat"]
    actions = [r for r in rows if r["kind"] == "action"]
    # 2 games × 3 positions × (2 + 4) seats, and one played move valued per game
    assert len(seats) == 2 * 3 * (2 + 4) and len(actions) == 2 * 2
    assert all(
        0 <= float(r["win_share"]) <= 1 and float(r["outcome"]) in (0, 0.5, 1, 1 / 3, 0.25) for r in rows
    )
    for players in (2, 4):
        for game in (0, 1):
            outcome = {(r["move"], r["seat"]): float(r["outcome"]) for r in seats
                       if r["players"] == str(players) and r["game"] == str(game)}  # fmt: skip
            by_move: dict[str, float] = {}
            for (move, _), share in outcome.items():
                by_move[move] = by_move.get(move, 0.0) + share
            assert all(total == pytest.approx(1.0) for total in by_move.values())  # one win shared a position
    calibration = Calibration.read(out / "calibration.json")
    assert sorted(calibration.maps) == [2, 4]
    assert calibration.source["command"] == Plan((2, 4), (2, 2), (3, 3), (1, 1), "mcts:30", 60, 5).command()
    report = json.loads((out / "report.json").read_text())
    assert set(report["figures"]) == {"2", "4"}
    assert {"seat_raw", "seat_calibrated", "action_raw", "action_calibrated"} <= set(report["figures"]["4"])

    # the same flags give the same samples; a refit of the samples gives the same map
    again = tmp_path / "again"
    assert main(["calibrate", *TINY, "--out", str(again)]) == 0
    assert (again / "samples.csv").read_text() == (out / "samples.csv").read_text()
    refit = tmp_path / "refit"
    assert main(["calibrate", *TINY, "--out", str(refit), "--samples", str(out / "samples.csv")]) == 0
    refitted = Calibration.read(refit / "calibration.json")
    assert refitted.maps == calibration.maps
    # its source says how the samples were played, not this command's defaults
    for key in ("bot", "budget", "seed", "games", "positions_per_game", "actions_per_game"):
        assert refitted.source[key] == calibration.source[key], key
    assert refitted.source["samples_played_by"] == calibration.source["command"]
    assert refitted.source["command"].startswith(f"coloretto calibrate --samples {out / 'samples.csv'} ")


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--players", "2,6"], "player counts from 2 to 5"),
        (["--players", "two"], "player counts like 2,4"),
        (["--games", "1"], "at least 2"),
        (["--players", "2,4", "--games", "5,6,7"], "3 numbers for 2 player counts"),
        (["--games", "many"], "whole numbers like 100"),
        (["--positions", "0"], "--positions must be at least 1"),
        (["--positions", "3", "--actions", "4"], "--actions must be from 0 to --positions"),
        (["--bot", "mcts:1s"], "give it iterations"),
        (["--bot", "grandmaster"], "unknown bot"),
        (["--budget", "1s"], "--budget is a number of iterations"),
    ],
)
def test_bad_calibrate_flags_are_refused_with_a_clear_message(
    flags: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["calibrate", *flags, "--out", str(tmp_path / "out")]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_show_prints_where_the_shipped_map_came_from(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["calibrate", "--show"]) == 0
    assert "coloretto calibrate" in capsys.readouterr().out


def test_the_search_digest_follows_the_search_sources(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in C.SEARCH_SOURCES[:2]:
        (tmp_path / name).write_text("one")
    monkeypatch.setattr(C, "__file__", str(tmp_path / "calibration.py"))
    before = C.search_digest()
    (tmp_path / C.SEARCH_SOURCES[0]).write_text("two")
    assert C.search_digest() != before
    calibration = Calibration({}, {"search_digest": before})
    assert calibration.stale()


@pytest.mark.search
def test_under_a_time_budget_every_action_gets_enough_games_to_mean_something() -> None:
    from coloretto.analysis import TIME_FLOOR

    game = _position()
    lines = analyze(game, budget="0.5s", seed=2)
    assert len(lines) == len(game.legal_actions) > 1
    assert all(line.simulations >= TIME_FLOOR for line in lines)


def two_player_samples(path: Path) -> None:
    rows = ["players,game,move,seat,kind,win_share,simulations,outcome"]
    for game in range(4):
        for seat in (0, 1):
            rows.append(f"2,{game},5,{seat},seat,{0.3 + 0.2 * seat:.6f},60,{float(seat == game % 2):.6f}")
    path.write_text("\n".join(rows) + "\n")


def test_map_refuses_a_file_that_is_not_a_calibration_map_before_any_game(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(calibrate_command, "collect", lambda *a, **k: pytest.fail("games were played"))
    notes = tmp_path / "good.json"
    for text in ("my notes\n", '{"format": "something else"}\n'):
        notes.write_text(text)
        assert main(["calibrate", *TINY, "--out", str(tmp_path / "out"), "--map", str(notes)]) == 2
        err = capsys.readouterr().err
        assert f"--map: {notes} exists and is not a calibration map" in err and err.count("\n") == 1
        assert notes.read_text() == text
        assert not (tmp_path / "out").exists()
    notes.write_bytes(b"\xff\xfe")
    assert main(["calibrate", *TINY, "--out", str(tmp_path / "out"), "--map", str(notes)]) == 2
    assert "is not a calibration map" in capsys.readouterr().err
    assert main(["calibrate", *TINY, "--map", str(tmp_path / "nowhere" / "map.json")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_map_rewrites_a_calibration_map(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    samples = tmp_path / "samples.csv"
    two_player_samples(samples)
    shipped = tmp_path / "calibration.json"
    shipped.write_bytes(C.CALIBRATION_FILE.read_bytes())
    argv = ["calibrate", "--players", "2", "--samples", str(samples), "--out", str(tmp_path / "out")]
    # a 2-player run would drop the shipped map's 3-, 4- and 5-player maps: refused, the file untouched
    assert main([*argv, "--map", str(shipped)]) == 2
    assert "holds the calibration map for 3, 4 and 5 players too" in capsys.readouterr().err
    assert shipped.read_bytes() == C.CALIBRATION_FILE.read_bytes()
    two = tmp_path / "two.json"
    assert main([*argv, "--map", str(two)]) == 0
    assert sorted(Calibration.read(two).maps) == [2]
    assert main([*argv, "--map", str(two)]) == 0  # and again: it is a calibration map of the same counts
    capsys.readouterr()


def test_samples_without_the_asked_player_counts_or_columns_say_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    samples = tmp_path / "samples.csv"
    two_player_samples(samples)
    assert main(["calibrate", "--samples", str(samples), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert f"--samples {samples}: no 3,4,5-player samples (it has 2-player ones only)" in err
    assert "--games" not in err
    other = tmp_path / "other.csv"
    other.write_text("players,game,win\n2,0,1\n")
    assert main(["calibrate", "--players", "2", "--samples", str(other), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "lacks the column(s) move, seat, kind, win_share, simulations, outcome" in err
    assert "('players')" not in err and err.count("\n") == 1


def test_an_empty_out_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert argument_error(["calibrate", "--out", ""], capsys).endswith("argument --out: the path is empty")
