"""``coloretto score``: the score calculator."""

from __future__ import annotations

import argparse
import json
import sys

from coloretto.cards import (
    CARDS_PER_COLOUR,
    COLLECTABLE_KINDS,
    EDITION_DECKS,
    Edition,
    card_name,
    parse_card,
)
from coloretto.commands import CommandError, add_intermixed_parser
from coloretto.commands.render import breakdown_dict, print_breakdowns
from coloretto.rules import PlusColours, Table
from coloretto.scoring import best_score


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = add_intermixed_parser(  # cards may follow the options: red=3 --edition modern golden=1
        subparsers,
        "score",
        help="score a collection: best joker colours and plus colours",
        description="Score one collection, choosing joker colours and plus colours optimally. "
        "Example: coloretto score green=6 yellow=4 red=3 blue=2 joker=1 plus2=1",
    )
    parser.add_argument(
        "cards",
        nargs="*",
        metavar="CARD=COUNT",
        help="e.g. red=3 joker=1 plus2=2; none at all is an empty collection (0 points)",
    )
    parser.add_argument("--table", choices=[t.value for t in Table], default="brown")
    parser.add_argument("--edition", choices=[e.value for e in Edition], default="classic")
    parser.add_argument("--plus-colours", choices=[p.value for p in PlusColours], default="best")
    parser.add_argument("--json", action="store_true", help="print the breakdown as JSON")
    parser.set_defaults(func=run)


def parse_collection(items: list[str], edition: Edition) -> list[int]:
    """Count vector from ``name=count`` words, with the game's limits checked."""
    counts = [0] * COLLECTABLE_KINDS
    deck = EDITION_DECKS[edition]
    limits = [CARDS_PER_COLOUR] * 7 + [deck.jokers, deck.golden_jokers, deck.plus_twos]
    given: dict[int, str] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep:
            raise CommandError(f"{item!r}: write each card as NAME=COUNT, e.g. red=3")
        try:
            card = parse_card(name, edition)
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        if card >= COLLECTABLE_KINDS:
            raise CommandError("the last-round card is not part of a collection")
        try:
            count = int(value)
        except ValueError:
            raise CommandError(f"{item!r}: the count must be a whole number") from None
        if count < 0:
            raise CommandError(f"{item!r}: a count cannot be negative")
        if card in given:
            # Summing repeats would hide a typo (red=2 meant as rose=2); say which card and where.
            raise CommandError(
                f"{card_name(card, edition)} is given twice ({given[card]!r} and {item!r}): "
                "give each card once"
            )
        given[card] = item
        counts[card] = count
        if counts[card] > limits[card]:
            raise CommandError(
                f"{counts[card]} × {card_name(card, edition)} is more than the "
                f"{edition.value} edition has ({limits[card]})"
            )
    return counts


def run(args: argparse.Namespace) -> int:
    edition = Edition(args.edition)
    counts = parse_collection(args.cards, edition)
    breakdown = best_score(counts, 7, Table(args.table), PlusColours(args.plus_colours))
    if args.json:
        data = breakdown_dict(breakdown, edition)
        data["table"] = args.table
        json.dump(data, sys.stdout, indent=2, ensure_ascii=False)
        print()
    else:
        print_breakdowns([("collection", breakdown)], edition)
    return 0
