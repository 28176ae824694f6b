"""``coloretto explore-rules``: how a rule option changes the game, for every
choice of the option (see :mod:`coloretto.research.explore` for the measures)."""

from __future__ import annotations

import argparse
from typing import Any

from rich.table import Table

from coloretto.bots import split_bot_list
from coloretto.commands.options import add_rule_options, path_arg, rules_from_args, seed_arg
from coloretto.commands.research_options import (
    add_where_options,
    console,
    out_dir,
    research_call,
    say,
    where_from_args,
)
from coloretto.research.explore import explore_rules
from coloretto.rules import RULE_OPTION_NAMES


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "explore-rules",
        help="how a rule option changes the game: length, spread, first-player advantage, luck",
        description="Let the same bots play every choice of a rule option on the same seeds and "
        "measure the games: actions and rounds, winner − last and the spread of the totals, the "
        "winning score, the first player's win share, and the share of the result the review's "
        "luck figures explain. Example: coloretto explore-rules --option table --bots heuristic",
        epilog="Files: explore.csv, explore.json, explore.png, and each value's arena files and "
        "records under values/. The other rule flags fix the rest of the rules.",
    )
    parser.add_argument(
        "--option",
        required=True,
        metavar="NAME",
        help=f"the rule option: {', '.join(RULE_OPTION_NAMES)}",
    )
    parser.add_argument(
        "--values",
        default=None,
        help="the values to try, comma-separated (default: every choice, or every number of its range)",
    )
    parser.add_argument(
        "--bots",
        default="heuristic",
        help="bots seated in turn around the table, comma-separated: heuristic,greedy or "
        "mcts:500,take=12,heuristic (default heuristic: self-play)",
    )
    parser.add_argument(
        "--games", type=int, default=200, help="games a value, rounded up to whole deals (default 200)"
    )
    parser.add_argument("--review-games", type=int, default=20, help="games reviewed for luck (default 20)")
    parser.add_argument(
        "--review-budget", type=int, default=300, help="review search iterations a position (default 300)"
    )
    parser.add_argument("--seed", type=seed_arg, default=1, help="seed of the deals and reviews (default 1)")
    parser.add_argument(
        "--out", type=path_arg, default=None, metavar="DIR", help="default explore-results/TIME"
    )
    add_where_options(parser)
    add_rule_options(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from coloretto.commands import CommandError

    option = args.option.strip().replace("-", "_")
    if getattr(args, option, None) is not None:
        raise CommandError(f"--option {option} is explored: leave out its flag, --{option.replace('_', '-')}")
    rules = rules_from_args(args)
    where = where_from_args(args)
    out = out_dir(args, "explore-results")
    values = None if args.values is None else [v for v in args.values.split(",")]
    bots = split_bot_list(args.bots)
    document = research_call(
        lambda: explore_rules(
            args.option,
            rules,
            out,
            values=values,
            bots=bots,
            games=args.games,
            review_games=args.review_games,
            review_budget=args.review_budget,
            seed=args.seed,
            where=where,
            progress=say,
        )
    )
    settings = document["settings"]
    table = Table(
        title=f"{settings['option']}: {settings['games']} games a value, bots {', '.join(settings['bots'])}; "
        f"means ± 95 % half-widths; luck from {settings['review_games']} reviewed games",
        title_justify="left",
    )
    for heading in ("value", "actions", "rounds", "winner − last", "sd", "winning score"):
        table.add_column(heading, justify="right", no_wrap=True)
    table.add_column("first player's win share", justify="right", no_wrap=True)
    table.add_column("luck R² (points / win)", justify="right", no_wrap=True)
    for r in document["values"]:
        table.add_row(
            r["value"],
            _mean(r, "actions", 1),
            _mean(r, "rounds", 2),
            _mean(r, "spread", 1),
            _mean(r, "score_sd", 1),
            _mean(r, "winning_score", 1),
            f"{_num(r['first_player_win_share'], 3)} ({_interval(r['first_player_win_share_ci'], 2)}) "
            f"vs {_num(r['parity'], 2)}",
            f"{_num(r['luck_r2_points'], 2)} / {_num(r['luck_r2_win'], 2)}",
        )
    console().print(table)
    say(f"files: {out}/explore.csv, explore.json, explore.png")
    return 0


def _num(value: float | None, digits: int) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def _interval(pair: list[float | None], digits: int) -> str:
    return f"{_num(pair[0], digits)}–{_num(pair[1], digits)}"


def _mean(row: dict[str, Any], key: str, digits: int) -> str:
    low, high = row[key + "_ci"]
    if row[key] is None or low is None or high is None:
        return _num(row[key], digits)
    return f"{row[key]:.{digits}f} ± {(high - low) / 2:.{digits}f}"
