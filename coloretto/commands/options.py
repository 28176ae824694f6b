"""Command-line options shared by every command that sets up a game."""

from __future__ import annotations

import argparse

from coloretto.cards import Edition
from coloretto.cli import CommandError
from coloretto.rules import JokerTiming, PlusColours, RoundStarter, Rules, RulesError, Table, TieBreak


def add_rule_options(parser: argparse.ArgumentParser, players: bool = True) -> None:
    """The rule variants, by the names of coloretto.rules."""
    group = parser.add_argument_group("rules")
    if players:
        group.add_argument("--players", type=int, default=4, help="2 to 5 (default 4)")
    group.add_argument("--edition", choices=[e.value for e in Edition], default="classic")
    group.add_argument("--table", choices=[t.value for t in Table], default="brown", help="scoring table")
    group.add_argument(
        "--joker-timing",
        choices=[j.value for j in JokerTiming],
        default="scoring",
        help="jokers get their colour at scoring (default) or are named when taken",
    )
    group.add_argument(
        "--round-starter",
        choices=[r.value for r in RoundStarter],
        default="last-taker",
        help="who starts the next round",
    )
    group.add_argument(
        "--plus-colours",
        choices=[p.value for p in PlusColours],
        default="best",
        help="which three colours score plus",
    )
    group.add_argument("--tie-break", choices=[t.value for t in TieBreak], default="shared")
    group.add_argument(
        "--cards-under-last-round",
        type=int,
        default=None,
        metavar="N",
        help="house rule: move the last-round card (default: the edition's)",
    )
    group.add_argument("--match-games", type=int, default=1, metavar="N", help="games in a match")


def rules_from_args(args: argparse.Namespace, players: int | None = None) -> Rules:
    try:
        return Rules(
            players=players if players is not None else args.players,
            edition=args.edition,
            table=args.table,
            joker_timing=args.joker_timing,
            round_starter=args.round_starter,
            plus_colours=args.plus_colours,
            tie_break=args.tie_break,
            cards_under_last_round=args.cards_under_last_round,
            match_games=args.match_games,
        )
    except RulesError as exc:
        raise CommandError(str(exc)) from None
