"""Each rule and each variant of docs/user/rules.md, played through the Game API."""

from __future__ import annotations

import random

import pytest

from coloretto import DRAW, PASS, Game, IllegalActionError, Rules, SetupError, name_joker, place, take
from coloretto.cards import GOLDEN_JOKER, JOKER, LAST_ROUND, PLUS_TWO, full_composition
from coloretto.game import deal
from coloretto.rules import RulesError
from tests.helpers import check_invariants, stacked_game

Y, O, R, P, G, B, N = range(7)


# --------------------------------------------------------------------- setup


@pytest.mark.parametrize(
    ("edition", "jokers", "golden", "plus_twos", "under"),
    [("classic", 3, 0, 10, 15), ("modern", 2, 1, 10, 16), ("playing-cards", 3, 0, 8, 15)],
)
def test_editions_deal_their_own_deck(
    edition: str, jokers: int, golden: int, plus_twos: int, under: int
) -> None:
    rules = Rules(players=4, edition=edition)
    setup = deal(rules, seed=3)
    deck = setup.deck
    assert deck.count(JOKER) == jokers
    assert deck.count(GOLDEN_JOKER) == golden
    assert deck.count(PLUS_TWO) == plus_twos
    assert len(deck) - 1 - deck.index(LAST_ROUND) == under
    # Seven colours of nine, less the four starting cards.
    assert sum(deck.count(c) for c in range(7)) == 63 - 4


@pytest.mark.parametrize(("players", "colours"), [(2, 5), (3, 6), (4, 7), (5, 7)])
def test_colours_in_play_by_player_count(players: int, colours: int) -> None:
    setup = deal(Rules(players=players), seed=1)
    in_play = {c for c in setup.deck if c < 7} | {c for hand in setup.starting_cards for c in hand}
    assert in_play == set(range(colours))


def test_playing_cards_deck_sizes_match_the_adaptation() -> None:
    # 75 cards for 4–5 players, 66 for 3, 57 for 2 (the X included).
    for players, size in ((5, 75), (4, 75), (3, 66), (2, 57)):
        assert sum(full_composition(players, "playing-cards")) == size  # type: ignore[arg-type]


def test_starting_cards_are_all_different_colours() -> None:
    for seed in range(50):
        setup = deal(Rules(players=5), seed)
        cards = [c for hand in setup.starting_cards for c in hand]
        assert len(cards) == 5 and len(set(cards)) == 5


def test_two_players_start_with_two_cards_each_four_colours() -> None:
    for seed in range(50):
        setup = deal(Rules(players=2), seed)
        assert all(len(hand) == 2 for hand in setup.starting_cards)
        cards = [c for hand in setup.starting_cards for c in hand]
        assert len(set(cards)) == 4 and max(cards) < 5


def test_two_players_use_rows_of_one_two_and_three() -> None:
    game = Game.new(Rules(players=2), seed=1)
    assert game.row_capacities == (1, 2, 3)
    assert Game.new(Rules(players=4), seed=1).row_capacities == (3, 3, 3, 3)


def test_same_seed_same_game() -> None:
    rules = Rules(players=3, edition="modern")
    assert deal(rules, 99) == deal(rules, 99)
    assert deal(rules, 99).deck != deal(rules, 100).deck


def test_first_player_can_be_chosen_or_random() -> None:
    assert Game.new(Rules(), seed=5, first_player=2).to_move == 2
    starters = {Game.new(Rules(), seed=s).to_move for s in range(40)}
    assert starters == {0, 1, 2, 3}


def test_unknown_rule_options_are_refused() -> None:
    with pytest.raises(RulesError, match="2 to 5 players"):
        Rules(players=6)
    with pytest.raises(RulesError, match="table must be one of brown, violet"):
        Rules(table="green")  # type: ignore[arg-type]
    with pytest.raises(RulesError, match="unknown rule option"):
        Rules.from_dict({"players": 3, "speed": "fast"})


