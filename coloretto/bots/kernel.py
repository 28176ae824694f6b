"""The search kernel: Coloretto's rules on a compact integer state, compiled with numba.

MCTS spends its time in playouts, so the rules are implemented a second time
here, on one flat ``int64`` array per position, in functions compiled by
numba (``cache=True``, so a process compiles them once per machine). The
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
18 pass, 19–25 choose a starting colour. Random numbers come from numba's
generator, seeded by :func:`k_seed`.

The rules it shares with the engine, it takes from the core: card ids from
:mod:`coloretto.cards`, action ids from :mod:`coloretto.actions`, rule facts
from :class:`~coloretto.rules.Rules`, and the tie-break
(:func:`coloretto.scoring.standing`) and the golden joker's bonus
(:func:`coloretto.game.earns_bonus_card`) compiled from the core's own functions.
"""

from __future__ import annotations

import hashlib
import importlib.util
from collections.abc import Callable
from typing import Any, cast

import numpy as np
from numba import njit
from numba.core import caching

from coloretto.actions import (
    CHOOSE_START,
    DRAW,
    NAME_JOKER,
    NUM_ACTIONS,
    PASS,
    PLACE,
    TAKE,
    Action,
    action_from_id,
)
from coloretto.bots.mcts_options import EXPLORE, POLICY_EXACT, POLICY_GREEDY, POLICY_RANDOM, TAKE_AT
from coloretto.cards import CARD_KINDS, COLLECTABLE_KINDS, COLOURS, GOLDEN_JOKER, JOKER, PLUS_TWO
from coloretto.game import Game, Observation, earns_bonus_card
from coloretto.rules import (
    MAX_PLAYERS,
    MAX_ROW_SIZE,
    SCORE_TABLES,
    JokerTiming,
    PlusColours,
    RoundStarter,
    Rules,
)
from coloretto.scoring import PLUS_COLOURS, PLUS_TWO_POINTS, standing

# ---- the compiled cache ----------------------------------------------------------
# numba's cache (cache=True) keeps a compiled function until its own file
# changes, but the function has the code of the functions it calls and the
# constants it reads compiled in, from other modules too: edit
# scoring.standing, or a state slot here, and the cached code of k_result, or
# of tree.k_iterate, would go on running the old rule on the old layout. So
# the cache of every function compiled from these modules is kept only while
# none of them has changed.

#: every module whose functions or constants the compiled code takes in
#: (tests/test_ai_kernel.py checks that kernel and tree import from no other)
COMPILED_FROM = (
    "coloretto.actions",
    "coloretto.cards",
    "coloretto.rules",
    "coloretto.scoring",
    "coloretto.game",
    "coloretto.bots.mcts_options",
    "coloretto.bots.kernel",
    "coloretto.bots.tree",
)


def _sources_digest(modules: tuple[str, ...]) -> str:
    digest = hashlib.sha256()
    for name in modules:
        spec = importlib.util.find_spec(name)
        if spec is None or spec.origin is None:
            raise RuntimeError(f"the compiled kernel needs the source of {name}, which is not found")
        with open(spec.origin, "rb") as source:
            digest.update(source.read())
    return digest.hexdigest()


_SOURCES_DIGEST = _sources_digest(COMPILED_FROM)


class _WholeSourceStamp:
    """A numba cache locator that stamps a function's cache with the sources
    of all of :data:`COMPILED_FROM`, not only its own file's."""

    @classmethod
    def from_function(cls, py_func: Any, py_file: str) -> Any:
        if getattr(py_func, "__module__", None) not in COMPILED_FROM:
            return None  # not ours: numba's own locators take it
        return super().from_function(py_func, py_file)  # type: ignore[misc]

    def get_source_stamp(self) -> Any:
        return (super().get_source_stamp(), _SOURCES_DIGEST)  # type: ignore[misc]


def _stamp_whole_sources() -> None:
    """Put :class:`_WholeSourceStamp` versions of numba's file-backed locators
    first (numba ≥ 0.59 names them with or without a leading underscore)."""

    def numba_class(name: str) -> Any:
        return getattr(caching, name, None) or getattr(caching, "_" + name)

    ours = [
        type(f"WholeSource{name}", (_WholeSourceStamp, numba_class(name)), {})
        for name in ("UserProvidedCacheLocator", "InTreeCacheLocator", "UserWideCacheLocator")
    ]
    numba_class("CacheImpl")._locator_classes[:0] = ours


_stamp_whole_sources()

