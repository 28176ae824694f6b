"""The undo stack's records: what each push overwrote, so that pop restores it exactly (and the
move events are read from them)."""

from __future__ import annotations

from typing import NamedTuple

from coloretto.actions import Action


class _TurnedOver(NamedTuple):
    """A card turned over (a draw or the golden joker's bonus)."""

    deck_position: int  #: where the deck stood before: the last-round card may lie there
    card: int
    was_last_round: bool
    swapped_from: int  #: -1, or where a card chosen with ``reveal`` was brought from


class _RoundEnd(NamedTuple):
    rows: tuple[tuple[int, ...], ...]  #: the rows as they were (two players: the untaken third row)
    player: int
    over: bool
    round: int
    out: int
    room: int
    nonempty: int
    taken: int


class _Placed(NamedTuple):
    action: Action
    card: int
    player: int
    room: int
    nonempty: int


class _Drew(NamedTuple):
    """A draw, with the card turned over in the fields of :class:`_TurnedOver`
    (one snapshot a draw rather than two: draws are the engine's hottest path)."""

    action: Action
    player: int
    deck_position: int
    card: int
    was_last_round: bool
    swapped_from: int


class _LeftRound(NamedTuple):
    """A take or a pass."""

    action: Action
    row: int  #: -1 for a pass
    cards: tuple[int, ...]  #: the row's cards
    bonus: _TurnedOver | None  #: the golden joker's bonus card
    player: int
    out: int
    room: int
    nonempty: int
    taken: int
    last_taker: int
    naming: tuple[int, ...]
    round_end: _RoundEnd | None


class _NamedJoker(NamedTuple):
    action: Action
    joker: int
    naming: tuple[int, ...]
    player: int
    round_end: _RoundEnd | None


class _ChoseStart(NamedTuple):
    action: Action
    player: int
    taken_from: int  #: where in the box the chosen card lay
    completed_deck: bool  #: whether this choice, the last, put the last-round card in


_Snapshot = _Placed | _Drew | _LeftRound | _NamedJoker | _ChoseStart

#: builds a snapshot from a tuple of its fields: the hot paths of push use it
#: because a NamedTuple's own constructor costs several times as much
_snapshot = tuple.__new__
