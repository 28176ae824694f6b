"""The one table of rule options that every face reads."""

from __future__ import annotations

from dataclasses import fields

import pytest

from coloretto.rules import MAX_MATCH_GAMES, RULE_OPTIONS, Rules, RulesError, rule_option


def test_the_table_lists_every_rules_field_with_its_default() -> None:
    assert [option.name for option in RULE_OPTIONS] == [f.name for f in fields(Rules)]
    defaults = Rules()
    for option in RULE_OPTIONS:
        assert option.default == option.to_json(getattr(defaults, option.name))
        assert option.label and option.help
        if option.choices is not None:
            assert len(option.choice_help) == len(option.choices), option.name
            assert option.default in option.choices
        else:
            assert option.minimum is not None


def test_every_choice_and_every_number_in_range_makes_rules() -> None:
    for option in RULE_OPTIONS:
        values: list[object] = list(option.choices or ())
        if option.choices is None:
            values = [option.minimum, option.maximum] if option.maximum is not None else [option.minimum]
        for value in values:
            players = {"players": value} if option.name == "players" else {"players": 4}
            rules = Rules(**{**players, option.name: value})  # type: ignore[arg-type]
            assert option.to_json(getattr(rules, option.name)) == value


def test_rules_from_text_reads_flags_and_form_fields() -> None:
    rules = Rules.from_text({"players": "2", "joker-timing": "on-take", "cards_under_last_round": ""})
    assert rules == Rules(players=2, joker_timing="on-take")
    assert Rules.from_text({"cards_under_last_round": "7", "match_games": " 4 "}) == Rules(
        cards_under_last_round=7, match_games=4
    )
    assert Rules.from_dict(rules.to_dict()) == rules


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"players": "6"}, "2 to 5 players"),
        ({"players": "two"}, "players must be a whole number"),
        ({"table": "green"}, "table must be one of brown, violet"),
        ({"match_games": str(MAX_MATCH_GAMES + 1)}, f"from 1 to {MAX_MATCH_GAMES}"),
        ({"match_games": "0"}, "from 1 to"),
        ({"cards_under_last_round": "-1"}, "≥ 0"),
        ({"cards_under_last_round": "200"}, "more than the deck holds"),
        ({"colour": "red"}, "unknown rule option 'colour'"),
    ],
)
def test_bad_option_values_say_what_was_wrong(values: dict[str, str], message: str) -> None:
    with pytest.raises(RulesError, match=message):
        Rules.from_text(values)


def test_options_have_flags_and_choice_descriptions() -> None:
    option = rule_option("joker-timing")
    assert option.flag == "--joker-timing"
    assert option.describe_choice("on-take") == "named by the taker when taken"
    assert rule_option("starting_colours").choices == ("dealt", "chosen")
    assert Rules(players=2).max_cards_under_last_round == Rules(players=2).deck_size - 5


def test_the_summary_names_the_deck_and_every_option_off_its_default() -> None:
    """What the one-line description says, in order: players, edition and table always, then the
    options that differ from their defaults; the faces word these pairs, so none keeps the defaults."""
    assert Rules().summary() == (("players", 4), ("edition", "classic"), ("table", "brown"))
    for option in RULE_OPTIONS:
        for value in option.choices or (option.minimum, option.maximum):
            if value is None or option.name in ("players", "edition", "table"):
                continue
            rules = Rules.from_dict({option.name: value})
            summary = dict(rules.summary())
            assert list(summary)[:3] == ["players", "edition", "table"]
            assert (option.name in summary) == (value != option.default), (option.name, value)
            if option.name in summary:
                assert summary[option.name] == value
    assert Rules.from_dict({"match_games": 4, "table": "violet"}).describe() == (
        "4 players, classic edition, violet table, match of 4 games"
    )
