"""PostgreSQL's backup as docs/operator/backup.md documents it, against a real PostgreSQL
(``COLORETTO_TEST_POSTGRESQL``; without it these tests are skipped, and under CI they fail).

The commands run are the page's own lines, read from it and run by bash as written, with
``DATABASE_URL`` set as the page says: its ``pg_dump`` line, run while a server plays, holds every
move acknowledged before it began (a state a client was shown, an HTTP action answered); its
``pg_restore`` line puts the dump back over a database that played on after it and into an empty
one, leaving exactly what the dump held; and a server started there serves every game and move of
the dump and carries the games on, a person's seat token included. ``coloretto backup`` and
``coloretto restore`` refuse a PostgreSQL URL with one line naming the tool to use, and change
nothing. ``coloretto loadtest --backup`` takes its ``pg_dump`` under load and misses no move.

CI has one database: each test empties it first (as the cluster tests do), and "an empty
database" is that one with every table dropped, which is what ``createdb`` gives on a new machine.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import Engine, MetaData, inspect, text

from coloretto.cli import main
from coloretto.tools.loadtest.backup import moves_in_pg_dump
from coloretto.tools.postgres import libpq_url, pg_binary
from coloretto.web.storage.db import migrate
from tests.servers import Servers, database_engine, require_postgresql, reset_database
from tests.test_web_migration import insert_game, played

REPOSITORY = Path(__file__).resolve().parents[1]
PAGE = REPOSITORY / "docs" / "operator" / "backup.md"
#: the page's lines these tests run, each found by how it begins
DUMP, RESTORE, LIST = "pg_dump ", "pg_restore --clean", "pg_restore --list"
#: the file the page's commands write and read, in the folder they run in
DUMP_FILE = "coloretto.dump"
BOT_GAME = {"name": "bots", "seats": [{"kind": "bot", "bot": bot} for bot in ("random", "random", "greedy")]}
PERSON_GAME = {"creator_name": "Ann", "seats": [{"kind": "human"}, {"kind": "bot", "bot": "random"}]}


# ---------------------------------------------------------------------------- helpers


@pytest.fixture
def database() -> Iterator[Engine]:
    """The test database (``COLORETTO_TEST_POSTGRESQL``), emptied."""
    engine = database_engine(require_postgresql())
    reset_database(engine)
    try:
        yield engine
    finally:
        engine.dispose()


def documented(prefix: str) -> str:
    """The one shell line of docs/operator/backup.md that begins with ``prefix``, as written."""
    blocks = re.findall(r"^```bash\n(.*?)^```$", PAGE.read_text("utf-8"), re.MULTILINE | re.DOTALL)
    lines = [line.strip() for block in blocks for line in block.splitlines()]
    found = [line for line in lines if line.startswith(prefix)]
    assert len(found) == 1, f"docs/operator/backup.md should show one line beginning {prefix!r}: {found}"
    return found[0]


def run_documented(prefix: str, folder: Path, database_url: str) -> subprocess.CompletedProcess[str]:
    """The page's line run by bash in ``folder``, ``DATABASE_URL`` the servers' database as libpq
    takes it (PostgreSQL's programs where a shell finds them, else where Debian puts them)."""
    programs = str(Path(pg_binary("pg_dump")).parent)
    env = dict(
        os.environ,
        DATABASE_URL=libpq_url(database_url),
        PATH=os.pathsep.join(filter(None, [os.environ.get("PATH"), programs])),
    )
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", documented(prefix)],
        cwd=folder, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, f"{documented(prefix)}\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
    return done


def wait_until(condition: Callable[[], bool], timeout: float = 90.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.05)  # polling a server that plays on its own: no event to wait on
    raise AssertionError("timed out")


def stored(engine: Engine) -> dict[str, list[str]]:
    """Every game in the database and its moves in order."""
    with engine.connect() as connection:
        games: dict[str, list[str]] = {
            str(game): [] for (game,) in connection.execute(text("SELECT id FROM games"))
        }
        ordered = text("SELECT game_id, move FROM moves ORDER BY game_id, number")
        for game, move in connection.execute(ordered):
            games[str(game)].append(str(move))
    return games


def move_counts(engine: Engine) -> dict[str, int]:
    with engine.connect() as connection:
        counts = connection.execute(text("SELECT id, move_count FROM games"))
        return {str(game): int(count) for game, count in counts}


def row_counts(engine: Engine) -> dict[str, int]:
    """The rows of every table in the database."""
    found = MetaData()
    found.reflect(engine)
    with engine.connect() as connection:
        return {
            table.name: int(connection.execute(text(f'SELECT count(*) FROM "{table.name}"')).scalar_one())
            for table in found.sorted_tables
        }


def rows_in_dump(dump: Path) -> dict[str, int]:
    """The rows of every table in a ``pg_dump -Fc`` file, read by ``pg_restore`` (no database)."""
    done = subprocess.run(
        [pg_binary("pg_restore"), "--data-only", "--file", "-", str(dump)],
        capture_output=True, text=True, timeout=300, check=True,
    )  # fmt: skip
    counts: dict[str, int] = {}
    table: str | None = None
    for line in done.stdout.splitlines():
        if table is None:
            copy = re.match(r"COPY (?:public\.)?\"?(\w+)\"? \(", line)
            if copy:
                table = copy.group(1)
                counts[table] = 0
        elif line == "\\.":
            table = None
        else:
            counts[table] += 1
    return counts


def dumped_moves(dump: Path, games: list[str]) -> dict[str, list[str]]:
    """Each game's moves in the dump, in order; the numbers must run 1, 2, 3 … with no gap."""
    found = moves_in_pg_dump(dump, games)
    for game, moves in found.items():
        assert sorted(moves) == list(range(1, len(moves) + 1)), (game, sorted(moves))
    return {game: [moves[number] for number in sorted(moves)] for game, moves in found.items()}


def log(http: httpx.Client, game: str, token: str | None = None) -> list[str]:
    """The moves a client is shown of ``game`` (with a seat's token: as its player)."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    answer = http.get(f"/api/games/{game}", headers=headers)
    assert answer.status_code == 200, answer.text
    return [str(entry["move"]) for entry in answer.json()["log"]]


def choose(state: dict[str, Any]) -> str:
    """A legal action that makes the game move on: a take of two or more cards, else a draw."""
    legal = state["legal"]
    takes = [a for a in legal if a.startswith("t") and len(state["rows"][int(a[1:]) - 1]["cards"]) >= 2]
    return (takes or ([] if "d" in legal else legal) or ["d"])[0]


def turn_of(http: httpx.Client, game: str, token: str) -> dict[str, Any]:
    """The game as its person sees it, once it is their turn."""
    state: dict[str, Any] = {}

    def my_turn() -> bool:
        nonlocal state
        state = http.get(f"/api/games/{game}", headers={"Authorization": f"Bearer {token}"}).json()
        assert state["game"]["status"] == "playing", state["game"]
        return bool(state["legal"])

    wait_until(my_turn)
    return state


def play(http: httpx.Client, game: str, token: str) -> list[str]:
    """One move of the person, when it is their turn: the log its answer acknowledged."""
    state = turn_of(http, game, token)
    answer = http.post(
        f"/api/games/{game}/actions",
        json={"action": choose(state), "move": state["move_number"]},
        headers={"Authorization": f"Bearer {token}"},
    )
    assert answer.status_code == 200, answer.text
    return [str(entry["move"]) for entry in answer.json()["log"]]


def assert_is_the_dump(engine: Engine, moves: dict[str, list[str]], rows: dict[str, int]) -> None:
    """The database holds exactly what the dump did: its games, their moves, every table's rows,
    and each game's move count agreeing with its moves (a snapshot, not a mix of two moments)."""
    assert stored(engine) == moves
    assert row_counts(engine) == rows
    assert move_counts(engine) == {game: len(game_moves) for game, game_moves in moves.items()}


# ---------------------------------------------------------------------------- the procedure


@pytest.mark.slow
def test_a_dump_taken_during_play_restores_every_acknowledged_move_and_a_server_carries_on(
    tmp_path: Path, servers: Servers, database: Engine
) -> None:
    url = require_postgresql()
    server = servers.one(tmp_path / "before", database_url=url, bot_delay=0.1)
    with httpx.Client(base_url=server.url, timeout=30) as http:
        bot_games = [http.post("/api/games", json=BOT_GAME).json()["game"]["id"] for _ in range(3)]
        created = http.post("/api/games", json=PERSON_GAME).json()
        person, token = created["game"]["id"], created["token"]
        answered: list[str] = []
        for _ in range(3):
            answered = play(http, person, token)  # each answer: the move is acknowledged
        wait_until(lambda: all(len(log(http, game)) >= 6 for game in bot_games))
        games = [*bot_games, person]
        # what the clients were shown before the dump began: acknowledged, so committed
        shown = {game: log(http, game) for game in games}
        assert shown[person][: len(answered)] == answered
        run_documented(DUMP, tmp_path, url)  # the bots play on meanwhile
        dump = tmp_path / DUMP_FILE
        in_dump = dumped_moves(dump, games)
        rows = rows_in_dump(dump)
        assert rows["games"] == len(games)
        for game in games:
            assert in_dump[game][: len(shown[game])] == shown[game], game
        # the server played on after the dump: the restore below puts the database back in time
        wait_until(lambda: any(len(log(http, game)) > len(in_dump[game]) for game in bot_games))
    listing = run_documented(LIST, tmp_path, url).stdout
    assert "TABLE DATA public moves" in listing and "TABLE DATA public games" in listing
    server.stop()

    # over the database that moved on (a site put back as it was) ...
    assert stored(database) != in_dump
    run_documented(RESTORE, tmp_path, url)
    assert_is_the_dump(database, in_dump, rows)
    # ... and into an empty database (a new machine), with the same line
    reset_database(database)
    assert inspect(database).get_table_names() == []
    run_documented(RESTORE, tmp_path, url)
    assert_is_the_dump(database, in_dump, rows)

    again = servers.one(tmp_path / "after", database_url=url, bot_delay=0.1)
    with httpx.Client(base_url=again.url, timeout=30) as http:
        listed = {game["id"] for game in http.get("/api/games", params={"status": "playing"}).json()["games"]}
        assert set(games) <= listed
        for game in games:
            assert log(http, game)[: len(in_dump[game])] == in_dump[game], game  # its bots may move on
        # the person's seat token works on the restored site: the game goes on from the dump
        after = play(http, person, token)
        assert after[: len(in_dump[person])] == in_dump[person] and len(after) > len(in_dump[person])
        wait_until(lambda: all(len(log(http, game)) > len(in_dump[game]) for game in bot_games))
        for game in games:
            assert stored(database)[game][: len(in_dump[game])] == in_dump[game]
    assert "Traceback" not in again.output, again.output_tail()


# ---------------------------------------------------------------------------- the refusals


def test_coloretto_backup_and_restore_refuse_postgresql_naming_the_tools_and_change_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], database: Engine
) -> None:
    url = require_postgresql()
    migrate(database)
    with database.begin() as connection:
        moves, result = played(seed=4, players=2)
        seats = [("human", "Ann", "token-a"), ("random", None, None)]
        insert_game(connection, "kept", "finished", seats, moves, result, 4, datetime.now(UTC))
    before = (stored(database), row_counts(database))
    out = tmp_path / "out"
    out.mkdir()

    assert main(["backup", str(out / "site.dump"), "--database-url", url]) == 2
    captured = capsys.readouterr()
    said = captured.err.strip()
    assert captured.out == "" and said.count("\n") == 0 and said.startswith("coloretto backup: error: ")
    assert "pg_dump -Fc --file=FILE DATABASE_URL" in said and "docs/operator/backup.md" in said
    assert list(out.iterdir()) == []

    dump = out / "site.dump"
    dump.write_bytes(b"PGDMP")  # refused by its URL, before the file is read
    for target in (url, libpq_url(url), url.replace("postgresql://", "postgresql+psycopg://", 1)):
        assert main(["restore", str(dump), "--database-url", target]) == 2
        captured = capsys.readouterr()
        said = captured.err.strip()
        assert captured.out == "" and said.count("\n") == 0 and said.startswith("coloretto restore: error: ")
        assert "pg_restore --clean --if-exists --single-transaction --dbname=DATABASE_URL FILE" in said
    assert list(out.iterdir()) == [dump]
    assert (stored(database), row_counts(database)) == before


