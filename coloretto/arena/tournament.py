"""Running a tournament: schedule, play on a backend, save as it goes, resume.

Every finished game is appended to ``games.jsonl`` in the output directory
at once, so an interrupted tournament (Ctrl-C) loses only the games in
flight; :func:`run_tournament` with ``resume=True`` plays the games missing
from that file. The figures are computed from all the games sorted by game
number, so they do not depend on the backend, the number of workers, or how
many interruptions there were.
"""

from __future__ import annotations

import contextlib
import json
import signal
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from coloretto.arena.backends import run_backend
from coloretto.arena.config import ArenaError, TournamentConfig
from coloretto.arena.output import summary_document, write_outputs
from coloretto.arena.stats import summarise

SETTINGS_FILE = "tournament.json"
GAMES_FILE = "games.jsonl"
SETTINGS_FORMAT = "coloretto-arena-tournament"

ResultHook = Callable[[dict[str, Any], int, int], None]


@dataclass
class TournamentOutcome:
    config: TournamentConfig
    out_dir: Path
    results: list[dict[str, Any]]  #: every finished game, in game order
    document: dict[str, Any]  #: the summary written to results.json
    interrupted: bool
    files: list[Path] = field(default_factory=list)
    played_now: int = 0  #: games played by this call (the rest came from an earlier run)


def save_settings(out_dir: Path, config: TournamentConfig, records_dir: Path | None) -> None:
    data = {
        "format": SETTINGS_FORMAT,
        "version": 1,
        "config": config.to_dict(),
        # absolute: a --resume from another working directory finds the same folder
        "records_dir": None if records_dir is None else str(records_dir.absolute()),
    }
    (out_dir / SETTINGS_FILE).write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")


class TournamentExistsError(ArenaError):
    """The output directory already holds a tournament's games (a new one would mix with them)."""


def load_settings(out_dir: Path) -> tuple[TournamentConfig, Path | None]:
    """The settings of the tournament saved in ``out_dir`` (ArenaError if none)."""
    if not out_dir.is_dir():
        if out_dir.exists():
            raise ArenaError(f"{out_dir} is not a directory: give the directory of the tournament to resume")
        raise ArenaError(f"{out_dir}: no such directory to resume")
    path = out_dir / SETTINGS_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ArenaError(f"{out_dir} holds no tournament to resume ({SETTINGS_FILE} is missing)") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ArenaError(f"{path}: cannot read it ({exc})") from None
    if not isinstance(data, dict) or data.get("format") != SETTINGS_FORMAT:
        raise ArenaError(f"{path} is not a coloretto arena settings file")
    config = TournamentConfig.from_dict(data.get("config"))
    records = data.get("records_dir")
    return config, None if records is None else Path(records)


def load_results(out_dir: Path, config: TournamentConfig) -> list[dict[str, Any]]:
    """The finished games in ``games.jsonl``. A last line cut short by a crash
    is dropped; any other damage is an error."""
    path = out_dir / GAMES_FILE
    if not path.exists():
        return []
    try:
        lines = path.read_bytes().split(b"\n")
    except OSError as exc:
        raise ArenaError(f"{path}: cannot read it ({exc.strerror or exc})") from None
    lines.pop()  # "" after the last newline, or a line cut short when the run was killed
    results: dict[int, dict[str, Any]] = {}
    for number, raw in enumerate(lines, start=1):
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ArenaError(f"{path}, line {number}: not UTF-8 text ({exc.reason})") from None
        if not line.strip():
            continue
        try:
            result = json.loads(line)
            game = result["game"]
            seating = config.seatings[result["seating"]]
        except (json.JSONDecodeError, KeyError, TypeError, IndexError) as exc:
            raise ArenaError(f"{path}, line {number}: not a game result of this tournament ({exc})") from None
        if result.get("bots") != list(seating):
            raise ArenaError(f"{path}, line {number}: game {game} was played by other bots")
        results[game] = result
    return [results[g] for g in sorted(results)]


def _truncate_partial_line(path: Path) -> None:
    """Drop a half-written last line so that appending starts on a fresh line."""
    if not path.exists():
        return
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        cut = data.rfind(b"\n") + 1
        with path.open("r+b") as handle:
            handle.truncate(cut)


