"""``coloretto play``: a game in the terminal, against bots or friends (hot-seat).

Without set-up flags the game is set up on screen. With them::

    coloretto play --players 4 --bots greedy,greedy,random --table violet
    coloretto play --seats greedy,human,random,human --names Ann,Ben,Cy,Di
    coloretto play --resume coloretto-20260101-120000.json
"""

from __future__ import annotations

import argparse
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from coloretto.commands import CommandError, one_command_parser
from coloretto.commands.options import (
    MAX_BOT_DELAY,
    add_rule_options,
    bot_delay,
    path_arg,
    rules_from_args,
    seed_arg,
)
from coloretto.commands.replay import load_record
from coloretto.files import output_file_problem
from coloretto.match import MatchError
from coloretto.record import RecordError
from coloretto.rules import MAX_PLAYERS, MIN_PLAYERS, RULE_OPTION_NAMES

if TYPE_CHECKING:
    from coloretto.tui.session import PlayConfig, PlaySession

#: the rule flags of play (the players are counted from the seats)
RULE_FLAGS = tuple(name for name in RULE_OPTION_NAMES if name != "players")
#: options that set the game up; when none is given the game is set up on screen
SETUP_OPTIONS = ("players", "bots", "seats", *RULE_FLAGS, "first_player")


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "play",
        help="play a game in the terminal, against bots or friends",
        description="Play Coloretto in the terminal. People share the keyboard (hot-seat); bots move "
        "by themselves. Without set-up options the game is set up on screen. "
        "Bots are named as everywhere (random, greedy, …; coloretto arena --list-bots lists them).",
        epilog="Example: coloretto play --players 4 --bots greedy,greedy,random --table violet",
    )
    seats = parser.add_argument_group("seats")
    seats.add_argument(
        "--players", type=int, default=None, help="2 to 5 (default: one person plus the bots, or 4)"
    )
    seats.add_argument(
        "--bots",
        default=None,
        metavar="BOT,BOT",
        help="bots at the table, after the people, e.g. greedy,random or mcts:2000,take=12,heuristic "
        "(a bot's options stay with it)",
    )
    seats.add_argument(
        "--seats",
        default=None,
        metavar="KIND,KIND",
        help="every seat in order, 'human' or a bot, e.g. greedy,human,random",
    )
    seats.add_argument("--names", default=None, metavar="NAME,NAME", help="names of the seats, in order")
    seats.add_argument(
        "--first-player",
        type=int,
        default=None,
        metavar="N",
        help="the seat that starts, counted from 1 (in a match: its first game)",
    )
    add_rule_options(parser, players=False)
    game = parser.add_argument_group("game")
    game.add_argument(
        "--seed", type=seed_arg, default=None, help="deal this game (default: a new random deal)"
    )
    game.add_argument(
        "--bot-delay",
        type=bot_delay,
        default=0.8,
        metavar="SECONDS",
        help=f"pause before each bot move, so you can follow (default 0.8, at most {MAX_BOT_DELAY:g})",
    )
    game.add_argument(
        "--save",
        type=path_arg,
        default=None,
        metavar="FILE",
        help="where the game record is saved (default: coloretto-DATE-TIME.json here, or the resumed file)",
    )
    game.add_argument("--resume", type=path_arg, default=None, metavar="FILE", help="go on with a saved game")
    parser.set_defaults(func=run)


def _split(value: str | None) -> list[str]:
    if value is None:
        return []
    return [part.strip() for part in value.split(",")]


def _defaults() -> argparse.Namespace:
    return one_command_parser(register).parse_args(["play"])


def setup_given(args: argparse.Namespace) -> bool:
    """Whether any option sets the game up (else the set-up screen is shown)."""
    defaults = _defaults()
    return any(getattr(args, key) != getattr(defaults, key) for key in SETUP_OPTIONS)


def default_save_path() -> Path:
    return Path(f"coloretto-{datetime.now(UTC).strftime('%Y%m%d-%H%M%S')}.json")


