"""A table's chat: who may speak, what a message may hold, how often, and where it goes.

Players at the table and logged-in spectators may chat (a guest who only watches has no name
to answer for what they say). A message is text: its spaces, tabs and line breaks are made
single spaces (one line: a message cannot pretend to be two), other control and
direction-changing characters are refused as in names, and it holds 1 to ``chat_max_chars``
characters. Each seat (or logged-in spectator) and each connection may send
``chat_messages`` in ``chat_seconds``. Messages are stored (``chat_messages``), numbered per
game, so that a reload or another process shows them, and sent to every watcher on every
process as ``{"type": "chat", "messages": [...]}``. The server never reads a message as
markup: it is stored and sent as the person typed it, as JSON text, for the browser to show as
text. Muting the whole chat is the browser's; **blocking** an account is the server's: a
logged-in person who blocked another is never sent that account's messages (over HTTP or the
WebSocket, here or through any process). A message a moderator hid is taken back from every
client (``{"type": "chat_removed", "numbers": [...]}``) and sent to nobody after; a banned
account cannot chat.
"""

from __future__ import annotations

import logging
import math
import time
from collections import deque
from collections.abc import Hashable
from functools import partial
from typing import Any

from sqlalchemy.exc import IntegrityError

from coloretto.web.common.errors import ServiceError
from coloretto.web.common.i18n import gettext as _
from coloretto.web.common.names import User, refuse_unprintable
from coloretto.web.common.schemas import ChatEntry
from coloretto.web.features.standing import Standing
from coloretto.web.runtime.games import Games
from coloretto.web.storage import chat as store
from coloretto.web.table.live import LiveGame, now_utc, seat_label
from coloretto.web.table.watchers import Subscriber

log = logging.getLogger("coloretto.web")

#: the characters of a message that are spaces to it: made one space, with the others around them
FOLDED = frozenset("\t\n\r")
#: format characters a message may hold though names may not: the joiners that make one emoji
#: of several (a family) and shape some scripts' words; neither changes a line's direction
JOINERS = frozenset("\u200c\u200d")


def clean_chat(text: str, longest: int) -> str:
    """A chat message as it is stored and shown: one line, printable, 1 to ``longest`` characters."""
    refuse_unprintable(text, _("a chat message"), allowed=FOLDED | JOINERS, code="bad_chat")
    cleaned = " ".join(text.split())
    if not cleaned:
        raise ServiceError("bad_chat", _("a chat message cannot be empty"))
    if len(cleaned) > longest:
        raise ServiceError(
            "bad_chat",
            _(
                "a chat message has at most {most} characters, not {count}",
                most=longest,
                count=len(cleaned),
            ),
        )
    return cleaned


class ChatLimit:
    """At most ``count`` messages in ``seconds`` per key (a seat, a spectator, a connection)."""

    def __init__(self, count: int, seconds: float) -> None:
        self.count = count
        self.seconds = seconds
        self._sent: dict[Hashable, deque[float]] = {}

    def wait(self, key: Hashable) -> float:
        """Seconds until the key may send again (0: now)."""
        now = time.monotonic()
        sent = self._sent.get(key)
        if sent is None:
            return 0.0
        while sent and sent[0] <= now - self.seconds:
            sent.popleft()
        if len(sent) < self.count:
            return 0.0
        return sent[0] + self.seconds - now

    def count_one(self, key: Hashable) -> None:
        now = time.monotonic()
        if len(self._sent) > 10_000:  # forget the keys with nothing left in their window
            self._sent = {k: d for k, d in self._sent.items() if d and d[-1] > now - self.seconds}
        self._sent.setdefault(key, deque()).append(now)

    def refused(self, *keys: Hashable) -> ServiceError | None:
        """The error for a message over any of the keys' limits, or None (nothing is counted)."""
        wait = max(self.wait(key) for key in keys)
        if wait <= 0:
            return None
        return ServiceError(
            "rate_limited",
            _(
                "at most {count} chat messages in {seconds} seconds: wait {wait} s",
                count=self.count,
                seconds=f"{self.seconds:g}",
                wait=max(1, math.ceil(wait)),
            ),
            429,
            retry_after=wait,
        )


