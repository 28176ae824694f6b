"""The web app: pages, the JSON lobby API and the game WebSocket.

Routes are thin: they read the request, call :class:`GameService`, and turn
its answer (or its :class:`ServiceError`) into JSON.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import json
import logging
import math
import time
import unicodedata
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from fastapi import Depends, FastAPI, Header, Query, Request, WebSocket
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, ValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from starlette.websockets import WebSocketDisconnect, WebSocketState

from coloretto import __version__
from coloretto.web import i18n, pages
from coloretto.web.accounts import SESSION_COOKIE, User
from coloretto.web.csrf import CSRF_COOKIE, CsrfGuard, new_token, request_cookies, token_of
from coloretto.web.db import open_database
from coloretto.web.i18n import N_
from coloretto.web.i18n import gettext as _
from coloretto.web.schemas import (
    CLIENT_MESSAGE_TYPES,
    NAME_MAX,
    PASSWORD_MAX,
    PASSWORD_MIN,
    Account,
    ActMessage,
    ActRequest,
    ChatLog,
    ChatMessage,
    CreatedGame,
    CreateGame,
    Credentials,
    ErrorBody,
    GameList,
    GameSummary,
    HelloMessage,
    Hint,
    HintMessage,
    HintRequest,
    JoinSeat,
    Leaderboard,
    Options,
    PingMessage,
    PlayerPage,
    ReclaimMessage,
    RematchGrant,
    Replay,
    ResignMessage,
    ReviewStatus,
    SeatGrant,
    TableState,
    WhatIf,
    WhatIfRequest,
)
from coloretto.web.service import (
    UNPRINTABLE_CATEGORIES,
    GameService,
    LiveGame,
    ServiceError,
    Settings,
    Subscriber,
)

log = logging.getLogger("coloretto.web")

STATIC = Path(__file__).with_name("static")
ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"model": ErrorBody},
    401: {"model": ErrorBody},
    403: {"model": ErrorBody},
    404: {"model": ErrorBody},
    409: {"model": ErrorBody},
    422: {"model": ErrorBody},
    429: {"model": ErrorBody},
}


#: the error code of HTTP errors raised by the framework itself (an unknown path, a wrong method)
HTTP_CODES = {404: "not_found", 405: "method_not_allowed", 413: "too_large", 415: "bad_request"}
#: the framework's own messages of those errors, for the catalogue
HTTP_MESSAGES = (N_("Not Found"), N_("Method Not Allowed"), N_("Unsupported Media Type"))

#: pydantic's messages of the usual validation errors, by error type, as msgids: pydantic writes
#: them in English, so another language gets these with pydantic's ``ctx`` fields filled in
VALIDATION_MESSAGES = {
    "missing": N_("Field required"),
    "extra_forbidden": N_("Extra inputs are not permitted"),
    "string_type": N_("Input should be a valid string"),
    "int_type": N_("Input should be a valid integer"),
    "int_parsing": N_("Input should be a valid integer, unable to parse string as an integer"),
    "int_from_float": N_("Input should be a valid integer, got a number with a fractional part"),
    "float_type": N_("Input should be a valid number"),
    "float_parsing": N_("Input should be a valid number, unable to parse string as a number"),
    "bool_type": N_("Input should be a valid boolean"),
    "bool_parsing": N_("Input should be a valid boolean, unable to interpret input"),
    "list_type": N_("Input should be a valid list"),
    "dict_type": N_("Input should be a valid dictionary"),
    "model_type": N_("Input should be a valid dictionary or instance of {class_name}"),
    "model_attributes_type": N_("Input should be a valid dictionary or object to extract fields from"),
    "string_too_long": N_("String should have at most {max_length} characters"),
    "string_too_short": N_("String should have at least {min_length} characters"),
    "too_long": N_("List should have at most {max_length} items after validation, not {actual_length}"),
    "too_short": N_("List should have at least {min_length} items after validation, not {actual_length}"),
    "greater_than": N_("Input should be greater than {gt}"),
    "greater_than_equal": N_("Input should be greater than or equal to {ge}"),
    "less_than": N_("Input should be less than {lt}"),
    "less_than_equal": N_("Input should be less than or equal to {le}"),
    "literal_error": N_("Input should be {expected}"),
    "enum": N_("Input should be {expected}"),
}


def validation_text(err: Any) -> str:
    """One validation error's message in the current language: pydantic's own in English, else the
    translation of its type's message (pydantic's English where the type has none)."""
    message = str(err.get("msg", "invalid"))
    template = VALIDATION_MESSAGES.get(str(err.get("type")))
    if template is None or i18n.current_language.get() == i18n.DEFAULT_LANGUAGE:
        return message
    fields = {str(k): v for k, v in (err.get("ctx") or {}).items()}
    if isinstance(fields.get("expected"), str):  # pydantic's list of choices: "'a', 'b' or 'c'"
        # TRANSLATORS: joins the last two choices of a list: 'open', 'playing' or 'finished'
        fields["expected"] = fields["expected"].replace(" or ", " " + _("or") + " ")
    try:
        return _(template, **fields)
    except (KeyError, IndexError, ValueError):  # a field pydantic did not give: its own words
        return message


def error_body(code: str, message: str) -> dict[str, str]:
    return {"error": code, "message": message}


def _validation_message(errors: list[Any]) -> str:
    parts = []
    for err in errors[:5]:
        where = ".".join(str(p) for p in err.get("loc", ()) if p != "body")
        if err.get("type") == "json_invalid":
            return _("the request body is not valid JSON")
        parts.append(_("{where}: {problem}", where=where or "body", problem=validation_text(err)))
    return "; ".join(parts)


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
    with ``Retry-After`` (ASGI middleware)."""

    def __init__(self, app: ASGIApp, per_minute: int, proxies: list[Network]) -> None:
        self.app = app
        self.capacity = float(per_minute)
        self.rate = per_minute / 60.0
        self.proxies = proxies
        self.buckets: dict[str, tuple[float, float]] = {}  #: client -> (tokens, when counted)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket") or not self.capacity:
            await self.app(scope, receive, send)
            return
        client = client_address(scope, self.proxies)
        wait = self._take(client)
        if wait is None:
            await self.app(scope, receive, send)
            return
        message = _(
            "too many requests: at most {limit} a minute from one address; try again in {wait} s",
            limit=i18n.number(self.capacity),
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

    def _take(self, client: str) -> int | None:
        """Take a token for the client; None if it had one, else the seconds until it has."""
        now = time.monotonic()
        tokens, then = self.buckets.get(client, (self.capacity, now))
        tokens = min(self.capacity, tokens + (now - then) * self.rate)
        if len(self.buckets) > 50_000:  # forget the clients whose bucket has refilled
            self.buckets = {
                c: (t, w) for c, (t, w) in self.buckets.items() if t + (now - w) * self.rate < self.capacity
            }
        if tokens >= 1.0:
            self.buckets[client] = (tokens - 1.0, now)
            return None
        self.buckets[client] = (tokens, now)
        return max(1, math.ceil((1.0 - tokens) / self.rate))


def bearer(authorization: str | None) -> str | None:
    if not authorization:
        return None
    scheme, _space, token = authorization.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise ServiceError("bad_token", _("send the seat token as 'Authorization: Bearer <token>'"), 401)
    return token.strip()


AuthHeader = Annotated[str | None, Header(description="Bearer <seat token>")]


async def current_user(request: Request) -> User | None:
    """The logged-in person, from the session cookie (None: a guest)."""
    service: GameService = request.app.state.service
    return await service.accounts.user_of(request.cookies.get(SESSION_COOKIE))


CurrentUser = Annotated[User | None, Depends(current_user)]
#: the account paths that want the security token header always (a log-in forged by another site
#: would put the browser in the attacker's account)
ACCOUNT_DOORS = frozenset({"/api/account/signup", "/api/account/login", "/api/account/logout"})


def create_app(database_url: str, settings: Settings | None = None) -> FastAPI:
    """The app on a database (migrated on start-up)."""
    settings = settings or Settings()
    i18n.load()  # a broken catalogue stops the start, not a request
    sessions = open_database(database_url)
    service = GameService(sessions, settings)

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        await service.start()
        yield
        await service.stop()

    app = FastAPI(
        title="Coloretto",
        version=__version__,
        description="Play Coloretto in the browser. The lobby API, the table state, and the WebSocket "
        "protocol described in the README.",
        lifespan=lifespan,
    )
    app.state.service = service
    proxies = trusted_networks(settings.trusted_proxies)

    def secure(scope: Scope) -> bool:
        """The Secure flag of the cookies set on an answer to this request."""
        if settings.secure_cookies == "auto":
            return came_over_https(scope, proxies)
        return settings.secure_cookies == "always"

    app.add_middleware(BodyLimit, limit=settings.max_body_bytes)
    app.add_middleware(CsrfGuard, always=ACCOUNT_DOORS, secure=secure)
    # added after them, so it runs before them: a client over its rate costs no body reading
    app.add_middleware(RequestLimit, per_minute=settings.requests_per_minute, proxies=proxies)
    # added last, so it runs first: every answer, the limits' and the CSRF guard's too, is in the
    # client's language
    app.add_middleware(i18n.LanguageMiddleware)

    def user_id(user: User | None) -> int | None:
        return user.id if user is not None else None

    def logged_in(request: Request, response: Response, token: str) -> str:
        """Put the session's cookie on the answer, and a new security token (a token planted before
        the log-in, by whoever could, is worth nothing after it); the new token."""
        csrf = new_token()
        https = secure(request.scope)
        response.set_cookie(
            SESSION_COOKIE,
            token,
            max_age=round(settings.session_days * 86400),
            path="/",
            secure=https,
            httponly=True,
            samesite="lax",
        )
        response.set_cookie(CSRF_COOKIE, csrf, path="/", secure=https, httponly=False, samesite="strict")
        return csrf

    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    password_rules = {"password_min": PASSWORD_MIN, "password_max": PASSWORD_MAX, "name_max": NAME_MAX}

    @app.exception_handler(ServiceError)
    async def _service_error(_request: Request, exc: ServiceError) -> JSONResponse:
        headers = {"Retry-After": str(max(1, math.ceil(exc.retry_after)))} if exc.retry_after else None
        return JSONResponse(error_body(exc.code, exc.message), status_code=exc.status, headers=headers)

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(_request: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = HTTP_CODES.get(exc.status_code, "bad_request" if exc.status_code < 500 else "internal")
        message = exc.detail if isinstance(exc.detail, str) else str(exc.detail)
        if message in HTTP_MESSAGES:
            message = _(message)
        if exc.status_code == 400:
            # FastAPI's "error parsing the body": JSON it could not turn into values (a number over
            # Python's 4300 digits); answered as every other unreadable body is
            return JSONResponse(
                error_body("bad_request", _("the request body could not be read as JSON")), status_code=422
            )
        return JSONResponse(error_body(code, message), status_code=exc.status_code, headers=exc.headers)

    @app.exception_handler(Exception)
    async def _internal(request: Request, exc: Exception) -> JSONResponse:
        # reported (logged with its traceback, counted) and answered as every other error is
        service.incidents.record("message", None, f"{request.method} {request.url.path} failed", exc)
        return JSONResponse(
            error_body("internal", _("the server could not handle this request: try again")), status_code=500
        )

    @app.exception_handler(RequestValidationError)
    async def _bad_request(_request: Request, exc: RequestValidationError) -> JSONResponse:
        return JSONResponse(
            error_body("bad_request", _validation_message(list(exc.errors()))), status_code=422
        )

    # ------------------------------------------------------------ pages

    @app.get("/", include_in_schema=False)
    async def lobby_page(request: Request) -> Response:
        return await pages.render(request, "lobby.html")

    @app.get("/games/{game_id}", include_in_schema=False)
    async def table_page(request: Request, game_id: str) -> Response:
        return await pages.render(request, "table.html")

    @app.get("/games/{game_id}/replay", include_in_schema=False)
    async def replay_page(request: Request, game_id: str) -> Response:
        return await pages.render(request, "replay.html")

    @app.get("/favicon.ico", include_in_schema=False)
    async def favicon() -> FileResponse:
        return FileResponse(STATIC / "favicon.svg", media_type="image/svg+xml")

    @app.get("/rules", include_in_schema=False)
    async def rules_page(request: Request) -> Response:
        return await pages.render(request, "rules.html", colour_list=pages.colour_list())

    @app.get("/login", include_in_schema=False)
    async def login_page(request: Request) -> Response:
        return await pages.render(request, "account.html", mode="login", **password_rules)

    @app.get("/signup", include_in_schema=False)
    async def signup_page(request: Request) -> Response:
        return await pages.render(request, "account.html", mode="signup", **password_rules)

    @app.get("/leaderboard", include_in_schema=False)
    async def leaderboard_page(request: Request) -> Response:
        return await pages.render(request, "leaderboard.html")

    @app.get("/players/{name}", include_in_schema=False)
    async def player_page(request: Request, name: str) -> Response:
        if len(name) > NAME_MAX * 4 or any(unicodedata.category(c) in UNPRINTABLE_CATEGORIES for c in name):
            # no account has such a name (and a NUL or a direction mark is not put in the page)
            raise ServiceError("not_found", _("there is no player named {name}", name=repr(name[:40])), 404)
        return await pages.render(request, "player.html", player=name)

    @app.get("/api/i18n/{language}", tags=["server"], responses={404: {"model": ErrorBody}})
    async def catalogue(language: str, v: str | None = None) -> Response:
        """A language's catalogue for the pages: ``messages`` (each English msgid's translation; a
        list of forms for a plural message) and ``plural`` (which form each CLDR plural category
        takes). Asked for by its version (``v``, as the pages do), it may be kept for good."""
        if language not in i18n.LANGUAGES:
            raise ServiceError(
                "not_found",
                _(
                    "there is no language {language}: the languages are {languages}",
                    language=repr(language[:20]),
                    languages=", ".join(i18n.LANGUAGES),
                ),
                404,
            )
        keep = v == i18n.catalogue_version(language)
        return Response(
            i18n.catalogue_json(language),
            media_type="application/json",
            headers={"Cache-Control": "public, max-age=31536000, immutable" if keep else "no-cache"},
        )

    # -------------------------------------------------------------- API

    @app.get("/api/health", tags=["server"])
    async def health() -> dict[str, Any]:
        status = service.pool().status()
        return {
            "ok": True,
            "version": __version__,
            "games_in_memory": len(service.live),
            "process": service.bus.process_id,
            "workers": {"processes": status.workers, "ready": status.ready, "queued": status.queued},
            # the live path's errors since the start, by step (each was logged with its game)
            "incidents": service.incidents.counts(),
        }

    @app.get("/api/options", tags=["lobby"])
    async def options() -> Options:
        """Rule options, bots and difficulties, and the server's limits."""
        return service.options()

    @app.get("/api/games", tags=["lobby"])
    async def list_games(
        status: Literal["open", "playing", "finished", "expired", "abandoned", "cancelled"] | None = None,
        limit: Annotated[int, Query(ge=1, le=200)] = 50,
        mine: bool = False,
        user: CurrentUser = None,
    ) -> GameList:
        """Games, newest activity first: ``open`` ones wait for players, ``playing`` ones can be
        watched, ``finished`` ones replayed. Private tables are never listed, except with ``mine``:
        the logged-in person's own games (where they sit, or a rematch keeps a seat for them),
        private ones too (``login_required`` for a guest)."""
        if mine and user is None:
            raise ServiceError("login_required", _("log in to list your own games"), 403)
        return GameList(games=await service.list_games(status, limit, user.id if mine and user else None))

    @app.post("/api/games", tags=["lobby"], status_code=201, responses=ERRORS)
    async def create_game(body: CreateGame, request: Request, user: CurrentUser) -> CreatedGame:
        """Create a game. With ``creator_name`` the creator takes the first person's seat and
        the answer holds its secret token; a logged-in creator sits under their account's name,
        and the seat is theirs wherever they log in. ``rated``: the people must be logged in and
        the bots difficulty levels; ``private``: never listed."""
        live, seat, token = await service.create_game(body, client_address(request.scope, proxies), user)
        return CreatedGame(game=service.summary(live), seat=seat, token=token)

    @app.get("/api/games/{game_id}", tags=["game"], responses=ERRORS)
    async def get_game(game_id: str, user: CurrentUser, authorization: AuthHeader = None) -> TableState:
        """The table as a seat sees it (with its token, or the session of the account whose seat
        it is) or as a spectator sees it."""
        live = await service.get_live(game_id)
        return service.state(live, await service.find_seat(live, bearer(authorization), user_id(user)))

    @app.post("/api/games/{game_id}/join", tags=["lobby"], responses=ERRORS)
    async def join_game(game_id: str, body: JoinSeat, user: CurrentUser) -> SeatGrant:
        """Take a free seat. The token in the answer is the seat: keep it secret. A logged-in
        person sits under their account's name (``name`` is then not needed); a rematch's seat
        kept for a guest is taken with ``rematch_token``, their token of the game before."""
        live, seat, token = await service.join(game_id, body.name, body.seat, user, body.rematch_token)
        return SeatGrant(game=service.summary(live), seat=seat, token=token)

    @app.post("/api/games/{game_id}/actions", tags=["game"], responses=ERRORS)
    async def act(
        game_id: str, body: ActRequest, user: CurrentUser, authorization: AuthHeader = None
    ) -> TableState:
        """Play an action (``d``, ``p2``, ``t3``, ``j:R``, ``x``) for the token's seat (or the
        logged-in account's)."""
        token = bearer(authorization)
        live = await service.act(game_id, token, body.action, body.move, user_id(user))
        return service.state(live, await service.find_seat(live, token, user_id(user)))

    async def my_seat(
        game_id: str, user: User | None, authorization: str | None, why: str
    ) -> tuple[LiveGame, int]:
        """The game and the seat of the request's token or account; ``why`` says what needs one."""
        live = await service.get_live(game_id)
        seat = await service.find_seat(live, bearer(authorization), user_id(user))
        if seat is None:
            raise ServiceError("not_seated", why, 403)
        return live, seat

    @app.post("/api/games/{game_id}/reclaim", tags=["game"], responses=ERRORS)
    async def reclaim(game_id: str, user: CurrentUser, authorization: AuthHeader = None) -> TableState:
        """Take your seat back from the bot that plays for you (your clock ran out, or you were gone).
        A seat whose person resigned stays the bot's (``resigned``)."""
        live, seat = await my_seat(
            game_id, user, authorization, _("send your seat's token to take your seat back")
        )
        await service.reclaim(live, seat, asked=True)
        return service.state(live, seat)

    @app.post("/api/games/{game_id}/hint", tags=["game"], responses=ERRORS)
    async def hint(
        game_id: str, user: CurrentUser, body: HintRequest | None = None, authorization: AuthHeader = None
    ) -> Hint:
        """The analysis of your position (your turn only), when the server has the analysis module."""
        return await service.hint(
            game_id, bearer(authorization), body.budget if body else None, user_id(user)
        )

    @app.post("/api/games/{game_id}/resign", tags=["game"], responses=ERRORS)
    async def resign(game_id: str, user: CurrentUser, authorization: AuthHeader = None) -> TableState:
        """Give the game up: the takeover bot plays your seat to the end (taking it back is refused),
        everyone sees the seat ``resigned``, and on a rated table it ranks below every other seat."""
        live, seat = await my_seat(game_id, user, authorization, _("only a player can resign"))
        await service.resign(live, seat)
        return service.state(live, seat)

    @app.post("/api/games/{game_id}/cancel", tags=["lobby"], responses=ERRORS)
    async def cancel(game_id: str, user: CurrentUser, authorization: AuthHeader = None) -> GameSummary:
        """Call off a game still waiting for players (its creator only: the creator seat's token or
        account): ``cancelled``, no longer listed as open, joining it refused."""
        live = await service.cancel(game_id, bearer(authorization), user)
        return service.summary(live)

    @app.post("/api/games/{game_id}/rematch", tags=["lobby"], responses=ERRORS)
    async def rematch(
        game_id: str, request: Request, user: CurrentUser, authorization: AuthHeader = None
    ) -> RematchGrant:
        """A new game of a finished one (any of its players may ask; asked again, it is the same
        game): the same seats, rules, clock, rated and private flags, a new deal. Its bots sit at
        once and so do you (``token``, unless you sit there already); every other person's seat is
        kept for them. The finished game's watchers are told ``{"type": "rematch", "game": ID}``."""
        live, seat, token = await service.rematch(
            game_id, bearer(authorization), user, client_address(request.scope, proxies)
        )
        return RematchGrant(game=service.summary(live), seat=seat, token=token)

    @app.get("/api/games/{game_id}/chat", tags=["game"], responses=ERRORS)
    async def chat(
        game_id: str,
        after: Annotated[int, Query(ge=0, le=2**63 - 1)] = 0,
        limit: Annotated[int, Query(ge=1, le=500)] = 200,
    ) -> ChatLog:
        """The table's chat messages numbered after ``after``, oldest first. ``text`` is what was
        typed: show it as text."""
        return ChatLog(messages=await service.read_chat(game_id, after, limit))

    # ---------------------------------------------------------- accounts

    @app.get("/api/account", tags=["accounts"])
    async def account(request: Request, user: CurrentUser) -> Account:
        """Who is logged in (``user`` None: a guest), with their rating, and the page's security
        token for the ``X-CSRF-Token`` header (the ``coloretto_csrf`` cookie's value)."""
        return await service.accounts.account(user, token_of(request.scope))

    @app.post("/api/account/signup", tags=["accounts"], status_code=201, responses=ERRORS)
    async def signup(body: Credentials, request: Request, response: Response) -> Account:
        """Make an account and log in: a name (unique whatever its case) and a password of
        8 to 128 characters. Wants the ``X-CSRF-Token`` header."""
        user, token = await service.accounts.signup(
            body.name, body.password, client_address(request.scope, proxies)
        )
        return await service.accounts.account(user, logged_in(request, response, token))

    @app.post("/api/account/login", tags=["accounts"], responses=ERRORS)
    async def login(body: Credentials, request: Request, response: Response) -> Account:
        """Log in (the session cookie, ``coloretto_session``, lasts ``session_days``). Failed
        attempts for a name, or from an address, are counted: past a few, the next waits
        (``too_many_logins``, ``Retry-After``). Wants the ``X-CSRF-Token`` header."""
        user, token = await service.accounts.login(
            body.name, body.password, client_address(request.scope, proxies)
        )
        return await service.accounts.account(user, logged_in(request, response, token))

    @app.post("/api/account/logout", tags=["accounts"], responses=ERRORS)
    async def logout(request: Request, response: Response) -> Account:
        """End this browser's session (the others stay). Wants the ``X-CSRF-Token`` header."""
        await service.accounts.logout(request.cookies.get(SESSION_COOKIE))
        response.delete_cookie(
            SESSION_COOKIE, path="/", secure=secure(request.scope), httponly=True, samesite="lax"
        )
        return await service.accounts.account(None, token_of(request.scope))

    @app.get("/api/leaderboard", tags=["accounts"])
    async def leaderboard(limit: Annotated[int, Query(ge=1, le=500)] = 100) -> Leaderboard:
        """People (with ``min_games`` rated games at least) and every bot difficulty level, by
        their rating's ordinal (mu - 3 sigma), best first."""
        return await service.ratings.leaderboard(limit)

    @app.get("/api/players/{name}", tags=["accounts"], responses=ERRORS)
    async def player(
        name: str, user: CurrentUser, limit: Annotated[int, Query(ge=1, le=100)] = 30
    ) -> PlayerPage:
        """A person's page: games played and won, their latest results (rank, score, opponents,
        rating change, accuracy from the game's review), their rating after each rated game (for
        a chart), and their mean accuracy. Another person's private tables are listed without
        their link."""
        return await service.ratings.player_page(name, user, limit)

    @app.get("/api/games/{game_id}/record", tags=["finished games"], responses=ERRORS)
    async def record(game_id: str, game: Annotated[int, Query(ge=1, le=100)] = 1) -> Response:
        """The engine's JSON record of a finished game (``game`` counts the games of a match)."""
        text = (await service.record(game_id, game)).to_json()
        return Response(
            text,
            media_type="application/json",
            headers={"Content-Disposition": f'attachment; filename="coloretto-{game_id}-{game}.json"'},
        )

    @app.get("/api/games/{game_id}/replay", tags=["finished games"], responses=ERRORS)
    async def replay(game_id: str, game: Annotated[int, Query(ge=1, le=100)] = 1) -> Replay:
        """Every position of a finished game, for the replay viewer."""
        return await service.replay(game_id, game)

    @app.post(
        "/api/games/{game_id}/review",
        tags=["finished games"],
        status_code=202,
        responses={**ERRORS, 202: {"model": ReviewStatus}},
    )
    async def start_review(game_id: str, game: Annotated[int, Query(ge=1, le=100)] = 1) -> Response:
        """Start the review of a finished game (``game`` counts the games of a match), worked out in
        the server's worker processes and stored with the game; a review done or running already
        answers its status. ``busy`` (429) when the server runs too many reviews."""
        text = await service.reviews.start(game_id, game)
        return Response(text, status_code=202, media_type="application/json")

    @app.get(
        "/api/games/{game_id}/review",
        tags=["finished games"],
        responses={**ERRORS, 200: {"model": ReviewStatus}},
    )
    async def get_review(game_id: str, game: Annotated[int, Query(ge=1, le=100)] = 1) -> Response:
        """A finished game's review: ``status`` none, running (``done`` of ``total`` tasks), done
        (``review`` holds it) or failed (``error`` says why)."""
        return Response(await service.reviews.status(game_id, game), media_type="application/json")

    @app.post("/api/games/{game_id}/whatif", tags=["finished games"], responses=ERRORS)
    async def whatif(game_id: str, body: WhatIfRequest, request: Request) -> WhatIf:
        """From a position of a finished game's replay (``upto``; 0: the deal), play ``moves`` and
        analyse where they lead at the review's budget: the frame reached, its legal moves, the
        mover's best lines and every seat's win chance and expected score."""
        return await service.reviews.whatif(game_id, body, client_address(request.scope, proxies))

    # -------------------------------------------------------- WebSocket

    @app.websocket("/api/games/{game_id}/ws")
    async def game_socket(websocket: WebSocket, game_id: str) -> None:
        await GameSocket(service, websocket, game_id).run()

    return app


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

    Server messages: ``state`` (the whole table, after every change),
    ``welcome`` (``seat``, and ``user``: the logged-in account's name), ``error`` (``error`` code
    and ``message``), ``hint``, ``thinking`` (a bot's seat, or null once it answered), ``review``
    (a review of the game ended: ``game``, ``status``), ``chat`` (``messages``, oldest first;
    ``history`` true for the last ones, sent on connecting when there are any), ``rematch`` (the
    finished game's rematch: ``game``), ``pong``, ``bye``.
    """

    def __init__(self, service: GameService, websocket: WebSocket, game_id: str) -> None:
        self.service = service
        self.ws = websocket
        self.game_id = game_id
        settings = service.settings
        self.settings = settings
        self.sub = Subscriber(settings.send_queue)
        self.allowance = float(settings.message_burst)
        self.last = time.monotonic()
        self.strikes = 0
        self.user: User | None = None  #: the logged-in person, from the handshake's session cookie

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

    async def run(self) -> None:
        await self.ws.accept()
        refused = self._origin_refused()
        if refused is not None:
            await self.ws.send_json({"type": "error", **error_body("bad_origin", refused)})
            await self.ws.close(code=1008, reason="origin not allowed")
            return
        try:
            live = await self.service.get_live(self.game_id, keep=True)
            self.user = await self.service.accounts.user_of(
                request_cookies(self.ws.scope).get(SESSION_COOKIE)
            )
            # the copy in memory now (the one read may have been dropped meanwhile): from here on
            # every change reaches this client; then whatever this copy may have missed is read
            live = self.service.subscribe(live, self.sub)
        except ServiceError as exc:
            await self.ws.send_json({"type": "error", **error_body(exc.code, exc.message)})
            await self.ws.close(code=4404 if exc.status == 404 else 1008)
            return
        writer = asyncio.create_task(self._writer())
        try:
            await self.service.catch_up(live)
        except Exception:  # the table is still shown as this process has it
            log.exception("game %s: could not be read again for a client", self.game_id)
        self.service.send_state(live, self.sub)
        try:
            history = await self.service.chat_history(live)
        except Exception:  # the table works without its chat's history
            log.exception("game %s: the chat could not be read", self.game_id)
            history = []
        if history:
            self.sub.push(
                {"type": "chat", "history": True, "messages": [e.model_dump(mode="json") for e in history]}
            )
        try:
            while not writer.done():
                message = await self.ws.receive()
                if message["type"] == "websocket.disconnect":
                    break
                if not self._allow():
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
                        self._too_large(len(data))
                        continue
                    try:
                        text = data.decode("utf-8")
                    except UnicodeDecodeError:
                        self._error("bad_json", _("messages are JSON text (UTF-8)"))
                        continue
                size = len(text.encode("utf-8", "replace"))
                if size > self.settings.max_message_bytes:
                    self._too_large(size)
                    continue
                await self._handle(live, text)
        except (WebSocketDisconnect, RuntimeError):  # RuntimeError: the socket closed under us
            pass
        finally:
            self.service.unsubscribe(live, self.sub)
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
        self.sub.push({"type": "error", **error_body(code, message)})

    async def _handle(self, live: Any, text: str) -> None:
        if json_depth(text.encode("utf-8", "replace")) > MAX_JSON_DEPTH:
            self._error(
                "bad_json", _("a message nests arrays and objects at most {depth} deep", depth=MAX_JSON_DEPTH)
            )
            return
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            self._error(
                "bad_json",
                _("not valid JSON ({problem} at character {position})", problem=exc.msg, position=exc.pos),
            )
            return
        except RecursionError:  # the depth check above should make this unreachable
            self._error("bad_json", _("a message nests arrays and objects too deeply"))
            return
        if not isinstance(data, dict):
            self._error("bad_message", _("a message is a JSON object with a 'type'"))
            return
        kind = data.get("type")
        if kind not in CLIENT_MESSAGE_TYPES:
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
            "resign": ResignMessage, "chat": ChatMessage, "ping": PingMessage,
        }  # fmt: skip
        model = models[kind]
        try:
            msg = model.model_validate(data)
        except ValidationError as exc:
            self._error(
                "bad_message",
                _("bad {kind} message: {problem}", kind=kind, problem=_validation_message(exc.errors())),
            )
            return
        try:
            if isinstance(msg, HelloMessage):
                seat = await self.service.find_seat(live, msg.token, self.user.id if self.user else None)
                before = live.local_presence()
                self.sub.seat = seat
                self.sub.push(
                    {"type": "welcome", "seat": seat, "user": self.user.name if self.user else None}
                )
                self.service.send_state(live, self.sub)  # its own view, with its legal actions
                self.service.seat_changed(live, before)  # the others see the seat online, soon
                await self.service.reclaim(live, seat)  # back at the table: no bot plays for them
            elif isinstance(msg, ActMessage):
                await self.service.act_as(live, self.sub.seat, msg.action, msg.move)
            elif isinstance(msg, ReclaimMessage):
                if self.sub.seat is None:
                    raise ServiceError("not_seated", _("only a player can take a seat back"), 403)
                await self.service.reclaim(live, self.sub.seat, asked=True)
            elif isinstance(msg, ResignMessage):
                await self.service.resign(live, self.sub.seat)
            elif isinstance(msg, ChatMessage):
                await self.service.chat(live, self.sub.seat, self.user, msg.text, id(self))
            elif isinstance(msg, HintMessage):
                hint = await self.service.hint_for(live, self.sub.seat)
                self.sub.push({"type": "hint", **hint.model_dump(mode="json")})
            else:
                self.sub.push({"type": "pong"})
        except ServiceError as exc:
            self._error(exc.code, exc.message)
        except Exception as exc:
            what = f"a {kind} message failed: {text[:200]!r}"
            self.service.incidents.record("message", live, what, exc)
            self.service.spawn(self.service.recover(live))  # whatever it left half-done is read again
            self._error("internal", _("the server could not handle this message; the game is unchanged"))

    async def _writer(self) -> None:
        while True:
            message = await self.sub.queue.get()
            if message is None:  # the client read too slowly and was dropped
                await self._close(1008)
                return
            if isinstance(message, str):
                await self.ws.send_text(message)
                continue
            if message.get("type") == "__close__":
                await self._close(int(message["code"]))
                return
            await self.ws.send_text(json.dumps(message, separators=(",", ":")))

    async def _close(self, code: int) -> None:
        if self.ws.client_state == WebSocketState.CONNECTED:
            with contextlib.suppress(Exception):
                await self.ws.close(code=code)
