"""The Textual application: set-up, the table, help, quitting, the end, replay.

Screens:

* :class:`SetupScreen`: players, seats (people or bots) and rules, by keys.
* :class:`GameScreen`: the table; people play by keys, bots by themselves.
* :class:`HelpScreen`, :class:`QuitScreen`, :class:`TooSmallScreen`: overlays.
* :class:`EndScreen`: the scoring table and the winners.
* :class:`ReplayScreen`: a saved game, one move at a time, on the same table.

Adding a key: put a :class:`~textual.binding.Binding` in ``GameScreen.BINDINGS``
and write the ``action_…`` method it names; :meth:`GameScreen.play` plays a
move with all the checks and messages.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual import events
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.timer import Timer
from textual.widgets import Input, Static

from coloretto.actions import DRAW, PASS, Action, ActionKind, name_joker, parse_action, place, take
from coloretto.bots import available_bots
from coloretto.cards import Edition
from coloretto.game import Game, IllegalActionError, Observation
from coloretto.record import GameRecord
from coloretto.rules import JokerTiming, PlusColours, RoundStarter, Rules, Table, TieBreak
from coloretto.tui.help import help_text
from coloretto.tui.session import HUMAN, PlaySession, Seat, make_seats, match_save_path
from coloretto.tui.view import (
    KEYS_HELP,
    banner_text,
    final_view,
    header_text,
    hint_view,
    log_text,
    players_table,
    rows_text,
    turn_text,
)

MIN_WIDTH = 80
MIN_HEIGHT = 24
DIGIT_KEYS = tuple(str(n) for n in range(1, 10))


@dataclass
class PlayConfig:
    """How the app runs a game (the game itself is the session)."""

    save_path: Path | None = None  #: where the record is saved (end of game, s, quitting)
    bot_delay: float = 0.8  #: seconds a bot waits before moving, so people can follow
    seed: int | None = None  #: for a game set up on screen
    names: tuple[str, ...] = ()  #: names for the seats of a game set up on screen


@dataclass
class PlayResult:
    """What the command prints once the app has closed."""

    saved_to: Path | None
    finished: bool
    summary: str = ""
    started: bool = True  #: False when the set-up screen was left without a game


# --------------------------------------------------------------------- setup


@dataclass
class _Setting:
    label: str
    values: list[str]
    index: int = 0

    @property
    def value(self) -> str:
        return self.values[self.index]


class SetupScreen(Screen[None]):
    """Choose players, who sits where, and the rules, with the arrow keys."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up,k", "move(-1)", "previous setting", show=False),
        Binding("down,j,tab", "move(1)", "next setting", show=False),
        Binding("left,h,minus", "change(-1)", "previous value", show=False),
        Binding("right,l,plus,space", "change(1)", "next value", show=False),
        Binding("enter", "start", "start", show=False),
        Binding("question_mark", "help", "help", show=False),
        Binding("escape,q", "app.request_quit", "quit", show=False),
    ]

    def __init__(self, on_start: Callable[[Rules, list[Seat]], None]) -> None:
        super().__init__()
        self.on_start = on_start
        bots = list(available_bots())
        kinds = [HUMAN, *bots]
        default_bot = kinds.index("greedy") if "greedy" in kinds else 1
        self.settings: dict[str, _Setting] = {"players": _Setting("Players", ["2", "3", "4", "5"], 1)}
        for seat in range(5):
            self.settings[f"seat{seat}"] = _Setting(
                f"Seat {seat + 1}", kinds, 0 if seat == 0 else default_bot
            )
        self.settings["edition"] = _Setting("Edition", [e.value for e in Edition])
        self.settings["table"] = _Setting("Scoring table", [t.value for t in Table])
        self.settings["joker_timing"] = _Setting("Jokers get their colour", [j.value for j in JokerTiming])
        self.settings["round_starter"] = _Setting("Next round starts with", [r.value for r in RoundStarter])
        self.settings["plus_colours"] = _Setting("Plus colours", [p.value for p in PlusColours])
        self.settings["tie_break"] = _Setting("Equal totals", [t.value for t in TieBreak])
        self.settings["match_games"] = _Setting("Games in the match", [str(n) for n in range(1, 9)])
        self.cursor = 0
        self.message = ""

    def compose(self) -> ComposeResult:
        yield Static(id="setup")
        yield Static(id="message")

    def on_mount(self) -> None:
        self.refresh_view()

    @property
    def players(self) -> int:
        return int(self.settings["players"].value)

    def visible(self) -> list[str]:
        keys = ["players", *(f"seat{s}" for s in range(self.players))]
        return [
            *keys,
            "edition",
            "table",
            "joker_timing",
            "round_starter",
            "plus_colours",
            "tie_break",
            "match_games",
        ]

    def refresh_view(self) -> None:
        text = Text()
        text.append("New game of Coloretto\n\n", style="bold")
        for index, key in enumerate(self.visible()):
            setting = self.settings[key]
            here = index == self.cursor
            text.append("▶ " if here else "  ")
            text.append(f"{setting.label:<26}")
            text.append(f"◀ {setting.value} ▶", style="bold reverse" if here else "bold")
            text.append("\n")
        text.append(
            "\n↑↓ choose a setting · ←→ change it · Enter start the game · ? rules · Esc quit", style="dim"
        )
        self.query_one("#setup", Static).update(text)
        self.query_one("#message", Static).update(Text(self.message, style="bold yellow"))

    def action_move(self, step: int) -> None:
        self.cursor = (self.cursor + step) % len(self.visible())
        self.message = ""
        self.refresh_view()

    def action_change(self, step: int) -> None:
        setting = self.settings[self.visible()[self.cursor]]
        setting.index = (setting.index + step) % len(setting.values)
        self.cursor = min(self.cursor, len(self.visible()) - 1)
        self.message = ""
        self.refresh_view()

    def action_help(self) -> None:
        self.app.push_screen(HelpScreen(self.rules()))

    def rules(self) -> Rules:
        s = self.settings
        return Rules(
            players=self.players,
            edition=s["edition"].value,
            table=s["table"].value,
            joker_timing=s["joker_timing"].value,
            round_starter=s["round_starter"].value,
            plus_colours=s["plus_colours"].value,
            tie_break=s["tie_break"].value,
            match_games=int(s["match_games"].value),
        )

    def action_start(self) -> None:
        kinds = [self.settings[f"seat{s}"].value for s in range(self.players)]
        app = self.app
        names = app.config.names if isinstance(app, ColorettoApp) else ()
        try:
            seats = make_seats(kinds, names[: len(kinds)])
        except ValueError as exc:
            self.message = str(exc)
            self.refresh_view()
            return
        self.on_start(self.rules(), seats)

    def on_key(self, event: events.Key) -> None:
        if event.is_printable and event.key not in self.active_bindings:
            self.message = f"The key {event.character!r} does nothing here: ↑↓ ←→ Enter, ? for the rules"
            self.refresh_view()


