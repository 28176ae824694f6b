"""Names the package's docstring examples may use without setting them up:
``game``, a fresh three-player game, and ``out_dir``, an empty folder."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest


@pytest.fixture(autouse=True)
def _doctest_names(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> None:
    if not isinstance(request.node, pytest.DoctestItem):
        return
    from coloretto import Game, Rules

    namespace: dict[str, Any] = request.getfixturevalue("doctest_namespace")
    namespace["game"] = Game.new(Rules(players=3), seed=7)
    namespace["out_dir"] = Path(tmp_path_factory.mktemp("doctest"))
