"""Coloretto in the browser: ``coloretto serve``.

:func:`create_app` builds the FastAPI app on a database URL; the game logic
is in :mod:`coloretto.web.service`, the tables in :mod:`coloretto.web.models`
and the migrations in ``coloretto/web/migrations``.
"""

from coloretto.web.app import create_app
from coloretto.web.service import GameService, ServiceError, Settings

__all__ = ["GameService", "ServiceError", "Settings", "create_app"]
