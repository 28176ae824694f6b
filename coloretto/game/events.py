"""What each move did, told by the game itself: :class:`MoveEvent`, read from the undo stack."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial

from coloretto.actions import Action
from coloretto.cards import GOLDEN_JOKER, JOKER, LAST_ROUND, Edition, card_name, card_token
from coloretto.game.snapshots import (
    _ChoseStart,
    _Drew,
    _LeftRound,
    _NamedJoker,
    _Placed,
    _Snapshot,
    _TurnedOver,
)
from coloretto.game.tables import CHOOSE_KIND, DRAW_KIND, NAME_KIND, PLACE_KIND, TAKE_KIND


@dataclass(frozen=True, slots=True)
class MoveEvent:
    """What one move did, told by the game itself (:meth:`Game.events`).

    The terminal's and the web app's logs, records and reviews read these
    instead of working out what a move did from the positions around it.
    """

    number: int  #: 1-based, in this game
    seat: int  #: who moved
    action: Action
    round: int  #: the round the move was made in
    #: cards turned over, the last-round card first if it came up: what records write
    revealed: tuple[int, ...] = ()
    row: int | None = None  #: the row placed in or taken
    #: the cards that moved: the card drawn or placed, the cards of the row taken
    cards: tuple[int, ...] = ()
    bonus_card: int | None = None  #: the card the golden joker brought its taker
    joker: int | None = None  #: naming a joker: its kind (JOKER or GOLDEN_JOKER)
    colour: int | None = None  #: naming a joker or choosing a starting colour: the colour
    #: after a take (variant: jokers named on take): the jokers the taker must now name
    jokers_to_name: tuple[int, ...] = ()
    round_ended: bool = False
    game_over: bool = False
    next_to_move: int | None = None  #: None once the game is over

    @property
    def last_round_began(self) -> bool:
        """Whether the last-round card came up with this move."""
        return LAST_ROUND in self.revealed

    def notation(self, edition: Edition = Edition.CLASSIC) -> str:
        """The move as records write it: the action, then the cards turned over (``"d LR B"``)."""
        return " ".join([self.action.notation(edition), *(card_token(c, edition) for c in self.revealed)])

    def describe(self, names: Sequence[str], edition: Edition = Edition.CLASSIC) -> str:
        """The move in words for a log: ``"Ann took row 3: red, red, +2"``."""
        who = names[self.seat]

        def cards(values: Sequence[int]) -> str:
            return ", ".join(card_name(c, edition) for c in values)

        kind = self.action.kind
        if kind is DRAW_KIND:
            text = f"{who} drew {cards(self.cards)}"
        elif kind is PLACE_KIND:
            text = f"{who} put {cards(self.cards)} in row {(self.row or 0) + 1}"
        elif kind is TAKE_KIND:
            text = f"{who} took row {(self.row or 0) + 1}: {cards(self.cards)}"
            if self.bonus_card is not None:
                text += f"; the golden joker brings them {card_name(self.bonus_card, edition)} from the deck"
        elif kind is NAME_KIND:
            joker = card_name(self.joker if self.joker is not None else JOKER, edition)
            text = f"{who} named a {joker} {card_name(self.colour or 0, edition)}"
        elif kind is CHOOSE_KIND:
            text = f"{who} chose {card_name(self.colour or 0, edition)} as a starting colour"
        else:
            text = f"{who} passed: nothing to draw and no row to take"
        if self.last_round_began:
            text = "The last-round card came up: this is the last round! " + text
        return text


def revealed_by(entry: _Snapshot, last_round_at: int) -> tuple[int, ...]:
    """The cards a move turned over, the last-round card included (``last_round_at``: where the
    last-round card lies in the deck)."""
    turned: _Drew | _TurnedOver | None
    if isinstance(entry, _Drew):
        turned = entry
    elif isinstance(entry, _LeftRound):
        turned = entry.bonus
    else:
        return ()
    if turned is None:
        return ()
    if turned.deck_position == last_round_at:
        return (LAST_ROUND, turned.card)
    return (turned.card,)


def move_event(
    entry: _Snapshot,
    number: int,
    round_no: int,
    next_seat: int | None,
    game_over: bool,
    last_round_at: int,
    jokers_named_on_take: bool,
) -> MoveEvent:
    """The :class:`MoveEvent` of one record of the undo stack."""
    revealed = revealed_by(entry, last_round_at)
    event = partial(MoveEvent, number, entry.player, entry.action, round_no, next_to_move=next_seat)
    if isinstance(entry, _Placed):
        return event(row=entry.action.index, cards=(entry.card,))
    if isinstance(entry, _Drew):
        return event(revealed=revealed, cards=(entry.card,))
    if isinstance(entry, _ChoseStart):
        return event(colour=entry.action.index)
    ended = entry.round_end is not None
    if isinstance(entry, _NamedJoker):
        return event(
            joker=entry.joker,
            colour=entry.action.index,
            jokers_to_name=entry.naming[1:],
            round_ended=ended,
            game_over=game_over,
        )
    naming: tuple[int, ...] = ()
    if jokers_named_on_take:  # the taker must now name the jokers taken, the bonus card's too
        naming = tuple(c for c in (*entry.cards, *revealed[-1:]) if c in (JOKER, GOLDEN_JOKER))
    return event(
        revealed=revealed,
        row=entry.row if entry.row >= 0 else None,
        cards=entry.cards,
        bonus_card=None if entry.bonus is None else entry.bonus.card,
        jokers_to_name=naming,
        round_ended=ended,
        game_over=game_over,
    )
