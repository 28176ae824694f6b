"""Moves played again on a game in memory: a stored game's moves, replayed when it is read from the
database, and another process's move, played on this process's copy. Each move is checked as it is
played again (its number, its seat, its notation as the core writes it): a copy that would go
another way than the database says so, rather than show a game that was never played.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from coloretto.web.common.schemas import RatingChange
from coloretto.web.storage import games as store
from coloretto.web.table.live import LiveGame


def replay_stored(stored: store.StoredGame) -> LiveGame:
    """Play a stored game's moves again, checking every one."""
    live = stored.live
    for number, seat, text in stored.moves:
        if number != live.move_count + 1:
            raise RuntimeError(f"game {live.id}: move {live.move_count + 1} is missing")
        if seat != live.game.to_move:
            raise RuntimeError(f"game {live.id}: move {number} was stored for the wrong seat")
        notation = live.match.push(live.game.parse_action(text.split()[0])).notation(live.rules.edition)
        advance(live)
        if notation != text:
            raise RuntimeError(f"game {live.id}: move {number} replays as {notation!r}, stored {text!r}")
    return live


def replay_each(stored: dict[str, store.StoredGame]) -> dict[str, LiveGame | Exception]:
    """:func:`replay_stored` for several games: each one's game in memory, or why it did not replay."""
    replayed: dict[str, LiveGame | Exception] = {}
    for game_id, game in stored.items():
        try:
            replayed[game_id] = replay_stored(game)
        except Exception as exc:
            replayed[game_id] = exc
    return replayed


def apply_remote_move(live: LiveGame, event: dict[str, Any]) -> None:
    """Play the move of another process's ``move`` event on the copy here (its seat, its
    notation, when it was made, the clock it used, and the ratings of a game it finished).
    Raises when it does not replay as told (the copy is left as it was)."""
    text = str(event["move"])
    action = live.game.parse_action(text.split()[0])
    if live.game.to_move != event.get("seat"):
        raise RuntimeError("the move is for another seat")
    notation = live.match.push(action).notation(live.rules.edition)
    if notation != text:
        live.match.pop()
        raise RuntimeError(f"the move replays as {notation!r}, not {text!r}")
    at = datetime.fromisoformat(str(event["at"]))
    live.updated_at = at
    live.turn_started_at = at
    time_used = event.get("time_used")
    if isinstance(time_used, int | float):
        live.seats[int(event["seat"])].time_used = float(time_used)
    ratings = event.get("ratings")
    if isinstance(ratings, list):
        live.rating_changes = [RatingChange.model_validate(change) for change in ratings]
    advance(live)


def advance(live: LiveGame) -> None:
    """After a move: a finished game is counted, and the match's next game dealt."""
    if not live.game.is_over:
        return
    if live.match.is_over:
        live.status = "finished"
    else:
        live.match.next_game()
