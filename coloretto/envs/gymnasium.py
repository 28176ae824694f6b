"""Coloretto as a single-agent Gymnasium environment: the learner plays one
seat against arena bots of its choice.

    >>> from coloretto.envs.gymnasium import ColorettoEnv
    >>> env = ColorettoEnv(players=4, opponents=["greedy", "greedy", "random"])
    >>> observation, info = env.reset(seed=7)
    >>> action = env.action_space.sample(info["action_mask"])
    >>> observation, reward, terminated, truncated, info = env.step(action)

Importing this module registers ``Coloretto-v0``, so ``gymnasium.make`` builds
it with the same keywords (``gymnasium.make("Coloretto-v0", players=3)``); the
id ``"coloretto.envs.gymnasium:Coloretto-v0"`` imports the module itself.

* Observation: the ``Box(183)`` vector of ``docs/research/environments.md``, from the
  learner's seat. Action: ``Discrete(26)`` (see :mod:`coloretto.actions`).
* Every rule option is a keyword (``table="violet"`` …); an episode is one
  game, so ``match_games`` must be 1.
* ``info["action_mask"]`` (and ``env.action_masks()``) marks the legal
  actions. An illegal action changes nothing, costs ``illegal_penalty`` (1)
  and the learner acts again (``info["illegal_action"]``); the episode is
  truncated after ``max_steps`` learner steps, illegal ones counted, which
  is never so few that truncating a lost game could pay (see
  :func:`coloretto.envs.encoding.least_max_steps`). ``illegal="raise"``
  makes an illegal action a ValueError instead. An id outside
  ``Discrete(26)`` is always a ValueError, and so is anything but an
  integer (a float, text, a bool): NumPy integers and 0-d integer arrays are ids.
* The opponents are a list of bots, one per other seat, named as everywhere
  else (``"greedy"``, ``"heuristic"``, ``"mcts:200"`` …), created afresh and seeded from the
  episode's seed at every reset; they move by themselves between the
  learner's turns. ``seat=None`` puts the learner in a random seat each episode.
* Reward at the end: ``"margin"`` (own total minus the best other) or ``"win"``.
* ``render_mode="ansi"``: ``render()`` returns the board as text;
  ``"human"``: the board is printed at every reset and step (``render()``
  prints it too, and returns None).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

from coloretto.actions import NUM_ACTIONS
from coloretto.bots import Bot, check_bot, make_bot
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


class ColorettoEnv(gymnasium.Env[np.ndarray, np.int64]):
    # Env declares metadata as an attribute of each environment, so no ClassVar here
    metadata = {"render_modes": ["human", "ansi"]}  # noqa: RUF012

    def __init__(
        self,
        players: int = 4,
        opponents: Sequence[str] | None = None,
        seat: int | None = 0,
        reward: str = "margin",
        illegal: str = "penalty",
        illegal_penalty: float = DEFAULT_ILLEGAL_PENALTY,
        max_steps: int | None = None,
        render_mode: str | None = None,
        **rule_options: Any,
    ) -> None:
        self.rules = one_game(Rules(players=players, **rule_options), "ColorettoEnv")
        if isinstance(opponents, str):  # a str is a Sequence[str] too: its letters are no bots
            raise ValueError(
                f"opponents must be a list of {players - 1} bot names, one per other seat, not the "
                f"string {opponents!r} (for the same bot in every seat: [{opponents!r}] * {players - 1})"
            )
        opponents = list(opponents) if opponents is not None else ["greedy"] * (players - 1)
        if len(opponents) != players - 1:
            raise ValueError(f"{players} players need {players - 1} opponents, got {len(opponents)}")
        for spec in opponents:
            check_bot(spec)  # fail now on a bad name, not at reset
        if seat is not None and (
            isinstance(seat, bool) or not isinstance(seat, int | np.integer) or not 0 <= seat < players
        ):
            raise ValueError(f"seat must be a whole number from 0 to {players - 1} or None, not {seat!r}")
        if reward not in REWARDS:
            raise ValueError(f"reward must be one of {', '.join(REWARDS)}, not {reward!r}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be 'human', 'ansi' or None, not {render_mode!r}")
        self.max_steps = check_illegal_rule(illegal, illegal_penalty, max_steps)
        self.opponent_specs = opponents
        self.fixed_seat = None if seat is None else int(seat)
        self.reward_kind = reward
        self.illegal = illegal
        self.illegal_penalty = float(illegal_penalty)
        self.render_mode = render_mode
        self.observation_space = spaces.Box(
            OBSERVATION_LOW, OBSERVATION_HIGH, (OBSERVATION_SIZE,), np.float32
        )
        self.action_space = spaces.Discrete(NUM_ACTIONS)
        self.game: Game | None = None
        self.seat = self.fixed_seat if self.fixed_seat is not None else 0
        self.bots: dict[int, Bot] = {}
        self._steps = 0

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=check_seed(seed))  # gymnasium takes a Python int only
        episode_seed = int(self.np_random.integers(2**63))
        rng = random.Random(episode_seed)
        self.seat = self.fixed_seat if self.fixed_seat is not None else rng.randrange(self.rules.players)
        others = [s for s in range(self.rules.players) if s != self.seat]
        self.bots = {
            s: make_bot(spec, seed=rng.randrange(2**63)) for s, spec in zip(others, self.opponent_specs)
        }
        self.game = Game.new(self.rules, seed=episode_seed)
        self._steps = 0
        self._let_opponents_play()
        if self.render_mode == "human":
            self.render()
        return self._observe(), self._info(illegal=False)

    def step(self, action: np.int64 | int) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        game = self.game
        if game is None:
            raise RuntimeError("call reset() before step()")
        if game.is_over:
            raise RuntimeError("the episode is over: call reset()")
        chosen = action_of_id(action)
        try:
            game.push(chosen)
        except IllegalActionError as error:
            if self.illegal == "raise":
                legal = game.legal_actions
                raise illegal_action_error(chosen.id, legal, str(error), f"seat {self.seat}") from None
            self._steps += 1
            if self.render_mode == "human":
                self.render()
            truncated = self._steps >= self.max_steps
            return self._observe(), -self.illegal_penalty, False, truncated, self._info(illegal=True)
        self._steps += 1
        self._let_opponents_play()
        terminated = game.is_over
        reward = final_rewards(game, self.reward_kind)[self.seat] if terminated else 0.0
        truncated = not terminated and self._steps >= self.max_steps
        if self.render_mode == "human":
            self.render()
        return self._observe(), reward, terminated, truncated, self._info(illegal=False)

    def action_masks(self) -> np.ndarray:
        """Legal actions of the learner (the MaskablePPO convention)."""
        assert self.game is not None, "call reset() first"
        return action_mask(self.game.legal_actions if self.game.to_move == self.seat else ())

    def render(self) -> str | None:
        if self.render_mode is None or self.game is None:
            return None
        text = board_text(self.game.observation(self.seat))
        if self.render_mode == "human":
            print(text, end="\n\n")
            return None
        return text

    def _let_opponents_play(self) -> None:
        game = self.game
        assert game is not None
        while not game.is_over and game.to_move != self.seat:
            seat = game.to_move
            assert seat is not None
            game.push(self.bots[seat].choose(game.observation(seat)))

    def _observe(self) -> np.ndarray:
        assert self.game is not None
        return encode_observation(self.game.observation(self.seat))

    def _info(self, illegal: bool) -> dict[str, Any]:
        assert self.game is not None
        info: dict[str, Any] = {"action_mask": self.action_masks(), "seat": self.seat}
        if illegal:
            info["illegal_action"] = True
        if self.game.is_over:
            info["totals"] = [s.total for s in self.game.scores()]
            info["winners"] = list(self.game.winners())
        return info


#: the id ``gymnasium.make`` knows this environment by
ENV_ID = "Coloretto-v0"


def register() -> None:
    """Register ``Coloretto-v0`` with Gymnasium (done on import; again is a no-op).

    Gymnasium 1.x has no plugin entry points (they went in 1.0), so an id is
    known only once the module that registers it has been imported."""
    if ENV_ID not in gymnasium.registry:
        gymnasium.register(
            id=ENV_ID,
            entry_point=f"{__name__}:ColorettoEnv",
            # gymnasium.make_vec(..., vectorization_mode="vector_entry_point"): the compiled games
            vector_entry_point="coloretto.envs.vector:ColorettoVectorGymEnv",
        )


register()
