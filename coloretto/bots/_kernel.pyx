# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# cython: initializedcheck=False, nonecheck=False
"""The search kernel, compiled: Coloretto's rules on a compact integer state and the MCTS tree.

This is the C extension behind :mod:`coloretto.bots.kernel` and
:mod:`coloretto.bots.tree` (import those, not this): the rules a second time,
for every variant of :class:`coloretto.rules.Rules`, on one flat ``int64``
array per position, the playout policies, and the whole search iteration
(selection, expansion, playout, backup) on a tree of flat arrays. It is built
by the install (``pip install -e .`` runs ``setup.py``, which cythonizes this
file and compiles it with the machine's C compiler), so nothing is compiled on
first use. ``tests/test_ai_kernel.py`` replays kernel playouts through the
engine and engine games through the kernel, in every variant.

Inside, everything runs on raw ``int64_t*`` / ``double*`` pointers in
``noexcept nogil`` functions; the ``def`` functions are the Python face, take
NumPy arrays, and check the sizes of what they are given (a wrong array is a
``ValueError``, never a write past its end).

Random numbers come from xoshiro256** (seeded through splitmix64 by
:func:`k_seed`): one generator per thread, the same numbers for the same
seed on any machine; the search releases the GIL, so that searches on
separate trees run in several threads at once. The build turns off floating-point contraction
(``-ffp-contract=off``) so that no compiler fuses a multiply and an add
differently on another architecture.

Two rules of the core live here as C functions: the tie-break
(:func:`coloretto.scoring.standing`) and the golden joker's bonus
(:func:`coloretto.game.earns_bonus_card`). The kernel used to compile the
core's own functions (numba could); C cannot call Python in its inner loop, so
these are copies, and ``tests/test_kernel_build.py`` checks them exhaustively
against the core's functions (every total and minus points in a wide range,
both tie-breaks; every row a row can hold, with no card, one card and more
left to draw). The other facts the kernel is built around (card ids, action
ids, table size, player and row limits) are compile-time constants below,
checked against the core at import: a core that changed fails the import with
a ``RuntimeError`` naming the constant, instead of playing another game.
"""

from libc.math cimport exp, log, sqrt
from libc.stdint cimport int16_t, int64_t, uint32_t, uint64_t
from libc.string cimport memcpy, memset

import numpy as np

ctypedef int64_t i64

# The sha256 of this file when it was built: setup.py passes it in, and
# coloretto.bots.kernel refuses a build older than the source next to it.
cdef extern from *:
    """
    #ifndef COLORETTO_KERNEL_SOURCE_SHA256
    #define COLORETTO_KERNEL_SOURCE_SHA256 ""
    #endif
    """
    const char *COLORETTO_KERNEL_SOURCE_SHA256

#: sha256 of the ``_kernel.pyx`` this module was compiled from ("" if built without setup.py)
SOURCE_SHA256 = COLORETTO_KERNEL_SOURCE_SHA256.decode("ascii")

# ---- the core's facts, compiled in (checked against the core at import) ------------
cpdef enum:
    MAX_PLAYERS = 5
    MAX_ROW_SIZE = 3
    CARD_KINDS = 11  # the colours, joker, golden joker, "+2", last-round card
    COLLECTABLE_KINDS = 10  # what a collection counts: colours, joker, golden joker, "+2"
    COLOURS = 7
    JOKER = 7
    GOLDEN_JOKER = 8
    PLUS_TWO = 9
    PLUS_TWO_POINTS = 2
    PLUS_COLOURS = 3  # kept in three unrolled slots by eval_counts
    TABLE_SIZE = 7  # the longest score table: 0 to TABLE_TOP cards
    TABLE_TOP = TABLE_SIZE - 1  # more cards of a colour than this score as this many
    # the engine's dense action ids (coloretto.actions)
    A_DRAW = 0
    A_PLACE = 1  # place in row 1 to 5
    A_TAKE = 6  # take row 1 to 5
    A_NAME = 11  # name a joker's colour
    A_PASS = 18
    A_START = 19  # choose a starting colour (variant)
    MAX_ACTIONS = 26
    # the playout policies (coloretto.bots.mcts_options)
    POLICY_RANDOM = 0
    POLICY_GREEDY = 1
    POLICY_EXACT = 2
    POLICY_TUNED = 3

# ---- state layout (one int64 array) ------------------------------------------------
# coloretto.bots.kernel documents each slot
cpdef enum:
    ROWS = 0
    ROWLEN = ROWS + MAX_PLAYERS * MAX_ROW_SIZE
    ROOM = ROWLEN + MAX_PLAYERS
    NONEMPTY = ROOM + 1
    TAKEN = NONEMPTY + 1
    OUT = TAKEN + 1
    PLAYER = OUT + 1
    PENDING = PLAYER + 1
    NNAME = PENDING + 1
    NAMEQ = NNAME + 1
    LAST_ROUND = NAMEQ + MAX_ROW_SIZE + 1
    OVER = LAST_ROUND + 1
    DRAWABLE = OVER + 1
    BEFORE_LR = DRAWABLE + 1
    ROUND = BEFORE_LR + 1
    LAST_TAKER = ROUND + 1
    PICKS = LAST_TAKER + 1
    UNSEEN = PICKS + 1
    COLL = UNSEEN + CARD_KINDS
    STATE_SIZE = COLL + MAX_PLAYERS * COLLECTABLE_KINDS

# ---- the tuned playout policy's weights (coloretto.bots.playout_options names them) --
# Each is a number in thousandths in the rules array, from C_TUNED on; its take bar is
# C_TAKE_AT and its random-move share C_EXPLORE, as for the other policies.
cpdef enum:
    TW_TAKE_FILL = 0  # points added to the take bar, times the share of the open rows' room filled
    TW_TAKE_RIVALS = 1  # points added to the take bar for each other seat still in the round
    TW_DRAW = 2  # added to the take bar, times the expected best row after one more card
    TW_ROW = 3  # placing: the mover's value of the row with the card (the greedy playout's term)
    TW_ROW_NEXT = 4  # placing: the next seat's value of that row, subtracted (the greedy playout's term)
    TW_OWN = 5  # placing: what the card adds to the mover's best row
    TW_NEXT = 6  # placing: what it adds to the next seat's best row, subtracted
    TW_REST = 7  # placing: what it adds to each later seat's best row, subtracted
    TW_MINUS = 8  # a card of a colour outside the plus colours costs this times its minus points
    TW_PLUS_TWO = 9  # what a "+2" is worth
    TW_JOKER = 10  # a joker is worth its best colour's next step and this
    TW_PROSPECT = 11  # a plus colour's next step counts this times the cards left before the last round, per seat
    TW_NOISE = 12  # uniform noise of up to this many points on every value compared (ties, near-ties)
    TW_LEAVE = 13  # two players: a take costs this times what the opponent, left alone, makes of the other rows
    TUNED_WEIGHTS = 14

# ---- rules layout (one int64 array) ------------------------------------------------
cpdef enum:
    C_PLAYERS = 0
    C_ROWS = 1
    C_CAPS = 2
    C_COLOURS = C_CAPS + MAX_PLAYERS
    C_GOLDEN = C_COLOURS + 1
    C_ONTAKE = C_GOLDEN + 1
    C_NEXTSTART = C_ONTAKE + 1
    C_MOSTCARDS = C_NEXTSTART + 1
    C_FEWERMINUS = C_MOSTCARDS + 1
    C_TABLE = C_FEWERMINUS + 1
    C_TAKE_AT = C_TABLE + TABLE_SIZE
    C_EXPLORE = C_TAKE_AT + 1
    C_TUNED = C_EXPLORE + 1  # the tuned playout policy's weights (TW_*), in thousandths
    CFG_SIZE = C_TUNED + TUNED_WEIGHTS

# ---- results -----------------------------------------------------------------------
cpdef enum:
    RESULT_SIZE = 2 * MAX_PLAYERS  # totals, then win shares
    SHARES = MAX_PLAYERS  # where the win shares start in a result array

# ---- the learned value (coloretto.bots.value documents each feature) ---------------
cpdef enum:
    V_FEATURES = 26  # features of one seat's view of a position
    # after the weights: the softmax temperature of the win shares, V_TEMPERATURE
    # plus V_TEMPERATURE_SLOPE for each unseen card (the fewer cards left, the surer the scores)
    V_TEMPERATURE = V_FEATURES
    V_TEMPERATURE_SLOPE = V_FEATURES + 1
    V_WEIGHTS = V_FEATURES + 2  # a value model's array: the weights, then the temperature's two terms
    CUT_ROUND = -1  # a cut playout that stops at the end of the current round

# ---- the tree's layout (coloretto.bots.tree documents each column) -----------------
cpdef enum:
    N_PLAYER = 0
    N_EDGE0 = 1
    N_EDGES = 2
    N_TOTAL = 3
    N_CARD = 4
    N_SIBLING = 5
    N_OVER = 6
    NODE_COLUMNS = 7
    E_ACTION = 0
    E_VISITS = 1
    E_CHILD = 2
    EDGE_INT_COLUMNS = 3
    F_SCORE = 0
    F_WIN = 1
    F_UTILITY = 2
    EDGE_FLOAT_COLUMNS = F_UTILITY + MAX_PLAYERS
    M_NODES = 0
    M_EDGES = 1
    META_SIZE = 2
    # k_iterate stops early when fewer than this many nodes or edges are free
    # (one iteration adds at most one node and its edges)
    HEADROOM_NODES = 1
    HEADROOM_EDGES = MAX_ACTIONS
    # deeper than any game goes (under 400 actions with the largest deck); a
    # path this long ends in a playout rather than overrun the path buffer
    MAX_DEPTH = 512


def compiled_constants():
    """The core's facts this module was compiled with, by name."""
    return {
        "MAX_PLAYERS": MAX_PLAYERS,
        "MAX_ROW_SIZE": MAX_ROW_SIZE,
        "CARD_KINDS": CARD_KINDS,
        "COLLECTABLE_KINDS": COLLECTABLE_KINDS,
        "COLOURS": COLOURS,
        "JOKER": JOKER,
        "GOLDEN_JOKER": GOLDEN_JOKER,
        "PLUS_TWO": PLUS_TWO,
        "PLUS_TWO_POINTS": PLUS_TWO_POINTS,
        "PLUS_COLOURS": PLUS_COLOURS,
        "TABLE_SIZE": TABLE_SIZE,
        "A_DRAW": A_DRAW,
        "A_PLACE": A_PLACE,
        "A_TAKE": A_TAKE,
        "A_NAME": A_NAME,
        "A_PASS": A_PASS,
        "A_START": A_START,
        "MAX_ACTIONS": MAX_ACTIONS,
        "POLICY_RANDOM": POLICY_RANDOM,
        "POLICY_GREEDY": POLICY_GREEDY,
        "POLICY_EXACT": POLICY_EXACT,
        "POLICY_TUNED": POLICY_TUNED,
    }


def core_constants():
    """The same facts as the core states them now."""
    from coloretto.actions import CHOOSE_START, DRAW, NAME_JOKER, NUM_ACTIONS, PASS, PLACE, TAKE
    from coloretto.bots import mcts_options
    from coloretto.cards import CARD_KINDS, COLLECTABLE_KINDS, COLOURS, GOLDEN_JOKER, JOKER, PLUS_TWO
    from coloretto.rules import MAX_PLAYERS, MAX_ROW_SIZE, SCORE_TABLES
    from coloretto.scoring import PLUS_COLOURS, PLUS_TWO_POINTS

    return {
        "MAX_PLAYERS": MAX_PLAYERS,
        "MAX_ROW_SIZE": MAX_ROW_SIZE,
        "CARD_KINDS": CARD_KINDS,
        "COLLECTABLE_KINDS": COLLECTABLE_KINDS,
        "COLOURS": COLOURS,
        "JOKER": JOKER,
        "GOLDEN_JOKER": GOLDEN_JOKER,
        "PLUS_TWO": PLUS_TWO,
        "PLUS_TWO_POINTS": PLUS_TWO_POINTS,
        "PLUS_COLOURS": PLUS_COLOURS,
        "TABLE_SIZE": max(len(table) for table in SCORE_TABLES.values()),
        "A_DRAW": DRAW.id,
        "A_PLACE": PLACE[0].id,
        "A_TAKE": TAKE[0].id,
        "A_NAME": NAME_JOKER[0].id,
        "A_PASS": PASS.id,
        "A_START": CHOOSE_START[0].id,
        "MAX_ACTIONS": NUM_ACTIONS,
        "POLICY_RANDOM": mcts_options.POLICY_RANDOM,
        "POLICY_GREEDY": mcts_options.POLICY_GREEDY,
        "POLICY_EXACT": mcts_options.POLICY_EXACT,
        "POLICY_TUNED": mcts_options.POLICY_TUNED,
    }


def check_constants(core):
    """Raise ``RuntimeError`` naming the first compiled-in fact that ``core``
    (a mapping of name to value, as :func:`core_constants` returns) states otherwise."""
    for name, value in compiled_constants().items():
        if core.get(name) != value:
            raise RuntimeError(
                f"the compiled search kernel was built for {name} = {value}, but the core now says "
                f"{name} = {core.get(name)!r}: change coloretto/bots/_kernel.pyx to match the core "
                "and rebuild it (pip install -e .)"
            )


check_constants(core_constants())

# ---- random numbers: xoshiro256**, seeded by splitmix64 ----------------------------

# One generator per thread (C11 thread-local storage), so that searches may run
# in several threads at once without the GIL, each on its own seeded numbers.
# A thread's generator starts unseeded (all zero, which xoshiro never leaves):
# every Python entry point that draws seeds it first (_ensure_seeded).
cdef extern from *:
    """
    static _Thread_local uint64_t coloretto_rng[4];
    static _Thread_local int coloretto_rng_seeded;
    """
    uint64_t coloretto_rng[4]
    int coloretto_rng_seeded



cdef inline uint64_t _rotl(uint64_t x, int k) noexcept nogil:
    return (x << k) | (x >> (64 - k))


cdef inline uint64_t rng_next() noexcept nogil:
    cdef uint64_t result = _rotl(coloretto_rng[1] * 5, 7) * 9
    cdef uint64_t t = coloretto_rng[1] << 17
    coloretto_rng[2] ^= coloretto_rng[0]
    coloretto_rng[3] ^= coloretto_rng[1]
    coloretto_rng[1] ^= coloretto_rng[2]
    coloretto_rng[0] ^= coloretto_rng[3]
    coloretto_rng[2] ^= t
    coloretto_rng[3] = _rotl(coloretto_rng[3], 45)
    return result


cdef void rng_seed(uint64_t seed) noexcept nogil:
    global coloretto_rng_seeded
    cdef uint64_t z
    cdef int i
    for i in range(4):
        seed += <uint64_t>0x9E3779B97F4A7C15
        z = seed
        z = (z ^ (z >> 30)) * <uint64_t>0xBF58476D1CE4E5B9
        z = (z ^ (z >> 27)) * <uint64_t>0x94D049BB133111EB
        coloretto_rng[i] = z ^ (z >> 31)
    coloretto_rng_seeded = 1


cdef inline i64 rand_below(i64 n) noexcept nogil:
    """Uniform in [0, n) for 1 <= n < 2**32, unbiased (Lemire's multiply-and-reject)."""
    cdef uint32_t bound = <uint32_t>n
    cdef uint64_t m = (rng_next() >> 32) * <uint64_t>bound
    cdef uint32_t low = <uint32_t>m
    cdef uint32_t threshold
    if low < bound:
        threshold = (<uint32_t>0 - bound) % bound
        while low < threshold:
            m = (rng_next() >> 32) * <uint64_t>bound
            low = <uint32_t>m
    return <i64>(m >> 32)


cdef inline double rand_double() noexcept nogil:
    """Uniform in [0, 1), 53 random bits."""
    return <double>(rng_next() >> 11) * (1.0 / 9007199254740992.0)


cdef inline void _ensure_seeded() noexcept nogil:
    """Seed this thread's generator with 0 if nothing seeded it yet."""
    if not coloretto_rng_seeded:
        rng_seed(0)

# ---- the core's two rules, in C (see the module docstring) -------------------------

cdef enum:
    STANDING_SCALE = 1 << 16  # coloretto.scoring._STANDING_SCALE


cdef inline i64 standing(i64 total, i64 minus_points, bint fewer_minus) noexcept nogil:
    """coloretto.scoring.standing: higher is better; with the fewer-minus tie-break,
    fewer minus points among equal totals."""
    if fewer_minus:
        return total * STANDING_SCALE - minus_points
    return total * STANDING_SCALE


cdef inline bint earns_bonus_card(const i64 *row, i64 length, i64 cards_left) noexcept nogil:
    """coloretto.game.earns_bonus_card: a row holding the golden joker also turns
    over a card for its taker, if a card is left."""
    cdef i64 j
    if cards_left <= 0:
        return False
    for j in range(length):
        if row[j] == GOLDEN_JOKER:
            return True
    return False

# ---- rules -------------------------------------------------------------------------


