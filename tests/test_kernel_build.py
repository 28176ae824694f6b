"""The compiled search kernel as built by the install: it matches the core it was
built for, refuses to run older than its source, and a fresh interpreter's first
``hard`` move and hint need nothing compiled.

The kernel (``coloretto/bots/_kernel.pyx``) keeps C copies of two rules of the
core, the tie-break and the golden joker's bonus; they are checked here against
the core's own functions on every input they can meet.
"""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from coloretto.bots import _kernel
from coloretto.bots import kernel as k
from coloretto.game import earns_bonus_card
from coloretto.scoring import standing

REPOSITORY = Path(__file__).resolve().parents[1]
#: a hang guard for a fresh interpreter's first search, never a timing
HANG_GUARD = 300


def fresh_python(script: str, cache_prefix: Path) -> subprocess.CompletedProcess[str]:
    """Run ``script`` in a new interpreter that writes no bytecode (``-B``) and
    finds none (an empty ``PYTHONPYCACHEPREFIX``): as after a fresh install."""
    env = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join(filter(None, [str(REPOSITORY), os.environ.get("PYTHONPATH")])),
        PYTHONPYCACHEPREFIX=str(cache_prefix),
    )
    return subprocess.run(
        [sys.executable, "-B", "-c", textwrap.dedent(script)],
        cwd=REPOSITORY,
        env=env,
        capture_output=True,
        text=True,
        timeout=HANG_GUARD,
        check=False,
    )


# ---- the core's facts -------------------------------------------------------------


def test_the_kernel_was_built_for_the_core_it_runs_with() -> None:
    assert _kernel.compiled_constants() == _kernel.core_constants()
    _kernel.check_constants(_kernel.core_constants())


@pytest.mark.parametrize("name", sorted(_kernel.compiled_constants()))
def test_a_core_that_changed_fails_the_import_naming_what_changed(name: str) -> None:
    core = _kernel.core_constants()
    core[name] += 1
    with pytest.raises(RuntimeError, match=rf"built for {name} = .*the core now says {name} = "):
        _kernel.check_constants(core)


def test_a_core_without_one_of_the_facts_fails_too() -> None:
    core = _kernel.core_constants()
    del core["GOLDEN_JOKER"]
    with pytest.raises(RuntimeError, match="GOLDEN_JOKER = None"):
        _kernel.check_constants(core)


# ---- the C copies of the core's rules ---------------------------------------------


def test_the_kernels_tie_break_is_the_cores_for_every_total_and_minus_points() -> None:
    # totals from a heavy loss to more than any collection scores; minus points
    # beyond what seven colours can hold
    for total, minus, fewer_minus in itertools.product(range(-80, 260), range(0, 130), (False, True)):
        assert k.k_standing(total, minus, fewer_minus) == standing(total, minus, fewer_minus), (
            total,
            minus,
            fewer_minus,
        )


def test_the_kernels_golden_joker_bonus_is_the_cores_for_every_row() -> None:
    # every row a row can hold: up to MAX_ROW_SIZE cards of any kind a
    # collection counts (the last-round card never lies in a row), in any order
    rows = [
        row
        for length in range(k.MAX_ROW_SIZE + 1)
        for row in itertools.product(range(k.COLLECTABLE_KINDS), repeat=length)
    ]
    assert len(rows) == sum(k.COLLECTABLE_KINDS**n for n in range(k.MAX_ROW_SIZE + 1))
    for row in rows:
        cards = np.array(row, dtype=np.int64)
        for drawable in (-1, 0, 1, 2, 70):
            assert k.k_earns_bonus_card(cards, drawable) == earns_bonus_card(row, drawable), (row, drawable)


# ---- the stale-build guard ---------------------------------------------------------


def test_the_build_is_the_source_beside_it() -> None:
    k.check_build(k.KERNEL_SOURCE, _kernel.SOURCE_SHA256)  # what the import of kernel checked
    assert len(_kernel.SOURCE_SHA256) == 64


def test_an_edited_source_without_a_rebuild_is_refused(tmp_path: Path) -> None:
    edited = tmp_path / "_kernel.pyx"
    edited.write_bytes(k.KERNEL_SOURCE.read_bytes() + b"\n# an edit\n")
    with pytest.raises(ImportError, match=r"older than coloretto/bots/_kernel\.pyx: run `pip install -e \.`"):
        k.check_build(edited, _kernel.SOURCE_SHA256)


def test_a_build_without_its_digest_is_refused_and_an_install_without_the_source_runs() -> None:
    with pytest.raises(ImportError, match="built without the digest of its source"):
        k.check_build(k.KERNEL_SOURCE, "")
    k.check_build(Path("/nonexistent/_kernel.pyx"), "")  # nothing to be older than


def test_importing_the_kernel_checks_the_build(tmp_path: Path) -> None:
    result = fresh_python(
        """
        from coloretto.bots import _kernel
        _kernel.SOURCE_SHA256 = "0" * 64  # as if built from another version of the source
        try:
            from coloretto.bots import kernel
        except ImportError as exc:
            print("refused:", exc)
        """,
        tmp_path,
    )
    assert result.returncode == 0, result.stderr
    assert "refused: the compiled search kernel is older than coloretto/bots/_kernel.pyx" in result.stdout


