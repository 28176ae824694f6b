"""``coloretto calibrate``: its options, and the figures printed; the sampling and the fit are
:mod:`coloretto.research.calibrating`."""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from coloretto import charts
from coloretto.bots.calibration import (
    DEFAULT_BINS,
    Calibration,
    CalibrationError,
    search_digest,
    shipped_calibration,
)
from coloretto.commands import CommandError
from coloretto.commands.options import (
    check_output_dir,
    check_output_file,
    path_arg,
    refuse_dropping_players,
    seed_arg,
)
from coloretto.research.calibrating import (
    DEFAULT_ACTIONS,
    DEFAULT_BOT,
    DEFAULT_GAMES,
    DEFAULT_OUT,
    DEFAULT_PLAYERS,
    DEFAULT_POSITIONS,
    DEFAULT_SEED,
    METHODS,
    Plan,
    SamplesError,
    build_calibration,
    collect,
    fit_and_measure,
    listed,
    plot_reliability,
    read_samples,
    write_samples,
)


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "calibrate",
        help="measure the analysis's win chances against self-play outcomes and fit the calibration map",
        description="Play self-play games, predict every seat's win chance at sampled positions with the "
        "analysis, and set the predictions against the outcomes: the expected calibration error and "
        "Brier score, raw and calibrated (each half of the games measured with the map fitted on the "
        "other), "
        "a reliability diagram, and the map. Same flags, same figures.",
        epilog="Refit the shipped map after changing the search: coloretto calibrate --map "
        "coloretto/bots/calibration.json. --show prints the shipped map's source and figures.",
    )
    parser.add_argument(
        "--players",
        default=",".join(map(str, DEFAULT_PLAYERS)),
        help="player counts, comma-separated (default 2,3,4,5)",
    )
    parser.add_argument(
        "--games",
        default=None,
        help="self-play games: one number for every player count, or one per count "
        f"(default {listed(DEFAULT_GAMES)} for 2,3,4,5 players)",
    )
    parser.add_argument(
        "--positions",
        default=None,
        help="positions sampled per game: one number, or one per player count "
        f"(default {listed(DEFAULT_POSITIONS)})",
    )
    parser.add_argument(
        "--actions",
        default=None,
        help="of those, how many also value the move played, for the per-action figures: "
        f"one number, or one per player count (default {listed(DEFAULT_ACTIONS)})",
    )
    parser.add_argument(
        "--bot",
        default=DEFAULT_BOT,
        help=f"the bot in every seat (default {DEFAULT_BOT}; give iterations, not a time)",
    )
    parser.add_argument(
        "--budget", default=None, help="iterations of each analysis (default: the analysis's own, 2000)"
    )
    parser.add_argument(
        "--seed", type=seed_arg, default=DEFAULT_SEED, help=f"seed of everything (default {DEFAULT_SEED})"
    )
    parser.add_argument(
        "--bins",
        type=int,
        default=DEFAULT_BINS,
        help=f"equal-width bins of the calibration error (default {DEFAULT_BINS})",
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=1,
        help="processes playing games (default 1; the figures do not depend on it)",
    )
    parser.add_argument(
        "--out",
        type=path_arg,
        default=DEFAULT_OUT,
        help=f"directory for samples, report and diagram (default {DEFAULT_OUT})",
    )
    parser.add_argument(
        "--map",
        type=path_arg,
        default=None,
        metavar="PATH",
        help="where to write the map (default OUT/calibration.json)",
    )
    parser.add_argument(
        "--samples",
        type=path_arg,
        default=None,
        metavar="CSV",
        help="fit and measure the samples of an earlier run instead of playing games",
    )
    parser.add_argument(
        "--method",
        choices=METHODS,
        default=METHODS[0],
        help="how the map is fitted: logistic (two parameters in log-odds; the default) or isotonic",
    )
    parser.add_argument(
        "--show", action="store_true", help="print the shipped map's source and figures, and exit"
    )
    parser.set_defaults(func=run)