# ---- state layout (one int64 array) ------------------------------------------
ROWS = 0  #: MAX_PLAYERS rows x MAX_ROW_SIZE card slots; only a row's first ROWLEN slots hold cards
ROWLEN = ROWS + MAX_PLAYERS * MAX_ROW_SIZE  #: cards in each row
ROOM = ROWLEN + MAX_PLAYERS  #: bit mask: rows not taken and not full
NONEMPTY = ROOM + 1  #: bit mask: rows not taken that hold a card
TAKEN = NONEMPTY + 1  #: bit mask: rows taken this round
OUT = TAKEN + 1  #: bit mask: seats that left this round
PLAYER = OUT + 1  #: seat to move
PENDING = PLAYER + 1  #: drawn card waiting to be placed, -1 if none
NNAME = PENDING + 1  #: jokers still to name (on-take variant)
#: the joker kinds to name, first first: a whole row and the golden joker's bonus card
NAMEQ = NNAME + 1
LAST_ROUND = NAMEQ + MAX_ROW_SIZE + 1  #: 1 once the last-round card has appeared
OVER = LAST_ROUND + 1  #: 1 once the game is over
DRAWABLE = OVER + 1  #: unseen cards (the last-round card not counted)
BEFORE_LR = DRAWABLE + 1  #: unseen cards above the last-round card, -1 once it appeared
ROUND = BEFORE_LR + 1
LAST_TAKER = ROUND + 1  #: who left the round last, -1 before anyone did
#: starting colours still to choose before round 1 (variant: starting colours chosen)
PICKS = LAST_TAKER + 1
UNSEEN = PICKS + 1  #: CARD_KINDS counts by card kind
COLL = UNSEEN + CARD_KINDS  #: MAX_PLAYERS seats x COLLECTABLE_KINDS counts (colours, joker, golden joker, +2)
STATE_SIZE = COLL + MAX_PLAYERS * COLLECTABLE_KINDS

# ---- rules layout (one int64 array) ------------------------------------------
_TABLE_SIZE = max(len(table) for table in SCORE_TABLES.values())
_TABLE_TOP = _TABLE_SIZE - 1  #: more cards of a colour than this score as this many
C_PLAYERS = 0
C_ROWS = 1
C_CAPS = 2  #: MAX_PLAYERS capacities
C_COLOURS = C_CAPS + MAX_PLAYERS
C_GOLDEN = C_COLOURS + 1  #: 1 if the deck holds a golden joker
C_ONTAKE = C_GOLDEN + 1  #: 1 if jokers are named on take
C_NEXTSTART = C_ONTAKE + 1  #: 1 if the player after the last taker starts a round
C_MOSTCARDS = C_NEXTSTART + 1  #: 1 if the three colours with most cards score plus
C_FEWERMINUS = C_MOSTCARDS + 1  #: 1 if ties go to the fewer minus points
C_TABLE = C_FEWERMINUS + 1  #: points for 0 to _TABLE_TOP cards
#: playout policies take their best row once it is worth this many tenths of a point
C_TAKE_AT = C_TABLE + _TABLE_SIZE
C_EXPLORE = C_TAKE_AT + 1  #: playout policies play a random move this many times in a thousand
CFG_SIZE = C_EXPLORE + 1

# the defaults of C_TAKE_AT and C_EXPLORE, and the playout policies, live with
# the mcts options, so that bot names are read without compiling this module

# the engine's dense action ids (coloretto.actions)
A_DRAW = DRAW.id
A_PLACE = PLACE[0].id
A_TAKE = TAKE[0].id
A_NAME = NAME_JOKER[0].id
A_PASS = PASS.id
A_START = CHOOSE_START[0].id  #: choose a starting colour (variant)
MAX_ACTIONS = NUM_ACTIONS


#: size of a :func:`k_result` array: totals, then win shares, MAX_PLAYERS each
RESULT_SIZE = 2 * MAX_PLAYERS
_SHARES = MAX_PLAYERS  #: where the win shares start in a result array

# The plus colours are kept in three unrolled slots (_eval_counts), and rows
# in MAX_ROW_SIZE slots: a change of either rule must change this code too.
if PLUS_COLOURS != 3:  # pragma: no cover - a programming error
    raise RuntimeError("the kernel keeps exactly three plus colours; scoring.PLUS_COLOURS changed")

# The tie-break and the golden joker's bonus are the core's own functions,
# compiled: the kernel keeps no copy of either rule.
k_standing = njit(cache=True)(standing)
#: compiled for the kernel's rows, which are int64 array slices
k_earns_bonus_card = cast(Callable[[np.ndarray, int], bool], njit(cache=True)(earns_bonus_card))


def rules_config(rules: Rules, take_at: float = TAKE_AT, explore: float = EXPLORE) -> np.ndarray:
    """The kernel's rules array for ``rules``, with the playout policies' knobs."""
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
    return cfg


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


# ---- compiled rules -------------------------------------------------------------


@njit(cache=True)
def k_seed(seed: int) -> None:
    """Seed the generator every kernel function draws from."""
    np.random.seed(seed)


