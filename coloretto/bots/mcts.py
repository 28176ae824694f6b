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
(iterations per move; ``mcts:5000,1s`` stops at whichever comes first), with
options after commas: ``mcts:5000,rollout=random,c=0.7,win=0.75,threads=2``
(``win``: the win share's weight in the utility) and the playout policy's knobs
``take=6`` (points a row must be worth before a playout takes it) and
``explore=0.1`` (share of random playout moves); ``threads=2`` searches two
trees at once, one per thread (the kernel releases the GIL), and adds up their
root statistics: an iteration budget is shared out among the trees, a time
budget is each tree's. ``cut=20`` stops every playout after 20 actions (``cut=round``: at the end
of the round) and lets the learned value (:mod:`coloretto.bots.value`,
fitted by ``coloretto train``) predict each seat's final score and win share
from there, in the kernel. They are read by
:mod:`coloretto.bots.mcts_options`, which does not load the compiled kernel.

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
from concurrent.futures import ThreadPoolExecutor
from typing import Self

import numpy as np

from coloretto.actions import Action, action_from_id
from coloretto.bots import kernel as K
from coloretto.bots import tree as T
from coloretto.bots.base import Bot, BotSpec
from coloretto.bots.limits import Limit
from coloretto.bots.mcts_options import DEFAULT_LIMIT, DEFAULT_SETTINGS, ROLLOUTS, Settings
from coloretto.bots.playout_options import playout_knobs
from coloretto.game import Game, Observation
from coloretto.rules import Rules

__all__ = ["ROLLOUTS", "MCTSBot", "Search", "Settings", "search_position"]

MARGIN_SCALE = 30.0  #: a margin of this many points (or more) counts as 0 or 1
#: share of a time budget the search itself uses (the rest: finding the old
#: tree's node, building the root, answering)
TIME_SHARE = 0.9
_TIME_CHECK = 16  #: iterations between clock readings
_REUSE_DEPTH = 40  #: how deep the previous tree is searched for the new position
_REUSE_NODES = 50_000  #: how many nodes of the previous tree may be visited for it


class _Part:
    """One tree of a search and what its last run gathered."""

    def __init__(self) -> None:
        self.tree = T.Tree()
        self.iterations = 0
        self.root_sums = np.zeros(0)


