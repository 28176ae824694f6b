"""The engine's lookup tables: legality and turn order without loops in the hot path."""

from __future__ import annotations

from coloretto.actions import CHOOSE_START, DRAW, PASS, PLACE, TAKE, Action, ActionKind
from coloretto.rules import MAX_PLAYERS

DRAW_KIND = ActionKind.DRAW
PLACE_KIND = ActionKind.PLACE
TAKE_KIND = ActionKind.TAKE
NAME_KIND = ActionKind.NAME_JOKER
PASS_KIND = ActionKind.PASS
CHOOSE_KIND = ActionKind.CHOOSE_START

_ROWS_BITS = 1 << MAX_PLAYERS
#: legal placements for a mask of rows that are open and have room
_PLACE_TABLE: tuple[tuple[Action, ...], ...] = tuple(
    tuple(PLACE[i] for i in range(MAX_PLAYERS) if mask >> i & 1) for mask in range(_ROWS_BITS)
)
#: legal turn actions for (can_draw << 5 | mask of rows that may be taken)
_TURN_TABLE: tuple[tuple[Action, ...], ...] = tuple(
    (((DRAW,) if key >> MAX_PLAYERS else ()) + tuple(TAKE[i] for i in range(MAX_PLAYERS) if key >> i & 1))
    or (PASS,)
    for key in range(2 * _ROWS_BITS)
)


def _next_in_round_table(players: int) -> tuple[tuple[int, ...], ...]:
    """table[out_mask][seat]: the next seat after ``seat`` still in the round.

    A player who is the only one left plays again; -1 when nobody is left.
    """
    table = []
    for out in range(1 << players):
        row = []
        for seat in range(players):
            nxt = -1
            for step in range(1, players + 1):
                candidate = (seat + step) % players
                if not out >> candidate & 1:
                    nxt = candidate
                    break
            row.append(nxt)
        table.append(tuple(row))
    return tuple(table)


_NEXT_IN_ROUND = {n: _next_in_round_table(n) for n in range(2, MAX_PLAYERS + 1)}


def _start_choice_table(colours: int) -> tuple[tuple[Action, ...], ...]:
    """table[mask of colours already chosen]: the starting colours still free."""
    return tuple(
        tuple(CHOOSE_START[c] for c in range(colours) if not chosen >> c & 1)
        for chosen in range(1 << colours)
    )


_START_CHOICES = {colours: _start_choice_table(colours) for colours in (5, 6, 7)}
