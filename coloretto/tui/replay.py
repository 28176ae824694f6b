"""``coloretto replay FILE --step``: a record, one move at a time, on the table.

The record is played through once by the core (:meth:`GameRecord.replay`,
which checks every move and every card turned over); stepping then undoes and
redoes those checked moves. The table shows who is to move, never a prompt
nobody can answer or a bot "thinking".
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import Static

from coloretto.actions import Action
from coloretto.record import GameRecord
from coloretto.tui.overlays import HelpScreen, ScoresScreen
from coloretto.tui.session import PlaySession
from coloretto.tui.table import TableView


class ReplayScreen(Screen[None]):
    """A record, one move at a time: → next, ← back, Home/End, q quit."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("right,space,n,l", "step(1)", "next move", show=False),
        Binding("left,backspace,p,h", "step(-1)", "previous move", show=False),
        Binding("home,g", "jump(0)", "start", show=False),
        Binding("end,G", "jump(-1)", "end", show=False),
        Binding("f,enter", "final", "scores", show=False),
        Binding("question_mark,f1", "help", "help", show=False),
        Binding("q,escape", "app.quit", "quit", show=False),
    ]

    def __init__(self, record: GameRecord) -> None:
        super().__init__()
        self.record = record
        self.session = PlaySession.for_replay(record)
        #: the checked moves with the cards each turned over, to step through
        self.moves: list[tuple[Action, tuple[int, ...]]] = self.session.game.history()
        self.total = len(self.moves)
        while len(self.session.game):
            self.session.pop()

    def compose(self) -> ComposeResult:
        yield TableView(self.session, id="table", replay=True)
        yield Static(id="message")
        yield Static(id="keys")

    def on_mount(self) -> None:
        self.refresh_view()

    @property
    def position(self) -> int:
        return len(self.session.game)

    def refresh_view(self) -> None:
        self.query_one(TableView).refresh_view()
        keys = Text(f"Move {self.position} of {self.total}   ", style="bold")
        keys.append(
            "[→] next  [←] back  [Home] start  [End] end  [f] scores  [?] help  [q] quit", style="dim"
        )
        self.query_one("#keys", Static).update(keys)

    def forward(self) -> None:
        """Redo the next checked move, turning over the cards it turned over."""
        action, revealed = self.moves[self.position]
        self.session.push(action, reveal=revealed[-1] if revealed else None)

    def say(self, message: str, style: str = "bold") -> None:
        self.query_one("#message", Static).update(Text(message, style=style))

    def action_step(self, step: int) -> None:
        if step > 0:
            if self.position >= self.total:
                self.say("This is the end of the game.")
                return
            self.forward()
        else:
            if self.position == 0:
                self.say("This is the start of the game.")
                return
            self.session.pop()
        self.say("")
        self.refresh_view()

    def action_jump(self, where: int) -> None:
        target = self.total if where < 0 else where
        while self.position < target:
            self.forward()
        while self.position > target:
            self.session.pop()
        self.say("")
        self.refresh_view()

    def action_final(self) -> None:
        self.app.push_screen(ScoresScreen(self.session))

    def action_help(self) -> None:
        self.app.push_screen(HelpScreen(self.record.rules))

    def on_key(self, event: events.Key) -> None:
        if event.is_printable and event.key not in self.active_bindings:
            self.say(f"The key {event.character!r} does nothing here: → next, ← back, q quit", "bold yellow")