# The seat after ``seat`` still in the round, for every player count, seats out
# (a bit mask) and seat: looked up, as a loop over seats mispredicts its exit.
cdef signed char _next_seat[MAX_PLAYERS + 1][1 << MAX_PLAYERS][MAX_PLAYERS]


cdef void _fill_next_seats() noexcept nogil:
    cdef int n, out, seat, step, cand
    for n in range(MAX_PLAYERS + 1):
        for out in range(1 << MAX_PLAYERS):
            for seat in range(MAX_PLAYERS):
                _next_seat[n][out][seat] = -1
                cand = seat
                for step in range(n):
                    cand += 1
                    if cand >= n:
                        cand = 0
                    if not (out >> cand) & 1:
                        _next_seat[n][out][seat] = <signed char>cand
                        break


_fill_next_seats()


cdef inline i64 next_in_round(const i64 *cfg, i64 out, i64 seat) noexcept nogil:
    """The next seat after ``seat`` not in ``out`` (a bit mask of seats), -1 if none."""
    return _next_seat[cfg[C_PLAYERS]][out][seat]


cdef inline i64 chosen_colours(const i64 *s, const i64 *cfg) noexcept nogil:
    """Bit mask of the starting colours chosen so far: before round 1 every
    colour card a seat holds is one it chose."""
    cdef i64 mask = 0
    cdef i64 seat, c
    cdef const i64 *held
    for seat in range(cfg[C_PLAYERS]):
        held = s + COLL + COLLECTABLE_KINDS * seat
        for c in range(cfg[C_COLOURS]):
            if held[c] > 0:
                mask |= 1 << c
    return mask


cdef i64 legal_actions(const i64 *s, const i64 *cfg, i64 *out) noexcept nogil:
    """Write the legal action ids into ``out``; return how many (engine order)."""
    cdef i64 n = 0
    cdef i64 rows = cfg[C_ROWS]
    cdef i64 i, c, room, chosen, nonempty
    if s[OVER]:
        return 0
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
        chosen = chosen_colours(s, cfg)
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


cdef inline bint needs_card(const i64 *s, const i64 *cfg, i64 a) noexcept nogil:
    """Whether action ``a`` turns over a card: a draw, or taking a golden joker."""
    cdef i64 i
    if a == A_DRAW:
        return True
    if A_TAKE <= a < A_NAME and cfg[C_GOLDEN]:
        i = a - A_TAKE
        return earns_bonus_card(s + ROWS + MAX_ROW_SIZE * i, s[ROWLEN + i], s[DRAWABLE])
    return False


cdef inline i64 sample_card(const i64 *s) noexcept nogil:
    """A card drawn at random from the unseen ones (-1 if none is left)."""
    cdef i64 total = s[DRAWABLE]
    cdef i64 r, k
    cdef i64 below = 0
    cdef i64 kind = 0
    if total <= 0:
        return -1
    r = rand_below(total)
    # the kind is how many kinds' cumulative counts are at most r: counted without
    # a branch, where a loop that stops at the kind drawn mispredicts its exit
    for k in range(CARD_KINDS):
        below += s[UNSEEN + k]
        kind += below <= r
    return kind if kind < CARD_KINDS else -1  # CARD_KINDS: the counts add up to less than DRAWABLE


cdef inline void turn_over(i64 *s, i64 card) noexcept nogil:
    """A card leaves the face-down deck (perhaps past the last-round card)."""
    cdef i64 before = s[BEFORE_LR]
    if before == 0:
        s[LAST_ROUND] = 1
        s[BEFORE_LR] = -1
    elif before > 0:
        s[BEFORE_LR] = before - 1
    s[UNSEEN + card] -= 1
    s[DRAWABLE] -= 1


cdef void pass_turn(i64 *s, const i64 *cfg) noexcept nogil:
    cdef i64 n = cfg[C_PLAYERS]
    cdef i64 rows, starter
    if s[OUT] != (1 << n) - 1:
        s[PLAYER] = next_in_round(cfg, s[OUT], s[PLAYER])
        return
    rows = cfg[C_ROWS]
    memset(s + ROWLEN, 0, MAX_PLAYERS * sizeof(i64))
    memset(s + ROWS, 0, MAX_PLAYERS * MAX_ROW_SIZE * sizeof(i64))
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


cdef void apply_action(i64 *s, const i64 *cfg, i64 a, i64 card) noexcept nogil:
    """Play action ``a`` (assumed legal). ``card`` is the card a draw or a golden
    joker's bonus turns over (ignored by other actions)."""
    cdef i64 i, j, length, bit, player, jokers, c, colour, left
    cdef i64 *held
    cdef i64 *row
    if a == A_DRAW:
        turn_over(s, card)
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
        s[PLAYER] = next_in_round(cfg, s[OUT], s[PLAYER])
    elif a < A_NAME or a == A_PASS:
        player = s[PLAYER]
        held = s + COLL + COLLECTABLE_KINDS * player
        jokers = 0
        if a != A_PASS:
            i = a - A_TAKE
            row = s + ROWS + MAX_ROW_SIZE * i
            length = s[ROWLEN + i]
            for j in range(length):
                c = row[j]
                held[c] += 1
                if (c == JOKER or c == GOLDEN_JOKER) and cfg[C_ONTAKE]:
                    s[NAMEQ + jokers] = c
                    jokers += 1
            if cfg[C_GOLDEN] and earns_bonus_card(row, length, s[DRAWABLE]):
                turn_over(s, card)
                held[card] += 1
                if (card == JOKER or card == GOLDEN_JOKER) and cfg[C_ONTAKE]:
                    s[NAMEQ + jokers] = card
                    jokers += 1
            memset(row, 0, MAX_ROW_SIZE * sizeof(i64))
            s[ROWLEN + i] = 0
            bit = 1 << i
            s[ROOM] &= ~bit
            s[NONEMPTY] &= ~bit
            s[TAKEN] |= bit
        s[OUT] |= 1 << player
        s[LAST_TAKER] = player
        s[NNAME] = jokers
        if jokers == 0:
            pass_turn(s, cfg)
    elif a < A_PASS:
        colour = a - A_NAME
        held = s + COLL + COLLECTABLE_KINDS * s[PLAYER]
        held[s[NAMEQ]] -= 1
        held[colour] += 1
        left = s[NNAME] - 1
        for j in range(left):
            s[NAMEQ + j] = s[NAMEQ + j + 1]
        s[NAMEQ + left] = 0
        s[NNAME] = left
        if left == 0:
            pass_turn(s, cfg)
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


cdef inline i64 step_action(i64 *s, const i64 *cfg, i64 a) noexcept nogil:
    """Play ``a``, sampling the card it turns over if any; return that card or -1."""
    cdef i64 card = -1
    if needs_card(s, cfg, a):
        card = sample_card(s)
    apply_action(s, cfg, a, card)
    return card

# ---- scoring -----------------------------------------------------------------------


cdef inline i64 table_points(const i64 *cfg, i64 n) noexcept nogil:
    return cfg[C_TABLE + (n if n < TABLE_TOP else TABLE_TOP)]


cdef inline void eval_counts(
    const i64 *counts, i64 colours, const i64 *cfg, i64 *total, i64 *minus
) noexcept nogil:
    """(colour points, minus points) of per-colour counts, the plus colours chosen."""
    cdef i64 total_abs = 0
    cdef i64 v1 = -1, v2 = -1, v3 = -1
    cdef i64 k1 = -1, k2 = -1, k3 = -1
    cdef bint most = cfg[C_MOSTCARDS] != 0
    cdef i64 c, n, v, key, plus
    for c in range(colours):
        n = counts[c]
        if n == 0:
            continue
        v = table_points(cfg, n)
        total_abs += v
        key = n if most else v
        # keep the three largest keys (ties: equal keys have equal values)
        if key > k1:
            k3 = k2
            v3 = v2
            k2 = k1
            v2 = v1
            k1 = key
            v1 = v
        elif key > k2:
            k3 = k2
            v3 = v2
            k2 = key
            v2 = v
        elif key > k3:
            k3 = key
            v3 = v
    plus = 0
    if v1 > 0:
        plus += v1
    if v2 > 0:
        plus += v2
    if v3 > 0:
        plus += v3
    total[0] = 2 * plus - total_abs
    minus[0] = total_abs - plus


cdef inline void keep_best(i64 t, i64 m, i64 *best, i64 *best_minus) noexcept nogil:
    if t > best[0] or (t == best[0] and m < best_minus[0]):
        best[0] = t
        best_minus[0] = m


cdef inline bint first_of_its_count(const i64 *counts, i64 i) noexcept nogil:
    return i == 0 or counts[i] != counts[i - 1]


cdef inline i64 times_picked(i64 colour, i64 a, i64 b, i64 c) noexcept nogil:
    return (a == colour) + (b == colour) + (c == colour)


cdef inline bint canonical(const i64 *counts, i64 a, i64 b, i64 c) noexcept nogil:
    """Whether jokers on colours ``a <= b <= c`` (-1: no joker) of counts sorted
    from most to fewest are the one assignment scored of all that give the same
    counts: within a run of equal counts, each colour gets no more jokers than
    the one before it. (A collection's score depends on how many cards each
    colour holds, not on which colour it is.)"""
    if a > 0 and not first_of_its_count(counts, a) and times_picked(a - 1, a, b, c) < times_picked(a, a, b, c):
        return False
    if b > a and not first_of_its_count(counts, b) and times_picked(b - 1, a, b, c) < times_picked(b, a, b, c):
        return False
    if c > b and not first_of_its_count(counts, c) and times_picked(c - 1, a, b, c) < times_picked(c, a, b, c):
        return False
    return True


cdef void score_seat(
    const i64 *s, const i64 *cfg, i64 seat, const i64 *extra, i64 n_extra, i64 *counts,
    i64 *total, i64 *minus
) noexcept nogil:
    """(best total, its minus points) of ``seat``'s collection plus ``extra[:n_extra]``.

    ``counts`` is scratch space of COLOURS integers. Jokers are given colours by
    trying every assignment; among those with the best total the fewest minus
    points are kept, as coloretto.scoring.best_score keeps them. Assignments
    that only swap colours holding as many cards give the same score: the
    counts are sorted and each such set is scored once (:func:`canonical`),
    which halves the work of a typical collection at the end of a game.
    """
    cdef i64 colours = cfg[C_COLOURS]
    cdef const i64 *held = s + COLL + COLLECTABLE_KINDS * seat
    cdef i64 jokers, plus2, k, c, a, b, t, m, best, best_minus, bonus, held_colours, scored, n
    for c in range(colours):
        counts[c] = held[c]
    jokers = held[JOKER] + held[GOLDEN_JOKER]
    plus2 = held[PLUS_TWO]
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
        eval_counts(counts, colours, cfg, &t, &m)
        total[0] = t + bonus
        minus[0] = m
        return
    # most cards first (insertion sort: seven at most); the colours held come first
    held_colours = 0
    for k in range(colours):
        n = counts[k]
        held_colours += n > 0
        c = k
        while c > 0 and counts[c - 1] < n:
            counts[c] = counts[c - 1]
            c -= 1
        counts[c] = n
    # the jokers go to held colours or to the first colours held by none, so
    # the colours scored are the held ones and one more for each joker
    scored = held_colours + (jokers if jokers < 3 else 3)
    if scored > colours:
        scored = colours
    best = -(1 << 30)
    best_minus = 0
    if jokers == 1:
        for a in range(colours):
            if not first_of_its_count(counts, a):
                continue
            counts[a] += 1
            eval_counts(counts, scored, cfg, &t, &m)
            counts[a] -= 1
            keep_best(t, m, &best, &best_minus)
    elif jokers == 2:
        for a in range(colours):
            if not first_of_its_count(counts, a):
                continue
            for b in range(a, colours):
                if not canonical(counts, a, b, -1):
                    continue
                counts[a] += 1
                counts[b] += 1
                eval_counts(counts, scored, cfg, &t, &m)
                counts[a] -= 1
                counts[b] -= 1
                keep_best(t, m, &best, &best_minus)
    else:
        # three jokers at most exist; more would be treated as three
        for a in range(colours):
            if not first_of_its_count(counts, a):
                continue
            for b in range(a, colours):
                # a pair that is not canonical stays so whatever the third joker
                if not canonical(counts, a, b, -1):
                    continue
                for c in range(b, colours):
                    if not canonical(counts, a, b, c):
                        continue
                    counts[a] += 1
                    counts[b] += 1
                    counts[c] += 1
                    eval_counts(counts, scored, cfg, &t, &m)
                    counts[a] -= 1
                    counts[b] -= 1
                    counts[c] -= 1
                    keep_best(t, m, &best, &best_minus)
    total[0] = best + bonus
    minus[0] = best_minus


cdef inline i64 score_total(const i64 *s, const i64 *cfg, i64 seat, const i64 *extra, i64 n_extra) noexcept nogil:
    cdef i64 counts[COLOURS]
    cdef i64 t, m
    score_seat(s, cfg, seat, extra, n_extra, counts, &t, &m)
    return t


cdef void game_result(const i64 *s, const i64 *cfg, double *out) noexcept nogil:
    """Scores and win shares as if the game ended now: ``out[:n]`` totals,
    ``out[SHARES:SHARES + n]`` win shares (1/k for k winners, who share the best standing)."""
    cdef i64 n = cfg[C_PLAYERS]
    cdef bint fewer_minus = cfg[C_FEWERMINUS] != 0
    cdef i64 counts[COLOURS]
    cdef i64 standings[MAX_PLAYERS]
    cdef i64 best = 0
    cdef i64 winners = 0
    cdef i64 p, t, m
    for p in range(n):
        score_seat(s, cfg, p, NULL, 0, counts, &t, &m)
        out[p] = <double>t
        standings[p] = standing(t, m, fewer_minus)
        if p == 0 or standings[p] > best:
            best = standings[p]
    for p in range(n):
        if standings[p] == best:
            winners += 1
    for p in range(n):
        out[SHARES + p] = 1.0 / winners if standings[p] == best else 0.0

# ---- playout policies --------------------------------------------------------------


cdef inline i64 row_with(const i64 *s, i64 i, i64 *buf) noexcept nogil:
    """Copy row ``i`` into ``buf`` (all its MAX_ROW_SIZE slots: a copy of a length
    known at compile time is a few moves, any other a call into libc); return its length."""
    memcpy(buf, s + ROWS + MAX_ROW_SIZE * i, MAX_ROW_SIZE * sizeof(i64))
    return s[ROWLEN + i]


cdef i64 exact_greedy_action(const i64 *s, const i64 *cfg, const i64 *legal, i64 n) noexcept nogil:
    """Greedy on exact scores (random tie-breaks and ``C_EXPLORE`` exploration).

    Takes the row that most raises its score once it is worth ``C_TAKE_AT``
    (or when it cannot draw); places a card where it helps itself most and the
    next player still in the round least.
    """
    cdef i64 buf[MAX_ROW_SIZE + 1]  # a row and the drawn card
    cdef i64 player, first, nxt, mine0, theirs0, mine, theirs, best_a, k, i, length, a, iv, best_iv
    cdef double v, best_v, gain
    cdef bint can_draw
    if n == 1:
        return legal[0]
    if rand_below(1000) < cfg[C_EXPLORE]:
        return legal[rand_below(n)]
    player = s[PLAYER]
    first = legal[0]
    if s[PENDING] >= 0:
        nxt = next_in_round(cfg, s[OUT] | (1 << player), player)
        mine0 = score_total(s, cfg, player, buf, 0)
        theirs0 = 0
        if nxt >= 0:
            theirs0 = score_total(s, cfg, nxt, buf, 0)
        best_a = legal[0]
        best_v = -1e9
        for k in range(n):
            i = legal[k] - A_PLACE
            length = row_with(s, i, buf)
            buf[length] = s[PENDING]
            mine = score_total(s, cfg, player, buf, length + 1)
            v = <double>(mine - mine0)
            if nxt >= 0:
                theirs = score_total(s, cfg, nxt, buf, length + 1)
                v -= <double>(theirs - theirs0)
            v += rand_double() * 0.5
            if v > best_v:
                best_v = v
                best_a = legal[k]
        return best_a
    if first >= A_START:  # a starting colour: every colour is alike before round 1
        return legal[rand_below(n)]
    if first >= A_NAME and first < A_PASS:
        best_a = legal[0]
        best_iv = -(1 << 30)
        for k in range(n):
            buf[0] = legal[k] - A_NAME
            iv = score_total(s, cfg, player, buf, 1)
            if iv > best_iv:
                best_iv = iv
                best_a = legal[k]
        return best_a
    can_draw = first == A_DRAW
    mine0 = score_total(s, cfg, player, buf, 0)
    best_a = -1
    best_v = -1e9
    for k in range(n):
        a = legal[k]
        if a < A_TAKE or a >= A_NAME:
            continue
        length = row_with(s, a - A_TAKE, buf)
        iv = score_total(s, cfg, player, buf, length)
        gain = <double>(iv - mine0) + rand_double() * 0.5
        if gain > best_v:
            best_v = gain
            best_a = a
    if best_a < 0:
        return legal[0]
    if can_draw and best_v * 10.0 < cfg[C_TAKE_AT]:
        return A_DRAW
    return best_a


