"""``coloretto train-ppo``: train the ``ppo`` bot, PPO with action masking on the CPU.

It trains sb3-contrib's MaskablePPO (CPU PyTorch, one thread) with the learner
in a random seat of ``--players``-player games against compiled opponents in
the vectorised environment (:mod:`coloretto.envs.vector`), then writes the
policy's layers to a ``.npz`` file that the ``ppo`` bot plays in NumPy
(:mod:`coloretto.bots.ppo`). ``--steps`` bounds the environment steps (the
reproducible budget: the same seed and steps give the same file on this
machine's PyTorch build); ``--minutes`` stops earlier on the clock. With
``--eval GAMES`` the arena then measures the policy against the opponents.

Needs the ``ppo`` extra: ``pip install torch==2.13.0 && pip install -e ".[ppo]"``.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from coloretto.commands import CommandError, one_command_parser, run_parsed
from coloretto.commands.options import MINUTES_A_WEEK, check_output_file, number_up_to, path_arg, seed_arg

OPPONENTS = ("greedy", "playout", "random")
REWARDS = ("win", "margin")
#: rewards are divided by this before learning: a margin of 20 points counts as 1
MARGIN_SCALE = 20.0


def register(subparsers: argparse._SubParsersAction) -> None:
    from coloretto.bots.ppo import POLICY_FILE

    parser = subparsers.add_parser(
        "train-ppo",
        help="train the ppo bot: PPO with action masking (sb3-contrib, CPU PyTorch)",
        description="Train a policy network with MaskablePPO against compiled opponents in the vectorised "
        "environment and write it for the ppo bot. The same seed and --steps give the same policy.",
    )
    parser.add_argument("--players", type=int, default=4, help="players per game, 2 to 5 (default 4)")
    parser.add_argument(
        "--opponents",
        default="greedy",
        help=f"the compiled opponents: {', '.join(OPPONENTS)} (default greedy)",
    )
    parser.add_argument(
        "--steps", type=int, default=20_000_000, help="environment steps at most (default 20M)"
    )
    parser.add_argument(
        "--minutes",
        type=number_up_to(MINUTES_A_WEEK, " minutes"),
        default=30.0,
        help="wall-clock minutes at most (default 30)",
    )
    parser.add_argument("--envs", type=int, default=256, help="games stepped together (default 256)")
    parser.add_argument("--reward", choices=REWARDS, default="margin", help="the end reward (default margin)")
    parser.add_argument(
        "--seed", type=seed_arg, default=1, help="seed of the games and the network (default 1)"
    )
    parser.add_argument(
        "--out",
        type=path_arg,
        default=POLICY_FILE,
        help="where the policy goes (default: the shipped ppo.npz)",
    )
    parser.add_argument("--eval", type=int, default=0, metavar="GAMES", help="then play GAMES arena games")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if not 2 <= args.players <= 5:
        raise CommandError(f"--players must be 2 to 5, not {args.players}")
    if args.opponents not in OPPONENTS:
        raise CommandError(f"--opponents must be one of {', '.join(OPPONENTS)}, not {args.opponents!r}")
    if args.steps < args.envs:
        raise CommandError(f"--steps must be at least --envs ({args.envs}), not {args.steps}")
    if not 1 <= args.envs <= 65536:
        raise CommandError(f"--envs must be 1 to 65536, not {args.envs}")
    if args.minutes <= 0:
        raise CommandError(f"--minutes must be positive, not {args.minutes}")
    if not 0 <= args.seed < 2**32:
        raise CommandError(f"--seed must lie in [0, 2**32), not {args.seed}")
    if args.eval < 0:
        raise CommandError(f"--eval must be a number of games, 0 (none) or more, not {args.eval}")
    check_output_file(args.out, "--out")  # before the training, not after it
    try:
        from coloretto.envs import ppo_training as T
    except ImportError as exc:
        raise CommandError(
            f"training needs PyTorch and sb3-contrib ({exc}): "
            "pip install torch==2.13.0 && pip install -e '.[ppo]'"
        ) from None
    settings = T.TrainSettings(
        players=args.players,
        opponents=args.opponents,
        steps=args.steps,
        seconds=args.minutes * 60.0,
        envs=args.envs,
        reward=args.reward,
        seed=args.seed,
    )
    started = time.perf_counter()
    result = T.train(settings, progress=_progress)
    try:
        result.policy.write(args.out)
    except OSError as exc:
        raise CommandError(f"cannot write {args.out}: {exc}") from None
    minutes = (time.perf_counter() - started) / 60.0
    print(
        f"wrote {args.out}: {result.steps:,} steps in {minutes:.1f} min "
        f"({result.steps_per_second:,.0f} steps/s); last episodes' win share {result.recent_win_share:.1%}"
    )
    if args.eval:
        return _evaluate(args)  # the arena's own status: a failed evaluation is not a success
    return 0


def _progress(report: dict[str, Any]) -> None:
    print(
        f"{report['steps']:>11,} steps  {report['minutes']:5.1f} min  {report['steps_per_second']:>7,.0f}/s  "
        f"episodes {report['episodes']:>8,}  win share (last {report['window']}) {report['win_share']:.1%}",
        flush=True,
    )


def _evaluate(args: argparse.Namespace) -> int:
    from coloretto.commands import arena

    against = {"playout": "greedy"}.get(args.opponents, args.opponents)
    arena_args = one_command_parser(arena.register).parse_args(
        [
            "arena",
            "--bot",
            f"ppo:{args.out}",
            "--against",
            against,
            "--players",
            str(args.players),
            "--games",
            str(args.eval),
            "--seatings",
            "rotations",
            "--seed",
            str(args.seed),
        ]
    )
    return run_parsed(arena_args)