# ---- no cold start -----------------------------------------------------------------


def test_a_fresh_interpreters_first_hard_move_and_hint_compile_nothing(tmp_path: Path) -> None:
    cache = tmp_path / "pycache"
    cache.mkdir()
    result = fresh_python(
        """
        import sys
        from coloretto.actions import DRAW
        from coloretto.analysis import analyze
        from coloretto.bots import make_bot
        from coloretto.game import Game
        from coloretto.rules import Rules

        game = Game.new(Rules(players=4), seed=3)
        game.push(DRAW)  # a card to place: a choice of four rows, so the bot searches
        observation = game.observation(game.to_move)
        assert len(observation.legal_actions) > 1
        action = make_bot("hard", seed=1).choose(observation)
        hint = analyze(observation, budget=200, seed=1)
        print(action.id)
        print(" ".join(str(a.id) for a in observation.legal_actions))
        print(" ".join(str(line.action.id) for line in hint))
        print("numba" in sys.modules)
        """,
        cache,
    )
    assert result.returncode == 0, result.stderr
    move, legal, hinted, numba = result.stdout.split("\n")[:4]
    assert move in legal.split()
    assert hinted.split() and set(hinted.split()) <= set(legal.split())
    assert numba == "False"
    assert not any(cache.iterdir()), "the interpreter was told to write no bytecode"


# ---- bad input -------------------------------------------------------------------


def _position() -> tuple[np.ndarray, np.ndarray]:
    from coloretto.game import Game
    from coloretto.rules import Rules

    rules = Rules(players=4)
    return k.state_from_game(Game.new(rules, seed=1)), k.rules_config(rules)


def test_arrays_of_the_wrong_size_or_contents_are_refused_with_what_was_wrong() -> None:
    s, cfg = _position()
    legal = np.empty(k.MAX_ACTIONS, dtype=np.int64)
    with pytest.raises(ValueError, match=f"a kernel state must hold {k.STATE_SIZE} values, not 5"):
        k.k_legal(np.zeros(5, dtype=np.int64), cfg, legal)
    with pytest.raises(ValueError, match=f"a kernel rules array must hold {k.CFG_SIZE} values, not 3"):
        k.k_legal(s, np.zeros(3, dtype=np.int64), legal)
    with pytest.raises(ValueError, match="legal actions' array must hold at least"):
        k.k_legal(s, cfg, np.empty(3, dtype=np.int64))
    with pytest.raises(ValueError, match="Buffer dtype mismatch"):
        k.k_legal(s.astype(np.int32), cfg, legal)
    bad_rules = cfg.copy()
    bad_rules[k.C_PLAYERS] = 9
    with pytest.raises(ValueError, match=r"not a kernel rules array \(rules_config\): 9 players"):
        k.k_legal(s, bad_rules, legal)
    for slot, value, said in (
        (k.PLAYER, 7, "seat 7 to move"),
        (k.ROWLEN + 1, 4, "row 2 holding 4 cards"),
        (k.PENDING, 12, "card 12 drawn"),
        (k.UNSEEN + 3, -1, "-1 unseen cards of kind 3"),
    ):
        bad = s.copy()
        bad[slot] = value
        with pytest.raises(ValueError, match=rf"not a kernel state of these rules .*: {said}"):
            k.k_playout(bad, cfg, k.POLICY_RANDOM, np.zeros(k.RESULT_SIZE))


def test_actions_policies_and_seeds_out_of_range_are_refused() -> None:
    s, cfg = _position()
    with pytest.raises(ValueError, match="40 is no action id"):
        k.k_apply(s, cfg, 40, -1)
    missing = next(kind for kind in range(k.CARD_KINDS) if s[k.UNSEEN + kind] == 0)
    with pytest.raises(ValueError, match=f"turns over a card: {missing} is none of the unseen cards"):
        k.k_apply(s, cfg, k.A_DRAW, missing)
    with pytest.raises(ValueError, match="unknown playout policy 5"):
        k.k_bench(s, cfg, 5, 1)
    with pytest.raises(ValueError, match="a kernel seed lies in"):
        k.k_seed(-1)


def test_a_tree_used_wrongly_is_refused() -> None:
    from coloretto.bots import tree as t

    s, cfg = _position()
    tree = t.Tree(8)
    root = tree.add_root(s, cfg)
    with pytest.raises(ValueError, match="root 3 is not a node of the tree"):
        t.k_iterate(
            tree.nodes, tree.states, tree.edge_ints, tree.edge_floats, tree.meta,
            3, s, cfg, k.POLICY_GREEDY, 0.7, 0, 1, 0.75, 30.0, np.zeros(12),
        )  # fmt: skip
    tree.meta[t.M_NODES] = len(tree.nodes)  # every node in use
    with pytest.raises(ValueError, match="the tree is full"):
        t.k_add_node(tree.nodes, tree.states, tree.edge_ints, tree.edge_floats, tree.meta, s, cfg)
    with pytest.raises(ValueError, match="a tree's nodes are"):
        t.k_find(tree.nodes[:, :3].copy(), tree.states, tree.edge_ints, root, s.astype(np.int16), 1, 1)
