"""The research environments pass their frameworks' own checks."""

from __future__ import annotations

import random

import numpy as np
import pyspiel
import pytest
from gymnasium.utils.env_checker import check_env
from open_spiel.python.tests import games_sim_test
from pettingzoo.test import api_test, seed_test

import coloretto.envs.openspiel  # noqa: F401  (registers python_coloretto)
from coloretto import DRAW, Game, Rules, place
from coloretto.actions import NUM_ACTIONS, action_from_id
from coloretto.bots import make_bot
from coloretto.envs.encoding import LAYOUT, OBSERVATION_SIZE, OFFSETS, encode_observation, final_rewards
from coloretto.envs.gymnasium import ColorettoEnv
from coloretto.envs.pettingzoo import env as pettingzoo_env

VARIANTS: list[dict[str, object]] = [
    {},
    {"edition": "modern"},
    {"edition": "playing-cards"},
    {"table": "violet"},
    {"joker_timing": "on-take", "edition": "modern"},
    {"round_starter": "next-player"},
    {"plus_colours": "most-cards", "table": "violet"},
    {"tie_break": "fewer-minus", "cards_under_last_round": 2},
]
PLAYERS = [2, 3, 4, 5]


def variant_id(variant: dict[str, object]) -> str:
    return ",".join(f"{k}={v}" for k, v in variant.items()) or "default"


# ---------------------------------------------------------------- encoding


def test_layout_adds_up() -> None:
    assert OBSERVATION_SIZE == sum(size for _, size in LAYOUT) == 177
    assert OFFSETS["seat_present"] == 0


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


# ---------------------------------------------------------------- OpenSpiel


@pytest.mark.parametrize("players", PLAYERS)
@pytest.mark.parametrize("variant", VARIANTS, ids=variant_id)
@pytest.mark.slow
def test_openspiel_random_sim_and_games_sim_checks(players: int, variant: dict[str, object]) -> None:
    params = {"players": players, **variant}
    game = pyspiel.load_game("python_coloretto", params)
    pyspiel.random_sim_test(game, num_sims=3, serialize=True, verbose=False)
    games_sim_test.GamesSimTest("test_breakthrough").sim_game(game)


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
