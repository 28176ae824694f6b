"""A game in play, in a server process's memory: the core's :class:`~coloretto.match.Match` and what the
table adds to it (seats, status, the turn clock, who is watching).

Every rule lives in the core; this module only keeps the table's own facts:
who sits where, which seats a bot plays for now, how much time each seat has
left, and the log of public moves as the game's events tell them.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from coloretto.actions import Action
from coloretto.cards import Edition
from coloretto.game import Game, MoveEvent
from coloretto.match import Match
from coloretto.rules import Rules
from coloretto.web.common.errors import ServiceError
from coloretto.web.common.i18n import N_
from coloretto.web.common.i18n import gettext as _
from coloretto.web.common.schemas import ChatEntry, DealResult, LogEntry, RatingChange
from coloretto.web.table.changes import SentView
from coloretto.web.table.watchers import Subscriber

#: a game in one of these states is over: ``expired`` ones never began (nobody came to play in
#: time), ``abandoned`` ones stopped (nobody moved for too long and no bot could play on),
#: ``cancelled`` ones were called off by their creator while they waited for players, ``stopped``
#: ones were ended by a moderator (no rating moves)
ENDED = ("finished", "expired", "abandoned", "cancelled", "stopped")
EXPIRED_MESSAGE = N_("this game expired: nobody came to take its free seats in time")
ABANDONED_MESSAGE = N_("this game was abandoned: nobody moved for too long")
#: seconds a person who came back gets for each move once their bank is spent
GRACE_SECONDS = 10.0
#: a process's word that a seat is online counts for this long (it repeats it more often)
PRESENCE_TTL = 25.0


@dataclass
class SeatState:
    kind: str  #: human or bot
    bot: str | None
    name: str | None
    token_hash: str | None
    away: bool = False  #: a person's seat a bot plays for now
    time_used: float = 0.0  #: seconds of the match's bank spent (timed tables)
    #: the account of the person in it (logged in), or, while it is free, the one it is kept for
    user_id: int | None = None
    resigned: bool = False  #: for good: a bot plays it to the end, and it ranks last
    #: a free rematch seat kept for a guest: the digest of their seat token in the game before
    reserved_hash: str | None = None
    #: its person deleted their account: the name stored is the "deleted player" label
    deleted: bool = False

    @property
    def free(self) -> bool:
        return self.kind == "human" and not self.name

    @property
    def reserved(self) -> bool:
        """A free seat kept for one person (a rematch): nobody else may take it."""
        return self.free and (self.user_id is not None or self.reserved_hash is not None)


@dataclass
class LiveGame:
    id: str
    name: str
    status: str
    rules: Rules
    seed: int  #: secret while the match is in progress
    seats: list[SeatState]
    created_at: datetime
    updated_at: datetime
    match: Match  #: the games, their moves, totals and winners: the server keeps no copy of its own
    move_seconds: int | None = None
    game_seconds: int | None = None
    turn_started_at: datetime | None = None
    rated: bool = False
    private: bool = False
    creator_seat: int | None = None  #: the creator's seat: they may cancel the game while it waits
    rematch_id: str | None = None  #: the rematch made of this game once it is over
    rematch_of: str | None = None
    stop_reason: str | None = None  #: why a moderator ended it (status ``stopped``)
    #: each seat's rating before and after, once a rated game is over (see coloretto.web.features.ratings)
    rating_changes: list[RatingChange] | None = None
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    bot_task: asyncio.Task[None] | None = None
    bot_move: int = -1  #: the move (count of moves played) the bot task was started for
    #: where the bot task is ("delay", "think", "lock", "commit"), and since when (monotonic)
    bot_phase: str = ""
    bot_phase_at: float = 0.0
    clock_timer: asyncio.TimerHandle | None = None  #: the owner's check of the turn clock
    clock_task: asyncio.Task[None] | None = None  #: that check, once it runs
    #: when the table last changed here (a move, a seat, read again), monotonic: for the watchdog
    changed_at: float = field(default_factory=time.monotonic)
    presence_task: asyncio.Handle | None = None  #: a presence broadcast waiting for its interval
    thinking: int | None = None  #: the seat whose bot is thinking, as told to the table
    read_at: float = 0.0  #: when it was last read again from the database (monotonic)
    subscribers: set[Subscriber] = field(default_factory=set)
    #: seats online and spectators through other processes: process -> (seats, spectators, when
    #: it said so, monotonic)
    remote_online: dict[str, tuple[frozenset[int], int, float]] = field(default_factory=dict)
    #: the last chat messages, for a client that connects: those told here, and once
    #: ``chat_loaded`` those stored before too
    chat_tail: list[ChatEntry] = field(default_factory=list, repr=False)
    chat_loaded: bool = False
    #: when each person's seat was last seen going offline (monotonic), for "gone too long"
    offline_since: dict[int, float] = field(default_factory=dict)
    #: per game of the match: the moves last told in the log, the log entries made of their events
    #: and their JSON (kept only because building them anew for every state sent is slow; checked
    #: against the game)
    #: each deal's log as last told: its moves, entries and their JSON texts, and the game's
    #: moves_key() then (the log is asked for every seat's view of every move)
    _told: dict[int, tuple[list[Action], list[LogEntry], list[str], tuple[int, object]]] = field(
        default_factory=dict, repr=False
    )
    #: what the watchers of each seat (None: the spectators) were last sent, for the changes of
    #: protocol 2 (:mod:`coloretto.web.table.changes`); its versions count up through every seat's
    sent_views: dict[int | None, SentView] = field(default_factory=dict, repr=False)
    view_version: int = 0
    #: per game of the match that is over: its scoring, made once (see views.finished_deal)
    deal_results: dict[int, tuple[Game, DealResult]] = field(default_factory=dict, repr=False)

    @property
    def game(self) -> Game:
        return self.match.game

    @property
    def games(self) -> list[Game]:
        """Every game of the match dealt so far."""
        return self.match.games

    @property
    def deal(self) -> int:
        """The number of the game being played in the match (1-based)."""
        return self.match.game_number

    @property
    def move_count(self) -> int:
        """Moves played in the whole match."""
        return sum(len(game) for game in self.games)

    @property
    def timed(self) -> bool:
        return self.move_seconds is not None or self.game_seconds is not None

    def names(self) -> list[str]:
        return [seat_label(i, s) for i, s in enumerate(self.seats)]

    def bot_plays(self, seat: int) -> bool:
        """A bot moves for this seat: a bot's seat, or a person's taken over."""
        state = self.seats[seat]
        return state.kind == "bot" or state.away

    def bot_name(self, seat: int, takeover_bot: str) -> str:
        state = self.seats[seat]
        return (state.bot or "random") if state.kind == "bot" else takeover_bot

    def online(self) -> set[int]:
        """Seats whose person is connected, here or through another process."""
        seats = {s.seat for s in self.subscribers if s.seat is not None}
        now = time.monotonic()
        for remote, _spectators, said in self.remote_online.values():
            if now - said <= PRESENCE_TTL:
                seats |= remote
        return seats

    def local_online(self) -> set[int]:
        return {s.seat for s in self.subscribers if s.seat is not None}

    def local_spectators(self) -> int:
        """Connections here that hold no seat."""
        return sum(1 for s in self.subscribers if s.seat is None)

    def spectators(self) -> int:
        """Connections with no seat, here and through the other processes."""
        now = time.monotonic()
        remote = sum(n for _seats, n, said in self.remote_online.values() if now - said <= PRESENCE_TTL)
        return self.local_spectators() + remote

    def local_presence(self) -> tuple[frozenset[int], int]:
        """Who is connected here: the seats, and how many watch without one."""
        return frozenset(self.local_online()), self.local_spectators()

    def seat_of_user(self, user_id: int) -> int | None:
        """The seat the account holds (taken, not only kept for it)."""
        for i, seat in enumerate(self.seats):
            if seat.user_id == user_id and seat.name:
                return i
        return None

    def bank_left(self, seat: int) -> float | None:
        """Seconds left of the seat's bank before its current turn began (None: no bank)."""
        if self.game_seconds is None:
            return None
        return max(0.0, self.game_seconds - self.seats[seat].time_used)

    def turn_deadline(self) -> datetime | None:
        """When the person to move runs out of time; None when no clock runs (untimed, a bot's turn,
        the game not playing)."""
        if not self.timed or self.status != "playing" or self.turn_started_at is None:
            return None
        seat = self.game.to_move
        if seat is None or self.bot_plays(seat):
            return None
        allowed = float("inf") if self.move_seconds is None else float(self.move_seconds)
        bank = self.bank_left(seat)
        if bank is not None:
            allowed = min(allowed, max(bank, GRACE_SECONDS))
        return aware(self.turn_started_at) + timedelta(seconds=allowed)

    def time_spent(self, now: datetime) -> float:
        """Seconds the seat to move has spent on this turn."""
        if self.turn_started_at is None:
            return 0.0
        return max(0.0, (now - aware(self.turn_started_at)).total_seconds())

    def log(self, deal: int) -> list[LogEntry]:
        """The moves of game ``deal`` of the match, as the game's own events tell them."""
        return list(self._log(deal)[0])

    def log_json(self, deal: int) -> str:
        """:meth:`log` as JSON text (each entry written once: a state is sent for every move)."""
        return "[" + ",".join(self._log(deal)[1]) + "]"

    def log_texts(self, deal: int) -> list[str]:
        """Each entry of :meth:`log` as JSON text (the list kept here: do not change it)."""
        return self._log(deal)[1]

    def _log(self, deal: int) -> tuple[list[LogEntry], list[str]]:
        game = self.games[deal - 1]
        known = self._told.get(deal)
        if known is not None and game.is_at(known[3]):
            return known[1], known[2]
        told, entries, texts, _key = known if known is not None else ([], [], [], (0, None))
        if known is not None and game.follows(known[3]):
            # one move more, the usual case: only its event (the game makes all of them anew)
            last = game.last_event()
            assert last is not None
            same, events, moves = len(told), [last], [*told, last.action]
        else:  # the first time, or moves undone (a commit that failed): told again from where
            moves = game.move_stack  # they part
            same = 0
            while same < min(len(told), len(moves)) and told[same] == moves[same]:
                same += 1
            events = list(game.events()[same:])
        earlier = sum(len(g) for g in self.games[: deal - 1])
        names, edition = self.names(), self.rules.edition
        new = [log_entry(event, earlier, deal, names, edition) for event in events]
        entries = entries[:same] + new
        texts = texts[:same] + [entry_json(entry) for entry in new]
        self._told[deal] = (moves, entries, texts, game.moves_key())
        return entries, texts

    def take_state_of(self, fresh: LiveGame) -> None:
        """Become ``fresh`` (the same game as just read from the database), keeping who watches and
        the tasks that belong to this process; what was made of the old match is dropped."""
        for name in STORED_FIELDS:
            setattr(self, name, getattr(fresh, name))
        self._told = {}
        self.deal_results = {}
        self.chat_loaded = False  # read again when a client next connects: messages may have been missed


