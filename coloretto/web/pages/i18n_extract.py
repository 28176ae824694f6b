r"""A Babel extractor for the texts the core says without calling ``_()``.

The core stays free of the web's languages: the rule options (:data:`coloretto.rules.RULE_OPTIONS`),
the card names (:mod:`coloretto.cards`) and the bots' descriptions (:mod:`coloretto.bots.registry`)
are English data that the web layer translates by msgid where it shows them; and the errors a
player can cause (an illegal action, a rule option out of range, a bot name that means nothing) are
:class:`coloretto.errors.ExplainedError`\ s whose template is their msgid. ``babel.cfg`` points
this extractor at the core's modules, so that ``pybabel extract`` puts every one of these texts in
the catalogue, a new option, card, bot or error too, each located at its line in the core.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Collection, Iterator, Mapping
from typing import IO, Any

from coloretto.bots.registry import BUILTIN_KINDS
from coloretto.cards import EDITION_DECKS, GOLDEN_JOKER, LAST_ROUND, card_name
from coloretto.errors import ExplainedError
from coloretto.rules import RULE_OPTIONS
from coloretto.web.common.i18n import CHOICE_CONTEXT

#: a message of a core table: its msgid (or (context, msgid)) and a note for translators
CoreMessage = tuple[str | tuple[str, str], str]


def rule_messages() -> list[CoreMessage]:
    """Every rule option's label, help, choices and what each choice means."""
    out: list[CoreMessage] = []
    for option in RULE_OPTIONS:
        out.append((option.label, f"rule option {option.name}: its label in the lobby's form"))
        out.append((option.help, f"rule option {option.name}: what it is"))
        if option.out_of_range:
            out.append((option.out_of_range, f"rule option {option.name}: a number out of its range"))
        for value, meaning in zip(option.choices or (), option.choice_help):
            out.append(((CHOICE_CONTEXT, value), f"rule option {option.name}: the choice {value!r}"))
            out.append((meaning, f"rule option {option.name}: what the choice {value!r} means"))
    return out


def card_messages() -> list[CoreMessage]:
    """Every card's name in every edition (colours, jokers, "+2", the last-round card)."""
    out: list[CoreMessage] = []
    for edition, deck in EDITION_DECKS.items():
        for name in (*deck.colour_names, deck.joker_name, deck.plus_two_name):
            out.append((name, f"a card of the {edition.value} edition"))
    for card in (GOLDEN_JOKER, LAST_ROUND):
        out.append((card_name(card), "a card"))
    return out


def bot_messages() -> list[CoreMessage]:
    """Every built-in bot's description (a plug-in's is shown as it registered it)."""
    return [(kind.description, f"the bot {kind.name!r}: what it is") for kind in BUILTIN_KINDS]


#: which messages each core module holds in tables, by its path's end
SOURCES = {
    "coloretto/rules.py": rule_messages,
    "coloretto/cards.py": card_messages,
    "coloretto/bots/registry.py": bot_messages,
}


def core_messages() -> list[CoreMessage]:
    """The messages of all the core's tables, without repeats, in a stable order."""
    seen: set[str | tuple[str, str]] = set()
    out = []
    for source in SOURCES.values():
        for message, note in source():
            if message not in seen:
                seen.add(message)
                out.append((message, note))
    return out


def explained_errors() -> frozenset[str]:
    """The names of the core's explained errors (every subclass, however deep)."""
    found: set[str] = set()
    waiting: list[type[ExplainedError]] = [ExplainedError]
    while waiting:
        kind = waiting.pop()
        found.add(kind.__name__)
        waiting.extend(kind.__subclasses__())
    return frozenset(found)


def error_templates(source: str) -> list[tuple[int, str, str]]:
    """Every template an explained error is raised with in ``source``: (line, template, error's
    name), in order. A message made at run time (an f-string) has no template and is not found."""
    errors = explained_errors()
    out = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call) or not node.args:
            continue
        func = node.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
        first = node.args[0]
        if name in errors and isinstance(first, ast.Constant) and isinstance(first.value, str):
            out.append((node.lineno, first.value, name))
    return sorted(out)


def extract_core(
    fileobj: IO[bytes], keywords: Collection[str], comment_tags: Collection[str], options: Mapping[str, Any]
) -> Iterator[tuple[int, str, str | tuple[str, str], list[str]]]:
    """Babel's extractor interface: the messages of the core module ``fileobj`` is: those of its
    tables, each at the first line of the module that holds its text (line 1 if none does, as for a
    text made of parts), then the templates of the errors it raises."""
    path = os.fsdecode(getattr(fileobj, "name", "")).replace(os.sep, "/")
    text = fileobj.read().decode("utf-8")
    lines = text.splitlines()
    seen: set[str | tuple[str, str]] = set()
    source = next((messages for end, messages in SOURCES.items() if path.endswith(end)), None)
    for message, note in source() if source is not None else ():
        if message in seen:
            continue
        seen.add(message)
        said = message if isinstance(message, str) else message[1]
        quoted = (f'"{said}"', f"'{said}'")
        line = next((i for i, row in enumerate(lines, 1) if any(q in row for q in quoted)), 1)
        yield line, ("_" if isinstance(message, str) else "pgettext"), message, [note]
    for line, template, error in error_templates(text):
        if template not in seen:
            seen.add(template)
            yield line, "_", template, [f"an error of the engine ({error}), shown to whoever caused it"]
