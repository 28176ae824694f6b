"""``playout``: a playout policy of the search, played as a bot of its own.

The search values its leaves by playing games out with a cheap policy in the
compiled kernel; this bot plays that policy's move for the position it sees,
so that a playout policy's strength is measured in the arena like any bot's
(:func:`coloretto.bots.kernel.k_policy_action`). Names: ``playout`` (the
greedy playout, the search's default: take 6, 10 % random moves),
``playout:tuned`` (the tuned weights of ``coloretto/bots/playout.json``),
``playout:exact``, ``playout:random``, with the knobs ``take=12`` and
``explore=0`` (``playout:take=12,explore=0``), and ``weights=FILE.json``
(the tuned policy with the weights of another file, as ``coloretto
tune-playout`` writes them). The policy's random numbers (its random moves
and the noise on near-ties) come from the kernel's generator, seeded for
every move from the bot's own seeded generator: the same seed, the same moves.
"""

from __future__ import annotations

from typing import Self

import numpy as np

from coloretto.actions import Action, action_from_id
from coloretto.bots.base import Bot, BotSpec, BotSpecError
from coloretto.bots.playout_options import PlayoutFileError, PlayoutSettings, playout_knobs
from coloretto.game import Observation
from coloretto.rules import Rules


class PlayoutBot(Bot):
    """Plays a kernel playout policy's move (see the module docstring)."""

    name = "playout"

    def __init__(self, seed: int | None = None, settings: PlayoutSettings | None = None) -> None:
        super().__init__(seed)
        self.settings = settings or PlayoutSettings()
        self._configs: dict[Rules, np.ndarray] = {}

    @classmethod
    def from_spec(cls, spec: BotSpec, seed: int | None) -> Self:
        settings = spec.settings if isinstance(spec.settings, PlayoutSettings) else None
        return cls(seed, settings)

    def config(self, rules: Rules) -> np.ndarray:
        """The kernel's rules array this bot plays ``rules`` with (policy knobs and weights)."""
        from coloretto.bots import kernel as K

        cfg = self._configs.get(rules)
        if cfg is None:
            s = self.settings
            try:
                take, explore, weights = playout_knobs(
                    s.policy, s.take, s.explore, rules.players, s.weights_path()
                )
            except PlayoutFileError as exc:
                raise BotSpecError(str(exc)) from None
            cfg = self._configs[rules] = K.rules_config(rules, take, explore, weights)
        return cfg

    def choose(self, observation: Observation) -> Action:
        from coloretto.bots import kernel as K

        actions = observation.legal_actions
        if len(actions) == 1:
            return actions[0]
        cfg = self.config(observation.rules)
        K.k_seed(self.rng.getrandbits(64))
        action = action_from_id(
            K.k_policy_action(K.state_from_observation(observation), cfg, self.settings.policy)
        )
        assert action in actions, f"the playout policy chose {action}, not one of {actions}"
        return action
