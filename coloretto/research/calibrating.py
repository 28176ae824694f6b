"""Are the analysis's win chances honest? The self-play samples, the fit of the map that makes them
so, and its figures on games it did not see (``coloretto calibrate`` runs it).

The command plays self-play games (``--bot``, ``mcts:1000`` by default, in
every seat; classic rules, 2 to 5 players), each dealt from a seed derived
from ``--seed``, so the same flags give the same games and figures on any
machine (iteration budgets only). In each game it picks ``--positions``
decisions at random (a decision: a position with more than one legal move)
and asks :func:`coloretto.analysis.evaluate`, at ``--budget`` iterations (the
analysis's default), for every seat's raw win share; once the game is over,
each prediction is set against the seat's actual share of the win (1/k for a
k-way tie). At ``--actions`` of those positions it also asks
:func:`~coloretto.analysis.analyze` and keeps the raw win share of the move
the player then played, against the mover's outcome: the per-action figures
(hints, the review) are conditional on that move.

The default size is the shipped map's: 300, 150, 100 and 100 games of 2, 3, 4
and 5 players, 10, 14, 20 and 20 positions a game (3,000, 2,100, 2,000 and
2,000 positions), about 20 minutes on one core. A game is one outcome per
seat however many of its positions are sampled, so more games beat more
positions; two-player games, one bit each but the cheapest, get the most.
``--players``, ``--games`` and ``--positions`` (one number, or one per player
count) make it smaller.
``--workers N`` plays games in N processes; the figures do not depend on it.

The map, one per player count, is fitted on the seat predictions of every
game: by default a **logistic** map in log-odds (``σ(a × logit p + b)``, two
parameters), or with ``--method isotonic`` an isotonic regression (pool
adjacent violators). Positions of one game share its outcome, so a hundred
games are a hundred outcomes per seat, not thousands: with that few, the
isotonic fit follows the games' luck and measured worse on games it had not
seen than no map at all, while the logistic one measured better (docs/ai/experiments.md).

The figures are measured on games the map did not see: the games are split
by number into two folds (even, odd), each measured with the map fitted on
the other: the expected calibration error (``--bins`` equal-width bins, 15
by default: Σ share of the predictions in a bin × |its mean prediction − its
mean outcome|), also on each fold alone (how much another set of games moves
it), and the Brier score, raw and calibrated, for seat values (mapped, then
scaled to add up to 1, as :func:`~coloretto.analysis.evaluate` reports them)
and for the played actions (mapped, as :func:`~coloretto.analysis.analyze`
reports them); and the shipped map's figures on the same games, which say
whether it still holds after a change to the search or at another
``--budget`` (in-sample, of course, on the games it was fitted on).

Written to ``--out`` (default ``calibration-results``): ``samples.csv`` (every
prediction), ``report.json`` (the figures), ``reliability.png`` (reliability
diagrams, held-out games, raw and calibrated) and ``calibration.json`` (the
map, with the command, seed, bot, budget, search settings and a digest of the
search's sources), or the map at ``--map PATH``. The shipped map is refitted
with ``coloretto calibrate --map coloretto/bots/calibration.json`` (and the
other flags the file's ``source.command`` records): do it after any change to
the playout policy, the leaf values, the utility or the default budget.
"""

from __future__ import annotations

import csv
import random
import shlex
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass
from multiprocessing import get_context
from pathlib import Path
from typing import Any

import numpy as np

from coloretto import charts
from coloretto.bots.calibration import (
    DEFAULT_BINS,
    Calibration,
    CalibrationError,
    MonotoneMap,
    brier_score,
    expected_calibration_error,
    isotonic_fit,
    logistic_fit,
    reliability,
)

#: the default size, the shipped map's: every player count, 100 games each
DEFAULT_PLAYERS = (2, 3, 4, 5)
#: self-play games per player count. A game is one outcome per seat however many of
#: its positions are sampled, and a two-player game the least informative (one bit)
#: and the cheapest, so it gets the most games
DEFAULT_GAMES = (300, 150, 100, 100)
DEFAULT_POSITIONS = (10, 14, 20, 20)  #: positions sampled per game, per player count
#: of those, positions where the move played is also valued (analyze), per player count
DEFAULT_ACTIONS = (3, 4, 5, 5)
DEFAULT_BOT = "mcts:1000"
DEFAULT_SEED = 1
DEFAULT_OUT = Path("calibration-results")
#: how maps are fitted: logistic (two parameters in log-odds), the default, or isotonic
METHODS = ("logistic", "isotonic")
FOLDS = 2  #: folds of games: each is measured with the map fitted on the others

