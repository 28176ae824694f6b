"""Scoring: the tables, and the exact optimiser for jokers and plus colours.

A collection is a count vector indexed by card (see :mod:`coloretto.cards`):
colours ``0..6``, then jokers, golden jokers and "+2" cards. At most three
jokers and seven colours exist, so the optimiser simply enumerates every joker
assignment (at most 84 multisets) and, for each, the best plus colours. It is
exact, and cached, so bots may ask "what would I score now?" as often as they
like. Among assignments with the same best total it keeps the one with the
fewest minus points: a player who may choose would choose that one, and it is
what the ``fewer-minus`` tie-break compares.

Who wins is decided here too (:func:`standing`, :func:`winners_of`): the
engine, matches, the arena's placings and the compiled search kernel all
rank results with the same function.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import combinations_with_replacement

from coloretto.cards import COLOURS, GOLDEN_JOKER, JOKER, PLUS_TWO
from coloretto.rules import SCORE_TABLES, PlusColours, Table, TieBreak

PLUS_COLOURS = 3  #: at most three colours score plus points
PLUS_TWO_POINTS = 2


@dataclass(frozen=True)
class ScoreBreakdown:
    """How one collection scores, with every choice the optimiser made."""

    counts: tuple[int, ...]  #: cards per colour in play, jokers included
    joker_colours: tuple[int, ...]  #: the colour given to each unnamed joker (jokers, then golden)
    plus_colours: tuple[int, ...]  #: colours scoring plus, best first
    minus_colours: tuple[int, ...]  #: colours held that score minus
    colour_points: tuple[int, ...]  #: signed points per colour in play
    plus_two_points: int
    total: int

    @property
    def minus_points(self) -> int:
        return -sum(p for p in self.colour_points if p < 0)


def colour_value(table: Sequence[int], cards: int) -> int:
    """Points of one colour holding ``cards`` cards (six or more score as six)."""
    return table[cards if cards < 6 else 6]


def _choose_plus(counts: Sequence[int], values: Sequence[int], plus_rule: PlusColours) -> tuple[int, ...]:
    held = [c for c in range(len(counts)) if counts[c] > 0]
    if plus_rule is PlusColours.MOST_CARDS:
        # The three colours with most cards; among equal counts the player picks the better.
        ordered = sorted(held, key=lambda c: (-counts[c], -values[c], c))
    else:
        ordered = sorted(held, key=lambda c: (-values[c], c))
    return tuple(ordered[:PLUS_COLOURS])


@lru_cache(maxsize=1 << 16)
def _optimise(
    base: tuple[int, ...], jokers: int, plus_twos: int, table: Table, plus_rule: PlusColours
) -> ScoreBreakdown:
    points_table = SCORE_TABLES[table]
    colours = len(base)
    best: ScoreBreakdown | None = None
    for assignment in combinations_with_replacement(range(colours), jokers):
        counts = list(base)
        for colour in assignment:
            counts[colour] += 1
        values = [colour_value(points_table, n) for n in counts]
        plus = _choose_plus(counts, values, plus_rule)
        points = [values[c] if c in plus else -values[c] for c in range(colours)]
        total = sum(points) + PLUS_TWO_POINTS * plus_twos
        minus = -sum(p for p in points if p < 0)
        if best is None or total > best.total or (total == best.total and minus < best.minus_points):
            best = ScoreBreakdown(
                counts=tuple(counts),
                joker_colours=assignment,
                plus_colours=plus,
                minus_colours=tuple(c for c in range(colours) if counts[c] > 0 and c not in plus),
                colour_points=tuple(points),
                plus_two_points=PLUS_TWO_POINTS * plus_twos,
                total=total,
            )
    assert best is not None  # one assignment always exists, even for no jokers
    return best


def best_score(
    counts: Sequence[int],
    colours: int = COLOURS,
    table: Table = Table.BROWN,
    plus_rule: PlusColours = PlusColours.BEST,
) -> ScoreBreakdown:
    """The best score of a collection: jokers and plus colours chosen optimally.

    ``counts`` is a count vector (colours first, then jokers, golden jokers and
    "+2"); only the first ``colours`` colours are in play. Jokers that were
    already named (a variant) are simply counted in their colour.
    """
    if colours < COLOURS and any(counts[colours:COLOURS]):
        raise ValueError(f"a colour beyond the first {colours} is not in play")
    size = len(counts)
    jokers = (counts[JOKER] if size > JOKER else 0) + (counts[GOLDEN_JOKER] if size > GOLDEN_JOKER else 0)
    plus_twos = counts[PLUS_TWO] if size > PLUS_TWO else 0
    if type(table) is not Table:
        table = Table(table)
    if type(plus_rule) is not PlusColours:
        plus_rule = PlusColours(plus_rule)
    return _optimise(tuple(counts[:colours]), jokers, plus_twos, table, plus_rule)


#: a standing counts the total this many times over the minus points, so that
#: the minus points only ever decide between equal totals
_STANDING_SCALE = 1 << 16


def standing(total: int, minus_points: int, fewer_minus: bool) -> int:
    """A number that orders results, higher is better: the total, and with the
    ``fewer-minus`` tie-break, fewer minus points among equal totals.

    The compiled search kernel keeps a C copy of this rule, which
    ``tests/test_kernel_build.py`` checks against this function on every input.
    """
    if fewer_minus:
        return total * _STANDING_SCALE - minus_points
    return total * _STANDING_SCALE


def winners_of(totals: Sequence[int], minus_points: Sequence[int], tie_break: TieBreak) -> tuple[int, ...]:
    """Seats with the best standing: the highest total, a tie shared unless the
    tie-break narrows it.

    >>> winners_of([10, 12, 12], [0, 3, 1], TieBreak.SHARED)
    (1, 2)
    >>> winners_of([10, 12, 12], [0, 3, 1], TieBreak.FEWER_MINUS)
    (2,)
    """
    fewer = TieBreak(tie_break) is TieBreak.FEWER_MINUS
    standings = [standing(t, m, fewer) for t, m in zip(totals, minus_points)]
    best = max(standings)
    return tuple(seat for seat, value in enumerate(standings) if value == best)
