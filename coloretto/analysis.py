"""Position analysis: every legal action with its win chance and expected final score.

>>> from coloretto import DRAW, Game, Rules, place
>>> from coloretto.analysis import analyze
>>> game = Game.new(Rules(players=3), seed=7)
>>> game.push(DRAW)
>>> game.push(place(0))
>>> lines = analyze(game, budget=500, seed=1)  # the bot's move first; line.win_probability, …
>>> sorted(str(line.action) for line in lines), sum(line.simulations for line in lines)
(['d', 't1'], 500)

The values come from the statistics of a Monte Carlo tree search
(:mod:`coloretto.bots.mcts`) from the position: the draws are chance events
over the known unseen cards, every player plays to maximise their own
utility, and each action's figures are the averages over the simulated games
that began with it. Every action gets at least a share of the simulations
(``budget / (4 × actions)``, at least 8; with a time budget, whose iterations
are not known ahead, :data:`TIME_FLOOR`), so weak actions are estimated too:
a line's win share from a handful of simulated games could say anything.

**Order.** The first line is the move the search itself would play (the most
simulated action, as :meth:`~coloretto.bots.mcts.Search.best_action`: what an
``mcts`` bot plays), the others follow by the search's own objective, the
mean utility (``win × win share + (1 − win) × score margin``, see
:mod:`coloretto.bots.mcts`). So a line with more expected points can come
after one with a better win chance: the search plays for the win first.

**Win chances are calibrated.** The search's raw win share (``win_share``:
the mean share of the win in its simulated games) is overconfident: its
playouts model every player as one greedy policy. ``win_probability`` is that
share passed through the calibration map of :mod:`coloretto.bots.calibration`,
fitted per player count on self-play positions by ``coloretto calibrate``;
:func:`evaluate` also scales the seats' chances to add up to 1. The map fits
the default playout policy (``rollout="greedy"``); with another policy, or
``calibrated=False``, ``win_probability`` is the raw share. The map was
fitted on :data:`DEFAULT_BUDGET` iterations; at other budgets it is the
same map (see docs/ai/index.md for how well it holds there).

The position may be a :class:`~coloretto.game.Game` or an
:class:`~coloretto.game.Observation` (the deck order is never used: it is
unknown to every player, so an observation is all a position is).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from coloretto.actions import Action
from coloretto.bots import kernel as K
from coloretto.bots.calibration import Calibration, shipped_calibration
from coloretto.bots.limits import Limit, as_limit
from coloretto.bots.mcts import Search, search_position
from coloretto.bots.mcts_options import MAX_THREADS, ROLLOUTS, Settings
from coloretto.game import Game, Observation

if TYPE_CHECKING:
    pass

#: default budget: iterations of search per analysed position (the calibration map's budget)
DEFAULT_BUDGET = 2000
#: simulations every action gets first under a time budget (a hint's "1s"): a win share
#: from 64 games is within about ±0.12 (95 %), from the 8 of the floor before, ±0.35
TIME_FLOOR = 64


@dataclass(frozen=True)
class ActionValue:
    """One legal action, valued for the player to move."""

    action: Action
    #: the mover's mean final score in the simulated games that began with this action
    expected_score: float
    #: the mover's calibrated chance to win after this action (``win_share`` through the map)
    win_probability: float
    #: how many simulated games began with this action
    simulations: int
    #: the search's own objective (0.75 × win share + 0.25 × score margin), in [0, 1]
    utility: float
    #: the mover's raw mean win share in the simulated games (1/k for a k-way tie)
    win_share: float


@dataclass(frozen=True)
class PositionValue:
    """Every seat's expected final score and win chance in a position."""

    expected_scores: tuple[float, ...]
    #: calibrated, adding up to 1 (a finished game: the outcome, 1/k for each of k winners)
    win_probabilities: tuple[float, ...]
    simulations: int  #: 0 for a finished game: the values are its outcome
    #: the raw mean win shares of the search (a finished game: the outcome)
    win_shares: tuple[float, ...] = ()


def _settings(rollout: str, threads: int = 1) -> Settings:
    """The default search settings with the playout policy named ``rollout``, on ``threads`` trees."""
    if not isinstance(threads, int) or not 1 <= threads <= MAX_THREADS:
        raise ValueError(f"threads must be a whole number from 1 to {MAX_THREADS}, not {threads!r}")
    try:
        return Settings(rollout=ROLLOUTS[rollout], threads=threads)
    except KeyError:
        raise ValueError(f"rollout must be one of {', '.join(ROLLOUTS)}, not {rollout!r}") from None


