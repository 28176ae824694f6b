"""The research environments pass their frameworks' own checks."""

from __future__ import annotations

import random
import subprocess
import sys
from typing import Any

import gymnasium
import numpy as np
import pyspiel
import pytest
from gymnasium.utils.env_checker import check_env
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from open_spiel.python.tests import games_sim_test
from pettingzoo.test import api_test, render_test, seed_test

from coloretto import DRAW, Game, Rules, place
from coloretto.actions import CHOOSE_START, NUM_ACTIONS, ActionKind, action_from_id, choose_start
from coloretto.bots import make_bot
from coloretto.envs.encoding import (
    LARGEST_REWARD,
    LAYOUT,
    MOST_SEAT_ACTIONS,
    OBSERVATION_SIZE,
    OFFSETS,
    encode_observation,
    final_rewards,
    largest_reward,
    least_max_steps,
    most_seat_actions,
)
from coloretto.envs.gymnasium import ColorettoEnv
from coloretto.envs.openspiel import SHORT_NAME, params_from_rules, rules_from_params
from coloretto.envs.pettingzoo import env as pettingzoo_env
from coloretto.envs.pettingzoo import raw_env as pettingzoo_raw_env
from coloretto.rules import RULE_OPTION_NAMES, RULE_OPTIONS
from tests.strategies import rules_strategy


def one_option_variants() -> list[dict[str, object]]:
    """The default rules, then each choice of each option that is not its
    default, from the table of options: an option added there is checked
    here. (A match is refused by the environments, see below; a number is
    tried at its smallest, the other numbers are drawn by rules_strategy.)"""
    variants: list[dict[str, object]] = [{}]
    for option in RULE_OPTIONS:
        if option.name in ("players", "match_games"):
            continue
        if option.choices is not None:
            variants += [{option.name: choice} for choice in option.choices if choice != option.default]
        else:
            variants.append({option.name: option.minimum})
    return variants


#: every choice alone, and combinations that meet in the rules (golden joker
#: named on take, most-cards plus colours on the violet table, a short deck)
VARIANTS: list[dict[str, object]] = [
    *one_option_variants(),
    {"joker_timing": "on-take", "edition": "modern"},
    {"plus_colours": "most-cards", "table": "violet"},
    {"tie_break": "fewer-minus", "cards_under_last_round": 2},
    {"starting_colours": "chosen", "edition": "modern", "joker_timing": "on-take"},
]
PLAYERS = [2, 3, 4, 5]
#: an episode is one game (the environments refuse a match)
ONE_GAME_RULES = rules_strategy(match_games=1)
FRAMEWORK_SETTINGS = settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True
)


def variant_id(variant: dict[str, object]) -> str:
    return ",".join(f"{k}={v}" for k, v in variant.items()) or "default"


# ---------------------------------------------------------------- encoding


def test_layout_adds_up() -> None:
    assert OBSERVATION_SIZE == sum(size for _, size in LAYOUT) == 183
    assert OFFSETS["seat_present"] == 0
    # the blocks of the starting-colours variant come after the older ones, which kept their offsets
    assert OFFSETS["round"] == 176
    assert OFFSETS["start_picks_left"] == 177 and OFFSETS["first_player"] == 178


def test_the_action_space_has_the_starting_colour_choices() -> None:
    assert NUM_ACTIONS == 26
    assert [action.id for action in CHOOSE_START] == list(range(19, 26))
    assert all(action_from_id(19 + colour) is choose_start(colour) for colour in range(7))


def test_encoding_shows_the_choosing_of_starting_colours() -> None:
    game = Game.new(Rules(players=2, starting_colours="chosen"), seed=3, first_player=1)
    picks = OFFSETS["start_picks_left"]
    first = OFFSETS["first_player"]
    for left in (4, 3, 2, 1):
        seat = game.to_move
        assert seat is not None
        vector = encode_observation(game.observation(seat))
        assert vector[picks] == left
        # seats are relative: the first player is block 0 for itself, block 1 for the other seat
        assert list(vector[first : first + 5]) == [1 if seat == 1 else 0, 1 if seat == 0 else 0, 0, 0, 0]
        assert all(action.kind is ActionKind.CHOOSE_START for action in game.legal_actions)
        game.push(game.legal_actions[-1])
    vector = encode_observation(game.observation(0))
    assert vector[picks] == 0
    assert vector[OFFSETS["collections"] : OFFSETS["collections"] + 10].sum() == 2  # seat 0 chose two
    dealt = encode_observation(Game.new(Rules(players=3), seed=1).observation(0))
    assert dealt[picks] == 0 and dealt[first : first + 5].sum() == 1


def test_encoding_is_relative_to_the_observer() -> None:
    game = Game.new(Rules(players=3), seed=4)
    game.push(DRAW)
    card = game.pending_card
    assert card is not None
    game.push(place(1))
    for seat in range(3):
        vector = encode_observation(game.observation(seat))
        base = OFFSETS["collections"]
        # The observer's own collection comes first.
        assert list(vector[base : base + 10]) == list(game.collection(seat))
        row2 = OFFSETS["row_cards"] + 10
        assert vector[row2 + card] == 1
        to_move = OFFSETS["to_move"]
        assert vector[to_move + (game.to_move - seat) % 3] == 1  # type: ignore[operator]
    vector = encode_observation(game.observation(0))
    assert list(vector[OFFSETS["seat_present"] : OFFSETS["seat_present"] + 5]) == [1, 1, 1, 0, 0]
    assert vector[OFFSETS["colours_in_play"] + 5] == 1 and vector[OFFSETS["colours_in_play"] + 6] == 0


