"""Scoring tables, the worked examples of docs/user/rules.md, and the optimiser."""

from __future__ import annotations

from itertools import combinations, product

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coloretto.cards import GOLDEN_JOKER, JOKER, PLUS_TWO
from coloretto.rules import SCORE_TABLES, PlusColours, Table
from coloretto.scoring import best_score

Y, O, R, P, G, B, N = range(7)


def counts(**cards: int) -> list[int]:
    vector = [0] * 10
    names = {"yellow": Y, "orange": O, "red": R, "pink": P, "green": G, "blue": B, "brown": N}
    for name, n in cards.items():
        if name == "joker":
            vector[JOKER] = n
        elif name == "golden":
            vector[GOLDEN_JOKER] = n
        elif name == "plus2":
            vector[PLUS_TWO] = n
        else:
            vector[names[name]] = n
    return vector


def test_tables_match_the_summary_card() -> None:
    assert SCORE_TABLES[Table.BROWN][1:] == (1, 3, 6, 10, 15, 21)
    assert SCORE_TABLES[Table.VIOLET][1:] == (1, 4, 8, 7, 6, 5)


def test_six_or_more_cards_score_as_six() -> None:
    assert best_score(counts(red=9)).total == 21
    assert best_score(counts(red=9), table=Table.VIOLET).total == 5


def test_worked_example_three_plus_one_minus() -> None:
    result = best_score(counts(green=6, yellow=4, red=3, blue=2, plus2=1))
    assert result.total == 36
    assert set(result.plus_colours) == {G, Y, R}
    assert result.minus_colours == (B,)
    assert result.colour_points[B] == -3
    assert result.plus_two_points == 2


def test_worked_example_joker_goes_to_diamonds() -> None:
    # 6 planets, 4 diamonds, 3 hearts, 2 clubs, a joker and a +2: the joker makes diamonds 5.
    result = best_score(counts(green=6, yellow=4, red=3, blue=2, joker=1, plus2=1))
    assert result.total == 41
    assert result.joker_colours == (Y,)
    assert result.counts[Y] == 5


def test_worked_example_violet_joker_can_only_hurt() -> None:
    result = best_score(counts(red=3, blue=3, green=3, joker=1), table=Table.VIOLET)
    assert result.total == 23
    # Wherever it goes it costs exactly one point against the 24 without it.
    assert result.total == 24 - 1


def test_violet_joker_may_go_to_a_colour_not_held() -> None:
    # Red 3 and blue 3 score 8 each; a joker on either makes 4 cards (7), but as
    # a third colour of its own it scores plus 1.
    result = best_score(counts(red=3, blue=3, joker=1), table=Table.VIOLET)
    assert result.total == 8 + 8 + 1
    assert result.joker_colours[0] not in (R, B)
    assert result.counts[result.joker_colours[0]] == 1


def test_golden_joker_counts_as_a_joker() -> None:
    assert best_score(counts(red=5, golden=1)).total == 21


def test_fewer_than_three_colours() -> None:
    assert best_score(counts(red=2)).total == 3
    assert best_score(counts()).total == 0
    assert best_score(counts(plus2=3)).total == 6


def test_most_cards_variant_differs_only_under_violet() -> None:
    # 6 red (violet 5), 3 blue, 3 green, 3 yellow (8 each): the player would pick the
    # three 3s, but under "most cards" red must score plus.
    collection = counts(red=6, blue=3, green=3, yellow=3)
    assert best_score(collection, table=Table.VIOLET).total == 8 + 8 + 8 - 5
    most = best_score(collection, table=Table.VIOLET, plus_rule=PlusColours.MOST_CARDS)
    assert R in most.plus_colours
    assert most.total == 5 + 8 + 8 - 8
    brown = best_score(collection, table=Table.BROWN)
    assert brown.total == best_score(collection, plus_rule=PlusColours.MOST_CARDS).total


def test_colours_out_of_play_are_rejected() -> None:
    with pytest.raises(ValueError, match="not in play"):
        best_score(counts(brown=1), colours=5)


def brute_force(vector: list[int], colours: int, table: Table, plus_rule: PlusColours) -> int:
    """Every joker assignment (ordered) and every allowed set of plus colours."""
    points = SCORE_TABLES[table]
    jokers = vector[JOKER] + vector[GOLDEN_JOKER]
    best = None
    for assignment in product(range(colours), repeat=jokers):
        cards = list(vector[:colours])
        for colour in assignment:
            cards[colour] += 1
        held = [c for c in range(colours) if cards[c]]
        size = min(3, len(held))
        for plus in combinations(held, size):
            if plus_rule is PlusColours.MOST_CARDS and any(
                cards[o] > cards[p] for p in plus for o in held if o not in plus
            ):
                continue
            total = sum(points[min(cards[c], 6)] * (1 if c in plus else -1) for c in held)
            total += 2 * vector[PLUS_TWO]
            best = total if best is None else max(best, total)
    assert best is not None
    return best


@settings(max_examples=400, deadline=None)
@given(
    colours=st.integers(5, 7),
    cards=st.lists(st.integers(0, 9), min_size=7, max_size=7),
    jokers=st.integers(0, 3),
    plus_twos=st.integers(0, 10),
    table=st.sampled_from(list(Table)),
    plus_rule=st.sampled_from(list(PlusColours)),
)
@pytest.mark.slow
def test_optimiser_equals_brute_force(
    colours: int, cards: list[int], jokers: int, plus_twos: int, table: Table, plus_rule: PlusColours
) -> None:
    vector = [*cards[:colours], *([0] * (7 - colours)), 0, 0, plus_twos]
    vector[JOKER] = min(jokers, 2)
    vector[GOLDEN_JOKER] = jokers - vector[JOKER]
    result = best_score(vector, colours, table, plus_rule)
    assert result.total == brute_force(vector, colours, table, plus_rule)
    # The breakdown adds up to its total.
    assert sum(result.colour_points) + result.plus_two_points == result.total
    assert len(result.joker_colours) == jokers
    assert len(result.plus_colours) <= 3


def test_minus_points_are_the_fewest_among_the_best_assignments() -> None:
    # Violet: red 3, blue 3, green 3, yellow 1 and a joker score 22 whether the
    # joker goes to yellow (minus 4) or to red (8 → 7, minus 1): the player
    # would choose minus 1.
    from coloretto.cards import JOKER

    counts = [0] * 10
    counts[R], counts[B], counts[G], counts[Y], counts[JOKER] = 3, 3, 3, 1, 1
    score = best_score(counts, 7, Table.VIOLET)
    assert score.total == 22
    assert score.minus_points == 1


def test_fewer_minus_tie_break_sees_the_fewest_possible_minus_points() -> None:
    from coloretto.cards import JOKER
    from coloretto.rules import TieBreak
    from coloretto.scoring import winners_of

    a = [0] * 10
    a[R], a[B], a[G], a[Y], a[JOKER] = 3, 3, 3, 1, 1
    b = [0] * 10
    b[R], b[B], b[G], b[Y] = 4, 3, 3, 1
    scores = [best_score(c, 7, Table.VIOLET) for c in (a, b)]
    assert [s.total for s in scores] == [22, 22]
    assert [s.minus_points for s in scores] == [1, 1]
    totals = [s.total for s in scores]
    minus = [s.minus_points for s in scores]
    assert winners_of(totals, minus, TieBreak.FEWER_MINUS) == (0, 1)
