"""The app's HTML pages: Jinja2 templates (``coloretto/web/pages/templates``) rendered in the language of
the request, with a language switcher on every page.

Text in a template goes through ``_()`` (or ``ngettext``), as in the Python code: English msgids
with ``str.format`` fields, extracted by Babel (``babel.cfg``). A field may be markup made here
(:func:`key`, :func:`chip`, :func:`strong`), so that a translation moves it without holding any
HTML; the translation itself is escaped. A new page extends ``base.html`` and is served with
:func:`render`, which also gives the header who is logged in (``user``) and where the log-in links
come back to.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape
from markupsafe import Markup, escape
from starlette.datastructures import URL
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response

from coloretto.cards import COLOURS, EDITION_DECKS, Edition
from coloretto.web.common import i18n
from coloretto.web.common.errors import ServiceError
from coloretto.web.common.moderation import REPORT_REASONS, REPORT_TEXT_MAX
from coloretto.web.common.names import User
from coloretto.web.features.accounts import SESSION_COOKIE


def _gettext(message: str, /, **fields: Any) -> Markup:
    """``_()`` in a template: the translation escaped, then its fields (escaped unless markup)."""
    text = escape(i18n.translate(message, i18n.current_language.get()))
    return text.format(**fields) if fields else text


def _ngettext(singular: str, plural: str, n: int, /, **fields: Any) -> Markup:
    return escape(i18n.plural_form(singular, plural, n)).format(**{"n": n, **fields})


def key(name: str) -> Markup:
    """A key of the keyboard, as the pages show it."""
    return Markup('<span class="kbd">{}</span>').format(name)


def strong(text: str) -> Markup:
    return Markup("<strong>{}</strong>").format(text)


def link(text: str, href: str) -> Markup:
    """A link inside a sentence: the sentence is translated, the link's words too."""
    return Markup('<a href="{}">{}</a>').format(href, text)


def chip(kind: str, symbol: str, token: str | None = None) -> Markup:
    """A small card: its colour (``kind``: ``c0``…``c6``, ``joker`` …), symbol and letter."""
    letter = Markup('<span class="tok">{}</span>').format(token) if token else ""
    return Markup('<span class="card mini {}"><span class="sym">{}</span>{}</span>').format(
        kind, symbol, letter
    )


def mark(kind: str, sign: str) -> Markup:
    """A review's mark (?! ? ??), as the move list shows it."""
    return Markup('<span class="mark {}">{}</span>').format(kind, sign)


def colour_list() -> Markup:
    """Each colour of the classic deck with its symbol, letter and name: "● Y yellow, ▲ O orange …"."""
    deck = EDITION_DECKS[Edition.CLASSIC]
    return Markup(", ").join(
        Markup("{} {}").format(
            chip(f"c{c}", deck.colour_symbols[c], deck.colour_letters[c]), _gettext(deck.colour_names[c])
        )
        for c in range(COLOURS)
    )


@cache
def environment() -> Environment:
    env = Environment(
        loader=PackageLoader("coloretto.web.pages", "templates"),
        autoescape=select_autoescape(default=True),
        extensions=["jinja2.ext.i18n"],
        trim_blocks=False,
    )
    env.install_gettext_callables(gettext=_gettext, ngettext=_ngettext, newstyle=False)  # type: ignore[attr-defined]
    env.globals.update(key=key, strong=strong, link=link, chip=chip, mark=mark, number=i18n.number)
    # the report dialog's reasons (templates/report_dialog.html), wherever it is included
    env.globals.update(report_reasons=REPORT_REASONS, report_text_max=REPORT_TEXT_MAX)
    return env


def languages(url: URL) -> list[dict[str, Any]]:
    """The language switcher: each language's link to this page, in its own name."""
    current = i18n.current_language.get()
    return [
        {
            "code": code,
            "name": i18n.LANGUAGE_NAMES[code],
            "url": _relative(url.include_query_params(lang=code)),
            "current": code == current,
        }
        for code in i18n.LANGUAGES
    ]


def _relative(url: URL) -> str:
    return url.path + (f"?{url.query}" if url.query else "")


#: the pages whose address is not worth coming back to after logging in or signing up
ACCOUNT_PAGES = ("/login", "/signup")


def safe_next(target: str | None) -> str:
    """Where to send a person after they log in: a path of this site, else the lobby; never another
    site's address (``//host``, or ``/\\host``, which a browser reads as ``//host``) nor the log-in
    pages themselves.

    >>> [safe_next(t) for t in ("/games/x?game=2", "//evil.example/", "https://evil.example/", None)]
    ['/games/x?game=2', '/', '/', '/']
    """
    if not target or not target.startswith("/") or target.startswith("//") or len(target) > 500:
        return "/"
    if "\\" in target or any(ord(c) < 0x20 or ord(c) == 0x7F for c in target):
        return "/"
    if target.split("?")[0] in ACCOUNT_PAGES:
        return "/"
    return target


def come_back_to(request: Request) -> str:
    """The page a log-in started from should lead back to: this one, or, on the log-in and sign-up
    pages themselves, the one they were opened from."""
    if request.url.path in ACCOUNT_PAGES:
        return safe_next(request.query_params.get("next"))
    return safe_next(_relative(request.url))


def catalogue_url(language: str) -> str:
    """Where the browser reads the page language's catalogue, versioned so that it may be kept."""
    return f"/api/i18n/{language}?v={i18n.catalogue_version(language)}"


async def render(request: Request, template: str, *, status: int = 200, **context: Any) -> Response:
    """A page in the request's language, its header naming the logged-in person. ``?lang=nl`` (the
    switcher's links) remembers the choice in the ``lang`` cookie and sends the browser back to the
    page's own address; a language the app does not speak is refused (400 ``bad_language``) and
    changes nothing. ``status``: the answer's (a page that refuses, 401 or 403, is still a page)."""
    chosen = request.query_params.get("lang")
    if chosen is not None:
        code = chosen.strip().lower()
        if code not in i18n.LANGUAGES:
            raise ServiceError(
                "bad_language",
                i18n.gettext(
                    "there is no language {language}: the languages are {languages}",
                    language=repr(chosen[:20]),
                    languages=", ".join(i18n.LANGUAGES),
                ),
            )
        response: Response = RedirectResponse(_relative(request.url.remove_query_params("lang")), 303)
        response.set_cookie(i18n.COOKIE, code, max_age=365 * 24 * 3600, path="/", samesite="lax")
        return response
    language = i18n.current_language.get()
    user: User | None = await request.app.state.site.accounts.user_of(request.cookies.get(SESSION_COOKIE))
    html = (
        environment()
        .get_template(template)
        .render(
            lang=language,
            languages=languages(request.url),
            catalogue_url=catalogue_url(language),
            row_keys=Markup("{}–{}").format(key("1"), key("5")),
            user=user,
            path=request.url.path,
            next=come_back_to(request),
            **context,
        )
    )
    return HTMLResponse(html, status_code=status, headers={"Cache-Control": "no-cache"})
