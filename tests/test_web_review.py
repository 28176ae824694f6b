"""The game review in the web app (issue 12): worked out in the server's worker processes, stored
with the game, served to anyone; what-if lines from any position of a finished game."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import signal
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

from coloretto.record import GameRecord
from coloretto.web import Settings, create_app
from coloretto.web.runtime.workers import BotPool, ReviewFailed
from coloretto.web.storage.rows import ReviewRow
from tests.test_web import FAST, WAIT_GUARD, create, service_of, state, wait_until

#: every test here waits on searches in the workers: the search is seen to work first (conftest.py)
pytestmark = pytest.mark.search

#: a small budget: the tests check the plumbing, not the figures
BUDGET = 60
REVIEWING = dataclasses.replace(FAST, review_budget=BUDGET)


def make_client(path: Path, settings: Settings = REVIEWING) -> TestClient:
    return TestClient(create_app(f"sqlite:///{path}", settings))


def finished_game(client: TestClient, bots: tuple[str, str] = ("greedy", "greedy")) -> str:
    """A two-player game of bots, played to the end by the server's workers."""
    game_id: str = create(client, list(bots))["game"]["id"]
    wait_until(client, game_id, None, lambda s: s["game"]["status"] == "finished")
    return game_id


def poll_review(client: TestClient, game_id: str, until: Any, game: int = 1) -> dict:
    """GET the review until ``until(body)``; a hang guard only."""
    deadline = time.monotonic() + WAIT_GUARD
    while time.monotonic() < deadline:
        response = client.get(f"/api/games/{game_id}/review?game={game}")
        assert response.status_code == 200, response.text
        body: dict = response.json()
        if until(body):
            return body
        assert body["status"] != "failed", body["error"]
        time.sleep(0.02)
    raise AssertionError(f"the review did not get there in {WAIT_GUARD:g} s")


def is_done(body: dict) -> bool:
    return body["status"] == "done"


@pytest.fixture(scope="module")
def reviewed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[TestClient, str, dict]]:
    """One server with a finished game and its review done (shared: a review takes seconds)."""
    path = tmp_path_factory.mktemp("review") / "review.sqlite3"
    with make_client(path) as client:
        game_id = finished_game(client)
        response = client.post(f"/api/games/{game_id}/review")
        assert response.status_code == 202, response.text
        first = response.json()
        assert first["status"] in ("running", "done") and first["error"] is None
        assert first["total"] > 0
        done = poll_review(client, game_id, is_done)
        yield client, game_id, done


# ------------------------------------------------------------------ review


def test_a_review_has_a_position_per_replay_frame_and_an_entry_per_move(
    reviewed: tuple[TestClient, str, dict],
) -> None:
    client, game_id, body = reviewed
    assert body["done"] == body["total"] > 0 and body["error"] is None
    review = body["review"]
    assert review["format"] == "coloretto-review" and review["budget"] == BUDGET
    replay = client.get(f"/api/games/{game_id}/replay").json()
    record = GameRecord.from_json(client.get(f"/api/games/{game_id}/record").text)
    frames = replay["frames"]
    assert len(review["positions"]) == len(frames) == len(record.moves) + 1
    assert [p["index"] for p in review["positions"]] == list(range(len(frames)))
    assert [p["to_move"] for p in review["positions"]] == [f["to_move"] for f in frames]
    for position in review["positions"]:
        assert len(position["win"]) == 2 and abs(sum(position["win"]) - 1.0) < 1e-6
    assert len(review["moves"]) == len(record.moves)
    played = [f["entry"]["move"].split()[0] for f in frames[1:]]
    assert [m["played"] for m in review["moves"]] == played
    assert [m["number"] for m in review["moves"]] == list(range(1, len(played) + 1))
    assert [s["seat"] for s in review["summary"]] == [0, 1]
    # the row holds the same review
    with service_of(client).games.sessions() as session:
        row = session.scalars(select(ReviewRow).where(ReviewRow.game_id == game_id)).one()
    assert (row.status, row.deal, row.budget, row.done) == ("done", 1, BUDGET, body["total"])
    assert row.data is not None and json.loads(row.data) == review


def test_asking_again_answers_the_review_already_done(reviewed: tuple[TestClient, str, dict]) -> None:
    client, game_id, body = reviewed
    again = client.post(f"/api/games/{game_id}/review")
    assert again.status_code == 202
    assert again.json() == body  # done: nothing runs again
    assert service_of(client).reviews.running() == 0


