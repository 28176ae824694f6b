"""The game review (coloretto.review): values, luck, marks, summary, JSON."""

from __future__ import annotations

import json
import math
import statistics
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.cells import cell_len

from coloretto import Game, Rules
from coloretto.actions import ActionKind, take
from coloretto.bots import make_bot
from coloretto.cards import Edition
from coloretto.cli import main
from coloretto.commands import analyze as analyze_command
from coloretto.record import GameRecord, RecordError
from coloretto.review import (
    BLUNDER,
    MoveReview,
    Review,
    assemble,
    mark_for,
    move_accuracy,
    plan_review,
    review,
    run_task,
)

TINY = 40  #: iterations per position where only the bookkeeping is under test


def play(game: Game, bots: list[str], seed: int, upto: int | None = None) -> Game:
    players = [make_bot(name, seed + i) for i, name in enumerate(bots)]
    while not game.is_over and (upto is None or len(game) < upto):
        seat = game.to_move
        assert seat is not None
        game.push(players[seat].choose(game.observation(seat)))
    return game


def record_of(game: Game) -> GameRecord:
    return GameRecord.from_game(game, seats=[f"p{i}" for i in range(game.players)], include_deck=True)


def bot_game(players: int, seed: int, edition: Edition = Edition.CLASSIC) -> GameRecord:
    bots = ["greedy", "random", "builder", "greedy", "random"][:players]
    return record_of(play(Game.new(Rules(players=players, edition=edition), seed=seed), bots, seed))


@pytest.fixture(scope="module")
def three_player_review() -> tuple[GameRecord, Review]:
    record = bot_game(3, 4)
    return record, review(record, budget=TINY, seed=1, workers=2)


def test_one_position_per_move_and_the_deal(three_player_review: tuple[GameRecord, Review]) -> None:
    record, result = three_player_review
    assert len(result.positions) == len(record.moves) + 1
    assert [p.index for p in result.positions] == list(range(len(record.moves) + 1))
    assert [m.number for m in result.moves] == list(range(1, len(record.moves) + 1))
    for position in result.positions:
        assert len(position.win) == 3 and math.isclose(sum(position.win), 1.0, abs_tol=1e-9)
    final = record.replay()
    last = result.positions[-1]
    assert last.to_move is None
    assert last.score == tuple(float(b.total) for b in final.scores())
    winners = final.winners()
    assert last.win == tuple(1.0 / len(winners) if s in winners else 0.0 for s in range(3))


def test_every_decision_and_only_decisions_are_judged(three_player_review: tuple[GameRecord, Review]) -> None:
    record, result = three_player_review
    game = record.initial_game()
    edition = record.rules.edition
    for move, reviewed in zip(record.moves, result.moves, strict=True):
        choices = len(game.legal_actions)
        assert reviewed.seat == game.to_move
        assert reviewed.played == move.action.notation(edition)
        if choices == 1:
            assert reviewed.decision is None
        else:
            decision = reviewed.decision
            assert decision is not None
            actions = [line.action for line in decision.lines]
            assert actions[0] == decision.best and reviewed.played in actions
            assert len(set(actions)) == len(actions) <= 4
            legal = {a.notation(edition) for a in game.legal_actions}
            assert set(actions) <= legal
            assert decision.win_loss >= 0 and decision.score_loss >= 0
            assert decision.mark == mark_for(decision.win_loss, decision.score_loss)
            if reviewed.played == decision.best:
                assert decision.win_loss == 0 and decision.score_loss == 0 and decision.mark == ""
            if decision.win_loss:
                assert decision.win_loss > decision.noise  # a loss inside the noise is no loss
            if decision.score_loss:
                assert decision.score_loss > decision.score_noise
        game.push(move.action, reveal=move.revealed[-1] if move.revealed else None)


