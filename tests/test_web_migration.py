"""The schema's migrations: a database at 0003 holding games (finished, waiting, in play) is brought
to the newest revision by the server's start, on SQLite and on PostgreSQL, and its games carry on
with everything the new revision brings (joining, chat, rematch)."""

from __future__ import annotations

import json
import os
import random
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from alembic import command
from alembic.config import Config
from sqlalchemy import Engine, MetaData, text

from coloretto.match import Match
from coloretto.rules import Rules
from coloretto.web import create_app
from coloretto.web.storage.db import MIGRATIONS, create_db_engine
from coloretto.web.table.live import hash_token
from tests.test_web import FAST, TestClient, auth

POSTGRESQL = os.environ.get("COLORETTO_TEST_POSTGRESQL")
#: the newest revision: what a server's start brings every database to
HEAD = "0005"


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'old.sqlite3'}"
    if not POSTGRESQL:
        pytest.skip("set COLORETTO_TEST_POSTGRESQL=postgresql://… to migrate PostgreSQL too")
    return POSTGRESQL


def emptied(url: str) -> Engine:
    """The database with no table at all (a shared PostgreSQL keeps earlier tests' tables)."""
    engine = create_db_engine(url)
    found = MetaData()
    found.reflect(engine)
    with engine.begin() as connection:
        for table in found.sorted_tables:
            connection.execute(text(f'DROP TABLE IF EXISTS "{table.name}" CASCADE'))
    return engine


def upgrade(engine: Engine, revision: str) -> None:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, revision)


def insert_game(
    connection: Any,
    game_id: str,
    status: str,
    seats: list[tuple[str, str | None, str | None]],
    moves: list[tuple[int, int, str]],
    result: dict | None,
    seed: int,
    at: datetime,
) -> None:
    rules = Rules(players=len(seats)).to_dict()
    connection.execute(
        text(
            "INSERT INTO games (id, name, status, rules, seed, move_count, result, created_at, updated_at) "
            "VALUES (:id, :name, :status, :rules, :seed, :moves, :result, :at, :at)"
        ),
        {
            "id": game_id, "name": f"old {status}", "status": status, "rules": json.dumps(rules),
            "seed": seed, "moves": len(moves), "result": json.dumps(result) if result else None, "at": at,
        },
    )  # fmt: skip
    for seat, (kind, name, token) in enumerate(seats):
        connection.execute(
            text(
                "INSERT INTO seats (game_id, seat, kind, bot, name, token_hash, joined_at) "
                "VALUES (:game, :seat, :kind, :bot, :name, :token, :at)"
            ),
            {
                "game": game_id, "seat": seat, "kind": "human" if kind == "human" else "bot",
                "bot": None if kind == "human" else kind, "name": name,
                "token": hash_token(token) if token else None, "at": at if name else None,
            },
        )  # fmt: skip
    for number, (deal, seat, move) in enumerate(moves, start=1):
        connection.execute(
            text(
                "INSERT INTO moves (game_id, number, deal, seat, move, created_at) "
                "VALUES (:game, :number, :deal, :seat, :move, :at)"
            ),
            {"game": game_id, "number": number, "deal": deal, "seat": seat, "move": move, "at": at},
        )


def played(seed: int, players: int) -> tuple[list[tuple[int, int, str]], dict[str, Any]]:
    """A whole match played at random, as the server stores its moves, and its result."""
    rules = Rules(players=players)
    match = Match(rules, seed)
    rng = random.Random(seed)
    moves = []
    while not match.is_over:
        game = match.game
        seat = game.to_move
        assert seat is not None
        deal = match.game_number
        moves.append((deal, seat, match.push(rng.choice(game.legal_actions)).notation(rules.edition)))
        if match.game.is_over and not match.is_over:
            match.next_game()
    return moves, match.result()


def test_a_database_at_0003_with_games_is_migrated_and_its_games_carry_on(url: str) -> None:
    engine = emptied(url)
    upgrade(engine, "0003")
    moves, result = played(seed=11, players=2)
    at = datetime.now(UTC)  # the waiting game was made just now: it has not expired
    with engine.begin() as connection:
        insert_game(
            connection,
            "oldfinished",
            "finished",
            [("human", "Ann", "ann-token"), ("random", None, None)],
            moves,
            result,
            11,
            at,
        )
        insert_game(
            connection,
            "oldopen",
            "open",
            [("human", "Bob", "bob-token"), ("human", None, None)],
            [],
            None,
            12,
            at,
        )
        connection.execute(
            text(
                "INSERT INTO reviews (game_id, deal, budget, status, done, total, data, updated_at) "
                "VALUES ('oldfinished', 1, 5, 'done', 1, 1, :data, :at)"
            ),
            {"data": json.dumps({"summary": [{"seat": 0, "accuracy": 90.0}]}), "at": at},
        )
    engine.dispose()
    with TestClient(create_app(url, FAST)) as client:  # the start migrates
        with create_db_engine(url).connect() as connection:
            assert connection.execute(text("SELECT version_num FROM alembic_version")).scalar() == HEAD
        old = client.get("/api/games/oldfinished").json()
        assert old["game"]["status"] == "finished" and old["move_number"] == len(moves)
        assert old["match"]["totals"] == result["totals"]
        assert not old["game"]["rated"] and not old["game"]["private"] and old["game"]["rematch"] is None
        assert [s["resigned"] for s in old["game"]["seats"]] == [False, False]
        assert client.get("/api/games/oldfinished/record").status_code == 200
        listed = {g["id"] for g in client.get("/api/games").json()["games"]}
        assert {"oldfinished", "oldopen"} <= listed
        # the old games take the new revision's features: a seat, the chat, a rematch
        joined = client.post("/api/games/oldopen/join", json={"name": "Cy"})
        assert joined.status_code == 200 and joined.json()["game"]["status"] == "playing"
        with client.websocket_connect("/api/games/oldopen/ws") as ws:
            ws.send_json({"type": "hello", "token": "bob-token"})
            ws.send_json({"type": "chat", "text": "still here"})
            while (message := ws.receive_json())["type"] != "chat":
                pass
            assert message["messages"][0]["text"] == "still here"
        rematch = client.post("/api/games/oldfinished/rematch", headers=auth("ann-token"))
        assert rematch.status_code == 200, rematch.text
        assert rematch.json()["game"]["rematch_of"] == "oldfinished"