def test_a_deck_that_does_not_fit_the_rules_is_refused() -> None:
    rules = Rules(players=3)
    setup = deal(rules, 1)
    with pytest.raises(SetupError, match="does not hold this game's cards"):
        Game.from_deck(rules, setup.deck[1:], setup.starting_cards)
    moved = list(setup.deck)
    i = moved.index(LAST_ROUND)
    moved[i], moved[i - 1] = moved[i - 1], moved[i]
    with pytest.raises(SetupError, match="exactly 15 cards under it"):
        Game.from_deck(rules, moved, setup.starting_cards)
    with pytest.raises(SetupError, match="different colours"):
        Game.from_deck(rules, setup.deck, [[0], [0], [1]])


# --------------------------------------------------------------------- turns


def test_draw_then_place_then_next_player() -> None:
    game = stacked_game(Rules(players=3), ["R", "B"])
    assert game.legal_actions == (DRAW,)  # all rows empty: nothing to take
    game.push(DRAW)
    assert game.pending_card == R
    assert game.to_move == 0
    assert set(game.legal_actions) == {place(0), place(1), place(2)}
    game.push(place(1))
    assert game.rows == ((), (R,), ())
    assert game.to_move == 1
    assert set(game.legal_actions) == {DRAW, take(1)}


def test_taking_a_row_ends_the_players_round() -> None:
    game = stacked_game(Rules(players=3), ["R", "B", "G"])
    game.push(DRAW)
    game.push(place(0))
    game.push(take(0))  # seat 1 takes the red
    assert game.is_out(1)
    assert game.collection(1)[R] == 1
    assert game.row_is_taken(0)
    assert game.to_move == 2
    game.push(DRAW)
    assert place(0) not in game.legal_actions  # a taken row gets no more cards
    game.push(place(2))
    assert game.to_move == 0  # seat 1 is skipped


def test_round_ends_when_everyone_has_taken_and_last_taker_starts() -> None:
    game = stacked_game(Rules(players=3), ["R", "B", "G"])
    for row in range(3):
        game.push(DRAW)
        game.push(place(row))
    # seat 0 to move again; rows hold R, B, G
    game.push(take(0))
    game.push(take(1))
    assert game.round == 1
    game.push(take(2))  # seat 2 is the last taker
    assert game.round == 2
    assert game.to_move == 2
    assert game.rows == ((), (), ())
    assert not any(game.is_out(s) for s in range(3))


def test_next_player_starts_the_round_in_the_999_games_variant() -> None:
    game = stacked_game(Rules(players=3, round_starter="next-player"), ["R", "B", "G"])
    for row in range(3):
        game.push(DRAW)
        game.push(place(row))
    game.push(take(0))
    game.push(take(1))
    game.push(take(2))
    assert game.to_move == 0  # the player after seat 2


def test_only_player_left_draws_until_every_open_row_is_full_then_must_take() -> None:
    game = stacked_game(Rules(players=3), ["R"] * 8)
    game.push(DRAW)
    game.push(place(0))
    game.push(take(0))  # seat 1 out
    game.push(DRAW)  # seat 2
    game.push(place(1))
    game.push(take(1))  # seat 0 out: seat 2 is alone
    for _ in range(3):
        assert game.to_move == 2
        assert DRAW in game.legal_actions
        game.push(DRAW)
        game.push(place(2))
    assert game.rows[2] == (R, R, R)
    assert game.to_move == 2
    assert game.legal_actions == (take(2),)
    with pytest.raises(IllegalActionError, match="every open row is full"):
        game.push(DRAW)


def test_taking_an_empty_row_is_refused() -> None:
    game = stacked_game(Rules(players=3), ["R"])
    game.push(DRAW)
    game.push(place(0))
    with pytest.raises(IllegalActionError, match="row 2 is empty"):
        game.push(take(1))


