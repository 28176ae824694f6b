"""``openspiel-mcts``: OpenSpiel's own C++ MCTSBot with random rollouts, seated
as one of our bots so that ours can be compared with the generic algorithm a
researcher would pick.

Names: ``openspiel-mcts:2000`` (simulations per move) or
``openspiel-mcts:0.5s`` (wall-clock seconds per move); plain
``openspiel-mcts`` is 1000 simulations. Needs ``pip install coloretto[rl]``.
It searches the ``python_coloretto`` game (win utility) from the observed
position, draws being chance nodes.
"""

from __future__ import annotations

from typing import Any

from coloretto.actions import Action, action_from_id
from coloretto.bots.base import Bot, BotSpecError, register_bot
from coloretto.game import Observation
from coloretto.rules import Rules

DEFAULT_SIMULATIONS = 1000
UCT_C = 2.0
MAX_MEMORY_MB = 1000
_UNLIMITED = 10**9


def parse_budget(options: str) -> tuple[int, float]:
    """(simulations, seconds) from '2000' or '0.5s'; seconds -1 means none."""
    text = options.strip().lower()
    if not text:
        return DEFAULT_SIMULATIONS, -1.0
    try:
        if text.endswith("ms"):
            seconds = float(text[:-2]) / 1000
        elif text.endswith("s"):
            seconds = float(text[:-1])
        else:
            simulations = int(text)
            if simulations < 1:
                raise ValueError
            return simulations, -1.0
    except ValueError:
        raise BotSpecError(
            f"openspiel-mcts budget {options!r}: give simulations (openspiel-mcts:2000) "
            "or seconds (openspiel-mcts:0.5s)"
        ) from None
    if seconds <= 0:
        raise BotSpecError(f"openspiel-mcts budget {options!r} must be more than zero seconds")
    return _UNLIMITED, seconds


class OpenSpielMCTSBot(Bot):
    name = "openspiel-mcts"

    def __init__(self, seed: int | None, simulations: int, seconds: float) -> None:
        super().__init__(seed)
        try:
            import pyspiel

            import coloretto.envs.openspiel  # noqa: F401  (registers python_coloretto)
        except ImportError:
            raise BotSpecError("openspiel-mcts needs OpenSpiel: pip install 'coloretto[rl]'") from None
        self._pyspiel = pyspiel
        self.simulations = simulations
        self.seconds = seconds
        if seconds > 0:
            self.time_budget = seconds
        self._games: dict[Rules, Any] = {}

    def _game(self, rules: Rules) -> Any:
        game = self._games.get(rules)
        if game is None:
            params = {
                "players": rules.players,
                "edition": rules.edition.value,
                "table": rules.table.value,
                "joker_timing": rules.joker_timing.value,
                "round_starter": rules.round_starter.value,
                "plus_colours": rules.plus_colours.value,
                "tie_break": rules.tie_break.value,
                "cards_under_last_round": -1
                if rules.cards_under_last_round is None
                else rules.cards_under_last_round,
            }
            game = self._games[rules] = self._pyspiel.load_game("python_coloretto", params)
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


def _factory(options: str, seed: int | None) -> Bot:
    simulations, seconds = parse_budget(options)
    return OpenSpielMCTSBot(seed, simulations, seconds)


register_bot(
    "openspiel-mcts",
    _factory,
    "OpenSpiel's C++ MCTS with random rollouts (openspiel-mcts:2000 or openspiel-mcts:0.5s)",
)
