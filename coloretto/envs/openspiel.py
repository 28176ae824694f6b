"""Coloretto as an OpenSpiel game, registered as ``python_coloretto``.

    >>> import pyspiel
    >>> import coloretto.envs.openspiel  # registers the game
    >>> game = pyspiel.load_game("python_coloretto", {"players": 3, "table": "violet"})

Every random event is an explicit chance node with its true probability:
the starting colours (one chance node per starting card), the first player,
each draw (the card turned over), and the golden joker's bonus card. The
deck order therefore never exists in the state, and since every chance
outcome is seen by all, the game is one of *perfect information* with chance
(like backgammon): the observation tensor describes the state completely.

With starting colours chosen (``starting_colours="chosen"``) nobody is dealt
one: after the first player's chance node the seats choose, as ordinary
player actions (ids 19–25, ``s:C``), before round 1.

Parameters: every rule option of :data:`coloretto.rules.RULE_OPTIONS` by name
(``players``, ``edition``, ``table`` …; ``cards_under_last_round``: -1 for the
edition's number), and ``utility``: ``"win"`` (the winners share 1, default)
or ``"margin"`` (own total minus the best other total). An episode is one
game: ``match_games`` must be 1 (play a match's games as episodes).

Illegal actions follow OpenSpiel's convention, not the penalty rule of the
PettingZoo and Gymnasium environments: ``apply_action`` with an action that
is not in ``legal_actions()`` (or a chance outcome that is not in
``chance_outcomes()``) raises a ValueError, the engine's
:class:`~coloretto.game.IllegalActionError` saying which rule it breaks, and
leaves the state and its history unchanged. OpenSpiel's algorithms only
apply legal actions, so nothing is penalised or truncated here.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyspiel

from coloretto.actions import DRAW, NUM_ACTIONS, Action, ActionKind, action_from_id
from coloretto.cards import COLLECTABLE_KINDS, card_name
from coloretto.encoding import OBSERVATION_SIZE, encode_observation, one_game
from coloretto.game import Game, GameSetup, IllegalActionError, Observation, earns_bonus_card, stand_in_deck
from coloretto.rules import MAX_PLAYERS, MIN_PLAYERS, RULE_OPTIONS, RuleOption, Rules
from coloretto.text import board_text

SHORT_NAME = "python_coloretto"
#: an optional number's parameter for None (OpenSpiel parameters cannot be None)
NO_NUMBER = -1


def _parameter(option: RuleOption) -> int | str:
    """The option's default as an OpenSpiel parameter (an int or a str)."""
    default = option.default
    return NO_NUMBER if default is None and option.optional else default


_DEFAULT_PARAMS: dict[str, Any] = {
    **{option.name: _parameter(option) for option in RULE_OPTIONS},
    "utility": "win",
}
UTILITIES = ("win", "margin")
_MARGIN_BOUND = 200.0  #: no total is ever beyond ±100, so no margin beyond ±200
#: at most: every card drawn and placed, five takes a round for as many rounds
#: as cards, jokers named, plus the chance nodes of the deal and the draws.
_MAX_GAME_LENGTH = 1000

_GAME_TYPE = pyspiel.GameType(
    short_name=SHORT_NAME,
    long_name="Python Coloretto",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
    information=pyspiel.GameType.Information.PERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.GENERAL_SUM,
    reward_model=pyspiel.GameType.RewardModel.TERMINAL,
    max_num_players=MAX_PLAYERS,
    min_num_players=MIN_PLAYERS,
    provides_information_state_string=True,
    provides_information_state_tensor=True,
    provides_observation_string=True,
    provides_observation_tensor=True,
    parameter_specification=_DEFAULT_PARAMS,
)


def rules_from_params(params: dict[str, Any]) -> Rules:
    """The rules of the game's parameters (the others at their defaults).

    Raises ValueError (a RulesError naming the option) for a value the rules
    refuse, and for a match: an episode is one game.
    """
    values = {}
    for option in RULE_OPTIONS:
        value = params.get(option.name, _DEFAULT_PARAMS[option.name])
        if option.optional and value == NO_NUMBER:
            value = None
        values[option.name] = value
    return one_game(Rules(**values), SHORT_NAME)


