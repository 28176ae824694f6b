"""Why an action is illegal: the rule it breaks, said as an :class:`IllegalActionError` (the slow
path, only on errors; the hot path only asks whether it is legal)."""

from __future__ import annotations

from typing import Protocol

from coloretto.actions import Action
from coloretto.errors import ExplainedError
from coloretto.game.tables import CHOOSE_KIND, DRAW_KIND, NAME_KIND, PLACE_KIND, TAKE_KIND
from coloretto.rules import Rules


class Position(Protocol):
    """What the reasons are read from: the state of a :class:`~coloretto.game.Game`."""

    rules: Rules
    _over: bool
    _picks_left: int
    _colours: int
    _chosen: int
    _naming: tuple[int, ...]
    _pending: int
    _drawable: int
    _caps: tuple[int, ...]
    _taken: int


class IllegalActionError(ExplainedError):
    """An action the rules forbid here. The message names the rule broken;
    the game is left exactly as it was."""

    code = "illegal"


def why_illegal(game: Position, action: Action) -> IllegalActionError:
    """The rule an illegal action breaks (slow path: only on errors)."""
    said = action.notation(game.rules.edition)
    if game._over:
        return IllegalActionError("{action}: the game is over", action=said)
    kind = action.kind
    if kind is CHOOSE_KIND:
        if not game._picks_left:
            return IllegalActionError(
                "{action}: starting colours are chosen only before the first round (variant)", action=said
            )
        if action.index >= game._colours:
            return IllegalActionError("{action}: that colour is not in play", action=said)
        return IllegalActionError(
            "{action}: that colour has already been chosen: each starts with a different colour",
            action=said,
        )
    if game._picks_left:
        return IllegalActionError("{action}: choose a starting colour first", action=said)
    if kind is NAME_KIND:
        if not game._naming:
            return IllegalActionError("{action}: there is no joker to name", action=said)
        return IllegalActionError("{action}: that colour is not in play", action=said)
    if game._naming:
        return IllegalActionError("{action}: name the colour of the joker just taken first", action=said)
    if kind is PLACE_KIND:
        if game._pending < 0:
            return IllegalActionError("{action}: there is no drawn card to place: draw first", action=said)
        return row_problem(game, action, said, placing=True)
    if game._pending >= 0:
        return IllegalActionError("{action}: the drawn card must be placed in a row first", action=said)
    if kind is DRAW_KIND:
        if not game._drawable:
            return IllegalActionError("{action}: the deck is exhausted: take a row", action=said)
        return IllegalActionError("{action}: every open row is full: take a row", action=said)
    if kind is TAKE_KIND:
        return row_problem(game, action, said, placing=False)
    return IllegalActionError(
        "{action}: passing is allowed only when there is nothing to draw and nothing to take", action=said
    )


def row_problem(game: Position, action: Action, said: str, placing: bool) -> IllegalActionError:
    i = action.index
    row = i + 1
    if i >= len(game._caps):
        return IllegalActionError(
            "{action}: there is no row {row}: this game has {rows} rows",
            action=said,
            row=row,
            rows=len(game._caps),
        )
    if game._taken >> i & 1:
        return IllegalActionError("{action}: row {row} was already taken this round", action=said, row=row)
    if placing:
        return IllegalActionError(
            "{action}: row {row} is full ({cards} cards)", action=said, row=row, cards=game._caps[i]
        )
    return IllegalActionError(
        "{action}: row {row} is empty: only a row with cards can be taken", action=said, row=row
    )
