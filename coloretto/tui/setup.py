"""The set-up screen: players, who sits in each seat, and every rule option.

The rule settings are made from :data:`coloretto.rules.RULE_OPTIONS`, so a
new option appears here with its label, choices or range and default
without a line written for it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import Static

from coloretto.bots import BotSpecError, available_bots, check_bot
from coloretto.rules import MAX_PLAYERS, RULE_OPTIONS, RuleOption, Rules, RulesError, rule_option
from coloretto.tui.overlays import HelpScreen
from coloretto.tui.session import HUMAN, Seat, make_seats

DEFAULT_BOT = "greedy"  #: what the seats after the first hold until changed
PERSON_HELP = "a person at this keyboard (people share it: hot-seat)"
LABEL_WIDTH = 34
#: Number options whose upper end, and whose None ("the edition's number"),
#: depend on the other options: the Rules properties that give them.
DEPENDENT_NUMBERS: dict[str, tuple[str, str]] = {
    "cards_under_last_round": ("max_cards_under_last_round", "under_last_round"),
}


def seat_choices() -> dict[str, str]:
    """What may sit in a seat, each with a line saying what it is: a person,
    then the bots that can be built here, weakest first."""
    choices = {HUMAN: PERSON_HELP}
    for name, description in available_bots().items():
        try:
            check_bot(name)
        except BotSpecError:  # not installed here (OpenSpiel, say): not offered
            continue
        choices[name] = description
    return choices


def seat_key(seat: int) -> str:
    return f"seat{seat}"


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

    def __init__(self, on_start: Callable[[Rules, list[Seat]], None], names: Sequence[str] = ()) -> None:
        super().__init__()
        self.on_start = on_start
        self.names = tuple(names)
        self.kinds = seat_choices()
        first_bot = DEFAULT_BOT if DEFAULT_BOT in self.kinds else next(iter(self.kinds))
        #: every seat's kind, the ones beyond the number of players kept for when it grows
        self.seats: list[str] = [HUMAN, *([first_bot] * (MAX_PLAYERS - 1))]
        #: each rule option's value as Rules takes it (a choice's text, a number, or None)
        self.values: dict[str, Any] = {option.name: option.default for option in RULE_OPTIONS}
        self.cursor = 0
        self.message = ""

    def compose(self) -> ComposeResult:
        yield Static(id="setup")
        # above the setting's help, which may run past a short terminal's bottom
        yield Static(id="message")
        yield Static(id="setting-help")

    def on_mount(self) -> None:
        self.refresh_view()

    # ------------------------------------------------------------ settings

    @property
    def players(self) -> int:
        return int(self.values["players"])

    def setting_keys(self) -> list[str]:
        """The settings shown, in order: players, one per seat, then the other rule options."""
        return [
            "players",
            *(seat_key(s) for s in range(self.players)),
            *(option.name for option in RULE_OPTIONS if option.name != "players"),
        ]

    def rules(self) -> Rules:
        """The rules as set (raises RulesError, naming the option, if they do not fit)."""
        return Rules.from_dict(dict(self.values))

    def number_range(self, option: RuleOption) -> tuple[int, int | None]:
        """The values a number may take with the other settings as they are
        (no upper end when neither the table nor the rules give one)."""
        minimum = option.minimum or 0
        if option.maximum is not None:
            return minimum, option.maximum
        bound_property = DEPENDENT_NUMBERS.get(option.name, ("", ""))[0]
        others = Rules.from_dict({**self.values, option.name: None if option.optional else option.default})
        bound = getattr(others, bound_property, None) if bound_property else None
        return minimum, bound if isinstance(bound, int) else None

    def default_number(self, option: RuleOption) -> int | None:
        """The number an optional option stands for when it is None (the
        edition's), if the rules say; None when they do not."""
        meaning = DEPENDENT_NUMBERS.get(option.name, ("", ""))[1]
        if not meaning:
            return None
        value = getattr(Rules.from_dict({**self.values, option.name: None}), meaning, None)
        return value if isinstance(value, int) else None

    def shown_value(self, key: str) -> str:
        if key.startswith("seat"):
            return self.seats[int(key[4:])]
        option = rule_option(key)
        value = self.values[key]
        if value is None and option.optional:
            number = self.default_number(option)
            return "the edition's" if number is None else f"{number} (the edition's)"
        return str(value)

    def label(self, key: str) -> str:
        if key.startswith("seat"):
            return f"Seat {int(key[4:]) + 1}"  # people count seats from 1
        return rule_option(key).label

    def explanation(self, key: str) -> str:
        """A line about the selected setting and its value."""
        if key.startswith("seat"):
            kind = self.seats[int(key[4:])]
            return f"{self.label(key)}: {kind}: {self.kinds.get(kind, '')}"
        option = rule_option(key)
        value = self.values[key]
        meaning = option.describe_choice(value) if option.choices else ""
        return f"{option.label}: {option.help}" + (f" — {value}: {meaning}" if meaning else "")

    def step(self, key: str, step: int) -> None:
        """The next or previous value of a setting, round the list."""
        if key.startswith("seat"):
            seat = int(key[4:])
            kinds = list(self.kinds)
            here = kinds.index(self.seats[seat]) if self.seats[seat] in kinds else 0
            self.seats[seat] = kinds[(here + step) % len(kinds)]
            return
        option = rule_option(key)
        if option.choices:
            choices = option.choices
            here = choices.index(self.values[key]) if self.values[key] in choices else 0
            self.values[key] = choices[(here + step) % len(choices)]
            return
        low, high = self.number_range(option)
        value = self.values[key]
        own = self.default_number(option)
        current = value if value is not None else own
        if current is not None:
            number = current + step
        else:
            number = low if step > 0 else high if high is not None else low
        if high is not None and number > high:
            number = low
        elif number < low:
            number = high if high is not None else low
        # an optional number back at the rules' own is "the edition's" again
        self.values[key] = None if option.optional and number == own else number

    def fit(self) -> None:
        """Keep numbers within the ranges the other settings allow (fewer
        players leave fewer cards to put under the last-round card)."""
        for option in RULE_OPTIONS:
            value = self.values[option.name]
            if option.choices or value is None:
                continue
            low, high = self.number_range(option)
            if high is not None and value > high:
                self.values[option.name] = high
            elif value < low:
                self.values[option.name] = low

    # ---------------------------------------------------------------- view

    def refresh_view(self) -> None:
        text = Text()
        text.append("New game of Coloretto\n\n", style="bold")
        keys = self.setting_keys()
        for index, key in enumerate(keys):
            here = index == self.cursor
            text.append("▶ " if here else "  ")
            text.append(f"{self.label(key):<{LABEL_WIDTH}}")
            text.append(f"◀ {self.shown_value(key)} ▶", style="bold reverse" if here else "bold")
            text.append("\n")
        text.append(
            "\n↑↓ choose a setting · ←→ change it · Enter start the game · ? rules · Esc quit", style="dim"
        )
        self.query_one("#setup", Static).update(text)
        self.query_one("#setting-help", Static).update(
            Text(self.explanation(keys[self.cursor]), style="italic")
        )
        self.query_one("#message", Static).update(Text(self.message, style="bold yellow"))

    # ------------------------------------------------------------- actions

    def action_move(self, step: int) -> None:
        self.cursor = (self.cursor + step) % len(self.setting_keys())
        self.message = ""
        self.refresh_view()

    def action_change(self, step: int) -> None:
        key = self.setting_keys()[self.cursor]
        self.step(key, step)
        self.fit()
        self.cursor = min(self.cursor, len(self.setting_keys()) - 1)
        self.message = ""
        self.refresh_view()

    def action_help(self) -> None:
        try:
            rules = self.rules()
        except RulesError as exc:
            self.message = str(exc)
            self.refresh_view()
            return
        self.app.push_screen(HelpScreen(rules))

    def action_start(self) -> None:
        kinds = self.seats[: self.players]
        try:
            rules = self.rules()
            seats = make_seats(kinds, self.names[: len(kinds)])
        except (RulesError, ValueError) as exc:
            self.message = str(exc)
            self.refresh_view()
            return
        self.on_start(rules, seats)

    def on_key(self, event: events.Key) -> None:
        if event.is_printable and event.key not in self.active_bindings:
            self.message = f"The key {event.character!r} does nothing here: ↑↓ ←→ Enter, ? for the rules"
            self.refresh_view()