def test_only_finished_games_of_the_server_are_reviewed(reviewed: tuple[TestClient, str, dict]) -> None:
    client, game_id, _ = reviewed
    for method in (client.post, client.get):
        missing = method("/api/games/nosuchgame/review")
        assert missing.status_code == 404 and missing.json()["error"] == "not_found", missing.text
        no_deal = method(f"/api/games/{game_id}/review?game=2")
        assert no_deal.status_code == 404 and "games 1 to 1" in no_deal.json()["message"]
    playing = create(client, ["human", "greedy"])["game"]["id"]
    for method in (client.post, client.get):
        refused = method(f"/api/games/{playing}/review")
        assert refused.status_code == 409 and refused.json()["error"] == "not_finished", refused.text
    other = finished_game(client)
    assert client.get(f"/api/games/{other}/review").json() == {
        "status": "none",
        "done": 0,
        "total": 0,
        "error": None,
        "review": None,
    }


def test_each_game_of_a_match_has_its_own_review(tmp_path: Path) -> None:
    with make_client(tmp_path / "match.sqlite3") as client:
        game_id = create(client, ["greedy", "random"], {"match_games": 2})["game"]["id"]
        wait_until(client, game_id, None, lambda s: s["game"]["status"] == "finished")
        assert client.post(f"/api/games/{game_id}/review?game=2").status_code == 202
        second = poll_review(client, game_id, is_done, game=2)["review"]
        frames = client.get(f"/api/games/{game_id}/replay?game=2").json()["frames"]
        assert len(second["positions"]) == len(frames)
        assert [m["played"] for m in second["moves"]] == [f["entry"]["move"].split()[0] for f in frames[1:]]
        assert client.get(f"/api/games/{game_id}/review?game=1").json()["status"] == "none"
        line = client.post(f"/api/games/{game_id}/whatif", json={"game": 2, "upto": 3, "moves": []})
        assert line.status_code == 200 and line.json()["frame"] == frames[3], line.text


# ----------------------------------------------------------------- what if


def whatif(client: TestClient, game_id: str, upto: int, moves: list[str]) -> Any:
    return client.post(f"/api/games/{game_id}/whatif", json={"game": 1, "upto": upto, "moves": moves})


def test_what_if_analyses_the_position_a_line_reaches(reviewed: tuple[TestClient, str, dict]) -> None:
    client, game_id, _ = reviewed
    frames = client.get(f"/api/games/{game_id}/replay").json()["frames"]
    upto = 6
    unchanged = whatif(client, game_id, upto, [])
    assert unchanged.status_code == 200, unchanged.text
    here = unchanged.json()
    assert here["frame"] == frames[upto]  # the replay's own frame
    assert here["legal"] and {line["action"] for line in here["lines"]} <= set(here["legal"])
    assert len(here["position"]["win"]) == 2 and abs(sum(here["position"]["win"]) - 1.0) < 1e-6
    # another move than the one played, and one more after it
    played = frames[upto + 1]["entry"]["move"].split()[0]
    other = next(a for a in here["legal"] if a != played)
    line = whatif(client, game_id, upto, [other])
    assert line.status_code == 200, line.text
    there = line.json()
    assert there["frame"]["move_number"] == frames[upto]["move_number"] + 1
    assert there["frame"]["entry"]["move"].split()[0] == other
    assert there["frame"] != frames[upto + 1]
    longer = whatif(client, game_id, upto, [other, there["legal"][0]])
    assert longer.status_code == 200, longer.text
    assert longer.json()["frame"]["move_number"] == frames[upto]["move_number"] + 2


def test_a_line_that_ends_the_game_gets_its_outcome(reviewed: tuple[TestClient, str, dict]) -> None:
    client, game_id, _ = reviewed
    replay = client.get(f"/api/games/{game_id}/replay").json()
    frames = replay["frames"]
    last = frames[-1]["entry"]["move"].split()[0]
    ended = whatif(client, game_id, len(frames) - 2, [last])
    assert ended.status_code == 200, ended.text
    body = ended.json()
    assert body["lines"] == [] and body["legal"] == []
    assert body["position"]["score"] == replay["result"]["totals"]
    winners = replay["result"]["winners"]
    assert body["position"]["win"] == [1 / len(winners) if s in winners else 0.0 for s in (0, 1)]
    assert body["frame"] == frames[-1]


