"""The rule options: every variant of the sources, each behind one named field.

``Rules()`` is the default game of docs/user/rules.md: four players, the classic deck,
the brown scoring table, jokers assigned at scoring, the last taker starting
the next round. Everything else is a variant chosen by name::

    Rules(players=2, edition="modern", table="violet")
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from enum import Enum, StrEnum
from typing import Any

from coloretto.cards import EDITION_DECKS, Edition, colours_in_play
from coloretto.errors import ExplainedError


class Table(StrEnum):
    """Scoring tables of the summary card."""

    BROWN = "brown"  #: 1, 3, 6, 10, 15, 21: the beginners' side, the default
    VIOLET = "violet"  #: 1, 4, 8, 7, 6, 5: growing a colour past three hurts


class JokerTiming(StrEnum):
    SCORING = "scoring"  #: jokers get their colours at the final scoring (default)
    ON_TAKE = "on-take"  #: the taker names each joker's colour at once (encyclopedia variant)


class RoundStarter(StrEnum):
    LAST_TAKER = "last-taker"  #: the player who took the last row starts (default)
    NEXT_PLAYER = "next-player"  #: the player after them starts (999 Games edition)


class PlusColours(StrEnum):
    BEST = "best"  #: each player picks the three colours that score best (default)
    MOST_CARDS = "most-cards"  #: the three colours with the most cards score plus (999 Games)


class TieBreak(StrEnum):
    SHARED = "shared"  #: equal totals share the win (default: the sources are silent)
    FEWER_MINUS = "fewer-minus"  #: house rule: among tied totals, fewest minus points wins


class StartingColours(StrEnum):
    DEALT = "dealt"  #: each player is dealt starting colours at random (default)
    CHOSEN = "chosen"  #: each player chooses, in seat order from the first player (playing-cards source)


SCORE_TABLES: dict[Table, tuple[int, ...]] = {
    # index = number of cards of a colour (capped at 6)
    Table.BROWN: (0, 1, 3, 6, 10, 15, 21),
    Table.VIOLET: (0, 1, 4, 8, 7, 6, 5),
}

MIN_PLAYERS = 2
MAX_PLAYERS = 5
MAX_ROW_SIZE = 3
#: the longest match a table may ask for: the customary match is four games,
#: and an all-bot match must end in reasonable time
MAX_MATCH_GAMES = 8


class RulesError(ExplainedError):
    """A rule option that does not exist or does not fit the others."""

    code = "bad_rules"


@dataclass(frozen=True)
class RuleOption:
    """One rule option as every face shows it: the command-line flags, the
    terminal's set-up screen, the web app's form and its checks, OpenSpiel's
    game parameters and the engine protocol all read this table.

    An option has either ``choices`` (an enumeration's values) or a whole-number
    range (``minimum``/``maximum``; ``optional`` when None means "the
    edition's number").
    """

    name: str  #: the field of :class:`Rules`
    label: str  #: a short title for forms
    help: str  #: one line for people
    default: Any  #: the value of ``Rules()``, as :meth:`to_json` gives it
    enum: type[StrEnum] | None = None
    #: what each choice means, in the order of ``choices``
    choice_help: tuple[str, ...] = ()
    minimum: int | None = None
    maximum: int | None = None
    optional: bool = False
    #: the error for a number out of range, if a plainer one fits better
    #: (``{minimum}``, ``{maximum}`` and ``{value}`` are filled in)
    out_of_range: str = ""

    @property
    def choices(self) -> tuple[str, ...] | None:
        return None if self.enum is None else tuple(member.value for member in self.enum)

    @property
    def flag(self) -> str:
        """The command-line flag: ``--joker-timing``."""
        return "--" + self.name.replace("_", "-")

    def coerce(self, value: Any) -> Any:
        """The value as Rules holds it (an enumeration member or a whole number);
        raises RulesError naming the option and what it accepts."""
        if self.enum is not None:
            if isinstance(value, self.enum):
                return value
            try:
                return self.enum(value)
            except ValueError:
                raise RulesError(
                    "{option} must be one of {choices}, not {value}",
                    option=self.name,
                    choices=", ".join(self.choices or ()),
                    value=repr(value),
                ) from None
        if value is None and self.optional:
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            raise RulesError(
                "{option} must be a whole number, not {value}", option=self.name, value=repr(value)
            )
        if (self.minimum is not None and value < self.minimum) or (
            self.maximum is not None and value > self.maximum
        ):
            limits = {"option": self.name, "minimum": self.minimum, "maximum": self.maximum, "value": value}
            if self.out_of_range:
                raise RulesError(self.out_of_range, **limits)
            if self.maximum is None:
                raise RulesError("{option} must be a whole number ≥ {minimum}, not {value}", **limits)
            raise RulesError(
                "{option} must be a whole number from {minimum} to {maximum}, not {value}", **limits
            )
        return value

    def parse(self, text: str) -> Any:
        """Read the option from text (a flag's argument, a form field): a choice,
        a number, or for an optional number an empty text or ``default``."""
        raw = text.strip()
        if self.enum is not None:
            return self.coerce(raw.lower())
        if self.optional and raw.lower() in ("", "default", "none"):
            return None
        try:
            number = int(raw)
        except ValueError:
            raise RulesError(
                "{option} must be a whole number, not {value}", option=self.name, value=repr(text)
            ) from None
        return self.coerce(number)

    def to_json(self, value: Any) -> Any:
        """The value as JSON and the record format write it."""
        return value.value if isinstance(value, Enum) else value

    def range_text(self) -> str:
        if self.maximum is None:
            return f"a whole number ≥ {self.minimum}"
        return f"a whole number from {self.minimum} to {self.maximum}"

    def describe_choice(self, value: str) -> str:
        """What one choice means (empty for a number)."""
        choices = self.choices or ()
        return self.choice_help[choices.index(value)] if value in choices else ""


#: Every rule option, ``players`` first: the one table that the faces read.
RULE_OPTIONS: tuple[RuleOption, ...] = (
    RuleOption(
        "players",
        "Players",
        "how many play: 2 to 5",
        4,
        minimum=MIN_PLAYERS,
        maximum=MAX_PLAYERS,
        out_of_range="Coloretto is for {minimum} to {maximum} players, not {value}",
    ),
    RuleOption(
        "edition",
        "Edition",
        "which deck",
        Edition.CLASSIC.value,
        enum=Edition,
        choice_help=(
            "three jokers",
            "two jokers and a golden joker, which brings its taker a card from the deck",
            "a standard deck: seven suits, aces as jokers, zeros as +2",
        ),
    ),
    RuleOption(
        "table",
        "Scoring table",
        "points for 1 to 6 cards of a colour",
        Table.BROWN.value,
        enum=Table,
        choice_help=("1 3 6 10 15 21", "1 4 8 7 6 5: more than three of a colour hurts"),
    ),
    RuleOption(
        "joker_timing",
        "Jokers",
        "when a joker gets its colour",
        JokerTiming.SCORING.value,
        enum=JokerTiming,
        choice_help=("at the final scoring, where it scores best", "named by the taker when taken"),
    ),
    RuleOption(
        "round_starter",
        "Next round starts",
        "who starts the next round",
        RoundStarter.LAST_TAKER.value,
        enum=RoundStarter,
        choice_help=("the last player to take a row", "the player after them (999 Games)"),
    ),
    RuleOption(
        "plus_colours",
        "Plus colours",
        "which three colours score plus",
        PlusColours.BEST.value,
        enum=PlusColours,
        choice_help=("the best three", "the three with most cards (999 Games)"),
    ),
    RuleOption(
        "tie_break",
        "Ties",
        "who wins on equal totals",
        TieBreak.SHARED.value,
        enum=TieBreak,
        choice_help=("a shared win", "fewer minus points wins (house rule)"),
    ),
    RuleOption(
        "starting_colours",
        "Starting colours",
        "how each player gets a starting colour",
        StartingColours.DEALT.value,
        enum=StartingColours,
        choice_help=("dealt at random", "chosen in seat order from the first player"),
    ),
    RuleOption(
        "cards_under_last_round",
        "Cards under the last-round card",
        "house rule: move the last-round card (default: the edition's 15 or 16 under it)",
        None,
        minimum=0,
        optional=True,
    ),
    RuleOption(
        "match_games",
        "Games in the match",
        "games in a match, points added up (four is customary)",
        1,
        minimum=1,
        maximum=MAX_MATCH_GAMES,
    ),
)

_OPTIONS_BY_NAME = {option.name: option for option in RULE_OPTIONS}


def rule_option(name: str) -> RuleOption:
    """The option called ``name`` (``joker_timing`` or ``joker-timing``)."""
    try:
        return _OPTIONS_BY_NAME[name.replace("-", "_")]
    except KeyError:
        raise RulesError(
            "unknown rule option {name}: options are {options}",
            name=repr(name),
            options=", ".join(_OPTIONS_BY_NAME),
        ) from None


@dataclass(frozen=True)
class Rules:
    """One game's rules. Immutable and hashable; ``Rules.from_dict`` reads it back.

    Each field is an option of :data:`RULE_OPTIONS`, which checks its values.
    """

    players: int = 4
    edition: Edition = Edition.CLASSIC
    table: Table = Table.BROWN
    joker_timing: JokerTiming = JokerTiming.SCORING
    round_starter: RoundStarter = RoundStarter.LAST_TAKER
    plus_colours: PlusColours = PlusColours.BEST
    tie_break: TieBreak = TieBreak.SHARED
    starting_colours: StartingColours = StartingColours.DEALT
    #: None: the edition's number (15, or 16 in the modern edition). A house
    #: rule may move the last-round card; the engine then copes with an
    #: exhausted deck as docs/user/rules.md requires.
    cards_under_last_round: int | None = None
    #: Match play: games in a match (the sources' customary length is four).
    match_games: int = 1

    def __post_init__(self) -> None:
        for option in RULE_OPTIONS:
            object.__setattr__(self, option.name, option.coerce(getattr(self, option.name)))
        under = self.cards_under_last_round
        if under is not None and under > self.max_cards_under_last_round:
            raise RulesError(
                "cards_under_last_round={value} is more than the deck holds "
                "(at most {most} with these rules)",
                value=under,
                most=self.max_cards_under_last_round,
            )

    # -- derived facts, so that every rule has one obvious home ------------

    @property
    def colours(self) -> int:
        """Colours in play: 7 with 4–5 players, 6 with 3, 5 with 2."""
        return colours_in_play(self.players)

    @property
    def row_capacities(self) -> tuple[int, ...]:
        """Two players use three rows of 1, 2 and 3; otherwise one row of 3 per player."""
        if self.players == 2:
            return (1, 2, 3)
        return (MAX_ROW_SIZE,) * self.players

    @property
    def starting_cards_per_player(self) -> int:
        return 2 if self.players == 2 else 1

    @property
    def under_last_round(self) -> int:
        if self.cards_under_last_round is not None:
            return self.cards_under_last_round
        return EDITION_DECKS[self.edition].cards_under_last_round

    @property
    def max_cards_under_last_round(self) -> int:
        """The most cards the last-round card may have under it: all the deck
        but the starting cards, the last-round card itself and one card to draw."""
        return self.deck_size - self.starting_cards_per_player * self.players - 1

    @property
    def chooses_starting_colours(self) -> bool:
        """Whether the players choose their starting colours (variant) instead of being dealt them."""
        return self.starting_colours is StartingColours.CHOSEN

    @property
    def starting_picks(self) -> int:
        """How many starting colours are chosen before round 1 (0 when they are dealt)."""
        return self.starting_cards_per_player * self.players if self.chooses_starting_colours else 0

    @property
    def has_golden_joker(self) -> bool:
        """Whether the deck holds a golden joker (the modern edition), whose taker
        gets a bonus card: see :func:`coloretto.game.earns_bonus_card`."""
        return EDITION_DECKS[self.edition].golden_jokers > 0

    @property
    def fewer_minus(self) -> bool:
        """Whether ties are broken by fewer minus points (:func:`coloretto.scoring.standing`)."""
        return self.tie_break is TieBreak.FEWER_MINUS

    @property
    def score_table(self) -> tuple[int, ...]:
        return SCORE_TABLES[self.table]

    @property
    def deck_size(self) -> int:
        deck = EDITION_DECKS[self.edition]
        return 9 * self.colours + deck.plus_twos + deck.jokers + deck.golden_jokers + 1

    def to_dict(self) -> dict[str, Any]:
        return {option.name: option.to_json(getattr(self, option.name)) for option in RULE_OPTIONS}

    @classmethod
    def from_text(cls, values: Mapping[str, str]) -> Rules:
        """Rules from option names (``joker_timing`` or ``joker-timing``) and
        texts, as command lines and forms give them; unnamed options keep
        their defaults."""
        parsed = {}
        for name, text in values.items():
            option = rule_option(name)
            parsed[option.name] = option.parse(text)
        return cls(**parsed)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Rules:
        if not isinstance(data, dict):
            raise RulesError("rules must be an object, not {kind}", kind=type(data).__name__)
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise RulesError("unknown rule option(s): {names}", names=", ".join(unknown))
        return cls(**data)

    def summary(self) -> tuple[tuple[str, str | int], ...]:
        """What a one-line summary says, as (option name, value) pairs in its order: the players,
        edition and table always, then every option that is not its default. The faces word
        these pairs in their own language; :meth:`describe` is the English."""
        always = ("players", "edition", "table")
        values = self.to_dict()
        return tuple(
            (option.name, values[option.name])
            for option in RULE_OPTIONS
            if option.name in always or values[option.name] != option.default
        )

    def describe(self) -> str:
        """A one-line summary for people (English; :meth:`summary` is what it says)."""
        return ", ".join(_summary_words(name, value) for name, value in self.summary())


#: every option of Rules by name, ``players`` first: what command lines and
#: APIs offer as rule options
RULE_OPTION_NAMES: tuple[str, ...] = tuple(option.name for option in RULE_OPTIONS)
if tuple(f.name for f in fields(Rules)) != RULE_OPTION_NAMES:  # pragma: no cover - a programming error
    raise RuntimeError("RULE_OPTIONS must list every field of Rules, in order")
if any(option.default != option.to_json(getattr(Rules(), option.name)) for option in RULE_OPTIONS):
    raise RuntimeError("each RuleOption's default must be the default of its Rules field")  # pragma: no cover


def _summary_words(name: str, value: str | int) -> str:
    """One part of :meth:`Rules.describe`, in English."""
    match name:
        case "players" | "edition" | "table":  # "4 players", "classic edition", "brown table"
            return f"{value} {name}"
        case "joker_timing":
            return "jokers named on take"
        case "round_starter":
            return "next player starts a round"
        case "plus_colours":
            return "most-cards colours score plus"
        case "tie_break":
            return f"tie-break {value}"
        case "starting_colours":
            return "starting colours chosen"
        case "cards_under_last_round":
            return f"{value} under the last-round card"
        case "match_games":
            return f"match of {value} games"
        case _:
            return f"{name.replace('_', ' ')} {value}"
