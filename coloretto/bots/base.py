"""The bot interface, and what a bot name says (:class:`BotSpec`)."""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Self

from coloretto.actions import Action
from coloretto.bots.limits import Limit
from coloretto.errors import ExplainedError
from coloretto.game import Observation


class BotSpecError(ExplainedError):
    """A bot name that means nothing (``--bots grandmaster``) or bad options; the message is one line."""

    code = "bad_bot"


@dataclass(frozen=True)
class BotSpec:
    """A bot name, read and checked but not built (see :func:`coloretto.bots.check_bot`)."""

    name: str  #: the name as written, trimmed: ``"mcts:1s"``, ``"hard"``
    kind: str  #: the kind that plays it: ``"mcts"`` for both of those
    #: the bot's budget per move; None for bots that do not search
    limit: Limit | None = None
    #: the kind's other options, read (``mcts``: its search Settings); None if it has none
    settings: object = None
    #: the text after the colon, for a plug-in's factory (the built-in kinds read it into the fields above)
    options: str = ""


class Bot(ABC):
    """A player. It sees only what a person at the table sees: an Observation.

    Bots are seeded; the same seed and the same observations give the same
    actions. A bot may keep state between moves of one game (a search tree),
    so the arena creates a fresh bot for every game.
    """

    #: the string that names this bot, e.g. ``"greedy"`` or ``"mcts:1s"``
    name: str = "bot"
    #: the bot's own budget per move (``mcts:1s``, ``mcts:5000``); None: it has none
    limit: Limit | None = None

    def __init__(self, seed: int | None = None) -> None:
        self.seed = seed
        self.rng = random.Random(seed)

    @classmethod
    def from_spec(cls, spec: BotSpec, seed: int | None) -> Self:
        """The bot a checked name describes; kinds with options override this."""
        return cls(seed)

    @property
    def time_budget(self) -> float | None:
        """Seconds the bot means to spend on a move (``mcts:1s``): the arena holds
        it to this plus a margin. None: no time of its own, so the tournament's
        per-move time applies."""
        return self.limit.time if self.limit is not None else None

    @abstractmethod
    def choose(self, observation: Observation) -> Action:
        """The action to play; one of ``observation.legal_actions``."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r} seed={self.seed}>"
