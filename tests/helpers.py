"""Shared helpers for the tests: hand-stacked decks and invariant checks."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from coloretto.actions import ActionKind
from coloretto.cards import CARD_KINDS, LAST_ROUND, full_composition, parse_card
from coloretto.cli import main
from coloretto.game import Game
from coloretto.rules import Rules

#: rule mixes that between them use every option value, for tests that run
#: a bot or the search kernel in "every variant"
RULE_VARIANTS = [
    Rules(players=2),
    Rules(players=3, table="violet"),
    Rules(players=4),
    Rules(players=5, edition="modern"),
    Rules(players=4, edition="modern", joker_timing="on-take"),
    Rules(players=3, edition="playing-cards", round_starter="next-player"),
    Rules(players=4, plus_colours="most-cards", tie_break="fewer-minus"),
    Rules(players=2, edition="modern", table="violet", joker_timing="on-take", tie_break="fewer-minus"),
    Rules(players=5, cards_under_last_round=0),
    Rules(players=3, edition="modern", cards_under_last_round=0, plus_colours="most-cards"),
    Rules(players=2, starting_colours="chosen", joker_timing="on-take"),
    Rules(players=4, edition="modern", starting_colours="chosen", tie_break="fewer-minus"),
]


def default_starting(rules: Rules) -> list[list[int]]:
    per = rules.starting_cards_per_player
    return [list(range(seat * per, (seat + 1) * per)) for seat in range(rules.players)]


def stacked_game(
    rules: Rules,
    top: Sequence[int | str],
    starting: Sequence[Sequence[int]] | None = None,
    first_player: int = 0,
) -> Game:
    """A game whose deck starts with ``top`` (tokens or ints, "LR" allowed only
    where the rules put it); the rest of the deck follows in a fixed order."""
    starting = [list(h) for h in (starting or default_starting(rules))]
    cards = [c if isinstance(c, int) else parse_card(c, rules.edition) for c in top]
    counts = full_composition(rules.players, rules.edition)
    for hand in starting:
        for card in hand:
            counts[card] -= 1
    for card in cards:
        counts[card] -= 1
    assert all(n >= 0 for n in counts), "the stacked cards are more than the game has"
    rest = [card for card in range(CARD_KINDS) for _ in range(counts[card]) if card != LAST_ROUND]
    deck = cards + rest
    if LAST_ROUND not in cards:
        cut = len(deck) - rules.under_last_round
        assert cut >= len(cards), "the stacked cards reach past the last-round card"
        deck.insert(cut, LAST_ROUND)
    return Game.from_deck(rules, deck, starting, first_player)


def deck_composition(game: Game) -> list[int]:
    """The face-down cards by kind (the last-round card left out), worked out
    from public facts only: the dealt deck, less every card the moves turned
    over and every starting colour chosen out of the box (variant)."""
    counts = [0] * CARD_KINDS
    for card in game.setup.deck:
        counts[card] += 1
    for action, revealed in game.history():
        for card in revealed:
            counts[card] -= 1
        if action.kind is ActionKind.CHOOSE_START:
            counts[action.index] -= 1
    counts[LAST_ROUND] = 0
    return counts


def conserved_counts(game: Game) -> list[int]:
    """Every card of the game, wherever it is now, by kind."""
    counts = deck_composition(game)
    counts[LAST_ROUND] = 1  # in the deck or set aside once drawn: never anywhere else
    for row in game.rows:
        for card in row:
            counts[card] += 1
    if game.pending_card is not None:
        counts[game.pending_card] += 1
    for seat in range(game.players):
        for card, n in enumerate(game.collection(seat)):
            counts[card] += n
        for joker, colour in game.named_jokers(seat):
            counts[colour] -= 1
            counts[joker] += 1
    for card, n in enumerate(game.observation(0).removed_cards):
        counts[card] += n
    return counts


def check_invariants(game: Game) -> None:
    rules = game.rules
    assert conserved_counts(game) == full_composition(rules.players, rules.edition)
    for row, cap in zip(game.rows, game.row_capacities, strict=True):
        assert len(row) <= cap
    if game.cards_before_last_round is not None:
        assert game.cards_in_deck - 1 - game.cards_before_last_round == rules.under_last_round
    obs = game.observation(0)
    assert list(obs.unseen_composition) == deck_composition(game)
    # while starting colours are chosen (variant) the box still holds the cards
    # that the remaining choices will take out of it
    assert (
        sum(obs.unseen_composition)
        == game.cards_in_deck - (0 if obs.cards_before_last_round is None else 1) + obs.start_picks_left
    )
    assert all(n >= 0 for n in obs.unseen_composition)
    if not game.is_over:
        assert game.legal_actions, "a game in progress always has a legal action"


def argument_error(argv: Sequence[str], capsys: pytest.CaptureFixture[str]) -> str:
    """The error line of a command line that argparse refuses (exit status 2, usage above it)."""
    with pytest.raises(SystemExit) as stopped:
        main(list(argv))
    assert stopped.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return err.strip().splitlines()[-1]
