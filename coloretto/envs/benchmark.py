"""Random games per second through each research wrapper, next to the engine's
own figure: what a wrapper costs. Used by ``coloretto bench --envs``."""

from __future__ import annotations

import random
import time
from collections.abc import Callable

import numpy as np

from coloretto.game import Game
from coloretto.rules import Rules


def engine_games(rules: Rules, games: int, seed: int) -> None:
    rng = random.Random(seed)
    for index in range(games):
        game = Game.new(rules, seed=seed + index)
        while not game.is_over:
            actions = game.legal_actions
            game.push(actions[int(rng.random() * len(actions))])


def pettingzoo_games(rules: Rules, games: int, seed: int) -> None:
    from coloretto.envs.pettingzoo import raw_env

    environment = raw_env(**rules.to_dict())
    rng = np.random.default_rng(seed)
    for index in range(games):
        environment.reset(seed=seed + index)
        for _agent in environment.agent_iter():
            observation, _, termination, truncation, _ = environment.last()
            if termination or truncation:
                environment.step(None)
            else:
                legal = np.flatnonzero(observation["action_mask"])
                environment.step(int(rng.choice(legal)))


def openspiel_games(rules: Rules, games: int, seed: int) -> None:
    import pyspiel

    from coloretto.envs.openspiel import SHORT_NAME, params_from_rules

    game = pyspiel.load_game(SHORT_NAME, params_from_rules(rules))
    rng = random.Random(seed)
    for _ in range(games):
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                actions, probabilities = zip(*state.chance_outcomes(), strict=True)
                state.apply_action(rng.choices(actions, probabilities)[0])
            else:
                state.apply_action(rng.choice(state.legal_actions()))


def gymnasium_games(rules: Rules, games: int, seed: int) -> None:
    from coloretto.envs.gymnasium import ColorettoEnv

    environment = ColorettoEnv(opponents=["random"] * (rules.players - 1), **rules.to_dict())
    rng = np.random.default_rng(seed)
    for index in range(games):
        _, info = environment.reset(seed=seed + index)
        done = False
        while not done:
            action = int(rng.choice(np.flatnonzero(info["action_mask"])))
            _, _, terminated, truncated, info = environment.step(action)
            done = terminated or truncated


WRAPPERS: dict[str, Callable[[Rules, int, int], None]] = {
    "engine": engine_games,
    "pettingzoo": pettingzoo_games,
    "openspiel": openspiel_games,
    "gymnasium": gymnasium_games,
}


def games_per_second(name: str, rules: Rules, games: int, seed: int) -> float:
    start = time.perf_counter()
    WRAPPERS[name](rules, games, seed)
    return games / (time.perf_counter() - start)


#: games stepped together by the vectorised environment in ``coloretto bench --envs``
VECTOR_ENVS = 1024


def vector_steps_per_second(
    rules: Rules, steps: int, seed: int, num_envs: int = VECTOR_ENVS, opponent: str | None = None
) -> float:
    """Steps per second of the vectorised environment (observations and masks
    included), ``num_envs`` games at once, each step a uniformly random legal
    action from the masks: every seat's action in the multi-agent face
    (``opponent=None``), else the learner's against compiled ``opponent``s."""
    from coloretto.envs.vector import ColorettoVectorEnv, ColorettoVectorGymEnv

    options = rules.to_dict()
    players = options.pop("players")
    environment: ColorettoVectorEnv | ColorettoVectorGymEnv
    if opponent is None:
        environment = ColorettoVectorEnv(num_envs, players=players, **options)
        _, info = environment.reset(seed=seed)
    else:
        environment = ColorettoVectorGymEnv(num_envs, players=players, opponent=opponent, **options)
        _, info = environment.reset(seed=seed)
    # the action choice costs an argmax over a few precomputed uniform arrays: the
    # largest uniform number among the legal ids picks each of them as often
    noise = np.random.default_rng(seed).random((8, num_envs, info["action_mask"].shape[1]), np.float32)
    start = time.perf_counter()
    for step in range(steps):
        actions = np.argmax(noise[step % 8] * info["action_mask"], axis=1)
        _, _, _, _, info = environment.step(actions)
    return steps * num_envs / (time.perf_counter() - start)
