"""Honest statistics for a tournament: placings, intervals, ratings, head-to-head.

Everything here is a pure function of the games' results taken in the order
of their game numbers, so the same games give the same figures whichever
backend played them.

* **Win share**: a game's win is split between its winners (a two-way tie
  gives each 1/2). A bot's win share is the sum of its shares over its games
  divided by the games, with a Wilson score interval.
* **Rank**: 1 is first; tied seats share the mean of the places they cover
  (two tied for first both rank 1.5). A seat that forfeited is placed after
  every seat that did not.
* **Margin**: the seat's total minus the best total of the other seats.
* **Intervals** of means use Student's t with n − 1 degrees of freedom. They
  treat each (game, seat) as an independent sample; duplicate deals make the
  samples of one deal correlated, so read them as a guide, not a proof.
* **openskill**: a Plackett–Luce rating updated game by game in game order;
  a bot seated several times in one game gets the mean of its copies' updates.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

from coloretto.rules import Rules
from coloretto.scoring import standing

CONFIDENCE = 0.95
Z95 = NormalDist().inv_cdf(0.5 + CONFIDENCE / 2)  # 1.959963984540054

#: Student's t, two-sided 95 %, for 1 to 30 degrees of freedom
_T95 = (
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
    2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
    2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
)  # fmt: skip


# ------------------------------------------------------------- intervals


def wilson_interval(successes: float, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a proportion (successes may be fractional:
    split ties). ``(0.0, 1.0)`` when there are no trials."""
    if n <= 0:
        return (0.0, 1.0)
    if not 0 <= successes <= n:
        raise ValueError(f"successes must lie between 0 and {n}, not {successes}")
    p = successes / n
    z2 = z * z
    centre = p + z2 / (2 * n)
    spread = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n))
    denominator = 1 + z2 / n
    low = 0.0 if successes == 0 else max(0.0, (centre - spread) / denominator)
    high = 1.0 if successes == n else min(1.0, (centre + spread) / denominator)
    return (low, high)


def t_quantile_95(df: int) -> float:
    """Two-sided 95 % quantile of Student's t (table to 30, then a
    Cornish–Fisher expansion that is good to 3 decimals)."""
    if df < 1:
        raise ValueError("degrees of freedom must be at least 1")
    if df <= len(_T95):
        return _T95[df - 1]
    z = Z95
    return z + (z**3 + z) / (4 * df) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df * df)


@dataclass(frozen=True)
class MeanInterval:
    mean: float
    low: float
    high: float
    n: int


def mean_interval(values: Sequence[float]) -> MeanInterval:
    """Sample mean with a 95 % t interval (a point interval for n < 2; NaN for n = 0)."""
    n = len(values)
    if n == 0:
        nan = float("nan")
        return MeanInterval(nan, nan, nan, 0)
    mean = math.fsum(values) / n
    if n < 2:
        return MeanInterval(mean, mean, mean, n)
    variance = math.fsum((v - mean) ** 2 for v in values) / (n - 1)
    half = t_quantile_95(n - 1) * math.sqrt(variance / n)
    return MeanInterval(mean, mean - half, mean + half, n)


# -------------------------------------------------------------- placings


@dataclass(frozen=True)
class Placing:
    ranks: tuple[float, ...]  #: 1 = first, ties averaged, forfeits last
    winners: tuple[int, ...]
    win_shares: tuple[float, ...]


def place_seats(
    totals: Sequence[int],
    minus_points: Sequence[int],
    forfeited: Sequence[bool],
    rules: Rules,
) -> Placing:
    """Ranks, winners and win shares of one game (or match).

    Seats are ordered by :func:`coloretto.scoring.standing` (the total, and
    with the ``fewer-minus`` tie-break fewer minus points), as the engine
    decides its winners; a forfeited seat comes after every other seat and
    cannot win. Tied seats share places and the win.
    """
    n = len(totals)
    fewer_minus = rules.fewer_minus

    def key(seat: int) -> tuple[int, int]:
        if forfeited[seat]:
            return (0, 0)
        return (1, standing(totals[seat], minus_points[seat], fewer_minus))

    order = sorted(range(n), key=key, reverse=True)
    ranks = [0.0] * n
    place = 0
    while place < n:
        end = place
        while end + 1 < n and key(order[end + 1]) == key(order[place]):
            end += 1
        shared = (place + 1 + end + 1) / 2
        for i in range(place, end + 1):
            ranks[order[i]] = shared
        place = end + 1
    live = [s for s in range(n) if not forfeited[s]]
    if live:
        best = max(key(s) for s in live)
        winners = tuple(s for s in live if key(s) == best)
    else:
        winners = ()
    shares = tuple(1 / len(winners) if s in winners else 0.0 for s in range(n))
    return Placing(tuple(ranks), winners, shares)


# ------------------------------------------------------------- summaries


