"""A Gymnasium vector environment as a Stable-Baselines3 ``VecEnv``, with action masks.

SB3 and sb3-contrib step their own ``VecEnv`` type, not Gymnasium's
``VectorEnv``. :class:`SB3VectorEnv` adapts the single-agent vectorised
environment (:class:`coloretto.envs.vector.ColorettoVectorGymEnv`, which
resets finished games in the same step, SB3's convention). MaskablePPO reads
the masks through ``env_method("action_masks")``.

What the network sees is the observation vector followed by the action
features (:func:`coloretto.bots.kernel.action_features`: what each row is
worth to the learner and to its best rival, and a draw's expected gain),
multiplied by a fixed ``scale`` (counts, scores and points brought near
[0, 1], so that one learning rate suits every input); rewards are divided by
``reward_scale``. The policy file keeps the scale, and the ``ppo`` bot builds
the same inputs.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode
from stable_baselines3.common.vec_env import VecEnv
from stable_baselines3.common.vec_env.base_vec_env import VecEnvIndices, VecEnvObs, VecEnvStepReturn

from coloretto.bots.kernel import ACTION_FEATURES
from coloretto.encoding import OBSERVATION_SIZE
from coloretto.envs.vector import ColorettoVectorGymEnv


class SB3VectorEnv(VecEnv):
    def __init__(
        self,
        env: ColorettoVectorGymEnv,
        scale: np.ndarray,
        reward_scale: float = 1.0,
        seed: int = 0,
    ) -> None:
        if env.metadata.get("autoreset_mode") != AutoresetMode.SAME_STEP:
            raise ValueError("SB3VectorEnv needs a vector environment that resets in the same step")
        self.render_mode = None  # SB3 asks; games are drawn by the Python environments
        inputs = OBSERVATION_SIZE + ACTION_FEATURES
        if np.shape(scale) != (inputs,):
            raise ValueError(f"scale must have {inputs} entries (observation and action features)")
        space = spaces.Box(-np.inf, np.inf, (inputs,), np.float32)
        super().__init__(env.num_envs, space, env.single_action_space)
        self.env = env
        self.scale = np.asarray(scale, np.float32)
        self.reward_scale = float(reward_scale)
        self._seed = seed
        self._actions: np.ndarray | None = None
        actions = int(env.single_action_space.n)  # type: ignore[attr-defined]  # a Discrete space
        self._masks = np.ones((env.num_envs, actions), dtype=np.bool_)

    def _inputs(self, observations: np.ndarray) -> np.ndarray:
        return (
            np.concatenate([observations, self.env.action_features()], axis=1, dtype=np.float32) * self.scale
        )

    def reset(self) -> VecEnvObs:
        observations, info = self.env.reset(seed=self._seed)
        self._masks = np.asarray(info["action_mask"], bool)
        return self._inputs(observations)

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions)

    def step_wait(self) -> VecEnvStepReturn:
        assert self._actions is not None, "step_async first"
        observations, rewards, terminated, truncated, info = self.env.step(self._actions)
        self._masks = np.asarray(info["action_mask"], bool)
        dones = np.logical_or(terminated, truncated)
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        if dones.any():
            # SB3 values a truncated game's last position with it; a finished game
            # has no moves left, so its action features are all 0
            final = (
                np.concatenate(
                    [info["final_obs"], np.zeros((self.num_envs, ACTION_FEATURES), np.float32)], axis=1
                )
                * self.scale
            )
            won = info["final_info"]["won"]
            for i in np.flatnonzero(dones):
                infos[i]["terminal_observation"] = final[i]
                infos[i]["TimeLimit.truncated"] = bool(truncated[i] and not terminated[i])
                infos[i]["won"] = float(won[i])
        return (
            self._inputs(observations),
            np.asarray(rewards, np.float32) / self.reward_scale,
            dones,
            infos,
        )

    def action_masks(self) -> np.ndarray:
        return self._masks

    def close(self) -> None:
        self.env.close()

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        return [getattr(self, attr_name)] * len(self._indices(indices))

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        raise AttributeError(f"SB3VectorEnv has no per-environment attribute {attr_name!r} to set")

    def env_method(
        self, method_name: str, *method_args: Any, indices: VecEnvIndices = None, **method_kwargs: Any
    ) -> list[Any]:
        if method_name != "action_masks":
            raise AttributeError(f"SB3VectorEnv has no per-environment method {method_name!r}")
        return list(self._masks[self._indices(indices)])

    def has_attr(self, attr_name: str) -> bool:
        return attr_name == "action_masks"

    def env_is_wrapped(
        self, wrapper_class: type[gymnasium.Wrapper], indices: VecEnvIndices = None
    ) -> list[bool]:
        return [False] * len(self._indices(indices))

    def _indices(self, indices: VecEnvIndices) -> Sequence[int]:
        if indices is None:
            return range(self.num_envs)
        if isinstance(indices, int):
            return [indices]
        return list(indices)
