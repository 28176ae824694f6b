"""The web app's languages: every message a person reads goes through :func:`gettext`.

Server code writes English with named fields and lets this module translate it into the
language of the request or WebSocket that is being answered (:data:`current_language`)::

    from coloretto.web.common.i18n import gettext as _

    raise ServiceError("seat_taken", _("seat {seat} is taken", seat=3), 409)

A message is written once, in English, as the catalogue's key (``msgid``); its fields are
``str.format`` names, filled after translation, so a translation may move them.

The translations are gettext catalogues, one per language, in ``locale/<lang>/LC_MESSAGES/
messages.po`` (the template, ``messages.pot``, is extracted by Babel: see ``babel.cfg`` and the
docs/user/languages.md). They are read with Babel when the app starts. The browser gets the same
catalogue as JSON (:func:`catalogue_json`), so the server and the pages share one set of texts.

The language of a request is the ``lang`` cookie (set by the pages' language switcher), else
the best match of its ``Accept-Language`` header, else English (:func:`request_language`);
:class:`LanguageMiddleware` sets :data:`current_language` for each HTTP request and for each
WebSocket connection, from its handshake.
"""

from __future__ import annotations

import gettext as _gettext
import hashlib
import io
import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from coloretto.errors import ExplainedError

if TYPE_CHECKING:
    from babel.messages.catalog import Catalog
    from starlette.types import ASGIApp, Message, Receive, Scope, Send

#: the languages the web app speaks, the first the default
LANGUAGES = ("en", "nl", "fr", "de")
DEFAULT_LANGUAGE = LANGUAGES[0]
#: each language in its own words, for the language switcher
LANGUAGE_NAMES = {"en": "English", "nl": "Nederlands", "fr": "Français", "de": "Deutsch"}
#: the cookie that holds a player's choice of language
COOKIE = "lang"
#: the catalogues: ``locale/<lang>/LC_MESSAGES/messages.po`` and the template ``locale/messages.pot``
LOCALE_DIR = Path(__file__).with_name("locale")
DOMAIN = "messages"
#: the context of a rule option's choice, whose value ("brown", "best") is also plain English
CHOICE_CONTEXT = "rule choice"

#: the language of the request or WebSocket connection being answered
current_language: ContextVar[str] = ContextVar("coloretto_language", default=DEFAULT_LANGUAGE)


def N_(message: str) -> str:
    """Marks ``message`` for the catalogue without translating it (a constant, translated where used)."""
    return message


def catalogue_path(language: str) -> Path:
    return LOCALE_DIR / language / "LC_MESSAGES" / f"{DOMAIN}.po"


@cache
def catalogue(language: str) -> Catalog:
    """The ``.po`` catalogue of a language other than English, as Babel reads it."""
    from babel.messages.pofile import read_po

    with catalogue_path(language).open("rb") as file:
        return read_po(file, locale=language, domain=DOMAIN)


@cache
def translations(language: str) -> _gettext.NullTranslations:
    """gettext's translations of a language (English: none, the messages are English). The
    ``.po`` is compiled in memory, so there is no ``.mo`` file to fall out of step with it;
    fuzzy and empty entries are left out, as gettext does."""
    if language == DEFAULT_LANGUAGE:
        return _gettext.NullTranslations()
    if language not in LANGUAGES:
        raise ValueError(f"{language!r} is not a language of the web app: {', '.join(LANGUAGES)}")
    from babel.messages.mofile import write_mo
    from babel.support import Translations

    compiled = io.BytesIO()
    write_mo(compiled, catalogue(language))
    compiled.seek(0)
    return Translations(compiled, domain=DOMAIN)


def load() -> None:
    """Read every catalogue now (the app does at start-up), so that a broken one stops the start."""
    for language in LANGUAGES:
        translations(language)
        catalogue_json(language)


def _spoken(language: str) -> _gettext.NullTranslations:
    """The translations of ``language``, English's (none) for a language the app does not speak."""
    return translations(language if language in LANGUAGES else DEFAULT_LANGUAGE)


