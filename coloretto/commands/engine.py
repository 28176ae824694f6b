"""``coloretto engine BOT``: serve one of our bots over the engine protocol.

The program reads protocol messages on stdin and answers on stdout (see
``docs/research/engine-protocol.md``), so that any arena, ours included with
``--bot "cmd:coloretto engine greedy"``, can seat the bot in a separate process.
"""

from __future__ import annotations

import argparse

from coloretto.bots import BotSpecError
from coloretto.commands import CommandError
from coloretto.protocol import serve


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "engine",
        help="serve a bot over the JSON-lines engine protocol on stdin/stdout",
        description="Serve one of coloretto's bots over the engine protocol "
        "(docs/research/engine-protocol.md): "
        "JSON messages, one a line, on stdin and stdout. It stops on 'quit' or end of input.",
    )
    parser.add_argument("bot", help="a bot name, e.g. greedy (see coloretto arena --list-bots)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        return serve(args.bot)
    except BotSpecError as exc:
        raise CommandError(str(exc)) from None