@njit(cache=True)
def _next_in_round(cfg: np.ndarray, out: int, seat: int) -> int:
    n = cfg[C_PLAYERS]
    for step in range(1, n + 1):
        cand = (seat + step) % n
        if not (out >> cand) & 1:
            return cand
    return -1


@njit(cache=True)
def _chosen_colours(s: np.ndarray, cfg: np.ndarray) -> int:
    """Bit mask of the starting colours chosen so far: before round 1 every
    colour card a seat holds is one it chose."""
    mask = 0
    for seat in range(cfg[C_PLAYERS]):
        base = COLL + COLLECTABLE_KINDS * seat
        for c in range(cfg[C_COLOURS]):
            if s[base + c] > 0:
                mask |= 1 << c
    return mask


@njit(cache=True)
def k_legal(s: np.ndarray, cfg: np.ndarray, out: np.ndarray) -> int:
    """Write the legal action ids into ``out``; return how many (engine order)."""
    if s[OVER]:
        return 0
    n = 0
    rows = cfg[C_ROWS]
    if s[PENDING] >= 0:
        room = s[ROOM]
        for i in range(rows):
            if (room >> i) & 1:
                out[n] = A_PLACE + i
                n += 1
        return n
    if s[NNAME] > 0:
        for c in range(cfg[C_COLOURS]):
            out[n] = A_NAME + c
            n += 1
        return n
    if s[PICKS] > 0:
        chosen = _chosen_colours(s, cfg)
        for c in range(cfg[C_COLOURS]):
            if not (chosen >> c) & 1:
                out[n] = A_START + c
                n += 1
        return n
    if s[ROOM] != 0 and s[DRAWABLE] > 0:
        out[n] = A_DRAW
        n += 1
    nonempty = s[NONEMPTY]
    for i in range(rows):
        if (nonempty >> i) & 1:
            out[n] = A_TAKE + i
            n += 1
    if n == 0:
        out[0] = A_PASS
        n = 1
    return n


@njit(cache=True)
def k_needs_card(s: np.ndarray, cfg: np.ndarray, a: int) -> bool:
    """Whether action ``a`` turns over a card: a draw, or taking a golden joker."""
    if a == A_DRAW:
        return True
    if A_TAKE <= a < A_NAME and cfg[C_GOLDEN]:
        start = ROWS + MAX_ROW_SIZE * (a - A_TAKE)
        return k_earns_bonus_card(s[start : start + s[ROWLEN + a - A_TAKE]], s[DRAWABLE])
    return False


@njit(cache=True)
def k_sample_card(s: np.ndarray) -> int:
    """A card drawn at random from the unseen ones (-1 if none is left)."""
    total = s[DRAWABLE]
    if total <= 0:
        return -1
    r = np.random.randint(0, total)
    for kind in range(CARD_KINDS):
        r -= s[UNSEEN + kind]
        if r < 0:
            return kind
    return -1


@njit(cache=True)
def _turn_over(s: np.ndarray, card: int) -> None:
    """A card leaves the face-down deck (perhaps past the last-round card)."""
    before = s[BEFORE_LR]
    if before == 0:
        s[LAST_ROUND] = 1
        s[BEFORE_LR] = -1
    elif before > 0:
        s[BEFORE_LR] = before - 1
    s[UNSEEN + card] -= 1
    s[DRAWABLE] -= 1


@njit(cache=True)
def _pass_turn(s: np.ndarray, cfg: np.ndarray) -> None:
    n = cfg[C_PLAYERS]
    all_out = (1 << n) - 1
    if s[OUT] != all_out:
        s[PLAYER] = _next_in_round(cfg, s[OUT], s[PLAYER])
        return
    rows = cfg[C_ROWS]
    for i in range(rows):
        s[ROWLEN + i] = 0
    for j in range(MAX_PLAYERS * MAX_ROW_SIZE):
        s[ROWS + j] = 0
    s[ROOM] = (1 << rows) - 1
    s[NONEMPTY] = 0
    s[TAKEN] = 0
    s[OUT] = 0
    if s[LAST_ROUND] or s[DRAWABLE] == 0:
        s[OVER] = 1
        return
    s[ROUND] += 1
    starter = s[LAST_TAKER]
    if cfg[C_NEXTSTART]:
        starter = (starter + 1) % n
    s[PLAYER] = starter


