"""The search kernel: Coloretto's rules on a compact integer state, compiled in C.

MCTS spends its time in playouts, so the rules are implemented a second time,
on one flat ``int64`` array per position, in a C extension
(:mod:`coloretto.bots._kernel`, written in Cython and built by the install:
``pip install -e .``), so that nothing compiles on first use. This module is
the kernel's face: the layout of its arrays, the Python that builds them from
the engine's rules and positions, and the compiled functions (``k_*``). The
kernel implements **every** variant of :class:`coloretto.rules.Rules` with the
same rulings as :mod:`coloretto.game`; ``tests/test_ai_kernel.py`` replays
kernel playouts through the engine and engine games through the kernel and
checks that legal actions, collections, scores and winners agree at every step.

The state holds only public information. The face-down deck is not an order
but a composition (``UNSEEN``) and the number of cards still above the
last-round card (``BEFORE_LR``): a draw is a chance event, and whoever applies
a draw says which card came up (:func:`k_apply`), or lets the kernel sample one
in proportion to the unseen cards (:func:`k_step`). Drawing from the shuffled
remainder one card at a time is the same distribution as a shuffled deck.

Actions are the engine's dense ids (:attr:`coloretto.actions.Action.id`):
0 draw, 1–5 place in row 1–5, 6–10 take row 1–5, 11–17 name a joker's colour,
18 pass, 19–25 choose a starting colour. Random numbers come from the
extension's own generator (xoshiro256**), seeded by :func:`k_seed`: the same
seed gives the same playouts on any machine.

The facts the kernel shares with the engine (card ids, action ids, the score
tables' size, the player and row limits) are compiled into the extension and
checked against the core when it is imported; the tie-break and the golden
joker's bonus are C copies of :func:`coloretto.scoring.standing` and
:func:`coloretto.game.earns_bonus_card`, checked exhaustively against them by
``tests/test_kernel_build.py``.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np

from coloretto.actions import Action, action_from_id
from coloretto.bots.mcts_options import (
    EXPLORE,
    POLICY_EXACT,
    POLICY_GREEDY,
    POLICY_RANDOM,
    POLICY_TUNED,
    TAKE_AT,
)
from coloretto.bots.playout_options import GREEDY_WEIGHTS, KERNEL_WEIGHTS, PlayoutWeights
from coloretto.game import Game, Observation
from coloretto.rules import JokerTiming, PlusColours, RoundStarter, Rules

try:
    from coloretto.bots import _kernel
except ImportError as exc:  # pragma: no cover - an install that did not build the extension
    raise ImportError(
        f"the compiled search kernel (coloretto.bots._kernel) cannot be imported ({exc}): "
        "build it with `pip install -e .`, which needs a C compiler and the Python headers"
    ) from exc

#: where the extension's source lies in a checkout or an installed package
KERNEL_SOURCE = Path(__file__).with_name("_kernel.pyx")


def check_build(source: Path, built_digest: str) -> None:
    """Raise ``ImportError`` if ``source`` (the .pyx, when it is there) is not the
    source the extension was built from: an editable install keeps the module it
    built, and an edit of the .pyx without a rebuild would otherwise run the old code."""
    if not source.is_file():
        return  # an install without the source: nothing to be older than
    if not built_digest:
        raise ImportError(
            "the compiled search kernel was built without the digest of its source: "
            "build it with `pip install -e .`"
        )
    if hashlib.sha256(source.read_bytes()).hexdigest() != built_digest:
        raise ImportError(
            "the compiled search kernel is older than coloretto/bots/_kernel.pyx: "
            "run `pip install -e .` again"
        )


check_build(KERNEL_SOURCE, _kernel.SOURCE_SHA256)

# ---- the compiled functions (documented in the extension) ---------------------
k_seed = _kernel.k_seed
k_legal = _kernel.k_legal
k_needs_card = _kernel.k_needs_card
k_sample_card = _kernel.k_sample_card
k_apply = _kernel.k_apply
k_step = _kernel.k_step
k_score = _kernel.k_score
k_result = _kernel.k_result
k_standing = _kernel.k_standing
k_earns_bonus_card = _kernel.k_earns_bonus_card
k_playout = _kernel.k_playout
k_playout_values = _kernel.k_playout_values
k_playout_recorded = _kernel.k_playout_recorded
k_policy_action = _kernel.k_policy_action
k_bench = _kernel.k_bench
k_duel = _kernel.k_duel
k_action_features = _kernel.k_action_features
#: numbers k_action_features writes: each row's gain to the seat to move and to its best
#: rival still in the round, taken now (AF_TAKE_*) or with the drawn card (AF_PLACE_*),
#: MAX_PLAYERS each, then a draw's expected gain (AF_DRAW); 0 where that is no move
ACTION_FEATURES = _kernel.ACTION_FEATURES
AF_TAKE_MINE = _kernel.AF_TAKE_MINE
AF_TAKE_RIVAL = _kernel.AF_TAKE_RIVAL
AF_PLACE_MINE = _kernel.AF_PLACE_MINE
AF_PLACE_RIVAL = _kernel.AF_PLACE_RIVAL
AF_DRAW = _kernel.AF_DRAW


def action_features(observation: Observation) -> np.ndarray:
    """The action features of an observation's position for the seat to move."""
    out = np.zeros(ACTION_FEATURES, dtype=np.float64)
    k_action_features(state_from_observation(observation), rules_config(observation.rules), out)
    return out


