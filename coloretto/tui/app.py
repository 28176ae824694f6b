"""The Textual applications: ``coloretto play`` and ``coloretto replay --step``.

Screens, one module each:

* :mod:`coloretto.tui.setup`: players, seats (people or bots) and every rule option.
* :mod:`coloretto.tui.table`: the table; people play by keys, bots by themselves.
* :mod:`coloretto.tui.overlays`: help, hint, scores, quitting, a too-small terminal.
* :mod:`coloretto.tui.end`: the scoring table and the winners.
* :mod:`coloretto.tui.replay`: a saved game, one move at a time, on the same table.

Their look is ``coloretto.tcss``, next to this module.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from textual import events
from textual.app import App
from textual.binding import Binding, BindingType

from coloretto.record import GameRecord
from coloretto.review import Review
from coloretto.rules import Rules
from coloretto.tui.end import EndScreen
from coloretto.tui.overlays import MIN_HEIGHT, MIN_WIDTH, HelpScreen, QuitScreen, TooSmallScreen
from coloretto.tui.replay import ReplayScreen
from coloretto.tui.session import PlayConfig, PlaySession, Seat
from coloretto.tui.setup import SetupScreen
from coloretto.tui.table import GameScreen

__all__ = [
    "ColorettoApp",
    "EndScreen",
    "GameScreen",
    "HelpScreen",
    "PlayConfig",
    "PlayResult",
    "QuitScreen",
    "ReplayApp",
    "ReplayScreen",
    "SetupScreen",
    "TooSmallScreen",
]


@dataclass
class PlayResult:
    """What the command prints once the app has closed."""

    saved_to: Path | None
    finished: bool
    summary: str = ""
    started: bool = True  #: False when the set-up screen was left without a game
    #: quit without saving the last moves (``saved_to``, if any, holds the game as saved before them)
    left_unsaved: bool = False


class _SizeCheckingApp(App[PlayResult]):
    """Shows :class:`TooSmallScreen` while the terminal is too small."""

    CSS_PATH = "coloretto.tcss"
    ENABLE_COMMAND_PALETTE = False

    _sizes_checked = False  #: set once the first screen is up: sizes are checked from then on

    def on_resize(self, event: events.Resize) -> None:
        if self._sizes_checked:
            self.check_size(event.size.width, event.size.height)

    def check_size(self, width: int, height: int) -> None:
        small = width < MIN_WIDTH or height < MIN_HEIGHT
        top = self.screen_stack[-1] if self.screen_stack else None
        if small:
            if isinstance(top, TooSmallScreen):
                top.show_size(width, height)
            elif any(isinstance(screen, TooSmallScreen) for screen in self.screen_stack):
                pass  # under an overlay (help, quit?): it shows again when that closes
            else:
                screen = TooSmallScreen()
                self.push_screen(screen)
                self.call_after_refresh(screen.show_size, width, height)
        elif isinstance(top, TooSmallScreen):
            self.pop_screen()


class ColorettoApp(_SizeCheckingApp):
    """``coloretto play``: a set-up screen (without a session), then the game."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+c,ctrl+q", "request_quit", "quit", priority=True, show=False),
    ]

    def __init__(self, session: PlaySession | None = None, config: PlayConfig | None = None) -> None:
        super().__init__()
        self.session = session
        self.config = config or PlayConfig()

    async def on_mount(self) -> None:
        if self.session is None:
            await self.push_screen(SetupScreen(self.start_game, names=self.config.names))
        else:
            await self.push_screen(self.table_for(self.session))
        self._sizes_checked = True
        self.check_size(self.size.width, self.size.height)

    def table_for(self, session: PlaySession) -> GameScreen:
        return GameScreen(session, self.config, on_finish=self.finish_play, on_next_game=self.next_game)

    def start_game(self, rules: Rules, seats: list[Seat]) -> None:
        session = PlaySession.new(rules, seats, seed=self.config.seed)
        if self.config.save_path is not None:
            # a match saves each game to its own file: known only now that the rules are
            problem = session.save_problem(self.config.save_path)
            if problem is not None:
                self.notify(problem, severity="error", timeout=10)
                return
        self.session = session
        self.switch_screen(self.table_for(self.session))

    def next_game(self, finished: PlaySession) -> None:
        """Match play: the match deals the next game, with the same seats."""
        self.session = finished.next_game()
        self.pop_screen()
        self.switch_screen(self.table_for(self.session))

    def finish_play(self, table: GameScreen) -> None:
        result = PlayResult(table.saved_to, table.finished, table.summary(), left_unsaved=table.left_unsaved)
        self.exit(result)

    def game_screen(self) -> GameScreen | None:
        for screen in self.screen_stack:
            if isinstance(screen, GameScreen):
                return screen
        return None

    def action_request_quit(self) -> None:
        """Ctrl+C: during a game, ask whether to save; otherwise just quit."""
        game_screen = self.game_screen()
        if game_screen is None or game_screen.game.is_over:
            if game_screen is not None:
                game_screen.finish()
            else:
                self.exit(PlayResult(None, False, started=False))
            return
        if isinstance(self.screen, QuitScreen):
            return
        self.push_screen(QuitScreen(game_screen))


class ReplayApp(_SizeCheckingApp):
    """``coloretto replay FILE --step``."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+c,ctrl+q", "quit", "quit", priority=True, show=False),
    ]

    def __init__(self, record: GameRecord, review: Review | None = None) -> None:
        super().__init__()
        self.record = record
        self.review = review

    async def on_mount(self) -> None:
        await self.push_screen(ReplayScreen(self.record, self.review))
        self._sizes_checked = True
        self.check_size(self.size.width, self.size.height)
