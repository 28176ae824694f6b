"""The learned value: each seat's expected final score from features of the public position.

A playout of the search (:mod:`coloretto.bots.mcts`) plays to the end of the
game; with the ``cut=N`` option it stops after N actions (``cut=round``: at the
end of the current round) and this model predicts the rest. The model is
linear in :data:`FEATURES` (computed in C by the kernel, :func:`k_features`),
the same weights for every seat, one set per player count: it predicts a seat's
**future gain** (final score minus its score now), so a seat's predicted final
score is its score now plus that. The predicted scores become win shares by a
softmax at a temperature fitted on the same games (the likelihood of who
actually won); the kernel reads it as ``temperature + temperature_slope ×
unseen cards``, and training ships a slope of 0 (:func:`fit_temperature`
says why). The utility is made of them as of a finished game's.

It is fitted by ``coloretto train`` on self-play games of the playout policy
(the target is what the rest of a playout would give) and shipped in
``coloretto/bots/value.json`` with the sha256 of the kernel's source: a model
fitted on another kernel is :attr:`ValueModel.stale` (the search warns, and
``coloretto train`` refits it). Inference runs in the kernel: the weights are
passed to it as one array (:meth:`ValueModel.weights`), read once per process.
"""

from __future__ import annotations

import functools
import hashlib
import json
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from coloretto.bots import _kernel
from coloretto.files import write_atomically

#: the shipped model, next to this module
VALUE_FILE = Path(__file__).with_name("value.json")
FORMAT = 1  #: the model file's format
KERNEL_SOURCE = Path(__file__).with_name("_kernel.pyx")
V_FEATURES = _kernel.V_FEATURES
V_WEIGHTS = _kernel.V_WEIGHTS
CUT_ROUND = _kernel.CUT_ROUND

#: the features of one seat, in the kernel's order (``left``: cards above the
#: last-round card, 0 once it has appeared)
FEATURES = (
    "one",
    "score",  # the seat's best score now
    "top1",  # cards of its colour with most cards
    "top2",
    "top3",
    "rest",  # cards of its other colours
    "jokers",  # jokers and golden jokers
    "plus2",
    "colours",  # colours held
    "out",  # 1 if it has left the round
    "take_gain",  # what its best row would add now (0 if it is out)
    "left",
    "drawable",  # unseen cards
    "last_round",
    "on_rows",  # cards on the rows
    "in_round",  # seats still in the round
    "round",
    "to_move",  # 1 if it is the seat to move
    "left*score",
    "left*top1",
    "left*top2",
    "left*top3",
    "left*rest",
    "left*jokers",
    "left*colours",
    "left*left",
)
assert len(FEATURES) == V_FEATURES


class ValueModelError(ValueError):
    """A value model that cannot be read or used; the message says what is wrong."""


def kernel_digest() -> str:
    """The sha256 of the kernel's source (what the model's features and playouts are)."""
    if KERNEL_SOURCE.is_file():
        return hashlib.sha256(KERNEL_SOURCE.read_bytes()).hexdigest()
    return str(_kernel.SOURCE_SHA256)


