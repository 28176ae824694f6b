"""Coloretto as a vectorised environment: ``num_envs`` games stepped together
in compiled code (the search kernel's rules), NumPy arrays in and out.

Two faces, with the observation vector and the action ids of every other
environment (:mod:`coloretto.envs.encoding`, ``docs/research/environments.md``):

* :class:`ColorettoVectorEnv`, multi-agent as in Pgx: the caller plays every
  seat; each step plays the action of each game's seat to move and returns
  every seat's reward::

      >>> import numpy as np
      >>> from coloretto.envs.vector import ColorettoVectorEnv
      >>> env = ColorettoVectorEnv(1024, players=4)
      >>> obs, info = env.reset(seed=7)  # from each game's seat to move
      >>> obs.shape, info["action_mask"].shape
      ((1024, 183), (1024, 26))
      >>> noise = np.random.default_rng(0).random((1024, 26))
      >>> actions = np.argmax(noise * info["action_mask"], axis=1)  # random legal actions
      >>> obs, rewards, terminated, truncated, info = env.step(actions)
      >>> rewards.shape  # every seat's
      (1024, 4)

* :class:`ColorettoVectorGymEnv`, a :class:`gymnasium.vector.VectorEnv`: the
  learner plays one seat of each game against compiled opponents
  (``"random"``, ``"playout"``: the search's playout policy, ``"greedy"``: a
  C copy of :class:`coloretto.bots.simple.GreedyBot`).

Conventions, the same in both faces:

* **Automatic reset, same step** (gymnasium's ``AutoresetMode.SAME_STEP``): the
  step that ends a game (over, or truncated after ``max_steps``) returns that
  game's reward, ``terminated``/``truncated`` True, and already the first
  observation of the next game in its slot; the ended game's last observation
  is ``info["final_obs"][i]`` (a ``(num_envs, 183)`` array, valid where
  ``info["_final_obs"]`` is True), and ``info["final_info"]`` holds each
  ended game's ``totals`` and ``win_shares`` for every seat (and, in the
  single-agent face, ``won``: the learner's win share), valid where
  ``info["_final_info"]`` is True. Every step is a real move.
* **Seeds:** ``reset(seed)`` seeds each slot's generator from the seed and the
  slot's index; every game a slot deals after that (deck, starting colours,
  first player, the learner's seat with ``seat=None``, the opponents' random
  choices) comes from its generator, so the same seed gives the same games.
  A ``reset()`` without a seed deals on from the slots' generators (the first
  one, if none was ever given, seeds them from the operating system).
* **Illegal actions** (legal ids of the action space that the rules forbid
  now): the rule of every environment (:mod:`coloretto.envs.encoding`,
  ``docs/research/environments.md``): they change nothing, cost the acting seat
  ``illegal_penalty`` that step, and the same seat acts again
  (``illegal="raise"``: a ValueError, nothing played); a game is truncated
  after ``max_steps`` actions. The single-agent face counts the learner's, with
  the environments' default and least ``max_steps``
  (:func:`~coloretto.envs.encoding.least_max_steps`); the multi-agent face
  counts every seat's, so its default and least are that many times the number
  of seats, and a seat that stalls a game alone pays more than any final reward.
  Ids outside 0–25, wrong shapes and non-integer dtypes raise ``ValueError``.
* **Rewards** at the end of a game: ``"margin"`` (own total minus the best
  other) or ``"win"`` (1/k to each of k winners, -1/(n-k) to the others), as
  :func:`coloretto.envs.encoding.final_rewards`.
* Every rule option is a keyword (``edition="modern"`` …), 2 to 5 players; an
  episode is one game, so ``match_games`` must be 1.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space

from coloretto.actions import NUM_ACTIONS
from coloretto.bots import _kernel
from coloretto.bots.kernel import PLAYER, rules_config, state_from_game
from coloretto.bots.mcts_options import EXPLORE, EXPLORE_RANGE, TAKE_AT, TAKE_RANGE
from coloretto.cards import LAST_ROUND, full_composition
from coloretto.encoding import (
    DEFAULT_ILLEGAL_PENALTY,
    LAYOUT,
    OBSERVATION_HIGH,
    OBSERVATION_LOW,
    OBSERVATION_SIZE,
    OFFSETS,
    REWARDS,
    check_illegal_rule,
    check_seed,
    one_game,
)
from coloretto.game import Game
from coloretto.rules import Rules

#: the blocks of encoding.LAYOUT in the order of the kernel's OB_* slots
_BLOCKS = (
    "seat_present",
    "to_move",
    "row_present",
    "row_capacity",
    "row_taken",
    "row_cards",
    "drawn_card",
    "jokers_to_name",
    "collections",
    "out_this_round",
    "scores",
    "unseen",
    "removed",
    "deck",
    "colours_in_play",
    "round",
    "start_picks_left",
    "first_player",
)
if tuple(name for name, _ in LAYOUT) != _BLOCKS:  # pragma: no cover - a layout changed without the kernel
    raise RuntimeError("coloretto.envs.encoding.LAYOUT changed: update coloretto.envs.vector and the kernel")

#: the compiled opponents of the single-agent face, by name
OPPONENTS = {
    "random": _kernel.OPPONENT_RANDOM,
    "playout": _kernel.OPPONENT_PLAYOUT,
    "greedy": _kernel.OPPONENT_GREEDY,
}

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def _offsets() -> np.ndarray:
    return np.array([*(OFFSETS[name] for name in _BLOCKS), OBSERVATION_SIZE], dtype=np.int64)


def slot_seeds(seed: int, num_envs: int) -> np.ndarray:
    """Each slot's generator seed: a mix (splitmix64) of the reset seed and the
    slot's index, so that slot i deals the same games whatever ``num_envs`` is."""
    checked = check_seed(seed)
    if checked is None:
        raise ValueError("slot_seeds needs a seed, not None")
    base = np.random.SeedSequence(checked).generate_state(1, np.uint64)[0]
    with np.errstate(over="ignore"):
        z = base + (np.arange(num_envs, dtype=np.uint64) + np.uint64(1)) * _GOLDEN
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


