"""The arena's statistics against values computed by hand."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coloretto.arena.stats import (
    Z95,
    mean_interval,
    openskill_ratings,
    place_seats,
    summarise,
    t_quantile_95,
    wilson_interval,
)
from coloretto.rules import Rules, TieBreak
from coloretto.scoring import standing, winners_of


def test_z_is_the_two_sided_95_percent_normal_quantile() -> None:
    assert abs(Z95 - 1.959964) < 1e-6


def test_wilson_interval_seven_of_ten() -> None:
    # p = 0.7, z² = 3.841459: centre = 0.7 + z²/20 = 0.892073,
    # spread = z·sqrt(0.21/10 + z²/400) = 0.342876, denominator = 1 + z²/10 = 1.384146
    low, high = wilson_interval(7, 10)
    assert low == pytest.approx((0.892073 - 0.342876) / 1.384146, abs=1e-5)
    assert high == pytest.approx((0.892073 + 0.342876) / 1.384146, abs=1e-5)
    assert (round(low, 4), round(high, 4)) == (0.3968, 0.8922)


def test_wilson_interval_at_the_edges() -> None:
    # no successes: the lower end is 0, the upper (z²/n)/(1 + z²/n) = 0.384146/1.384146
    low, high = wilson_interval(0, 10)
    assert low == 0.0
    assert high == pytest.approx(0.277533, abs=1e-6)
    low, high = wilson_interval(10, 10)
    assert high == 1.0
    assert low == pytest.approx(1 - 0.277533, abs=1e-6)
    assert wilson_interval(0, 0) == (0.0, 1.0)
    with pytest.raises(ValueError):
        wilson_interval(11, 10)


def test_wilson_interval_takes_split_ties() -> None:
    # 2.5 wins of 5 (a two-way tie split): p = 0.5, the interval is symmetric about 0.5:
    # centre = 0.5 + z²/10 = 0.884146, spread = z·sqrt(0.05 + z²/100) = 0.582785, denominator 1.768292
    low, high = wilson_interval(2.5, 5)
    assert low == pytest.approx(0.170424, abs=1e-5)
    assert high == pytest.approx(0.829576, abs=1e-5)
    assert low + high == pytest.approx(1.0)


def test_t_quantiles() -> None:
    assert t_quantile_95(1) == 12.706
    assert t_quantile_95(30) == 2.042
    assert t_quantile_95(31) == pytest.approx(2.0395, abs=5e-4)
    assert t_quantile_95(120) == pytest.approx(1.9799, abs=5e-4)
    assert t_quantile_95(10_000) == pytest.approx(1.9602, abs=5e-4)


def test_mean_interval_by_hand() -> None:
    # 1, 2, 3, 4: mean 2.5, s² = (2.25 + 0.25 + 0.25 + 2.25) / 3 = 5/3, se = sqrt(5/12) = 0.645497,
    # t(3) = 3.182: half width 2.053971
    interval = mean_interval([1, 2, 3, 4])
    assert interval.mean == 2.5
    assert interval.low == pytest.approx(2.5 - 2.053971, abs=1e-5)
    assert interval.high == pytest.approx(2.5 + 2.053971, abs=1e-5)
    single = mean_interval([7])
    assert (single.mean, single.low, single.high) == (7, 7, 7)
    assert math.isnan(mean_interval([]).mean)


def test_a_tie_for_first_splits_the_win_and_the_places() -> None:
    placing = place_seats([30, 30, 20, 10], [0, 0, 0, 0], [False] * 4, Rules(players=4))
    assert placing.winners == (0, 1)
    assert placing.win_shares == (0.5, 0.5, 0.0, 0.0)
    assert placing.ranks == (1.5, 1.5, 3.0, 4.0)


def test_a_three_way_tie_gives_a_third_each() -> None:
    placing = place_seats([12, 25, 25, 25], [0, 0, 0, 0], [False] * 4, Rules(players=4))
    assert placing.winners == (1, 2, 3)
    assert placing.win_shares == pytest.approx((0, 1 / 3, 1 / 3, 1 / 3))
    assert placing.ranks == (4.0, 2.0, 2.0, 2.0)
    assert sum(placing.win_shares) == pytest.approx(1.0)


def test_the_fewer_minus_tie_break_narrows_a_tie() -> None:
    rules = Rules(players=3, tie_break=TieBreak.FEWER_MINUS)
    placing = place_seats([30, 30, 20], [6, 3, 0], [False] * 3, rules)
    assert placing.winners == (1,)
    assert placing.ranks == (2.0, 1.0, 3.0)
    # the same totals under the default rules: a shared win
    shared = place_seats([30, 30, 20], [6, 3, 0], [False] * 3, Rules(players=3))
    assert shared.winners == (0, 1)


def test_a_forfeited_seat_is_last_and_cannot_win() -> None:
    placing = place_seats([40, 30, 30, 10], [0] * 4, [True, False, False, False], Rules(players=4))
    assert placing.winners == (1, 2)
    assert placing.win_shares == (0.0, 0.5, 0.5, 0.0)
    assert placing.ranks == (4.0, 1.5, 1.5, 3.0)
    everyone = place_seats([40, 30], [0, 0], [True, True], Rules(players=2))
    assert everyone.winners == ()
    assert everyone.ranks == (1.5, 1.5)


@settings(max_examples=200, deadline=None)
@given(
    results=st.lists(st.tuples(st.integers(-40, 60), st.integers(0, 40)), min_size=2, max_size=5),
    forfeits=st.lists(st.booleans(), min_size=5, max_size=5),
    tie_break=st.sampled_from(list(TieBreak)),
)
def test_placings_follow_the_engines_tie_break(
    results: list[tuple[int, int]], forfeits: list[bool], tie_break: TieBreak
) -> None:
    totals = [t for t, _ in results]
    minus = [m for _, m in results]
    forfeited = forfeits[: len(results)]
    rules = Rules(players=len(results), tie_break=tie_break)
    placing = place_seats(totals, minus, forfeited, rules)
    live = [seat for seat in range(len(results)) if not forfeited[seat]]
    if live:
        best = winners_of([totals[s] for s in live], [minus[s] for s in live], tie_break)
        assert placing.winners == tuple(live[i] for i in best)
    else:
        assert placing.winners == ()
    fewer = rules.fewer_minus
    for a in live:
        for b in live:
            # a better standing is a better (smaller) rank, an equal one an equal rank
            ahead = standing(totals[a], minus[a], fewer) - standing(totals[b], minus[b], fewer)
            assert (placing.ranks[a] < placing.ranks[b]) == (ahead > 0)
            assert (placing.ranks[a] == placing.ranks[b]) == (ahead == 0)
        for out in set(range(len(results))) - set(live):
            assert placing.ranks[a] < placing.ranks[out]


def _result(game: int, bots: list[str], scores: list[int], forfeited: list[bool] | None = None) -> dict:
    forfeited = forfeited or [False] * len(bots)
    placing = place_seats(scores, [0] * len(bots), forfeited, Rules(players=len(bots)))
    return {
        "game": game,
        "bots": bots,
        "scores": scores,
        "ranks": list(placing.ranks),
        "win_shares": list(placing.win_shares),
        "forfeited": forfeited,
        "forfeits": [],
    }


def test_summary_by_hand() -> None:
    results = [
        _result(1, ["B", "C", "A"], [20, 25, 5]),
        _result(0, ["A", "B", "C"], [30, 30, 10]),  # out of order on purpose
    ]
    summary = summarise(results, ["A", "B", "C"])
    bots = {b["bot"]: b for b in summary["bots"]}
    a, b, c = bots["A"], bots["B"], bots["C"]
    assert (a["games"], a["wins"], a["win_share"]) == (2, 0.5, 0.25)
    assert (b["wins"], c["wins"]) == (0.5, 1.0)
    assert [a["mean_score"], b["mean_score"], c["mean_score"]] == [17.5, 25.0, 17.5]
    # margins to the best other: A 30-30, 5-25; B 30-30, 20-25; C 10-30, 25-20
    assert [a["mean_margin"], b["mean_margin"], c["mean_margin"]] == [-10.0, -2.5, -7.5]
    # ranks: A 1.5 and 3; B 1.5 and 2; C 3 and 1
    assert [a["mean_rank"], b["mean_rank"], c["mean_rank"]] == [2.25, 1.75, 2.0]
    low, high = wilson_interval(0.5, 2)
    assert a["win_share_ci"] == [round(low, 6), round(high, 6)]
    pairs = {(p["bot"], p["opponent"]): p for p in summary["head_to_head"]}
    ab = pairs[("A", "B")]
    assert (ab["wins"], ab["ties"], ab["losses"], ab["share"]) == (0, 1, 1, 0.25)
    assert ab["mean_score_diff"] == -7.5
    assert pairs[("B", "A")]["share"] == 0.75
    assert (pairs[("C", "A")]["wins"], pairs[("C", "A")]["losses"]) == (1, 1)  # 3rd vs 1.5th, 1st vs 3rd


def test_a_bot_seated_twice_counts_each_seat() -> None:
    results = [_result(0, ["X", "Y", "Y"], [10, 20, 30])]
    summary = summarise(results, ["X", "Y", "Y"])
    bots = {b["bot"]: b for b in summary["bots"]}
    assert bots["Y"]["games"] == 2
    assert bots["Y"]["wins"] == 1.0
    assert bots["Y"]["win_share"] == 0.5
    # margins: 20 - 30 and 30 - 20
    assert bots["Y"]["mean_margin"] == 0.0
    pairs = {(p["bot"], p["opponent"]): p for p in summary["head_to_head"]}
    assert pairs[("Y", "X")]["pairs"] == 2
    assert pairs[("Y", "X")]["wins"] == 2


def test_forfeits_are_left_out_of_scores_but_count_as_last() -> None:
    results = [_result(0, ["A", "B"], [50, 20], forfeited=[True, False])]
    bots = {b["bot"]: b for b in summarise(results, ["A", "B"])["bots"]}
    assert bots["A"]["forfeits"] == 1
    assert bots["A"]["scored_games"] == 0
    assert bots["A"]["mean_score"] is None
    assert bots["A"]["win_share"] == 0.0
    assert bots["B"]["win_share"] == 1.0
    assert bots["A"]["mean_rank"] == 2.0


def test_openskill_prefers_the_winner_and_is_deterministic() -> None:
    results = [
        _result(g, ["A", "B"] if g % 2 else ["B", "A"], [30, 10] if g % 2 else [10, 30]) for g in range(20)
    ]
    ratings = openskill_ratings(results, ["A", "B"])
    assert ratings["A"][0] > 25 > ratings["B"][0]
    assert ratings["A"][1] < 25 / 3
    assert openskill_ratings(results, ["A", "B"]) == ratings
