"""``coloretto seed-ratings``: rate the bots' difficulty levels by arena games among them, so that a
new site's leaderboard shows where ``easy`` … ``expert`` stand before people have played them."""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from coloretto.commands import CommandError
from coloretto.commands.options import path_arg, seed_arg

LEVELS = ("easy", "medium", "hard", "expert")


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "seed-ratings",
        help="rate the bot levels of a web site's leaderboard by arena games among them",
        description="Play arena games among the bots' difficulty levels (duplicate deals, the arena's "
        "seatings) and rate them into the web app's database, as rated tables would: each level "
        "is one player, its openskill rating moved game after game from where it stands. Run it "
        "once on a new site (a running server may share the database).",
    )
    parser.add_argument(
        "--data-dir", type=path_arg, default=None, help="the SQLite database's directory (as serve)"
    )
    parser.add_argument(
        "--database-url", default=None, metavar="URL", help="a database URL instead (as serve)"
    )
    parser.add_argument("--games", type=int, default=24, help="games to play (default 24; whole deals)")
    parser.add_argument("--players", type=int, default=4, help="seats at each table (default 4)")
    parser.add_argument(
        "--levels",
        default=",".join(LEVELS),
        help=f"the levels to seat, in turn (default {','.join(LEVELS)})",
    )
    parser.add_argument(
        "--seatings",
        default="rotations",
        choices=["rotations", "all"],
        help="every deal played in each cyclic shift of the seats (default) or every seating",
    )
    parser.add_argument("--seed", type=seed_arg, default=1, help="the deals' seed (default 1)")
    parser.add_argument("--workers", type=int, default=None, help="processes playing (default: the cores)")
    parser.add_argument("--out", type=path_arg, default=None, help="keep the arena's results in DIR")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from coloretto.arena import ArenaError, TournamentConfig, run_tournament
    from coloretto.arena.tournament import TournamentExistsError
    from coloretto.rules import Rules, RulesError
    from coloretto.web.storage.db import DatabaseError, default_data_dir, open_database, sqlite_url
    from coloretto.web.storage.ratings import seed_bot_ratings
    from coloretto.web.table.live import now_utc

    levels = [level.strip() for level in args.levels.split(",") if level.strip()]
    unknown = [level for level in levels if level not in LEVELS]
    if not levels or unknown:
        raise CommandError(
            f"--levels takes the levels {', '.join(LEVELS)}, not {', '.join(unknown) or 'none'}"
        )
    if len(set(levels)) < 2:
        raise CommandError("--levels needs two levels at least: a level alone against itself rates nothing")
    try:
        rules = Rules(players=args.players)
        lineup = tuple(levels[i % len(levels)] for i in range(args.players))
        config = TournamentConfig(rules, lineup, args.games, args.seed, seatings_mode=args.seatings)
    except (RulesError, ArenaError, ValueError) as exc:
        raise CommandError(str(exc)) from None
    if args.database_url:
        url = args.database_url
    else:
        data_dir = args.data_dir or default_data_dir()
        data_dir.mkdir(parents=True, exist_ok=True)
        url = sqlite_url(data_dir)
    try:
        sessions = open_database(url)
    except DatabaseError as exc:
        raise CommandError(str(exc)) from None
    with tempfile.TemporaryDirectory() as scratch:
        out = args.out or Path(scratch)
        try:
            outcome = run_tournament(config, out, workers=args.workers)
        except TournamentExistsError:
            # the arena's own words point at --resume, which seed-ratings does not have
            raise CommandError(
                f"--out {out} already holds a tournament's games: choose another --out"
            ) from None
        except ArenaError as exc:
            raise CommandError(str(exc)) from None
    games = [(tuple(result["bots"]), tuple(float(r) for r in result["ranks"])) for result in outcome.results]
    with sessions() as session, session.begin():
        rated = seed_bot_ratings(session, games, now_utc())
    print(f"{len(games)} games rated{' (interrupted)' if outcome.interrupted else ''}:")
    print(f"{'level':<8} {'ordinal':>8} {'mu':>8} {'sigma':>7} {'games':>6}")
    for row in sorted(rated, key=lambda r: r.mu - 3 * r.sigma, reverse=True):
        print(f"{row.name:<8} {row.mu - 3 * row.sigma:>8.2f} {row.mu:>8.2f} {row.sigma:>7.2f} {row.games:>6}")
    return 130 if outcome.interrupted else 0
