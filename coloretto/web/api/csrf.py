"""Cross-site request forgery: the double-submit token, and the cookies' Secure flag.

A logged-in browser sends its session cookie with every request to this server, even one
that a page of another site makes it send (a form posted there, an image). Such a request
must not act: every state-changing request (POST, PUT, PATCH, DELETE) that carries a cookie
must also carry the ``X-CSRF-Token`` header with the value of the ``coloretto_csrf`` cookie,
which only this site's own pages can read (another site can make the browser send the cookie,
never read it or set the header). The cookie is random, set by :class:`CsrfGuard` on the answer
to any request that comes without it; it is not HttpOnly (the page's script reads it) and
SameSite=Strict. The account's doors (sign-up, log-in, log-out) want the header always, cookie
or not (a page of another site must not log a browser in to the attacker's account either).

A request whose only cookie is the token's own carries no authority (no session): it is let
through without the header, like a request with no cookie at all: programs that speak the API
with a seat token (``Authorization: Bearer``), the load test, and any HTTP client that keeps the
cookies it is given, need nothing more. The game WebSocket keeps its ``Origin`` check.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable
from http.cookies import SimpleCookie

from starlette.requests import cookie_parser
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from coloretto.web.api.answers import error_body
from coloretto.web.common.i18n import gettext as _

CSRF_COOKIE = "coloretto_csrf"
CSRF_HEADER = b"x-csrf-token"
#: where a request's token is kept for the app (the cookie's, or the one set on the answer)
SCOPE_KEY = "coloretto.csrf"
#: methods that change something
UNSAFE = frozenset({"POST", "PUT", "PATCH", "DELETE"})
#: a token is this many random bytes, URL-safe Base64: 43 characters
TOKEN_BYTES = 32


def new_token() -> str:
    return secrets.token_urlsafe(TOKEN_BYTES)


def plausible(token: str | None) -> bool:
    """A token the server could have made (anything else is replaced, not echoed in a header)."""
    return bool(token) and len(token or "") <= 64 and all(c.isalnum() or c in "-_" for c in token or "")


def request_cookies(scope: Scope) -> dict[str, str]:
    header = b"; ".join(value for name, value in scope.get("headers", ()) if name == b"cookie")
    return cookie_parser(header.decode("latin-1")) if header else {}


def csrf_cookie(token: str, secure: bool) -> str:
    """The Set-Cookie value of a token."""
    cookie: SimpleCookie = SimpleCookie()
    cookie[CSRF_COOKIE] = token
    morsel = cookie[CSRF_COOKIE]
    morsel["path"] = "/"
    morsel["samesite"] = "Strict"
    if secure:
        morsel["secure"] = True
    return morsel.OutputString()


def token_of(scope: Scope) -> str:
    """The request's token: its cookie's, or the one its answer sets."""
    token = scope.get(SCOPE_KEY)
    return str(token) if token else ""


class CsrfGuard:
    """ASGI middleware: sets the token cookie, and refuses a state-changing request with a cookie
    but without the matching header (403 ``csrf``). ``always``: paths that want the header even
    without a cookie; ``secure``: whether a request came over https (the cookie's Secure flag)."""

    def __init__(self, app: ASGIApp, always: frozenset[str], secure: Callable[[Scope], bool]) -> None:
        self.app = app
        self.always = always
        self.secure = secure

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        cookies = request_cookies(scope)
        token = cookies.get(CSRF_COOKIE)
        fresh = None if plausible(token) else new_token()
        scope[SCOPE_KEY] = fresh or token
        if scope.get("method", "GET").upper() in UNSAFE:
            carries = any(name != CSRF_COOKIE for name in cookies)
            if carries or scope.get("path") in self.always:
                sent = next((v for n, v in scope.get("headers", ()) if n == CSRF_HEADER), b"")
                if fresh or not sent or not secrets.compare_digest(sent, str(token).encode()):
                    await self._refuse(scope, send, fresh)
                    return
        if fresh is None:
            await self.app(scope, receive, send)
            return
        set_cookie = csrf_cookie(fresh, self.secure(scope)).encode("latin-1")

        async def send_with_cookie(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", ()), (b"set-cookie", set_cookie)]}
            await send(message)

        await self.app(scope, receive, send_with_cookie)

    async def _refuse(self, scope: Scope, send: Send, fresh: str | None) -> None:
        body = json.dumps(
            error_body("csrf", _("the page's security token is missing or wrong: reload the page"))
        ).encode()
        headers = [(b"content-type", b"application/json")]
        if fresh is not None:
            headers.append((b"set-cookie", csrf_cookie(fresh, self.secure(scope)).encode("latin-1")))
        await send({"type": "http.response.start", "status": 403, "headers": headers})
        await send({"type": "http.response.body", "body": body})
