"""A game at the table: who sits where, the bots, and a readable log.

This module knows nothing about the screen. :class:`PlaySession` wraps a
:class:`~coloretto.game.Game` with its seats (people or bots), pushes moves
while writing what happened in words ("Bot 2 took row 3: red, red, +2"),
remembers who took which row this round, and turns itself into a
:class:`~coloretto.record.GameRecord` (and back, to resume a saved game).
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from coloretto.actions import Action, ActionKind
from coloretto.bots import Bot, BotSpecError, check_bot, make_bot
from coloretto.cards import LAST_ROUND, Edition, card_name
from coloretto.game import Game
from coloretto.record import GameRecord, RecordedMove, RecordError
from coloretto.rules import Rules

HUMAN = "human"
#: the record tag that says who sits in each seat: "human" or a bot name, comma-separated
SEATS_TAG = "seat_kinds"
PROGRAM_TAG = "program"
PROGRAM = "coloretto play"
#: match play: which game of the match this is, the seats' totals of the
#: games before it, and the seed the match's deals are drawn from
MATCH_GAME_TAG = "match_game"
MATCH_TOTALS_TAG = "match_totals"
MATCH_SEED_TAG = "match_seed"


class SeatError(ValueError):
    """Seats that do not make a game: a wrong count, an unknown bot name."""


@dataclass(frozen=True)
class Seat:
    """One player at the table."""

    name: str
    kind: str = HUMAN  #: "human", or the bot's name as ``make_bot`` reads it ("greedy")

    @property
    def is_human(self) -> bool:
        return self.kind == HUMAN

    @property
    def label(self) -> str:
        """The name with what plays it, for tables: "Bot 2 (greedy)"."""
        return self.name if self.is_human else f"{self.name} ({self.kind})"


def default_name(seat: int, kind: str) -> str:
    return f"Player {seat + 1}" if kind == HUMAN else f"Bot {seat + 1}"


def make_seats(kinds: Sequence[str], names: Sequence[str] = ()) -> list[Seat]:
    """Seats from their kinds ("human" or a bot name), checking every bot name.

    ``names`` may name the first few seats; the rest get "Player N" / "Bot N".
    """
    if len(names) > len(kinds):
        raise SeatError(f"{len(names)} names given for {len(kinds)} seats")
    seats = []
    for index, raw in enumerate(kinds):
        kind = raw.strip()
        if not kind:
            raise SeatError(f"seat {index + 1} is empty: write 'human' or a bot name")
        if kind.lower() in (HUMAN, "person", "h"):
            kind = HUMAN
        else:
            try:
                check_bot(kind)
            except BotSpecError as exc:
                raise SeatError(str(exc)) from None
        name = names[index].strip() if index < len(names) else ""
        seats.append(Seat(name or default_name(index, kind), kind))
    taken = [s.name for s in seats]
    for name in taken:
        if taken.count(name) > 1:
            raise SeatError(f"two seats are called {name!r}: names must differ")
    return seats


def seat_kinds_for(players: int, bots: Sequence[str]) -> list[str]:
    """People first, then the bots: ``--players 4 --bots greedy,random`` seats
    two people and then the two bots."""
    if len(bots) > players:
        raise SeatError(f"{len(bots)} bots do not fit at a table of {players} players")
    return [HUMAN] * (players - len(bots)) + [b.strip() for b in bots]


def _derive_seed(*parts: int) -> int:
    rng = random.Random(" ".join(str(p) for p in parts))
    return rng.randrange(2**63)


@dataclass(frozen=True)
class MatchState:
    """Where a game stands in a match (``Rules.match_games`` > 1)."""

    game_number: int  #: 1-based
    earlier_totals: tuple[int, ...]  #: each seat's points in the games before this one
    seed: int  #: the match's seed: game k is dealt from a seed derived from it

    def to_tags(self) -> dict[str, str]:
        return {
            MATCH_GAME_TAG: str(self.game_number),
            MATCH_TOTALS_TAG: ",".join(str(t) for t in self.earlier_totals),
            MATCH_SEED_TAG: str(self.seed),
        }

    @classmethod
    def from_tags(cls, tags: dict[str, str], players: int, games: int, seed: int) -> MatchState:
        try:
            number = int(tags.get(MATCH_GAME_TAG, "1"))
            raw = tags.get(MATCH_TOTALS_TAG)
            totals = tuple(int(t) for t in raw.split(",")) if raw else (0,) * players
            match_seed = int(tags.get(MATCH_SEED_TAG, str(seed)))
        except ValueError:
            raise SeatError("the record's match tags are not numbers") from None
        if len(totals) != players or not 1 <= number <= games:
            raise SeatError(f"the record's match tags do not fit a {games}-game match of {players}")
        return cls(number, totals, match_seed)


def match_save_path(base: Path, game_number: int) -> Path:
    """Where game ``game_number`` of a match is saved: ``NAME-gameN.json`` next to ``base``."""
    stem = re.sub(r"-game\d+$", "", base.stem)
    return base.with_name(f"{stem}-game{game_number}{base.suffix}")


def match_game_seed(match_seed: int, game_number: int) -> int:
    """The seed that deals game ``game_number`` of a match (game 1: the match seed)."""
    return match_seed if game_number == 1 else _derive_seed(match_seed, game_number)


@dataclass
class LogEntry:
    """One line of the log, and the number of moves made when it was written."""

    moves: int
    text: str


@dataclass
class PlaySession:
    """A game with its seats; every move goes through :meth:`push`."""

    game: Game
    seats: list[Seat]
    log: list[LogEntry] = field(default_factory=list)
    #: row index -> seat that took it, this round
    takers: dict[int, int] = field(default_factory=dict)
    bots: dict[int, Bot] = field(default_factory=dict)
    #: match play only (``rules.match_games`` > 1)
    match: MatchState | None = None
    _undo: list[tuple[list[LogEntry], dict[int, int]]] = field(default_factory=list)

    def __post_init__(self) -> None:
        if len(self.seats) != self.game.players:
            raise SeatError(f"{len(self.seats)} seats for a {self.game.players}-player game")
        seed = self.game.setup.seed or 0
        if self.match is None and self.game.rules.match_games > 1:
            self.match = MatchState(1, (0,) * self.game.players, seed)
        for index, seat in enumerate(self.seats):
            if not seat.is_human and index not in self.bots:
                try:
                    self.bots[index] = make_bot(seat.kind, seed=_derive_seed(seed, index, len(self.game)))
                except BotSpecError as exc:
                    raise SeatError(str(exc)) from None
        if not self.log:
            self.log.append(LogEntry(len(self.game), self._start_line()))

    # ------------------------------------------------------------ creating

    @classmethod
    def new(
        cls, rules: Rules, seats: Sequence[Seat], seed: int | None = None, first_player: int | None = None
    ) -> PlaySession:
        return cls(Game.new(rules, seed=seed, first_player=first_player), list(seats))

    @classmethod
    def from_record(cls, record: GameRecord, seats: Sequence[Seat] | None = None) -> PlaySession:
        """The game of a record with every recorded move played again.

        Seats come from the record (its names and its ``seat_kinds`` tag);
        without the tag every seat is a person.
        """
        if seats is None:
            seats = seats_from_record(record)
        match = None
        if record.rules.match_games > 1:
            match = MatchState.from_tags(
                record.tags, record.rules.players, record.rules.match_games, record.seed or 0
            )
        session = cls(record.initial_game(), list(seats), match=match)
        secret = record.deck is None and record.seed is None
        for number, move in enumerate(record.moves, start=1):
            session.push_recorded(move, number, force_reveals=secret)
        return session

    # ---------------------------------------------------------------- moves

    @property
    def edition(self) -> Edition:
        return self.game.rules.edition

    def name(self, seat: int) -> str:
        return self.seats[seat].name

    def card(self, card: int) -> str:
        return card_name(card, self.edition)

    def cards(self, cards: Sequence[int]) -> str:
        return ", ".join(self.card(c) for c in cards)

    def seat_to_move(self) -> Seat | None:
        seat = self.game.to_move
        return None if seat is None else self.seats[seat]

    def push(self, action: Action, reveal: int | None = None) -> None:
        """Play ``action`` for the seat to move and log it.

        Raises :class:`~coloretto.game.IllegalActionError` (game unchanged)
        when the rules forbid it.
        """
        game = self.game
        actor = game.to_move
        before_rows = game.rows
        before_round = game.round
        pending = game.pending_card
        game.push(action, reveal=reveal)
        assert actor is not None  # push raised if the game was over
        self._undo.append(([LogEntry(e.moves, e.text) for e in self.log], dict(self.takers)))
        revealed = game.history()[-1][1]
        self._narrate(actor, action, revealed, before_rows, pending)
        if game.is_over:
            self.takers = {}
            self._say("The game is over.")
        elif game.round != before_round:
            self.takers = {}
            self._say(f"Round {game.round} begins: {self.name(game.to_move or 0)} starts.")

    def push_recorded(self, move: RecordedMove, number: int, force_reveals: bool) -> None:
        """Push a move of a record, checking the cards it turned over."""
        from coloretto.game import IllegalActionError

        reveal = move.revealed[-1] if force_reveals and move.revealed else None
        if self.game.is_over:
            raise RecordError("the game is already over", number)
        try:
            self.push(move.action, reveal=reveal)
        except IllegalActionError as exc:
            raise RecordError(f"illegal: {exc}", number) from None
        actual = self.game.history()[-1][1]
        if move.revealed and tuple(move.revealed) != actual:
            raise RecordError("the cards turned over differ from the record", number)

    def pop(self) -> Action:
        """Undo the last move, log included."""
        action = self.game.pop()
        self.log, self.takers = self._undo.pop()
        return action

    def bot_choice(self) -> Action | None:
        """What the bot to move plays (None when a person is to move)."""
        seat = self.game.to_move
        if seat is None or seat not in self.bots:
            return None
        return self.bots[seat].choose(self.game.observation(seat))

    # ---------------------------------------------------------------- match

    def match_totals(self) -> tuple[int, ...] | None:
        """Each seat's match points, this game's current scores included."""
        if self.match is None:
            return None
        return tuple(t + s.total for t, s in zip(self.match.earlier_totals, self.game.scores()))

    def match_over(self) -> bool:
        return (
            self.match is not None
            and self.game.is_over
            and (self.match.game_number >= self.game.rules.match_games)
        )

    def match_winners(self) -> tuple[int, ...]:
        totals = self.match_totals() or ()
        best = max(totals, default=0)
        return tuple(seat for seat, total in enumerate(totals) if total == best)

    def next_game(self) -> PlaySession:
        """The next game of the match, with the same seats (and fresh bots)."""
        if self.match is None or not self.game.is_over or self.match_over():
            raise ValueError("there is no next game: the match is over or this game is not")
        totals = self.match_totals()
        assert totals is not None
        number = self.match.game_number + 1
        match = MatchState(number, totals, self.match.seed)
        game = Game.new(self.game.rules, seed=match_game_seed(self.match.seed, number))
        return PlaySession(game, list(self.seats), match=match)

    # -------------------------------------------------------------- records

    def record(self) -> GameRecord:
        tags = {SEATS_TAG: ",".join(s.kind for s in self.seats), PROGRAM_TAG: PROGRAM}
        if self.match is not None:
            tags.update(self.match.to_tags())
        return GameRecord.from_game(self.game, seats=[s.name for s in self.seats], tags=tags)

    def save(self, path: Path) -> None:
        """Write the record (raises OSError when the file cannot be written)."""
        path.write_text(self.record().to_json(), encoding="utf-8")

    # ------------------------------------------------------------ narration

    def _say(self, text: str) -> None:
        self.log.append(LogEntry(len(self.game), text))

    def _start_line(self) -> str:
        game = self.game
        first = self.name(game.setup.first_player)
        if self.match is not None:
            number = f"Game {self.match.game_number} of {game.rules.match_games}"
            return f"{number}: {game.rules.describe()}. {first} starts."
        return f"New game: {game.rules.describe()}. {first} starts."

    def _narrate(
        self,
        actor: int,
        action: Action,
        revealed: tuple[int, ...],
        before_rows: tuple[tuple[int, ...], ...],
        pending: int | None,
    ) -> None:
        who = self.name(actor)
        kind = action.kind
        if LAST_ROUND in revealed:
            self._say("The last-round card came up: this is the last round!")
        cards = [c for c in revealed if c != LAST_ROUND]
        if kind is ActionKind.DRAW:
            self._say(f"{who} drew {self.card(cards[0])}")
        elif kind is ActionKind.PLACE:
            text = f"{who} put {self.card(pending or 0)} in row {action.index + 1}"
            last = self.log[-1] if self.log else None
            if last is not None and last.text == f"{who} drew {self.card(pending or 0)}":
                last.text = f"{who} drew {self.card(pending or 0)} and put it in row {action.index + 1}"
                last.moves = len(self.game)
            else:
                self._say(text)
        elif kind is ActionKind.TAKE:
            row = before_rows[action.index]
            self.takers[action.index] = actor
            text = f"{who} took row {action.index + 1}: {self.cards(row)}"
            if cards:
                text += f"; the golden joker brings them {self.card(cards[0])} from the deck"
            self._say(text)
        elif kind is ActionKind.NAME_JOKER:
            self._say(f"{who} named a joker {self.card(action.index)}")
        else:
            self._say(f"{who} passed: nothing to draw and no row to take")


def seats_from_record(record: GameRecord) -> list[Seat]:
    """The seats a record names, with who plays them from its ``seat_kinds`` tag."""
    players = record.rules.players
    names = list(record.seats) if len(record.seats) == players else []
    raw = record.tags.get(SEATS_TAG)
    kinds = raw.split(",") if raw else [HUMAN] * players
    if len(kinds) != players:
        raise SeatError(f"the record's {SEATS_TAG} tag names {len(kinds)} seats for {players} players")
    return make_seats(kinds, names)
