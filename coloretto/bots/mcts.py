"""``mcts``: Monte Carlo tree search with chance nodes, max-n values and a compiled kernel.

Coloretto's only hidden information is the order of the face-down deck, which
nobody knows. A position is therefore fully described by public information
(the kernel state of :mod:`coloretto.bots.kernel`), and the game is a game of
perfect information with chance: each draw turns over one of the unseen cards,
each with probability proportional to how many are left. The search tree has

* **decision nodes**, one per public position, with statistics per action;
* **chance outcomes** under each action that turns a card over (a draw, or
  taking the golden joker): the child is chosen by sampling the card from the
  unseen composition, and each card has its own child node. Averaging over the
  sampled children is an unbiased estimate of the expectation over the draw.

Every edge keeps one utility sum *per player* (max-n): at a node, the player to
move picks the action that is best for *them* (UCB1). A player's utility of a
finished game is ``0.75 × win share + 0.25 × margin``, where the win share is
1/k for k tied winners and the margin maps the point difference to the best
opponent into [0, 1] (±30 points at the ends); the margin term tells apart
positions that are all won or all lost. Each edge also keeps the mover's final
score and win share, which :mod:`coloretto.analysis` reports.

The whole iteration (selection, expansion, playout, backup) runs compiled, on
the flat arrays of :mod:`coloretto.bots.tree`; Python only starts batches of
iterations and reads the clock between them. Leaves are valued by one playout
in the compiled kernel with its cheap greedy
policy (``rollout=greedy``, the default: card values read off the scoring
table), greedy play on exact best scores (``rollout=exact``, slower), or
uniformly random moves (``rollout=random``).

Bot names: ``mcts:1s`` / ``mcts:250ms`` (time per move), ``mcts:5000``
(iterations per move), with options after commas: ``mcts:5000,rollout=random,c=0.7,win=0.75``
(``win``: the win share's weight in the utility) and the playout policy's knobs
``take=6`` (points a row must be worth before a playout takes it) and
``explore=0.1`` (share of random playout moves).

Reproducibility: the search draws every random number from generators seeded
by the bot's seed, so an iteration budget gives the same moves for the same
seed on any machine. A time budget runs as many iterations as the time allows,
so the moves are the same only when the machine is as fast (the seeds are the
same, so a faster machine plays the same first N iterations and then more).

The tree is kept between moves: the next search starts from the node of the
new position if the previous search reached it (the position is matched by its
whole public state), so its statistics are reused; the rest of the old tree is
dropped, so a tree never holds more than about two searches' worth of nodes.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, replace

import numpy as np

from coloretto.actions import Action, action_from_id
from coloretto.bots import kernel as K
from coloretto.bots import tree as T
from coloretto.bots.base import Bot, BotSpecError, register_bot
from coloretto.game import Game, Observation
from coloretto.rules import Rules

WIN_WEIGHT = 0.75  #: weight of the win share in a player's utility (the rest: score margin)
MARGIN_SCALE = 30.0  #: a margin of this many points (or more) counts as 0 or 1
DEFAULT_C = 0.7  #: UCB1 exploration constant (utilities lie in [0, 1])
#: playout policies by name (see :mod:`coloretto.bots.kernel`)
ROLLOUTS = {"greedy": K.POLICY_GREEDY, "exact": K.POLICY_EXACT, "random": K.POLICY_RANDOM}
#: share of a time budget the search itself uses (the rest: finding the old
#: tree's node, building the root, answering)
TIME_SHARE = 0.9
_TIME_CHECK = 16  #: iterations between clock readings
_REUSE_DEPTH = 40  #: how deep the previous tree is searched for the new position
_REUSE_NODES = 50_000  #: how many nodes of the previous tree may be visited for it


@dataclass(frozen=True)
class Budget:
    """How long one search runs: a number of iterations, or seconds."""

    iterations: int | None = None
    seconds: float | None = None

    def describe(self) -> str:
        if self.seconds is not None:
            return f"{self.seconds:g}s"
        return f"{self.iterations}"


@dataclass(frozen=True)
class Settings:
    """How the search weighs and explores (everything but its budget)."""

    rollout: int = K.POLICY_GREEDY  #: playout policy, one of :data:`ROLLOUTS`
    c: float = DEFAULT_C  #: UCB1 exploration constant
    win: float = WIN_WEIGHT  #: weight of the win share in a player's utility (the rest: margin)
    take: float = K.TAKE_AT  #: playouts take a row once it is worth this many points
    explore: float = K.EXPLORE  #: share of random moves in the playouts


def parse_budget(text: str) -> Budget:
    """``"1s"``, ``"0.2s"``, ``"250ms"`` (time per move) or ``"5000"`` (iterations)."""
    key = text.strip().lower()
    try:
        if key.endswith("ms"):
            seconds = float(key[:-2]) / 1000
        elif key.endswith("s"):
            seconds = float(key[:-1])
        else:
            iterations = int(key)
            if iterations < 1:
                raise BotSpecError(f"an iteration budget must be at least 1, not {iterations}")
            return Budget(iterations=iterations)
    except ValueError:
        raise BotSpecError(
            f"cannot read budget {text!r}: use iterations (5000) or time (1s, 0.2s, 250ms)"
        ) from None
    if not seconds > 0:
        raise BotSpecError(f"a time budget must be positive, not {text!r}")
    return Budget(seconds=seconds)


class Search:
    """One search tree (a compiled :class:`~coloretto.bots.tree.Tree`) over positions of one game's rules."""

    def __init__(self, rules: Rules, settings: Settings = Settings(), root_floor: int = 0) -> None:
        self.rules = rules
        self.settings = settings
        #: every root action gets at least this many simulations before UCB1
        #: chooses (analysis uses it so that every action's value is estimated)
        self.root_floor = root_floor
        self.players = rules.players
        self.cfg = K.rules_config(rules, settings.take, settings.explore)
        self.tree = T.Tree()
        self.root_state: np.ndarray | None = None  #: the root's position, None before the first search
        self.iterations = 0  #: iterations run by the last call of :meth:`run`
        #: sums over the last run's iterations of every seat's utility, final
        #: score and win share (3 × players values): the root position's value
        self.root_sums = np.zeros(3 * self.players)
        self.reused = 0  #: visits already at the root when the last search started

    # ------------------------------------------------------------ the root

    def set_root(self, s: np.ndarray) -> None:
        """Search from state ``s``, keeping what the old tree knows about it
        (and only that: the rest of the old tree is dropped)."""
        tree = self.tree
        found = tree.find(T.ROOT, s, _REUSE_DEPTH, _REUSE_NODES) if self.root_state is not None else -1
        if found >= 0:
            tree.keep_only(found)
        else:
            tree.clear()
            tree.add_root(s, self.cfg)
        self.root_state = s.copy()
        self.reused = self.total

    @property
    def total(self) -> int:
        """Simulations through the root."""
        return int(self.tree.nodes[T.ROOT, T.N_TOTAL]) if self.root_state is not None else 0

    # ----------------------------------------------------------- searching

    def run(self, budget: Budget, seed: int, started: float | None = None) -> None:
        """Run iterations from the root until the budget is spent.

        A time budget counts from ``started`` (a ``time.perf_counter()``
        reading; default now) and stops at :data:`TIME_SHARE` of it, leaving
        room for the rest of the move.
        """
        assert self.root_state is not None
        started = time.perf_counter() if started is None else started
        K.k_seed(seed)
        self.iterations = 0
        self.root_sums = np.zeros(3 * self.players)
        if self.tree.nodes[T.ROOT, T.N_EDGES] == 0:
            return
        if budget.iterations is not None:
            while self.iterations < budget.iterations:
                self._batch(budget.iterations - self.iterations)
            return
        assert budget.seconds is not None
        deadline = started + TIME_SHARE * budget.seconds
        while True:
            self._batch(_TIME_CHECK)
            if time.perf_counter() >= deadline:
                break

    def _batch(self, iterations: int) -> None:
        tree = self.tree
        settings = self.settings
        tree.reserve()
        self.iterations += T.k_iterate(
            tree.nodes, tree.states, tree.edge_ints, tree.edge_floats, tree.meta,
            T.ROOT, self.root_state, self.cfg, settings.rollout, settings.c, self.root_floor,
            iterations, settings.win, MARGIN_SCALE, self.root_sums,
        )  # fmt: skip

    # ------------------------------------------------------------- answers

    def _root_edges(self) -> range:
        first = int(self.tree.nodes[T.ROOT, T.N_EDGE0])
        return range(first, first + int(self.tree.nodes[T.ROOT, T.N_EDGES]))

    def best_action(self) -> Action:
        """The root action with most visits (ties: the higher mean utility)."""
        ints, floats = self.tree.edge_ints, self.tree.edge_floats
        column = T.F_UTILITY + int(self.tree.nodes[T.ROOT, T.N_PLAYER])

        def merit(e: int) -> tuple[int, float]:
            n = int(ints[e, T.E_VISITS])
            return (n, float(floats[e, column]) / n if n else 0.0)

        return action_from_id(int(ints[max(self._root_edges(), key=merit), T.E_ACTION]))

    def root_statistics(self) -> list[tuple[Action, int, float, float, float]]:
        """Per root action: (action, simulations, mean score, win share, mean utility) of the mover."""
        ints, floats = self.tree.edge_ints, self.tree.edge_floats
        column = T.F_UTILITY + int(self.tree.nodes[T.ROOT, T.N_PLAYER])
        stats = []
        for e in self._root_edges():
            action = action_from_id(int(ints[e, T.E_ACTION]))
            n = int(ints[e, T.E_VISITS])
            if n:
                score, win, utility = (float(floats[e, j]) / n for j in (T.F_SCORE, T.F_WIN, column))
                stats.append((action, n, score, win, utility))
            else:
                stats.append((action, 0, float("nan"), float("nan"), float("nan")))
        return stats


