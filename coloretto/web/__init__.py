"""Coloretto in the browser: ``coloretto serve``.

:func:`create_app` builds the FastAPI app on a database URL; the game server
is its :class:`~coloretto.web.features.site.Site`. The app is in layers that import one way,
each a folder: ``common`` (errors, languages, settings, the shapes of what is sent), ``table``
(a game in play on the core's Match: seats, clocks, watchers; no I/O), ``storage`` (every read and
write), ``runtime`` (the games in memory, the writer, bot workers, clocks, leases, the cluster bus),
``features`` (lobby, seats, play, chat, accounts, ratings, reviews, hints, records; the site that
puts them together), ``api`` (the HTTP and WebSocket routes) and ``pages`` (templates, static
files, the catalogues' extraction).

The names below are loaded on first use: a bot worker process imports
:mod:`coloretto.web.runtime.workers` and must not pay for FastAPI and SQLAlchemy.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from coloretto.web.app import create_app
    from coloretto.web.common.errors import ServiceError
    from coloretto.web.common.settings import Settings
    from coloretto.web.features.site import Site

__all__ = ["ServiceError", "Settings", "Site", "create_app"]

_WHERE = {
    "create_app": "coloretto.web.app",
    "Site": "coloretto.web.features.site",
    "ServiceError": "coloretto.web.common.errors",
    "Settings": "coloretto.web.common.settings",
}


if not TYPE_CHECKING:
    # hidden from mypy, which would otherwise take any name of coloretto.web as real

    def __getattr__(name: str) -> Any:
        if name in _WHERE:
            return getattr(importlib.import_module(_WHERE[name]), name)
        raise AttributeError(f"module 'coloretto.web' has no attribute {name!r}")
