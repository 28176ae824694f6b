"""How a rule option changes the game: the same bots play every choice of the
option on the same seeds, and the games are measured.

The option and its choices come from :data:`coloretto.rules.RULE_OPTIONS`
(an option with choices: every choice; a number with a range: every number
in it; any other number: the values given). For each value the bots play an
arena tournament (``--bots`` fill the seats in turn, every seating of the
deal is played), keeping every game's record, and these are measured:

* **length**: actions (moves, draws and placings included) and rounds per game;
* **score spread**: the winner's total minus the last player's, and the
  standard deviation of the seats' totals in a game (population form);
* **winning score**: the best total of each game;
* **first-player advantage**: the win share of the seat that starts round 1
  (ties split), with its 95 % Wilson interval; no advantage is 1/players;
* **luck**: the first ``review_games`` records are reviewed
  (:func:`coloretto.review.review`, ``review_budget`` iterations a position),
  which gives each player's total luck: the change in their expected final
  score that the cards brought, summed over every card that came
  (``luck_score``), and the same in win chance (``luck_win``). The **share of
  the result explained by luck** is the R² of the least-squares line of each
  player's final margin (their total minus the best other total) on their
  luck in points, over every (reviewed game, seat); ``luck_r2_win`` is the
  same for the result (1 a win, 1/k a k-way tie, else 0) on the luck in win
  chance. 0: the cards say nothing about who came out ahead; 1: they say it all.
  The seats of one game are not independent samples: read it as a measure,
  not a test.

With a match (``match_games`` > 1) a game of the tournament is a whole match:
its actions, rounds and totals are the match's, its first player the first
game's; luck is measured on single games (the records), whichever match they
belong to.
"""

from __future__ import annotations

import dataclasses
import math
import statistics
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from coloretto import charts
from coloretto.arena import ArenaError, TournamentConfig, derive_seed, run_tournament
from coloretto.arena.stats import mean_interval
from coloretto.record import GameRecord, RecordError
from coloretto.research.common import (
    LOCAL,
    ResearchError,
    Where,
    checked_bot,
    clean,
    fresh_out_dir,
    move_time_for,
    proportion,
    write_csv,
    write_json,
)
from coloretto.rules import RuleOption, Rules, RulesError, rule_option

FORMAT = "coloretto-explore-rules"
#: the figures of each value that have a mean and a 95 % interval
MEANS = ("actions", "rounds", "spread", "score_sd", "winning_score")
COLUMNS = (
    "value",
    "games",
    *(c for m in MEANS for c in (m, m + "_ci")),
    "first_player_win_share",
    "first_player_win_share_ci",
    "parity",
    "luck_r2_points",
    "luck_r2_win",
    "luck_samples",
)


def option_values(name: str, values: Sequence[str] | None) -> tuple[RuleOption, tuple[Any, ...]]:
    """The option and the values to try, read by the option's own parser."""
    try:
        option = rule_option(name.strip())
    except RulesError as exc:
        raise ResearchError(str(exc)) from None
    if values:
        try:
            chosen = tuple(option.parse(v) for v in values)
        except RulesError as exc:
            raise ResearchError(f"--values: {exc}") from None
    elif option.choices is not None:
        chosen = tuple(option.parse(c) for c in option.choices)
    elif option.minimum is not None and option.maximum is not None:
        chosen = tuple(range(option.minimum, option.maximum + 1))
    else:
        raise ResearchError(
            f"{option.name} is a number without a fixed range ({option.range_text()}): "
            "give the numbers to try with --values"
        )
    texts = [value_text(option, v) for v in chosen]
    if len(set(texts)) != len(texts):
        raise ResearchError(f"--values names a value twice: {', '.join(texts)}")
    if len(chosen) < 1:
        raise ResearchError("--values: give at least one value")
    return option, chosen


def value_text(option: RuleOption, value: Any) -> str:
    shown = option.to_json(value)
    return "default" if shown is None else str(shown)


def seat_bots(bots: Sequence[str], players: int) -> tuple[str, ...]:
    """The lineup: the bots in turn around the table (one bot: self-play)."""
    names = [checked_bot(b) for b in bots]
    if not names:
        raise ResearchError("--bots: name at least one bot")
    return tuple(names[seat % len(names)] for seat in range(players))


