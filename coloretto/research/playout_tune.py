"""Tuning the tuned playout policy's weights by self-play in the kernel, with CMA-ES.

A candidate set of :class:`~coloretto.bots.playout_options.PlayoutWeights` is
judged by its win share in whole games played in the compiled kernel
(:func:`coloretto.bots.kernel.k_duel`, thousands a second): one seat plays the
candidate, the others a **field** of fixed policies (:data:`FIELD`): the
search's greedy playout, the waiting playout of ``hard`` (take 12, no random
moves), and the tuned policy at two sets of weights that imitate ``builder``
(a take bar of 10.5 points falling by 6 as the rows fill and by half a point
per rival, its own rows only) and ``heuristic`` (take when the best row beats
0.85 of a draw's expected value, placements weighed against the rivals' best
rows, prospects; with two players a take costs what the opponent then makes
of the other rows alone). The candidate sits in every seat of every deal, and the
field's members rotate through the other seats, so every trial meets every
opponent in every seat. Every trial plays the **same deals** with the same
kernel seeds (common random numbers), so two trials differ by their weights
and not by the cards.

The optimiser is CMA-ES (the ``cmaes`` package: ``pip install 'coloretto[rl]'``),
on the weights scaled to [0, 1] over their ranges
(:data:`~coloretto.bots.playout_options.WEIGHT_RANGES`), started from the
greedy playout's weights, seeded by the run's seed. The best trials were
chosen on the deals they were tuned on, which flatters them (the winner's
curse): the best few, the optimiser's final mean and the greedy playout play
again on fresh deals (``confirm``), and the best of those there is the result,
reported with its paired difference to the greedy playout on those deals.
The same seed and sizes give the same weights on any machine.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

import numpy as np

from coloretto.arena import derive_seed
from coloretto.bots.mcts_options import POLICY_GREEDY, POLICY_TUNED
from coloretto.bots.playout_options import GREEDY_WEIGHTS, PlayoutWeights, WeightRange, tuned_ranges
from coloretto.game import Game
from coloretto.rules import Rules

#: the field's members: name, policy, weights (take and explore included)
FIELD: tuple[tuple[str, int, PlayoutWeights], ...] = (
    ("greedy", POLICY_GREEDY, GREEDY_WEIGHTS),
    ("waiting", POLICY_GREEDY, replace(GREEDY_WEIGHTS, take=12.0, explore=0.0)),
    (
        "builder-like",
        POLICY_TUNED,
        PlayoutWeights(
            take=10.5, explore=0.0, take_fill=-6.0, take_rivals=-0.5, row=1.0, row_next=0.0, noise=0.05
        ),
    ),
    (
        "heuristic-like",
        POLICY_TUNED,
        PlayoutWeights(
            take=0.0,
            explore=0.0,
            draw=0.85,
            row=0.0,
            row_next=0.0,
            own=0.5,
            next=1.0,
            rest=0.6,
            prospect=0.2,
            noise=0.05,
            leave=1.0,
        ),
    ),
)
#: games played from each deal with the candidate in each seat (one kernel call)
GAMES_PER_SEAT = 4
#: trials replayed on fresh deals at the end (the best on the tuning deals)
CONFIRM_TOP = 8


class TuneError(ValueError):
    """Arguments that cannot make a tuning run; the message is one line."""


def to_unit(weights: PlayoutWeights, ranges: Sequence[WeightRange]) -> np.ndarray:
    """The weights named in ``ranges`` scaled to [0, 1] over them (clipped into them)."""
    values = [(getattr(weights, r.name) - r.low) / (r.high - r.low) for r in ranges]
    return np.clip(np.array(values, dtype=np.float64), 0.0, 1.0)


def from_unit(x: Sequence[float], ranges: Sequence[WeightRange]) -> PlayoutWeights:
    """The weights at ``x`` in [0, 1] (clipped) over ``ranges``, each rounded to a
    thousandth (what the kernel reads); a weight not in ``ranges`` keeps the greedy playout's."""
    values = {}
    for r, u in zip(ranges, x, strict=True):
        value = r.low + float(min(1.0, max(0.0, u))) * (r.high - r.low)
        values[r.name] = min(r.high, max(r.low, round(value, 3)))
    return replace(GREEDY_WEIGHTS, **values)


@dataclass(frozen=True)
class Score:
    """A candidate's results over a set of deals."""

    win_share: float  #: mean win share (ties split)
    mean_score: float
    field_score: float  #: the field's mean score in the same games
    games: int
    per_deal: tuple[float, ...]  #: the win share of each deal (over its seats), for paired differences

    def figures(self) -> dict[str, Any]:
        return {
            "win_share": round(self.win_share, 4),
            "mean_score": round(self.mean_score, 2),
            "field_score": round(self.field_score, 2),
            "games": self.games,
        }


