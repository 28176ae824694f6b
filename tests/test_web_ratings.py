"""Ratings through the HTTP API: a rated game played to the end moves every seat's openskill
rating once (bots one player per level, a resigned person last), the leaderboard, player pages."""

from __future__ import annotations

import json
import os
import secrets
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from openskill.models import PlackettLuce
from sqlalchemy import func, select

from coloretto.arena.stats import place_seats
from coloretto.rules import Rules
from coloretto.web import Settings, create_app
from coloretto.web.features.site import Site
from coloretto.web.storage import ratings as store
from coloretto.web.storage import reviews as review_store
from coloretto.web.storage.rows import RatingHistoryRow
from coloretto.web.table.live import now_utc
from tests.test_web import FAST, TestClient, wait_until
from tests.test_web_accounts import CHEAP_HASH, browser, logged_in, login, post
from tests.test_web_table_features import play_sessions

RATED = Settings(**{**FAST.__dict__, "password_cost": CHEAP_HASH, "leaderboard_min_games": 1})
POSTGRESQL = os.environ.get("COLORETTO_TEST_POSTGRESQL")


def make_client(url: str, settings: Settings = RATED, address: str = "127.0.0.2") -> TestClient:
    return TestClient(create_app(url, settings), client=(address, 50000))


def service_of(client: TestClient) -> Site:
    return client.app.state.site  # type: ignore[attr-defined,no-any-return]


def write(client: TestClient, job: Any) -> Any:
    """Run a write job on the server's writer, as the server does."""
    return client.portal.call(service_of(client).games.write, job)  # type: ignore[union-attr]


def rated_game(client: TestClient, bots: list[str], **extra: Any) -> str:
    seats = [{"kind": "human"}] + [{"kind": "bot", "bot": bot} for bot in bots]
    response = post(client, "/api/games", {"seats": seats, "creator_name": "me", "rated": True, **extra})
    assert response.status_code == 201, response.text
    return str(response.json()["game"]["id"])


def expected_ratings(
    final: dict, resigned: list[bool], before: list[tuple[float, float]]
) -> tuple[list[float], list[tuple[float, float]]]:
    """Each seat's rank and (mu, sigma) after the game, worked out here with openskill itself."""
    rules = Rules.from_dict(final["game"]["rules"])
    minus = [0] * len(resigned)  # the default tie-break shares a tie: minus points never count
    ranks = list(place_seats(final["match"]["totals"], minus, resigned, rules).ranks)
    model = PlackettLuce()
    rated = model.rate([[model.rating(mu=mu, sigma=sigma)] for mu, sigma in before], ranks=ranks)
    return ranks, [(team[0].mu, team[0].sigma) for team in rated]


def history_rows(client: TestClient, game_id: str) -> int:
    query = select(func.count()).select_from(RatingHistoryRow).where(RatingHistoryRow.game_id == game_id)
    with service_of(client).games.sessions() as session:
        return int(session.scalar(query) or 0)


def unique(name: str) -> str:
    """A name no earlier run left in a database that tests share (PostgreSQL)."""
    return f"{name}{secrets.token_hex(3)}"


def levels(client: TestClient) -> dict[str, dict]:
    return {
        e["name"]: e["rating"] for e in client.get("/api/leaderboard").json()["players"] if e["kind"] == "bot"
    }


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'ratings.sqlite3'}"
    if not POSTGRESQL:
        pytest.skip("set COLORETTO_TEST_POSTGRESQL=postgresql://… to rate games on PostgreSQL too")
    return POSTGRESQL


@pytest.fixture
def client(tmp_path: Path) -> Any:
    with make_client(f"sqlite:///{tmp_path / 'ratings.sqlite3'}") as c:
        yield c