cdef i64 plus_mask(const i64 *s, const i64 *cfg, i64 seat) noexcept nogil:
    """Bit mask of the colours ``seat`` would score plus now (their top three by
    points; every held colour if fewer than three), ignoring jokers."""
    cdef const i64 *held = s + COLL + COLLECTABLE_KINDS * seat
    cdef i64 colours = cfg[C_COLOURS]
    cdef i64 mask = 0
    cdef i64 _, c, n, v, best, pick
    for _ in range(PLUS_COLOURS):
        best = 0
        pick = -1
        for c in range(colours):
            n = held[c]
            if n > 0 and not (mask >> c) & 1:
                v = table_points(cfg, n)
                if v > best:
                    best = v
                    pick = c
        if pick < 0:
            break
        mask |= 1 << pick
    return mask


cdef double quick_value(
    const i64 *s, const i64 *cfg, i64 seat, i64 mask, i64 held_colours, const i64 *cards, i64 ncards
) noexcept nogil:
    """About what ``cards`` would add to ``seat``'s score (who holds
    ``held_colours`` colours, ``mask`` their plus colours): per colour, the
    table's gain (a loss for a colour outside the plus colours while three are
    held); a joker adds a card to the best plus colour, a "+2" is worth 2."""
    cdef const i64 *held = s + COLL + COLLECTABLE_KINDS * seat
    cdef double value = 0.0
    cdef double best
    cdef i64 jokers = 0
    cdef i64 seen = 0
    cdef i64 k, j, c, m, n, before, after, gain
    for k in range(ncards):
        c = cards[k]
        if c == PLUS_TWO:
            value += PLUS_TWO_POINTS
        elif c == JOKER or c == GOLDEN_JOKER:
            jokers += 1
        elif not (seen >> c) & 1:
            seen |= 1 << c
            m = 0
            for j in range(k, ncards):
                if cards[j] == c:
                    m += 1
            n = held[c]
            before = table_points(cfg, n)
            after = table_points(cfg, n + m)
            if (mask >> c) & 1 or (n == 0 and held_colours < 3):
                value += after - before
                if n == 0:
                    held_colours += 1
            else:
                value -= after - before
    if jokers > 0:
        best = <double>cfg[C_TABLE + 1]
        for c in range(cfg[C_COLOURS]):
            if (mask >> c) & 1:
                n = held[c]
                gain = table_points(cfg, n + 1) - table_points(cfg, n)
                if gain > best:
                    best = <double>gain
        value += jokers * best
    return value


cdef inline void seat_info(const i64 *s, const i64 *cfg, i64 *info, i64 seat) noexcept nogil:
    """Fill ``info[seat]`` (plus-colour mask) and ``info[MAX_PLAYERS + seat]`` (colours held)."""
    cdef const i64 *held = s + COLL + COLLECTABLE_KINDS * seat
    cdef i64 count = 0
    cdef i64 c
    info[seat] = plus_mask(s, cfg, seat)
    for c in range(cfg[C_COLOURS]):
        if held[c] > 0:
            count += 1
    info[MAX_PLAYERS + seat] = count


cdef i64 fast_greedy_action(const i64 *s, const i64 *cfg, const i64 *legal, i64 n, i64 *info) noexcept nogil:
    """The playout policy: greedy on quick_value, ``C_EXPLORE`` random moves.

    ``info`` caches each seat's plus colours and colours held (-1: recompute).

    Takes its best row once it is worth ``C_TAKE_AT`` or more (or when it cannot
    draw); places a card where it helps itself most and the next player still
    in the round least; names a joker after its best plus colour.
    """
    cdef i64 buf[MAX_ROW_SIZE + 1]  # a row and the drawn card
    cdef i64 player, first, mine_mask, mine_held, nxt, their_mask, their_held, best_a, k, i, length, a
    cdef double v, best_v
    if n == 1:
        return legal[0]
    if rand_below(1000) < cfg[C_EXPLORE]:
        return legal[rand_below(n)]
    player = s[PLAYER]
    first = legal[0]
    if info[player] < 0:
        seat_info(s, cfg, info, player)
    mine_mask = info[player]
    mine_held = info[MAX_PLAYERS + player]
    if s[PENDING] >= 0:
        nxt = next_in_round(cfg, s[OUT] | (1 << player), player)
        their_mask = 0
        their_held = 0
        if nxt >= 0:
            if info[nxt] < 0:
                seat_info(s, cfg, info, nxt)
            their_mask = info[nxt]
            their_held = info[MAX_PLAYERS + nxt]
        best_a = legal[0]
        best_v = -1e9
        for k in range(n):
            i = legal[k] - A_PLACE
            length = row_with(s, i, buf)
            buf[length] = s[PENDING]
            v = quick_value(s, cfg, player, mine_mask, mine_held, buf, length + 1)
            if nxt >= 0:
                v -= quick_value(s, cfg, nxt, their_mask, their_held, buf, length + 1)
            v += rand_double() * 0.5
            if v > best_v:
                best_v = v
                best_a = legal[k]
        return best_a
    if first >= A_START:  # a starting colour: every colour is alike before round 1
        return legal[rand_below(n)]
    if first >= A_NAME and first < A_PASS:
        best_a = legal[0]
        best_v = -1e9
        for k in range(n):
            buf[0] = legal[k] - A_NAME
            v = quick_value(s, cfg, player, mine_mask, mine_held, buf, 1)
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
        length = row_with(s, a - A_TAKE, buf)
        v = quick_value(s, cfg, player, mine_mask, mine_held, buf, length) + rand_double() * 0.5
        if v > best_v:
            best_v = v
            best_a = a
    if best_a < 0:
        return legal[0]
    if first == A_DRAW and best_v * 10.0 < cfg[C_TAKE_AT]:
        return A_DRAW
    return best_a


# ---- the tuned playout policy ------------------------------------------------------
#
# The greedy playout's judgement with weights (TW_*), so that an optimiser can
# tune it by self-play (k_duel) and the search can play it in its playouts. At
# the weights coloretto.bots.playout_options.GREEDY_WEIGHTS it plays exactly the
# greedy playout, move for move and random number for random number.


cdef inline double weight(const i64 *cfg, i64 which) noexcept nogil:
    """A tuned weight in its own units (the rules array holds thousandths)."""
    return <double>cfg[C_TUNED + which] / 1000.0


cdef inline double table_step(const i64 *cfg, i64 n) noexcept nogil:
    """What the next card of a colour held ``n`` times adds."""
    return <double>(table_points(cfg, n + 1) - table_points(cfg, n))


cdef double tuned_value(
    const i64 *s, const i64 *cfg, i64 seat, i64 mask, i64 held_colours, const i64 *cards, i64 ncards,
    double prospect
) noexcept nogil:
    """quick_value with the tuned weights: a card of a colour outside the plus
    colours costs TW_MINUS times its minus points, a "+2" is worth TW_PLUS_TWO, a
    joker its best plus colour's step and TW_JOKER; and a plus colour's cards
    also count what they add to its next step, times ``prospect``."""
    cdef const i64 *held = s + COLL + COLLECTABLE_KINDS * seat
    cdef double value = 0.0
    cdef double best
    cdef i64 jokers = 0
    cdef i64 seen = 0
    cdef i64 k, j, c, m, n, before, after, gain
    for k in range(ncards):
        c = cards[k]
        if c == PLUS_TWO:
            value += weight(cfg, TW_PLUS_TWO)
        elif c == JOKER or c == GOLDEN_JOKER:
            jokers += 1
        elif not (seen >> c) & 1:
            seen |= 1 << c
            m = 0
            for j in range(k, ncards):
                if cards[j] == c:
                    m += 1
            n = held[c]
            before = table_points(cfg, n)
            after = table_points(cfg, n + m)
            if (mask >> c) & 1 or (n == 0 and held_colours < 3):
                value += after - before
                if prospect != 0.0:
                    value += prospect * (table_step(cfg, n + m) - table_step(cfg, n))
                if n == 0:
                    held_colours += 1
            else:
                value -= weight(cfg, TW_MINUS) * (after - before)
    if jokers > 0:
        best = <double>cfg[C_TABLE + 1]
        for c in range(cfg[C_COLOURS]):
            if (mask >> c) & 1:
                n = held[c]
                gain = table_points(cfg, n + 1) - table_points(cfg, n)
                if gain > best:
                    best = <double>gain
        value += jokers * (best + weight(cfg, TW_JOKER))
    return value


cdef inline double seat_value(
    const i64 *s, const i64 *cfg, i64 *info, i64 seat, const i64 *cards, i64 ncards, double prospect
) noexcept nogil:
    """tuned_value for ``seat``, its plus colours and colours held read from the cache ``info``."""
    if info[seat] < 0:
        seat_info(s, cfg, info, seat)
    return tuned_value(s, cfg, seat, info[seat], info[MAX_PLAYERS + seat], cards, ncards, prospect)


cdef void best_rows(
    const i64 *s, const i64 *cfg, i64 *info, i64 seat, double prospect, double *top, i64 *top_row,
    double *second
) noexcept nogil:
    """The seat's best and second-best value of a row it could take now (a row
    not taken that holds a card), and the best one's index (-1, and -1e300 for
    both values, if there is none)."""
    cdef i64 buf[MAX_ROW_SIZE + 1]
    cdef i64 i, length
    cdef double v
    top[0] = -1e300
    second[0] = -1e300
    top_row[0] = -1
    for i in range(cfg[C_ROWS]):
        if not (s[NONEMPTY] >> i) & 1:
            continue
        length = row_with(s, i, buf)
        v = seat_value(s, cfg, info, seat, buf, length, prospect)
        if v > top[0]:
            second[0] = top[0]
            top[0] = v
            top_row[0] = i
        elif v > second[0]:
            second[0] = v


cdef inline double best_row_gain(
    double with_card, i64 row, double top, i64 top_row, double second, bint floor_at_zero
) noexcept nogil:
    """How much a seat's best row improves when the card goes into ``row`` (worth
    ``with_card`` to it then); a rival's rows count from zero up (a row worth less
    than nothing is one they need not take)."""
    cdef double other = second if row == top_row else top
    cdef double now = top if top_row >= 0 else 0.0
    cdef double after = with_card if with_card > other else other
    if floor_at_zero:
        if now < 0.0:
            now = 0.0
        if after < 0.0:
            after = 0.0
    return after - now


cdef i64 tuned_place(
    const i64 *s, const i64 *cfg, const i64 *legal, i64 n, i64 *info, double prospect
) noexcept nogil:
    """Where the tuned policy puts a drawn card: the row of the best
    TW_ROW × mine − TW_ROW_NEXT × the next seat's value of the row with the card,
    + TW_OWN × what it adds to the mover's best row − TW_NEXT × to the next
    seat's − TW_REST × to each later seat's (seats still in the round), + noise."""
    cdef i64 buf[MAX_ROW_SIZE + 1]
    cdef double merit[MAX_PLAYERS]
    cdef i64 player = s[PLAYER]
    cdef i64 nxt = next_in_round(cfg, s[OUT] | (1 << player), player)
    cdef double w_row = weight(cfg, TW_ROW)
    cdef double w_row_next = weight(cfg, TW_ROW_NEXT)
    cdef double w_own = weight(cfg, TW_OWN)
    cdef double w_next = weight(cfg, TW_NEXT)
    cdef double w_rest = weight(cfg, TW_REST)
    cdef double noise = weight(cfg, TW_NOISE)
    cdef double top, second, with_card, v, best_v, w_whole, w_best
    cdef i64 top_row, k, i, length, seat, seen, best_a
    for k in range(n):
        merit[k] = 0.0
    # the mover: the row with the card, and what it adds to the mover's best row
    if w_own != 0.0:
        best_rows(s, cfg, info, player, prospect, &top, &top_row, &second)
    for k in range(n):
        i = legal[k] - A_PLACE
        length = row_with(s, i, buf)
        buf[length] = s[PENDING]
        with_card = seat_value(s, cfg, info, player, buf, length + 1, prospect)
        if w_row != 0.0:
            merit[k] = w_row * with_card
        if w_own != 0.0:
            merit[k] += w_own * best_row_gain(with_card, i, top, top_row, second, False)
    # the seats still in the round, in the order they act
    seen = s[OUT] | (1 << player)
    seat = nxt
    while seat >= 0:
        if seat == nxt:
            w_whole = w_row_next
            w_best = w_next
        elif w_rest == 0.0:
            break
        else:
            w_whole = 0.0
            w_best = w_rest
        if w_best != 0.0:
            best_rows(s, cfg, info, seat, prospect, &top, &top_row, &second)
        if w_whole != 0.0 or w_best != 0.0:
            for k in range(n):
                i = legal[k] - A_PLACE
                length = row_with(s, i, buf)
                buf[length] = s[PENDING]
                with_card = seat_value(s, cfg, info, seat, buf, length + 1, prospect)
                if w_whole != 0.0:
                    merit[k] -= w_whole * with_card
                if w_best != 0.0:
                    merit[k] -= w_best * best_row_gain(with_card, i, top, top_row, second, True)
        seen |= 1 << seat
        seat = next_in_round(cfg, seen, seat)
    best_a = legal[0]
    best_v = -1e9
    for k in range(n):
        v = merit[k] + rand_double() * noise
        if v > best_v:
            best_v = v
            best_a = legal[k]
    return best_a


cdef double draw_value(
    const i64 *s, const i64 *cfg, i64 *info, i64 player, double take_now, double prospect
) noexcept nogil:
    """The expected value of the mover's best row after one more card (over the
    unseen cards, the card in the open row where it is worth most, or a row
    that can be taken now if that is worth more)."""
    cdef i64 rows[MAX_PLAYERS][MAX_ROW_SIZE + 1]  # the open rows, each with room for the card
    cdef i64 lengths[MAX_PLAYERS]
    cdef i64 total = 0
    cdef i64 opened = 0
    cdef i64 card, count, i, r, mask, held
    cdef double expected = 0.0
    cdef double best, v
    for card in range(COLLECTABLE_KINDS):
        total += s[UNSEEN + card]
    if total == 0:
        return take_now
    for i in range(cfg[C_ROWS]):
        if (s[ROOM] >> i) & 1:
            lengths[opened] = row_with(s, i, rows[opened])
            opened += 1
    if info[player] < 0:
        seat_info(s, cfg, info, player)
    mask = info[player]
    held = info[MAX_PLAYERS + player]
    for card in range(COLLECTABLE_KINDS):
        count = s[UNSEEN + card]
        if count == 0:
            continue
        best = take_now
        for r in range(opened):
            rows[r][lengths[r]] = card
            v = tuned_value(s, cfg, player, mask, held, rows[r], lengths[r] + 1, prospect)
            if v > best:
                best = v
        expected += <double>count * best
    return expected / <double>total


cdef void leave_costs(const i64 *s, const i64 *cfg, i64 *info, i64 rival, double prospect, double *cost) noexcept nogil:
    """Two players: ``cost[i]`` is what ``rival``, left alone in the round with
    the rows not taken other than ``i``, can expect to take (at least 0): the
    best of them filled with the share of the unseen cards that raise it, as
    far as the rows have room for the rest (heuristic's ``_solo_value``)."""
    cdef i64 buf[MAX_ROW_SIZE + 1]
    cdef double base[MAX_PLAYERS]
    cdef double gain[MAX_PLAYERS]  # the mean gain of a card that raises the row
    cdef double chance[MAX_PLAYERS]  # the share of the unseen cards that raise it
    cdef i64 free[MAX_PLAYERS]
    cdef i64 rows = cfg[C_ROWS]
    cdef i64 total = s[DRAWABLE]
    cdef i64 room = 0  # the open rows' free places
    cdef i64 i, j, length, card, count, draws
    cdef double v, step, helps, weight_sum, accepted, best
    for j in range(rows):
        cost[j] = 0.0
        if (s[TAKEN] >> j) & 1:
            continue
        length = row_with(s, j, buf)
        base[j] = seat_value(s, cfg, info, rival, buf, length, prospect) if length else 0.0
        free[j] = cfg[C_CAPS + j] - length
        room += free[j]
        gain[j] = 0.0
        chance[j] = 0.0
        if free[j] == 0 or total == 0:
            continue
        helps = 0.0
        weight_sum = 0.0
        for card in range(COLLECTABLE_KINDS):
            count = s[UNSEEN + card]
            if count == 0:
                continue
            buf[length] = card
            step = seat_value(s, cfg, info, rival, buf, length + 1, prospect) - base[j]
            if step > 0.0:
                helps += <double>count * step
                weight_sum += <double>count
        if weight_sum > 0.0:
            gain[j] = helps / weight_sum
            chance[j] = weight_sum / <double>total
    for i in range(rows):
        if (s[TAKEN] >> i) & 1:
            continue
        best = 0.0
        for j in range(rows):
            if j == i or (s[TAKEN] >> j) & 1:
                continue
            v = base[j] if s[ROWLEN + j] else -1e300
            if gain[j] > 0.0:
                # row j's places and the others' but row i's, where the cards it does not want go
                draws = room - free[i]
                if draws > total:
                    draws = total
                accepted = chance[j] * <double>draws
                if accepted > <double>free[j]:
                    accepted = <double>free[j]
                if base[j] + accepted * gain[j] > v:
                    v = base[j] + accepted * gain[j]
            if v > best:
                best = v
        cost[i] = best


