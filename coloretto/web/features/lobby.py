"""The lobby: the rule options and bots a table may have, creating a game, listing them, calling
one off, and ending the games that wait for players too long or that nobody moves any more."""

from __future__ import annotations

import hashlib
import logging
import secrets
from datetime import timedelta
from functools import partial
from typing import Any

from coloretto.bots import BotSpecError, available_bots, check_bot
from coloretto.rules import RULE_OPTIONS, RuleOption, Rules, RulesError
from coloretto.web.common.errors import ServiceError
from coloretto.web.common.i18n import CHOICE_CONTEXT, explained, pgettext
from coloretto.web.common.i18n import gettext as _
from coloretto.web.common.names import User, clean_name
from coloretto.web.common.schemas import (
    GAME_NAME_MAX,
    BotInfo,
    CreateGame,
    GameSummary,
    Options,
    RuleOptionInfo,
)
from coloretto.web.features.hints import hints_available
from coloretto.web.features.ratings import DIFFICULTIES
from coloretto.web.features.seats import Seats
from coloretto.web.runtime.games import Games
from coloretto.web.runtime.limits import Counters, LocalCounters, client_key
from coloretto.web.storage import games as store
from coloretto.web.table import views
from coloretto.web.table.live import (
    EXPIRED_MESSAGE,
    LiveGame,
    SeatState,
    aware,
    hash_token,
    now_utc,
)

log = logging.getLogger("coloretto.web")

#: the rule option a create request does not name: it is the number of seats
SEATS_OPTION = "players"


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


