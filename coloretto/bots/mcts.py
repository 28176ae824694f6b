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

Leaves are valued by one playout in the compiled kernel with its cheap greedy
policy (``rollout=greedy``, the default: card values read off the scoring
table), greedy play on exact best scores (``rollout=exact``, slower), or
uniformly random moves (``rollout=random``).

Bot names: ``mcts:1s`` / ``mcts:250ms`` (time per move), ``mcts:5000``
(iterations per move), with options after commas: ``mcts:5000,rollout=random,c=0.7``.

Reproducibility: the search draws every random number from generators seeded
by the bot's seed, so an iteration budget gives the same moves for the same
seed on any machine. A time budget runs as many iterations as the time allows,
so the moves are the same only when the machine is as fast (the seeds are the
same, so a faster machine plays the same first N iterations and then more).

The tree is kept between moves: the next search starts from the node of the
new position if the previous search reached it (the position is matched by its
whole public state), so its statistics are reused.
"""

from __future__ import annotations

import gc
import math
import time
from array import array
from collections import deque
from dataclasses import dataclass

import numpy as np

from coloretto.actions import Action, action_from_id
from coloretto.bots import kernel as K
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


class Node:
    """A decision node: one public position, statistics per legal action.

    The statistics live in ``array`` objects and the actions in a tuple: the
    garbage collector does not track those, so a large tree costs it almost
    nothing (a collection that walked a tree of lists would stall a move).
    """

    __slots__ = ("actions", "children", "key", "player", "result", "score", "u", "visits", "win", "total")

    def __init__(self, s: np.ndarray, cfg: np.ndarray, players: int, legal_buf: np.ndarray) -> None:
        self.key = s.tobytes()
        self.player = int(s[K.PLAYER])
        self.children: dict[int, Node] | None = None  #: by action × 16 + card + 1
        self.total = 0
        if s[K.OVER]:
            values = np.zeros(3 * players)
            K.k_playout_values(s, cfg, K.POLICY_RANDOM, values, WIN_WEIGHT, MARGIN_SCALE)
            self.result: tuple[float, ...] | None = tuple(values.tolist())
            self.actions: tuple[int, ...] = ()
        else:
            self.result = None
            n = K.k_legal(s, cfg, legal_buf)
            self.actions = tuple(int(a) for a in legal_buf[:n])
        m = len(self.actions)
        self.visits = array("q", bytes(8 * m))
        self.u = array("d", bytes(8 * m * players))  #: utility sums, action i, player p at i × players + p
        self.score = array("d", bytes(8 * m))  #: the mover's final score, summed
        self.win = array("d", bytes(8 * m))  #: the mover's win share, summed


class Search:
    """One search tree over positions of one game's rules."""

    def __init__(
        self, rules: Rules, rollout: int = K.POLICY_GREEDY, c: float = DEFAULT_C, root_floor: int = 0
    ) -> None:
        self.rules = rules
        #: every root action gets at least this many simulations before UCB1
        #: chooses (analysis uses it so that every action's value is estimated)
        self.root_floor = root_floor
        self.players = rules.players
        self.cfg = K.rules_config(rules)
        self.rollout = rollout
        self.c = c
        self.root: Node | None = None
        self.root_state: np.ndarray | None = None
        self._legal = np.empty(K.MAX_ACTIONS, dtype=np.int64)
        self._values = np.zeros(3 * self.players)
        self.iterations = 0  #: iterations run by the last call of :meth:`run`
        #: sums over the last run's iterations of every seat's utility, final
        #: score and win share (3 × players values): the root position's value
        self.root_sums = [0.0] * (3 * self.players)
        self.reused = 0  #: visits already at the root when the last search started

    # ------------------------------------------------------------ the root

    def set_root(self, s: np.ndarray) -> None:
        """Search from state ``s``, keeping what the old tree knows about it."""
        key = s.tobytes()
        found = self._find(key) if self.root is not None else None
        self.root = found or Node(s, self.cfg, self.players, self._legal)
        self.root_state = s.copy()
        self.reused = self.root.total

    def _find(self, key: bytes) -> Node | None:
        assert self.root is not None
        queue = deque([(self.root, 0)])
        seen = 0
        while queue:
            node, depth = queue.popleft()
            if node.key == key:
                return node
            seen += 1
            if seen > _REUSE_NODES or depth >= _REUSE_DEPTH:
                continue
            if node.children:
                for child in node.children.values():
                    queue.append((child, depth + 1))
        return None

    # ----------------------------------------------------------- searching

    def run(self, budget: Budget, seed: int, started: float | None = None) -> None:
        """Run iterations from the root until the budget is spent.

        A time budget counts from ``started`` (a ``time.perf_counter()``
        reading; default now) and stops at :data:`TIME_SHARE` of it, leaving
        room for the rest of the move. The garbage collector is paused while
        the search runs (the tree has no reference cycles: reference counting
        frees it), so that no collection of the whole tree lands in a move.
        """
        assert self.root is not None
        paused = gc.isenabled()
        gc.disable()
        try:
            self._run(budget, seed, time.perf_counter() if started is None else started)
        finally:
            if paused:
                gc.enable()

    def _run(self, budget: Budget, seed: int, started: float) -> None:
        assert self.root is not None
        K.k_seed(seed)
        self.iterations = 0
        self.root_sums = [0.0] * (3 * self.players)
        if self.root.result is not None or len(self.root.actions) == 0:
            return
        if budget.iterations is not None:
            for _ in range(budget.iterations):
                self._iterate()
            self.iterations = budget.iterations
            return
        assert budget.seconds is not None
        deadline = started + TIME_SHARE * budget.seconds
        count = 0
        while True:
            for _ in range(_TIME_CHECK):
                self._iterate()
            count += _TIME_CHECK
            if time.perf_counter() >= deadline:
                break
        self.iterations = count

    def _iterate(self) -> None:
        assert self.root is not None and self.root_state is not None
        s = self.root_state.copy()
        cfg = self.cfg
        node = self.root
        path: list[tuple[Node, int]] = []
        c = self.c
        players = self.players
        step = K.k_step
        while True:
            if node.result is not None:
                result = node.result
                break
            visits = node.visits
            m = len(visits)
            if m == 1:
                idx = 0
            elif node is self.root and self.root_floor and min(visits) < self.root_floor:
                idx = visits.index(min(visits))
            else:
                idx = -1
                for i in range(m):
                    if visits[i] == 0:
                        idx = i
                        break
                if idx < 0:
                    p = node.player
                    log_n = c * math.sqrt(math.log(node.total))
                    best = -1.0
                    u = node.u
                    for i in range(m):
                        n_i = visits[i]
                        value = u[i * players + p] / n_i + log_n / math.sqrt(n_i)
                        if value > best:
                            best = value
                            idx = i
            a = node.actions[idx]
            card = step(s, cfg, a)
            path.append((node, idx))
            key = a * 16 + card + 1
            children = node.children
            if children is None:
                children = node.children = {}
            child = children.get(key)
            if child is None:
                child = Node(s, cfg, players, self._legal)
                children[key] = child
                if child.result is not None:
                    result = child.result
                else:
                    values = self._values
                    K.k_playout_values(s, cfg, self.rollout, values, WIN_WEIGHT, MARGIN_SCALE)
                    result = values.tolist()
                break
            node = child
        n = players
        sums = self.root_sums
        for j in range(3 * n):
            sums[j] += result[j]
        for node, idx in path:
            node.total += 1
            node.visits[idx] += 1
            u = node.u
            at = idx * n
            for p in range(n):
                u[at + p] += result[p]
            p = node.player
            node.score[idx] += result[n + p]
            node.win[idx] += result[2 * n + p]

    # ------------------------------------------------------------- answers

    def best_index(self) -> int:
        """The root action with most visits (ties: the higher mean utility)."""
        root = self.root
        assert root is not None and root.actions
        p = root.player

        def merit(i: int) -> tuple[int, float]:
            n = root.visits[i]
            return (n, root.u[i * self.players + p] / n if n else 0.0)

        return max(range(len(root.actions)), key=merit)

    def root_statistics(self) -> list[tuple[Action, int, float, float, float]]:
        """Per root action: (action, simulations, mean score, win share, mean utility) of the mover."""
        root = self.root
        assert root is not None
        p = root.player
        stats = []
        for i, a in enumerate(root.actions):
            n = root.visits[i]
            if n:
                utility = root.u[i * self.players + p] / n
                stats.append((action_from_id(a), n, root.score[i] / n, root.win[i] / n, utility))
            else:
                stats.append((action_from_id(a), 0, float("nan"), float("nan"), float("nan")))
        return stats