def test_a_rated_game_to_the_end_moves_every_rating_once(url: str) -> None:
    name = unique("Ann")
    with make_client(url) as client:
        ann = logged_in(client, name)
        bots_before = levels(client)
        game_id = rated_game(ann, ["easy", "medium"])
        final = play_sessions({0: ann}, game_id)  # her session alone: no seat token
        changes = final["ratings"]
        assert [c["player"] for c in changes] == [name, "easy", "medium"]
        before = [(25.0, 25 / 3)] + [
            (bots_before[b]["mu"], bots_before[b]["sigma"]) for b in ("easy", "medium")
        ]
        ranks, expected = expected_ratings(final, [False] * 3, before)
        assert [c["rank"] for c in changes] == ranks
        for change, (mu, sigma) in zip(changes, expected, strict=True):
            assert change["after"]["mu"] == pytest.approx(mu, abs=1e-3)
            assert change["after"]["sigma"] == pytest.approx(sigma, abs=1e-3)
            assert change["after"]["ordinal"] == pytest.approx(mu - 3 * sigma, abs=2e-3)
        account = ann.get("/api/account").json()["user"]["rating"]
        assert account["games"] == 1 and account["ordinal"] == changes[0]["after"]["ordinal"]
        board = {e["name"]: e for e in client.get("/api/leaderboard").json()["players"]}
        assert board[name]["kind"] == "person" and board[name]["rating"]["games"] == 1
        assert board["easy"]["rating"]["games"] == bots_before["easy"]["games"] + 1
        # once: the game is marked rated with its ratings, so rating it again changes nothing
        job = store.RatingJob(game_id, ("bot:hard",) * 3, (None,) * 3, (1.0, 2.0, 3.0))
        assert write(client, partial(store.apply_ratings, job=job, now=now_utc())) is None
        assert history_rows(client, game_id) == 3
        assert ann.get("/api/account").json()["user"]["rating"] == account
    with make_client(url) as client:  # a new server shows the same, read from the database
        assert client.get(f"/api/games/{game_id}").json()["ratings"] == changes
        assert login(client, name).json()["user"]["rating"] == account


@pytest.mark.slow  # plays whole games: seconds
def test_a_level_seated_twice_is_one_player(client: TestClient) -> None:
    ann = logged_in(client, "Ann")
    final = play_sessions({0: ann}, rated_game(ann, ["easy", "easy"]))
    _me, first, second = final["ratings"]
    assert first["player"] == second["player"] == "easy"
    assert first["after"] == second["after"]  # the mean of its two seats' updates
    assert levels(client)["easy"]["games"] == 1
    assert levels(client)["easy"]["mu"] == first["after"]["mu"]


def test_a_resigned_person_ranks_last(client: TestClient) -> None:
    ann = logged_in(client, "Ann")
    game_id = rated_game(ann, ["easy", "easy"])
    assert post(ann, f"/api/games/{game_id}/resign").status_code == 200
    # the takeover bot plays her seat, the level bots theirs
    final = wait_until(client, game_id, None, lambda s: s["game"]["status"] == "finished")
    mine = final["ratings"][0]
    assert mine["rank"] == 3.0 and final["game"]["seats"][0]["resigned"]
    assert mine["after"]["mu"] < mine["before"]["mu"]
    ranks, _expected = expected_ratings(final, [True, False, False], [(25.0, 25 / 3)] * 3)
    assert [c["rank"] for c in final["ratings"]] == ranks


@pytest.mark.slow  # plays whole games: seconds
def test_the_leaderboard_lists_people_with_enough_games_and_every_level(tmp_path: Path) -> None:
    settings = Settings(**{**RATED.__dict__, "leaderboard_min_games": 2})
    with make_client(f"sqlite:///{tmp_path / 'board.sqlite3'}", settings) as client:
        empty = client.get("/api/leaderboard").json()
        assert empty["min_games"] == 2
        assert [(e["kind"], e["name"], e["rating"]["ordinal"]) for e in empty["players"]] == [
            ("bot", level, 0.0) for level in ("easy", "expert", "hard", "medium")
        ]
        ann = logged_in(client, "Ann")
        play_sessions({0: ann}, rated_game(ann, ["easy"]))
        board = client.get("/api/leaderboard").json()["players"]
        assert "Ann" not in [e["name"] for e in board]  # one game: not listed yet
        play_sessions({0: ann}, rated_game(ann, ["easy"]))
        board = client.get("/api/leaderboard").json()["players"]
        assert [e["rank"] for e in board] == list(range(1, len(board) + 1))
        assert [e["rating"]["ordinal"] for e in board] == sorted(
            (e["rating"]["ordinal"] for e in board), reverse=True
        )
        assert {e["name"] for e in board} == {"Ann", "easy", "medium", "hard", "expert"}


def review_json(seat_accuracies: list[float]) -> str:
    """A stored review as coloretto.review writes it, reduced to what a player page reads."""
    summary = [{"seat": seat, "name": f"p{seat}", "accuracy": a} for seat, a in enumerate(seat_accuracies)]
    return json.dumps(
        {"format": "coloretto-review", "positions": [{"summary": "not this one"}], "summary": summary}
    )