def prepare(args: argparse.Namespace) -> tuple[PlaySession | None, PlayConfig]:
    """The session to play (None: set it up on screen) and the app's config.

    Every mistake in the options becomes a CommandError.
    """
    from coloretto.tui.session import (
        PlayConfig,
        PlaySession,
        SeatError,
        make_seats,
        repeated_name,
        seat_kind_list,
        seat_kinds_for,
        seats_from_record,
    )

    if args.bot_delay < 0:
        raise CommandError("--bot-delay cannot be negative")
    names = _split(args.names)
    repeated = repeated_name(names)  # checked here too: the set-up screen would refuse it only at its end
    if repeated is not None:
        raise CommandError(f"--names gives two seats the name {repeated!r}: names must differ")
    save_path: Path = args.save or args.resume or default_save_path()
    config = PlayConfig(
        save_path=save_path,
        bot_delay=args.bot_delay,
        seed=args.seed,
        names=tuple(names),
    )
    if args.resume is not None:
        defaults = _defaults()
        changed = [
            key
            for key in (*RULE_FLAGS, "players", "bots", "first_player", "seed")
            if getattr(args, key) != getattr(defaults, key)
        ]
        if changed:
            flag = "--" + changed[0].replace("_", "-")
            raise CommandError(f"{flag} cannot change a saved game: resume it as it was")
        record = load_record(args.resume)
        try:
            seats = seats_from_record(record)
            if names and len(names) != record.rules.players:
                raise SeatError(f"--names gives {len(names)} names for {record.rules.players} seats")
            if args.seats is not None or names:
                kinds = seat_kind_list(args.seats) if args.seats is not None else [s.kind for s in seats]
                if len(kinds) != record.rules.players:
                    players = record.rules.players
                    raise SeatError(f"--seats names {len(kinds)} seats for a {players}-player game")
                seats = make_seats(kinds, names or [s.name for s in seats])
            session = PlaySession.from_record(record, seats)
        except (RecordError, SeatError, MatchError) as exc:
            raise CommandError(f"{args.resume}: {exc}") from None
        if session.match is not None and session.game.is_over and not session.match_over():
            session = session.next_game()  # the match goes on with its next game
        elif session.game.is_over:
            raise CommandError(
                f"{args.resume}: that game is over; see it with coloretto replay {args.resume} --step"
            )
        return _checked_save(session, config, resumed=args.resume), config
    if not setup_given(args):
        # the set-up screen picks the rules: the files a match saves to are checked once it has
        problem = output_file_problem(save_path)
        if problem is not None:
            raise CommandError(f"cannot save the game to {save_path}: {problem}")
        return None, config
    try:
        if args.seats is not None:
            if args.bots is not None:
                raise SeatError("give either --seats or --bots, not both")
            kinds = seat_kind_list(args.seats)
            if args.players is not None and args.players != len(kinds):
                raise SeatError(f"--players {args.players} but --seats names {len(kinds)} seats")
        else:
            bots = seat_kind_list(args.bots) if args.bots is not None else []
            players = args.players if args.players is not None else (len(bots) + 1 if bots else 4)
            if not MIN_PLAYERS <= players <= MAX_PLAYERS:
                raise SeatError(f"Coloretto is for 2 to 5 players, not {players}")
            kinds = seat_kinds_for(players, bots)
        if not MIN_PLAYERS <= len(kinds) <= MAX_PLAYERS:
            raise SeatError(f"Coloretto is for 2 to 5 players, not {len(kinds)}")
        if names and len(names) != len(kinds):
            raise SeatError(f"--names gives {len(names)} names for {len(kinds)} seats: name every seat")
        seats = make_seats(kinds, names)
    except SeatError as exc:
        raise CommandError(str(exc)) from None
    rules = rules_from_args(args, players=len(seats))
    first = None
    if args.first_player is not None:
        if not 1 <= args.first_player <= len(seats):
            raise CommandError(f"--first-player must be a seat from 1 to {len(seats)}")
        first = args.first_player - 1
    session = PlaySession.new(rules, seats, seed=args.seed, first_player=first)
    return _checked_save(session, config), config


def _checked_save(session: PlaySession, config: PlayConfig, resumed: Path | None = None) -> PlaySession:
    """``session``, once it is sure that saving it writes over nobody's file and has
    a directory to go to: checked before the game starts, not when it is saved."""
    assert config.save_path is not None
    problem = session.save_problem(config.save_path, resumed)
    if problem is not None:
        raise CommandError(problem)
    return session


def run(args: argparse.Namespace) -> int:
    session, config = prepare(args)
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise CommandError("coloretto play needs an interactive terminal")
    from coloretto.tui.app import ColorettoApp

    result = ColorettoApp(session, config).run()
    if result is None or not result.started:
        return 0
    if result.summary:
        print(result.summary)
    if result.saved_to is not None and result.left_unsaved:
        print(
            f"The last moves were not saved; {result.saved_to} holds the game as it was saved before them: "
            f"coloretto play --resume {result.saved_to}"
        )
    elif result.saved_to is not None:
        if result.finished:
            print(f"The game is saved to {result.saved_to}: coloretto replay {result.saved_to} --step")
        else:
            print(f"The game is saved to {result.saved_to}: coloretto play --resume {result.saved_to}")
    elif not result.finished:
        print("The game was not saved.")
    return 0
