"""The core's errors that a player or a program can cause, each telling what was wrong.

An :class:`ExplainedError` says it in English (its ``str()``), and keeps its words
as a ``template`` with ``{fields}`` and the ``fields`` themselves, so that a face
that speaks another language (the web app) says the same from its own catalogue,
with no second copy of the wording. A field may be another explained error (the
reason inside a reason), which is translated in turn.

>>> from coloretto.rules import Rules
>>> try:
...     Rules(players=9)
... except ExplainedError as error:
...     for part in (error.code, error.template, error.fields["value"], error):
...         print(part)
bad_rules
Coloretto is for {minimum} to {maximum} players, not {value}
9
Coloretto is for 2 to 5 players, not 9
"""

from __future__ import annotations

from typing import ClassVar


class ExplainedError(ValueError):
    """An error whose message is a template and its fields (see the module's docstring)."""

    #: what kind of mistake it is, as a machine reads it
    code: ClassVar[str] = "error"

    def __init__(self, template: str, /, **fields: object) -> None:
        self.template = template
        self.fields = dict(fields)
        super().__init__(template.format_map(fields) if fields else template)