#: what a LiveGame holds of the database (the rest belongs to this process: watchers, tasks, caches)
STORED_FIELDS = (
    "name", "status", "rules", "seed", "seats", "created_at", "updated_at", "match",
    "move_seconds", "game_seconds", "turn_started_at", "rated", "private", "creator_seat",
    "rematch_id", "rematch_of", "rating_changes", "stop_reason",
)  # fmt: skip


def log_entry(
    event: MoveEvent, earlier_moves: int, deal: int, names: list[str], edition: Edition
) -> LogEntry:
    return LogEntry(
        number=earlier_moves + event.number,
        deal=deal,
        round=event.round,
        seat=event.seat,
        move=event.notation(edition),
        cards=list(event.cards),
        revealed=list(event.revealed),
        colour=event.colour,
        joker=event.joker,
        text=event.describe(names, edition),
    )


def entry_json(entry: LogEntry) -> str:
    """A log entry as a state sent over the WebSocket holds it: ``joker`` only on the moves that
    name one (a null on every other move would make a long game's state 2 KB larger)."""
    return entry.model_dump_json(exclude={"joker"} if entry.joker is None else None)


def seat_label(index: int, seat: SeatState) -> str:
    if seat.name:
        return seat.name
    if seat.kind == "bot":
        return f"Bot {index + 1} ({seat.bot})"
    return f"seat {index + 1}"


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "replace")).hexdigest()


