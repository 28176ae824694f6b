"""Honest win chances: the calibration map, and the measures that check it.

The search's win share (the mean over its simulated games of the mover's
share of the win) is not a probability one can trust as it stands: the
simulated games are greedy playouts in which every player is modelled as
that same policy, and the max-n tree believes in its own choices. Measured
over self-play positions it is overconfident (``coloretto calibrate`` says
how much). :mod:`coloretto.analysis` therefore passes every win share it
reports through a **calibration map**: a monotone function per player count,
fitted by isotonic regression on self-play positions (predicted seat value
against the seat's actual share of the win), shipped in
``coloretto/bots/calibration.json``.

The map belongs to the search that produced its data: the playout policy, its
knobs, the utility and the budget. The file records where it came from (the
command, seed, bots, budget, search settings and a digest of the search's
sources, :func:`search_digest`); change any of them and refit it by running
the recorded command again (``coloretto calibrate --map
coloretto/bots/calibration.json``). :func:`Calibration.stale` says when the
sources differ from those it was fitted on.

Measures (numpy only, no model library):

* :func:`expected_calibration_error`: predictions binned into equal-width
  bins of [0, 1] (15 by default), the bins' gaps between mean prediction and
  mean outcome weighted by their share of the predictions;
* :func:`brier_score`: the mean squared error of the predictions;
* :func:`isotonic_fit`: the pool-adjacent-violators algorithm, the weighted
  least-squares monotone fit.

>>> fitted = isotonic_fit([0.1, 0.2, 0.3, 0.4], [0.0, 1.0, 0.0, 1.0])
>>> fitted.x, fitted.y
((0.1, 0.25, 0.4), (0.0, 0.5, 1.0))
>>> round(fitted(0.3), 3)
0.667
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from coloretto.files import write_atomically

#: the shipped map, next to this module
CALIBRATION_FILE = Path(__file__).with_name("calibration.json")
FORMAT = 1  #: the map file's format; a file of another format is not read
DEFAULT_BINS = 15  #: equal-width bins of the expected calibration error and the reliability diagram

#: the modules whose code decides the search's values, relative to coloretto/bots/
#: (the compiled kernel's source counts where it exists)
SEARCH_SOURCES = ("kernel.py", "tree.py", "mcts.py", "mcts_options.py", "_kernel.pyx")


class CalibrationError(ValueError):
    """A calibration map that cannot be read or used; the message says what is wrong."""


def search_digest() -> str:
    """A digest of the sources that decide the search's values (the kernel, the
    tree, the playout policy's defaults): a map fitted on other sources is stale."""
    digest = hashlib.sha256()
    here = Path(__file__).parent
    for name in SEARCH_SOURCES:
        path = here / name
        if path.exists():
            digest.update(name.encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


# ------------------------------------------------------------------ the map


@dataclass(frozen=True)
class MonotoneMap:
    """A non-decreasing map of [0, 1] into [0, 1]: straight lines between the
    points (``x`` increasing, ``y`` non-decreasing), flat beyond the ends."""

    x: tuple[float, ...]
    y: tuple[float, ...]

    def __post_init__(self) -> None:
        if not self.x or len(self.x) != len(self.y):
            raise CalibrationError(
                f"a calibration map needs as many x as y values, and some: {len(self.x)} x, {len(self.y)} y"
            )
        values = (*self.x, *self.y)
        if not all(isinstance(v, int | float) and 0.0 <= v <= 1.0 for v in values):
            raise CalibrationError("a calibration map's points must lie in [0, 1]")
        if any(b <= a for a, b in zip(self.x, self.x[1:])):
            raise CalibrationError("a calibration map's x values must increase")
        if any(b < a for a, b in zip(self.y, self.y[1:])):
            raise CalibrationError("a calibration map's y values must not decrease")

    def __call__(self, p: float) -> float:
        return float(np.interp(p, self.x, self.y))

    def apply(self, p: Sequence[float] | np.ndarray) -> np.ndarray:
        return np.interp(np.asarray(p, dtype=float), self.x, self.y)

    def to_dict(self) -> dict[str, list[float]]:
        return {"x": [round(v, 6) for v in self.x], "y": [round(v, 6) for v in self.y]}

    @classmethod
    def from_dict(cls, data: Any) -> MonotoneMap:
        if (
            not isinstance(data, dict)
            or not isinstance(data.get("x"), list)
            or not isinstance(data.get("y"), list)
        ):
            raise CalibrationError("a calibration map is an object with the lists x and y")
        return cls(tuple(float(v) for v in data["x"]), tuple(float(v) for v in data["y"]))


def _checked(
    predictions: Sequence[float] | np.ndarray,
    outcomes: Sequence[float] | np.ndarray,
    weights: Sequence[float] | np.ndarray | None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    x = np.asarray(predictions, dtype=float)
    y = np.asarray(outcomes, dtype=float)
    w = np.ones_like(x) if weights is None else np.asarray(weights, dtype=float)
    if x.ndim != 1 or x.shape != y.shape or x.shape != w.shape:
        raise CalibrationError("predictions, outcomes and weights must be lists of the same length")
    if not len(x):
        raise CalibrationError("a fit needs at least one prediction")
    if np.any(~np.isfinite(x) | ~np.isfinite(y) | (x < 0) | (x > 1) | (y < 0) | (y > 1)):
        raise CalibrationError("predictions and outcomes must lie in [0, 1]")
    if np.any(w <= 0) or not np.all(np.isfinite(w)):
        raise CalibrationError("weights must be positive")
    return x, y, w


def isotonic_fit(
    predictions: Sequence[float] | np.ndarray,
    outcomes: Sequence[float] | np.ndarray,
    weights: Sequence[float] | np.ndarray | None = None,
) -> MonotoneMap:
    """The weighted least-squares non-decreasing fit of ``outcomes`` on
    ``predictions`` (pool adjacent violators), as a :class:`MonotoneMap`
    through each pooled block's mean prediction and mean outcome."""
    x, y, w = _checked(predictions, outcomes, weights)
    order = np.argsort(x, kind="stable")
    x, y, w = x[order], y[order], w[order]
    # equal predictions are one point: the fit cannot tell them apart
    unique, start = np.unique(x, return_index=True)
    sums_w = np.add.reduceat(w, start)
    sums_wy = np.add.reduceat(w * y, start)
    sums_wx = np.add.reduceat(w * x, start)
    # the blocks: a stack of [weight, weighted outcome, weighted prediction]
    blocks: list[list[float]] = []
    for bw, bwy, bwx in zip(sums_w, sums_wy, sums_wx):
        blocks.append([float(bw), float(bwy), float(bwx)])
        while len(blocks) > 1 and blocks[-2][1] / blocks[-2][0] >= blocks[-1][1] / blocks[-1][0]:
            last = blocks.pop()
            for i in range(3):
                blocks[-1][i] += last[i]
    assert len(unique) >= len(blocks)
    xs = [b[2] / b[0] for b in blocks]
    ys = [min(1.0, max(0.0, b[1] / b[0])) for b in blocks]
    return MonotoneMap(tuple(xs), tuple(ys))


#: where a logistic map is sampled: dense in log-odds, so that the straight
#: lines between the points follow the curve near 0 and 1 too
_LOGIT_GRID = np.concatenate(([0.0], 1 / (1 + np.exp(-np.linspace(-9.0, 9.0, 73))), [1.0]))
_LOGIT_CLIP = 1e-6  #: raw shares are clipped this far inside (0, 1) before their log-odds are taken


def _sigmoid(t: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * t))  # 1 / (1 + e^-t), without overflow


@dataclass(frozen=True)
class LogisticFit:
    """``p ↦ σ(slope × logit(p) + intercept)``: logistic (Platt) calibration in
    log-odds. A slope under 1 pulls overconfident shares towards the middle; the
    intercept moves them all up or down. 0 and 1 stay 0 and 1."""

    slope: float
    intercept: float

    def __call__(self, p: float) -> float:
        return float(self.apply([p])[0])

    def apply(self, p: Sequence[float] | np.ndarray) -> np.ndarray:
        x = np.asarray(p, dtype=float)
        clipped = np.clip(x, _LOGIT_CLIP, 1 - _LOGIT_CLIP)
        out = _sigmoid(self.slope * np.log(clipped / (1 - clipped)) + self.intercept)
        return np.where(x <= 0, 0.0, np.where(x >= 1, 1.0, out))

    def as_map(self) -> MonotoneMap:
        """The fit as a :class:`MonotoneMap`, sampled on a grid dense in log-odds."""
        y = np.maximum.accumulate(self.apply(_LOGIT_GRID))  # exact ties at the ends stay monotone
        return MonotoneMap(tuple(float(v) for v in _LOGIT_GRID), tuple(float(v) for v in y))


def logistic_fit(
    predictions: Sequence[float] | np.ndarray,
    outcomes: Sequence[float] | np.ndarray,
    weights: Sequence[float] | np.ndarray | None = None,
) -> LogisticFit:
    """The maximum-likelihood :class:`LogisticFit` of ``outcomes`` (shares of a
    win in [0, 1]) on the log-odds of ``predictions`` (Newton's method). Two
    parameters: far less variance than an isotonic fit when the outcomes are
    few games' worth. A fit that does not increase is refused."""
    x, y, w = _checked(predictions, outcomes, weights)
    clipped = np.clip(x, _LOGIT_CLIP, 1 - _LOGIT_CLIP)
    z = np.log(clipped / (1 - clipped))
    slope, intercept = 1.0, 0.0
    for _ in range(100):
        q = _sigmoid(slope * z + intercept)
        gradient = np.array([np.sum(w * (q - y) * z), np.sum(w * (q - y))])
        curvature = w * q * (1 - q)
        hessian = np.array(
            [[np.sum(curvature * z * z), np.sum(curvature * z)], [np.sum(curvature * z), np.sum(curvature)]]
        )
        step = np.linalg.solve(hessian + 1e-9 * np.eye(2), gradient)
        slope, intercept = slope - float(step[0]), intercept - float(step[1])
        if float(np.max(np.abs(step))) < 1e-10:
            break
    if not (math.isfinite(slope) and math.isfinite(intercept)):
        raise CalibrationError("the logistic fit does not converge: too few outcomes, or all of one kind")
    if not slope > 0:
        raise CalibrationError(f"the logistic fit does not increase (slope {slope:.3g}): no map to make")
    return LogisticFit(slope, intercept)


# ---------------------------------------------------------------- measures


def _pair(
    predictions: Sequence[float] | np.ndarray, outcomes: Sequence[float] | np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    p = np.asarray(predictions, dtype=float)
    y = np.asarray(outcomes, dtype=float)
    if p.shape != y.shape or p.ndim != 1:
        raise CalibrationError("predictions and outcomes must be lists of the same length")
    if not len(p):
        raise CalibrationError("no predictions to measure")
    return p, y


def brier_score(predictions: Sequence[float] | np.ndarray, outcomes: Sequence[float] | np.ndarray) -> float:
    """Mean squared difference between the predicted win chance and the win share won."""
    p, y = _pair(predictions, outcomes)
    return float(np.mean((p - y) ** 2))


@dataclass(frozen=True)
class ReliabilityBin:
    low: float
    high: float
    count: int
    mean_prediction: float  #: nan for an empty bin
    mean_outcome: float  #: nan for an empty bin


def reliability(
    predictions: Sequence[float] | np.ndarray,
    outcomes: Sequence[float] | np.ndarray,
    bins: int = DEFAULT_BINS,
) -> list[ReliabilityBin]:
    """The predictions in ``bins`` equal-width bins of [0, 1] (the last one closed):
    per bin, how many, their mean, and the mean outcome."""
    p, y = _pair(predictions, outcomes)
    if bins < 1:
        raise CalibrationError(f"bins must be at least 1, not {bins}")
    index = np.minimum((p * bins).astype(int), bins - 1)
    out = []
    for b in range(bins):
        inside = index == b
        count = int(inside.sum())
        out.append(
            ReliabilityBin(
                b / bins,
                (b + 1) / bins,
                count,
                float(p[inside].mean()) if count else math.nan,
                float(y[inside].mean()) if count else math.nan,
            )
        )
    return out


def expected_calibration_error(
    predictions: Sequence[float] | np.ndarray,
    outcomes: Sequence[float] | np.ndarray,
    bins: int = DEFAULT_BINS,
) -> float:
    """Σ over equal-width bins of (share of predictions in the bin) × |mean prediction − mean outcome|."""
    table = reliability(predictions, outcomes, bins)
    total = sum(b.count for b in table)
    return float(sum(b.count / total * abs(b.mean_prediction - b.mean_outcome) for b in table if b.count))


# ------------------------------------------------------------- the file


@dataclass(frozen=True)
class Calibration:
    """The calibration maps per player count, and where they came from."""

    maps: Mapping[int, MonotoneMap]
    #: how the map was made: command, seed, bots, budget, search settings, search digest …
    source: Mapping[str, Any] = field(default_factory=dict)
    #: measured figures per player count, as the command wrote them
    figures: Mapping[str, Any] = field(default_factory=dict)

    def win_chance(self, players: int, win_share: float) -> float:
        """The calibrated win chance of a raw search win share (unchanged for a
        player count the file has no map for)."""
        mapping = self.maps.get(players)
        return win_share if mapping is None else mapping(win_share)

    def seat_chances(self, win_shares: Sequence[float]) -> tuple[float, ...]:
        """Every seat's calibrated win chance in one position: each mapped, then
        scaled so that they add up to 1 as the seats' shares of the win do."""
        mapped = [self.win_chance(len(win_shares), w) for w in win_shares]
        total = sum(mapped)
        if total <= 0:
            return tuple(float(w) for w in win_shares)
        return tuple(m / total for m in mapped)

    def applies_to(self, rollout: str) -> bool:
        """Whether the map was fitted on searches with this playout policy."""
        return str(self.source.get("rollout", "greedy")) == rollout

    def stale(self) -> bool:
        """Whether the search's sources differ from those the map was fitted on."""
        return self.source.get("search_digest") != search_digest()

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "about": "win-chance calibration of coloretto.analysis, written by coloretto calibrate: "
            "for each player count, the search's raw win share x maps to the calibrated win chance y "
            "(straight lines between the points, flat beyond the ends)",
            "source": dict(self.source),
            "maps": {str(n): m.to_dict() for n, m in sorted(self.maps.items())},
            "figures": dict(self.figures),
        }

    @classmethod
    def from_dict(cls, data: Any) -> Calibration:
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise CalibrationError(f"not a calibration map of format {FORMAT}")
        maps = data.get("maps")
        if not isinstance(maps, dict):
            raise CalibrationError("the calibration map has no maps")
        read: dict[int, MonotoneMap] = {}
        for key, value in maps.items():
            if not str(key).isdigit() or not 2 <= int(key) <= 5:
                raise CalibrationError(f"a calibration map is per player count (2 to 5), not {key!r}")
            read[int(key)] = MonotoneMap.from_dict(value)
        source = data.get("source", {})
        figures = data.get("figures", {})
        if not isinstance(source, dict) or not isinstance(figures, dict):
            raise CalibrationError("the calibration map's source and figures must be objects")
        return cls(read, source, figures)

    def write(self, path: Path) -> None:
        write_atomically(path, json.dumps(self.to_dict(), indent=1) + "\n")

    @classmethod
    def read(cls, path: Path) -> Calibration:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except OSError as exc:
            raise CalibrationError(f"{path}: cannot read it ({exc.strerror or exc})") from None
        except json.JSONDecodeError as exc:
            raise CalibrationError(f"{path}: not JSON ({exc.msg}, line {exc.lineno})") from None
        try:
            return cls.from_dict(data)
        except CalibrationError as exc:
            raise CalibrationError(f"{path}: {exc}") from None


@functools.cache
def shipped_calibration() -> Calibration | None:
    """The package's map (read once per process); None if the package has none."""
    if not CALIBRATION_FILE.exists():
        return None
    return Calibration.read(CALIBRATION_FILE)
