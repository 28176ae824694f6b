"""A client watching a game (a WebSocket, here in this process): the queue of what it is sent,
in order, and its seat."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from coloretto.web.common.i18n import current_language
from coloretto.web.table.changes import SentView

#: a message for a client: a dict, or JSON text already made (a state, made once for many clients)
Message = dict[str, Any] | str


class Subscriber:
    """A client watching a game (a WebSocket): gets every state change, in order."""

    def __init__(self, max_queue: int, protocol: int = 1) -> None:
        self.seat: int | None = None
        #: 1: sent the whole table after every change; 2: sent it once, then the changes
        #: (:mod:`coloretto.web.table.changes`)
        self.protocol = protocol
        #: protocol 2: the version of the view it was last sent (None: none yet), and that view
        #: when it was sent to it alone (its whole table, made between two changes)
        self.version: int | None = None
        self.base: SentView | None = None
        #: the logged-in account of the connection (None: a guest), and its session's digest (what
        #: "log out everywhere" and a password change end)
        self.user_id: int | None = None
        self.session: str | None = None
        #: the names of the accounts whose chat this person blocked: never sent to this client
        self.blocked: frozenset[str] = frozenset()
        #: the client's language (of the connection it was made for): for what others send it
        self.language = current_language.get()
        self.queue: asyncio.Queue[Message | None] = asyncio.Queue(max_queue)
        self.dropped = False
        #: whether it was sent its first, whole table: until then no change is sent to it (a copy
        #: read again as the client connects tells its missed moves one by one to its watchers,
        #: older than what this client may already have seen through another process)
        self.shown = False

    def push(self, message: Message) -> None:
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
