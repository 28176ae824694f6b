"""A backup taken in the middle of a load test (``coloretto loadtest --backup FILE``), and the check
that it holds every move acknowledged to the clients before it began.

At ``--backup-after`` seconds into the measured time the tool notes every move its clients have
been shown (a state is sent only after its move is committed: a move shown is a move
acknowledged), then backs the database up while the games go on: SQLite with
:func:`coloretto.web.storage.backup.backup_sqlite` (what ``coloretto backup`` runs), PostgreSQL
with ``pg_dump -Fc`` (as docs/operator/backup.md says). After the run it reads the backup
without opening a server on it (the SQLite file read-only; the dump's ``moves`` table through
``pg_restore --data-only`` to standard output) and counts the noted moves it lacks.
"""

from __future__ import annotations

import asyncio
import os
import re
import sqlite3
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from coloretto.tools.loadtest import LoadTestError
from coloretto.tools.loadtest.clients import Load

#: game ids per query when the noted moves are looked up in an SQLite backup
IDS_PER_QUERY = 500
#: a hang guard for pg_dump and pg_restore, not a timing
TOOL_TIMEOUT = 1800
#: the line that begins the moves table's rows in what pg_restore writes (``COPY public.moves (…``)
MOVES_COPY = re.compile(r'^COPY (?:"?\w+"?\.)?"?moves"? \(([^)]*)\) FROM stdin;$')


@dataclass
class TakenBackup:
    """A backup taken during the run, and the moves acknowledged before it began."""

    file: Path
    kind: str  #: "sqlite" (the online backup) or "pg_dump"
    at_s: float  #: when it began, from the start of the measured time
    seconds: float
    size_bytes: int
    acknowledged: dict[str, dict[int, str]]  #: game id -> move number -> notation


def backend(database_url: str) -> str:
    from sqlalchemy.engine import make_url

    return make_url(database_url).get_backend_name()


def acknowledged(load: Load) -> dict[str, dict[int, str]]:
    """Every move the clients have been shown so far, by game."""
    return {track.game_id: dict(track.moves) for track in load.tracks}


def take_backup(database_url: str, file: Path) -> tuple[str, float, int]:
    """Back ``database_url`` up into ``file``: (kind, seconds, size in bytes)."""
    if backend(database_url) == "sqlite":
        from coloretto.web.storage.backup import BackupError, backup_sqlite
        from coloretto.web.storage.db import sqlite_path

        database = sqlite_path(database_url)
        if database is None:
            raise LoadTestError(f"--backup needs an SQLite file, not {database_url}")
        try:
            result = backup_sqlite(database, file)
        except BackupError as exc:
            raise LoadTestError(f"the backup failed: {exc}") from None
        return "sqlite", result.seconds, result.size_bytes
    from coloretto.tools.postgres import PostgresToolMissing, libpq_url, pg_binary

    try:
        pg_dump = pg_binary("pg_dump")
    except PostgresToolMissing as exc:
        raise LoadTestError(str(exc)) from None
    # written beside FILE, then renamed: a half dump never lies under its name
    descriptor, partial = tempfile.mkstemp(prefix=f".{file.name}.", suffix=".partial", dir=file.parent)
    os.close(descriptor)
    started = time.perf_counter()
    try:
        done = subprocess.run(
            [pg_dump, "-Fc", "--file", partial, libpq_url(database_url)],
            capture_output=True, text=True, timeout=TOOL_TIMEOUT, check=False,
        )  # fmt: skip
        if done.returncode != 0:
            said = done.stderr.strip().splitlines()
            raise LoadTestError(f"pg_dump failed: {said[-1] if said else f'exit status {done.returncode}'}")
        seconds = time.perf_counter() - started
        os.replace(partial, file)
    finally:
        Path(partial).unlink(missing_ok=True)
    return "pg_dump", seconds, file.stat().st_size


async def backup_during(load: Load, database_url: str, file: Path, after: float) -> TakenBackup:
    """At ``after`` seconds into the measured time: note the acknowledged moves, then back up while
    the games go on (the backup runs in a thread; the clients keep playing on the event loop)."""
    await asyncio.sleep(max(0.0, load.window_start + after - time.monotonic()))
    noted = acknowledged(load)
    at = time.monotonic() - load.window_start
    kind, seconds, size = await asyncio.to_thread(take_backup, database_url, file)
    return TakenBackup(file, kind, at, seconds, size, noted)


