"""``coloretto tune``: tune a bot's numeric options against a field with optuna.

Every trial plays the same duplicate deals (common random numbers); see
:mod:`coloretto.research.tune` for the objective and the search.
"""

from __future__ import annotations

import argparse
import math
from typing import Any

from rich.table import Table

from coloretto.commands.options import add_rule_options, path_arg, rules_from_args, seed_arg
from coloretto.commands.research_options import (
    add_where_options,
    console,
    out_dir,
    research_call,
    say,
    where_from_args,
)
from coloretto.research.tune import OBJECTIVES, TUNABLE, tune

#: trials shown on the terminal (all of them are in trials.csv)
TOP = 5


def register(subparsers: argparse._SubParsersAction) -> None:
    ranges = "; ".join(f"{kind}: " + ", ".join(p.text() for p in params) for kind, params in TUNABLE.items())
    parser = subparsers.add_parser(
        "tune",
        help="tune a bot's numeric options against a field of bots (optuna, duplicate deals)",
        description="Search a bot's numeric options for the most wins against a field. Every trial "
        "plays the same deals in the same seatings, so trials differ by the options only. "
        "Example: coloretto tune mcts:500 --against heuristic --trials 30 --games 40",
        epilog=f"Options tuned by default, with their ranges: {ranges}. Trial 0 is the bot as given. "
        "Files: trials.csv, trials.json, history.png, and each trial's arena files under trials/.",
    )
    parser.add_argument("bot", metavar="BOT", help="the bot to tune, e.g. mcts:500 or mcts:500,take=12")
    parser.add_argument(
        "--against",
        action="append",
        required=True,
        metavar="BOT",
        help="the field: once to fill every other seat, or once per other seat",
    )
    parser.add_argument("--trials", type=int, default=30, help="trials (default 30)")
    parser.add_argument(
        "--games", type=int, default=40, help="games a trial, rounded up to whole deals (default 40)"
    )
    parser.add_argument(
        "--seed", type=seed_arg, default=1, help="seed of the deals and the sampler (default 1)"
    )
    parser.add_argument(
        "--param",
        action="append",
        default=None,
        metavar="NAME=LOW:HIGH",
        help="an option to tune and its range, e.g. c=0.3:1.5; repeat it (default: every tunable option "
        "the name does not fix)",
    )
    parser.add_argument(
        "--objective",
        choices=OBJECTIVES,
        default="win",
        help="win: the win share, margin breaking ties (default); margin: the mean score margin, win share "
        "breaking ties",
    )
    parser.add_argument(
        "--confirm",
        type=int,
        default=0,
        metavar="GAMES",
        help="then play the best and the bot as given against the field on GAMES fresh deals",
    )
    parser.add_argument("--out", type=path_arg, default=None, metavar="DIR", help="default tune-results/TIME")
    add_where_options(parser)
    add_rule_options(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    rules = rules_from_args(args)
    where = where_from_args(args)
    out = out_dir(args, "tune-results")
    document = research_call(
        lambda: tune(
            args.bot,
            args.against,
            rules,
            out,
            trials=args.trials,
            games=args.games,
            seed=args.seed,
            params=args.param,
            objective=args.objective,
            confirm=args.confirm,
            where=where,
            progress=say,
        )
    )
    best = document["best"]
    table = Table(title="the best trials (95 % intervals in brackets)", title_justify="left")
    for heading in ("trial", "win share", "mean score", "margin"):
        table.add_column(heading, justify="right", no_wrap=True)
    table.add_column("bot", overflow="fold")
    keys = ("win_share", "mean_margin") if args.objective == "win" else ("mean_margin", "win_share")

    def rank(trial: dict[str, Any]) -> tuple[float, ...]:
        return tuple(-math.inf if trial[k] is None else trial[k] for k in keys)

    ranked = sorted(document["trials"], key=rank, reverse=True)
    for t in ranked[:TOP]:
        low, high = t["win_share_ci"]
        table.add_row(
            str(t["trial"]),
            f"{t['win_share']:.3f} ({low:.3f}–{high:.3f})",
            f"{t['mean_score']:.1f}",
            f"{t['mean_margin']:+.2f}",
            t["bot"],
        )
    console().print(table)
    if "confirm" in document:
        c = document["confirm"]
        diff = c["win_share_difference"]
        if c["best"]["bot"] == c["untuned"]["bot"]:
            print(
                f"the bot as given was the best; on {c['best']['games']} fresh games "
                f"its win share is {c['best']['win_share']:.3f}"
            )
        else:
            print(
                f"on {c['best']['games']} fresh games: best {c['best']['win_share']:.3f}, "
                f"as given {c['untuned']['win_share']:.3f}, difference {diff['mean']:+.3f} "
                f"({diff['ci'][0]:+.3f} to {diff['ci'][1]:+.3f})"
            )
    say(f"files: {out}/trials.csv, trials.json, history.png")
    print(best["bot"])
    if document.get("interrupted"):
        finished = len(document["trials"])
        say(
            f"interrupted: the best of the {finished} finished trial{'s' if finished != 1 else ''} "
            f"of {args.trials}" + (", not confirmed" if args.confirm else "")
        )
        return 130
    return 0
