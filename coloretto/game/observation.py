"""What one player may know of a game: :class:`Observation`, everything but the order of the deck."""

from __future__ import annotations

from dataclasses import dataclass

from coloretto.actions import Action
from coloretto.rules import Rules


@dataclass(frozen=True)
class Observation:
    """What one player may know: everything but the order of the deck."""

    player: int
    rules: Rules
    to_move: int | None
    round: int
    rows: tuple[tuple[int, ...], ...]
    row_capacities: tuple[int, ...]
    rows_taken: tuple[bool, ...]
    pending_card: int | None  #: drawn and waiting to be placed
    jokers_to_name: tuple[int, ...]  #: joker kinds the player to move must still name (variant)
    collections: tuple[tuple[int, ...], ...]  #: count vectors, see coloretto.cards
    named_jokers: tuple[tuple[tuple[int, int], ...], ...]  #: per seat: (joker kind, colour)
    out_this_round: tuple[bool, ...]
    cards_in_deck: int  #: face-down cards left, the last-round card included while unseen
    cards_before_last_round: int | None  #: None once it has appeared
    last_round: bool
    unseen_composition: tuple[int, ...]  #: cards not yet seen, by kind (last-round card excluded)
    removed_cards: tuple[int, ...]  #: two players: cards of untaken third rows, by kind
    scores: tuple[int, ...]  #: each seat's best score right now
    legal_actions: tuple[Action, ...]  #: empty unless this player is to move
    is_over: bool
    last_taker: int  #: who left the round last (-1 before anyone has): starts the next round
    first_player: int  #: who starts round 1
    #: starting colours still to be chosen before round 1 (variant; 0 once play
    #: has begun). While they are, ``unseen_composition`` still holds the cards
    #: the remaining choices will take out of the box.
    start_picks_left: int = 0
