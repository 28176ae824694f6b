"""``coloretto backup`` and ``coloretto restore``: a live SQLite database copied, and a copy put
back; the work is :mod:`coloretto.web.storage.backup`'s."""

from __future__ import annotations

import argparse
from pathlib import Path

from coloretto.commands import CommandError
from coloretto.commands.options import path_arg


def _where(parser: argparse.ArgumentParser) -> None:
    where = parser.add_mutually_exclusive_group()
    where.add_argument(
        "--data-dir",
        type=path_arg,
        default=None,
        help="the server's data directory (default $COLORETTO_DATA or ~/.local/share/coloretto, as "
        "coloretto serve)",
    )
    where.add_argument(
        "--database-url",
        default=None,
        metavar="URL",
        help="the server's database as coloretto serve was given it: sqlite:///path/to/file (a "
        "PostgreSQL URL is refused: use pg_dump / pg_restore)",
    )


def register(subparsers: argparse._SubParsersAction) -> None:
    backup = subparsers.add_parser(
        "backup",
        help="copy the live SQLite database to FILE, while the server plays",
        description="Copy the web app's SQLite database to FILE with SQLite's online backup: the copy "
        "is the database as it stood when the copy began, and the server may go on playing meanwhile. "
        "It is written to a temporary file beside FILE, checked, then renamed to FILE, so FILE is "
        "always a whole backup (an existing FILE is replaced). For PostgreSQL use pg_dump -Fc "
        "(docs/operator/backup.md).",
    )
    backup.add_argument("file", type=path_arg, metavar="FILE", help="where to write the backup")
    _where(backup)
    backup.set_defaults(func=run_backup)

    restore = subparsers.add_parser(
        "restore",
        help="put a backup in place of the SQLite database (the server stopped)",
        description="Put the backup FILE in place of the web app's SQLite database. The server must be "
        "stopped. FILE is checked first (SQLite's integrity check, a database of coloretto whose "
        "migration this version knows; an older one is migrated when the server starts). The "
        "database it replaces is kept beside it under a timestamped name, printed, and the files "
        "are swapped in one rename. For PostgreSQL use pg_restore (docs/operator/backup.md).",
    )
    restore.add_argument("file", type=path_arg, metavar="FILE", help="the backup to restore")
    _where(restore)
    restore.set_defaults(func=run_restore)


def _database(args: argparse.Namespace, purpose: str) -> Path:
    from coloretto.web.storage.backup import BackupError, data_dir_database, sqlite_file

    if args.database_url is None:
        return data_dir_database(args.data_dir)
    try:
        return sqlite_file(args.database_url, purpose)
    except BackupError as exc:
        raise CommandError(str(exc)) from None


def _size(size_bytes: int) -> str:
    return f"{size_bytes / 2**20:,.1f} MiB" if size_bytes >= 2**20 else f"{size_bytes / 1024:,.0f} KiB"


def run_backup(args: argparse.Namespace) -> int:
    from coloretto.web.storage.backup import BackupError, backup_sqlite

    database = _database(args, "backup")
    try:
        result = backup_sqlite(database, args.file)
    except BackupError as exc:
        raise CommandError(str(exc)) from None
    facts = result.facts
    print(
        f"backed up {result.source} to {result.file}: {facts.games:,} games, {facts.moves:,} moves, "
        f"migration {facts.revision}, {_size(result.size_bytes)} in {result.seconds:.2f} s"
    )
    return 0


def run_restore(args: argparse.Namespace) -> int:
    from coloretto.web.storage.backup import BackupError, restore_sqlite

    database = _database(args, "restore")
    try:
        result = restore_sqlite(args.file, database)
    except BackupError as exc:
        raise CommandError(str(exc)) from None
    facts = result.facts
    print(
        f"restored {result.file} into {result.database}: {facts.games:,} games, {facts.moves:,} moves, "
        f"migration {facts.revision} (a server migrates an older one when it starts)"
    )
    if result.kept is not None:
        print(f"the database it replaced is kept as {result.kept}")
    return 0
