"""The table's chat, rematch and spectator count with two real ``coloretto serve`` processes on one
PostgreSQL database and one Redis: said, asked for or watched through one process, every watcher
on the other is told, and a client that connects there gets the chat's history.

Waits are for messages; the timeouts are hang guards (tests/test_cluster_serve.py's helpers)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from tests.servers import Servers
from tests.test_cluster_serve import (
    Player,
    Table,
    assert_no_tracebacks,
    create_game,
    database_url,
    http,
    join_game,
    run,
)

__all__ = ["database_url"]  # a fixture, used by name

#: each test starts two servers and a Redis: seconds
pytestmark = pytest.mark.slow


async def chat_of(table: Table, *, history: bool = False) -> list[dict[str, Any]]:
    while True:
        message = await table.receive()
        if message["type"] == "chat" and message["history"] is history:
            messages: list[dict[str, Any]] = message["messages"]
            return messages


async def message_of(table: Table, kind: str) -> dict[str, Any]:
    while True:
        message = await table.receive()
        if message["type"] == kind:
            return message


def test_chat_said_through_one_process_reaches_every_watcher_and_is_kept(
    database_url: str, tmp_path: Path, servers: Servers
) -> None:
    with servers.cluster(tmp_path, database_url, bot_delay=0.05) as cluster:
        a, b = cluster.servers
        created = create_game(a.url, ["human", "human"])
        game_id, ann = created["game"]["id"], created["token"]
        bob = join_game(b.url, game_id, "Bob")

        async def scenario() -> None:
            on_a = Player(await Table.open(a.ws_url, game_id), ann)
            on_b = Player(await Table.open(b.ws_url, game_id), bob)
            await on_a.hello()
            await on_b.hello()
            watcher = await Table.open(b.ws_url, game_id)
            await watcher.state_where(lambda s: True)
            text = "<b>gl</b> & hf"
            await on_a.table.send({"type": "chat", "text": text})
            for table in (on_a.table, on_b.table, watcher):
                (entry,) = await chat_of(table)
                assert (entry["number"], entry["seat"], entry["name"], entry["text"]) == (1, 0, "Ann", text)
            await on_b.table.send({"type": "chat", "text": "thanks"})
            (answer,) = await chat_of(on_a.table)
            assert (answer["number"], answer["seat"], answer["text"]) == (2, 1, "thanks")
            late = await Table.open(a.ws_url, game_id)  # a reload, on the other process
            assert [m["text"] for m in await chat_of(late, history=True)] == [text, "thanks"]
            for table in (on_a.table, on_b.table, watcher, late):
                await table.close()

        run(scenario())
        with http(b.url) as client:
            stored = client.get(f"/api/games/{game_id}/chat").json()["messages"]
        assert [(m["number"], m["text"]) for m in stored] == [(1, "<b>gl</b> & hf"), (2, "thanks")]
        assert_no_tracebacks(cluster)


def test_a_rematch_asked_through_one_process_is_told_to_watchers_on_the_other(
    database_url: str, tmp_path: Path, servers: Servers
) -> None:
    with servers.cluster(tmp_path, database_url, bot_delay=0.02) as cluster:
        a, b = cluster.servers
        created = create_game(a.url, ["human", "random"])
        game_id, token = created["game"]["id"], created["token"]

        async def scenario() -> None:
            watcher = await Table.open(b.ws_url, game_id)
            player = Player(await Table.open(a.ws_url, game_id), token)
            await player.hello()
            await player.play_until()
            await watcher.state_where(lambda s: s["game"]["status"] == "finished")
            with http(a.url) as client:
                asked = await asyncio.to_thread(
                    client.post, f"/api/games/{game_id}/rematch", headers={"Authorization": f"Bearer {token}"}
                )
            assert asked.status_code == 200, asked.text
            new_id = asked.json()["game"]["id"]
            assert await message_of(watcher, "rematch") == {"type": "rematch", "game": new_id}
            # asked again through the other process: the same game
            with http(b.url) as client:
                again = await asyncio.to_thread(
                    client.post, f"/api/games/{game_id}/rematch", headers={"Authorization": f"Bearer {token}"}
                )
            assert again.json()["game"]["id"] == new_id and again.json()["token"] is None
            for table in (watcher, player.table):
                await table.close()

        run(scenario())
        assert_no_tracebacks(cluster)


def test_spectators_are_counted_on_every_process(database_url: str, tmp_path: Path, servers: Servers) -> None:
    with servers.cluster(tmp_path, database_url, bot_delay=0.05) as cluster:
        a, b = cluster.servers
        game_id = create_game(a.url, ["human", "human"])["game"]["id"]

        async def scenario() -> None:
            first = await Table.open(a.ws_url, game_id)
            await first.state_where(lambda s: s["spectators"] == 1)
            second = await Table.open(b.ws_url, game_id)
            await first.state_where(lambda s: s["spectators"] == 2)
            await second.state_where(lambda s: s["spectators"] == 2)
            await second.close()
            await first.state_where(lambda s: s["spectators"] == 1)
            await first.close()

        run(scenario())
        assert_no_tracebacks(cluster)
