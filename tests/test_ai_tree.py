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


def _decision(players: int = 4) -> Game:
    """A position with several actions: a card drawn and placed, the next to move may take."""
    game = Game.new(Rules(players=players), seed=11)
    game.push(DRAW)
    game.push(game.legal_actions[0])
    assert len(game.legal_actions) > 1
    return game


def _threaded(game: Game, threads: int, iterations: int, seed: int) -> Search:
    from coloretto.bots.mcts_options import Settings

    search = Search(game.rules, Settings(threads=threads))
    search.set_root(K.state_from_game(game))
    search.run(Limit(iterations=iterations), seed=seed)
    return search


def test_threads_share_out_an_iteration_budget_and_repeat_for_a_seed() -> None:
    game = _decision()
    first = _threaded(game, 3, 1_000, seed=7)
    again = _threaded(game, 3, 1_000, seed=7)
    assert first.iterations == 1_000
    assert [part.iterations for part in first.parts] == [334, 333, 333]
    assert sum(n for _, n, *_ in first.root_statistics()) == 1_000
    assert first.root_statistics() == again.root_statistics()
    assert first.best_action() == again.best_action()
    for part in first.parts:
        assert check_tree(part.tree) == part.tree.size
    # the trees searched apart: their first moves' statistics differ
    visits = [tuple(part.tree.edge_ints[:3, T.E_VISITS]) for part in first.parts]
    assert len(set(visits)) > 1


def test_one_thread_searches_as_the_plain_search_does() -> None:
    game = _decision()
    plain = Search(game.rules)
    plain.set_root(K.state_from_game(game))
    plain.run(Limit(iterations=500), seed=3)
    assert _threaded(game, 1, 500, seed=3).root_statistics() == plain.root_statistics()


def test_each_thread_draws_from_its_own_generator() -> None:
    """Playouts run at once in two threads, each seeded alike, play what one
    thread plays alone: neither thread's numbers are the other's."""
    import threading

    rules = Rules(players=4)
    s = K.state_from_game(Game.new(rules, seed=2))
    cfg = K.rules_config(rules)

    def run() -> int:
        K.k_seed(99)
        return int(K.k_bench(s, cfg, K.POLICY_GREEDY, 300))

    alone = run()
    results: list[int] = []
    threads = [threading.Thread(target=lambda: results.append(run())) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == [alone, alone]


def test_threads_option_is_read_and_checked() -> None:
    from coloretto.bots import BotSpecError, check_bot

    assert check_bot("mcts:1000,threads=2").settings.threads == 2
    for bad in ("0", "17", "two", "1.5"):
        with pytest.raises(BotSpecError, match="threads must be a whole number from 1 to 16"):
            check_bot(f"mcts:1000,threads={bad}")


def test_chance_nodes_follow_the_unseen_cards() -> None:
    """A draw's children are the cards it can turn over, each visited in proportion to how many of
    it are unseen: the chance node samples the true distribution of the shuffled deck."""
    search, game = _search(players=4, iterations=20_000)
    assert list(game.legal_actions) == [DRAW]  # the first player of a new game can only draw
    tree = search.tree
    edge = int(tree.nodes[T.ROOT, T.N_EDGE0])
    assert tree.edge_ints[edge, T.E_ACTION] == DRAW.id
    visits: dict[int, int] = {}
    child = int(tree.edge_ints[edge, T.E_CHILD])
    while child >= 0:
        visits[int(tree.nodes[child, T.N_CARD])] = int(tree.nodes[child, T.N_TOTAL])
        child = int(tree.nodes[child, T.N_SIBLING])
    unseen = game.observation(0).unseen_composition
    drawable = {kind: n for kind, n in enumerate(unseen) if n}
    assert set(visits) == set(drawable)  # every card that can come, and only those
    total = sum(visits.values())
    deck = sum(drawable.values())
    chi_square = sum(
        (visits[kind] - total * n / deck) ** 2 / (total * n / deck) for kind, n in drawable.items()
    )
    # the 99.9 % quantile of chi-square with 8 degrees of freedom (nine kinds of card: seven colours,
    # jokers and "+2"); this seed gives 13.4
    assert len(drawable) == 9
    assert chi_square < 26.1, (chi_square, visits, drawable)