@njit(cache=True)
def k_apply(s: np.ndarray, cfg: np.ndarray, a: int, card: int) -> None:
    """Play action ``a`` (assumed legal). ``card`` is the card a draw or a golden
    joker's bonus turns over (ignored by other actions)."""
    if a == A_DRAW:
        _turn_over(s, card)
        s[PENDING] = card
    elif a < A_TAKE:
        i = a - A_PLACE
        length = s[ROWLEN + i]
        s[ROWS + MAX_ROW_SIZE * i + length] = s[PENDING]
        length += 1
        s[ROWLEN + i] = length
        bit = 1 << i
        if length == cfg[C_CAPS + i]:
            s[ROOM] &= ~bit
        s[NONEMPTY] |= bit
        s[PENDING] = -1
        s[PLAYER] = _next_in_round(cfg, s[OUT], s[PLAYER])
    elif a < A_NAME or a == A_PASS:
        player = s[PLAYER]
        base = COLL + COLLECTABLE_KINDS * player
        jokers = 0
        if a != A_PASS:
            i = a - A_TAKE
            start = ROWS + MAX_ROW_SIZE * i
            length = s[ROWLEN + i]
            for j in range(length):
                c = s[start + j]
                s[base + c] += 1
                if (c in (JOKER, GOLDEN_JOKER)) and cfg[C_ONTAKE]:
                    s[NAMEQ + jokers] = c
                    jokers += 1
            if cfg[C_GOLDEN] and k_earns_bonus_card(s[start : start + length], s[DRAWABLE]):
                _turn_over(s, card)
                s[base + card] += 1
                if (card in (JOKER, GOLDEN_JOKER)) and cfg[C_ONTAKE]:
                    s[NAMEQ + jokers] = card
                    jokers += 1
            for j in range(MAX_ROW_SIZE):
                s[start + j] = 0
            s[ROWLEN + i] = 0
            bit = 1 << i
            s[ROOM] &= ~bit
            s[NONEMPTY] &= ~bit
            s[TAKEN] |= bit
        s[OUT] |= 1 << player
        s[LAST_TAKER] = player
        if jokers > 0:
            s[NNAME] = jokers
        else:
            s[NNAME] = 0
            _pass_turn(s, cfg)
    elif a < A_PASS:
        colour = a - A_NAME
        base = COLL + COLLECTABLE_KINDS * s[PLAYER]
        joker = s[NAMEQ]
        s[base + joker] -= 1
        s[base + colour] += 1
        left = s[NNAME] - 1
        for k in range(left):
            s[NAMEQ + k] = s[NAMEQ + k + 1]
        s[NAMEQ + left] = 0
        s[NNAME] = left
        if left == 0:
            _pass_turn(s, cfg)
    else:
        # A starting colour (variant): its card leaves the box, and nothing is
        # turned over. Seats choose in turn, every seat as often, so the seat
        # after the last to choose is the first player, who starts round 1.
        colour = a - A_START
        s[COLL + COLLECTABLE_KINDS * s[PLAYER] + colour] += 1
        s[UNSEEN + colour] -= 1
        s[DRAWABLE] -= 1
        s[PICKS] -= 1
        s[PLAYER] = (s[PLAYER] + 1) % cfg[C_PLAYERS]
        if s[PICKS] == 0:
            s[ROOM] = (1 << cfg[C_ROWS]) - 1


@njit(cache=True)
def k_step(s: np.ndarray, cfg: np.ndarray, a: int) -> int:
    """Play ``a``, sampling the card it turns over if any; return that card or -1."""
    card = -1
    if k_needs_card(s, cfg, a):
        card = k_sample_card(s)
    k_apply(s, cfg, a, card)
    return card


# ---- scoring -------------------------------------------------------------------


@njit(cache=True)
def _eval_counts(counts: np.ndarray, colours: int, cfg: np.ndarray) -> tuple[int, int]:
    """(colour points, minus points) of per-colour counts, plus colours chosen."""
    total_abs = 0
    v1 = -1
    v2 = -1
    v3 = -1
    most = cfg[C_MOSTCARDS]
    k1 = -1
    k2 = -1
    k3 = -1
    for c in range(colours):
        n = counts[c]
        if n == 0:
            continue
        v = cfg[C_TABLE + (n if n < _TABLE_TOP else _TABLE_TOP)]
        total_abs += v
        key = n if most else v
        # keep the three largest keys (ties: equal keys have equal values)
        if key > k1:
            k3, v3 = k2, v2
            k2, v2 = k1, v1
            k1, v1 = key, v
        elif key > k2:
            k3, v3 = k2, v2
            k2, v2 = key, v
        elif key > k3:
            k3, v3 = key, v
    plus = 0
    if v1 > 0:
        plus += v1
    if v2 > 0:
        plus += v2
    if v3 > 0:
        plus += v3
    return 2 * plus - total_abs, total_abs - plus


