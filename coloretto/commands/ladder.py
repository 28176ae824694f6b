"""``coloretto ladder``: a family of bots at several budgets against one field
on the same deals, a skill ladder (see :mod:`coloretto.research.ladder`)."""

from __future__ import annotations

import argparse

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
from coloretto.research.ladder import ladder, parse_budgets


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "ladder",
        help="strength against budget for a family of bots (a skill ladder), with a chart",
        description="Play a family of bots at several budgets, each against the same field on the "
        "same deals. Example: coloretto ladder 'mcts:{n},take=12' --budgets 250,1000,4000 "
        "--against heuristic",
        epilog="Files: ladder.csv, ladder.json, ladder.png, and each rung's arena files under rungs/. "
        "Seconds per move are timed in this process on each rung's first games (--timed-games).",
    )
    parser.add_argument(
        "family", metavar="FAMILY", help="a bot name with {n} for the budget: 'mcts:{n},take=12'"
    )
    parser.add_argument("--budgets", required=True, help="the budgets, e.g. 250,1000,4000")
    parser.add_argument(
        "--against",
        action="append",
        required=True,
        metavar="BOT",
        help="the field: once to fill every other seat, or once per other seat",
    )
    parser.add_argument(
        "--games", type=int, default=100, help="games a rung, rounded up to whole deals (default 100)"
    )
    parser.add_argument("--seed", type=seed_arg, default=1, help="seed of the deals (default 1)")
    parser.add_argument(
        "--timed-games",
        type=int,
        default=1,
        metavar="N",
        help="games of each rung replayed here to time its moves (default 1; 0: no timing)",
    )
    parser.add_argument(
        "--out", type=path_arg, default=None, metavar="DIR", help="default ladder-results/TIME"
    )
    add_where_options(parser)
    add_rule_options(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    rules = rules_from_args(args)
    where = where_from_args(args)
    out = out_dir(args, "ladder-results")
    document = research_call(
        lambda: ladder(
            args.family,
            parse_budgets(args.budgets),
            args.against,
            rules,
            out,
            games=args.games,
            seed=args.seed,
            timed_games=args.timed_games,
            where=where,
            progress=say,
        )
    )
    settings = document["settings"]
    table = Table(
        title=f"{settings['family']} against {', '.join(dict.fromkeys(settings['against']))}: "
        f"{settings['games']} games a rung, the same deals (95 % intervals in brackets)",
        title_justify="left",
    )
    for heading in ("budget", "win share", "mean score", "margin", "s/move", "forfeits"):
        table.add_column(heading, justify="right", no_wrap=True)
    table.add_column("bot", overflow="fold")
    for r in document["rungs"]:
        low, high = r["win_share_ci"]
        seconds = "—" if r["seconds_per_move"] is None else f"{r['seconds_per_move']:.4f}"
        table.add_row(
            f"{r['budget']:g}",
            f"{r['win_share']:.3f} ({low:.3f}–{high:.3f})",
            f"{r['mean_score']:.1f}",
            f"{r['mean_margin']:+.2f}",
            seconds,
            str(r["forfeits"]),
            r["bot"],
        )
    console().print(table)
    print(f"parity (an equal bot's win share): {document['parity']:.3f}")
    say(f"files: {out}/ladder.csv, ladder.json, ladder.png")
    return 0
