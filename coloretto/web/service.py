"""The game server: lobby, seats and play, every change committed to the database before anyone
is told.

Each game in progress lives in memory as a :class:`~coloretto.web.live.LiveGame`
(the core's :class:`~coloretto.match.Match` plus the table) and in the
database as its rules, its secret seed, its seats and its accepted moves.
Every action goes through :meth:`GameService.act_as`: checked by the engine,
committed by the group-commit writer (:mod:`coloretto.web.writer`), and only
then broadcast here and published to the other server processes.

The layers: :mod:`~coloretto.web.store` reads and writes the database,
:mod:`~coloretto.web.live` keeps a game in play, :mod:`~coloretto.web.botrunner`
runs the bots and clocks of the games this process owns (bots think in
:mod:`~coloretto.web.workers`), :mod:`~coloretto.web.hints` works out hints,
:mod:`~coloretto.web.views` and :mod:`~coloretto.web.broadcast` say what
clients see, and :mod:`~coloretto.web.cluster` joins server processes.

Several processes share one PostgreSQL database and one Redis: any process
accepts any client and applies its actions under the database's guard (one
move number, one move); the process holding a game's lease runs its bots and
clock; every change is published so that watchers anywhere see it at once;
a game whose owner died is adopted by another process within seconds.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import hashlib
import logging
import random
import secrets
import time
import unicodedata
from collections import deque
from datetime import datetime, timedelta
from functools import partial
from typing import Any, TypeVar

from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from coloretto.actions import Action
from coloretto.arena.stats import place_seats
from coloretto.bots import BotSpecError, available_bots, check_bot
from coloretto.game import IllegalActionError
from coloretto.match import Match
from coloretto.record import GameRecord
from coloretto.rules import RULE_OPTIONS, RuleOption, Rules, RulesError
from coloretto.web import store, views
from coloretto.web.accounts import Accounts, User, name_key
from coloretto.web.botrunner import BotRunner
from coloretto.web.broadcast import Broadcaster, Subscriber
from coloretto.web.chat import ChatLimit, clean_chat
from coloretto.web.cluster import Bus, LocalBus, RedisBus, cancel_and_wait, open_bus
from coloretto.web.errors import ServiceError
from coloretto.web.faults import inject
from coloretto.web.hints import Hints, hints_available
from coloretto.web.i18n import CHOICE_CONTEXT, explained, language, pgettext
from coloretto.web.i18n import gettext as _
from coloretto.web.incidents import Incidents
from coloretto.web.live import (
    ABANDONED_MESSAGE,
    ENDED,
    EXPIRED_MESSAGE,
    LiveGame,
    SeatState,
    aware,
    cancelled_message,
    hash_token,
    log_entry,
    now_utc,
    refuse_ended,
    refuse_unless_playing,
    seat_label,
)
from coloretto.web.ratings import DIFFICULTIES, Ratings, rating_job
from coloretto.web.reviews import Reviews
from coloretto.web.schemas import (
    GAME_NAME_MAX,
    NAME_MAX,
    BotInfo,
    ChatEntry,
    CreateGame,
    GameSummary,
    Hint,
    Options,
    RatingChange,
    Replay,
    RuleOptionInfo,
    TableState,
)
from coloretto.web.settings import Settings
from coloretto.web.workers import BotPool, shared_pool
from coloretto.web.writer import GroupCommitWriter

__all__ = [
    "ENDED",
    "GameService",
    "LiveGame",
    "SeatState",
    "ServiceError",
    "Settings",
    "Subscriber",
    "clean_name",
    "log_entry",
    "seat_label",
]

log = logging.getLogger("coloretto.web")

T = TypeVar("T")

#: the rule option a create request does not name: it is the number of seats
SEATS_OPTION = "players"
#: how often a process tells the others which seats are online through it (they forget after
#: :data:`coloretto.web.live.PRESENCE_TTL`)
PRESENCE_EVERY = 10.0
#: how often games are expired, abandoned, and dropped from memory when nobody here needs them
SWEEP_EVERY = 5.0
#: games read at once while adopting the games of a process that died
ADOPT_READS = 4
#: seconds before a state that could not be shown is sent again
RETELL_PAUSE = 0.5


def rule_option_info(option: RuleOption) -> RuleOptionInfo:
    """A rule option of the core's table as the lobby's form shows it."""
    choices = option.choices
    return RuleOptionInfo(
        name=option.name,
        label=_(option.label),
        help=_(option.help),
        kind="number" if choices is None else "choice",
        default=option.default,
        choices=None if choices is None else list(choices),
        choice_labels=None if choices is None else [pgettext(CHOICE_CONTEXT, c) for c in choices],
        choice_help=None if choices is None else [_(text) for text in option.choice_help],
        minimum=option.minimum,
        maximum=option.maximum,
        optional=option.optional,
        set_by_seats=option.name == SEATS_OPTION,
    )


def creator_digest(client: str) -> str:
    """What the database keeps of the address that created a game: enough to count, not the address."""
    return hashlib.sha256(f"creator:{client}".encode()).hexdigest()[:32]


#: the cyclic garbage collector's thresholds while serving (see tune_garbage_collector)
GC_THRESHOLDS = (700, 10, 1_000)


def tune_garbage_collector() -> None:
    """Keep the collector from pausing the event loop. A full collection scans every object the
    server holds (500 games in play: 50-160 ms each, several a minute by Python's defaults, the
    worst waits at the table and on /api/health). What exists at start (the libraries, the games
    loaded) lives as long as the server: it is frozen out of the collector's sight; and full
    collections are made rare. Almost nothing the server makes is freed by the cycle collector
    rather than by reference counting, so memory does not grow for it."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)