SEAT = "seat"  #: a sample of a seat's value in a position (evaluate)
ACTION = "action"  #: a sample of the value of the move then played (analyze)


@dataclass(frozen=True)
class Sample:
    """One prediction and what came of it."""

    players: int
    game: int
    move: int  #: how many moves had been played in the game before the position
    seat: int
    kind: str  #: :data:`SEAT` or :data:`ACTION`
    win_share: float  #: the search's raw win share
    simulations: int  #: simulations behind it (the position's, or the action's)
    outcome: float  #: the seat's share of the win at the end


@dataclass(frozen=True)
class Plan:
    """What to play and measure; every seed is derived from ``seed``."""

    players: tuple[int, ...] = DEFAULT_PLAYERS
    games: tuple[int, ...] = DEFAULT_GAMES  #: per player count, in the order of ``players``
    positions: tuple[int, ...] = DEFAULT_POSITIONS  #: per game, per player count
    actions: tuple[int, ...] = DEFAULT_ACTIONS  #: per game, per player count
    bot: str = DEFAULT_BOT
    budget: int = 2000
    seed: int = DEFAULT_SEED
    bins: int = DEFAULT_BINS
    method: str = METHODS[0]

    def command(self, map_path: str | None = None) -> str:
        """The command that reproduces this plan (and writes the map at ``map_path``)."""
        words = [
            "coloretto", "calibrate",
            "--players", ",".join(map(str, self.players)),
            "--games", listed(self.games),
            "--positions", listed(self.positions),
            "--actions", listed(self.actions),
            "--bot", self.bot,
            "--budget", str(self.budget),
            "--seed", str(self.seed),
            "--bins", str(self.bins),
            "--method", self.method,
        ]  # fmt: skip
        if map_path is not None:
            words += ["--map", map_path]
        return shlex.join(words)

    def size(self, players: int) -> tuple[int, int, int]:
        """(games, positions a game, actions a game) for one player count."""
        i = self.players.index(players)
        return self.games[i], self.positions[i], self.actions[i]


def listed(values: tuple[int, ...]) -> str:
    """One number if they are all the same, else the list."""
    return str(values[0]) if len(set(values)) == 1 else ",".join(map(str, values))


def _seed(*parts: object) -> int:
    from coloretto.arena.config import derive_seed

    return derive_seed("coloretto-calibrate", *parts)


def play_and_sample(plan: Plan, players: int, game_number: int) -> list[Sample]:
    """One self-play game: every seat's predicted win share at the plan's number of
    positions of its decisions (evaluate), and the mover's share after the move
    played at the plan's number of actions of them (analyze), with the outcomes."""
    from coloretto.analysis import analyze, evaluate
    from coloretto.bots import make_bot
    from coloretto.game import Game
    from coloretto.rules import Rules

    game = Game.new(Rules(players=players), seed=_seed(plan.seed, players, game_number, "deal"))
    bots = [
        make_bot(plan.bot, seed=_seed(plan.seed, players, game_number, "seat", s)) for s in range(players)
    ]
    decisions = []  # (move number, observation of the mover, action played)
    while not game.is_over:
        seat = game.to_move
        assert seat is not None
        observation = game.observation(seat)
        action = bots[seat].choose(observation)
        if len(observation.legal_actions) > 1:
            decisions.append((len(game), observation, action))
        game.push(action)
    winners = game.winners()
    outcome = [1.0 / len(winners) if s in winners else 0.0 for s in range(players)]
    rng = random.Random(_seed(plan.seed, players, game_number, "positions"))
    _, positions, actions = plan.size(players)
    chosen = rng.sample(range(len(decisions)), min(positions, len(decisions)))
    valued = set(chosen[:actions])
    samples = []
    for index in sorted(chosen):
        move, observation, played = decisions[index]
        seed = _seed(plan.seed, players, game_number, "search", move)
        value = evaluate(observation, plan.budget, seed, calibrated=False)
        for seat in range(players):
            samples.append(
                Sample(
                    players,
                    game_number,
                    move,
                    seat,
                    SEAT,
                    value.win_shares[seat],
                    value.simulations,
                    outcome[seat],
                )
            )
        if index not in valued:
            continue
        mover = observation.player
        for line in analyze(observation, plan.budget, seed, calibrated=False):
            if line.action == played:
                samples.append(
                    Sample(
                        players,
                        game_number,
                        move,
                        mover,
                        ACTION,
                        line.win_share,
                        line.simulations,
                        outcome[mover],
                    )
                )
    return samples


