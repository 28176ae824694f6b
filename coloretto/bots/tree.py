"""The MCTS tree, compiled: selection, expansion, playout and backup in one C loop.

A search iteration is a few microseconds of tree walking around a playout of
some tens of microseconds; written in Python, the walk cost as much as the
playout. Here the whole iteration runs in :func:`k_iterate`, on a tree kept in
a handful of flat arrays (:class:`Tree`), so a search runs at about the speed
of its playouts.

Layout. Node ``v`` is row ``v`` of ``nodes`` (``N_*`` columns) and of
``states`` (its public position, for finding it again on the next move). Its
legal actions are the edges ``nodes[v, N_EDGE0] + i`` for ``i`` below
``nodes[v, N_EDGES]``; an edge's integer columns (``E_*``) hold the action, its
visits and its first child, its float columns (``F_*``) the mover's summed
final score and win share and then every seat's summed utility (max-n). An
action that turns a card over has one child per card seen so far, chained
through ``N_SIBLING`` and told apart by ``N_CARD``; any other action has one
child. Search semantics are described in :mod:`coloretto.bots.mcts`.

The compiled functions (``k_*``) and the column numbers live in the
extension :mod:`coloretto.bots._kernel`, with the kernel's rules; this module
names the columns and keeps the Python side of a tree (:class:`Tree`).
"""

from __future__ import annotations

import numpy as np

from coloretto.bots import kernel as K
from coloretto.bots.kernel import _kernel

# ---- node columns (int64) ----------------------------------------------------
N_PLAYER = _kernel.N_PLAYER  #: seat to move
N_EDGE0 = _kernel.N_EDGE0  #: index of the first edge
N_EDGES = _kernel.N_EDGES  #: number of edges (legal actions); 0 once the game is over
N_TOTAL = _kernel.N_TOTAL  #: visits through this node
N_CARD = _kernel.N_CARD  #: the card the parent edge turned over to reach this node, -1 if none
N_SIBLING = _kernel.N_SIBLING  #: next child of the same parent edge, -1 if none
N_OVER = _kernel.N_OVER  #: 1 if the game is over here
NODE_COLUMNS = _kernel.NODE_COLUMNS

# ---- edge columns ----------------------------------------------------------
E_ACTION = _kernel.E_ACTION
E_VISITS = _kernel.E_VISITS
E_CHILD = _kernel.E_CHILD  #: first child node, -1 if none yet
EDGE_INT_COLUMNS = _kernel.EDGE_INT_COLUMNS
F_SCORE = _kernel.F_SCORE  #: the mover's final score, summed
F_WIN = _kernel.F_WIN  #: the mover's win share, summed
F_UTILITY = _kernel.F_UTILITY  #: MAX_PLAYERS columns: every seat's utility, summed
EDGE_FLOAT_COLUMNS = _kernel.EDGE_FLOAT_COLUMNS

# ---- meta (int64) ------------------------------------------------------------
M_NODES = _kernel.M_NODES  #: nodes in use
M_EDGES = _kernel.M_EDGES  #: edges in use
META_SIZE = _kernel.META_SIZE

#: the root's node: the first node of a new tree, and where :meth:`Tree.keep_only` puts the kept root
ROOT = 0

#: ``k_iterate`` stops early when fewer than this many nodes or edges are free
#: (one iteration adds at most one node and its edges)
_HEADROOM_NODES = _kernel.HEADROOM_NODES
_HEADROOM_EDGES = _kernel.HEADROOM_EDGES
#: :meth:`Tree.reserve` leaves room for at least this many iterations
_RESERVE_ITERATIONS = 64
#: deeper than any game goes (under 400 actions with the largest deck); a path
#: this long ends in a playout rather than overrun the path buffer
_MAX_DEPTH = _kernel.MAX_DEPTH

# ---- the compiled functions (documented in the extension) ---------------------
k_add_node = _kernel.k_add_node
k_iterate = _kernel.k_iterate
k_find = _kernel.k_find
k_copy_subtree = _kernel.k_copy_subtree


class Tree:
    """The arrays of one search tree, grown as the search needs room."""

    def __init__(self, nodes: int = 4096) -> None:
        self.nodes = np.zeros((nodes, NODE_COLUMNS), dtype=np.int64)
        self.states = np.zeros((nodes, K.STATE_SIZE), dtype=np.int16)
        edges = 8 * nodes
        self.edge_ints = np.zeros((edges, EDGE_INT_COLUMNS), dtype=np.int64)
        self.edge_floats = np.zeros((edges, EDGE_FLOAT_COLUMNS), dtype=np.float64)
        self.meta = np.zeros(META_SIZE, dtype=np.int64)

    @property
    def size(self) -> int:
        """Nodes in use."""
        return int(self.meta[M_NODES])

    def reserve(self) -> None:
        """Double whichever arrays are close to full."""
        if self.meta[M_NODES] + _RESERVE_ITERATIONS * _HEADROOM_NODES > len(self.nodes):
            self.nodes = _grown(self.nodes)
            self.states = _grown(self.states)
        if self.meta[M_EDGES] + _RESERVE_ITERATIONS * _HEADROOM_EDGES > len(self.edge_ints):
            self.edge_ints = _grown(self.edge_ints)
            self.edge_floats = _grown(self.edge_floats)

    def clear(self) -> None:
        self.meta[:] = 0

    def add_root(self, s: np.ndarray, cfg: np.ndarray) -> int:
        """The root node (:data:`ROOT`) of an empty tree."""
        assert self.size == 0
        self.reserve()
        return int(k_add_node(self.nodes, self.states, self.edge_ints, self.edge_floats, self.meta, s, cfg))

    def find(self, root: int, s: np.ndarray, max_depth: int, max_nodes: int) -> int:
        """The node below ``root`` (or ``root``) whose position is ``s``, -1 if none is near."""
        key = s.astype(np.int16)
        return int(k_find(self.nodes, self.states, self.edge_ints, root, key, max_depth, max_nodes))

    def keep_only(self, root: int) -> None:
        """Drop every node outside ``root``'s subtree; ``root`` becomes :data:`ROOT`."""
        old = (self.nodes, self.states, self.edge_ints, self.edge_floats, self.meta)
        self.nodes = np.zeros_like(self.nodes)
        self.states = np.zeros_like(self.states)
        self.edge_ints = np.zeros_like(self.edge_ints)
        self.edge_floats = np.zeros_like(self.edge_floats)
        self.meta = np.zeros(META_SIZE, dtype=np.int64)
        k_copy_subtree(*old, root, self.nodes, self.states, self.edge_ints, self.edge_floats, self.meta)


def _grown(a: np.ndarray) -> np.ndarray:
    bigger = np.zeros((2 * a.shape[0], *a.shape[1:]), dtype=a.dtype)
    bigger[: a.shape[0]] = a
    return bigger


def warm_up() -> None:
    """Run the tree functions once: a short search (nothing compiles here: the
    extension is built by the install)."""
    from coloretto.game import Game
    from coloretto.rules import Rules

    rules = Rules(players=4)
    cfg = K.rules_config(rules)
    s = K.state_from_game(Game.new(rules, seed=0))
    tree = Tree(64)
    root = tree.add_root(s, cfg)
    sums = np.zeros(3 * rules.players)
    k_iterate(
        tree.nodes, tree.states, tree.edge_ints, tree.edge_floats, tree.meta,
        root, s, cfg, K.POLICY_GREEDY, 0.7, 0, 8, 0.75, 30.0, sums,
    )  # fmt: skip
    tree.find(root, s, 4, 100)
    tree.keep_only(root)