class Chat:
    """What is said at the tables: checked, stored, told to every watcher on every process."""

    def __init__(self, games: Games, standing: Standing | None = None) -> None:
        self.games = games
        self.standing = standing or Standing()
        self.settings = games.settings
        #: chat messages per seat or logged-in spectator (each connection has its own limit too)
        self.chat_limit = ChatLimit(self.settings.chat_messages, self.settings.chat_seconds)

    def from_elsewhere(self, live: LiveGame, event: dict[str, Any]) -> None:
        """A message said through another process: told to the watchers here."""
        try:
            entry = ChatEntry.model_validate(event.get("message"))
        except ValueError:
            log.warning("game %s: a chat message from another process could not be read", live.id)
            return
        self.chat_told(live, entry)

    async def chat(
        self, live: LiveGame, seat: int | None, user: User | None, text: str, connection: Any
    ) -> ChatEntry:
        """Say something at the table: stored, then told to every watcher on every process."""
        if seat is None and user is None:
            raise ServiceError(
                "login_required", _("players and logged-in spectators can chat: log in to chat"), 403
            )
        self.standing.refuse(user.id if user is not None else None)
        if seat is not None:
            self.standing.refuse(live.seats[seat].user_id)
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
                entry: ChatEntry = await self.games.write(job)
                break
            except IntegrityError:  # another process numbered a message the same: number it again
                if attempt == 2:
                    raise ServiceError(
                        "storage", _("the message could not be saved: try again"), 503
                    ) from None
            except Exception as exc:
                log.exception("game %s: a chat message could not be stored", live.id)
                raise ServiceError("storage", _("the message could not be saved: try again"), 503) from exc
        self.chat_told(live, entry)
        self.games.publish(live.id, {"type": "chat", "message": entry.model_dump(mode="json")})
        return entry

    def chat_told(self, live: LiveGame, entry: ChatEntry) -> None:
        """A message said here or through another process: kept for clients that connect, sent to
        the watchers here."""
        tail = {e.number: e for e in live.chat_tail}
        tail[entry.number] = entry
        live.chat_tail = [tail[n] for n in sorted(tail)][-self.settings.chat_history :]
        self.tell(live, [entry], history=False)

    def tell(self, live: LiveGame, entries: list[ChatEntry], *, history: bool) -> None:
        """Send messages to the watchers here, each only those it may see (not of an account it
        blocked)."""
        dumped = [(e, e.model_dump(mode="json")) for e in entries]
        for sub in list(live.subscribers):
            shown = [data for e, data in dumped if not self.blocked_for(sub, e)]
            if shown:
                sub.push({"type": "chat", "history": history, "messages": shown})

    @staticmethod
    def blocked_for(sub: Subscriber, entry: ChatEntry) -> bool:
        return entry.user is not None and entry.user in sub.blocked

    def visible(self, sub: Subscriber, entries: list[ChatEntry]) -> list[ChatEntry]:
        """The messages of ``entries`` the watcher may see."""
        return [e for e in entries if not self.blocked_for(sub, e)]

    def remove(self, live: LiveGame, numbers: list[int]) -> None:
        """Messages hidden by a moderator (or of a deleted account): taken back from every watcher
        here, and out of the messages kept for those that connect."""
        gone = set(numbers)
        live.chat_tail = [e for e in live.chat_tail if e.number not in gone]
        message = {"type": "chat_removed", "numbers": sorted(gone)}
        for sub in list(live.subscribers):
            sub.push(message)

    async def show_again(self, live: LiveGame, number: int) -> None:
        """A message a moderator shows again: told to the watchers here (as history: it is not new)."""
        entry = await self.games.read(partial(store.chat_entry, game_id=live.id, number=number))
        if entry is None:
            return
        tail = {e.number: e for e in live.chat_tail}
        tail[entry.number] = entry
        live.chat_tail = [tail[n] for n in sorted(tail)][-self.settings.chat_history :]
        self.tell(live, [entry], history=True)

    def blocks_changed(self, live: LiveGame, sub: Subscriber, blocked: frozenset[str]) -> None:
        """A watcher's person blocked or unblocked an account: the messages of a newly blocked one
        are taken back from it, those of an unblocked one sent."""
        before, sub.blocked = sub.blocked, blocked
        hidden = [e.number for e in live.chat_tail if e.user in blocked - before]
        shown = [e.model_dump(mode="json") for e in live.chat_tail if e.user in before - blocked]
        if hidden:
            sub.push({"type": "chat_removed", "numbers": hidden})
        if shown:
            sub.push({"type": "chat", "history": True, "messages": shown})

    async def chat_history(self, live: LiveGame) -> list[ChatEntry]:
        """The table's last messages (``chat_history``), read from the database once while the game
        is in memory here, then kept up to date as they are told."""
        if not live.chat_loaded:
            stored = await self.games.read(
                partial(store.last_chat, game_id=live.id, count=self.settings.chat_history)
            )
            merged = {e.number: e for e in stored}
            merged.update({e.number: e for e in live.chat_tail})  # told while it was read
            live.chat_tail = [merged[n] for n in sorted(merged)][-self.settings.chat_history :]
            live.chat_loaded = True
        return list(live.chat_tail)

    async def read_chat(
        self, game_id: str, after: int, limit: int, viewer: int | None = None
    ) -> list[ChatEntry]:
        """The stored messages (not those hidden, nor for a logged-in ``viewer`` those of the
        accounts they blocked)."""
        await self.games.get_live(game_id)  # an unknown game is not_found, not an empty chat
        entries: list[ChatEntry] = await self.games.read(
            partial(store.read_chat, game_id=game_id, after=after, limit=limit, viewer=viewer)
        )
        return entries