def test_final_rewards() -> None:
    game = Game.new(Rules(players=3), seed=2)
    rng = random.Random(2)
    while not game.is_over:
        game.push(rng.choice(game.legal_actions))
    totals = [s.total for s in game.scores()]
    margin = final_rewards(game, "margin")
    assert margin[0] == totals[0] - max(totals[1:])
    win = final_rewards(game, "win")
    assert abs(sum(win)) < 1e-9
    assert all(win[s] > 0 for s in game.winners())


# -------------------------------------------------------------- PettingZoo


@pytest.mark.parametrize("players", PLAYERS)
@pytest.mark.parametrize("variant", VARIANTS, ids=variant_id)
def test_pettingzoo_api_and_seed(players: int, variant: dict[str, object]) -> None:
    api_test(pettingzoo_env(players=players, **variant), num_cycles=400, verbose_progress=False)
    seed_test(lambda: pettingzoo_env(players=players, **variant), num_cycles=400)


@pytest.mark.slow
@FRAMEWORK_SETTINGS
@given(rules=ONE_GAME_RULES)
def test_pettingzoo_api_and_seed_for_rules_drawn_from_every_option(rules: Rules) -> None:
    options = rules.to_dict()
    api_test(pettingzoo_env(**options), num_cycles=400, verbose_progress=False)
    seed_test(lambda: pettingzoo_env(**options), num_cycles=400)


def test_pettingzoo_plays_whole_games_with_rewards_at_the_end() -> None:
    environment = pettingzoo_env(players=4, reward="win", render_mode="ansi")
    environment.reset(seed=11)
    rewards = dict.fromkeys(environment.possible_agents, 0.0)
    steps = 0
    for agent in environment.agent_iter():
        observation, reward, termination, truncation, _ = environment.last()
        rewards[agent] += reward
        if termination or truncation:
            environment.step(None)
            continue
        assert observation["observation"].shape == (OBSERVATION_SIZE,)
        legal = np.flatnonzero(observation["action_mask"])
        environment.step(int(legal[steps % len(legal)]))
        steps += 1
    assert abs(sum(rewards.values())) < 1e-9
    assert max(rewards.values()) > 0
    assert "row 1" in environment.unwrapped.render()


def test_pettingzoo_refuses_bad_options() -> None:
    with pytest.raises(ValueError, match="reward must be"):
        pettingzoo_env(reward="gold")
    with pytest.raises(ValueError, match="2 to 5 players"):
        pettingzoo_env(players=7)
    with pytest.raises(ValueError, match="starting_colours must be one of dealt, chosen"):
        pettingzoo_env(starting_colours="auctioned")
    with pytest.raises(ValueError, match="one game an episode, so match_games must be 1, not 4"):
        pettingzoo_env(match_games=4)


# ---------------------------------------------------------------- OpenSpiel


@pytest.mark.parametrize("players", PLAYERS)
@pytest.mark.parametrize("variant", VARIANTS, ids=variant_id)
@pytest.mark.slow
def test_openspiel_random_sim_and_games_sim_checks(players: int, variant: dict[str, object]) -> None:
    params = {"players": players, **variant}
    game = pyspiel.load_game("python_coloretto", params)
    pyspiel.random_sim_test(game, num_sims=3, serialize=True, verbose=False)
    games_sim_test.GamesSimTest("test_breakthrough").sim_game(game)


@pytest.mark.slow
@FRAMEWORK_SETTINGS
@given(rules=ONE_GAME_RULES)
def test_openspiel_checks_for_rules_drawn_from_every_option(rules: Rules) -> None:
    game = pyspiel.load_game(SHORT_NAME, params_from_rules(rules))
    assert game.rules == rules  # type: ignore[attr-defined]
    pyspiel.random_sim_test(game, num_sims=1, serialize=True, verbose=False)
    games_sim_test.GamesSimTest("test_breakthrough").sim_game(game)


def test_openspiel_parameters_are_the_rule_options() -> None:
    game = pyspiel.load_game(SHORT_NAME)
    parameters = game.get_parameters()
    assert set(parameters) == {*RULE_OPTION_NAMES, "utility"}
    for option in RULE_OPTIONS:
        expected = -1 if option.default is None else option.default
        assert parameters[option.name] == expected, option.name
    assert rules_from_params(parameters) == Rules()
    rules = Rules(players=3, starting_colours="chosen", cards_under_last_round=5, tie_break="fewer-minus")
    assert rules_from_params(params_from_rules(rules)) == rules
    assert pyspiel.load_game(SHORT_NAME, params_from_rules(rules)).rules == rules  # type: ignore[attr-defined]


def test_openspiel_refuses_a_match_and_bad_options_with_the_option_named() -> None:
    with pytest.raises(ValueError, match=r"python_coloretto plays one game an episode.*not 3"):
        pyspiel.load_game(SHORT_NAME, {"match_games": 3})
    with pytest.raises(ValueError, match="cards_under_last_round must be a whole number ≥ 0, not -2"):
        pyspiel.load_game(SHORT_NAME, {"cards_under_last_round": -2})
    with pytest.raises(ValueError, match="starting_colours must be one of dealt, chosen"):
        pyspiel.load_game(SHORT_NAME, {"starting_colours": "auctioned"})


def test_openspiel_starting_colours_chosen_are_player_actions() -> None:
    game = pyspiel.load_game(SHORT_NAME, {"players": 2, "starting_colours": "chosen"})
    state = game.new_initial_state()
    # no chance node deals a starting colour: the first one draws the first player
    assert state.is_chance_node()
    assert state.chance_outcomes() == [(0, 0.5), (1, 0.5)]
    state.apply_action(1)
    order = []
    while state.legal_actions() and min(state.legal_actions()) >= 19:
        assert not state.is_chance_node()
        order.append(state.current_player())
        actions = state.legal_actions()
        assert actions == sorted(19 + colour for colour in range(5) if 19 + colour in actions)
        assert state.action_to_string(state.current_player(), actions[0]).startswith("s:")
        observation = np.array(state.observation_tensor(state.current_player()))
        assert observation[OFFSETS["start_picks_left"]] == 4 - len(order) + 1
        state.apply_action(actions[0])
    assert order == [1, 0, 1, 0]  # round robin from the first player, two colours each
    assert state.current_player() == 1 and state.legal_actions() == [DRAW.id]
    assert str(game.deserialize_state(state.serialize())) == str(state)


def test_openspiel_chance_nodes_have_true_probabilities() -> None:
    game = pyspiel.load_game("python_coloretto", {"players": 3})
    state = game.new_initial_state()
    outcomes = state.chance_outcomes()
    assert [a for a, _ in outcomes] == list(range(6))  # a starting colour among six
    while state.is_chance_node():
        state.apply_action(state.chance_outcomes()[0][0])
    player = state.current_player()
    assert player >= 0
    state.apply_action(DRAW.id)
    assert state.is_chance_node()
    outcomes = dict(state.chance_outcomes())
    assert abs(sum(outcomes.values()) - 1) < 1e-12
    # 54 colour cards less 3 starting cards, 3 jokers, 10 "+2": red is 8 of 64.
    assert outcomes[2] == pytest.approx(8 / 64)
    state.apply_action(2)
    assert state.current_player() == player
    assert state.legal_actions() == [1, 2, 3]  # place in row 1, 2 or 3
    assert "drawn: R" in state.observation_string(player)  # the outcome is the card turned over
    state.apply_action(1)
    assert "row 1: [R . .]" in str(state)
    state.apply_action(DRAW.id)
    assert state.is_chance_node()
    assert dict(state.chance_outcomes())[2] == pytest.approx(7 / 63)  # that red is no longer unseen


def test_openspiel_tensors_strings_and_serialisation() -> None:
    game = pyspiel.load_game("python_coloretto", {"players": 4, "utility": "margin"})
    state = game.new_initial_state()
    rng = random.Random(3)
    while not state.is_terminal():
        if state.is_chance_node():
            actions, probs = zip(*state.chance_outcomes(), strict=True)
            state.apply_action(rng.choices(actions, probs)[0])
        else:
            player = state.current_player()
            assert len(state.observation_tensor(player)) == OBSERVATION_SIZE + 1
            assert state.information_state_tensor(player) == state.observation_tensor(player)
            assert f"seat {player}" in state.observation_string(player)
            assert state.information_state_string(player).startswith(f"seat {player}:")
            state.apply_action(rng.choice(state.legal_actions()))
    returns = state.returns()
    assert max(returns) >= 0 and min(returns) < 0
    again = game.deserialize_state(state.serialize())
    assert str(again) == str(state)
    assert again.returns() == returns
    with pytest.raises(Exception, match=r"(?i)unknown parameter .speed."):
        pyspiel.load_game("python_coloretto", {"players": 3, "speed": 2})


def test_openspiel_illegal_action_raises_and_changes_nothing() -> None:
    # OpenSpiel's convention, unlike the penalty of the other environments
    state = pyspiel.load_game(SHORT_NAME, {"players": 3}).new_initial_state()
    while state.is_chance_node():
        state.apply_action(state.chance_outcomes()[0][0])
    for action, reason in ((6, "row 1 is empty"), (1, "no drawn card to place"), (26, "not a whole number")):
        history, text = state.history(), str(state)
        with pytest.raises(ValueError, match=reason):
            state.apply_action(action)
        assert state.history() == history and str(state) == text
    state.apply_action(DRAW.id)
    with pytest.raises(ValueError, match="99 is not a card that a draw can turn over"):
        state.apply_action(99)  # a chance outcome that is none
    assert state.is_chance_node()


@pytest.mark.parametrize("starting_colours", ["dealt", "chosen"])
def test_openspiel_deal_outcomes_not_offered_are_refused_and_change_nothing(starting_colours: str) -> None:
    # every chance node of the deal (each starting colour, the first player) checks its outcome
    game = pyspiel.load_game(SHORT_NAME, {"players": 3, "starting_colours": starting_colours})
    state = game.new_initial_state()
    kinds = set()
    while state.is_chance_node():
        offered = [outcome for outcome, _ in state.chance_outcomes()]
        kind = "starting colour" if "start" in state.action_to_string(-1, offered[0]) else "first player"
        kinds.add(kind)
        for outcome in (999, -2, *(c for c in range(8) if c not in offered)):  # -1 is OpenSpiel's own error
            history, text = state.history(), str(state)
            with pytest.raises(ValueError, match=rf"^{outcome} is not a {kind} that chance can give now"):
                state.apply_action(outcome)
            assert state.history() == history and str(state) == text
        state.apply_action(offered[0])
    assert kinds == ({"starting colour", "first player"} if starting_colours == "dealt" else {"first player"})
    assert not state.is_terminal() and state.legal_actions()  # the deal went on as if nothing was tried


def test_openspiel_a_starting_colour_cannot_be_dealt_twice() -> None:
    state = pyspiel.load_game(SHORT_NAME, {"players": 3}).new_initial_state()
    state.apply_action(0)
    with pytest.raises(ValueError, match=r"^0 is not a starting colour .* it gives 1, 2, 3, 4, 5$"):
        state.apply_action(0)
    assert state.history() == [0]


@pytest.mark.slow
def test_openspiel_mcts_bot_plays_legal_moves_and_is_reproducible() -> None:
    def play(seed: int) -> list[str]:
        game = Game.new(Rules(players=3), seed=seed)
        bots = [make_bot("openspiel-mcts:30", seed=seed), make_bot("greedy", 1), make_bot("random", 2)]
        while not game.is_over:
            seat = game.to_move
            assert seat is not None
            action = bots[seat].choose(game.observation(seat))
            assert action in game.legal_actions
            game.push(action)
        return [str(a) for a in game.move_stack]

    assert play(5) == play(5)


def test_openspiel_mcts_budget_names() -> None:
    from coloretto.bots.base import BotSpecError

    assert make_bot("openspiel-mcts:0.05s", seed=1).seconds == pytest.approx(0.05)  # type: ignore[attr-defined]
    assert make_bot("openspiel-mcts:200", seed=1).simulations == 200  # type: ignore[attr-defined]
    for bad in ("openspiel-mcts:fast", "openspiel-mcts:0", "openspiel-mcts:-1s"):
        with pytest.raises(BotSpecError, match="openspiel-mcts"):
            make_bot(bad, seed=1)


# ---------------------------------------------------------------- Gymnasium


@pytest.mark.parametrize("players", PLAYERS)
def test_gymnasium_check_env(players: int) -> None:
    environment = ColorettoEnv(players=players, opponents=["random"] * (players - 1), seat=None)
    check_env(environment, skip_render_check=True)


@pytest.mark.parametrize("variant", VARIANTS[1:], ids=variant_id)
def test_gymnasium_check_env_for_every_choice(variant: dict[str, object]) -> None:
    for players in (2, 5):
        environment = ColorettoEnv(
            players=players, opponents=["random"] * (players - 1), seat=None, **variant
        )
        check_env(environment, skip_render_check=True)


@pytest.mark.slow
@FRAMEWORK_SETTINGS
@given(rules=ONE_GAME_RULES)
def test_gymnasium_check_env_for_rules_drawn_from_every_option(rules: Rules) -> None:
    options = rules.to_dict()
    players = options.pop("players")
    environment = ColorettoEnv(players=players, opponents=["random"] * (players - 1), seat=None, **options)
    check_env(environment, skip_render_check=True)


def test_gymnasium_learner_chooses_its_starting_colour() -> None:
    environment = ColorettoEnv(players=3, opponents=["random", "random"], seat=0, starting_colours="chosen")
    _, info = environment.reset(seed=4)
    game = environment.game
    assert game is not None
    legal = np.flatnonzero(info["action_mask"])
    if game.start_picks_left:  # the learner's turn to choose: only colour choices are legal
        assert set(legal) <= set(range(19, 25)) and len(legal) == 6 - (3 - game.start_picks_left)
        environment.step(int(legal[0]))
    assert game.start_picks_left == 0
    assert sum(game.collection(0)[:6]) == 1


def test_gymnasium_episode_against_named_bots() -> None:
    environment = ColorettoEnv(players=4, opponents=["greedy", "random", "greedy"], seat=2, table="violet")
    observation, info = environment.reset(seed=5)
    assert observation.shape == (OBSERVATION_SIZE,)
    assert info["seat"] == 2
    illegal = next(a for a in range(NUM_ACTIONS) if not info["action_mask"][a])
    again, reward, terminated, truncated, info2 = environment.step(illegal)
    assert reward == -1.0 and not terminated and info2["illegal_action"]
    assert np.array_equal(again, observation)
    total = 0.0
    terminated = truncated = False
    while not (terminated or truncated):
        legal = np.flatnonzero(info["action_mask"])
        observation, reward, terminated, truncated, info = environment.step(int(legal[0]))
        total += reward
    assert terminated
    totals = info["totals"]
    assert total == totals[2] - max(t for s, t in enumerate(totals) if s != 2)
    assert action_from_id(0) is DRAW


def test_gymnasium_is_reproducible_from_the_seed() -> None:
    def trajectory() -> list[float]:
        environment = ColorettoEnv(players=3, opponents=["greedy", "random"])
        _, info = environment.reset(seed=9)
        rewards = []
        for step in range(200):
            legal = np.flatnonzero(info["action_mask"])
            _, reward, terminated, truncated, info = environment.step(int(legal[step % len(legal)]))
            rewards.append(reward)
            if terminated or truncated:
                break
        return rewards + info.get("totals", [])

    assert trajectory() == trajectory()


def test_gymnasium_refuses_bad_options() -> None:
    with pytest.raises(ValueError, match="need 3 opponents"):
        ColorettoEnv(players=4, opponents=["greedy"])
    with pytest.raises(ValueError, match="unknown bot"):
        ColorettoEnv(players=2, opponents=["grandmaster"])
    with pytest.raises(ValueError, match="seat must be"):
        ColorettoEnv(players=2, opponents=["random"], seat=4)
    with pytest.raises(ValueError, match="ColorettoEnv plays one game an episode"):
        ColorettoEnv(players=2, opponents=["random"], match_games=2)


#: what step() must refuse: anything but an integer id (floats and text that int() would take included)
NOT_ACTIONS: list[Any] = [
    0.9,
    0.0,
    np.float32(0),
    np.float64(0.99),
    "0",
    " 0 ",
    "d",
    None,
    True,
    np.bool_(False),
    np.array([0]),
    np.array(0.0),
    [0],
]


@pytest.mark.parametrize("action", NOT_ACTIONS, ids=repr)
def test_gymnasium_step_refuses_what_is_not_an_integer_action_id(action: Any) -> None:
    environment = ColorettoEnv(players=3, opponents=["random", "random"])
    observation, _ = environment.reset(seed=1)
    assert environment.game is not None
    moves = len(environment.game.move_stack)
    with pytest.raises(ValueError, match=r"^an action must be an integer action id from 0 to 25 .*, not \S"):
        environment.step(action)
    assert len(environment.game.move_stack) == moves and environment._steps == 0  # nothing played or counted
    assert np.array_equal(environment._observe(), observation)


def test_gymnasium_step_takes_python_and_numpy_integers() -> None:
    environment = ColorettoEnv(players=3, opponents=["random", "random"])
    _, info = environment.reset(seed=1)
    sampled = environment.action_space.sample(info["action_mask"])
    assert isinstance(sampled, np.integer)  # what gymnasium's Discrete gives
    for action in (sampled, DRAW.id, np.int8(DRAW.id), np.uint64(DRAW.id), np.array(DRAW.id)):
        environment.reset(seed=1)
        _, reward, *_ = environment.step(action)
        assert reward == 0.0 and environment.game is not None and environment.game.move_stack[:1] == [DRAW]


def test_gymnasium_refuses_a_bad_seat_or_a_bare_string_of_opponents() -> None:
    for seat in (1.5, "1", True, -1, 3):
        with pytest.raises(
            ValueError, match=rf"^seat must be a whole number from 0 to 2 or None, not {seat!r}"
        ):
            ColorettoEnv(players=3, opponents=["random", "random"], seat=seat)
    assert (
        ColorettoEnv(players=3, opponents=["random", "random"], seat=np.int64(2)).reset(seed=1)[1]["seat"]
        == 2
    )
    with pytest.raises(
        ValueError, match=r"^opponents must be a list of 2 bot names.*not the string 'greedy'"
    ):
        ColorettoEnv(players=3, opponents="greedy")


#: reset seeds every environment refuses: floats, text, bools, negatives (random.Random(-5) deals as 5)
NOT_SEEDS: list[Any] = [1.5, 2.0, np.float64(2.0), "abc", "3", True, np.bool_(True), -5, np.int64(-1), [3]]


@pytest.mark.parametrize("seed", NOT_SEEDS, ids=repr)
def test_gymnasium_and_pettingzoo_refuse_a_seed_that_is_not_a_whole_number_from_0(seed: Any) -> None:
    message = r"^a seed must be None or a whole number ≥ 0\b.*, not \S"
    with pytest.raises(ValueError, match=message):
        ColorettoEnv(players=3, opponents=["random", "random"]).reset(seed=seed)
    with pytest.raises(ValueError, match=message):
        pettingzoo_raw_env(players=3).reset(seed=seed)
    with pytest.raises(ValueError, match=message):
        pettingzoo_env(players=3).reset(seed=seed)


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**63 - 1), kind=st.sampled_from([np.int64, np.uint64, np.int32, int]))
def test_gymnasium_and_pettingzoo_take_numpy_integer_seeds_as_their_value(seed: int, kind: Any) -> None:
    assume(seed < 2**31 or kind is not np.int32)
    gym = ColorettoEnv(players=3, opponents=["random", "random"])
    np.testing.assert_array_equal(gym.reset(seed=kind(seed))[0], gym.reset(seed=seed)[0])
    raw = pettingzoo_raw_env(players=3)
    raw.reset(seed=kind(seed))
    first = raw.game
    raw.reset(seed=seed)
    assert first is not None and raw.game is not None and first.setup == raw.game.setup


# ---------------------------------------------------------- illegal actions
#
# One rule in every environment: an illegal action changes nothing, costs the
# acting seat illegal_penalty and the seat acts again; a seat that has taken
# max_steps actions (illegal ones counted) truncates the episode, and
# max_steps is large enough that truncating a lost game never pays.


def test_the_illegal_action_bound_is_that_of_the_largest_game() -> None:
    # four players, classic or modern: 77 cards, 72 to draw, 2*72 + 73 rounds + 3 jokers + 1 start
    assert MOST_SEAT_ACTIONS == most_seat_actions(Rules(players=4)) == 221
    assert LARGEST_REWARD == largest_reward(Rules(players=4)) == 3 * 21 + 2 * 10 + 4 * 21 == 167
    assert least_max_steps() == least_max_steps(1.0) == 221 + 167 + 1 == 389
    assert least_max_steps(0.5) == 221 + 334 + 1
    assert least_max_steps(1000.0) == MOST_SEAT_ACTIONS + 1
    for penalty in (1.0, 0.5, 0.3, 7.0, 1e-3):
        # a seat that truncates has played least_max_steps - MOST_SEAT_ACTIONS illegal actions at least
        assert (least_max_steps(penalty) - MOST_SEAT_ACTIONS) * penalty > LARGEST_REWARD


def _drawing_policy(game: Game, rng: random.Random) -> int:
    """Draws whenever it may, else a random legal action: the longest games a seat can make."""
    legal = game.legal_actions
    return DRAW.id if DRAW in legal else rng.choice(legal).id


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)
@given(rules=ONE_GAME_RULES, seed=st.integers(0, 2**32), drawing=st.booleans())
def test_no_game_exceeds_the_illegal_action_bound(rules: Rules, seed: int, drawing: bool) -> None:
    game = Game.new(rules, seed=seed)
    rng = random.Random(seed)
    actions = [0] * rules.players
    while not game.is_over:
        seat = game.to_move
        assert seat is not None
        action = _drawing_policy(game, rng) if drawing else rng.choice(game.legal_actions).id
        game.push(action_from_id(action))
        actions[seat] += 1
    assert max(actions) <= most_seat_actions(rules) <= MOST_SEAT_ACTIONS
    for kind in ("margin", "win"):
        assert max(abs(r) for r in final_rewards(game, kind)) <= largest_reward(rules) <= LARGEST_REWARD


def play_pettingzoo(
    players: int,
    seed: int,
    cheat: int | None = None,
    illegal_before: dict[int, int] | None = None,
    stall_after: int | None = None,
    **options: Any,
) -> tuple[dict[int, float], bool, list[int]]:
    """One game in which every seat plays legal actions from its own seeded
    random: before its turn t, seat ``cheat`` plays ``illegal_before[t]``
    illegal actions, and after ``stall_after`` turns nothing but illegal ones.
    Returns each seat's return, whether the episode was truncated, and each
    seat's legal turns."""
    environment = pettingzoo_env(players=players, **options)
    environment.reset(seed=seed)
    rngs = [random.Random(seed * 10 + s) for s in range(players)]
    returns = dict.fromkeys(range(players), 0.0)
    illegal_left = dict(illegal_before or {})
    turns = [0] * players
    truncated = False
    for agent in environment.agent_iter():
        seat = int(agent.removeprefix("player_"))
        observation, reward, termination, truncation, _ = environment.last()
        returns[seat] += reward
        if termination or truncation:
            truncated |= truncation
            environment.step(None)
            continue
        mask = observation["action_mask"]
        turn = turns[seat]
        if seat == cheat and (
            illegal_left.get(turn, 0) > 0 or (stall_after is not None and turn >= stall_after)
        ):
            illegal_left[turn] = illegal_left.get(turn, 0) - 1
            environment.step(int(np.flatnonzero(mask == 0)[seat % 3]))
            continue
        turns[seat] += 1
        environment.step(int(rngs[seat].choice(np.flatnonzero(mask))))
    return returns, truncated, turns


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)
@given(
    players=st.sampled_from(PLAYERS),
    seed=st.integers(0, 2**20),
    reward=st.sampled_from(["margin", "win"]),
    illegal_before=st.dictionaries(st.integers(0, 20), st.integers(1, 5), max_size=4),
)
def test_pettingzoo_illegal_actions_only_cost_the_seat_that_plays_them(
    players: int, seed: int, reward: str, illegal_before: dict[int, int]
) -> None:
    honest, truncated, turns = play_pettingzoo(players, seed, reward=reward)
    assert not truncated
    loser = min(honest, key=lambda seat: honest[seat])
    assume(honest[loser] < 0)  # a win shared by every seat leaves nobody losing
    cheated, truncated, turns_again = play_pettingzoo(
        players, seed, cheat=loser, illegal_before=illegal_before, reward=reward
    )
    assert not truncated and turns_again == turns
    played = sum(count for turn, count in illegal_before.items() if turn < turns[loser])
    # the same game: everyone else's return unchanged, the cheat's less one penalty per illegal action
    assert cheated[loser] == pytest.approx(honest[loser] - played)
    assert all(cheated[seat] == honest[seat] for seat in honest if seat != loser)