def collect(plan: Plan, workers: int = 1, progress: Callable[[int, int], None] | None = None) -> list[Sample]:
    """Every game's samples, in game order (the same whatever the number of workers)."""
    jobs = [(players, g) for players in plan.players for g in range(plan.size(players)[0])]
    results: list[list[Sample]] = []
    if workers <= 1:
        for done, (players, g) in enumerate(jobs, start=1):
            results.append(play_and_sample(plan, players, g))
            if progress:
                progress(done, len(jobs))
    else:
        with ProcessPoolExecutor(workers, mp_context=get_context("spawn")) as pool:
            futures = [pool.submit(play_and_sample, plan, players, g) for players, g in jobs]
            for done, future in enumerate(futures, start=1):
                results.append(future.result())
                if progress:
                    progress(done, len(jobs))
    return [sample for game in results for sample in game]


# ------------------------------------------------------------------ fitting


def _arrays(samples: Iterable[Sample]) -> tuple[np.ndarray, np.ndarray]:
    chosen = list(samples)
    predictions = np.array([s.win_share for s in chosen], dtype=float)
    return predictions, np.array([s.outcome for s in chosen], dtype=float)


IDENTITY = MonotoneMap((0.0, 1.0), (0.0, 1.0))  #: no calibration


def fold_of(sample: Sample) -> int:
    """The game's fold: the maps measured on a fold were fitted on the other (by game)."""
    return sample.game % FOLDS


def fit_map(method: str, samples: Sequence[Sample]) -> tuple[MonotoneMap, dict[str, float | str]]:
    """The map fitted on the seat samples by ``method``, and its parameters (logistic: slope,
    intercept; where the fit would fall, the identity and why)."""
    predictions, outcomes = _arrays(samples)
    if method == "isotonic":
        return isotonic_fit(predictions, outcomes), {}
    try:
        fit = logistic_fit(predictions, outcomes)
    except CalibrationError as exc:
        # a handful of games can say the map should fall: the raw share is the honest answer then
        return IDENTITY, {"identity": f"{exc}"}
    return fit.as_map(), {"slope": round(fit.slope, 4), "intercept": round(fit.intercept, 4)}


def calibrated_seat_values(samples: Sequence[Sample], mapping: MonotoneMap) -> np.ndarray:
    """The seat samples' calibrated chances as evaluate reports them: mapped, then
    scaled per position to add up to 1."""
    by_position: dict[tuple[int, int, int], list[int]] = {}
    for i, s in enumerate(samples):
        by_position.setdefault((s.players, s.game, s.move), []).append(i)
    mapped = mapping.apply([s.win_share for s in samples])
    out = mapped.copy()
    for indices in by_position.values():
        total = mapped[indices].sum()
        if total > 0:
            out[indices] = mapped[indices] / total
    return out


@dataclass(frozen=True)
class HeldOut:
    """One player count's predictions, each made by the map not fitted on its game."""

    games: np.ndarray  #: the game of each seat prediction
    raw: np.ndarray
    calibrated: np.ndarray
    outcome: np.ndarray
    positions: int


def _figures(predictions: np.ndarray, outcomes: np.ndarray, games: np.ndarray, bins: int) -> dict[str, Any]:
    """ECE and Brier, and the ECE of each fold of games alone: positions of one game
    share its outcome, so the games, not the positions, are the sample, and the two
    folds' figures show how much another set of games would move them."""
    return {
        "ece": round(expected_calibration_error(predictions, outcomes, bins), 4),
        "ece_folds": [
            round(
                expected_calibration_error(
                    predictions[games % FOLDS == f], outcomes[games % FOLDS == f], bins
                ),
                4,
            )
            for f in range(FOLDS)
            if np.any(games % FOLDS == f)
        ],
        "brier": round(brier_score(predictions, outcomes), 4),
    }


