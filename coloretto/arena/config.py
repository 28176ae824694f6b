"""A tournament's definition: the lineup, the seatings, the deals and their seeds.

Game ``g`` of a tournament is deal ``g // S`` played in seating ``g % S``,
where ``S`` is the number of seatings. Every seed is derived from the
tournament seed by hashing, so any game can be played on its own, by any
worker, in any order, and comes out the same.
"""

from __future__ import annotations

import hashlib
import itertools
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from coloretto.rules import Rules, RulesError

#: a lineup entry that is an external program speaking the engine protocol
COMMAND_PREFIX = "cmd:"
#: who finishes a game for a bot that forfeited it
FALLBACK_BOT = "greedy"


class ArenaError(ValueError):
    """A tournament that cannot be run as asked (bad lineup, bad resume directory …)."""


class Seatings(StrEnum):
    ALL = "all"  #: every distinct arrangement of the lineup at the table
    ROTATIONS = "rotations"  #: the lineup's cyclic rotations only


def derive_seed(*parts: object) -> int:
    """A 63-bit seed from any parts, the same on every machine and Python."""
    text = "\x1f".join(str(p) for p in parts).encode("utf-8")
    return int.from_bytes(hashlib.sha256(text).digest()[:8], "big") >> 1


def seatings_of(lineup: Sequence[str], mode: Seatings) -> tuple[tuple[str, ...], ...]:
    """The seatings a deal is played in: who sits in seat 0, 1, … (in a fixed order).

    ``all``: each distinct permutation once (one X against three Y has four;
    four different bots have 24). ``rotations``: the cyclic shifts, so each
    bot plays each seat once.
    """
    lineup = tuple(lineup)
    arrangements: Iterable[tuple[str, ...]]
    if mode is Seatings.ROTATIONS:
        arrangements = (lineup[i:] + lineup[:i] for i in range(len(lineup)))
    else:
        arrangements = itertools.permutations(lineup)
    return tuple(dict.fromkeys(arrangements))


def check_budget(spec: str, move_time: float) -> None:
    """Refuse (ArenaError) a bot whose name declares more thinking time a move than
    the tournament allows (``--move-time``): it is not run, rather than run over
    the cap. A name that cannot be read is left to forfeit its games, with the
    reason, as a saved lineup's unknown bot does; a plug-in's budget, which its
    name does not tell, is held to the cap by the game itself (``budget_of``)."""
    if spec.startswith(COMMAND_PREFIX):
        return  # an external program is told the move time and must keep to it
    from coloretto.bots import BotSpecError, check_bot

    try:
        limit = check_bot(spec).limit
    except BotSpecError:
        return
    if limit is not None and limit.time is not None and limit.time > move_time:
        raise ArenaError(
            f"bot {spec!r} thinks for {limit.time:g} s a move, over this tournament's cap of "
            f"{move_time:g} s a move (--move-time): give a larger --move-time, or the bot less time"
        )


@dataclass(frozen=True)
class GameTask:
    """One game (or match) of the tournament, all a worker needs besides the config."""

    game: int
    deal: int
    seating: int


@dataclass(frozen=True)
class TournamentConfig:
    rules: Rules
    lineup: tuple[str, ...]  #: bot names, one per seat of the table
    games: int  #: games asked for; rounded up to whole deals (see ``total_games``)
    seed: int
    seatings_mode: Seatings = Seatings.ALL
    move_time: float = 1.0  #: seconds a bot may think per move
    time_margin: float = 0.5  #: seconds over the budget before it forfeits
    startup_time: float = 10.0  #: seconds an external program has to answer hello / new_game
    keep_records: bool = False
    seatings: tuple[tuple[str, ...], ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if len(self.lineup) != self.rules.players:
            raise ArenaError(
                f"a {self.rules.players}-player game needs {self.rules.players} bots, "
                f"got {len(self.lineup)}: {', '.join(self.lineup) or 'none'}"
            )
        if self.games < 1:
            raise ArenaError("--games must be at least 1")
        times = (self.move_time, self.time_margin, self.startup_time)
        if not all(math.isfinite(t) for t in times):
            raise ArenaError("the move time, the margin and the start-up time must be finite numbers")
        if not self.move_time > 0 or self.time_margin < 0 or not self.startup_time > 0:
            raise ArenaError("the move time must be positive and the margin not negative")
        for spec in dict.fromkeys(self.lineup):
            check_budget(spec, self.move_time)
        object.__setattr__(self, "seatings_mode", Seatings(self.seatings_mode))
        object.__setattr__(self, "seatings", seatings_of(self.lineup, self.seatings_mode))

    @property
    def deals(self) -> int:
        return math.ceil(self.games / len(self.seatings))

    @property
    def total_games(self) -> int:
        """Games actually played: every deal in every seating."""
        return self.deals * len(self.seatings)

    def task(self, game: int) -> GameTask:
        if not 0 <= game < self.total_games:
            raise IndexError(f"game {game} is not in this tournament")
        return GameTask(game, game // len(self.seatings), game % len(self.seatings))

    def deal_seed(self, deal: int) -> int:
        return derive_seed("coloretto-arena", self.seed, "deal", deal)

    def bot_seed(self, task: GameTask, seat: int) -> int:
        """A bot's seed: from its game's deal seed, the seating and the seat."""
        return derive_seed(self.deal_seed(task.deal), "seating", task.seating, "seat", seat)

    # ------------------------------------------------------------- JSON

    def to_dict(self) -> dict[str, Any]:
        return {
            "rules": self.rules.to_dict(),
            "lineup": list(self.lineup),
            "games": self.games,
            "seed": self.seed,
            "seatings": self.seatings_mode.value,
            "move_time": self.move_time,
            "time_margin": self.time_margin,
            "startup_time": self.startup_time,
            "keep_records": self.keep_records,
        }

    @classmethod
    def from_dict(cls, data: Any) -> TournamentConfig:
        if not isinstance(data, dict):
            raise ArenaError("the tournament settings must be a JSON object")
        try:
            return cls(
                rules=Rules.from_dict(data["rules"]),
                lineup=tuple(str(b) for b in data["lineup"]),
                games=int(data["games"]),
                seed=int(data["seed"]),
                seatings_mode=Seatings(data.get("seatings", "all")),
                move_time=float(data.get("move_time", 1.0)),
                time_margin=float(data.get("time_margin", 0.5)),
                startup_time=float(data.get("startup_time", 10.0)),
                keep_records=bool(data.get("keep_records", False)),
            )
        except (KeyError, TypeError, ValueError, RulesError) as exc:
            if isinstance(exc, ArenaError):
                raise
            raise ArenaError(f"bad tournament settings: {exc!s}") from None

    def with_games(self, games: int) -> TournamentConfig:
        data = self.to_dict()
        data["games"] = games
        return TournamentConfig.from_dict(data)