def r_squared(xs: Sequence[float], ys: Sequence[float]) -> float:
    """R² of the least-squares line of y on x (NaN with under 3 points or no spread)."""
    if len(xs) < 3 or len(xs) != len(ys):
        return math.nan
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    sxx = math.fsum((x - mx) ** 2 for x in xs)
    syy = math.fsum((y - my) ** 2 for y in ys)
    if sxx == 0 or syy == 0:
        return math.nan
    sxy = math.fsum((x - mx) * (y - my) for x, y in zip(xs, ys))
    return sxy * sxy / (sxx * syy)


def _interval(values: Sequence[float]) -> tuple[float | None, list[float | None]]:
    m = mean_interval(values)
    return clean(m.mean), [clean(m.low), clean(m.high)]


def _records(records_dir: Path, game: int) -> list[GameRecord]:
    """The records of tournament game ``game`` (a match has one a game), in order."""
    paths = sorted(records_dir.glob(f"game-{game:06d}*.json"), key=lambda p: (len(p.name), p.name))
    try:
        return [GameRecord.from_json(p.read_text(encoding="utf-8")) for p in paths]
    except (OSError, RecordError) as exc:
        raise ResearchError(f"cannot read the records of game {game} in {records_dir}: {exc}") from None


def measure_value(
    rules: Rules,
    lineup: tuple[str, ...],
    games: int,
    seed: int,
    review_games: int,
    review_budget: int,
    out: Path,
    where: Where,
    progress: Callable[[str], None],
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Play and measure one value of the option: (its figures, its luck samples)."""
    from coloretto.review import review

    records_dir = out / "records"
    try:
        config = TournamentConfig(
            rules, lineup, games=games, seed=seed, move_time=move_time_for(lineup), keep_records=True
        )
        outcome = run_tournament(
            config,
            out / "arena",
            backend=where.backend,
            workers=where.workers,
            address=where.address,
            records_dir=records_dir,
        )
    except ArenaError as exc:
        raise ResearchError(str(exc)) from None
    if outcome.interrupted:
        raise KeyboardInterrupt
    n = rules.players
    per: dict[str, list[float]] = {m: [] for m in MEANS}
    first_wins = 0.0
    reviewable: list[GameRecord] = []
    for result in outcome.results:
        totals = result["scores"]
        records = _records(records_dir, result["game"])
        if not records:
            raise ResearchError(f"game {result['game']} left no record in {records_dir}")
        per["actions"].append(float(result["moves"]))
        per["rounds"].append(float(sum(sum(e.round_ended for e in r.replay().events()) for r in records)))
        per["spread"].append(float(max(totals) - min(totals)))
        per["score_sd"].append(statistics.pstdev(totals))
        per["winning_score"].append(float(max(totals)))
        first_wins += result["win_shares"][records[0].first_player]
        reviewable.extend(records)
    samples: list[dict[str, Any]] = []
    for number, record in enumerate(reviewable[:review_games]):
        progress(f"  reviewing game {number + 1} of {min(review_games, len(reviewable))}")
        seed_here = derive_seed("coloretto-explore-review", seed, number) % 2**31
        summary = review(record, budget=review_budget, seed=seed_here, workers=where.workers).summary
        for seat in summary:
            others = [s.final_score for s in summary if s.seat != seat.seat]
            samples.append(
                {
                    "game": number,
                    "seat": seat.seat,
                    "luck_score": clean(seat.luck_score),
                    "luck_win": clean(seat.luck_win),
                    "margin": clean(seat.final_score - max(others)),
                    "result": clean(seat.result),
                }
            )
    figures: dict[str, Any] = {"games": len(outcome.results)}
    for m in MEANS:
        figures[m], figures[m + "_ci"] = _interval(per[m])
    share = proportion(first_wins, len(outcome.results))
    figures["first_player_win_share"] = share["share"]
    figures["first_player_win_share_ci"] = share["ci"]
    figures["parity"] = clean(1 / n)
    xs = [s["luck_score"] for s in samples]
    figures["luck_r2_points"] = clean(r_squared(xs, [s["margin"] for s in samples]))
    figures["luck_r2_win"] = clean(
        r_squared([s["luck_win"] for s in samples], [s["result"] for s in samples])
    )
    figures["luck_samples"] = len(samples)
    return figures, samples


def explore_rules(
    option_name: str,
    rules: Rules,
    out: Path,
    *,
    values: Sequence[str] | None = None,
    bots: Sequence[str] = ("heuristic",),
    games: int = 200,
    review_games: int = 20,
    review_budget: int = 300,
    seed: int = 1,
    where: Where = LOCAL,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Measure every value of the option (the other rules as ``rules``) and write
    explore.csv, explore.json and explore.png to ``out``; return the JSON document."""
    if games < 1:
        raise ResearchError("--games must be at least 1")
    if review_games < 0:
        raise ResearchError("--review-games must not be negative")
    if review_budget < 1:
        raise ResearchError("--review-budget must be at least 1 iteration a position")
    option, chosen = option_values(option_name, values)
    variants = []
    for value in chosen:
        try:
            variant = dataclasses.replace(rules, **{option.name: value})
        except RulesError as exc:
            raise ResearchError(f"{option.name}={value_text(option, value)}: {exc}") from None
        variants.append((value_text(option, value), variant, seat_bots(bots, variant.players)))
    out = fresh_out_dir(out, "exploration")
    say = progress or (lambda _text: None)
    rows = []
    luck: dict[str, list[dict[str, Any]]] = {}
    for index, (text, variant, lineup) in enumerate(variants):
        say(f"{option.name}={text}: {variant.describe()}")
        here = out / "values" / f"{index:02d}-{text}"
        figures, samples = measure_value(
            variant, lineup, games, seed, review_games, review_budget, here, where, say
        )
        rows.append({"value": text, "rules": variant.to_dict(), "bots": list(lineup), **figures})
        luck[text] = samples
    document = {
        "format": FORMAT,
        "version": 1,
        "settings": {
            "option": option.name,
            "values": [r["value"] for r in rows],
            "bots": [checked_bot(b) for b in bots],
            "rules": rules.to_dict(),
            "games": games,
            "review_games": review_games,
            "review_budget": review_budget,
            "seed": seed,
        },
        "values": rows,
        "luck_samples": luck,
    }
    write_csv(out / "explore.csv", COLUMNS, rows)
    write_json(out / "explore.json", document)
    if charts.can_draw(out / "explore.png"):
        explore_chart(out / "explore.png", document)
    return document


PANELS = (
    ("actions", "actions a game"),
    ("rounds", "rounds a game"),
    ("spread", "winner − last (points)"),
    ("score_sd", "std of the totals (points)"),
    ("winning_score", "winning score"),
    ("first_player_win_share", "first player's win share"),
    ("luck_r2", "share explained by luck (R²)"),
)


def explore_chart(path: Path, document: dict[str, Any]) -> None:
    """A panel per measure, a bar per value, 95 % intervals as error bars."""
    plt = charts.pyplot()
    rows = document["values"]
    labels = [r["value"] for r in rows]
    xs = list(range(len(rows)))
    figure, grid = plt.subplots(2, 4, figsize=(15, 7), constrained_layout=True)
    axes = list(grid.flat)
    for ax, (key, title) in zip(axes, PANELS):
        if key == "luck_r2":
            width = 0.38
            bars = (
                (-width / 2, "luck_r2_points", "margin on luck in points"),
                (width / 2, "luck_r2_win", "result on luck in win chance"),
            )
            for offset, field, label in bars:
                heights = [r[field] if r[field] is not None else math.nan for r in rows]
                ax.bar([x + offset for x in xs], heights, width, label=label)
            ax.set_ylim(0, 1)
            ax.legend(fontsize="x-small")
        else:
            heights = [r[key] if r[key] is not None else math.nan for r in rows]
            ci = [r.get(key + "_ci") or [None, None] for r in rows]
            low = [0.0 if c[0] is None else max(0.0, h - c[0]) for h, c in zip(heights, ci)]
            high = [0.0 if c[1] is None else max(0.0, c[1] - h) for h, c in zip(heights, ci)]
            ax.bar(xs, heights, yerr=[low, high], capsize=4, color="#4c72b0")
            if key == "first_player_win_share":
                for x, r in zip(xs, rows):
                    ax.hlines(r["parity"], x - 0.4, x + 0.4, colors="grey", linestyles="--")
                ax.set_ylim(0, 1)
        ax.set_xticks(xs, labels)
        ax.set_title(title, fontsize="medium")
    settings = document["settings"]
    info = axes[-1]
    info.axis("off")
    lines = (
        f"option {settings['option']}",
        f"bots {', '.join(settings['bots'])}",
        f"{settings['games']} games a value",
        f"luck: {settings['review_games']} reviewed games",
        f"({settings['review_budget']} iterations a position)",
        f"seed {settings['seed']}",
        "dashed: no first-player advantage",
    )
    info.text(0.0, 0.9, "\n".join(lines), va="top", fontsize="small")
    figure.suptitle(f"how {settings['option']} changes the game")
    figure.savefig(path, dpi=100)
    plt.close(figure)
