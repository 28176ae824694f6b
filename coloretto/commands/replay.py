"""``coloretto replay``: check a game record move by move and show the result."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from coloretto.commands import CommandError
from coloretto.commands.options import path_arg
from coloretto.commands.render import breakdown_dict, print_breakdowns
from coloretto.record import GameRecord, RecordError
from coloretto.review import Review


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "replay",
        help="check a game record and print its final scores",
        description="Replay a JSON game record, checking every move against the rules "
        "and every revealed card against the deal.",
    )
    parser.add_argument("record", type=path_arg, help="a record written by coloretto")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.add_argument(
        "--step",
        action="store_true",
        help="step through the game on the table screen of coloretto play (→ next move, ← back)",
    )
    parser.add_argument(
        "--review",
        nargs="?",
        const="",
        metavar="REVIEW.json",
        help="with --step: show each move's mark and luck and every seat's win chance, from a review "
        "written by coloretto analyze --json, or (no file) reviewed now at the default setting",
    )
    parser.set_defaults(func=run)


def load_record(path: Path) -> GameRecord:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise CommandError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise CommandError(f"{path}: cannot read it ({exc})") from None
    try:
        return GameRecord.from_json(text)
    except RecordError as exc:
        raise CommandError(f"{path}: {exc}") from None


def run(args: argparse.Namespace) -> int:
    record = load_record(args.record)
    try:
        game = record.replay()
    except RecordError as exc:
        raise CommandError(f"{args.record}: {exc}") from None
    if args.review is not None and not args.step:
        raise CommandError("--review goes with --step (coloretto analyze GAME.json reviews a game)")
    if args.step:
        return step_through(record, None if args.review is None else load_review(record, args.review))
    edition = record.rules.edition
    seats = list(record.seats) or [f"seat {i + 1}" for i in range(record.rules.players)]
    scores = game.scores()
    winners = game.winners() if game.is_over else ()
    named = [game.named_jokers(seat) for seat in range(game.players)]
    if args.json:
        data = {
            "moves": len(record.moves),
            "finished": game.is_over,
            "winners": list(winners),
            "players": [
                {"seat": i, "name": seats[i], **breakdown_dict(s, edition, named[i])}
                for i, s in enumerate(scores)
            ],
        }
        json.dump(data, sys.stdout, indent=2, ensure_ascii=False)
        print()
        return 0
    state = "finished" if game.is_over else "unfinished: scores so far"
    print(f"{record.rules.describe()}; {len(record.moves)} moves, {state}")
    print_breakdowns(list(zip(record.seat_labels, scores, strict=True)), edition, winners, named_jokers=named)
    return 0


def load_review(record: GameRecord, path: str) -> Review:
    """The review of ``record``: read from ``path``, or (``""``) worked out now."""
    if not path:
        from coloretto.review import review

        print("Reviewing the game…", file=sys.stderr, flush=True)
        return review(record)
    try:
        found = Review.from_json(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CommandError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise CommandError(f"{path}: {exc}") from None
    if len(found.moves) != len(record.moves) or found.players != record.rules.players:
        raise CommandError(
            f"{path} is the review of another game: {len(found.moves)} moves of {found.players} players, "
            f"the record has {len(record.moves)} of {record.rules.players}"
        )
    edition = record.rules.edition
    if any(m.played != r.action.notation(edition) for m, r in zip(found.moves, record.moves, strict=True)):
        raise CommandError(f"{path} is the review of another game: its moves differ from the record's")
    return found


def step_through(record: GameRecord, review: Review | None = None) -> int:
    """``--step``: the record one move at a time, in the terminal."""
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise CommandError("--step needs an interactive terminal")
    from coloretto.tui.app import ReplayApp

    ReplayApp(record, review).run()
    return 0
