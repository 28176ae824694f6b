"""Types of the compiled search kernel (coloretto/bots/_kernel.pyx), for mypy.

Arrays are C-contiguous NumPy arrays of the dtype named; the functions check
their sizes and raise ``ValueError`` for a wrong one.
"""

from collections.abc import Mapping

import numpy as np
from numpy.typing import NDArray

Int64s = NDArray[np.int64]
Int16s = NDArray[np.int16]
Floats = NDArray[np.float64]

#: sha256 of the _kernel.pyx this module was compiled from ("" if built without setup.py)
SOURCE_SHA256: str

MAX_PLAYERS: int
MAX_ROW_SIZE: int
CARD_KINDS: int
COLLECTABLE_KINDS: int
COLOURS: int
JOKER: int
GOLDEN_JOKER: int
PLUS_TWO: int
PLUS_TWO_POINTS: int
PLUS_COLOURS: int
TABLE_SIZE: int
TABLE_TOP: int
A_DRAW: int
A_PLACE: int
A_TAKE: int
A_NAME: int
A_PASS: int
A_START: int
MAX_ACTIONS: int
POLICY_RANDOM: int
POLICY_GREEDY: int
POLICY_EXACT: int
POLICY_TUNED: int
ROWS: int
ROWLEN: int
ROOM: int
NONEMPTY: int
TAKEN: int
OUT: int
PLAYER: int
PENDING: int
NNAME: int
NAMEQ: int
LAST_ROUND: int
OVER: int
DRAWABLE: int
BEFORE_LR: int
ROUND: int
LAST_TAKER: int
PICKS: int
UNSEEN: int
COLL: int
STATE_SIZE: int
C_PLAYERS: int
C_ROWS: int
C_CAPS: int
C_COLOURS: int
C_GOLDEN: int
C_ONTAKE: int
C_NEXTSTART: int
C_MOSTCARDS: int
C_FEWERMINUS: int
C_TABLE: int
C_TAKE_AT: int
C_EXPLORE: int
C_TUNED: int
TUNED_WEIGHTS: int
TW_TAKE_FILL: int
TW_TAKE_RIVALS: int
TW_DRAW: int
TW_ROW: int
TW_ROW_NEXT: int
TW_OWN: int
TW_NEXT: int
TW_REST: int
TW_MINUS: int
TW_PLUS_TWO: int
TW_JOKER: int
TW_PROSPECT: int
TW_NOISE: int
CFG_SIZE: int
RESULT_SIZE: int
SHARES: int
V_FEATURES: int
V_TEMPERATURE: int
V_TEMPERATURE_SLOPE: int
V_WEIGHTS: int
CUT_ROUND: int
N_PLAYER: int
N_EDGE0: int
N_EDGES: int
N_TOTAL: int
N_CARD: int
N_SIBLING: int
N_OVER: int
NODE_COLUMNS: int
E_ACTION: int
E_VISITS: int
E_CHILD: int
EDGE_INT_COLUMNS: int
F_SCORE: int
F_WIN: int
F_UTILITY: int
EDGE_FLOAT_COLUMNS: int
M_NODES: int
M_EDGES: int
META_SIZE: int
HEADROOM_NODES: int
HEADROOM_EDGES: int
MAX_DEPTH: int

def compiled_constants() -> dict[str, int]: ...
def core_constants() -> dict[str, int]: ...
def check_constants(core: Mapping[str, object]) -> None: ...

# ---- rules
def k_seed(seed: int) -> None: ...
def k_legal(s: Int64s, cfg: Int64s, out: Int64s) -> int: ...
def k_needs_card(s: Int64s, cfg: Int64s, a: int) -> bool: ...
def k_sample_card(s: Int64s) -> int: ...
def k_apply(s: Int64s, cfg: Int64s, a: int, card: int) -> None: ...
def k_step(s: Int64s, cfg: Int64s, a: int) -> int: ...
def k_score(
    s: Int64s, cfg: Int64s, seat: int, extra: Int64s, n_extra: int, counts: Int64s
) -> tuple[int, int]: ...
def k_result(s: Int64s, cfg: Int64s, out: Floats) -> None: ...
def k_standing(total: int, minus_points: int, fewer_minus: bool) -> int: ...
def k_earns_bonus_card(row: Int64s, cards_left: int) -> bool: ...

# ---- playouts
def k_playout(s: Int64s, cfg: Int64s, policy: int, out: Floats) -> int: ...
def k_playout_values(
    s: Int64s, cfg: Int64s, policy: int, values: Floats, win_weight: float, margin_scale: float
) -> None: ...
def k_playout_recorded(s: Int64s, cfg: Int64s, policy: int, actions: Int64s) -> int: ...
def k_policy_action(s: Int64s, cfg: Int64s, policy: int) -> int: ...
def k_bench(s0: Int64s, cfg: Int64s, policy: int, playouts: int) -> int: ...
def k_duel(s0: Int64s, cfgs: Int64s, policies: Int64s, games: int, sums: Floats) -> None: ...

