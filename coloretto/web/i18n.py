"""The web app's languages: every message a person reads goes through :func:`gettext`.

Server code writes English with named fields and lets this module translate it into the
language of the request or WebSocket that is being answered (:data:`current_language`)::

    from coloretto.web.i18n import gettext as _

    raise ServiceError("seat_taken", _("seat {seat} is taken", seat=3), 409)

A message is written once, in English, as the catalogue's key (``msgid``); its fields are
``str.format`` names, filled after translation, so a translation may move them.
"""

from __future__ import annotations

from contextvars import ContextVar

#: the languages the web app speaks, the first the default
LANGUAGES = ("en", "nl", "fr", "de")
DEFAULT_LANGUAGE = LANGUAGES[0]

#: the language of the request or WebSocket connection being answered
current_language: ContextVar[str] = ContextVar("coloretto_language", default=DEFAULT_LANGUAGE)


def translate(message: str, language: str) -> str:
    """``message`` (English, the catalogue key) in ``language``; itself where no translation exists."""
    return message


def gettext(message: str, /, **fields: object) -> str:
    """``message`` in the current language, its ``{name}`` fields filled from ``fields``."""
    text = translate(message, current_language.get())
    return text.format(**fields) if fields else text
