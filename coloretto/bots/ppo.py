"""``ppo``: a policy network trained by PPO with action masking, played in NumPy.

``coloretto train-ppo`` trains the network (sb3-contrib's MaskablePPO on CPU
PyTorch, against compiled opponents in the vectorised environment) and writes
its weights to a ``.npz`` file; ``coloretto/bots/ppo.npz`` is the shipped one.
Playing needs only NumPy and the compiled kernel: the bot encodes what it sees
as the research environments do (:func:`coloretto.encoding.encode_observation`)
followed by the action features the kernel computes
(:func:`coloretto.bots.kernel.action_features`: what each row is worth to it
and to its best rival, a draw's expected gain), scales them as in training,
runs the network's policy layers and plays the legal action with the highest
logit (lowest id on a tie), so the same observation always gives the same
move. ``ppo:sample`` draws the move from the masked policy instead, from the
bot's seeded generator.

Bot names: ``ppo`` (the shipped policy), ``ppo:FILE.npz`` (another one),
``ppo:sample`` or ``ppo:FILE.npz,sample``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Self

import numpy as np

from coloretto.actions import NUM_ACTIONS, Action
from coloretto.bots.base import Bot, BotSpec, BotSpecError
from coloretto.game import Observation

POLICY_FILE = Path(__file__).with_name("ppo.npz")
#: activations a policy file may name (SB3's MlpPolicy uses tanh by default)
ACTIVATIONS = ("tanh", "relu")


class PolicyFileError(ValueError):
    """A policy file that cannot be read or does not fit; the message says what is wrong."""


@dataclass(frozen=True)
class PPOPolicy:
    """The policy half of an actor-critic network: input scale, hidden layers, logits."""

    scale: np.ndarray  #: multiplies the observation vector before the first layer
    weights: tuple[np.ndarray, ...]  #: one (inputs, outputs) matrix per layer, the logits' last
    biases: tuple[np.ndarray, ...]
    activation: str
    #: how the policy was made: command, seed, steps, opponents, players …
    meta: dict[str, object]

    def logits(self, vector: np.ndarray) -> np.ndarray:
        """The action logits of one observation vector, or of a batch (rows)."""
        x = np.asarray(vector, np.float64) * self.scale
        last = len(self.weights) - 1
        for layer, (w, b) in enumerate(zip(self.weights, self.biases)):
            x = x @ w + b
            if layer < last:
                x = np.tanh(x) if self.activation == "tanh" else np.maximum(x, 0.0)
        return x

    def write(self, path: Path) -> None:
        # float32: PyTorch's own precision, so nothing is lost, in half the bytes
        arrays: dict[str, np.ndarray] = {"scale": self.scale.astype(np.float32)}
        for i, (w, b) in enumerate(zip(self.weights, self.biases)):
            arrays[f"w{i}"] = w.astype(np.float32)
            arrays[f"b{i}"] = b.astype(np.float32)
        meta = dict(self.meta) | {"activation": self.activation, "layers": len(self.weights)}
        arrays["meta"] = np.frombuffer(json.dumps(meta, sort_keys=True).encode(), np.uint8)
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("wb") as handle:  # np.savez would add ".npz" to a name without it
            np.savez(handle, **arrays)  # type: ignore[arg-type]  # numpy's stub misreads **kwds

    @classmethod
    def read(cls, path: Path) -> Self:
        from coloretto.bots.kernel import ACTION_FEATURES
        from coloretto.encoding import OBSERVATION_SIZE

        try:
            with np.load(path, allow_pickle=False) as data:
                arrays = {name: data[name] for name in data.files}
        except FileNotFoundError:
            raise PolicyFileError(f"no policy file {path}") from None
        except (OSError, ValueError) as exc:
            raise PolicyFileError(
                f"{path} is not a policy file written by coloretto train-ppo: {exc}"
            ) from None
        try:
            meta = json.loads(bytes(arrays["meta"]).decode())
            layers = int(meta["layers"])
            activation = str(meta["activation"])
            scale = arrays["scale"].astype(np.float64)
            weights = tuple(arrays[f"w{i}"].astype(np.float64) for i in range(layers))
            biases = tuple(arrays[f"b{i}"].astype(np.float64) for i in range(layers))
        except (KeyError, ValueError, TypeError) as exc:
            raise PolicyFileError(f"{path} lacks part of a policy ({exc})") from None
        if activation not in ACTIVATIONS:
            raise PolicyFileError(
                f"{path}: activation must be one of {', '.join(ACTIVATIONS)}, not {activation!r}"
            )
        inputs = OBSERVATION_SIZE + ACTION_FEATURES
        if scale.shape != (inputs,):
            raise PolicyFileError(
                f"{path} was made for {scale.shape[0] if scale.ndim else '?'} inputs, this version's "
                f"network takes {inputs} (the observation and the action features): train it again"
            )
        for i, (w, b) in enumerate(zip(weights, biases)):
            if w.ndim != 2 or w.shape[0] != inputs or b.shape != (w.shape[1],):
                raise PolicyFileError(f"{path}: layer {i} has shape {w.shape} after {inputs} inputs")
            inputs = w.shape[1]
        if inputs != NUM_ACTIONS:
            raise PolicyFileError(f"{path} ends in {inputs} logits, not one per action ({NUM_ACTIONS})")
        return cls(scale, weights, biases, activation, meta)


_cache: dict[Path, PPOPolicy] = {}


def load_policy(path: Path = POLICY_FILE) -> PPOPolicy:
    """The policy in ``path``, read once per process."""
    path = path.resolve()
    if path not in _cache:
        _cache[path] = PPOPolicy.read(path)
    return _cache[path]


@dataclass(frozen=True)
class PPOOptions:
    path: Path = POLICY_FILE
    sample: bool = False


def read_ppo_options(options: str) -> tuple[None, PPOOptions]:
    """``""``, ``"FILE.npz"``, ``"sample"`` or ``"FILE.npz,sample"`` → options (the file is read at build)."""
    named, sample = _parse_ppo_options(options)
    path = Path(named).expanduser() if named else POLICY_FILE
    if not path.is_file():
        raise BotSpecError(f"no policy file {path} (coloretto train-ppo writes one)")
    return None, PPOOptions(path, sample)


def ppo_files(options: str) -> tuple[str, ...]:
    """The policy file a ``ppo`` name's options name (none: the shipped one), read
    from the text alone: a server refuses such a name before any file is opened."""
    named, _sample = _parse_ppo_options(options)
    return (named,) if named else ()


def _parse_ppo_options(options: str) -> tuple[str, bool]:
    """(the policy file named, '' if none; sample)."""
    named = ""
    sample = False
    for part in (p.strip() for p in options.split(",") if p.strip()):
        if part == "sample":
            sample = True
        elif part.endswith(".npz"):
            named = part
        else:
            raise BotSpecError(f"ppo takes a policy file (FILE.npz) and 'sample', not {part!r}")
    return named, sample


class PPOBot(Bot):
    """Plays the trained policy's best legal action (or samples it with ``sample``)."""

    name = "ppo"

    def __init__(self, seed: int | None = None, options: PPOOptions | None = None) -> None:
        super().__init__(seed)
        self.options = options or PPOOptions()
        try:
            self.policy = load_policy(self.options.path)
        except PolicyFileError as exc:
            raise BotSpecError(str(exc)) from None
        from coloretto.encoding import OBSERVATION_SIZE

        self._vector = np.zeros(OBSERVATION_SIZE, np.float32)

    @classmethod
    def from_spec(cls, spec: BotSpec, seed: int | None) -> Self:
        options = spec.settings if isinstance(spec.settings, PPOOptions) else None
        bot = cls(seed, options)
        bot.name = spec.name
        return bot

    def choose(self, observation: Observation) -> Action:
        from coloretto.bots.kernel import action_features
        from coloretto.encoding import encode_observation

        actions = observation.legal_actions
        if len(actions) == 1:
            return actions[0]
        inputs = np.concatenate([encode_observation(observation, self._vector), action_features(observation)])
        logits = self.policy.logits(inputs)
        legal = np.array([a.id for a in actions])
        chosen = logits[legal]
        if not self.options.sample:
            return actions[int(np.argmax(chosen))]  # argmax keeps the first of equal logits
        weights = np.exp(chosen - chosen.max())
        return actions[_draw(self.rng.random() * float(weights.sum()), weights)]


def _draw(point: float, weights: np.ndarray) -> int:
    return min(int(np.searchsorted(np.cumsum(weights), point, side="right")), len(weights) - 1)