def bot_seed(seed: int, seat: int, deal: int, move: int) -> int:
    """A bot's seed for one move: derived one-way from the secret seed, so it reveals nothing."""
    digest = hashlib.sha256(f"bot:{seed}:{seat}:{deal}:{move}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def aware(moment: datetime) -> datetime:
    """SQLite gives back naive datetimes (stored in UTC)."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def now_utc() -> datetime:
    return datetime.now(UTC)


def iso(moment: datetime) -> str:
    return aware(moment).isoformat(timespec="seconds")


def refuse_ended(live: LiveGame) -> None:
    """Refuse to act in a game that has ended (finished, expired, abandoned or cancelled), saying how."""
    if live.status == "finished":
        raise ServiceError("game_over", _("the game is over"), 409)
    if live.status == "expired":
        raise ServiceError("expired", _(EXPIRED_MESSAGE), 409)
    if live.status == "abandoned":
        raise ServiceError("abandoned", _(ABANDONED_MESSAGE), 409)
    if live.status == "cancelled":
        raise ServiceError("cancelled", cancelled_message(), 409)
    if live.status == "stopped":
        raise ServiceError("stopped", stopped_message(live.stop_reason), 409)


def refuse_unless_playing(live: LiveGame, not_begun: str | None = None) -> None:
    """Refuse to act in a game still waiting for players (saying ``not_begun``, or that it
    starts when every seat is taken), or ended, saying how."""
    if live.status == "open":
        raise ServiceError("not_started", not_begun or _("the game starts when every seat is taken"), 409)
    refuse_ended(live)


def cancelled_message() -> str:
    return _("this game was cancelled by the player who created it")


def stopped_message(reason: str | None) -> str:
    return _("a moderator ended this game: {reason}", reason=reason or "—")


def resigned_message() -> str:
    return _("you resigned this game: a bot plays your seat to the end")
