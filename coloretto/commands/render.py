"""Plain-terminal rendering of scores, shared by score, replay and others."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.table import Table as RichTable

from coloretto.cards import EDITION_DECKS, Edition, card_name
from coloretto.scoring import ScoreBreakdown

#: Jokers named during play (``joker_timing=on-take``): (joker card, colour) pairs, as
#: ``Game.named_jokers(seat)`` gives them.
NamedJokers = Sequence[tuple[int, int]]


def breakdown_dict(breakdown: ScoreBreakdown, edition: Edition, named: NamedJokers = ()) -> dict[str, Any]:
    """A breakdown as plain JSON-able data, colours by name.

    ``joker_colours`` is every joker's colour: those named during play first, then
    those the scoring chose; ``named_jokers`` says which joker was named which colour.
    """
    names = EDITION_DECKS[edition].colour_names
    return {
        "total": breakdown.total,
        "joker_colours": [names[c] for _, c in named] + [names[c] for c in breakdown.joker_colours],
        "named_jokers": [{"joker": card_name(joker, edition), "colour": names[c]} for joker, c in named],
        "plus_colours": [names[c] for c in breakdown.plus_colours],
        "minus_colours": [names[c] for c in breakdown.minus_colours],
        "colours": {
            names[c]: {"cards": breakdown.counts[c], "points": breakdown.colour_points[c]}
            for c in range(len(breakdown.counts))
            if breakdown.counts[c]
        },
        "plus_two_points": breakdown.plus_two_points,
    }


def joker_text(breakdown: ScoreBreakdown, edition: Edition, named: NamedJokers = ()) -> str:
    """Named jokers as "joker: red", then the colours the scoring chose for the others."""
    parts = [f"{card_name(joker, edition)}: {card_name(colour, edition)}" for joker, colour in named]
    parts += [card_name(c, edition) for c in breakdown.joker_colours]
    return ", ".join(parts) or "—"


def print_breakdowns(
    rows: Sequence[tuple[str, ScoreBreakdown]],
    edition: Edition,
    winners: Sequence[int] = (),
    console: Console | None = None,
    named_jokers: Sequence[NamedJokers] = (),
) -> None:
    """A scoring table: one line per player; ``named_jokers`` per row, when jokers were
    named during play."""
    console = console or Console()
    table = RichTable(title="Scores")
    table.add_column("player")
    table.add_column("jokers as")
    table.add_column("plus colours (cards: points)")
    table.add_column("minus colours")
    table.add_column("+2", justify="right")
    table.add_column("total", justify="right", style="bold")
    for index, (label, b) in enumerate(rows):
        plus = ", ".join(
            f"{card_name(c, edition)} {b.counts[c]}: +{b.colour_points[c]}" for c in b.plus_colours
        )
        minus = ", ".join(
            f"{card_name(c, edition)} {b.counts[c]}: {b.colour_points[c]}" for c in b.minus_colours
        )
        name = f"{label} ★ winner" if index in winners else label
        table.add_row(
            name,
            joker_text(b, edition, named_jokers[index] if named_jokers else ()),
            plus or "—",
            minus or "—",
            str(b.plus_two_points),
            str(b.total),
        )
    console.print(table)
