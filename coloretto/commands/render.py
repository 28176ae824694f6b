"""Plain-terminal rendering of scores, shared by score, replay and others."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.table import Table as RichTable

from coloretto.cards import EDITION_DECKS, Edition, card_name
from coloretto.scoring import ScoreBreakdown


def breakdown_dict(breakdown: ScoreBreakdown, edition: Edition) -> dict[str, Any]:
    """A breakdown as plain JSON-able data, colours by name."""
    names = EDITION_DECKS[edition].colour_names
    return {
        "total": breakdown.total,
        "joker_colours": [names[c] for c in breakdown.joker_colours],
        "plus_colours": [names[c] for c in breakdown.plus_colours],
        "minus_colours": [names[c] for c in breakdown.minus_colours],
        "colours": {
            names[c]: {"cards": breakdown.counts[c], "points": breakdown.colour_points[c]}
            for c in range(len(breakdown.counts))
            if breakdown.counts[c]
        },
        "plus_two_points": breakdown.plus_two_points,
    }


def colour_list(colours: Sequence[int], edition: Edition) -> str:
    return ", ".join(card_name(c, edition) for c in colours) or "—"


def print_breakdowns(
    rows: Sequence[tuple[str, ScoreBreakdown]],
    edition: Edition,
    winners: Sequence[int] = (),
    console: Console | None = None,
) -> None:
    """A scoring table: one line per player."""
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
            colour_list(b.joker_colours, edition),
            plus or "—",
            minus or "—",
            str(b.plus_two_points),
            str(b.total),
        )
    console.print(table)
