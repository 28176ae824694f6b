"""The MCTS tree, compiled: selection, expansion, playout and backup in one numba loop.

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
"""

from __future__ import annotations

import numpy as np
from numba import njit

from coloretto.bots import kernel as K

# ---- node columns (int64) ----------------------------------------------------
N_PLAYER = 0  #: seat to move
N_EDGE0 = 1  #: index of the first edge
N_EDGES = 2  #: number of edges (legal actions); 0 once the game is over
N_TOTAL = 3  #: visits through this node
N_CARD = 4  #: the card the parent edge turned over to reach this node, -1 if none
N_SIBLING = 5  #: next child of the same parent edge, -1 if none
N_OVER = 6  #: 1 if the game is over here
NODE_COLUMNS = 7

# ---- edge columns ----------------------------------------------------------
E_ACTION = 0
E_VISITS = 1
E_CHILD = 2  #: first child node, -1 if none yet
EDGE_INT_COLUMNS = 3
F_SCORE = 0  #: the mover's final score, summed
F_WIN = 1  #: the mover's win share, summed
F_UTILITY = 2  #: 5 columns: every seat's utility, summed
EDGE_FLOAT_COLUMNS = 7

# ---- meta (int64) ------------------------------------------------------------
M_NODES = 0  #: nodes in use
M_EDGES = 1  #: edges in use
META_SIZE = 2

#: the root's node: the first node of a new tree, and where :meth:`Tree.keep_only` puts the kept root
ROOT = 0

#: ``k_iterate`` stops early when fewer than this many nodes or edges are free
#: (one iteration adds at most one node and its edges)
_HEADROOM_NODES = 1
_HEADROOM_EDGES = K.MAX_ACTIONS
#: :meth:`Tree.reserve` leaves room for at least this many iterations
_RESERVE_ITERATIONS = 64
#: deeper than any game goes (under 400 actions with the largest deck); a path
#: this long would end in a playout rather than overrun the path buffer
_MAX_DEPTH = 512


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


@njit(cache=True)
def k_add_node(
    nodes: np.ndarray,
    states: np.ndarray,
    edge_ints: np.ndarray,
    edge_floats: np.ndarray,
    meta: np.ndarray,
    s: np.ndarray,
    cfg: np.ndarray,
) -> int:
    """A new node for position ``s`` with one fresh edge per legal action."""
    v = meta[M_NODES]
    meta[M_NODES] = v + 1
    e0 = meta[M_EDGES]
    legal = np.empty(K.MAX_ACTIONS, dtype=np.int64)
    m = K.k_legal(s, cfg, legal)
    meta[M_EDGES] = e0 + m
    nodes[v, N_PLAYER] = s[K.PLAYER]
    nodes[v, N_EDGE0] = e0
    nodes[v, N_EDGES] = m
    nodes[v, N_TOTAL] = 0
    nodes[v, N_CARD] = -1
    nodes[v, N_SIBLING] = -1
    nodes[v, N_OVER] = 1 if s[K.OVER] else 0
    for j in range(K.STATE_SIZE):
        states[v, j] = s[j]
    for i in range(m):
        e = e0 + i
        edge_ints[e, E_ACTION] = legal[i]
        edge_ints[e, E_VISITS] = 0
        edge_ints[e, E_CHILD] = -1
        for j in range(EDGE_FLOAT_COLUMNS):
            edge_floats[e, j] = 0.0
    return v


@njit(cache=True)
def _select(
    nodes: np.ndarray,
    edge_ints: np.ndarray,
    edge_floats: np.ndarray,
    v: int,
    c: float,
    floor: int,
) -> int:
    """The edge to follow from node ``v``: each edge once (or ``floor`` times),
    then UCB1 on the mover's own mean utility."""
    e0 = nodes[v, N_EDGE0]
    m = nodes[v, N_EDGES]
    if m == 1:
        return e0
    fewest = e0
    for e in range(e0, e0 + m):
        if edge_ints[e, E_VISITS] < edge_ints[fewest, E_VISITS]:
            fewest = e
    visits = edge_ints[fewest, E_VISITS]
    if visits == 0 or visits < floor:
        return fewest
    p = nodes[v, N_PLAYER]
    log_n = c * np.sqrt(np.log(nodes[v, N_TOTAL]))
    best = e0
    best_value = -1.0
    for e in range(e0, e0 + m):
        n = edge_ints[e, E_VISITS]
        value = edge_floats[e, F_UTILITY + p] / n + log_n / np.sqrt(n)
        if value > best_value:
            best_value = value
            best = e
    return best