cdef i64 tuned_action(const i64 *s, const i64 *cfg, const i64 *legal, i64 n, i64 *info) noexcept nogil:
    """The tuned playout policy (the TW_* weights of ``cfg``), ``C_EXPLORE`` random moves.

    Takes its best row once its value reaches the bar: ``C_TAKE_AT``, plus
    TW_TAKE_FILL times the share of the open rows' room filled, plus
    TW_TAKE_RIVALS for each other seat still in the round, plus TW_DRAW times
    :func:`draw_value` (or when it cannot draw); with two players a row's value
    is less TW_LEAVE times what the opponent, still in the round, can then make
    of the other rows alone (:func:`leave_costs`); places a card by
    :func:`tuned_place`; names a joker after its best colour.
    """
    cdef i64 buf[MAX_ROW_SIZE + 1]
    cdef i64 player, first, best_a, k, i, a, length, room, filled, rivals, seat
    cdef double v, best_v, clean_best, bar, prospect
    cdef double cost[MAX_PLAYERS]
    cdef double leave = 0.0
    if n == 1:
        return legal[0]
    if rand_below(1000) < cfg[C_EXPLORE]:
        return legal[rand_below(n)]
    player = s[PLAYER]
    first = legal[0]
    prospect = 0.0
    if cfg[C_TUNED + TW_PROSPECT] != 0 and s[BEFORE_LR] > 0:
        prospect = weight(cfg, TW_PROSPECT) * <double>s[BEFORE_LR] / <double>cfg[C_PLAYERS]
    if s[PENDING] >= 0:
        return tuned_place(s, cfg, legal, n, info, prospect)
    if first >= A_START:  # a starting colour: every colour is alike before round 1
        return legal[rand_below(n)]
    if first >= A_NAME and first < A_PASS:
        best_a = legal[0]
        best_v = -1e9
        for k in range(n):
            buf[0] = legal[k] - A_NAME
            v = seat_value(s, cfg, info, player, buf, 1, prospect)
            if v > best_v:
                best_v = v
                best_a = legal[k]
        return best_a
    best_a = -1
    best_v = -1e9
    clean_best = -1e9
    if cfg[C_PLAYERS] == 2 and not (s[OUT] >> (1 - player)) & 1:
        leave = weight(cfg, TW_LEAVE)
        if leave != 0.0:
            leave_costs(s, cfg, info, 1 - player, prospect, cost)
    for k in range(n):
        a = legal[k]
        if a < A_TAKE or a >= A_NAME:
            continue
        length = row_with(s, a - A_TAKE, buf)
        v = seat_value(s, cfg, info, player, buf, length, prospect)
        if leave != 0.0:
            v -= leave * cost[a - A_TAKE]
        if v > clean_best:
            clean_best = v
        v += rand_double() * weight(cfg, TW_NOISE)
        if v > best_v:
            best_v = v
            best_a = a
    if best_a < 0:
        return legal[0]
    if first != A_DRAW:
        return best_a
    # the bar, in tenths of a point as C_TAKE_AT
    bar = <double>cfg[C_TAKE_AT]
    if cfg[C_TUNED + TW_TAKE_FILL] != 0:
        room = 0
        filled = 0
        for i in range(cfg[C_ROWS]):
            if not (s[TAKEN] >> i) & 1:
                room += cfg[C_CAPS + i]
                filled += s[ROWLEN + i]
        if room > 0:
            bar += 10.0 * weight(cfg, TW_TAKE_FILL) * <double>filled / <double>room
    if cfg[C_TUNED + TW_TAKE_RIVALS] != 0:
        rivals = 0
        for seat in range(cfg[C_PLAYERS]):
            if seat != player and not (s[OUT] >> seat) & 1:
                rivals += 1
        bar += 10.0 * weight(cfg, TW_TAKE_RIVALS) * <double>rivals
    if cfg[C_TUNED + TW_DRAW] != 0:
        if best_v * 10.0 < bar and cfg[C_TUNED + TW_DRAW] > 0 and clean_best >= 0.0:
            # a draw's expected value is at least the best row now, here no loss: weighed,
            # it can only raise the bar, which the row does not reach already (a draw)
            return A_DRAW
        bar += 10.0 * weight(cfg, TW_DRAW) * draw_value(s, cfg, info, player, clean_best, prospect)
    if best_v * 10.0 < bar:
        return A_DRAW
    return best_a



# Bit masks of rows (MAX_PLAYERS bits) and of colours (COLOURS bits) are small:
# how many bits a mask has set, and where its r-th set bit is, are looked up
# rather than counted in a loop whose branches a random playout cannot predict.
cdef enum:
    MASKS = 1 << COLOURS

cdef unsigned char _bits_set[MASKS]
cdef unsigned char _nth_bit[MASKS][COLOURS]


cdef void _fill_bit_tables() noexcept nogil:
    cdef int mask, bit, count
    for mask in range(MASKS):
        count = 0
        for bit in range(COLOURS):
            _nth_bit[mask][bit] = 0
        for bit in range(COLOURS):
            if (mask >> bit) & 1:
                _nth_bit[mask][count] = <unsigned char>bit
                count += 1
        _bits_set[mask] = <unsigned char>count


_fill_bit_tables()


cdef inline i64 nth_set_bit(i64 mask, i64 r) noexcept nogil:
    """The index of the ``r``-th (from 0) set bit of ``mask`` (under ``MASKS``)."""
    return _nth_bit[mask][r]


cdef inline i64 bits_set(i64 mask) noexcept nogil:
    """How many bits of ``mask`` (under ``MASKS``) are set."""
    return _bits_set[mask]


cdef i64 random_action(const i64 *s, const i64 *cfg) noexcept nogil:
    """A uniformly random legal action: the same choice as ``legal[rand_below(n)]``
    over legal_actions' list, without writing the list."""
    cdef i64 room, chosen, free_colours, nonempty, count, r
    cdef bint can_draw
    if s[PENDING] >= 0:
        room = s[ROOM]
        return A_PLACE + nth_set_bit(room, rand_below(bits_set(room)))
    if s[NNAME] > 0:
        return A_NAME + rand_below(cfg[C_COLOURS])
    if s[PICKS] > 0:
        free_colours = ~chosen_colours(s, cfg) & ((1 << cfg[C_COLOURS]) - 1)
        return A_START + nth_set_bit(free_colours, rand_below(bits_set(free_colours)))
    can_draw = s[ROOM] != 0 and s[DRAWABLE] > 0
    nonempty = s[NONEMPTY]
    count = bits_set(nonempty) + can_draw
    if count == 0:
        return A_PASS
    r = rand_below(count)
    if can_draw:
        if r == 0:
            return A_DRAW
        r -= 1
    return A_TAKE + nth_set_bit(nonempty, r)

cdef inline i64 policy_action(const i64 *s, const i64 *cfg, i64 policy, i64 *legal, i64 *info) noexcept nogil:
    """The action playout policy ``policy`` plays in ``s`` (``legal``: scratch room
    for the legal actions; ``info``: the seats' cached plus colours, -1 for none)."""
    cdef i64 n
    if policy == POLICY_RANDOM:
        return random_action(s, cfg)
    n = legal_actions(s, cfg, legal)
    if policy == POLICY_GREEDY:
        return fast_greedy_action(s, cfg, legal, n, info)
    if policy == POLICY_TUNED:
        return tuned_action(s, cfg, legal, n, info)
    return exact_greedy_action(s, cfg, legal, n)


# ---- playouts ----------------------------------------------------------------------


cdef i64 play_to_the_end(i64 *s, const i64 *cfg, i64 policy, i64 *actions, i64 record) noexcept nogil:
    """The playout loop; the first ``record`` ``(action, card)`` pairs are
    written into ``actions`` (``record`` 0 records nothing)."""
    cdef i64 legal[MAX_ACTIONS]
    cdef i64 info[2 * MAX_PLAYERS]
    cdef i64 steps = 0
    cdef i64 a, card, j
    for j in range(2 * MAX_PLAYERS):
        info[j] = -1
    while not s[OVER]:
        a = policy_action(s, cfg, policy, legal, info)
        card = -1
        if a == A_DRAW or (cfg[C_GOLDEN] and needs_card(s, cfg, a)):
            card = sample_card(s)
        if a >= A_TAKE:
            info[s[PLAYER]] = -1  # a take, a pass or a named joker changes a collection
        apply_action(s, cfg, a, card)
        if steps < record:
            actions[2 * steps] = a
            actions[2 * steps + 1] = card
        steps += 1
    return steps


cdef inline i64 playout(i64 *s, const i64 *cfg, i64 policy, double *out) noexcept nogil:
    cdef i64 steps = play_to_the_end(s, cfg, policy, NULL, 0)
    game_result(s, cfg, out)
    return steps


cdef inline void fill_values(
    const double *out, i64 n, double *values, double win_weight, double margin_scale
) noexcept nogil:
    """Utilities, scores and win shares (``values``) of a result ``out`` (totals, then win shares)."""
    cdef i64 p, q
    cdef double best_other, margin
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
        values[p] = win_weight * out[SHARES + p] + (1.0 - win_weight) * (0.5 + 0.5 * margin)
        values[n + p] = out[p]
        values[2 * n + p] = out[SHARES + p]


cdef void playout_values(
    i64 *s, const i64 *cfg, i64 policy, double *values, double win_weight, double margin_scale
) noexcept nogil:
    """Play to the end and write, for n players, ``values[:n]`` utilities,
    ``values[n:2n]`` final scores, ``values[2n:3n]`` win shares."""
    cdef double out[RESULT_SIZE]
    playout(s, cfg, policy, out)
    fill_values(out, cfg[C_PLAYERS], values, win_weight, margin_scale)


# ---- the learned value: features, prediction, cut playouts -------------------------


cdef void seat_features(const i64 *s, const i64 *cfg, i64 seat, double *f) noexcept nogil:
    """The V_FEATURES features of ``seat``'s view of position ``s`` (coloretto.bots.value
    names them; tests/test_value.py computes them again from the engine's game)."""
    cdef const i64 *held = s + COLL + COLLECTABLE_KINDS * seat
    cdef i64 buf[MAX_ROW_SIZE]
    cdef i64 n = cfg[C_PLAYERS]
    cdef i64 t1 = 0, t2 = 0, t3 = 0, rest = 0, held_colours = 0, on_rows = 0, out_seats = 0
    cdef i64 c, k, i, length, score, gain, best_gain
    cdef double left
    for c in range(cfg[C_COLOURS]):
        k = held[c]
        if k > 0:
            held_colours += 1
        if k > t1:
            rest += t3
            t3 = t2
            t2 = t1
            t1 = k
        elif k > t2:
            rest += t3
            t3 = t2
            t2 = k
        elif k > t3:
            rest += t3
            t3 = k
        else:
            rest += k
    score = score_total(s, cfg, seat, buf, 0)
    best_gain = 0
    if not (s[OUT] >> seat) & 1:
        for i in range(cfg[C_ROWS]):
            if (s[NONEMPTY] >> i) & 1:
                length = row_with(s, i, buf)
                gain = score_total(s, cfg, seat, buf, length) - score
                if gain > best_gain:
                    best_gain = gain
    for i in range(cfg[C_ROWS]):
        on_rows += s[ROWLEN + i]
    for k in range(n):
        out_seats += (s[OUT] >> k) & 1
    left = <double>(s[BEFORE_LR] if s[BEFORE_LR] > 0 else 0)
    f[0] = 1.0
    f[1] = <double>score
    f[2] = <double>t1
    f[3] = <double>t2
    f[4] = <double>t3
    f[5] = <double>rest
    f[6] = <double>(held[JOKER] + held[GOLDEN_JOKER])
    f[7] = <double>held[PLUS_TWO]
    f[8] = <double>held_colours
    f[9] = <double>((s[OUT] >> seat) & 1)
    f[10] = <double>best_gain
    f[11] = left
    f[12] = <double>s[DRAWABLE]
    f[13] = <double>(s[LAST_ROUND] != 0)
    f[14] = <double>on_rows
    f[15] = <double>(n - out_seats)
    f[16] = <double>s[ROUND]
    f[17] = <double>(s[PLAYER] == seat)
    f[18] = left * f[1]
    f[19] = left * f[2]
    f[20] = left * f[3]
    f[21] = left * f[4]
    f[22] = left * f[5]
    f[23] = left * f[6]
    f[24] = left * f[8]
    f[25] = left * left


cdef inline double predict_gain(const double *f, const double *weights) noexcept nogil:
    cdef double gain = 0.0
    cdef i64 j
    for j in range(V_FEATURES):
        gain += weights[j] * f[j]
    return gain


cdef void predict(const i64 *s, const i64 *cfg, const double *weights, double *out) noexcept nogil:
    """The model's result of position ``s``: ``out[:n]`` each seat's predicted final
    score (its score now and the predicted gain), ``out[SHARES:SHARES + n]`` win
    shares (a softmax of the predicted scores at the model's temperature)."""
    cdef double f[V_FEATURES]
    cdef i64 n = cfg[C_PLAYERS]
    cdef double temperature = weights[V_TEMPERATURE] + weights[V_TEMPERATURE_SLOPE] * <double>s[DRAWABLE]
    cdef double top = -1e300
    cdef double total = 0.0
    cdef i64 p
    for p in range(n):
        seat_features(s, cfg, p, f)
        out[p] = f[1] + predict_gain(f, weights)
        if out[p] > top:
            top = out[p]
    for p in range(n):
        out[SHARES + p] = exp((out[p] - top) / temperature)
        total += out[SHARES + p]
    for p in range(n):
        out[SHARES + p] /= total


cdef i64 play_until(i64 *s, const i64 *cfg, i64 policy, i64 cut) noexcept nogil:
    """The playout loop of play_to_the_end, stopped after ``cut`` actions (``cut`` > 0)
    or once the current round is over (CUT_ROUND), or at the end of the game."""
    cdef i64 legal[MAX_ACTIONS]
    cdef i64 info[2 * MAX_PLAYERS]
    cdef i64 steps = 0
    cdef i64 round0 = s[ROUND]
    cdef i64 a, card, j
    for j in range(2 * MAX_PLAYERS):
        info[j] = -1
    while not s[OVER]:
        if cut > 0:
            if steps >= cut:
                break
        elif s[ROUND] != round0:
            break
        a = policy_action(s, cfg, policy, legal, info)
        card = -1
        if a == A_DRAW or (cfg[C_GOLDEN] and needs_card(s, cfg, a)):
            card = sample_card(s)
        if a >= A_TAKE:
            info[s[PLAYER]] = -1
        apply_action(s, cfg, a, card)
        steps += 1
    return steps


cdef void cut_values(
    i64 *s, const i64 *cfg, i64 policy, double *values, double win_weight, double margin_scale,
    i64 cut, const double *weights
) noexcept nogil:
    """playout_values with the playout cut short (play_until) and the rest of the
    game predicted by the model ``weights`` (its scores and win shares)."""
    cdef double out[RESULT_SIZE]
    play_until(s, cfg, policy, cut)
    if s[OVER]:
        game_result(s, cfg, out)
    else:
        predict(s, cfg, weights, out)
    fill_values(out, cfg[C_PLAYERS], values, win_weight, margin_scale)


cdef i64 record_game(
    i64 *s, const i64 *cfg, i64 policy, double *features, double *scores, i64 capacity, double *result
) noexcept nogil:
    """Play a game to the end with ``policy``, writing before every action each
    seat's features (rows of V_FEATURES) and score now, at most ``capacity``
    positions; then the final :func:`game_result` into ``result``. Returns the
    positions written."""
    cdef i64 legal[MAX_ACTIONS]
    cdef i64 info[2 * MAX_PLAYERS]
    cdef i64 n = cfg[C_PLAYERS]
    cdef i64 written = 0
    cdef i64 a, card, j, p
    for j in range(2 * MAX_PLAYERS):
        info[j] = -1
    while not s[OVER]:
        if written < capacity:
            for p in range(n):
                seat_features(s, cfg, p, features + V_FEATURES * (n * written + p))
                scores[n * written + p] = features[V_FEATURES * (n * written + p) + 1]
            written += 1
        a = policy_action(s, cfg, policy, legal, info)
        card = -1
        if a == A_DRAW or (cfg[C_GOLDEN] and needs_card(s, cfg, a)):
            card = sample_card(s)
        if a >= A_TAKE:
            info[s[PLAYER]] = -1
        apply_action(s, cfg, a, card)
    game_result(s, cfg, result)
    return written

cdef void duel(
    i64 *s, const i64 *cfgs, const i64 *policies, double *out
) noexcept nogil:
    """Play one game to the end where seat p chooses by ``policies[p]`` with the
    knobs of ``cfgs[p]`` (the rules are every row's); write :func:`game_result`."""
    cdef i64 legal[MAX_ACTIONS]
    cdef i64 info[2 * MAX_PLAYERS]
    cdef i64 a, card, j, p
    cdef const i64 *mine
    for j in range(2 * MAX_PLAYERS):
        info[j] = -1
    while not s[OVER]:
        p = s[PLAYER]
        mine = cfgs + CFG_SIZE * p
        a = policy_action(s, mine, policies[p], legal, info)
        card = -1
        if a == A_DRAW or (cfgs[C_GOLDEN] and needs_card(s, cfgs, a)):
            card = sample_card(s)
        if a >= A_TAKE:
            info[p] = -1
        apply_action(s, cfgs, a, card)
    game_result(s, cfgs, out)

# ---- the tree ----------------------------------------------------------------------


cdef i64 add_node(
    i64 *nodes, int16_t *states, i64 *edge_ints, double *edge_floats, i64 *meta,
    const i64 *s, const i64 *cfg
) noexcept nogil:
    """A new node for position ``s`` with one fresh edge per legal action (room assumed)."""
    cdef i64 legal[MAX_ACTIONS]
    cdef i64 v = meta[M_NODES]
    cdef i64 e0 = meta[M_EDGES]
    cdef i64 m = legal_actions(s, cfg, legal)
    cdef i64 *node = nodes + NODE_COLUMNS * v
    cdef int16_t *state = states + STATE_SIZE * v
    cdef i64 i, j, e
    meta[M_NODES] = v + 1
    meta[M_EDGES] = e0 + m
    node[N_PLAYER] = s[PLAYER]
    node[N_EDGE0] = e0
    node[N_EDGES] = m
    node[N_TOTAL] = 0
    node[N_CARD] = -1
    node[N_SIBLING] = -1
    node[N_OVER] = 1 if s[OVER] else 0
    for j in range(STATE_SIZE):
        state[j] = <int16_t>s[j]
    for i in range(m):
        e = e0 + i
        edge_ints[EDGE_INT_COLUMNS * e + E_ACTION] = legal[i]
        edge_ints[EDGE_INT_COLUMNS * e + E_VISITS] = 0
        edge_ints[EDGE_INT_COLUMNS * e + E_CHILD] = -1
        for j in range(EDGE_FLOAT_COLUMNS):
            edge_floats[EDGE_FLOAT_COLUMNS * e + j] = 0.0
    return v


cdef i64 select_edge(
    const i64 *nodes, const i64 *edge_ints, const double *edge_floats, i64 v, double c, i64 floor
) noexcept nogil:
    """The edge to follow from node ``v``: each edge once (or ``floor`` times),
    then UCB1 on the mover's own mean utility."""
    cdef const i64 *node = nodes + NODE_COLUMNS * v
    cdef i64 e0 = node[N_EDGE0]
    cdef i64 m = node[N_EDGES]
    cdef i64 fewest = e0
    cdef i64 e, visits, p, n, best
    cdef double log_n, value, best_value
    if m == 1:
        return e0
    for e in range(e0, e0 + m):
        if edge_ints[EDGE_INT_COLUMNS * e + E_VISITS] < edge_ints[EDGE_INT_COLUMNS * fewest + E_VISITS]:
            fewest = e
    visits = edge_ints[EDGE_INT_COLUMNS * fewest + E_VISITS]
    if visits == 0 or visits < floor:
        return fewest
    p = node[N_PLAYER]
    log_n = c * sqrt(log(<double>node[N_TOTAL]))
    best = e0
    best_value = -1.0
    for e in range(e0, e0 + m):
        n = edge_ints[EDGE_INT_COLUMNS * e + E_VISITS]
        value = edge_floats[EDGE_FLOAT_COLUMNS * e + F_UTILITY + p] / n + log_n / sqrt(<double>n)
        if value > best_value:
            best_value = value
            best = e
    return best


cdef i64 iterate(
    i64 *nodes, int16_t *states, i64 *edge_ints, double *edge_floats, i64 *meta,
    i64 capacity_nodes, i64 capacity_edges, i64 root, const i64 *root_state, const i64 *cfg,
    i64 policy, double c, i64 root_floor, i64 iterations, double win_weight, double margin_scale,
    double *sums, i64 cut, const double *weights
) noexcept nogil:
    cdef i64 players = cfg[C_PLAYERS]
    cdef i64 s[STATE_SIZE]
    cdef double values[3 * MAX_PLAYERS]
    cdef i64 path[2 * MAX_DEPTH]
    cdef i64 done = 0
    cdef i64 v, depth, e, card, child, k, j, p, mover
    cdef i64 *edge
    cdef double *floats
    while done < iterations:
        if meta[M_NODES] + HEADROOM_NODES > capacity_nodes or meta[M_EDGES] + HEADROOM_EDGES > capacity_edges:
            break
        memcpy(s, root_state, STATE_SIZE * sizeof(i64))
        v = root
        depth = 0
        while True:
            if nodes[NODE_COLUMNS * v + N_OVER] or depth == MAX_DEPTH:
                if cut != 0:
                    cut_values(s, cfg, policy, values, win_weight, margin_scale, cut, weights)
                else:
                    playout_values(s, cfg, policy, values, win_weight, margin_scale)
                break
            e = select_edge(nodes, edge_ints, edge_floats, v, c, root_floor if v == root else 0)
            edge = edge_ints + EDGE_INT_COLUMNS * e
            card = step_action(s, cfg, edge[E_ACTION])
            path[2 * depth] = v
            path[2 * depth + 1] = e
            depth += 1
            child = edge[E_CHILD]
            while child >= 0 and nodes[NODE_COLUMNS * child + N_CARD] != card:
                child = nodes[NODE_COLUMNS * child + N_SIBLING]
            if child < 0:
                child = add_node(nodes, states, edge_ints, edge_floats, meta, s, cfg)
                nodes[NODE_COLUMNS * child + N_CARD] = card
                nodes[NODE_COLUMNS * child + N_SIBLING] = edge[E_CHILD]
                edge[E_CHILD] = child
                if cut != 0:
                    cut_values(s, cfg, policy, values, win_weight, margin_scale, cut, weights)
                else:
                    playout_values(s, cfg, policy, values, win_weight, margin_scale)
                break
            v = child
        for j in range(3 * players):
            sums[j] += values[j]
        for k in range(depth):
            v = path[2 * k]
            e = path[2 * k + 1]
            nodes[NODE_COLUMNS * v + N_TOTAL] += 1
            edge_ints[EDGE_INT_COLUMNS * e + E_VISITS] += 1
            mover = nodes[NODE_COLUMNS * v + N_PLAYER]
            floats = edge_floats + EDGE_FLOAT_COLUMNS * e
            floats[F_SCORE] += values[players + mover]
            floats[F_WIN] += values[2 * players + mover]
            for p in range(players):
                floats[F_UTILITY + p] += values[p]
        done += 1
    return done

# ---- the Python face: argument checks ----------------------------------------------


cdef inline void _need_size(Py_ssize_t have, Py_ssize_t want, str what) except *:
    if have != want:
        raise ValueError(f"{what} must hold {want} values, not {have}")


cdef inline void _need_room(Py_ssize_t have, Py_ssize_t want, str what) except *:
    if have < want:
        raise ValueError(f"{what} must hold at least {want} values, not {have}")


cdef inline void _check_policy(i64 policy) except *:
    if not POLICY_RANDOM <= policy <= POLICY_TUNED:
        raise ValueError(f"unknown playout policy {policy}: 0 random, 1 greedy, 2 exact, 3 tuned")


cdef str _rules_problem(const i64 *cfg):
    """What makes ``cfg`` no kernel rules array (None if nothing): the slots the
    compiled code indexes with are checked, so that a wrong array is an error
    rather than a write outside an array."""
    cdef i64 i
    if not 2 <= cfg[C_PLAYERS] <= MAX_PLAYERS:
        return f"{cfg[C_PLAYERS]} players"
    if not 1 <= cfg[C_ROWS] <= MAX_PLAYERS:
        return f"{cfg[C_ROWS]} rows"
    if not 1 <= cfg[C_COLOURS] <= COLOURS:
        return f"{cfg[C_COLOURS]} colours"
    for i in range(cfg[C_ROWS]):
        if not 1 <= cfg[C_CAPS + i] <= MAX_ROW_SIZE:
            return f"row {i + 1} holding {cfg[C_CAPS + i]} cards"
    return None


cdef str _state_problem(const i64 *s, const i64 *cfg):
    """What makes ``s`` no position of the rules ``cfg`` (None if nothing), in the
    slots the compiled code indexes with."""
    cdef i64 n = cfg[C_PLAYERS]
    cdef i64 rows = cfg[C_ROWS]
    cdef i64 i, j, card
    if not 0 <= s[PLAYER] < n:
        return f"seat {s[PLAYER]} to move"
    if not -1 <= s[LAST_TAKER] < n:
        return f"seat {s[LAST_TAKER]} the last to take"
    if not 0 <= s[OUT] < (1 << n):
        return f"seats out {s[OUT]:#x}"
    for i in (ROOM, NONEMPTY, TAKEN):
        if not 0 <= s[i] < (1 << rows):
            return f"a row mask {s[i]:#x} at slot {i}"
    for i in range(MAX_PLAYERS):
        if not 0 <= s[ROWLEN + i] <= (MAX_ROW_SIZE if i < rows else 0):
            return f"row {i + 1} holding {s[ROWLEN + i]} cards"
        for j in range(s[ROWLEN + i]):
            card = s[ROWS + MAX_ROW_SIZE * i + j]
            if not 0 <= card < COLLECTABLE_KINDS:
                return f"card {card} in row {i + 1}"
    if not -1 <= s[PENDING] < COLLECTABLE_KINDS:
        return f"card {s[PENDING]} drawn"
    if not 0 <= s[NNAME] <= MAX_ROW_SIZE + 1:
        return f"{s[NNAME]} jokers to name"
    for i in range(s[NNAME]):
        if s[NAMEQ + i] != JOKER and s[NAMEQ + i] != GOLDEN_JOKER:
            return f"card {s[NAMEQ + i]} to name as a joker"
    if s[DRAWABLE] < 0 or s[PICKS] < 0:
        return f"{s[DRAWABLE]} cards to draw, {s[PICKS]} colours to choose"
    for i in range(CARD_KINDS):
        if s[UNSEEN + i] < 0:
            return f"{s[UNSEEN + i]} unseen cards of kind {i}"
    return None


cdef inline void _check_state_and_rules(
    const i64 *s, Py_ssize_t state_size, const i64 *cfg, Py_ssize_t cfg_size
) except *:
    _need_size(state_size, STATE_SIZE, "a kernel state")
    _need_size(cfg_size, CFG_SIZE, "a kernel rules array")
    problem = _rules_problem(cfg)
    if problem is not None:
        raise ValueError(f"not a kernel rules array (rules_config): {problem}")
    problem = _state_problem(s, cfg)
    if problem is not None:
        raise ValueError(f"not a kernel state of these rules (state_from_observation): {problem}")


cdef inline void _check_margin(double margin_scale) except *:
    if not margin_scale > 0.0:
        raise ValueError(f"margin_scale must be > 0, not {margin_scale}")

# ---- the Python face: rules --------------------------------------------------------


def k_seed(seed):
    """Seed the calling thread's generator, which every kernel function called
    from this thread draws from (an integer in [0, 2**64))."""
    if not 0 <= seed < 2**64:
        raise ValueError(f"a kernel seed lies in [0, 2**64), not {seed}")
    rng_seed(<uint64_t>seed)


def k_legal(const int64_t[::1] s, const int64_t[::1] cfg, int64_t[::1] out):
    """Write the legal action ids into ``out``; return how many (engine order)."""
    _check_state_and_rules(&s[0], s.shape[0], &cfg[0], cfg.shape[0])
    _need_room(out.shape[0], MAX_ACTIONS, "the legal actions' array")
    return legal_actions(&s[0], &cfg[0], &out[0])


def k_needs_card(const int64_t[::1] s, const int64_t[::1] cfg, i64 a):
    """Whether action ``a`` turns over a card: a draw, or taking a golden joker."""
    _check_state_and_rules(&s[0], s.shape[0], &cfg[0], cfg.shape[0])
    return needs_card(&s[0], &cfg[0], a)


def k_sample_card(const int64_t[::1] s):
    """A card drawn at random from the unseen ones (-1 if none is left)."""
    _need_size(s.shape[0], STATE_SIZE, "a kernel state")
    _ensure_seeded()
    return sample_card(&s[0])


cdef inline void _check_action(const i64 *s, const i64 *cfg, i64 a, i64 card) except *:
    if not 0 <= a < MAX_ACTIONS:
        raise ValueError(f"{a} is no action id: they lie in [0, {MAX_ACTIONS})")
    if needs_card(s, cfg, a) and not (0 <= card < CARD_KINDS and s[UNSEEN + card] > 0):
        raise ValueError(f"action {a} turns over a card: {card} is none of the unseen cards")


def k_apply(int64_t[::1] s, const int64_t[::1] cfg, i64 a, i64 card):
    """Play action ``a`` (assumed legal). ``card`` is the card a draw or a golden
    joker's bonus turns over (ignored by other actions)."""
    _check_state_and_rules(&s[0], s.shape[0], &cfg[0], cfg.shape[0])
    _check_action(&s[0], &cfg[0], a, card)
    apply_action(&s[0], &cfg[0], a, card)


def k_step(int64_t[::1] s, const int64_t[::1] cfg, i64 a):
    """Play ``a``, sampling the card it turns over if any; return that card or -1."""
    _check_state_and_rules(&s[0], s.shape[0], &cfg[0], cfg.shape[0])
    if not 0 <= a < MAX_ACTIONS:
        raise ValueError(f"{a} is no action id: they lie in [0, {MAX_ACTIONS})")
    if needs_card(&s[0], &cfg[0], a) and s[DRAWABLE] <= 0:
        raise ValueError(f"action {a} turns over a card, and none is left")
    _ensure_seeded()
    return step_action(&s[0], &cfg[0], a)


def k_score(
    const int64_t[::1] s, const int64_t[::1] cfg, i64 seat, const int64_t[::1] extra, i64 n_extra,
    int64_t[::1] counts
):
    """(best total, its minus points) of ``seat``'s collection plus ``extra[:n_extra]``.

    ``counts`` is scratch space of COLOURS integers. Jokers are given colours by
    trying every assignment; among those with the best total the fewest minus
    points are kept, as :func:`coloretto.scoring.best_score` keeps them.
    """
    cdef i64 t, m, k
    _check_state_and_rules(&s[0], s.shape[0], &cfg[0], cfg.shape[0])
    if not 0 <= seat < MAX_PLAYERS:
        raise ValueError(f"seat {seat} is not in [0, {MAX_PLAYERS})")
    if not 0 <= n_extra <= extra.shape[0]:
        raise ValueError(f"n_extra must lie in [0, {extra.shape[0]}] (the extra cards given), not {n_extra}")
    for k in range(n_extra):
        if not 0 <= extra[k] < COLLECTABLE_KINDS:
            raise ValueError(f"extra card {extra[k]} is no card of a collection")
    _need_room(counts.shape[0], COLOURS, "the scratch counts")
    score_seat(&s[0], &cfg[0], seat, &extra[0] if extra.shape[0] else NULL, n_extra, &counts[0], &t, &m)
    return t, m


def k_result(const int64_t[::1] s, const int64_t[::1] cfg, double[::1] out):
    """Scores and win shares as if the game ended now: ``out[:n]`` totals,
    ``out[MAX_PLAYERS:MAX_PLAYERS + n]`` win shares (1/k for k winners, who
    share the best :func:`coloretto.scoring.standing`)."""
    _check_state_and_rules(&s[0], s.shape[0], &cfg[0], cfg.shape[0])
    _need_room(out.shape[0], RESULT_SIZE, "a result array")
    game_result(&s[0], &cfg[0], &out[0])


def k_standing(i64 total, i64 minus_points, bint fewer_minus):
    """:func:`coloretto.scoring.standing`, as the kernel computes it."""
    return standing(total, minus_points, fewer_minus)


def k_earns_bonus_card(const int64_t[::1] row, i64 cards_left):
    """:func:`coloretto.game.earns_bonus_card`, as the kernel computes it, for a row of card ids."""
    return earns_bonus_card(&row[0] if row.shape[0] else NULL, row.shape[0], cards_left)

# ---- the Python face: playouts -----------------------------------------------------


def k_playout(int64_t[::1] s, const int64_t[::1] cfg, i64 policy, double[::1] out):
    """Play from ``s`` to the end (``s`` is changed), write :func:`k_result`
    into ``out``; return the number of actions played."""
    _check_state_and_rules(&s[0], s.shape[0], &cfg[0], cfg.shape[0])
    _check_policy(policy)
    _need_room(out.shape[0], RESULT_SIZE, "a result array")
    _ensure_seeded()
    return playout(&s[0], &cfg[0], policy, &out[0])


