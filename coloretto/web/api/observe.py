"""What the server sees of every request, before anything else: its request id (for the logs and
the answer's ``X-Request-ID``), its game (for the logs), and, once answered, its route template,
method, status code and time (for ``/metrics``)."""

from __future__ import annotations

import re
import time

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from coloretto.web.common import logs, metrics

REQUEST_ID_HEADER = b"x-request-id"
#: the scope key holding when the request arrived (``time.perf_counter``)
STARTED = "coloretto.started"
#: the game of a path: ``/api/games/ID…`` and ``/games/ID…`` (an id is at most 16 characters)
_GAME_PATH = re.compile(r"/(?:api/)?games/([A-Za-z0-9_-]{1,16})(?:/|$)")


def route_template(scope: Scope) -> str:
    """The route a request matched, as declared (``/api/games/{game_id}``), never its path;
    :data:`~coloretto.web.common.metrics.UNMATCHED` for none."""
    route = scope.get("route")
    path = getattr(route, "path", None)
    return path if isinstance(path, str) and path else metrics.UNMATCHED


class Observe:
    """ASGI middleware, the outermost but for the security headers
    (:class:`~coloretto.web.api.headers.ResponseHeaders`): the request id and the game for the logs
    (:mod:`coloretto.web.common.logs`), the ``X-Request-ID`` of the answer (of a WebSocket's
    handshake too), and each HTTP request counted and timed by route template, method and status."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        scope[STARTED] = started
        said = None
        for name, value in scope.get("headers", ()):
            if name == REQUEST_ID_HEADER:
                said = value
                break
        rid = logs.request_id_from(said)
        # left set when the app raises: the server's answer to the fault is logged with them
        logs.request_id.set(rid)
        found = _GAME_PATH.match(scope.get("path", ""))
        logs.current_game.set(found.group(1) if found else None)
        header = (REQUEST_ID_HEADER, rid.encode("ascii"))
        if kind == "websocket":

            async def send_socket(message: Message) -> None:
                if message["type"] == "websocket.accept":
                    message = {**message, "headers": [*message.get("headers", ()), header]}
                await send(message)

            await self.app(scope, receive, send_socket)
            return
        status = 500  # what the client gets if the app raises before it answers

        async def send_http(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
                message = {**message, "headers": [*message.get("headers", ()), header]}
            await send(message)

        try:
            await self.app(scope, receive, send_http)
        finally:
            route = route_template(scope)
            method = scope.get("method", "GET")
            if method not in metrics.METHODS:
                method = metrics.OTHER
            metrics.http_requests[route, method, str(status)].inc()
            metrics.http_duration[route, method].observe(time.perf_counter() - started)