class Duels:
    """The deals of one run and their field: plays any candidate on them."""

    def __init__(self, rules: Rules, games: int, seed: int, stream: str) -> None:
        from coloretto.bots import kernel as K

        self.K = K
        self.rules = rules
        n = rules.players
        self.deals = max(1, math.ceil(games / (n * GAMES_PER_SEAT)))
        self.games = self.deals * n * GAMES_PER_SEAT
        self.states = [
            K.state_from_game(Game.new(rules, seed=derive_seed("tune-playout", stream, seed, n, d)))
            for d in range(self.deals)
        ]
        self.kernel_seeds = [
            [derive_seed("tune-playout-kernel", stream, seed, n, d, c) for c in range(n)]
            for d in range(self.deals)
        ]
        self.field = [(policy, K.policy_config(rules, w)) for _, policy, w in FIELD]

    def play(self, weights: PlayoutWeights, policy: int = POLICY_TUNED) -> Score:
        K = self.K
        n = self.rules.players
        mine = K.policy_config(self.rules, weights)
        sums = np.zeros(K.RESULT_SIZE)
        cfgs = np.zeros((n, K.CFG_SIZE), dtype=np.int64)
        policies = np.zeros(n, dtype=np.int64)
        wins = score = field = 0.0
        per_deal = []
        for d, s in enumerate(self.states):
            deal_wins = 0.0
            for c in range(n):
                for j in range(1, n):
                    seat = (c + j) % n
                    policies[seat], cfgs[seat] = self.field[(d + j - 1) % len(self.field)]
                policies[c], cfgs[c] = policy, mine
                sums[:] = 0.0
                K.k_seed(self.kernel_seeds[d][c])
                K.k_duel(s, cfgs, policies, GAMES_PER_SEAT, sums)
                deal_wins += sums[K.MAX_PLAYERS + c]
                score += sums[c]
                field += sums[:n].sum() - sums[c]
            wins += deal_wins
            per_deal.append(deal_wins / (n * GAMES_PER_SEAT))
        return Score(
            wins / self.games, score / self.games, field / (self.games * (n - 1)), self.games, tuple(per_deal)
        )


def paired(a: Score, b: Score) -> dict[str, float]:
    """The mean difference of two candidates' win shares on the same deals, with a 95 % interval."""
    d = np.array(a.per_deal) - np.array(b.per_deal)
    half = 1.96 * float(d.std(ddof=1)) / math.sqrt(len(d)) if len(d) > 1 else math.inf
    return {
        "mean": round(float(d.mean()), 4),
        "low": round(float(d.mean()) - half, 4),
        "high": round(float(d.mean()) + half, 4),
    }


def tune_players(
    players: int,
    trials: int,
    games: int,
    seed: int,
    confirm_games: int,
    population: int | None = None,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Tune the weights for one player count; returns the chosen weights and the figures."""
    try:
        from cmaes import CMA
    except ImportError:
        raise TuneError("tune-playout needs the cmaes package: pip install 'coloretto[rl]'") from None
    say = progress or (lambda _text: None)
    rules = Rules(players=players)
    duels = Duels(rules, games, seed, "tune")
    # a weight that does nothing at this player count is not a dimension of the search
    ranges = tuned_ranges(players)
    bounds = np.array([[0.0, 1.0]] * len(ranges))
    optimizer = CMA(
        mean=to_unit(GREEDY_WEIGHTS, ranges), sigma=0.25, bounds=bounds, seed=seed, population_size=population
    )
    tried: dict[PlayoutWeights, float] = {}
    greedy = duels.play(GREEDY_WEIGHTS, POLICY_GREEDY)
    say(f"{players} players: {duels.games} games a trial; the greedy playout wins {greedy.win_share:.3f}")
    done = 0
    best_share = -1.0
    while done < trials:
        answers = []
        for _ in range(optimizer.population_size):
            x = optimizer.ask()
            weights = from_unit(x, ranges)
            if weights not in tried:
                tried[weights] = duels.play(weights).win_share
                done += 1
            answers.append((x, -tried[weights]))
        optimizer.tell(answers)
        best_share = max(best_share, max(-v for _, v in answers))
        mean_share = -float(np.mean([v for _, v in answers]))
        say(f"{players} players: {done} trials, best {best_share:.3f}, generation mean {mean_share:.3f}")
    ranked = sorted(tried.items(), key=lambda item: -item[1])
    finalists = [w for w, _ in ranked[:CONFIRM_TOP]]
    mean = from_unit(optimizer.mean, ranges)
    if mean not in finalists:
        finalists.append(mean)
    fresh = Duels(rules, confirm_games, seed, "confirm")
    greedy_fresh = fresh.play(GREEDY_WEIGHTS, POLICY_GREEDY)
    confirmed = [(w, fresh.play(w)) for w in finalists]
    chosen, score = max(confirmed, key=lambda item: (item[1].win_share, item[1].mean_score))
    say(
        f"{players} players: on {fresh.games} fresh games the chosen weights win {score.win_share:.3f}, "
        f"the greedy playout {greedy_fresh.win_share:.3f}"
    )
    return {
        "weights": chosen,
        "figures": {
            "trials": done,
            "games_per_trial": duels.games,
            "tuning": {
                "chosen": round(tried[chosen], 4) if chosen in tried else None,
                "greedy": greedy.figures(),
            },
            "confirm": {
                "games": fresh.games,
                "chosen": score.figures(),
                "greedy": greedy_fresh.figures(),
                "difference": paired(score, greedy_fresh),
                "finalists": [s.figures() | {"weights": asdict(w)} for w, s in confirmed],
            },
        },
    }
