"""``coloretto backup`` and ``coloretto restore`` on SQLite: a backup taken while a real server plays
holds every move stored before it began and is a consistent snapshot; a restore refuses while the
server runs, keeps what it replaces, and the server starts on what it put back. Every bad input is
one line and exit status 2, and changes nothing. (PostgreSQL: tests/test_backup_postgresql.py.)"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest
from alembic.script import ScriptDirectory

from coloretto.cli import main
from coloretto.web.storage.db import (
    DATABASE_FILE,
    MIGRATIONS,
    DatabaseError,
    create_db_engine,
    exclusive_database_lock,
    migrate,
    open_database,
)
from tests.servers import Servers
from tests.test_web_migration import insert_game, played, upgrade

HEAD = ScriptDirectory(str(MIGRATIONS)).get_current_head()
REPOSITORY = Path(__file__).resolve().parents[1]


# ---------------------------------------------------------------------------- helpers


def coloretto_database(data_dir: Path, games: int = 2, revision: str = "head") -> Path:
    """A data directory's database of coloretto, at ``revision``, holding ``games`` finished games
    (made without a server: no process keeps it open)."""
    data_dir.mkdir(parents=True, exist_ok=True)
    database = data_dir / DATABASE_FILE
    engine = create_db_engine(f"sqlite:///{database}")
    if revision == "head":
        migrate(engine)
    else:
        upgrade(engine, revision)
    with engine.begin() as connection:
        for number in range(games):
            moves, result = played(seed=number + 1, players=2)
            seats = [("human", "Ann", f"token-{number}"), ("random", None, None)]
            insert_game(
                connection, f"game{number}", "finished", seats, moves, result, number, datetime.now(UTC)
            )
    engine.dispose()
    return database


def rows(database: Path) -> dict[str, list[str]]:
    """Every game's moves in order, read from the SQLite file."""
    with sqlite3.connect(f"{database.as_uri()}?mode=ro", uri=True) as connection:
        found: dict[str, list[str]] = {
            str(game): [] for (game,) in connection.execute("SELECT id FROM games ORDER BY id")
        }
        for game, move in connection.execute("SELECT game_id, move FROM moves ORDER BY game_id, number"):
            found[str(game)].append(str(move))
    return found


