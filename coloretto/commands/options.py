"""Command-line options shared by the commands: the rule flags of every
command that sets up a game, the readers of numbers and paths, and the checks
of output paths that every command makes before its work starts.

The rule flags are made from :data:`coloretto.rules.RULE_OPTIONS`, so a rule
option added to that table appears here, with its help, without an edit.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from coloretto.commands import CommandError
from coloretto.files import output_file_problem
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


# ------------------------------------------------------------------ numbers and paths


def finite_number(text: str) -> float:
    """argparse ``type`` of every float option: a finite number (``inf`` and ``nan``
    would pass ``float``, and then hang a wait or overflow a clock)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"must be a finite number, not {text!r}")
    return value


def number_up_to(highest: float, unit: str = "") -> Callable[[str], float]:
    """argparse ``type``: a finite number no greater than ``highest`` (in ``unit``)."""

    def read(text: str) -> float:
        value = finite_number(text)
        if value > highest:
            raise argparse.ArgumentTypeError(f"must be at most {highest:g}{unit}, not {text!r}")
        return value

    return read


#: the longest pause before a bot's move (a longer one only looks like a hang)
MAX_BOT_DELAY = 60.0
#: the most seconds a move, a margin or a start may be given (an hour: far more than any bot needs)
MAX_MOVE_SECONDS = 3600.0
SECONDS_A_DAY = 24 * 3600.0
MINUTES_A_WEEK = 7 * 24 * 60.0
MINUTES_A_YEAR = 365 * 24 * 60.0
HOURS_A_YEAR = 365 * 24.0
#: argparse ``type`` of a bot delay, the same in play, serve and loadtest
bot_delay = number_up_to(MAX_BOT_DELAY, " seconds")
#: argparse ``type`` of seconds for a move (thinking time, margins, start-up)
move_seconds = number_up_to(MAX_MOVE_SECONDS, " seconds")


#: the largest seed: what a 64-bit signed integer holds (records and databases keep seeds)
MAX_SEED = 2**63 - 1


def seed_arg(text: str) -> int:
    """argparse ``type`` of every ``--seed``: a whole number from 0 (Python's generator
    seeds with the absolute value, so -5 would silently deal the games of 5)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a seed is a whole number, not {text!r}") from None
    if not 0 <= value <= MAX_SEED:
        raise argparse.ArgumentTypeError(f"a seed is a whole number from 0 to 2**63 - 1, not {text!r}")
    return value


def path_arg(text: str) -> Path:
    """argparse ``type`` of every path option: ``Path("")`` would be the current folder."""
    if not text.strip():
        raise argparse.ArgumentTypeError("the path is empty")
    return Path(text)


def check_output_file(file: Path, flag: str) -> None:
    """A CommandError when ``file`` cannot be written (see :func:`output_file_problem`)."""
    problem = output_file_problem(file)
    if problem is not None:
        raise CommandError(f"{flag} {file}: {problem}")


def player_counts_in(file: Path, read: Callable[[Path], Iterable[int]]) -> Iterable[int]:
    """The player counts ``read`` finds in ``file``: none when there is no such
    file, or it is not of ``read``'s kind (its ValueError: nothing in it to keep)."""
    if not file.is_file():
        return ()
    try:
        return read(file)
    except (OSError, ValueError):
        return ()


def refuse_dropping_players(
    file: Path, flag: str, what: str, held: Iterable[int], given: Iterable[int]
) -> None:
    """A CommandError, before any work, when writing ``file`` anew would drop the
    ``what`` it holds for player counts this run does not make (``held``: the
    counts the file has now, e.g. from :func:`player_counts_in`; ``given``: this
    run's). A file holds one command's work, so a run for some counts does not
    mix with an older run's others."""
    given = sorted(set(given))
    dropped = sorted(set(held) - set(given))
    if dropped:
        every = ",".join(str(n) for n in sorted(set(given) | set(dropped)))
        raise CommandError(
            f"{flag} {file} holds the {what} for {_counts(dropped)} players too, which this run "
            f"(--players {','.join(map(str, given))}) would drop: give --players {every} to make them all "
            f"again, or write to another {flag}"
        )


def _counts(counts: Sequence[int]) -> str:
    words = [str(n) for n in counts]
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def check_output_dir(folder: Path, flag: str) -> None:
    """A CommandError when ``folder`` cannot be made or used as a directory: it is
    a file, or a path above it is a file. Checked before anything is created."""
    if folder.exists() and not folder.is_dir():
        raise CommandError(f"{flag} {folder}: it is a file, not a directory")
    for above in folder.parents:
        if above.exists():
            if not above.is_dir():
                raise CommandError(f"{flag} {folder}: {above} is not a directory")
            break
