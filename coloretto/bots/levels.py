"""Difficulty levels for the play screens: ``easy``, ``medium``, ``hard``, ``expert``.

Each level is a name for one bot with a budget that answers in about a second
or less on an ordinary machine:

=========  ========================  ============================================
level      bot                       how it plays
=========  ========================  ============================================
easy       ``greedy``                takes whatever raises its score most right now
medium     ``heuristic``             expert rules of thumb, no search
hard       ``mcts:8000,0.5s,         tree search, 8,000 iterations a move (about
           take=12,explore=0.02``    a quarter of a second), at most half a second
expert     ``mcts:1s,threads=2,      tree search, one second per move, two trees
           take=12,explore=0.02``    searched at once on two cores
=========  ========================  ============================================

The searching levels' playouts wait for a row worth 12 points before they take
one (``take=12``; plain ``mcts`` waits for 6) and make a random move 2 % of the
time (``explore=0.02``; plain ``mcts`` 10 %). In four-player games at 8,000
iterations, on the same 150 deals × 4 seatings: against three ``builder``
``mcts:8000,take=12,explore=0.02`` won 59.2 % of the games, with 10 % random
moves 49.1 %, and ``mcts:8000`` (neither) 42.4 % on the first 50 deals; against
three ``heuristic`` 57.5 % and 59.4 %, the same within the noise (see the
docs/ai/index.md). ``hard`` has an
iteration budget, so it plays as strong on any machine fast enough to finish
8,000 iterations in half a second, and the time cap keeps it quick elsewhere.

``make_bot("hard", seed)`` works like any other bot name (the bot keeps the
level's name); the levels are rows of :mod:`coloretto.bots.registry`'s table,
and :data:`LEVELS` maps each to its bot name for screens that want to show it.
"""

from __future__ import annotations

from coloretto.bots.base import Bot, BotSpecError
from coloretto.bots.registry import BUILTIN_KINDS, make_bot

LEVELS: dict[str, str] = {kind.name: kind.plays for kind in BUILTIN_KINDS if kind.plays}


def level_bot(level: str, seed: int | None = None) -> Bot:
    """The bot of a difficulty level, named as the bot it stands for
    (``"mcts:8000,0.5s,take=12,explore=0.02"``)."""
    try:
        spec = LEVELS[level.strip().lower()]
    except KeyError:
        raise BotSpecError(f"unknown level {level!r}: levels are {', '.join(LEVELS)}") from None
    return make_bot(spec, seed)
