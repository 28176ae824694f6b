"""The JSON API: the lobby, a game's table and its actions, accounts, ratings, finished games.
Each route reads the request, calls a part of the :class:`~coloretto.web.features.site.Site`, and
answers its result (its refusal is answered by :mod:`coloretto.web.api.answers`)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Annotated, Any, Literal

from fastapi import Depends, FastAPI, Header, Query, Request
from fastapi.responses import Response
from starlette.types import Scope

from coloretto import __version__
from coloretto.web.api.answers import ERRORS
from coloretto.web.api.csrf import CSRF_COOKIE, new_token, token_of
from coloretto.web.api.middleware import Network, client_address
from coloretto.web.api.observe import STARTED
from coloretto.web.common import metrics
from coloretto.web.common.errors import ServiceError
from coloretto.web.common.i18n import gettext as _
from coloretto.web.common.names import User
from coloretto.web.common.schemas import (
    Account,
    ActRequest,
    ChatLog,
    CreatedGame,
    CreateGame,
    Credentials,
    GameList,
    GameSummary,
    Hint,
    HintRequest,
    JoinSeat,
    Leaderboard,
    Options,
    PlayerPage,
    RematchGrant,
    Replay,
    ReviewStatus,
    SeatGrant,
    TableState,
    WhatIf,
    WhatIfRequest,
)
from coloretto.web.features.accounts import SESSION_COOKIE
from coloretto.web.features.site import Site
from coloretto.web.table.live import LiveGame


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
    site: Site = request.app.state.site
    return await site.accounts.user_of(request.cookies.get(SESSION_COOKIE))


CurrentUser = Annotated[User | None, Depends(current_user)]
#: the account paths that want the security token header always (a log-in forged by another site
#: would put the browser in the attacker's account)
ACCOUNT_DOORS = frozenset(
    {"/api/account/signup", "/api/account/login", "/api/account/logout", "/api/account/reset"}
)


def add_api_routes(app: FastAPI, site: Site, proxies: list[Network], secure: Callable[[Scope], bool]) -> None:
    """Every route of the JSON API."""
    settings = site.settings

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

    # -------------------------------------------------------------- API

    @app.get("/api/health", tags=["server"])
    async def health() -> dict[str, Any]:
        status = site.games.pool().status()
        return {
            "ok": True,
            "version": __version__,
            "games_in_memory": len(site.games.live),
            "process": site.games.bus.process_id,
            "workers": {"processes": status.workers, "ready": status.ready, "queued": status.queued},
            # the live path's errors since the start, by step (each was logged with its game)
            "incidents": site.incidents.counts(),
        }

    @app.get("/api/options", tags=["lobby"])
    async def options() -> Options:
        """Rule options, bots and difficulties, and the server's limits."""
        return site.lobby.options()

    @app.get("/api/games", tags=["lobby"])
    async def list_games(
        status: Literal["open", "playing", "finished", "expired", "abandoned", "cancelled", "stopped"]
        | None = None,
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
        return GameList(games=await site.lobby.list_games(status, limit, user.id if mine and user else None))

    @app.post("/api/games", tags=["lobby"], status_code=201, responses=ERRORS)
    async def create_game(body: CreateGame, request: Request, user: CurrentUser) -> CreatedGame:
        """Create a game. With ``creator_name`` the creator takes the first person's seat and
        the answer holds its secret token; a logged-in creator sits under their account's name,
        and the seat is theirs wherever they log in. ``rated``: the people must be logged in and
        the bots difficulty levels; ``private``: never listed."""
        live, seat, token = await site.lobby.create_game(body, client_address(request.scope, proxies), user)
        return CreatedGame(game=site.lobby.summary(live), seat=seat, token=token)

    @app.get("/api/games/{game_id}", tags=["game"], responses=ERRORS)
    async def get_game(game_id: str, user: CurrentUser, authorization: AuthHeader = None) -> TableState:
        """The table as a seat sees it (with its token, or the session of the account whose seat
        it is) or as a spectator sees it."""
        live = await site.games.get_live(game_id)
        return site.games.state(live, await site.seats.find_seat(live, bearer(authorization), user_id(user)))

    @app.post("/api/games/{game_id}/join", tags=["lobby"], responses=ERRORS)
    async def join_game(game_id: str, body: JoinSeat, user: CurrentUser) -> SeatGrant:
        """Take a free seat. The token in the answer is the seat: keep it secret. A logged-in
        person sits under their account's name (``name`` is then not needed); a rematch's seat
        kept for a guest is taken with ``rematch_token``, their token of the game before."""
        live, seat, token = await site.seats.join(game_id, body.name, body.seat, user, body.rematch_token)
        return SeatGrant(game=site.lobby.summary(live), seat=seat, token=token)

    @app.post("/api/games/{game_id}/actions", tags=["game"], responses=ERRORS)
    async def act(
        game_id: str, body: ActRequest, request: Request, user: CurrentUser, authorization: AuthHeader = None
    ) -> TableState:
        """Play an action (``d``, ``p2``, ``t3``, ``j:R``, ``x``) for the token's seat (or the
        logged-in account's)."""
        token = bearer(authorization)
        live = await site.play.act(game_id, token, body.action, body.move, user_id(user))
        state = site.games.state(live, await site.seats.find_seat(live, token, user_id(user)))
        received = request.scope.get(STARTED)
        if received is not None:
            metrics.action_broadcast["http"].observe(time.perf_counter() - received)
        return state

    async def my_seat(
        game_id: str, user: User | None, authorization: str | None, why: str
    ) -> tuple[LiveGame, int]:
        """The game and the seat of the request's token or account; ``why`` says what needs one."""
        live = await site.games.get_live(game_id)
        seat = await site.seats.find_seat(live, bearer(authorization), user_id(user))
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
        await site.play.reclaim(live, seat, asked=True)
        return site.games.state(live, seat)

    @app.post("/api/games/{game_id}/hint", tags=["game"], responses=ERRORS)
    async def hint(
        game_id: str, user: CurrentUser, body: HintRequest | None = None, authorization: AuthHeader = None
    ) -> Hint:
        """The analysis of your position (your turn only), when the server has the analysis module."""
        return await site.hints.hint(
            game_id, bearer(authorization), body.budget if body else None, user_id(user)
        )

    @app.post("/api/games/{game_id}/resign", tags=["game"], responses=ERRORS)
    async def resign(game_id: str, user: CurrentUser, authorization: AuthHeader = None) -> TableState:
        """Give the game up: the takeover bot plays your seat to the end (taking it back is refused),
        everyone sees the seat ``resigned``, and on a rated table it ranks below every other seat."""
        live, seat = await my_seat(game_id, user, authorization, _("only a player can resign"))
        await site.play.resign(live, seat)
        return site.games.state(live, seat)

    @app.post("/api/games/{game_id}/cancel", tags=["lobby"], responses=ERRORS)
    async def cancel(game_id: str, user: CurrentUser, authorization: AuthHeader = None) -> GameSummary:
        """Call off a game still waiting for players (its creator only: the creator seat's token or
        account): ``cancelled``, no longer listed as open, joining it refused."""
        live = await site.lobby.cancel(game_id, bearer(authorization), user)
        return site.lobby.summary(live)

    @app.post("/api/games/{game_id}/rematch", tags=["lobby"], responses=ERRORS)
    async def rematch(
        game_id: str, request: Request, user: CurrentUser, authorization: AuthHeader = None
    ) -> RematchGrant:
        """A new game of a finished one (any of its players may ask; asked again, it is the same
        game): the same seats, rules, clock, rated and private flags, a new deal. Its bots sit at
        once and so do you (``token``, unless you sit there already); every other person's seat is
        kept for them. The finished game's watchers are told ``{"type": "rematch", "game": ID}``."""
        live, seat, token = await site.rematches.rematch(
            game_id, bearer(authorization), user, client_address(request.scope, proxies)
        )
        return RematchGrant(game=site.lobby.summary(live), seat=seat, token=token)

    @app.get("/api/games/{game_id}/chat", tags=["game"], responses=ERRORS)
    async def chat(
        game_id: str,
        user: CurrentUser,
        after: Annotated[int, Query(ge=0, le=2**63 - 1)] = 0,
        limit: Annotated[int, Query(ge=1, le=500)] = 200,
    ) -> ChatLog:
        """The table's chat messages numbered after ``after``, oldest first. ``text`` is what was
        typed: show it as text. Messages a moderator hid are left out, and, for a logged-in person,
        those of the accounts they blocked."""
        return ChatLog(messages=await site.chat.read_chat(game_id, after, limit, user_id(user)))

    # ---------------------------------------------------------- accounts

    @app.get("/api/account", tags=["accounts"])
    async def account(request: Request, user: CurrentUser) -> Account:
        """Who is logged in (``user`` None: a guest), with their rating, and the page's security
        token for the ``X-CSRF-Token`` header (the ``coloretto_csrf`` cookie's value)."""
        return await site.accounts.account(user, token_of(request.scope))

    @app.post("/api/account/signup", tags=["accounts"], status_code=201, responses=ERRORS)
    async def signup(body: Credentials, request: Request, response: Response) -> Account:
        """Make an account and log in: a name (unique whatever its case) and a password of
        8 to 128 characters. Wants the ``X-CSRF-Token`` header."""
        user, token = await site.accounts.signup(
            body.name, body.password, client_address(request.scope, proxies)
        )
        return await site.accounts.account(user, logged_in(request, response, token))

    @app.post("/api/account/login", tags=["accounts"], responses=ERRORS)
    async def login(body: Credentials, request: Request, response: Response) -> Account:
        """Log in (the session cookie, ``coloretto_session``, lasts ``session_days``). Failed
        attempts for a name, or from an address, are counted: past a few, the next waits
        (``too_many_logins``, ``Retry-After``). Wants the ``X-CSRF-Token`` header."""
        user, token = await site.accounts.login(
            body.name, body.password, client_address(request.scope, proxies)
        )
        return await site.accounts.account(user, logged_in(request, response, token))

    @app.post("/api/account/logout", tags=["accounts"], responses=ERRORS)
    async def logout(request: Request, response: Response) -> Account:
        """End this browser's session (the others stay). Wants the ``X-CSRF-Token`` header."""
        await site.accounts.logout(request.cookies.get(SESSION_COOKIE))
        response.delete_cookie(
            SESSION_COOKIE, path="/", secure=secure(request.scope), httponly=True, samesite="lax"
        )
        return await site.accounts.account(None, token_of(request.scope))

    @app.get("/api/leaderboard", tags=["accounts"])
    async def leaderboard(limit: Annotated[int, Query(ge=1, le=500)] = 100) -> Leaderboard:
        """People (with ``min_games`` rated games at least) and every bot difficulty level, by
        their rating's ordinal (mu - 3 sigma), best first."""
        return await site.ratings.leaderboard(limit)

    @app.get("/api/players/{name}", tags=["accounts"], responses=ERRORS)
    async def player(
        name: str, user: CurrentUser, limit: Annotated[int, Query(ge=1, le=100)] = 30
    ) -> PlayerPage:
        """A person's page: games played and won, their latest results (rank, score, opponents,
        rating change, accuracy from the game's review), their rating after each rated game (for
        a chart), and their mean accuracy. Another person's private tables are listed without
        their link."""
        return await site.ratings.player_page(name, user, limit)

    @app.get("/api/games/{game_id}/record", tags=["finished games"], responses=ERRORS)
    async def record(game_id: str, game: Annotated[int, Query(ge=1, le=100)] = 1) -> Response:
        """The engine's JSON record of a finished game (``game`` counts the games of a match)."""
        text = (await site.records.record(game_id, game)).to_json()
        return Response(
            text,
            media_type="application/json",
            headers={"Content-Disposition": f'attachment; filename="coloretto-{game_id}-{game}.json"'},
        )

    @app.get("/api/games/{game_id}/replay", tags=["finished games"], responses=ERRORS)
    async def replay(game_id: str, game: Annotated[int, Query(ge=1, le=100)] = 1) -> Replay:
        """Every position of a finished game, for the replay viewer."""
        return await site.records.replay(game_id, game)

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
        text = await site.reviews.start(game_id, game)
        return Response(text, status_code=202, media_type="application/json")

    @app.get(
        "/api/games/{game_id}/review",
        tags=["finished games"],
        responses={**ERRORS, 200: {"model": ReviewStatus}},
    )
    async def get_review(game_id: str, game: Annotated[int, Query(ge=1, le=100)] = 1) -> Response:
        """A finished game's review: ``status`` none, running (``done`` of ``total`` tasks), done
        (``review`` holds it) or failed (``error`` says why)."""
        return Response(await site.reviews.status(game_id, game), media_type="application/json")

    @app.post("/api/games/{game_id}/whatif", tags=["finished games"], responses=ERRORS)
    async def whatif(game_id: str, body: WhatIfRequest, request: Request) -> WhatIf:
        """From a position of a finished game's replay (``upto``; 0: the deal), play ``moves`` and
        analyse where they lead at the review's budget: the frame reached, its legal moves, the
        mover's best lines and every seat's win chance and expected score."""
        return await site.reviews.whatif(game_id, body, client_address(request.scope, proxies))
