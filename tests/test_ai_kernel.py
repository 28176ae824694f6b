"""The compiled kernel plays exactly the engine's rules, in every variant.

The differential tests draw their rules from :func:`tests.strategies.rules_strategy`,
which draws every rule option over all its values, and compare the kernel
with the engine after every step: the state, the legal actions, every seat's
best score and minus points, and the winners the tie-break picks.
"""

from __future__ import annotations

import random
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coloretto.actions import action_from_id
from coloretto.bots import kernel as k
from coloretto.cards import EDITION_DECKS, GOLDEN_JOKER, JOKER, LAST_ROUND, PLUS_TWO, parse_colour
from coloretto.game import Game
from coloretto.rules import Rules, Table, TieBreak
from coloretto.scoring import best_score
from tests.strategies import rules_strategy

#: enough games to meet every option value many times over (and their pairs
#: often), few enough for the quick suite
DIFFERENTIAL = settings(max_examples=120, deadline=None)
SEEDS = st.integers(0, 2**32 - 1)
POLICIES = st.sampled_from([k.POLICY_RANDOM, k.POLICY_GREEDY, k.POLICY_EXACT])


def _ids(game: Game) -> list[int]:
    return [a.id for a in game.legal_actions]


def _kernel_legal(s: np.ndarray, cfg: np.ndarray) -> list[int]:
    buf = np.empty(k.MAX_ACTIONS, dtype=np.int64)
    n = k.k_legal(s, cfg, buf)
    return [int(x) for x in buf[:n]]


def _check_same(game: Game, s: np.ndarray, cfg: np.ndarray) -> None:
    """The kernel state ``s`` is the engine's position, with the same rulings."""
    assert game.is_over == bool(s[k.OVER])
    expected = k.state_from_game(game)
    if game.is_over:  # a finished game has nobody to move; the kernel keeps the last mover
        expected[k.PLAYER] = s[k.PLAYER]
    assert np.array_equal(expected, s)
    assert _kernel_legal(s, cfg) == _ids(game)
    scratch = np.zeros(k.COLOURS, dtype=np.int64)
    empty = np.zeros(1, dtype=np.int64)
    scores = game.scores()
    for seat, score in enumerate(scores):
        assert k.k_score(s, cfg, seat, empty, 0, scratch) == (score.total, score.minus_points)
    out = np.zeros(k.RESULT_SIZE)
    k.k_result(s, cfg, out)
    n = game.players
    assert [int(x) for x in out[:n]] == [score.total for score in scores]
    winners = game.winners()
    shares = [round(out[k.MAX_PLAYERS + p], 9) for p in range(n)]
    assert shares == [round(1 / len(winners), 9) if p in winners else 0.0 for p in range(n)]


@DIFFERENTIAL
@given(rules=rules_strategy(), seed=SEEDS, policy=POLICIES)
@pytest.mark.slow
def test_kernel_playouts_replay_through_the_engine(rules: Rules, seed: int, policy: int) -> None:
    cfg = k.rules_config(rules)
    game = Game.new(rules, seed=seed)
    s = k.state_from_game(game)
    k.k_seed(seed)
    moves = np.zeros((1000, 2), dtype=np.int64)
    steps = k.k_playout_recorded(s.copy(), cfg, policy, moves)
    replay = k.state_from_game(game)
    _check_same(game, replay, cfg)
    for a, card in moves[:steps]:
        assert int(a) in _ids(game)
        game.push(action_from_id(int(a)), reveal=None if card < 0 else int(card))
        k.k_apply(replay, cfg, int(a), int(card))
        _check_same(game, replay, cfg)
    assert game.is_over


@DIFFERENTIAL
@given(rules=rules_strategy(), seed=SEEDS)
@pytest.mark.slow
def test_engine_games_replay_through_the_kernel(rules: Rules, seed: int) -> None:
    cfg = k.rules_config(rules)
    game = Game.new(rules, seed=seed)
    rng = random.Random(seed)
    s = k.state_from_game(game)
    _check_same(game, s, cfg)
    while not game.is_over:
        actions = game.legal_actions
        action = actions[rng.randrange(len(actions))]
        game.push(action)
        revealed = [c for c in game.last_revealed() if c != LAST_ROUND]
        assert k.k_needs_card(s, cfg, action.id) == bool(revealed)
        k.k_apply(s, cfg, action.id, revealed[0] if revealed else -1)
        _check_same(game, s, cfg)


@st.composite
def _collections(draw: st.DrawFn) -> tuple[Rules, list[int]]:
    """Rules and a collection those rules allow: colours in play, and no more
    jokers or "+2" than the deck holds."""
    rules = draw(rules_strategy())
    deck = EDITION_DECKS[rules.edition]
    counts = [draw(st.integers(0, 9)) if c < rules.colours else 0 for c in range(k.COLOURS)]
    counts += [0] * (k.COLLECTABLE_KINDS - k.COLOURS)
    counts[JOKER] = draw(st.integers(0, deck.jokers))
    counts[GOLDEN_JOKER] = draw(st.integers(0, deck.golden_jokers))
    counts[PLUS_TWO] = draw(st.integers(0, deck.plus_twos))
    return rules, counts


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(drawn=_collections())
def test_scores_agree_with_the_optimiser(drawn: tuple[Rules, list[int]]) -> None:
    rules, counts = drawn
    cfg = k.rules_config(rules)
    s = np.zeros(k.STATE_SIZE, dtype=np.int64)
    s[k.COLL : k.COLL + k.COLLECTABLE_KINDS] = counts
    scratch = np.zeros(k.COLOURS, dtype=np.int64)
    total, minus = k.k_score(s, cfg, 0, np.zeros(1, dtype=np.int64), 0, scratch)
    expected = best_score(counts, rules.colours, rules.table, rules.plus_colours)
    assert (total, minus) == (expected.total, expected.minus_points)


