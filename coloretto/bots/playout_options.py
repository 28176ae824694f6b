"""The tuned playout policy's weights, and what a ``playout`` bot name says.

The search values a leaf by playing the game out with a cheap policy in the
compiled kernel. ``rollout=greedy`` (the default) values cards off the scoring
table and takes a row once it is worth ``take`` points; ``rollout=tuned`` is
the same judgement with weights (:class:`PlayoutWeights`): a take bar that may
rise or fall with how full the rows are, how many seats are still in the
round and what a draw is expected to bring; a placement that weighs what the
card adds to the mover's best row against what it adds to the next seat's and
the later seats'; what a "+2", a joker and a fourth colour are worth; the
prospects of a plus colour while the game has cards to come; the noise on
near-ties and the share of random moves; with two players, what a take leaves
the opponent to make of the other rows alone (``heuristic``'s two-player
rule). At :data:`GREEDY_WEIGHTS` it plays exactly the greedy playout.
``coloretto tune-playout`` tunes the weights by self-play in the kernel
(:mod:`coloretto.research.playout_tune`) and writes them, one set per player
count, to ``coloretto/bots/playout.json`` (shipped as package data), which
``rollout=tuned`` and ``playout:tuned`` read.

Read here, apart from the kernel, so that bot names are checked without
loading it:

>>> read_playout_options("tuned,take=12")
(None, PlayoutSettings(policy=3, take=12.0, explore=None, weights=''))
>>> GREEDY_WEIGHTS.take, GREEDY_WEIGHTS.row, GREEDY_WEIGHTS.noise
(6.0, 1.0, 0.5)
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, fields, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

from coloretto.bots.base import BotSpecError
from coloretto.bots.mcts_options import (
    EXPLORE,
    EXPLORE_RANGE,
    POLICY_GREEDY,
    POLICY_TUNED,
    ROLLOUTS,
    TAKE_AT,
    TAKE_RANGE,
    read_in_range,
)
from coloretto.files import write_atomically

#: the shipped weights (``coloretto tune-playout`` writes them)
PLAYOUT_FILE = Path(__file__).with_name("playout.json")
FORMAT = "coloretto-playout-weights"


@dataclass(frozen=True)
class PlayoutWeights:
    """The tuned playout policy's judgement (the kernel's ``tuned_action``); the
    defaults are the greedy playout's, which it then plays move for move."""

    #: points the best row must be worth before the policy takes it (the bar)
    take: float = TAKE_AT
    #: share of random moves
    explore: float = EXPLORE
    #: points added to the bar, times the share of the open rows' room already filled
    take_fill: float = 0.0
    #: points added to the bar for each other seat still in the round
    take_rivals: float = 0.0
    #: added to the bar, times the expected value of the best row after one more card
    draw: float = 0.0
    #: placing: the mover's value of the row with the card (the greedy playout's term)
    row: float = 1.0
    #: placing: the next seat's value of the row with the card, subtracted (the greedy playout's term)
    row_next: float = 1.0
    #: placing: what the card adds to the mover's best row
    own: float = 0.0
    #: placing: what the card adds to the next seat's best row, subtracted
    next: float = 0.0
    #: placing: what the card adds to each later seat's best row, subtracted
    rest: float = 0.0
    #: a card of a colour outside the plus colours costs this times its minus points
    minus: float = 1.0
    #: what a "+2" is worth
    plus_two: float = 2.0
    #: a joker is worth its best plus colour's next step and this
    joker: float = 0.0
    #: a plus colour's cards also count what they add to its next step, times this
    #: times the cards left before the last round per seat
    prospect: float = 0.0
    #: values compared get uniform noise of up to this many points (ties, near-ties)
    noise: float = 0.5
    #: two players: a take costs this times what the opponent, left alone in the
    #: round, can expect to make of the other rows (no effect with more players)
    leave: float = 0.0

    def kernel_weights(self) -> tuple[int, ...]:
        """The weights after ``take`` and ``explore``, in thousandths, in the kernel's order (TW_*)."""
        return tuple(round(getattr(self, name) * 1000) for name in KERNEL_WEIGHTS)

    def text(self) -> str:
        """Every weight as ``name=value``, comma-separated."""
        return ",".join(f"{f.name}={getattr(self, f.name):g}" for f in fields(self))


#: the weights the kernel reads from the rules array, in its order (TW_* of _kernel.pyx)
KERNEL_WEIGHTS: tuple[str, ...] = tuple(f.name for f in fields(PlayoutWeights))[2:]
#: the greedy playout's judgement: the tuned policy at these weights plays it exactly
GREEDY_WEIGHTS = PlayoutWeights()


