"""Coloretto as a PettingZoo AEC environment.

    >>> from coloretto.envs.pettingzoo import env
    >>> e = env(players=4, table="violet", render_mode="ansi")
    >>> e.reset(seed=7)
    >>> for agent in e.agent_iter():
    ...     observation, reward, termination, truncation, info = e.last()
    ...     mask = observation["action_mask"]
    ...     action = None if termination or truncation else e.action_space(agent).sample(mask)
    ...     e.step(action)

* Agents ``player_0`` … ``player_{n-1}`` (seats in turn order).
* Action space ``Discrete(26)``: see :mod:`coloretto.actions` (0 draw, 1–5
  place in row 1–5, 6–10 take row 1–5, 11–17 name a joker's colour, 18 pass,
  19–25 choose a starting colour).
* Observation ``Dict(observation=Box(183), action_mask=Box(26, int8))``; the
  vector is documented in ``docs/research.md``.
* Every rule option is a keyword (``starting_colours="chosen"`` …); an
  episode is one game, so ``match_games`` must be 1.
* Rewards only at the end: ``reward="margin"`` (default) gives each agent its
  total minus the best other total; ``reward="win"`` gives each of the k
  winners 1/k and each of the other n-k players -1/(n-k), summing to 0.
* Draws are resolved by the engine from a deck dealt with the ``reset`` seed.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from coloretto.actions import NUM_ACTIONS, action_from_id
from coloretto.envs.encoding import (
    OBSERVATION_HIGH,
    OBSERVATION_LOW,
    OBSERVATION_SIZE,
    REWARDS,
    action_mask,
    encode_observation,
    final_rewards,
    one_game,
)
from coloretto.game import Game
from coloretto.rules import Rules
from coloretto.text import board_text


def env(**kwargs: Any) -> AECEnv:
    """The environment with PettingZoo's standard safety wrappers."""
    environment: AECEnv = raw_env(**kwargs)
    environment = wrappers.TerminateIllegalWrapper(environment, illegal_reward=-1)
    environment = wrappers.AssertOutOfBoundsWrapper(environment)
    return wrappers.OrderEnforcingWrapper(environment)


class raw_env(AECEnv):  # PettingZoo names the unwrapped class raw_env
    metadata: ClassVar[dict[str, Any]] = {
        "render_modes": ["ansi"],
        "name": "coloretto_v0",
        "is_parallelizable": False,
    }

    def __init__(
        self,
        players: int = 4,
        reward: str = "margin",
        render_mode: str | None = None,
        **rule_options: Any,
    ) -> None:
        super().__init__()
        if reward not in REWARDS:
            raise ValueError(f"reward must be one of {', '.join(REWARDS)}, not {reward!r}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be 'ansi' or None, not {render_mode!r}")
        self.rules = one_game(Rules(players=players, **rule_options), "coloretto_v0")
        self.reward_kind = reward
        self.render_mode = render_mode
        self.possible_agents = [f"player_{seat}" for seat in range(players)]
        self.agent_name_mapping = {agent: seat for seat, agent in enumerate(self.possible_agents)}
        self.action_spaces = {agent: spaces.Discrete(NUM_ACTIONS) for agent in self.possible_agents}
        self.observation_spaces = {
            agent: spaces.Dict(
                {
                    "observation": spaces.Box(
                        OBSERVATION_LOW, OBSERVATION_HIGH, (OBSERVATION_SIZE,), np.float32
                    ),
                    "action_mask": spaces.Box(0, 1, (NUM_ACTIONS,), np.int8),
                }
            )
            for agent in self.possible_agents
        }
        self.game: Game | None = None

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        if seed is None:
            seed = int(np.random.SeedSequence().generate_state(1)[0])
        self.game = Game.new(self.rules, seed=seed)
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {agent: {} for agent in self.agents}
        self.agent_selection = self.possible_agents[self.game.to_move or 0]

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        assert self.game is not None, "call reset() first"
        seat = self.agent_name_mapping[agent]
        observation = self.game.observation(seat)
        return {
            "observation": encode_observation(observation),
            "action_mask": action_mask(observation.legal_actions),
        }

    def step(self, action: int | None) -> None:
        if self.terminations[self.agent_selection] or self.truncations[self.agent_selection]:
            self._was_dead_step(action)
            return
        game = self.game
        assert game is not None
        agent = self.agent_selection
        self._cumulative_rewards[agent] = 0.0
        game.push(action_from_id(int(action)))  # type: ignore[arg-type]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        if game.is_over:
            for seat, reward in enumerate(final_rewards(game, self.reward_kind)):
                self.rewards[self.possible_agents[seat]] = reward
            self.terminations = dict.fromkeys(self.agents, True)
        else:
            self.agent_selection = self.possible_agents[game.to_move]  # type: ignore[index]
        self._accumulate_rewards()

    def render(self) -> str | None:
        if self.render_mode is None:
            return None
        assert self.game is not None, "call reset() first"
        seat = self.game.to_move if self.game.to_move is not None else 0
        return board_text(self.game.observation(seat))

    def close(self) -> None:
        self.game = None