class GameService:
    """Creates, loads and plays games; the web routes are thin wrappers around it."""

    def __init__(
        self,
        sessions: sessionmaker[Session],
        settings: Settings | None = None,
        *,
        bus: Bus | None = None,
        pool: BotPool | None = None,
    ) -> None:
        self.sessions = sessions
        self.settings = settings or Settings()
        self.live: dict[str, LiveGame] = {}
        self.writer = GroupCommitWriter(sessions)
        self.bus = bus if bus is not None else open_bus(self.settings.redis_url)
        self._pool = pool
        self.fanout = Broadcaster(self.state, self.settings.presence_interval)
        #: the live path's errors, logged and counted (see coloretto.web.incidents)
        self.incidents = Incidents()
        self.fanout.incidents = self.incidents
        self.bots = BotRunner(self)
        #: set once stop() begins: no bot turn or clock starts any more
        self.stopping = False
        self.hints = Hints(self.pool, self.settings.hint_budget)
        self.reviews = Reviews(self)
        self.accounts = Accounts(self)
        self.ratings = Ratings(self)
        #: chat messages per seat or logged-in spectator (each connection has its own limit too)
        self.chat_limit = ChatLimit(self.settings.chat_messages, self.settings.chat_seconds)
        self._creations: dict[str, deque[float]] = {}  #: per client: when its last games were created
        self._loading: dict[str, asyncio.Future[LiveGame]] = {}
        self._outbox: asyncio.Queue[tuple[str, dict[str, Any]]] | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._background: set[asyncio.Task[Any]] = set()
        #: games in memory the database was ahead of on the last round: game -> (moves, status) stored
        self._behind: dict[str, tuple[int, str]] = {}

    @property
    def clustered(self) -> bool:
        """Other server processes share the database (a Redis bus joins them)."""
        return not isinstance(self.bus, LocalBus)

    def pool(self) -> BotPool:
        if self._pool is None:
            self._pool = shared_pool(self.settings.bot_workers, self.settings.worker_job_timeout)
        return self._pool

    def owns(self, live: LiveGame) -> bool:
        return self.bus.owns(live.id)

    # ---------------------------------------------------------------- start

    async def start(self) -> None:
        """Start the writer, the bot workers (warming in the background) and the bus; load the
        games this process runs and let bots whose turn it is move."""
        self.writer.start()
        self.pool()
        self.bus.on_lost = self._lease_lost
        if isinstance(self.bus, RedisBus):
            self.bus.on_reconnect = self._resync
        await self.bus.start(self._on_event)
        loop = asyncio.get_running_loop()
        if self.clustered:
            self._outbox = asyncio.Queue()
            self._tasks.append(loop.create_task(self._publisher(), name="publish events"))
            self._tasks.append(loop.create_task(self._adopt_loop(), name="adopt games"))
            self._tasks.append(loop.create_task(self._presence_loop(), name="tell presence"))
        else:
            ids = await self._read(partial(store.unfinished_ids, ended=ENDED))
            for game_id in ids:
                try:
                    live = await self._replayed(game_id)
                except Exception:  # a corrupt game must not keep the others from starting
                    log.exception("game %s could not be loaded", game_id)
                    continue
                await self.bus.acquire(game_id)
                self.live[game_id] = live
            for live in self.live.values():
                self.bots.schedule(live)
        await self.expire_waiting()
        self._tasks.append(loop.create_task(self._sweep(), name="expire and abandon games"))
        self._tasks.append(loop.create_task(self._watchdog(), name="watchdog"))
        tune_garbage_collector()

    async def stop(self) -> None:
        self.stopping = True
        await self.reviews.stop()  # before the writer closes: each stores that it stopped
        await cancel_and_wait(self._tasks)  # they talk to Redis, which can lose a cancel
        self._tasks = []
        tasks = [lv.bot_task for lv in self.live.values() if lv.bot_task and not lv.bot_task.done()]
        for live in self.live.values():
            self.bots.cancel(live)
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        for live in self.live.values():
            for sub in list(live.subscribers):
                with language(sub.language):
                    sub.push({"type": "bye", "message": _("the server is shutting down")})
        await self.writer.close()
        with contextlib.suppress(Exception):
            await self.bus.close()

    async def _read(self, job: Any) -> Any:
        """A read of the database, in a thread: the event loop only waits."""

        def run() -> Any:
            with self.sessions() as session:
                return job(session)

        return await asyncio.to_thread(run)

    async def _write(self, job: Any) -> Any:
        return await self.writer.write(job)

    # ------------------------------------------------------------- loading

    def _replay(self, stored: store.StoredGame) -> LiveGame:
        """Play a stored game's moves again, checking every one."""
        live = stored.live
        for number, seat, text in stored.moves:
            if number != live.move_count + 1:
                raise RuntimeError(f"game {live.id}: move {live.move_count + 1} is missing")
            if seat != live.game.to_move:
                raise RuntimeError(f"game {live.id}: move {number} was stored for the wrong seat")
            notation = live.match.push(live.game.parse_action(text.split()[0])).notation(live.rules.edition)
            self._advance(live)
            if notation != text:
                raise RuntimeError(f"game {live.id}: move {number} replays as {notation!r}, stored {text!r}")
        return live

    async def _stored(self, game_id: str) -> store.StoredGame:
        stored = await self._read(partial(store.read_game, game_id=game_id))
        if stored is None:
            raise ServiceError("not_found", _("there is no game {game}", game=repr(game_id)), 404)
        return stored

    async def _replayed(self, game_id: str) -> LiveGame:
        return await asyncio.to_thread(self._replay, await self._stored(game_id))

    async def get_live(self, game_id: str, keep: bool = False) -> LiveGame:
        """The game in memory, read from the database if it is not. A game in progress stays in
        memory while it is watched here (else until the next sweep), kept up to date through the
        other processes' events; a game that is over only with ``keep`` (a client that watches
        it: its chat, who watches and its rematch are still told)."""
        live = self.live.get(game_id)
        if live is None:
            live = await self._load(game_id)
        if keep and live.status in ENDED:
            live = self.live.setdefault(game_id, live)
        return live

    async def _load(self, game_id: str) -> LiveGame:
        if len(game_id) > 16:
            raise ServiceError("not_found", _("there is no such game"), 404)
        loading = self._loading.get(game_id)
        if loading is not None:
            return await asyncio.shield(loading)
        future: asyncio.Future[LiveGame] = asyncio.get_running_loop().create_future()
        self._loading[game_id] = future
        try:
            live = await self._replayed(game_id)
        except ServiceError as exc:
            future.set_exception(exc)
            raise
        except Exception as exc:
            log.exception("game %s could not be loaded", game_id)
            error = ServiceError(
                "unreadable", _("game {game} cannot be rebuilt: {problem}", game=game_id, problem=exc), 500
            )
            future.set_exception(error)
            raise error from exc
        finally:
            del self._loading[game_id]
            if future.done() and future.exception() is not None:
                future.exception()  # retrieved: no "never retrieved" warning
        if live.status not in ENDED:
            live = self.live.setdefault(game_id, live)
        future.set_result(live)
        return live

    async def catch_up(self, live: LiveGame) -> None:
        """With several processes: a copy of a game run elsewhere is read again if the database has
        moved past it (its owner died between a commit and its event), before a client that
        (re)connects here is shown it."""
        if not self.clustered or self.owns(live):
            return
        stored = await self._read(partial(store.stored_progress, ids=[live.id]))
        if stored.get(live.id, (live.move_count, live.status)) != (live.move_count, live.status):
            async with live.lock:
                await self._refresh(live)
            self.tell(live)  # those who watch here already: the moves they have not seen

    async def _refresh(self, live: LiveGame) -> None:
        """Read the game again from the database (another process changed it). Holds its lock."""
        stored = await self._stored(live.id)
        self._step_to(live, stored.moves, await asyncio.to_thread(self._replay, stored))

    def _step_to(self, live: LiveGame, moves: list[tuple[int, int, str]], fresh: LiveGame) -> None:
        """Make ``live`` the ``fresh`` copy of the same game just replayed from the database's
        ``moves``. Its watchers are shown every move in order, those this process was never told
        about too (an event that came late, a process killed between its commit and its event, a
        game adopted from another process): the missing moves but the last are played here one
        by one, each one's state sent; the caller sends the last. Table animations follow them."""
        for number, seat, text in moves[live.move_count : -1]:
            if number != live.move_count + 1 or live.status in ENDED or not live.subscribers:
                break
            try:
                self._apply_remote_move(
                    live, {"move": text, "seat": seat, "at": fresh.updated_at.isoformat()}
                )
            except Exception:  # this copy went another way: the fresh one replaces it at once
                break
            self.tell(live)
        live.take_state_of(fresh)
        live.read_at = time.monotonic()

    # -------------------------------------------------------------- options

    def options(self) -> Options:
        bots = available_bots()
        infos = [
            BotInfo(name=name, description=_(desc), difficulty=name in DIFFICULTIES)
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
            hints=hints_available(),
            limits=self.settings.limits(),
        )

    def _bot_allowed(self, name: str) -> bool:
        """Only the bots a client could name are offered (a bot over the cap would be refused)."""
        try:
            self.settings.check_bot_budget(check_bot(name, files=False))
        except (BotSpecError, ServiceError):
            return False
        return True

    # ---------------------------------------------------------------- lobby

    async def _check_client(self, client: str, waits: bool) -> None:
        """One client may keep only so many games waiting, and create only so many a minute."""
        settings = self.settings
        if settings.creations_per_minute:
            now = time.monotonic()
            recent = self._creations.get(client)
            if recent is not None:
                while recent and recent[0] <= now - 60.0:
                    recent.popleft()
                if len(recent) >= settings.creations_per_minute:
                    raise ServiceError(
                        "too_many_creations",
                        _(
                            "at most {limit} games a minute from one address",
                            limit=settings.creations_per_minute,
                        ),
                        429,
                        retry_after=max(1.0, recent[0] + 60.0 - now),
                    )
        if waits and settings.max_waiting_per_client:
            waiting = await self._read(partial(store.count_waiting, creator=creator_digest(client)))
            if waiting >= settings.max_waiting_per_client:
                raise ServiceError(
                    "too_many_waiting",
                    _(
                        "you already have {waiting} games waiting for players (limit {limit} an address): "
                        "wait until they start or expire, or play against bots",
                        waiting=waiting,
                        limit=settings.max_waiting_per_client,
                    ),
                    429,
                    retry_after=60.0,
                )

    def _count_creation(self, client: str) -> None:
        if not self.settings.creations_per_minute:
            return
        now = time.monotonic()
        if len(self._creations) > 10_000:  # forget the clients with nothing left in their window
            self._creations = {c: d for c, d in self._creations.items() if d and d[-1] > now - 60.0}
        self._creations.setdefault(client, deque()).append(now)

    def _seats_of(self, request: CreateGame) -> list[SeatState]:
        seats: list[SeatState] = []
        for i, spec in enumerate(request.seats):
            if spec.kind == "bot":
                name = (spec.bot or self.options().default_bot).strip()
                if request.rated and name not in DIFFICULTIES:
                    raise ServiceError(
                        "bad_bot",
                        _(
                            "seat {seat}: the bots of a rated table are the difficulty levels {levels}, "
                            "each rated as a player",
                            seat=i + 1,
                            levels=", ".join(DIFFICULTIES),
                        ),
                    )
                try:
                    bot_spec = check_bot(name, files=False)
                except BotSpecError as exc:
                    raise ServiceError(
                        "bad_bot", _("seat {seat}: {problem}", seat=i + 1, problem=explained(exc))
                    ) from None
                try:
                    self.settings.check_bot_budget(bot_spec)
                except ServiceError as exc:
                    raise ServiceError(
                        exc.code, _("seat {seat}: {problem}", seat=i + 1, problem=exc.message)
                    ) from None
                seats.append(SeatState("bot", name, None, None))
            else:
                if spec.bot:
                    raise ServiceError(
                        "bad_seat", _("seat {seat} is for a person but names a bot", seat=i + 1)
                    )
                seats.append(SeatState("human", None, None, None))
        if request.rated and all(seat.kind == "bot" for seat in seats):
            raise ServiceError("bad_seat", _("a rated table needs a seat for a person"))
        return seats

    @staticmethod
    def _read_rules(rules_data: dict[str, Any]) -> Rules:
        try:
            return Rules.from_dict(rules_data)
        except RulesError as exc:
            raise ServiceError("bad_rules", explained(exc)) from None

    async def create_game(
        self, request: CreateGame, client: str = "local", user: User | None = None
    ) -> tuple[LiveGame, int | None, str | None]:
        """Create a game; with ``creator_name`` the creator takes the first person's seat (a
        logged-in creator under their account's name, the seat theirs wherever they log in)."""
        rules_data = dict(request.rules)
        players = len(request.seats)
        if SEATS_OPTION in rules_data:
            # a player count that is no player count is refused for what it is first
            self._read_rules({SEATS_OPTION: rules_data[SEATS_OPTION]})
        if SEATS_OPTION in rules_data and rules_data[SEATS_OPTION] != players:
            raise ServiceError(
                "bad_rules",
                _(
                    "rules say {players} players but {seats} seats are given",
                    players=rules_data[SEATS_OPTION],
                    seats=players,
                ),
            )
        rules_data[SEATS_OPTION] = players
        rules = self._read_rules(rules_data)
        seats = self._seats_of(request)
        clock = request.clock
        if clock is not None and clock.move_seconds is None and clock.game_seconds is None:
            raise ServiceError("bad_clock", _("a clock gives move_seconds, game_seconds or both"))
        people = sum(1 for s in seats if s.kind == "human")
        waits = people > (1 if request.creator_name is not None else 0)
        creator_seat: int | None = None
        token: str | None = None
        if request.creator_name is not None:
            name = await self._guest_name(request.creator_name) if user is None else user.name
            humans = [i for i, s in enumerate(seats) if s.kind == "human"]
            if not humans:
                raise ServiceError("no_free_seat", _("every seat is a bot: there is no seat for the creator"))
            if request.rated and user is None:
                raise ServiceError(
                    "login_required", _("the people of a rated table are logged in: log in to sit down"), 403
                )
            creator_seat = humans[0]
            token = secrets.token_urlsafe(24)
            seats[creator_seat].name = name
            seats[creator_seat].token_hash = hash_token(token)
            seats[creator_seat].user_id = user.id if user is not None else None
        title = (
            clean_name(request.name, _("a game's name"), GAME_NAME_MAX) if request.name.strip() else ""
        ) or _("{players}-player game", players=players)
        await self._may_create(client, waits)
        now = now_utc()
        status = "playing" if all(s.kind == "bot" or s.name for s in seats) else "open"
        seed = secrets.randbelow(2**63)
        game_id = secrets.token_urlsafe(6)
        new = store.NewGame(
            id=game_id,
            name=title,
            status=status,
            rules=rules.to_dict(),
            seed=seed,
            seats=seats,
            created_at=now,
            move_seconds=clock.move_seconds if clock else None,
            game_seconds=clock.game_seconds if clock else None,
            creator=creator_digest(client) if waits else None,
            creator_seat=creator_seat,
            rated=request.rated,
            private=request.private,
        )
        self._count_creation(client)
        live = await self._store_new_game(new, store.insert_game)
        assert live is not None
        return live, creator_seat, token

    async def _store_new_game(self, new: store.NewGame, write: Any, **args: Any) -> LiveGame | None:
        """Store a new game with ``write(session, new=new, **args)`` (which answers the id of the
        game it stored, or of another one it found instead, or None) and run it here; None when
        ``write`` stored another game instead."""
        # the lease first: once the game is stored, another process's adoption could take it, and
        # this process would run a game none of its clients are connected to
        try:
            if not await self.bus.acquire(new.id):
                raise RuntimeError(f"the lease of the new game {new.id} is held by another process")
            stored = await self._write(partial(write, new=new, **args))
        except Exception as exc:
            log.exception("a game could not be stored")
            with contextlib.suppress(Exception):
                await self.bus.release(new.id)
            raise ServiceError("storage", _("the game could not be saved: try again"), 503) from exc
        if stored is not None and stored != new.id:
            await self.bus.release(new.id)
            return None
        rules = Rules.from_dict(new.rules)
        live = LiveGame(
            id=new.id,
            name=new.name,
            status=new.status,
            rules=rules,
            seed=new.seed,
            seats=new.seats,
            created_at=new.created_at,
            updated_at=new.created_at,
            match=Match(rules, new.seed),
            move_seconds=new.move_seconds,
            game_seconds=new.game_seconds,
            turn_started_at=new.created_at if new.status == "playing" else None,
            rated=new.rated,
            private=new.private,
            creator_seat=new.creator_seat,
            rematch_of=new.rematch_of,
        )
        self.live[new.id] = live
        self.bots.schedule(live)
        return live

    async def join(
        self,
        game_id: str,
        name: str | None,
        seat: int | None,
        user: User | None = None,
        rematch_token: str | None = None,
    ) -> tuple[LiveGame, int, str]:
        """Take a free seat: a guest under ``name``, a logged-in person under their account's name
        (the seat theirs wherever they log in). A rematch's seat kept for someone is theirs alone:
        an account's by logging in, a guest's by ``rematch_token``, their token of the game before."""
        live = await self.get_live(game_id)
        if user is not None:
            name = user.name
        elif name is None:
            raise ServiceError("bad_name", _("give your name to sit down"))
        else:
            name = await self._guest_name(name)
        proof = hash_token(rematch_token) if rematch_token else None
        async with live.lock:
            seat, token = await self._take_seat_locked(live, name, seat, user, proof)
        self._changed(live, {"type": "reload"})
        return live, seat, token

    async def _guest_name(self, name: str) -> str:
        """A guest's seat name, cleaned; an account's name (in any case) is refused, so that a
        guest cannot sit at a table as someone with an account."""
        cleaned = clean_name(name)
        if await self._read(partial(store.user_by_key, name_key=name_key(cleaned))) is not None:
            raise ServiceError(
                "name_taken",
                _(
                    "{name} is the name of an account: log in to play under it, or choose another name",
                    name=cleaned,
                ),
                409,
            )
        return cleaned

    async def _take_seat_locked(
        self, live: LiveGame, name: str, seat: int | None, user: User | None, proof: str | None
    ) -> tuple[int, str]:
        """Give a free seat to a person (the caller holds the game's lock): the seat and its token."""
        if live.status == "expired":
            raise ServiceError("expired", _(EXPIRED_MESSAGE), 409)
        if live.status == "cancelled":
            raise ServiceError("cancelled", cancelled_message(), 409)
        if live.status != "open":
            raise ServiceError("not_open", _("this game has already started: you can watch it"), 409)
        if live.rated and user is None:
            raise ServiceError(
                "login_required", _("the people of a rated table are logged in: log in to sit down"), 403
            )
        if user is not None and (held := live.seat_of_user(user.id)) is not None:
            raise ServiceError(
                "already_seated", _("you already sit at seat {seat} of this game", seat=held + 1), 409
            )
        free = [i for i, s in enumerate(live.seats) if s.free]

        def kept_for_me(i: int) -> bool:
            kept = live.seats[i]
            if user is not None and kept.user_id == user.id:
                return True
            return (
                proof is not None
                and kept.reserved_hash is not None
                and secrets.compare_digest(kept.reserved_hash, proof)
            )

        mine = [i for i in free if kept_for_me(i)]
        unkept = [i for i in free if not live.seats[i].reserved]
        if proof is not None and not any(
            kept_for_me(i) for i in range(len(live.seats)) if live.seats[i].reserved_hash
        ):
            raise ServiceError("bad_token", _("this token keeps no seat of this game"), 403)
        if seat is None:
            if not (mine or unkept):
                if free:
                    raise ServiceError(
                        "reserved",
                        _("every free seat is kept for a player of the game before (a rematch)"),
                        409,
                    )
                raise ServiceError("no_free_seat", _("every seat is taken"), 409)
            seat = (mine or unkept)[0]
        elif not 0 <= seat < len(live.seats):
            raise ServiceError("bad_seat", _("there is no seat {seat} in this game", seat=seat + 1))
        elif seat not in free:
            what = (
                _("seat {seat} is a bot's", seat=seat + 1)
                if live.seats[seat].kind == "bot"
                else _("seat {seat} is taken", seat=seat + 1)
            )
            raise ServiceError("seat_taken", what, 409)
        elif live.seats[seat].reserved and seat not in mine:
            raise ServiceError(
                "reserved",
                _("seat {seat} is kept for a player of the game before (a rematch)", seat=seat + 1),
                409,
            )
        token = secrets.token_urlsafe(24)
        now = now_utc()
        user_id = user.id if user is not None else None
        try:
            taken = await self._write(
                partial(
                    store.take_seat,
                    game_id=live.id,
                    seat=seat,
                    name=name,
                    token_hash=hash_token(token),
                    now=now,
                    user_id=user_id,
                )
            )
        except IntegrityError:  # the account took another seat through another process meanwhile
            await self._refresh(live)
            raise ServiceError("already_seated", _("you already sit at this game"), 409) from None
        except Exception as exc:
            log.exception("game %s: a seat could not be stored", live.id)
            raise ServiceError("storage", _("the seat could not be saved: try again"), 503) from exc
        if not taken.taken:  # another server process gave it away first
            await self._refresh(live)
            raise ServiceError("seat_taken", _("seat {seat} is taken", seat=seat + 1), 409)
        taker = live.seats[seat]
        taker.name, taker.token_hash = name, hash_token(token)
        taker.user_id, taker.reserved_hash = user_id, None
        live.updated_at = now
        if taken.starts:
            live.status = "playing"
            live.turn_started_at = now
        return seat, token

    async def find_seat(self, live: LiveGame, token: str | None, user_id: int | None = None) -> int | None:
        """The seat of a token (:meth:`seat_of`), else of a logged-in account (``user_id``): None
        for a spectator. With several processes a seat taken through another one may not have
        reached this copy yet: a token of no seat here, or an account that holds none while the
        game waits for players, reads the game again first (at most once a second)."""
        if not token:
            if user_id is None:
                return None
            seat = live.seat_of_user(user_id)
            if (
                seat is None
                and self.clustered
                and live.status == "open"
                and time.monotonic() - live.read_at >= 1.0
            ):
                async with live.lock:
                    await self._refresh(live)
                self.tell(live)
                seat = live.seat_of_user(user_id)
            return seat
        try:
            return self.seat_of(live, token)
        except ServiceError:
            # a wrong token costs a read of the game at most once a second
            if not self.clustered or time.monotonic() - live.read_at < 1.0:
                raise
        async with live.lock:
            await self._refresh(live)
        self.tell(live)
        return self.seat_of(live, token)

    def seat_of(self, live: LiveGame, token: str | None) -> int | None:
        """The seat a token holds in this game; None for no token. A wrong token is an error."""
        if not token:
            return None
        digest = hash_token(token)
        for i, s in enumerate(live.seats):
            if s.token_hash is not None and secrets.compare_digest(s.token_hash, digest):
                return i
        raise ServiceError("bad_token", _("this seat token does not belong to any seat of this game"), 403)

    async def list_games(
        self, status: str | None = None, limit: int = 50, user_id: int | None = None
    ) -> list[GameSummary]:
        """The lobby's games; with ``user_id``, that account's own (private ones too)."""
        await self.expire_waiting()
        rows = await self._read(partial(store.list_games, status=status, limit=limit, user_id=user_id))
        out = []
        for row in rows:
            live = self.live.get(row.id)
            out.append(views.summary(live) if live is not None else views.listed_summary(row))
        return out

    def summary(self, live: LiveGame) -> GameSummary:
        return views.summary(live)

    # ------------------------------------------------------- ending games

    async def _sweep(self) -> None:
        """Expire waiting games and abandon stalled ones in the background (creating and listing
        games expire them too)."""
        period = min(SWEEP_EVERY, max(0.05, self.settings.waiting_expiry / 4))
        while True:
            await asyncio.sleep(period)
            try:
                for live in list(self.live.values()):
                    self._evict_soon(live)
                await self.expire_waiting()
                await self._abandon_stalled()
                await self.accounts.purge()
            except Exception:  # the database may be back on the next round
                log.exception("games could not be expired or abandoned")

    async def _watchdog(self) -> None:
        """The last guard of every game this process runs: one whose bot or clock should have
        moved it on by now and has not (:meth:`BotRunner.stuck`) is reported and recovered. With
        several processes each looks at the games whose leases it holds; a game whose owner died
        is adopted by another (a lease nobody renews lapses)."""
        while True:
            await asyncio.sleep(self.settings.watchdog_every)
            for live in list(self.live.values()):
                try:
                    why = self.bots.stuck(live)
                except Exception as exc:
                    self.incidents.record("watchdog", live, "the watchdog could not look at the game", exc)
                    continue
                if why is None:
                    continue
                self.incidents.record("watchdog", live, f"the game is stuck: {why}; it is read again")
                task = live.bot_task
                if task is not None and not task.done():
                    task.cancel()  # a move it was storing is still played (commit_move)
                live.bot_task = None
                live.changed_at = time.monotonic()  # looked at again only after another stuck_after
                self.spawn(self.recover(live))

    async def expire_waiting(self) -> None:
        """End every game this process runs that is still waiting for players ``waiting_expiry``
        seconds after its creation: stored as ``expired``, no longer listed as open, watchers told."""
        deadline = now_utc() - timedelta(seconds=self.settings.waiting_expiry)
        stale = [
            lv
            for lv in self.live.values()
            if lv.status == "open" and aware(lv.created_at) <= deadline and self.owns(lv)
        ]
        await self._end(stale, "open", "expired")

    async def _abandon_stalled(self) -> None:
        """An untimed game in which the person to move has not moved for ``abandon_after`` seconds
        cannot be finished: it ends as ``abandoned`` (a timed table's bots would finish it)."""
        deadline = now_utc() - timedelta(seconds=self.settings.abandon_after)
        stalled = []
        for live in self.live.values():
            if live.status != "playing" or live.timed or not self.owns(live):
                continue
            seat = live.game.to_move
            if seat is not None and not live.bot_plays(seat) and aware(live.updated_at) <= deadline:
                stalled.append(live)
        await self._end(stalled, "playing", "abandoned")

    async def _end(self, games: list[LiveGame], was: str, becomes: str) -> None:
        if not games:
            return
        now = now_utc()
        changed = set(
            await self._write(
                partial(store.end_games, ids=[lv.id for lv in games], was=was, becomes=becomes, now=now)
            )
        )
        for live in games:
            if live.id not in changed:
                continue
            live.status = becomes
            live.updated_at = now
            self.bots.cancel(live)
            self._changed(live, {"type": "reload"})

    # ----------------------------------------------------------------- play

    async def act(
        self, game_id: str, token: str | None, text: str, expect_move: int | None, user_id: int | None = None
    ) -> LiveGame:
        """Play one action for the token's seat (or the logged-in account's): checked, committed,
        then broadcast."""
        live = await self.get_live(game_id)
        await self.act_as(live, await self.find_seat(live, token, user_id), text, expect_move)
        return live

    async def act_as(self, live: LiveGame, seat: int | None, text: str, expect_move: int | None) -> None:
        if seat is None:
            raise ServiceError("not_seated", _("you are watching this game: take a seat to play"), 403)
        async with live.lock:
            if self.clustered and expect_move is not None and expect_move > live.move_count:
                # the client has seen a newer table than this copy: the move that made it reached the
                # client through another process before its event reached this one
                await self._refresh(live)
            refuse_unless_playing(live)
            if live.seats[seat].resigned:
                raise ServiceError("resigned", resigned_message(), 409)
            if expect_move is not None and expect_move != live.move_count:
                raise ServiceError(
                    "stale",
                    _(
                        "the table has changed (move {move}, you saw move {seen}): look again",
                        move=live.move_count,
                        seen=expect_move,
                    ),
                    409,
                )
            to_move = live.game.to_move
            if to_move != seat:
                who = live.names()[to_move] if to_move is not None else _("nobody")
                raise ServiceError("not_your_turn", _("it is {who}'s turn, not yours", who=who), 409)
            try:
                action = live.game.parse_action(text)
            except ValueError as exc:  # NotationError: the text is no action
                raise ServiceError("bad_action", explained(exc)) from None
            if live.seats[seat].away:  # a person who moves is back: the bot stops playing for them
                await self._set_away_locked(live, seat, False)
            await self.commit_move(live, seat, action)

    async def commit_move(self, live: LiveGame, seat: int, action: Action) -> store.MoveWrite:
        """Store an action (the caller holds the game's lock), then play it here, tell everyone and
        let the next bot or clock run. Nothing is played, and nobody told, before the move is
        committed: the game is only looked ahead in to write it down.

        Once the move is on its way to the database this runs to its end even if the caller is
        cancelled meanwhile (a bot's turn given up, a connection closed, the server stopping): a
        stored move is always played here and told, never left in the database alone with the
        table in memory a move behind and nobody to move it on.

        Raises ServiceError: illegal, stale (another process stored a move first), storage."""
        match = live.match
        try:
            notation = match.push(action).notation(live.rules.edition)
        except IllegalActionError as exc:
            raise ServiceError("illegal", _("illegal move: {reason}", reason=explained(exc))) from None
        status, result, ratings = live.status, None, None
        if match.is_over:
            # the core's standings; a seat whose person resigned ranks below every other (its bot
            # played on, but the person gave the game up)
            placing = place_seats(
                match.totals(), match.minus_points(), [s.resigned for s in live.seats], live.rules
            )
            status, result = "finished", {**match.result(), "ranks": list(placing.ranks)}
            if live.rated:
                ratings = rating_job(live, placing.ranks)
        number, deal = live.move_count, live.deal
        match.pop()
        now = now_utc()
        time_used = None
        if live.game_seconds is not None and not live.bot_plays(seat):
            time_used = live.seats[seat].time_used + live.time_spent(now)
        write = store.MoveWrite(
            live.id, number, deal, seat, notation, now, status, result, time_used, ratings
        )
        return await asyncio.shield(self._commit(live, write, action))

    async def _commit(self, live: LiveGame, write: store.MoveWrite, action: Action) -> store.MoveWrite:
        number = write.number
        try:
            changes = await self._write(partial(store.store_move, write=write))
        except IntegrityError:
            # another process stored a move with this number first: catch up with the database,
            # and show the table as it is (that process may have died before it could tell anyone)
            await self._caught_up(live)
            raise ServiceError(
                "stale", _("the table has changed (move {move}): look again", move=live.move_count), 409
            ) from None
        except Exception as exc:
            self.incidents.record("writer", live, f"move {number + 1} could not be stored", exc)
            raise ServiceError(
                "storage", _("the move could not be saved; nothing was played: try again"), 503
            ) from exc
        try:
            self._play(live, write, action)
        except Exception as exc:
            # stored, but this copy of the game would not take it: the database's is the game
            self.incidents.record("recover", live, f"move {number + 1} was stored but not played here", exc)
            self.spawn(self.recover(live))
            return write
        if changes is not None:
            live.rating_changes = changes
        self.after_move(live, write)
        return write

    async def _caught_up(self, live: LiveGame) -> None:
        """Read the game again (the caller holds its lock), show it and let its bot or clock run;
        a game that cannot be read is left to :meth:`recover`."""
        if await self._read_again(live):
            self._going_on(live)
        else:
            self.spawn(self.recover(live, pause=RETELL_PAUSE))

    async def _read_again(self, live: LiveGame) -> bool:
        """:meth:`_refresh`, the caller holding the game's lock; False (reported) when it failed."""
        try:
            await self._refresh(live)
        except Exception as exc:
            self.incidents.record("recover", live, "the game could not be read again", exc)
            return False
        return True

    def _going_on(self, live: LiveGame) -> None:
        """The game as read again: every watcher here shown it, its bot or clock set going."""
        live.changed_at = time.monotonic()
        if not self.fanout.state(live):  # sent again by the next change (no loop of retries)
            self.incidents.record("recover", live, "the game was read again but could not be shown")
        self.bots.schedule(live)
        self._evict_soon(live)

    def _play(self, live: LiveGame, write: store.MoveWrite, action: Action) -> None:
        """Play a committed move in memory."""
        live.match.push(action)
        live.updated_at = write.at
        live.turn_started_at = write.at
        if write.time_used is not None:
            live.seats[write.seat].time_used = write.time_used
        if write.status == "finished":
            live.status = "finished"
        self._advance(live)

    @staticmethod
    def _advance(live: LiveGame) -> None:
        """After a move: a finished game is counted, and the match's next game dealt."""
        if not live.game.is_over:
            return
        if live.match.is_over:
            live.status = "finished"
        else:
            live.match.next_game()

    def after_move(self, live: LiveGame, write: store.MoveWrite) -> None:
        """Tell everyone, here and in the other processes, then let the next bot or clock run."""
        event = {
            "type": "move",
            "number": write.number,
            "seat": write.seat,
            "move": write.move,
            "at": write.at.isoformat(),
            "time_used": write.time_used,
        }
        if write.status == "finished" and live.rating_changes is not None:
            event["ratings"] = [change.model_dump(mode="json") for change in live.rating_changes]
        self._changed(live, event)

    def _changed(self, live: LiveGame, event: dict[str, Any]) -> None:
        """The table changed: every watcher here is shown it, the other processes told, the next
        bot or clock set going. Each step runs whatever the one before it raised."""
        live.changed_at = time.monotonic()
        self.tell(live)
        self._publish(live.id, event)
        try:
            self.bots.schedule(live)
        except Exception as exc:
            self.incidents.record("bot", live, "the next bot or clock could not be set going", exc)
            self.spawn(self.recover(live, pause=1.0))
        self._evict_soon(live)

    def tell(self, live: LiveGame) -> None:
        """Show every watcher here the table; a watcher whose view could not be made is sent it
        again a moment later (and the game read again from the database if it fails once more)."""
        if not self.fanout.state(live):
            self.spawn(self._tell_again(live))

    async def _tell_again(self, live: LiveGame) -> None:
        await asyncio.sleep(RETELL_PAUSE)
        if not self.fanout.state(live):
            await self.recover(live)

    async def recover(self, live: LiveGame, pause: float = 0.0) -> None:
        """Put a game back on its feet after a fault: read it again from the database (a move
        stored but not played here is played now), show every watcher here the whole table, and
        let its bot or clock run. A game that cannot be read is left to the next try: the
        watchdog's, or (with several processes) another process's, to which its lease is given."""
        if pause:
            await asyncio.sleep(pause)
        if self.stopping:
            return
        async with live.lock:
            read = await self._read_again(live)
        if read:
            self._going_on(live)
        elif self.clustered and self.owns(live):
            self.bots.cancel(live)
            await self.bus.release(live.id)  # another process adopts it

    # --------------------------------------------------- seats taken over

    async def set_away(self, live: LiveGame, seat: int, away: bool) -> None:
        async with live.lock:
            changed = await self._set_away_locked(live, seat, away)
        if changed:
            self._changed(live, {"type": "reload"})

    async def _set_away_locked(self, live: LiveGame, seat: int, away: bool) -> bool:
        """A bot takes a person's seat over, or the person takes it back (their turn starts again)."""
        if live.seats[seat].away == away or live.seats[seat].kind != "human":
            return False
        now = now_utc()
        restarts = not away and live.game.to_move == seat
        time_used = None
        if away and live.game_seconds is not None and live.game.to_move == seat:
            # the turn that ran out is paid from the bank, as if the person had moved at its end
            time_used = live.seats[seat].time_used + live.time_spent(now)
        await self._write(
            partial(
                store.set_away,
                game_id=live.id,
                seat=seat,
                away=away,
                now=now,
                turn_restarts=restarts,
                time_used=time_used,
            )
        )
        live.seats[seat].away = away
        if time_used is not None:
            live.seats[seat].time_used = time_used
        if restarts:
            live.turn_started_at = now
        return True

    async def reclaim(self, live: LiveGame, seat: int | None, asked: bool = False) -> None:
        """A person with the seat's token is back: a bot that played for them stops. A seat whose
        person resigned stays the bot's (``asked``: the person asked for it, and is told so)."""
        if seat is None:
            return
        if asked:
            refuse_unless_playing(live)
        if not live.seats[seat].away or live.status != "playing":
            return
        if live.seats[seat].resigned:
            if asked:
                raise ServiceError("resigned", resigned_message(), 409)
            return
        await self.set_away(live, seat, False)

    # ------------------------------------------------ resign, cancel, rematch

    async def resign(self, live: LiveGame, seat: int | None) -> None:
        """A person gives the game up: the takeover bot plays their seat to the end, for good, and
        the seat ranks below every other."""
        if seat is None:
            raise ServiceError("not_seated", _("only a player can resign"), 403)
        not_begun = _("the game has not begun: there is nothing to resign (its creator may cancel it)")
        refuse_unless_playing(live, not_begun)
        async with live.lock:
            refuse_unless_playing(live, not_begun)
            if live.seats[seat].resigned:
                return  # asked again (a second click, a retry): it is done already
            now = now_utc()
            restarts = live.game.to_move == seat and not live.seats[seat].away
            try:
                await self._write(
                    partial(store.resign_seat, game_id=live.id, seat=seat, now=now, turn_restarts=restarts)
                )
            except Exception as exc:
                log.exception("game %s: a resignation could not be stored", live.id)
                raise ServiceError(
                    "storage", _("the resignation could not be saved: try again"), 503
                ) from exc
            live.seats[seat].resigned = True
            live.seats[seat].away = True
            if restarts:
                live.turn_started_at = now
        self._changed(live, {"type": "reload"})

    async def cancel(self, game_id: str, token: str | None, user: User | None) -> LiveGame:
        """The creator of a game still waiting for players calls it off: ``cancelled``, no longer
        listed as open, nobody may join it."""
        live = await self.get_live(game_id)
        seat = await self.find_seat(live, token, user.id if user is not None else None)
        if seat is None or seat != live.creator_seat:
            raise ServiceError(
                "not_seated" if seat is None else "not_creator",
                _("only the player who created this game can cancel it"),
                403,
            )
        if live.status == "cancelled":
            return live
        if live.status == "expired":
            raise ServiceError("expired", _(EXPIRED_MESSAGE), 409)
        if live.status != "open":
            raise ServiceError(
                "not_open", _("only a game waiting for players can be cancelled: this one has begun"), 409
            )
        await self._end([live], "open", "cancelled")
        if live.status != "cancelled":  # it began through another process meanwhile
            async with live.lock:
                await self._refresh(live)
            raise ServiceError(
                "not_open", _("only a game waiting for players can be cancelled: this one has begun"), 409
            )
        return live

    async def _may_create(self, client: str, waits: bool) -> None:
        """The limits on new games: per client, and games waiting for players on the server."""
        await self.expire_waiting()
        await self._check_client(client, waits)
        if waits:
            waiting = await self._read(store.count_waiting)
            if waiting >= self.settings.max_waiting_games:
                raise ServiceError(
                    "too_many_games",
                    _(
                        "{waiting} games are already waiting for players (limit {limit})",
                        waiting=waiting,
                        limit=self.settings.max_waiting_games,
                    ),
                    429,
                    retry_after=60.0,
                )

    async def rematch(
        self, game_id: str, token: str | None, user: User | None, client: str = "local"
    ) -> tuple[LiveGame, int | None, str | None]:
        """A new game of a finished one, asked for by one of its players: the same seats (people
        and bots), rules, clock, and rated and private flags, a new deal. Asked again, by anyone,
        it is the same game. Its bots sit at once and so does whoever asks; every other person's
        seat is kept for them (an account's for its login, a guest's for their old seat token).
        Every watcher of the finished game is told ``{"type": "rematch", "game": ID}``. The answer:
        the new game, the asker's seat there, and its token when it was taken for them now."""
        old = await self.get_live(game_id)
        seat = await self.find_seat(old, token, user.id if user is not None else None)
        if seat is None:
            raise ServiceError("not_seated", _("only a player of this game can ask for a rematch"), 403)
        if old.status != "finished":
            if old.status in ("playing", "open"):
                code = "in_progress" if old.status == "playing" else "not_started"
                raise ServiceError(code, _("a rematch is for a game that is over"), 409)
            refuse_ended(old)  # abandoned, expired or cancelled: says which
        if old.rematch_id is None:
            made = await self._make_rematch(old, seat, user, client)
            if made is not None:
                return made
        assert old.rematch_id is not None
        new = await self.get_live(old.rematch_id)
        mine = old.seats[seat]
        async with new.lock:
            if user is not None and (held := new.seat_of_user(user.id)) is not None:
                return new, held, None
            kept = new.seats[seat]
            if not kept.free or new.status != "open":
                # taken: by them (their seat is kept for nobody else), or the game went on without them
                return new, (seat if kept.name and kept.user_id == mine.user_id else None), None
            if kept.user_id is not None and user is None:
                raise ServiceError(
                    "login_required", _("your seat of the rematch is your account's: log in to take it"), 403
                )
            name = user.name if user is not None else seat_label(seat, mine)
            proof = mine.token_hash if kept.reserved_hash is not None else None
            taken, new_token = await self._take_seat_locked(new, name, seat, user, proof)
        self._changed(new, {"type": "reload"})
        return new, taken, new_token

    async def _make_rematch(
        self, old: LiveGame, seat: int, user: User | None, client: str
    ) -> tuple[LiveGame, int, str] | None:
        """Make the rematch, the asker seated: the new game, their seat and its token; None when
        another player (here or through another process) made it first."""
        async with old.lock:
            if old.rematch_id is not None:
                return None
            token = secrets.token_urlsafe(24)
            seats: list[SeatState] = []
            for i, was in enumerate(old.seats):
                if was.kind == "bot":
                    seats.append(SeatState("bot", was.bot, None, None))
                elif i == seat:  # the asker sits at once
                    bound = (
                        was.user_id if was.user_id is not None else (user.id if user is not None else None)
                    )
                    name = user.name if user is not None and bound == user.id else seat_label(i, was)
                    seats.append(SeatState("human", None, name, hash_token(token), user_id=bound))
                else:  # kept for its person: an account's by its login, a guest's by their old token
                    reserved = None if was.user_id is not None else was.token_hash
                    seats.append(
                        SeatState("human", None, None, None, user_id=was.user_id, reserved_hash=reserved)
                    )
            waits = any(s.free for s in seats)
            await self._may_create(client, waits)
            now = now_utc()
            new = store.NewGame(
                id=secrets.token_urlsafe(6),
                name=old.name,
                status="open" if waits else "playing",
                rules=old.rules.to_dict(),
                seed=secrets.randbelow(2**63),
                seats=seats,
                created_at=now,
                move_seconds=old.move_seconds,
                game_seconds=old.game_seconds,
                creator=creator_digest(client) if waits else None,
                creator_seat=seat,
                rated=old.rated,
                private=old.private,
                rematch_of=old.id,
            )
            made = await self._store_new_game(new, store.create_rematch, old_id=old.id)
            if made is None:  # a player asked through another process first: that is the rematch
                await self._refresh(old)
                if old.rematch_id is None:  # pragma: no cover - the database answered its id
                    raise ServiceError("storage", _("the rematch could not be read: try again"), 503)
                return None
            self._count_creation(client)
            old.rematch_id = new.id
        message = {"type": "rematch", "game": new.id}
        self.fanout.message(old, message)
        self.tell(old)
        self._publish(old.id, message)
        return made, seat, token

    # ------------------------------------------------------------------ chat

    async def chat(
        self, live: LiveGame, seat: int | None, user: User | None, text: str, connection: Any
    ) -> ChatEntry:
        """Say something at the table: stored, then told to every watcher on every process."""
        if seat is None and user is None:
            raise ServiceError(
                "login_required", _("players and logged-in spectators can chat: log in to chat"), 403
            )
        text = clean_chat(text, self.settings.chat_max_chars)
        speaker = ("seat", live.id, seat) if seat is not None else ("user", live.id, user.id if user else 0)
        refused = self.chat_limit.refused(speaker, ("connection", connection))
        if refused is not None:
            raise refused
        self.chat_limit.count_one(speaker)
        self.chat_limit.count_one(("connection", connection))
        if seat is not None:
            sitter = live.seats[seat]
            name = seat_label(seat, sitter)
            user_id, user_name = sitter.user_id, (sitter.name if sitter.user_id is not None else None)
        else:
            assert user is not None
            name, user_id, user_name = user.name, user.id, user.name
        job = partial(
            store.add_chat,
            game_id=live.id,
            seat=seat,
            user_id=user_id,
            user_name=user_name,
            name=name,
            text=text,
            now=now_utc(),
        )
        for attempt in range(3):
            try:
                entry: ChatEntry = await self._write(job)
                break
            except IntegrityError:  # another process numbered a message the same: number it again
                if attempt == 2:
                    raise ServiceError(
                        "storage", _("the message could not be saved: try again"), 503
                    ) from None
            except Exception as exc:
                log.exception("game %s: a chat message could not be stored", live.id)
                raise ServiceError("storage", _("the message could not be saved: try again"), 503) from exc
        self._chat_told(live, entry)
        self._publish(live.id, {"type": "chat", "message": entry.model_dump(mode="json")})
        return entry

    def _chat_told(self, live: LiveGame, entry: ChatEntry) -> None:
        """A message said here or through another process: kept for clients that connect, sent to
        the watchers here."""
        tail = {e.number: e for e in live.chat_tail}
        tail[entry.number] = entry
        live.chat_tail = [tail[n] for n in sorted(tail)][-self.settings.chat_history :]
        self.fanout.message(
            live, {"type": "chat", "history": False, "messages": [entry.model_dump(mode="json")]}
        )

    async def chat_history(self, live: LiveGame) -> list[ChatEntry]:
        """The table's last messages (``chat_history``), read from the database once while the game
        is in memory here, then kept up to date as they are told."""
        if not live.chat_loaded:
            stored = await self._read(
                partial(store.last_chat, game_id=live.id, count=self.settings.chat_history)
            )
            merged = {e.number: e for e in stored}
            merged.update({e.number: e for e in live.chat_tail})  # told while it was read
            live.chat_tail = [merged[n] for n in sorted(merged)][-self.settings.chat_history :]
            live.chat_loaded = True
        return list(live.chat_tail)

    async def read_chat(self, game_id: str, after: int, limit: int) -> list[ChatEntry]:
        await self.get_live(game_id)  # an unknown game is not_found, not an empty chat
        entries: list[ChatEntry] = await self._read(
            partial(store.read_chat, game_id=game_id, after=after, limit=limit)
        )
        return entries

    # ----------------------------------------------------------------- hint

    async def hint(
        self, game_id: str, token: str | None, budget: float | None = None, user_id: int | None = None
    ) -> Hint:
        live = await self.get_live(game_id)
        return await self.hint_for(live, await self.find_seat(live, token, user_id), budget)

    async def hint_for(self, live: LiveGame, seat: int | None, budget: float | None = None) -> Hint:
        if seat is not None and live.seats[seat].resigned:
            raise ServiceError("resigned", resigned_message(), 409)
        return await self.hints.hint_for(live, seat, budget)

    # ---------------------------------------------------------------- views

    def state(self, live: LiveGame, seat: int | None) -> TableState:
        return views.table_state(live, seat, self.settings.bot_delay)

    def tell_thinking(self, live: LiveGame, seat: int | None) -> None:
        """A bot has been thinking a while (or has answered): shown at the table, everywhere."""
        live.thinking = seat
        message = {"type": "thinking", "seat": seat, "move": live.move_count}
        self.fanout.message(live, message)
        self._publish(live.id, message)

    # -------------------------------------------------- finished games only

    async def _finished(self, game_id: str) -> LiveGame:
        live = await self.get_live(game_id)
        if live.status == "expired":
            raise ServiceError("expired", _("{reason}: it has no record", reason=_(EXPIRED_MESSAGE)), 409)
        if live.status == "abandoned":
            raise ServiceError("abandoned", _("{reason}: it has no record", reason=_(ABANDONED_MESSAGE)), 409)
        if live.status == "cancelled":
            raise ServiceError("cancelled", cancelled_message(), 409)
        if live.status != "finished":
            raise ServiceError(
                "in_progress", _("the record of a game is available once the game (the match) is over"), 409
            )
        return live

    async def record(self, game_id: str, deal: int = 1) -> GameRecord:
        live = await self._finished(game_id)
        if not 1 <= deal <= len(live.games):
            raise ServiceError(
                "not_found", _("this match has games 1 to {games}", games=len(live.games)), 404
            )
        tags = {
            "site": "coloretto serve",
            "game": live.id,
            "name": live.name,
            "date": live.created_at.date().isoformat(),
        }
        if live.rules.match_games > 1:
            tags.update(live.match.progress(deal).to_tags())
        return GameRecord.from_game(live.games[deal - 1], seats=live.names(), tags=tags, include_deck=True)

    async def replay(self, game_id: str, deal: int = 1) -> Replay:
        live = await self._finished(game_id)
        if not 1 <= deal <= len(live.games):
            raise ServiceError(
                "not_found", _("this match has games 1 to {games}", games=len(live.games)), 404
            )
        return views.replay(live, deal)

    # ------------------------------------------------------------ watchers

    def subscribe(self, live: LiveGame, sub: Subscriber) -> LiveGame:
        """Add a watcher to the game; the answer is the copy it watches: the one in memory, which
        ``live`` may no longer be (dropped from memory while the client connected, it is kept
        again)."""
        live = self.live.setdefault(live.id, live)
        if len(live.subscribers) >= self.settings.max_connections_per_game:
            raise ServiceError(
                "too_many_connections",
                _(
                    "this game already has {connections} connections (limit {limit})",
                    connections=len(live.subscribers),
                    limit=self.settings.max_connections_per_game,
                ),
                429,
            )
        before = live.local_presence()
        live.subscribers.add(sub)
        self.seat_changed(live, before)
        return live

    def unsubscribe(self, live: LiveGame, sub: Subscriber) -> None:
        before = live.local_presence()
        live.subscribers.discard(sub)
        self.seat_changed(live, before)
        self._evict_soon(live)

    def seat_changed(self, live: LiveGame, before: tuple[frozenset[int], int]) -> None:
        """A watcher here came, took a seat or left (``before``: who was connected here, as
        :meth:`LiveGame.local_presence` said): the others see who is online and how many watch
        (soon), the other processes are told, and the owner's clock knows who has gone."""
        now = live.local_presence()
        if now == before:
            return
        self.fanout.presence(live)
        self._publish(live.id, {"type": "presence", "seats": sorted(now[0]), "spectators": now[1]})
        if now[0] == before[0]:
            return
        for seat in before[0] - now[0]:
            if seat not in live.online():
                live.offline_since[seat] = time.monotonic()
        for seat in now[0] - before[0]:
            live.offline_since.pop(seat, None)
        self.bots.schedule(live)

    def send_state(self, live: LiveGame, sub: Subscriber) -> None:
        if not self.fanout.one(live, sub):
            self.spawn(self._tell_again(live))

    def _evict_soon(self, live: LiveGame) -> None:
        """A game nobody watches here leaves memory when it is over or another process runs it:
        it is read from the database again on demand."""
        if live.subscribers or self.live.get(live.id) is not live:
            return
        if live.status in ENDED or not self.owns(live):
            del self.live[live.id]
            self.bots.cancel(live)
            if self.owns(live):
                self.spawn(self.bus.release(live.id))

    # ------------------------------------------------------------- cluster

    def spawn(self, coroutine: Any) -> None:
        """Run ``coroutine`` in the background, kept until it ends; what it raises is reported."""
        task = asyncio.get_running_loop().create_task(coroutine)
        self._background.add(task)
        task.add_done_callback(self._background_done)

    def _background_done(self, task: asyncio.Task[Any]) -> None:
        self._background.discard(task)
        if not task.cancelled() and (error := task.exception()) is not None:
            self.incidents.record("background", None, f"a background task ({task.get_name()}) failed", error)

    def _publish(self, game_id: str, event: dict[str, Any]) -> None:
        """Tell the other processes, in order (one task sends them all)."""
        if self._outbox is not None:
            self._outbox.put_nowait((game_id, {**event, "origin": self.bus.process_id}))

    async def _publisher(self) -> None:
        assert self._outbox is not None
        while True:
            game_id, event = await self._outbox.get()
            try:
                await self.bus.publish(game_id, event)
            except Exception as exc:
                # the other processes read the game again when they see the database ahead of them
                self.incidents.record(
                    "publish",
                    self.live.get(game_id),
                    f"a {event.get('type')} event could not be published",
                    exc,
                )

    async def _on_event(self, game_id: str, event: dict[str, Any]) -> None:
        """Another process changed a game (or said who is online through it). An event that
        cannot be handled is reported and the game read again from the database."""
        live = self.live.get(game_id)
        if live is None:
            return
        try:
            inject("bus")
            await self._apply_event(live, event)
        except Exception as exc:
            what = f"an event from another process ({event.get('type')}) failed"
            self.incidents.record("bus", live, what, exc)
            await self.recover(live)

    async def _apply_event(self, live: LiveGame, event: dict[str, Any]) -> None:
        game_id = live.id
        kind = event.get("type")
        if kind == "presence":
            seats = frozenset(int(s) for s in event.get("seats", ()))
            spectators = event.get("spectators", 0)
            watching = spectators if isinstance(spectators, int) and spectators >= 0 else 0
            live.remote_online[str(event.get("origin"))] = (seats, watching, time.monotonic())
            for seat in seats:
                live.offline_since.pop(seat, None)
            self.fanout.presence(live)
            self.bots.schedule(live)
            return
        if kind == "review":  # a review ended in that process: told to the watchers here
            self.fanout.message(live, {k: v for k, v in event.items() if k != "origin"})
            return
        if kind == "chat":  # said through that process: told to the watchers here
            try:
                entry = ChatEntry.model_validate(event.get("message"))
            except ValueError:
                log.warning("game %s: a chat message from another process could not be read", game_id)
                return
            self._chat_told(live, entry)
            return
        if kind == "rematch":
            rematch = event.get("game")
            if isinstance(rematch, str):
                live.rematch_id = rematch
                self.fanout.message(live, {"type": "rematch", "game": rematch})
            return
        if kind == "thinking":
            thinker = event.get("seat")
            live.thinking = thinker if isinstance(thinker, int) else None
            self.fanout.message(live, {"type": "thinking", "seat": live.thinking, "move": live.move_count})
            return
        async with live.lock:
            if kind == "move" and event.get("number") == live.move_count + 1:
                try:
                    self._apply_remote_move(live, event)
                except Exception as exc:
                    self.incidents.record("bus", live, "a move from another process did not replay", exc)
                    await self._refresh(live)
            elif (
                kind == "move" and isinstance(event.get("number"), int) and event["number"] <= live.move_count
            ):
                return  # already played here
            else:  # a gap, or seats and status changed: the database knows
                await self._refresh(live)
        live.changed_at = time.monotonic()
        self.tell(live)
        self.bots.schedule(live)
        self._evict_soon(live)

    def _apply_remote_move(self, live: LiveGame, event: dict[str, Any]) -> None:
        text = str(event["move"])
        action = live.game.parse_action(text.split()[0])
        if live.game.to_move != event.get("seat"):
            raise RuntimeError("the move is for another seat")
        notation = live.match.push(action).notation(live.rules.edition)
        if notation != text:
            live.match.pop()
            raise RuntimeError(f"the move replays as {notation!r}, not {text!r}")
        at = datetime.fromisoformat(str(event["at"]))
        live.updated_at = at
        live.turn_started_at = at
        time_used = event.get("time_used")
        if isinstance(time_used, int | float):
            live.seats[int(event["seat"])].time_used = float(time_used)
        ratings = event.get("ratings")
        if isinstance(ratings, list):
            live.rating_changes = [RatingChange.model_validate(change) for change in ratings]
        self._advance(live)

    def _resync(self) -> None:
        """Back on Redis after a break: events of the meantime are lost (pub/sub keeps none), so every
        game in memory is read again from the database and its watchers get the whole state."""

        async def resync() -> None:
            for live in list(self.live.values()):
                async with live.lock:
                    read = await self._read_again(live)
                if read:
                    self._going_on(live)

        self.spawn(resync())

    def _lease_lost(self, game_id: str) -> None:
        live = self.live.get(game_id)
        if live is not None:
            log.warning("game %s: this process no longer runs it (lease lost)", game_id)
            self.bots.cancel(live)
            self._evict_soon(live)

    async def _adopt_loop(self) -> None:
        """Take over the games no process runs (their owner died): within a few seconds."""
        while True:
            try:
                await self._adopt()
            except Exception:
                log.exception("games without an owner could not be adopted")
            await asyncio.sleep(self.settings.adopt_interval)

    async def _adopt(self) -> None:
        await self._catch_up()
        ids = await self._read(partial(store.unfinished_ids, ended=ENDED))
        if not ids:
            return
        holders = await self.bus.holders(ids)
        orphans = [game_id for game_id in ids if holders.get(game_id) is None]
        random.shuffle(orphans)  # several processes adopting at once share the games out
        adopted = [game_id for game_id in orphans if await self.bus.acquire(game_id)]
        if not adopted:
            return
        # a copy kept here for watchers is up to date unless the database has moved past it
        stored = await self._read(partial(store.stored_progress, ids=adopted))
        current = [
            game_id
            for game_id in adopted
            if (live := self.live.get(game_id)) is not None
            and stored.get(game_id) == (live.move_count, live.status)
        ]
        for game_id in current:
            self._adopted(self.live[game_id])
        reads = asyncio.Semaphore(ADOPT_READS)

        async def adopt(game_id: str) -> None:
            async with reads:
                try:
                    stored = await self._stored(game_id)
                    fresh = await asyncio.to_thread(self._replay, stored)
                except Exception:
                    log.exception("game %s could not be adopted", game_id)
                    await self.bus.release(game_id)
                    return
            live = self.live.get(game_id)
            if live is None:
                self.live[game_id] = live = fresh
            else:
                async with live.lock:
                    self._step_to(live, stored.moves, fresh)
            self._adopted(live)

        await asyncio.gather(*(adopt(game_id) for game_id in adopted if game_id not in current))

    def _adopted(self, live: LiveGame) -> None:
        log.info("game %s adopted: this process runs it now", live.id)
        live.changed_at = time.monotonic()
        self.tell(live)
        self.bots.schedule(live)

    async def _catch_up(self) -> None:
        """Read again the games in memory that the database has moved past: a process that
        committed a move (or ended a game) and was killed before it published it tells nobody.
        A game is read again only when it was behind on the previous round too, so that events
        still on their way never cost a read."""
        ids = [game_id for game_id, live in self.live.items() if live.status not in ENDED]
        if not ids:
            self._behind = {}
            return
        stored = await self._read(partial(store.stored_progress, ids=ids))
        behind: dict[str, tuple[int, str]] = {}
        for game_id, (moves, status) in stored.items():
            live = self.live.get(game_id)
            if live is None or (moves <= live.move_count and status == live.status):
                continue
            seen = self._behind.get(game_id)
            still_behind = seen is not None and (
                live.move_count < seen[0] or (live.move_count == seen[0] and live.status != seen[1])
            )
            if not still_behind:
                # perhaps an event on its way: look again on the next round
                behind[game_id] = (moves, status)
                continue
            log.warning("game %s: the database is at move %d (%s), never told here", game_id, moves, status)
            async with live.lock:
                read = await self._read_again(live)
            if read:
                self._going_on(live)
        self._behind = behind

    async def _presence_loop(self) -> None:
        """Say again which seats are online through this process (the others forget after a while)."""
        while True:
            await asyncio.sleep(PRESENCE_EVERY)
            for live in list(self.live.values()):
                online, spectators = live.local_presence()
                if online or spectators:
                    self._publish(
                        live.id, {"type": "presence", "seats": sorted(online), "spectators": spectators}
                    )


