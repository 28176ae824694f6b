"""Tuning a bot's numeric options against a field, with optuna.

Every trial is one arena tournament of the candidate against the field, on
the **same duplicate deals** (the arena's seed, deals and seatings are the
same for every trial: common random numbers), so two trials differ by the
options and not by the cards. The sampler is optuna's TPE with the run's seed;
trial 0 is the bot as given, so the best found is never worse than it on
these deals.

**Objective**: the win share of the tuned bot (ties split), the arena's
figure; the mean score margin (its total minus the best other total) breaks
ties between trials. ``objective="margin"`` swaps the two.

The best trial won on the deals it was chosen on, which flatters it (the
winner's curse); ``confirm`` plays the best and the bot as given against the
field again, on fresh deals, and reports both with their paired difference.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from coloretto import charts
from coloretto.arena import derive_seed
from coloretto.arena.tournament import StopSignals
from coloretto.bots import BotSpecError, check_bot
from coloretto.research.common import (
    LOCAL,
    FieldResult,
    ResearchError,
    Where,
    checked_bot,
    field_lineup,
    fresh_out_dir,
    paired_difference,
    play_field,
    write_csv,
    write_json,
)
from coloretto.rules import Rules

FORMAT = "coloretto-tune"
OBJECTIVES = ("win", "margin")
#: a trial's figures in trials.csv, after its number, bot name and options
TRIAL_COLUMNS: tuple[str, ...] = ("games", "win_share", "win_share_ci", "mean_score", "score_ci")
TRIAL_COLUMNS += ("mean_margin", "margin_ci", "mean_rank", "forfeits")


@dataclass(frozen=True)
class ParamRange:
    """One option searched over ``[low, high]``, uniformly."""

    name: str
    low: float
    high: float

    def text(self) -> str:
        return f"{self.name}={self.low:g}:{self.high:g}"

    def rounded(self, value: float) -> float:
        """The value as a bot name gets it: to about a thousandth of the range,
        finer than any of these options' effects can be measured."""
        digits = max(0, 2 - math.floor(math.log10(self.high - self.low)))
        return min(self.high, max(self.low, round(value, digits)))


#: the numeric options of each bot family that tuning searches by default, with
#: their default ranges. Each range lies inside what the family's own option
#: reader accepts (checked when a run starts, so the reader stays the judge):
#: mcts takes c ≥ 0, win and explore in [0, 1], take in [0, 100]. c is capped at
#: 2 (utilities lie in [0, 1]: beyond that the search is nearly uniform), take
#: at 20 points (a three-card row is rarely worth more), explore at 0.5 (more
#: random moves than greedy ones make the playouts noise).
TUNABLE: Mapping[str, tuple[ParamRange, ...]] = {
    "mcts": (
        ParamRange("c", 0.1, 2.0),
        ParamRange("win", 0.0, 1.0),
        ParamRange("take", 0.0, 20.0),
        ParamRange("explore", 0.0, 0.5),
    ),
}


def option_text(value: float) -> str:
    return f"{value:g}"


@dataclass(frozen=True)
class BaseBot:
    """The bot to tune, read: its family and the options it keeps fixed."""

    name: str  #: as given, e.g. ``mcts:500,take=12``
    kind: str
    options: tuple[str, ...]  #: its comma-separated options

    def with_values(self, values: Mapping[str, float]) -> str:
        """The bot name with ``values`` set (replacing the same options in the name)."""
        kept = [p for p in self.options if p.partition("=")[0].strip().lower() not in values]
        parts = kept + [f"{key}={option_text(value)}" for key, value in values.items()]
        return f"{self.kind}:{','.join(parts)}"

    def default(self, name: str) -> float | None:
        """The option's value in the bot as given (its family's default if not named)."""
        settings = check_bot(self.name).settings
        value = getattr(settings, name, None)
        return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def read_base(spec: str) -> BaseBot:
    name = checked_bot(spec)
    read = check_bot(name)
    written_kind, _, options = name.partition(":")
    if written_kind.strip().lower() != read.kind:
        raise ResearchError(
            f"{name!r} is a difficulty level that plays {read.kind}:{read.options}: tune that name instead"
        )
    if read.kind not in TUNABLE:
        families = ", ".join(sorted(TUNABLE))
        raise ResearchError(
            f"{name!r} has no numeric options to tune: bots that have some are {families} (e.g. mcts:500)"
        )
    parts = tuple(p.strip() for p in options.split(",") if p.strip())
    return BaseBot(name, read.kind, parts)


