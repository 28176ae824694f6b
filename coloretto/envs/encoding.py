"""The fixed-length observation vector and the action encoding shared by the
research environments (documented in ``docs/research.md``).

The vector is laid out for the largest game (5 seats, 5 rows, 7 colours) so
that one network fits every player count; seats are *relative*: block 0 is
the observing player, block 1 the next seat in turn order, and so on. Card
kinds are indexed as in :mod:`coloretto.cards` (7 colours, joker, golden
joker, "+2").
"""

from __future__ import annotations

import numpy as np

from coloretto.actions import NUM_ACTIONS, Action
from coloretto.cards import COLLECTABLE_KINDS, COLOURS
from coloretto.game import Game, Observation
from coloretto.rules import MAX_PLAYERS, Rules

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