#: the playout knobs' ranges: those of the bots' ``take=`` and ``explore=`` options
_KNOB_RANGES = {"take_at": ("take", TAKE_RANGE), "explore": ("explore", EXPLORE_RANGE)}


def _check_knob(name: str, value: object) -> float:
    """A playout knob checked: a finite number in its bot option's range."""
    option, (low, high) = _KNOB_RANGES[name]
    if (
        isinstance(value, bool | np.bool_)
        or not isinstance(value, int | float | np.integer | np.floating)
        or not low <= value <= high  # NaN fails too; infinities lie outside
    ):
        raise ValueError(
            f"{name} must be a number in [{low:g}, {high:g}], the range of the bots' {option}=, not {value!r}"
        )
    return float(value)


def _fresh_seed() -> int:
    return int(np.random.SeedSequence().generate_state(1, np.uint64)[0])


class _Games:
    """The compiled games and the arrays they write into (shared by both faces)."""

    def __init__(
        self,
        num_envs: int,
        rules: Rules,
        opponent: int,
        seat: int | None,
        reward: str,
        illegal: str,
        illegal_penalty: float,
        max_steps: int | None,
        take_at: float,
        explore: float,
    ) -> None:
        if isinstance(num_envs, bool) or not isinstance(num_envs, int | np.integer) or num_envs < 1:
            raise ValueError(f"num_envs must be a positive integer, not {num_envs!r}")
        if reward not in REWARDS:
            raise ValueError(f"reward must be one of {', '.join(REWARDS)}, not {reward!r}")
        # The multi-agent face counts every seat's actions against one max_steps, so it
        # needs the single seat's bound once per seat: a seat that stalls alone still
        # pays more illegal actions than any final reward is worth.
        seats = rules.players if opponent == _kernel.OPPONENT_NONE else 1
        max_steps = check_illegal_rule(illegal, illegal_penalty, max_steps, seats)
        self.illegal_rule = illegal
        self.rules = rules
        self.num_envs = n = int(num_envs)
        box = full_composition(rules.players, rules.edition)
        box[LAST_ROUND] = 0  # the kernel's state places the last-round card (BEFORE_LR)
        template = state_from_game(Game.new(rules, seed=0))
        self.core = _kernel.VectorGames(
            n,
            rules_config(rules, take_at, explore),
            template,
            np.array(box, dtype=np.int64),
            rules.starting_cards_per_player,
            rules.chooses_starting_colours,
            _offsets(),
            opponent,
            -1 if seat is None else seat,
            _kernel.REWARD_WIN if reward == "win" else _kernel.REWARD_MARGIN,
            float(illegal_penalty),
            int(max_steps),
        )
        self.obs = np.zeros((n, OBSERVATION_SIZE), np.float32)
        self.masks = np.zeros((n, NUM_ACTIONS), np.int8)
        self.final_obs = np.zeros((n, OBSERVATION_SIZE), np.float32)
        self.final_result = np.zeros((n, _kernel.RESULT_SIZE), np.float64)
        self.rewards = np.zeros((n, rules.players), np.float64)
        self.terminated = np.zeros(n, np.bool_)
        self.truncated = np.zeros(n, np.bool_)
        self.illegal = np.zeros(n, np.bool_)
        self._views = (
            self.terminated.view(np.uint8),
            self.truncated.view(np.uint8),
            self.illegal.view(np.uint8),
        )
        self._seeded = False

    def reset(self, seed: int | None) -> None:
        # without a seed, the slots deal on from their generators (seeded from the
        # operating system's entropy the first time), so one seed fixes every later reset
        if seed is not None or not self._seeded:
            self.core.seed(slot_seeds(_fresh_seed() if seed is None else seed, self.num_envs))
            self._seeded = True
        self.core.deal(self.obs, self.masks)
        self.terminated[:] = False
        self.truncated[:] = False
        self.illegal[:] = False

    def action_features(self) -> np.ndarray:
        out = np.empty((self.num_envs, _kernel.ACTION_FEATURES), np.float64)
        self.core.action_features(out)
        return out

    def step(self, actions: Any) -> None:
        actions = check_actions(actions, self.num_envs)
        if self.illegal_rule == "raise":
            wrong = np.flatnonzero(self.masks[np.arange(self.num_envs), actions] == 0)
            if wrong.size:
                i = int(wrong[0])
                legal = ", ".join(str(a) for a in np.flatnonzero(self.masks[i]))
                raise ValueError(
                    f"illegal action {int(actions[i])} in game {i} (and {wrong.size - 1} more): "
                    f"legal actions there: {legal or 'none (not this seat to move)'}"
                )
        self.core.step(
            actions,
            self.obs,
            self.masks,
            self.rewards,
            *self._views,
            self.final_obs,
            self.final_result,
        )

    def load(self, index: int, game: Game, seat: int | None = None) -> None:
        """Put the core's fresh deal ``game`` into slot ``index`` (the same game
        as ``Game(game.setup)``); the observations are written again."""
        if not self._seeded:
            raise RuntimeError("call reset() before load(): the slots' generators are seeded there")
        if len(game):
            raise ValueError("load a game before its first action (Game.new or Game(setup))")
        if game.rules != self.rules:
            raise ValueError("the game is played by other rules than this environment's")
        deck = np.array([card for card in game.setup.deck if card != LAST_ROUND], dtype=np.int64)
        self.core.load(
            index, state_from_game(game), deck, game.setup.first_player, -1 if seat is None else seat
        )
        self.core.settle(self.obs, self.masks)

    def info(self) -> dict[str, Any]:
        done = self.terminated | self.truncated
        players = self.rules.players
        over = self.terminated.copy()
        return {
            "action_mask": self.masks.copy(),
            "current_player": self.core.states[:, PLAYER].copy(),
            "illegal_action": self.illegal.copy(),
            "_illegal_action": self.illegal.copy(),
            "final_obs": self.final_obs.copy(),
            "_final_obs": done,
            # the games that ended this step (terminated rows only): every seat's
            # total and win share (1/k for each of k winners, by the tie-break)
            "final_info": {
                "totals": self.final_result[:, :players].copy(),
                "_totals": over,
                "win_shares": self.final_result[:, _kernel.SHARES : _kernel.SHARES + players].copy(),
                "_win_shares": over,
            },
            "_final_info": over,
        }