@dataclass(frozen=True)
class SeatModel:
    """One player count's model: the weights of the gain and the softmax temperature."""

    coefficients: tuple[float, ...]
    temperature: float
    #: the temperature grows by this much for each unseen card
    temperature_slope: float = 0.0
    figures: dict[str, Any] = field(default_factory=dict)
    #: a few positions' features and the predicted gains training computed for them
    check_features: tuple[tuple[float, ...], ...] = ()
    check_gains: tuple[float, ...] = ()

    def weights(self) -> np.ndarray:
        """The kernel's model array: the coefficients, then the temperature."""
        w = np.zeros(V_WEIGHTS, dtype=np.float64)
        w[:V_FEATURES] = self.coefficients
        w[_kernel.V_TEMPERATURE] = self.temperature
        w[_kernel.V_TEMPERATURE_SLOPE] = self.temperature_slope
        return w

    def gains(self, features: np.ndarray) -> np.ndarray:
        """Predicted future gains of rows of features (the kernel computes the same sums)."""
        return np.asarray(features, dtype=np.float64) @ np.asarray(self.coefficients, dtype=np.float64)

    def to_dict(self) -> dict[str, Any]:
        return {
            "coefficients": list(self.coefficients),
            "temperature": self.temperature,
            "temperature_slope": self.temperature_slope,
            "figures": self.figures,
            "check": {"features": [list(f) for f in self.check_features], "gains": list(self.check_gains)},
        }

    @classmethod
    def from_dict(cls, data: Any) -> SeatModel:
        try:
            coefficients = tuple(float(x) for x in data["coefficients"])
            temperature = float(data["temperature"])
            slope = float(data.get("temperature_slope", 0.0))
            check = data.get("check", {})
            check_features = tuple(tuple(float(x) for x in row) for row in check.get("features", ()))
            check_gains = tuple(float(x) for x in check.get("gains", ()))
            figures = dict(data.get("figures", {}))
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueModelError(f"not a value model ({exc})") from None
        if len(coefficients) != V_FEATURES:
            raise ValueModelError(f"a value model has {V_FEATURES} coefficients, not {len(coefficients)}")
        if not (temperature > 0 and slope >= 0):
            raise ValueModelError(
                f"a value model's temperature must be > 0 and its slope >= 0, not {temperature} and {slope}"
            )
        return cls(coefficients, temperature, slope, figures, check_features, check_gains)


@dataclass(frozen=True)
class ValueModel:
    """Models by player count, and where they came from."""

    models: dict[int, SeatModel]
    source: dict[str, Any] = field(default_factory=dict)

    @property
    def stale(self) -> bool:
        """True if the kernel's source is not the one the model was fitted on."""
        return self.source.get("kernel_sha256") != kernel_digest()

    def for_players(self, players: int) -> SeatModel:
        try:
            return self.models[players]
        except KeyError:
            raise ValueModelError(f"the value model has no model for {players} players") from None

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "source": self.source,
            "features": list(FEATURES),
            "models": {str(n): m.to_dict() for n, m in sorted(self.models.items())},
        }

    @classmethod
    def from_dict(cls, data: Any) -> ValueModel:
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise ValueModelError(f"not a value model file of format {FORMAT}")
        if list(data.get("features", ())) != list(FEATURES):
            raise ValueModelError("the value model was fitted on other features than the kernel computes")
        try:
            models = {int(n): SeatModel.from_dict(m) for n, m in data["models"].items()}
        except (KeyError, AttributeError, ValueError) as exc:
            raise ValueModelError(f"not a value model file ({exc})") from None
        return cls(models, dict(data.get("source", {})))

    def dumps(self) -> str:
        return json.dumps(self.to_dict(), indent=1, sort_keys=True) + "\n"

    def write(self, path: Path) -> None:
        write_atomically(path, self.dumps())

    @classmethod
    def read(cls, path: Path) -> ValueModel:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ValueModelError(f"{path}: cannot read a value model ({exc})") from None
        try:
            return cls.from_dict(data)
        except ValueModelError as exc:
            raise ValueModelError(f"{path}: {exc}") from None


@functools.cache
def shipped_value() -> ValueModel:
    """The package's model (read once per process)."""
    if not VALUE_FILE.exists():
        raise ValueModelError(f"no value model at {VALUE_FILE}: fit one with `coloretto train`")
    return ValueModel.read(VALUE_FILE)


@functools.cache
def shipped_weights(players: int) -> np.ndarray:
    """The kernel's model array for ``players`` from the package's model (once per
    process; a stale model warns once)."""
    model = shipped_value()
    if model.stale:
        warnings.warn(
            "the value model (coloretto/bots/value.json) was fitted on another kernel source: "
            "refit it with `coloretto train --out coloretto/bots/value.json`",
            stacklevel=2,
        )
    weights = model.for_players(players).weights()
    weights.setflags(write=False)
    return weights


# ------------------------------------------------------------------ training

