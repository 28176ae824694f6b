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
text. Muting is the browser's: each message names its seat and, for a logged-in speaker,
their account.
"""

from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import Hashable

from coloretto.web.errors import ServiceError
from coloretto.web.i18n import gettext as _

#: the characters of a message that are spaces to it: made one space, with the others around them
FOLDED = frozenset("\t\n\r")
#: format characters a message may hold though names may not: the joiners that make one emoji
#: of several (a family) and shape some scripts' words; neither changes a line's direction
JOINERS = frozenset("\u200c\u200d")


def clean_chat(text: str, longest: int) -> str:
    """A chat message as it is stored and shown: one line, printable, 1 to ``longest`` characters."""
    from coloretto.web.service import refuse_unprintable

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