def _calibration(rollout: str, calibrated: bool) -> Calibration | None:
    """The map to apply, if any: the shipped one, when it fits this playout policy."""
    if not calibrated:
        return None
    calibration = shipped_calibration()
    return calibration if calibration is not None and calibration.applies_to(rollout) else None


def _lines(search: Search, calibration: Calibration | None, players: int) -> list[ActionValue]:
    """The root's actions: the move the search plays first, then by its mean utility."""

    def chance(share: float) -> float:
        return share if calibration is None else calibration.win_chance(players, share)

    values = [
        ActionValue(action, score, chance(win), n, utility, win)
        for action, n, score, win, utility in search.root_statistics()
        if n > 0
    ]
    if not values:
        return []
    chosen = search.best_action()
    values.sort(key=lambda v: (v.action != chosen, -v.utility, -v.win_share, v.action.id))
    return values


def _root_floor(position: Observation | Game, plan: Limit) -> int:
    # an observation of a seat not to move lists no actions: assume a few
    count = len(position.legal_actions) or 6
    share = plan.iterations // (4 * max(1, count)) if plan.iterations is not None else TIME_FLOOR
    return max(8, share)


def _seat_values(search: Search, calibration: Calibration | None, players: int) -> PositionValue:
    runs = max(1, search.iterations)
    sums = search.root_sums
    shares = tuple(float(sums[2 * players + p] / runs) for p in range(players))
    chances = shares if calibration is None else calibration.seat_chances(shares)
    return PositionValue(
        tuple(float(sums[players + p] / runs) for p in range(players)), chances, search.iterations, shares
    )


def analyze(
    position: Observation | Game,
    budget: int | str | Limit = DEFAULT_BUDGET,
    seed: int = 0,
    rollout: str = "greedy",
    calibrated: bool = True,
    threads: int = 1,
) -> list[ActionValue]:
    """Every legal action of the player to move: the move the search would play
    first, then by the search's mean utility. ``budget``: iterations
    (``2000``), a time such as ``"1s"``, or a :class:`~coloretto.bots.limits.Limit`.
    Empty for a finished game. The same seed and an iteration budget give the
    same figures (for the same ``threads``). ``calibrated=False``: ``win_probability``
    is the raw share. ``threads``: trees searched at once, one a core (an iteration
    budget is shared out among them, so a hint comes that many times sooner)."""
    if position.is_over:
        return []
    settings = _settings(rollout, threads)  # a bad name is refused before any search
    plan = as_limit(budget)
    search = search_position(position, plan, seed, settings, root_floor=_root_floor(position, plan))
    return _lines(search, _calibration(rollout, calibrated), position.rules.players)


def analyze_position(
    position: Observation | Game, budget: int | str | Limit = DEFAULT_BUDGET, seed: int = 0
) -> tuple[PositionValue, list[ActionValue]]:
    """One search, both answers: every seat's values (as :func:`evaluate`) and the
    mover's actions (as :func:`analyze`, whose settings it uses: every action gets
    its share of the simulations), calibrated. A finished game: its outcome, no actions."""
    if position.is_over:
        return evaluate(position), []
    plan = as_limit(budget)
    search = search_position(
        position, plan, seed, _settings("greedy"), root_floor=_root_floor(position, plan)
    )
    calibration = _calibration("greedy", True)
    players = position.rules.players
    return _seat_values(search, calibration, players), _lines(search, calibration, players)


def evaluate(
    position: Observation | Game,
    budget: int | str | Limit = DEFAULT_BUDGET,
    seed: int = 0,
    rollout: str = "greedy",
    calibrated: bool = True,
) -> PositionValue:
    """Every seat's expected final score and win chance with best play from
    here (the search's values at the root; the chances calibrated unless
    ``calibrated=False``). A finished game's values are its outcome: the
    final scores, and 1/k for each of k winners."""
    if isinstance(position, Game):
        s = K.state_from_game(position)
        rules = position.rules
    else:
        s = K.state_from_observation(position)
        rules = position.rules
    n = rules.players
    if s[K.OVER]:
        out = np.zeros(10)
        K.k_result(s, K.rules_config(rules), out)
        shares = tuple(float(out[5 + p]) for p in range(n))
        return PositionValue(tuple(float(out[p]) for p in range(n)), shares, 0, shares)
    search = search_position(position, as_limit(budget), seed, _settings(rollout))
    return _seat_values(search, _calibration(rollout, calibrated), n)
