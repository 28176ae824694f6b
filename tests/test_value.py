"""The learned value: its features, the shipped model, ``coloretto train`` and ``cut=`` searches."""

from __future__ import annotations

import importlib.resources
import json
import random
from pathlib import Path

import numpy as np
import pytest

from coloretto.bots import BotSpecError, _kernel
from coloretto.bots import kernel as K
from coloretto.bots import tree as T
from coloretto.bots import value as V
from coloretto.bots.mcts_options import CUT_ROUND, Settings, read_mcts_options
from coloretto.cli import main
from coloretto.game import Game
from coloretto.rules import Rules
from coloretto.scoring import best_score
from tests.helpers import RULE_VARIANTS
from tests.test_ai_bots import play


def engine_features(game: Game) -> np.ndarray:
    """The kernel's features, computed again from the engine's position."""
    rules = game.rules
    obs = game.observation(game.to_move if game.to_move is not None else 0)
    n = rules.players
    out = np.zeros((n, V.V_FEATURES))

    def score(counts: list[int]) -> int:
        return best_score(counts, rules.colours, rules.table, rules.plus_colours).total

    left = obs.cards_before_last_round or 0
    in_round = n - sum(obs.out_this_round)
    on_rows = sum(len(row) for row in obs.rows)
    for seat in range(n):
        counts = list(obs.collections[seat])
        colours = sorted(counts[: rules.colours], reverse=True)
        now = score(counts)
        best_gain = 0
        if not obs.out_this_round[seat]:
            for i, row in enumerate(obs.rows):
                if row and not obs.rows_taken[i]:
                    more = counts.copy()
                    for card in row:
                        more[card] += 1
                    best_gain = max(best_gain, score(more) - now)
        f = {
            "one": 1,
            "score": now,
            "top1": colours[0],
            "top2": colours[1],
            "top3": colours[2],
            "rest": sum(colours[3:]),
            "jokers": counts[7] + counts[8],
            "plus2": counts[9],
            "colours": sum(1 for c in colours if c),
            "out": int(obs.out_this_round[seat]),
            "take_gain": best_gain,
            "left": left,
            "drawable": sum(obs.unseen_composition),
            "last_round": int(obs.cards_before_last_round is None),
            "on_rows": on_rows,
            "in_round": in_round,
            "round": obs.round,
            "to_move": int(obs.to_move == seat),
        }
        for name in ("score", "top1", "top2", "top3", "rest", "jokers", "colours", "left"):
            f[f"left*{name}"] = left * f[name]
        out[seat] = [f[name] for name in V.FEATURES]
    return out


@pytest.mark.parametrize("rules", RULE_VARIANTS, ids=lambda r: r.describe())
def test_features_match_the_engine(rules: Rules) -> None:
    rng = random.Random(7)
    game = Game.new(rules, seed=21)
    cfg = K.rules_config(rules)
    features = np.zeros((rules.players, V.V_FEATURES))
    checked = 0
    while not game.is_over:
        if rng.random() < 0.3:
            _kernel.k_features(K.state_from_game(game), cfg, features)
            np.testing.assert_array_equal(features, engine_features(game))
            checked += 1
        game.push(rng.choice(game.legal_actions))
    assert checked > 5


def test_features_refuse_a_wrong_array() -> None:
    rules = Rules(players=3)
    s = K.state_from_game(Game.new(rules, seed=1))
    with pytest.raises(ValueError, match="features array"):
        _kernel.k_features(s, K.rules_config(rules), np.zeros((2, V.V_FEATURES)))


def test_shipped_model_loads_from_the_package_and_predicts_as_in_training() -> None:
    shipped = importlib.resources.files("coloretto.bots").joinpath("value.json")
    assert shipped.is_file()
    model = V.ValueModel.from_dict(json.loads(shipped.read_text(encoding="utf-8")))
    assert model == V.shipped_value()
    for players in (2, 3, 4, 5):
        seat_model = model.for_players(players)
        assert len(seat_model.check_gains) == len(seat_model.check_features) > 0
        # the same numbers as training computed for the same features
        assert seat_model.gains(np.array(seat_model.check_features)).tolist() == list(seat_model.check_gains)
        assert V.shipped_weights(players).tolist() == [
            *seat_model.coefficients,
            seat_model.temperature,
            seat_model.temperature_slope,
        ]


@pytest.mark.parametrize("players", [2, 3, 4, 5])
def test_kernel_predictions_are_the_models(players: int) -> None:
    rules = Rules(players=players)
    cfg = K.rules_config(rules)
    seat_model = V.shipped_value().for_players(players)
    weights = V.shipped_weights(players)
    rng = random.Random(players)
    game = Game.new(rules, seed=players)
    features = np.zeros((players, V.V_FEATURES))
    out = np.zeros(K.RESULT_SIZE)
    while not game.is_over:
        s = K.state_from_game(game)
        _kernel.k_features(s, cfg, features)
        _kernel.k_predict(s, cfg, weights, out)
        expected = features[:, 1] + seat_model.gains(features)
        np.testing.assert_allclose(out[:players], expected, rtol=1e-12, atol=1e-9)
        shares = out[K.MAX_PLAYERS : K.MAX_PLAYERS + players]
        assert shares.sum() == pytest.approx(1.0)
        assert int(np.argmax(shares)) == int(np.argmax(expected))
        game.push(rng.choice(game.legal_actions))


def test_model_is_stale_on_another_kernel() -> None:
    model = V.shipped_value()
    assert V.ValueModel(model.models, {**model.source, "kernel_sha256": "0" * 64}).stale
    assert not V.ValueModel(model.models, {**model.source, "kernel_sha256": V.kernel_digest()}).stale


