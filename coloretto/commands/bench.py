"""``coloretto bench``: how fast the engine plays random games."""

from __future__ import annotations

import argparse
import random
import statistics
import time

from coloretto.commands import CommandError
from coloretto.commands.options import add_rule_options, player_counts, rules_from_args, seed_arg
from coloretto.game import Game
from coloretto.rules import Rules


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "bench",
        help="games per second of random play through the public API",
        description="Play uniformly random games through Game.legal_actions/push and report "
        "games per second for 2 to 5 players: the median of several runs on one core.",
    )
    parser.add_argument("--games", type=int, default=2000, help="games per run (default 2000)")
    parser.add_argument("--runs", type=int, default=5, help="runs per player count (default 5)")
    parser.add_argument("--seed", type=seed_arg, default=1)
    parser.add_argument(
        "--kernel",
        action="store_true",
        help="also measure playouts per second in the compiled MCTS kernel: random, greedy and tuned",
    )
    parser.add_argument(
        "--player-counts", default="2,3,4,5", help="comma-separated player counts (default 2,3,4,5)"
    )
    parser.add_argument(
        "--envs",
        action="store_true",
        help="also measure games per second through the PettingZoo, OpenSpiel and Gymnasium "
        "wrappers, and steps per second of the vectorised environment (needs the rl extra)",
    )
    parser.add_argument(
        "--review",
        type=int,
        default=0,
        metavar="GAMES",
        help="also time the review (coloretto analyze, the default setting, every core up to 4) of "
        "GAMES games per player count, played by heuristic, greedy and builder bots",
    )
    add_rule_options(parser, players=False)
    parser.set_defaults(func=run)


def random_games_per_second(rules: Rules, games: int, seed: int) -> float:
    """Deal and play ``games`` random games; games per second of wall time."""
    rng = random.Random(seed)
    rand = rng.random
    start = time.perf_counter()
    for index in range(games):
        game = Game.new(rules, seed=seed * 1_000_003 + index)
        push = game.push
        while not game.is_over:
            actions = game.legal_actions
            push(actions[int(rand() * len(actions))])
    return games / (time.perf_counter() - start)


def run(args: argparse.Namespace) -> int:
    if args.games < 1 or args.runs < 1:
        raise CommandError("--games and --runs must be at least 1")
    if not 0 <= args.review <= 1000:
        raise CommandError(f"--review takes a number of games from 0 to 1000, not {args.review}")
    counts = player_counts(args.player_counts, "--player-counts")
    print(f"random games through the public API, {args.games} games × {args.runs} runs, one core")
    for players in counts:
        rules = rules_from_args(args, players=players)
        rates = [random_games_per_second(rules, args.games, args.seed + r) for r in range(args.runs)]
        print(
            f"{players} players: median {statistics.median(rates):8.0f} games/s "
            f"(min {min(rates):.0f}, max {max(rates):.0f})"
        )
    if args.kernel:
        bench_kernel(args, counts)
    if args.envs:
        bench_wrappers(args, counts)
    if args.review:
        bench_review(args, counts)
    return 0


def bench_review(args: argparse.Namespace, counts: list[int]) -> None:
    """Seconds to review whole games at the default setting."""
    from coloretto.bots import make_bot
    from coloretto.record import GameRecord
    from coloretto.review import DEFAULT_BUDGET, plan_review, review

    lineup = ("heuristic", "greedy", "builder", "heuristic", "greedy")
    print(f"\nreviews at the default setting ({DEFAULT_BUDGET} iterations per position), {args.review} games")
    for players in counts:
        rules = rules_from_args(args, players=players)
        seconds, moves, searched = [], [], []
        for index in range(args.review):
            seed = args.seed * 1_000_003 + index
            game = Game.new(rules, seed=seed)
            bots = [make_bot(lineup[seat], seed + seat) for seat in range(players)]
            while not game.is_over:
                seat = game.to_move
                assert seat is not None
                game.push(bots[seat].choose(game.observation(seat)))
            record = GameRecord.from_game(game, include_deck=True)
            searched.append(len(plan_review(record).tasks))
            moves.append(len(record.moves))
            start = time.perf_counter()
            review(record, seed=index)
            seconds.append(time.perf_counter() - start)
        print(
            f"{players} players: median {statistics.median(seconds):5.1f} s a game "
            f"(max {max(seconds):.1f}; {statistics.median(moves):.0f} moves, "
            f"{statistics.median(searched):.0f} positions searched)"
        )


def bench_wrappers(args: argparse.Namespace, counts: list[int]) -> None:
    """Random games through each research wrapper (a tenth of --games), beside the engine."""
    try:
        from coloretto.envs.benchmark import VECTOR_ENVS, WRAPPERS, games_per_second, vector_steps_per_second
    except ImportError as exc:
        raise CommandError(f"--envs needs the rl extra (pip install 'coloretto[rl]'): {exc}") from None
    games = max(1, args.games // 10)
    print(f"\nrandom games through the research wrappers, {games} games × {args.runs} runs")
    for players in counts:
        rules = rules_from_args(args, players=players)
        figures = []
        for name in WRAPPERS:
            rates = [games_per_second(name, rules, games, args.seed + r) for r in range(args.runs)]
            figures.append(f"{name} {statistics.median(rates):.0f}")
        print(f"{players} players: " + ", ".join(figures) + " games/s (medians)")
    steps = max(1, args.games // 10)
    print(
        f"\nthe vectorised environment, {VECTOR_ENVS} games at once, {steps} steps × {args.runs} runs "
        "(a tenth against greedy), random legal actions, observations and masks included, one core; "
        "against compiled opponents a step is the learner's, the opponents' moves included"
    )
    for players in counts:
        rules = rules_from_args(args, players=players)
        figures = []
        for label, opponent in (
            ("every seat", None),
            ("learner vs random", "random"),
            ("vs playout", "playout"),
            ("vs greedy", "greedy"),
        ):
            n = max(1, steps // 10) if opponent == "greedy" else steps
            rates = [
                vector_steps_per_second(rules, n, args.seed + r, opponent=opponent) for r in range(args.runs)
            ]
            figures.append(f"{label} {statistics.median(rates):.0f}")
        print(f"{players} players: " + ", ".join(figures) + " steps/s (medians)")


def bench_kernel(args: argparse.Namespace, counts: list[int]) -> None:
    """Playouts per second in the compiled MCTS kernel from a fresh deal (one core)."""
    from coloretto.bots import kernel

    kernel.warm_up()
    playouts = max(100, args.games * 10)
    print(f"\nplayouts in the MCTS kernel from a new deal, {playouts} playouts × {args.runs} runs, one core")
    for players in counts:
        rules = rules_from_args(args, players=players)
        figures = []
        for name, policy in (
            ("random", kernel.POLICY_RANDOM),
            ("greedy", kernel.POLICY_GREEDY),
            ("tuned", kernel.POLICY_TUNED),
        ):
            n = playouts if policy == kernel.POLICY_RANDOM else max(10, playouts // 5)
            rates = [kernel.playouts_per_second(rules, policy, n, args.seed + r) for r in range(args.runs)]
            figures.append(f"{name} {statistics.median(rates):8.0f}")
        print(f"{players} players: " + ", ".join(figures) + " playouts/s (medians)")
