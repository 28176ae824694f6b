"""Overlays on top of the table: help, hint, scores, quitting, a too-small terminal."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import ClassVar, Protocol

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from coloretto.game import Observation
from coloretto.rules import Rules
from coloretto.tui.help import help_text
from coloretto.tui.session import PlaySession
from coloretto.tui.view import final_view, hint_view

MIN_WIDTH = 80
MIN_HEIGHT = 24


class PanelScreen(ModalScreen[None]):
    """An overlay: a scrolling panel with a body and a line saying how to close it."""

    closing = "Esc closes"

    def body(self) -> Static:
        raise NotImplementedError

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-box"):
            yield self.body()
            yield Static(Text(self.closing, style="dim"))


class HelpScreen(PanelScreen):
    """Keys and rules; any of Esc, q, ? closes it."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,question_mark,enter", "app.pop_screen", "close", show=False)
    ]
    closing = "Esc, q or ? closes this help · ↑↓ scroll"

    def __init__(self, rules: Rules) -> None:
        super().__init__()
        self.rules = rules

    def body(self) -> Static:
        return Static(help_text(self.rules), id="help")


HINT_BUDGET = 5000  #: search iterations behind a hint: about a third of a second on one core
#: trees a hint searches at once: the machine's cores (the iterations are shared out among them)
HINT_THREADS = max(1, min(4, os.cpu_count() or 1))


class HintScreen(PanelScreen):
    """The analysis of the position for the person to move: every legal move
    with its win chance and expected final score, the AI's own move first
    (coloretto.analysis)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,h,enter", "app.pop_screen", "close", show=False)
    ]
    closing = "Esc, q or h closes this"

    def __init__(self, observation: Observation, seed: int) -> None:
        super().__init__()
        self.observation = observation
        self.seed = seed

    def body(self) -> Static:
        return Static(Text("Thinking about your move…", style="bold"), id="hint")

    def on_mount(self) -> None:
        self.run_worker(self._analyse(), exclusive=True, group="hint")

    async def _analyse(self) -> None:
        from coloretto.analysis import analyze

        hint = self.query_one("#hint", Static)
        try:
            lines = await asyncio.to_thread(
                analyze, self.observation, HINT_BUDGET, self.seed, threads=HINT_THREADS
            )
        except Exception as exc:  # advice that fails must not take the table down
            hint.update(Text(f"No hint here: the analysis failed ({exc})", style="bold yellow"))
            return
        legal = set(self.observation.legal_actions)
        if any(line.action not in legal for line in lines):
            # an analysis that does not know this kind of decision yet (a starting
            # colour, say) would advise moves the rules forbid: better none
            hint.update(Text("The AI has no advice for this kind of decision.", style="bold yellow"))
            return
        hint.update(hint_view(lines, self.observation))


class ScoresScreen(PanelScreen):
    """The scoring table of the position shown (replay)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,f,enter", "app.pop_screen", "close", show=False)
    ]

    def __init__(self, session: PlaySession) -> None:
        super().__init__()
        self.session = session

    def body(self) -> Static:
        return Static(final_view(self.session), id="final")


class Quittable(Protocol):
    """What the quit question asks of the game screen it is over."""

    save_path: Path | None

    def save(self) -> str: ...

    def finish(self) -> None: ...

    def quit_without_saving(self) -> None: ...


class QuitScreen(ModalScreen[None]):
    """Ctrl+C during a game: save first?"""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "save_and_quit", "save and quit", show=False),
        Binding("n", "quit_without_saving", "quit without saving", show=False),
        Binding("escape,c", "app.pop_screen", "keep playing", show=False),
    ]

    def __init__(self, game_screen: Quittable) -> None:
        super().__init__()
        self.game_screen = game_screen

    def compose(self) -> ComposeResult:
        path = self.game_screen.save_path
        where = f" to {path}" if path else ""
        with Vertical(id="quit-box"):
            yield Static(Text("Quit this game?", style="bold"))
            yield Static(Text(f"[y] save it{where} and quit"))
            yield Static(Text("    (go on later with coloretto play --resume FILE)", style="dim"))
            yield Static(Text("[n] quit without saving"))
            yield Static(Text("[Esc] keep playing"))
            yield Static(id="quit-message")

    def on_key(self, event: events.Key) -> None:
        if event.is_printable and event.key not in self.active_bindings:
            message = f"The key {event.character!r} does nothing here: y, n or Esc"
            self.query_one("#quit-message", Static).update(Text(message, style="bold yellow"))

    def action_save_and_quit(self) -> None:
        error = self.game_screen.save()
        if error:
            self.query_one("#quit-message", Static).update(Text(error, style="bold red"))
            return
        self.game_screen.finish()

    def action_quit_without_saving(self) -> None:
        self.game_screen.quit_without_saving()


class TooSmallScreen(ModalScreen[None]):
    """Shown while the terminal is smaller than the table needs."""

    def compose(self) -> ComposeResult:
        yield Static(id="too-small")

    def on_screen_resume(self) -> None:
        # the terminal may have grown while another overlay was on top
        size = self.app.size
        if size.width >= MIN_WIDTH and size.height >= MIN_HEIGHT:
            self.dismiss()
        else:
            self.show_size(size.width, size.height)

    def show_size(self, width: int, height: int) -> None:
        self.query_one("#too-small", Static).update(
            Text(
                f"The terminal is too small: {width}×{height}. "
                f"Coloretto needs at least {MIN_WIDTH}×{MIN_HEIGHT}.\n"
                "Make the window bigger to go on (Ctrl+C quits).",
                style="bold",
            )
        )
