"""PPO with action masking for the ``ppo`` bot: sb3-contrib's MaskablePPO on CPU PyTorch.

Used by ``coloretto train-ppo``. The learner sits in a random seat of each
game; its opponents are compiled (the vectorised environment), so the time
goes to the network. Rewards come only at the end of a game (``margin``: the
learner's total minus the best other total, divided by 20; or ``win``).

Why these settings: an episode is a whole game (about 30 of the learner's
decisions in four players), so the discount is close to 1; 256 games stepped
together and 64 steps each make a batch of 16,384 decisions, learned in 4
passes of minibatches of 1,024 (16 updates a batch: in a pilot run against
greedy, 1.5 million steps reached a 20 % win share this way, 7 % with 32,768
decisions in minibatches of 4,096); PyTorch runs on one thread (more threads
made a step twenty times slower on this two-core machine).
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from sb3_contrib import MaskablePPO
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.logger import Logger

from coloretto.bots.kernel import ACTION_FEATURES
from coloretto.bots.ppo import PPOPolicy
from coloretto.encoding import LAYOUT, OBSERVATION_SIZE
from coloretto.envs.sb3 import SB3VectorEnv
from coloretto.envs.vector import ColorettoVectorGymEnv

#: what each block of the observation vector is divided by (about its largest value in play)
BLOCK_SCALE: dict[str, float] = {
    "row_capacity": 3.0,
    "collections": 6.0,
    "scores": 40.0,
    "unseen": 9.0,
    "removed": 9.0,
    "round": 20.0,
    "jokers_to_name": 3.0,
    "start_picks_left": 10.0,
}
#: the deck block: cards in the deck, cards before the last-round card, the last-round flag
DECK_SCALE = (80.0, 80.0, 1.0)
MARGIN_SCALE = 20.0
HIDDEN = (256, 256)
WIN_WINDOW = 2000  #: episodes behind the reported win share


#: action features are points: a row worth 10 more counts as 1
ACTION_FEATURE_SCALE = 10.0


def observation_scale() -> np.ndarray:
    """What the network's inputs (the observation vector, then the action features) are multiplied by."""
    scale = np.full(OBSERVATION_SIZE + ACTION_FEATURES, 1.0 / ACTION_FEATURE_SCALE, np.float32)
    offset = 0
    for name, size in LAYOUT:
        if name == "deck":
            scale[offset : offset + size] = 1.0 / np.array(DECK_SCALE, np.float32)
        else:
            scale[offset : offset + size] = 1.0 / BLOCK_SCALE.get(name, 1.0)
        offset += size
    return scale


@dataclass(frozen=True)
class TrainSettings:
    players: int = 4
    opponents: str = "greedy"
    steps: int = 20_000_000
    seconds: float = 1800.0
    envs: int = 256
    reward: str = "margin"
    seed: int = 1
    rollout_steps: int = 64
    batch_size: int = 1024
    epochs: int = 4
    learning_rate: float = 3e-4
    gamma: float = 0.995
    entropy: float = 0.003


@dataclass
class TrainResult:
    policy: PPOPolicy
    steps: int
    steps_per_second: float
    recent_win_share: float


def make_env(settings: TrainSettings) -> SB3VectorEnv:
    scale = observation_scale()
    reward_scale = MARGIN_SCALE if settings.reward == "margin" else 1.0
    env = ColorettoVectorGymEnv(
        settings.envs,
        players=settings.players,
        opponent=settings.opponents,
        seat=None,
        reward=settings.reward,
    )
    return SB3VectorEnv(env, scale, reward_scale, seed=settings.seed)


