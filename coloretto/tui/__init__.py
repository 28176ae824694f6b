"""Coloretto in the terminal (``coloretto play``, ``coloretto replay --step``).

Built on Textual. The core never imports this package.
"""

from coloretto.tui.session import HUMAN, PlaySession, Seat, SeatError, make_seats, seat_kinds_for

__all__ = ["HUMAN", "PlaySession", "Seat", "SeatError", "make_seats", "seat_kinds_for"]