def test_two_player_third_row_is_discarded_at_round_end() -> None:
    game = stacked_game(Rules(players=2), ["Y", "O", "R", "P"])
    game.push(DRAW)
    game.push(place(0))  # row 1 (capacity 1) full
    game.push(DRAW)
    game.push(place(2))
    game.push(DRAW)
    game.push(place(2))
    game.push(take(0))  # seat 1 takes the single card
    game.push(DRAW)
    game.push(place(1))  # seat 0 alone
    game.push(take(1))
    assert game.round == 2
    obs = game.observation(0)
    assert obs.removed_cards[O] == 1 and obs.removed_cards[R] == 1
    assert game.rows == ((), (), ())
    check_invariants(game)


def test_row_capacity_one_in_two_player_game() -> None:
    game = stacked_game(Rules(players=2), ["Y", "O"])
    game.push(DRAW)
    game.push(place(0))
    game.push(DRAW)
    with pytest.raises(IllegalActionError, match="row 1 is full"):
        game.push(place(0))


# ------------------------------------------------------------ last round, end


def test_last_round_card_is_set_aside_and_the_round_finishes() -> None:
    rules = Rules(players=3, cards_under_last_round=15)
    setup = deal(rules, 4)
    game = Game(setup)
    while game.cards_before_last_round:
        actions = game.legal_actions
        game.push(DRAW if DRAW in actions else actions[-1])
    assert game.cards_before_last_round == 0 and not game.last_round
    # Whoever draws next meets the last-round card first.
    while game.pending_card is not None or DRAW not in game.legal_actions:
        game.push(game.legal_actions[0])
    game.push(DRAW)
    assert game.last_round
    assert game.cards_before_last_round is None
    assert game.history()[-1][1][0] == LAST_ROUND
    assert game.pending_card is not None and game.pending_card != LAST_ROUND
    round_no = game.round
    while not game.is_over:
        game.push(game.legal_actions[-1])
    assert game.round == round_no


def test_golden_joker_gives_a_bonus_card_from_the_deck() -> None:
    game = stacked_game(Rules(players=3, edition="modern"), ["GJ", "B"])
    game.push(DRAW)
    game.push(place(0))
    game.push(take(0))
    assert game.collection(1)[GOLDEN_JOKER] == 1
    assert game.collection(1)[B] == 1  # the bonus card went straight to the collection
    assert game.rows[1] == ()
    assert game.history()[-1][1] == (B,)


def test_golden_joker_bonus_card_being_the_last_round_card() -> None:
    rules = Rules(players=3, edition="modern")
    starting = [[0], [1], [2]]
    counts = full_composition(3, rules.edition)
    for card in (0, 1, 2, GOLDEN_JOKER):
        counts[card] -= 1
    counts[LAST_ROUND] = 0
    rest = [c for c in range(11) for _ in range(counts[c])]
    # Put the golden joker right above the last-round card.
    cut = len(rest) + 1 - rules.under_last_round
    deck = [*rest[: cut - 1], GOLDEN_JOKER, LAST_ROUND, *rest[cut - 1 :]]
    game = Game.from_deck(rules, deck, starting)
    while game.cards_before_last_round != 1:
        actions = game.legal_actions
        game.push(DRAW if DRAW in actions else actions[-1])
    while DRAW not in game.legal_actions or game.pending_card is not None:
        game.push(game.legal_actions[-1])
    game.push(DRAW)
    assert game.pending_card == GOLDEN_JOKER
    row = next(a for a in game.legal_actions)
    game.push(row)
    taker = game.to_move
    assert taker is not None
    before = game.collection(taker)
    game.push(take(row.index))
    after = game.collection(taker)
    assert game.last_round  # the last-round card was set aside ...
    bonus = game.history()[-1][1]
    assert bonus[0] == LAST_ROUND and len(bonus) == 2  # ... and the next card turned over instead
    assert after[GOLDEN_JOKER] == before[GOLDEN_JOKER] + 1
    assert sum(after) == sum(before) + 2
    check_invariants(game)


def test_deck_running_out_never_deadlocks() -> None:
    # House rule with nothing under the last-round card: five players can empty the deck.
    rules = Rules(players=5, cards_under_last_round=0, edition="modern")
    for seed in range(30):
        game = Game.new(rules, seed=seed)
        rng = random.Random(seed)
        while not game.is_over:
            actions = game.legal_actions
            assert actions
            # Prefer drawing to drain the deck.
            game.push(DRAW if DRAW in actions else rng.choice(actions))
            check_invariants(game)
        assert game.cards_in_deck <= 1


