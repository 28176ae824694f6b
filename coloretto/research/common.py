"""What the research tools share: bot checks, a bot against a field on the
arena's duplicate deals, and the CSV and JSON tables they write.

Every figure comes from :func:`coloretto.arena.run_tournament`, so a tool
runs on any arena backend (``serial``, ``pool``, ``ray``) and gets the same
numbers from each: the arena derives every deal and every bot seed from the
tournament seed alone.
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from coloretto.arena import ArenaError, TournamentConfig, run_tournament
from coloretto.arena.stats import mean_interval, wilson_interval
from coloretto.bots import BotSpecError, check_bot
from coloretto.rules import Rules

#: the arena's own cap on thinking time a move, for bots that declare less
DEFAULT_MOVE_TIME = 1.0


class ResearchError(ValueError):
    """A research run that cannot be done as asked: the message says what was wrong."""


@dataclass(frozen=True)
class Where:
    """Where the games are played: an arena backend and its workers."""

    backend: str = "pool"
    workers: int | None = None
    address: str | None = None


#: the default: a process pool on this machine's cores
LOCAL = Where()


def checked_bot(spec: str, what: str = "bot") -> str:
    """The bot name trimmed, or ResearchError saying why it is no bot."""
    if not isinstance(spec, str) or not spec.strip():
        raise ResearchError(f"the {what} needs a name, e.g. greedy")
    try:
        return check_bot(spec.strip()).name
    except BotSpecError as exc:
        raise ResearchError(f"{what}: {exc}") from None


def move_time_for(specs: Sequence[str]) -> float:
    """The arena's cap a move: one second, or the longest time a name declares
    (``mcts:2s``), so that a bot is held to its own budget and not refused."""
    longest = DEFAULT_MOVE_TIME
    for spec in specs:
        limit = check_bot(spec).limit
        if limit is not None and limit.time is not None:
            longest = max(longest, limit.time)
    return longest


def field_lineup(bot: str, against: Sequence[str], players: int) -> tuple[str, ...]:
    """``bot`` in one seat and the field in the others: one opponent fills every
    other seat, or one per seat."""
    opponents = [checked_bot(a, "opponent") for a in against]
    if not opponents:
        raise ResearchError("name the field: --against BOT (once, or once per other seat)")
    if len(opponents) == 1:
        opponents *= players - 1
    if len(opponents) != players - 1:
        raise ResearchError(
            f"{len(opponents)} opponents for the {players - 1} other seats of a {players}-player game: "
            "give --against once (it fills them all) or once per other seat"
        )
    if bot in opponents:
        # the arena tells bots apart by name: the same name on both sides would pool their games
        raise ResearchError(f"{bot!r} is also in the field: the bot studied must differ from its opponents")
    return (bot, *opponents)


@dataclass(frozen=True)
class FieldResult:
    """One bot's figures against a field (the arena's per-bot summary) and its
    win share in each game, in game order (for paired comparisons)."""

    bot: str
    summary: dict[str, Any]
    per_game: tuple[float, ...]
    moves: tuple[int, ...]

    @property
    def win_share(self) -> float:
        return float(self.summary["win_share"])

    @property
    def mean_margin(self) -> float:
        margin = self.summary["mean_margin"]
        return math.nan if margin is None else float(margin)

    def row(self) -> dict[str, Any]:
        """The figures a research table keeps of it."""
        s = self.summary
        return {
            "games": s["games"],
            "win_share": s["win_share"],
            "win_share_ci": s["win_share_ci"],
            "mean_score": s["mean_score"],
            "score_ci": s["score_ci"],
            "mean_margin": s["mean_margin"],
            "margin_ci": s["margin_ci"],
            "mean_rank": s["mean_rank"],
            "forfeits": s["forfeits"],
        }


def play_field(
    lineup: tuple[str, ...],
    rules: Rules,
    games: int,
    seed: int,
    out_dir: Path,
    where: Where,
    *,
    records_dir: Path | None = None,
) -> FieldResult:
    """Play ``lineup[0]`` against the rest in the arena (duplicate deals, every
    seating) and return its figures. Two calls with the same seed, rules and
    field play the same deals with the studied bot in the same seats: common
    random numbers, so that two versions of a bot are compared on equal cards."""
    try:
        config = TournamentConfig(
            rules,
            lineup,
            games=games,
            seed=seed,
            move_time=move_time_for(lineup),
            keep_records=records_dir is not None,
        )
        outcome = run_tournament(
            config,
            out_dir,
            backend=where.backend,
            workers=where.workers,
            address=where.address,
            records_dir=records_dir,
        )
    except ArenaError as exc:
        raise ResearchError(str(exc)) from None
    if outcome.interrupted:
        raise KeyboardInterrupt
    bot = lineup[0]
    summary = next(b for b in outcome.document["bots"] if b["bot"] == bot)
    per_game = tuple(
        math.fsum(share for name, share in zip(r["bots"], r["win_shares"]) if name == bot)
        for r in outcome.results
    )
    return FieldResult(bot, summary, per_game, tuple(int(r["moves"]) for r in outcome.results))


def paired_difference(a: Sequence[float], b: Sequence[float]) -> dict[str, Any]:
    """Mean of a − b over games played on the same deals in the same seats,
    with a 95 % t interval (the pairs are the games)."""
    if len(a) != len(b):
        raise ValueError("paired samples must have the same games")
    diff = mean_interval([x - y for x, y in zip(a, b)])
    return {"mean": clean(diff.mean), "ci": [clean(diff.low), clean(diff.high)], "games": diff.n}


def proportion(successes: float, n: int) -> dict[str, Any]:
    low, high = wilson_interval(successes, n)
    share = successes / n if n else math.nan
    return {"share": clean(share), "ci": [clean(low), clean(high)], "n": n}


def clean(value: float | None) -> float | None:
    """JSON has no NaN: None instead, and six decimals so that files compare."""
    if value is None or math.isnan(value):
        return None
    return round(float(value), 6)


def fresh_out_dir(out: Path, what: str) -> Path:
    """The output directory, made; refused if it already holds files (a run never
    mixes its games with an earlier run's)."""
    out = Path(out)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise ResearchError(f"{out} already exists and is not empty: give another --out for this {what}")
    out.mkdir(parents=True, exist_ok=True)
    return out


def _cell(value: Any) -> Any:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, float):
        return f"{value:.6g}"
    return "" if value is None else value


def write_csv(path: Path, columns: Sequence[str], rows: Sequence[dict[str, Any]]) -> None:
    """One row per dict; a column whose name ends in ``_ci`` (a [low, high]
    pair) becomes two, ``…_ci_low`` and ``…_ci_high``, as the arena's CSV files."""
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        header: list[str] = []
        for column in columns:
            header += [column + "_low", column + "_high"] if column.endswith("_ci") else [column]
        writer.writerow(header)
        for row in rows:
            line: list[Any] = []
            for column in columns:
                value = row.get(column)
                if column.endswith("_ci"):
                    pair = value if isinstance(value, list | tuple) else [None, None]
                    line += [_cell(v) for v in pair]
                else:
                    line.append(_cell(value))
            writer.writerow(line)


def write_json(path: Path, document: dict[str, Any]) -> None:
    path.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