_warm = False


def _warm_up() -> None:
    """Load the compiled kernel once per process, before the first timed move."""
    global _warm
    if not _warm:
        K.warm_up()
        T.warm_up()
        _warm = True


class MCTSBot(Bot):
    """Monte Carlo tree search; see the module docstring."""

    name = "mcts"

    def __init__(
        self,
        seed: int | None = None,
        budget: Budget | None = None,
        settings: Settings = Settings(),
    ) -> None:
        super().__init__(seed)
        self.budget = budget or Budget(seconds=1.0)
        self.settings = settings
        self._search: Search | None = None
        self.last_iterations = 0
        _warm_up()

    def choose(self, observation: Observation) -> Action:
        actions = observation.legal_actions
        if len(actions) == 1:
            return actions[0]
        started = time.perf_counter()
        search = self._search
        if search is None or search.rules != observation.rules:
            search = self._search = Search(observation.rules, self.settings)
        search.set_root(K.state_from_observation(observation))
        search.run(self.budget, self.rng.randrange(2**31), started)
        self.last_iterations = search.iterations
        return search.best_action()


def search_position(
    position: Observation | Game,
    budget: Budget,
    seed: int,
    settings: Settings = Settings(),
    root_floor: int = 0,
) -> Search:
    """A finished search from a position (an observation or a game)."""
    if isinstance(position, Game):
        rules = position.rules
        s = K.state_from_game(position)
    else:
        rules = position.rules
        s = K.state_from_observation(position)
    search = Search(rules, settings, root_floor)
    search.set_root(s)
    search.run(budget, seed)
    return search


