"""``coloretto train``: fit the search's learned value on self-play games, from a seed.

The command plays ``--games`` self-play games per player count (classic rules,
2 to 5 players) with the search's playout policy in every seat, in the compiled
kernel, each dealt and played from a seed derived from ``--seed``; of every game
it keeps ``--positions`` positions at random, with each seat's features
(:data:`coloretto.bots.value.FEATURES`) and its future gain (final score minus
its score now). It fits the linear model of the gain per player count on
four games in five and reports, on the fifth held out, the RMSE and R² of the
gain against the naive "gain = 0" and the training games' mean gain, and the
win shares' log loss and Brier score against a uniform guess; then it refits on
every game and writes the model (with the seed, the sizes and the sha256 of the
kernel's source) to ``--out``, by default the shipped
``coloretto/bots/value.json``. The same flags give byte-identical files.
The search uses the model with the ``cut=N`` option (:mod:`coloretto.bots.mcts`).
"""

from __future__ import annotations

import argparse
import json
import time

from coloretto.commands import CommandError
from coloretto.commands.options import (
    check_output_file,
    path_arg,
    player_counts,
    player_counts_in,
    refuse_dropping_players,
    seed_arg,
)


def register(subparsers: argparse._SubParsersAction) -> None:
    from coloretto.bots.value import DEFAULT_GAMES, DEFAULT_POSITIONS, VALUE_FILE

    parser = subparsers.add_parser(
        "train",
        help="fit the search's learned value (cut=N playouts) on self-play games",
        description="Play self-play games of the playout policy in the compiled kernel, fit each seat's "
        "future gain on features of the position (one linear model per player count), report held-out "
        "errors against the naive baselines and write the model. Same seed, same file.",
    )
    parser.add_argument("--seed", type=seed_arg, default=1, help="the seed of every game (default 1)")
    parser.add_argument(
        "--games", type=int, default=DEFAULT_GAMES, help=f"games per player count (default {DEFAULT_GAMES})"
    )
    parser.add_argument(
        "--positions",
        type=int,
        default=DEFAULT_POSITIONS,
        help=f"positions kept per game (default {DEFAULT_POSITIONS})",
    )
    parser.add_argument(
        "--players", default="2,3,4,5", help="player counts, comma-separated (default 2,3,4,5)"
    )
    parser.add_argument(
        "--out",
        type=path_arg,
        default=VALUE_FILE,
        help="where the model goes (default: the shipped value.json)",
    )
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from coloretto.bots import value as V

    players = player_counts(args.players)
    if args.games < V._HELD_OUT:
        raise CommandError(f"--games must be at least {V._HELD_OUT} (every fifth game is held out)")
    if args.positions < 1:
        raise CommandError("--positions must be at least 1")
    if not 0 <= args.seed < 2**32:
        raise CommandError(f"--seed must lie in [0, 2**32), not {args.seed}")
    check_output_file(args.out, "--out")  # before the training, not after it
    held = player_counts_in(args.out, lambda file: V.ValueModel.read(file).models)
    refuse_dropping_players(args.out, "--out", "value model", held, players)
    started = time.process_time()
    models = {}
    for n in players:
        samples = V.self_play(n, args.games, args.positions, args.seed)
        models[n] = V.fit_players(samples, n)
    command = ["coloretto", "train", "--seed", str(args.seed), "--games", str(args.games)]
    command += ["--positions", str(args.positions), "--players", ",".join(map(str, players))]
    model = V.ValueModel(
        models,
        {
            "command": " ".join(command),
            "seed": args.seed,
            "games": args.games,
            "positions": args.positions,
            "policy": "greedy",
            "kernel_sha256": V.kernel_digest(),
        },
    )
    try:
        model.write(args.out)
    except OSError as exc:
        raise CommandError(f"cannot write {args.out}: {exc}") from None
    seconds = time.process_time() - started
    if args.json:
        print(json.dumps({str(n): m.figures for n, m in models.items()} | {"cpu_seconds": round(seconds, 1)}))
        return 0
    print(f"held-out future gain (every fifth game), {args.games} games x {args.positions} positions:")
    print("players   RMSE   R2   | gain=0 RMSE  R2   | mean RMSE  R2  | win log loss (uniform) | temperature")
    for n, m in models.items():
        f = m.figures
        print(
            f"{n:7d} {f['rmse']:6.2f} {f['r2']:5.3f} | {f['rmse_zero']:10.2f} {f['r2_zero']:6.3f} | "
            f"{f['rmse_mean']:8.2f} {f['r2_mean']:6.3f} | "
            f"{f['win_log_loss']:6.3f} ({f['win_log_loss_uniform']:.3f})        | "
            f"{m.temperature:.2f} + {m.temperature_slope:.3f}/unseen card"
        )
    print(f"wrote {args.out} in {seconds:.1f} s of CPU")
    return 0
