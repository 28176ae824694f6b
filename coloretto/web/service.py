"""The service layer: games in memory, every change committed to the database first.

Each game in progress lives in memory as a :class:`LiveGame` (a
:class:`coloretto.match.Match` and the log of public moves) and in the
database as its rules, its secret seed, its seats and its accepted moves.
Every action goes through :meth:`GameService.act`: checked by the engine,
committed, and only then broadcast. On start-up every unfinished game is
rebuilt by replaying its moves, and bots whose turn it is move again.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import importlib
import importlib.util
import logging
import secrets
import time
import unicodedata
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from coloretto.actions import Action
from coloretto.bots import Bot, BotSpec, BotSpecError, available_bots, check_bot, make_bot
from coloretto.cards import Edition
from coloretto.game import Game, IllegalActionError, MoveEvent
from coloretto.match import Match
from coloretto.record import GameRecord
from coloretto.rules import RULE_OPTIONS, RuleOption, Rules, RulesError
from coloretto.web import views
from coloretto.web.models import GameRow, MoveRow, SeatRow
from coloretto.web.schemas import (
    GAME_NAME_MAX,
    NAME_MAX,
    BotInfo,
    CreateGame,
    GameSummary,
    Hint,
    HintAction,
    Limits,
    LogEntry,
    MatchView,
    Options,
    Replay,
    ReplayFrame,
    RuleOptionInfo,
    SeatView,
    TableState,
)

log = logging.getLogger("coloretto.web")

DIFFICULTIES = ("easy", "medium", "hard", "expert")
#: a game in one of these states is over: ``expired`` ones never began (nobody came to play in time)
ENDED = ("finished", "expired")
EXPIRED_MESSAGE = "this game expired: nobody came to take its free seats in time"


@dataclass(frozen=True)
class Settings:
    """Server settings; the limits are documented in the README's web section."""

    bot_delay: float = 0.8  #: seconds a bot waits before it moves, so people can follow
    hint_budget: float = 1.0  #: seconds of analysis for a hint
    max_message_bytes: int = 4096  #: larger WebSocket messages are refused with an error
    max_frame_bytes: int = 65536  #: larger frames close the connection (code 1009)
    messages_per_second: float = 10.0
    message_burst: int = 20
    flood_disconnect_after: int = 50  #: refused-for-rate messages before the connection is closed
    max_body_bytes: int = 16384  #: HTTP request bodies
    max_connections_per_game: int = 64
    max_waiting_games: int = 500  #: open games waiting for players
    send_queue: int = 256  #: messages queued for a slow client before it is dropped
    #: a bot's budget per move a client may name: its time, or (no time given) its iterations
    max_bot_time: float = 2.0
    max_bot_iterations: int = 20_000
    #: per client (its address): games waiting for players, creations and HTTP requests a minute
    #: (0: no limit); a game with no free seat for a person (against bots only) never waits
    max_waiting_per_client: int = 5
    creations_per_minute: int = 20
    requests_per_minute: int = 600
    #: proxies whose X-Forwarded-For names the client (addresses or networks such as 10.0.0.0/8)
    trusted_proxies: tuple[str, ...] = ()
    #: pages on other sites that may open the game's WebSocket (``https://host[:port]``), besides
    #: the server's own address (the Host header); a browser always sends its page's Origin
    allowed_origins: tuple[str, ...] = ()
    #: seconds a game may wait for players after its creation; then it ends, marked ``expired``
    waiting_expiry: float = 1800.0
    #: who is online is told to a game's watchers at most this often (seconds): a client that
    #: switches seats in a loop makes one message per watcher per interval, not one per switch
    presence_interval: float = 0.5

    def limits(self) -> Limits:
        return Limits(
            max_message_bytes=self.max_message_bytes,
            max_frame_bytes=self.max_frame_bytes,
            messages_per_second=self.messages_per_second,
            message_burst=self.message_burst,
            flood_disconnect_after=self.flood_disconnect_after,
            max_body_bytes=self.max_body_bytes,
            max_connections_per_game=self.max_connections_per_game,
            max_waiting_games=self.max_waiting_games,
            max_bot_time=self.max_bot_time,
            max_bot_iterations=self.max_bot_iterations,
            max_waiting_per_client=self.max_waiting_per_client,
            creations_per_minute=self.creations_per_minute,
            requests_per_minute=self.requests_per_minute,
            waiting_expiry=self.waiting_expiry,
        )

    def check_bot_budget(self, spec: BotSpec) -> None:
        """Refuse a bot whose budget per move is over the server's cap: a time over
        ``max_bot_time``, or iterations alone over ``max_bot_iterations`` (a bot given both
        stops at whichever comes first, so either one within its cap bounds it)."""
        limit = spec.limit
        if limit is None:  # bots that do not search answer at once
            return
        if limit.time is not None and limit.time <= self.max_bot_time:
            return
        if limit.iterations is not None and limit.iterations <= self.max_bot_iterations:
            return
        raise ServiceError(
            "bot_not_allowed",
            f"bot {spec.name!r} thinks for {limit} a move: this server allows at most "
            f"{self.max_bot_time:g} s (or {self.max_bot_iterations} iterations) a move",
        )


