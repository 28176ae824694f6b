"""How long a bot may think about one move: :class:`Limit`, and its one parser.

A limit is a time, a number of search iterations, or both (the search stops at
whichever comes first), as python-chess's ``engine.Limit``. Written as text
(bot names such as ``mcts:1s``, ``coloretto analyze --budget``):

>>> Limit.parse("1s"), Limit.parse("250ms"), Limit.parse("5000")
(Limit(time=1.0, iterations=None), Limit(time=0.25, iterations=None), Limit(time=None, iterations=5000))
>>> str(Limit.parse("5000,0.5s"))
'5000,0.5s'

This module imports nothing heavy, so bot names can be checked without loading
the compiled search.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

#: the shortest time worth searching for; below it a move is all overhead
MIN_TIME = 0.001
#: an hour a move: longer is a typing mistake, not a plan
MAX_TIME = 3600.0
#: a hundred million iterations: hours of search, and gigabytes of tree
MAX_ITERATIONS = 100_000_000

_TIME = re.compile(r"(?P<number>[+-]?(?:\d+(?:\.\d*)?|\.\d+))\s*(?P<unit>ms|s)")
_ITERATIONS = re.compile(r"[+-]?\d+")
_DECIMAL = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:e[+-]?\d+)?")
_FORMS = "give iterations (5000) or a time (1s, 0.5s, 250ms)"


class LimitError(ValueError):
    """Text that is not a limit, or a limit out of range; the message is one line."""


@dataclass(frozen=True)
class Limit:
    """A budget for one move: seconds, iterations, or both (whichever ends first)."""

    time: float | None = None  #: seconds of wall-clock time
    iterations: int | None = None  #: search iterations (simulations)

    def __post_init__(self) -> None:
        if self.time is None and self.iterations is None:
            raise LimitError("a limit needs a time, a number of iterations or both")
        if self.time is not None:
            # frozen, so set through object: an int of seconds is kept as a float
            object.__setattr__(self, "time", _check_time(self.time, f"{self.time!r} s"))
        if self.iterations is not None:
            _check_iterations(self.iterations, repr(self.iterations))

    @classmethod
    def parse(cls, text: str) -> Limit:
        """``"1s"``, ``"0.5s"``, ``"250ms"`` (a time), ``"5000"`` (iterations), or
        one of each separated by a comma (``"5000,1s"``)."""
        if not isinstance(text, str):
            raise LimitError(f"a limit is text such as '1s' or '5000', not {text!r}")
        time: float | None = None
        iterations: int | None = None
        parts = [part.strip().lower() for part in text.split(",")]
        if not any(parts):
            raise LimitError(f"the limit is empty: {_FORMS}")
        for part in parts:
            if not part:
                raise LimitError(f"an empty part in the limit {_shown(text)}: {_FORMS}")
            if (match := _TIME.fullmatch(part)) is not None:
                if time is not None:
                    raise LimitError(f"two times in the limit {_shown(text)}: give one")
                scale = 0.001 if match["unit"] == "ms" else 1.0
                time = _check_time(float(match["number"]) * scale, _shown(part))
            elif _ITERATIONS.fullmatch(part) is not None:
                if iterations is not None:
                    raise LimitError(f"two iteration counts in the limit {_shown(text)}: give one")
                # a number too long for int() to read is too large anyway
                count = int(part) if len(part) <= 20 else MAX_ITERATIONS + 1
                iterations = _check_iterations(count, _shown(part))
            elif _DECIMAL.fullmatch(part) is not None:
                raise LimitError(
                    f"cannot read the limit {_shown(part)}: iterations are a whole number, "
                    "and a time needs its unit (1s, 250ms)"
                )
            else:
                raise LimitError(f"cannot read the limit {_shown(part)}: {_FORMS}")
        return cls(time=time, iterations=iterations)

    def __str__(self) -> str:
        """The limit as :meth:`parse` reads it back."""
        parts = []
        if self.iterations is not None:
            parts.append(str(self.iterations))
        if self.time is not None:
            short = f"{self.time:g}"
            parts.append(f"{short if float(short) == self.time else repr(self.time)}s")
        return ",".join(parts)


def as_limit(value: Limit | int | str) -> Limit:
    """A limit from what callers pass around: a Limit, iterations (an int) or text."""
    if isinstance(value, Limit):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return Limit(iterations=value)
    if isinstance(value, str):
        return Limit.parse(value)
    raise LimitError(f"a limit is a Limit, a number of iterations or text such as '1s', not {value!r}")


def _check_time(seconds: float, shown: str) -> float:
    if isinstance(seconds, bool) or not isinstance(seconds, int | float) or math.isnan(seconds):
        raise LimitError(f"a time limit is a number of seconds, not {shown}")
    if seconds <= 0:
        raise LimitError(f"a time limit must be more than zero, not {shown}")
    if seconds < MIN_TIME:
        raise LimitError(f"a time limit must be at least {MIN_TIME * 1000:g}ms, not {shown}")
    if seconds > MAX_TIME:
        raise LimitError(f"a time limit must be at most {MAX_TIME:g}s (an hour), not {shown}")
    return float(seconds)


def _check_iterations(iterations: int, shown: str) -> int:
    if isinstance(iterations, bool) or not isinstance(iterations, int):
        raise LimitError(f"an iteration limit is a whole number, not {shown}")
    if iterations < 1:
        raise LimitError(f"an iteration limit must be at least 1, not {shown}")
    if iterations > MAX_ITERATIONS:
        raise LimitError(f"an iteration limit must be at most {MAX_ITERATIONS:,}, not {shown}")
    return iterations


def _shown(text: str) -> str:
    """Text quoted for a message, cut short so that the message stays one readable line."""
    return repr(text if len(text) <= 40 else text[:37] + "...")