_warm = False


def _warm_up() -> None:
    """Load the compiled kernel once per process, before the first timed move."""
    global _warm
    if not _warm:
        K.warm_up()
        _warm = True


class MCTSBot(Bot):
    """Monte Carlo tree search; see the module docstring."""

    name = "mcts"

    def __init__(
        self,
        seed: int | None = None,
        budget: Budget | None = None,
        rollout: int = K.POLICY_GREEDY,
        c: float = DEFAULT_C,
    ) -> None:
        super().__init__(seed)
        self.budget = budget or Budget(seconds=1.0)
        self.rollout = rollout
        self.c = c
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
            search = self._search = Search(observation.rules, self.rollout, self.c)
        paused = gc.isenabled()
        gc.disable()
        try:
            search.set_root(K.state_from_observation(observation))
        finally:
            if paused:
                gc.enable()
        search.run(self.budget, self.rng.randrange(2**31), started)
        self.last_iterations = search.iterations
        assert search.root is not None
        return action_from_id(search.root.actions[search.best_index()])


def search_position(
    position: Observation | Game,
    budget: Budget,
    seed: int,
    rollout: int = K.POLICY_GREEDY,
    c: float = DEFAULT_C,
    root_floor: int = 0,
) -> Search:
    """A finished search from a position (an observation or a game)."""
    if isinstance(position, Game):
        rules = position.rules
        s = K.state_from_game(position)
    else:
        rules = position.rules
        s = K.state_from_observation(position)
    search = Search(rules, rollout, c, root_floor)
    search.set_root(s)
    search.run(budget, seed)
    return search


