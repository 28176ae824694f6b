"""What every request goes through before a route: its body's size and shape, the rate per client
address, and who the client is behind the trusted proxies."""

from __future__ import annotations

import ipaddress
import json
import math

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from coloretto.web.api.answers import error_body
from coloretto.web.common import i18n
from coloretto.web.common.i18n import gettext as _
from coloretto.web.runtime.limits import Counters, client_key

#: JSON nested deeper than this is refused before it is parsed (no request needs more than 4)
MAX_JSON_DEPTH = 32


def json_depth(data: bytes) -> int:
    """How deeply arrays and objects nest in JSON text (strings skipped), without parsing it."""
    depth = deepest = 0
    in_string = escaped = False
    for byte in data:
        if in_string:
            if escaped:
                escaped = False
            elif byte == 0x5C:  # backslash
                escaped = True
            elif byte == 0x22:
                in_string = False
        elif byte == 0x22:
            in_string = True
        elif byte in (0x5B, 0x7B):  # [ {
            depth += 1
            deepest = max(deepest, depth)
        elif byte in (0x5D, 0x7D):
            depth -= 1
    return deepest


def body_problem(body: bytes) -> str | None:
    """Why a request body cannot be JSON at all (bad UTF-8, too deep), or None."""
    try:
        body.decode("utf-8")
    except UnicodeDecodeError as exc:
        return _("the request body is not UTF-8 text (byte {byte} cannot be read)", byte=exc.start + 1)
    if json_depth(body) > MAX_JSON_DEPTH:
        return _("the request body nests arrays and objects more than {depth} deep", depth=MAX_JSON_DEPTH)
    return None


class BodyLimit:
    """Reads an HTTP request's body before the app does: over ``limit`` bytes (by Content-Length
    or as it arrives, chunked) it is refused with 413 ``too_large``; not UTF-8 or nested too
    deeply, with 422 ``bad_request`` (ASGI middleware)."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for name, value in scope.get("headers", ()):
            if name == b"content-length" and value.isdigit() and int(value) > self.limit:
                await _answer(
                    send, 413, "too_large", _("request bodies are limited to {limit} bytes", limit=self.limit)
                )
                return
        chunks: list[bytes] = []
        received = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":  # the client went away
                return
            chunk = message.get("body", b"")
            received += len(chunk)
            if received > self.limit:
                await _answer(
                    send, 413, "too_large", _("request bodies are limited to {limit} bytes", limit=self.limit)
                )
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        problem = body_problem(body) if body else None
        if problem is not None:
            await _answer(send, 422, "bad_request", problem)
            return
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)


async def _answer(send: Send, status: int, code: str, message: str) -> None:
    body = json.dumps(error_body(code, message)).encode()
    await send(
        {"type": "http.response.start", "status": status, "headers": [(b"content-type", b"application/json")]}
    )
    await send({"type": "http.response.body", "body": body})


Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def trusted_networks(proxies: tuple[str, ...]) -> list[Network]:
    """The ``--trusted-proxy`` addresses or networks; a bad one is a one-line ValueError."""
    networks = []
    for text in proxies:
        try:
            networks.append(ipaddress.ip_network(text.strip(), strict=False))
        except ValueError:
            raise ValueError(f"--trusted-proxy {text!r} is not an IP address or network") from None
    return networks


def _in(address: str, networks: list[Network]) -> bool:
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    return any(ip in network for network in networks)


def client_address(scope: Scope, proxies: list[Network]) -> str:
    """The client a request comes from: the peer's address, or, when the peer is a trusted proxy,
    the last address in ``X-Forwarded-For`` that is not one of the trusted proxies."""
    peer = scope.get("client")
    address = str(peer[0]) if peer else "unknown"
    if not proxies or not _in(address, proxies):
        return address
    forwarded: list[str] = []
    for name, value in scope.get("headers", ()):
        if name == b"x-forwarded-for":
            forwarded.extend(part.strip() for part in value.decode("latin-1").split(","))
    for hop in reversed(forwarded):
        if not _in(hop, proxies):
            try:
                return str(ipaddress.ip_address(hop))
            except ValueError:  # a forged or broken header: the proxy itself is the client
                return address
    return address


def came_over_https(scope: Scope, proxies: list[Network]) -> bool:
    """Whether the browser's request came over https: to this server itself, or to a trusted proxy
    that says so (``X-Forwarded-Proto: https``, the last value: the proxy's own)."""
    if scope.get("scheme") in ("https", "wss"):
        return True
    peer = scope.get("client")
    if not peer or not proxies or not _in(str(peer[0]), proxies):
        return False
    said = [v for n, v in scope.get("headers", ()) if n == b"x-forwarded-proto"]
    return bool(said) and said[-1].decode("latin-1").split(",")[-1].strip().lower() == "https"


class RequestLimit:
    """``requests_per_minute`` HTTP requests (and WebSocket handshakes) per client address, as a
    token bucket: a minute's worth at once, refilled steadily; over it, 429 ``rate_limited``
    with ``Retry-After`` (ASGI middleware). Counted by ``counters``: in Redis for every process
    of a cluster, else in this one (:mod:`coloretto.web.runtime.limits`)."""

    def __init__(self, app: ASGIApp, per_minute: int, proxies: list[Network], counters: Counters) -> None:
        self.app = app
        self.per_minute = per_minute
        self.proxies = proxies
        self.counters = counters

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket") or not self.per_minute:
            await self.app(scope, receive, send)
            return
        client = client_address(scope, self.proxies)
        waited = await self.counters.rate(client_key("requests", client), self.per_minute)
        if not waited:
            await self.app(scope, receive, send)
            return
        wait = max(1, math.ceil(waited - 1e-6))
        message = _(
            "too many requests: at most {limit} a minute from one address; try again in {wait} s",
            limit=i18n.number(self.per_minute),
            wait=wait,
        )
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008, "reason": "rate_limited"})
            return
        body = json.dumps(error_body("rate_limited", message)).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 429,
                "headers": [(b"content-type", b"application/json"), (b"retry-after", str(wait).encode())],
            }
        )
        await send({"type": "http.response.body", "body": body})