def test_what_if_refuses_an_illegal_move_naming_it(reviewed: tuple[TestClient, str, dict]) -> None:
    client, game_id, _ = reviewed
    frames = client.get(f"/api/games/{game_id}/replay").json()["frames"]
    legal = whatif(client, game_id, 0, []).json()["legal"]
    illegal = whatif(client, game_id, 0, [legal[0], "t9"])
    assert illegal.status_code == 400, illegal.text
    error = illegal.json()
    assert error["error"] == "bad_move" and "move 2" in error["message"] and "'t9'" in error["message"]
    nonsense = whatif(client, game_id, 0, ["zz"])
    assert nonsense.status_code == 400 and nonsense.json()["error"] == "bad_move"
    assert "'zz'" in nonsense.json()["message"] and "not a move" in nonsense.json()["message"]
    over = whatif(client, game_id, len(frames) - 1, ["d"])
    assert over.status_code == 400 and "over" in over.json()["message"], over.text
    past = whatif(client, game_id, len(frames), [])
    assert past.status_code == 400 and past.json()["error"] == "bad_upto", past.text
    too_long = whatif(client, game_id, 0, ["d"] * 201)
    assert too_long.status_code == 422, too_long.text
    playing = create(client, ["human", "greedy"])["game"]["id"]
    assert whatif(client, playing, 0, []).json()["error"] == "not_finished"


# ----------------------------------------------------------- storage, pool


def test_a_stored_review_survives_a_restart(tmp_path: Path) -> None:
    path = tmp_path / "restart.sqlite3"
    with make_client(path) as client:
        game_id = finished_game(client, ("random", "greedy"))
        client.post(f"/api/games/{game_id}/review")
        done = poll_review(client, game_id, is_done)
    with make_client(path) as client:
        assert client.get(f"/api/games/{game_id}/review").json() == done
        assert client.post(f"/api/games/{game_id}/review").json() == done
        assert service_of(client).reviews.running() == 0


def test_the_pool_serves_other_games_bots_while_a_review_runs(tmp_path: Path) -> None:
    """Review jobs take their turn with the games: a search bot's game moves on meanwhile."""
    slow = dataclasses.replace(REVIEWING, review_budget=20_000)
    with make_client(tmp_path / "busy.sqlite3", slow) as client:
        game_id = finished_game(client)
        client.post(f"/api/games/{game_id}/review")
        started = poll_review(client, game_id, lambda b: b["status"] == "running" and b["done"] >= 1)
        other = create(client, ["mcts:200", "mcts:200"])["game"]["id"]
        moved = wait_until(client, other, None, lambda s: s["move_number"] >= 4)
        body = client.get(f"/api/games/{game_id}/review").json()
        assert body["status"] == "running" and body["done"] < body["total"], (
            "the review ended before the other game moved: make its budget larger"
        )
        assert moved["move_number"] >= 4 and body["done"] >= started["done"]
    # the server stopped: the review is stored as stopped, and asked again it starts anew
    with make_client(tmp_path / "busy.sqlite3", slow) as client:
        stopped = client.get(f"/api/games/{game_id}/review").json()
        assert stopped["status"] == "failed" and "stopped" in stopped["error"]
        assert client.post(f"/api/games/{game_id}/review").json()["status"] == "running"


def test_too_many_reviews_at_once_are_refused_with_busy(tmp_path: Path) -> None:
    one = dataclasses.replace(REVIEWING, review_budget=20_000, max_running_reviews=1)
    with make_client(tmp_path / "limit.sqlite3", one) as client:
        first, second = finished_game(client), finished_game(client)
        assert client.post(f"/api/games/{first}/review").json()["status"] == "running"
        refused = client.post(f"/api/games/{second}/review")
        assert refused.status_code == 429 and refused.json()["error"] == "busy", refused.text
        assert int(refused.headers["Retry-After"]) >= 1
        assert client.get(f"/api/games/{second}/review").json()["status"] == "none"


def test_a_review_left_running_by_a_dead_process_is_started_again(tmp_path: Path) -> None:
    from datetime import UTC, datetime, timedelta

    path = tmp_path / "stale.sqlite3"
    with make_client(path) as client:
        game_id = finished_game(client)
        sessions = service_of(client).games.sessions
        with sessions.begin() as session:
            session.add(
                ReviewRow(
                    game_id=game_id,
                    deal=1,
                    budget=BUDGET,
                    status="running",
                    done=3,
                    total=99_999,
                    updated_at=datetime.now(UTC) - timedelta(seconds=30),
                )
            )
        # another process (alive: updated 30 s ago) runs it: it is not started here
        fresh = client.post(f"/api/games/{game_id}/review").json()
        assert (fresh["status"], fresh["done"], fresh["total"]) == ("running", 3, 99_999)
        assert service_of(client).reviews.running() == 0
        with sessions.begin() as session:
            row = session.get(ReviewRow, (game_id, 1, BUDGET))
            assert row is not None
            row.updated_at = datetime.now(UTC) - timedelta(seconds=600)
        # nobody works on it any more: it reads as failed, and asked again it starts anew
        stale = client.get(f"/api/games/{game_id}/review").json()
        assert stale["status"] == "failed" and "ask for it again" in stale["error"]
        restarted = client.post(f"/api/games/{game_id}/review").json()
        assert restarted["status"] in ("running", "done") and restarted["total"] != 99_999
        assert poll_review(client, game_id, is_done)["review"]["budget"] == BUDGET