def parse_options(options: str) -> tuple[Budget, int, float]:
    """``"1s"``, ``"5000,rollout=random,c=0.5"`` → (budget, rollout policy, c)."""
    budget = Budget(seconds=1.0)
    rollout = K.POLICY_GREEDY
    c = DEFAULT_C
    for part in filter(None, (p.strip() for p in options.split(","))):
        key, eq, value = part.partition("=")
        if not eq:
            budget = parse_budget(part)
        elif key == "rollout":
            if value not in ROLLOUTS:
                raise BotSpecError(f"rollout must be one of {', '.join(ROLLOUTS)}, not {value!r}")
            rollout = ROLLOUTS[value]
        elif key == "c":
            try:
                c = float(value)
            except ValueError:
                raise BotSpecError(f"c must be a number, not {value!r}") from None
            if c < 0:
                raise BotSpecError(f"c must not be negative, not {value!r}")
        else:
            raise BotSpecError(f"unknown mcts option {key!r}: use a budget, rollout=… or c=…")
    return budget, rollout, c


def _factory(options: str, seed: int | None) -> Bot:
    budget, rollout, c = parse_options(options)
    return MCTSBot(seed, budget, rollout, c)


register_bot(
    "mcts",
    _factory,
    "Monte Carlo tree search with chance nodes: mcts:1s (time per move) or mcts:5000 (iterations)",
)