@njit(cache=True)
def k_score(
    s: np.ndarray, cfg: np.ndarray, seat: int, extra: np.ndarray, n_extra: int, counts: np.ndarray
) -> tuple[int, int]:
    """(best total, its minus points) of ``seat``'s collection plus ``extra[:n_extra]``.

    ``counts`` is scratch space of COLOURS integers. Jokers are given colours by
    trying every assignment; among those with the best total the fewest minus
    points are kept, as :func:`coloretto.scoring.best_score` keeps them.
    """
    colours = cfg[C_COLOURS]
    base = COLL + COLLECTABLE_KINDS * seat
    for c in range(colours):
        counts[c] = s[base + c]
    jokers = s[base + JOKER] + s[base + GOLDEN_JOKER]
    plus2 = s[base + PLUS_TWO]
    for k in range(n_extra):
        c = extra[k]
        if c < COLOURS:
            counts[c] += 1
        elif c == PLUS_TWO:
            plus2 += 1
        else:
            jokers += 1
    bonus = PLUS_TWO_POINTS * plus2
    if jokers == 0:
        t, m = _eval_counts(counts, colours, cfg)
        return t + bonus, m
    best = -(1 << 30)
    best_minus = 0
    if jokers == 1:
        for a in range(colours):
            counts[a] += 1
            t, m = _eval_counts(counts, colours, cfg)
            counts[a] -= 1
            if t > best or (t == best and m < best_minus):
                best, best_minus = t, m
    elif jokers == 2:
        for a in range(colours):
            counts[a] += 1
            for b in range(a, colours):
                counts[b] += 1
                t, m = _eval_counts(counts, colours, cfg)
                counts[b] -= 1
                if t > best or (t == best and m < best_minus):
                    best, best_minus = t, m
            counts[a] -= 1
    else:
        # three jokers at most exist; more would be treated as three
        for a in range(colours):
            counts[a] += 1
            for b in range(a, colours):
                counts[b] += 1
                for c in range(b, colours):
                    counts[c] += 1
                    t, m = _eval_counts(counts, colours, cfg)
                    counts[c] -= 1
                    if t > best or (t == best and m < best_minus):
                        best, best_minus = t, m
                counts[b] -= 1
            counts[a] -= 1
    return best + bonus, best_minus


@njit(cache=True)
def k_result(s: np.ndarray, cfg: np.ndarray, out: np.ndarray) -> None:
    """Scores and win shares as if the game ended now: ``out[:n]`` totals,
    ``out[MAX_PLAYERS:MAX_PLAYERS + n]`` win shares (1/k for k winners, who
    share the best :func:`coloretto.scoring.standing`)."""
    n = cfg[C_PLAYERS]
    fewer_minus = cfg[C_FEWERMINUS] != 0
    empty = np.zeros(1, dtype=np.int64)
    scratch = np.zeros(COLOURS, dtype=np.int64)
    standings = np.zeros(MAX_PLAYERS, dtype=np.int64)
    best = 0
    for p in range(n):
        t, m = k_score(s, cfg, p, empty, 0, scratch)
        out[p] = t
        standings[p] = k_standing(t, m, fewer_minus)
        if p == 0 or standings[p] > best:
            best = standings[p]
    winners = 0
    for p in range(n):
        if standings[p] == best:
            winners += 1
    for p in range(n):
        out[_SHARES + p] = 1.0 / winners if standings[p] == best else 0.0


# ---- playouts ------------------------------------------------------------------


@njit(cache=True)
def _greedy_action(
    s: np.ndarray, cfg: np.ndarray, legal: np.ndarray, n: int, buf: np.ndarray, scratch: np.ndarray
) -> int:
    """Greedy on exact scores (random tie-breaks and ``C_EXPLORE`` exploration).

    Takes the row that most raises its score once it is worth 3 or more points
    (or when it cannot draw); places a card where it helps itself most and the
    next player still in the round least.
    """
    if n == 1:
        return legal[0]
    if np.random.random() * 1000.0 < cfg[C_EXPLORE]:
        return legal[np.random.randint(0, n)]
    player = s[PLAYER]
    empty = buf[:0]
    first = legal[0]
    if s[PENDING] >= 0:
        card = s[PENDING]
        nxt = _next_in_round(cfg, s[OUT] | (1 << player), player)
        mine0, _ = k_score(s, cfg, player, empty, 0, scratch)
        theirs0 = 0
        if nxt >= 0:
            theirs0, _ = k_score(s, cfg, nxt, empty, 0, scratch)
        best_a = legal[0]
        best_v = -1e9
        for k in range(n):
            i = legal[k] - A_PLACE
            length = s[ROWLEN + i]
            for j in range(length):
                buf[j] = s[ROWS + MAX_ROW_SIZE * i + j]
            buf[length] = card
            mine, _ = k_score(s, cfg, player, buf, length + 1, scratch)
            v = float(mine - mine0)
            if nxt >= 0:
                theirs, _ = k_score(s, cfg, nxt, buf, length + 1, scratch)
                v -= float(theirs - theirs0)
            v += np.random.random() * 0.5
            if v > best_v:
                best_v = v
                best_a = legal[k]
        return best_a
    if first >= A_START:  # a starting colour: every colour is alike before round 1
        return legal[np.random.randint(0, n)]
    if first >= A_NAME and first < A_PASS:
        best_a = legal[0]
        best_v = -1 << 30
        for k in range(n):
            buf[0] = legal[k] - A_NAME
            v, _ = k_score(s, cfg, player, buf, 1, scratch)
            if v > best_v:
                best_v = v
                best_a = legal[k]
        return best_a
    can_draw = first == A_DRAW
    mine0, _ = k_score(s, cfg, player, empty, 0, scratch)
    best_a = -1
    best_v = -1e9
    for k in range(n):
        a = legal[k]
        if a < A_TAKE or a >= A_NAME:
            continue
        i = a - A_TAKE
        length = s[ROWLEN + i]
        for j in range(length):
            buf[j] = s[ROWS + MAX_ROW_SIZE * i + j]
        v, _ = k_score(s, cfg, player, buf, length, scratch)
        gain = float(v - mine0) + np.random.random() * 0.5
        if gain > best_v:
            best_v = gain
            best_a = a
    if best_a < 0:
        return legal[0]
    if can_draw and best_v * 10.0 < cfg[C_TAKE_AT]:
        return A_DRAW
    return best_a