@pytest.mark.slow  # plays whole games: seconds
def test_a_player_page(client: TestClient) -> None:
    ann = logged_in(client, "Ann")
    rated = rated_game(ann, ["easy"])
    final = play_sessions({0: ann}, rated)
    private = post(
        ann,
        "/api/games",
        {
            "seats": [{"kind": "human"}, {"kind": "bot", "bot": "random"}],
            "creator_name": "x",
            "private": True,
        },
    ).json()["game"]["id"]
    play_sessions({0: ann}, private)
    service = service_of(client)
    now = now_utc()
    write(
        client,
        partial(
            review_store.claim_review, game_id=rated, deal=1, budget=5, total=1, now=now, stale_before=now
        ),
    )
    write(
        client,
        partial(
            review_store.end_review,
            game_id=rated,
            deal=1,
            budget=5,
            status="done",
            now=now,
            data=review_json([81.25, 60.0]),
        ),
    )
    page = browser(client).get("/api/players/ann").json()  # a guest's view; any case
    assert page["name"] == "Ann" and page["games"] == 2
    newest, oldest = page["results"]
    assert newest["game"] is None  # another person's (a guest's) view of her private table
    assert oldest["game"] == rated and oldest["rated"] and not newest["rated"]
    change = final["ratings"][0]
    assert oldest["rating_change"] == pytest.approx(
        change["after"]["ordinal"] - change["before"]["ordinal"], abs=1e-3
    )
    assert oldest["rank"] == change["rank"] and oldest["score"] == final["match"]["totals"][0]
    assert oldest["won"] == (0 in final["match"]["winners"])
    assert oldest["opponents"] == [
        {"seat": 1, "name": "Bot 2 (easy)", "kind": "bot", "bot": "easy", "account": False, "deleted": False}
    ]
    assert oldest["accuracy"] == 81.2 and newest["accuracy"] is None and page["accuracy"] == 81.2
    assert page["wins"] == sum(1 for r in page["results"] if r["won"])
    assert [p["rating"] for p in page["history"]] == [change["after"]]
    assert page["rating"]["games"] == 1
    own = ann.get("/api/players/Ann").json()
    assert own["results"][0]["game"] == private  # her own page shows her private table's link
    assert service.settings.leaderboard_min_games == 1
    missing = ann.get("/api/players/Nobody")
    assert missing.status_code == 404 and missing.json()["error"] == "not_found"
    assert browser(client).get("/api/players/ANN").json()["name"] == "Ann"


@pytest.mark.slow  # plays whole games: seconds
def test_seed_ratings_rates_the_levels_by_arena_games_among_them(tmp_path: Path, capsys: Any) -> None:
    from coloretto.cli import main

    args = ["seed-ratings", "--data-dir", str(tmp_path), "--levels", "easy,medium", "--players", "2"]
    assert main([*args, "--games", "4", "--workers", "1", "--out", str(tmp_path / "arena")]) == 0
    printed = capsys.readouterr().out
    assert printed.startswith("4 games rated:") and "easy" in printed and "medium" in printed
    games = [json.loads(line) for line in (tmp_path / "arena" / "games.jsonl").read_text().splitlines()]
    model = PlackettLuce()
    expected = {level: model.rating() for level in ("easy", "medium")}
    for game in games:  # the arena's games, rated in order from the start
        teams = model.rate([[expected[bot]] for bot in game["bots"]], ranks=game["ranks"])
        expected = {bot: team[0] for bot, team in zip(game["bots"], teams)}
    with make_client(f"sqlite:///{tmp_path / 'coloretto.sqlite3'}") as client:
        board = levels(client)
    for level in ("easy", "medium"):
        assert board[level]["games"] == 4
        assert board[level]["mu"] == pytest.approx(expected[level].mu, abs=1e-3)
        assert board[level]["sigma"] == pytest.approx(expected[level].sigma, abs=1e-3)
    assert board["hard"]["games"] == board["expert"]["games"] == 0
    assert main([*args, "--levels", "easy"]) == 2  # one level alone rates nothing: refused
    assert "two levels at least" in capsys.readouterr().err
    assert main([*args, "--games", "4", "--out", str(tmp_path / "arena")]) == 2  # no --resume here
    assert "already holds a tournament's games: choose another --out" in capsys.readouterr().err