def translate(message: str, language: str) -> str:
    """``message`` (English, the catalogue key) in ``language``; itself where no translation exists."""
    return _spoken(language).gettext(message)


def _fill(text: str, fields: dict[str, object]) -> str:
    return text.format(**fields) if fields else text


def gettext(message: str, /, **fields: object) -> str:
    """``message`` in the current language, its ``{name}`` fields filled from ``fields``."""
    return _fill(translate(message, current_language.get()), fields)


def explained(error: BaseException) -> str:
    """An error's message in the current language: a core error
    (:class:`coloretto.errors.ExplainedError`) from its template in the catalogue, the reasons
    inside it too; any other as it says itself."""
    if not isinstance(error, ExplainedError):
        return str(error)
    fields = {
        name: explained(value) if isinstance(value, BaseException) else value
        for name, value in error.fields.items()
    }
    return gettext(error.template, **fields)


def plural_form(singular: str, plural: str, n: int) -> str:
    """The form of ``singular``/``plural`` for the number ``n`` in the current language (by the
    language's own plural rules: French has 0 in the singular), its fields not filled."""
    return _spoken(current_language.get()).ngettext(singular, plural, n)


def ngettext(singular: str, plural: str, n: int, /, **fields: object) -> str:
    """:func:`plural_form` with ``{n}`` and ``fields`` filled."""
    return plural_form(singular, plural, n).format(**{"n": n, **fields})


def pgettext(context: str, message: str, /, **fields: object) -> str:
    """``message`` in the current language where the same English means different things
    (``context`` tells them apart: a rule choice "brown" is not the colour brown)."""
    return _fill(_spoken(current_language.get()).pgettext(context, message), fields)


def number(value: float, digits: int | None = None) -> str:
    """A number as the current language writes it (``2.5`` is ``2,5`` in Dutch), without
    thousands separators; ``digits`` fixes the decimals."""
    from babel.numbers import format_decimal

    pattern = None if digits is None else "0." + "0" * digits if digits else "0"
    return format_decimal(value, format=pattern, locale=current_language.get(), group_separator=False)


@contextmanager
def language(code: str) -> Iterator[None]:
    """Speak ``code`` inside the block (a message for one client, sent from another's task)."""
    token = current_language.set(code if code in LANGUAGES else DEFAULT_LANGUAGE)
    try:
        yield
    finally:
        current_language.reset(token)


# ----------------------------------------------------------------- the browser's catalogue

#: numbers on which a language's gettext plural formula is matched with CLDR's plural categories
#: (the browser's Intl.PluralRules): every category of the four languages occurs among them
_PLURAL_SAMPLES = (*range(0, 2001), 10**6, 2 * 10**6, 10**7, 10**9)


def plural_categories(language: str) -> dict[str, int]:
    """Which form of a plural message each CLDR plural category takes in ``language``: the browser
    picks the category with ``Intl.PluralRules`` and the form by this map. Raises ValueError if the
    catalogue's Plural-Forms and CLDR disagree (one category, two forms)."""
    from babel import Locale

    rule = Locale.parse(language).plural_form
    # gettext's own formula: English's (n != 1) without a catalogue, else the .po's Plural-Forms
    formula = getattr(translations(language), "plural", lambda n: int(n != 1))
    forms: dict[str, int] = {}
    for n in _PLURAL_SAMPLES:
        category, index = rule(n), int(formula(n))
        if forms.setdefault(category, index) != index:
            raise ValueError(
                f"the {language} catalogue's plural forms do not follow CLDR's categories: "
                f"{n} is {category!r} but takes form {index}, not {forms[category]}"
            )
    return forms


def _message_key(message_id: str | Sequence[str], context: str | None) -> str:
    key = message_id if isinstance(message_id, str) else message_id[0]
    return key if context is None else f"{context}\x04{key}"