class Search:
    """A search over positions of one game's rules: one compiled
    :class:`~coloretto.bots.tree.Tree`, or with ``settings.threads`` = N, N
    trees searched at once in N threads (root parallelism: the kernel runs
    without the GIL) whose root statistics are added up."""

    def __init__(self, rules: Rules, settings: Settings = DEFAULT_SETTINGS, root_floor: int = 0) -> None:
        self.rules = rules
        self.settings = settings
        #: every root action gets at least this many simulations before UCB1
        #: chooses (analysis uses it so that every action's value is estimated)
        self.root_floor = root_floor
        self.players = rules.players
        take, explore, weights = playout_knobs(
            settings.rollout, settings.take, settings.explore, rules.players
        )
        self.cfg = K.rules_config(rules, take, explore, weights)
        self.parts = [_Part() for _ in range(max(1, settings.threads))]
        #: the learned value's array for the kernel (only a cut search reads one)
        self.weights: np.ndarray | None = None
        if settings.cut:
            from coloretto.bots.value import shipped_weights

            self.weights = shipped_weights(rules.players)
        self.root_state: np.ndarray | None = None  #: the root's position, None before the first search
        self.iterations = 0  #: iterations run by the last call of :meth:`run`, every tree's
        #: sums over the last run's iterations of every seat's utility, final
        #: score and win share (3 × players values): the root position's value
        self.root_sums = np.zeros(3 * self.players)
        self.reused = 0  #: visits already at the root when the last search started

    @property
    def tree(self) -> T.Tree:
        """The (first) tree."""
        return self.parts[0].tree

    # ------------------------------------------------------------ the root

    def set_root(self, s: np.ndarray) -> None:
        """Search from state ``s``, keeping what the old trees know about it
        (and only that: the rest of the old trees is dropped)."""
        for part in self.parts:
            tree = part.tree
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
        if self.root_state is None:
            return 0
        return sum(int(part.tree.nodes[T.ROOT, T.N_TOTAL]) for part in self.parts)

    # ----------------------------------------------------------- searching

    def run(self, limit: Limit, seed: int, started: float | None = None) -> None:
        """Run iterations from the root until the limit is reached.

        A time limit counts from ``started`` (a ``time.perf_counter()``
        reading; default now) and stops at :data:`TIME_SHARE` of it, leaving
        room for the rest of the move. A limit of both stops at whichever
        comes first. With several trees, an iteration budget is shared out
        among them (the same seed gives the same figures, whatever the
        machine), and a time budget is every tree's.
        """
        assert self.root_state is not None
        started = time.perf_counter() if started is None else started
        parts = self.parts
        budgets: list[int | None] = [None] * len(parts)
        if limit.iterations is not None:
            share, extra = divmod(limit.iterations, len(parts))
            budgets = [share + (1 if i < extra else 0) for i in range(len(parts))]
        seeds = [_part_seed(seed, i) for i in range(len(parts))]
        if len(parts) == 1:
            self._run_part(parts[0], limit, budgets[0], seeds[0], started)
        else:
            with ThreadPoolExecutor(len(parts)) as pool:
                for done in [
                    pool.submit(self._run_part, part, limit, budget, part_seed, started)
                    for part, budget, part_seed in zip(parts, budgets, seeds)
                ]:
                    done.result()
        self.iterations = sum(part.iterations for part in parts)
        self.root_sums = np.sum([part.root_sums for part in parts], axis=0)

    def _run_part(self, part: _Part, limit: Limit, iterations: int | None, seed: int, started: float) -> None:
        K.k_seed(seed)  # this thread's generator
        part.iterations = 0
        part.root_sums = np.zeros(3 * self.players)
        if part.tree.nodes[T.ROOT, T.N_EDGES] == 0:
            return
        if limit.time is None:
            # no clock to read: whole batches, the same for the same seed on any machine
            assert iterations is not None
            while part.iterations < iterations:
                self._batch(part, iterations - part.iterations)
            return
        deadline = started + TIME_SHARE * limit.time
        target = iterations if iterations is not None else math.inf
        while part.iterations < target:
            self._batch(part, int(min(_TIME_CHECK, target - part.iterations)))
            if time.perf_counter() >= deadline:
                break

    def _batch(self, part: _Part, iterations: int) -> None:
        tree = part.tree
        settings = self.settings
        root_state = self.root_state
        assert root_state is not None  # a search starts from a position
        tree.reserve()
        floor = -(-self.root_floor // len(self.parts))  # the floor is shared out too
        if settings.cut:
            part.iterations += T.k_iterate(
                tree.nodes, tree.states, tree.edge_ints, tree.edge_floats, tree.meta,
                T.ROOT, root_state, self.cfg, settings.rollout, settings.c, floor,
                iterations, settings.win, MARGIN_SCALE, part.root_sums, settings.cut, self.weights,
            )  # fmt: skip
            return
        part.iterations += T.k_iterate(
            tree.nodes, tree.states, tree.edge_ints, tree.edge_floats, tree.meta,
            T.ROOT, root_state, self.cfg, settings.rollout, settings.c, floor,
            iterations, settings.win, MARGIN_SCALE, part.root_sums,
        )  # fmt: skip

    # ------------------------------------------------------------- answers

    def _edge_totals(self) -> list[tuple[int, int, np.ndarray]]:
        """Per root action, every tree's: (action id, visits, summed float columns)."""
        totals: dict[int, tuple[int, np.ndarray]] = {}
        order: list[int] = []
        for part in self.parts:
            nodes, ints, floats = part.tree.nodes, part.tree.edge_ints, part.tree.edge_floats
            first = int(nodes[T.ROOT, T.N_EDGE0])
            for e in range(first, first + int(nodes[T.ROOT, T.N_EDGES])):
                action = int(ints[e, T.E_ACTION])
                visits, sums = totals.get(action, (0, np.zeros(T.EDGE_FLOAT_COLUMNS)))
                if action not in totals:
                    order.append(action)
                totals[action] = (visits + int(ints[e, T.E_VISITS]), sums + floats[e])
        return [(action, *totals[action]) for action in order]

    def best_action(self) -> Action:
        """The root action with most visits (ties: the higher mean utility)."""
        column = T.F_UTILITY + int(self.tree.nodes[T.ROOT, T.N_PLAYER])

        def merit(edge: tuple[int, int, np.ndarray]) -> tuple[int, float]:
            _, n, sums = edge
            return (n, float(sums[column]) / n if n else 0.0)

        return action_from_id(max(self._edge_totals(), key=merit)[0])

    def root_statistics(self) -> list[tuple[Action, int, float, float, float]]:
        """Per root action: (action, simulations, mean score, win share, mean utility) of the mover."""
        column = T.F_UTILITY + int(self.tree.nodes[T.ROOT, T.N_PLAYER])
        stats = []
        for action_id, n, sums in self._edge_totals():
            action = action_from_id(action_id)
            if n:
                score, win, utility = (float(sums[j]) / n for j in (T.F_SCORE, T.F_WIN, column))
                stats.append((action, n, score, win, utility))
            else:
                stats.append((action, 0, float("nan"), float("nan"), float("nan")))
        return stats


def _part_seed(seed: int, part: int) -> int:
    """The seed of a search's ``part``-th tree: the search's own for the first,
    so that one tree searches as it always did."""
    return seed if part == 0 else (seed + part * 0x9E3779B97F4A7C15) % 2**64


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
        limit: Limit = DEFAULT_LIMIT,
        settings: Settings = DEFAULT_SETTINGS,
    ) -> None:
        super().__init__(seed)
        self.limit: Limit = limit
        self.settings = settings
        self._search: Search | None = None
        self.last_iterations = 0
        _warm_up()

    @classmethod
    def from_spec(cls, spec: BotSpec, seed: int | None) -> Self:
        assert isinstance(spec.limit, Limit) and isinstance(spec.settings, Settings), spec
        return cls(seed, spec.limit, spec.settings)

    @property
    def search(self) -> Search | None:
        """The search of the last move (its tree is kept for the next one); None before the first."""
        return self._search

    def choose(self, observation: Observation) -> Action:
        actions = observation.legal_actions
        if len(actions) == 1:
            return actions[0]
        started = time.perf_counter()
        search = self._search
        if search is None or search.rules != observation.rules:
            search = self._search = Search(observation.rules, self.settings)
        search.set_root(K.state_from_observation(observation))
        search.run(self.limit, self.rng.randrange(2**31), started)
        self.last_iterations = search.iterations
        return search.best_action()


def search_position(
    position: Observation | Game,
    limit: Limit,
    seed: int,
    settings: Settings = DEFAULT_SETTINGS,
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
    search.run(limit, seed)
    return search
