"""Cards and editions: what is in the box, and how each card is written.

Cards are small integers so that the engine's hot loops never touch an
object per card:

* ``0`` … ``6`` are the seven colours (the suits of the playing-cards edition),
* ``JOKER`` (7), ``GOLDEN_JOKER`` (8), ``PLUS_TWO`` (9) and ``LAST_ROUND`` (10).

A collection is counted by these same integers, so ``counts[card] += 1``
is how a card joins it.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from coloretto.errors import ExplainedError

COLOURS = 7
JOKER = 7
GOLDEN_JOKER = 8
PLUS_TWO = 9
LAST_ROUND = 10
CARD_KINDS = 11  #: number of distinct card values, the length of a count vector
COLLECTABLE_KINDS = 10  #: every kind but the last-round card, which nobody collects

CARDS_PER_COLOUR = 9


class NotationError(ExplainedError):
    """Text that cannot be read as a card or an action; the message says what was expected."""

    code = "bad_notation"


class Edition(StrEnum):
    """The three decks of the sources; each is a variant of the rules."""

    CLASSIC = "classic"
    MODERN = "modern"
    PLAYING_CARDS = "playing-cards"


@dataclass(frozen=True)
class EditionDeck:
    """What one edition's box holds, and how its cards are named."""

    plus_twos: int
    jokers: int
    golden_jokers: int
    cards_under_last_round: int
    colour_names: tuple[str, ...]
    colour_letters: tuple[str, ...]
    colour_symbols: tuple[str, ...]
    joker_name: str
    plus_two_name: str


# Colour names are chosen so that their letters are all different: the letter
# (or symbol) is what a colour-blind player reads, and what the notation uses.
_CLASSIC_NAMES = ("yellow", "orange", "red", "pink", "green", "blue", "brown")
_CLASSIC_LETTERS = ("Y", "O", "R", "P", "G", "B", "N")
_CLASSIC_SYMBOLS = ("●", "▲", "■", "◆", "♣", "★", "✚")

# The standard-deck adaptation: seven suits, Stars omitted except for its zero.
_SUIT_NAMES = ("clubs", "spades", "hearts", "diamonds", "caps", "switches", "planets")
_SUIT_LETTERS = ("C", "S", "H", "D", "K", "W", "P")
_SUIT_SYMBOLS = ("♣", "♠", "♥", "♦", "■", "＋", "◉")

EDITION_DECKS: dict[Edition, EditionDeck] = {
    Edition.CLASSIC: EditionDeck(
        plus_twos=10,
        jokers=3,
        golden_jokers=0,
        cards_under_last_round=15,
        colour_names=_CLASSIC_NAMES,
        colour_letters=_CLASSIC_LETTERS,
        colour_symbols=_CLASSIC_SYMBOLS,
        joker_name="joker",
        plus_two_name="+2",
    ),
    Edition.MODERN: EditionDeck(
        plus_twos=10,
        jokers=2,
        golden_jokers=1,
        cards_under_last_round=16,
        colour_names=_CLASSIC_NAMES,
        colour_letters=_CLASSIC_LETTERS,
        colour_symbols=_CLASSIC_SYMBOLS,
        joker_name="joker",
        plus_two_name="+2",
    ),
    Edition.PLAYING_CARDS: EditionDeck(
        plus_twos=8,
        jokers=3,
        golden_jokers=0,
        cards_under_last_round=15,
        colour_names=_SUIT_NAMES,
        colour_letters=_SUIT_LETTERS,
        colour_symbols=_SUIT_SYMBOLS,
        joker_name="wild ace",
        plus_two_name="zero (+2)",
    ),
}

# Tokens for the non-colour cards are the same in every edition.
SPECIAL_TOKENS = {JOKER: "J", GOLDEN_JOKER: "GJ", PLUS_TWO: "+2", LAST_ROUND: "LR"}
_SPECIAL_ALIASES = {
    "j": JOKER,
    "joker": JOKER,
    "wild": JOKER,
    "ace": JOKER,
    "gj": GOLDEN_JOKER,
    "golden": GOLDEN_JOKER,
    "golden-joker": GOLDEN_JOKER,
    "+2": PLUS_TWO,
    "plus2": PLUS_TWO,
    "plus-two": PLUS_TWO,
    "zero": PLUS_TWO,
    "lr": LAST_ROUND,
    "last-round": LAST_ROUND,
}


def colours_in_play(players: int) -> int:
    """Seven colours with 4–5 players, six with 3, five with 2."""
    if players >= 4:
        return 7
    return 6 if players == 3 else 5


def is_colour(card: int) -> bool:
    return 0 <= card < COLOURS


def card_token(card: int, edition: Edition = Edition.CLASSIC) -> str:
    """The short notation of a card: a colour letter, ``J``, ``GJ``, ``+2`` or ``LR``."""
    if is_colour(card):
        return EDITION_DECKS[edition].colour_letters[card]
    try:
        return SPECIAL_TOKENS[card]
    except KeyError:
        raise ValueError(f"{card!r} is not a card") from None


def card_name(card: int, edition: Edition = Edition.CLASSIC) -> str:
    """The readable name of a card, as shown to people."""
    deck = EDITION_DECKS[edition]
    if is_colour(card):
        return deck.colour_names[card]
    return {
        JOKER: deck.joker_name,
        GOLDEN_JOKER: "golden joker",
        PLUS_TWO: deck.plus_two_name,
        LAST_ROUND: "last-round card",
    }[card]


def parse_card(text: str, edition: Edition = Edition.CLASSIC) -> int:
    """Read a card from its token or name (case-insensitive).

    Raises NotationError naming the text when it is no card of this edition.
    """
    key = text.strip().lower()
    deck = EDITION_DECKS[edition]
    for colour, (name, letter) in enumerate(zip(deck.colour_names, deck.colour_letters)):
        if key == name or key == letter.lower():
            return colour
    if key in _SPECIAL_ALIASES:
        return _SPECIAL_ALIASES[key]
    known = ", ".join(deck.colour_names)
    raise NotationError(
        "unknown card {text}: colours of the {edition} edition are {colours}",
        text=repr(text),
        edition=edition.value,
        colours=known,
    )


def parse_colour(text: str, edition: Edition = Edition.CLASSIC) -> int:
    card = parse_card(text, edition)
    if not is_colour(card):
        raise NotationError("{text} is not a colour", text=repr(text))
    return card


def full_composition(players: int, edition: Edition) -> list[int]:
    """How many of each card kind the game uses (last-round card included)."""
    deck = EDITION_DECKS[edition]
    counts = [0] * CARD_KINDS
    for colour in range(colours_in_play(players)):
        counts[colour] = CARDS_PER_COLOUR
    counts[JOKER] = deck.jokers
    counts[GOLDEN_JOKER] = deck.golden_jokers
    counts[PLUS_TWO] = deck.plus_twos
    counts[LAST_ROUND] = 1
    return counts
