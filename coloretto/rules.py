"""The rule options: every variant of the sources, each behind one named field.

``Rules()`` is the default game of RULES.md: four players, the classic deck,
the brown scoring table, jokers assigned at scoring, the last taker starting
the next round. Everything else is a variant chosen by name::

    Rules(players=2, edition="modern", table="violet")
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from enum import Enum, StrEnum
from typing import Any

from coloretto.cards import EDITION_DECKS, Edition, colours_in_play


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


SCORE_TABLES: dict[Table, tuple[int, ...]] = {
    # index = number of cards of a colour (capped at 6)
    Table.BROWN: (0, 1, 3, 6, 10, 15, 21),
    Table.VIOLET: (0, 1, 4, 8, 7, 6, 5),
}

MIN_PLAYERS = 2
MAX_PLAYERS = 5
MAX_ROW_SIZE = 3


class RulesError(ValueError):
    """A rule option that does not exist or does not fit the others."""


def _enum_value(enum: type[Enum], value: Any, field_name: str) -> Any:
    try:
        return enum(value)
    except ValueError:
        allowed = ", ".join(member.value for member in enum)  # type: ignore[attr-defined]
        raise RulesError(f"{field_name} must be one of {allowed}, not {value!r}") from None


@dataclass(frozen=True)
class Rules:
    """One game's rules. Immutable and hashable; ``Rules.from_dict`` reads it back."""

    players: int = 4
    edition: Edition = Edition.CLASSIC
    table: Table = Table.BROWN
    joker_timing: JokerTiming = JokerTiming.SCORING
    round_starter: RoundStarter = RoundStarter.LAST_TAKER
    plus_colours: PlusColours = PlusColours.BEST
    tie_break: TieBreak = TieBreak.SHARED
    #: None: the edition's number (15, or 16 in the modern edition). A house
    #: rule may move the last-round card; the engine then copes with an
    #: exhausted deck as RULES.md requires.
    cards_under_last_round: int | None = None
    #: Match play: games in a match (the sources' customary length is four).
    match_games: int = 1

    def __post_init__(self) -> None:
        if isinstance(self.players, bool) or not isinstance(self.players, int):
            raise RulesError(f"players must be a whole number, not {self.players!r}")
        if not MIN_PLAYERS <= self.players <= MAX_PLAYERS:
            raise RulesError(f"Coloretto is for 2 to 5 players, not {self.players}")
        object.__setattr__(self, "edition", _enum_value(Edition, self.edition, "edition"))
        object.__setattr__(self, "table", _enum_value(Table, self.table, "table"))
        object.__setattr__(self, "joker_timing", _enum_value(JokerTiming, self.joker_timing, "joker_timing"))
        object.__setattr__(
            self, "round_starter", _enum_value(RoundStarter, self.round_starter, "round_starter")
        )
        object.__setattr__(self, "plus_colours", _enum_value(PlusColours, self.plus_colours, "plus_colours"))
        object.__setattr__(self, "tie_break", _enum_value(TieBreak, self.tie_break, "tie_break"))
        under = self.cards_under_last_round
        if under is not None and (isinstance(under, bool) or not isinstance(under, int) or under < 0):
            raise RulesError(f"cards_under_last_round must be a whole number ≥ 0, not {under!r}")
        if under is not None and under > self.deck_size - self.starting_cards_per_player * self.players - 1:
            raise RulesError(f"cards_under_last_round={under} is more than the deck holds")
        games = self.match_games
        if isinstance(games, bool) or not isinstance(games, int) or games < 1:
            raise RulesError(f"match_games must be a whole number ≥ 1, not {games!r}")

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
        out = asdict(self)
        for key, value in out.items():
            if isinstance(value, Enum):
                out[key] = value.value
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Rules:
        if not isinstance(data, dict):
            raise RulesError(f"rules must be an object, not {type(data).__name__}")
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise RulesError(f"unknown rule option(s): {', '.join(unknown)}")
        return cls(**data)

    def describe(self) -> str:
        """A one-line summary for people."""
        parts = [f"{self.players} players", f"{self.edition.value} edition", f"{self.table.value} table"]
        if self.joker_timing is not JokerTiming.SCORING:
            parts.append("jokers named on take")
        if self.round_starter is not RoundStarter.LAST_TAKER:
            parts.append("next player starts a round")
        if self.plus_colours is not PlusColours.BEST:
            parts.append("most-cards colours score plus")
        if self.tie_break is not TieBreak.SHARED:
            parts.append(f"tie-break {self.tie_break.value}")
        if self.cards_under_last_round is not None:
            parts.append(f"{self.cards_under_last_round} under the last-round card")
        if self.match_games > 1:
            parts.append(f"match of {self.match_games} games")
        return ", ".join(parts)


#: every option of Rules by name, ``players`` first: what command lines and
#: APIs offer as rule options
RULE_OPTION_NAMES: tuple[str, ...] = tuple(f.name for f in fields(Rules))