def plan_from_args(args: argparse.Namespace) -> Plan:
    from coloretto.analysis import DEFAULT_BUDGET
    from coloretto.bots import BotSpecError, check_bot

    try:
        players = tuple(int(p) for p in str(args.players).split(","))
    except ValueError:
        raise CommandError(f"--players must be player counts like 2,4, not {args.players!r}") from None
    if not players or any(not 2 <= p <= 5 for p in players) or len(set(players)) != len(players):
        raise CommandError(f"--players must be different player counts from 2 to 5, not {args.players!r}")
    sizes = zip(
        players,
        _per_count("--games", args.games, players, DEFAULT_GAMES),
        _per_count("--positions", args.positions, players, DEFAULT_POSITIONS),
        _per_count("--actions", args.actions, players, DEFAULT_ACTIONS),
    )
    players, games, positions, actions = (tuple(column) for column in zip(*sorted(sizes)))
    if min(games) < 2:
        raise CommandError(f"--games must be at least 2 (one to fit, one to measure), not {min(games)}")
    if min(positions) < 1:
        raise CommandError(f"--positions must be at least 1, not {min(positions)}")
    if any(not 0 <= a <= p for a, p in zip(actions, positions)):
        raise CommandError(f"--actions must be from 0 to --positions, not {listed(actions)}")
    if args.bins < 1:
        raise CommandError(f"--bins must be at least 1, not {args.bins}")
    if args.workers < 1:
        raise CommandError(f"--workers must be at least 1, not {args.workers}")
    try:
        budget = DEFAULT_BUDGET if args.budget is None else int(args.budget)
    except ValueError:
        raise CommandError(f"--budget is a number of iterations (2000), not {args.budget!r}") from None
    if budget < 1:
        raise CommandError(f"--budget must be at least 1 iteration, not {budget}")
    try:
        spec = check_bot(args.bot)
    except BotSpecError as exc:
        raise CommandError(f"--bot: {exc}") from None
    if spec.limit is not None and spec.limit.time is not None:
        raise CommandError(
            f"--bot {args.bot}: give it iterations (mcts:1000), not a time: "
            "the games must not depend on the machine"
        )
    return Plan(
        players,
        games,
        positions,
        actions,
        args.bot,
        budget,
        args.seed,
        args.bins,
        args.method,
    )


def _per_count(
    flag: str, text: str | None, players: tuple[int, ...], default: tuple[int, ...]
) -> tuple[int, ...]:
    """A flag's numbers, one per player count: one number for all, or a list as long as --players."""
    if text is None:
        by_count = dict(zip(DEFAULT_PLAYERS, default))
        return tuple(by_count[n] for n in players)
    try:
        values = tuple(int(v) for v in str(text).split(","))
    except ValueError:
        raise CommandError(
            f"{flag} must be whole numbers like 100 or 300,150,100,100, not {text!r}"
        ) from None
    if len(values) == 1:
        return values * len(players)
    if len(values) != len(players):
        raise CommandError(
            f"{flag} gives {len(values)} numbers for {len(players)} player counts: give one, or one per count"
        )
    return values


def show() -> int:
    calibration = shipped_calibration()
    if calibration is None:
        print("no calibration map is shipped: win chances are the search's raw shares")
        return 0
    print(json.dumps(calibration.source, indent=1))
    print(json.dumps(calibration.figures, indent=1))
    if calibration.stale():
        print("the search's sources have changed since the map was fitted: run its command again")
    return 0


