"""The pages' routes: the lobby, a table, a replay, the rules, the account pages (log-in, sign-up, a
person's account, a reset link), the leaderboard, a player's page, the administrators' page, and the
catalogues the pages' scripts translate with."""

from __future__ import annotations

import unicodedata
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.responses import FileResponse, Response
from fastapi.staticfiles import StaticFiles

from coloretto.web.common import i18n
from coloretto.web.common.errors import ServiceError
from coloretto.web.common.i18n import gettext as _
from coloretto.web.common.moderation import REASON_MAX
from coloretto.web.common.names import UNPRINTABLE_CATEGORIES
from coloretto.web.common.schemas import (
    NAME_MAX,
    PASSWORD_MAX,
    PASSWORD_MIN,
    TOKEN_MAX,
    ErrorBody,
)
from coloretto.web.features.accounts import SESSION_COOKIE
from coloretto.web.pages import render as pages

STATIC = Path(__file__).with_name("static")

#: Swagger UI, from the CDN FastAPI's own page takes it from
SWAGGER_UI = "https://cdn.jsdelivr.net/npm/swagger-ui-dist@5"
#: the API documentation page's policy: the site's own, plus Swagger UI's files from its CDN and
#: the data: images of its style sheet (its page's script is a file of the site, not inline)
DOCS_POLICY = (
    "default-src 'self'; script-src 'self' https://cdn.jsdelivr.net; "
    "style-src 'self' https://cdn.jsdelivr.net; img-src 'self' data:; connect-src 'self'; "
    "object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'"
)


def add_page_routes(app: FastAPI) -> None:
    """Every page, and the static files."""
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    password_rules = {"password_min": PASSWORD_MIN, "password_max": PASSWORD_MAX, "name_max": NAME_MAX}

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

    @app.get("/docs", include_in_schema=False)
    async def api_docs() -> Response:
        """The API's interactive documentation (Swagger UI on /openapi.json)."""
        html = (
            pages.environment()
            .get_template("docs.html")
            .render(title=f"{app.title} - API", openapi_url=app.openapi_url, swagger=SWAGGER_UI)
        )
        return Response(html, media_type="text/html", headers={"Content-Security-Policy": DOCS_POLICY})

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

    @app.get("/account", include_in_schema=False)
    async def account_page(request: Request) -> Response:
        """A logged-in person's account: password, sessions, blocks, the data, the deletion."""
        return await pages.render(request, "settings.html", **password_rules)

    @app.get("/admin", include_in_schema=False)
    async def admin_page(request: Request) -> Response:
        """The administrators' page; anyone else is told it is theirs (401 for a guest, 403)."""
        site = request.app.state.site
        user = await site.accounts.user_of(request.cookies.get(SESSION_COOKIE))
        if user is None or not user.is_admin:
            status = 401 if user is None else 403
            return await pages.render(request, "forbidden.html", status=status)
        return await pages.render(request, "admin.html", reason_max=REASON_MAX)

    @app.get("/reset/{token}", include_in_schema=False)
    async def reset_page(request: Request, token: str) -> Response:
        """A one-time password reset link: the form, or why the link is no good (404)."""
        try:
            name = await request.app.state.site.lifecycle.reset_account(token[:TOKEN_MAX])
        except ServiceError as exc:
            return await pages.render(
                request, "reset.html", status=exc.status, problem=exc.message, **password_rules
            )
        return await pages.render(request, "reset.html", account=name, **password_rules)

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
