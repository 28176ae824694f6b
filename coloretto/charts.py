"""Charts: Matplotlib on its file-only backend. Matplotlib is the optional extra ``plots``
(``pip install 'coloretto[plots]'``): a site that only serves games, or a player, does not
download and compile it. Without it every chart a command writes beside its other results is
left out with one line saying so; a chart asked for alone (``analyze --plot``) is refused
before the work begins."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

#: what to install, said wherever a chart cannot be drawn
MISSING = "Matplotlib is not installed: pip install 'coloretto[plots]' to draw charts"


class ChartsMissing(RuntimeError):
    """A chart was asked for and Matplotlib is not installed."""


def available() -> bool:
    return importlib.util.find_spec("matplotlib") is not None


def can_draw(path: Path) -> bool:
    """Whether the chart ``path`` can be drawn; when not, says so on stderr (the other results
    of the command are written all the same)."""
    if available():
        return True
    print(f"{path}: not drawn ({MISSING})", file=sys.stderr)
    return False


def pyplot() -> Any:
    """matplotlib's pyplot on the file-only backend (no display needed)."""
    if not available():
        raise ChartsMissing(MISSING)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt
