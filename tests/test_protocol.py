"""The engine protocol: observations to JSON and back, and the engine side."""

from __future__ import annotations

import io
import json
import random
import re
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coloretto.actions import parse_action
from coloretto.arena.external import EngineFailure, EngineProcess
from coloretto.bots import make_bot
from coloretto.game import Game
from coloretto.protocol import (
    MAX_LINE_BYTES,
    PROTOCOL_VERSION,
    ProtocolError,
    card_legend,
    decode,
    encode,
    new_game_message,
    observation_from_dict,
    observation_message,
    observation_to_dict,
    serve,
)
from coloretto.rules import RULE_OPTION_NAMES, RULE_OPTIONS, Rules
from tests.strategies import rules_strategy

PROTOCOL_DOC = Path(__file__).resolve().parent.parent / "docs" / "research" / "engine-protocol.md"
VARIANTS = [
    Rules(players=2),
    Rules(players=3, table="violet"),
    Rules(players=4, edition="modern", joker_timing="on-take"),
    Rules(players=5, edition="playing-cards", round_starter="next-player"),
    Rules(players=2, starting_colours="chosen"),
]


def round_trips(game: Game, rng: random.Random) -> int:
    """Play the game out at random, checking every seat's observation through
    JSON at every step; the number of observations checked."""
    rules = game.rules
    checked = 0
    while True:
        for seat in range(rules.players):
            obs = game.observation(seat)
            line = encode(observation_message(obs))
            assert line.endswith("\n") and "\n" not in line[:-1]
            message = decode(line)
            assert observation_from_dict(message["observation"], rules) == obs
            checked += 1
        if game.is_over:
            return checked
        actions = game.legal_actions
        game.push(actions[rng.randrange(len(actions))])


@pytest.mark.slow
@settings(max_examples=25, deadline=None)
@given(rules=rules_strategy(), seed=st.integers(0, 2**32))
def test_every_observation_survives_json_whatever_the_rules(rules: Rules, seed: int) -> None:
    game = Game.new(rules, seed=seed)
    assert round_trips(game, random.Random(seed)) == (len(game.move_stack) + 1) * rules.players


@pytest.mark.parametrize("rules", VARIANTS, ids=lambda r: r.describe())
def test_every_observation_survives_json(rules: Rules) -> None:
    checked = round_trips(Game.new(rules, seed=11), random.Random(5))
    assert checked > 50 * rules.players


def test_the_json_uses_card_integers_and_action_notation() -> None:
    rules = Rules(players=3)
    game = Game.new(rules, seed=2)
    game.push(parse_action("d"))
    data = observation_to_dict(game.observation(game.to_move))
    assert isinstance(data["pending_card"], int)
    assert data["legal_actions"] == ["p1", "p2", "p3"]
    assert card_legend(rules)[7:] == ["J", "GJ", "+2", "LR"]
    assert card_legend(Rules(edition="playing-cards"))[0] == "C"
    assert json.loads(json.dumps(data)) == data


def test_starting_colours_chosen_travel_as_s_actions_with_the_picks_left() -> None:
    rules = Rules(players=2, starting_colours="chosen")
    game = Game.new(rules, seed=3, first_player=1)
    data = observation_to_dict(game.observation(1))
    assert data["first_player"] == 1 and data["start_picks_left"] == 4
    assert data["legal_actions"] == ["s:Y", "s:O", "s:R", "s:P", "s:G"]
    game.push(parse_action("s:R"))
    data = observation_to_dict(game.observation(0))
    assert data["start_picks_left"] == 3 and "s:R" not in data["legal_actions"]
    assert observation_from_dict(data, rules) == game.observation(0)


@settings(max_examples=30, deadline=None)
@given(rules=rules_strategy())
def test_the_rules_travel_as_rules_to_dict_writes_them(rules: Rules) -> None:
    message = decode(encode(new_game_message(rules, 0, 1, 1.0)))
    assert list(message["rules"]) == list(RULE_OPTION_NAMES)
    assert message["rules"] == rules.to_dict()
    assert Rules.from_dict(message["rules"]) == rules


def test_the_documented_rule_options_are_the_table_of_options() -> None:
    text = PROTOCOL_DOC.read_text()
    section = text.split("## The rules", 1)[1].split("\n## ", 1)[0]
    rows = [line.split("|")[1:4] for line in section.splitlines() if line.startswith("| `")]
    documented = [(name.strip(" `"), values.strip(), default.strip(" `")) for name, values, default in rows]
    expected = []
    for option in RULE_OPTIONS:
        if option.choices is not None:
            values = ", ".join(f'`"{choice}"`' for choice in option.choices)
        elif option.maximum is not None:
            values = f"{option.minimum} to {option.maximum}"
        else:
            values = f"≥ {option.minimum}" + (", or `null`" if option.optional else "")
        default = "null" if option.default is None else json.dumps(option.default)
        expected.append((option.name, values, default))
    assert documented == expected
    assert re.search(r"`s:R` \| choose a starting colour", text)


def test_bad_lines_are_protocol_errors() -> None:
    for line, words in [
        ("", "empty"),
        ("{not json", "not JSON"),
        ("[1, 2]", "JSON object"),
        ('{"kind": "hello"}', "'type'"),
        (b"\xff\xfe", "UTF-8"),
    ]:
        with pytest.raises(ProtocolError, match=words):
            decode(line)


def test_a_damaged_observation_is_refused_with_the_field_named() -> None:
    rules = Rules(players=4)
    data = observation_to_dict(Game.new(rules, seed=1).observation(0))
    for field, value, words in [
        ("rows", [[]], "rows"),
        ("collections", [[0] * 10] * 3, "collections"),
        ("legal_actions", ["q9"], "legal_actions"),
        ("round", "one", "round"),
        ("last_round", 0, "last_round"),
        ("unseen_composition", [1, 2], "unseen_composition"),
        ("first_player", 4, "first_player must be a seat from 0 to 3"),
        ("start_picks_left", 1, "start_picks_left must be from 0 to 0"),
    ]:
        broken = dict(data, **{field: value})
        with pytest.raises(ProtocolError, match=words):
            observation_from_dict(broken, rules)
    for name in ("scores", "first_player", "start_picks_left"):
        missing = dict(data)
        del missing[name]
        with pytest.raises(ProtocolError, match=name):
            observation_from_dict(missing, rules)
    with pytest.raises(ProtocolError, match="row 5 does not exist"):
        observation_from_dict(dict(data, legal_actions=["t5"]), rules)


def _converse(lines: list[dict | str], bot: str = "greedy") -> list[dict]:
    text = "".join(line if isinstance(line, str) else encode(line) for line in lines)
    out = io.StringIO()
    assert serve(bot, io.StringIO(text), out) == 0
    return [json.loads(line) for line in out.getvalue().splitlines()]


def test_serve_plays_the_bot_it_names_with_the_seed_it_is_given() -> None:
    rules = Rules(players=3, edition="modern")
    game = Game.new(rules, seed=4)
    replies = []
    expected = []
    while not game.is_over:
        seat = game.to_move
        obs = game.observation(seat)
        replies = _converse(
            [
                {"type": "hello", "protocol": PROTOCOL_VERSION},
                new_game_message(rules, seat, 99, 1.0),
                observation_message(obs),
                {"type": "quit"},
                {"type": "observation"},  # after quit: never read
            ]
        )
        action = make_bot("greedy", seed=99).choose(obs)
        expected.append(action)
        assert replies[0] == {
            "type": "hello",
            "protocol": PROTOCOL_VERSION,
            "name": "greedy",
            "author": "coloretto",
        }
        assert replies[1] == {"type": "ready"}
        assert replies[2] == {"type": "action", "action": action.notation(rules.edition)}
        assert len(replies) == 3
        game.push(action)
    assert len(expected) > 30


def test_serve_answers_a_starting_colour_choice_with_an_s_action() -> None:
    rules = Rules(players=3, starting_colours="chosen", edition="playing-cards")
    game = Game.new(rules, seed=6)
    obs = game.observation(game.to_move)  # type: ignore[arg-type]
    replies = _converse([new_game_message(rules, obs.player, 3, 1.0), observation_message(obs)], bot="random")
    assert replies[0] == {"type": "ready"}
    action = game.parse_action(replies[1]["action"])
    assert replies[1]["action"].startswith("s:") and action in obs.legal_actions
    assert action == make_bot("random", seed=3).choose(obs)


def test_serve_answers_nonsense_with_errors_and_goes_on() -> None:
    rules = Rules(players=4)
    game = Game.new(rules, seed=1)
    obs = game.observation(game.to_move)
    idle = game.observation((game.to_move + 1) % 4)
    replies = _converse(
        [
            "garbage\n",
            {"type": "observation", "observation": observation_to_dict(obs)},  # before new_game
            {"type": "teleport"},
            {"type": "new_game", "rules": {"players": 9}, "seat": 0, "seed": 1},
            new_game_message(rules, idle.player, 1, 1.0),
            {"type": "observation", "observation": {"player": 0}},
            observation_message(idle),
            observation_message(obs),  # another seat's
            {"type": "new_game", "rules": rules.to_dict(), "seat": 4, "seed": 1},
            {"type": "new_game", "rules": rules.to_dict(), "seat": True, "seed": 1},
            new_game_message(rules, obs.player, 1, 1.0),
            observation_message(obs),
            {"type": "game_over", "scores": "x", "winners": [0]},
            {"type": "game_over", "scores": [1, 2, 3, 4], "winners": [7]},
            '{"type": "hello", "pad": "' + "x" * MAX_LINE_BYTES + '"}\n',
            {"type": "game_over", "scores": [1, 2, 3, 4], "winners": [1, 3]},  # fine: no answer
            {"type": "hello", "protocol": PROTOCOL_VERSION},
        ]
    )
    kinds = [r["type"] for r in replies]
    assert kinds == [*["error"] * 4, "ready", *["error"] * 5, "ready", "action", *["error"] * 3, "hello"]
    assert "not JSON" in replies[0]["message"]
    assert "before new_game" in replies[1]["message"]
    assert "teleport" in replies[2]["message"]
    assert "2 to 5 players" in replies[3]["message"]
    assert "not this seat's turn" in replies[6]["message"]
    assert replies[7]["message"] == (
        f"the observation is for seat {obs.player}, and this engine plays seat {idle.player}"
    )
    assert "seat must be a whole number from 0 to 3, not 4" in replies[8]["message"]
    assert "seat must be a whole number from 0 to 3, not True" in replies[9]["message"]
    assert "scores, a whole number for each of 4 seats, not 'x'" in replies[12]["message"]
    assert "winners, a list of seats from 0 to 3, not [7]" in replies[13]["message"]
    assert f"longer than {MAX_LINE_BYTES} bytes" in replies[14]["message"]


def test_serve_refuses_a_bot_that_would_think_past_the_games_move_time() -> None:
    rules = Rules(players=3)
    game = Game.new(rules, seed=2)
    obs = game.observation(game.to_move)  # type: ignore[arg-type]
    replies = _converse(
        [
            new_game_message(rules, obs.player, 1, 0.5),
            observation_message(obs),  # no game was started: refused too
            {"type": "new_game", "rules": rules.to_dict(), "seat": 0, "seed": 1, "move_time": "soon"},
            new_game_message(rules, obs.player, 1, 5.0),
        ],
        bot="mcts:2s",
    )
    assert [r["type"] for r in replies] == ["error", "error", "error", "ready"]
    assert "thinks for 2 s a move, over this game's move_time of 0.5 s" in replies[0]["message"]
    assert "before new_game" in replies[1]["message"]
    assert "move_time must be a number of seconds" in replies[2]["message"]
    # a bot whose name gives iterations, not time, is held to the time by the caller
    assert _converse([new_game_message(rules, 0, 1, 0.5)], bot="mcts:200") == [{"type": "ready"}]


def test_the_engine_command_speaks_the_protocol_in_a_subprocess() -> None:
    engine = EngineProcess(f"{sys.executable} -m coloretto engine greedy", startup_time=30)
    try:
        assert engine.name == "greedy"
        rules = Rules(players=2)
        game = Game.new(rules, seed=8)
        engine.request(new_game_message(rules, 0, 5, 1.0), 10, expect="ready")
        bot, other = make_bot("greedy", seed=5), make_bot("random", seed=6)
        while not game.is_over:
            obs = game.observation(game.to_move)
            if obs.player != 0:  # the engine plays seat 0 only, as new_game said
                game.push(other.choose(obs))
                continue
            reply = engine.request(observation_message(obs), 10, expect="action")
            action = parse_action(reply["action"])
            assert action == bot.choose(obs)
            game.push(action)
    finally:
        engine.close()
    assert not engine.alive()


def test_a_command_that_does_not_exist_fails_cleanly() -> None:
    with pytest.raises(EngineFailure, match="cannot start"):
        EngineProcess("/no/such/program --flag", startup_time=5)
    with pytest.raises(EngineFailure, match="empty"):
        EngineProcess("   ", startup_time=5)
