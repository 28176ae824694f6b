"""What the operator's tools ask: ``/api/health/live`` (the process answers), ``/api/health/ready``
(it should be sent traffic) and ``/metrics`` (Prometheus). ``/api/health`` stays in
:mod:`coloretto.web.api.http`, as other tools read it.

``/metrics`` is answered to loopback and to the addresses or networks of ``--metrics-allow`` only,
by the address of the connection itself (never ``X-Forwarded-For``), and never to a request that
came through a proxy (one that carries ``X-Forwarded-For`` or ``Forwarded``): Prometheus scrapes
each process directly, and the public, through nginx, never gets it.
"""

from __future__ import annotations

import ipaddress
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response
from starlette.types import Scope

from coloretto.web.api.middleware import Network
from coloretto.web.common import metrics
from coloretto.web.common.errors import ServiceError
from coloretto.web.common.i18n import gettext as _
from coloretto.web.features.site import Site

#: who may always read /metrics: this machine
LOOPBACK = (ipaddress.ip_network("127.0.0.0/8"), ipaddress.ip_network("::1/128"))
#: the headers a proxy adds: a request carrying one came through a proxy
PROXY_HEADERS = frozenset({b"x-forwarded-for", b"forwarded"})


def metrics_networks(allowed: tuple[str, ...]) -> list[Network]:
    """Loopback and the ``--metrics-allow`` addresses or networks; a bad one is a one-line ValueError."""
    networks: list[Network] = list(LOOPBACK)
    for text in allowed:
        try:
            networks.append(ipaddress.ip_network(text.strip(), strict=False))
        except ValueError:
            raise ValueError(f"--metrics-allow {text!r} is not an IP address or network") from None
    return networks


def metrics_refused(scope: Scope, networks: list[Network]) -> str | None:
    """Why ``/metrics`` is not answered to this request, or None."""
    if any(name in PROXY_HEADERS for name, _value in scope.get("headers", ())):
        return _("/metrics is not served through a proxy: scrape each server process directly")
    peer = scope.get("client")
    address = str(peer[0]) if peer else ""
    try:
        ip = ipaddress.ip_address(address.split("%")[0])
    except ValueError:
        ip = None
    if ip is not None and isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if ip is None or not any(ip in network for network in networks):
        return _(
            "/metrics is not served to {address}: only to this machine and to --metrics-allow",
            address=address or "?",
        )
    return None


def add_monitoring_routes(app: FastAPI, site: Site) -> None:
    networks = metrics_networks(site.settings.metrics_from)

    @app.get("/api/health/live", tags=["server"])
    async def live() -> dict[str, Any]:
        """The process answers (200, always): a process that does not should be restarted."""
        return {"ok": True, "process": site.games.bus.process_id}

    @app.get(
        "/api/health/ready",
        tags=["server"],
        responses={503: {"description": "not ready: ``failed`` names the checks that did not pass"}},
    )
    async def ready() -> JSONResponse:
        """200 when this process should be sent traffic: the database answers, Redis answers PING
        (with ``--redis-url``), the bot workers are warm, the schema is at the code's migration, and
        the process is not shutting down; otherwise 503. ``checks`` tells each one's outcome."""
        ok, body = await site.readiness.check()
        return JSONResponse(body, status_code=200 if ok else 503, headers={"Cache-Control": "no-store"})

    @app.get("/metrics", include_in_schema=False)
    async def prometheus(request: Request) -> Response:
        refused = metrics_refused(request.scope, networks)
        if refused is not None:
            raise ServiceError("forbidden", refused, 403)
        body, content_type = metrics.exposition(request.headers.get("accept"))
        return Response(body, headers={"Content-Type": content_type, "Cache-Control": "no-store"})