# The constants are defined once, in the extension; here they are named and explained.

# ---- the core's facts the extension is built around (checked against the core at import)
MAX_PLAYERS = _kernel.MAX_PLAYERS
MAX_ROW_SIZE = _kernel.MAX_ROW_SIZE
CARD_KINDS = _kernel.CARD_KINDS  #: card kinds: the colours, joker, golden joker, "+2", last-round card
COLLECTABLE_KINDS = _kernel.COLLECTABLE_KINDS  #: what a collection counts: all but the last-round card
COLOURS = _kernel.COLOURS
JOKER = _kernel.JOKER
GOLDEN_JOKER = _kernel.GOLDEN_JOKER
PLUS_TWO = _kernel.PLUS_TWO
PLUS_TWO_POINTS = _kernel.PLUS_TWO_POINTS

# ---- state layout (one int64 array) ------------------------------------------
ROWS = _kernel.ROWS  #: MAX_PLAYERS rows x MAX_ROW_SIZE card slots; only a row's first ROWLEN slots hold cards
ROWLEN = _kernel.ROWLEN  #: cards in each row
ROOM = _kernel.ROOM  #: bit mask: rows not taken and not full
NONEMPTY = _kernel.NONEMPTY  #: bit mask: rows not taken that hold a card
TAKEN = _kernel.TAKEN  #: bit mask: rows taken this round
OUT = _kernel.OUT  #: bit mask: seats that left this round
PLAYER = _kernel.PLAYER  #: seat to move
PENDING = _kernel.PENDING  #: drawn card waiting to be placed, -1 if none
NNAME = _kernel.NNAME  #: jokers still to name (on-take variant)
#: the joker kinds to name, first first: a whole row and the golden joker's bonus card
NAMEQ = _kernel.NAMEQ
LAST_ROUND = _kernel.LAST_ROUND  #: 1 once the last-round card has appeared
OVER = _kernel.OVER  #: 1 once the game is over
DRAWABLE = _kernel.DRAWABLE  #: unseen cards (the last-round card not counted)
BEFORE_LR = _kernel.BEFORE_LR  #: unseen cards above the last-round card, -1 once it appeared
ROUND = _kernel.ROUND
LAST_TAKER = _kernel.LAST_TAKER  #: who left the round last, -1 before anyone did
#: starting colours still to choose before round 1 (variant: starting colours chosen)
PICKS = _kernel.PICKS
UNSEEN = _kernel.UNSEEN  #: CARD_KINDS counts by card kind
#: MAX_PLAYERS seats x COLLECTABLE_KINDS counts (colours, joker, golden joker, +2)
COLL = _kernel.COLL
STATE_SIZE = _kernel.STATE_SIZE