@dataclass(frozen=True)
class WeightRange:
    """The range a weight is tuned over, and the range a file may give it."""

    name: str
    low: float
    high: float


#: every weight's tuning range (``coloretto tune-playout``); a file's weights must lie in them
WEIGHT_RANGES: tuple[WeightRange, ...] = (
    WeightRange("take", 0.0, 20.0),
    WeightRange("explore", 0.0, 0.3),
    WeightRange("take_fill", -12.0, 12.0),
    WeightRange("take_rivals", -4.0, 4.0),
    WeightRange("draw", 0.0, 1.5),
    WeightRange("row", 0.0, 2.0),
    WeightRange("row_next", 0.0, 2.0),
    WeightRange("own", 0.0, 2.0),
    WeightRange("next", 0.0, 2.0),
    WeightRange("rest", 0.0, 2.0),
    WeightRange("minus", 0.0, 3.0),
    WeightRange("plus_two", 0.0, 5.0),
    WeightRange("joker", -3.0, 5.0),
    WeightRange("prospect", 0.0, 0.5),
    WeightRange("noise", 0.0, 3.0),
    WeightRange("leave", 0.0, 2.0),
)
RANGES = {r.name: r for r in WEIGHT_RANGES}
assert tuple(RANGES) == tuple(f.name for f in fields(PlayoutWeights)), "a range for every weight, in order"

#: weights that only act with two players: tuned for two players, held at the greedy playout's otherwise
TWO_PLAYER_WEIGHTS = frozenset({"leave"})


def tuned_ranges(players: int) -> tuple[WeightRange, ...]:
    """The weights that act with ``players`` players, with their ranges (what a tuning run varies)."""
    return tuple(r for r in WEIGHT_RANGES if players == 2 or r.name not in TWO_PLAYER_WEIGHTS)


class PlayoutFileError(ValueError):
    """A weights file that cannot be read or does not fit; the message is one line."""


@dataclass(frozen=True)
class WeightsFile:
    """A weights file: one :class:`PlayoutWeights` per player count, and how it was made."""

    players: dict[int, PlayoutWeights]
    source: dict[str, Any]

    def weights(self, players: int) -> PlayoutWeights:
        """The weights for ``players``; a player count the file does not tune plays greedy's."""
        return self.players.get(players, GREEDY_WEIGHTS)

    def write(self, path: Path) -> None:
        document = {
            "format": FORMAT,
            "players": {str(n): asdict(w) for n, w in sorted(self.players.items())},
            "source": self.source,
        }
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(path, json.dumps(document, indent=1, sort_keys=False) + "\n")


def weights_from_mapping(values: dict[str, Any], where: str) -> PlayoutWeights:
    """Weights from ``{name: number}``; every weight must be there and in its range."""
    unknown = sorted(set(values) - set(RANGES))
    # a file from before a two-player weight existed plays as it did: the weight at the greedy value
    missing = [name for name in RANGES if name not in values and name not in TWO_PLAYER_WEIGHTS]
    if unknown or missing:
        raise PlayoutFileError(f"{where}: unknown weights {unknown}, missing {missing}")
    read = {}
    for name, value in values.items():
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            raise PlayoutFileError(f"{where}: weight {name} must be a number, not {value!r}")
        bounds = RANGES[name]
        if not bounds.low <= value <= bounds.high:
            raise PlayoutFileError(
                f"{where}: weight {name} = {value} lies outside [{bounds.low}, {bounds.high}]"
            )
        read[name] = float(value)
    return PlayoutWeights(**read)


def read_weights_file(path: Path) -> WeightsFile:
    """Read and check a weights file (raises :class:`PlayoutFileError`)."""
    try:
        document = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError) as exc:
        raise PlayoutFileError(f"cannot read the weights file {path}: {exc}") from None
    except json.JSONDecodeError as exc:
        raise PlayoutFileError(f"{path} is not JSON: {exc}") from None
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise PlayoutFileError(f"{path} is not a playout weights file (format {FORMAT!r})")
    players = document.get("players")
    if not isinstance(players, dict):
        raise PlayoutFileError(f"{path}: 'players' must map player counts to weights")
    read: dict[int, PlayoutWeights] = {}
    for key, values in players.items():
        if key not in {"2", "3", "4", "5"} or not isinstance(values, dict):
            raise PlayoutFileError(f"{path}: 'players' maps player counts 2 to 5 to weights, not {key!r}")
        read[int(key)] = weights_from_mapping(values, f"{path}, {key} players")
    source = document.get("source", {})
    return WeightsFile(read, source if isinstance(source, dict) else {})