def run_tournament(
    config: TournamentConfig,
    out_dir: Path,
    *,
    backend: str = "pool",
    workers: int | None = None,
    address: str | None = None,
    records_dir: Path | None = None,
    resume: bool = False,
    on_result: ResultHook | None = None,
) -> TournamentOutcome:
    """Play the tournament (or, with ``resume``, the games of it still missing
    from ``out_dir``), save every game as it finishes, and write the summary
    files. Ctrl-C stops it cleanly: the outcome says ``interrupted``.

    ``on_result(result, done, total)`` is called after each game is saved.
    """
    out_dir = Path(out_dir)
    if resume:
        done = load_results(out_dir, config)
    else:
        previous = out_dir / GAMES_FILE
        if previous.exists() and previous.stat().st_size:
            raise TournamentExistsError(
                f"{out_dir} already holds a tournament: use --resume, or another --out"
            )
        if records_dir is not None and records_dir.is_dir() and any(records_dir.glob("game-*.json")):
            # a new tournament's game-000000.json would overwrite another's and sit among its others
            raise ArenaError(
                f"{records_dir} already holds game records: give --records an empty or new directory"
            )
        done = []
    out_dir.mkdir(parents=True, exist_ok=True)
    if config.keep_records and records_dir is None:
        raise ArenaError("keeping records needs a records directory")
    if records_dir is not None:
        records_dir.mkdir(parents=True, exist_ok=True)
    save_settings(out_dir, config, records_dir)
    finished = {r["game"] for r in done if r["game"] < config.total_games}
    results = [r for r in done if r["game"] in finished]
    missing = [g for g in range(config.total_games) if g not in finished]
    games_path = out_dir / GAMES_FILE
    _truncate_partial_line(games_path)
    interrupted = False
    played = 0
    stream = run_backend(backend, config, missing, workers, address)
    try:
        with StopSignals() as stop_signals, games_path.open("a", encoding="utf-8") as log:
            for result in stream:
                with stop_signals.deferred():  # a game is saved whole, or not at all
                    records = result.pop("records", [])
                    if records_dir is not None:
                        _write_records(records_dir, result["game"], records)
                    log.write(json.dumps(result, separators=(",", ":")) + "\n")
                    log.flush()
                    results.append(result)
                    played += 1
                if on_result is not None:
                    on_result(result, len(results), config.total_games)
    except KeyboardInterrupt:
        interrupted = True
    finally:
        close = getattr(stream, "close", None)
        if close is not None:
            close()
    results.sort(key=lambda r: r["game"])
    stats = summarise(results, config.lineup)
    document = summary_document(config, results, stats, interrupted)
    files = write_outputs(out_dir, document, results)
    return TournamentOutcome(config, out_dir, results, document, interrupted, files, played)


class StopSignals:
    """Ctrl-C (or SIGTERM, as a batch scheduler or ``kill`` stops a job) as
    usual, except inside :meth:`deferred`, where it waits for the block to end
    (so that a game is saved whole or not at all). Either ends the run the same
    way: the games saved so far are summarised and can be resumed."""

    SIGNALS = (signal.SIGINT, signal.SIGTERM)

    def __init__(self) -> None:
        self.inside = False
        self.pending = False
        self.previous: dict[int, Any] = {}
        self.installed = threading.current_thread() is threading.main_thread()

    def __enter__(self) -> StopSignals:
        if self.installed:
            for signum in self.SIGNALS:
                self.previous[signum] = signal.signal(signum, self._handler)
        return self

    def __exit__(self, *exc: object) -> None:
        for signum, previous in self.previous.items():
            signal.signal(signum, previous if previous is not None else signal.SIG_DFL)

    def _handler(self, signum: int, frame: Any) -> None:
        if self.inside:
            self.pending = True
        else:
            raise KeyboardInterrupt

    @contextlib.contextmanager
    def deferred(self) -> Iterator[None]:
        self.inside = True
        try:
            yield
        finally:
            self.inside = False
        if self.pending:
            self.pending = False
            raise KeyboardInterrupt


def _write_records(records_dir: Path, game: int, records: list[str]) -> None:
    for number, text in enumerate(records, start=1):
        suffix = f"-{number}" if len(records) > 1 else ""
        (records_dir / f"game-{game:06d}{suffix}.json").write_text(text, encoding="utf-8")
