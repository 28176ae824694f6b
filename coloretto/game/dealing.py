"""Dealing a game: the setup (deck order, starting cards, first player) from a seed, a stand-in deck
for a position whose deck is unknown, and the checks of a setup given."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from coloretto.cards import CARD_KINDS, LAST_ROUND, card_token, full_composition, is_colour
from coloretto.rules import Rules


class SetupError(ValueError):
    """A deck order or starting hand that does not fit the rules."""


@dataclass(frozen=True)
class GameSetup:
    """Everything needed to deal the same game again."""

    rules: Rules
    #: draw order, top card first, the last-round card included. With starting
    #: colours chosen (variant): the whole box in the dealt order, without the
    #: last-round card; the choices leave it, then the last-round card goes in.
    deck: tuple[int, ...]
    starting_cards: tuple[tuple[int, ...], ...]  #: per seat (empty when they are chosen)
    first_player: int
    seed: int | None = None


def deal(rules: Rules, seed: int, first_player: int | None = None) -> GameSetup:
    """Shuffle and deal from a seed: starting colours, deck order, first player.

    With starting colours chosen (variant) nobody is dealt one: the deck is the
    whole box shuffled, and the game takes the chosen cards out of it.
    """
    rng = random.Random(seed)
    n = rules.players
    if rules.chooses_starting_colours:
        box = [
            card
            for card, count in enumerate(full_composition(n, rules.edition)[:LAST_ROUND])
            for _ in range(count)
        ]
        rng.shuffle(box)
        if first_player is None:
            first_player = rng.randrange(n)
        return GameSetup(rules, tuple(box), ((),) * n, first_player, seed)
    per_player = rules.starting_cards_per_player
    colours = rng.sample(range(rules.colours), n * per_player)
    starting = tuple(tuple(colours[s * per_player : (s + 1) * per_player]) for s in range(n))
    counts = full_composition(n, rules.edition)
    counts[LAST_ROUND] = 0
    for colour in colours:
        counts[colour] -= 1
    rest = [card for card, count in enumerate(counts) for _ in range(count)]
    rng.shuffle(rest)
    cut = len(rest) - rules.under_last_round
    deck = (*rest[:cut], LAST_ROUND, *rest[cut:])
    if first_player is None:
        first_player = rng.randrange(n)
    return GameSetup(rules, deck, starting, first_player, seed)


def stand_in_deck(rules: Rules, starting_cards: Sequence[Sequence[int]]) -> tuple[int, ...]:
    """A deck with the right cards in a fixed order, the last-round card in its
    place: for games whose every draw is chosen with ``reveal`` (a record whose
    deck was secret, an OpenSpiel state whose draws are chance nodes)."""
    counts = full_composition(rules.players, rules.edition)
    counts[LAST_ROUND] = 0
    for hand in starting_cards:
        for card in hand:
            if 0 <= card < CARD_KINDS:
                counts[card] -= 1
    if any(n < 0 for n in counts):
        raise SetupError("the starting cards hold more cards than the game has")
    rest = [card for card, n in enumerate(counts) for _ in range(n)]
    if rules.chooses_starting_colours:
        return tuple(rest)  # the box: the game puts the last-round card in after the choices
    cut = len(rest) - rules.under_last_round
    return (*rest[:cut], LAST_ROUND, *rest[cut:])


def validate_setup(setup: GameSetup) -> None:
    rules = setup.rules
    n = rules.players
    if not isinstance(setup.first_player, int) or not 0 <= setup.first_player < n:
        raise SetupError(f"first player must be a seat from 0 to {n - 1}, not {setup.first_player!r}")
    if len(setup.starting_cards) != n:
        raise SetupError(f"starting cards are needed for {n} seats, got {len(setup.starting_cards)}")
    per = 0 if rules.chooses_starting_colours else rules.starting_cards_per_player
    seen: list[int] = []
    for seat, hand in enumerate(setup.starting_cards):
        if len(hand) != per:
            raise SetupError(f"seat {seat + 1} must start with {per} card(s), not {len(hand)}")
        for card in hand:
            if not (isinstance(card, int) and is_colour(card) and card < rules.colours):
                raise SetupError(f"seat {seat + 1}'s starting card {card!r} is not a colour in play")
        seen.extend(hand)
    if len(set(seen)) != len(seen):
        raise SetupError("starting cards must all be of different colours")
    counts = full_composition(n, rules.edition)
    for card in seen:
        counts[card] -= 1
    if rules.chooses_starting_colours:
        counts[LAST_ROUND] = 0  # the game puts it in once the starting colours are chosen
    deck_counts = [0] * CARD_KINDS
    for card in setup.deck:
        if not (isinstance(card, int) and 0 <= card < CARD_KINDS):
            raise SetupError(f"{card!r} in the deck is not a card")
        deck_counts[card] += 1
    if deck_counts != counts:
        problems = []
        for card in range(CARD_KINDS):
            if deck_counts[card] != counts[card]:
                token = card_token(card, rules.edition)
                problems.append(f"{token}: {deck_counts[card]} instead of {counts[card]}")
        raise SetupError("the deck does not hold this game's cards (" + "; ".join(problems) + ")")
    if rules.chooses_starting_colours:
        return
    under = len(setup.deck) - 1 - setup.deck.index(LAST_ROUND)
    if under != rules.under_last_round:
        raise SetupError(
            f"the last-round card must have exactly {rules.under_last_round} cards under it, not {under}"
        )
