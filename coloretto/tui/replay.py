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
from coloretto.review import SYMBOLS, Review
from coloretto.tui.overlays import HelpScreen, ScoresScreen
from coloretto.tui.session import PlaySession
from coloretto.tui.table import TableView

_MARK_STYLES = {"inaccuracy": "yellow", "mistake": "dark_orange", "blunder": "bold red"}


class ReplayScreen(Screen[None]):
    """A record, one move at a time: → next, ← back, Home/End, q quit; with a
    review, each move's mark and luck and every seat's win chance, m / M to
    the next / previous marked move."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("right,space,n,l", "step(1)", "next move", show=False),
        Binding("left,backspace,p,h", "step(-1)", "previous move", show=False),
        Binding("home,g", "jump(0)", "start", show=False),
        Binding("end,G", "jump(-1)", "end", show=False),
        Binding("f,enter", "final", "scores", show=False),
        Binding("m", "marked(1)", "next marked move", show=False),
        Binding("M", "marked(-1)", "previous marked move", show=False),
        Binding("question_mark,f1", "help", "help", show=False),
        Binding("q,escape", "app.quit", "quit", show=False),
    ]

    def __init__(self, record: GameRecord, review: Review | None = None) -> None:
        super().__init__()
        self.record = record
        self.review = review
        self.session = PlaySession.for_replay(record)
        #: the checked moves with the cards each turned over, to step through
        self.moves: list[tuple[Action, tuple[int, ...]]] = self.session.game.history()
        self.total = len(self.moves)
        while len(self.session.game):
            self.session.pop()

    def compose(self) -> ComposeResult:
        yield TableView(self.session, id="table", replay=True)
        yield Static(id="review")
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
        marked = "  [m/M] next/previous mark" if self.review is not None else ""
        keys.append(
            f"[→] next  [←] back  [Home] start  [End] end{marked}  [f] scores  [?] help  [q] quit",
            style="dim",
        )
        self.query_one("#keys", Static).update(keys)
        self.query_one("#review", Static).update(self.review_text())

    def review_text(self) -> Text:
        """The review of the move that led here, and every seat's win chance now."""
        text = Text()
        if self.review is None:
            return text
        names = [self.session.name(seat) for seat in range(self.review.players)]
        here = self.review.positions[self.position]
        if self.position > 0:
            move = self.review.moves[self.position - 1]
            text.append(f"{move.number}. {names[move.seat]} {move.played}", style="bold")
            decision = move.decision
            if decision is None:
                text.append("  (forced)", style="dim")
            elif decision.mark:
                style = {"inaccuracy": "yellow", "mistake": "dark_orange", "blunder": "bold red"}[
                    decision.mark
                ]
                text.append(f"  {decision.mark} {SYMBOLS[decision.mark]}", style=style)
                text.append(
                    f"  −{100 * decision.win_loss:.0f}% win chance, −{decision.score_loss:.1f} pts;"
                    f" best {decision.best} ({100 * decision.lines[0].win:.0f}%)"
                )
            else:
                text.append("  ✓ best or as good", style="green")
            if move.luck is not None:
                luck = move.luck.win[move.seat]
                text.append(
                    f"  luck of {move.luck.card}: {100 * luck:+.0f}% ({move.luck.score[move.seat]:+.1f} pts)",
                    style="green" if luck >= 0 else "red",
                )
            text.append("\n")
        text.append("win chance: ", style="dim")
        text.append(
            "  ".join(f"{names[seat]} {100 * chance:.0f}%" for seat, chance in enumerate(here.win)),
        )
        return text

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

    def action_marked(self, step: int) -> None:
        if self.review is None:
            self.say("Marks come with a review: coloretto replay FILE --step --review", "bold yellow")
            return
        marked = [m.number for m in self.review.moves if m.decision is not None and m.decision.mark]
        ahead = [n for n in marked if (n > self.position if step > 0 else n < self.position)]
        if not ahead:
            self.say("No marked move further on." if step > 0 else "No marked move before this one.")
            return
        self.action_jump(ahead[0] if step > 0 else ahead[-1])

    def action_final(self) -> None:
        self.app.push_screen(ScoresScreen(self.session))

    def action_help(self) -> None:
        self.app.push_screen(HelpScreen(self.record.rules))

    def on_key(self, event: events.Key) -> None:
        if event.is_printable and event.key not in self.active_bindings:
            self.say(f"The key {event.character!r} does nothing here: → next, ← back, q quit", "bold yellow")