@njit(cache=True)
def _plus_mask(s: np.ndarray, cfg: np.ndarray, seat: int) -> int:
    """Bit mask of the colours ``seat`` would score plus now (their top three by
    points; every held colour if fewer than three), ignoring jokers."""
    base = COLL + COLLECTABLE_KINDS * seat
    colours = cfg[C_COLOURS]
    mask = 0
    for _ in range(PLUS_COLOURS):
        best = 0
        pick = -1
        for c in range(colours):
            n = s[base + c]
            if n > 0 and not (mask >> c) & 1:
                v = cfg[C_TABLE + (n if n < _TABLE_TOP else _TABLE_TOP)]
                if v > best:
                    best = v
                    pick = c
        if pick < 0:
            break
        mask |= 1 << pick
    return mask


@njit(cache=True)
def _quick_value(
    s: np.ndarray, cfg: np.ndarray, seat: int, mask: int, held: int, cards: np.ndarray, ncards: int
) -> float:
    """About what ``cards`` would add to ``seat``'s score (who holds ``held``
    colours, ``mask`` their plus colours): per colour, the table's gain (a loss
    for a colour outside the plus colours while three are held); a joker adds a
    card to the best plus colour, a "+2" is worth 2."""
    base = COLL + COLLECTABLE_KINDS * seat
    value = 0.0
    jokers = 0
    seen = 0
    for k in range(ncards):
        c = cards[k]
        if c == PLUS_TWO:
            value += PLUS_TWO_POINTS
        elif c in (JOKER, GOLDEN_JOKER):
            jokers += 1
        elif not (seen >> c) & 1:
            seen |= 1 << c
            m = 0
            for j in range(k, ncards):
                if cards[j] == c:
                    m += 1
            n = s[base + c]
            before = cfg[C_TABLE + (n if n < _TABLE_TOP else _TABLE_TOP)]
            after = cfg[C_TABLE + (n + m if n + m < _TABLE_TOP else _TABLE_TOP)]
            if (mask >> c) & 1 or (n == 0 and held < 3):
                value += after - before
                if n == 0:
                    held += 1
            else:
                value -= after - before
    if jokers > 0:
        best = float(cfg[C_TABLE + 1])
        for c in range(cfg[C_COLOURS]):
            if (mask >> c) & 1:
                n = s[base + c]
                after = cfg[C_TABLE + (n + 1 if n + 1 < _TABLE_TOP else _TABLE_TOP)]
                gain = after - cfg[C_TABLE + (n if n < _TABLE_TOP else _TABLE_TOP)]
                if gain > best:
                    best = gain
        value += jokers * best
    return value


@njit(cache=True)
def _seat_info(s: np.ndarray, cfg: np.ndarray, info: np.ndarray, seat: int) -> None:
    """Fill ``info[seat]`` (plus-colour mask) and ``info[MAX_PLAYERS + seat]`` (colours held)."""
    info[seat] = _plus_mask(s, cfg, seat)
    base = COLL + COLLECTABLE_KINDS * seat
    held = 0
    for c in range(cfg[C_COLOURS]):
        if s[base + c] > 0:
            held += 1
    info[MAX_PLAYERS + seat] = held


