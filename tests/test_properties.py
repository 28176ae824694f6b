"""Properties over many random games, in every variant and player count."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coloretto import Game, Rules
from coloretto.actions import ActionKind
from coloretto.cards import LAST_ROUND
from coloretto.record import GameRecord
from tests.helpers import check_invariants
from tests.strategies import rules_strategy

LEAVING = (ActionKind.TAKE, ActionKind.PASS)


def play(rules: Rules, seed: int, check_each_step: bool) -> Game:
    game = Game.new(rules, seed=seed)
    rng = random.Random(seed)
    steps = 0
    while not game.is_over:
        actions = game.legal_actions
        assert actions
        before = game.state_key() if check_each_step else None
        action = rng.choice(actions)
        game.push(action)
        if check_each_step:
            after = game.state_key()
            game.pop()
            assert game.state_key() == before, f"undo of {action} did not restore the state"
            game.push(action)
            assert game.state_key() == after
            check_invariants(game)
        steps += 1
        assert steps < 2000, "a game must end"
    return game


@settings(max_examples=500, deadline=None)
@given(rules=rules_strategy(), seed=st.integers(0, 2**32))
@pytest.mark.slow
def test_random_games_keep_every_invariant_and_undo_exactly(rules: Rules, seed: int) -> None:
    game = play(rules, seed, check_each_step=True)
    assert game.is_over
    assert game.winners()
    # The last-round card lies exactly N from the bottom, and it was seen unless
    # the deck ran dry before it (possible only with nothing under it).
    deck = game.setup.deck
    if rules.chooses_starting_colours:  # the box: the game put the last-round card in itself
        assert LAST_ROUND not in deck
    else:
        assert len(deck) - 1 - deck.index(LAST_ROUND) == rules.under_last_round


@settings(max_examples=1000, deadline=None)
@given(rules=rules_strategy(), seed=st.integers(0, 2**32))
@pytest.mark.slow
def test_each_player_leaves_each_round_exactly_once(rules: Rules, seed: int) -> None:
    game = Game.new(rules, seed=seed)
    rng = random.Random(seed)
    left: dict[int, list[int]] = {}
    while not game.is_over:
        round_no, seat = game.round, game.to_move
        action = rng.choice(game.legal_actions)
        game.push(action)
        if action.kind in LEAVING:
            assert seat is not None
            left.setdefault(round_no, []).append(seat)
    for seats in left.values():
        assert sorted(seats) == list(range(rules.players))
    assert sorted(left) == list(range(1, game.round + 1))


@settings(max_examples=500, deadline=None)
@given(rules=rules_strategy(), seed=st.integers(0, 2**32), secret=st.booleans())
@pytest.mark.slow
def test_saved_records_replay_to_the_same_game(rules: Rules, seed: int, secret: bool) -> None:
    game = play(rules, seed, check_each_step=False)
    record = GameRecord.from_game(
        game, seats=[f"p{i}" for i in range(rules.players)], include_deck=not secret
    )
    again = GameRecord.from_json(record.to_json()).replay()
    assert again.history() == game.history()
    assert [s.total for s in again.scores()] == [s.total for s in game.scores()]
    assert again.winners() == game.winners()
    if not secret:
        assert again.state_key() == game.state_key()


@settings(max_examples=200, deadline=None)
@given(rules=rules_strategy(), seed=st.integers(0, 2**32), cut=st.floats(0, 1))
@pytest.mark.slow
def test_controlled_draws_reproduce_a_game_from_another_deck_order(
    rules: Rules, seed: int, cut: float
) -> None:
    """Same deal, unseen cards reshuffled: forcing each reveal replays the game."""
    game = play(rules, seed, check_each_step=False)
    history = game.history()
    forced = Game.new(rules, seed=seed)
    forced.resample_hidden(random.Random(seed + 1))
    stop = int(cut * len(history))
    for action, revealed in history[:stop]:
        forced.push(action, reveal=revealed[-1] if revealed else None)
        check_invariants(forced)
    assert forced.history() == history[:stop]
    replayed = Game.new(rules, seed=seed)
    for action, _ in history[:stop]:
        replayed.push(action)
    assert forced.observation(0) == replayed.observation(0)


@settings(max_examples=200, deadline=None)
@given(rules=rules_strategy(), seed=st.integers(0, 2**32))
def test_the_scores_kept_for_a_position_are_its_own_after_moves_taken_back_and_copies(
    rules: Rules, seed: int
) -> None:
    # scores() is kept for the position it was worked out for (asked for every watcher's view):
    # whatever is pushed, popped or copied, it must be what the collections give now
    game = Game.new(rules, seed=seed)
    rng = random.Random(seed)
    while not game.is_over:
        if len(game) and rng.random() < 0.3:
            game.pop()
        else:
            game.push(rng.choice(game.legal_actions))
        copy = game.copy() if rng.random() < 0.2 else game
        assert copy.scores() == tuple(copy.best_score(seat) for seat in range(copy.players))
        key = copy.moves_key()
        assert key[0] == len(copy)
