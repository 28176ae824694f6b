"""Moderation: the administrators' actions, and how every server process comes to act on them.

**The actions** (ban and unban an account, hide and show a chat message, end a game, resolve a
report, promote and demote an administrator) are transactions of
:mod:`coloretto.web.storage.moderation`: each checks its target, makes its change, writes its
line of the audit log and a **moderation event** in the same transaction. The admin page calls
them through this module; ``coloretto admin`` calls the very same functions on a database session
of its own, whether a server runs on the database or not.

**Reaching the live processes.** What is stored takes effect at once wherever the database is
read: a banned account's sessions are deleted with the ban, so its next request is a guest's, and
its log-in is refused; a hidden message is never read again; a move for a game a moderator ended
is refused by its own write (:class:`coloretto.web.storage.games.GameStopped`). What a process
holds in memory is put right by the events: every process reads the events table about once a
second (``moderation_poll``; an indexed read of the rows numbered after the last one it saw, a
few before that too, for a transaction that committed late) and acts on each new one:

- ``ban`` / ``account_deleted``: the account's WebSockets here are told and closed (the page comes
  back as a guest); it joins :class:`~coloretto.web.features.standing.Standing` (no move, chat or
  seat); in every game in play this process runs, a bot takes its seat over to the end, as a
  resignation does (checked again on every round, so a game adopted later, or a server that was
  down at the time, does it too); a deletion's games are read again (the seats' names are gone)
  and its chat messages taken back from every client;
- ``unban``: the account may play again;
- ``sessions_ended``: the account's WebSockets (but the session kept) are closed: a password
  changed, "log out everywhere", a reset link used;
- ``chat_hidden`` / ``chat_shown``: the message is taken back from every client of the game
  (``chat_removed``), or sent again;
- ``game_stopped``: the game is read again (status ``stopped``, its reason) and shown to its
  watchers; its bots and clock stop;
- ``blocks``: a person's blocks changed: their WebSockets here stop getting (or get again) the
  messages of the accounts concerned.

With several processes (``--redis-url``), the process where an action was made also publishes a
site event on the cluster bus, so that the others read the table at once instead of within the
second. The table is what counts: an event missed on the bus (pub/sub keeps nothing for a
process cut off) is still read from it, and the command line needs no Redis. Old events are
deleted after a day.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from datetime import timedelta
from functools import partial
from typing import Any

from coloretto.web.common.errors import ServiceError
from coloretto.web.common.i18n import gettext as _
from coloretto.web.common.i18n import language
from coloretto.web.common.moderation import Actor
from coloretto.web.common.names import User
from coloretto.web.features.chat import Chat
from coloretto.web.features.play import Play
from coloretto.web.features.standing import Standing
from coloretto.web.runtime.cluster import cancel_and_wait
from coloretto.web.runtime.games import Games
from coloretto.web.runtime.sync import SITE_EVENTS, ClusterSync
from coloretto.web.storage import lifecycle as lifecycle_store
from coloretto.web.storage import moderation as store
from coloretto.web.storage import reports as report_store
from coloretto.web.table.live import LiveGame, now_utc

log = logging.getLogger("coloretto.web")

#: events before the last one seen that are read again (a transaction that took its number before
#: another but committed after it: numbers are given at the insert, rows seen at the commit)
LOOKBACK = 64
#: how long events are kept (every process acted on them within seconds)
KEEP_EVENTS = timedelta(days=1)
#: how often old events are deleted (seconds)
PURGE_EVERY = 600.0
#: the WebSocket close code of a connection whose account was banned, deleted or logged out
CLOSE_ACCOUNT = 4401


def require_admin(user: User | None) -> User:
    """The administrator a request comes from; a guest is told to log in (401), anyone else is
    refused (403)."""
    if user is None:
        raise ServiceError("login_required", _("log in as an administrator to do this"), 401)
    if not user.is_admin:
        raise ServiceError("forbidden", _("only the site's administrators may do this"), 403)
    return user


def actor_of(user: User) -> Actor:
    return Actor(user.id, user.name, "page")


class Moderation:
    """The administrators' actions through the server, and this process's side of every moderation
    event (whoever made it: a page, the command line, another process)."""

    def __init__(self, games: Games, sync: ClusterSync, play: Play, chat: Chat, standing: Standing) -> None:
        self.games = games
        self.sync = sync
        self.play = play
        self.chat = chat
        self.standing = standing
        self.poll_every = games.settings.moderation_poll
        self.cursor = 0  #: the last event number seen
        self._applied: set[int] = set()
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._purged_at = 0.0
        self._polling = asyncio.Lock()  #: one poll at a time, on the loop the server runs on
        self._home: asyncio.AbstractEventLoop | None = None
        sync.site_handlers["moderation"] = lambda _event: self._wake.set()

    # ------------------------------------------------------------ the live side

    async def start(self) -> None:
        """Know the banned and deleted accounts, start after the newest event (what came before is
        in the database already), hand their seats to bots, and follow the events from now on."""
        self.standing.gone = await self.games.read(store.gone_ids)
        self.cursor = await self.games.read(store.last_event_id)
        await self.reconcile()
        self._home = asyncio.get_running_loop()
        self._task = self._home.create_task(self._loop(), name="moderation events")

    async def stop(self) -> None:
        if self._task is not None:
            await cancel_and_wait([self._task])
            self._task = None

    async def _loop(self) -> None:
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), timeout=self.poll_every)
            self._wake.clear()
            try:
                await self.poll()
            except Exception:  # the database may be back on the next round
                log.exception("the moderation events could not be read")

    async def poll(self) -> None:
        """Act on the events not seen yet, then check that no banned or deleted account holds a
        seat of a game this process runs."""
        async with self._polling:
            events = await self.games.read(partial(store.events_after, after=max(0, self.cursor - LOOKBACK)))
            for event in events:
                if event.id in self._applied:
                    continue
                self._applied.add(event.id)
                self.cursor = max(self.cursor, event.id)
                try:
                    await self.apply(event)
                except Exception as exc:
                    self.games.incidents.record("moderation", None, f"a {event.kind} event failed", exc)
            self._applied = {i for i in self._applied if i > self.cursor - LOOKBACK}
            await self.reconcile()
            await self._purge()

    async def apply(self, event: store.StoredEvent) -> None:
        kind, user_id = event.kind, event.user_id
        if kind in ("ban", "account_deleted") and user_id is not None:
            self.standing.gone.add(user_id)
            message = _("your account was banned") if kind == "ban" else _("your account was deleted")
            self.close_sockets(user_id, "banned" if kind == "ban" else "account_deleted", message)
            if kind == "account_deleted":
                await self._account_deleted(event.data)
        elif kind == "unban" and user_id is not None:
            self.standing.gone.discard(user_id)
        elif kind == "sessions_ended" and user_id is not None:
            keep = event.data.get("keep")
            self.close_sockets(
                user_id,
                "session_ended",
                _("you were logged out"),
                keep=keep if isinstance(keep, str) else None,
            )
        elif kind in ("chat_hidden", "chat_shown") and event.game_id is not None:
            live = self.games.live.get(event.game_id)
            number = event.data.get("number")
            if live is not None and isinstance(number, int):
                if kind == "chat_hidden":
                    self.chat.remove(live, [number])
                else:
                    await self.chat.show_again(live, number)
        elif kind == "game_stopped" and event.game_id is not None:
            live = self.games.live.get(event.game_id)
            if live is not None:
                await self._read_again(live)
        elif kind == "blocks" and user_id is not None:
            await self._blocks_changed(user_id)

    async def _account_deleted(self, data: dict[str, Any]) -> None:
        chat = data.get("chat") or {}
        for game_id in data.get("games") or []:
            live = self.games.live.get(str(game_id))
            if live is None:
                continue
            numbers = chat.get(game_id) or []
            if numbers:
                self.chat.remove(live, [int(n) for n in numbers])
            await self._read_again(live)

    async def _read_again(self, live: LiveGame) -> None:
        """The game as the database has it now, shown to its watchers here; its bot or clock runs
        on, or stops (a game ended)."""
        async with live.lock:
            read = await self.games.read_again(live)
        if read:
            self.games.going_on(live)
            if live.status not in ("open", "playing"):
                self.games.bots.cancel(live)

    async def _blocks_changed(self, user_id: int) -> None:
        subs = [
            (live, sub)
            for live in self.games.live.values()
            for sub in live.subscribers
            if sub.user_id == user_id
        ]
        if not subs:
            return
        blocked = await self.blocked_names(user_id)
        for live, sub in subs:
            self.chat.blocks_changed(live, sub, blocked)

    async def blocked_names(self, user_id: int) -> frozenset[str]:
        """The names of the accounts a person blocked (what their WebSockets filter on)."""
        blocks = await self.games.read(partial(report_store.blocks_of, user_id=user_id))
        return frozenset(b.name for b in blocks)

    def close_sockets(self, user_id: int, code: str, message: str, keep: str | None = None) -> int:
        """Tell the account's WebSockets here why, and close them (but the one of session ``keep``)."""
        closed = 0
        for live in list(self.games.live.values()):
            for sub in list(live.subscribers):
                if sub.user_id != user_id or (keep is not None and sub.session == keep):
                    continue
                with language(sub.language):
                    sub.push({"type": "error", "error": code, "message": message})
                sub.push({"type": "__close__", "code": CLOSE_ACCOUNT})
                closed += 1
        return closed

    async def reconcile(self) -> None:
        """A bot takes over, to the end, every seat a banned or deleted account holds in the games in
        play this process runs."""
        if not self.standing.gone:
            return
        for live in list(self.games.live.values()):
            if live.status != "playing" or not self.games.owns(live):
                continue
            for seat, state in enumerate(live.seats):
                if state.user_id in self.standing.gone and state.name and not state.resigned:
                    with contextlib.suppress(ServiceError):  # ended meanwhile
                        await self.play.resign(live, seat)
                    log.info("game %s: a bot plays seat %d of a banned or deleted account", live.id, seat + 1)

    async def _purge(self) -> None:
        if time.monotonic() - self._purged_at < PURGE_EVERY:
            return
        self._purged_at = time.monotonic()
        now = now_utc()

        def purge(session: Any) -> None:
            store.purge_events(session, before=now - KEEP_EVENTS)
            lifecycle_store.purge_resets(session, now=now)

        await self.games.write(purge, housekeeping=True)

    async def acted(self) -> None:
        """An action was stored here: act on it at once, and have the other processes do so."""
        home = self._home
        if home is None or home is asyncio.get_running_loop() or home.is_closed():
            await self.poll()
        else:
            # a request served on another event loop (a test client's own) has the server's loop
            # poll: the lock, the sockets and the games belong to it
            await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(self.poll(), home))
        self.games.publish(SITE_EVENTS, {"type": "moderation"})

    # ------------------------------------------------------------ the administrators' actions

    async def _act(self, job: Any) -> Any:
        result = await self.games.write(job)
        await self.acted()
        return result

    async def ban(self, admin: User, name: str, reason: str) -> str:
        banned = await self._act(
            partial(store.ban, actor=actor_of(admin), name=name, reason=reason, now=now_utc())
        )
        return str(banned.name)

    async def unban(self, admin: User, name: str, reason: str) -> str:
        lifted = await self._act(
            partial(store.unban, actor=actor_of(admin), name=name, reason=reason, now=now_utc())
        )
        return str(lifted.name)

    async def set_hidden(self, admin: User, game_id: str, number: int, hidden: bool, reason: str) -> None:
        await self._act(
            partial(
                store.set_hidden,
                actor=actor_of(admin),
                game_id=game_id,
                number=number,
                hidden=hidden,
                reason=reason,
                now=now_utc(),
            )
        )

    async def end_game(self, admin: User, game_id: str, reason: str) -> None:
        await self._act(
            partial(store.stop_game, actor=actor_of(admin), game_id=game_id, reason=reason, now=now_utc())
        )

    async def resolve(self, admin: User, report_id: int, note: str) -> None:
        await self._act(
            partial(
                report_store.resolve_report,
                actor=actor_of(admin),
                report_id=report_id,
                note=note,
                now=now_utc(),
            )
        )

    async def reports(self, status: str, limit: int) -> tuple[list[Any], int]:
        found: tuple[list[Any], int] = await self.games.read(
            partial(report_store.list_reports, status=status, limit=limit)
        )
        return found

    async def audit(self, limit: int, before: int | None) -> list[Any]:
        entries: list[Any] = await self.games.read(partial(store.read_audit, limit=limit, before=before))
        return entries
