"""The bot interface and the registry of bot names."""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from collections.abc import Callable

from coloretto.actions import Action
from coloretto.game import Observation


class BotSpecError(ValueError):
    """A bot name that means nothing (``--bots grandmaster``) or a bad budget."""


class Bot(ABC):
    """A player. It sees only what a person at the table sees: an Observation.

    Bots are seeded; the same seed and the same observations give the same
    actions. A bot may keep state between moves of one game (a search tree),
    so the arena creates a fresh bot for every game.
    """

    #: the string that names this bot, e.g. ``"greedy"`` or ``"mcts:1s"``
    name: str = "bot"
    #: seconds the bot means to spend on a move when it has a time budget
    #: (``mcts:1s``); the arena holds it to this plus a margin. None: no budget
    #: of its own, so the tournament's per-move time applies.
    time_budget: float | None = None

    def __init__(self, seed: int | None = None) -> None:
        self.seed = seed
        self.rng = random.Random(seed)

    @abstractmethod
    def choose(self, observation: Observation) -> Action:
        """The action to play; one of ``observation.legal_actions``."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r} seed={self.seed}>"


BotFactory = Callable[[str, int | None], Bot]
_REGISTRY: dict[str, tuple[BotFactory, str]] = {}


def register_bot(kind: str, factory: BotFactory, description: str) -> None:
    """Make ``kind`` (and ``kind:options``) a bot name. The factory gets the
    text after the colon ('' if none) and the seed."""
    _REGISTRY[kind] = (factory, description)


def available_bots() -> dict[str, str]:
    _load_builtin_bots()
    return {kind: description for kind, (_, description) in sorted(_REGISTRY.items())}


def make_bot(spec: str, seed: int | None = None) -> Bot:
    """Create a bot from its name, e.g. ``"random"``, ``"greedy"``."""
    _load_builtin_bots()
    if not isinstance(spec, str) or not spec.strip():
        raise BotSpecError("a bot needs a name")
    kind, _, options = spec.strip().partition(":")
    entry = _REGISTRY.get(kind.lower())
    if entry is None:
        known = ", ".join(sorted(_REGISTRY))
        raise BotSpecError(f"unknown bot {spec!r}: known bots are {known}")
    bot = entry[0](options, seed)
    bot.name = spec.strip()
    return bot


def _load_builtin_bots() -> None:
    # Imported late: bot modules import this one to register themselves.
    import coloretto.bots.heuristic
    import coloretto.bots.levels
    import coloretto.bots.mcts
    import coloretto.bots.openspiel_mcts
    import coloretto.bots.simple  # noqa: F401
