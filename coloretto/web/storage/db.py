"""The database: an embedded SQLite file by default, PostgreSQL on request.

:func:`open_database` creates the engine and brings the schema up to date
with the Alembic migrations shipped in ``coloretto/web/storage/migrations``.

A process that opens an SQLite database holds a shared lock on the file beside it
(``coloretto.sqlite3.lock``) until it ends: ``coloretto restore`` takes it exclusively, so it
sees a running server, and no server starts on a database while it is being restored. (The
lock is ``flock``: where the system has none, on Windows, a restore cannot see a server.)
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from sqlalchemy import Engine, create_engine, event, text
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session, sessionmaker

MIGRATIONS = Path(__file__).with_name("migrations")
DATABASE_FILE = "coloretto.sqlite3"
#: the PostgreSQL advisory lock taken while migrating (any fixed number, the same in every process)
MIGRATION_LOCK = 0x636F6C6F


class DatabaseError(Exception):
    """A database URL or data directory that cannot be used; the message says why."""


class DatabaseInUse(DatabaseError):
    """Another process holds the SQLite database's lock (a server on it, or a restore)."""


#: the lock files this process holds shared, by database, for as long as it runs
_HELD: dict[str, int] = {}


def lock_file(database: Path) -> Path:
    """The lock file of an SQLite database: ``coloretto.sqlite3.lock`` beside ``coloretto.sqlite3``."""
    return database.with_name(database.name + ".lock")


def sqlite_path(url: str) -> Path | None:
    """The file of an ``sqlite:///`` URL (None: another database, or SQLite in memory)."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite" or not parsed.database or parsed.database == ":memory:":
        return None
    if parsed.database.startswith("file:"):
        return None
    return Path(parsed.database).expanduser().resolve()


def _open_lock(database: Path) -> int:
    path = lock_file(database)
    try:
        return os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    except OSError as exc:
        raise DatabaseError(f"cannot open the lock file {path}: {exc.strerror or exc}") from None


def hold_database(database: Path) -> None:
    """Hold the SQLite ``database``'s lock shared until this process ends (see the module's
    docstring); a :class:`DatabaseInUse` while a restore holds it."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        return
    key = str(database.resolve())
    if key in _HELD:
        return
    descriptor = _open_lock(database)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        os.close(descriptor)
        raise DatabaseInUse(
            f"{database} is being restored (coloretto restore): start again once it is done"
        ) from None
    _HELD[key] = descriptor


@contextlib.contextmanager
def exclusive_database_lock(database: Path) -> Iterator[None]:
    """The SQLite ``database``'s lock, held exclusively inside the block: a
    :class:`DatabaseInUse` when any process has the database open through :func:`open_database`
    (this one included)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        yield
        return
    descriptor = _open_lock(database)
    try:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            raise DatabaseInUse(f"another process is using {database}") from None
        yield
    finally:
        os.close(descriptor)  # closing it lets the lock go


def migration_revisions() -> set[str]:
    """Every migration revision this version of coloretto knows."""
    from alembic.script import ScriptDirectory

    return {script.revision for script in ScriptDirectory(str(MIGRATIONS)).walk_revisions()}


def default_data_dir() -> Path:
    """``$COLORETTO_DATA``, else ``$XDG_DATA_HOME/coloretto``, else ``~/.local/share/coloretto``."""
    if os.environ.get("COLORETTO_DATA"):
        return Path(os.environ["COLORETTO_DATA"])
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "coloretto"


def sqlite_url(data_dir: Path) -> str:
    return f"sqlite:///{(data_dir / DATABASE_FILE).resolve()}"


def normalise_url(url: str) -> str:
    """``postgresql://`` means the psycopg (3) driver when it is installed."""
    parsed = make_url(url)
    if parsed.drivername in ("postgresql", "postgres"):
        if importlib.util.find_spec("psycopg") is not None:
            return parsed.set(drivername="postgresql+psycopg").render_as_string(hide_password=False)
        if importlib.util.find_spec("psycopg2") is None:
            raise DatabaseError(
                "PostgreSQL needs a driver: python3 -m pip install 'psycopg[binary]' "
                "(or pip install -e '.[postgres]')"
            )
    return url


def create_db_engine(url: str) -> Engine:
    url = normalise_url(url)
    if url.startswith("sqlite"):
        engine = create_engine(url, connect_args={"check_same_thread": False})

        @event.listens_for(engine, "connect")
        def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
            cursor = dbapi_connection.cursor()
            # WAL: readers do not block the writer; FULL: a commit is on disk when it returns.
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA synchronous=FULL")
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.execute("PRAGMA busy_timeout=5000")
            cursor.close()

        return engine
    return create_engine(url, pool_pre_ping=True)


def migrate(engine: Engine) -> None:
    """Upgrade the schema to the newest migration (idempotent)."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    # the option is read through configparser, whose interpolation takes a bare % (a URL-encoded
    # password, options=-csearch_path%3D…) for the start of a reference
    config.set_main_option(
        "sqlalchemy.url", engine.url.render_as_string(hide_password=False).replace("%", "%%")
    )
    with engine.begin() as connection:
        if connection.dialect.name == "postgresql":
            # several server processes starting at once: one migrates, the others wait, then see it done
            connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": MIGRATION_LOCK})
        config.attributes["connection"] = connection
        command.upgrade(config, "head")


@functools.cache
def head_revisions() -> tuple[str, ...]:
    """The newest revision of the migrations shipped with the code (one, unless they branch): the
    revision of a database that is up to date."""
    from alembic.script import ScriptDirectory

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    return tuple(sorted(ScriptDirectory.from_config(config).get_heads()))


def stored_revisions(session: Session) -> tuple[str, ...]:
    """The revisions the database's schema is at, from Alembic's table (raises if there is none)."""
    return tuple(
        sorted(str(row) for row in session.execute(text("SELECT version_num FROM alembic_version")).scalars())
    )


def open_database(url: str) -> sessionmaker[Session]:
    """An engine on ``url`` with the schema migrated; returns the session factory."""
    try:
        database = sqlite_path(url)
        if database is not None:
            hold_database(database)
        engine = create_db_engine(url)
        migrate(engine)
    except DatabaseError:
        raise
    except Exception as exc:  # the driver's own errors: unreachable server, bad file …
        raise DatabaseError(f"cannot open the database {make_url(url).render_as_string()}: {exc}") from exc
    return sessionmaker(engine, expire_on_commit=False)