@pytest.mark.parametrize("penalty", [1.0, 0.5])
@pytest.mark.parametrize("players", PLAYERS)
def test_pettingzoo_a_losing_seat_cannot_escape_by_stalling(players: int, penalty: float) -> None:
    honest, _, turns = play_pettingzoo(players, seed=players, illegal_penalty=penalty)
    loser = min(honest, key=lambda seat: honest[seat])
    assert honest[loser] < 0
    for stall_after in (0, turns[loser] // 2, turns[loser] - 1):
        stalled, truncated, legal_turns = play_pettingzoo(
            players, seed=players, cheat=loser, stall_after=stall_after, illegal_penalty=penalty
        )
        assert truncated and legal_turns[loser] == stall_after
        # it truncated at its max_steps-th action: every other one of them illegal
        illegal = least_max_steps(penalty) - stall_after
        assert stalled[loser] == pytest.approx(-illegal * penalty)
        assert stalled[loser] < honest[loser]
        assert all(stalled[seat] == 0 for seat in stalled if seat != loser)  # no final reward at truncation


def test_pettingzoo_illegal_action_changes_nothing_and_the_seat_acts_again() -> None:
    environment = pettingzoo_env(players=3, illegal_penalty=2.5)
    environment.reset(seed=4)
    agent = environment.agent_selection
    before, *_ = environment.last()
    game = environment.unwrapped.game
    moves = len(game.move_stack)
    environment.step(6)  # take row 1: the rows are empty
    assert environment.agent_selection == agent
    after, reward, termination, truncation, info = environment.last()
    assert reward == -2.5 and not termination and not truncation and info == {"illegal_action": True}
    assert np.array_equal(after["observation"], before["observation"])
    assert len(game.move_stack) == moves
    environment.step(DRAW.id)
    assert environment.unwrapped.infos[agent] == {}
    assert environment.unwrapped.rewards[agent] == 0


def test_pettingzoo_illegal_raise() -> None:
    environment = pettingzoo_env(players=2, illegal="raise")
    environment.reset(seed=1)
    agent = environment.agent_selection
    with pytest.raises(
        ValueError,
        match=rf"illegal action 6 for {agent}: t1: row 1 is empty.*; legal actions: 0 \(d\)$",
    ):
        environment.step(6)
    assert environment.agent_selection == agent and len(environment.unwrapped.game.move_stack) == 0
    environment.step(DRAW.id)
    with pytest.raises(
        ValueError, match=r"illegal action 0 for .*; legal actions: 1 \(p1\), 2 \(p2\), 3 \(p3\)"
    ):
        environment.step(DRAW.id)
    # an id outside Discrete(26) is no action at all, whatever the rule (the wrapper asserts it first)
    raw = pettingzoo_raw_env(players=2)
    raw.reset(seed=1)
    with pytest.raises(ValueError, match="action id 26 is not a whole number from 0 to 25"):
        raw.step(26)
    with pytest.raises(ValueError, match=r"player_\d is to act: step\(None\) is only for an agent whose"):
        raw.step(None)


@pytest.mark.parametrize("action", NOT_ACTIONS, ids=repr)
def test_pettingzoo_step_refuses_what_is_not_an_integer_action_id(action: Any) -> None:
    raw = pettingzoo_raw_env(players=3)
    raw.reset(seed=1)
    assert raw.game is not None
    agent, observation = raw.agent_selection, raw.observe(raw.agent_selection)
    message = r"^an action must be an integer action id from 0 to 25 .*, not \S"
    if action is None:
        message = rf"^{agent} is to act: step\(None\) is only for an agent whose episode is over$"
    with pytest.raises(ValueError, match=message):
        raw.step(action)
    assert raw.game.move_stack == [] and raw.agent_selection == agent and raw._steps == [0, 0, 0]
    assert raw.rewards[agent] == 0 and raw.infos[agent] == {}
    assert np.array_equal(raw.observe(agent)["observation"], observation["observation"])


def test_pettingzoo_step_takes_numpy_integers_and_the_wrapper_refuses_a_bool() -> None:
    for action in (np.int64(DRAW.id), np.uint8(DRAW.id), np.array(DRAW.id)):
        raw = pettingzoo_raw_env(players=3)
        raw.reset(seed=1)
        raw.step(action)
        assert raw.game is not None and raw.game.move_stack == [DRAW]
    wrapped = pettingzoo_env(players=3)
    wrapped.reset(seed=1)
    with pytest.raises(ValueError, match="not bool True"):
        wrapped.step(True)  # Discrete(26) contains True, as an int: a bool is still no action id
    assert wrapped.unwrapped.game.move_stack == []


def test_pettingzoo_step_before_reset_and_after_the_end_is_a_clear_error() -> None:
    raw = pettingzoo_raw_env(players=2)
    with pytest.raises(RuntimeError, match=r"^call reset\(\) before step\(\)$"):
        raw.step(DRAW.id)
    raw.reset(seed=2)
    for _agent in raw.agent_iter():  # PettingZoo's loop: step(None) removes each agent that is done
        observation, _, termination, truncation, _ = raw.last()
        if termination or truncation:
            with pytest.raises(ValueError, match="when an agent is dead, the only valid action is None"):
                raw.step(DRAW.id)
            raw.step(None)
        else:
            raw.step(int(np.flatnonzero(observation["action_mask"])[0]))
    assert raw.agents == [] and raw.game is not None and raw.game.is_over
    for action in (DRAW.id, None):
        with pytest.raises(
            RuntimeError, match=r"^the episode is over and every agent has left it: call reset"
        ):
            raw.step(action)
    raw.reset(seed=2)
    raw.step(DRAW.id)  # a new episode plays again
    raw.close()
    with pytest.raises(RuntimeError, match=r"^call reset\(\) before step\(\)$"):
        raw.step(DRAW.id)


def test_pettingzoo_refuses_a_bad_illegal_rule() -> None:
    with pytest.raises(ValueError, match="illegal must be one of penalty, raise, not 'ignore'"):
        pettingzoo_env(illegal="ignore")
    for penalty in (0, -1.0, float("nan"), float("inf"), "1"):
        with pytest.raises(ValueError, match="illegal_penalty must be a positive number"):
            pettingzoo_env(illegal_penalty=penalty)
    with pytest.raises(ValueError, match=r"max_steps must be a whole number of at least 389 .* not 300"):
        pettingzoo_env(max_steps=300)
    with pytest.raises(ValueError, match=r"max_steps must be a whole number of at least 556"):
        pettingzoo_env(max_steps=400, illegal_penalty=0.5)
    assert pettingzoo_env(max_steps=5000).unwrapped.max_steps == 5000
    assert pettingzoo_env().unwrapped.max_steps == 389


@pytest.mark.parametrize("players", [2, 5])
def test_pettingzoo_render_test(players: int, capsys: pytest.CaptureFixture[str]) -> None:
    render_test(lambda render_mode: pettingzoo_env(players=players, render_mode=render_mode))
    assert "row 1" in capsys.readouterr().out  # "human" printed the board
    environment = pettingzoo_env(players=players, render_mode="human")
    environment.reset(seed=2)
    printed = capsys.readouterr().out
    assert printed.startswith("round 1") and f"row {players if players > 2 else 3}" in printed
    environment.step(DRAW.id)
    shown = capsys.readouterr().out
    assert "drawn: " in shown
    assert environment.render() is None and capsys.readouterr().out == shown
    quiet = pettingzoo_env(players=players, render_mode="ansi")
    quiet.reset(seed=2)
    quiet.step(DRAW.id)
    assert capsys.readouterr().out == ""  # "ansi" prints nothing: render() returns the same board
    assert quiet.render() + "\n\n" == shown


def play_gymnasium(
    players: int,
    seed: int,
    illegal_before: dict[int, int] | None = None,
    stall_after: int | None = None,
    **options: Any,
) -> tuple[float, bool, int, list[int] | None]:
    """One episode of a learner that plays legal actions from a seeded random
    against random opponents: before its turn t it plays ``illegal_before[t]``
    illegal actions, and after ``stall_after`` turns nothing but illegal ones.
    Returns its return, whether the episode was truncated, its legal turns and
    the final totals."""
    environment = ColorettoEnv(players=players, opponents=["random"] * (players - 1), seat=None, **options)
    _, info = environment.reset(seed=seed)
    rng = random.Random(seed)
    illegal_left = dict(illegal_before or {})
    total = 0.0
    turns = 0
    while True:
        mask = info["action_mask"]
        if illegal_left.get(turns, 0) > 0 or (stall_after is not None and turns >= stall_after):
            illegal_left[turns] = illegal_left.get(turns, 0) - 1
            action = int(np.flatnonzero(mask == 0)[turns % 3])
        else:
            turns += 1
            action = int(rng.choice(np.flatnonzero(mask)))
        _, reward, terminated, truncated, info = environment.step(action)
        total += reward
        if terminated or truncated:
            return total, truncated, turns, info.get("totals")


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)
@given(
    players=st.sampled_from(PLAYERS),
    seed=st.integers(0, 2**20),
    illegal_before=st.dictionaries(st.integers(0, 20), st.integers(1, 5), max_size=4),
)
def test_gymnasium_illegal_actions_cost_exactly_their_penalties(
    players: int, seed: int, illegal_before: dict[int, int]
) -> None:
    honest, truncated, turns, totals = play_gymnasium(players, seed)
    assert not truncated
    cheated, truncated, turns_again, totals_again = play_gymnasium(players, seed, illegal_before)
    assert not truncated and turns_again == turns and totals_again == totals  # the same game
    played = sum(count for turn, count in illegal_before.items() if turn < turns)
    assert cheated == pytest.approx(honest - played)