def test_the_kernel_breaks_a_tie_with_the_fewest_minus_points_a_joker_allows() -> None:
    # Violet: A's joker on red scores 22 with 1 minus point (a joker on a new
    # colour also scores 22, with 2); B scores 22 with 1: a shared win.
    rules = Rules(players=4, table=Table.VIOLET, tie_break=TieBreak.FEWER_MINUS)
    cfg = k.rules_config(rules)
    s = np.zeros(k.STATE_SIZE, dtype=np.int64)
    held = {
        0: {"red": 3, "blue": 3, "green": 3, "yellow": 1},
        1: {"red": 4, "blue": 3, "green": 3, "yellow": 1},
    }
    for seat, colours in held.items():
        for name, n in colours.items():
            s[k.COLL + k.COLLECTABLE_KINDS * seat + parse_colour(name)] = n
    s[k.COLL + JOKER] = 1
    out = np.zeros(k.RESULT_SIZE)
    k.k_result(s, cfg, out)
    assert list(out[:4]) == [22, 22, 0, 0]
    assert list(out[k.MAX_PLAYERS : k.MAX_PLAYERS + 4]) == [0.5, 0.5, 0.0, 0.0]
    scratch = np.zeros(k.COLOURS, dtype=np.int64)
    assert k.k_score(s, cfg, 0, np.zeros(1, dtype=np.int64), 0, scratch) == (22, 1)


def test_the_compiled_code_comes_from_the_one_file_the_build_stamps() -> None:
    # The stale-build guard compares the digest of _kernel.pyx alone, so the
    # compiled code must come from that file alone (C's own headers aside): no
    # Cython module of ours cimported, no file included. The core's facts it is
    # built around are checked at import (tests/test_kernel_build.py).
    source = k.KERNEL_SOURCE.read_text()
    cimported = re.findall(r"^\s*(?:from\s+(\S+)\s+)?cimport\s+(\S+)", source, re.MULTILINE)
    assert cimported and all((module or name).startswith("libc.") for module, name in cimported)
    assert not re.search(r"^\s*include\s", source, re.MULTILINE)


def test_bench_reports_kernel_playouts(capsys: pytest.CaptureFixture[str]) -> None:
    from coloretto.cli import main

    assert main(["bench", "--games", "10", "--runs", "1", "--player-counts", "4", "--kernel"]) == 0
    out = capsys.readouterr().out
    assert "games/s" in out and "MCTS kernel" in out
    line = next(line for line in out.splitlines() if line.startswith("4 players: random"))
    assert float(line.split()[3].rstrip(",")) > 0


def test_a_duel_plays_whole_games_with_each_seats_own_policy() -> None:
    rules = Rules(players=3)
    s = k.state_from_game(Game.new(rules, seed=5))
    cfgs = np.stack([k.rules_config(rules, take, 0.1) for take in (6.0, 3.0, 100.0)])
    policies = np.array([k.POLICY_GREEDY, k.POLICY_EXACT, k.POLICY_RANDOM], dtype=np.int64)
    sums = np.zeros(k.RESULT_SIZE)
    k.k_seed(3)
    k.k_duel(s, cfgs, policies, 200, sums)
    shares = sums[k.MAX_PLAYERS : k.MAX_PLAYERS + 3]
    assert shares.sum() == pytest.approx(200.0)  # every game has its winners
    assert shares[2] < shares[0]  # random play loses to greedy play
    again = np.zeros(k.RESULT_SIZE)
    k.k_seed(3)
    k.k_duel(s, cfgs, policies, 200, again)
    assert np.array_equal(sums, again)


def test_a_duel_refuses_seats_that_play_other_rules() -> None:
    s = k.state_from_game(Game.new(Rules(players=3), seed=5))
    cfgs = np.stack([k.rules_config(Rules(players=3, table=table)) for table in (Table.BROWN, Table.VIOLET)])
    cfgs = np.concatenate([cfgs, cfgs[:1]])
    with pytest.raises(ValueError, match="seat 1's rules array plays other rules"):
        k.k_duel(s, cfgs, np.ones(3, dtype=np.int64), 1, np.zeros(k.RESULT_SIZE))
    with pytest.raises(ValueError, match="needs 3 rules arrays and 3 policies"):
        k.k_duel(s, cfgs, np.ones(2, dtype=np.int64), 1, np.zeros(k.RESULT_SIZE))


def test_a_seed_chooses_the_playouts() -> None:
    rules = Rules(players=4)
    s = k.state_from_game(Game.new(rules, seed=2))
    cfg = k.rules_config(rules)

    def steps(seed: int) -> int:
        k.k_seed(seed)
        return int(k.k_bench(s, cfg, k.POLICY_RANDOM, 50))

    assert steps(1) == steps(1)
    assert len({steps(seed) for seed in range(1, 6)}) > 1
