"""``coloretto analyze RECORD``: review a game move by move.

For every decision with a choice (a single legal action is no decision) the
position before the move is analysed (:func:`coloretto.analysis.analyze`),
and the review shows the move played, the best move (the move the search
would play: it plays for the win first, the score margin second), the win
chance and expected final score of each, and the **loss**: how many points of
expected final score the move played gave away against the best move (none
when it scored as well or better). Losses are marked:

==============  ================  ======
mark            loss (points)     symbol
==============  ================  ======
inaccuracy      1.0 to < 2.5      ``?!``
mistake         2.5 to < 5.0      ``?``
blunder         5.0 or more       ``??``
==============  ================  ======

The summary gives each seat's decisions, average loss, the number of each
mark, and its **accuracy**: the share of its decisions that lost less than
1.0 point (no mark). The figures are search estimates: with the default
budget (1000 iterations per position) a loss under about a point is within
the noise, which is why the first mark starts there.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict, dataclass

from coloretto.analysis import analyze
from coloretto.bots.limits import Limit, LimitError
from coloretto.cli import CommandError
from coloretto.commands.replay import load_record
from coloretto.record import GameRecord, RecordError, play_recorded_move

INACCURACY = 1.0
MISTAKE = 2.5
BLUNDER = 5.0


def mark_for(loss: float) -> str:
    """The mark of a loss in expected points ('' for none)."""
    if loss >= BLUNDER:
        return "blunder"
    if loss >= MISTAKE:
        return "mistake"
    if loss >= INACCURACY:
        return "inaccuracy"
    return ""


SYMBOLS = {"blunder": "??", "mistake": "?", "inaccuracy": "?!", "": ""}


@dataclass(frozen=True)
class Decision:
    move_number: int  #: 1-based, as in the record
    seat: int
    played: str
    best: str
    played_score: float  #: expected final score after the move played
    best_score: float  #: expected final score after the best move
    loss: float  #: best_score − played_score, at least 0
    mark: str
    win_probability: float  #: the mover's (calibrated) win chance after the move played
    best_win_probability: float  #: the mover's (calibrated) win chance after the best move


@dataclass(frozen=True)
class SeatSummary:
    seat: int
    name: str
    decisions: int
    average_loss: float
    inaccuracies: int
    mistakes: int
    blunders: int
    accuracy: float  #: percent of decisions with no mark


def review(record: GameRecord, budget: int | str | Limit = 1000, seed: int = 0) -> list[Decision]:
    """Analyse every decision of a recorded game."""
    game = record.initial_game()
    secret = record.deck is None and record.seed is None
    edition = record.rules.edition
    decisions = []
    for number, move in enumerate(record.moves, start=1):
        legal = game.legal_actions
        if len(legal) > 1 and move.action in legal:
            values = analyze(game, budget=budget, seed=seed + number)
            by_action = {v.action: v for v in values}
            best = values[0]
            played = by_action.get(move.action)
            if played is not None:
                loss = max(0.0, best.expected_score - played.expected_score)
                decisions.append(
                    Decision(
                        move_number=number,
                        seat=game.to_move if game.to_move is not None else 0,
                        played=move.action.notation(edition),
                        best=best.action.notation(edition),
                        played_score=played.expected_score,
                        best_score=best.expected_score,
                        loss=loss,
                        mark=mark_for(loss),
                        win_probability=played.win_probability,
                        best_win_probability=best.win_probability,
                    )
                )
        play_recorded_move(game, move, number, force_reveals=secret)
    return decisions


def summarise(decisions: list[Decision], seats: list[str]) -> list[SeatSummary]:
    out = []
    for seat, name in enumerate(seats):
        mine = [d for d in decisions if d.seat == seat]
        count = len(mine)
        marks = [d.mark for d in mine]
        out.append(
            SeatSummary(
                seat=seat,
                name=name,
                decisions=count,
                average_loss=sum(d.loss for d in mine) / count if count else 0.0,
                inaccuracies=marks.count("inaccuracy"),
                mistakes=marks.count("mistake"),
                blunders=marks.count("blunder"),
                accuracy=100.0 * marks.count("") / count if count else 100.0,
            )
        )
    return out


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "analyze",
        help="review a recorded game: best moves, losses, mistakes, accuracy",
        description="Analyse every decision of a game record with Monte Carlo tree search: the move "
        "played, the best move, the loss in expected final score, and marks: inaccuracy (loss ≥ "
        f"{INACCURACY:g}), mistake (≥ {MISTAKE:g}), blunder (≥ {BLUNDER:g}); then each seat's accuracy "
        "(the share of decisions without a mark).",
    )
    parser.add_argument("record", help="a game record (JSON) written by coloretto")
    parser.add_argument(
        "--budget",
        default="1000",
        help="search per decision: iterations (1000, the default) or time (0.5s)",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the search (default 0)")
    parser.add_argument("--all", action="store_true", help="list every decision, not only the marked ones")
    parser.add_argument("--json", action="store_true", help="print the review as JSON")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    record = load_record(Path(args.record))
    try:
        budget = Limit.parse(args.budget)
    except LimitError as exc:
        raise CommandError(f"--budget: {exc}") from None
    try:
        decisions = review(record, budget=budget, seed=args.seed)
    except RecordError as exc:
        raise CommandError(f"{args.record}: {exc}") from None
    except ValueError as exc:
        raise CommandError(str(exc)) from None
    players = record.rules.players
    seats = list(record.seats) or [f"seat {i + 1}" for i in range(players)]
    summary = summarise(decisions, seats)
    if args.json:
        json.dump(
            {
                "thresholds": {"inaccuracy": INACCURACY, "mistake": MISTAKE, "blunder": BLUNDER},
                "budget": args.budget,
                "seed": args.seed,
                "decisions": [asdict(d) for d in decisions],
                "summary": [asdict(s) for s in summary],
            },
            sys.stdout,
            indent=2,
            ensure_ascii=False,
        )
        print()
        return 0
    print(
        f"{record.rules.describe()}; {len(decisions)} decisions analysed, budget {args.budget} per position"
    )
    print(
        f"{'':>4}  {'':<12} {'played':^19} {'best':^19}"
        f"\n{'move':>4}  {'seat':<12} {'move':<6} {'win%':>5} {'pts':>6} {'move':<6} {'win%':>5} {'pts':>6}"
        f" {'loss':>5}  mark"
    )
    for d in decisions:
        if d.mark or args.all:
            mark = f"{d.mark} {SYMBOLS[d.mark]}" if d.mark else ""
            print(
                f"{d.move_number:>4}  {seats[d.seat][:12]:<12} {d.played:<6} {100 * d.win_probability:5.1f} "
                f"{d.played_score:6.1f} {d.best:<6} {100 * d.best_win_probability:5.1f} {d.best_score:6.1f} "
                f"{d.loss:5.1f}  {mark}"
            )
    print()
    print(f"{'seat':<12} {'decisions':>9} {'avg loss':>8} {'?!':>3} {'?':>3} {'??':>3} {'accuracy':>8}")
    for s in summary:
        print(
            f"{s.name[:12]:<12} {s.decisions:>9} {s.average_loss:8.2f} {s.inaccuracies:>3} "
            f"{s.mistakes:>3} {s.blunders:>3} {s.accuracy:7.1f}%"
        )
    return 0
