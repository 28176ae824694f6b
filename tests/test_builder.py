"""The ``builder`` bot: what it takes, when it draws, where it places, legal in every variant."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from coloretto.actions import DRAW, Action, place, take
from coloretto.bots import make_bot
from coloretto.bots.builder import (
    PER_RIVAL,
    TAKE_WHEN_EMPTY,
    TAKE_WHEN_FULL,
    BuilderBot,
    gain,
    take_threshold,
)
from coloretto.cards import JOKER, PLUS_TWO, Edition, parse_card
from coloretto.game import Game, Observation
from coloretto.rules import JokerTiming, Rules
from tests.helpers import stacked_game
from tests.strategies import rules_strategy

Y, O, R, P, B, G = (parse_card(token) for token in "YORPBG")


def counts(*cards: int) -> tuple[int, ...]:
    """A collection as a count vector."""
    vector = [0] * (PLUS_TWO + 1)
    for card in cards:
        vector[card] += 1
    return tuple(vector)


def position(
    rows: tuple[tuple[int, ...], ...],
    mine: tuple[int, ...],
    pending: int | None = None,
    rules: Rules | None = None,
) -> Observation:
    """Seat 0 to move in a four-player game with these rows and this collection:
    to draw or take (``pending`` None) or to place ``pending``."""
    rules = rules or Rules(players=4)
    base = Game.new(rules, seed=1).observation(0)
    caps = base.row_capacities
    if pending is None:
        actions: tuple[Action, ...] = (DRAW,) if any(len(r) < c for r, c in zip(rows, caps)) else ()
        actions += tuple(take(i) for i, r in enumerate(rows) if r)
    else:
        actions = tuple(place(i) for i, r in enumerate(rows) if len(r) < caps[i])
    collections = (counts(*mine), *base.collections[1:])
    return replace(
        base, to_move=0, rows=rows, pending_card=pending, collections=collections, legal_actions=actions
    )


def test_takes_the_row_that_adds_most_to_its_colours() -> None:
    obs = position(((O, R), (Y, Y, Y), (P,), ()), mine=(Y,))
    assert gain(obs, (Y, Y, Y)) == 9  # one yellow grows to four: 1 → 10
    assert gain(obs, (Y, Y, Y)) >= take_threshold(obs)
    assert BuilderBot(1).choose(obs) == take(1)


def test_a_real_game_three_of_its_colour_is_taken() -> None:
    game = stacked_game(Rules(players=4), ["Y", "Y", "Y", "B"], first_player=0)
    for row in (0, 0, 0, 1):
        game.push(DRAW)
        game.push(place(row))
    assert game.to_move == 0
    assert make_bot("builder", seed=3).choose(game.observation(0)) == take(0)


def test_draws_when_no_row_is_worth_taking_yet() -> None:
    obs = position(((O,), (R,), (), ()), mine=(Y,))
    assert max(gain(obs, row) for row in obs.rows if row) < take_threshold(obs)
    assert BuilderBot(1).choose(obs) == DRAW


def test_the_threshold_falls_as_the_rows_fill() -> None:
    empty = position(((), (), (), ()), mine=(Y,))
    half = position(((O, R), (R,), (P, B, B), ()), mine=(Y,))
    full = position(((O, R, R), (R, Y, Y), (P, B, B), (Y, Y, O)), mine=(Y,))
    assert take_threshold(empty) > take_threshold(half) > take_threshold(full)
    # three opponents in the round: two beyond the first lower the bar
    assert take_threshold(empty) == TAKE_WHEN_EMPTY - 2 * PER_RIVAL
    assert take_threshold(full) == TAKE_WHEN_FULL - 2 * PER_RIVAL
    alone = replace(empty, out_this_round=(False, True, True, True))
    assert take_threshold(alone) == TAKE_WHEN_EMPTY


def test_takes_its_best_row_when_it_cannot_draw() -> None:
    obs = position(((P, B, G), (Y, P, B), (O, P, B), (G, G, P)), mine=(Y, Y, O, R))
    assert DRAW not in obs.legal_actions
    assert [gain(obs, row) for row in obs.rows] == [-3, 1, 0, 0]
    assert gain(obs, obs.rows[1]) < take_threshold(obs)  # worth little, but nothing else is left
    assert BuilderBot(1).choose(obs) == take(1)


def test_places_a_card_of_its_colour_with_its_colour() -> None:
    obs = position(((O,), (Y, Y), (R, P), ()), mine=(Y, Y), pending=Y)
    assert BuilderBot(1).choose(obs) == place(1)


def test_places_a_joker_where_it_helps_most() -> None:
    # with the two reds of the row a joker makes a fifth red (10 → 15): more than anywhere else
    obs = position(((Y,), (R, R), (), (O, P)), mine=(R, R, Y), pending=JOKER)
    assert BuilderBot(1).choose(obs) == place(1)


def test_a_card_of_a_fourth_colour_spoils_no_row_it_likes() -> None:
    # blue is a fourth colour: -1 wherever it goes, so it goes to the emptiest row
    obs = position(((Y, Y), (O,), (), (R, R)), mine=(Y, O, R), pending=B)
    assert BuilderBot(1).choose(obs) == place(2)


def play(rules: Rules, lineup: list[str], seed: int) -> list[Action]:
    """Play a whole game, every action checked against the engine's legal actions."""
    game = Game.new(rules, seed=seed)
    bots = [make_bot(name, seed=seed * 10 + seat) for seat, name in enumerate(lineup)]
    moves = []
    while not game.is_over:
        seat = game.to_move
        assert seat is not None
        action = bots[seat].choose(game.observation(seat))
        assert action in game.legal_actions, f"{lineup[seat]} played an illegal {action}"
        game.push(action)
        moves.append(action)
    return moves


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rules=rules_strategy(), seed=st.integers(0, 2**32), heuristic_seats=st.integers(0, 31))
def test_builder_and_heuristic_are_legal_in_every_variant(
    rules: Rules, seed: int, heuristic_seats: int
) -> None:
    lineup = ["heuristic" if heuristic_seats >> seat & 1 else "builder" for seat in range(rules.players)]
    play(rules, lineup, seed)


def test_same_seed_same_moves() -> None:
    variant = Rules(players=5, edition=Edition.MODERN, joker_timing=JokerTiming.ON_TAKE)
    for rules in (Rules(players=2), variant):
        lineup = ["builder"] * rules.players
        assert play(rules, lineup, seed=4) == play(rules, lineup, seed=4)
