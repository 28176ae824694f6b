"""``coloretto analyze GAME.json``: the review of a recorded game (:mod:`coloretto.review`).

Prints the marked moves (or every decision with ``--all``), the cards with
the most luck, a compact win-chance graph of every player, and each player's
summary: accuracy, marks, skill lost, luck and the luck-adjusted result.
``--json`` prints the whole review instead (:meth:`Review.to_dict`), and
``--plot FILE.png`` draws the win-chance graph with matplotlib.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import TextIO

from rich.cells import cell_len, set_cell_size

from coloretto import charts
from coloretto.commands import CommandError
from coloretto.commands.options import check_output_file, path_arg, seed_arg
from coloretto.commands.replay import load_record
from coloretto.record import RecordError
from coloretto.review import (
    DEEP_BUDGET,
    DEFAULT_BUDGET,
    POINT_THRESHOLDS,
    SYMBOLS,
    THRESHOLDS,
    MoveReview,
    Review,
    review,
)

#: columns of the terminal win-chance graph
GRAPH_WIDTH = 64
_LEVELS = " ▁▂▃▄▅▆▇█"
#: chance events listed as the luckiest and unluckiest
LUCK_SHOWN = 5


def register(subparsers: argparse._SubParsersAction) -> None:
    win = ", ".join(f"{k} ≥ {v:g}" for k, v in THRESHOLDS.items())
    points = ", ".join(f"{v:g}" for v in POINT_THRESHOLDS.values())
    parser = subparsers.add_parser(
        "analyze",
        help="review a recorded game: win chances, best moves, marks, luck, accuracy",
        description="Review a game record: every position's win chances and expected scores, every "
        "decision's best moves and the win chance and points the move played gave away, marks "
        f"(loss in win chance: {win}; or points lost: {points}), the luck of every card against the "
        "average card, and each player's accuracy, luck and luck-adjusted result.",
    )
    parser.add_argument("record", type=path_arg, help="a game record (JSON) written by coloretto")
    depth = parser.add_mutually_exclusive_group()
    depth.add_argument(
        "--budget",
        default=str(DEFAULT_BUDGET),
        help=f"iterations of search per position (default {DEFAULT_BUDGET})",
    )
    depth.add_argument(
        "--deep",
        action="store_const",
        dest="budget",
        const=str(DEEP_BUDGET),
        help=f"a deeper look: {DEEP_BUDGET} iterations per position (about five times as long)",
    )
    parser.add_argument("--seed", type=seed_arg, default=0, help="seed of the searches (default 0)")
    parser.add_argument(
        "--workers",
        default=None,
        help="threads searching at once (default: the cores, at most 4)",
    )
    parser.add_argument("--all", action="store_true", help="list every decision, not only the marked ones")
    parser.add_argument("--json", action="store_true", help="print the whole review as JSON")
    parser.add_argument(
        "--plot", type=path_arg, metavar="FILE.png", help="draw the win-chance graph into a PNG file"
    )
    parser.set_defaults(func=run)


def _whole(text: str, what: str, low: int, high: int) -> int:
    if not text.strip().isdigit() or not low <= int(text) <= high:
        raise CommandError(f"{what} must be a whole number from {low} to {high}, not {text!r}")
    return int(text)


def run(args: argparse.Namespace) -> int:
    budget = _whole(args.budget, "--budget (iterations of search per position)", 1, 10_000_000)
    workers = None if args.workers is None else _whole(args.workers, "--workers", 1, 64)
    record = load_record(args.record)
    if args.plot is not None and args.plot.suffix.lower() != ".png":
        raise CommandError(f"--plot: the graph is drawn as PNG, name a .png file, not {str(args.plot)!r}")
    if args.plot is not None:
        check_output_file(args.plot, "--plot")  # before the review, which may take minutes
        if not charts.available():
            raise CommandError(f"--plot: {charts.MISSING}")
    progress = _Progress(sys.stderr) if sys.stderr.isatty() and not args.json else None
    try:
        result = review(record, budget=budget, seed=args.seed, workers=workers, progress=progress)
    except RecordError as exc:
        raise CommandError(f"{args.record}: {exc}") from None
    finally:
        if progress is not None:
            progress.done()
    if args.plot is not None:
        plot(result, args.plot)
    if args.json:
        json.dump(result.to_dict(), sys.stdout, indent=1, ensure_ascii=False, allow_nan=False)
        print()
        return 0
    print_review(result, sys.stdout, every_decision=args.all)
    if args.plot is not None:
        print(f"\nwin-chance graph: {args.plot}")
    return 0


class _Progress:
    """A progress line on a terminal."""

    def __init__(self, out: TextIO) -> None:
        self.out = out

    def __call__(self, done: int, total: int) -> None:
        self.out.write(f"\rreviewing: {done}/{total} positions searched")
        self.out.flush()

    def done(self) -> None:
        self.out.write("\r" + " " * 60 + "\r")
        self.out.flush()


def _pct(x: float) -> str:
    return f"{100 * x:5.1f}"


#: widest a seat's name is shown in the tables (longer names end in "…")
NAME_CELLS = 24


def name_column(names: tuple[str, ...]) -> tuple[list[str], int]:
    """The names padded to one width in terminal cells (a wide character
    takes two), cut with "…" past :data:`NAME_CELLS`; and that width."""
    width = min(NAME_CELLS, max(4, *(cell_len(name) for name in names)))
    return [
        set_cell_size(name if cell_len(name) <= width else set_cell_size(name, width - 1) + "…", width)
        for name in names
    ], width


def print_review(result: Review, out: TextIO, every_decision: bool = False) -> None:
    names, width = name_column(result.seats)
    decisions = sum(1 for m in result.moves if m.decision is not None)
    print(
        f"{result.rules}; {len(result.moves)} moves, {decisions} decisions, "
        f"{result.budget} iterations per position",
        file=out,
    )
    shown = [m for m in result.moves if m.decision is not None and (every_decision or m.decision.mark)]
    print(file=out)
    if shown:
        print(
            f"{'move':>4}  {'seat':<{width}} {'played':<7} {'win%':>5} {'best':<7} {'win%':>5} "
            f"{'-win%':>5} {'-pts':>5}  mark",
            file=out,
        )
    else:
        print("No move is marked.", file=out)
    for m in shown:
        d = m.decision
        assert d is not None
        played = next(line for line in d.lines if line.action == m.played)
        mark = f"{d.mark} {SYMBOLS[d.mark]}" if d.mark else ""
        print(
            f"{m.number:>4}  {names[m.seat]} {m.played:<7} {_pct(played.win)} {d.best:<7} "
            f"{_pct(d.lines[0].win)} {_pct(d.win_loss)} {d.score_loss:5.1f}  {mark}",
            file=out,
        )
    lucky = [m for m in result.moves if m.luck is not None]
    if lucky:

        def drawer_luck(m: MoveReview) -> float:
            assert m.luck is not None
            return m.luck.win[m.seat]

        ranked = sorted(lucky, key=drawer_luck)
        picks = ranked[-LUCK_SHOWN:][::-1] + [m for m in ranked[:LUCK_SHOWN] if m not in ranked[-LUCK_SHOWN:]]
        print(
            f"\n{'move':>4}  {'seat':<{width}} {'card':<5} luck (win%, points) for the one who drew",
            file=out,
        )
        for m in picks:
            assert m.luck is not None
            print(
                f"{m.number:>4}  {names[m.seat]} {m.luck.card:<5} {100 * m.luck.win[m.seat]:+6.1f} "
                f"{m.luck.score[m.seat]:+6.1f}  ({m.luck.kind})",
                file=out,
            )
    print(
        "\nwin chance over the game (each column a stretch of moves; the bar's height is the chance)",
        file=out,
    )
    for seat, line in enumerate(graph_lines(result)):
        final = result.positions[-1].win[seat]
        print(f"{names[seat]} {line} {100 * final:3.0f}%", file=out)
    print(
        f"\n{'seat':<{width}} {'moves':>5} {'accuracy':>8} {'?!':>3} {'?':>3} {'??':>3} "
        f"{'-win%':>6} {'-pts':>6} "
        f"{'luck%':>10} {'luck pts':>8} {'score':>5} {'result':>6} {'adjusted':>8}",
        file=out,
    )
    for s in result.summary:
        result_text = "-" if math.isnan(s.result) else f"{s.result:.2f}"
        adjusted = "-" if math.isnan(s.luck_adjusted_result) else f"{s.luck_adjusted_result:+.2f}"
        print(
            f"{names[s.seat]} {s.decisions:>5} {s.accuracy:7.1f}% {s.inaccuracies:>3} {s.mistakes:>3} "
            f"{s.blunders:>3} {100 * s.win_loss:6.1f} {s.score_loss:6.1f} "
            f"{100 * s.luck_win:+5.0f}±{200 * s.luck_win_se:<3.0f} {s.luck_score:+8.1f} {s.final_score:5.0f} "
            f"{result_text:>6} {adjusted:>8}",
            file=out,
        )
    print(
        "\naccuracy: lichess's formula on each decision's win-chance loss, averaged; -win%/-pts: the win "
        "chance and points the decisions gave away; luck: what the cards changed against the average card "
        "(±: two standard errors); adjusted: the result (1 a win, 0 a loss) less the luck",
        file=out,
    )


def graph_lines(result: Review, width: int = GRAPH_WIDTH) -> list[str]:
    """One line of block characters per seat: its win chance over the game."""
    positions = result.positions
    columns = min(width, len(positions))
    lines = []
    for seat in range(result.players):
        chars = []
        for c in range(columns):
            start = c * len(positions) // columns
            stop = max(start + 1, (c + 1) * len(positions) // columns)
            chance = sum(p.win[seat] for p in positions[start:stop]) / (stop - start)
            chars.append(_LEVELS[min(len(_LEVELS) - 1, round(chance * (len(_LEVELS) - 1)))])
        lines.append("".join(chars))
    return lines


def plot(result: Review, path: Path) -> None:
    """Draw every seat's win chance over the game, with the marked moves, into ``path``."""
    plt = charts.pyplot()

    fig, ax = plt.subplots(figsize=(10, 4.5), dpi=110)
    xs = [p.index for p in result.positions]
    markers = {"inaccuracy": ("o", 30), "mistake": ("s", 40), "blunder": ("X", 70)}
    for seat, name in enumerate(result.seats):
        (line,) = ax.plot(xs, [100 * p.win[seat] for p in result.positions], label=name, linewidth=1.6)
        for mark, (symbol, size) in markers.items():
            marked = [
                m
                for m in result.moves
                if m.seat == seat and m.decision is not None and m.decision.mark == mark
            ]
            if marked:
                ax.scatter(
                    [m.number for m in marked],
                    [100 * result.positions[m.number].win[seat] for m in marked],
                    marker=symbol,
                    s=size,
                    color=line.get_color(),
                    edgecolors="black",
                    linewidths=0.6,
                    zorder=3,
                )
    for mark, (symbol, size) in markers.items():
        ax.scatter(
            [], [], marker=symbol, s=size, color="white", edgecolors="black", label=f"{mark} {SYMBOLS[mark]}"
        )
    ax.set_xlim(0, max(1, xs[-1]))
    ax.set_ylim(0, 100)
    ax.set_xlabel("move")
    ax.set_ylabel("win chance (%)")
    ax.set_title(f"Win chances — {result.rules}", fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="upper left", ncol=2)
    fig.tight_layout()
    try:
        fig.savefig(path)
    except OSError as exc:
        raise CommandError(f"--plot: cannot write {path} ({exc})") from None
    finally:
        plt.close(fig)
