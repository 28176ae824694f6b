"""The account's life cycle over HTTP: change the password, log out everywhere, set a password with a
reset link, delete the account, download its data. Each wants the ``X-CSRF-Token`` header (the
reset too, cookie or not: it is one of the account's doors)."""

from __future__ import annotations

import json
from collections.abc import Callable

from fastapi import FastAPI, Request
from fastapi.responses import Response
from starlette.types import Scope

from coloretto.web.api.answers import ERRORS
from coloretto.web.api.csrf import token_of
from coloretto.web.api.http import CurrentUser
from coloretto.web.api.middleware import Network, client_address
from coloretto.web.common.admin_schemas import (
    AccountExport,
    Done,
    PasswordChange,
    PasswordCheck,
    PasswordReset,
    SessionsEnded,
)
from coloretto.web.common.errors import ServiceError
from coloretto.web.common.i18n import gettext as _
from coloretto.web.common.i18n import ngettext
from coloretto.web.common.names import User
from coloretto.web.common.schemas import Account
from coloretto.web.features.accounts import SESSION_COOKIE
from coloretto.web.features.site import Site


def logged_in_user(user: User | None) -> User:
    if user is None:
        raise ServiceError("login_required", _("log in to change your account"), 401)
    return user


def add_account_routes(
    app: FastAPI, site: Site, proxies: list[Network], secure: Callable[[Scope], bool]
) -> None:
    """The account's own routes beside signing up and logging in."""

    def forget_session(request: Request, response: Response) -> None:
        response.delete_cookie(
            SESSION_COOKIE, path="/", secure=secure(request.scope), httponly=True, samesite="lax"
        )

    @app.post("/api/account/password", tags=["accounts"], responses=ERRORS)
    async def change_password(body: PasswordChange, request: Request, user: CurrentUser) -> SessionsEnded:
        """Change your password (the old one required): every other browser is logged out, this one
        stays logged in."""
        me = logged_in_user(user)
        ended = await site.lifecycle.change_password(
            me,
            request.cookies.get(SESSION_COOKIE),
            body.old_password,
            body.new_password,
            client_address(request.scope, proxies),
        )
        message = ngettext(
            "Your password is changed; {n} other session was logged out.",
            "Your password is changed; {n} other sessions were logged out.",
            ended,
        )
        return SessionsEnded(ended=ended, message=message)

    @app.post("/api/account/logout-everywhere", tags=["accounts"], responses=ERRORS)
    async def logout_everywhere(request: Request, response: Response, user: CurrentUser) -> Account:
        """End every session of your account, this browser's too."""
        me = logged_in_user(user)
        await site.lifecycle.logout_everywhere(me)
        forget_session(request, response)
        return await site.accounts.account(None, token_of(request.scope))

    @app.post("/api/account/reset", tags=["accounts"], responses=ERRORS)
    async def reset(body: PasswordReset) -> Done:
        """Set a new password with a reset link's token (``coloretto admin reset-password``): valid
        an hour, used once; every session of the account ends. Wants the ``X-CSRF-Token`` header."""
        await site.lifecycle.reset(body.token, body.password)
        return Done(message=_("Your password is set: log in with it."))

    @app.post("/api/account/delete", tags=["accounts"], responses=ERRORS)
    async def delete(body: PasswordCheck, request: Request, response: Response, user: CurrentUser) -> Account:
        """Delete your account (your password to confirm). Your name, password, ratings, chat
        messages, reports and blocks are gone; your finished games stay, your seat shown as a deleted
        player; a bot finishes your games in play. The name stays reserved."""
        me = logged_in_user(user)
        await site.lifecycle.delete(me, body.password, client_address(request.scope, proxies))
        forget_session(request, response)
        return await site.accounts.account(None, token_of(request.scope))

    @app.get("/api/account/export", tags=["accounts"], responses={**ERRORS, 200: {"model": AccountExport}})
    async def export(request: Request, user: CurrentUser) -> Response:
        """Everything the site keeps about your account, as a JSON file: the profile, your games (with
        their moves and links), your rating and its history, your chat messages, the reports you
        made, the players you blocked, your sessions."""
        me = logged_in_user(user)
        site_url = str(request.base_url).rstrip("/")
        data = AccountExport.model_validate(await site.lifecycle.export(me, site_url))
        return Response(
            json.dumps(data.model_dump(mode="json"), ensure_ascii=False, indent=2),
            media_type="application/json",
            headers={"Content-Disposition": 'attachment; filename="coloretto-account.json"'},
        )
