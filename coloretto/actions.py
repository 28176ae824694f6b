"""Actions: small immutable values with a short text notation.

=========  ==============  ===============================================
notation   long form       meaning
=========  ==============  ===============================================
``d``      ``draw``        turn over the top card (it must then be placed)
``p2``     ``place 2``     put the drawn card in row 2 (rows count from 1)
``t3``     ``take 3``      take row 3 and leave the round
``j:R``    ``joker red``   name a joker's colour (variant: jokers named on take)
``x``      ``pass``        leave the round with nothing: only when the deck is
                           exhausted and every open row is empty
``s:R``    ``start red``   choose a starting colour (variant: starting
                           colours chosen, before the first round)
=========  ==============  ===============================================

Every action is one of a few interned values (``DRAW``, ``place(i)``,
``take(i)`` …), so comparing and hashing them is cheap and the engine never
allocates one in its hot loop. Rows and colours are 0-based in code and
1-based / lettered in the notation. See ``docs/research/notation.md``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import IntEnum

from coloretto.cards import COLOURS, Edition, NotationError, card_token, parse_colour
from coloretto.rules import MAX_PLAYERS


class ActionKind(IntEnum):
    DRAW = 0
    PLACE = 1
    TAKE = 2
    NAME_JOKER = 3
    PASS = 4
    CHOOSE_START = 5


@dataclass(frozen=True, slots=True)
class Action:
    kind: ActionKind
    index: int = -1  #: the row for PLACE and TAKE, the colour for NAME_JOKER and CHOOSE_START

    def notation(self, edition: Edition = Edition.CLASSIC) -> str:
        kind = self.kind
        if kind is ActionKind.DRAW:
            return "d"
        if kind is ActionKind.PLACE:
            return f"p{self.index + 1}"
        if kind is ActionKind.TAKE:
            return f"t{self.index + 1}"
        if kind is ActionKind.NAME_JOKER:
            return f"j:{card_token(self.index, edition)}"
        if kind is ActionKind.CHOOSE_START:
            return f"s:{card_token(self.index, edition)}"
        return "x"

    def __str__(self) -> str:
        return self.notation()

    def __repr__(self) -> str:
        return f"Action({self.notation()!r})"

    @property
    def id(self) -> int:
        """A dense integer for this action (see :data:`NUM_ACTIONS`), used by
        the research environments' Discrete action spaces."""
        kind = self.kind
        if kind is ActionKind.DRAW:
            return 0
        if kind is ActionKind.PLACE:
            return 1 + self.index
        if kind is ActionKind.TAKE:
            return 1 + MAX_PLAYERS + self.index
        if kind is ActionKind.NAME_JOKER:
            return 1 + 2 * MAX_PLAYERS + self.index
        if kind is ActionKind.CHOOSE_START:
            return 2 + 2 * MAX_PLAYERS + COLOURS + self.index
        return 1 + 2 * MAX_PLAYERS + COLOURS


DRAW = Action(ActionKind.DRAW)
PASS = Action(ActionKind.PASS)
PLACE = tuple(Action(ActionKind.PLACE, i) for i in range(MAX_PLAYERS))
TAKE = tuple(Action(ActionKind.TAKE, i) for i in range(MAX_PLAYERS))
NAME_JOKER = tuple(Action(ActionKind.NAME_JOKER, c) for c in range(COLOURS))
CHOOSE_START = tuple(Action(ActionKind.CHOOSE_START, c) for c in range(COLOURS))

ALL_ACTIONS: tuple[Action, ...] = (DRAW, *PLACE, *TAKE, *NAME_JOKER, PASS, *CHOOSE_START)
NUM_ACTIONS = len(ALL_ACTIONS)
assert all(a.id == i for i, a in enumerate(ALL_ACTIONS))


def place(row: int) -> Action:
    return PLACE[row]


def take(row: int) -> Action:
    return TAKE[row]


def name_joker(colour: int) -> Action:
    return NAME_JOKER[colour]


def choose_start(colour: int) -> Action:
    return CHOOSE_START[colour]


def action_from_id(action_id: int) -> Action:
    if isinstance(action_id, bool) or not isinstance(action_id, int) or not 0 <= action_id < NUM_ACTIONS:
        raise ValueError(f"action id {action_id!r} is not a whole number from 0 to {NUM_ACTIONS - 1}")
    return ALL_ACTIONS[action_id]


_ROW_ACTION = re.compile(r"^(p|t|place|take)\s*(\d+)$")
_JOKER_ACTION = re.compile(r"^(?:j:|j\s+|joker\s+)(\S+)$")
_START_ACTION = re.compile(r"^(?:s:|s\s+|start\s+)(\S+)$")


def parse_action(text: str, edition: Edition = Edition.CLASSIC, rows: int = MAX_PLAYERS) -> Action:
    """Read an action in short or long notation (case-insensitive).

    ``rows``: how many rows the game has (:meth:`Game.parse_action` passes
    its own), so that a row number beyond them is refused with the right
    range. Raises :class:`NotationError` saying what was wrong. Whether the
    action is *legal* is the game's business, not the notation's.
    """
    if not isinstance(text, str):
        raise NotationError(f"an action is text such as 'd' or 't2', not {type(text).__name__}")
    key = " ".join(text.strip().lower().split())
    if key in ("d", "draw"):
        return DRAW
    if key in ("x", "pass"):
        return PASS
    match = _ROW_ACTION.match(key)
    if match:
        row = int(match.group(2))
        if not 1 <= row <= rows:
            raise NotationError("row {row} does not exist: rows are numbered 1 to {rows}", row=row, rows=rows)
        return (PLACE if match.group(1).startswith("p") else TAKE)[row - 1]
    match = _JOKER_ACTION.match(key)
    if match:
        return NAME_JOKER[parse_colour(match.group(1), edition)]
    match = _START_ACTION.match(key)
    if match:
        return CHOOSE_START[parse_colour(match.group(1), edition)]
    raise NotationError(
        "cannot read action {text}: expected d (draw), pN (place in row N), tN (take row N), "
        "j:C (name a joker's colour), s:C (choose a starting colour) or x (pass)",
        text=repr(text),
    )
