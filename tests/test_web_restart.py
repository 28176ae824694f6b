"""A real server process, killed with SIGKILL mid-game and started again: nothing is lost."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from coloretto.record import GameRecord
from tests.servers import Servers


def choose(current: dict[str, Any]) -> str:
    legal = current["legal"]
    takes = [a for a in legal if a.startswith("t") and len(current["rows"][int(a[1:]) - 1]["cards"]) >= 2]
    if takes or "d" not in legal:
        return (takes or legal)[0]
    return "d"


def wait_for(
    http: httpx.Client, game_id: str, token: str, done: Any, timeout: float = 30.0
) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        current = http.get(f"/api/games/{game_id}", headers={"Authorization": f"Bearer {token}"}).json()
        if done(current):
            return current
        time.sleep(0.02)
    raise AssertionError("timed out")


def my_turn_or_over(s: dict[str, Any]) -> bool:
    return bool(s["legal"]) or s["game"]["status"] == "finished"


def stored_moves(data_dir: Path, game_id: str) -> list[str]:
    with sqlite3.connect(data_dir / "coloretto.sqlite3") as db:
        rows = db.execute("SELECT move FROM moves WHERE game_id = ? ORDER BY number", (game_id,)).fetchall()
    return [r[0] for r in rows]


@pytest.mark.slow
def test_sigkill_mid_game_loses_nothing_and_bots_resume(tmp_path: Path, servers: Servers) -> None:
    server = servers.one(tmp_path, bot_delay=0.6)
    try:
        with httpx.Client(base_url=server.url, timeout=10) as http:
            created = http.post(
                "/api/games",
                json={
                    "creator_name": "Ann",
                    "seats": [
                        {"kind": "human"},
                        {"kind": "bot", "bot": "greedy"},
                        {"kind": "bot", "bot": "random"},
                    ],
                },
            ).json()
            game_id, token = created["game"]["id"], created["token"]
            headers = {"Authorization": f"Bearer {token}"}
            accepted: dict[str, Any] = {}
            # Play until one of Ann's moves hands the turn to a bot, a few times over.
            handovers = 0
            while handovers < 2:
                current = wait_for(http, game_id, token, my_turn_or_over)
                assert current["game"]["status"] != "finished"
                response = http.post(
                    f"/api/games/{game_id}/actions", json={"action": choose(current)}, headers=headers
                )
                assert response.status_code == 200, response.text
                accepted = response.json()
                if accepted["to_move"] != 0:
                    handovers += 1
            # Ann's move is acknowledged, a bot is to move (and waits 0.6 s): kill the server now.
            server.kill()
        seen = [entry["move"] for entry in accepted["log"]]
        on_disk = stored_moves(tmp_path, game_id)
        assert on_disk == seen  # every acknowledged move is on disk, and the bot had not moved yet
        server = servers.one(tmp_path, bot_delay=0.02, port=server.port)
        with httpx.Client(base_url=server.url, timeout=10) as http:
            resumed = http.get(f"/api/games/{game_id}", headers=headers).json()
            assert [e["move"] for e in resumed["log"]][: len(seen)] == seen
            assert resumed["game"]["status"] == "playing"
            # The bot whose turn it was moves by itself after the restart.
            current = wait_for(http, game_id, token, my_turn_or_over)
            assert current["move_number"] > accepted["move_number"]
            while current["game"]["status"] != "finished":
                response = http.post(
                    f"/api/games/{game_id}/actions",
                    json={"action": choose(current), "move": current["move_number"]},
                    headers=headers,
                )
                assert response.status_code == 200, response.text
                current = wait_for(http, game_id, token, my_turn_or_over)
            record = GameRecord.from_json(http.get(f"/api/games/{game_id}/record").text)
            assert [m.notation(record.rules.edition) for m in record.moves][: len(seen)] == seen
            assert [s.total for s in record.replay().scores()] == current["match"]["deals"][0]["totals"]
            assert stored_moves(tmp_path, game_id) == [e["move"] for e in current["log"]]
    finally:
        server.stop()
    assert "Traceback" not in server.output, server.output
