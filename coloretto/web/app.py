"""The web app: the site (:class:`~coloretto.web.features.site.Site`) behind the JSON API, the
game's WebSocket and the pages, with the middleware every request goes through."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI
from starlette.types import Scope

from coloretto import __version__
from coloretto.web.api.account_life import add_account_routes
from coloretto.web.api.answers import add_error_answers
from coloretto.web.api.csrf import CsrfGuard
from coloretto.web.api.headers import ResponseHeaders
from coloretto.web.api.http import ACCOUNT_DOORS, add_api_routes
from coloretto.web.api.middleware import BodyLimit, RequestLimit, came_over_https, trusted_networks
from coloretto.web.api.moderation import add_moderation_routes
from coloretto.web.api.monitoring import add_monitoring_routes
from coloretto.web.api.observe import Observe
from coloretto.web.api.socket import add_socket_route
from coloretto.web.common import i18n
from coloretto.web.common.settings import Settings
from coloretto.web.features.site import Site
from coloretto.web.pages.routes import add_page_routes
from coloretto.web.storage.db import open_database


def create_app(
    database_url: str, settings: Settings | None = None, *, close_workers: bool = False
) -> FastAPI:
    """The app on a database (migrated on start-up). ``close_workers``: the app is the process's
    only one (``coloretto serve``), and its bot workers (the process's shared pool) and their
    metrics directory go when it stops; else they serve the next app made in the process too, and
    go at exit."""
    settings = settings or Settings()
    i18n.load()  # a broken catalogue stops the start, not a request
    sessions = open_database(database_url)
    site = Site(sessions, settings)

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        await site.start()
        yield
        await site.stop()
        if close_workers:
            await site.games.pool().close()

    app = FastAPI(
        title="Coloretto",
        version=__version__,
        description="Play Coloretto in the browser. The lobby API, the table state, and the WebSocket "
        "protocol described in docs/operator/api.md.",
        lifespan=lifespan,
        # /docs is a page of the site's own (coloretto.web.pages.routes), under a policy that
        # lets it load Swagger UI; FastAPI's has an inline script, and ReDoc one more CDN
        docs_url=None,
        redoc_url=None,
    )
    app.state.site = site
    proxies = trusted_networks(settings.trusted_proxies)

    def secure(scope: Scope) -> bool:
        """The Secure flag of the cookies set on an answer to this request."""
        if settings.secure_cookies == "auto":
            return came_over_https(scope, proxies)
        return settings.secure_cookies == "always"

    app.add_middleware(BodyLimit, limit=settings.max_body_bytes)
    app.add_middleware(CsrfGuard, always=ACCOUNT_DOORS, secure=secure)
    # added after them, so it runs before them: a client over its rate costs no body reading
    app.add_middleware(
        RequestLimit, per_minute=settings.requests_per_minute, proxies=proxies, counters=site.limits
    )
    # added after them, so it runs before them: every answer, the limits' and the CSRF guard's too,
    # is in the client's language
    app.add_middleware(i18n.LanguageMiddleware)
    # added after them, so it runs before them: every request has its request id for the logs, and
    # every answer is counted in /metrics
    app.add_middleware(Observe)
    # added last, so it runs first, the outermost: every answer, the limits', the CSRF guard's and the
    # errors' too, has the headers
    app.add_middleware(ResponseHeaders, proxies=proxies, draining=lambda: site.draining)

    add_error_answers(app, site.incidents)
    add_page_routes(app)
    add_api_routes(app, site, proxies, secure)
    add_account_routes(app, site, proxies, secure)
    add_moderation_routes(app, site)
    add_socket_route(app, site)
    add_monitoring_routes(app, site)
    return app