#: characters a name may not hold: controls, and the format characters (bidi overrides and
#: isolates U+202A-U+202E, U+2066-U+2069, marks U+200E/U+200F, zero-width ones), surrogates,
#: private-use and unassigned code points, line and paragraph separators
UNPRINTABLE_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})


def resigned_message() -> str:
    return _("you resigned this game: a bot plays your seat to the end")


def refuse_unprintable(
    text: str, what: str, allowed: frozenset[str] = frozenset(), code: str = "bad_name"
) -> None:
    """Refuse text holding a control or direction-changing character (but those ``allowed``),
    naming the first and where it is (the same check on every database: PostgreSQL refuses a
    NUL, SQLite would keep it)."""
    for i, char in enumerate(text):
        if char not in allowed and unicodedata.category(char) in UNPRINTABLE_CATEGORIES:
            raise ServiceError(
                code,
                _(
                    "{what} may hold only printable characters: {code} at character {position} is a "
                    "control or direction-changing character",
                    what=what,
                    code=f"U+{ord(char):04X}",
                    position=i + 1,
                ),
            )


def clean_name(name: str, what: str | None = None, longest: int = NAME_MAX) -> str:
    """A name as shown at the table: runs of spaces made one, stripped; printable characters only.
    ``what`` names it in the errors (default: "a name", in the current language)."""
    what = what or _("a name")
    refuse_unprintable(name, what)
    cleaned = " ".join(name.split())
    if not cleaned:
        raise ServiceError("bad_name", _("{what} cannot be empty", what=what))
    if len(cleaned) > longest:
        raise ServiceError(
            "bad_name",
            _(
                "{what} has at most {longest} characters, not {length}",
                what=what,
                longest=longest,
                length=len(cleaned),
            ),
        )
    return cleaned