# ---- rules layout (one int64 array) ------------------------------------------
C_PLAYERS = _kernel.C_PLAYERS
C_ROWS = _kernel.C_ROWS
C_CAPS = _kernel.C_CAPS  #: MAX_PLAYERS capacities
C_COLOURS = _kernel.C_COLOURS
C_GOLDEN = _kernel.C_GOLDEN  #: 1 if the deck holds a golden joker
C_ONTAKE = _kernel.C_ONTAKE  #: 1 if jokers are named on take
C_NEXTSTART = _kernel.C_NEXTSTART  #: 1 if the player after the last taker starts a round
C_MOSTCARDS = _kernel.C_MOSTCARDS  #: 1 if the three colours with most cards score plus
C_FEWERMINUS = _kernel.C_FEWERMINUS  #: 1 if ties go to the fewer minus points
#: points for 0 to TABLE_SIZE - 1 cards (more cards of a colour score as that many)
C_TABLE = _kernel.C_TABLE
TABLE_SIZE = _kernel.TABLE_SIZE
#: playout policies take their best row once it is worth this many tenths of a point
C_TAKE_AT = _kernel.C_TAKE_AT
C_EXPLORE = _kernel.C_EXPLORE  #: playout policies play a random move this many times in a thousand
#: the tuned policy's weights (:class:`~coloretto.bots.playout_options.PlayoutWeights`
#: after take and explore), TUNED_WEIGHTS numbers in thousandths
C_TUNED = _kernel.C_TUNED
TUNED_WEIGHTS = _kernel.TUNED_WEIGHTS
CFG_SIZE = _kernel.CFG_SIZE

# the weights' names and order are the kernel's (its TW_* slots): checked here once
_SLOTS = tuple(getattr(_kernel, "TW_" + name.upper()) for name in KERNEL_WEIGHTS)
if tuple(range(TUNED_WEIGHTS)) != _SLOTS:  # pragma: no cover - a kernel and a playout_options that differ
    raise ImportError(
        f"the compiled kernel's tuned weights (TW_*) are not PlayoutWeights' {KERNEL_WEIGHTS}: "
        "change coloretto/bots/playout_options.py or _kernel.pyx to match"
    )

# the defaults of C_TAKE_AT and C_EXPLORE, and the playout policies, live with
# the mcts options, so that bot names are read without loading this module

# the engine's dense action ids (coloretto.actions)
A_DRAW = _kernel.A_DRAW
A_PLACE = _kernel.A_PLACE
A_TAKE = _kernel.A_TAKE
A_NAME = _kernel.A_NAME
A_PASS = _kernel.A_PASS
A_START = _kernel.A_START  #: choose a starting colour (variant)
MAX_ACTIONS = _kernel.MAX_ACTIONS

#: size of a :func:`k_result` array: totals, then win shares, MAX_PLAYERS each
RESULT_SIZE = _kernel.RESULT_SIZE
_SHARES = _kernel.SHARES  #: where the win shares start in a result array


def rules_config(
    rules: Rules, take_at: float = TAKE_AT, explore: float = EXPLORE, weights: PlayoutWeights = GREEDY_WEIGHTS
) -> np.ndarray:
    """The kernel's rules array for ``rules``, with the playout policies' knobs:
    the take bar and random-move share of every policy, and the tuned policy's
    ``weights`` (their own ``take`` and ``explore`` are not read: see
    :func:`policy_config`; the default, greedy's, makes the tuned policy play greedy)."""
    cfg = np.zeros(CFG_SIZE, dtype=np.int64)
    cfg[C_PLAYERS] = rules.players
    caps = rules.row_capacities
    cfg[C_ROWS] = len(caps)
    for i, cap in enumerate(caps):
        cfg[C_CAPS + i] = cap
    cfg[C_COLOURS] = rules.colours
    cfg[C_GOLDEN] = rules.has_golden_joker
    cfg[C_ONTAKE] = rules.joker_timing is JokerTiming.ON_TAKE
    cfg[C_NEXTSTART] = rules.round_starter is RoundStarter.NEXT_PLAYER
    cfg[C_MOSTCARDS] = rules.plus_colours is PlusColours.MOST_CARDS
    cfg[C_FEWERMINUS] = rules.fewer_minus
    for n, points in enumerate(rules.score_table):
        cfg[C_TABLE + n] = points
    cfg[C_TAKE_AT] = round(take_at * 10)
    cfg[C_EXPLORE] = round(explore * 1000)
    cfg[C_TUNED : C_TUNED + TUNED_WEIGHTS] = weights.kernel_weights()
    return cfg


