"""The game API: illegal actions, undo, chance control, observations."""

from __future__ import annotations

import dataclasses
import random

import pytest

from coloretto import (
    DRAW,
    PASS,
    Game,
    IllegalActionError,
    Rules,
    name_joker,
    parse_action,
    place,
    take,
)
from coloretto.actions import ALL_ACTIONS, NUM_ACTIONS, action_from_id
from coloretto.cards import LAST_ROUND
from tests.helpers import check_invariants, stacked_game

R, B = 2, 5


def refused(game: Game, action, message: str) -> None:  # type: ignore[no-untyped-def]
    before = game.state_key()
    with pytest.raises(IllegalActionError, match=message):
        game.push(action)
    assert game.state_key() == before, "an illegal action must leave the game unchanged"


def test_every_illegal_action_names_its_rule_and_changes_nothing() -> None:
    game = stacked_game(Rules(players=3), ["R", "B", "G", "Y"])
    refused(game, place(0), "no drawn card to place")
    refused(game, take(0), "row 1 is empty")
    refused(game, take(4), "there is no row 5")
    refused(game, name_joker(0), "no joker to name")
    refused(game, PASS, "passing is allowed only")
    game.push(DRAW)
    refused(game, DRAW, "must be placed in a row first")
    refused(game, take(0), "must be placed in a row first")
    game.push(place(0))
    game.push(take(0))
    game.push(DRAW)
    refused(game, place(0), "row 1 was already taken")
    refused(game, place(3), "there is no row 4")
    game.push(place(1))
    game.push(DRAW)
    game.push(place(1))
    game.push(take(1))
    check_invariants(game)


def test_acting_for_the_game_after_it_ended_is_refused() -> None:
    game = Game.new(Rules(players=2), seed=3)
    rng = random.Random(3)
    while not game.is_over:
        game.push(rng.choice(game.legal_actions))
    for action in (DRAW, place(0), take(0), PASS, name_joker(0)):
        refused(game, action, "the game is over")


def test_full_row_refused() -> None:
    game = stacked_game(Rules(players=3), ["R"] * 4)
    for _ in range(3):
        game.push(DRAW)
        game.push(place(0))
    game.push(DRAW)
    refused(game, place(0), "row 1 is full")


def test_undo_restores_every_step_of_a_whole_game() -> None:
    for rules in (Rules(players=2, edition="modern"), Rules(players=5, joker_timing="on-take")):
        game = Game.new(rules, seed=21)
        rng = random.Random(5)
        keys = [game.state_key()]
        while not game.is_over:
            game.push(rng.choice(game.legal_actions))
            keys.append(game.state_key())
        played = game.move_stack
        while len(game):
            keys.pop()
            assert game.pop() == played[len(game)]
            assert game.state_key() == keys[-1]
        with pytest.raises(IndexError):
            game.pop()


def test_copy_is_independent() -> None:
    game = Game.new(Rules(players=3), seed=4)
    game.push(DRAW)
    other = game.copy()
    other.push(place(0))
    assert game.pending_card is not None and other.pending_card is None
    assert game.rows[0] == ()
    other.pop()
    assert other.state_key() == game.state_key()


def test_chance_outcomes_are_the_unseen_cards() -> None:
    game = Game.new(Rules(players=4), seed=9)
    outcomes = dict(game.chance_outcomes())
    assert abs(sum(outcomes.values()) - 1) < 1e-12
    obs = game.observation(0)
    total = sum(obs.unseen_composition)
    for card, p in outcomes.items():
        assert p == obs.unseen_composition[card] / total
    assert LAST_ROUND not in outcomes


def test_a_draw_can_be_told_which_card_comes_up_and_undone() -> None:
    game = Game.new(Rules(players=4), seed=9)
    top = game.setup.deck[0]
    wanted = next(card for card, _ in game.chance_outcomes() if card != top)
    before = game.state_key()
    game.push(DRAW, reveal=wanted)
    assert game.pending_card == wanted
    check_invariants(game)
    game.pop()
    assert game.state_key() == before