def test_a_draw_is_worth_the_chance_weighted_mean_of_its_cards(
    three_player_review: tuple[GameRecord, Review],
) -> None:
    record, result = three_player_review
    game = record.initial_game()
    draws = 0
    for i, (move, reviewed) in enumerate(zip(record.moves, result.moves, strict=True)):
        outcomes = dict(game.chance_outcomes())
        forced = len(game.legal_actions) == 1
        game.push(move.action, reveal=move.revealed[-1] if move.revealed else None)
        if move.action.kind is not ActionKind.DRAW:
            assert reviewed.luck is None
            continue
        draws += 1
        luck = reviewed.luck
        assert luck is not None and luck.kind == "draw"
        assert [o.probability for o in luck.outcomes] == pytest.approx(list(outcomes.values()))
        assert math.isclose(sum(o.probability for o in luck.outcomes), 1.0)
        after = result.positions[i + 1]
        (actual,) = [o for o in luck.outcomes if o.card == luck.card]
        assert actual.win == after.win and actual.score == after.score
        for seat in range(3):
            mean = sum(o.probability * o.win[seat] for o in luck.outcomes)
            assert luck.win[seat] == pytest.approx(after.win[seat] - mean)
            # the luck of every card that could have come averages to zero
            assert sum(o.probability * (o.win[seat] - mean) for o in luck.outcomes) == pytest.approx(
                0.0, abs=1e-12
            )
            if forced:  # nothing to choose: the position before the draw is worth exactly that mean
                assert result.positions[i].win[seat] == pytest.approx(mean)
                points = sum(o.probability * o.score[seat] for o in luck.outcomes)
                assert result.positions[i].score[seat] == pytest.approx(points)
    assert draws > 20


def test_the_summary_adds_up(three_player_review: tuple[GameRecord, Review]) -> None:
    record, result = three_player_review
    final = record.replay()
    for seat, row in enumerate(result.summary):
        decisions = [m.decision for m in result.moves if m.seat == seat and m.decision is not None]
        assert row.decisions == len(decisions)
        assert row.win_loss == pytest.approx(sum(d.win_loss for d in decisions))
        assert row.accuracy == pytest.approx(statistics.fmean(d.accuracy for d in decisions))
        assert row.blunders == sum(d.mark == "blunder" for d in decisions)
        luck = sum(m.luck.win[seat] for m in result.moves if m.luck is not None)
        assert row.luck_win == pytest.approx(luck)
        assert row.final_score == final.scores()[seat].total
        assert row.luck_adjusted_result == pytest.approx(row.result - row.luck_win)
        assert row.luck_adjusted_score == pytest.approx(row.final_score - row.luck_score)
    assert sum(row.result for row in result.summary) == pytest.approx(1.0)