def run(args: argparse.Namespace) -> int:
    if args.show:
        return show()
    plan = plan_from_args(args)
    out: Path = args.out
    check_output_dir(out, "--out")
    map_path = args.map if args.map is not None else out / "calibration.json"
    check_map_path(map_path, "--map" if args.map is not None else "--out", out, plan.players)
    out.mkdir(parents=True, exist_ok=True)
    # read before the games: the sources may change while they are played, the searches do not
    digest = search_digest()
    shipped = shipped_calibration()  # before --map may write over it
    started = time.perf_counter()
    played_in: float | None = None
    too_few = "give --games 2 or more"
    if args.samples is not None:
        try:
            samples = read_samples(args.samples)
        except SamplesError as exc:
            raise CommandError(f"--samples {args.samples}: {exc}") from None
        except (OSError, KeyError, ValueError) as exc:
            raise CommandError(f"--samples {args.samples}: cannot read it ({exc})") from None
        counts = sorted({s.players for s in samples})
        lacking = [n for n in plan.players if n not in counts]
        if lacking:
            has = f"it has {listed(tuple(counts))}-player ones only" if counts else "it has none at all"
            raise CommandError(
                f"--samples {args.samples}: no {listed(tuple(lacking))}-player samples ({has}): "
                "give --players the counts it has"
            )
        samples = [s for s in samples if s.players in plan.players]
        too_few = f"--samples {args.samples} holds too few games; --games plays none with --samples"
        # the run that played them says how long it took and on which sources
        played = _earlier_source(args.samples.with_name("report.json"))
        digest = str(played.get("search_digest", digest))
        played_in = played.get("seconds")
    else:
        jobs = sum(plan.games)
        sizes = ", ".join(
            f"{n} players {g} games × {p} positions"
            for n, g, p in zip(plan.players, plan.games, plan.positions)
        )
        print(
            f"calibrate: self-play {plan.bot}, {sizes}, analysed at {plan.budget} iterations; "
            f"results in {out}",
            file=sys.stderr,
        )

        def progress(done: int, total: int) -> None:
            if done == total or done % max(1, total // 20) == 0:
                elapsed = time.perf_counter() - started
                print(f"  {done}/{jobs} games, {elapsed:.0f} s", file=sys.stderr)

        samples = collect(plan, args.workers, progress)
    seconds = time.perf_counter() - started if played_in is None else float(played_in)
    write_samples(out / "samples.csv", samples)
    try:
        maps, figures, held = fit_and_measure(plan, samples, shipped, too_few)
    except CalibrationError as exc:  # too few games of a player count
        raise CommandError(str(exc)) from None
    written = str(args.map) if args.map is not None else None
    calibration = build_calibration(plan, maps, figures, written, digest, seconds, args.workers)
    if args.samples is not None:
        calibration = replace(calibration, source=refit_source(calibration.source, plan, args, played))
    calibration.write(map_path)
    (out / "report.json").write_text(
        json.dumps({"source": calibration.source, "figures": figures}, indent=1) + "\n"
    )
    identity = [int(n) for n, f in figures.items() if f["map"]["method"] == "identity"]
    drawn = charts.can_draw(out / "reliability.png")
    if drawn:
        plot_reliability(out / "reliability.png", plan, held, identity)
    print(report_text(figures, plan))
    diagram = f", diagram in {out / 'reliability.png'}" if drawn else ""
    print(f"{seconds:.0f} s; map in {map_path}{diagram}")
    return 0


#: what the run that played the samples decided, which a refit of them does not
_PLAYED_KEYS = ("seed", "bot", "budget", "games", "positions_per_game", "actions_per_game", "workers")


def refit_source(
    source: Mapping[str, Any], plan: Plan, args: argparse.Namespace, played: Mapping[str, Any]
) -> dict[str, Any]:
    """The source of a map fitted on ``--samples``: this refit's command, and the
    games' settings as the run that played them recorded them (None where it left
    no report.json), not this command's defaults."""
    words = ["coloretto", "calibrate", "--samples", str(args.samples)]
    words += [
        "--players",
        ",".join(map(str, plan.players)),
        "--bins",
        str(plan.bins),
        "--method",
        plan.method,
    ]
    if args.map is not None:
        words += ["--map", str(args.map)]
    refit = dict(source) | {key: played.get(key) for key in _PLAYED_KEYS}
    refit["command"] = shlex.join(words)
    refit["samples_played_by"] = played.get("command")
    return refit


def check_map_path(path: Path, flag: str, out: Path, players: Sequence[int]) -> None:
    """Refuse before the games to write the map over a file that is not a calibration
    map (rewriting one, e.g. the shipped map, is what --map is for), over a map that
    holds player counts this run does not fit, or where it has no directory
    (``out`` is made by the command)."""
    if path.parent != out or out.exists():
        check_output_file(path, flag)
    if not path.exists():
        return
    try:
        held = Calibration.read(path).maps
    except (CalibrationError, ValueError) as exc:  # ValueError: bytes that are not UTF-8
        raise CommandError(
            f"{flag}: {path} exists and is not a calibration map ({exc}): "
            "not writing over it; choose another path"
        ) from None
    refuse_dropping_players(path, flag, "calibration map", held, players)


def _earlier_source(path: Path) -> dict[str, Any]:
    """The source recorded by the run that wrote ``path`` (a report.json); {} if none."""
    try:
        source = json.loads(path.read_text(encoding="utf-8")).get("source", {})
    except (OSError, ValueError, AttributeError):
        return {}
    return source if isinstance(source, dict) else {}


def report_text(figures: dict[str, Any], plan: Plan) -> str:
    lines = [
        f"held-out games (each fold measured with the {plan.method} map fitted on the other); "
        f"ECE over {plan.bins} equal-width bins (in brackets: on each fold alone)",
        f"{'players':>7} {'positions':>9} {'seats: ECE raw → calibrated':>36} {'Brier raw → cal':>16} "
        f"{'actions: ECE raw → cal':>23} {'Brier raw → cal':>16}",
    ]
    for players, f in figures.items():
        seat = f"{_ece(f['seat_raw'])} → {_ece(f['seat_calibrated'])}"
        seat_b = f"{f['seat_raw']['brier']:.3f} → {f['seat_calibrated']['brier']:.3f}"
        if "action_raw" in f:
            act = f"{f['action_raw']['ece']:.3f} → {f['action_calibrated']['ece']:.3f}"
            act_b = f"{f['action_raw']['brier']:.3f} → {f['action_calibrated']['brier']:.3f}"
        else:
            act = act_b = "-"
        lines.append(f"{players:>7} {f['positions']:>9} {seat:>21} {seat_b:>16} {act:>23} {act_b:>16}")
    for players, f in figures.items():
        if f["map"]["method"] == "identity":
            lines.append(
                f"{players} players: the map did not help on held-out games; the raw share is shipped"
            )
    for players, f in figures.items():
        if "seat_shipped_map" in f:
            shipped = f["seat_shipped_map"]
            lines.append(
                f"{players} players, the shipped map on these games: "
                f"ECE {shipped['ece']:.3f}, Brier {shipped['brier']:.3f}"
            )
    return "\n".join(lines)


def _ece(figures: dict[str, Any]) -> str:
    return f"{figures['ece']:.3f} ({'/'.join(f'{v:.3f}' for v in figures['ece_folds'])})"
