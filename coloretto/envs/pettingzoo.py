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
  vector is documented in ``docs/research/environments.md``.
* Every rule option is a keyword (``starting_colours="chosen"`` …); an
  episode is one game, so ``match_games`` must be 1.
* Rewards only at the end: ``reward="margin"`` (default) gives each agent its
  total minus the best other total; ``reward="win"`` gives each of the k
  winners 1/k and each of the other n-k players -1/(n-k), summing to 0.
* Draws are resolved by the engine from a deck dealt with the ``reset`` seed.
* An illegal action changes nothing, costs the agent ``illegal_penalty`` (1)
  for that step (``infos[agent]["illegal_action"]``) and the same agent acts
  again; once one agent has taken ``max_steps`` actions, illegal ones
  counted, every agent is truncated. ``max_steps`` is never so few that
  truncating a lost game could pay (see
  :func:`coloretto.envs.encoding.least_max_steps`), so illegal actions never
  raise the return of the agent that plays them. ``illegal="raise"`` makes
  an illegal action a ValueError instead. An id outside ``Discrete(26)``, or
  anything but an integer (a float, text, a bool), is always a ValueError;
  ``step(None)`` is only for an agent that is done. (PettingZoo's
  ``TerminateIllegalWrapper`` is not used: it ends the game, and its -1
  could be worth more than the lost game it ends.)
* ``render_mode="ansi"``: ``render()`` returns the board as text;
  ``"human"``: the board is printed after every step (``render()`` prints it
  too, and returns None).
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from coloretto.actions import NUM_ACTIONS
from coloretto.encoding import (
    DEFAULT_ILLEGAL_PENALTY,
    OBSERVATION_HIGH,
    OBSERVATION_LOW,
    OBSERVATION_SIZE,
    REWARDS,
    action_mask,
    action_of_id,
    check_illegal_rule,
    check_seed,
    encode_observation,
    final_rewards,
    illegal_action_error,
    one_game,
)
from coloretto.game import Game, IllegalActionError
from coloretto.rules import Rules
from coloretto.text import board_text


def env(**kwargs: Any) -> AECEnv:
    """The environment with PettingZoo's standard safety wrappers (all but
    TerminateIllegalWrapper: the environment has its own illegal-action rule)."""
    environment: AECEnv = raw_env(**kwargs)
    environment = wrappers.AssertOutOfBoundsWrapper(environment)
    return wrappers.OrderEnforcingWrapper(environment)


class raw_env(AECEnv):  # PettingZoo names the unwrapped class raw_env
    metadata: ClassVar[dict[str, Any]] = {
        "render_modes": ["human", "ansi"],
        "name": "coloretto_v0",
        "is_parallelizable": False,
    }

    def __init__(
        self,
        players: int = 4,
        reward: str = "margin",
        render_mode: str | None = None,
        illegal: str = "penalty",
        illegal_penalty: float = DEFAULT_ILLEGAL_PENALTY,
        max_steps: int | None = None,
        **rule_options: Any,
    ) -> None:
        super().__init__()
        if reward not in REWARDS:
            raise ValueError(f"reward must be one of {', '.join(REWARDS)}, not {reward!r}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be 'human', 'ansi' or None, not {render_mode!r}")
        self.max_steps = check_illegal_rule(illegal, illegal_penalty, max_steps)
        self.rules = one_game(Rules(players=players, **rule_options), "coloretto_v0")
        self.illegal = illegal
        self.illegal_penalty = float(illegal_penalty)
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
        self._steps = [0] * players  #: actions each seat has taken this episode, illegal ones counted

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        seed = check_seed(seed)
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
        self._steps = [0] * self.rules.players
        if self.render_mode == "human":
            self.render()

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        assert self.game is not None, "call reset() first"
        seat = self.agent_name_mapping[agent]
        observation = self.game.observation(seat)
        return {
            "observation": encode_observation(observation),
            "action_mask": action_mask(observation.legal_actions),
        }

    def step(self, action: int | None) -> None:
        game = self.game
        if game is None:
            raise RuntimeError("call reset() before step()")
        if not self.agents:
            raise RuntimeError("the episode is over and every agent has left it: call reset()")
        if self.terminations[self.agent_selection] or self.truncations[self.agent_selection]:
            self._was_dead_step(action)  # PettingZoo's way out: step(None) for each agent that is done
            return
        agent = self.agent_selection
        seat = self.agent_name_mapping[agent]
        if action is None:
            raise ValueError(f"{agent} is to act: step(None) is only for an agent whose episode is over")
        chosen = action_of_id(action)
        try:
            game.push(chosen)
        except IllegalActionError as error:
            if self.illegal == "raise":
                raise illegal_action_error(chosen.id, game.legal_actions, str(error), agent) from None
            legal = False
        else:
            legal = True
        self._cumulative_rewards[agent] = 0.0
        self._steps[seat] += 1
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self.infos[agent] = {} if legal else {"illegal_action": True}
        if not legal:
            self.rewards[agent] = -self.illegal_penalty
        if game.is_over:
            for other, reward in enumerate(final_rewards(game, self.reward_kind)):
                self.rewards[self.possible_agents[other]] = reward
            self.terminations = dict.fromkeys(self.agents, True)
        elif self._steps[seat] >= self.max_steps:
            self.truncations = dict.fromkeys(self.agents, True)
        else:
            # after an illegal action the same seat is still to move
            self.agent_selection = self.possible_agents[game.to_move]  # type: ignore[index]
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def render(self) -> str | None:
        if self.render_mode is None:
            return None
        assert self.game is not None, "call reset() first"
        seat = self.game.to_move if self.game.to_move is not None else 0
        text = board_text(self.game.observation(seat))
        if self.render_mode == "human":
            print(text, end="\n\n")
            return None
        return text

    def close(self) -> None:
        self.game = None
