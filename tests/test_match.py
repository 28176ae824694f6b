"""Match play belongs to the core: seeds, running totals, winners, progress."""

from __future__ import annotations

import random

import pytest

from coloretto import Game, Rules
from coloretto.match import Match, MatchError, MatchProgress, match_game_seed
from coloretto.scoring import winners_of


def play_out(match: Match, rng: random.Random) -> None:
    while not match.game.is_over:
        match.push(rng.choice(match.game.legal_actions))


def test_a_one_game_match_is_the_game_of_its_seed() -> None:
    rules = Rules(players=4)
    assert Match(rules, seed=8).game.setup == Game.new(rules, seed=8).setup


def test_game_seeds_differ_and_repeat() -> None:
    seeds = [match_game_seed(8, k) for k in range(1, 6)]
    assert seeds[0] == 8
    assert len(set(seeds)) == 5
    assert seeds == [match_game_seed(8, k) for k in range(1, 6)]


def test_push_counts_a_game_when_it_ends_and_pop_uncounts_it() -> None:
    match = Match(Rules(players=2, match_games=2), seed=3)
    play_out(match, random.Random(2))
    counted = match.totals()
    assert counted == tuple(s.total for s in match.game.scores())
    last = match.pop()
    assert match.totals() == (0, 0)
    assert match.running_totals() == tuple(s.total for s in match.game.scores())
    event = match.push(last)
    assert event.game_over and event.action == last
    assert match.totals() == counted


def test_match_winner_uses_the_tie_break_over_the_whole_match() -> None:
    rules = Rules(players=3, match_games=2, tie_break="fewer-minus")
    match = Match(rules, seed=11)
    rng = random.Random(5)
    play_out(match, rng)
    match.next_game()
    play_out(match, rng)
    assert match.is_over
    assert match.winners() == winners_of(match.totals(), match.minus_points(), rules.tie_break)
    assert match.result() == {"totals": list(match.totals()), "winners": list(match.winners())}


def test_progress_lets_a_saved_game_go_on() -> None:
    rules = Rules(players=3, match_games=3)
    match = Match(rules, seed=21)
    rng = random.Random(9)
    play_out(match, rng)
    match.next_game()
    for _ in range(10):
        match.push(rng.choice(match.game.legal_actions))
    progress = match.progress()
    assert progress.game_number == 2
    assert progress.earlier_totals == tuple(s.total for s in match.games[0].scores())
    assert match.progress(1) == MatchProgress(21, 1, (0, 0, 0), (0, 0, 0))
    assert match.progress(2) == progress
    with pytest.raises(MatchError, match="game 3 of this match has not been dealt"):
        match.progress(3)
    read = MatchProgress.from_tags(progress.to_tags(), rules, seed=0)
    assert read == progress
    resumed = Match.resume(rules, read, match.game.copy())
    assert resumed.game_number == 2
    play_out(resumed, rng)
    assert resumed.totals() == tuple(
        a + s.total for a, s in zip(progress.earlier_totals, resumed.game.scores(), strict=True)
    )
    with pytest.raises(MatchError, match="not game 2"):
        Match.resume(rules, read, Game.new(rules, seed=1))


@pytest.mark.parametrize(
    ("tags", "message"),
    [
        ({"match_game": "9"}, "match has 3 games"),
        ({"match_game": "x"}, "not whole numbers"),
        ({"match_totals": "1,2"}, "2 numbers for 3 seats"),
    ],
)
def test_bad_match_tags_are_refused(tags: dict[str, str], message: str) -> None:
    with pytest.raises(MatchError, match=message):
        MatchProgress.from_tags(tags, Rules(players=3, match_games=3), seed=0)
