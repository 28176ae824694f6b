"""What went wrong in the live path, told once: logged with the game and its move, and counted.

Every step a game in play goes through (the writer's commit, a bot's turn, the
bot workers, a turn clock, the broadcast, the bus between server processes,
the watchdog's finds) reports its exceptions here rather than swallowing them.
The caller then puts the game back on its feet (it is read again from the
database and its bot or clock set going again: ``Games.recover``).
The counts are shown by ``/api/health`` and ``/metrics`` (``coloretto_incidents_total``); each log
line carries the game and its move as fields of their own (``--log-format json``).
"""

from __future__ import annotations

import logging
import threading
from collections import Counter
from typing import Any, Protocol

from coloretto.web.common import metrics

log = logging.getLogger("coloretto.web.common.incidents")

#: the steps of the live path, in the order a move goes through them
STEPS = (
    "writer", "bot", "worker", "clock", "broadcast", "bus", "publish", "message", "recover",
    "watchdog", "background",
)  # fmt: skip


class GameLike(Protocol):
    @property
    def id(self) -> str: ...

    @property
    def move_count(self) -> int: ...


class Incidents:
    """Counts of the live path's errors by step; each is logged once, with its game and move."""

    def __init__(self) -> None:
        self._counts: Counter[str] = Counter()
        self._lock = threading.Lock()
        for step in STEPS:  # every step's series in /metrics from the start, at 0
            metrics.incidents[step]

    def record(self, step: str, game: GameLike | None, what: str, error: BaseException | None = None) -> None:
        """Log ``what`` happened in ``step`` (with ``error``'s traceback) and count it."""
        with self._lock:
            self._counts[step] += 1
        metrics.incidents[step].inc()
        fields: dict[str, Any] = {"step": step}
        where = ""
        if game is not None:
            move = _move_of(game)
            where = f"game {game.id} at move {move}: "
            fields.update(game=game.id, move=int(move) if move.isdigit() else None)
        if error is None:
            log.error("%s%s (%s)", where, what, step, extra=fields)
        else:
            log.error("%s%s (%s): %s", where, what, step, error, exc_info=error, extra=fields)

    def counts(self) -> dict[str, int]:
        with self._lock:
            return dict(sorted(self._counts.items()))

    @property
    def total(self) -> int:
        with self._lock:
            return sum(self._counts.values())


def _move_of(game: GameLike) -> str:
    try:
        return str(game.move_count)
    except Exception:  # a game too broken to count its moves is still reported
        return "?"
