"""Command-line options shared by every command that sets up a game.

The flags are made from :data:`coloretto.rules.RULE_OPTIONS`, so a rule
option added to that table appears here, with its help, without an edit.
"""

from __future__ import annotations

import argparse

from coloretto.cli import CommandError
from coloretto.rules import MAX_PLAYERS, MIN_PLAYERS, RULE_OPTIONS, RuleOption, Rules, RulesError, rule_option

#: what an optional number's flag takes for "the edition's number"
DEFAULT_WORD = "default"


def _help(option: RuleOption) -> str:
    """The option's help, what each choice means or the numbers it takes, and its default."""
    if option.choices is not None:
        meanings = "; ".join(f"{choice}: {option.describe_choice(choice)}" for choice in option.choices)
        text = f"{option.help} ({meanings}; default {option.default})"
    elif option.optional:
        text = f"{option.help}; N ≥ {option.minimum}, or {DEFAULT_WORD} (the default)"
    elif option.maximum is None:
        text = f"{option.help}; N ≥ {option.minimum} (default {option.default})"
    else:
        text = f"{option.help} (default {option.default})"
    return text.replace("%", "%%")  # argparse formats help with %


def _metavar(option: RuleOption) -> str | None:
    if option.choices is not None:
        return None  # argparse shows the choices
    if option.maximum is not None:
        return f"{{{option.minimum}..{option.maximum}}}"
    return f"{{N,{DEFAULT_WORD}}}" if option.optional else "N"


def add_rule_options(parser: argparse.ArgumentParser, players: bool = True) -> None:
    """One flag per rule option (``--joker-timing``), ``--players`` only when
    the command does not count the players itself.

    Every flag keeps the text it was given (None when absent), so that a
    command can tell which options were given; :func:`rules_from_args` reads
    them with the table's own parsing and messages.
    """
    group = parser.add_argument_group("rules")
    for option in RULE_OPTIONS:
        if option.name == "players" and not players:
            continue
        group.add_argument(
            option.flag,
            dest=option.name,
            choices=option.choices,
            default=None,
            metavar=_metavar(option),
            help=_help(option),
        )


def rules_from_args(args: argparse.Namespace, players: int | None = None) -> Rules:
    """The rules the flags ask for (the others at their defaults); ``players``,
    when given, is the number of seats the command has counted."""
    given = {option.name: getattr(args, option.name, None) for option in RULE_OPTIONS}
    if players is not None:
        given["players"] = str(players)
    try:
        values = {name: rule_option(name).parse(text) for name, text in given.items() if text is not None}
        return Rules(**values)
    except RulesError as exc:
        raise CommandError(str(exc)) from None


def player_counts(text: str, flag: str = "--players") -> list[int]:
    """A comma-separated list of player counts (``"2,3,4,5"``), each once, sorted."""
    wanted = f"{flag} takes player counts from {MIN_PLAYERS} to {MAX_PLAYERS}, comma-separated, not {text!r}"
    try:
        counts = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise CommandError(wanted) from None
    if (
        not counts
        or any(not MIN_PLAYERS <= n <= MAX_PLAYERS for n in counts)
        or len(set(counts)) != len(counts)
    ):
        raise CommandError(wanted)
    return sorted(counts)