def fit_and_measure(
    plan: Plan,
    samples: Sequence[Sample],
    shipped: Calibration | None = None,
    too_few: str = "give --games 2 or more",
) -> tuple[dict[int, MonotoneMap], dict[str, Any], dict[int, HeldOut]]:
    """Per player count: the map fitted on every game's seat samples (the one to ship),
    and figures on held-out games: each fold of games (even, odd) measured with the map
    fitted on the other, raw and calibrated, seat values and played actions. A map
    that does not lower the held-out seat values' Brier score is not shipped: the raw
    share is (the identity map). Where a ``shipped`` map is given, its figures on
    these games too (does it still hold?)."""
    maps: dict[int, MonotoneMap] = {}
    figures: dict[str, Any] = {}
    held: dict[int, HeldOut] = {}
    for players in plan.players:
        seats = [s for s in samples if s.players == players and s.kind == SEAT]
        actions = [s for s in samples if s.players == players and s.kind == ACTION]
        if len({fold_of(s) for s in seats}) < FOLDS:
            raise CalibrationError(f"{players} players: too few games to fit and measure ({too_few})")
        maps[players], parameters = fit_map(plan.method, seats)
        ordered_seats: list[Sample] = []
        ordered_actions: list[Sample] = []
        calibrated_seats, calibrated_actions = [], []
        folds = []
        for fold in range(FOLDS):
            mapping, fold_parameters = fit_map(plan.method, [s for s in seats if fold_of(s) != fold])
            folds.append(fold_parameters)
            test = [s for s in seats if fold_of(s) == fold]
            ordered_seats += test
            calibrated_seats.append(calibrated_seat_values(test, mapping))
            test_actions = [s for s in actions if fold_of(s) == fold]
            ordered_actions += test_actions
            calibrated_actions.append(mapping.apply([s.win_share for s in test_actions]))
        raw, outcome = _arrays(ordered_seats)
        games = np.array([s.game for s in ordered_seats])
        calibrated = np.concatenate(calibrated_seats)
        held[players] = HeldOut(games, raw, calibrated, outcome, len({(s.game, s.move) for s in seats}))
        raw_brier, calibrated_brier = brier_score(raw, outcome), brier_score(calibrated, outcome)
        shipped_map: dict[str, Any] = {"method": plan.method, **parameters}
        if not calibrated_brier < raw_brier:
            maps[players] = IDENTITY
            fitted = ", ".join(f"{k} {v}" for k, v in parameters.items())
            shipped_map = {
                "method": "identity",
                "why": f"the {plan.method} map ({fitted}) did not lower the Brier score of held-out games "
                f"({calibrated_brier:.4f}, raw {raw_brier:.4f})",
            }
        entry: dict[str, Any] = {
            "games": len({s.game for s in seats}),
            "positions": held[players].positions,
            "predictions": len(seats),
            "map": shipped_map,
            "fold_maps": folds,
            "seat_raw": _figures(raw, outcome, games, plan.bins),
            "seat_calibrated": _figures(calibrated, outcome, games, plan.bins),
        }
        if ordered_actions:
            raw_a, outcome_a = _arrays(ordered_actions)
            games_a = np.array([s.game for s in ordered_actions])
            entry["action_predictions"] = len(ordered_actions)
            entry["action_raw"] = _figures(raw_a, outcome_a, games_a, plan.bins)
            entry["action_calibrated"] = _figures(
                np.concatenate(calibrated_actions), outcome_a, games_a, plan.bins
            )
        if shipped is not None and players in shipped.maps:
            entry["seat_shipped_map"] = _figures(
                calibrated_seat_values(ordered_seats, shipped.maps[players]), outcome, games, plan.bins
            )
        figures[str(players)] = entry
    return maps, figures, held


# ------------------------------------------------------------------ output


#: the columns of samples.csv, in order
SAMPLE_COLUMNS = ("players", "game", "move", "seat", "kind", "win_share", "simulations", "outcome")


class SamplesError(ValueError):
    """A samples file that is not one: its columns are not those of samples.csv."""


def write_samples(path: Path, samples: Sequence[Sample]) -> None:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(SAMPLE_COLUMNS)
        for s in samples:
            writer.writerow(
                [
                    s.players,
                    s.game,
                    s.move,
                    s.seat,
                    s.kind,
                    f"{s.win_share:.6f}",
                    s.simulations,
                    f"{s.outcome:.6f}",
                ]
            )