def test_the_json_round_trips(three_player_review: tuple[GameRecord, Review]) -> None:
    _, result = three_player_review
    text = result.to_json()
    data = json.loads(text)
    assert data["format"] == "coloretto-review" and data["version"] == 1
    assert Review.from_json(text) == result
    assert Review.from_dict(json.loads(json.dumps(result.to_dict()))).to_dict() == data


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("[]", "not a review"),
        ('{"format": "coloretto-review", "version": 9}', "version"),
        ('{"format": "coloretto-review", "version": 1, "budget": 1}', "malformed"),
        ("{", "not JSON"),
    ],
)
def test_a_bad_review_file_says_what_is_wrong(text: str, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        Review.from_json(text)


def test_same_seed_same_review_on_any_number_of_threads() -> None:
    record = bot_game(2, 9)
    one = review(record, budget=TINY, seed=3, workers=1)
    assert review(record, budget=TINY, seed=3, workers=2) == one
    assert review(record, budget=TINY, seed=4, workers=2) != one


def test_the_plan_runs_anywhere_in_any_order() -> None:
    """A server runs the tasks in worker processes, in its own order."""
    record = bot_game(2, 12)
    plan = plan_review(record, budget=TINY, seed=5)
    results = {task.key: run_task(task) for task in reversed(plan.tasks)}
    assert assemble(plan, results) == review(record, budget=TINY, seed=5, workers=1)
    missing = dict(results)
    missing.pop(plan.tasks[0].key)
    with pytest.raises(ValueError, match="no result"):
        assemble(plan, missing)


def test_golden_joker_bonus_cards_have_luck_too() -> None:
    for seed in range(40):
        record = bot_game(3, seed, Edition.MODERN)
        bonus = [m for m in record.moves if m.action.kind is ActionKind.TAKE and m.revealed]
        if bonus:
            break
    else:  # pragma: no cover - the seeds above deal golden jokers
        pytest.fail("no game with a golden joker's bonus card")
    result = review(record, budget=TINY, seed=0)
    lucky = [m for m in result.moves if m.luck is not None and m.luck.kind == "bonus"]
    assert len(lucky) == len(bonus)
    for move in lucky:
        assert move.luck is not None
        assert math.isclose(sum(o.probability for o in move.luck.outcomes), 1.0)


def test_a_finished_or_bad_record_is_refused() -> None:
    record = bot_game(2, 3)
    data = record.to_dict()
    data["moves"] = [*data["moves"][:5], "t9", *data["moves"][6:]]
    with pytest.raises(RecordError):
        review(GameRecord.from_dict(data), budget=TINY)
    with pytest.raises(ValueError, match="whole number"):
        plan_review(record, budget=0)


def test_an_unfinished_record_is_reviewed_up_to_its_last_move() -> None:
    game = play(Game.new(Rules(players=3), seed=8), ["greedy"] * 3, 8, upto=30)
    result = review(record_of(game), budget=TINY)
    assert len(result.positions) == 31 and result.positions[-1].to_move is not None
    assert all(math.isnan(row.result) for row in result.summary)
    # JSON has no NaN: a result not yet known is null, and reads back as NaN
    data = json.loads(result.to_json())
    assert all(row["result"] is None and row["luck_adjusted_result"] is None for row in data["summary"])
    again = Review.from_json(result.to_json())
    assert all(math.isnan(row.result) and math.isnan(row.luck_adjusted_result) for row in again.summary)


def test_analyze_json_of_an_unfinished_game_is_strict_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    game = play(Game.new(Rules(players=3), seed=8), ["greedy"] * 3, 8, upto=20)
    saved = tmp_path / "game.json"
    saved.write_text(record_of(game).to_json(), encoding="utf-8")
    assert main(["analyze", str(saved), "--budget", str(TINY), "--workers", "1", "--json"]) == 0

    def refuse(constant: str) -> None:
        raise ValueError(f"not JSON: {constant}")

    data = json.loads(capsys.readouterr().out, parse_constant=refuse)
    assert [row["result"] for row in data["summary"]] == [None, None, None]


def test_analyze_tables_tell_apart_long_alike_and_wide_names(capsys: pytest.CaptureFixture[str]) -> None:
    game = play(Game.new(Rules(players=3), seed=8), ["greedy"] * 3, 8, upto=24)
    record = GameRecord.from_game(game, seats=["Grandmother Anna", "Grandmother Berta", "李小龍"])
    analyze_command.print_review(review(record, budget=TINY), sys.stdout)
    lines = capsys.readouterr().out.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("seat ") and "moves" in line)
    header, rows = lines[at], lines[at + 1 : at + 4]
    assert [row[: len(name)] for row, name in zip(rows, record.seats, strict=True)] == list(record.seats)
    # each count of moves ends under the header's "moves", whatever the name's width in cells
    moves_end = cell_len(header[: header.index("moves") + len("moves")])
    for row, name in zip(rows, record.seats, strict=True):
        after = row[len(name) :]
        count = after.split()[0]
        assert cell_len(row[: len(name) + after.index(count) + len(count)]) == moves_end


def test_accuracy_and_marks_follow_the_documented_thresholds() -> None:
    assert move_accuracy(0.0) == pytest.approx(100.0, abs=1e-3)
    assert move_accuracy(0.15) == pytest.approx(103.1668 * math.exp(-0.04354 * 15) - 3.1669)
    assert move_accuracy(1.0) == 0.0
    assert [mark_for(x) for x in (0.0, 0.049, 0.05, 0.1, BLUNDER)] == [
        "",
        "",
        "inaccuracy",
        "mistake",
        "blunder",
    ]
    assert [mark_for(0.0, x) for x in (1.9, 2.0, 4.0, 6.0)] == ["", "inaccuracy", "mistake", "blunder"]
    assert mark_for(0.11, 6.5) == "blunder" and mark_for(0.16, 2.5) == "blunder"


# ---------------------------------------------------------------- luck is unbiased


def test_the_luck_of_draws_averages_to_zero_over_many_deals() -> None:
    """Over many games the drawer's luck has mean zero within its 99.9 % interval
    (a value estimated apart from the average it is measured against would not)."""
    lucks: list[float] = []
    for seed in range(12):
        record = bot_game(2, 100 + seed)
        result = review(record, budget=24, seed=seed, workers=2)
        lucks += [m.luck.win[m.seat] for m in result.moves if m.luck is not None and m.luck.kind == "draw"]
    assert len(lucks) > 300
    mean = statistics.fmean(lucks)
    half_width = 3.3 * statistics.stdev(lucks) / math.sqrt(len(lucks))
    assert abs(mean) < half_width, (mean, half_width)