def policy_config(rules: Rules, weights: PlayoutWeights) -> np.ndarray:
    """The rules array of the tuned policy at ``weights``, its take bar and random-move share included."""
    return rules_config(rules, weights.take, weights.explore, weights)


def state_from_observation(obs: Observation) -> np.ndarray:
    """The kernel state of an observed position (public information only)."""
    s = np.zeros(STATE_SIZE, dtype=np.int64)
    for i, row in enumerate(obs.rows):
        for j, card in enumerate(row):
            s[ROWS + MAX_ROW_SIZE * i + j] = card
        s[ROWLEN + i] = len(row)
        if obs.rows_taken[i]:
            s[TAKEN] |= 1 << i
        else:
            if len(row) < obs.row_capacities[i]:
                s[ROOM] |= 1 << i
            if row:
                s[NONEMPTY] |= 1 << i
    for seat, out in enumerate(obs.out_this_round):
        if out:
            s[OUT] |= 1 << seat
    s[PICKS] = obs.start_picks_left
    if s[PICKS]:
        s[ROOM] = 0  # no row has room before the starting colours are chosen and the deck is built
    s[PLAYER] = obs.to_move if obs.to_move is not None else 0
    s[PENDING] = -1 if obs.pending_card is None else obs.pending_card
    s[NNAME] = len(obs.jokers_to_name)
    for k, joker in enumerate(obs.jokers_to_name):
        s[NAMEQ + k] = joker
    s[LAST_ROUND] = 1 if obs.cards_before_last_round is None else 0
    s[OVER] = 1 if obs.is_over else 0
    s[DRAWABLE] = sum(obs.unseen_composition)
    s[BEFORE_LR] = -1 if obs.cards_before_last_round is None else obs.cards_before_last_round
    s[ROUND] = obs.round
    s[LAST_TAKER] = obs.last_taker
    for kind, n in enumerate(obs.unseen_composition):
        s[UNSEEN + kind] = n
    for seat, counts in enumerate(obs.collections):
        for kind in range(COLLECTABLE_KINDS):
            s[COLL + COLLECTABLE_KINDS * seat + kind] = counts[kind]
    return s


def state_from_game(game: Game) -> np.ndarray:
    """The kernel state of a game's position (its deck order is not used)."""
    seat = game.to_move if game.to_move is not None else 0
    return state_from_observation(game.observation(seat))


def action_of(action_id: int) -> Action:
    return action_from_id(int(action_id))


def warm_up() -> None:
    """Run every kernel function once: a check that the extension works, well
    under a millisecond (it is built by the install, nothing compiles here)."""
    rules = Rules(players=4)
    game = Game.new(rules, seed=0)
    s = state_from_game(game)
    cfg = rules_config(rules)
    k_seed(0)
    k_bench(s, cfg, POLICY_RANDOM, 1)
    k_bench(s, cfg, POLICY_GREEDY, 1)
    k_bench(s, cfg, POLICY_EXACT, 1)
    k_bench(s, cfg, POLICY_TUNED, 1)
    k_playout_values(s.copy(), cfg, POLICY_GREEDY, np.zeros(15), 0.75, 30.0)
    legal = np.empty(MAX_ACTIONS, dtype=np.int64)
    k_legal(s, cfg, legal)
    k_step(s.copy(), cfg, A_DRAW)
    out = np.zeros(RESULT_SIZE, dtype=np.float64)
    k_result(s, cfg, out)
    k_playout_recorded(s.copy(), cfg, POLICY_RANDOM, np.zeros((400, 2), dtype=np.int64))


def playouts_per_second(rules: Rules, policy: int, playouts: int, seed: int) -> float:
    """Playouts per second from a fresh deal of ``rules`` (compiled code, one core);
    the tuned policy plays the shipped weights."""
    import time

    from coloretto.bots.playout_options import tuned_weights

    game = Game.new(rules, seed=seed)
    s = state_from_game(game)
    cfg = (
        policy_config(rules, tuned_weights(rules.players)) if policy == POLICY_TUNED else rules_config(rules)
    )
    k_seed(seed)
    start = time.perf_counter()
    k_bench(s, cfg, policy, playouts)
    return playouts / (time.perf_counter() - start)