def read_samples(path: Path) -> list[Sample]:
    with path.open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        missing = [c for c in SAMPLE_COLUMNS if c not in (reader.fieldnames or ())]
        if missing:
            raise SamplesError(
                f"it lacks the column(s) {', '.join(missing)} of a samples.csv written by "
                f"coloretto calibrate ({', '.join(SAMPLE_COLUMNS)})"
            )
        return [
            Sample(
                int(row["players"]),
                int(row["game"]),
                int(row["move"]),
                int(row["seat"]),
                row["kind"],
                float(row["win_share"]),
                int(row["simulations"]),
                float(row["outcome"]),
            )
            for row in reader
        ]


def plot_reliability(
    path: Path, plan: Plan, held: dict[int, HeldOut], raw_shipped: Iterable[int] = ()
) -> None:
    """One diagram per player count: held-out seat values, raw and calibrated, and how many in each
    bin; ``raw_shipped``: the player counts whose map was not kept (the raw share is shipped)."""
    raw_shipped = set(raw_shipped)
    plt = charts.pyplot()

    columns = len(plan.players)
    fig, axes = plt.subplots(
        2,
        columns,
        figsize=(3.6 * columns, 6.2),
        squeeze=False,
        gridspec_kw={"height_ratios": [3, 1]},
        sharex=True,
    )
    for column, players in enumerate(plan.players):
        raw, calibrated, outcome = held[players].raw, held[players].calibrated, held[players].outcome
        top, bottom = axes[0][column], axes[1][column]
        top.plot([0, 1], [0, 1], color="0.6", linewidth=1, linestyle="--", label="perfect")
        for predictions, label, colour in (
            (raw, "raw search share", "tab:red"),
            (calibrated, "calibrated", "tab:blue"),
        ):
            table = [b for b in reliability(predictions, outcome, plan.bins) if b.count]
            ece = expected_calibration_error(predictions, outcome, plan.bins)
            top.plot(
                [b.mean_prediction for b in table],
                [b.mean_outcome for b in table],
                marker="o",
                markersize=3,
                color=colour,
                label=f"{label} (held-out ECE {ece:.3f})",
            )
            bottom.hist(predictions, bins=plan.bins, range=(0, 1), histtype="step", color=colour)
        shipped = ": the map did not help, raw shipped" if players in raw_shipped else ""
        top.set_title(f"{players} players, {held[players].positions} positions{shipped}", fontsize=9)
        top.set_xlim(0, 1)
        top.set_ylim(0, 1)
        top.set_aspect("equal")
        top.legend(fontsize=7, loc="upper left")
        bottom.set_xlabel("predicted win chance")
        bottom.set_yscale("log")
        if column == 0:
            top.set_ylabel("share of the win won")
            bottom.set_ylabel("predictions")
    fig.suptitle(
        f"coloretto analysis win chances: self-play {plan.bot}, evaluate at {plan.budget} iterations, "
        f"{plan.method} map, {plan.bins} bins",
        fontsize=10,
    )
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def build_calibration(
    plan: Plan,
    maps: dict[int, MonotoneMap],
    figures: dict[str, Any],
    map_path: str | None,
    digest: str,
    seconds: float,
    workers: int,
) -> Calibration:
    from coloretto import __version__
    from coloretto.bots.mcts_options import DEFAULT_SETTINGS, ROLLOUTS

    rollout = next(name for name, code in ROLLOUTS.items() if code == DEFAULT_SETTINGS.rollout)
    source = {
        "command": plan.command(map_path),
        "seed": plan.seed,
        "bot": plan.bot,
        "budget": plan.budget,
        "games": dict(zip(map(str, plan.players), plan.games)),
        "positions_per_game": dict(zip(map(str, plan.players), plan.positions)),
        "actions_per_game": dict(zip(map(str, plan.players), plan.actions)),
        "bins": plan.bins,
        "method": plan.method,
        "rollout": rollout,
        "settings": asdict(DEFAULT_SETTINGS),
        "search_digest": digest,
        "coloretto": __version__,
        "fitted_on": "the seat values of every game; the figures: each fold of games (even, odd numbers) "
        "measured with the map fitted on the other fold",
        "seconds": round(seconds, 1),
        "workers": workers,
    }
    return Calibration(maps, source, figures)


# ------------------------------------------------------------------ the command