def parse_param(text: str, base: BaseBot) -> ParamRange:
    """``c=0.3:1.5`` → the range of c (ResearchError naming what is wrong)."""
    known = {p.name: p for p in TUNABLE[base.kind]}
    key, eq, span = text.partition("=")
    key = key.strip().lower()
    low_text, colon, high_text = span.partition(":")
    if not eq or not colon:
        raise ResearchError(f"--param {text!r}: write it as NAME=LOW:HIGH, e.g. c=0.3:1.5")
    if key not in known:
        raise ResearchError(
            f"--param {text!r}: {base.kind} has no numeric option {key!r} to tune; it has {', '.join(known)}"
        )
    try:
        low, high = float(low_text), float(high_text)
    except ValueError:
        raise ResearchError(f"--param {text!r}: LOW and HIGH must be numbers") from None
    if not (math.isfinite(low) and math.isfinite(high)) or not low < high:
        raise ResearchError(f"--param {text!r}: LOW must be less than HIGH, both finite")
    return ParamRange(key, low, high)


def search_space(base: BaseBot, params: Sequence[str] | None) -> tuple[ParamRange, ...]:
    """The ranges to search: those of ``params``, else every tunable option the
    name does not fix. Each end is checked by the bot family's own reader."""
    if params:
        space = [parse_param(p, base) for p in params]
        names = [p.name for p in space]
        if len(set(names)) != len(names):
            raise ResearchError(f"--param names an option twice: {', '.join(names)}")
    else:
        fixed = {p.partition("=")[0].strip().lower() for p in base.options}
        space = [p for p in TUNABLE[base.kind] if p.name not in fixed]
        if not space:
            raise ResearchError(
                f"{base.name!r} fixes every option tuning searches: choose them with --param NAME=LOW:HIGH"
            )
    for p in space:
        for end in (p.low, p.high):
            try:
                check_bot(base.with_values({p.name: end}))
            except BotSpecError as exc:
                raise ResearchError(f"--param {p.text()}: {exc}") from None
    return tuple(space)


@dataclass(frozen=True)
class Trial:
    number: int
    bot: str
    params: dict[str, float]
    result: FieldResult

    def objective(self, kind: str) -> float:
        value = self.result.win_share if kind == "win" else self.result.mean_margin
        return -math.inf if math.isnan(value) else value

    def key(self, kind: str) -> tuple[float, float]:
        other = "margin" if kind == "win" else "win"
        return (self.objective(kind), self.objective(other))

    def row(self) -> dict[str, Any]:
        return {"trial": self.number, "bot": self.bot, **self.params, **self.result.row()}


Progress = Callable[[str], None]