class ServiceError(Exception):
    """A refused request: ``code`` for programs, ``message`` for people, ``status`` for HTTP."""

    def __init__(self, code: str, message: str, status: int = 400, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.status = status
        self.retry_after = retry_after  #: seconds, for 429 answers (the Retry-After header)


class Subscriber:
    """A client watching a game (a WebSocket): gets every state change, in order."""

    def __init__(self, max_queue: int) -> None:
        self.seat: int | None = None
        self.queue: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue(max_queue)
        self.dropped = False

    def push(self, message: dict[str, Any]) -> None:
        """Queue a message without waiting; a client too slow to read is dropped."""
        if self.dropped:
            return
        try:
            self.queue.put_nowait(message)
        except asyncio.QueueFull:
            self.dropped = True
            with contextlib.suppress(asyncio.QueueFull):
                self.queue.get_nowait()
                self.queue.put_nowait(None)


@dataclass
class SeatState:
    kind: str
    bot: str | None
    name: str | None
    token_hash: str | None


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
    match: Match  #: the games, their moves, totals and winners: the service keeps no copy of its own
    #: the client address that created it (known for games created since this process started)
    creator: str | None = None
    bots: dict[int, Bot] = field(default_factory=dict)
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    bot_task: asyncio.Task[None] | None = None
    presence_task: asyncio.Handle | None = None  #: a presence broadcast waiting for its interval
    subscribers: set[Subscriber] = field(default_factory=set)
    #: per game of the match: the moves last told in the log, and the log entries made of their events
    #: (kept only because building them anew for every state sent is slow; checked against the game)
    _told: dict[int, tuple[list[Action], list[LogEntry]]] = field(default_factory=dict, repr=False)

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

    def names(self) -> list[str]:
        return [seat_label(i, s) for i, s in enumerate(self.seats)]

    def log(self, deal: int) -> list[LogEntry]:
        """The moves of game ``deal`` of the match, as the game's own events tell them."""
        game = self.games[deal - 1]
        moves = game.move_stack
        told, entries = self._told.get(deal, ([], []))
        if told != moves:
            same = 0  # moves undone (a commit that failed) are told again
            while same < min(len(told), len(moves)) and told[same] == moves[same]:
                same += 1
            earlier = sum(len(g) for g in self.games[: deal - 1])
            names = self.names()
            edition = self.rules.edition
            new = [log_entry(event, earlier, deal, names, edition) for event in game.events()[same:]]
            entries = entries[:same] + new
            self._told[deal] = (moves, entries)
        return list(entries)


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
        text=event.describe(names, edition),
    )


def seat_label(index: int, seat: SeatState) -> str:
    if seat.name:
        return seat.name
    if seat.kind == "bot":
        return f"Bot {index + 1} ({seat.bot})"
    return f"seat {index + 1}"


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "replace")).hexdigest()


def _iso(moment: datetime) -> str:
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.isoformat(timespec="seconds")