# ---------------------------------------------------------------- overlays


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


HINT_BUDGET = 5000  #: search iterations behind a hint: about a third of a second


class HintScreen(PanelScreen):
    """The analysis of the position for the person to move: every legal move
    with its expected final score and win chance (coloretto.analysis)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,h,enter", "app.pop_screen", "close", show=False)
    ]

    def __init__(self, observation: Observation, seed: int) -> None:
        super().__init__()
        self.observation = observation
        self.seed = seed

    closing = "Esc, q or h closes this"

    def body(self) -> Static:
        return Static(Text("Thinking about your move…", style="bold"), id="hint")

    def on_mount(self) -> None:
        self.run_worker(self._analyse(), exclusive=True, group="hint")

    async def _analyse(self) -> None:
        from coloretto.analysis import analyze

        lines = await asyncio.to_thread(analyze, self.observation, HINT_BUDGET, self.seed)
        self.query_one("#hint", Static).update(hint_view(lines, self.observation))


class QuitScreen(ModalScreen[None]):
    """Ctrl+C during a game: save first?"""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "save_and_quit", "save and quit", show=False),
        Binding("n", "quit_without_saving", "quit without saving", show=False),
        Binding("escape,c", "app.pop_screen", "keep playing", show=False),
    ]

    def __init__(self, game_screen: GameScreen) -> None:
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
        self.game_screen.saved_to = None
        self.game_screen.finish()


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


# ---------------------------------------------------------------- the table


class TableView(Vertical):
    """The table of a session: header, banner, rows, players, log, turn."""

    def __init__(self, session: PlaySession, id: str | None = None) -> None:
        super().__init__(id=id)
        self.session = session

    def compose(self) -> ComposeResult:
        yield Static(id="header")
        yield Static(id="banner")
        yield Static(id="rows")
        yield Static(id="players")
        yield Static(id="log")
        yield Static(id="turn")

    def on_mount(self) -> None:
        self.refresh_view()

    def on_resize(self) -> None:
        self.refresh_view()

    def refresh_view(self) -> None:
        session = self.session
        self.query_one("#header", Static).update(header_text(session))
        banner = self.query_one("#banner", Static)
        banner.update(banner_text(session))
        banner.display = bool(banner_text(session).plain)
        self.query_one("#rows", Static).update(rows_text(session))
        self.query_one("#players", Static).update(players_table(session))
        log = self.query_one("#log", Static)
        log.update(log_text(session, max(1, log.size.height or 4)))
        self.query_one("#turn", Static).update(turn_text(session))


class GameScreen(Screen[None]):
    """The game: the table, and keys for the person to move."""

    AUTO_FOCUS = ""  # keys go to the table; the command line takes focus only after ":"

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("d", "draw", "draw", show=False),
        *(Binding(key, f"row({key})", f"row {key}", show=False) for key in DIGIT_KEYS),
        Binding("x", "pass", "pass", show=False),
        Binding("colon", "command", "type a move", show=False),
        Binding("s", "save", "save", show=False),
        Binding("question_mark,f1", "help", "help", show=False),
        Binding("h", "hint", "hint", show=False),
        Binding("q", "app.request_quit", "quit", show=False),
        Binding("enter,e", "show_end", "scores at the end", show=False),
    ]

    def __init__(self, session: PlaySession, config: PlayConfig) -> None:
        super().__init__()
        self.session = session
        self.config = config
        self.save_path = config.save_path
        if session.match is not None and config.save_path is not None:
            self.save_path = match_save_path(config.save_path, session.match.game_number)
        self.saved_to: Path | None = None
        self._bot_timer: Timer | None = None
        self._thinking = False
        self._ended = False
        self._end_error = ""

    def compose(self) -> ComposeResult:
        yield TableView(self.session, id="table")
        yield Static(id="message")
        yield Static(Text(KEYS_HELP, style="dim"), id="keys")
        yield Input(placeholder="a move: d, p2, t3, j:R, x (Enter plays it, Esc cancels)", id="command")

    def on_mount(self) -> None:
        self.query_one("#command", Input).display = False
        self.refresh_view()
        self.advance()

    def on_screen_resume(self) -> None:
        self.refresh_view()
        self.advance()

    # ------------------------------------------------------------ display

    @property
    def game(self) -> Game:
        return self.session.game

    def refresh_view(self) -> None:
        self.query_one(TableView).refresh_view()

    def say(self, message: str, style: str = "bold yellow") -> None:
        """A one-line message under the table (errors, confirmations)."""
        self.query_one("#message", Static).update(Text(message, style=style))

    # -------------------------------------------------------------- moves

    def human_to_move(self) -> bool:
        seat = self.session.seat_to_move()
        return seat is not None and seat.is_human

    def may_act(self) -> bool:
        """Whether a person may move now; if not, says why."""
        if self.game.is_over:
            self.say("The game is over.")
            return False
        seat = self.session.seat_to_move()
        if seat is None or not seat.is_human:
            self.say(f"Please wait: it is {seat.name if seat else 'nobody'}'s turn.")
            return False
        return True

    def play(self, action: Action) -> bool:
        """Play a person's move: every mistake becomes a message, never a crash."""
        if not self.may_act():
            return False
        try:
            self.session.push(action)
        except IllegalActionError as exc:
            self.say(f"Not allowed: {exc}")
            return False
        self.say("")
        self.after_move()
        return True

    def after_move(self) -> None:
        self.refresh_view()
        if self.game.is_over:
            self.end_game()
        else:
            self.advance()

    def action_draw(self) -> None:
        self.play(DRAW)

    def action_pass(self) -> None:
        self.play(PASS)

    def action_row(self, number: int) -> None:
        """A digit: place the drawn card, take a row, or name a joker's colour."""
        game = self.game
        if not self.may_act():
            return
        kind = game.legal_actions[0].kind
        index = number - 1
        if kind is ActionKind.NAME_JOKER:
            if index >= game.rules.colours:
                self.say(f"Not allowed: choose a colour from 1 to {game.rules.colours}")
                return
            self.play(name_joker(index))
        elif index >= len(game.row_capacities):
            self.say(f"Not allowed: there is no row {number}: this game has {len(game.row_capacities)} rows")
        elif kind is ActionKind.PLACE:
            self.play(place(index))
        else:
            self.play(take(index))

    def action_command(self) -> None:
        box = self.query_one("#command", Input)
        box.display = True
        box.value = ""
        box.focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        box = self.query_one("#command", Input)
        text = event.value.strip()
        box.display = False
        self.set_focus(None)
        if not text:
            return
        word = text.lower()
        if word in ("help", "?"):
            self.action_help()
            return
        if word in ("save", "s"):
            self.action_save()
            return
        if word in ("quit", "q", "exit"):
            self.app.run_action("request_quit")
            return
        try:
            action = parse_action(text, self.game.rules.edition)
        except ValueError as exc:
            self.say(str(exc))
            return
        self.play(action)

    def on_key(self, event: events.Key) -> None:
        box = self.query_one("#command", Input)
        if box.display:
            if event.key == "escape":
                box.display = False
                self.set_focus(None)
                event.stop()
            return
        if event.is_printable and event.key not in self.active_bindings:
            self.say(f"The key {event.character!r} does nothing here: press ? for help")

    # --------------------------------------------------------------- bots

    def advance(self) -> None:
        """If a bot is to move, let it move after a short pause."""
        if self._bot_timer is not None or self._thinking or self._ended:
            return
        seat = self.session.seat_to_move()
        if seat is None or seat.is_human:
            return
        self._bot_timer = self.set_timer(max(self.config.bot_delay, 0.001), self._bot_turn)

    def _bot_turn(self) -> None:
        self._bot_timer = None
        if self.app.screen is not self or self._ended:
            return  # paused under help, the quit question, …: on_screen_resume goes on
        self._thinking = True
        self.run_worker(self._think(), exclusive=True, group="bot")

    async def _think(self) -> None:
        session = self.session
        seat = self.game.to_move
        moves = len(self.game)
        try:
            if seat is None or seat not in session.bots:
                return
            observation = self.game.observation(seat)
            bot = session.bots[seat]
            try:
                action = await asyncio.to_thread(bot.choose, observation)
            except Exception as exc:  # a broken bot must not take the table down
                action = self.game.legal_actions[0]
                self.say(f"{session.name(seat)} failed ({exc}); it plays {action} instead")
            if len(self.game) != moves or self._ended:
                return
            try:
                session.push(action)
            except IllegalActionError as exc:
                fallback = self.game.legal_actions[0]
                self.say(f"{session.name(seat)} chose an illegal move ({exc}); it plays {fallback} instead")
                session.push(fallback)
        finally:
            self._thinking = False
        self.after_move()

    # --------------------------------------------------- saving and ending

    def save(self) -> str:
        """Save the record; returns an error message ('' when saved)."""
        path = self.save_path
        if path is None:
            return "Nowhere to save: start the game with --save FILE"
        try:
            self.session.save(path)
        except OSError as exc:
            return f"Could not save to {path}: {exc.strerror or exc}"
        self.saved_to = path
        return ""

    def action_save(self) -> None:
        error = self.save()
        if error:
            self.say(error, "bold red")
        else:
            self.say(
                f"Saved to {self.saved_to}: resume with coloretto play --resume {self.saved_to}", "bold green"
            )

    def action_help(self) -> None:
        self.app.push_screen(HelpScreen(self.game.rules))

    def action_hint(self) -> None:
        """What the AI makes of the position: shown to the person to move only."""
        if not self.may_act():
            return
        seat = self.game.to_move
        assert seat is not None
        self.app.push_screen(HintScreen(self.game.observation(seat), seed=len(self.game)))

    def end_game(self) -> None:
        if self._ended:
            return
        self._ended = True
        self._end_error = self.save() if self.save_path is not None else ""
        self.action_show_end()

    def action_show_end(self) -> None:
        """The end screen again (after a look at the table)."""
        if not self.game.is_over:
            self.say("The scores come at the end of the game; the table shows each best score now.")
            return
        self.app.push_screen(EndScreen(self.session, self.saved_to, self._end_error))

    def finish(self) -> None:
        """Close the app, telling the command what happened."""
        game = self.game
        session = self.session
        summary = ""
        if game.is_over:
            winners = ", ".join(session.name(s) for s in game.winners())
            totals = ", ".join(f"{seat.name} {s.total}" for seat, s in zip(session.seats, game.scores()))
            summary = f"Final scores: {totals}. Winner(s): {winners}."
        match_totals = session.match_totals()
        if match_totals is not None and session.match is not None:
            points = ", ".join(f"{seat.name} {t}" for seat, t in zip(session.seats, match_totals))
            if session.match_over():
                winners = ", ".join(session.name(s) for s in session.match_winners())
                summary += f"\nMatch totals: {points}. The match is won by {winners}."
            else:
                summary += f"\nMatch after game {session.match.game_number}: {points}."
        finished = game.is_over and (session.match is None or session.match_over())
        self.app.exit(PlayResult(self.saved_to, finished, summary.strip()))