def k_playout_values(
    int64_t[::1] s, const int64_t[::1] cfg, i64 policy, double[::1] values, double win_weight,
    double margin_scale
):
    """Play to the end (nothing to play if ``s`` is over) and write, for n players,
    ``values[:n]`` utilities, ``values[n:2n]`` final scores, ``values[2n:3n]`` win
    shares. A utility is ``win_weight × win share + (1 − win_weight) × margin``,
    the margin to the best opponent mapped from ±``margin_scale`` to [0, 1]."""
    _check_state_and_rules(&s[0], s.shape[0], &cfg[0], cfg.shape[0])
    _check_policy(policy)
    _check_margin(margin_scale)
    _need_room(values.shape[0], 3 * cfg[C_PLAYERS], "the values array")
    _ensure_seeded()
    playout_values(&s[0], &cfg[0], policy, &values[0], win_weight, margin_scale)


def k_playout_recorded(int64_t[::1] s, const int64_t[::1] cfg, i64 policy, int64_t[:, ::1] actions):
    """A playout that records ``(action, card)`` pairs in the rows of ``actions`` (for tests)."""
    _check_state_and_rules(&s[0], s.shape[0], &cfg[0], cfg.shape[0])
    _check_policy(policy)
    if actions.shape[1] != 2:
        raise ValueError(f"the record holds (action, card) pairs: 2 columns, not {actions.shape[1]}")
    _ensure_seeded()
    return play_to_the_end(&s[0], &cfg[0], policy, &actions[0, 0] if actions.shape[0] else NULL, actions.shape[0])


def k_policy_action(const int64_t[::1] s, const int64_t[::1] cfg, i64 policy):
    """The action playout policy ``policy`` plays in position ``s``, with the knobs
    and weights of ``cfg`` (a standalone bot's move: the ``playout`` bot)."""
    cdef i64 legal[MAX_ACTIONS]
    cdef i64 info[2 * MAX_PLAYERS]
    cdef i64 j
    _check_state_and_rules(&s[0], s.shape[0], &cfg[0], cfg.shape[0])
    _check_policy(policy)
    if s[OVER]:
        raise ValueError("the game is over: no policy has a move")
    for j in range(2 * MAX_PLAYERS):
        info[j] = -1
    _ensure_seeded()
    return policy_action(&s[0], &cfg[0], policy, legal, info)


def k_bench(const int64_t[::1] s0, const int64_t[::1] cfg, i64 policy, i64 playouts):
    """Run ``playouts`` playouts from copies of ``s0``; return the actions played."""
    cdef i64 s[STATE_SIZE]
    cdef double out[RESULT_SIZE]
    cdef i64 steps = 0
    cdef i64 k
    _check_state_and_rules(&s0[0], s0.shape[0], &cfg[0], cfg.shape[0])
    _check_policy(policy)
    _ensure_seeded()
    with nogil:
        for k in range(playouts):
            memcpy(s, &s0[0], STATE_SIZE * sizeof(i64))
            steps += playout(s, &cfg[0], policy, out)
    return steps

def k_duel(const int64_t[::1] s0, const int64_t[:, ::1] cfgs, const int64_t[::1] policies, i64 games,
           double[::1] sums):
    """Play ``games`` games from ``s0``, seat p choosing by ``policies[p]`` with
    the playout knobs of its own rules array ``cfgs[p]`` (the rules themselves
    must be the same in every row); add every seat's final scores and win shares
    into ``sums[:n]`` and ``sums[MAX_PLAYERS:MAX_PLAYERS + n]``. A compiled
    tournament between playout policies, thousands of games a second, for tuning
    their knobs."""
    cdef i64 s[STATE_SIZE]
    cdef double out[RESULT_SIZE]
    cdef i64 g, j, p, n
    if cfgs.shape[1] != CFG_SIZE:
        raise ValueError(f"a rules array holds {CFG_SIZE} values, not {cfgs.shape[1]}")
    _check_state_and_rules(&s0[0], s0.shape[0], &cfgs[0, 0], cfgs.shape[1])
    n = cfgs[0, C_PLAYERS]
    if cfgs.shape[0] != n or policies.shape[0] != n:
        raise ValueError(f"a duel of {n} players needs {n} rules arrays and {n} policies")
    for p in range(n):
        _check_policy(policies[p])
        for j in range(C_TAKE_AT):
            if cfgs[p, j] != cfgs[0, j]:
                raise ValueError(f"seat {p}'s rules array plays other rules than seat 0's (slot {j})")
    _need_room(sums.shape[0], RESULT_SIZE, "the sums array")
    _ensure_seeded()
    with nogil:
        for g in range(games):
            memcpy(s, &s0[0], STATE_SIZE * sizeof(i64))
            duel(s, &cfgs[0, 0], &policies[0], out)
            for j in range(n):  # a result holds n totals, then n win shares
                sums[j] += out[j]
                sums[SHARES + j] += out[SHARES + j]


# ---- the Python face: the learned value --------------------------------------------


cdef const double *_checked_weights(i64 cut, const double[::1] weights) except? NULL:
    """The model array a cut search reads (NULL, not read, when ``cut`` is 0)."""
    if cut == 0:
        return NULL
    if cut < 0 and cut != CUT_ROUND:
        raise ValueError(f"cut must be a number of actions (> 0), {CUT_ROUND} (the round's end) or 0, not {cut}")
    if weights is None:
        raise ValueError("a cut playout needs a value model's weights")
    _need_size(weights.shape[0], V_WEIGHTS, "a value model")
    if not (weights[V_TEMPERATURE] > 0.0 and weights[V_TEMPERATURE_SLOPE] >= 0.0):
        raise ValueError(
            f"a value model's temperature must be > 0 and its slope >= 0, not {weights[V_TEMPERATURE]} "
            f"and {weights[V_TEMPERATURE_SLOPE]}"
        )
    return &weights[0]


def k_features(const int64_t[::1] s, const int64_t[::1] cfg, double[:, ::1] out):
    """Write each seat's V_FEATURES features of position ``s`` into the rows of ``out``."""
    cdef i64 p
    _check_state_and_rules(&s[0], s.shape[0], &cfg[0], cfg.shape[0])
    if out.shape[0] < cfg[C_PLAYERS] or out.shape[1] != V_FEATURES:
        raise ValueError(f"the features array must be (at least {cfg[C_PLAYERS]}, {V_FEATURES})")
    for p in range(cfg[C_PLAYERS]):
        seat_features(&s[0], &cfg[0], p, &out[p, 0])


def k_predict(const int64_t[::1] s, const int64_t[::1] cfg, const double[::1] weights, double[::1] out):
    """The model's :func:`k_result` of position ``s``: predicted final scores and win shares."""
    _check_state_and_rules(&s[0], s.shape[0], &cfg[0], cfg.shape[0])
    _checked_weights(1, weights)
    _need_room(out.shape[0], RESULT_SIZE, "a result array")
    predict(&s[0], &cfg[0], &weights[0], &out[0])


def k_cut_values(
    int64_t[::1] s, const int64_t[::1] cfg, i64 policy, double[::1] values, double win_weight,
    double margin_scale, i64 cut, const double[::1] weights
):
    """:func:`k_playout_values` with the playout cut short after ``cut`` actions
    (CUT_ROUND: at the round's end) and the rest predicted by the model."""
    _check_state_and_rules(&s[0], s.shape[0], &cfg[0], cfg.shape[0])
    _check_policy(policy)
    _check_margin(margin_scale)
    if cut == 0:
        raise ValueError("cut 0 is no cut: use k_playout_values")
    cdef const double *w = _checked_weights(cut, weights)
    _need_room(values.shape[0], 3 * cfg[C_PLAYERS], "the values array")
    _ensure_seeded()
    cut_values(&s[0], &cfg[0], policy, &values[0], win_weight, margin_scale, cut, w)


def k_record_game(
    int64_t[::1] s, const int64_t[::1] cfg, i64 policy, double[:, ::1] features, double[::1] scores,
    double[::1] result
):
    """Play from ``s`` to the end with ``policy`` (``s`` is changed), writing before
    every action each seat's features (row ``n × position + seat`` of ``features``)
    and score now (the same index of ``scores``), then the final :func:`k_result`
    into ``result``; return the positions written (at most ``len(scores) // n``)."""
    cdef i64 n
    cdef i64 written
    _check_state_and_rules(&s[0], s.shape[0], &cfg[0], cfg.shape[0])
    _check_policy(policy)
    n = cfg[C_PLAYERS]
    if features.shape[1] != V_FEATURES or features.shape[0] != scores.shape[0]:
        raise ValueError(f"features must be (m, {V_FEATURES}) and scores (m,)")
    _need_room(result.shape[0], RESULT_SIZE, "a result array")
    _ensure_seeded()
    with nogil:
        written = record_game(
            &s[0], &cfg[0], policy, &features[0, 0] if features.shape[0] else NULL,
            &scores[0] if scores.shape[0] else NULL, scores.shape[0] // n, &result[0]
        )
    return written


# ---- the Python face: the tree -----------------------------------------------------


cdef inline void _check_tree(
    Py_ssize_t node_rows, Py_ssize_t node_columns, Py_ssize_t state_rows, Py_ssize_t state_columns,
    Py_ssize_t edge_rows, Py_ssize_t edge_columns, Py_ssize_t float_rows, Py_ssize_t float_columns,
    const i64 *meta, Py_ssize_t meta_size
) except *:
    if node_columns != NODE_COLUMNS or state_columns != STATE_SIZE or state_rows != node_rows:
        raise ValueError(
            f"a tree's nodes are (n, {NODE_COLUMNS}) and its states (n, {STATE_SIZE}), "
            f"not ({node_rows}, {node_columns}) and ({state_rows}, {state_columns})"
        )
    if edge_columns != EDGE_INT_COLUMNS or float_columns != EDGE_FLOAT_COLUMNS or float_rows != edge_rows:
        raise ValueError(
            f"a tree's edges are (m, {EDGE_INT_COLUMNS}) integers and (m, {EDGE_FLOAT_COLUMNS}) floats, "
            f"not ({edge_rows}, {edge_columns}) and ({float_rows}, {float_columns})"
        )
    _need_size(meta_size, META_SIZE, "a tree's meta array")
    if not (0 <= meta[M_NODES] <= node_rows and 0 <= meta[M_EDGES] <= edge_rows):
        raise ValueError(
            f"the tree's meta says {meta[M_NODES]} nodes and {meta[M_EDGES]} edges in use, "
            f"more than its arrays hold ({node_rows}, {edge_rows})"
        )


def k_add_node(
    int64_t[:, ::1] nodes, int16_t[:, ::1] states, int64_t[:, ::1] edge_ints, double[:, ::1] edge_floats,
    int64_t[::1] meta, const int64_t[::1] s, const int64_t[::1] cfg
):
    """A new node for position ``s`` with one fresh edge per legal action."""
    _check_tree(
        nodes.shape[0], nodes.shape[1], states.shape[0], states.shape[1], edge_ints.shape[0],
        edge_ints.shape[1], edge_floats.shape[0], edge_floats.shape[1], &meta[0], meta.shape[0]
    )
    _check_state_and_rules(&s[0], s.shape[0], &cfg[0], cfg.shape[0])
    if meta[M_NODES] + HEADROOM_NODES > nodes.shape[0] or meta[M_EDGES] + HEADROOM_EDGES > edge_ints.shape[0]:
        raise ValueError("the tree is full: grow its arrays first (Tree.reserve)")
    return add_node(&nodes[0, 0], &states[0, 0], &edge_ints[0, 0], &edge_floats[0, 0], &meta[0], &s[0], &cfg[0])


def k_iterate(
    int64_t[:, ::1] nodes, int16_t[:, ::1] states, int64_t[:, ::1] edge_ints, double[:, ::1] edge_floats,
    int64_t[::1] meta, i64 root, const int64_t[::1] root_state, const int64_t[::1] cfg, i64 policy,
    double c, i64 root_floor, i64 iterations, double win_weight, double margin_scale, double[::1] sums,
    i64 cut=0, const double[::1] weights=None
):
    """Run up to ``iterations`` search iterations from ``root``; return how
    many ran (fewer when the arrays need to grow first). ``sums`` gathers every
    iteration's values (utilities, final scores, win shares of every seat).
    With ``cut`` (not 0) the playouts stop after ``cut`` actions (CUT_ROUND: at
    the end of the round) and the value model ``weights`` predicts the rest."""
    _check_tree(
        nodes.shape[0], nodes.shape[1], states.shape[0], states.shape[1], edge_ints.shape[0],
        edge_ints.shape[1], edge_floats.shape[0], edge_floats.shape[1], &meta[0], meta.shape[0]
    )
    _check_state_and_rules(&root_state[0], root_state.shape[0], &cfg[0], cfg.shape[0])
    _check_policy(policy)
    _check_margin(margin_scale)
    if not 0 <= root < meta[M_NODES]:
        raise ValueError(f"root {root} is not a node of the tree (it holds {meta[M_NODES]})")
    _need_room(sums.shape[0], 3 * cfg[C_PLAYERS], "the sums array")
    cdef const double *w = _checked_weights(cut, weights)
    cdef i64 done
    _ensure_seeded()
    # without the GIL: the searches of several threads (each on its own tree,
    # its own generator) run at once
    with nogil:
        done = iterate(
            &nodes[0, 0], &states[0, 0], &edge_ints[0, 0], &edge_floats[0, 0], &meta[0],
            nodes.shape[0], edge_ints.shape[0], root, &root_state[0], &cfg[0], policy, c, root_floor,
            iterations, win_weight, margin_scale, &sums[0], cut, w
        )
    return done


def k_find(
    const int64_t[:, ::1] nodes, const int16_t[:, ::1] states, const int64_t[:, ::1] edge_ints, i64 root,
    const int16_t[::1] key, i64 max_depth, i64 max_nodes
):
    """Breadth-first search below ``root`` for the node whose position is ``key``
    (visiting at most ``max_nodes`` nodes below it, ``max_depth`` deep); -1 if none."""
    cdef i64 head = 0
    cdef i64 tail = 1
    cdef i64 v, depth, e, e0, child, j
    cdef bint same
    if nodes.shape[1] != NODE_COLUMNS or edge_ints.shape[1] != EDGE_INT_COLUMNS:
        raise ValueError(
            f"a tree's nodes are (n, {NODE_COLUMNS}) and its edges (m, {EDGE_INT_COLUMNS}), "
            f"not ({nodes.shape[0]}, {nodes.shape[1]}) and ({edge_ints.shape[0]}, {edge_ints.shape[1]})"
        )
    if states.shape[1] != STATE_SIZE or key.shape[0] != STATE_SIZE or states.shape[0] != nodes.shape[0]:
        raise ValueError(f"a tree's states and the key are positions of {STATE_SIZE} values")
    if not 0 <= root < nodes.shape[0]:
        raise ValueError(f"root {root} is not a node of the tree")
    if max_nodes < 0:
        raise ValueError(f"max_nodes must be 0 or more, not {max_nodes}")
    queue = np.empty(max_nodes + 1, dtype=np.int64)
    depths = np.empty(max_nodes + 1, dtype=np.int64)
    cdef int64_t[::1] q = queue
    cdef int64_t[::1] d = depths
    q[0] = root
    d[0] = 0
    while head < tail:
        v = q[head]
        depth = d[head]
        head += 1
        same = True
        for j in range(STATE_SIZE):
            if states[v, j] != key[j]:
                same = False
                break
        if same:
            return v
        if depth >= max_depth:
            continue
        e0 = nodes[v, N_EDGE0]
        for e in range(e0, e0 + nodes[v, N_EDGES]):
            child = edge_ints[e, E_CHILD]
            while child >= 0:
                if tail > max_nodes:
                    break
                q[tail] = child
                d[tail] = depth + 1
                tail += 1
                child = nodes[child, N_SIBLING]
    return -1


