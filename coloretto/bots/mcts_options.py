"""What an ``mcts`` bot name says: its limit per move and its search settings.

Read here, apart from :mod:`coloretto.bots.mcts`, so that a name such as
``mcts:5000,rollout=random`` can be checked without loading the compiled
kernel; the kernel takes its playout policies and defaults from here.

>>> limit, settings = read_mcts_options("5000,rollout=random")
>>> limit
Limit(time=None, iterations=5000)
>>> settings
Settings(rollout=0, c=0.7, win=0.75, take=6.0, explore=0.1, threads=1, cut=0)
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from coloretto.bots.base import BotSpecError
from coloretto.bots.limits import Limit, LimitError

POLICY_RANDOM = 0
POLICY_GREEDY = 1  #: cheap card values from the scoring table (the default for MCTS)
POLICY_EXACT = 2  #: greedy on exact best scores (slower, about as strong)
#: greedy's judgement with tuned weights (:mod:`coloretto.bots.playout_options`)
POLICY_TUNED = 3
#: playout policies by name (see :mod:`coloretto.bots.kernel`)
ROLLOUTS = {"greedy": POLICY_GREEDY, "exact": POLICY_EXACT, "random": POLICY_RANDOM, "tuned": POLICY_TUNED}

#: points a row must be worth before a playout takes it. Playouts that wait for
#: a good row play far better than ones that grab: against three ``heuristic``
#: in four-player games (``mcts:1500``, 640 games on the same deals) a threshold
#: of 2, 3, 4, 5, 6 and 8 points won 23.5, 34.4, 44.6, 47.9, 52.0 and 52.1 % of the games.
TAKE_AT = 6.0
EXPLORE = 0.1  #: share of random moves in the playouts
#: what ``take=`` (points) and ``explore=`` (a share) may be, for every playout policy and its users
TAKE_RANGE = (0.0, 100.0)
EXPLORE_RANGE = (0.0, 1.0)
WIN_WEIGHT = 0.75  #: weight of the win share in a player's utility (the rest: score margin)
DEFAULT_C = 0.7  #: UCB1 exploration constant (utilities lie in [0, 1])
#: most threads one search may use (``threads=``)
MAX_THREADS = 16
#: ``cut=round``: playouts stop at the end of the current round (the kernel's CUT_ROUND)
CUT_ROUND = -1
MAX_CUT = 1000  #: longest ``cut=N`` (no game is that long)
#: plain ``mcts``: a second a move
DEFAULT_LIMIT = Limit(time=1.0)


@dataclass(frozen=True)
class Settings:
    """How the search weighs and explores (everything but its limit)."""

    rollout: int = POLICY_GREEDY  #: playout policy, one of :data:`ROLLOUTS`
    c: float = DEFAULT_C  #: UCB1 exploration constant
    win: float = WIN_WEIGHT  #: weight of the win share in a player's utility (the rest: margin)
    #: playouts take a row once it is worth this many points (None, with ``rollout=tuned``
    #: only: the tuned weights' own bar)
    take: float | None = TAKE_AT
    #: share of random moves in the playouts (None, with ``rollout=tuned`` only: the tuned weights' own)
    explore: float | None = EXPLORE
    #: searches run at once on separate trees, one thread each (root parallelism)
    threads: int = 1
    #: playouts stop after this many actions and the learned value
    #: (:mod:`coloretto.bots.value`) predicts the rest; :data:`CUT_ROUND`: at the
    #: end of the round; 0: play to the end (the default)
    cut: int = 0


DEFAULT_SETTINGS = Settings()


def read_mcts_options(options: str) -> tuple[Limit, Settings]:
    """``"1s"``, ``"5000,rollout=random,c=0.5,take=4,explore=0.05,threads=2,cut=20"`` → (limit, settings).

    The parts without ``=`` make the limit (:meth:`Limit.parse`; a time and an
    iteration count together stop at whichever comes first); none: one second.
    With ``rollout=tuned``, ``take`` and ``explore`` not given are None: the
    tuned weights' own (:func:`coloretto.bots.playout_options.playout_knobs`).
    """
    limit_parts = []
    settings = DEFAULT_SETTINGS
    given = set()
    for part in filter(None, (p.strip() for p in options.split(","))):
        key, eq, value = part.partition("=")
        key, value = key.strip().lower(), value.strip()
        given.add(key)
        if not eq:
            limit_parts.append(part)
        elif key == "rollout":
            if value.lower() not in ROLLOUTS:
                raise BotSpecError(f"rollout must be one of {', '.join(ROLLOUTS)}, not {value!r}")
            settings = replace(settings, rollout=ROLLOUTS[value.lower()])
        elif key == "c":
            settings = replace(settings, c=read_number(key, value, "must not be negative", 0.0, math.inf))
        elif key == "win":
            settings = replace(settings, win=read_number(key, value, "must lie in [0, 1]", 0.0, 1.0))
        elif key == "take":
            settings = replace(settings, take=read_in_range(key, value, TAKE_RANGE))
        elif key == "explore":
            settings = replace(settings, explore=read_in_range(key, value, EXPLORE_RANGE))
        elif key == "threads":
            if not value.isdigit() or not 1 <= int(value) <= MAX_THREADS:
                raise BotSpecError(f"threads must be a whole number from 1 to {MAX_THREADS}, not {value!r}")
            settings = replace(settings, threads=int(value))
        elif key == "cut":
            settings = replace(settings, cut=_cut(value))
        else:
            raise BotSpecError(
                f"unknown mcts option {key!r}: "
                "use a limit (1s, 5000), rollout=…, c=…, win=…, take=…, explore=…, threads=… or cut=…"
            )
    if settings.rollout == POLICY_TUNED:
        if "take" not in given:
            settings = replace(settings, take=None)
        if "explore" not in given:
            settings = replace(settings, explore=None)
    if not limit_parts:
        return DEFAULT_LIMIT, settings
    try:
        return Limit.parse(",".join(limit_parts)), settings
    except LimitError as exc:
        raise BotSpecError(str(exc)) from None


def _cut(value: str) -> int:
    if value.lower() == "round":
        return CUT_ROUND
    if not value.isdigit() or not 0 <= int(value) <= MAX_CUT:
        raise BotSpecError(
            f"cut must be a whole number of playout actions from 0 (no cut) to {MAX_CUT}, "
            f"or round (the end of the round), not {value!r}"
        )
    return int(value)


def read_in_range(key: str, text: str, bounds: tuple[float, float]) -> float:
    """A bot option's number in ``bounds`` (the error says "must lie in [low, high]")."""
    low, high = bounds
    return read_number(key, text, f"must lie in [{low:g}, {high:g}]", low, high)


def read_number(key: str, text: str, rule: str, low: float, high: float) -> float:
    """A bot option's number ``text`` in [low, high]; else a BotSpecError naming ``key`` and ``rule``."""
    try:
        value = float(text)
    except ValueError:
        raise BotSpecError(f"{key} must be a number, not {text!r}") from None
    if not low <= value <= high:
        raise BotSpecError(f"{key} {rule}, not {text!r}")
    return value