def params_from_rules(rules: Rules, utility: str = "win") -> dict[str, Any]:
    """The game parameters that load these rules: the inverse of :func:`rules_from_params`."""
    params: dict[str, Any] = {
        name: NO_NUMBER if value is None else value for name, value in rules.to_dict().items()
    }
    params["utility"] = utility
    return params


class ColorettoGame(pyspiel.Game):
    """The OpenSpiel game object: rules from parameters, states on demand."""

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        merged = {**_DEFAULT_PARAMS, **(params or {})}
        unknown = set(merged) - set(_DEFAULT_PARAMS)
        if unknown:
            raise ValueError(f"unknown parameter(s) for {SHORT_NAME}: {', '.join(sorted(unknown))}")
        if merged["utility"] not in UTILITIES:
            raise ValueError(f"utility must be one of {', '.join(UTILITIES)}, not {merged['utility']!r}")
        self.rules = rules_from_params(merged)
        self.utility = str(merged["utility"])
        win = self.utility == "win"
        info = pyspiel.GameInfo(
            num_distinct_actions=NUM_ACTIONS,
            max_chance_outcomes=COLLECTABLE_KINDS,
            num_players=self.rules.players,
            min_utility=0.0 if win else -_MARGIN_BOUND,
            max_utility=1.0 if win else _MARGIN_BOUND,
            max_game_length=_MAX_GAME_LENGTH,
        )
        super().__init__(_GAME_TYPE, info, params or {})

    def new_initial_state(self) -> ColorettoState:
        return ColorettoState(self)

    def state_from_observation(self, observation: Observation) -> ColorettoState:
        """A state in the observed position (no history): what a bot searches."""
        state = ColorettoState(self)
        state.engine = Game.from_observation(observation)
        return state

    def make_py_observer(
        self, iig_obs_type: pyspiel.IIGObservationType | None = None, params: dict[str, Any] | None = None
    ) -> ColorettoObserver:
        if params:
            raise ValueError(f"observation parameters are not supported: {params}")
        perfect_recall = bool(iig_obs_type is not None and iig_obs_type.perfect_recall)
        return ColorettoObserver(perfect_recall)


