"""The check every wheel passes before it is kept: cibuildwheel's ``test-command`` runs it in a fresh
environment where the wheel is installed (``[tool.cibuildwheel]`` in pyproject.toml). The compiled
search kernel imports, and a ``hard`` bot plays a search move with it.

Run as ``python tests/wheel_check.py``: its folder, not the checkout, is on ``sys.path``, so the
coloretto it imports is the installed one.
"""

from __future__ import annotations

import sys


def main() -> int:
    from coloretto.actions import DRAW
    from coloretto.bots import _kernel, make_bot
    from coloretto.bots import kernel as _face  # noqa: F401 - checks the build against the core
    from coloretto.game import Game
    from coloretto.rules import Rules

    game = Game.new(Rules(players=4), seed=3)
    game.push(DRAW)  # a card to place: a choice of four rows, so the bot searches
    observation = game.observation(game.to_move)
    assert len(observation.legal_actions) > 1
    action = make_bot("hard", seed=1).choose(observation)
    if action not in observation.legal_actions:
        print(f"wheel check: the hard bot played {action}, not a legal action", file=sys.stderr)
        return 1
    print(f"wheel check: the kernel {_kernel.__file__} searched; the hard bot played {action}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
