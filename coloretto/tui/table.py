"""The table: the view of a game, and the screen people play it on.

Adding a key: put a :class:`~textual.binding.Binding` in ``GameScreen.BINDINGS``
and write the ``action_…`` method it names; :meth:`GameScreen.play` plays a
move with all the checks and messages.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Input, Static

from coloretto.actions import (
    CHOOSE_START,
    DRAW,
    NAME_JOKER,
    PASS,
    Action,
    ActionKind,
    place,
    take,
)
from coloretto.cards import EDITION_DECKS, NotationError
from coloretto.game import Game, IllegalActionError
from coloretto.tui.end import EndScreen
from coloretto.tui.overlays import HelpScreen, HintScreen
from coloretto.tui.session import PlayConfig, PlaySession, match_save_path
from coloretto.tui.view import (
    KEYS_HELP,
    banner_text,
    header_text,
    log_text,
    players_table,
    rows_text,
    turn_text,
)

DIGIT_KEYS = tuple(str(n) for n in range(1, 10))
#: terminals at least this tall get a blank line between the table's parts
ROOMY_HEIGHT = 30
#: the decisions that choose a colour (by its number or its letter) and the actions of each
COLOUR_DECISIONS: dict[ActionKind, tuple[Action, ...]] = {
    ActionKind.NAME_JOKER: NAME_JOKER,
    ActionKind.CHOOSE_START: CHOOSE_START,
}


class TableView(Vertical):
    """The table of a session: header, banner, rows, players, log, turn.

    ``replay``: the table of a record being stepped through, where nobody is
    asked to move and no bot thinks.
    """

    def __init__(self, session: PlaySession, id: str | None = None, replay: bool = False) -> None:
        super().__init__(id=id)
        self.session = session
        self.replay = replay

    def compose(self) -> ComposeResult:
        yield Static(id="header")
        yield Static(id="banner")
        yield Static(id="rows")
        yield Static(id="players")
        yield Static(id="log")
        yield Static(id="turn")

    def on_mount(self) -> None:
        self.fit_gaps()
        self.refresh_view()

    def on_resize(self) -> None:
        self.fit_gaps()
        self.refresh_view()

    def fit_gaps(self) -> None:
        """A short terminal drops the blank lines between the parts, so that the
        players and the turn still fit (the turn is docked at the bottom, and the
        log gives up its lines first). Set when the size changes, not every move."""
        gap = 0 if self.app.size.height < ROOMY_HEIGHT else 1
        for part in ("#rows", "#players", "#log"):
            self.query_one(part, Static).styles.margin = (gap, 0, 0, 0)

    def refresh_view(self) -> None:
        session = self.session
        self.query_one("#header", Static).update(header_text(session))
        banner = self.query_one("#banner", Static)
        shown = banner_text(session)
        banner.update(shown)
        banner.display = bool(shown.plain)
        self.query_one("#rows", Static).update(rows_text(session))
        self.query_one("#players", Static).update(players_table(session))
        log = self.query_one("#log", Static)
        log.update(log_text(session, max(1, log.size.height or 4)))
        self.query_one("#turn", Static).update(turn_text(session, replay=self.replay))


class GameScreen(Screen[None]):
    """The game: the table, and keys for the person to move.

    ``on_finish`` closes the app once the game (or the wish to play it) is
    over; ``on_next_game`` deals a match's next game.
    """

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

    def __init__(
        self,
        session: PlaySession,
        config: PlayConfig,
        on_finish: Callable[[GameScreen], None],
        on_next_game: Callable[[PlaySession], None],
    ) -> None:
        super().__init__()
        self.session = session
        self.config = config
        self.on_finish = on_finish
        self.on_next_game = on_next_game
        self.save_path = config.save_path
        if session.match is not None and config.save_path is not None:
            self.save_path = match_save_path(config.save_path, session.match.game_number)
        self.saved_to: Path | None = None
        #: the moves the saved file holds (moves played since are not in it)
        self.saved_moves = 0
        #: quit without saving moves played since the last save
        self.left_unsaved = False
        self._bot_timer: Timer | None = None
        self._thinking = False
        self._ended = False
        self._end_error = ""

    def compose(self) -> ComposeResult:
        yield TableView(self.session, id="table")
        yield Static(id="message")
        yield Static(Text(KEYS_HELP, style="dim"), id="keys")
        yield Input(placeholder="a move: d, p2, t3, j:R, s:R, x (Enter plays it, Esc cancels)", id="command")

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

    def colour_decision(self) -> tuple[Action, ...] | None:
        """The actions of a colour being chosen now (naming a joker, a starting
        colour), indexed by colour; None when the decision is something else."""
        if self.game.is_over:
            return None
        return COLOUR_DECISIONS.get(self.game.legal_actions[0].kind)

    def action_row(self, number: int) -> None:
        """A digit: place the drawn card, take a row, or choose a colour by its number."""
        game = self.game
        if not self.may_act():
            return
        kind = game.legal_actions[0].kind
        index = number - 1
        colour_actions = self.colour_decision()
        if colour_actions is not None:
            if index >= game.rules.colours:
                self.say(f"Not allowed: choose a colour from 1 to {game.rules.colours}")
                return
            self.play(colour_actions[index])
        elif index >= len(game.row_capacities):
            self.say(f"Not allowed: there is no row {number}: this game has {len(game.row_capacities)} rows")
        elif kind is ActionKind.PLACE:
            self.play(place(index))
        else:
            self.play(take(index))

    def colour_letter(self, character: str | None) -> int | None:
        """The colour in play whose letter ``character`` is (either case), if any."""
        if not character:
            return None
        letters = EDITION_DECKS[self.game.rules.edition].colour_letters[: self.game.rules.colours]
        upper = character.upper()
        return letters.index(upper) if upper in letters else None

    def action_command(self) -> None:
        box = self.query_one("#command", Input)
        box.display = True
        box.value = ""
        box.focus()

    async def on_input_submitted(self, event: Input.Submitted) -> None:
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
            await self.app.run_action("app.request_quit")
            return
        try:
            action = self.game.parse_action(text)
        except NotationError as exc:
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
        colour_actions = self.colour_decision()
        colour = self.colour_letter(event.character) if colour_actions is not None else None
        if colour_actions is not None and colour is not None and event.is_printable:
            # while a colour is chosen its letter chooses it, before any key bound to the letter
            event.stop()
            event.prevent_default()
            self.play(colour_actions[colour])
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
            bot = None if seat is None else session.bot(seat)
            if seat is None or bot is None:
                return
            observation = self.game.observation(seat)
            try:
                action = await asyncio.to_thread(bot.choose, observation)
            except Exception as exc:  # a broken bot must not take the table down
                action = self.game.legal_actions[0]
                why = str(exc) or type(exc).__name__
                self.say(f"{session.name(seat)} failed ({why}); it plays {action} instead")
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
        # on the screen's own message queue, not in the worker: a timer set from
        # inside a finishing worker may never fire, and the next bot would wait forever
        self.call_later(self.after_move)

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
        self.saved_moves = len(self.game.history())
        return ""

    def quit_without_saving(self) -> None:
        """Close without saving: a file saved earlier stays as it was saved."""
        self.left_unsaved = self.saved_to is None or self.saved_moves != len(self.game.history())
        self.finish()

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
        more = self.session.match is not None and not self.session.match_over()
        self.app.push_screen(
            EndScreen(
                self.session,
                self.saved_to,
                self._end_error,
                on_close=self.finish,
                on_next_game=(lambda: self.on_next_game(self.session)) if more else None,
            )
        )

    @property
    def finished(self) -> bool:
        """Whether everything was played: the game, and the match if it is one."""
        session = self.session
        return self.game.is_over and (session.match is None or session.match_over())

    def summary(self) -> str:
        """What the command prints after the app closes: scores, winners, the match."""
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
        return summary.strip()

    def finish(self) -> None:
        """Close the app, telling the command what happened."""
        self.on_finish(self)