@settings(max_examples=6, deadline=None)
@given(seed=st.integers(0, 2**31), players=st.integers(2, 5))
def test_any_game_reviews_consistently(seed: int, players: int) -> None:
    record = bot_game(players, seed)
    result = review(record, budget=12, seed=seed)
    assert len(result.positions) == len(record.moves) + 1
    for move in result.moves:
        if move.luck is not None:
            assert sum(move.luck.win) == pytest.approx(0.0, abs=1e-9)  # chances add up to 1 either way


# ---------------------------------------------------------------- a hand-made blunder


def _blunder_position(seed: int) -> tuple[Game, int, int] | None:
    """A position of a builder game where the mover can take a row worth 5 points or
    more, or one that costs them 3 points or more (a fourth colour, minus points)."""
    game = Game.new(Rules(players=3), seed=seed)
    bots = [make_bot("builder", seed + i) for i in range(3)]
    while not game.is_over:
        seat = game.to_move
        assert seat is not None
        if game.round >= 3 and game.pending_card is None:
            gains = {}
            before = game.best_score(seat).total
            for action in game.legal_actions:
                if action.kind is ActionKind.TAKE:
                    game.push(action)
                    gains[action.index] = game.best_score(seat).total - before
                    game.pop()
            if gains and max(gains.values()) >= 5 and min(gains.values()) <= -3:
                good = max(gains, key=gains.__getitem__)
                bad = min(gains, key=gains.__getitem__)
                return game, good, bad
        game.push(bots[seat].choose(game.observation(seat)))
    return None


def test_a_hand_made_blunder_is_marked_and_the_best_move_is_not() -> None:
    for seed in range(50):
        found = _blunder_position(seed)
        if found is not None:
            break
    else:  # pragma: no cover
        pytest.fail("no position with a good and a bad take")
    game, _good, bad = found
    seat = game.to_move
    edition = game.rules.edition

    def reviewed(action_text: str) -> MoveReview:
        line = game.copy()
        line.push(line.parse_action(action_text))
        # the review of a game that stops here ends with this move
        move = review(record_of(line), seed=1).moves[len(line) - 1]
        assert move.seat == seat and move.played == action_text
        return move

    blunder = reviewed(take(bad).notation(edition)).decision
    assert blunder is not None
    assert blunder.mark == "blunder", blunder
    assert blunder.best != take(bad).notation(edition) and blunder.score_loss >= 4
    assert take(bad).notation(edition) in [line.action for line in blunder.lines]
    best = reviewed(blunder.best).decision
    assert best is not None and best.best == blunder.best
    assert best.mark == "" and best.win_loss == 0 and best.score_loss == 0, best


def test_analyze_checks_the_plot_path_before_the_review(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    saved = tmp_path / "game.json"
    saved.write_text(bot_game(2, seed=3).to_json())
    monkeypatch.setattr(analyze_command, "review", lambda *a, **k: pytest.fail("the game was reviewed"))
    for plot, problem in (
        (tmp_path / "nowhere" / "x.png", f"the directory {tmp_path / 'nowhere'} does not exist"),
        (saved / "x.png", f"{saved} is not a directory"),
    ):
        assert main(["analyze", str(saved), "--json", "--plot", str(plot)]) == 2
        assert capsys.readouterr().err == f"coloretto analyze: error: --plot {plot}: {problem}\n"


def test_analyze_refuses_a_plot_without_matplotlib_before_the_review(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Matplotlib is the optional extra 'plots': a chart asked for without it is refused at once."""
    from coloretto import charts

    saved = tmp_path / "game.json"
    saved.write_text(bot_game(2, seed=3).to_json())
    monkeypatch.setattr(analyze_command, "review", lambda *a, **k: pytest.fail("the game was reviewed"))
    monkeypatch.setattr(charts, "available", lambda: False)
    assert main(["analyze", str(saved), "--plot", str(tmp_path / "x.png")]) == 2
    assert capsys.readouterr().err == f"coloretto analyze: error: --plot: {charts.MISSING}\n"
    assert not (tmp_path / "x.png").exists()