class Lobby:
    """Creates and lists games; ends those nobody plays."""

    def __init__(self, games: Games, seats: Seats, limits: Counters | None = None) -> None:
        self.games = games
        self.seats = seats
        self.settings = games.settings
        #: the games each client created in the last minute (every process's, with Redis)
        self.limits = limits if limits is not None else LocalCounters()

    async def sweep(self) -> None:
        """Expire the games that waited for players too long and abandon the untimed games nobody
        moves any more (the server calls it every few seconds)."""
        await self.expire_waiting()
        await self.abandon_stalled()

    def options(self) -> Options:
        bots = available_bots()
        infos = [
            BotInfo(name=name, description=_(desc), difficulty=name in DIFFICULTIES)
            for name, desc in bots.items()
            if self.bot_allowed(name)
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

    def bot_allowed(self, name: str) -> bool:
        """Only the bots a client could name are offered (a bot over the cap would be refused)."""
        try:
            self.settings.check_bot_budget(check_bot(name, files=False))
        except (BotSpecError, ServiceError):
            return False
        return True

    async def count_creation(self, client: str) -> str | None:
        """Count a game created by the client among its last minute's, or refuse it
        (``creations_per_minute``): the key of the count, to take it back if the creation is then
        refused for another reason (None when creations are not limited)."""
        per_minute = self.settings.creations_per_minute
        if not per_minute:
            return None
        member = secrets.token_hex(8)
        waited = await self.limits.count(client_key("creations", client), per_minute, 60.0, member)
        if waited:
            raise ServiceError(
                "too_many_creations",
                _("at most {limit} games a minute from one address", limit=per_minute),
                429,
                retry_after=max(1.0, waited),
            )
        return member

    async def check_waiting(self, client: str) -> None:
        """One client may keep only so many games waiting for players (counted in the database)."""
        settings = self.settings
        if settings.max_waiting_per_client:
            waiting = await self.games.read(partial(store.count_waiting, creator=creator_digest(client)))
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

    def seats_of(self, request: CreateGame) -> list[SeatState]:
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
    def read_rules(rules_data: dict[str, Any]) -> Rules:
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
            self.read_rules({SEATS_OPTION: rules_data[SEATS_OPTION]})
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
        rules = self.read_rules(rules_data)
        seats = self.seats_of(request)
        clock = request.clock
        if clock is not None and clock.move_seconds is None and clock.game_seconds is None:
            raise ServiceError("bad_clock", _("a clock gives move_seconds, game_seconds or both"))
        people = sum(1 for s in seats if s.kind == "human")
        waits = people > (1 if request.creator_name is not None else 0)
        creator_seat: int | None = None
        token: str | None = None
        if request.creator_name is not None:
            name = await self.seats.guest_name(request.creator_name) if user is None else user.name
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
        await self.may_create(client, waits)
        now = now_utc()
        status = "playing" if all(s.kind == "bot" or s.name for s in seats) else "open"
        seed = secrets.randbelow(2**63)
        game_id = store.new_game_id()
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
        live = await self.games.store_new_game(new, store.insert_game)
        assert live is not None
        return live, creator_seat, token

    async def list_games(
        self, status: str | None = None, limit: int = 50, user_id: int | None = None
    ) -> list[GameSummary]:
        """The lobby's games; with ``user_id``, that account's own (private ones too)."""
        await self.expire_waiting()
        rows = await self.games.read(partial(store.list_games, status=status, limit=limit, user_id=user_id))
        out = []
        for row in rows:
            live = self.games.live.get(row.id)
            out.append(views.summary(live) if live is not None else views.listed_summary(row))
        return out

    def summary(self, live: LiveGame) -> GameSummary:
        return views.summary(live)

    async def cancel(self, game_id: str, token: str | None, user: User | None) -> LiveGame:
        """The creator of a game still waiting for players calls it off: ``cancelled``, no longer
        listed as open, nobody may join it."""
        live = await self.games.get_live(game_id)
        seat = await self.seats.find_seat(live, token, user.id if user is not None else None)
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
        await self.games.end_games([live], "open", "cancelled")
        if live.status != "cancelled":  # it began through another process meanwhile
            async with live.lock:
                await self.games.refresh(live)
            raise ServiceError(
                "not_open", _("only a game waiting for players can be cancelled: this one has begun"), 409
            )
        return live

    async def may_create(self, client: str, waits: bool) -> str | None:
        """The limits on new games: per client (creations a minute, games waiting), and games
        waiting for players on the server. The creation is counted among the client's
        (:meth:`count_creation`; refused for the waiting games, it is not): what
        :meth:`uncount_creation` takes back should it not be made after all."""
        await self.expire_waiting()
        counted = await self.count_creation(client)
        if not waits:
            return counted
        try:
            await self.check_waiting(client)
            waiting = await self.games.read(store.count_waiting)
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
        except BaseException:
            await self.uncount_creation(client, counted)
            raise
        return counted

    async def uncount_creation(self, client: str, counted: str | None) -> None:
        """Take back a creation :meth:`may_create` counted (the game was not made after all)."""
        if counted is not None:
            await self.limits.uncount(client_key("creations", client), counted)

    async def expire_waiting(self) -> None:
        """End every game this process runs that is still waiting for players ``waiting_expiry``
        seconds after its creation: stored as ``expired``, no longer listed as open, watchers told."""
        deadline = now_utc() - timedelta(seconds=self.settings.waiting_expiry)
        stale = [
            lv
            for lv in self.games.live.values()
            if lv.status == "open" and aware(lv.created_at) <= deadline and self.games.owns(lv)
        ]
        await self.games.end_games(stale, "open", "expired")

    async def abandon_stalled(self) -> None:
        """An untimed game in which the person to move has not moved for ``abandon_after`` seconds
        cannot be finished: it ends as ``abandoned`` (a timed table's bots would finish it)."""
        deadline = now_utc() - timedelta(seconds=self.settings.abandon_after)
        stalled = []
        for live in self.games.live.values():
            if live.status != "playing" or live.timed or not self.games.owns(live):
                continue
            seat = live.game.to_move
            if seat is not None and not live.bot_plays(seat) and aware(live.updated_at) <= deadline:
                stalled.append(live)
        await self.games.end_games(stalled, "playing", "abandoned")