def k_copy_subtree(
    const int64_t[:, ::1] nodes, const int16_t[:, ::1] states, const int64_t[:, ::1] edge_ints,
    const double[:, ::1] edge_floats, const int64_t[::1] meta, i64 root,
    int64_t[:, ::1] new_nodes, int16_t[:, ::1] new_states, int64_t[:, ::1] new_edge_ints,
    double[:, ::1] new_edge_floats, int64_t[::1] new_meta
):
    """Copy ``root``'s subtree into empty arrays of the same size, breadth first:
    ``root`` becomes node 0 and the copy is compact."""
    cdef i64 used = meta[M_NODES] if meta.shape[0] == META_SIZE else 0
    cdef i64 head = 0
    cdef i64 tail = 1
    cdef i64 edges_used = 0
    cdef i64 v, w, j, e0, m, i, e, f, child, sibling
    _check_tree(
        nodes.shape[0], nodes.shape[1], states.shape[0], states.shape[1], edge_ints.shape[0],
        edge_ints.shape[1], edge_floats.shape[0], edge_floats.shape[1], &meta[0], meta.shape[0]
    )
    if (
        new_nodes.shape[0] != nodes.shape[0] or new_nodes.shape[1] != NODE_COLUMNS
        or new_states.shape[0] != states.shape[0] or new_states.shape[1] != STATE_SIZE
        or new_edge_ints.shape[0] != edge_ints.shape[0] or new_edge_ints.shape[1] != EDGE_INT_COLUMNS
        or new_edge_floats.shape[0] != edge_floats.shape[0]
        or new_edge_floats.shape[1] != EDGE_FLOAT_COLUMNS or new_meta.shape[0] != META_SIZE
    ):
        raise ValueError("the copy's arrays must be of the same shapes as the tree's")
    if not 0 <= root < used:
        raise ValueError(f"root {root} is not a node of the tree (it holds {used})")
    renumber_array = np.full(used, -1, dtype=np.int64)
    queue_array = np.empty(used, dtype=np.int64)
    cdef int64_t[::1] renumber = renumber_array
    cdef int64_t[::1] queue = queue_array
    queue[0] = root
    renumber[root] = 0
    while head < tail:
        v = queue[head]
        w = head  # nodes are numbered in the order they are queued
        head += 1
        for j in range(NODE_COLUMNS):
            new_nodes[w, j] = nodes[v, j]
        for j in range(STATE_SIZE):
            new_states[w, j] = states[v, j]
        e0 = nodes[v, N_EDGE0]
        m = nodes[v, N_EDGES]
        new_nodes[w, N_EDGE0] = edges_used
        for i in range(m):
            e = e0 + i
            f = edges_used + i
            for j in range(EDGE_INT_COLUMNS):
                new_edge_ints[f, j] = edge_ints[e, j]
            for j in range(EDGE_FLOAT_COLUMNS):
                new_edge_floats[f, j] = edge_floats[e, j]
            child = edge_ints[e, E_CHILD]
            while child >= 0:
                renumber[child] = tail
                queue[tail] = child
                tail += 1
                child = nodes[child, N_SIBLING]
        edges_used += m
    # second pass: child and sibling links in the new numbering
    for w in range(tail):
        sibling = new_nodes[w, N_SIBLING]
        new_nodes[w, N_SIBLING] = renumber[sibling] if sibling >= 0 and w > 0 else -1
        e0 = new_nodes[w, N_EDGE0]
        for f in range(e0, e0 + new_nodes[w, N_EDGES]):
            child = new_edge_ints[f, E_CHILD]
            if child >= 0:
                new_edge_ints[f, E_CHILD] = renumber[child]
    new_meta[M_NODES] = tail
    new_meta[M_EDGES] = edges_used


# ---- the vectorised environment ----------------------------------------------------
#
# coloretto.envs.vector is its face. Each slot holds one game: its kernel state,
# its deck in order (the face-down cards without the last-round card, which the
# state's BEFORE_LR places), the per-game facts the state does not keep (GAME_*
# below) and its own xoshiro256** generator. A draw or a golden joker's bonus
# turns over the slot's next card instead of sampling one, so that a game is
# fully determined by its deal and a deal of the core can be replayed here. The
# rule facts of a deal (the box, starting cards per seat, the variant of chosen
# starting colours) and the starting state come in from the core; what is here
# is only the shuffling.

from libc.string cimport memmove

cpdef enum:
    # one int64 row of per-game facts for each slot
    GAME_POS = 0  # the deck's next card
    GAME_LEN = 1  # cards in the deck (the starting colours chosen leave it)
    GAME_FIRST = 2  # who starts round 1
    GAME_STEPS = 3  # actions counted against max_steps (every action; the learner's alone in one seat)
    GAME_SEAT = 4  # the learner's seat (one seat against compiled opponents)
    GAME_REMOVED = 5  # COLLECTABLE_KINDS counts: cards out of the game (2 players: untaken rows)
    GAME_SCORES = GAME_REMOVED + COLLECTABLE_KINDS  # MAX_PLAYERS cached best totals
    GAME_SIZE = GAME_SCORES + MAX_PLAYERS
    # where each block of coloretto.envs.encoding.LAYOUT starts, in an offsets array
    OB_SEAT_PRESENT = 0
    OB_TO_MOVE = 1
    OB_ROW_PRESENT = 2
    OB_ROW_CAPACITY = 3
    OB_ROW_TAKEN = 4
    OB_ROW_CARDS = 5
    OB_DRAWN_CARD = 6
    OB_JOKERS_TO_NAME = 7
    OB_COLLECTIONS = 8
    OB_OUT_THIS_ROUND = 9
    OB_SCORES = 10
    OB_UNSEEN = 11
    OB_REMOVED = 12
    OB_DECK = 13
    OB_COLOURS_IN_PLAY = 14
    OB_ROUND = 15
    OB_START_PICKS_LEFT = 16
    OB_FIRST_PLAYER = 17
    OB_SIZE = 18  # the slot after the blocks: the vector's length
    OB_BLOCKS = 19
    # the compiled opponents of the single-agent face
    OPPONENT_NONE = -1  # every seat is played from outside (the multi-agent face)
    OPPONENT_RANDOM = 0
    OPPONENT_PLAYOUT = 1  # fast_greedy_action: the search's playout policy
    OPPONENT_GREEDY = 2  # coloretto.bots.simple.GreedyBot
    REWARD_MARGIN = 0
    REWARD_WIN = 1


cdef inline void rng_save(uint64_t *into) noexcept nogil:
    memcpy(into, coloretto_rng, 4 * sizeof(uint64_t))


cdef inline void rng_load(const uint64_t *source) noexcept nogil:
    memcpy(coloretto_rng, source, 4 * sizeof(uint64_t))


cdef inline i64 greedy_row_gain(
    const i64 *s, const i64 *cfg, const i64 *base, i64 seat, const i64 *cards, i64 n
) noexcept nogil:
    """coloretto.bots.simple.row_gain: how much taking ``cards`` raises the seat's
    best total (``base[seat]``: that total now, kept by the caller)."""
    return score_total(s, cfg, seat, cards, n) - base[seat]


cdef i64 greedy_action(const i64 *s, const i64 *cfg, const i64 *legal, i64 n, const i64 *base) noexcept nogil:
    """coloretto.bots.simple.GreedyBot's move, with its ties broken as Python's
    ``max`` breaks them (the first best); a starting colour is chosen at random,
    as the bot chooses it. ``base``: every seat's best total now."""
    cdef i64 buf[MAX_ROW_SIZE + 1]
    cdef i64 me = s[PLAYER]
    cdef i64 first = legal[0]
    cdef i64 k, a, length, mine, theirs, gain, seat, best_a, best_key, best_len, card, count, i, total
    cdef i64 take_value, best_row_gain
    cdef double expected
    cdef bint have_open
    if n == 1:
        return first
    if s[PENDING] >= 0:
        best_a = -1
        best_key = 0
        best_len = 0
        for k in range(n):
            a = legal[k]
            length = row_with(s, a - A_PLACE, buf)
            buf[length] = s[PENDING]
            length += 1
            mine = greedy_row_gain(s, cfg, base, me, buf, length)
            theirs = 0
            have_open = False
            for seat in range(cfg[C_PLAYERS]):
                if seat == me or (s[OUT] >> seat) & 1:
                    continue
                gain = greedy_row_gain(s, cfg, base, seat, buf, length)
                if not have_open or gain > theirs:
                    theirs = gain
                    have_open = True
            if best_a < 0 or mine - theirs > best_key or (mine - theirs == best_key and -length > best_len):
                best_a = a
                best_key = mine - theirs
                best_len = -length
        return best_a
    if A_NAME <= first < A_PASS:
        best_a = -1
        best_key = 0
        for k in range(n):
            buf[0] = legal[k] - A_NAME
            gain = score_total(s, cfg, me, buf, 1)
            if best_a < 0 or gain > best_key:
                best_a = legal[k]
                best_key = gain
        return best_a
    if first >= A_START:
        return legal[rand_below(n)]
    best_a = -1
    best_key = 0
    for k in range(n):
        a = legal[k]
        if a < A_TAKE or a >= A_NAME:
            continue
        length = row_with(s, a - A_TAKE, buf)
        gain = greedy_row_gain(s, cfg, base, me, buf, length)
        if best_a < 0 or gain > best_key:
            best_a = a
            best_key = gain
    if first != A_DRAW:
        return best_a if best_a >= 0 else first
    if best_a < 0:
        return A_DRAW
    take_value = best_key
    # GreedyBot._draw_value: the expected gain of the best open row after one more card
    total = 0
    for card in range(CARD_KINDS):
        total += s[UNSEEN + card]
    if total == 0:
        return best_a
    expected = 0.0
    for card in range(CARD_KINDS):
        count = s[UNSEEN + card]
        if count == 0:
            continue
        have_open = False
        best_row_gain = 0
        for i in range(cfg[C_ROWS]):
            if not (s[ROOM] >> i) & 1:
                continue
            length = row_with(s, i, buf)
            buf[length] = card
            gain = greedy_row_gain(s, cfg, base, me, buf, length + 1)
            if not have_open or gain > best_row_gain:
                best_row_gain = gain
                have_open = True
        expected += <double>count / <double>total * <double>best_row_gain
    return best_a if <double>take_value >= expected else A_DRAW


cpdef enum:
    # action features: what each row is worth to the seat to move and to its best
    # rival still in the round, taken now or with the drawn card added (a learned
    # policy's inputs beside the observation vector: the gains greedy play compares)
    AF_TAKE_MINE = 0
    AF_TAKE_RIVAL = AF_TAKE_MINE + MAX_PLAYERS
    AF_PLACE_MINE = AF_TAKE_RIVAL + MAX_PLAYERS
    AF_PLACE_RIVAL = AF_PLACE_MINE + MAX_PLAYERS
    AF_DRAW = AF_PLACE_RIVAL + MAX_PLAYERS  # greedy's expected gain of the best open row after a draw
    ACTION_FEATURES = AF_DRAW + 1


cdef void action_features(const i64 *s, const i64 *cfg, double *out) noexcept nogil:
    """The ACTION_FEATURES of the seat to move, in points (0 where a row is
    absent, empty, taken or full, or no card is drawn)."""
    cdef i64 buf[MAX_ROW_SIZE + 1]
    cdef i64 base[MAX_PLAYERS]
    cdef i64 me = s[PLAYER]
    cdef i64 players = cfg[C_PLAYERS]
    cdef i64 i, seat, length, gain, rival, card, count, total, best
    cdef bint any_rival, any_open
    cdef double expected
    memset(out, 0, ACTION_FEATURES * sizeof(double))
    if s[OVER]:
        return
    for seat in range(players):
        base[seat] = score_total(s, cfg, seat, NULL, 0)
    for i in range(cfg[C_ROWS]):
        if (s[TAKEN] >> i) & 1:
            continue
        length = row_with(s, i, buf)
        if s[PENDING] >= 0:
            if not (s[ROOM] >> i) & 1:
                continue
            buf[length] = s[PENDING]
            length += 1
        elif length == 0:
            continue
        rival = 0
        any_rival = False
        for seat in range(players):
            if seat == me or (s[OUT] >> seat) & 1:
                continue
            gain = greedy_row_gain(s, cfg, base, seat, buf, length)
            if not any_rival or gain > rival:
                rival = gain
                any_rival = True
        gain = greedy_row_gain(s, cfg, base, me, buf, length)
        if s[PENDING] >= 0:
            out[AF_PLACE_MINE + i] = gain
            out[AF_PLACE_RIVAL + i] = rival
        else:
            out[AF_TAKE_MINE + i] = gain
            out[AF_TAKE_RIVAL + i] = rival
    if s[PENDING] >= 0 or s[NNAME] > 0 or s[PICKS] > 0 or s[ROOM] == 0 or s[DRAWABLE] <= 0:
        return  # no draw is legal
    total = 0
    for card in range(CARD_KINDS):
        total += s[UNSEEN + card]
    if total == 0:
        return
    expected = 0.0
    for card in range(CARD_KINDS):
        count = s[UNSEEN + card]
        if count == 0:
            continue
        any_open = False
        best = 0
        for i in range(cfg[C_ROWS]):
            if not (s[ROOM] >> i) & 1:
                continue
            length = row_with(s, i, buf)
            buf[length] = card
            gain = greedy_row_gain(s, cfg, base, me, buf, length + 1)
            if not any_open or gain > best:
                best = gain
                any_open = True
        expected += <double>count / <double>total * <double>best
    out[AF_DRAW] = expected


def k_action_features(const int64_t[::1] s, const int64_t[::1] cfg, double[::1] out):
    """:func:`action_features` of one state into ``out`` (ACTION_FEATURES numbers)."""
    _check_state_and_rules(&s[0], s.shape[0], &cfg[0], cfg.shape[0])
    _need_size(out.shape[0], ACTION_FEATURES, "the action features")
    action_features(&s[0], &cfg[0], &out[0])


