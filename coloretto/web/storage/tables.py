"""The tables as SQLAlchemy Core sees them, and what every reader and writer of them shares."""

from __future__ import annotations

from typing import Any, cast

from sqlalchemy import CursorResult, Result, Table

from coloretto.web.storage.rows import (
    GameRow,
    MoveRow,
    SeatRow,
)
from coloretto.web.table.live import SeatState

GAMES = cast(Table, GameRow.__table__)
SEATS = cast(Table, SeatRow.__table__)
MOVES = cast(Table, MoveRow.__table__)


def changed_rows(result: Result[Any]) -> int:
    """The rows an UPDATE changed (every driver here reports it)."""
    return int(cast(CursorResult[Any], result).rowcount)


def listed_seats(row: GameRow) -> list[SeatState]:
    """A game's seats as a listing shows them: no token digest (a reservation only as a mark)."""
    return [
        SeatState(
            s.kind,
            s.bot,
            s.name,
            None,
            bool(s.away),
            user_id=s.user_id,
            resigned=bool(s.resigned),
            reserved_hash="kept" if s.reserved_hash else None,
            deleted=bool(s.deleted),
        )
        for s in row.seats
    ]
