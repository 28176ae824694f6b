"""Every test that waits on a search first sees one search work, here, once.

The search kernel is a C extension built by the install, so nothing compiles
on first use; but a kernel that was not built, or was built from another
source (``coloretto.bots.kernel`` refuses it), would fail every test that
waits on a bot's move, a hint or an analysis, each after its own timeout when
the search runs in a server's worker. Every test marked ``search`` (the
modules below are marked whole, and so is every test whose name mentions a
hint) first runs a short search in this process, which fails once, at once,
with the import's own message. Tests that never search do not pay for it.

The ``servers`` and ``module_servers`` fixtures start the real servers a test needs (one
process, or several on PostgreSQL and Redis behind nginx: ``tests/servers.py``).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.servers import Servers

#: modules whose tests wait on an MCTS bot, a hint or an analysis
SEARCH_MODULES = frozenset(
    {
        "tests/test_ai_bots.py",
        "tests/test_ai_tree.py",
        "tests/test_analysis.py",
        "tests/e2e/test_browser.py",
    }
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    tests = config.rootpath / "tests"
    for item in items:
        if not item.path.is_relative_to(tests):
            continue  # the package's doctests search nothing
        module = item.path.relative_to(config.rootpath).as_posix()
        if module in SEARCH_MODULES or "hint" in item.name:
            item.add_marker(pytest.mark.search)


@pytest.fixture(autouse=True)
def _search_compiled_first(request: pytest.FixtureRequest) -> None:
    if request.node.get_closest_marker("search"):
        request.getfixturevalue("compiled_search")


@pytest.fixture(scope="session")
def compiled_search() -> None:
    """Run everything a search runs: the kernel and tree functions an MCTS bot
    warms up, a few moves of a bot that keeps its tree between moves, and an
    analysis and an evaluation."""
    from coloretto.analysis import analyze, evaluate
    from coloretto.bots import make_bot
    from coloretto.game import Game
    from coloretto.rules import Rules

    game = Game.new(Rules(players=3), seed=0)
    bot = make_bot("mcts:64", seed=0)
    for _ in range(6):
        seat = game.to_move
        assert seat is not None
        game.push(bot.choose(game.observation(seat)))
    assert analyze(game, budget=64, seed=0), "the analysis of a game in progress values its actions"
    assert len(evaluate(game, budget=64, seed=0).win_probabilities) == 3


@pytest.fixture
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Servers]:
    """Real servers for one test (``tests/servers.py``): every one it starts is stopped after it."""
    started = Servers(tmp_path_factory)
    yield started
    started.stop_all()


@pytest.fixture(scope="module")
def module_servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Servers]:
    """Real servers shared by a module's tests, stopped after the last of them."""
    started = Servers(tmp_path_factory)
    yield started
    started.stop_all()