def parse_options(options: str) -> tuple[Budget, Settings]:
    """``"1s"``, ``"5000,rollout=random,c=0.5,win=0.5,take=4,explore=0.05"`` → (budget, settings)."""
    budget = Budget(seconds=1.0)
    settings = Settings()
    for part in filter(None, (p.strip() for p in options.split(","))):
        key, eq, value = part.partition("=")
        if not eq:
            budget = parse_budget(part)
        elif key == "rollout":
            if value not in ROLLOUTS:
                raise BotSpecError(f"rollout must be one of {', '.join(ROLLOUTS)}, not {value!r}")
            settings = replace(settings, rollout=ROLLOUTS[value])
        elif key == "c":
            settings = replace(settings, c=_number(key, value, "must not be negative", 0.0, math.inf))
        elif key == "win":
            settings = replace(settings, win=_number(key, value, "must lie in [0, 1]", 0.0, 1.0))
        elif key == "take":
            settings = replace(settings, take=_number(key, value, "must lie in [0, 100]", 0.0, 100.0))
        elif key == "explore":
            settings = replace(settings, explore=_number(key, value, "must lie in [0, 1]", 0.0, 1.0))
        else:
            raise BotSpecError(
                f"unknown mcts option {key!r}: use a budget, rollout=…, c=…, win=…, take=… or explore=…"
            )
    return budget, settings


def _number(key: str, text: str, rule: str, low: float, high: float) -> float:
    try:
        value = float(text)
    except ValueError:
        raise BotSpecError(f"{key} must be a number, not {text!r}") from None
    if not low <= value <= high:
        raise BotSpecError(f"{key} {rule}, not {text!r}")
    return value


def _factory(options: str, seed: int | None) -> Bot:
    budget, settings = parse_options(options)
    return MCTSBot(seed, budget, settings)


register_bot(
    "mcts",
    _factory,
    "Monte Carlo tree search with chance nodes: mcts:1s (time per move) or mcts:5000 (iterations)",
)