class EndScreen(Screen[None]):
    """The scoring table with the winners, and where the record went."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("q,escape", "close", "quit", show=False),
        Binding("t", "app.pop_screen", "back to the table", show=False),
        Binding("n,enter", "next_game", "next game of the match", show=False),
    ]

    def __init__(self, session: PlaySession, saved_to: Path | None, error: str = "") -> None:
        super().__init__()
        self.session = session
        self.saved_to = saved_to
        self.error = error

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
        if self.more_games():
            keys = "[n] next game of the match  " + keys
        yield Static(Text(keys, style="bold"), id="end-keys")
        yield Static(id="end-message")

    def on_key(self, event: events.Key) -> None:
        if event.is_printable and event.key not in self.active_bindings:
            message = f"The key {event.character!r} does nothing here: the keys are listed above"
            self.query_one("#end-message", Static).update(Text(message, style="bold yellow"))

    def more_games(self) -> bool:
        return self.session.match is not None and not self.session.match_over()

    def action_next_game(self) -> None:
        if not self.more_games():
            if self.session.match is None:
                self.action_close()  # Enter closes a single game's end screen
            return
        app = self.app
        if isinstance(app, ColorettoApp):
            app.next_game(self.session)

    def action_close(self) -> None:
        for screen in self.app.screen_stack:
            if isinstance(screen, GameScreen):
                screen.finish()
                return
        self.app.exit()


# ------------------------------------------------------------------ replay


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
        self.session = PlaySession.from_record(record)
        self.total = len(record.moves)
        while len(self.session.game):
            self.session.pop()
        self.secret = record.deck is None and record.seed is None

    def compose(self) -> ComposeResult:
        yield TableView(self.session, id="table")
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

    def action_step(self, step: int) -> None:
        if step > 0:
            if self.position >= self.total:
                self.query_one("#message", Static).update(Text("This is the end of the game.", style="bold"))
                return
            move = self.record.moves[self.position]
            self.session.push_recorded(move, self.position + 1, self.secret)
        else:
            if self.position == 0:
                self.query_one("#message", Static).update(
                    Text("This is the start of the game.", style="bold")
                )
                return
            self.session.pop()
        self.query_one("#message", Static).update("")
        self.refresh_view()

    def action_jump(self, where: int) -> None:
        target = self.total if where < 0 else where
        while self.position < target:
            self.session.push_recorded(self.record.moves[self.position], self.position + 1, self.secret)
        while self.position > target:
            self.session.pop()
        self.query_one("#message", Static).update("")
        self.refresh_view()

    def action_final(self) -> None:
        self.app.push_screen(ScoresScreen(self.session))

    def action_help(self) -> None:
        self.app.push_screen(HelpScreen(self.record.rules))

    def on_key(self, event: events.Key) -> None:
        if event.is_printable and event.key not in self.active_bindings:
            self.query_one("#message", Static).update(
                Text(
                    f"The key {event.character!r} does nothing here: → next, ← back, q quit",
                    style="bold yellow",
                )
            )


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


# ------------------------------------------------------------------- apps


CSS = """
Screen { layout: vertical; }
TableView { height: 1fr; }
#header { height: auto; }
#banner { height: auto; }
#rows { height: auto; margin-top: 1; }
#players { height: auto; margin-top: 1; }
#log { height: 1fr; min-height: 2; margin-top: 1; color: $text-muted; }
#turn { height: auto; }
#message { height: auto; }
#keys { height: 1; }
#command { height: 3; }
#setup { height: auto; padding: 1 2; }
#final-box { height: 1fr; }
#saved, #end-keys, #end-message { height: auto; }
HelpScreen, HintScreen, ScoresScreen, QuitScreen, TooSmallScreen { align: center middle; }
#help-box { width: 96%; height: 90%; border: round $accent; background: $surface; padding: 0 1; }
#quit-box { width: 72; height: auto; border: round $warning; background: $surface; padding: 1 2; }
#too-small { width: 100%; height: 100%; content-align: center middle; background: $error 30%; }
"""


class _SizeCheckingApp(App[PlayResult]):
    """Shows :class:`TooSmallScreen` while the terminal is too small."""

    CSS = CSS
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
            await self.push_screen(SetupScreen(self.start_game))
        else:
            await self.push_screen(GameScreen(self.session, self.config))
        self._sizes_checked = True
        self.check_size(self.size.width, self.size.height)

    def start_game(self, rules: Rules, seats: list[Seat]) -> None:
        self.session = PlaySession.new(rules, seats, seed=self.config.seed)
        self.switch_screen(GameScreen(self.session, self.config))

    def next_game(self, finished: PlaySession) -> None:
        """Match play: deal the next game with the same seats."""
        self.session = finished.next_game()
        self.pop_screen()
        self.switch_screen(GameScreen(self.session, self.config))

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

    def __init__(self, record: GameRecord) -> None:
        super().__init__()
        self.record = record

    async def on_mount(self) -> None:
        await self.push_screen(ReplayScreen(self.record))
        self._sizes_checked = True
        self.check_size(self.size.width, self.size.height)
