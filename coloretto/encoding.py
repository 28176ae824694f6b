"""The fixed-length observation vector and the action encoding shared by the
research environments (documented in ``docs/research/environments.md``).

The vector is laid out for the largest game (5 seats, 5 rows, 7 colours) so
that one network fits every player count; seats are *relative*: block 0 is
the observing player, block 1 the next seat in turn order, and so on. Card
kinds are indexed as in :mod:`coloretto.cards` (7 colours, joker, golden
joker, "+2").
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from coloretto.actions import NUM_ACTIONS, Action, action_from_id
from coloretto.cards import COLLECTABLE_KINDS, COLOURS, EDITION_DECKS, Edition
from coloretto.game import Game, Observation
from coloretto.rules import MAX_PLAYERS, MIN_PLAYERS, SCORE_TABLES, Rules
from coloretto.scoring import PLUS_COLOURS, PLUS_TWO_POINTS

SEATS = MAX_PLAYERS
ROWS = MAX_PLAYERS
KINDS = COLLECTABLE_KINDS  #: 10 card kinds that can lie in a row or a collection

#: (name, length) of each block of the vector, in order.
LAYOUT: tuple[tuple[str, int], ...] = (
    ("seat_present", SEATS),  # 1 for each seat in the game
    ("to_move", SEATS),  # one-hot: the seat to act (all 0 once over)
    ("row_present", ROWS),  # 1 for each row in the game
    ("row_capacity", ROWS),  # cards the row holds at most (1..3)
    ("row_taken", ROWS),  # 1 if taken this round
    ("row_cards", ROWS * KINDS),  # per row, cards of each kind
    ("drawn_card", KINDS),  # one-hot: the card drawn and waiting to be placed
    ("jokers_to_name", 1),  # jokers the player to act must still name (variant)
    ("collections", SEATS * KINDS),  # per seat, cards of each kind (named jokers as their colour)
    ("out_this_round", SEATS),  # 1 if the seat has taken a row this round
    ("scores", SEATS),  # each seat's best score if the game ended now
    ("unseen", KINDS),  # cards not yet seen, by kind
    ("removed", KINDS),  # cards out of the game (2 players: untaken third rows)
    ("deck", 3),  # cards in the deck, cards before the last-round card, last-round flag
    ("colours_in_play", COLOURS),  # 1 for each colour in this game
    ("round", 1),  # round number, from 1
    # added with the starting-colours-chosen variant, after the older blocks so that their offsets hold
    ("start_picks_left", 1),  # starting colours still to be chosen before round 1 (variant; else 0)
    ("first_player", SEATS),  # one-hot: the seat that starts round 1
)
OBSERVATION_SIZE = sum(size for _, size in LAYOUT)
OFFSETS: dict[str, int] = {}
_offset = 0
for _name, _size in LAYOUT:
    OFFSETS[_name] = _offset
    _offset += _size

#: generous bounds for a Box space: no entry is ever outside them
OBSERVATION_LOW = -200.0
OBSERVATION_HIGH = 200.0


def encode_observation(obs: Observation, out: np.ndarray | None = None) -> np.ndarray:
    """The observation as a float32 vector of OBSERVATION_SIZE (see LAYOUT)."""
    vector = np.zeros(OBSERVATION_SIZE, np.float32) if out is None else out
    if out is not None:
        vector.fill(0.0)
    n = obs.rules.players
    me = obs.player

    def rel(seat: int) -> int:
        return (seat - me) % n

    o = OFFSETS
    for seat in range(n):
        r = rel(seat)
        vector[o["seat_present"] + r] = 1
        if obs.out_this_round[seat]:
            vector[o["out_this_round"] + r] = 1
        vector[o["scores"] + r] = obs.scores[seat]
        base = o["collections"] + r * KINDS
        vector[base : base + KINDS] = obs.collections[seat]
    if obs.to_move is not None and not obs.is_over:
        vector[o["to_move"] + rel(obs.to_move)] = 1
    for row, cards in enumerate(obs.rows):
        vector[o["row_present"] + row] = 1
        vector[o["row_capacity"] + row] = obs.row_capacities[row]
        vector[o["row_taken"] + row] = obs.rows_taken[row]
        base = o["row_cards"] + row * KINDS
        for card in cards:
            vector[base + card] += 1
    if obs.pending_card is not None:
        vector[o["drawn_card"] + obs.pending_card] = 1
    vector[o["jokers_to_name"]] = len(obs.jokers_to_name)
    vector[o["unseen"] : o["unseen"] + KINDS] = obs.unseen_composition[:KINDS]
    vector[o["removed"] : o["removed"] + KINDS] = obs.removed_cards[:KINDS]
    deck = o["deck"]
    vector[deck] = obs.cards_in_deck
    vector[deck + 1] = obs.cards_before_last_round or 0
    vector[deck + 2] = obs.last_round
    vector[o["colours_in_play"] : o["colours_in_play"] + obs.rules.colours] = 1
    vector[o["round"]] = obs.round
    vector[o["start_picks_left"]] = obs.start_picks_left
    vector[o["first_player"] + rel(obs.first_player)] = 1
    return vector


def action_mask(actions: tuple[Action, ...]) -> np.ndarray:
    """int8 mask over the NUM_ACTIONS action ids: 1 where legal."""
    mask = np.zeros(NUM_ACTIONS, np.int8)
    for action in actions:
        mask[action.id] = 1
    return mask


def _described(value: object) -> str:
    """A value that is not what was asked for, in a few words for an error message."""
    if isinstance(value, np.ndarray):
        return f"an array of {value.dtype} with shape {value.shape}"
    if value is None:
        return "None"
    if isinstance(value, str):
        return f"str {value!r}"
    if isinstance(value, int | float | np.generic):
        return f"{type(value).__name__} {value}"
    return type(value).__name__


def action_of_id(action: object) -> Action:
    """The action an id given to ``step`` stands for: Python and NumPy integers
    (``Discrete.sample()`` gives ``np.int64``) and 0-d integer arrays are
    action ids; anything else (floats, text, bools, None) is a ValueError
    naming its type, and an id outside 0–25 one from :func:`action_from_id`."""
    if isinstance(action, np.ndarray) and action.shape == () and action.dtype.kind in "iu":
        action = action[()]
    if isinstance(action, bool) or not isinstance(action, int | np.integer):
        raise ValueError(
            f"an action must be an integer action id from 0 to {NUM_ACTIONS - 1} "
            f"(a Python or NumPy integer), not {_described(action)}"
        )
    return action_from_id(int(action))  # an id outside the space is an error, not a move


def check_seed(seed: object) -> int | None:
    """A ``reset`` seed as a Python int (or None): Python and NumPy integers
    ≥ 0. Anything else is a ValueError naming it: floats and text are not
    rounded or hashed into a seed, and a negative one is refused because
    ``random.Random(-5)`` deals the games of ``random.Random(5)``."""
    if seed is None:
        return None
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer):
        raise ValueError(
            f"a seed must be None or a whole number ≥ 0 (a Python or NumPy integer), not {_described(seed)}"
        )
    if seed < 0:
        raise ValueError(
            f"a seed must be None or a whole number ≥ 0, not {seed}: "
            "a negative seed would deal the same games as its absolute value"
        )
    return int(seed)


REWARDS = ("margin", "win")


def one_game(rules: Rules, environment: str) -> Rules:
    """The rules, checked to be those of one game: an episode of every
    environment is one game, so a match (``match_games`` > 1) is refused
    rather than silently cut to its first game."""
    if rules.match_games != 1:
        raise ValueError(
            f"{environment} plays one game an episode, so match_games must be 1, not {rules.match_games}: "
            "play each game of a match as an episode"
        )
    return rules


def final_rewards(game: Game, kind: str) -> list[float]:
    """Each seat's reward when the game is over: ``margin`` is the seat's total
    minus the best other total; ``win`` gives each of k winners 1/k and each of
    the other n-k players -1/(n-k), summing to zero."""
    players = game.players
    if kind == "win":
        winners = game.winners()
        losers = players - len(winners)
        return [
            1.0 / len(winners) if seat in winners else (-1.0 / losers if losers else 0.0)
            for seat in range(players)
        ]
    totals = [s.total for s in game.scores()]
    return [
        float(totals[seat] - max(t for other, t in enumerate(totals) if other != seat))
        for seat in range(players)
    ]


# ------------------------------------------------------------ illegal actions
#
# One rule in every environment that takes actions one by one (PettingZoo,
# Gymnasium, the vectorised environment): an illegal action changes nothing,
# costs the acting seat ``illegal_penalty`` for that step, and the same seat
# acts again. A seat that has taken ``max_steps`` actions, illegal ones
# counted, truncates the episode. ``max_steps`` is never less than
# :func:`least_max_steps`: reaching it takes so many illegal actions that their
# penalties outweigh any final reward, so no sequence of illegal actions ever
# raises the return of the seat that plays them.

#: ``illegal=`` choices: ``"penalty"`` (the rule above) or ``"raise"`` (a ValueError)
ILLEGAL_RULES = ("penalty", "raise")
DEFAULT_ILLEGAL_PENALTY = 1.0


def most_seat_actions(rules: Rules) -> int:
    """An upper bound on the legal actions one seat takes in one game.

    Every card a draw turns over is drawn and placed by one seat (two
    actions); every round but the last starts with a draw (its rows are
    empty, so nothing can be taken), and a seat leaves each round once, by a
    take or a pass; a seat names at most every joker of the deck
    (``joker_timing="on-take"``) and chooses at most its starting cards
    (``starting_colours="chosen"``). So, with ``D`` the cards that can be
    drawn (the deck less the last-round card and the starting cards), a seat
    acts at most ``2 D + (D + 1) + jokers + starting cards`` times.
    """
    deck = EDITION_DECKS[rules.edition]
    starting = rules.starting_cards_per_player
    drawable = rules.deck_size - 1 - starting * rules.players
    return 2 * drawable + (drawable + 1) + deck.jokers + deck.golden_jokers + starting


def largest_reward(rules: Rules) -> int:
    """An upper bound on the absolute final reward of any seat (``margin``;
    a ``win`` reward is at most 1).

    A total is at most the three plus colours at the table's best value and
    every "+2" card, and at least every other colour at the table's worst
    minus value; a margin (own total less the best other) lies between the
    least total less the greatest and the greatest less the least.
    """
    table = SCORE_TABLES[rules.table]
    plus_twos = EDITION_DECKS[rules.edition].plus_twos
    most = PLUS_COLOURS * max(table) + PLUS_TWO_POINTS * plus_twos
    least = -(rules.colours - PLUS_COLOURS) * max(table)
    return max(most - least, 1)


_ALL_DECKS = [
    Rules(players=players, edition=edition, table=table)
    for players in range(MIN_PLAYERS, MAX_PLAYERS + 1)
    for edition in Edition
    for table in SCORE_TABLES
]
#: :func:`most_seat_actions` of the largest game (the largest deck): 221
MOST_SEAT_ACTIONS = max(most_seat_actions(rules) for rules in _ALL_DECKS)
#: :func:`largest_reward` of every game: 167 (four or five players, brown table)
LARGEST_REWARD = max(largest_reward(rules) for rules in _ALL_DECKS)


def least_max_steps(illegal_penalty: float = DEFAULT_ILLEGAL_PENALTY) -> int:
    """The smallest ``max_steps`` for which truncation cannot pay: a seat that
    reaches it has played more than ``LARGEST_REWARD / illegal_penalty``
    illegal actions, whose penalties exceed any final reward it escapes.
    389 at the default penalty of 1."""
    return MOST_SEAT_ACTIONS + math.floor(LARGEST_REWARD / illegal_penalty) + 1


def check_illegal_rule(illegal: str, illegal_penalty: float, max_steps: int | None, seats: int = 1) -> int:
    """The options of the illegal-action rule checked; returns ``max_steps``
    (None: :func:`least_max_steps` of the penalty, times ``seats``: the number of
    seats whose actions count against one limit, 1 where each seat has its own)."""
    if illegal not in ILLEGAL_RULES:
        raise ValueError(f"illegal must be one of {', '.join(ILLEGAL_RULES)}, not {illegal!r}")
    if (
        isinstance(illegal_penalty, bool)
        or not isinstance(illegal_penalty, int | float)
        or not math.isfinite(illegal_penalty)
        or illegal_penalty <= 0
    ):
        raise ValueError(
            f"illegal_penalty must be a positive number, not {illegal_penalty!r}: "
            "without a cost an illegal action could stall a game until it is truncated"
        )
    least = seats * least_max_steps(illegal_penalty)
    if max_steps is None:
        return least
    if isinstance(max_steps, bool) or not isinstance(max_steps, int) or max_steps < least:
        shared = f" ({seats} seats × {least // seats}: every seat's actions count)" if seats > 1 else ""
        raise ValueError(
            f"max_steps must be a whole number of at least {least}{shared} with "
            f"illegal_penalty={illegal_penalty}, "
            f"not {max_steps!r}: a seat may take {MOST_SEAT_ACTIONS} legal actions and a final reward "
            f"may reach ±{LARGEST_REWARD}, so fewer steps would let illegal actions truncate a lost "
            "game for less than it costs (a shorter episode needs a TimeLimit of your own)"
        )
    return max_steps


def illegal_action_error(action_id: int, legal: Sequence[Action], why: str, who: str) -> ValueError:
    """The error of ``illegal="raise"``: the action id, why it is illegal (the
    engine's reason, which names the action), and the legal ones."""
    choices = ", ".join(f"{a.id} ({a})" for a in legal) or "none"
    return ValueError(f"illegal action {action_id} for {who}: {why}; legal actions: {choices}")
