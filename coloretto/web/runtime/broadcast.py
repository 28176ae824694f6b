"""Who watches a game in this process, and telling them: every state change, in order, each client
its own view (a seat's legal actions differ from a spectator's).

Other processes' watchers are told through the bus (:mod:`coloretto.web.runtime.cluster`): this module
only speaks to the WebSockets connected here.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from coloretto.web.common.faults import inject
from coloretto.web.common.incidents import Incidents
from coloretto.web.table.changes import SentView, change_message
from coloretto.web.table.live import LiveGame
from coloretto.web.table.views import card_legend_json
from coloretto.web.table.watchers import Subscriber


def _whole_table(body: str, deal: int, live: LiveGame, version: int | None) -> str:
    """A ``state`` message as JSON text (with the view's ``v``ersion for protocol 2) of the view
    ``body`` (JSON text). The log and the card legend are most of a state and change by one entry
    a move, or never: they are put in as JSON written once."""
    head = '{"type":"state",' if version is None else f'{{"type":"state","v":{version},'
    return (
        head
        + '"state":'
        + body[:-1]
        + ',"log":'
        + live.log_json(deal)
        + ',"cards":'
        + card_legend_json(live.rules.edition)
        + "}}"
    )


def _json(view: dict[str, Any]) -> str:
    return json.dumps(view, separators=(",", ":"), ensure_ascii=False)


@dataclass
class Update:
    """One seat's view (or the spectators') as it is now, and the messages made of it, each made
    once for all its watchers: the whole table, or the change from the view they were sent."""

    live: LiveGame
    sent: SentView
    previous: SentView | None  #: what its watchers were sent before, when it differs
    _texts: dict[str, str] = field(default_factory=dict)

    def message_for(self, sub: Subscriber) -> str | None:
        """What ``sub`` is sent (None: nothing, its view has not changed)."""
        if sub.protocol == 1:
            return self._text("whole")
        own, sub.base = sub.base, None
        if sub.version == self.sent.version:
            return None
        if self.previous is not None and sub.version == self.previous.version:
            text = self._text("change")
        elif own is not None and own.version == sub.version:  # the view it was sent on its own
            text = change_message(own, self.sent)
        else:
            text = self._text("versioned")
        sub.version = self.sent.version
        return text

    def _text(self, kind: str) -> str:
        text = self._texts.get(kind)
        if text is None:
            if kind == "change":
                assert self.previous is not None
                text = change_message(self.previous, self.sent)
            else:
                version = self.sent.version if kind == "versioned" else None
                text = _whole_table(_json(self.sent.view), self.sent.deal, self.live, version)
            self._texts[kind] = text
        return text


#: a seat's view (None: the spectators') as the live messages send it; the dict given is kept for
#: the moment of one broadcast, for what the seats' views share (views.live_view)
ViewOf = Callable[[LiveGame, int | None, dict[str, Any] | None], dict[str, Any]]


class Broadcaster:
    """Sends each subscriber of a game its own view; presence changes are told at most once per
    ``presence_interval`` (a client switching seats in a loop makes one message per watcher per
    interval, not one per switch)."""

    def __init__(self, view_of: ViewOf, presence_interval: float) -> None:
        self.view_of = view_of
        self.presence_interval = presence_interval
        #: where a view that could not be made is reported (the service sets it)
        self.incidents: Incidents | None = None

    def state(self, live: LiveGame) -> bool:
        """Every watcher its own view, now (each seat's view made once): the whole table, or
        (protocol 2) what changed in it. False when a view could not be made: it is reported, the
        other watchers are still told, and the caller sends the table again."""
        if live.presence_task is not None:  # this state tells who is online too
            live.presence_task.cancel()
            live.presence_task = None
        updates: dict[int | None, Update | None] = {}
        shared: dict[str, Any] = {}
        for sub in list(live.subscribers):
            if not sub.shown:  # its first table, sent when it is ready (:meth:`one`), is newer
                continue
            if sub.seat not in updates:
                updates[sub.seat] = self._update(live, sub.seat, shared)
            update = updates[sub.seat]
            message = None if update is None else update.message_for(sub)
            if message is not None:
                sub.push(message)
        return None not in updates.values()

    def _made(
        self, live: LiveGame, seat: int | None, shared: dict[str, Any] | None = None
    ) -> SentView | None:
        """The view of ``seat`` (None: a spectator's) now, versioned as the one its watchers were
        sent when it is that one, else unversioned (0); None when it could not be made (reported)."""
        try:
            inject("broadcast")
            view = self.view_of(live, seat, shared)
        except Exception as exc:
            who = "a spectator" if seat is None else f"seat {seat + 1}"
            if self.incidents is not None:
                self.incidents.record("broadcast", live, f"the table could not be shown to {who}", exc)
            return None
        deal = live.deal
        log = live.log_texts(deal)
        before = live.sent_views.get(seat)
        if before is not None and before.shows(view, deal, log):
            return before
        return SentView(0, view, deal, log)

    def _update(self, live: LiveGame, seat: int | None, shared: dict[str, Any]) -> Update | None:
        """The view of ``seat`` now, and the one its watchers were sent before when it differs
        (:attr:`LiveGame.sent_views`, which it becomes)."""
        made = self._made(live, seat, shared)
        if made is None:
            return None
        before = live.sent_views.get(seat)
        if made is before:
            return Update(live, made, None)
        sent = _versioned(live, made)
        live.sent_views[seat] = sent
        return Update(live, sent, before)

    def message(self, live: LiveGame, message: dict[str, Any]) -> None:
        """The same small message to everyone (a bot is thinking)."""
        for sub in list(live.subscribers):
            sub.push(message)

    def presence(self, live: LiveGame) -> None:
        """Who is online or watching changed: the watchers are sent the table (within the
        interval)."""
        if live.presence_task is not None:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self.state(live)
            return

        def flush() -> None:
            live.presence_task = None
            self.state(live)

        live.presence_task = loop.call_later(self.presence_interval, flush)

    def one(self, live: LiveGame, sub: Subscriber) -> bool:
        """One subscriber's own view, whole, now (it connected, its seat changed, or it asked);
        False when it could not be made (reported). From then on it is sent every change: the
        next one made from the view it was sent here (which the others watching that seat were
        not sent: they are told with the next change, as always)."""
        sub.shown = True
        made = self._made(live, sub.seat)
        if made is None:
            return False
        sub.base = None
        if sub.protocol == 1:
            sub.push(_whole_table(_json(made.view), made.deal, live, None))
            return True
        if made.version == 0:
            made = _versioned(live, made)
            if sub.seat not in live.sent_views:  # the first watcher of this seat: all start from it
                live.sent_views[sub.seat] = made
            else:  # its own until the next change (the others have the one before)
                sub.base = made
        sub.version = made.version
        sub.push(_whole_table(_json(made.view), made.deal, live, made.version))
        return True


def _versioned(live: LiveGame, view: SentView) -> SentView:
    """The view under the game's next version (every seat's views count up together)."""
    live.view_version += 1
    return replace(view, version=live.view_version)
