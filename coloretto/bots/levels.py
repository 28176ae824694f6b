"""Difficulty levels for the play screens: ``easy``, ``medium``, ``hard``, ``expert``.

Each level is a name for one bot with a budget that answers in about a second
or less on an ordinary machine:

=========  =================  ==================================================
level      bot                how it plays
=========  =================  ==================================================
easy       ``greedy``         takes whatever raises its score most right now
medium     ``heuristic``      expert rules of thumb, no search
hard       ``mcts:0.25s``     tree search, a quarter of a second per move
expert     ``mcts:1s``        tree search, one second per move
=========  =================  ==================================================

``make_bot("hard", seed)`` works like any other bot name; :data:`LEVELS` maps
each level to its bot name for screens that want to show it.
"""

from __future__ import annotations

from coloretto.bots.base import Bot, BotSpecError, make_bot, register_bot

LEVELS: dict[str, str] = {
    "easy": "greedy",
    "medium": "heuristic",
    "hard": "mcts:0.25s",
    "expert": "mcts:1s",
}


def level_bot(level: str, seed: int | None = None) -> Bot:
    """The bot of a difficulty level (its name stays the level's name)."""
    try:
        spec = LEVELS[level.strip().lower()]
    except KeyError:
        raise BotSpecError(f"unknown level {level!r}: levels are {', '.join(LEVELS)}") from None
    return make_bot(spec, seed)


def _factory_for(level: str):  # type: ignore[no-untyped-def]
    def factory(options: str, seed: int | None) -> Bot:
        if options:
            raise BotSpecError(f"the {level} level takes no options, got {options!r}")
        return level_bot(level, seed)

    return factory


for _level, _spec in LEVELS.items():
    register_bot(_level, _factory_for(_level), f"difficulty level: {_spec}")
