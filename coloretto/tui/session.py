"""A game at the table: who sits where, the bots, and a readable log.

This module knows nothing about the screen. :class:`PlaySession` puts seats
(people or bots) around a :class:`~coloretto.game.Game` and, in match play,
the core's :class:`~coloretto.match.Match`, which owns the deals, the running
totals and the winners. The log is told from the game's own move events
("Bot 2 took row 3: red, red, +2"); the session only merges a draw with the
placing that follows it. A session turns into a
:class:`~coloretto.record.GameRecord` and back, to resume a saved game.
"""

from __future__ import annotations

import os
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from coloretto.actions import Action, ActionKind
from coloretto.bots import Bot, BotSpecError, check_bot, make_bot, split_bot_list
from coloretto.cards import LAST_ROUND, Edition, card_name
from coloretto.files import output_file_problem, write_atomically
from coloretto.game import Game, MoveEvent
from coloretto.match import Match, MatchError, MatchProgress
from coloretto.record import GameRecord
from coloretto.rules import Rules

HUMAN = "human"
#: what a seat's kind may say for a person
HUMAN_WORDS = (HUMAN, "person", "h")
#: the record tag that says who sits in each seat: "human" or a bot name, comma-separated
SEATS_TAG = "seat_kinds"
PROGRAM_TAG = "program"
PROGRAM = "coloretto play"


@dataclass
class PlayConfig:
    """How the app runs a game (the game itself is the session)."""

    save_path: Path | None = None  #: where the record is saved (end of game, s, quitting)
    bot_delay: float = 0.8  #: seconds a bot waits before moving, so people can follow
    seed: int | None = None  #: for a game set up on screen
    names: tuple[str, ...] = ()  #: names for the seats of a game set up on screen


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


def seat_kind_list(text: str) -> list[str]:
    """Seat kinds separated by commas ("human,mcts:200,take=12,greedy"): a
    bot's options stay with it (:func:`~coloretto.bots.split_bot_list`)."""
    return split_bot_list(text, words=HUMAN_WORDS)


def default_name(seat: int, kind: str) -> str:
    """People see seats counted from 1: "Player 1", "Bot 2"."""
    return f"Player {seat + 1}" if kind == HUMAN else f"Bot {seat + 1}"


def make_seats(kinds: Sequence[str], names: Sequence[str] = (), check: bool = True) -> list[Seat]:
    """Seats from their kinds ("human" or a bot name), checking every bot name
    (unless ``check`` is False: a replay shows seats whose bots it never builds).

    ``names`` may name the first few seats; the rest get "Player N" / "Bot N".
    """
    if len(names) > len(kinds):
        raise SeatError(f"{len(names)} names given for {len(kinds)} seats")
    seats = []
    for index, raw in enumerate(kinds):
        kind = raw.strip()
        if not kind:
            raise SeatError(f"seat {index + 1} is empty: write 'human' or a bot name")
        if kind.lower() in HUMAN_WORDS:
            kind = HUMAN
        elif check:
            try:
                check_bot(kind)
            except BotSpecError as exc:
                raise SeatError(str(exc)) from None
        name = names[index].strip() if index < len(names) else ""
        seats.append(Seat(name or default_name(index, kind), kind))
    repeated = repeated_name([s.name for s in seats])
    if repeated is not None:
        raise SeatError(f"two seats are called {repeated!r}: names must differ")
    return seats


def repeated_name(names: Sequence[str]) -> str | None:
    """The first name given to more than one seat (blank names aside), None if none is."""
    return next((name for name in names if name and names.count(name) > 1), None)


def seat_kinds_for(players: int, bots: Sequence[str]) -> list[str]:
    """People first, then the bots: ``--players 4 --bots greedy,random`` seats
    two people and then the two bots."""
    if len(bots) > players:
        raise SeatError(f"{len(bots)} bots do not fit at a table of {players} players")
    return [HUMAN] * (players - len(bots)) + [b.strip() for b in bots]