@njit(cache=True)
def _fast_greedy_action(
    s: np.ndarray, cfg: np.ndarray, legal: np.ndarray, n: int, buf: np.ndarray, info: np.ndarray
) -> int:
    """The playout policy: greedy on :func:`_quick_value`, ``C_EXPLORE`` random moves.

    ``info`` caches each seat's plus colours and colours held (-1: recompute).

    Takes its best row once it is worth ``C_TAKE_AT`` or more (or when it cannot
    draw); places a card where it helps itself most and the next player still
    in the round least; names a joker after its best plus colour.
    """
    if n == 1:
        return legal[0]
    if np.random.random() * 1000.0 < cfg[C_EXPLORE]:
        return legal[np.random.randint(0, n)]
    player = s[PLAYER]
    first = legal[0]
    if info[player] < 0:
        _seat_info(s, cfg, info, player)
    mine_mask = info[player]
    mine_held = info[MAX_PLAYERS + player]
    if s[PENDING] >= 0:
        card = s[PENDING]
        nxt = _next_in_round(cfg, s[OUT] | (1 << player), player)
        their_mask = 0
        their_held = 0
        if nxt >= 0:
            if info[nxt] < 0:
                _seat_info(s, cfg, info, nxt)
            their_mask = info[nxt]
            their_held = info[MAX_PLAYERS + nxt]
        best_a = legal[0]
        best_v = -1e9
        for k in range(n):
            i = legal[k] - A_PLACE
            length = s[ROWLEN + i]
            for j in range(length):
                buf[j] = s[ROWS + MAX_ROW_SIZE * i + j]
            buf[length] = card
            v = _quick_value(s, cfg, player, mine_mask, mine_held, buf, length + 1)
            if nxt >= 0:
                v -= _quick_value(s, cfg, nxt, their_mask, their_held, buf, length + 1)
            v += np.random.random() * 0.5
            if v > best_v:
                best_v = v
                best_a = legal[k]
        return best_a
    if first >= A_START:  # a starting colour: every colour is alike before round 1
        return legal[np.random.randint(0, n)]
    if first >= A_NAME and first < A_PASS:
        best_a = legal[0]
        best_v = -1e9
        for k in range(n):
            buf[0] = legal[k] - A_NAME
            v = _quick_value(s, cfg, player, mine_mask, mine_held, buf, 1)
            if v > best_v:
                best_v = v
                best_a = legal[k]
        return best_a
    best_a = -1
    best_v = -1e9
    for k in range(n):
        a = legal[k]
        if a < A_TAKE or a >= A_NAME:
            continue
        i = a - A_TAKE
        length = s[ROWLEN + i]
        for j in range(length):
            buf[j] = s[ROWS + MAX_ROW_SIZE * i + j]
        v = _quick_value(s, cfg, player, mine_mask, mine_held, buf, length) + np.random.random() * 0.5
        if v > best_v:
            best_v = v
            best_a = a
    if best_a < 0:
        return legal[0]
    if first == A_DRAW and best_v * 10.0 < cfg[C_TAKE_AT]:
        return A_DRAW
    return best_a


@njit(cache=True)
def _random_action(s: np.ndarray, cfg: np.ndarray) -> int:
    """A uniformly random legal action: the same choice as ``legal[randint(n)]``
    over :func:`k_legal`'s list, without writing the list."""
    rows = cfg[C_ROWS]
    if s[PENDING] >= 0:
        room = s[ROOM]
        count = 0
        for i in range(rows):
            count += (room >> i) & 1
        r = np.random.randint(0, count)
        for i in range(rows):
            if (room >> i) & 1:
                if r == 0:
                    return A_PLACE + i
                r -= 1
    if s[NNAME] > 0:
        return A_NAME + np.random.randint(0, cfg[C_COLOURS])
    if s[PICKS] > 0:
        chosen = _chosen_colours(s, cfg)
        free = 0
        for c in range(cfg[C_COLOURS]):
            free += 1 - ((chosen >> c) & 1)
        r = np.random.randint(0, free)
        for c in range(cfg[C_COLOURS]):
            if not (chosen >> c) & 1:
                if r == 0:
                    return A_START + c
                r -= 1
    can_draw = 1 if s[ROOM] != 0 and s[DRAWABLE] > 0 else 0
    nonempty = s[NONEMPTY]
    count = can_draw
    for i in range(rows):
        count += (nonempty >> i) & 1
    if count == 0:
        return A_PASS
    r = np.random.randint(0, count)
    if can_draw:
        if r == 0:
            return A_DRAW
        r -= 1
    for i in range(rows):
        if (nonempty >> i) & 1:
            if r == 0:
                return A_TAKE + i
            r -= 1
    return A_PASS


@njit(cache=True)
def k_playout(s: np.ndarray, cfg: np.ndarray, policy: int, out: np.ndarray) -> int:
    """Play from ``s`` to the end (``s`` is changed), write :func:`k_result`
    into ``out``; return the number of actions played."""
    steps = _play_to_the_end(s, cfg, policy, np.empty((0, 2), dtype=np.int64))
    k_result(s, cfg, out)
    return steps