class ColorettoState(pyspiel.State):
    """A state: first the deal (chance), then the engine's game."""

    def __init__(self, game: ColorettoGame) -> None:
        super().__init__(game)
        self.rules: Rules = game.rules
        self.utility = game.utility
        self.starting: list[list[int]] = [[] for _ in range(self.rules.players)]
        self.engine: Game | None = None
        #: a draw (or a take of the golden joker) waiting for its card
        self.awaiting_card: Action | None = None

    # ------------------------------------------------------------ the deal

    def _dealt(self) -> list[int]:
        return [card for hand in self.starting for card in hand]

    def _dealing_seat(self) -> int | None:
        """The seat whose starting colour chance deals next (None once all are
        dealt, and always when the players choose them instead)."""
        if self.rules.chooses_starting_colours:
            return None
        per = self.rules.starting_cards_per_player
        for seat, hand in enumerate(self.starting):
            if len(hand) < per:
                return seat
        return None

    # ---------------------------------------------------------- the API

    def current_player(self) -> int:
        engine = self.engine
        if engine is None or self.awaiting_card is not None:
            return pyspiel.PlayerId.CHANCE
        if engine.is_over:
            return pyspiel.PlayerId.TERMINAL
        return int(engine.to_move)  # type: ignore[arg-type]

    def _legal_actions(self, player: int) -> list[int]:
        assert self.engine is not None and player == self.engine.to_move
        return sorted(action.id for action in self.engine.legal_actions)

    def chance_outcomes(self) -> list[tuple[int, float]]:
        if self.engine is not None:
            return self.engine.chance_outcomes()
        if self._dealing_seat() is not None:
            dealt = self._dealt()
            free = [c for c in range(self.rules.colours) if c not in dealt]
            return [(c, 1.0 / len(free)) for c in free]
        players = self.rules.players
        return [(seat, 1.0 / players) for seat in range(players)]

    def _apply_action(self, action: int) -> None:
        if self.engine is None:
            self._check_deal_outcome(action)
            seat = self._dealing_seat()
            if seat is not None:
                self.starting[seat].append(int(action))
            else:
                deck = stand_in_deck(self.rules, self.starting)
                starting = tuple(tuple(hand) for hand in self.starting)
                self.engine = Game(GameSetup(self.rules, deck, starting, int(action)))
            return
        if self.awaiting_card is not None:
            self.engine.push(self.awaiting_card, reveal=int(action))
            self.awaiting_card = None
            return
        chosen = action_from_id(int(action))
        if self._turns_over_a_card(chosen):
            if chosen not in self.engine.legal_actions:
                raise ValueError(f"illegal action {chosen}")
            self.awaiting_card = chosen
        else:
            self.engine.push(chosen)

    def _check_deal_outcome(self, action: int) -> None:
        """Refuse a deal outcome (a starting colour, the first player) that is
        not one of :meth:`chance_outcomes`, before anything is recorded. (The
        cards a draw turns over are checked by the engine.)"""
        outcomes = [outcome for outcome, _ in self.chance_outcomes()]
        if action not in outcomes:
            what = "starting colour" if self._dealing_seat() is not None else "first player"
            choices = ", ".join(map(str, outcomes))
            raise IllegalActionError(
                f"{action!r} is not a {what} that chance can give now: it gives {choices}"
            )

    def _turns_over_a_card(self, action: Action) -> bool:
        engine = self.engine
        assert engine is not None
        if action is DRAW:
            return True
        return action.kind is ActionKind.TAKE and earns_bonus_card(
            engine.rows[action.index], sum(engine.unseen_composition())
        )

    def _action_to_string(self, player: int, action: int) -> str:
        edition = self.rules.edition
        if player == pyspiel.PlayerId.CHANCE:
            if self.engine is None:
                if self._dealing_seat() is not None:
                    return f"start {card_name(action, edition)}"
                return f"first player {action}"
            return f"card {card_name(action, edition)}"
        return action_from_id(action).notation(edition)

    def is_terminal(self) -> bool:
        return self.engine is not None and self.engine.is_over

    def returns(self) -> list[float]:
        players = self.rules.players
        if not self.is_terminal():
            return [0.0] * players
        engine = self.engine
        assert engine is not None
        if self.utility == "win":
            winners = engine.winners()
            return [1.0 / len(winners) if seat in winners else 0.0 for seat in range(players)]
        totals = [s.total for s in engine.scores()]
        return [
            float(totals[seat] - max(t for other, t in enumerate(totals) if other != seat))
            for seat in range(players)
        ]

    def __str__(self) -> str:
        if self.engine is None:
            if self.rules.chooses_starting_colours:
                return "drawing the first player; then the starting colours are chosen"
            hands = "; ".join(
                " ".join(card_name(c, self.rules.edition) for c in hand) or "-" for hand in self.starting
            )
            return f"dealing starting cards: {hands}"
        seat = self.engine.to_move if self.engine.to_move is not None else 0
        text = board_text(self.engine.observation(seat))
        if self.awaiting_card is not None:
            text += f"\nawaiting the card for {self.awaiting_card}"
        return text


class ColorettoObserver:
    """Observation (and information-state) tensors and strings.

    The tensor is :func:`coloretto.envs.encoding.encode_observation` of the
    player's observation, plus one flag: a card is about to be turned over.
    The game is Markov in this public state, so the information-state tensor
    is the same vector; the information-state *string* is the full history
    (perfect recall).
    """

    def __init__(self, perfect_recall: bool) -> None:
        self.perfect_recall = perfect_recall
        self.tensor = np.zeros(OBSERVATION_SIZE + 1, np.float32)
        self.dict = {
            "observation": self.tensor[:OBSERVATION_SIZE],
            "awaiting_card": self.tensor[OBSERVATION_SIZE:],
        }

    def set_from(self, state: ColorettoState, player: int) -> None:
        self.tensor.fill(0.0)
        if state.engine is None:
            return
        encode_observation(state.engine.observation(player), self.dict["observation"])
        self.tensor[OBSERVATION_SIZE] = state.awaiting_card is not None

    def string_from(self, state: ColorettoState, player: int) -> str:
        if self.perfect_recall:
            return f"seat {player}: {state.history_str()}"
        return f"seat {player}\n{state}"


pyspiel.register_game(_GAME_TYPE, ColorettoGame)