def moves_in_sqlite_backup(file: Path, game_ids: list[str]) -> dict[str, dict[int, str]]:
    stored: dict[str, dict[int, str]] = {game_id: {} for game_id in game_ids}
    connection = sqlite3.connect(f"{file.resolve().as_uri()}?mode=ro", uri=True)
    try:
        for start in range(0, len(game_ids), IDS_PER_QUERY):
            chunk = game_ids[start : start + IDS_PER_QUERY]
            marks = ",".join("?" * len(chunk))
            query = f"SELECT game_id, number, move FROM moves WHERE game_id IN ({marks})"
            for game_id, number, move in connection.execute(query, chunk):
                stored[str(game_id)][int(number)] = str(move)
    finally:
        connection.close()
    return stored


def _copy_field(text: str) -> str:
    """A field of COPY's text format, its backslash escapes undone."""
    if "\\" not in text:
        return text
    escapes = {"t": "\t", "n": "\n", "r": "\r", "\\": "\\"}
    out: list[str] = []
    chars = iter(text)
    for char in chars:
        out.append(escapes.get(next(chars, ""), "") if char == "\\" else char)
    return "".join(out)


def moves_in_pg_dump(file: Path, game_ids: list[str]) -> dict[str, dict[int, str]]:
    """The ``moves`` rows of a ``pg_dump -Fc`` file, read by ``pg_restore`` to standard output (no
    database is restored into)."""
    from coloretto.tools.postgres import PostgresToolMissing, pg_binary

    try:
        pg_restore = pg_binary("pg_restore")
    except PostgresToolMissing as exc:
        raise LoadTestError(str(exc)) from None
    done = subprocess.run(
        [pg_restore, "--data-only", "--table", "moves", "--file", "-", str(file)],
        capture_output=True, text=True, timeout=TOOL_TIMEOUT, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        raise LoadTestError(f"pg_restore cannot read {file}: {done.stderr.strip()}")
    wanted = set(game_ids)
    stored: dict[str, dict[int, str]] = {game_id: {} for game_id in game_ids}
    columns: list[str] | None = None
    for line in done.stdout.splitlines():
        if columns is None:
            copy = MOVES_COPY.match(line)
            if copy:
                columns = [name.strip().strip('"') for name in copy.group(1).split(",")]
            continue
        if line == "\\.":
            break
        fields = dict(zip(columns, line.split("\t"), strict=True))
        game_id = _copy_field(fields["game_id"])
        if game_id in wanted:
            stored[game_id][int(fields["number"])] = _copy_field(fields["move"])
    if columns is None:
        raise LoadTestError(f"{file} holds no moves table: not a dump of coloretto's database")
    return stored


def backup_figures(taken: TakenBackup) -> dict[str, Any]:
    """The backup's figures: how many of the moves acknowledged before it began it lacks."""
    game_ids = list(taken.acknowledged)
    try:
        if taken.kind == "sqlite":
            stored = moves_in_sqlite_backup(taken.file, game_ids)
        else:
            stored = moves_in_pg_dump(taken.file, game_ids)
    except sqlite3.Error as exc:
        raise LoadTestError(f"cannot read the backup {taken.file}: {exc}") from None
    checked = missing = changed = 0
    for game_id, moves in taken.acknowledged.items():
        for number, move in moves.items():
            checked += 1
            if number not in stored[game_id]:
                missing += 1
            elif stored[game_id][number] != move:
                changed += 1
    return {
        "file": str(taken.file),
        "kind": taken.kind,
        "at_s": round(taken.at_s, 3),
        "seconds": round(taken.seconds, 3),
        "size_bytes": taken.size_bytes,
        "games": len(game_ids),
        "moves_acknowledged_before": checked,
        "missing": missing,
        "changed": changed,
        "moves_in_backup_of_those_games": sum(len(moves) for moves in stored.values()),
    }