def bot_seed(game_seed: int, seat: int, moves: int) -> int:
    """The seed of a seat's bot: fixed by the deal, so that a game played
    again with the same seed plays out the same (not a deal: the core deals)."""
    return random.Random(f"coloretto play bot {game_seed} {seat} {moves}").randrange(2**63)


def match_save_path(base: Path, game_number: int) -> Path:
    """Where game ``game_number`` of a match is saved: ``NAME-gameN.json`` next to ``base``."""
    stem = re.sub(r"-game\d+$", "", base.stem)
    return base.with_name(f"{stem}-game{game_number}{base.suffix}")


def match_of_record(record: GameRecord, game: Game) -> Match | None:
    """The match a record's game belongs to (from its match tags, old ones
    included), going on with ``game``; None for a single game. Raises
    :class:`~coloretto.match.MatchError` when the tags do not fit."""
    rules = record.rules
    if rules.match_games <= 1:
        return None
    progress = MatchProgress.from_tags(record.tags, rules, record.seed or 0)
    return Match.resume(rules, progress, game)


@dataclass
class LogEntry:
    """One line of the log, and the number of moves made when it was written."""

    moves: int
    text: str


@dataclass
class PlaySession:
    """A game with its seats; every move goes through :meth:`push`.

    In match play ``match`` is the core's match and ``game`` its current game.
    """

    game: Game
    seats: list[Seat]
    match: Match | None = None
    _bots: dict[int, Bot] = field(default_factory=dict, init=False, repr=False)
    #: moves made when the session began (a resumed game): part of the bots' seeds
    _moves_at_start: int = field(default=0, init=False, repr=False)

    def __post_init__(self) -> None:
        self._moves_at_start = len(self.game)
        if len(self.seats) != self.game.players:
            raise SeatError(f"{len(self.seats)} seats for a {self.game.players}-player game")
        if self.match is not None and self.match.game is not self.game:
            raise ValueError("the session's game must be its match's current game")

    # ------------------------------------------------------------ creating

    @classmethod
    def new(
        cls, rules: Rules, seats: Sequence[Seat], seed: int | None = None, first_player: int | None = None
    ) -> PlaySession:
        """A new game, or the first game of a match when ``rules.match_games`` > 1
        (the match's seed is the first game's: the core deals the rest)."""
        game = Game.new(rules, seed=seed, first_player=first_player)
        match = None
        if rules.match_games > 1:
            match_seed = game.setup.seed
            assert match_seed is not None  # Game.new always keeps its seed
            zeros = (0,) * rules.players
            match = Match.resume(rules, MatchProgress(match_seed, 1, zeros, zeros), game)
        return cls(game, list(seats), match=match)

    @classmethod
    def from_record(cls, record: GameRecord, seats: Sequence[Seat] | None = None) -> PlaySession:
        """The game of a record with every recorded move played again (and
        checked) by the core, in its match if it is a game of one.

        Seats come from the record (its names and its ``seat_kinds`` tag);
        without the tag every seat is a person. Raises RecordError, SeatError
        or MatchError.
        """
        if seats is None:
            seats = seats_from_record(record)
        game = record.replay()
        return cls(game, list(seats), match=match_of_record(record, game))

    @classmethod
    def for_replay(cls, record: GameRecord) -> PlaySession:
        """The record's game for stepping through: its seats as written (a
        bot that is not installed here is still shown by name), and its match
        when the match tags fit (else the game alone)."""
        game = record.replay()
        try:
            match = match_of_record(record, game)
        except MatchError:
            match = None
        try:
            seats = seats_from_record(record, check=False)
        except SeatError:  # a seat_kinds tag that does not fit, or names that repeat: show the names only
            names = record.seat_labels if record.seats else ()
            seats = make_seats([HUMAN] * game.players, names, check=False)
        return cls(game, seats, match=match)

    # ---------------------------------------------------------------- moves

    @property
    def rules(self) -> Rules:
        return self.game.rules

    @property
    def edition(self) -> Edition:
        return self.game.rules.edition

    def name(self, seat: int) -> str:
        return self.seats[seat].name

    def card(self, card: int) -> str:
        return card_name(card, self.edition)

    def seat_to_move(self) -> Seat | None:
        seat = self.game.to_move
        return None if seat is None else self.seats[seat]

    def push(self, action: Action, reveal: int | None = None) -> MoveEvent:
        """Play ``action`` for the seat to move (in the match, if any, so that
        a game that ends is counted). Returns what the move did.

        Raises :class:`~coloretto.game.IllegalActionError` (game unchanged)
        when the rules forbid it.
        """
        if self.match is not None:
            return self.match.push(action, reveal=reveal)
        self.game.push(action, reveal=reveal)
        event = self.game.last_event()
        assert event is not None  # a move was just made
        return event

    def pop(self) -> Action:
        """Undo the last move (the log follows: it is told from the moves)."""
        if self.match is not None:
            return self.match.pop()
        return self.game.pop()

    def bot(self, seat: int) -> Bot | None:
        """The bot playing ``seat`` (None for a person), built the first time
        it is asked for: a replay never builds one."""
        info = self.seats[seat]
        if info.is_human:
            return None
        if seat not in self._bots:
            seed = self.game.setup.seed or 0
            try:
                self._bots[seat] = make_bot(info.kind, seed=bot_seed(seed, seat, self._moves_at_start))
            except BotSpecError as exc:
                raise SeatError(str(exc)) from None
        return self._bots[seat]

    def bot_choice(self) -> Action | None:
        """What the bot to move plays (None when a person is to move)."""
        seat = self.game.to_move
        bot = None if seat is None else self.bot(seat)
        if seat is None or bot is None:
            return None
        return bot.choose(self.game.observation(seat))

    # ---------------------------------------------------------------- match

    def match_totals(self) -> tuple[int, ...] | None:
        """Each seat's match points, this game's current scores included."""
        return None if self.match is None else self.match.running_totals()

    def earlier_totals(self) -> tuple[int, ...]:
        """Each seat's points in the match's games before this one."""
        return () if self.match is None else self.match.progress().earlier_totals

    def match_over(self) -> bool:
        return self.match is not None and self.match.is_over

    def match_winners(self) -> tuple[int, ...]:
        """The match's winners, with the rules' tie-break (the core decides)."""
        return () if self.match is None else self.match.winners()

    def next_game(self) -> PlaySession:
        """The next game of the match, dealt by the match, with the same seats
        (and fresh bots)."""
        if self.match is None or not self.game.is_over or self.match.is_over:
            raise ValueError("there is no next game: the match is over or this game is not")
        return PlaySession(self.match.next_game(), list(self.seats), match=self.match)

    # -------------------------------------------------------------- records

    def record(self) -> GameRecord:
        tags = {SEATS_TAG: ",".join(s.kind for s in self.seats), PROGRAM_TAG: PROGRAM}
        if self.match is not None:
            tags.update(self.match.progress().to_tags())
        return GameRecord.from_game(self.game, seats=[s.name for s in self.seats], tags=tags)

    def save(self, path: Path) -> None:
        """Write the record (raises OSError when the file cannot be written): into a
        temporary file next to ``path``, then renamed over it, so that a crash or a
        full disk never leaves half a record where the last whole one was."""
        write_atomically(path, self.record().to_json())

    def save_paths(self, base: Path) -> list[Path]:
        """Every file this session will save to with ``--save base``: ``base`` for a
        single game; in a match, this game's file and those of the games still to come."""
        if self.match is None:
            return [base]
        return [match_save_path(base, n) for n in range(self.match.game_number, self.rules.match_games + 1)]

    def save_problem(self, base: Path, resumed: Path | None = None) -> str | None:
        """Why the session must not start saving to ``base`` (None when it may): a
        file it would write is missing its directory, or already exists and is
        neither the file this session was resumed from nor a record of this very
        game (same rules, seats and deal): another game's record, or no record at
        all, which saving would overwrite."""
        for path in self.save_paths(base):
            problem = output_file_problem(path)
            if problem is not None:
                return f"cannot save the game to {path}: {problem}"
            if (
                path.exists()
                and not (resumed is not None and _same_file(path, resumed))
                and not self._records(path)
            ):
                return f"{path} already exists and is not this game's record: choose another --save FILE"
        return None

    def _records(self, path: Path) -> bool:
        """Whether ``path`` holds a record of this very game: the same rules, seats and deal."""
        try:
            found = GameRecord.from_json(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):  # not a record (RecordError and UnicodeDecodeError are ValueErrors)
            return False
        mine = self.record()

        def deal(r: GameRecord) -> tuple[object, ...]:
            return (r.rules, r.seats, r.seed, r.deck, r.starting_cards, r.first_player)

        return deal(found) == deal(mine)

    # ------------------------------------------------------------------ log

    @property
    def takers(self) -> dict[int, int]:
        """Row index -> the seat that took it, this round (from the move events)."""
        takers: dict[int, int] = {}
        for event in self.game.events():
            if event.action.kind is ActionKind.TAKE and event.row is not None:
                takers[event.row] = event.seat
            if event.round_ended or event.game_over:
                takers = {}
        return takers

    @property
    def log(self) -> list[LogEntry]:
        """The game in words, one line per move, told by the core's move
        events; a draw and the placing right after it share a line."""
        names = [seat.name for seat in self.seats]
        edition = self.edition
        picks = self.rules.starting_picks
        entries = [LogEntry(0, self._start_line())]
        previous: MoveEvent | None = None
        for event in self.game.events():
            if event.last_round_began:
                entries.append(LogEntry(event.number, "The last-round card came up: this is the last round!"))
            # the banner line above says it; the move's own line need not
            told = replace(event, revealed=tuple(c for c in event.revealed if c != LAST_ROUND))
            text = told.describe(names, edition)
            last = entries[-1]
            if (
                event.action.kind is ActionKind.PLACE
                and previous is not None
                and previous.action.kind is ActionKind.DRAW
                and previous.seat == event.seat
                and last.moves == previous.number
            ):
                last.text += f" and put it in row {(event.row or 0) + 1}"
                last.moves = event.number
            else:
                entries.append(LogEntry(event.number, text))
            if event.action.kind is ActionKind.CHOOSE_START and event.number == picks:
                first = self.name(self.game.first_player)
                entries.append(LogEntry(event.number, f"Every starting colour is chosen: {first} starts."))
            if event.game_over:
                entries.append(LogEntry(event.number, "The game is over."))
            elif event.round_ended and event.next_to_move is not None:
                who = self.name(event.next_to_move)
                entries.append(LogEntry(event.number, f"Round {event.round + 1} begins: {who} starts."))
            previous = event
        return entries

    def _start_line(self) -> str:
        game = self.game
        first = self.name(game.first_player)
        starts = (
            f"Starting colours are chosen in turn, {first} first."
            if self.rules.chooses_starting_colours
            else f"{first} starts."
        )
        if self.match is not None:
            number = f"Game {self.match.game_number} of {game.rules.match_games}"
            return f"{number}: {game.rules.describe()}. {starts}"
        return f"New game: {game.rules.describe()}. {starts}"


def _same_file(one: Path, other: Path) -> bool:
    try:
        return os.path.samefile(one, other)
    except OSError:
        return False


def seats_from_record(record: GameRecord, check: bool = True) -> list[Seat]:
    """The seats a record names, with who plays them from its ``seat_kinds`` tag."""
    players = record.rules.players
    names = list(record.seats) if len(record.seats) == players else []
    raw = record.tags.get(SEATS_TAG)
    kinds = seat_kind_list(raw) if raw else [HUMAN] * players
    if len(kinds) != players:
        raise SeatError(f"the record's {SEATS_TAG} tag names {len(kinds)} seats for {players} players")
    return make_seats(kinds, names, check=check)