@njit(cache=True)
def k_iterate(
    nodes: np.ndarray,
    states: np.ndarray,
    edge_ints: np.ndarray,
    edge_floats: np.ndarray,
    meta: np.ndarray,
    root: int,
    root_state: np.ndarray,
    cfg: np.ndarray,
    policy: int,
    c: float,
    root_floor: int,
    iterations: int,
    win_weight: float,
    margin_scale: float,
    sums: np.ndarray,
) -> int:
    """Run up to ``iterations`` search iterations from ``root``; return how
    many ran (fewer when the arrays need to grow first). ``sums`` gathers every
    iteration's values (utilities, final scores, win shares of every seat)."""
    players = cfg[K.C_PLAYERS]
    s = root_state.copy()
    values = np.zeros(3 * players, dtype=np.float64)
    path = np.empty(2 * _MAX_DEPTH, dtype=np.int64)
    capacity_nodes = nodes.shape[0]
    capacity_edges = edge_ints.shape[0]
    done = 0
    while done < iterations:
        if (
            meta[M_NODES] + _HEADROOM_NODES > capacity_nodes
            or meta[M_EDGES] + _HEADROOM_EDGES > capacity_edges
        ):
            break
        s[:] = root_state
        v = root
        depth = 0
        while True:
            if nodes[v, N_OVER] or depth == _MAX_DEPTH:
                K.k_playout_values(s, cfg, policy, values, win_weight, margin_scale)
                break
            e = _select(nodes, edge_ints, edge_floats, v, c, root_floor if v == root else 0)
            card = K.k_step(s, cfg, edge_ints[e, E_ACTION])
            path[2 * depth] = v
            path[2 * depth + 1] = e
            depth += 1
            child = edge_ints[e, E_CHILD]
            while child >= 0 and nodes[child, N_CARD] != card:
                child = nodes[child, N_SIBLING]
            if child < 0:
                child = k_add_node(nodes, states, edge_ints, edge_floats, meta, s, cfg)
                nodes[child, N_CARD] = card
                nodes[child, N_SIBLING] = edge_ints[e, E_CHILD]
                edge_ints[e, E_CHILD] = child
                K.k_playout_values(s, cfg, policy, values, win_weight, margin_scale)
                break
            v = child
        for j in range(3 * players):
            sums[j] += values[j]
        for k in range(depth):
            v = path[2 * k]
            e = path[2 * k + 1]
            nodes[v, N_TOTAL] += 1
            edge_ints[e, E_VISITS] += 1
            mover = nodes[v, N_PLAYER]
            edge_floats[e, F_SCORE] += values[players + mover]
            edge_floats[e, F_WIN] += values[2 * players + mover]
            for p in range(players):
                edge_floats[e, F_UTILITY + p] += values[p]
        done += 1
    return done


@njit(cache=True)
def k_find(
    nodes: np.ndarray,
    states: np.ndarray,
    edge_ints: np.ndarray,
    root: int,
    key: np.ndarray,
    max_depth: int,
    max_nodes: int,
) -> int:
    """Breadth-first search below ``root`` for the node whose position is ``key``."""
    queue = np.empty(max_nodes + 1, dtype=np.int64)
    depths = np.empty(max_nodes + 1, dtype=np.int64)
    queue[0] = root
    depths[0] = 0
    head = 0
    tail = 1
    size = key.shape[0]
    while head < tail:
        v = queue[head]
        depth = depths[head]
        head += 1
        same = True
        for j in range(size):
            if states[v, j] != key[j]:
                same = False
                break
        if same:
            return v
        if depth >= max_depth:
            continue
        e0 = nodes[v, N_EDGE0]
        for e in range(e0, e0 + nodes[v, N_EDGES]):
            child = edge_ints[e, E_CHILD]
            while child >= 0:
                if tail > max_nodes:
                    break
                queue[tail] = child
                depths[tail] = depth + 1
                tail += 1
                child = nodes[child, N_SIBLING]
    return -1


@njit(cache=True)
def k_copy_subtree(
    nodes: np.ndarray,
    states: np.ndarray,
    edge_ints: np.ndarray,
    edge_floats: np.ndarray,
    meta: np.ndarray,
    root: int,
    new_nodes: np.ndarray,
    new_states: np.ndarray,
    new_edge_ints: np.ndarray,
    new_edge_floats: np.ndarray,
    new_meta: np.ndarray,
) -> None:
    """Copy ``root``'s subtree into empty arrays of the same size, breadth first:
    ``root`` becomes node 0 and the copy is compact."""
    renumber = np.full(meta[M_NODES], -1, dtype=np.int64)
    queue = np.empty(meta[M_NODES], dtype=np.int64)
    queue[0] = root
    renumber[root] = 0
    head = 0
    tail = 1
    edges_used = 0
    while head < tail:
        v = queue[head]
        w = head  # nodes are numbered in the order they are queued
        head += 1
        for j in range(NODE_COLUMNS):
            new_nodes[w, j] = nodes[v, j]
        for j in range(states.shape[1]):
            new_states[w, j] = states[v, j]
        e0 = nodes[v, N_EDGE0]
        m = nodes[v, N_EDGES]
        new_nodes[w, N_EDGE0] = edges_used
        for i in range(m):
            e = e0 + i
            f = edges_used + i
            for j in range(EDGE_INT_COLUMNS):
                new_edge_ints[f, j] = edge_ints[e, j]
            for j in range(EDGE_FLOAT_COLUMNS):
                new_edge_floats[f, j] = edge_floats[e, j]
            child = edge_ints[e, E_CHILD]
            while child >= 0:
                renumber[child] = tail
                queue[tail] = child
                tail += 1
                child = nodes[child, N_SIBLING]
        edges_used += m
    # second pass: child and sibling links in the new numbering
    for w in range(tail):
        sibling = new_nodes[w, N_SIBLING]
        new_nodes[w, N_SIBLING] = renumber[sibling] if sibling >= 0 and w > 0 else -1
        e0 = new_nodes[w, N_EDGE0]
        for f in range(e0, e0 + new_nodes[w, N_EDGES]):
            child = new_edge_ints[f, E_CHILD]
            if child >= 0:
                new_edge_ints[f, E_CHILD] = renumber[child]
    new_meta[M_NODES] = tail
    new_meta[M_EDGES] = edges_used


def warm_up() -> None:
    """Compile (or load from the cache) the tree functions once: a short search."""
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