def tune(
    bot: str,
    against: Sequence[str],
    rules: Rules,
    out: Path,
    *,
    trials: int = 30,
    games: int = 40,
    seed: int = 1,
    params: Sequence[str] | None = None,
    objective: str = "win",
    confirm: int = 0,
    where: Where = LOCAL,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Tune ``bot`` against ``against`` and write trials.csv, trials.json and
    history.png to ``out``; return the JSON document (its ``best`` names the bot).

    Interrupted (Ctrl-C, SIGTERM) after a trial has finished, it writes the
    finished trials and the best among them, with ``"interrupted": true`` and
    without the confirmation; before any has, it raises KeyboardInterrupt."""
    import optuna

    if trials < 1:
        raise ResearchError("--trials must be at least 1")
    if games < 1:
        raise ResearchError("--games must be at least 1")
    if confirm < 0:
        raise ResearchError("--confirm must not be negative")
    if objective not in OBJECTIVES:
        raise ResearchError(f"--objective must be one of {', '.join(OBJECTIVES)}, not {objective!r}")
    base = read_base(bot)
    space = search_space(base, params)
    field_lineup(base.name, against, rules.players)  # refuse a bad field before any game
    out = fresh_out_dir(out, "tuning run")
    say = progress or (lambda _text: None)

    start = {p.name: base.default(p.name) for p in space}  # the bot as given
    played: dict[str, FieldResult] = {}
    done: list[Trial] = []
    interrupted = False

    def run_trial(trial: optuna.Trial) -> float:
        nonlocal interrupted
        values = {p.name: p.rounded(trial.suggest_float(p.name, p.low, p.high)) for p in space}
        name = base.name if values == start else base.with_values(values)
        if name not in played:  # a name played already: the same deals give the same games
            lineup = field_lineup(name, against, rules.players)
            try:
                played[name] = play_field(
                    lineup, rules, games, seed, out / "trials" / f"trial-{trial.number:03d}", where
                )
            except KeyboardInterrupt:
                # Ctrl-C or SIGTERM: end the study after this unfinished trial, which
                # counts for nothing (pruned, so optuna logs no failure and traceback)
                interrupted = True
                trial.study.stop()
                raise optuna.TrialPruned() from None
        result = played[name]
        done.append(Trial(trial.number, name, values, result))
        trial.set_user_attr("bot", name)
        shown = done[-1].objective(objective)
        say(
            f"trial {trial.number}: {name}: "
            f"win share {result.win_share:.3f}, margin {result.mean_margin:+.2f}"
        )
        return shown if math.isfinite(shown) else -1e9

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(direction="maximize", sampler=optuna.samplers.TPESampler(seed=seed))
    if all(v is not None and p.low <= v <= p.high for p, v in zip(space, start.values())):
        study.enqueue_trial(start)  # the bot as given, so the best is never worse on these deals
    confirmed = None
    with StopSignals():  # SIGTERM as Ctrl-C, between trials as well as in their games
        try:
            study.optimize(run_trial, n_trials=trials, catch=())
        except KeyboardInterrupt:  # between two trials' games
            interrupted = True
        if not done:
            raise KeyboardInterrupt  # no trial finished: nothing to write
        best = max(done, key=lambda t: t.key(objective))
        if confirm and not interrupted:
            try:
                confirmed = confirm_best(base.name, best.bot, against, rules, confirm, seed, out, where)
            except KeyboardInterrupt:
                interrupted = True
    document: dict[str, Any] = {
        "format": FORMAT,
        "version": 1,
        "settings": {
            "bot": base.name,
            "against": list(field_lineup(base.name, against, rules.players)[1:]),
            "rules": rules.to_dict(),
            "trials": trials,
            "games": games,
            "seed": seed,
            "objective": objective,
            "space": [{"name": p.name, "low": p.low, "high": p.high} for p in space],
            "sampler": f"optuna TPESampler(seed={seed})",
        },
        "trials": [t.row() for t in done],
        "best": {"trial": best.number, "bot": best.bot, "params": best.params, **best.result.row()},
    }
    if confirmed is not None:
        document["confirm"] = confirmed
    if interrupted:
        document["interrupted"] = True  # the finished trials, unconfirmed
    columns = ["trial", "bot", *(p.name for p in space), *TRIAL_COLUMNS]
    write_csv(out / "trials.csv", columns, document["trials"])
    write_json(out / "trials.json", document)
    if charts.can_draw(out / "history.png"):
        history_chart(out / "history.png", document, rules.players)
    return document


def confirm_best(
    untuned: str,
    best: str,
    against: Sequence[str],
    rules: Rules,
    games: int,
    seed: int,
    out: Path,
    where: Where,
) -> dict[str, Any]:
    """The best and the bot as given against the field on the same fresh deals
    (a seed the tuning never saw), with the paired difference of win shares."""
    fresh = derive_seed("coloretto-tune-confirm", seed) % 2**31
    results: dict[str, FieldResult] = {}
    for label, name in (("best", best), ("untuned", untuned)):
        if name == best and "best" in results:  # the bot as given was the best: the same games
            results[label] = results["best"]
            continue
        lineup = field_lineup(name, against, rules.players)
        results[label] = play_field(lineup, rules, games, fresh, out / "confirm" / label, where)
    return {
        "seed": fresh,
        "games": games,
        "best": {"bot": best, **results["best"].row()},
        "untuned": {"bot": untuned, **results["untuned"].row()},
        "win_share_difference": paired_difference(results["best"].per_game, results["untuned"].per_game),
    }


def history_chart(path: Path, document: dict[str, Any], players: int) -> None:
    """Each trial's objective with its 95 % interval, the best so far, and parity."""
    plt = charts.pyplot()
    objective = document["settings"]["objective"]
    trials = document["trials"]
    key, ci = ("win_share", "win_share_ci") if objective == "win" else ("mean_margin", "margin_ci")
    xs = [t["trial"] for t in trials]
    ys = [math.nan if t[key] is None else t[key] for t in trials]
    low = [0.0 if t[ci][0] is None else max(0.0, y - t[ci][0]) for t, y in zip(trials, ys)]
    high = [0.0 if t[ci][1] is None else max(0.0, t[ci][1] - y) for t, y in zip(trials, ys)]
    best_so_far = []
    running = -math.inf
    for y in ys:
        running = max(running, y if not math.isnan(y) else -math.inf)
        best_so_far.append(running)
    figure, axes = plt.subplots(figsize=(8, 4.5), constrained_layout=True)
    axes.errorbar(
        xs, ys, yerr=[low, high], fmt="o", capsize=3, color="#4c72b0", label="trial (95 % interval)"
    )
    axes.step(xs, best_so_far, where="post", color="#dd8452", label="best so far")
    if objective == "win":
        axes.axhline(1 / players, color="grey", linestyle="--", label=f"parity (1/{players})")
        axes.set_ylabel("win share against the field")
    else:
        axes.axhline(0, color="grey", linestyle="--", label="even margin")
        axes.set_ylabel("mean score margin")
    axes.set_xlabel("trial")
    axes.xaxis.get_major_locator().set_params(integer=True)
    settings = document["settings"]
    axes.set_title(
        f"tuning {settings['bot']}: {settings['games']} games a trial, the same deals\n"
        f"best: {document['best']['bot']}",
        fontsize="medium",
    )
    axes.legend(loc="best", fontsize="small")
    figure.savefig(path, dpi=100)
    plt.close(figure)


__all__ = ["TUNABLE", "ParamRange", "read_base", "search_space", "tune"]
