"""Difficulty levels for the play screens: ``easy``, ``medium``, ``hard``, ``expert``.

Each level is a name for one bot with a budget that answers in about a second
or less on an ordinary machine:

=========  ==================  ==================================================
level      bot                 how it plays
=========  ==================  ==================================================
easy       ``greedy``          takes whatever raises its score most right now
medium     ``heuristic``       expert rules of thumb, no search
hard       ``mcts:8000,0.5s,   tree search, 8,000 iterations a move (about a
           take=12``           quarter of a second), at most half a second
expert     ``mcts:1s,          tree search, one second per move, two trees
           threads=2,take=12`` searched at once on two cores
=========  ==================  ==================================================

The searching levels' playouts wait for a row worth 12 points before they take
one (``take=12``; plain ``mcts`` waits for 6): in four-player games against
three ``builder`` on the same 200 deals, ``mcts:8000,take=12`` won 50.9 % of
the games and ``mcts:8000`` 42.4 %, no more than ``mcts:2000`` (see the
README's strength section). ``hard`` has an
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
    """The bot of a difficulty level, named as the bot it stands for (``"mcts:8000,0.5s,take=12"``)."""
    try:
        spec = LEVELS[level.strip().lower()]
    except KeyError:
        raise BotSpecError(f"unknown level {level!r}: levels are {', '.join(LEVELS)}") from None
    return make_bot(spec, seed)
