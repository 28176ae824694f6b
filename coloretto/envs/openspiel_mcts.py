"""``openspiel-mcts``: OpenSpiel's own C++ MCTSBot with random rollouts, seated
as one of our bots so that ours can be compared with the generic algorithm a
researcher would pick.

Names: ``openspiel-mcts:2000`` (simulations per move) or
``openspiel-mcts:0.5s`` (wall-clock seconds per move), read as any
:class:`~coloretto.bots.limits.Limit` (``openspiel-mcts:2000,0.5s``: whichever
ends first); plain ``openspiel-mcts`` is 1000 simulations (the bot table,
:mod:`coloretto.bots.registry`). Needs ``pip install coloretto[rl]``, imported
only when the bot is built.

It searches the ``python_coloretto`` game (win utility) from the observed
position, draws being chance nodes.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Self

from coloretto.actions import Action, action_from_id
from coloretto.bots.base import Bot, BotSpec, BotSpecError
from coloretto.bots.limits import Limit
from coloretto.game import Observation
from coloretto.rules import Rules

UCT_C = 2.0
MAX_MEMORY_MB = 1000
#: OpenSpiel's MCTSBot wants both numbers: these stand for "no such limit"
_UNLIMITED_SIMULATIONS = 10**9
_UNLIMITED_SECONDS = -1.0


class OpenSpielMCTSBot(Bot):
    name = "openspiel-mcts"

    def __init__(self, seed: int | None, limit: Limit) -> None:
        super().__init__(seed)
        try:
            import pyspiel

            import coloretto.envs.openspiel  # noqa: F401  (registers python_coloretto)
        except ImportError:
            raise BotSpecError("openspiel-mcts needs OpenSpiel: pip install 'coloretto[rl]'") from None
        self._pyspiel = pyspiel
        self.limit: Limit = limit
        self.simulations = limit.iterations if limit.iterations is not None else _UNLIMITED_SIMULATIONS
        self.seconds = limit.time if limit.time is not None else _UNLIMITED_SECONDS
        self._games: dict[Rules, Any] = {}

    @classmethod
    def from_spec(cls, spec: BotSpec, seed: int | None) -> Self:
        assert spec.limit is not None, spec
        return cls(seed, spec.limit)

    def _game(self, rules: Rules) -> Any:
        game = self._games.get(rules)
        if game is None:
            from coloretto.envs.openspiel import SHORT_NAME, params_from_rules

            # the search looks at this game alone, whatever match it belongs to
            params = params_from_rules(dataclasses.replace(rules, match_games=1))
            game = self._games[rules] = self._pyspiel.load_game(SHORT_NAME, params)
        return game

    def choose(self, observation: Observation) -> Action:
        actions = observation.legal_actions
        if len(actions) == 1:
            return actions[0]
        pyspiel = self._pyspiel
        game = self._game(observation.rules)
        state = game.state_from_observation(observation)
        seed = self.rng.randrange(2**31)
        evaluator = pyspiel.RandomRolloutEvaluator(1, seed)
        bot = pyspiel.MCTSBot(
            game,
            evaluator,
            UCT_C,
            self.simulations,
            MAX_MEMORY_MB,
            False,
            seed,
            False,
            pyspiel.ChildSelectionPolicy.UCT,
            self.seconds,
        )
        # step_with_policy keeps the GIL: MCTSBot.step releases it, and
        # cloning a Python game's state without the GIL crashes the process.
        _, action_id = bot.step_with_policy(state)
        return action_from_id(int(action_id))