def check_actions(actions: Any, num_envs: int) -> np.ndarray:
    """``actions`` as an int64 array of shape (num_envs,), or a ValueError saying what is wrong."""
    array = np.asarray(actions)
    if array.shape != (num_envs,):
        raise ValueError(f"actions must have shape ({num_envs},), one per game, not {array.shape}")
    if array.dtype.kind not in "iu":
        raise ValueError(f"actions must be integer action ids, not {array.dtype}")
    if num_envs and (array.min() < 0 or array.max() >= NUM_ACTIONS):
        bad = array[(array < 0) | (array >= NUM_ACTIONS)][0]
        raise ValueError(f"action ids lie in 0 to {NUM_ACTIONS - 1}, not {bad}")
    return np.ascontiguousarray(array, dtype=np.int64)


class ColorettoVectorEnv:
    """Multi-agent: ``num_envs`` games, every seat played by the caller (see the module docstring).

    ``reset`` and ``step`` return observations ``(num_envs, 183)`` float32 from
    each game's seat to move, with ``info["action_mask"]`` ``(num_envs, 26)``
    int8 and ``info["current_player"]`` ``(num_envs,)``; ``step`` returns
    rewards ``(num_envs, players)`` for every seat.
    """

    autoreset_mode = AutoresetMode.SAME_STEP

    def __init__(
        self,
        num_envs: int,
        players: int = 4,
        reward: str = "margin",
        seed: int | None = None,
        illegal: str = "penalty",
        illegal_penalty: float = DEFAULT_ILLEGAL_PENALTY,
        max_steps: int | None = None,
        **rule_options: Any,
    ) -> None:
        self.rules = one_game(Rules(players=players, **rule_options), "ColorettoVectorEnv")
        self.num_envs = num_envs
        self.players = players
        self._games = _Games(
            num_envs,
            self.rules,
            _kernel.OPPONENT_NONE,
            None,
            reward,
            illegal,
            illegal_penalty,
            max_steps,
            TAKE_AT,
            EXPLORE,
        )
        self.single_observation_space = spaces.Box(
            OBSERVATION_LOW, OBSERVATION_HIGH, (OBSERVATION_SIZE,), np.float32
        )
        self.single_action_space = spaces.Discrete(NUM_ACTIONS)
        self._seed = check_seed(seed)
        self._ready = False

    def reset(self, seed: int | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        # the constructor's seed seeds the first reset; later ones without a seed deal on
        seed = check_seed(seed)
        self._games.reset(self._seed if seed is None else seed)
        self._seed = None
        self._ready = True
        return self._games.obs.copy(), self._games.info()

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        if not self._ready:
            raise RuntimeError("call reset() before step()")
        games = self._games
        games.step(actions)
        return (
            games.obs.copy(),
            games.rewards.copy(),
            games.terminated.copy(),
            games.truncated.copy(),
            games.info(),
        )

    def action_masks(self) -> np.ndarray:
        """Legal actions of each game's seat to move, as booleans ``(num_envs, 26)``."""
        return self._games.masks.astype(np.bool_)

    def action_features(self) -> np.ndarray:
        """What each row is worth to each game's seat to move and to its best rival,
        taken now or with the drawn card, and a draw's expected gain:
        ``(num_envs, ACTION_FEATURES)`` points (:func:`coloretto.bots.kernel.action_features`
        of one position), inputs a learned policy can use beside the observation."""
        return self._games.action_features()

    def observe(self, seats: Any) -> tuple[np.ndarray, np.ndarray]:
        """Each game's observation ``(num_envs, 183)`` and mask ``(num_envs, 26)``
        from ``seats[i]`` (absolute seats; the mask is empty unless the seat is to
        move): every seat's view, for a critic that sees them all."""
        if not self._ready:
            raise RuntimeError("call reset() before observe()")
        array = np.asarray(seats)
        if array.shape != (self.num_envs,) or array.dtype.kind not in "iu":
            raise ValueError(
                f"seats must be {self.num_envs} integers, not {array.dtype} of shape {array.shape}"
            )
        if array.min() < 0 or array.max() >= self.players:
            raise ValueError(f"seats lie in 0 to {self.players - 1}")
        obs = np.empty((self.num_envs, OBSERVATION_SIZE), np.float32)
        masks = np.empty((self.num_envs, NUM_ACTIONS), np.int8)
        self._games.core.observe(obs, masks, np.ascontiguousarray(array, dtype=np.int64))
        return obs, masks

    def load(self, index: int, game: Game) -> tuple[np.ndarray, dict[str, Any]]:
        """Play the core's fresh deal ``game`` in slot ``index`` (checks against the Python environments)."""
        self._games.load(index, game)
        self._ready = True
        return self._games.obs.copy(), self._games.info()

    def close(self) -> None:
        self._ready = False


class ColorettoVectorGymEnv(gymnasium.vector.VectorEnv[np.ndarray, np.ndarray, np.ndarray]):
    """Single-agent, in gymnasium's ``VectorEnv`` API: the learner plays seat
    ``seat`` (None: a random seat each game, from the slot's generator) of
    every game against compiled opponents, ``"random"``, ``"playout"`` (with
    the playout policy's ``take_at``/``explore`` knobs, in [0, 100] and [0, 1]
    as the bots' ``take=`` and ``explore=``) or ``"greedy"``.
    The observation and action ids are :class:`coloretto.envs.gymnasium.ColorettoEnv`'s;
    ``info["seat"]`` is each game's learner seat."""

    # VectorEnv declares metadata as an attribute of each environment
    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": []}  # noqa: RUF012

    def __init__(
        self,
        num_envs: int,
        players: int = 4,
        opponent: str = "random",
        seat: int | None = 0,
        reward: str = "margin",
        illegal: str = "penalty",
        illegal_penalty: float = DEFAULT_ILLEGAL_PENALTY,
        max_steps: int | None = None,
        take_at: float = TAKE_AT,
        explore: float = EXPLORE,
        opponents: Sequence[str] | None = None,
        **rule_options: Any,
    ) -> None:
        if isinstance(opponents, str):  # as in ColorettoEnv: a str is a Sequence[str] of letters
            raise ValueError(
                f"opponents must be a list of {players - 1} opponent names, not the string {opponents!r} "
                f"(write opponent={opponents!r}, or opponents=[{opponents!r}] * {players - 1})"
            )
        if opponents is not None:
            # ColorettoEnv's keyword, so that gymnasium.make_vec takes the same ones: the
            # compiled games play one kind of opponent in every seat
            kinds = set(opponents)
            if len(kinds) != 1 or len(opponents) != players - 1:
                raise ValueError(
                    f"opponents must name one compiled opponent {players - 1} times "
                    f"({', '.join(OPPONENTS)}), not {list(opponents)!r}"
                )
            opponent = kinds.pop()
        self.rules = one_game(Rules(players=players, **rule_options), "ColorettoVectorGymEnv")
        if opponent not in OPPONENTS:
            raise ValueError(f"opponent must be one of {', '.join(OPPONENTS)}, not {opponent!r}")
        if seat is not None and (
            isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < players
        ):
            raise ValueError(f"seat must be 0 to {players - 1} or None, not {seat!r}")
        self._games = _Games(
            num_envs,
            self.rules,
            OPPONENTS[opponent],
            seat,
            reward,
            illegal,
            illegal_penalty,
            max_steps,
            _check_knob("take_at", take_at),
            _check_knob("explore", explore),
        )
        self.num_envs = num_envs
        self.opponent = opponent
        self._last_seats = np.zeros(num_envs, np.int64)
        self.single_observation_space = spaces.Box(
            OBSERVATION_LOW, OBSERVATION_HIGH, (OBSERVATION_SIZE,), np.float32
        )
        self.single_action_space = spaces.Discrete(NUM_ACTIONS)
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        self._ready = False

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        seed = check_seed(seed)
        super().reset(seed=seed)  # gymnasium takes a Python int only
        self._games.reset(seed)
        self._ready = True
        return self._games.obs.copy(), self._info()

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        if not self._ready:
            raise RuntimeError("call reset() before step()")
        games = self._games
        seats = (
            self._last_seats
        )  # a step's reward is the learner's in the game it played, not the next deal's
        games.step(actions)
        rewards = games.rewards[np.arange(self.num_envs), seats]
        info = self._info()
        return games.obs.copy(), rewards, games.terminated.copy(), games.truncated.copy(), info

    def _info(self) -> dict[str, Any]:
        info = self._games.info()
        del info["current_player"]
        final = info["final_info"]
        # the learner's win share in each game that ended this step (its seat there, not the next deal's)
        final["won"] = final["win_shares"][np.arange(self.num_envs), self._last_seats]
        final["_won"] = final["_win_shares"]
        seats = self._games.core.games[:, _kernel.GAME_SEAT].copy()
        info["seat"] = seats
        self._last_seats = seats
        return info

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions in each game (MaskablePPO's convention): (num_envs, 26) booleans."""
        return self._games.masks.astype(np.bool_)

    def action_features(self) -> np.ndarray:
        """What each row is worth to each game's seat to move and to its best rival,
        taken now or with the drawn card, and a draw's expected gain:
        ``(num_envs, ACTION_FEATURES)`` points (:func:`coloretto.bots.kernel.action_features`
        of one position), inputs a learned policy can use beside the observation."""
        return self._games.action_features()

    def load(self, index: int, game: Game, seat: int | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        """Put the core's fresh deal ``game`` into slot ``index`` with the learner
        in ``seat`` (the environment's seat if None), and let the opponents move
        up to the learner's turn: for checks against
        :class:`coloretto.envs.gymnasium.ColorettoEnv`. Returns every slot's
        observation and info, as ``reset`` does."""
        self._games.load(index, game, seat)
        self._ready = True
        return self._games.obs.copy(), self._info()