@njit(cache=True)
def _play_to_the_end(s: np.ndarray, cfg: np.ndarray, policy: int, actions: np.ndarray) -> int:
    """The playout loop; the first ``len(actions)`` ``(action, card)`` pairs are
    written into ``actions`` (an empty array records nothing)."""
    legal = np.empty(MAX_ACTIONS, dtype=np.int64)
    buf = np.empty(MAX_ROW_SIZE + 1, dtype=np.int64)  # a row and the drawn card
    scratch = np.zeros(COLOURS, dtype=np.int64)
    info = np.full(2 * MAX_PLAYERS, -1, dtype=np.int64)
    steps = 0
    while not s[OVER]:
        if policy == POLICY_RANDOM:
            a = _random_action(s, cfg)
        else:
            n = k_legal(s, cfg, legal)
            if policy == POLICY_GREEDY:
                a = _fast_greedy_action(s, cfg, legal, n, buf, info)
            else:
                a = _greedy_action(s, cfg, legal, n, buf, scratch)
        card = -1
        # k_needs_card, asked only where a take may bring the golden joker's
        # bonus: numba does not inline the call, and this loop runs every step
        if a == A_DRAW or (cfg[C_GOLDEN] and k_needs_card(s, cfg, a)):
            card = k_sample_card(s)
        if a >= A_TAKE:
            info[s[PLAYER]] = -1  # a take, a pass or a named joker changes a collection
        k_apply(s, cfg, a, card)
        if steps < actions.shape[0]:
            actions[steps, 0] = a
            actions[steps, 1] = card
        steps += 1
    return steps


@njit(cache=True)
def k_playout_values(
    s: np.ndarray, cfg: np.ndarray, policy: int, values: np.ndarray, win_weight: float, margin_scale: float
) -> None:
    """Play to the end (nothing to play if ``s`` is over) and write, for n players,
    ``values[:n]`` utilities, ``values[n:2n]`` final scores, ``values[2n:3n]`` win
    shares. A utility is ``win_weight × win share + (1 − win_weight) × margin``,
    the margin to the best opponent mapped from ±``margin_scale`` to [0, 1]."""
    out = np.zeros(RESULT_SIZE, dtype=np.float64)
    k_playout(s, cfg, policy, out)
    n = cfg[C_PLAYERS]
    for p in range(n):
        best_other = -1e9
        for q in range(n):
            if q != p and out[q] > best_other:
                best_other = out[q]
        margin = (out[p] - best_other) / margin_scale
        if margin > 1.0:
            margin = 1.0
        elif margin < -1.0:
            margin = -1.0
        values[p] = win_weight * out[_SHARES + p] + (1.0 - win_weight) * (0.5 + 0.5 * margin)
        values[n + p] = out[p]
        values[2 * n + p] = out[_SHARES + p]


@njit(cache=True)
def k_playout_recorded(s: np.ndarray, cfg: np.ndarray, policy: int, actions: np.ndarray) -> int:
    """A playout that records ``(action, card)`` pairs in ``actions`` (for tests)."""
    return _play_to_the_end(s, cfg, policy, actions)


@njit(cache=True)
def k_bench(s0: np.ndarray, cfg: np.ndarray, policy: int, playouts: int) -> int:
    """Run ``playouts`` playouts from copies of ``s0``; return the actions played."""
    out = np.zeros(RESULT_SIZE, dtype=np.float64)
    s = s0.copy()
    steps = 0
    for _ in range(playouts):
        s[:] = s0
        steps += k_playout(s, cfg, policy, out)
    return steps


def warm_up() -> None:
    """Compile (or load from the cache) every kernel function once."""
    rules = Rules(players=4)
    game = Game.new(rules, seed=0)
    s = state_from_game(game)
    cfg = rules_config(rules)
    k_seed(0)
    k_bench(s, cfg, POLICY_RANDOM, 1)
    k_bench(s, cfg, POLICY_GREEDY, 1)
    k_bench(s, cfg, POLICY_EXACT, 1)
    k_playout_values(s.copy(), cfg, POLICY_GREEDY, np.zeros(15), 0.75, 30.0)
    legal = np.empty(MAX_ACTIONS, dtype=np.int64)
    k_legal(s, cfg, legal)
    k_step(s.copy(), cfg, A_DRAW)
    out = np.zeros(RESULT_SIZE, dtype=np.float64)
    k_result(s, cfg, out)
    k_playout_recorded(s.copy(), cfg, POLICY_RANDOM, np.zeros((400, 2), dtype=np.int64))


def playouts_per_second(rules: Rules, policy: int, playouts: int, seed: int) -> float:
    """Playouts per second from a fresh deal of ``rules`` (compiled code, one core)."""
    import time

    game = Game.new(rules, seed=seed)
    s = state_from_game(game)
    cfg = rules_config(rules)
    k_seed(seed)
    start = time.perf_counter()
    k_bench(s, cfg, policy, playouts)
    return playouts / (time.perf_counter() - start)
