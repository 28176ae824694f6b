"""What the research commands share on the command line: where the games run,
the output directory, and turning a research error into the CLI's one line."""

from __future__ import annotations

import argparse
import datetime as dt
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from rich.console import Console

from coloretto.arena.backends import BACKENDS, default_workers
from coloretto.commands import CommandError
from coloretto.commands.options import check_output_dir
from coloretto.research.common import ResearchError, Where

T = TypeVar("T")


def add_where_options(parser: argparse.ArgumentParser) -> None:
    where = parser.add_argument_group("where the games run (the arena's backends)")
    where.add_argument("--backend", choices=BACKENDS, default="pool", help="default: a process pool")
    where.add_argument(
        "--workers",
        type=int,
        default=None,
        metavar="N",
        help=f"worker processes (default: all cores, here {default_workers()}); Ray: local CPUs",
    )
    where.add_argument("--address", default=None, help="Ray cluster address (default: RAY_ADDRESS, or local)")


def where_from_args(args: argparse.Namespace) -> Where:
    if args.workers is not None and args.workers < 1:
        raise CommandError("--workers must be at least 1")
    # one worker in a pool is the serial backend without the pool's process
    backend = "serial" if args.backend == "pool" and args.workers == 1 else args.backend
    return Where(backend, args.workers, args.address)


def out_dir(args: argparse.Namespace, root: str) -> Path:
    """``--out``, else ``ROOT/TIME`` (a fresh directory each run)."""
    if args.out is not None:
        check_output_dir(args.out, "--out")
        return Path(args.out)
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%d-%H%M%S")
    out = Path(root) / stamp
    number = 1
    while out.exists():
        number += 1
        out = Path(root) / f"{stamp}-{number}"
    return out


def console() -> Console:
    """The terminal for result tables; a file or a pipe gets whole lines."""
    shown = Console()
    return shown if shown.is_terminal else Console(width=160)


def say(text: str) -> None:
    """Progress, on stderr: stdout keeps the results."""
    print(text, file=sys.stderr, flush=True)


def research_call(fn: Callable[[], T]) -> T:
    """Run a research function; its errors become the CLI's one-line errors."""
    try:
        return fn()
    except ResearchError as exc:
        raise CommandError(str(exc)) from None