def test_a_card_that_is_not_left_cannot_be_revealed() -> None:
    game = stacked_game(Rules(players=3), [])
    before = game.state_key()
    with pytest.raises(IllegalActionError, match="not a card"):
        game.push(DRAW, reveal=LAST_ROUND)
    with pytest.raises(IllegalActionError, match="none is left unseen"):
        game.push(DRAW, reveal=6)  # the colour removed in a 3-player game
    assert game.state_key() == before


def test_resampling_keeps_everything_public() -> None:
    game = Game.new(Rules(players=3), seed=2)
    rng = random.Random(1)
    for _ in range(20):
        game.push(rng.choice(game.legal_actions))
    public = game.observation(0)
    history = game.history()
    coming = upcoming_cards(game)
    game.resample_hidden(random.Random(7))
    assert game.observation(0) == public
    assert game.history() == history
    after = upcoming_cards(game)
    assert after != coming
    unseen = public.unseen_composition
    for cards in (coming, after):  # the game ends before the deck does: only part of it comes up
        assert all(cards.count(card) <= unseen[card] for card in set(cards))
    check_invariants(game)


def upcoming_cards(game: Game) -> list[int]:
    """The cards the deck will turn over from here, in order, found by playing on a copy."""
    trial = game.copy()
    cards = []
    while not trial.is_over:
        action = DRAW if DRAW in trial.legal_actions else trial.legal_actions[0]
        trial.push(action)
        event = trial.last_event()
        assert event is not None
        cards.extend(c for c in event.revealed if c != LAST_ROUND)
    return cards


def test_observation_has_everything_public_and_no_deck_order() -> None:
    game = Game.new(Rules(players=4, edition="modern"), seed=5)
    rng = random.Random(2)
    for _ in range(15):
        game.push(rng.choice(game.legal_actions))
    obs = game.observation(1)
    names = {f.name for f in dataclasses.fields(obs)}
    assert "deck" not in names and "seed" not in names and "setup" not in names
    assert obs.rows == game.rows
    assert obs.row_capacities == (3, 3, 3, 3)
    assert obs.cards_in_deck == game.cards_in_deck
    assert obs.cards_before_last_round == game.cards_before_last_round
    assert obs.scores == tuple(s.total for s in game.scores())
    assert obs.legal_actions == (game.legal_actions if game.to_move == 1 else ())
    # Two games that differ only in the order of unseen cards look the same.
    other = game.copy()
    other.resample_hidden(random.Random(3))
    assert other.observation(1) == obs
    with pytest.raises(ValueError, match="seat 7 does not exist"):
        game.observation(7)


def test_game_from_observation_is_the_same_position() -> None:
    for rules in (Rules(players=2), Rules(players=5, edition="modern", joker_timing="on-take")):
        game = Game.new(rules, seed=12)
        rng = random.Random(12)
        for _ in range(40):
            game.push(rng.choice(game.legal_actions))
        seat = game.to_move
        assert seat is not None
        obs = game.observation(seat)
        twin = Game.from_observation(obs, random.Random(1))
        assert twin.observation(seat) == obs
        # And it plays on to an end with the same rules.
        while not twin.is_over:
            twin.push(rng.choice(twin.legal_actions))
        assert twin.winners()


def test_action_notation_round_trips() -> None:
    assert [str(a) for a in (DRAW, place(1), take(2), PASS)] == ["d", "p2", "t3", "x"]
    for action in ALL_ACTIONS:
        assert parse_action(str(action)) == action
        assert action_from_id(action.id) is action
    assert parse_action("Take 3") == take(2)
    assert parse_action("joker red") == name_joker(2)
    assert len(ALL_ACTIONS) == NUM_ACTIONS
    with pytest.raises(ValueError, match="cannot read action"):
        parse_action("jump")
    with pytest.raises(ValueError, match="row 9 does not exist"):
        parse_action("p9")
    with pytest.raises(ValueError):
        action_from_id(NUM_ACTIONS)


def test_actions_are_immutable() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        DRAW.index = 3  # type: ignore[misc]