class _Progress(BaseCallback):
    """Counts won episodes, reports now and then, and stops at the time limit."""

    def __init__(self, seconds: float, report: Callable[[dict[str, Any]], None] | None, every: int) -> None:
        super().__init__()
        self.seconds = seconds
        self.report = report
        self.every = every
        self.started = time.perf_counter()
        self.results: deque[float] = deque(maxlen=WIN_WINDOW)
        self.episodes = 0
        self._next = every

    def _on_step(self) -> bool:
        dones = self.locals["dones"]
        if dones.any():
            rewards = self.locals["rewards"]
            for i in np.flatnonzero(dones):
                self.results.append(1.0 if rewards[i] > 0 else 0.0)
                self.episodes += 1
        if self.num_timesteps >= self._next:
            self._next += self.every
            if self.report is not None:
                self.report(self.summary())
        return time.perf_counter() - self.started < self.seconds

    def win_share(self) -> float:
        return float(np.mean(self.results)) if self.results else 0.0

    def summary(self) -> dict[str, Any]:
        elapsed = time.perf_counter() - self.started
        return {
            "steps": self.num_timesteps,
            "minutes": elapsed / 60.0,
            "steps_per_second": self.num_timesteps / max(elapsed, 1e-9),
            "episodes": self.episodes,
            "window": len(self.results),
            "win_share": self.win_share(),
        }


def train(settings: TrainSettings, progress: Callable[[dict[str, Any]], None] | None = None) -> TrainResult:
    torch.set_num_threads(1)  # one core, and the same sums in the same order every run
    env = make_env(settings)
    rollout = max(1, min(settings.rollout_steps, settings.steps // settings.envs))
    model = MaskablePPO(
        "MlpPolicy",
        env,
        n_steps=rollout,
        batch_size=min(settings.batch_size, rollout * settings.envs),
        n_epochs=settings.epochs,
        learning_rate=settings.learning_rate,
        gamma=settings.gamma,
        ent_coef=settings.entropy,
        policy_kwargs={"net_arch": {"pi": list(HIDDEN), "vf": list(HIDDEN)}},
        seed=settings.seed,
        device="cpu",
        verbose=0,
    )
    # our own progress reports are the output; SB3's default logger would leave an empty
    # SB3-<time> directory in the temporary folder on every run
    model.set_logger(Logger(folder=None, output_formats=[]))
    callback = _Progress(settings.seconds, progress, every=max(rollout * settings.envs, 250_000))
    model.learn(settings.steps, callback=callback)
    summary = callback.summary()
    env.close()
    meta = {
        "command": "coloretto train-ppo "
        + " ".join(
            f"--{key} {value}"
            for key, value in (
                ("players", settings.players),
                ("opponents", settings.opponents),
                ("steps", settings.steps),
                ("envs", settings.envs),
                ("reward", settings.reward),
                ("seed", settings.seed),
            )
        ),
        "players": settings.players,
        "opponents": settings.opponents,
        "steps": int(model.num_timesteps),
        "seed": settings.seed,
        "reward": settings.reward,
        "torch": torch.__version__,
        "inputs": "observation+action_features",
        "recent_win_share": round(callback.win_share(), 4),
    }
    return TrainResult(
        export_policy(model, env.scale, meta),
        int(model.num_timesteps),
        float(summary["steps_per_second"]),
        callback.win_share(),
    )


def export_policy(model: MaskablePPO, scale: np.ndarray, meta: dict[str, object]) -> PPOPolicy:
    """The policy layers of a MaskablePPO MlpPolicy as NumPy arrays."""
    layers = [m for m in model.policy.mlp_extractor.policy_net if isinstance(m, torch.nn.Linear)]
    assert isinstance(model.policy.action_net, torch.nn.Linear)
    layers.append(model.policy.action_net)
    weights = tuple(layer.weight.detach().cpu().numpy().T.astype(np.float64) for layer in layers)
    biases = tuple(layer.bias.detach().cpu().numpy().astype(np.float64) for layer in layers)
    activation = (
        "tanh" if any(isinstance(m, torch.nn.Tanh) for m in model.policy.mlp_extractor.policy_net) else "relu"
    )
    return PPOPolicy(np.asarray(scale, np.float64), weights, biases, activation, meta)