# ---- the learned value
def k_features(s: Int64s, cfg: Int64s, out: Floats) -> None: ...
def k_predict(s: Int64s, cfg: Int64s, weights: Floats, out: Floats) -> None: ...
def k_cut_values(
    s: Int64s,
    cfg: Int64s,
    policy: int,
    values: Floats,
    win_weight: float,
    margin_scale: float,
    cut: int,
    weights: Floats | None,
) -> None: ...
def k_record_game(
    s: Int64s, cfg: Int64s, policy: int, features: Floats, scores: Floats, result: Floats
) -> int: ...

# ---- the tree
def k_add_node(
    nodes: Int64s,
    states: Int16s,
    edge_ints: Int64s,
    edge_floats: Floats,
    meta: Int64s,
    s: Int64s,
    cfg: Int64s,
) -> int: ...
def k_iterate(
    nodes: Int64s,
    states: Int16s,
    edge_ints: Int64s,
    edge_floats: Floats,
    meta: Int64s,
    root: int,
    root_state: Int64s,
    cfg: Int64s,
    policy: int,
    c: float,
    root_floor: int,
    iterations: int,
    win_weight: float,
    margin_scale: float,
    sums: Floats,
    cut: int = 0,
    weights: Floats | None = None,
) -> int: ...
def k_find(
    nodes: Int64s, states: Int16s, edge_ints: Int64s, root: int, key: Int16s, max_depth: int, max_nodes: int
) -> int: ...
def k_copy_subtree(
    nodes: Int64s,
    states: Int16s,
    edge_ints: Int64s,
    edge_floats: Floats,
    meta: Int64s,
    root: int,
    new_nodes: Int64s,
    new_states: Int16s,
    new_edge_ints: Int64s,
    new_edge_floats: Floats,
    new_meta: Int64s,
) -> None: ...

# ---- the vectorised environment (coloretto.envs.vector is its face)
GAME_POS: int
GAME_LEN: int
GAME_FIRST: int
GAME_STEPS: int
GAME_SEAT: int
GAME_REMOVED: int
GAME_SCORES: int
GAME_SIZE: int
OB_SEAT_PRESENT: int
OB_TO_MOVE: int
OB_ROW_PRESENT: int
OB_ROW_CAPACITY: int
OB_ROW_TAKEN: int
OB_ROW_CARDS: int
OB_DRAWN_CARD: int
OB_JOKERS_TO_NAME: int
OB_COLLECTIONS: int
OB_OUT_THIS_ROUND: int
OB_SCORES: int
OB_UNSEEN: int
OB_REMOVED: int
OB_DECK: int
OB_COLOURS_IN_PLAY: int
OB_ROUND: int
OB_START_PICKS_LEFT: int
OB_FIRST_PLAYER: int
OB_SIZE: int
OB_BLOCKS: int
OPPONENT_NONE: int
OPPONENT_RANDOM: int
OPPONENT_PLAYOUT: int
OPPONENT_GREEDY: int
REWARD_MARGIN: int
REWARD_WIN: int

Float32s = NDArray[np.float32]
Int8s = NDArray[np.int8]
UInt8s = NDArray[np.uint8]
UInt64s = NDArray[np.uint64]

class VectorGames:
    states: Int64s  #: (num_envs, STATE_SIZE) kernel states
    games: Int64s  #: (num_envs, GAME_SIZE) per-game facts (GAME_*)
    decks: Int64s  #: (num_envs, cards in the box) decks, the last-round card left out
    rngs: UInt64s  #: (num_envs, 4) xoshiro256** states
    num_envs: int
    players: int
    deck_size: int
    per_player: int
    chooses: int
    opponent: int
    reward_kind: int
    max_steps: int
    fixed_seat: int
    illegal_penalty: float
    def __init__(
        self,
        num_envs: int,
        cfg: Int64s,
        template: Int64s,
        box: Int64s,
        per_player: int,
        chooses: bool,
        offsets: Int64s,
        opponent: int,
        fixed_seat: int,
        reward_kind: int,
        illegal_penalty: float,
        max_steps: int,
    ) -> None: ...
    def seed(self, seeds: UInt64s) -> None: ...
    def deal(self, obs: Float32s, masks: Int8s) -> None: ...
    def load(self, i: int, state: Int64s, deck: Int64s, first_player: int, seat: int = -1) -> None: ...
    def settle(self, obs: Float32s, masks: Int8s) -> None: ...
    def observe(self, obs: Float32s, masks: Int8s, seats: Int64s) -> None: ...
    def action_features(self, out: Floats) -> None: ...
    def step(
        self,
        actions: Int64s,
        obs: Float32s,
        masks: Int8s,
        rewards: Floats,
        terminated: UInt8s,
        truncated: UInt8s,
        illegal: UInt8s,
        final_obs: Float32s,
        final_result: Floats,
        autoreset: bool = True,
    ) -> None: ...

ACTION_FEATURES: int
AF_TAKE_MINE: int
AF_TAKE_RIVAL: int
AF_PLACE_MINE: int
AF_PLACE_RIVAL: int
AF_DRAW: int

def k_action_features(s: Int64s, cfg: Int64s, out: Floats) -> None: ...