def _aware(moment: datetime) -> datetime:
    """SQLite gives back naive datetimes (stored in UTC)."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _now() -> datetime:
    return datetime.now(UTC)


def _bot_seed(seed: int, seat: int, deal: int) -> int:
    """A bot's seed: derived one-way from the secret seed, so it reveals nothing about it."""
    digest = hashlib.sha256(f"bot:{seed}:{seat}:{deal}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


#: the rule option a create request does not name: it is the number of seats
SEATS_OPTION = "players"


def rule_option_info(option: RuleOption) -> RuleOptionInfo:
    """A rule option of the core's table as the lobby's form shows it."""
    choices = option.choices
    return RuleOptionInfo(
        name=option.name,
        label=option.label,
        help=option.help,
        kind="number" if choices is None else "choice",
        default=option.default,
        choices=None if choices is None else list(choices),
        choice_help=None if choices is None else list(option.choice_help),
        minimum=option.minimum,
        maximum=option.maximum,
        optional=option.optional,
        set_by_seats=option.name == SEATS_OPTION,
    )


class GameService:
    """Creates, loads and plays games; the web routes are thin wrappers around it."""

    def __init__(self, sessions: sessionmaker[Session], settings: Settings | None = None) -> None:
        self.sessions = sessions
        self.settings = settings or Settings()
        self.live: dict[str, LiveGame] = {}
        self._analysis: Callable[..., Any] | bool | None = False  # False: not looked up yet
        self._hinting: set[tuple[str, int]] = set()
        self._hint_slots = asyncio.Semaphore(2)
        self._creations: dict[str, deque[float]] = {}  #: per client: when its last games were created
        self._sweeper: asyncio.Task[None] | None = None

    # ---------------------------------------------------------------- start

    async def start(self) -> None:
        """Load every unfinished game and let bots whose turn it is move."""
        with self.sessions() as session:
            ids = session.scalars(select(GameRow.id).where(GameRow.status.not_in(ENDED))).all()
        for game_id in ids:
            try:
                self.live[game_id] = self._load(game_id)
            except Exception:  # a corrupt game must not keep the others from starting
                log.exception("game %s could not be loaded", game_id)
        for live in self.live.values():
            self._schedule_bot(live)
        self.expire_waiting()
        self._sweeper = asyncio.get_running_loop().create_task(self._sweep(), name="expire waiting games")

    async def _sweep(self) -> None:
        """Expire waiting games in the background too (creating and listing games also do)."""
        period = min(60.0, max(0.05, self.settings.waiting_expiry / 4))
        while True:
            await asyncio.sleep(period)
            try:
                self.expire_waiting()
            except Exception:  # the database may be back on the next round
                log.exception("waiting games could not be expired")

    def expire_waiting(self) -> None:
        """End every game still waiting for players ``waiting_expiry`` seconds after its creation:
        stored as ``expired``, no longer listed as open, its watchers told."""
        deadline = _now() - timedelta(seconds=self.settings.waiting_expiry)
        stale = [lv for lv in self.live.values() if lv.status == "open" and _aware(lv.created_at) <= deadline]
        if not stale:
            return
        now = _now()
        with self.sessions() as session, session.begin():
            for live in stale:
                row = session.get(GameRow, live.id)
                if row is not None and row.status == "open":
                    row.status = "expired"
                    row.updated_at = now
        for live in stale:
            live.status = "expired"
            live.updated_at = now
            self._broadcast(live)
            self._evict_if_done(live)

    async def stop(self) -> None:
        if self._sweeper is not None:
            self._sweeper.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._sweeper
        tasks = [lv.bot_task for lv in self.live.values() if lv.bot_task and not lv.bot_task.done()]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        for live in self.live.values():
            for sub in list(live.subscribers):
                sub.push({"type": "bye", "message": "the server is shutting down"})

    def _load(self, game_id: str) -> LiveGame:
        """Rebuild a game from its row, seats and moves, checking every move again."""
        with self.sessions() as session:
            row = session.get(GameRow, game_id)
            if row is None:
                raise ServiceError("not_found", f"there is no game {game_id!r}", 404)
            seats = [SeatState(s.kind, s.bot, s.name, s.token_hash) for s in row.seats]
            moves = session.scalars(
                select(MoveRow).where(MoveRow.game_id == game_id).order_by(MoveRow.number)
            ).all()
            rules = Rules.from_dict(row.rules)
            live = LiveGame(
                id=row.id,
                name=row.name,
                status=row.status,
                rules=rules,
                seed=row.seed,
                seats=seats,
                created_at=row.created_at,
                updated_at=row.updated_at,
                match=Match(rules, row.seed),
            )
            stored = [(m.number, m.seat, m.move) for m in moves]
        self._make_bots(live)
        for number, seat, text in stored:
            if number != live.move_count + 1:
                raise RuntimeError(f"game {game_id}: move {live.move_count + 1} is missing")
            if seat != live.game.to_move:
                raise RuntimeError(f"game {game_id}: move {number} was stored for the wrong seat")
            notation = self._push(live, live.game.parse_action(text.split()[0]))
            self._advance(live)
            if notation != text:
                raise RuntimeError(f"game {game_id}: move {number} replays as {notation!r}, stored {text!r}")
        return live

    def _make_bots(self, live: LiveGame) -> None:
        live.bots = {
            i: make_bot(s.bot or "random", seed=_bot_seed(live.seed, i, live.deal))
            for i, s in enumerate(live.seats)
            if s.kind == "bot"
        }

    # -------------------------------------------------------------- options

    def options(self) -> Options:
        bots = available_bots()
        infos = [
            BotInfo(name=name, description=desc, difficulty=name in DIFFICULTIES)
            for name, desc in bots.items()
            if self._bot_allowed(name)
        ]
        infos.sort(
            key=lambda b: (not b.difficulty, DIFFICULTIES.index(b.name) if b.difficulty else 0, b.name)
        )
        default_bot = "medium" if "medium" in bots else ("greedy" if "greedy" in bots else next(iter(bots)))
        return Options(
            rules=[rule_option_info(option) for option in RULE_OPTIONS],
            bots=infos,
            default_bot=default_bot,
            hints=self.hints_available(),
            limits=self.settings.limits(),
        )

    def _bot_allowed(self, name: str) -> bool:
        """Only the bots a client could name are offered (a bot over the cap would be refused)."""
        try:
            self.settings.check_bot_budget(check_bot(name))
        except (BotSpecError, ServiceError):
            return False
        return True

    # ---------------------------------------------------------------- lobby

    def _check_client(self, client: str, waits: bool) -> None:
        """One client may keep only so many games waiting, and create only so many a minute."""
        settings = self.settings
        if waits and settings.max_waiting_per_client:
            waiting = sum(1 for lv in self.live.values() if lv.status == "open" and lv.creator == client)
            if waiting >= settings.max_waiting_per_client:
                raise ServiceError(
                    "too_many_waiting",
                    f"you already have {waiting} games waiting for players (limit "
                    f"{settings.max_waiting_per_client} an address): wait until they start or expire, "
                    "or play against bots",
                    429,
                    retry_after=60.0,
                )
        if settings.creations_per_minute:
            now = time.monotonic()
            recent = self._creations.get(client)
            if recent is not None:
                while recent and recent[0] <= now - 60.0:
                    recent.popleft()
                if len(recent) >= settings.creations_per_minute:
                    raise ServiceError(
                        "too_many_creations",
                        f"at most {settings.creations_per_minute} games a minute from one address",
                        429,
                        retry_after=max(1.0, recent[0] + 60.0 - now),
                    )

    def _count_creation(self, client: str) -> None:
        if not self.settings.creations_per_minute:
            return
        now = time.monotonic()
        if len(self._creations) > 10_000:  # forget the clients with nothing left in their window
            self._creations = {c: d for c, d in self._creations.items() if d and d[-1] > now - 60.0}
        self._creations.setdefault(client, deque()).append(now)

    def create_game(
        self, request: CreateGame, client: str = "local"
    ) -> tuple[LiveGame, int | None, str | None]:
        rules_data = dict(request.rules)
        players = len(request.seats)
        if SEATS_OPTION in rules_data and rules_data[SEATS_OPTION] != players:
            raise ServiceError(
                "bad_rules", f"rules say {rules_data[SEATS_OPTION]} players but {players} seats are given"
            )
        rules_data[SEATS_OPTION] = players
        try:
            rules = Rules.from_dict(rules_data)
        except RulesError as exc:
            raise ServiceError("bad_rules", str(exc)) from None
        seats: list[SeatState] = []
        for i, spec in enumerate(request.seats):
            if spec.kind == "bot":
                name = (spec.bot or self.options().default_bot).strip()
                try:
                    bot_spec = check_bot(name)
                except BotSpecError as exc:
                    raise ServiceError("bad_bot", f"seat {i + 1}: {exc}") from None
                try:
                    self.settings.check_bot_budget(bot_spec)
                except ServiceError as exc:
                    raise ServiceError(exc.code, f"seat {i + 1}: {exc.message}") from None
                seats.append(SeatState("bot", name, None, None))
            else:
                if spec.bot:
                    raise ServiceError("bad_seat", f"seat {i + 1} is for a person but names a bot")
                seats.append(SeatState("human", None, None, None))
        self.expire_waiting()
        people = sum(1 for s in seats if s.kind == "human")
        waits = people > (1 if request.creator_name is not None else 0)
        self._check_client(client, waits)
        if waits:
            with self.sessions() as session:
                waiting = session.scalar(
                    select(func.count()).select_from(GameRow).where(GameRow.status == "open")
                )
            if (waiting or 0) >= self.settings.max_waiting_games:
                raise ServiceError(
                    "too_many_games",
                    f"{waiting} games are already waiting for players (limit "
                    f"{self.settings.max_waiting_games})",
                    429,
                    retry_after=60.0,
                )
        creator_seat: int | None = None
        token: str | None = None
        if request.creator_name is not None:
            name = clean_name(request.creator_name)
            humans = [i for i, s in enumerate(seats) if s.kind == "human"]
            if not humans:
                raise ServiceError("no_free_seat", "every seat is a bot: there is no seat for the creator")
            creator_seat = humans[0]
            token = secrets.token_urlsafe(24)
            seats[creator_seat].name = name
            seats[creator_seat].token_hash = hash_token(token)
        now = _now()
        status = "playing" if all(s.kind == "bot" or s.name for s in seats) else "open"
        seed = secrets.randbelow(2**63)
        game_id = secrets.token_urlsafe(6)
        title = (
            clean_name(request.name, "a game's name", GAME_NAME_MAX) if request.name.strip() else ""
        ) or f"{players}-player game"
        with self.sessions() as session, session.begin():
            session.add(
                GameRow(
                    id=game_id,
                    name=title,
                    status=status,
                    rules=rules.to_dict(),
                    seed=seed,
                    move_count=0,
                    created_at=now,
                    updated_at=now,
                )
            )
            for i, s in enumerate(seats):
                session.add(
                    SeatRow(
                        game_id=game_id,
                        seat=i,
                        kind=s.kind,
                        bot=s.bot,
                        name=s.name,
                        token_hash=s.token_hash,
                        joined_at=now if s.name else None,
                    )
                )
        live = LiveGame(
            id=game_id,
            name=title,
            status=status,
            rules=rules,
            seed=seed,
            seats=seats,
            created_at=now,
            updated_at=now,
            match=Match(rules, seed),
            creator=client,
        )
        self._make_bots(live)
        self.live[game_id] = live
        self._count_creation(client)
        self._schedule_bot(live)
        return live, creator_seat, token

    async def join(self, game_id: str, name: str, seat: int | None) -> tuple[LiveGame, int, str]:
        live = self.get_live(game_id)
        name = clean_name(name)
        async with live.lock:
            if live.status == "expired":
                raise ServiceError("expired", EXPIRED_MESSAGE, 409)
            if live.status != "open":
                raise ServiceError("not_open", "this game has already started: you can watch it", 409)
            free = [i for i, s in enumerate(live.seats) if s.kind == "human" and not s.name]
            if seat is None:
                if not free:
                    raise ServiceError("no_free_seat", "every seat is taken", 409)
                seat = free[0]
            elif not 0 <= seat < len(live.seats):
                raise ServiceError("bad_seat", f"there is no seat {seat + 1} in this game")
            elif seat not in free:
                what = "a bot's" if live.seats[seat].kind == "bot" else "taken"
                raise ServiceError("seat_taken", f"seat {seat + 1} is {what}", 409)
            token = secrets.token_urlsafe(24)
            now = _now()
            starts = len(free) == 1
            with self.sessions() as session, session.begin():
                row = session.get(SeatRow, (game_id, seat))
                game_row = session.get(GameRow, game_id)
                assert row is not None and game_row is not None
                if row.name is not None:  # another server process took it
                    raise ServiceError("seat_taken", f"seat {seat + 1} is taken", 409)
                row.name = name
                row.token_hash = hash_token(token)
                row.joined_at = now
                game_row.updated_at = now
                if starts:
                    game_row.status = "playing"
            live.seats[seat].name = name
            live.seats[seat].token_hash = hash_token(token)
            live.updated_at = now
            if starts:
                live.status = "playing"
        self._broadcast(live)
        self._schedule_bot(live)
        self._evict_if_done(live)
        return live, seat, token

    def get_live(self, game_id: str) -> LiveGame:
        live = self.live.get(game_id)
        if live is None:
            if len(game_id) > 16:
                raise ServiceError("not_found", "there is no such game", 404)
            try:
                live = self._load(game_id)  # a finished game: rebuilt on demand, not kept
            except ServiceError:
                raise
            except Exception as exc:
                log.exception("game %s could not be loaded", game_id)
                raise ServiceError("unreadable", f"game {game_id} cannot be rebuilt: {exc}", 500) from exc
        return live

    def seat_of(self, live: LiveGame, token: str | None) -> int | None:
        """The seat a token holds in this game; None for no token. A wrong token is an error."""
        if not token:
            return None
        digest = hash_token(token)
        for i, s in enumerate(live.seats):
            if s.token_hash is not None and secrets.compare_digest(s.token_hash, digest):
                return i
        raise ServiceError("bad_token", "this seat token does not belong to any seat of this game", 403)

    def list_games(self, status: str | None = None, limit: int = 50) -> list[GameSummary]:
        self.expire_waiting()
        with self.sessions() as session:
            query = select(GameRow).order_by(GameRow.updated_at.desc()).limit(limit)
            if status:
                query = query.where(GameRow.status == status)
            rows = session.scalars(query).all()
            out = []
            for row in rows:
                live = self.live.get(row.id)
                if live is not None:
                    out.append(self.summary(live))
                    continue
                seats = [SeatState(s.kind, s.bot, s.name, None) for s in row.seats]
                out.append(
                    self._summary(
                        row.id,
                        row.name,
                        row.status,
                        Rules.from_dict(row.rules),
                        seats,
                        row.move_count,
                        row.created_at,
                        row.updated_at,
                        row.result,
                        set(),
                    )
                )
        return out

    def summary(self, live: LiveGame) -> GameSummary:
        result = live.match.result() if live.match.is_over else None
        online = {s.seat for s in live.subscribers if s.seat is not None}
        return self._summary(
            live.id,
            live.name,
            live.status,
            live.rules,
            live.seats,
            live.move_count,
            live.created_at,
            live.updated_at,
            result,
            online,
        )

    @staticmethod
    def _summary(
        game_id: str,
        name: str,
        status: str,
        rules: Rules,
        seats: list[SeatState],
        moves: int,
        created: datetime,
        updated: datetime,
        result: dict[str, Any] | None,
        online: set[int],
    ) -> GameSummary:
        return GameSummary(
            id=game_id,
            name=name,
            status=status,  # type: ignore[arg-type]
            rules=rules.to_dict(),
            rules_text=rules.describe(),
            seats=[
                SeatView(
                    seat=i,
                    kind=s.kind,  # type: ignore[arg-type]
                    bot=s.bot,
                    name=seat_label(i, s) if (s.name or s.kind == "bot") else None,
                    free=s.kind == "human" and not s.name,
                    online=i in online,
                )
                for i, s in enumerate(seats)
            ],
            moves=moves,
            created_at=_iso(created),
            updated_at=_iso(updated),
            winners=result["winners"] if result else None,
            totals=result["totals"] if result else None,
        )

    # ----------------------------------------------------------------- play

    async def act(self, game_id: str, token: str | None, text: str, expect_move: int | None) -> LiveGame:
        """Play one action for the token's seat: checked, committed, then broadcast."""
        live = self.get_live(game_id)
        await self.act_as(live, self.seat_of(live, token), text, expect_move)
        return live

    async def act_as(self, live: LiveGame, seat: int | None, text: str, expect_move: int | None) -> None:
        if seat is None:
            raise ServiceError("not_seated", "you are watching this game: take a seat to play", 403)
        async with live.lock:
            if live.status == "open":
                raise ServiceError("not_started", "the game starts when every seat is taken", 409)
            if live.status == "finished":
                raise ServiceError("game_over", "the game is over", 409)
            if live.status == "expired":
                raise ServiceError("expired", EXPIRED_MESSAGE, 409)
            if expect_move is not None and expect_move != live.move_count:
                raise ServiceError(
                    "stale",
                    f"the table has changed (move {live.move_count}, you saw move {expect_move}): look again",
                    409,
                )
            to_move = live.game.to_move
            if to_move != seat:
                who = live.names()[to_move] if to_move is not None else "nobody"
                raise ServiceError("not_your_turn", f"it is {who}'s turn, not yours", 409)
            try:
                action = live.game.parse_action(text)
            except ValueError as exc:  # NotationError: the text is no action
                raise ServiceError("bad_action", str(exc)) from None
            self._commit(live, seat, action)
        self._broadcast(live)
        self._schedule_bot(live)
        self._evict_if_done(live)

    @staticmethod
    def _push(live: LiveGame, action: Action) -> str:
        """Play an action in the match; returns its record notation (with the cards turned over).
        Raises IllegalActionError, leaving the game unchanged."""
        return live.match.push(action).notation(live.rules.edition)

    @staticmethod
    def _outcome(live: LiveGame) -> tuple[str, dict[str, Any] | None]:
        """The status (and the match result) once the move just pushed is counted."""
        if not live.match.is_over:
            return live.status, None
        return "finished", live.match.result()

    def _advance(self, live: LiveGame) -> None:
        """After a move: a finished game is counted, and the match's next game dealt."""
        if not live.game.is_over:
            return
        if live.match.is_over:
            live.status = "finished"
        else:
            live.match.next_game()
            self._make_bots(live)

    def _commit(self, live: LiveGame, seat: int, action: Action) -> None:
        """Play an action and commit it; if the commit fails, the action is undone."""
        try:
            notation = self._push(live, action)
        except IllegalActionError as exc:
            raise ServiceError("illegal", f"illegal move: {exc}") from None
        status, result = self._outcome(live)
        now = _now()
        try:
            with self.sessions() as session, session.begin():
                session.add(
                    MoveRow(
                        game_id=live.id,
                        number=live.move_count,
                        deal=live.deal,
                        seat=seat,
                        move=notation,
                        created_at=now,
                    )
                )
                row = session.get(GameRow, live.id)
                assert row is not None
                row.move_count = live.move_count
                row.status = status
                row.updated_at = now
                row.result = result
        except Exception as exc:
            log.exception("game %s: could not store move %d", live.id, live.move_count)
            live.match.pop()
            raise ServiceError(
                "storage", "the move could not be saved; nothing was played: try again", 503
            ) from exc
        live.updated_at = now
        self._advance(live)

    # ----------------------------------------------------------------- bots

    def _schedule_bot(self, live: LiveGame) -> None:
        if live.status != "playing" or (live.bot_task is not None and not live.bot_task.done()):
            return
        seat = live.game.to_move
        if seat is None or live.seats[seat].kind != "bot":
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        live.bot_task = loop.create_task(self._bot_turn(live, live.move_count), name=f"bot {live.id}")

    async def _bot_turn(self, live: LiveGame, expected: int) -> None:
        try:
            await asyncio.sleep(self.settings.bot_delay)
            async with live.lock:
                if live.move_count != expected or live.status != "playing":
                    return
                seat = live.game.to_move
                if seat is None or live.seats[seat].kind != "bot":
                    return
                obs = live.game.observation(seat)
                bot = live.bots[seat]
                try:
                    action = await asyncio.to_thread(bot.choose, obs)
                except Exception:
                    log.exception("game %s: bot %s failed; it plays a random legal move", live.id, bot.name)
                    action = None
                if action not in obs.legal_actions:
                    action = obs.legal_actions[secrets.randbelow(len(obs.legal_actions))]
                try:
                    self._commit(live, seat, action)
                except ServiceError as exc:
                    log.error("game %s: bot move refused: %s", live.id, exc.message)
                    await asyncio.sleep(1.0)  # the database may be back; try again
                    live.bot_task = None
                    self._schedule_bot(live)
                    return
            live.bot_task = None
            self._broadcast(live)
            self._schedule_bot(live)
            self._evict_if_done(live)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("game %s: bot turn failed", live.id)

    # ----------------------------------------------------------------- hint

    def _analyze(self) -> Callable[..., Any] | None:
        """``coloretto.analysis.analyze`` (imported on first use: it loads the search kernel)."""
        if self._analysis is False:
            analyze = None
            if importlib.util.find_spec("coloretto.analysis") is not None:
                module = importlib.import_module("coloretto.analysis")
                analyze = getattr(module, "analyze", None)
            self._analysis = analyze
        return self._analysis  # type: ignore[return-value]

    def hints_available(self) -> bool:
        return importlib.util.find_spec("coloretto.analysis") is not None

    async def hint(self, game_id: str, token: str | None, budget: float | None = None) -> Hint:
        live = self.get_live(game_id)
        return await self.hint_for(live, self.seat_of(live, token), budget)

    async def hint_for(self, live: LiveGame, seat: int | None, budget: float | None = None) -> Hint:
        """The analysis of the seat's position: every legal action with its expected score and
        win chance, best first. One hint per seat at a time, two on the server."""
        if not self.hints_available():
            raise ServiceError("no_hints", "hints are not available on this server", 404)
        if seat is None:
            raise ServiceError("not_seated", "only a player can ask for a hint", 403)
        if live.status != "playing" or live.game.to_move != seat:
            raise ServiceError("not_your_turn", "a hint is for your own turn", 409)
        key = (live.id, seat)
        if key in self._hinting:
            raise ServiceError("busy", "your last hint is still being worked out", 429)
        obs = live.game.observation(seat)
        move = live.move_count
        seconds = min(budget or self.settings.hint_budget, 10.0)
        self._hinting.add(key)
        try:
            async with self._hint_slots:
                analyze = self._analyze()
                assert analyze is not None
                values = await asyncio.to_thread(
                    analyze, obs, budget=f"{seconds:g}s", seed=secrets.randbelow(2**31)
                )
        finally:
            self._hinting.discard(key)
        legal = set(obs.legal_actions)
        if any(v.action not in legal for v in values):
            # never advise a move the rules forbid, whatever the analysis answers
            log.error("game %s: the analysis answered actions that are not legal", live.id)
            raise ServiceError("no_hint", "there is no hint for this decision", 409)
        edition = live.rules.edition
        actions = [
            HintAction(
                action=v.action.notation(edition),
                expected_score=round(float(v.expected_score), 2),
                win_probability=round(float(v.win_probability), 3),
                simulations=int(v.simulations),
            )
            for v in values
        ]
        return Hint(move=move, best=actions[0].action if actions else None, actions=actions)

    # ---------------------------------------------------------------- views

    def state(self, live: LiveGame, seat: int | None) -> TableState:
        game = live.game
        obs = game.observation(seat if seat is not None else 0)
        deal_results = [views.deal_result(i + 1, g) for i, g in enumerate(live.games) if g.is_over]
        match = MatchView(
            games=live.rules.match_games,
            current=live.deal,
            totals=list(live.match.totals()),
            deals=deal_results,
            winners=live.match.result()["winners"] if live.match.is_over else None,
        )
        legal: list[str] = []
        if seat is not None and live.status == "playing" and obs.to_move == seat:
            legal = [a.notation(live.rules.edition) for a in obs.legal_actions]
        return TableState(
            game=self.summary(live),
            you=seat,
            move_number=live.move_count,
            deal=live.deal,
            round=obs.round,
            to_move=obs.to_move if live.status == "playing" else None,
            last_round=obs.last_round,
            cards_in_deck=obs.cards_in_deck,
            cards_before_last_round=obs.cards_before_last_round,
            rows=views.rows_view(obs),
            pending_card=obs.pending_card,
            jokers_to_name=list(obs.jokers_to_name),
            start_picks_left=obs.start_picks_left,
            first_player=obs.first_player,
            players=views.players_view(obs),
            legal=legal,
            log=live.log(live.deal),
            match=match,
            cards=views.card_legend(live.rules.edition),
            colours=live.rules.colours,
            bot_delay=self.settings.bot_delay,
        )

    # -------------------------------------------------- finished games only

    def _finished(self, game_id: str) -> LiveGame:
        live = self.get_live(game_id)
        if live.status == "expired":
            raise ServiceError("expired", EXPIRED_MESSAGE + ": it has no record", 409)
        if live.status != "finished":
            raise ServiceError(
                "in_progress", "the record of a game is available once the game (the match) is over", 409
            )
        return live

    def record(self, game_id: str, deal: int = 1) -> GameRecord:
        live = self._finished(game_id)
        if not 1 <= deal <= len(live.games):
            raise ServiceError("not_found", f"this match has games 1 to {len(live.games)}", 404)
        tags = {
            "site": "coloretto serve",
            "game": live.id,
            "name": live.name,
            "date": live.created_at.date().isoformat(),
        }
        if live.rules.match_games > 1:
            tags.update(live.match.progress(deal).to_tags())
        return GameRecord.from_game(live.games[deal - 1], seats=live.names(), tags=tags, include_deck=True)

    def replay(self, game_id: str, deal: int = 1) -> Replay:
        """Every position of a finished game: its own moves undone one by one from the end."""
        live = self._finished(game_id)
        if not 1 <= deal <= len(live.games):
            raise ServiceError("not_found", f"this match has games 1 to {len(live.games)}", 404)
        finished = live.games[deal - 1]
        entries = live.log(deal)
        game = finished.copy()
        frames = []
        for entry in reversed(entries):
            frames.append(self._frame(game, entry))
            game.pop()
        frames.append(self._frame(game, None))
        frames.reverse()
        return Replay(
            game=self.summary(live),
            deal=deal,
            deals=len(live.games),
            frames=frames,
            result=views.deal_result(deal, finished),
            cards=views.card_legend(live.rules.edition),
            colours=live.rules.colours,
        )

    @staticmethod
    def _frame(game: Game, entry: LogEntry | None) -> ReplayFrame:
        obs = game.observation(0)
        return ReplayFrame(
            move_number=entry.number if entry else 0,
            entry=entry,
            round=obs.round,
            to_move=obs.to_move,
            start_picks_left=obs.start_picks_left,
            rows=views.rows_view(obs),
            pending_card=obs.pending_card,
            players=views.players_view(obs),
            cards_in_deck=obs.cards_in_deck,
            cards_before_last_round=obs.cards_before_last_round,
        )

    # ------------------------------------------------------------ broadcast

    def subscribe(self, live: LiveGame, sub: Subscriber) -> None:
        if len(live.subscribers) >= self.settings.max_connections_per_game:
            raise ServiceError(
                "too_many_connections",
                f"this game already has {len(live.subscribers)} connections "
                f"(limit {self.settings.max_connections_per_game})",
                429,
            )
        live.subscribers.add(sub)

    def unsubscribe(self, live: LiveGame, sub: Subscriber) -> None:
        before = self.online(live)
        live.subscribers.discard(sub)
        if self.online(live) != before:
            self.announce(live)  # the seat is shown offline
        self._evict_if_done(live)

    def _evict_if_done(self, live: LiveGame) -> None:
        """A finished game nobody watches leaves memory: it is rebuilt from the database on demand."""
        if live.status in ENDED and not live.subscribers and self.live.get(live.id) is live:
            del self.live[live.id]

    def _broadcast(self, live: LiveGame) -> None:
        """Send each subscriber its own view (its legal actions differ)."""
        if live.presence_task is not None:  # this state tells who is online too
            live.presence_task.cancel()
            live.presence_task = None
        cache: dict[int | None, dict[str, Any]] = {}
        for sub in list(live.subscribers):
            if sub.seat not in cache:
                cache[sub.seat] = {
                    "type": "state",
                    "state": self.state(live, sub.seat).model_dump(mode="json"),
                }
            sub.push(cache[sub.seat])

    @staticmethod
    def online(live: LiveGame) -> set[int]:
        return {s.seat for s in live.subscribers if s.seat is not None}

    def announce(self, live: LiveGame) -> None:
        """Public: tell every subscriber who is online, soon: changes within ``presence_interval``
        of the last one told make one broadcast."""
        if live.presence_task is not None:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self._broadcast(live)
            return

        def flush() -> None:
            live.presence_task = None
            self._broadcast(live)

        live.presence_task = loop.call_later(self.settings.presence_interval, flush)

    def send_state(self, live: LiveGame, sub: Subscriber) -> None:
        """One subscriber's own view, now (its seat changed: its legal actions did)."""
        sub.push({"type": "state", "state": self.state(live, sub.seat).model_dump(mode="json")})


#: characters a name may not hold: controls, and the format characters (bidi overrides and
#: isolates U+202A-U+202E, U+2066-U+2069, marks U+200E/U+200F, zero-width ones), surrogates,
#: private-use and unassigned code points, line and paragraph separators
_REFUSED_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})


def clean_name(name: str, what: str = "a name", longest: int = NAME_MAX) -> str:
    """A name as shown at the table: runs of spaces made one, stripped; printable characters only
    (the same check on every database: PostgreSQL refuses a NUL, SQLite would keep it)."""
    for i, char in enumerate(name):
        if unicodedata.category(char) in _REFUSED_CATEGORIES:
            raise ServiceError(
                "bad_name",
                f"{what} may hold only printable characters: U+{ord(char):04X} at character {i + 1} is a "
                "control or direction-changing character",
            )
    cleaned = " ".join(name.split())
    if not cleaned:
        raise ServiceError("bad_name", f"{what} cannot be empty")
    if len(cleaned) > longest:
        raise ServiceError("bad_name", f"{what} has at most {longest} characters, not {len(cleaned)}")
    return cleaned