@cache
def catalogue_json(language: str) -> str:
    """A language's catalogue for the browser, as JSON text: ``messages`` maps each msgid
    (``context\\u0004msgid`` when it has a context; the singular of a plural message) to its
    translation (a list of forms for a plural message); ``plural`` maps CLDR's plural categories
    to those forms. English has no messages: the msgids are the English text."""
    messages: dict[str, str | list[str]] = {}
    if language != DEFAULT_LANGUAGE:
        for message in catalogue(language):
            if not message.id or message.fuzzy:
                continue
            if isinstance(message.string, str):
                if message.string:
                    messages[_message_key(message.id, message.context)] = message.string
            elif message.string and all(message.string):
                messages[_message_key(message.id, message.context)] = list(message.string)
    data = {"language": language, "plural": plural_categories(language), "messages": messages}
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


@cache
def catalogue_version(language: str) -> str:
    """Changes whenever the language's catalogue does: the pages ask for it by this version, so
    that a browser may keep it as long as it likes."""
    return hashlib.sha256(catalogue_json(language).encode()).hexdigest()[:16]


# ------------------------------------------------------------------ choosing the language


def accepted_languages(header: str) -> list[str]:
    """The language tags of an ``Accept-Language`` header, most wanted first (by their q-values;
    equal ones in the header's order); ``*`` and q=0 are left out, as is a malformed q."""
    ranked: list[tuple[float, int, str]] = []
    for position, part in enumerate(header.split(",")):
        tag, _, parameters = part.partition(";")
        tag = tag.strip().lower()
        quality = 1.0
        for parameter in parameters.split(";"):
            name, _, value = parameter.partition("=")
            if name.strip().lower() == "q":
                try:
                    quality = float(value.strip())
                except ValueError:
                    quality = 0.0
        if tag and tag != "*" and 0.0 < quality <= 1.0:
            ranked.append((-quality, position, tag))
    return [tag for _, _, tag in sorted(ranked)]


def negotiate(accept_language: str | None) -> str:
    """The app's language that best fits an ``Accept-Language`` header (``nl-NL`` is Dutch), with
    Babel's negotiation; English when none fits or there is no header."""
    if not accept_language:
        return DEFAULT_LANGUAGE
    from babel import negotiate_locale

    return negotiate_locale(accepted_languages(accept_language), LANGUAGES, sep="-") or DEFAULT_LANGUAGE


def cookie_language(cookie_header: str) -> str | None:
    """The language a ``Cookie`` header's ``lang`` names, if it is one of the app's."""
    for part in cookie_header.split(";"):
        name, _, value = part.partition("=")
        if name.strip() == COOKIE:
            code = value.strip().strip('"').lower()
            if code in LANGUAGES:
                return code
    return None


def request_language(headers: list[tuple[bytes, bytes]] | Any) -> str:
    """A request's language from its (ASGI) headers: the ``lang`` cookie, else ``Accept-Language``."""
    accept = None
    for name, value in headers:
        if name == b"cookie":
            chosen = cookie_language(value.decode("latin-1"))
            if chosen is not None:
                return chosen
        elif name == b"accept-language":
            accept = value.decode("latin-1")
    return negotiate(accept)


class LanguageMiddleware:
    """Sets :data:`current_language` for every HTTP request and every WebSocket connection (from
    its handshake, for the whole connection), so that every message of the app, its other
    middleware's too, is in the client's language. Answers that depend on it say so (``Vary``)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        token = current_language.set(request_language(scope.get("headers", ())))
        try:
            path = str(scope.get("path", ""))
            # the static files and the catalogues are the same whatever the client's language
            if scope["type"] == "http" and not path.startswith(("/static/", "/api/i18n/")):
                await self.app(scope, receive, _varying(send))
            else:
                await self.app(scope, receive, send)
        finally:
            current_language.reset(token)


def _varying(send: Send) -> Send:
    async def varying_send(message: Message) -> None:
        if message["type"] == "http.response.start":
            headers = list(message.get("headers", ()))
            headers.append((b"vary", b"Accept-Language, Cookie"))
            message = {**message, "headers": headers}
        await send(message)

    return varying_send