# ---------------------------------------------------------------------------- under load


@pytest.mark.slow
def test_loadtest_takes_its_pg_dump_under_load_and_misses_no_acknowledged_move(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, database: Engine
) -> None:
    url = require_postgresql()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "servers"))
    (tmp_path / "servers").mkdir()
    dump, figures = tmp_path / "load.dump", tmp_path / "figures.json"
    args = ["--database-url", url, "--games", "4", "--bots", "2", "--bot-delay", "0.1", "--duration", "6"]
    code = main(["loadtest", *args, "--backup", str(dump), "--backup-after", "3", "--json", str(figures)])
    printed = capsys.readouterr().out
    report = json.loads(figures.read_text())
    assert report["errors"] == {}, printed
    assert code == 0
    backup = report["backup"]
    assert backup["kind"] == "pg_dump" and backup["file"] == str(dump)
    assert 3 <= backup["at_s"] < 6  # when it was asked for (a busy machine may start it late)
    assert backup["games"] >= 4 and backup["moves_acknowledged_before"] > 0
    assert backup["missing"] == 0 and backup["changed"] == 0
    assert backup["moves_in_backup_of_those_games"] >= backup["moves_acknowledged_before"]
    assert backup["size_bytes"] == dump.stat().st_size > 0
    assert "pg_dump -Fc" in printed and "0 missing in it" in printed
    # the dump is PostgreSQL's own: its moves are the database's as they stood then
    in_dump = rows_in_dump(dump)
    assert in_dump["moves"] >= backup["moves_acknowledged_before"]
    assert in_dump["moves"] <= row_counts(database)["moves"]
    assert list((tmp_path / "servers").iterdir()) == []  # the server's folder removed