@pytest.mark.parametrize("penalty", [1.0, 0.5])
@pytest.mark.parametrize("players", PLAYERS)
def test_gymnasium_a_losing_learner_cannot_escape_by_stalling(players: int, penalty: float) -> None:
    seed = next(s for s in range(100) if play_gymnasium(players, s)[0] < 0)
    honest, _, turns, _ = play_gymnasium(players, seed, illegal_penalty=penalty)
    for stall_after in (0, turns // 2, turns - 1):
        stalled, truncated, legal_turns, totals = play_gymnasium(
            players, seed, stall_after=stall_after, illegal_penalty=penalty
        )
        assert truncated and legal_turns == stall_after and totals is None  # the game never ended
        assert stalled == pytest.approx(-(least_max_steps(penalty) - stall_after) * penalty)
        assert stalled < honest


def test_gymnasium_illegal_raise_and_bad_rules() -> None:
    environment = ColorettoEnv(players=2, opponents=["random"], seat=0, illegal="raise")
    _, info = environment.reset(seed=3)
    legal = np.flatnonzero(info["action_mask"])
    with pytest.raises(ValueError, match=r"illegal action 18 for seat 0: x: .*; legal actions: "):
        environment.step(18)  # pass, with cards to draw
    assert environment.game is not None and list(np.flatnonzero(environment.action_masks())) == list(legal)
    with pytest.raises(ValueError, match="action id 40 is not a whole number from 0 to 25"):
        environment.step(40)
    with pytest.raises(ValueError, match="illegal must be one of penalty, raise"):
        ColorettoEnv(players=2, opponents=["random"], illegal="skip")
    with pytest.raises(ValueError, match="illegal_penalty must be a positive number, not 0"):
        ColorettoEnv(players=2, opponents=["random"], illegal_penalty=0)
    with pytest.raises(ValueError, match="max_steps must be a whole number of at least 389"):
        ColorettoEnv(players=2, opponents=["random"], max_steps=1000.5)  # type: ignore[arg-type]
    assert ColorettoEnv(players=2, opponents=["random"]).max_steps == 389


@pytest.mark.parametrize("render_mode", ["ansi", "human"])
def test_gymnasium_check_env_with_rendering(render_mode: str, capsys: pytest.CaptureFixture[str]) -> None:
    # made by id, so that check_env also tries the other render mode
    made = gymnasium.make(
        "Coloretto-v0", players=3, opponents=["random"] * 2, seat=None, render_mode=render_mode
    )
    check_env(made.unwrapped)
    environment = ColorettoEnv(players=3, opponents=["random", "random"], seat=1, render_mode=render_mode)
    capsys.readouterr()
    environment.reset(seed=6)
    shown = capsys.readouterr().out
    if render_mode == "ansi":
        assert shown == "" and environment.render().startswith("round 1")  # type: ignore[union-attr]
    else:  # "human" prints the board at reset and at every step, and render() returns None
        assert shown.startswith("round 1") and "row 3" in shown
        environment.step(DRAW.id)
        shown = capsys.readouterr().out
        assert "drawn: " in shown
        assert environment.render() is None and capsys.readouterr().out == shown
    with pytest.raises(ValueError, match="render_mode must be 'human', 'ansi' or None, not 'rgb_array'"):
        ColorettoEnv(players=3, render_mode="rgb_array")


GYMNASIUM_MAKE = """
import gymnasium
{imports}
env = gymnasium.make({env_id!r}, players=3, opponents=["random", "greedy"], seat=2, table="violet")
observation, info = env.reset(seed=5)
assert observation.shape == (183,) and info["seat"] == 2
assert env.unwrapped.rules.players == 3 and env.unwrapped.rules.table.value == "violet"
assert env.unwrapped.max_steps == 389
observation, reward, terminated, truncated, info = env.step(int(info["action_mask"].argmin()))
assert reward == -1.0 and info["illegal_action"]
print(env.spec.id)
"""


@pytest.mark.parametrize(
    ("imports", "env_id"),
    [
        ("import coloretto.envs.gymnasium", "Coloretto-v0"),
        ("", "coloretto.envs.gymnasium:Coloretto-v0"),  # the id names the module that registers it
    ],
)
def test_gymnasium_make_builds_the_registered_environment(imports: str, env_id: str) -> None:
    # a fresh interpreter: what registers the id is the import, not this test module's own imports
    script = GYMNASIUM_MAKE.format(imports=imports, env_id=env_id)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "Coloretto-v0"
