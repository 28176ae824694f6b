"""The game's WebSocket: a seat (after ``hello`` with its token) or a spectator, every change of the
table as it happens, and the seat's actions, hints, chat."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from typing import Any
from urllib.parse import urlsplit

from fastapi import FastAPI, WebSocket
from pydantic import BaseModel, ValidationError
from starlette.websockets import WebSocketDisconnect, WebSocketState

from coloretto.web.api.answers import error_body, validation_message
from coloretto.web.api.csrf import request_cookies
from coloretto.web.api.middleware import MAX_JSON_DEPTH, json_depth
from coloretto.web.common import i18n, metrics
from coloretto.web.common.errors import ServiceError
from coloretto.web.common.i18n import gettext as _
from coloretto.web.common.names import User
from coloretto.web.common.schemas import (
    CLIENT_MESSAGE_TYPES,
    ActMessage,
    ChatMessage,
    HelloMessage,
    HintMessage,
    PingMessage,
    ReclaimMessage,
    ResignMessage,
    SyncMessage,
)
from coloretto.web.features.accounts import SESSION_COOKIE
from coloretto.web.features.site import Site
from coloretto.web.runtime.games import RESTART_CLOSE
from coloretto.web.table.changes import PROTOCOLS
from coloretto.web.table.live import hash_token
from coloretto.web.table.watchers import Subscriber

log = logging.getLogger("coloretto.web")


def add_socket_route(app: FastAPI, site: Site) -> None:
    @app.websocket("/api/games/{game_id}/ws")
    async def game_socket(websocket: WebSocket, game_id: str) -> None:
        await GameSocket(site, websocket, game_id).run()


class GameSocket:
    """One WebSocket client: a seat (after ``hello`` with its token) or a spectator.

    Client messages (JSON text, one object each)::

        {"type": "hello", "token": "..."}           take your seat (no token: the logged-in
                                                     account's seat, else watch)
        {"type": "act", "action": "t2", "move": 17}  play; "move" = moves seen (optional)
        {"type": "hint"}                             analysis of your position
        {"type": "reclaim"}                          take your seat back from the bot playing for you
        {"type": "resign"}                           give the game up: a bot plays your seat to the end
        {"type": "chat", "text": "..."}              say something (players, logged-in spectators)
        {"type": "ping"}
        {"type": "sync"}                             send me my whole table again (protocol 2)

    The URL may ask for a protocol: ``?protocol=1`` (the default) sends the whole table in a
    ``state`` message after every change; ``?protocol=2`` sends it once (on connecting, on
    ``hello``, on ``sync``; with its version ``v``) and then, for every change, a ``change``
    message from the version the client has (``from``) to the next (``v``): the paths of the
    view that changed and the log's new entries (:mod:`coloretto.web.table.changes`). A client
    that is sent a ``change`` whose ``from`` is not the version it has asks with ``sync``.

    Server messages: ``state`` (the whole table; protocol 1: after every change), ``change``
    (protocol 2: what changed),
    ``welcome`` (``seat``, and ``user``: the logged-in account's name), ``error`` (``error`` code
    and ``message``), ``hint``, ``thinking`` (a bot's seat, or null once it answered), ``review``
    (a review of the game ended: ``game``, ``status``), ``chat`` (``messages``, oldest first;
    ``history`` true for the last ones, sent on connecting when there are any; never those of an
    account the person blocked), ``chat_removed`` (``numbers``: messages a moderator hid, or of a
    deleted account, or of an account just blocked: take them off the page), ``rematch`` (the
    finished game's rematch: ``game``), ``pong``. A connection whose account is banned,
    deleted or logged out (a password change, "log out everywhere") is sent an ``error``
    (``banned``, ``account_deleted``, ``session_ended``) and closed with code 4401.

    Every message received, sent and refused is counted in ``/metrics`` by its type (or error
    code); an action's time until the state holding it is sent on this socket too.

    When the server stops (SIGTERM: a restart, a deploy) it closes the connection with code 1012
    (service restart) after the messages already queued: the client reconnects at once, and says
    again what it had sent meanwhile (a move sent after the drain began is not handled here).
    """

    def __init__(self, site: Site, websocket: WebSocket, game_id: str) -> None:
        self.site = site
        self.ws = websocket
        self.game_id = game_id
        settings = self.site.settings
        self.settings = settings
        self.sub = Subscriber(settings.send_queue)
        self.allowance = float(settings.message_burst)
        self.last = time.monotonic()
        self.strikes = 0
        self.user: User | None = None  #: the logged-in person, from the handshake's session cookie
        self.reading = True  #: False once the server drains: the client's messages are no longer handled
        self._idle = asyncio.Event()  #: set while no message of the client is being handled
        self._idle.set()

    def _origin_refused(self) -> str | None:
        """Why the page that opened this socket may not (another site's), or None. Clients that are
        not browsers send no Origin and are let in: the check stops other sites' pages."""
        origin = self.ws.headers.get("origin")
        if origin is None:
            return None
        allowed = {o.rstrip("/").lower() for o in self.settings.allowed_origins}
        if origin.rstrip("/").lower() in allowed:
            return None
        parts = urlsplit(origin)
        host = (self.ws.headers.get("host") or "").lower()
        if parts.scheme in ("http", "https") and parts.netloc.lower() == host and host:
            return None
        return _(
            "origin {origin} is not allowed (only this server's own pages or --allowed-origin)",
            origin=repr(origin[:80]),
        )

    # ------------------------------------------------------------ the drain (site.Connection)

    def stop_reading(self) -> None:
        self.reading = False

    def start_reading(self) -> None:
        self.reading = True

    async def settled(self) -> None:
        await self._idle.wait()

    def close_for_restart(self) -> None:
        self.sub.push(RESTART_CLOSE)

    # ------------------------------------------------------------ the connection

    async def run(self) -> None:
        await self.ws.accept()
        metrics.WEBSOCKETS_OPEN.inc()
        try:
            await self._serve()
        finally:
            metrics.WEBSOCKETS_OPEN.dec()

    async def _serve(self) -> None:
        if self.site.draining:  # accepted as the server stopped listening: the client goes elsewhere
            await self._close(1012)
            return
        refused = self._origin_refused()
        protocol = self.ws.query_params.get("protocol", "1")
        if refused is None and protocol not in {str(p) for p in PROTOCOLS}:
            protocols = ", ".join(str(p) for p in PROTOCOLS)
            metrics.websocket_sent["error"].inc()
            refusal = _(
                "unknown protocol {protocol}: this server speaks protocols {protocols}",
                protocol=repr(protocol[:20]),
                protocols=protocols,
            )
            await self.ws.send_json({"type": "error", **error_body("bad_protocol", refusal)})
            await self.ws.close(code=1008, reason="unknown protocol")
            return
        self.sub.protocol = int(protocol)
        if refused is not None:
            metrics.websocket_sent["error"].inc()
            await self.ws.send_json({"type": "error", **error_body("bad_origin", refused)})
            await self.ws.close(code=1008, reason="origin not allowed")
            return
        try:
            live = await self.site.games.get_live(self.game_id, keep=True)
            session = request_cookies(self.ws.scope).get(SESSION_COOKIE)
            self.user = await self.site.accounts.user_of(session)
            if self.user is not None and session:
                # what a ban, a password change or "log out everywhere" closes, and whose chat
                # this person blocked
                self.sub.user_id, self.sub.session = self.user.id, hash_token(session)
                self.sub.blocked = await self.site.moderation.blocked_names(self.user.id)
            # the copy in memory now (the one read may have been dropped meanwhile): from here on
            # every change reaches this client; then whatever this copy may have missed is read
            live = self.site.games.subscribe(live, self.sub)
        except ServiceError as exc:
            metrics.websocket_sent["error"].inc()
            await self.ws.send_json({"type": "error", **error_body(exc.code, exc.message)})
            await self.ws.close(code=4404 if exc.status == 404 else 1008)
            return
        writer = asyncio.create_task(self._writer())
        self.site.connections.add(self)
        if self.site.draining:  # the drain began while this client connected
            self.stop_reading()
            self.close_for_restart()
        try:
            await self.site.sync.catch_up(live)
        except Exception:  # the table is still shown as this process has it
            log.exception("game %s: could not be read again for a client", self.game_id)
        self.site.games.send_state(live, self.sub)
        try:
            history = await self.site.chat.chat_history(live)
        except Exception:  # the table works without its chat's history
            log.exception("game %s: the chat could not be read", self.game_id)
            history = []
        history = self.site.chat.visible(self.sub, history)
        if history:
            self.sub.push(
                {"type": "chat", "history": True, "messages": [e.model_dump(mode="json") for e in history]}
            )
        try:
            while not writer.done():
                message = await self.ws.receive()
                if message["type"] == "websocket.disconnect":
                    break
                received = time.perf_counter()
                if not self.reading:
                    # the server drains: the close (1012) follows the answers already queued, and
                    # the client says this again to the process it reconnects to
                    metrics.websocket_received[metrics.UNREAD].inc()
                    continue
                if not self._allow():
                    metrics.websocket_received[metrics.UNREAD].inc()
                    if self.strikes >= self.settings.flood_disconnect_after:
                        self._error("flood", _("too many messages: the connection is closed"))
                        self.sub.push({"type": "__close__", "code": 1008})
                        break
                    self._refuse_for_rate()
                    continue
                text = message.get("text")
                if text is None:
                    data = message.get("bytes") or b""
                    if len(data) > self.settings.max_message_bytes:
                        metrics.websocket_received[metrics.UNREAD].inc()
                        self._too_large(len(data))
                        continue
                    try:
                        text = data.decode("utf-8")
                    except UnicodeDecodeError:
                        metrics.websocket_received[metrics.INVALID].inc()
                        self._error("bad_json", _("messages are JSON text (UTF-8)"))
                        continue
                size = len(text.encode("utf-8", "replace"))
                if size > self.settings.max_message_bytes:
                    metrics.websocket_received[metrics.UNREAD].inc()
                    self._too_large(size)
                    continue
                self._idle.clear()
                try:
                    await self._handle(live, text, received)
                finally:
                    self._idle.set()
        except (WebSocketDisconnect, RuntimeError):  # RuntimeError: the socket closed under us
            pass
        finally:
            self.site.connections.discard(self)
            self.site.games.unsubscribe(live, self.sub)
            with contextlib.suppress(asyncio.TimeoutError, Exception):
                await asyncio.wait_for(asyncio.shield(writer), timeout=1.0)
            writer.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await writer

    def _allow(self) -> bool:
        """A token bucket: ``message_burst`` at once, ``messages_per_second`` sustained."""
        now = time.monotonic()
        rate = self.settings.messages_per_second
        self.allowance = min(float(self.settings.message_burst), self.allowance + (now - self.last) * rate)
        self.last = now
        if self.allowance >= 1.0:
            self.allowance -= 1.0
            self.strikes = 0
            return True
        self.strikes += 1
        return False

    def _refuse_for_rate(self) -> None:
        """Every message refused for the rate is answered: a client whose move was refused must
        learn it, or it waits for ever for a table that cannot change (a person to move, their
        move dropped without a word). ``retry_after``: seconds until one message passes again."""
        rate = self.settings.messages_per_second
        wait = max(0.0, (1.0 - self.allowance) / rate)
        metrics.websocket_refused["rate_limited"].inc()
        self.sub.push(
            {
                "type": "error",
                **error_body(
                    "rate_limited",
                    _(
                        "too many messages: at most {rate} a second (bursts of {burst}); this one was "
                        "ignored: send it again",
                        rate=i18n.number(rate),
                        burst=self.settings.message_burst,
                    ),
                ),
                "retry_after": round(wait, 3),
            }
        )

    def _too_large(self, size: int) -> None:
        self._error(
            "too_large",
            _(
                "message of {size} bytes refused: the limit is {limit}",
                size=size,
                limit=self.settings.max_message_bytes,
            ),
        )

    def _error(self, code: str, message: str) -> None:
        """Answer the message just received with an error (it was not done)."""
        metrics.websocket_refused[code].inc()
        self.sub.push({"type": "error", **error_body(code, message)})

    async def _handle(self, live: Any, text: str, received: float) -> None:
        """Do one message (``received``: when it arrived, ``time.perf_counter``)."""
        counted = metrics.websocket_received
        if json_depth(text.encode("utf-8", "replace")) > MAX_JSON_DEPTH:
            counted[metrics.INVALID].inc()
            self._error(
                "bad_json", _("a message nests arrays and objects at most {depth} deep", depth=MAX_JSON_DEPTH)
            )
            return
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            counted[metrics.INVALID].inc()
            self._error(
                "bad_json",
                _("not valid JSON ({problem} at character {position})", problem=exc.msg, position=exc.pos),
            )
            return
        except RecursionError:  # the depth check above should make this unreachable
            counted[metrics.INVALID].inc()
            self._error("bad_json", _("a message nests arrays and objects too deeply"))
            return
        if not isinstance(data, dict):
            counted[metrics.INVALID].inc()
            self._error("bad_message", _("a message is a JSON object with a 'type'"))
            return
        kind = data.get("type")
        if kind not in CLIENT_MESSAGE_TYPES:
            counted[metrics.UNKNOWN].inc()
            self._error(
                "unknown_type",
                _(
                    "unknown message type {kind}: expected one of {kinds}",
                    kind=repr(str(kind)[:40]),
                    kinds=", ".join(CLIENT_MESSAGE_TYPES),
                ),
            )
            return
        models: dict[str, type[BaseModel]] = {
            "hello": HelloMessage, "act": ActMessage, "hint": HintMessage, "reclaim": ReclaimMessage,
            "resign": ResignMessage, "chat": ChatMessage, "ping": PingMessage, "sync": SyncMessage,
        }  # fmt: skip
        model = models[kind]
        counted[kind].inc()
        try:
            msg = model.model_validate(data)
        except ValidationError as exc:
            self._error(
                "bad_message",
                _("bad {kind} message: {problem}", kind=kind, problem=validation_message(exc.errors())),
            )
            return
        try:
            if isinstance(msg, HelloMessage):
                seat = await self.site.seats.find_seat(live, msg.token, self.user.id if self.user else None)
                before = live.local_presence()
                self.sub.seat = seat
                self.sub.push(
                    {"type": "welcome", "seat": seat, "user": self.user.name if self.user else None}
                )
                self.site.games.seat_changed(live, before)  # the others see the seat online, soon
                self.site.games.send_state(live, self.sub)  # its own view, with its legal actions
                await self.site.play.reclaim(live, seat)  # back at the table: no bot plays for them
            elif isinstance(msg, ActMessage):
                await self.site.play.act_as(live, self.sub.seat, msg.action, msg.move)
                # the state holding the move is queued for this socket by now: this mark comes
                # after it, and the writer times the action when it gets here
                self.sub.push({"type": "__acted__", "at": received})
            elif isinstance(msg, ReclaimMessage):
                if self.sub.seat is None:
                    raise ServiceError("not_seated", _("only a player can take a seat back"), 403)
                await self.site.play.reclaim(live, self.sub.seat, asked=True)
            elif isinstance(msg, ResignMessage):
                await self.site.play.resign(live, self.sub.seat)
            elif isinstance(msg, ChatMessage):
                await self.site.chat.chat(live, self.sub.seat, self.user, msg.text, id(self))
            elif isinstance(msg, HintMessage):
                hint = await self.site.hints.hint_for(live, self.sub.seat)
                self.sub.push({"type": "hint", **hint.model_dump(mode="json")})
            elif isinstance(msg, SyncMessage):
                self.site.games.send_state(live, self.sub)
            else:
                self.sub.push({"type": "pong"})
        except ServiceError as exc:
            self._error(exc.code, exc.message)
        except Exception as exc:
            what = f"a {kind} message failed: {text[:200]!r}"
            self.site.incidents.record("message", live, what, exc)
            self.site.games.spawn(self.site.games.recover(live))  # whatever it left half-done is read again
            self._error("internal", _("the server could not handle this message; the game is unchanged"))

    async def _writer(self) -> None:
        sent = metrics.websocket_sent
        state, acted = sent["state"], metrics.action_broadcast["websocket"]
        while True:
            message = await self.sub.queue.get()
            if message is None:  # the client read too slowly and was dropped
                await self._close(1008)
                return
            if isinstance(message, str):  # a state, written once for every watcher of a seat
                await self.ws.send_text(message)
                state.inc()
                continue
            kind = message.get("type")
            if kind == "__close__":
                await self._close(int(message["code"]))
                return
            if kind == "__acted__":
                acted.observe(time.perf_counter() - message["at"])
                continue
            await self.ws.send_text(json.dumps(message, separators=(",", ":")))
            sent[kind].inc()

    async def _close(self, code: int) -> None:
        if self.ws.client_state == WebSocketState.CONNECTED:
            with contextlib.suppress(Exception):
                await self.ws.close(code=code, reason="service restart" if code == 1012 else None)
