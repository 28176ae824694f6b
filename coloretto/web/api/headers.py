"""The headers every answer carries: the browser's security policy for the site's pages (a
Content-Security-Policy with no inline script or style, no framing, no plug-ins), and, while the
server drains before it exits, ``Connection: close``.

The policy (``docs/operator/threat-model.md`` says what each part stops):

- ``default-src 'self'``; ``script-src 'self'``: only the site's own script files run, never a
  script written into a page (no ``unsafe-inline``, no ``eval``): a name or a chat message that
  slipped through escaping could not run;
- ``style-src 'self'``: only the site's style sheet; no ``style`` attribute or element either
  (scripts set styles through the CSSOM, which the policy allows): injected markup cannot restyle
  the page to read it out through CSS;
- ``connect-src 'self'`` and the ``ws:``/``wss:`` address of the host asked for (browsers before
  CSP 3 do not count a WebSocket of the same host as ``'self'``);
- ``object-src 'none'``, ``base-uri 'self'``, ``form-action 'self'``, ``frame-ancestors 'none'``
  (and ``X-Frame-Options: DENY`` for browsers that know only that): no plug-in, no ``<base>``
  pointing scripts elsewhere, no form sent to another site, no page of the site in another's frame;
- ``X-Content-Type-Options: nosniff``, ``Referrer-Policy: same-origin``, a ``Permissions-Policy``
  that gives no page the camera, microphone, location, payment or USB,
  ``Cross-Origin-Opener-Policy: same-origin``;
- ``Strict-Transport-Security`` only on an answer to a request that came over https (to this
  server, or to a ``--trusted-proxy`` that says ``X-Forwarded-Proto: https``): over plain http it
  would mean nothing, and a site tried out over http must not be locked to https by it.

A route that needs another policy (the API's interactive documentation, ``/docs``, loads its
scripts from a CDN) sets its own ``Content-Security-Policy``; the others are added to it.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from coloretto.web.api.middleware import Network, came_over_https

#: the policy of every page and answer; {connect} is the WebSocket addresses of the host asked for
POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; font-src 'self'; "
    "connect-src 'self'{connect}; object-src 'none'; base-uri 'self'; form-action 'self'; "
    "frame-ancestors 'none'"
)
PERMISSIONS = "camera=(), microphone=(), geolocation=(), payment=(), usb=()"
#: a year: the browser asks for https only, for this long after an answer over https said so
HSTS = "max-age=31536000"
FIXED: tuple[tuple[bytes, bytes], ...] = (
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"same-origin"),
    (b"permissions-policy", PERMISSIONS.encode()),
    (b"cross-origin-opener-policy", b"same-origin"),
)
#: a Host header that may be written into the policy as it is (a name or address, and a port)
_HOST = re.compile(r"^(?:[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.?|\[[0-9A-Fa-f:.]+\])(?::[0-9]{1,5})?$")


def content_security_policy(host: str | None) -> str:
    """The policy of a page asked for on ``host`` (the request's ``Host``; one that is not a plain
    host name or address is left out, and ``'self'`` alone allows the WebSocket)."""
    connect = f" ws://{host} wss://{host}" if host and _HOST.match(host) else ""
    return POLICY.format(connect=connect)


class ResponseHeaders:
    """Adds the security headers to every HTTP answer (ASGI middleware), and ``Connection: close``
    while ``draining()`` says the server drains, so that a client's next request goes to a new
    connection, which a proxy sends to another process."""

    def __init__(self, app: ASGIApp, proxies: list[Network], draining: Callable[[], bool]) -> None:
        self.app = app
        self.proxies = proxies
        self.draining = draining

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        host = next((v.decode("latin-1") for n, v in scope.get("headers", ()) if n == b"host"), None)
        https = came_over_https(scope, self.proxies)

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", ()))
                names = {name.lower() for name, _ in headers}
                if b"content-security-policy" not in names:
                    headers.append((b"content-security-policy", content_security_policy(host).encode()))
                headers.extend(header for header in FIXED if header[0] not in names)
                if https:
                    headers.append((b"strict-transport-security", HSTS.encode()))
                if self.draining():
                    headers = [h for h in headers if h[0].lower() != b"connection"]
                    headers.append((b"connection", b"close"))
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_with_headers)