def test_train_is_reproducible_from_its_seed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    def train(name: str, seed: int) -> bytes:
        out = tmp_path / name
        args = ["train", "--games", "10", "--positions", "4", "--players", "2,4", "--seed", str(seed)]
        assert main([*args, "--out", str(out)]) == 0
        return out.read_bytes()

    first = train("a.json", 3)
    assert "R2" in capsys.readouterr().out
    assert train("b.json", 3) == first
    assert train("c.json", 4) != first
    model = V.ValueModel.read(tmp_path / "a.json")
    assert sorted(model.models) == [2, 4]
    assert model.source["seed"] == 3 and not model.stale
    figures = model.for_players(4).figures
    assert {"rmse", "r2", "rmse_zero", "r2_zero", "rmse_mean", "r2_mean"} <= set(figures)


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--games", "2"], "--games must be at least 5"),
        (["--positions", "0"], "--positions must be at least 1"),
        (["--players", "6"], "--players takes player counts from 2 to 5"),
    ],
)
def test_train_refuses_bad_flags(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["train", *argv, "--out", "/nonexistent/value.json"]) == 2
    assert message in capsys.readouterr().err


def test_cut_option() -> None:
    assert read_mcts_options("500,cut=20")[1] == Settings(cut=20)
    assert read_mcts_options("500,cut=round")[1].cut == CUT_ROUND == _kernel.CUT_ROUND
    assert read_mcts_options("500,cut=0")[1] == Settings()
    assert Settings().cut == 0
    for bad in ("abc", "-3", "2.5", "1001", ""):
        with pytest.raises(BotSpecError, match=r"cut must be a whole number .* or round"):
            read_mcts_options(f"500,cut={bad}")


def test_kernel_refuses_a_cut_without_a_model() -> None:
    rules = Rules(players=4)
    cfg = K.rules_config(rules)
    s = K.state_from_game(Game.new(rules, seed=1))
    values = np.zeros(15)
    with pytest.raises(ValueError, match="needs a value model"):
        _kernel.k_cut_values(s.copy(), cfg, K.POLICY_GREEDY, values, 0.75, 30.0, 10, None)
    with pytest.raises(ValueError, match="a value model must hold"):
        _kernel.k_cut_values(s.copy(), cfg, K.POLICY_GREEDY, values, 0.75, 30.0, 10, np.zeros(3))
    with pytest.raises(ValueError, match="cut must be"):
        _kernel.k_cut_values(s.copy(), cfg, K.POLICY_GREEDY, values, 0.75, 30.0, -5, V.shipped_weights(4))
    bad = np.array(V.shipped_weights(4))
    bad[_kernel.V_TEMPERATURE] = 0.0
    with pytest.raises(ValueError, match="temperature"):
        _kernel.k_cut_values(s.copy(), cfg, K.POLICY_GREEDY, values, 0.75, 30.0, 10, bad)
    bad = np.array(V.shipped_weights(4))
    bad[_kernel.V_TEMPERATURE_SLOPE] = -0.1
    with pytest.raises(ValueError, match="slope"):
        _kernel.k_cut_values(s.copy(), cfg, K.POLICY_GREEDY, values, 0.75, 30.0, 10, bad)


def test_a_cut_past_the_end_is_the_full_playout() -> None:
    rules = Rules(players=3)
    cfg = K.rules_config(rules)
    s = K.state_from_game(Game.new(rules, seed=4))
    full, cut = np.zeros(9), np.zeros(9)
    K.k_seed(5)
    K.k_playout_values(s.copy(), cfg, K.POLICY_GREEDY, full, 0.75, 30.0)
    K.k_seed(5)
    _kernel.k_cut_values(s.copy(), cfg, K.POLICY_GREEDY, cut, 0.75, 30.0, 1000, V.shipped_weights(3))
    assert cut.tolist() == full.tolist()


def test_no_cut_searches_as_before() -> None:
    rules = Rules(players=4)
    cfg = K.rules_config(rules)
    s = K.state_from_game(Game.new(rules, seed=2))
    sums = []
    for extra in ((), (0, None), (0, V.shipped_weights(4))):
        tree = T.Tree(256)
        root = tree.add_root(s, cfg)
        total = np.zeros(12)
        K.k_seed(9)
        T.k_iterate(
            tree.nodes, tree.states, tree.edge_ints, tree.edge_floats, tree.meta,
            root, s, cfg, K.POLICY_GREEDY, 0.7, 0, 300, 0.75, 30.0, total, *extra,
        )  # fmt: skip
        sums.append(total.tolist())
    assert sums[0] == sums[1] == sums[2]


@pytest.mark.parametrize("rules", RULE_VARIANTS, ids=lambda r: r.describe())
def test_cut_bots_play_only_legal_actions(rules: Rules) -> None:
    specs = ["mcts:40,cut=10", "heuristic", "mcts:40,cut=round", "mcts:30,cut=3,rollout=random", "greedy"]
    game = Game.new(rules, seed=13)
    play(game, specs[: rules.players], seed=4)
    assert game.is_over


def test_cut_bots_same_seed_same_moves() -> None:
    rules = Rules(players=4)
    specs = ["mcts:80,cut=20", "heuristic", "mcts:60,cut=round", "mcts:60"]
    first = play(Game.new(rules, seed=6), specs, seed=2)
    second = play(Game.new(rules, seed=6), specs, seed=2)
    assert first == second
