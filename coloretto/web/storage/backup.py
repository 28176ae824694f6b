"""Backups of the SQLite database, taken while the server plays, and putting one back.

:func:`backup_sqlite` copies a live database with SQLite's online backup API in one step: the
copy is one read transaction, so it is the database as it stood when the copy began (a
consistent snapshot: every transaction committed before, none after), while the server keeps
writing (the database is in WAL mode: a reader never blocks the writer). It writes to a
temporary file beside the destination, checks the copy (``PRAGMA integrity_check`` and
coloretto's migration revision) and renames it into place, so a half backup is never found
under the destination's name.

:func:`restore_sqlite` puts a backup in place of a data directory's database. It takes the
database's lock exclusively (every process that opens the database through
:func:`~coloretto.web.storage.db.open_database` holds it shared while it runs: a running server
is seen, and none can start meanwhile), checks the backup, keeps the database it replaces
beside it under a timestamped name, and swaps the files with one rename.

PostgreSQL is backed up with its own tools (``pg_dump -Fc``, ``pg_restore``): see
``docs/operator/backup.md``.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import stat
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

from coloretto.web.storage.db import (
    DATABASE_FILE,
    DatabaseError,
    DatabaseInUse,
    default_data_dir,
    exclusive_database_lock,
    migration_revisions,
    sqlite_path,
)

#: the first 16 bytes of every SQLite 3 database file
SQLITE_HEADER = b"SQLite format 3\x00"
#: how long the backup's read transaction may wait for a lock (a checkpoint in progress)
BUSY_TIMEOUT_MS = 10_000
#: the tables a database of coloretto always has (the first migration makes them)
COLORETTO_TABLES = ("alembic_version", "games", "seats", "moves")

#: what a PostgreSQL URL gets instead: the commands of docs/operator/backup.md (tested there, by
#: tests/test_backup_postgresql.py), the database URL as libpq takes it
PG_DUMP_HINT = (
    "coloretto backup copies an SQLite database; back PostgreSQL up with its own tool, while the "
    "servers play: pg_dump -Fc --file=FILE DATABASE_URL (see docs/operator/backup.md)"
)
PG_RESTORE_HINT = (
    "coloretto restore puts back an SQLite database; restore PostgreSQL with its own tool, every "
    "server stopped: pg_restore --clean --if-exists --single-transaction --dbname=DATABASE_URL FILE "
    "(see docs/operator/backup.md)"
)


class BackupError(Exception):
    """A backup or a restore that cannot be done: one line that says why (nothing was changed)."""


@dataclass(frozen=True)
class DatabaseFacts:
    """What a checked SQLite file of coloretto holds."""

    revision: str
    games: int
    moves: int


@dataclass(frozen=True)
class BackupResult:
    """A backup written: where from, where to, what it holds, its size and how long it took."""

    source: Path
    file: Path
    facts: DatabaseFacts
    size_bytes: int
    seconds: float


@dataclass(frozen=True)
class RestoreResult:
    """A backup put in place: the database it replaced is kept under ``kept`` (None: there was none)."""

    file: Path
    database: Path
    kept: Path | None
    facts: DatabaseFacts


def sqlite_file(database_url: str, purpose: str) -> Path:
    """The file of an ``sqlite:///`` URL; a PostgreSQL URL is refused with the tool to use
    instead (``purpose``: ``"backup"`` or ``"restore"``)."""
    try:
        backend = make_url(database_url).get_backend_name()
    except (ArgumentError, ValueError):
        raise BackupError(f"{database_url!r} is not a database URL like sqlite:///path/to/file") from None
    if backend == "postgresql":
        raise BackupError(PG_DUMP_HINT if purpose == "backup" else PG_RESTORE_HINT)
    if backend != "sqlite":
        raise BackupError(f"coloretto {purpose} knows SQLite (sqlite:///path) only, not {backend}://")
    path = sqlite_path(database_url)
    if path is None:
        raise BackupError(f"coloretto {purpose} needs an SQLite file (sqlite:///path), not {database_url!r}")
    return path


def data_dir_database(data_dir: Path | None) -> Path:
    """The SQLite database of a data directory (None: the default one, as ``coloretto serve``)."""
    return (data_dir or default_data_dir()).expanduser().absolute() / DATABASE_FILE


# ---------------------------------------------------------------------------- checks


def _is_sqlite(path: Path) -> bool:
    with path.open("rb") as file:
        return file.read(len(SQLITE_HEADER)) == SQLITE_HEADER


def _readable_file(path: Path, what: str) -> None:
    """A BackupError unless ``path`` is a readable SQLite file."""
    if not path.exists():
        raise BackupError(f"{what} {path} does not exist")
    if not path.is_file():
        raise BackupError(f"{what} {path} is not a file")
    try:
        if not _is_sqlite(path):
            raise BackupError(f"{what} {path} is not an SQLite database")
    except OSError as exc:
        raise BackupError(f"cannot read {what} {path}: {exc.strerror or exc}") from None


def _writable_folder(folder: Path, what: str) -> None:
    if not folder.is_dir():
        raise BackupError(f"the folder of {what} {folder} does not exist")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise BackupError(f"cannot write in the folder {folder} (permission denied)")


def check_database(path: Path, *, known_revision: bool) -> DatabaseFacts:
    """The revision, games and moves of the SQLite file ``path``, after SQLite's integrity check;
    a BackupError when it is damaged, not coloretto's, or (``known_revision``) of a migration this
    version of coloretto does not know (a newer coloretto made it). Opens it read-only."""
    try:
        connection = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        raise BackupError(f"cannot open {path}: {exc}") from None
    try:
        try:
            problems = [str(row[0]) for row in connection.execute("PRAGMA integrity_check(5)")]
        except sqlite3.DatabaseError as exc:
            raise BackupError(f"{path} is damaged: {exc}") from None
        if problems != ["ok"]:
            said = [line.strip() for problem in problems for line in problem.splitlines()]
            said = [line for line in said if line and not line.startswith("***")][:3]
            raise BackupError(f"{path} is damaged (SQLite's integrity check: {'; '.join(said)} …)")
        listed = connection.execute("SELECT name FROM sqlite_master WHERE type='table'")
        tables = {str(row[0]) for row in listed}
        missing = [table for table in COLORETTO_TABLES if table not in tables]
        if missing:
            raise BackupError(f"{path} is an SQLite database but not coloretto's (no table {missing[0]})")
        revisions = [str(row[0]) for row in connection.execute("SELECT version_num FROM alembic_version")]
        if len(revisions) != 1:
            raise BackupError(
                f"{path} is not coloretto's database: it has {len(revisions)} migration revisions"
            )
        revision = revisions[0]
        games = int(connection.execute("SELECT count(*) FROM games").fetchone()[0])
        moves = int(connection.execute("SELECT count(*) FROM moves").fetchone()[0])
    except sqlite3.Error as exc:
        raise BackupError(f"cannot read {path}: {exc}") from None
    finally:
        connection.close()
    if known_revision and revision not in migration_revisions():
        from coloretto import __version__

        raise BackupError(
            f"{path} is at migration revision {revision!r}, which coloretto {__version__} does not "
            "know: it was made by a newer coloretto (install that version to restore it)"
        )
    return DatabaseFacts(revision, games, moves)


# ---------------------------------------------------------------------------- files


def _fsync_folder(folder: Path) -> None:
    """The renames in ``folder`` are on disk (where the system has directory file descriptors)."""
    with contextlib.suppress(OSError):
        descriptor = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(descriptor)
        finally:
            os.close(descriptor)


def _fsync_file(path: Path) -> None:
    with path.open("rb+") as file:
        os.fsync(file.fileno())


@contextlib.contextmanager
def _temporary_beside(target: Path) -> Iterator[Path]:
    """A new empty file in ``target``'s folder (mode 0600: a database holds password digests),
    removed on the way out unless it was renamed away meanwhile; its SQLite side files too."""
    try:
        descriptor, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".partial", dir=target.parent)
    except OSError as exc:
        raise BackupError(f"cannot write in the folder {target.parent}: {exc.strerror or exc}") from None
    os.close(descriptor)
    path = Path(name)
    try:
        yield path
    finally:
        for leftover in (path, *_side_files(path)):
            with contextlib.suppress(FileNotFoundError):
                leftover.unlink()


def _side_files(database: Path) -> tuple[Path, Path, Path]:
    """SQLite's files beside a database: the write-ahead log, its index, the rollback journal."""
    return (
        database.with_name(database.name + "-wal"),
        database.with_name(database.name + "-shm"),
        database.with_name(database.name + "-journal"),
    )