@dataclass
class BotSummary:
    bot: str
    games: int = 0  #: seat-games: a bot seated twice in a game counts twice
    wins: float = 0.0  #: sum of win shares
    forfeits: int = 0
    scores: list[int] | None = None  #: totals of the games it did not forfeit
    margins: list[int] | None = None
    ranks: list[float] | None = None
    mu: float = 0.0
    sigma: float = 0.0

    @property
    def win_share(self) -> float:
        return self.wins / self.games if self.games else float("nan")

    def to_dict(self) -> dict[str, Any]:
        low, high = wilson_interval(self.wins, self.games)
        score = mean_interval(self.scores or [])
        margin = mean_interval(self.margins or [])
        ranks = self.ranks or []
        return {
            "bot": self.bot,
            "games": self.games,
            "wins": _round(self.wins),
            "win_share": _round(self.win_share),
            "win_share_ci": [_round(low), _round(high)],
            "mean_score": _round(score.mean),
            "score_ci": [_round(score.low), _round(score.high)],
            "mean_margin": _round(margin.mean),
            "margin_ci": [_round(margin.low), _round(margin.high)],
            "mean_rank": _round(math.fsum(ranks) / len(ranks)) if ranks else None,
            "openskill_mu": _round(self.mu),
            "openskill_sigma": _round(self.sigma),
            "openskill_ordinal": _round(self.mu - 3 * self.sigma),
            "forfeits": self.forfeits,
            "scored_games": len(self.scores or []),
        }


def _round(value: float) -> float | None:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    return round(float(value), 6)


@dataclass
class HeadToHead:
    bot: str
    opponent: str
    wins: int = 0
    ties: int = 0
    losses: int = 0
    score_diffs: list[int] | None = None

    @property
    def pairs(self) -> int:
        return self.wins + self.ties + self.losses

    def to_dict(self) -> dict[str, Any]:
        share = (self.wins + self.ties / 2) / self.pairs if self.pairs else float("nan")
        low, high = wilson_interval(self.wins + self.ties / 2, self.pairs)
        diff = mean_interval(self.score_diffs or [])
        return {
            "bot": self.bot,
            "opponent": self.opponent,
            "pairs": self.pairs,
            "wins": self.wins,
            "ties": self.ties,
            "losses": self.losses,
            "share": _round(share),
            "share_ci": [_round(low), _round(high)],
            "mean_score_diff": _round(diff.mean),
            "score_diff_ci": [_round(diff.low), _round(diff.high)],
        }


def summarise(results: Iterable[dict[str, Any]], lineup: Sequence[str]) -> dict[str, Any]:
    """Per-bot figures and the head-to-head table from game results (dicts as
    written to ``games.jsonl``), taken in game order."""
    ordered = sorted(results, key=lambda r: r["game"])
    names = list(dict.fromkeys(lineup))
    bots = {name: BotSummary(name, scores=[], margins=[], ranks=[]) for name in names}
    pairs = {(a, b): HeadToHead(a, b, score_diffs=[]) for a in names for b in names if a != b}
    for result in ordered:
        seats = result["bots"]
        totals = result["scores"]
        ranks = result["ranks"]
        forfeited = result["forfeited"]
        for seat, name in enumerate(seats):
            summary = bots[name]
            summary.games += 1
            summary.wins += result["win_shares"][seat]
            summary.ranks.append(ranks[seat])  # type: ignore[union-attr]
            if forfeited[seat]:
                summary.forfeits += 1
            else:
                summary.scores.append(totals[seat])  # type: ignore[union-attr]
                others = [totals[s] for s in range(len(seats)) if s != seat]
                summary.margins.append(totals[seat] - max(others))  # type: ignore[union-attr]
        for a, name_a in enumerate(seats):
            for b, name_b in enumerate(seats):
                if name_a == name_b:
                    continue
                record = pairs[(name_a, name_b)]
                if ranks[a] < ranks[b]:
                    record.wins += 1
                elif ranks[a] > ranks[b]:
                    record.losses += 1
                else:
                    record.ties += 1
                if not forfeited[a] and not forfeited[b]:
                    record.score_diffs.append(totals[a] - totals[b])  # type: ignore[union-attr]
    for name, (mu, sigma) in openskill_ratings(ordered, names).items():
        bots[name].mu, bots[name].sigma = mu, sigma
    return {
        "bots": [bots[name].to_dict() for name in names],
        "head_to_head": [pairs[key].to_dict() for key in pairs if pairs[key].pairs],
    }


def openskill_ratings(
    results: Sequence[dict[str, Any]], names: Sequence[str]
) -> dict[str, tuple[float, float]]:
    """(mu, sigma) per bot after rating every game in order (Plackett–Luce)."""
    from openskill.models import PlackettLuce

    model = PlackettLuce()
    default = model.rating()
    ratings = {name: (default.mu, default.sigma) for name in names}
    for result in results:
        ratings.update(rate_game(ratings, result["bots"], result["ranks"], model))
    return ratings


def rate_game(
    ratings: Mapping[str, tuple[float, float]],
    seats: Sequence[str],
    ranks: Sequence[float],
    model: Any = None,
) -> dict[str, tuple[float, float]]:
    """The (mu, sigma) of every player of one game after it: ``seats`` names the player of each
    seat, ``ranks`` its place (1 first, ties equal), ``ratings`` each player's (mu, sigma) before.
    A player in several seats gets the mean of its seats' updates; a game of one player alone
    changes nothing (an empty answer). ``model``: openskill's PlackettLuce with its defaults."""
    if len(set(seats)) < 2:
        return {}
    if model is None:
        from openskill.models import PlackettLuce

        model = PlackettLuce()
    teams = [[model.rating(mu=ratings[name][0], sigma=ratings[name][1])] for name in seats]
    rated = model.rate(teams, ranks=list(ranks))
    updates: dict[str, list[tuple[float, float]]] = {}
    for name, team in zip(seats, rated):
        updates.setdefault(name, []).append((team[0].mu, team[0].sigma))
    return {
        name: (math.fsum(v[0] for v in values) / len(values), math.fsum(v[1] for v in values) / len(values))
        for name, values in updates.items()
    }
