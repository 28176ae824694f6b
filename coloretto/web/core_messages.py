"""The core's error messages in the client's language.

The core (rules, cards, actions, game, bots) stays free of the web's languages: its exceptions
say in English what was wrong. The ones a client of the web app can cause (an illegal action, a
rule option out of range, a bot name that means nothing) are listed here as msgids in the core's
own words, each variable part a field; :func:`core_text` recognises a message by its template and
gives its translation with the same parts. A message that is not listed, or that the core words
anew, is shown as the core wrote it; ``tests/test_i18n.py`` checks that every template still
matches what the core says.
"""

from __future__ import annotations

import re
from functools import cache

from coloretto.web.i18n import DEFAULT_LANGUAGE, N_, current_language
from coloretto.web.i18n import gettext as _

#: the core's messages, the more specific first
TEMPLATES = (
    # game.py: why an action is illegal (Game._why_illegal, Game._row_problem)
    N_("{action}: the game is over"),
    N_("{action}: starting colours are chosen only before the first round (variant)"),
    N_("{action}: that colour is not in play"),
    N_("{action}: that colour has already been chosen: each starts with a different colour"),
    N_("{action}: choose a starting colour first"),
    N_("{action}: there is no joker to name"),
    N_("{action}: name the colour of the joker just taken first"),
    N_("{action}: there is no drawn card to place: draw first"),
    N_("{action}: the drawn card must be placed in a row first"),
    N_("{action}: the deck is exhausted: take a row"),
    N_("{action}: every open row is full: take a row"),
    N_("{action}: passing is allowed only when there is nothing to draw and nothing to take"),
    N_("{action}: there is no row {row}: this game has {rows} rows"),
    N_("{action}: row {row} was already taken this round"),
    N_("{action}: row {row} is full ({cards} cards)"),
    N_("{action}: row {row} is empty: only a row with cards can be taken"),
    # actions.py and cards.py: notation
    N_("row {row} does not exist: rows are numbered 1 to {rows}"),
    N_(
        "cannot read action {text}: expected d (draw), pN (place in row N), tN (take row N), "
        "j:C (name a joker's colour), s:C (choose a starting colour) or x (pass)"
    ),
    N_("unknown card {text}: colours of the {edition} edition are {colours}"),
    N_("{text} is not a colour"),
    # rules.py: rule options
    N_("{option} must be one of {choices}, not {value}"),
    N_("{option} must be a whole number, not {value}"),
    N_("{option} must be a whole number ≥ {minimum}, not {value}"),
    N_("{option} must be a whole number from {minimum} to {maximum}, not {value}"),
    N_("Coloretto is for {minimum} to {maximum} players, not {value}"),
    N_("cards_under_last_round={value} is more than the deck holds (at most {most} with these rules)"),
    N_("rules must be an object, not {kind}"),
    N_("unknown rule option(s): {names}"),
    # bots/registry.py: bot names
    N_("unknown bot {bot}: known bots are {bots}"),
    N_("bot {bot}: the {level} level takes no options"),
    N_("bot {bot}: {problem}"),
    N_("it names a file ({file}), and only bots without files may be named here"),
)

#: fields that hold another message of the core, translated in turn
_NESTED = frozenset({"problem"})


@cache
def _patterns() -> tuple[tuple[re.Pattern[str], str], ...]:
    out = []
    for template in TEMPLATES:
        parts = re.split(r"\{(\w+)\}", template)
        regex = "".join(re.escape(part) if i % 2 == 0 else f"(?P<{part}>.+?)" for i, part in enumerate(parts))
        out.append((re.compile(regex, re.DOTALL), template))
    return tuple(out)


def core_text(error: BaseException | str) -> str:
    """A core exception's message in the current language (as written when it is not one of
    :data:`TEMPLATES`)."""
    text = str(error)
    if current_language.get() == DEFAULT_LANGUAGE:
        return text
    for pattern, template in _patterns():
        match = pattern.fullmatch(text)
        if match is not None:
            fields = match.groupdict()
            for name in _NESTED & fields.keys():
                fields[name] = core_text(fields[name])
            return _(template, **fields)
    return text