#: ``coloretto train``'s defaults: games per player count and positions kept per game
DEFAULT_GAMES = 8000
DEFAULT_POSITIONS = 16
DEFAULT_PLAYERS = (2, 3, 4, 5)
_HELD_OUT = 5  #: every fifth game is held out for the figures
_CHECK_ROWS = 8  #: positions whose features and gains the file keeps for the load test
_MAX_POSITIONS = 1024  #: more positions than any game has
_RIDGE = 1e-6  #: ridge penalty on the standardised features, relative to the positions


def _game_seed(seed: int, players: int, game: int) -> int:
    return (seed * 1_000_003 + players * 10_007 + game) % 2**63


@dataclass
class Samples:
    """Self-play positions of one player count: per position and seat its features,
    its future gain, and per position the seats' scores now and final win shares."""

    features: np.ndarray  # (m * n, V_FEATURES)
    gains: np.ndarray  # (m * n,)
    shares: np.ndarray  # (m, n)
    games: np.ndarray  # (m,) the game each position comes from


def self_play(players: int, games: int, positions: int, seed: int) -> Samples:
    """``games`` self-play games of the playout policy (classic rules), ``positions``
    positions of each kept at random; the same seed gives the same samples."""
    from coloretto.bots import kernel as K
    from coloretto.game import Game
    from coloretto.rules import Rules

    rules = Rules(players=players)
    cfg = K.rules_config(rules)
    n = players
    buffer = np.zeros((_MAX_POSITIONS * n, V_FEATURES))
    scores = np.zeros(_MAX_POSITIONS * n)
    result = np.zeros(K.RESULT_SIZE)
    rng = np.random.default_rng(seed * 7919 + players)
    feats, gains, shares, which = [], [], [], []
    for g in range(games):
        game_seed = _game_seed(seed, players, g)
        s = K.state_from_game(Game.new(rules, seed=game_seed))
        K.k_seed(game_seed)
        written = _kernel.k_record_game(s, cfg, K.POLICY_GREEDY, buffer, scores, result)
        keep = np.sort(rng.choice(written, size=min(positions, written), replace=False))
        rows = (keep[:, None] * n + np.arange(n)[None, :]).ravel()
        feats.append(buffer[rows].copy())
        finals = np.tile(result[:n], len(keep))
        gains.append(finals - scores[rows])
        shares.append(np.tile(result[K.RESULT_SIZE // 2 : K.RESULT_SIZE // 2 + n], (len(keep), 1)))
        which.append(np.full(len(keep), g))
    return Samples(
        np.concatenate(feats), np.concatenate(gains), np.concatenate(shares), np.concatenate(which)
    )


def fit_gain(features: np.ndarray, gains: np.ndarray) -> np.ndarray:
    """Least squares (a tiny ridge on standardised features) of the gains; raw coefficients."""
    mean = features[:, 1:].mean(axis=0)
    sd = features[:, 1:].std(axis=0)
    sd[sd == 0] = 1.0
    z = np.hstack([np.ones((len(features), 1)), (features[:, 1:] - mean) / sd])
    a = z.T @ z + _RIDGE * len(z) * np.diag([0.0] + [1.0] * (z.shape[1] - 1))
    b = np.linalg.solve(a, z.T @ gains)
    coefficients = np.empty(V_FEATURES)
    coefficients[1:] = b[1:] / sd
    coefficients[0] = b[0] - float(np.sum(b[1:] * mean / sd))
    return coefficients


def _softmax(scores: np.ndarray, temperature: float | np.ndarray) -> np.ndarray:
    """Win shares of rows of predicted scores (``temperature``: one, or one per row)."""
    t = np.asarray(temperature, dtype=np.float64).reshape(-1, 1)
    z = (scores - scores.max(axis=1, keepdims=True)) / t
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


def _log_loss(scores: np.ndarray, shares: np.ndarray, temperature: float | np.ndarray) -> float:
    p = _softmax(scores, temperature)
    return float(-np.mean(np.sum(shares * np.log(np.maximum(p, 1e-300)), axis=1)))


def fit_temperature(scores: np.ndarray, shares: np.ndarray) -> float:
    """The constant softmax temperature that makes the predicted scores' win shares
    likeliest (a grid search).

    The kernel also takes a slope per unseen card (``temperature_slope``); fitted
    by likelihood (0.75 + 0.14 per unseen card in two players, 1.25 + 0.08 in
    four) it lowered the held-out log loss a little (0.533 to 0.525, 1.084 to
    1.069) but played worse: ``mcts:2000,cut=10`` against three ``heuristic``
    won 48.8 % of 200 four-player games with it and 58.8 % with the constant
    (the same deals). So training fits the constant and ships a slope of 0.
    """
    grid = np.exp(np.linspace(np.log(0.25), np.log(40.0), 161))
    losses = [_log_loss(scores, shares, t) for t in grid]
    return float(grid[int(np.argmin(losses))])


def _figures(y: np.ndarray, predicted: np.ndarray, train_mean: float) -> dict[str, float]:
    def rmse(p: np.ndarray) -> float:
        return float(np.sqrt(np.mean((y - p) ** 2)))

    variance = float(np.sum((y - y.mean()) ** 2))

    def r2(p: np.ndarray) -> float:
        return 1.0 - float(np.sum((y - p) ** 2)) / variance

    zero, mean = np.zeros_like(y), np.full_like(y, train_mean)
    return {
        "rmse": round(rmse(predicted), 4),
        "r2": round(r2(predicted), 4),
        "rmse_zero": round(rmse(zero), 4),
        "r2_zero": round(r2(zero), 4),
        "rmse_mean": round(rmse(mean), 4),
        "r2_mean": round(r2(mean), 4),
    }


def fit_players(samples: Samples, players: int) -> SeatModel:
    """Fit on all but every fifth game; the figures are on those held out; then refit on all."""
    n = players
    held = samples.games % _HELD_OUT == 0
    held_rows = np.repeat(held, n)
    train_f, train_y = samples.features[~held_rows], samples.gains[~held_rows]
    coefficients = fit_gain(train_f, train_y)
    test_f, test_y = samples.features[held_rows], samples.gains[held_rows]
    figures: dict[str, Any] = _figures(test_y, test_f @ coefficients, float(train_y.mean()))
    # win shares: the temperature fitted on the training positions, measured on the held-out ones
    train_scores = (train_f[:, 1] + train_f @ coefficients).reshape(-1, n)
    temperature = fit_temperature(train_scores, samples.shares[~held])
    test_scores = (test_f[:, 1] + test_f @ coefficients).reshape(-1, n)
    test_shares = samples.shares[held]
    figures["win_log_loss"] = round(_log_loss(test_scores, test_shares, temperature), 4)
    figures["win_log_loss_uniform"] = round(float(np.log(n)), 4)
    figures["win_brier"] = round(float(np.mean((_softmax(test_scores, temperature) - test_shares) ** 2)), 4)
    figures["win_brier_uniform"] = round(float(np.mean((1.0 / n - test_shares) ** 2)), 4)
    figures["held_out_positions"] = int(held.sum())
    figures["train_positions"] = int((~held).sum())
    # the shipped coefficients: fitted on every game
    coefficients = fit_gain(samples.features, samples.gains)
    scores = (samples.features[:, 1] + samples.features @ coefficients).reshape(-1, n)
    t0, slope = fit_temperature(scores, samples.shares), 0.0
    coefficients = np.array([float(f"{c:.12g}") for c in coefficients])
    check_f = samples.features[:: max(1, len(samples.features) // _CHECK_ROWS)][:_CHECK_ROWS]
    model = SeatModel(tuple(float(c) for c in coefficients), round(t0, 6), round(slope, 6), figures)
    gains = model.gains(check_f)
    return SeatModel(
        model.coefficients,
        model.temperature,
        model.temperature_slope,
        figures,
        tuple(tuple(float(x) for x in row) for row in check_f),
        tuple(float(g) for g in gains),
    )
