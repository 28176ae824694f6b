"""Move events: what each move did, told by the game itself."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from coloretto import DRAW, Game, Rules, name_joker, place, take
from coloretto.actions import ActionKind
from coloretto.cards import GOLDEN_JOKER, JOKER, LAST_ROUND, PLUS_TWO
from coloretto.record import GameRecord
from tests.helpers import stacked_game
from tests.strategies import rules_strategy

R, B = 2, 5


def test_draw_place_and_take_say_which_cards_moved() -> None:
    game = stacked_game(Rules(players=3), ["R", "+2"])
    game.push(DRAW)
    drew = game.last_event()
    assert drew is not None
    assert (drew.number, drew.seat, drew.cards, drew.revealed, drew.round) == (1, 0, (R,), (R,), 1)
    assert drew.next_to_move == 0
    game.push(place(1))
    placed = game.last_event()
    assert placed is not None and placed.row == 1 and placed.cards == (R,) and placed.next_to_move == 1
    game.push(DRAW)
    game.push(place(1))
    game.push(take(1))
    took = game.last_event()
    assert took is not None
    assert (took.seat, took.row, took.cards, took.round_ended) == (2, 1, (R, PLUS_TWO), False)
    assert took.describe(["Ann", "Bob", "Cy"]) == "Cy took row 2: red, +2"
    assert took.notation() == "t2"


def test_the_golden_joker_bonus_and_named_jokers_are_in_the_events() -> None:
    rules = Rules(players=3, edition="modern", joker_timing="on-take")
    game = stacked_game(rules, ["GJ", "J"])
    game.push(DRAW)
    game.push(place(0))
    game.push(take(0))
    took = game.last_event()
    assert took is not None
    assert took.cards == (GOLDEN_JOKER,) and took.bonus_card == JOKER and took.revealed == (JOKER,)
    assert took.jokers_to_name == (GOLDEN_JOKER, JOKER)
    assert "the golden joker brings them joker from the deck" in took.describe(["A", "B", "C"])
    game.push(name_joker(B))
    named = game.last_event()
    assert named is not None
    assert (named.joker, named.colour, named.jokers_to_name) == (GOLDEN_JOKER, B, (JOKER,))
    assert named.describe(["A", "B", "C"]) == "B named a golden joker blue"


def test_round_and_game_ends_are_marked() -> None:
    game = Game.new(Rules(players=2), seed=4)
    rng = random.Random(4)
    while not game.is_over:
        game.push(rng.choice(game.legal_actions))
    events = game.events()
    ends = [e for e in events if e.round_ended]
    assert len(ends) == game.round
    assert [e.round for e in ends] == list(range(1, game.round + 1))
    assert events[-1].game_over and events[-1].next_to_move is None
    assert not any(e.game_over for e in events[:-1])
    assert sum(e.last_round_began for e in events) == 1
    assert any(LAST_ROUND in e.revealed for e in events)


@settings(max_examples=40, deadline=None)
@given(rules=rules_strategy(), seed=st.integers(0, 2**32))
def test_events_agree_with_the_history_the_record_and_last_event(rules: Rules, seed: int) -> None:
    game = Game.new(rules, seed=seed)
    rng = random.Random(seed)
    seen = []
    while not game.is_over:
        seat = game.to_move
        game.push(rng.choice(game.legal_actions))
        last = game.last_event()
        assert last is not None and last.seat == seat and last.next_to_move == game.to_move
        seen.append(last)
    events = game.events()
    assert events == tuple(seen), "last_event at each step equals the event the history gives later"
    assert [(e.action, e.revealed) for e in events] == game.history()
    record = GameRecord.from_game(game)
    assert [m.notation(rules.edition) for m in record.moves] == [e.notation(rules.edition) for e in events]
    leaving = [e for e in events if e.action.kind in (ActionKind.TAKE, ActionKind.PASS)]
    assert all(e.next_to_move is not None for e in events[:-1])
    assert len(leaving) >= rules.players
