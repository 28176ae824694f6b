"""Position analysis and game review: values are sane, the review marks losses."""

from __future__ import annotations

import json
import random

import pytest

from coloretto.actions import ActionKind
from coloretto.analysis import ActionValue, analyze, evaluate
from coloretto.bots.calibration import shipped_calibration
from coloretto.cli import main
from coloretto.game import Game
from coloretto.record import GameRecord
from coloretto.review import POINT_THRESHOLDS, THRESHOLDS, review
from coloretto.rules import Rules
from tests.test_ai_bots import _three_yellows, find_deciding_last_take


def test_every_legal_action_is_valued() -> None:
    game = _three_yellows()
    values = analyze(game, budget=400, seed=1)
    assert {v.action for v in values} == set(game.legal_actions)
    assert all(isinstance(v, ActionValue) for v in values)
    assert values[0].action.kind is ActionKind.TAKE and values[0].action.index == 0
    assert sum(v.simulations for v in values) == 400
    for v in values:
        assert v.simulations >= 8
        assert 0.0 <= v.win_probability <= 1.0
        assert 0.0 <= v.utility <= 1.0
        assert -60 < v.expected_score < 120
    # the move the search plays first (the most simulated), the others by its objective
    assert values[0].simulations == max(v.simulations for v in values)
    utilities = [v.utility for v in values[1:]]
    assert utilities == sorted(utilities, reverse=True)


def test_same_seed_same_analysis() -> None:
    game = _three_yellows()
    assert analyze(game, budget=300, seed=4) == analyze(game, budget=300, seed=4)
    assert analyze(game.observation(0), budget=300, seed=4) == analyze(game, budget=300, seed=4)


def test_an_analysis_on_several_threads_shares_its_budget_out_and_repeats() -> None:
    game = _three_yellows()
    values = analyze(game, budget=600, seed=2, threads=2)
    assert sum(v.simulations for v in values) == 600  # two trees of 300, their root figures added
    assert {v.action for v in values} == set(game.legal_actions)
    assert values[0].action.kind is ActionKind.TAKE and values[0].action.index == 0
    assert values == analyze(game, budget=600, seed=2, threads=2)
    for threads in (0, 17, 1.5):
        with pytest.raises(ValueError, match="threads must be a whole number from 1 to 16"):
            analyze(game, budget=100, seed=2, threads=threads)  # type: ignore[arg-type]


def test_a_decided_last_take_is_valued_exactly() -> None:
    game, shares = find_deciding_last_take(range(300))
    seat = game.to_move
    assert seat is not None
    values = analyze(game, budget=100, seed=2)
    assert {v.action for v in values} == set(shares)
    calibration = shipped_calibration()
    for v in values:
        assert v.win_share == pytest.approx(shares[v.action])
        assert v.win_probability == pytest.approx(
            calibration.win_chance(game.players, v.win_share) if calibration else v.win_share
        )
        trial = game.copy()
        trial.push(v.action)
        while not trial.is_over:
            trial.push(trial.legal_actions[0])
        assert v.expected_score == pytest.approx(trial.scores()[seat].total)
    # The search's own objective prefers every winning take to every losing one.
    winning = [v.utility for v in values if shares[v.action] == 1.0]
    losing = [v.utility for v in values if shares[v.action] == 0.0]
    assert winning and losing and min(winning) > max(losing)


def test_a_finished_game_is_worth_its_outcome() -> None:
    game = Game.new(Rules(players=3), seed=8)
    rng = random.Random(1)
    while not game.is_over:
        actions = game.legal_actions
        game.push(actions[rng.randrange(len(actions))])
    value = evaluate(game)
    winners = game.winners()
    assert value.simulations == 0
    assert value.expected_scores == tuple(float(s.total) for s in game.scores())
    assert value.win_probabilities == tuple(1 / len(winners) if s in winners else 0.0 for s in range(3))
    assert analyze(game) == []


def test_position_values_are_probabilities() -> None:
    game = _three_yellows()
    value = evaluate(game, budget=300, seed=1)
    assert value.simulations == 300
    assert sum(value.win_probabilities) == pytest.approx(1.0)
    assert all(0 <= p <= 1 for p in value.win_probabilities)


def _recorded_game(tmp_path) -> tuple[GameRecord, str]:  # type: ignore[no-untyped-def]
    from coloretto.bots import make_bot

    game = Game.new(Rules(players=2), seed=21)
    bots = [make_bot("greedy", seed=1), make_bot("random", seed=2)]
    while not game.is_over:
        seat = game.to_move
        assert seat is not None
        game.push(bots[seat].choose(game.observation(seat)))
    record = GameRecord.from_game(game, seats=["greedy", "random"])
    path = tmp_path / "game.json"
    path.write_text(record.to_json(), encoding="utf-8")
    return record, str(path)


def test_review_finds_the_random_players_errors(tmp_path) -> None:  # type: ignore[no-untyped-def]
    record, _ = _recorded_game(tmp_path)
    result = review(record, budget=300, seed=3)
    greedy, random_player = result.summary
    assert greedy.decisions and random_player.decisions
    assert random_player.score_loss > greedy.score_loss
    assert random_player.accuracy < greedy.accuracy
    marked = [m for m in result.moves if m.decision is not None and m.decision.mark]
    assert sum(m.seat == 1 for m in marked) > sum(m.seat == 0 for m in marked)


def test_analyze_command(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    _, path = _recorded_game(tmp_path)
    assert main(["analyze", path, "--budget", "40", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["format"] == "coloretto-review" and data["budget"] == 40
    assert data["thresholds"] == THRESHOLDS and data["point_thresholds"] == POINT_THRESHOLDS
    assert [s["name"] for s in data["summary"]] == ["greedy", "random"]
    assert len(data["positions"]) == len(data["moves"]) + 1
    plot = tmp_path / "review.png"
    assert main(["analyze", path, "--budget", "40", "--all", "--plot", str(plot)]) == 0
    out = capsys.readouterr().out
    assert "accuracy" in out and "random" in out and "win chance over the game" in out
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert main(["analyze", str(tmp_path / "missing.json")]) == 2
    assert main(["analyze", path, "--budget", "soon"]) == 2
    assert main(["analyze", path, "--budget", "0"]) == 2
    assert main(["analyze", path, "--budget", "40", "--plot", str(tmp_path / "review.txt")]) == 2
    assert "name a .png file" in capsys.readouterr().err
