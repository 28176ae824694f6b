"""PostgreSQL's own programs (``pg_dump``, ``pg_restore``), found as an operator's shell finds them,
and the database URL they take."""

from __future__ import annotations

import shutil
from pathlib import Path

#: where Debian's and Ubuntu's postgresql packages put each version's programs
DEBIAN_PREFIX = Path("/usr/lib/postgresql")


class PostgresToolMissing(Exception):
    """A PostgreSQL program that is not installed: the message says how to get it."""


def pg_binary(name: str) -> str:
    """The path of PostgreSQL's program ``name``: on ``PATH``, else in the newest version's folder of
    Debian's packages (``/usr/lib/postgresql/15/bin``)."""
    found = shutil.which(name)
    if found:
        return found
    versions = sorted(
        (folder for folder in DEBIAN_PREFIX.glob("*/bin") if folder.parent.name.isdigit()),
        key=lambda folder: int(folder.parent.name),
    )
    for folder in reversed(versions):
        program = folder / name
        if program.is_file():
            return str(program)
    raise PostgresToolMissing(
        f"{name} is not installed: install PostgreSQL's client programs "
        "(Debian/Ubuntu: apt-get install postgresql-client)"
    )


def libpq_url(url: str) -> str:
    """A SQLAlchemy URL of PostgreSQL as libpq (``pg_dump``, ``psql``) takes it: no ``+driver``."""
    from sqlalchemy.engine import make_url

    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)
