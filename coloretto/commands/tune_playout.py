"""``coloretto tune-playout``: tune the tuned playout policy's weights by self-play, with CMA-ES.

For each player count the command tunes the weights of ``rollout=tuned`` /
``playout:tuned`` (:class:`coloretto.bots.playout_options.PlayoutWeights`) on
whole games in the compiled kernel against a fixed field, every trial on the
same deals, confirms the best few on fresh deals and writes the chosen
weights, with the figures and the command that made them, to ``--out``: by
default the shipped ``coloretto/bots/playout.json``. The same flags give a
byte-identical file. :mod:`coloretto.research.playout_tune` explains the field,
the optimiser and the confirmation.
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

DEFAULT_TRIALS = 600
DEFAULT_GAMES = 4000
DEFAULT_CONFIRM = 16000


def register(subparsers: argparse._SubParsersAction) -> None:
    from coloretto.bots.playout_options import PLAYOUT_FILE

    parser = subparsers.add_parser(
        "tune-playout",
        help="tune the tuned playout policy's weights (rollout=tuned, playout:tuned) by self-play, CMA-ES",
        description="Tune the weights of the tuned playout policy on whole games in the compiled kernel: "
        "one seat plays the candidate, the others a fixed field (the greedy playout, the waiting one, and "
        "imitations of builder and heuristic), every trial on the same deals. The best trials are played "
        "again on fresh deals and the best there is written. Same seed, same file.",
    )
    parser.add_argument(
        "--players", default="2,3,4,5", help="player counts, comma-separated (default 2,3,4,5)"
    )
    parser.add_argument(
        "--trials",
        type=int,
        default=DEFAULT_TRIALS,
        help=f"trials per player count (default {DEFAULT_TRIALS}), rounded up to whole CMA-ES "
        "generations of --population trials each",
    )
    parser.add_argument(
        "--games",
        type=int,
        default=DEFAULT_GAMES,
        help=f"games a trial, rounded up to whole deals (default {DEFAULT_GAMES})",
    )
    parser.add_argument(
        "--confirm",
        type=int,
        default=DEFAULT_CONFIRM,
        metavar="GAMES",
        help=f"fresh games on which the best trials are played again (default {DEFAULT_CONFIRM})",
    )
    parser.add_argument(
        "--population", type=int, default=None, help="CMA-ES population per generation (default: its own)"
    )
    parser.add_argument(
        "--seed", type=seed_arg, default=1, help="the seed of the deals and the optimiser (default 1)"
    )
    parser.add_argument(
        "--out",
        type=path_arg,
        default=PLAYOUT_FILE,
        help="where the weights go (default: the shipped playout.json)",
    )
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from coloretto import __version__
    from coloretto.bots.playout_options import WeightsFile, read_weights_file
    from coloretto.research.playout_tune import FIELD, TuneError, tune_players

    players = player_counts(args.players)
    if args.trials < 1:
        raise CommandError("--trials must be at least 1")
    if args.games < 1 or args.confirm < 1:
        raise CommandError("--games and --confirm must be at least 1")
    if args.population is not None and args.population < 2:
        raise CommandError("--population must be at least 2")
    if not 0 <= args.seed < 2**32:
        raise CommandError(f"--seed must lie in [0, 2**32), not {args.seed}")
    check_output_file(args.out, "--out")  # before the training, not after it
    held = player_counts_in(args.out, lambda file: read_weights_file(file).players)
    refuse_dropping_players(args.out, "--out", "playout weights", held, players)
    started = time.process_time()
    weights = {}
    figures = {}
    for n in players:
        try:
            result = tune_players(
                n,
                args.trials,
                args.games,
                args.seed,
                args.confirm,
                args.population,
                progress=None if args.json else print,
            )
        except TuneError as exc:
            raise CommandError(str(exc)) from None
        weights[n] = result["weights"]
        figures[str(n)] = result["figures"]
    command = ["coloretto", "tune-playout", "--players", ",".join(map(str, players))]
    command += ["--trials", str(args.trials), "--games", str(args.games), "--confirm", str(args.confirm)]
    if args.population is not None:
        command += ["--population", str(args.population)]
    command += ["--seed", str(args.seed)]
    source = {
        "command": " ".join(command),
        "seed": args.seed,
        "optimiser": "CMA-ES (cmaes), from the greedy playout's weights",
        "field": [name for name, _, _ in FIELD],
        "coloretto": __version__,
        "figures": figures,
    }
    try:
        WeightsFile(weights, source).write(args.out)
    except OSError as exc:
        raise CommandError(f"cannot write {args.out}: {exc}") from None
    seconds = time.process_time() - started
    if args.json:
        print(json.dumps(figures | {"cpu_seconds": round(seconds, 1)}))
        return 0
    for n in players:
        confirm = figures[str(n)]["confirm"]
        diff = confirm["difference"]
        print(
            f"{n} players: the tuned weights win {confirm['chosen']['win_share']:.3f} of {confirm['games']} "
            f"fresh games against the field, the greedy playout {confirm['greedy']['win_share']:.3f} "
            f"(difference {diff['mean']:+.3f}, 95 % {diff['low']:+.3f} to {diff['high']:+.3f})"
        )
        print(f"  {weights[n].text()}")
    print(f"wrote {args.out} in {seconds:.1f} s of CPU")
    return 0
