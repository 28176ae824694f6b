"""Subcommands of the ``coloretto`` command line, one module each: each reads its arguments and
calls the library (``coloretto.cli`` puts them together).

Each command module exposes ``register(subparsers)``, which adds its parser and sets ``func``
(taking the parsed arguments, returning an exit code)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

EXIT_USAGE = 2


class CommandError(Exception):
    """A user mistake: printed as one clear line, exit code 2, no traceback."""


def run_parsed(args: argparse.Namespace) -> int:
    """Run a parsed command: its exit code; a :class:`CommandError` is one line on stderr and
    exit code 2, Ctrl-C exit code 130."""
    try:
        return int(args.func(args) or 0)
    except CommandError as exc:
        print(f"coloretto {args.command}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        return 130


def one_command_parser(register: Any) -> argparse.ArgumentParser:
    """A ``coloretto`` parser that knows one command (a command module's ``register``): for a
    command that runs another, or reads its own defaults."""
    parser = argparse.ArgumentParser(prog="coloretto")
    register(parser.add_subparsers(dest="command", metavar="COMMAND"))
    return parser


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