def cli(argv: Sequence[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def refused(argv: Sequence[str], capsys: pytest.CaptureFixture[str]) -> str:
    """The one line a refused command prints (exit status 2, no traceback, nothing on stdout)."""
    code, out, err = cli(argv, capsys)
    assert code == 2, (out, err)
    assert out == ""
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


def files_in(folder: Path) -> set[str]:
    return {path.name for path in folder.iterdir()}


def run_command(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """``coloretto ARGS`` in a process of its own (as an operator runs it beside the server)."""
    env = dict(
        os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(REPOSITORY), os.environ.get("PYTHONPATH")]))
    )
    return subprocess.run(
        [sys.executable, "-m", "coloretto", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
        check=False,
    )


@pytest.fixture
def open_folder() -> Iterator[Path]:
    """A folder anybody may enter (pytest's own are root's alone): for a command run as nobody."""
    folder = Path(tempfile.mkdtemp(prefix="coloretto-backup-test-"))
    folder.chmod(0o755)
    try:
        yield folder
    finally:
        for path in sorted(folder.rglob("*"), reverse=True):
            path.chmod(0o700)
        subprocess.run(["rm", "-rf", str(folder)], check=True)


def as_unprivileged(argv: Sequence[str]) -> tuple[int, str]:
    """``coloretto ARGV`` as a user who is not root (root writes in any folder): in a fork of this
    process, turned into nobody when the tests run as root. Its exit status and stderr."""
    # imported before the fork: nobody cannot read the files of root's Python
    import coloretto.commands.backup
    import coloretto.web.storage.backup  # noqa: F401

    read, write = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - the child's exit status is what is checked
        code = 99
        try:
            os.close(read)
            sys.stderr = os.fdopen(write, "w")
            if os.geteuid() == 0:
                os.setgid(65534)
                os.setuid(65534)
            code = main(list(argv))
            sys.stderr.flush()
        finally:
            os._exit(code)
    os.close(write)
    with os.fdopen(read) as err:
        said = err.read()
    _, status = os.waitpid(child, 0)
    return os.waitstatus_to_exitcode(status), said


# ---------------------------------------------------------------------------- backup


def test_a_backup_is_a_whole_checked_copy_in_one_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "data"
    database = coloretto_database(data, games=3)
    target = tmp_path / "backups" / "site.sqlite3"
    target.parent.mkdir()
    code, out, err = cli(["backup", str(target), "--data-dir", str(data)], capsys)
    assert code == 0, err
    assert f"to {target}: 3 games" in out and f"migration {HEAD}" in out
    assert rows(target) == rows(database)
    assert files_in(target.parent) == {"site.sqlite3"}  # one file: no partial file, no log beside it
    with sqlite3.connect(target) as connection:
        assert connection.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
    # an older backup under the same name is replaced
    coloretto_database(tmp_path / "more", games=1)
    code, _, err = cli(
        ["backup", str(target), "--database-url", f"sqlite:///{tmp_path / 'more' / DATABASE_FILE}"], capsys
    )
    assert code == 0, err
    assert list(rows(target)) == ["game0"]


def test_backup_refuses_what_it_cannot_copy_and_leaves_no_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "data"
    coloretto_database(data)
    out = tmp_path / "out"
    out.mkdir()
    backup = str(out / "b.sqlite3")
    assert refused(["backup", backup, "--data-dir", str(tmp_path / "empty")], capsys) == (
        f"coloretto backup: error: there is no database at {tmp_path / 'empty' / DATABASE_FILE}: "
        "give the server's --data-dir or --database-url"
    )
    said = refused(["backup", backup, "--database-url", "postgresql://u:pw@127.0.0.1/coloretto"], capsys)
    assert "pg_dump -Fc" in said
    assert "needs an SQLite file" in refused(["backup", backup, "--database-url", "sqlite://"], capsys)
    assert "SQLite (sqlite:///path) only, not mysql://" in refused(
        ["backup", backup, "--database-url", "mysql://u@127.0.0.1/x"], capsys
    )
    assert "is not a database URL" in refused(["backup", backup, "--database-url", "no url"], capsys)
    text_file = tmp_path / "notes.txt"
    text_file.write_text("not a database\n")
    assert refused(["backup", backup, "--database-url", f"sqlite:///{text_file}"], capsys).endswith(
        f"the database {text_file} is not an SQLite database"
    )
    assert f"{out} is a folder" in refused(["backup", str(out), "--data-dir", str(data)], capsys)
    assert "does not exist" in refused(
        ["backup", str(tmp_path / "no" / "b"), "--data-dir", str(data)], capsys
    )
    assert "is the database itself" in refused(
        ["backup", str(data / DATABASE_FILE), "--data-dir", str(data)], capsys
    )
    precious = out / "precious.txt"
    precious.write_text("someone's notes\n")
    assert "exists and is not an SQLite database: choose another name" in refused(
        ["backup", str(precious), "--data-dir", str(data)], capsys
    )
    assert precious.read_text() == "someone's notes\n"
    assert files_in(out) == {"precious.txt"}
    assert "expected one argument" in "".join(_argparse_error(["backup", backup, "--data-dir"], capsys))


def _argparse_error(argv: Sequence[str], capsys: pytest.CaptureFixture[str]) -> list[str]:
    with pytest.raises(SystemExit) as stopped:
        main(list(argv))
    assert stopped.value.code == 2
    return capsys.readouterr().err.strip().splitlines()[-1:]


def test_a_failed_backup_leaves_the_older_backup_under_its_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = coloretto_database(tmp_path / "good", games=2)
    target = tmp_path / "site.sqlite3"
    assert cli(["backup", str(target), "--data-dir", str(tmp_path / "good")], capsys)[0] == 0
    before = target.read_bytes()
    # an SQLite database that is not coloretto's: copied to a temporary file, found wrong there
    stranger = tmp_path / "stranger.sqlite3"
    with sqlite3.connect(stranger) as connection:
        connection.execute("CREATE TABLE notes (line TEXT)")
    said = refused(["backup", str(target), "--database-url", f"sqlite:///{stranger}"], capsys)
    assert said.endswith("is an SQLite database but not coloretto's (no table alembic_version)")
    assert target.read_bytes() == before
    assert files_in(tmp_path) == {"good", "site.sqlite3", "stranger.sqlite3"}  # no partial file left
    assert rows(target) == rows(good)


def test_backup_into_a_folder_it_cannot_write_is_one_line(open_folder: Path) -> None:
    data = open_folder / "data"
    database = coloretto_database(data)
    data.chmod(0o755)
    database.chmod(0o644)
    locked = open_folder / "locked"
    locked.mkdir(mode=0o555)
    locked.chmod(0o555)
    code, err = as_unprivileged(["backup", str(locked / "b.sqlite3"), "--data-dir", str(data)])
    assert code == 2
    assert err.strip() == f"coloretto backup: error: cannot write in the folder {locked} (permission denied)"
    assert files_in(locked) == set()


# ---------------------------------------------------------------------------- restore


def test_restore_puts_a_backup_in_place_and_keeps_the_database_it_replaced(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    backup = tmp_path / "backup.sqlite3"
    coloretto_database(tmp_path / "then", games=3)
    assert cli(["backup", str(backup), "--data-dir", str(tmp_path / "then")], capsys)[0] == 0
    data = tmp_path / "data"
    database = coloretto_database(data, games=1)
    replaced = rows(database)
    code, out, err = cli(["restore", str(backup), "--data-dir", str(data)], capsys)
    assert code == 0, err
    lines = out.strip().splitlines()
    assert lines[0] == (
        f"restored {backup} into {database}: 3 games, {sum(len(m) for m in rows(backup).values()):,} moves, "
        f"migration {HEAD} (a server migrates an older one when it starts)"
    )
    kept = Path(lines[1].removeprefix("the database it replaced is kept as "))
    assert kept.parent == data and kept.name.startswith(f"{DATABASE_FILE}.replaced-")
    assert rows(database) == rows(backup)
    assert rows(kept) == replaced
    # a second restore at once keeps the first one's database under another name
    code, out, _ = cli(["restore", str(backup), "--data-dir", str(data)], capsys)
    assert code == 0
    second = Path(out.strip().splitlines()[1].removeprefix("the database it replaced is kept as "))
    assert second != kept and rows(second) == rows(backup) and rows(kept) == replaced
    # onto a new machine: the data directory is made, nothing is kept
    fresh = tmp_path / "new" / "data"
    code, out, _ = cli(["restore", str(backup), "--database-url", f"sqlite:///{fresh / 'site.db'}"], capsys)
    assert code == 0 and "kept as" not in out
    assert rows(fresh / "site.db") == rows(backup)


def test_restore_folds_in_the_log_a_killed_server_left(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A server killed leaves its write-ahead log beside the database, holding the last commits:
    the database kept is whole, and no log is left to be read as the restored database's."""
    data = tmp_path / "data"
    database = coloretto_database(data, games=1)
    backup = tmp_path / "backup.sqlite3"
    assert cli(["backup", str(backup), "--data-dir", str(data)], capsys)[0] == 0
    script = f"""
import os, sqlite3
connection = sqlite3.connect({str(database)!r})
connection.execute("PRAGMA journal_mode=WAL")
connection.execute("PRAGMA wal_autocheckpoint=0")
connection.execute("UPDATE games SET name = 'renamed after the backup'")
connection.commit()
os._exit(0)  # as a kill: no checkpoint, the log stays
"""
    subprocess.run([sys.executable, "-c", script], check=True, timeout=60)
    assert (data / f"{DATABASE_FILE}-wal").stat().st_size > 0
    code, out, err = cli(["restore", str(backup), "--data-dir", str(data)], capsys)
    assert code == 0, err
    kept = Path(out.strip().splitlines()[1].removeprefix("the database it replaced is kept as "))
    assert not (data / f"{DATABASE_FILE}-wal").exists()
    with sqlite3.connect(f"{kept.as_uri()}?mode=ro", uri=True) as connection:
        assert connection.execute("SELECT name FROM games").fetchone()[0] == "renamed after the backup"
    with sqlite3.connect(f"{database.as_uri()}?mode=ro", uri=True) as connection:
        assert connection.execute("SELECT name FROM games").fetchone()[0] == "old finished"


def test_an_older_backup_is_restored_and_migrated_when_the_server_opens_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old = coloretto_database(tmp_path / "old", games=1, revision="0003")
    data = tmp_path / "data"
    code, out, err = cli(["restore", str(old), "--data-dir", str(data)], capsys)
    assert code == 0, err
    assert "migration 0003" in out
    open_database(f"sqlite:///{data / DATABASE_FILE}")  # what the server does first
    with sqlite3.connect(data / DATABASE_FILE) as connection:
        assert connection.execute("SELECT version_num FROM alembic_version").fetchone()[0] == HEAD
    assert rows(data / DATABASE_FILE) == rows(old)


def damaged_copy(source: Path, target: Path) -> Path:
    """``source`` with the first page of its moves table overwritten."""
    data = bytearray(source.read_bytes())
    page = int.from_bytes(data[16:18], "big")
    with sqlite3.connect(source) as connection:
        root = connection.execute("SELECT rootpage FROM sqlite_master WHERE name = 'moves'").fetchone()[0]
    start = (root - 1) * page
    data[start : start + page] = b"\xff" * page
    target.write_bytes(bytes(data))
    return target


def test_restore_refuses_every_bad_backup_and_changes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "data"
    database = coloretto_database(data, games=1)
    before = database.read_bytes()
    where = ["--data-dir", str(data)]
    missing = tmp_path / "missing.sqlite3"
    assert refused(["restore", str(missing), *where], capsys) == (
        f"coloretto restore: error: the backup {missing} does not exist"
    )
    assert refused(["restore", str(tmp_path), *where], capsys).endswith(
        f"the backup {tmp_path} is not a file"
    )
    text_file = tmp_path / "notes.txt"
    text_file.write_text("SQLite? no.\n")
    assert refused(["restore", str(text_file), *where], capsys).endswith("is not an SQLite database")
    stranger = tmp_path / "stranger.sqlite3"
    with sqlite3.connect(stranger) as connection:
        connection.execute("CREATE TABLE notes (line TEXT)")
    assert "is an SQLite database but not coloretto's (no table alembic_version)" in refused(
        ["restore", str(stranger), *where], capsys
    )
    newer = coloretto_database(tmp_path / "newer", games=1)
    with sqlite3.connect(newer) as connection:
        connection.execute("UPDATE alembic_version SET version_num = '9999_from_the_future'")
    said = refused(["restore", str(newer), *where], capsys)
    assert "migration revision '9999_from_the_future', which coloretto" in said
    assert said.endswith(
        "does not know: it was made by a newer coloretto (install that version to restore it)"
    )
    damaged = damaged_copy(coloretto_database(tmp_path / "good", games=3), tmp_path / "damaged.sqlite3")
    assert " is damaged" in refused(["restore", str(damaged), *where], capsys)
    assert "is the database itself" in refused(["restore", str(database), *where], capsys)
    assert "pg_restore --clean --if-exists" in refused(
        ["restore", str(newer), "--database-url", "postgresql://u@127.0.0.1/db"], capsys
    )
    folder_database = tmp_path / "odd"
    (folder_database / DATABASE_FILE).mkdir(parents=True)
    assert "is not a file" in refused(["restore", str(newer), "--data-dir", str(folder_database)], capsys)
    assert database.read_bytes() == before
    assert files_in(data) == {DATABASE_FILE}


def test_restore_into_a_folder_it_cannot_write_is_one_line(open_folder: Path) -> None:
    backup = coloretto_database(open_folder / "then", games=1)
    backup.chmod(0o644)
    (open_folder / "then").chmod(0o755)
    data = open_folder / "data"
    database = coloretto_database(data, games=2)
    database.chmod(0o644)
    data.chmod(0o555)
    code, err = as_unprivileged(["restore", str(backup), "--data-dir", str(data)])
    assert code == 2
    assert err.strip() == f"coloretto restore: error: cannot write in the folder {data} (permission denied)"
    assert files_in(data) == {DATABASE_FILE}


def test_no_server_opens_a_database_while_it_is_being_restored(tmp_path: Path) -> None:
    data = tmp_path / "data"
    database = coloretto_database(data)
    with exclusive_database_lock(database):
        with pytest.raises(DatabaseError, match="is being restored \\(coloretto restore\\): start again"):
            open_database(f"sqlite:///{database}")
        started = run_command("serve", "--port", "0", "--data-dir", str(data), timeout=180)
    assert started.returncode == 2
    assert started.stderr.strip().endswith(
        "is being restored (coloretto restore): start again once it is done"
    )


# ---------------------------------------------------------------------------- with a real server


def stored(database: Path) -> dict[str, list[str]]:
    """The moves stored now in a live database (read as another reader of it)."""
    with sqlite3.connect(f"{database.as_uri()}?mode=ro", uri=True, timeout=10) as connection:
        found: dict[str, list[str]] = {}
        for game, move in connection.execute("SELECT game_id, move FROM moves ORDER BY game_id, number"):
            found.setdefault(str(game), []).append(str(move))
    return found


def wait_until(condition: object, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():  # type: ignore[operator]
            return
        time.sleep(0.05)  # polling the database another process writes
    raise AssertionError("timed out")


@pytest.mark.slow
def test_a_backup_during_play_restores_and_the_server_carries_on_from_it(
    tmp_path: Path, servers: Servers
) -> None:
    server = servers.one(tmp_path, bot_delay=0.15)
    database = tmp_path / DATABASE_FILE
    body = {"name": "bots", "seats": [{"kind": "bot", "bot": "random"}, {"kind": "bot", "bot": "greedy"}]}
    with httpx.Client(base_url=server.url, timeout=30) as http:
        games = [http.post("/api/games", json=body).json()["game"]["id"] for _ in range(4)]
        wait_until(lambda: all(len(stored(database).get(g, [])) >= 5 for g in games))
        before = stored(database)  # every move stored (so acknowledged) before the backup begins
        backup = tmp_path / "backup.sqlite3"
        result = run_command("backup", str(backup), "--data-dir", str(tmp_path))
        assert result.returncode == 0, result.stderr
        copied = rows(backup)
        for game in games:
            assert copied[game][: len(before[game])] == before[game]
        # one snapshot: every game's move count agrees with its moves, and the server went on after
        with sqlite3.connect(backup) as connection:
            counts = dict(connection.execute("SELECT id, move_count FROM games").fetchall())
        assert counts == {game: len(moves) for game, moves in copied.items()}
        wait_until(lambda: any(len(stored(database)[g]) > len(copied[g]) for g in games))
        # the server holds the database: the restore is refused, and nothing changes
        while_running = run_command("restore", str(backup), "--data-dir", str(tmp_path))
        assert while_running.returncode == 2
        assert while_running.stderr.strip() == (
            f"coloretto restore: error: a coloretto server (or another coloretto command) is using "
            f"{database}: stop it, then restore"
        )
    server.stop()
    restored = run_command("restore", str(backup), "--data-dir", str(tmp_path))
    assert restored.returncode == 0, restored.stderr
    kept = Path(restored.stdout.strip().splitlines()[1].removeprefix("the database it replaced is kept as "))
    assert all(len(stored(kept)[g]) >= len(copied[g]) for g in games)
    again = servers.one(tmp_path, bot_delay=0.15)
    with httpx.Client(base_url=again.url, timeout=30) as http:
        for game in games:
            state = http.get(f"/api/games/{game}").json()  # its bots may have moved on already
            assert [entry["move"] for entry in state["log"]][: len(copied[game])] == copied[game]
            assert state["move_number"] >= len(copied[game])
        # its games carry on from the backup's moves
        wait_until(
            lambda: any(len(stored(database)[g]) > len(copied[g]) for g in games if g in stored(database))
        )
        for game in games:
            assert stored(database)[game][: len(copied[game])] == copied[game]
