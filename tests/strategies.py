"""Hypothesis strategies for the rule options.

:func:`rules_strategy` reads :data:`coloretto.rules.RULE_OPTIONS`, so a rule
option added to that table is drawn here without editing this file: a choice
option over all its choices, a number over its range. A number whose largest
value depends on the other options (``cards_under_last_round``) has no
``maximum`` in the table; its bound is the ``max_<name>`` property of the
rules drawn so far, and an option without either is an error here rather than
an option the tests silently never vary.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from hypothesis import strategies as st

from coloretto.rules import RULE_OPTIONS, RuleOption, Rules

#: the longest match drawn by default: a match's length changes no game, and
#: tests that play whole matches stay quick
DEFAULT_MAX_MATCH_GAMES = 3


def _fixed_range(option: RuleOption, max_match_games: int) -> tuple[int, int] | None:
    """The option's range when it depends on no other option, else None."""
    if option.maximum is None:
        return None
    assert option.minimum is not None, f"rule option {option.name} has a maximum but no minimum"
    maximum = min(option.maximum, max_match_games) if option.name == "match_games" else option.maximum
    return option.minimum, maximum


def rules_strategy(
    *,
    max_match_games: int = DEFAULT_MAX_MATCH_GAMES,
    exclude: Mapping[str, Collection[str]] | None = None,
    **fixed: Any,
) -> st.SearchStrategy[Rules]:
    """Rules with every option drawn from all its values.

    ``fixed`` pins options (``rules_strategy(players=2)``); ``exclude`` leaves
    out some choices of an option (``exclude={"edition": ["modern"]}``).
    """
    left_out = {name: set(values) for name, values in (exclude or {}).items()}
    names = {option.name for option in RULE_OPTIONS}
    unknown = (set(fixed) | set(left_out)) - names
    if unknown:
        raise ValueError(f"unknown rule option(s): {', '.join(sorted(unknown))}")

    @st.composite
    def draw_rules(draw: st.DrawFn) -> Rules:
        values: dict[str, Any] = {}
        dependent: list[RuleOption] = []
        for option in RULE_OPTIONS:
            if option.name in fixed:
                values[option.name] = fixed[option.name]
            elif option.choices is not None:
                choices = [c for c in option.choices if c not in left_out.get(option.name, ())]
                values[option.name] = draw(st.sampled_from(choices))
            elif (bounds := _fixed_range(option, max_match_games)) is not None:
                values[option.name] = draw(st.integers(*bounds))
            else:
                dependent.append(option)
        for option in dependent:
            # the rules drawn so far, the option at its default, tell its largest value
            largest = getattr(Rules(**values), f"max_{option.name}", None)
            if largest is None or option.minimum is None:
                raise TypeError(
                    f"rule option {option.name} has no fixed range and Rules has no max_{option.name}: "
                    "say in tests/strategies.py how to draw it"
                )
            number = st.integers(option.minimum, largest)
            values[option.name] = draw(st.none() | number if option.optional else number)
        return Rules(**values)

    return draw_rules()
