"""The compiled search tree: its links and counts stay consistent while it grows and is re-rooted."""

from __future__ import annotations

import numpy as np
import pytest

from coloretto.actions import DRAW
from coloretto.bots import kernel as K
from coloretto.bots import tree as T
from coloretto.bots.limits import Limit
from coloretto.bots.mcts import Search
from coloretto.game import Game
from coloretto.rules import Rules


def check_tree(tree: T.Tree, root: int = T.ROOT) -> int:
    """Assert the tree's invariants below ``root``; return how many nodes it holds."""
    nodes, ints = tree.nodes, tree.edge_ints
    seen = 0
    stack = [root]
    while stack:
        v = stack.pop()
        seen += 1
        e0, m = int(nodes[v, T.N_EDGE0]), int(nodes[v, T.N_EDGES])
        assert (m == 0) == bool(nodes[v, T.N_OVER])
        visits = ints[e0 : e0 + m, T.E_VISITS]
        assert int(visits.sum()) == nodes[v, T.N_TOTAL]
        for e in range(e0, e0 + m):
            children = []
            child = int(ints[e, T.E_CHILD])
            while child >= 0:
                children.append(child)
                child = int(nodes[child, T.N_SIBLING])
            cards = [int(nodes[w, T.N_CARD]) for w in children]
            assert len(set(cards)) == len(cards), "one child per card"
            # each visit of an edge either made a child, ended at a finished
            # game, or went on through a child
            below = sum(int(nodes[w, T.N_TOTAL]) for w in children)
            assert below <= ints[e, T.E_VISITS] <= below + len(children)
            if ints[e, T.E_VISITS] > 0:
                assert children
            if -1 in cards:  # an action that turns no card over has one outcome
                assert len(children) == 1
            stack.extend(children)
    return seen


def _search(players: int, iterations: int) -> tuple[Search, Game]:
    rules = Rules(players=players)
    game = Game.new(rules, seed=4)
    search = Search(rules)
    search.set_root(K.state_from_game(game))
    search.run(Limit(iterations=iterations), seed=1)
    return search, game


@pytest.mark.slow
def test_search_grows_the_tree_one_node_per_iteration() -> None:
    search, _ = _search(4, 10_000)  # more nodes than the first arrays hold: they grow
    assert search.iterations == 10_000
    assert search.total == 10_000
    assert search.tree.size == 10_001
    assert check_tree(search.tree) == 10_001
    assert len(search.tree.nodes) > 4096


def test_reuse_keeps_the_subtree_with_its_statistics() -> None:
    search, game = _search(3, 3000)
    game.push(DRAW, reveal=game.chance_outcomes()[0][0])
    s = K.state_from_game(game)
    old = search.tree.find(T.ROOT, s, 4, 10_000)
    assert old > 0
    old_total = int(search.tree.nodes[old, T.N_TOTAL])
    e0, m = int(search.tree.nodes[old, T.N_EDGE0]), int(search.tree.nodes[old, T.N_EDGES])
    old_edges = search.tree.edge_floats[e0 : e0 + m].copy()
    old_size = check_tree(search.tree, old)
    search.set_root(s)
    assert search.reused == old_total > 0
    assert search.tree.size == old_size == check_tree(search.tree)
    assert np.array_equal(search.tree.edge_floats[:m], old_edges)
    search.run(Limit(iterations=500), seed=2)
    assert search.total == old_total + 500
    check_tree(search.tree)


def test_a_position_not_in_the_tree_starts_a_new_one() -> None:
    search, _ = _search(2, 200)
    other = Game.new(Rules(players=2), seed=99)
    search.set_root(K.state_from_game(other))
    assert search.reused == 0 and search.tree.size == 1
