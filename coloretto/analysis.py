"""Position analysis: every legal action with its expected final score and win chance.

>>> from coloretto import DRAW, Game, Rules, place
>>> from coloretto.analysis import analyze
>>> game = Game.new(Rules(players=3), seed=7)
>>> game.push(DRAW)
>>> game.push(place(0))
>>> lines = analyze(game, budget=500, seed=1)  # best first: line.expected_score, line.win_probability
>>> sorted(str(line.action) for line in lines), sum(line.simulations for line in lines)
(['d', 't1'], 500)

The values come from the statistics of a Monte Carlo tree search
(:mod:`coloretto.bots.mcts`) from the position: the draws are chance events
over the known unseen cards, every player plays to maximise their own
utility, and each action's figures are the averages over the simulated games
that began with it. Every action gets at least a share of the simulations
(``budget / (4 × actions)``, at least 8), so weak actions are estimated too.

The position may be a :class:`~coloretto.game.Game` or an
:class:`~coloretto.game.Observation` (the deck order is never used: it is
unknown to every player, so an observation is all a position is).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from coloretto.actions import Action
from coloretto.bots import kernel as K
from coloretto.bots.limits import Limit, as_limit
from coloretto.bots.mcts import search_position
from coloretto.bots.mcts_options import ROLLOUTS, Settings
from coloretto.game import Game, Observation

#: default budget: iterations of search per analysed position
DEFAULT_BUDGET = 2000


@dataclass(frozen=True)
class ActionValue:
    """One legal action, valued for the player to move."""

    action: Action
    #: the mover's mean final score in the simulated games that began with this action
    expected_score: float
    #: the mover's mean win share in them (1/k for a k-way tie)
    win_probability: float
    #: how many simulated games began with this action
    simulations: int
    #: the search's own objective (0.75 × win share + 0.25 × score margin), in [0, 1]
    utility: float


@dataclass(frozen=True)
class PositionValue:
    """Every seat's expected final score and win chance in a position."""

    expected_scores: tuple[float, ...]
    win_probabilities: tuple[float, ...]
    simulations: int  #: 0 for a finished game: the values are its outcome


def _settings(rollout: str) -> Settings:
    """The default search settings with the playout policy named ``rollout``."""
    try:
        return Settings(rollout=ROLLOUTS[rollout])
    except KeyError:
        raise ValueError(f"rollout must be one of {', '.join(ROLLOUTS)}, not {rollout!r}") from None


def analyze(
    position: Observation | Game,
    budget: int | str | Limit = DEFAULT_BUDGET,
    seed: int = 0,
    rollout: str = "greedy",
) -> list[ActionValue]:
    """Every legal action of the player to move, best first (by expected
    score, then win chance). ``budget``: iterations (``2000``), a time such
    as ``"1s"``, or a :class:`~coloretto.bots.limits.Limit`. Empty for a
    finished game. The same seed and an iteration budget give the same figures."""
    if position.is_over:
        return []
    plan = as_limit(budget)
    # an observation of a seat not to move lists no actions: assume a few
    legal = position.legal_actions
    count = len(legal) or 6
    floor = max(8, (plan.iterations or 0) // (4 * max(1, count)))
    search = search_position(position, plan, seed, _settings(rollout), root_floor=floor)
    values = [
        ActionValue(action, score, win, n, utility)
        for action, n, score, win, utility in search.root_statistics()
        if n > 0
    ]
    values.sort(key=lambda v: (-v.expected_score, -v.win_probability, v.action.id))
    return values


def evaluate(
    position: Observation | Game,
    budget: int | str | Limit = DEFAULT_BUDGET,
    seed: int = 0,
    rollout: str = "greedy",
) -> PositionValue:
    """Every seat's expected final score and win chance with best play from
    here (the search's values at the root). A finished game's values are its
    outcome: the final scores, and 1/k for each of k winners."""
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
        return PositionValue(
            tuple(float(out[p]) for p in range(n)), tuple(float(out[5 + p]) for p in range(n)), 0
        )
    search = search_position(position, as_limit(budget), seed, _settings(rollout))
    runs = max(1, search.iterations)
    sums = search.root_sums
    return PositionValue(
        tuple(sums[n + p] / runs for p in range(n)),
        tuple(sums[2 * n + p] / runs for p in range(n)),
        search.iterations,
    )