def test_pass_is_legal_only_when_nothing_else_is() -> None:
    rules = Rules(players=3, cards_under_last_round=0)
    game = Game.new(rules, seed=2)
    with pytest.raises(IllegalActionError, match="passing is allowed only"):
        game.push(PASS)
    saw_pass = False
    while not game.is_over:
        actions = game.legal_actions
        if actions == (PASS,):
            saw_pass = True
        # Take only when forced, draw otherwise, so the deck runs dry mid-round.
        game.push(DRAW if DRAW in actions else actions[0])
    assert saw_pass


def test_game_ends_after_the_last_round() -> None:
    game = Game.new(Rules(players=4), seed=11)
    rng = random.Random(0)
    while not game.is_over:
        game.push(rng.choice(game.legal_actions))
    assert game.to_move is None
    assert game.legal_actions == ()
    with pytest.raises(IllegalActionError, match="the game is over"):
        game.push(DRAW)
    assert game.last_round


# ----------------------------------------------------------------- jokers


def test_jokers_named_on_take() -> None:
    rules = Rules(players=3, joker_timing="on-take")
    game = stacked_game(rules, ["J", "R"])
    game.push(DRAW)
    game.push(place(0))
    game.push(take(0))  # seat 1 takes the joker
    assert game.to_move == 1
    assert game.jokers_to_name == (JOKER,)
    assert set(game.legal_actions) == {name_joker(c) for c in range(6)}
    with pytest.raises(IllegalActionError, match="name the colour of the joker"):
        game.push(DRAW)
    game.push(name_joker(B))
    assert game.collection(1)[B] == 1 and game.collection(1)[JOKER] == 0
    assert game.named_jokers(1) == ((JOKER, B),)
    assert game.to_move == 2
    # Named jokers are fixed: scoring counts them as that colour.
    assert game.best_score(1).joker_colours == ()
    assert game.best_score(1).counts[B] == 1


def test_jokers_kept_until_scoring_by_default() -> None:
    game = stacked_game(Rules(players=3), ["J"])
    game.push(DRAW)
    game.push(place(0))
    game.push(take(0))
    assert game.jokers_to_name == ()
    assert game.to_move == 2
    assert game.best_score(1).joker_colours != ()


# ----------------------------------------------------------------- results


def test_winners_share_a_tie_unless_a_tie_break_is_chosen() -> None:
    from coloretto.scoring import winners_of

    assert winners_of([10, 12, 12], [0, 3, 1], Rules(players=3).tie_break) == (1, 2)
    assert winners_of([10, 12, 12], [0, 3, 1], Rules(players=3, tie_break="fewer-minus").tie_break) == (2,)


def test_match_play_adds_up_games() -> None:
    from coloretto.match import Match, MatchError, match_game_seed

    match = Match(Rules(players=3, match_games=4), seed=8)
    rng = random.Random(1)
    sums = [0, 0, 0]
    for number in range(1, 5):
        assert match.game_number == number
        with pytest.raises(MatchError, match="not over"):
            match.next_game()
        while not match.game.is_over:
            match.push(rng.choice(match.game.legal_actions))
        totals = [s.total for s in match.game.scores()]
        sums = [a + b for a, b in zip(sums, totals, strict=True)]
        assert match.totals() == tuple(sums)
        if number < 4:
            match.next_game()
    assert match.is_over
    assert match.totals() == tuple(sums)
    assert match.winners() == tuple(s for s in range(3) if sums[s] == max(sums))
    with pytest.raises(MatchError, match="over"):
        match.next_game()
    again = Match(Rules(players=3, match_games=4), seed=8)
    assert again.game.setup == match.games[0].setup
    assert [g.setup.seed for g in match.games] == [match_game_seed(8, k) for k in range(1, 5)]