def _copy(source: sqlite3.Connection, destination: Path) -> None:
    """Everything in ``source`` into the file ``destination`` in one backup step (one read
    transaction: a snapshot), the copy left in rollback-journal mode: one self-contained file."""
    target = sqlite3.connect(destination)
    try:
        source.backup(target, pages=-1)  # -1: every page in one step, so the snapshot is one
        target.execute("PRAGMA journal_mode=DELETE")
        target.commit()
    finally:
        target.close()


# ---------------------------------------------------------------------------- backup


def backup_sqlite(database: Path, file: Path) -> BackupResult:
    """Copy the live SQLite ``database`` to ``file`` (see the module's docstring); an existing
    ``file`` is replaced only by a complete, checked backup, and only if it is an SQLite file."""
    database = database.expanduser().resolve()
    file = file.expanduser().absolute()
    if not database.exists():
        raise BackupError(
            f"there is no database at {database}: give the server's --data-dir or --database-url"
        )
    _readable_file(database, "the database")
    if file.is_dir():
        raise BackupError(f"{file} is a folder: give the backup's file name, e.g. {file / DATABASE_FILE}")
    _writable_folder(file.parent, "the backup")
    if file.exists():
        with contextlib.suppress(OSError):
            if file.samefile(database):
                raise BackupError(f"{file} is the database itself: give another file for the backup")
        try:
            other = not _is_sqlite(file)
        except OSError as exc:
            raise BackupError(f"cannot read {file}: {exc.strerror or exc}") from None
        if other:
            raise BackupError(f"{file} exists and is not an SQLite database: choose another name")
    started = time.perf_counter()
    try:
        # mode=rw: never create a database that is not there
        source = sqlite3.connect(f"{database.as_uri()}?mode=rw", uri=True, timeout=BUSY_TIMEOUT_MS / 1000)
    except sqlite3.Error as exc:
        raise BackupError(f"cannot open the database {database}: {exc}") from None
    try:
        source.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        with _temporary_beside(file) as partial:
            try:
                _copy(source, partial)
            except sqlite3.Error as exc:
                raise BackupError(f"cannot copy {database}: {exc}") from None
            except OSError as exc:
                raise BackupError(f"cannot write {partial}: {exc.strerror or exc}") from None
            facts = check_database(partial, known_revision=False)
            seconds = time.perf_counter() - started
            _fsync_file(partial)
            os.replace(partial, file)
            _fsync_folder(file.parent)
    finally:
        source.close()
    return BackupResult(database, file, facts, file.stat().st_size, seconds)