cdef class VectorGames:
    """``num_envs`` games stepped together; coloretto.envs.vector documents the
    arrays and the conventions. Every method checks the shapes of what it is
    given; the actions are checked by the Python face before they come here."""

    cdef public object states, games, decks, rngs
    cdef i64[:, ::1] s_v
    cdef i64[:, ::1] g_v
    cdef i64[:, ::1] d_v
    cdef uint64_t[:, ::1] r_v
    cdef i64[::1] cfg_v
    cdef i64[::1] template_v
    cdef i64[::1] box_v
    cdef i64[::1] offsets_v
    cdef readonly i64 num_envs, players, deck_size, per_player, chooses, opponent, reward_kind, max_steps
    cdef readonly i64 fixed_seat
    cdef readonly double illegal_penalty

    def __init__(self, i64 num_envs, const int64_t[::1] cfg, const int64_t[::1] template,
                 const int64_t[::1] box, i64 per_player, bint chooses, const int64_t[::1] offsets,
                 i64 opponent, i64 fixed_seat, i64 reward_kind, double illegal_penalty, i64 max_steps):
        cdef i64 k, cards = 0
        if num_envs < 1:
            raise ValueError(f"num_envs must be at least 1, not {num_envs}")
        _check_state_and_rules(&template[0], template.shape[0], &cfg[0], cfg.shape[0])
        _need_size(box.shape[0], CARD_KINDS, "the box's composition")
        _need_size(offsets.shape[0], OB_BLOCKS, "the observation's offsets")
        if opponent < OPPONENT_NONE or opponent > OPPONENT_GREEDY:
            raise ValueError(f"unknown compiled opponent {opponent}")
        if reward_kind != REWARD_MARGIN and reward_kind != REWARD_WIN:
            raise ValueError(f"unknown reward kind {reward_kind}")
        if not -1 <= fixed_seat < cfg[C_PLAYERS]:
            raise ValueError(f"seat {fixed_seat} does not exist in a {cfg[C_PLAYERS]}-player game")
        if max_steps < 1:
            raise ValueError(f"max_steps must be at least 1, not {max_steps}")
        for k in range(CARD_KINDS):
            if box[k] < 0:
                raise ValueError("the box cannot hold a negative number of cards")
            cards += box[k]
        self.num_envs = num_envs
        self.players = cfg[C_PLAYERS]
        self.deck_size = cards
        self.per_player = per_player
        self.chooses = chooses
        self.opponent = opponent
        self.fixed_seat = fixed_seat
        self.reward_kind = reward_kind
        self.illegal_penalty = illegal_penalty
        self.max_steps = max_steps
        self.cfg_v = np.array(cfg, dtype=np.int64)
        self.template_v = np.array(template, dtype=np.int64)
        self.box_v = np.array(box, dtype=np.int64)
        self.offsets_v = np.array(offsets, dtype=np.int64)
        self.states = np.zeros((num_envs, STATE_SIZE), dtype=np.int64)
        self.games = np.zeros((num_envs, GAME_SIZE), dtype=np.int64)
        self.decks = np.zeros((num_envs, max(cards, 1)), dtype=np.int64)
        self.rngs = np.zeros((num_envs, 4), dtype=np.uint64)
        self.s_v = self.states
        self.g_v = self.games
        self.d_v = self.decks
        self.r_v = self.rngs

    # -- per slot, in C (the slot's generator is the thread's while these run)

    cdef void _rescore(self, i64 i, i64 seat) noexcept nogil:
        self.g_v[i, GAME_SCORES + seat] = score_total(&self.s_v[i, 0], &self.cfg_v[0], seat, NULL, 0)

    cdef void _deal(self, i64 i) noexcept nogil:
        cdef i64 *s = &self.s_v[i, 0]
        cdef i64 *g = &self.g_v[i, 0]
        cdef i64 *deck = &self.d_v[i, 0]
        cdef i64 n = self.players
        cdef i64 colours = self.cfg_v[C_COLOURS]
        cdef i64 counts[CARD_KINDS]
        cdef i64 pick[COLOURS]
        cdef i64 k, j, t, c, seat, length
        memcpy(s, &self.template_v[0], STATE_SIZE * sizeof(i64))
        memset(s + COLL, 0, MAX_PLAYERS * COLLECTABLE_KINDS * sizeof(i64))
        memcpy(counts, &self.box_v[0], CARD_KINDS * sizeof(i64))
        memset(g, 0, GAME_SIZE * sizeof(i64))
        if not self.chooses:
            # distinct starting colours among those in play, as random.sample draws them
            for k in range(colours):
                pick[k] = k
            for k in range(n * self.per_player):
                j = k + rand_below(colours - k)
                t = pick[k]
                pick[k] = pick[j]
                pick[j] = t
                seat = k // self.per_player
                c = pick[k]
                s[COLL + COLLECTABLE_KINDS * seat + c] += 1
                counts[c] -= 1
        length = 0
        for c in range(CARD_KINDS):
            s[UNSEEN + c] = counts[c]
            for k in range(counts[c]):
                deck[length] = c
                length += 1
        for k in range(length - 1, 0, -1):  # Fisher-Yates
            j = rand_below(k + 1)
            t = deck[k]
            deck[k] = deck[j]
            deck[j] = t
        g[GAME_LEN] = length
        g[GAME_FIRST] = rand_below(n)
        s[PLAYER] = g[GAME_FIRST]
        g[GAME_SEAT] = self.fixed_seat if self.fixed_seat >= 0 else rand_below(n)
        for seat in range(n):
            self._rescore(i, seat)

    cdef void _play(self, i64 i, i64 a) noexcept nogil:
        """Play the legal action ``a`` in slot ``i``, turning over the deck's next card if it needs one."""
        cdef i64 *s = &self.s_v[i, 0]
        cdef i64 *g = &self.g_v[i, 0]
        cdef i64 *deck = &self.d_v[i, 0]
        cdef const i64 *cfg = &self.cfg_v[0]
        cdef i64 rows_before[MAX_PLAYERS * MAX_ROW_SIZE]
        cdef i64 lengths_before[MAX_PLAYERS]
        cdef i64 card = -1
        cdef i64 player = s[PLAYER]
        cdef i64 round_before = s[ROUND]
        cdef i64 over_before = s[OVER]
        cdef i64 j, r, taken_row
        cdef bint leaves = a >= A_TAKE and a < A_START
        if a >= A_START:
            # as the engine does: the top-most card of the chosen colour leaves the box
            for j in range(g[GAME_POS], g[GAME_LEN]):
                if deck[j] == a - A_START:
                    memmove(deck + j, deck + j + 1, (g[GAME_LEN] - j - 1) * sizeof(i64))
                    g[GAME_LEN] -= 1
                    break
        elif needs_card(s, cfg, a):
            card = deck[g[GAME_POS]]
            g[GAME_POS] += 1
        if leaves:
            memcpy(rows_before, s + ROWS, MAX_PLAYERS * MAX_ROW_SIZE * sizeof(i64))
            memcpy(lengths_before, s + ROWLEN, MAX_PLAYERS * sizeof(i64))
        apply_action(s, cfg, a, card)
        if leaves and (s[ROUND] != round_before or (s[OVER] and not over_before)):
            # the round ended: the rows nobody took leave the game (two players)
            taken_row = a - A_TAKE if a < A_NAME else -1
            for r in range(cfg[C_ROWS]):
                if r == taken_row:
                    continue
                for j in range(lengths_before[r]):
                    g[GAME_REMOVED + rows_before[MAX_ROW_SIZE * r + j]] += 1
        if a >= A_TAKE:
            self._rescore(i, player)

    cdef i64 _opponent_action(self, i64 i) noexcept nogil:
        cdef const i64 *s = &self.s_v[i, 0]
        cdef const i64 *cfg = &self.cfg_v[0]
        cdef i64 legal[MAX_ACTIONS]
        cdef i64 info[2 * MAX_PLAYERS]
        cdef i64 n, j
        if self.opponent == OPPONENT_RANDOM:
            return random_action(s, cfg)
        n = legal_actions(s, cfg, legal)
        if self.opponent == OPPONENT_PLAYOUT:
            for j in range(2 * MAX_PLAYERS):
                info[j] = -1
            return fast_greedy_action(s, cfg, legal, n, info)
        return greedy_action(s, cfg, legal, n, &self.g_v[i, GAME_SCORES])

    cdef void _opponents_play(self, i64 i) noexcept nogil:
        cdef i64 *s = &self.s_v[i, 0]
        cdef i64 seat = self.g_v[i, GAME_SEAT]
        while not s[OVER] and s[PLAYER] != seat:
            self._play(i, self._opponent_action(i))

    cdef bint _is_legal(self, i64 i, i64 a) noexcept nogil:
        cdef i64 legal[MAX_ACTIONS]
        cdef i64 n = legal_actions(&self.s_v[i, 0], &self.cfg_v[0], legal)
        cdef i64 k
        for k in range(n):
            if legal[k] == a:
                return True
        return False

    cdef void _final_rewards(self, i64 i, double *result, double *out) noexcept nogil:
        """coloretto.envs.encoding.final_rewards, every seat's, from the kernel's
        scoring and tie-break; ``result`` receives the game's game_result."""
        cdef i64 n = self.players
        cdef i64 p, q, winners = 0
        cdef double best
        game_result(&self.s_v[i, 0], &self.cfg_v[0], result)
        if self.reward_kind == REWARD_WIN:
            for p in range(n):
                winners += result[SHARES + p] > 0.0
            for p in range(n):
                if result[SHARES + p] > 0.0:
                    out[p] = 1.0 / winners
                else:
                    out[p] = -1.0 / (n - winners) if n > winners else 0.0
            return
        for p in range(n):
            best = -1e300
            for q in range(n):
                if q != p and result[q] > best:
                    best = result[q]
            out[p] = result[p] - best

    cdef void _encode(self, i64 i, i64 me, float *v) noexcept nogil:
        """coloretto.envs.encoding.encode_observation of slot ``i`` from seat ``me``."""
        cdef const i64 *s = &self.s_v[i, 0]
        cdef const i64 *g = &self.g_v[i, 0]
        cdef const i64 *cfg = &self.cfg_v[0]
        cdef const i64 *o = &self.offsets_v[0]
        cdef i64 n = self.players
        cdef i64 seat, r, k, row, j, base
        memset(v, 0, o[OB_SIZE] * sizeof(float))
        for seat in range(n):
            r = seat - me
            if r < 0:
                r += n
            v[o[OB_SEAT_PRESENT] + r] = 1.0
            if (s[OUT] >> seat) & 1:
                v[o[OB_OUT_THIS_ROUND] + r] = 1.0
            v[o[OB_SCORES] + r] = <float>g[GAME_SCORES + seat]
            base = o[OB_COLLECTIONS] + r * COLLECTABLE_KINDS
            for k in range(COLLECTABLE_KINDS):
                v[base + k] = <float>s[COLL + COLLECTABLE_KINDS * seat + k]
        if not s[OVER]:
            r = s[PLAYER] - me
            v[o[OB_TO_MOVE] + (r + n if r < 0 else r)] = 1.0
        for row in range(cfg[C_ROWS]):
            v[o[OB_ROW_PRESENT] + row] = 1.0
            v[o[OB_ROW_CAPACITY] + row] = <float>cfg[C_CAPS + row]
            v[o[OB_ROW_TAKEN] + row] = <float>((s[TAKEN] >> row) & 1)
            base = o[OB_ROW_CARDS] + row * COLLECTABLE_KINDS
            for j in range(s[ROWLEN + row]):
                v[base + s[ROWS + MAX_ROW_SIZE * row + j]] += 1.0
        if s[PENDING] >= 0:
            v[o[OB_DRAWN_CARD] + s[PENDING]] = 1.0
        v[o[OB_JOKERS_TO_NAME]] = <float>s[NNAME]
        for k in range(COLLECTABLE_KINDS):
            v[o[OB_UNSEEN] + k] = <float>s[UNSEEN + k]
            v[o[OB_REMOVED] + k] = <float>g[GAME_REMOVED + k]
        # the engine's cards_in_deck counts the last-round card while it is unseen
        v[o[OB_DECK]] = <float>(s[DRAWABLE] - s[PICKS] + (1 if s[BEFORE_LR] >= 0 else 0))
        v[o[OB_DECK] + 1] = <float>(s[BEFORE_LR] if s[BEFORE_LR] > 0 else 0)
        v[o[OB_DECK] + 2] = 1.0 if (s[LAST_ROUND] or s[DRAWABLE] == 0) else 0.0
        for k in range(cfg[C_COLOURS]):
            v[o[OB_COLOURS_IN_PLAY] + k] = 1.0
        v[o[OB_ROUND]] = <float>s[ROUND]
        v[o[OB_START_PICKS_LEFT]] = <float>s[PICKS]
        r = g[GAME_FIRST] - me
        v[o[OB_FIRST_PLAYER] + (r + n if r < 0 else r)] = 1.0

    cdef void _mask(self, i64 i, i64 seat, signed char *m) noexcept nogil:
        cdef i64 legal[MAX_ACTIONS]
        cdef i64 n, k
        memset(m, 0, MAX_ACTIONS)
        if self.s_v[i, PLAYER] != seat:
            return
        n = legal_actions(&self.s_v[i, 0], &self.cfg_v[0], legal)
        for k in range(n):
            m[legal[k]] = 1

    cdef inline i64 _view(self, i64 i) noexcept nogil:
        """The seat a slot is observed from: the learner's, or else the seat to move."""
        return self.g_v[i, GAME_SEAT] if self.opponent != OPPONENT_NONE else self.s_v[i, PLAYER]

    cdef void _check_out(self, float[:, ::1] obs, signed char[:, ::1] masks) except *:
        if obs.shape[0] != self.num_envs or obs.shape[1] != self.offsets_v[OB_SIZE]:
            raise ValueError(f"observations must be ({self.num_envs}, {self.offsets_v[OB_SIZE]})")
        if masks.shape[0] != self.num_envs or masks.shape[1] != MAX_ACTIONS:
            raise ValueError(f"masks must be ({self.num_envs}, {MAX_ACTIONS})")

    # -- the Python face

    def seed(self, const uint64_t[::1] seeds):
        """Seed every slot's generator (splitmix64 of its seed, as :func:`k_seed`)."""
        global coloretto_rng_seeded
        cdef uint64_t saved[4]
        cdef i64 i
        cdef int was_seeded = coloretto_rng_seeded
        _need_size(seeds.shape[0], self.num_envs, "the seeds")
        rng_save(saved)
        for i in range(self.num_envs):
            rng_seed(seeds[i])
            rng_save(&self.r_v[i, 0])
        rng_load(saved)
        coloretto_rng_seeded = was_seeded

    def deal(self, float[:, ::1] obs, signed char[:, ::1] masks):
        """Deal a new game into every slot from its generator (the opponents
        play up to the learner's first turn); write the observations and masks."""
        cdef uint64_t saved[4]
        cdef i64 i
        self._check_out(obs, masks)
        rng_save(saved)
        with nogil:
            for i in range(self.num_envs):
                rng_load(&self.r_v[i, 0])
                self._deal(i)
                if self.opponent != OPPONENT_NONE:
                    self._opponents_play(i)
                rng_save(&self.r_v[i, 0])
                self._encode(i, self._view(i), &obs[i, 0])
                self._mask(i, self._view(i), &masks[i, 0])
        rng_load(saved)

    def load(self, i64 i, const int64_t[::1] state, const int64_t[::1] deck, i64 first_player,
             i64 seat=-1):
        """Put a game dealt by the core into slot ``i``: its starting kernel state
        (kernel.state_from_game), its deck without the last-round card, its first
        player; ``seat``: the learner's (one seat against compiled opponents)."""
        cdef i64 k
        if not 0 <= i < self.num_envs:
            raise ValueError(f"slot {i} does not exist among {self.num_envs}")
        _check_state_and_rules(&state[0], state.shape[0], &self.cfg_v[0], self.cfg_v.shape[0])
        if deck.shape[0] > self.d_v.shape[1]:
            raise ValueError(f"a deck of {deck.shape[0]} cards is larger than the box ({self.d_v.shape[1]})")
        if not 0 <= first_player < self.players:
            raise ValueError(f"first player {first_player} is not a seat")
        memcpy(&self.s_v[i, 0], &state[0], STATE_SIZE * sizeof(i64))
        memset(&self.g_v[i, 0], 0, GAME_SIZE * sizeof(i64))
        for k in range(deck.shape[0]):
            self.d_v[i, k] = deck[k]
        self.g_v[i, GAME_LEN] = deck.shape[0]
        self.g_v[i, GAME_FIRST] = first_player
        self.g_v[i, GAME_SEAT] = seat if seat >= 0 else self.fixed_seat if self.fixed_seat >= 0 else 0
        for k in range(self.players):
            self._rescore(i, k)

    def settle(self, float[:, ::1] obs, signed char[:, ::1] masks):
        """Let the compiled opponents play up to the learner's turn in every slot
        (after :meth:`load`); write the observations and masks."""
        cdef uint64_t saved[4]
        cdef i64 i
        self._check_out(obs, masks)
        rng_save(saved)
        with nogil:
            for i in range(self.num_envs):
                if self.opponent != OPPONENT_NONE:
                    rng_load(&self.r_v[i, 0])
                    self._opponents_play(i)
                    rng_save(&self.r_v[i, 0])
                self._encode(i, self._view(i), &obs[i, 0])
                self._mask(i, self._view(i), &masks[i, 0])
        rng_load(saved)

    def observe(self, float[:, ::1] obs, signed char[:, ::1] masks, const int64_t[::1] seats):
        """Write every slot's observation and mask from ``seats[i]`` (-1: the slot's own view)."""
        cdef i64 i, seat
        self._check_out(obs, masks)
        _need_size(seats.shape[0], self.num_envs, "the seats")
        for i in range(self.num_envs):
            if not -1 <= seats[i] < self.players:
                raise ValueError(f"seat {seats[i]} does not exist in a {self.players}-player game")
        with nogil:
            for i in range(self.num_envs):
                seat = seats[i] if seats[i] >= 0 else self._view(i)
                self._encode(i, seat, &obs[i, 0])
                self._mask(i, seat, &masks[i, 0])

    def action_features(self, double[:, ::1] out):
        """Every slot's :func:`action_features` of its seat to move into ``out[i]``."""
        cdef i64 i
        _need_size(out.shape[0], self.num_envs, "the action features' rows")
        _need_size(out.shape[1], ACTION_FEATURES, "the action features")
        with nogil:
            for i in range(self.num_envs):
                action_features(&self.s_v[i, 0], &self.cfg_v[0], &out[i, 0])

    def step(self, const int64_t[::1] actions, float[:, ::1] obs, signed char[:, ::1] masks,
             double[:, ::1] rewards, unsigned char[::1] terminated, unsigned char[::1] truncated,
             unsigned char[::1] illegal, float[:, ::1] final_obs, double[:, ::1] final_result,
             bint autoreset=True):
        """Play ``actions[i]`` in every slot (the learner's action when there are
        compiled opponents, else the seat to move's) and write the results.

        ``rewards[i, p]``: seat p's reward this step; an illegal action changes
        nothing and costs its seat ``illegal_penalty``. A finished game (over, or
        ``max_steps`` actions counted) writes its last observation into
        ``final_obs[i]`` (a game over also its game_result into ``final_result[i]``:
        totals, then win shares) and, with ``autoreset``, is replaced by a new
        deal in the same step, whose observation and mask are the ones written."""
        cdef uint64_t saved[4]
        cdef double final[MAX_PLAYERS]
        cdef i64 i, a, p, mover
        cdef i64 n = self.players
        cdef bint solo = self.opponent != OPPONENT_NONE
        cdef i64 *s
        self._check_out(obs, masks)
        self._check_out(final_obs, masks)
        _need_size(actions.shape[0], self.num_envs, "the actions")
        _need_size(terminated.shape[0], self.num_envs, "terminated")
        _need_size(truncated.shape[0], self.num_envs, "truncated")
        _need_size(illegal.shape[0], self.num_envs, "illegal")
        if rewards.shape[0] != self.num_envs or rewards.shape[1] != n:
            raise ValueError(f"rewards must be ({self.num_envs}, {n})")
        if final_result.shape[0] != self.num_envs or final_result.shape[1] != RESULT_SIZE:
            raise ValueError(f"final results must be ({self.num_envs}, {RESULT_SIZE})")
        for i in range(self.num_envs):
            if self.s_v[i, OVER]:
                raise ValueError(f"game {i} is over: deal before stepping it (autoreset was off)")
        rng_save(saved)
        with nogil:
            for i in range(self.num_envs):
                s = &self.s_v[i, 0]
                a = actions[i]
                mover = s[PLAYER]
                for p in range(n):
                    rewards[i, p] = 0.0
                terminated[i] = 0
                truncated[i] = 0
                illegal[i] = 0
                self.g_v[i, GAME_STEPS] += 1
                rng_load(&self.r_v[i, 0])
                if (solo and mover != self.g_v[i, GAME_SEAT]) or not self._is_legal(i, a):
                    illegal[i] = 1
                    rewards[i, mover] = -self.illegal_penalty
                else:
                    self._play(i, a)
                    if solo:
                        self._opponents_play(i)
                if s[OVER]:
                    terminated[i] = 1
                    self._final_rewards(i, &final_result[i, 0], final)
                    for p in range(n):
                        rewards[i, p] += final[p]
                elif self.g_v[i, GAME_STEPS] >= self.max_steps:
                    truncated[i] = 1
                if terminated[i] or truncated[i]:
                    self._encode(i, self._view(i), &final_obs[i, 0])
                    if autoreset:
                        self._deal(i)
                        if solo:
                            self._opponents_play(i)
                rng_save(&self.r_v[i, 0])
                self._encode(i, self._view(i), &obs[i, 0])
                self._mask(i, self._view(i), &masks[i, 0])
        rng_load(saved)
