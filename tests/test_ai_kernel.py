"""The numba kernel plays exactly the engine's rules, in every variant."""

from __future__ import annotations

import random

import numpy as np
import pytest

from coloretto.actions import action_from_id
from coloretto.bots import kernel as k
from coloretto.game import Game
from coloretto.rules import Rules
from tests.helpers import RULE_VARIANTS


def _ids(game: Game) -> list[int]:
    return [a.id for a in game.legal_actions]


def _kernel_legal(s: np.ndarray, cfg: np.ndarray) -> list[int]:
    buf = np.empty(k.MAX_ACTIONS, dtype=np.int64)
    n = k.k_legal(s, cfg, buf)
    return [int(x) for x in buf[:n]]


def _check_same(game: Game, s: np.ndarray, cfg: np.ndarray) -> None:
    assert game.is_over == bool(s[k.OVER])
    if not game.is_over:  # a finished game's observation has no player to move
        assert np.array_equal(k.state_from_game(game), s)
    assert _kernel_legal(s, cfg) == _ids(game)
    if game.is_over:
        assert s[k.OVER] == 1
        out = np.zeros(10)
        k.k_result(s, cfg, out)
        n = game.players
        assert [int(x) for x in out[:n]] == [sc.total for sc in game.scores()]
        winners = game.winners()
        assert [round(out[5 + p], 6) for p in range(n)] == [
            round(1 / len(winners), 6) if p in winners else 0.0 for p in range(n)
        ]


@pytest.mark.parametrize("rules", RULE_VARIANTS, ids=lambda r: r.describe())
@pytest.mark.slow
def test_kernel_playouts_replay_through_the_engine(rules: Rules) -> None:
    cfg = k.rules_config(rules)
    for seed in range(12):
        game = Game.new(rules, seed=seed)
        s = k.state_from_game(game)
        k.k_seed(seed)
        moves = np.zeros((600, 2), dtype=np.int64)
        policy = (k.POLICY_RANDOM, k.POLICY_GREEDY, k.POLICY_EXACT)[seed % 3]
        steps = k.k_playout_recorded(s.copy(), cfg, policy, moves)
        replay = k.state_from_game(game)
        for a, card in moves[:steps]:
            assert int(a) in _ids(game)
            game.push(action_from_id(int(a)), reveal=None if card < 0 else int(card))
            k.k_apply(replay, cfg, int(a), int(card))
            assert np.array_equal(replay, k.state_from_game(game)) or game.is_over
            _check_same(game, replay, cfg)
        assert game.is_over


@pytest.mark.parametrize("rules", RULE_VARIANTS, ids=lambda r: r.describe())
@pytest.mark.slow
def test_engine_games_replay_through_the_kernel(rules: Rules) -> None:
    cfg = k.rules_config(rules)
    for seed in range(12):
        game = Game.new(rules, seed=100 + seed)
        rng = random.Random(seed)
        s = k.state_from_game(game)
        while not game.is_over:
            actions = game.legal_actions
            action = actions[rng.randrange(len(actions))]
            game.push(action)
            revealed = [c for c in game.history()[-1][1] if c != 10]
            card = revealed[0] if revealed else -1
            k.k_apply(s, cfg, action.id, card)
            _check_same(game, s, cfg)


def test_scores_agree_with_the_optimiser_on_random_collections() -> None:
    from coloretto.scoring import best_score

    rng = random.Random(5)
    scratch = np.zeros(7, dtype=np.int64)
    for rules in RULE_VARIANTS:
        cfg = k.rules_config(rules)
        s = np.zeros(k.STATE_SIZE, dtype=np.int64)
        for _ in range(200):
            counts = [rng.randrange(0, 8) if c < rules.colours else 0 for c in range(7)]
            counts += [rng.randrange(0, 3), rng.randrange(0, 2), rng.randrange(0, 4)]
            s[k.COLL : k.COLL + 10] = counts
            total, minus = k.k_score(s, cfg, 0, np.zeros(1, dtype=np.int64), 0, scratch)
            expected = best_score(counts, rules.colours, rules.table, rules.plus_colours)
            assert total == expected.total
            assert minus == expected.minus_points


def test_bench_reports_kernel_playouts(capsys: pytest.CaptureFixture[str]) -> None:
    from coloretto.cli import main

    assert main(["bench", "--games", "10", "--runs", "1", "--player-counts", "4", "--kernel"]) == 0
    out = capsys.readouterr().out
    assert "games/s" in out and "MCTS kernel" in out
    line = next(line for line in out.splitlines() if line.startswith("4 players: random"))
    assert float(line.split()[3].rstrip(",")) > 0
