"""``coloretto arena``: a tournament between bots, with honest statistics.

Duplicate play: each deal is replayed with the bots in every seating. Results
go to ``--out DIR`` as they finish (``--resume DIR`` continues after Ctrl-C),
and the summary is printed as tables and saved as JSON, CSV and a PNG chart.
"""

from __future__ import annotations

import argparse
import datetime as dt
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from coloretto.arena.backends import BACKENDS, default_workers
from coloretto.arena.config import COMMAND_PREFIX, ArenaError, Seatings, TournamentConfig
from coloretto.arena.output import print_summary
from coloretto.arena.tournament import load_settings, run_tournament
from coloretto.bots import BotSpecError, available_bots
from coloretto.bots import check_bot as read_bot_name
from coloretto.commands import CommandError
from coloretto.commands.options import (
    add_rule_options,
    check_output_dir,
    move_seconds,
    path_arg,
    rules_from_args,
    seed_arg,
)
from coloretto.rules import RULE_OPTION_NAMES

_PARSER: argparse.ArgumentParser | None = None
#: options that define a tournament: --resume takes them from the saved settings
_DEFINING = (
    "bot",
    "against",
    "seed",
    "seatings",
    "move_time",
    "time_margin",
    "startup_time",
    "records",
    "out",
    *RULE_OPTION_NAMES,
)


def register(subparsers: argparse._SubParsersAction) -> None:
    global _PARSER
    parser = subparsers.add_parser(
        "arena",
        help="a tournament between bots, with win shares, intervals and ratings",
        description="Play a tournament between bots. Each deal is replayed with the bots in every "
        "seating (duplicate play), so luck of the deal evens out. Example, one heuristic bot "
        "against three greedy ones: coloretto arena --bot heuristic --against greedy --games 2000",
        epilog="Bots: any registered name (see --list-bots), or cmd:COMMAND for a program "
        "speaking the engine protocol (docs/research/engine-protocol.md), e.g. "
        '--bot "cmd:python my_bot.py". Ctrl-C stops and saves; --resume DIR continues. '
        "Seats count from 1 in the tables, games.csv and forfeits.log, and from 0 in the JSON files.",
    )
    lineup = parser.add_argument_group("lineup")
    lineup.add_argument(
        "--bot",
        action="append",
        default=None,
        metavar="BOT",
        help="a bot for one seat; repeat it for each seat",
    )
    lineup.add_argument(
        "--against",
        default=None,
        metavar="BOT",
        help="fill the seats --bot leaves empty with this bot (one X against three Y)",
    )
    lineup.add_argument("--list-bots", action="store_true", help="list the bot names and exit")
    play = parser.add_argument_group("tournament")
    play.add_argument("--games", type=int, default=None, help="games to play (default 100; rounded up "
                      "to whole deals, each played in every seating)")  # fmt: skip
    play.add_argument("--seed", type=seed_arg, default=None, help="tournament seed (default 1)")
    play.add_argument(
        "--seatings",
        choices=[s.value for s in Seatings],
        default=None,
        help="all: every distinct seating of the lineup per deal (default); rotations: its cyclic shifts",
    )
    play.add_argument(
        "--move-time",
        type=move_seconds,
        default=None,
        metavar="S",
        help="seconds a bot may think per move, at most (default 1); a bot may declare less "
        "(mcts:0.5s), and one that declares more (mcts:5s) is refused",
    )
    play.add_argument(
        "--time-margin",
        type=move_seconds,
        default=None,
        metavar="S",
        help="seconds past the budget before a bot forfeits (default 0.5)",
    )
    play.add_argument(
        "--startup-time",
        type=move_seconds,
        default=None,
        metavar="S",
        help="seconds an external program has to start and answer (default 10)",
    )
    where = parser.add_argument_group("where it runs")
    where.add_argument("--backend", choices=BACKENDS, default="pool", help="default: a process pool")
    where.add_argument(
        "--workers",
        type=int,
        default=None,
        metavar="N",
        help=f"worker processes (default: all cores, here {default_workers()}); Ray: local CPUs",
    )
    where.add_argument("--address", default=None, help="Ray cluster address (default: RAY_ADDRESS, or local)")
    files = parser.add_argument_group("files")
    files.add_argument(
        "--out",
        type=path_arg,
        default=None,
        metavar="DIR",
        help="results directory (default arena-results/TIME)",
    )
    files.add_argument(
        "--records", type=path_arg, default=None, metavar="DIR", help="keep every game's record here"
    )
    files.add_argument(
        "--resume", type=path_arg, default=None, metavar="DIR", help="continue the tournament saved in DIR"
    )
    files.add_argument("--no-progress", action="store_true", help="no progress bar")
    add_rule_options(parser)
    parser.set_defaults(func=run)
    _PARSER = parser


def lineup_from_args(args: argparse.Namespace, players: int) -> tuple[str, ...]:
    bots = [b.strip() for b in (args.bot or [])]
    if args.against:
        if len(bots) >= players:
            raise CommandError(f"--against has no seat to fill: {len(bots)} bots for {players} seats")
        bots += [args.against.strip()] * (players - len(bots))
    if not bots:
        raise CommandError("name the bots: --bot X (once per seat), or --bot X --against Y")
    if len(bots) != players:
        raise CommandError(
            f"{len(bots)} bot(s) for {players} seats: give one --bot per seat, "
            "or --against BOT to fill the rest, or --players"
        )
    for spec in bots:
        check_bot(spec)
    if len(set(bots)) < 2:
        raise CommandError("a tournament needs at least two different bots")
    return tuple(bots)