@lru_cache(maxsize=16)
def _read_cached(path: str, stamp: tuple[int, int]) -> WeightsFile:
    return read_weights_file(Path(path))


def load_weights(path: Path | None = None) -> WeightsFile:
    """A weights file (the shipped one by default), read once while it is unchanged."""
    path = PLAYOUT_FILE if path is None else path
    try:
        stat = path.stat()
    except OSError as exc:
        raise PlayoutFileError(f"cannot read the weights file {path}: {exc.strerror}") from None
    return _read_cached(str(path), (stat.st_mtime_ns, stat.st_size))


def tuned_weights(players: int, path: Path | None = None) -> PlayoutWeights:
    """The tuned weights for ``players`` (the shipped file's, or ``path``'s)."""
    return load_weights(path).weights(players)


def playout_knobs(
    policy: int, take: float | None, explore: float | None, players: int, path: Path | None = None
) -> tuple[float, float, PlayoutWeights]:
    """(take bar, random-move share, weights) a playout policy plays with: the tuned
    policy's from its weights file, unless ``take`` or ``explore`` is given; the
    others' the defaults, unless given."""
    weights = tuned_weights(players, path) if policy == POLICY_TUNED else GREEDY_WEIGHTS
    return (
        weights.take if take is None else take,
        weights.explore if explore is None else explore,
        weights,
    )


# ---------------------------------------------------------------- the bot name


@dataclass(frozen=True)
class PlayoutSettings:
    """What a ``playout`` bot name says."""

    policy: int = POLICY_GREEDY  #: one of :data:`coloretto.bots.mcts_options.ROLLOUTS`
    #: take bar and random-move share; None: the policy's own (the tuned weights', or 6 and 0.1)
    take: float | None = None
    explore: float | None = None
    weights: str = ""  #: a weights file for the tuned policy ('' the shipped one)

    def weights_path(self) -> Path | None:
        return Path(self.weights).expanduser() if self.weights else None


def read_playout_options(options: str) -> tuple[None, PlayoutSettings]:
    """``""``, ``"tuned"``, ``"greedy,take=12,explore=0"``, ``"weights=FILE.json"`` → settings
    (a weights file is read and checked here)."""
    settings = _parse_playout_options(options)
    if settings.weights:
        try:
            load_weights(settings.weights_path())
        except PlayoutFileError as exc:
            raise BotSpecError(str(exc)) from None
    return None, settings


def playout_files(options: str) -> tuple[str, ...]:
    """The files a ``playout`` name's options make it read (its ``weights=``), read
    from the text alone: a server refuses such a name before any file is opened.

    >>> playout_files("tuned,weights=~/w.json"), playout_files("take=12")
    (('~/w.json',), ())
    """
    weights = _parse_playout_options(options).weights
    return (weights,) if weights else ()


def _parse_playout_options(options: str) -> PlayoutSettings:
    settings = PlayoutSettings()
    named = ""
    for part in (p.strip() for p in options.split(",") if p.strip()):
        key, eq, value = part.partition("=")
        key, value = key.strip().lower(), value.strip()
        if not eq:
            if key not in ROLLOUTS:
                raise BotSpecError(
                    f"unknown playout option {part!r}: a policy ({', '.join(ROLLOUTS)}), take=…, "
                    "explore=… or weights=FILE.json"
                )
            if named and named != key:
                raise BotSpecError(f"two playout policies: {named} and {key}")
            named = key
            settings = replace(settings, policy=ROLLOUTS[key])
        elif key == "take":
            settings = replace(settings, take=read_in_range(key, value, TAKE_RANGE))
        elif key == "explore":
            settings = replace(settings, explore=read_in_range(key, value, EXPLORE_RANGE))
        elif key == "weights":
            if not value:
                raise BotSpecError("weights= needs a file: weights=FILE.json")
            settings = replace(settings, weights=value)
        else:
            raise BotSpecError(
                f"unknown playout option {key!r}: a policy ({', '.join(ROLLOUTS)}), take=…, "
                "explore=… or weights=FILE.json"
            )
    if settings.weights:
        if named and named != "tuned":
            raise BotSpecError(f"weights= is for the tuned policy, not {named}")
        settings = replace(settings, policy=POLICY_TUNED)
    return settings
