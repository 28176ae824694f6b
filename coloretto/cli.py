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
from typing import Any

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
)

EXIT_USAGE = 2
#: The reader of stdout went away (``| head``): the code Python's documentation gives for
#: it, and the one rich uses when a table meets the closed pipe, so every command agrees.
EXIT_BROKEN_PIPE = 1


class CommandError(Exception):
    """A user mistake: printed as one clear line, exit code 2, no traceback."""


class IntermixedParser(argparse.ArgumentParser):
    """A subcommand's parser whose positional arguments may come after its options
    (``coloretto score red=3 --edition modern golden=1``): argparse's
    ``parse_intermixed_args``, which the subcommand machinery does not call itself."""

    _mixing = False  #: inside parse_known_intermixed_args, which calls parse_known_args

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        if self._mixing:
            return super().parse_known_args(args, namespace)
        self._mixing = True
        try:
            return self.parse_known_intermixed_args(args, namespace)
        finally:
            self._mixing = False


def add_intermixed_parser(
    subparsers: argparse._SubParsersAction, name: str, **kwargs: Any
) -> argparse.ArgumentParser:
    """``subparsers.add_parser``, the parser an :class:`IntermixedParser`."""
    default = subparsers._parser_class
    subparsers._parser_class = IntermixedParser
    try:
        parser: argparse.ArgumentParser = subparsers.add_parser(name, **kwargs)
    finally:
        subparsers._parser_class = default
    return parser


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
    try:
        return int(args.func(args) or 0)
    except CommandError as exc:
        print(f"coloretto {args.command}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        return 130


def _silence_stdout() -> None:
    """The reader closed the pipe: point stdout at /dev/null, so that Python's own
    flush at exit does not fail again with a second BrokenPipeError."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())
    finally:
        os.close(devnull)
