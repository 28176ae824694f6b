"""Who watches a game in this process, and telling them: every state change, in order, each client
its own view (a seat's legal actions differ from a spectator's).

Other processes' watchers are told through the bus (:mod:`coloretto.web.runtime.cluster`): this module
only speaks to the WebSockets connected here.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from coloretto.web.common.faults import inject
from coloretto.web.common.incidents import Incidents
from coloretto.web.common.schemas import TableState
from coloretto.web.table.live import LiveGame
from coloretto.web.table.views import card_legend_json
from coloretto.web.table.watchers import Subscriber


def state_message(state: TableState, live: LiveGame) -> str:
    """A ``state`` message as JSON text. The log and the card legend are most of a state and
    change by one entry a move, or never: they are put in as JSON written once."""
    body = state.model_dump_json(exclude={"log", "cards"})
    return (
        '{"type":"state","state":'
        + body[:-1]
        + ',"log":'
        + live.log_json(state.deal)
        + ',"cards":'
        + card_legend_json(live.rules.edition)
        + "}}"
    )


StateOf = Callable[[LiveGame, int | None], TableState]


class Broadcaster:
    """Sends each subscriber of a game its own view; presence changes are told at most once per
    ``presence_interval`` (a client switching seats in a loop makes one message per watcher per
    interval, not one per switch)."""

    def __init__(self, state_of: StateOf, presence_interval: float) -> None:
        self.state_of = state_of
        self.presence_interval = presence_interval
        #: where a view that could not be made is reported (the service sets it)
        self.incidents: Incidents | None = None

    def state(self, live: LiveGame) -> bool:
        """Every watcher its own view, now (each seat's view made once). False when a view could
        not be made: it is reported, the other watchers are still told, and the caller sends the
        table again."""
        if live.presence_task is not None:  # this state tells who is online too
            live.presence_task.cancel()
            live.presence_task = None
        cache: dict[int | None, str | None] = {}
        for sub in list(live.subscribers):
            if not sub.shown:  # its first table, sent when it is ready (:meth:`one`), is newer
                continue
            if sub.seat not in cache:
                cache[sub.seat] = self._view(live, sub.seat)
            message = cache[sub.seat]
            if message is not None:
                sub.push(message)
        return None not in cache.values()

    def _view(self, live: LiveGame, seat: int | None) -> str | None:
        try:
            inject("broadcast")
            return state_message(self.state_of(live, seat), live)
        except Exception as exc:
            who = "a spectator" if seat is None else f"seat {seat + 1}"
            if self.incidents is not None:
                self.incidents.record("broadcast", live, f"the table could not be shown to {who}", exc)
            return None

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
        """One subscriber's own view, now (its seat changed: its legal actions did); False when it
        could not be made (reported). From then on it is sent every change."""
        sub.shown = True
        message = self._view(live, sub.seat)
        if message is not None:
            sub.push(message)
        return message is not None
