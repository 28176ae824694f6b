"""Coloretto in the browser: ``coloretto serve``.

:func:`create_app` builds the FastAPI app on a database URL; the game server
is in :mod:`coloretto.web.service` (its layers are listed there), the tables
in :mod:`coloretto.web.models` and the migrations in ``coloretto/web/migrations``.

The names below are loaded on first use: a bot worker process imports
:mod:`coloretto.web.workers` and must not pay for FastAPI and SQLAlchemy.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from coloretto.web.app import create_app
    from coloretto.web.service import GameService, ServiceError, Settings

__all__ = ["GameService", "ServiceError", "Settings", "create_app"]

_WHERE = {
    "create_app": "coloretto.web.app",
    "GameService": "coloretto.web.service",
    "ServiceError": "coloretto.web.errors",
    "Settings": "coloretto.web.settings",
}


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        return getattr(importlib.import_module(_WHERE[name]), name)
    raise AttributeError(f"module 'coloretto.web' has no attribute {name!r}")