def test_the_watchers_are_told_when_the_review_is_done(tmp_path: Path) -> None:
    with make_client(tmp_path / "told.sqlite3") as client:
        game_id = create(client, ["greedy", "greedy"])["game"]["id"]
        with client.websocket_connect(f"/api/games/{game_id}/ws") as ws:
            wait_until(client, game_id, None, lambda s: s["game"]["status"] == "finished")
            client.post(f"/api/games/{game_id}/review")
            for _ in range(2000):
                message = ws.receive_json()
                if message["type"] == "review":
                    break
            else:
                raise AssertionError("no review message came")
        assert message == {"type": "review", "game": 1, "status": "done"}


# ------------------------------------------------------------ worker deaths


async def kill_running(pool: BotPool, times: int) -> None:
    """Kill the worker running a job, ``times`` times, each once the pool has seen the last die."""
    for _ in range(times):
        deadline = time.monotonic() + WAIT_GUARD
        while not pool.running_pids():
            assert time.monotonic() < deadline, "no worker ran the job"
            await asyncio.sleep(0.01)
        os.kill(pool.running_pids()[0], signal.SIGKILL)
        while pool.running_pids():  # until the pool has seen it die
            assert time.monotonic() < deadline, "the pool did not see the worker die"
            await asyncio.sleep(0.01)


def test_a_review_job_whose_worker_dies_runs_again_once(tmp_path: Path) -> None:
    """The worker running a review job is killed: the job runs again on a new worker; killed a
    second time, the review fails with a clear error."""
    from coloretto.review import plan_review

    with make_client(tmp_path / "deaths.sqlite3") as client:
        record = GameRecord.from_json(client.get(f"/api/games/{finished_game(client)}/record").text)
    # heavy tasks (about a second each), so that a worker is caught while it runs one
    plan = plan_review(record, budget=100_000, seed=0)
    task = plan.tasks[len(plan.tasks) // 2]

    async def scenario() -> None:
        pool = BotPool(1, warm=())
        pool.start()
        try:
            job = asyncio.ensure_future(pool.review_task("review:test", task))
            await kill_running(pool, 1)
            result = await job
            assert result.key == task.key and result.simulations >= 100_000 and result.lines
            job = asyncio.ensure_future(pool.review_task("review:test", task))
            await kill_running(pool, 2)
            with pytest.raises(ReviewFailed, match="died 2 times") as failed:
                await job
            assert f"position {task.key}" in str(failed.value)
        finally:
            await pool.close()

    asyncio.run(asyncio.wait_for(scenario(), WAIT_GUARD * 3))


def test_a_review_whose_worker_dies_twice_is_stored_as_failed(tmp_path: Path) -> None:
    # one worker (the pool of this size is shared by the tests): one review job runs at a time
    heavy = dataclasses.replace(REVIEWING, review_budget=100_000, bot_workers=1)
    with make_client(tmp_path / "failed.sqlite3", heavy) as client:
        game_id = finished_game(client)
        pool = service_of(client).games.pool()
        client.post(f"/api/games/{game_id}/review")
        asyncio.run(asyncio.wait_for(kill_running(pool, 2), WAIT_GUARD))
        failed = poll_review(client, game_id, lambda b: b["status"] != "running")
        assert failed["status"] == "failed" and failed["review"] is None
        assert "died 2 times while it analysed position (" in failed["error"], failed["error"]
        assert service_of(client).reviews.running() == 0


# -------------------------------------------------------------- PostgreSQL

POSTGRESQL = os.environ.get("COLORETTO_TEST_POSTGRESQL")


@pytest.mark.skipif(
    not POSTGRESQL and not os.environ.get("CI"),
    reason="set COLORETTO_TEST_POSTGRESQL=postgresql://… to test on PostgreSQL (.ci/run does)",
)
def test_postgresql_stores_and_serves_a_review() -> None:
    assert POSTGRESQL, "CI must provide COLORETTO_TEST_POSTGRESQL (see .ci/run)"
    with TestClient(create_app(POSTGRESQL, REVIEWING)) as client:
        game_id = finished_game(client)
        assert client.post(f"/api/games/{game_id}/review").status_code == 202
        done = poll_review(client, game_id, is_done)
        assert state(client, game_id)["game"]["status"] == "finished"
    with TestClient(create_app(POSTGRESQL, REVIEWING)) as client:
        assert client.get(f"/api/games/{game_id}/review").json() == done
