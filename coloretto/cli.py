"""The ``coloretto`` command: one subcommand per module.

Each command module exposes ``register(subparsers)``, which adds its parser
and sets ``func`` (taking the parsed arguments, returning an exit code). Add
a module to ``COMMAND_MODULES`` to add a subcommand.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

from coloretto.commands import EXIT_USAGE, CommandError, IntermixedParser, add_intermixed_parser, run_parsed

__all__ = [
    "COMMAND_MODULES", "EXIT_USAGE", "CommandError", "IntermixedParser", "add_intermixed_parser",
    "build_parser", "main",
]  # fmt: skip

COMMAND_MODULES = (
    "coloretto.commands.score",
    "coloretto.commands.replay",
    "coloretto.commands.bench",
    "coloretto.commands.serve",
    "coloretto.commands.play",
    "coloretto.commands.arena",
    "coloretto.commands.tune",
    "coloretto.commands.tune_playout",
    "coloretto.commands.ladder",
    "coloretto.commands.explore_rules",
    "coloretto.commands.engine",
    "coloretto.commands.analyze",
    "coloretto.commands.calibrate",
    "coloretto.commands.train",
    "coloretto.commands.train_ppo",
    "coloretto.commands.loadtest",
    "coloretto.commands.seed_ratings",
    "coloretto.commands.backup",
    "coloretto.commands.admin",
)

#: The reader of stdout went away (``| head``): the code Python's documentation gives for
#: it, and the one rich uses when a table meets the closed pipe, so every command agrees.
EXIT_BROKEN_PIPE = 1


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="coloretto",
        description="Coloretto, the card game by Michael Schacht: play, score, replay, analyse.",
    )
    from coloretto import __version__

    parser.add_argument("--version", action="version", version=f"coloretto {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    try:
        try:
            return _dispatch(argv)
        finally:
            # Flush here, not at exit (also after argparse's --help exits), so that a
            # reader gone away (``| head``) is caught below for every command.
            sys.stdout.flush()
    except BrokenPipeError:
        _silence_stdout()
        return EXIT_BROKEN_PIPE


def _dispatch(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return EXIT_USAGE
    return run_parsed(args)


def _silence_stdout() -> None:
    """The reader closed the pipe: point stdout at /dev/null, so that Python's own
    flush at exit does not fail again with a second BrokenPipeError."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())
    finally:
        os.close(devnull)
