"""The end of a game: the scoring table, the winners, and where the record went."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Static

from coloretto.tui.session import PlaySession
from coloretto.tui.view import final_view


class EndScreen(Screen[None]):
    """The scoring table with the winners (of the match too), and where the
    record went. ``on_close`` ends the play; ``on_next_game`` (a match with
    games to come) deals the next game."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("q,escape", "close", "quit", show=False),
        Binding("t", "app.pop_screen", "back to the table", show=False),
        Binding("n,enter", "next_game", "next game of the match", show=False),
    ]

    def __init__(
        self,
        session: PlaySession,
        saved_to: Path | None,
        error: str = "",
        on_close: Callable[[], None] | None = None,
        on_next_game: Callable[[], None] | None = None,
    ) -> None:
        super().__init__()
        self.session = session
        self.saved_to = saved_to
        self.error = error
        self.on_close = on_close
        self.on_next_game = on_next_game

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="final-box"):
            yield Static(final_view(self.session), id="final")
        note = Text()
        if self.error:
            note.append(self.error, style="bold red")
        elif self.saved_to is not None:
            note.append(f"The game is saved to {self.saved_to}\n", style="bold green")
            note.append(f"Step through it with: coloretto replay {self.saved_to} --step")
        yield Static(note, id="saved")
        keys = "[q] quit  [t] look at the table  [↑↓] scroll"
        if self.on_next_game is not None:
            keys = "[n] next game of the match  " + keys
        yield Static(Text(keys, style="bold"), id="end-keys")
        yield Static(id="end-message")

    def on_key(self, event: events.Key) -> None:
        if event.is_printable and event.key not in self.active_bindings:
            message = f"The key {event.character!r} does nothing here: the keys are listed above"
            self.query_one("#end-message", Static).update(Text(message, style="bold yellow"))

    def action_next_game(self) -> None:
        if self.on_next_game is not None:
            self.on_next_game()
        elif self.session.match is None:
            self.action_close()  # Enter closes a single game's end screen

    def action_close(self) -> None:
        if self.on_close is not None:
            self.on_close()
        else:
            self.app.exit()