def check_bot(spec: str) -> None:
    if spec.startswith(COMMAND_PREFIX):
        if not spec[len(COMMAND_PREFIX) :].strip():
            raise CommandError(f"{spec!r}: give the command after cmd:, e.g. 'cmd:python my_bot.py'")
        return
    try:
        read_bot_name(spec)
    except BotSpecError as exc:
        raise CommandError(str(exc)) from None


def _default_out() -> Path:
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%d-%H%M%S")
    out = Path("arena-results") / stamp
    number = 1
    while out.exists():
        number += 1
        out = Path("arena-results") / f"{stamp}-{number}"
    return out


def _given(args: argparse.Namespace, dests: Sequence[str]) -> list[str]:
    assert _PARSER is not None
    return [d for d in dests if getattr(args, d, None) != _PARSER.get_default(d)]


def config_from_args(args: argparse.Namespace) -> tuple[TournamentConfig, Path, Path | None, bool]:
    """(config, output directory, records directory, resume?)."""
    if args.resume is not None:
        given = _given(args, _DEFINING)
        if given:
            flags = ", ".join("--" + d.replace("_", "-") for d in given)
            raise CommandError(f"--resume continues the tournament saved in {args.resume}; leave out {flags}")
        try:
            config, records = load_settings(args.resume)
            if args.games is not None:
                config = config.with_games(args.games)
        except ArenaError as exc:
            raise CommandError(str(exc)) from None
        return config, args.resume, records, True
    rules = rules_from_args(args)
    lineup = lineup_from_args(args, rules.players)
    out = args.out if args.out is not None else _default_out()
    # before anything is made: a --records file must not leave the --out directory behind
    check_output_dir(out, "--out")
    if args.records is not None:
        check_output_dir(args.records, "--records")
    try:
        config = TournamentConfig(
            rules=rules,
            lineup=lineup,
            games=100 if args.games is None else args.games,
            seed=1 if args.seed is None else args.seed,
            seatings_mode=Seatings(args.seatings or "all"),
            move_time=1.0 if args.move_time is None else args.move_time,
            time_margin=0.5 if args.time_margin is None else args.time_margin,
            startup_time=10.0 if args.startup_time is None else args.startup_time,
            keep_records=args.records is not None,
        )
    except ArenaError as exc:
        raise CommandError(str(exc)) from None
    return config, out, args.records, False


class RunningFigures:
    """The progress bar's running win shares."""

    def __init__(self, lineup: Sequence[str]) -> None:
        self.names = list(dict.fromkeys(lineup))
        self.games = dict.fromkeys(self.names, 0)
        self.wins = dict.fromkeys(self.names, 0.0)
        self.forfeits = 0

    def add(self, result: dict[str, Any]) -> None:
        for seat, name in enumerate(result["bots"]):
            self.games[name] += 1
            self.wins[name] += result["win_shares"][seat]
        self.forfeits += len(result["forfeits"])

    def text(self) -> str:
        parts = [f"{n} {100 * self.wins[n] / self.games[n]:.1f}%" for n in self.names if self.games[n]]
        if self.forfeits:
            parts.append(f"{self.forfeits} forfeit(s)")
        return "  ".join(parts)


def run(args: argparse.Namespace) -> int:
    if args.list_bots:
        for name, description in available_bots().items():
            print(f"{name:12} {description}")
        print(f"{'cmd:COMMAND':12} a program speaking the engine protocol (docs/research/engine-protocol.md)")
        return 0
    if args.workers is not None and args.workers < 1:
        raise CommandError("--workers must be at least 1")
    if args.games is not None and args.games < 1:
        raise CommandError("--games must be at least 1")
    config, out, records, resume = config_from_args(args)
    console = Console()
    if not console.is_terminal:
        console = Console(width=160)  # a file or a pipe: keep whole tables
    status = Console(stderr=True)
    backend = "serial" if args.backend == "pool" and args.workers == 1 else args.backend
    status.print(
        f"{config.total_games} games ({config.deals} deals × {len(config.seatings)} seatings), "
        f"{config.rules.describe()}: {', '.join(config.lineup)}; results in {out}",
        markup=False,
        soft_wrap=True,
        highlight=False,
    )
    figures = RunningFigures(config.lineup)
    already = 0
    if resume:
        from coloretto.arena.tournament import load_results

        try:
            for result in load_results(out, config):
                if result["game"] < config.total_games:
                    figures.add(result)
                    already += 1
        except ArenaError as exc:
            raise CommandError(str(exc)) from None
    progress = Progress(
        TextColumn("[bold]arena"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        TextColumn("{task.fields[running]}"),
        console=status,
        disable=args.no_progress,
        transient=False,
    )
    task = progress.add_task("games", total=config.total_games, completed=already, running=figures.text())

    def on_result(result: dict[str, Any], done: int, total: int) -> None:
        figures.add(result)
        progress.update(task, completed=done, running=figures.text())

    try:
        with progress:
            outcome = run_tournament(
                config,
                out,
                backend=backend,
                workers=args.workers,
                address=args.address,
                records_dir=records,
                resume=resume,
                on_result=on_result,
            )
    except ArenaError as exc:
        raise CommandError(str(exc)) from None
    print_summary(console, outcome.document)
    status.print(
        f"results: {out}/results.json, bots.csv, head_to_head.csv, games.csv, chart.png",
        markup=False,
        soft_wrap=True,
    )
    if records is not None:
        status.print(f"records: {records}/ (open one with coloretto replay)", markup=False, soft_wrap=True)
    if outcome.interrupted:
        status.print(
            f"interrupted: {len(outcome.results)} of {config.total_games} games saved; "
            f"continue with: coloretto arena --resume {out}",
            markup=False,
            soft_wrap=True,
        )
        return 130
    return 0