# ---------------------------------------------------------------------------- restore


def _kept_name(database: Path) -> Path:
    """A free name beside ``database`` for the database a restore replaces."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    candidate = database.with_name(f"{database.name}.replaced-{stamp}")
    number = 1
    while candidate.exists() or any(side.exists() for side in _side_files(candidate)):
        number += 1
        candidate = database.with_name(f"{database.name}.replaced-{stamp}-{number}")
    return candidate


def _fold_log(database: Path) -> bool:
    """Fold the write-ahead log of ``database`` into it and leave WAL mode, so that the file alone
    is the whole database; False when SQLite cannot (a damaged database)."""
    try:
        connection = sqlite3.connect(f"{database.as_uri()}?mode=rw", uri=True, timeout=5)
        try:
            connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            mode = connection.execute("PRAGMA journal_mode=DELETE").fetchone()[0]
        finally:
            connection.close()
    except sqlite3.Error:
        return False
    wal, _shm, journal = _side_files(database)
    return str(mode).lower() == "delete" and not wal.exists() and not journal.exists()


def _keep_old(database: Path) -> Path:
    """Keep the database a restore replaces under a timestamped name beside it, leaving
    ``database`` where it is for the atomic swap (a hard link, else a copy); a database SQLite
    cannot fold its log into is moved aside with its log instead."""
    kept = _kept_name(database)
    if _fold_log(database):
        try:
            os.link(database, kept)
        except OSError:  # a file system without hard links
            import shutil

            shutil.copy2(database, kept)
            _fsync_file(kept)
        return kept
    for side, kept_side in zip(_side_files(database), _side_files(kept), strict=True):
        if side.exists():
            os.replace(side, kept_side)
    os.replace(database, kept)
    return kept


def restore_sqlite(file: Path, database: Path) -> RestoreResult:
    """Put the backup ``file`` in place of the SQLite ``database`` (see the module's docstring)."""
    file = file.expanduser().absolute()
    database = database.expanduser().absolute()
    _readable_file(file, "the backup")
    if database.exists():
        with contextlib.suppress(OSError):
            if file.samefile(database):
                raise BackupError(f"{file} is the database itself: give a backup to restore")
        if not database.is_file():
            raise BackupError(f"the database {database} is not a file")
    folder = database.parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise BackupError(f"cannot create the folder {folder}: {exc.strerror or exc}") from None
    _writable_folder(folder, "the database")
    check_database(file, known_revision=True)  # before anything is locked or written
    try:
        with exclusive_database_lock(database):
            return _swap(file, database)
    except DatabaseInUse:
        raise BackupError(
            f"a coloretto server (or another coloretto command) is using {database}: stop it, then restore"
        ) from None
    except DatabaseError as exc:  # the lock file cannot be opened
        raise BackupError(str(exc)) from None


def _swap(file: Path, database: Path) -> RestoreResult:
    """The restore itself, the database's lock held."""
    folder = database.parent
    with _temporary_beside(database) as incoming:
        # the backup is copied with SQLite's backup API, not byte by byte: a backup that is itself
        # in WAL mode, its log beside it, arrives whole and as one file
        try:
            source = sqlite3.connect(f"{file.resolve().as_uri()}?mode=ro", uri=True)
            try:
                _copy(source, incoming)
            finally:
                source.close()
        except sqlite3.Error as exc:
            raise BackupError(f"cannot copy {file}: {exc}") from None
        facts = check_database(incoming, known_revision=True)
        kept: Path | None = None
        if database.exists():
            old = database.stat()
            with contextlib.suppress(OSError):
                os.chmod(incoming, stat.S_IMODE(old.st_mode))
                if hasattr(os, "geteuid") and os.geteuid() == 0:
                    os.chown(incoming, old.st_uid, old.st_gid)  # the server's user, not root's
            try:
                kept = _keep_old(database)
            except OSError as exc:
                raise BackupError(
                    f"cannot keep the database {database} aside: {exc.strerror or exc}"
                ) from None
        _fsync_file(incoming)
        os.replace(incoming, database)  # the swap: the old database, or the new one, never neither
        for side in _side_files(database):
            with contextlib.suppress(FileNotFoundError):
                side.unlink()  # the old database's, already folded in (or moved aside with it)
        _fsync_folder(folder)
    return RestoreResult(file, database, kept, facts)
