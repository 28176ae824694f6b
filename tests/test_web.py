"""The web app through its HTTP API and its WebSocket: lobby, play, secrecy, bad input."""

from __future__ import annotations

import json
import os
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

from coloretto.actions import DRAW, place
from coloretto.bots import available_bots
from coloretto.cards import LAST_ROUND, Edition, card_token
from coloretto.game import Game
from coloretto.match import MatchProgress, match_game_seed
from coloretto.record import GameRecord
from coloretto.rules import MAX_MATCH_GAMES, RULE_OPTIONS, Rules, RulesError
from coloretto.web import Settings, create_app
from coloretto.web.common.schemas import LogEntry
from coloretto.web.features.site import Site
from coloretto.web.storage import games as store
from coloretto.web.storage.rows import MoveRow
from coloretto.web.table.live import LiveGame, log_entry

#: bots move at once; the rate limits (tested on their own, in test_web_limits.py) are out of the
#: way of fast test clients, which poll the state hundreds of times a game
FAST = Settings(bot_delay=0.0, messages_per_second=1000.0, message_burst=1000, requests_per_minute=0)


def make_client(tmp_path: Path, settings: Settings = FAST, name: str = "web.sqlite3") -> TestClient:
    return TestClient(create_app(f"sqlite:///{tmp_path / name}", settings))


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    with make_client(tmp_path) as c:
        yield c


def service_of(client: TestClient) -> Site:
    return client.app.state.site  # type: ignore[attr-defined,no-any-return]


def live_game(client: TestClient, game_id: str) -> LiveGame:
    """The server's game in memory (read again from the database if it was not kept)."""
    return client.portal.call(service_of(client).games.get_live, game_id)  # type: ignore[union-attr]


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def create(
    client: TestClient, seats: list[str], rules: dict[str, Any] | None = None, name: str = "Ann"
) -> dict:
    body: dict[str, Any] = {
        "seats": [{"kind": "human"} if s == "human" else {"kind": "bot", "bot": s} for s in seats],
        "rules": rules or {},
    }
    if "human" in seats:
        body["creator_name"] = name
    response = client.post("/api/games", json=body)
    assert response.status_code == 201, response.text
    return response.json()


def state(client: TestClient, game_id: str, token: str | None = None) -> dict:
    response = client.get(f"/api/games/{game_id}", headers=auth(token) if token else {})
    assert response.status_code == 200, response.text
    return response.json()


#: seconds a wait on the server may take before it counts as hung: a hang guard only. The first
#: bot move waits for a bot worker to start, which on a fresh clone (no bytecode) on a busy
#: machine takes seconds
WAIT_GUARD = 120.0


def wait_until(client: TestClient, game_id: str, token: str | None, done: Any) -> dict:
    """Poll the state until ``done(state)``: bots move in the server's worker processes."""

    deadline = time.monotonic() + WAIT_GUARD
    while time.monotonic() < deadline:
        current = state(client, game_id, token)
        if done(current):
            return current
        time.sleep(0.005)
    raise AssertionError(f"the game did not get there in {WAIT_GUARD:g} s: {hang_report(client, game_id)}")


def hang_report(client: TestClient, game_id: str) -> str:
    """What the server is doing about a game that does not move: a hang guard's message."""
    service = service_of(client)
    live = service.games.live.get(game_id)
    if live is None:
        return "the game is not in memory"
    task = live.bot_task
    to_move = live.game.to_move
    return (
        f"status {live.status}, move {live.move_count}, seat {to_move} to move "
        f"(a bot plays it: {to_move is not None and live.bot_plays(to_move)}), "
        f"owned {service.games.owns(live)}, "
        f"bot task {'none' if task is None else ('done' if task.done() else 'running')}, "
        f"pool {service.games.pool().status()}"
    )


def choose(legal: list[str], current: dict) -> str:
    """A simple policy for the tests: take a row with two or more cards, else draw and place."""
    takes = [a for a in legal if a.startswith("t")]
    full = [a for a in takes if len(current["rows"][int(a[1:]) - 1]["cards"]) >= 2]
    if full or "d" not in legal:
        return (full or takes or legal)[0]
    return "d" if "d" in legal else legal[0]


def play_http(client: TestClient, game_id: str, token: str) -> dict:
    """Play the token's seat to the end through the HTTP API."""
    current = state(client, game_id, token)
    while current["game"]["status"] != "finished":
        if current["legal"]:
            action = choose(current["legal"], current)
            response = client.post(
                f"/api/games/{game_id}/actions",
                json={"action": action, "move": current["move_number"]},
                headers=auth(token),
            )
            assert response.status_code == 200, response.text
            current = response.json()
        else:
            current = wait_until(
                client, game_id, token, lambda s: s["legal"] or s["game"]["status"] == "finished"
            )
    return current


# ------------------------------------------------------------------ lobby


def test_options_list_every_rule_option_every_bot_and_the_limits(client: TestClient) -> None:
    options = client.get("/api/options").json()
    names = {o["name"] for o in options["rules"]}
    assert names == {
        "players", "edition", "table", "joker_timing", "round_starter", "plus_colours", "tie_break",
        "starting_colours", "cards_under_last_round", "match_games",
    }  # fmt: skip
    assert {b["name"] for b in options["bots"]} == set(available_bots())
    assert options["default_bot"] in available_bots()
    assert options["limits"]["max_message_bytes"] == FAST.max_message_bytes
    assert isinstance(options["hints"], bool)


def test_options_are_the_cores_rule_option_table(client: TestClient) -> None:
    offered = client.get("/api/options").json()["rules"]
    assert [o["name"] for o in offered] == [option.name for option in RULE_OPTIONS]
    for shown, option in zip(offered, RULE_OPTIONS):
        assert (shown["label"], shown["help"], shown["default"]) == (
            option.label,
            option.help,
            option.default,
        )
        assert shown["minimum"] == option.minimum and shown["maximum"] == option.maximum
        assert shown["optional"] == option.optional
        if option.choices is None:
            assert shown["kind"] == "number" and shown["choices"] is None
        else:
            assert shown["kind"] == "choice" and shown["choices"] == list(option.choices)
            assert shown["choice_help"] == [option.describe_choice(c) for c in option.choices]
    by_name = {o["name"]: o for o in offered}
    assert by_name["match_games"]["maximum"] == MAX_MATCH_GAMES == 8
    assert by_name["starting_colours"]["choices"] == ["dealt", "chosen"]
    assert (
        by_name["cards_under_last_round"]["optional"] and by_name["cards_under_last_round"]["maximum"] is None
    )
    assert [o["name"] for o in offered if o["set_by_seats"]] == ["players"]


def test_the_rules_of_a_new_game_are_checked_by_the_core(client: TestClient) -> None:
    """Every rule the core allows is accepted, and a refusal carries the core's own message."""
    longest = create(client, ["random", "random"], {"match_games": MAX_MATCH_GAMES, "table": "violet"})
    assert longest["game"]["rules"]["match_games"] == MAX_MATCH_GAMES  # the web allowed only 6
    assert (
        create(client, ["human", "random"], {"starting_colours": "chosen"})["game"]["rules"][
            "starting_colours"
        ]
        == "chosen"
    )
    for rules in (
        {"match_games": MAX_MATCH_GAMES + 1},
        {"match_games": 0},
        {"match_games": "2"},
        {"match_games": 2.5},
        {"match_games": True},
        {"table": "green"},
        {"edition": ["classic"]},
        {"edition": {"name": "classic"}},
        {"starting_colours": "auction"},
        {"cards_under_last_round": -1},
        {"cards_under_last_round": 999},
        {"speed": 3},
    ):
        with pytest.raises(RulesError) as expected:
            Rules.from_dict({**rules, "players": 2})
        response = client.post("/api/games", json={"seats": [{"kind": "bot"}] * 2, "rules": rules})
        assert response.status_code == 400, (rules, response.text)
        assert response.json() == {"error": "bad_rules", "message": str(expected.value)}, rules


def test_openapi_schema_describes_the_lobby(client: TestClient) -> None:
    schema = client.get("/openapi.json").json()
    assert {"/api/games", "/api/games/{game_id}/join", "/api/options", "/api/games/{game_id}/record"} <= set(
        schema["paths"]
    )
    assert "CreateGame" in schema["components"]["schemas"]
    assert client.get("/docs").status_code == 200


def test_pages_are_served_and_hold_no_game_data(client: TestClient) -> None:
    created = create(client, ["human", "random"])
    game_id = created["game"]["id"]
    for path in ("/", f"/games/{game_id}", f"/games/{game_id}/replay", "/rules", "/static/js/table.js"):
        response = client.get(path)
        assert response.status_code == 200, path
        assert str(service_of(client).games.live[game_id].seed) not in response.text
    assert "Coloretto" in client.get("/rules").text


def test_create_join_and_start(client: TestClient) -> None:
    created = create(client, ["human", "human", "greedy"], {"table": "violet"})
    game = created["game"]
    assert game["status"] == "open" and created["seat"] == 0 and created["token"]
    assert [s["free"] for s in game["seats"]] == [False, True, False]
    assert game["rules"]["players"] == 3 and game["rules"]["table"] == "violet"
    assert [g["id"] for g in client.get("/api/games?status=open").json()["games"]] == [game["id"]]
    # the seat of another person, a bot's seat: refused
    assert client.post(f"/api/games/{game['id']}/join", json={"name": "Bob", "seat": 0}).status_code == 409
    refused = client.post(f"/api/games/{game['id']}/join", json={"name": "Bob", "seat": 2})
    assert refused.status_code == 409 and refused.json()["error"] == "seat_taken"
    joined = client.post(f"/api/games/{game['id']}/join", json={"name": "Bob"})
    assert joined.status_code == 200 and joined.json()["seat"] == 1
    assert joined.json()["game"]["status"] == "playing"
    late = client.post(f"/api/games/{game['id']}/join", json={"name": "Cy"})
    assert late.status_code == 409 and late.json()["error"] == "not_open"
    assert [g["id"] for g in client.get("/api/games?status=playing").json()["games"]] == [game["id"]]


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        ({"seats": [{"kind": "human"}]}, 422, "bad_request"),
        ({"seats": [{"kind": "bot"}] * 6}, 422, "bad_request"),
        ({"seats": [{"kind": "bot", "bot": "grandmaster"}] * 2}, 400, "bad_bot"),
        ({"seats": [{"kind": "bot"}] * 2, "rules": {"players": 4}}, 400, "bad_rules"),
        ({"seats": [{"kind": "bot"}] * 2, "rules": {"table": "green"}}, 400, "bad_rules"),
        ({"seats": [{"kind": "bot"}] * 2, "rules": {"speed": 3}}, 400, "bad_rules"),
        ({"seats": [{"kind": "alien"}] * 2}, 422, "bad_request"),
        ({"seats": [{"kind": "bot"}] * 2, "extra": 1}, 422, "bad_request"),
        ({"seats": [{"kind": "human"}] * 2, "creator_name": " "}, 400, "bad_name"),
        ({"seats": [{"kind": "bot"}] * 2, "creator_name": "Ann"}, 400, "no_free_seat"),
    ],
)
def test_bad_lobby_requests_get_clear_errors(client: TestClient, body: dict, status: int, code: str) -> None:
    response = client.post("/api/games", json=body)
    assert response.status_code == status, response.text
    assert response.json()["error"] == code
    assert response.json()["message"]
    assert client.get("/api/games").json()["games"] == []


def test_malformed_and_oversized_bodies(client: TestClient) -> None:
    response = client.post("/api/games", content=b"{not json", headers={"Content-Type": "application/json"})
    assert response.status_code == 422
    assert response.json() == {"error": "bad_request", "message": "the request body is not valid JSON"}
    huge = json.dumps({"name": "x" * 20000, "seats": [{"kind": "bot"}] * 2})
    response = client.post("/api/games", content=huge, headers={"Content-Type": "application/json"})
    assert response.status_code == 413 and response.json()["error"] == "too_large"
    assert client.get("/api/games/nope").status_code == 404
    assert client.get("/api/games/" + "x" * 300).json()["error"] == "not_found"


# ------------------------------------------------------------------- play


def test_a_whole_game_through_the_api_and_its_record(client: TestClient) -> None:
    created = create(client, ["human", "random", "greedy"])
    game_id, token = created["game"]["id"], created["token"]
    assert client.get(f"/api/games/{game_id}/record").status_code == 409  # not while in progress
    assert client.get(f"/api/games/{game_id}/replay").json()["error"] == "in_progress"
    final = play_http(client, game_id, token)
    result = final["match"]["deals"][0]
    assert final["game"]["status"] == "finished" and final["to_move"] is None
    assert final["match"]["winners"] == result["winners"]
    for breakdown, player in zip(result["breakdowns"], final["players"]):
        assert breakdown["total"] == player["score"]
        points = sum(c["points"] for c in breakdown["plus_colours"] + breakdown["minus_colours"])
        assert points + breakdown["plus_two_points"] == breakdown["total"]
    response = client.get(f"/api/games/{game_id}/record")
    assert response.status_code == 200 and "attachment" in response.headers["content-disposition"]
    record = GameRecord.from_json(response.text)
    replayed = record.replay()
    assert [s.total for s in replayed.scores()] == result["totals"]
    assert len(record.moves) == final["move_number"] == len(final["log"])
    assert record.seats[0] == "Ann"
    replay = client.get(f"/api/games/{game_id}/replay").json()
    assert len(replay["frames"]) == final["move_number"] + 1
    assert replay["frames"][-1]["players"] == final["players"]
    assert replay["result"] == result
    listed = client.get("/api/games?status=finished").json()["games"][0]
    assert listed["totals"] == result["totals"] and listed["winners"] == result["winners"]


@pytest.mark.slow
def test_bots_alone_play_a_match_of_two_games(client: TestClient) -> None:
    created = create(client, ["random", "greedy"], {"match_games": 2, "edition": "modern"})
    game_id = created["game"]["id"]
    assert created["token"] is None and created["game"]["status"] == "playing"
    final = wait_until(client, game_id, None, lambda s: s["game"]["status"] == "finished")
    deals = final["match"]["deals"]
    assert [d["deal"] for d in deals] == [1, 2]
    assert final["match"]["totals"] == [a + b for a, b in zip(deals[0]["totals"], deals[1]["totals"])]
    second = GameRecord.from_json(client.get(f"/api/games/{game_id}/record?game=2").text)
    assert [s.total for s in second.replay().scores()] == deals[1]["totals"]
    # the core's match tags (MatchProgress), so that the terminal can go on with the match
    assert second.tags["match_game"] == "2"
    progress = MatchProgress.from_tags(second.tags, second.rules, second.seed or 0)
    assert progress.earlier_totals == tuple(deals[0]["totals"])
    assert match_game_seed(progress.seed, 2) == second.seed
    assert client.get(f"/api/games/{game_id}/record?game=3").status_code == 404


def test_jokers_named_on_take_are_played_through_the_api(client: TestClient) -> None:
    created = create(client, ["human", "random"], {"joker_timing": "on-take"})
    final = play_http(client, created["game"]["id"], created["token"])
    assert final["game"]["status"] == "finished"


def test_the_log_is_the_games_own_move_events(client: TestClient) -> None:
    created = create(client, ["human", "random"], {"edition": "modern", "joker_timing": "on-take"})
    game_id = created["game"]["id"]
    final = play_http(client, game_id, created["token"])
    game = live_game(client, game_id).games[0]
    names = [s["name"] for s in final["game"]["seats"]]
    events = game.events()
    assert len(final["log"]) == len(events) == final["move_number"]
    for entry, event in zip(final["log"], events):
        assert entry["number"] == event.number and entry["seat"] == event.seat
        assert entry["round"] == event.round and entry["move"] == event.notation(game.rules.edition)
        assert entry["cards"] == list(event.cards) and entry["revealed"] == list(event.revealed)
        assert entry["colour"] == event.colour
        assert entry["text"] == event.describe(names, game.rules.edition)
    assert any(e["move"].startswith("t") and e["cards"] for e in final["log"])
    assert sum("last round" in e["text"] for e in final["log"]) == 1


def test_the_log_tells_the_moves_the_game_has_now(client: TestClient) -> None:
    created = create(client, ["human", "human"])
    game_id = created["game"]["id"]
    client.post(f"/api/games/{game_id}/join", json={"name": "Bob"})
    live = live_game(client, game_id)
    edition = live.rules.edition

    def told() -> list[LogEntry]:
        return [log_entry(e, 0, 1, live.names(), edition) for e in live.game.events()]

    live.match.push(DRAW)
    live.match.push(place(0))
    assert [e.move[0] for e in live.log(1)] == ["d", "p"] and live.log(1) == told()
    live.match.pop()  # as a move whose commit failed is undone
    assert live.log(1) == told() and len(told()) == 1
    live.match.push(place(1))
    assert live.log(1)[-1].move == "p2" and live.log(1) == told()


def play_seats(client: TestClient, game_id: str, tokens: dict[int, str]) -> dict:
    """Play every person's seat (``tokens``) to the end through the HTTP API."""
    current = state(client, game_id)
    while current["game"]["status"] != "finished":
        seat = current["to_move"]
        if seat in tokens:
            mine = state(client, game_id, tokens[seat])
            response = client.post(
                f"/api/games/{game_id}/actions",
                json={"action": choose(mine["legal"], mine), "move": mine["move_number"]},
                headers=auth(tokens[seat]),
            )
            assert response.status_code == 200, response.text
            current = state(client, game_id)
        else:
            number = current["move_number"]
            current = wait_until(client, game_id, None, lambda s, n=number: s["move_number"] > n)
    return current


def test_two_players_see_the_cards_of_the_row_nobody_took_leave_the_game(client: TestClient) -> None:
    """Two players take one row each a round; the third row's cards leave the game, and the state
    counts them (removed_cards, per kind) so that a page can show where they went."""
    created = create(client, ["human", "human"])
    game_id, tokens = created["game"]["id"], {0: created["token"]}
    tokens[1] = client.post(f"/api/games/{game_id}/join", json={"name": "Bob"}).json()["token"]
    current = state(client, game_id)
    assert current["removed_cards"] == [0] * 10
    rounds_ended = 0
    while rounds_ended < 2:
        seat = current["to_move"]
        mine = state(client, game_id, tokens[seat])
        action = choose(mine["legal"], mine)
        response = client.post(
            f"/api/games/{game_id}/actions",
            json={"action": action, "move": mine["move_number"]},
            headers=auth(tokens[seat]),
        )
        assert response.status_code == 200, response.text
        after = state(client, game_id)
        left = [0] * 10
        ended = after["round"] > current["round"] or after["game"]["status"] == "finished"
        if ended:  # the second take of a round: the row nobody took leaves
            rounds_ended += 1
            taken = int(action[1:]) - 1
            for i, row in enumerate(current["rows"]):
                if not row["taken"] and i != taken:
                    for card in row["cards"]:
                        left[card] += 1
        assert [a - b for a, b in zip(after["removed_cards"], current["removed_cards"])] == left
        current = after
    # more than two players: every row is taken, nothing leaves
    three = create(client, ["random", "random", "random"])["game"]["id"]
    assert state(client, three)["removed_cards"] == [0] * 10


@pytest.mark.slow
def test_starting_colours_chosen_are_played_through_the_api(tmp_path: Path) -> None:
    with make_client(tmp_path) as client:
        created = create(client, ["human", "human"], {"starting_colours": "chosen"})
        game_id, ann = created["game"]["id"], created["token"]
        bob = client.post(f"/api/games/{game_id}/join", json={"name": "Bob"}).json()["token"]
        tokens = {0: ann, 1: bob}
        watched = state(client, game_id)
    first = watched["first_player"]
    assert watched["start_picks_left"] == 4 and watched["to_move"] == first and watched["legal"] == []
    assert watched["pending_card"] is None and all(not r["cards"] for r in watched["rows"])
    colours = {c["token"]: c for c in watched["cards"][: watched["colours"]]}
    chosen: list[str] = []

    def choose_one(client: TestClient, pick: int) -> None:
        seat = (first + pick) % 2  # two players choose twice each, in turns
        mine = state(client, game_id, tokens[seat])
        assert mine["to_move"] == seat and mine["start_picks_left"] == 4 - pick
        assert sorted(mine["legal"]) == sorted(f"s:{t}" for t in colours if t not in chosen)
        assert state(client, game_id, tokens[1 - seat])["legal"] == []
        action = mine["legal"][-1]
        response = client.post(
            f"/api/games/{game_id}/actions", json={"action": action}, headers=auth(tokens[seat])
        )
        assert response.status_code == 200, response.text
        chosen.append(action[2:])
        entry = state(client, game_id)["log"][-1]
        colour = colours[action[2:]]
        assert entry["move"] == action and entry["seat"] == seat and entry["colour"] == colour["id"]
        assert entry["text"] == f"{['Ann', 'Bob'][seat]} chose {colour['name']} as a starting colour"

    with make_client(tmp_path) as client:
        choose_one(client, 0)
    with make_client(tmp_path) as client:  # a new server goes on with the choosing where it was
        for pick in (1, 2, 3):
            choose_one(client, pick)
        watched = state(client, game_id)
        assert watched["start_picks_left"] == 0 and watched["to_move"] == first
        assert "d" in state(client, game_id, tokens[first])["legal"]
        for seat in (0, 1):
            held = [colours[t]["id"] for i, t in enumerate(chosen) if (first + i) % 2 == seat]
            collection = watched["players"][seat]["collection"]
            assert [collection[c] for c in held] == [1, 1] and sum(collection) == 2
        final = play_seats(client, game_id, tokens)
        record = GameRecord.from_json(client.get(f"/api/games/{game_id}/record").text)
        assert [m.notation(record.rules.edition) for m in record.moves[:4]] == [f"s:{t}" for t in chosen]
        assert [s.total for s in record.replay().scores()] == final["match"]["deals"][0]["totals"]
        frames = client.get(f"/api/games/{game_id}/replay").json()["frames"]
        assert [f["start_picks_left"] for f in frames[:6]] == [4, 3, 2, 1, 0, 0]
        assert "as a starting colour" in frames[1]["entry"]["text"]
        assert frames[-1]["players"] == final["players"]


def test_bots_choose_their_starting_colours_by_themselves(client: TestClient) -> None:
    created = create(client, ["random", "random", "random"], {"starting_colours": "chosen", "match_games": 2})
    game_id = created["game"]["id"]
    final = wait_until(client, game_id, None, lambda s: s["game"]["status"] == "finished")
    for deal in (1, 2):
        record = GameRecord.from_json(client.get(f"/api/games/{game_id}/record?game={deal}").text)
        starts = [m.notation(record.rules.edition) for m in record.moves[:3]]
        assert all(m.startswith("s:") for m in starts) and len(set(starts)) == 3
        assert [s.total for s in record.replay().scores()] == final["match"]["deals"][deal - 1]["totals"]


def test_bad_actions_are_refused_and_change_nothing(client: TestClient) -> None:
    first = create(client, ["human", "human"])
    game_id, ann = first["game"]["id"], first["token"]
    bob = client.post(f"/api/games/{game_id}/join", json={"name": "Bob"}).json()["token"]
    other = create(client, ["human", "random"])["token"]
    before = state(client, game_id, ann)
    mover, waiter = (ann, bob) if before["to_move"] == 0 else (bob, ann)

    def post(body: dict, token: str | None, headers: dict | None = None) -> tuple[int, str]:
        head = headers if headers is not None else (auth(token) if token else {})
        response = client.post(f"/api/games/{game_id}/actions", json=body, headers=head)
        return response.status_code, response.json()["error"]

    assert post({"action": "d"}, None) == (403, "not_seated")
    assert post({"action": "d"}, "made-up") == (403, "bad_token")
    assert post({"action": "d"}, other) == (403, "bad_token")  # a seat of another game
    assert post({"action": "d"}, None, {"Authorization": "Basic abc"}) == (401, "bad_token")
    assert post({"action": "d"}, waiter) == (409, "not_your_turn")  # the other seat's token
    assert post({"action": "p1"}, mover) == (400, "illegal")
    assert post({"action": "t1"}, mover) == (400, "illegal")
    assert post({"action": "fly"}, mover) == (400, "bad_action")
    assert post({"action": "d", "move": 5}, mover) == (409, "stale")
    assert post({"action": "d", "bogus": 1}, mover) == (422, "bad_request")
    assert post({"action": "d" * 100}, mover) == (422, "bad_request")
    illegal = client.post(f"/api/games/{game_id}/actions", json={"action": "p1"}, headers=auth(mover)).json()
    assert "draw first" in illegal["message"]
    assert state(client, game_id, ann) == before
    ok = client.post(f"/api/games/{game_id}/actions", json={"action": "d", "move": 0}, headers=auth(mover))
    assert ok.status_code == 200 and ok.json()["move_number"] == 1


def test_a_failed_commit_plays_nothing(client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    created = create(client, ["human", "random"])
    game_id, token = created["game"]["id"], created["token"]
    current = wait_until(client, game_id, token, lambda s: bool(s["legal"]))
    real = store.store_move

    def broken(session: Any, write: Any) -> None:
        real(session, write)
        raise OSError("disk full")  # in the transaction: it rolls back, the move is not stored

    monkeypatch.setattr(store, "store_move", broken)
    response = client.post(f"/api/games/{game_id}/actions", json={"action": "d"}, headers=auth(token))
    assert response.status_code == 503 and response.json()["error"] == "storage"
    monkeypatch.setattr(store, "store_move", real)
    assert state(client, game_id, token) == current
    assert (
        client.post(f"/api/games/{game_id}/actions", json={"action": "d"}, headers=auth(token)).status_code
        == 200
    )


@pytest.mark.slow
def test_every_accepted_move_is_in_the_database_and_a_new_server_resumes(tmp_path: Path) -> None:
    with make_client(tmp_path) as client:
        created = create(client, ["human", "greedy", "random"])
        game_id, token = created["game"]["id"], created["token"]
        current = state(client, game_id, token)
        for _ in range(12):
            current = wait_until(client, game_id, token, lambda s: bool(s["legal"]))
            response = client.post(
                f"/api/games/{game_id}/actions", json={"action": choose(current["legal"], current)},
                headers=auth(token),
            )  # fmt: skip
            with service_of(client).games.sessions() as session:
                stored = session.scalar(select(func.count()).where(MoveRow.game_id == game_id))
            assert stored >= response.json()["move_number"]
        current = wait_until(client, game_id, token, lambda s: bool(s["legal"]))
    with make_client(tmp_path) as client:
        again = state(client, game_id, token)
        assert again == current
        final = play_http(client, game_id, token)
        assert final["game"]["status"] == "finished"
        assert final["log"][: len(current["log"])] == current["log"]


# -------------------------------------------------------------- websocket


def receive_until(ws: Any, predicate: Any, limit: int = 500) -> dict:
    for _ in range(limit):
        message = ws.receive_json()
        if predicate(message):
            return message
    raise AssertionError("the expected message did not come")


def is_state(message: dict) -> bool:
    return message["type"] == "state"


def test_websocket_seats_and_spectators_see_every_move_live(client: TestClient) -> None:
    created = create(client, ["human", "human"])
    game_id, ann = created["game"]["id"], created["token"]
    bob = client.post(f"/api/games/{game_id}/join", json={"name": "Bob"}).json()["token"]
    url = f"/api/games/{game_id}/ws"
    with (
        client.websocket_connect(url) as ws_ann,
        client.websocket_connect(url) as ws_bob,
        client.websocket_connect(url) as ws_watch,
    ):
        for ws in (ws_ann, ws_bob, ws_watch):
            assert receive_until(ws, is_state)["state"]["you"] is None
        ws_ann.send_json({"type": "hello", "token": ann})
        assert receive_until(ws_ann, lambda m: m["type"] == "welcome")["seat"] == 0
        ws_bob.send_json({"type": "hello", "token": bob})
        assert receive_until(ws_bob, lambda m: m["type"] == "welcome")["seat"] == 1
        seen = receive_until(ws_ann, lambda m: is_state(m) and m["state"]["game"]["seats"][1]["online"])[
            "state"
        ]
        players = {0: ws_ann, 1: ws_bob}
        for _ in range(8):
            mover = players[seen["to_move"]]
            action = choose(
                seen["legal"] or state(client, game_id, [ann, bob][seen["to_move"]])["legal"], seen
            )
            mover.send_json({"type": "act", "action": action, "move": seen["move_number"]})
            number = seen["move_number"] + 1
            views = [
                receive_until(ws, lambda m, n=number: is_state(m) and m["state"]["move_number"] == n)["state"]
                for ws in (ws_ann, ws_bob, ws_watch)
            ]
            assert {v["log"][-1]["move"][0] for v in views} == {action[0]}
            assert views[2]["you"] is None and views[2]["legal"] == []
            assert [v["you"] for v in views[:2]] == [0, 1]
            seen = views[0] if views[0]["to_move"] == 0 else views[1]
            assert seen["legal"], "the seat to move gets its legal actions"


def test_websocket_bad_input_gets_clear_errors_and_the_game_goes_on(client: TestClient) -> None:
    created = create(client, ["human", "human"])
    game_id, ann = created["game"]["id"], created["token"]
    bob = client.post(f"/api/games/{game_id}/join", json={"name": "Bob"}).json()["token"]
    other_game_token = create(client, ["human", "random"])["token"]
    before = state(client, game_id)
    first = before["to_move"]
    mover, waiter = (ann, bob) if first == 0 else (bob, ann)

    def error_for(ws: Any, payload: Any) -> dict:
        if isinstance(payload, bytes):
            ws.send_bytes(payload)
        elif isinstance(payload, str):
            ws.send_text(payload)
        else:
            ws.send_json(payload)
        return receive_until(ws, lambda m: m["type"] == "error")

    with client.websocket_connect(f"/api/games/{game_id}/ws") as ws:
        receive_until(ws, is_state)
        assert error_for(ws, "{oops")["error"] == "bad_json"
        assert error_for(ws, "[1, 2]")["error"] == "bad_message"
        assert error_for(ws, b"\xff\xfe")["error"] == "bad_json"
        unknown = error_for(ws, {"type": "teleport"})
        assert unknown["error"] == "unknown_type" and "hello" in unknown["message"]
        assert error_for(ws, {"type": "act"})["error"] == "bad_message"  # no action
        assert error_for(ws, {"type": "act", "action": "d", "extra": True})["error"] == "bad_message"
        assert error_for(ws, {"type": "act", "action": "d"})["error"] == "not_seated"
        assert error_for(ws, {"type": "hello", "token": other_game_token})["error"] == "bad_token"
        too_big = error_for(ws, json.dumps({"type": "ping", "pad": "x" * 5000}))
        assert too_big["error"] == "too_large" and "4096" in too_big["message"]
        ws.send_json({"type": "hello", "token": waiter})
        receive_until(ws, lambda m: m["type"] == "welcome")
        assert error_for(ws, {"type": "act", "action": "d"})["error"] == "not_your_turn"
        ws.send_json({"type": "hello", "token": mover})
        receive_until(ws, lambda m: m["type"] == "welcome")
        assert error_for(ws, {"type": "act", "action": "t9"})["error"] == "bad_action"
        illegal = error_for(ws, {"type": "act", "action": "p2"})
        assert illegal["error"] == "illegal" and "draw first" in illegal["message"]
        assert error_for(ws, {"type": "act", "action": "d", "move": 99})["error"] == "stale"
        ws.send_json({"type": "ping"})
        assert receive_until(ws, lambda m: m["type"] in ("pong", "error"))["type"] == "pong"
        assert state(client, game_id)["log"] == before["log"]  # nothing was played
        ws.send_json({"type": "act", "action": "d", "move": 0})
        after = receive_until(ws, lambda m: is_state(m) and m["state"]["move_number"] == 1)["state"]
        assert after["pending_card"] is not None and after["legal"][0].startswith("p")


def test_a_flood_is_refused_then_the_connection_is_closed(tmp_path: Path) -> None:
    settings = Settings(bot_delay=0.0, messages_per_second=1.0, message_burst=5, flood_disconnect_after=20)
    with make_client(tmp_path, settings) as client:
        game_id = create(client, ["human", "random"])["game"]["id"]
        with client.websocket_connect(f"/api/games/{game_id}/ws") as ws:
            receive_until(ws, is_state)
            for _ in range(40):
                ws.send_json({"type": "ping"})
            messages = []
            with pytest.raises(Exception):  # noqa: B017 - the server closes the socket
                while True:
                    messages.append(ws.receive_json())
            kinds = [m.get("error", m["type"]) for m in messages]
            assert kinds.count("pong") == 5
            assert "rate_limited" in kinds and kinds[-1] == "flood"
        # the server is fine, and so is the game
        assert client.get(f"/api/games/{game_id}").status_code == 200


def test_unknown_game_over_websocket(client: TestClient) -> None:
    with client.websocket_connect("/api/games/nothing/ws") as ws:
        message = ws.receive_json()
        assert message["type"] == "error" and message["error"] == "not_found"


# ---------------------------------------------------------------- secrecy


def order_forms(cards: tuple[int, ...], edition: Edition) -> list[str]:
    """An order of cards in every form a message could carry it, whole or six cards in a row."""
    tokens = [card_token(c, edition) for c in cards]
    forms = [" ".join(tokens), "".join(tokens), json.dumps(tokens), json.dumps(list(cards))]
    for i in range(len(tokens) - 5):
        forms.append(json.dumps(tokens[i : i + 6], separators=(",", ":")))
        forms.append(json.dumps(list(cards[i : i + 6]), separators=(",", ":")))
        forms.append("".join(tokens[i : i + 6]))
    return forms


def secret_forms(game: Game) -> tuple[str, list[str]]:
    """The seed, and the deck order in every form a message could carry it."""
    return str(game.setup.seed), order_forms(game.setup.deck, game.rules.edition)


def keys_of(value: Any) -> set[str]:
    if isinstance(value, dict):
        return set(value) | set().union(*(keys_of(v) for v in value.values()))
    if isinstance(value, list):
        return set().union(*(keys_of(v) for v in value)) if value else set()
    return set()


@pytest.mark.parametrize(
    ("rules", "bot"),
    [({"edition": "modern"}, "greedy"), ({"edition": "modern", "starting_colours": "chosen"}, "random")],
)
@pytest.mark.slow
def test_no_message_or_response_of_a_whole_game_holds_the_deck_order(
    client: TestClient, rules: dict[str, str], bot: str
) -> None:
    texts: list[str] = []

    def get(path: str, token: str | None = None) -> dict:
        response = client.get(path, headers=auth(token) if token else {})
        texts.append(response.text)
        return response.json()

    texts.append(client.get("/api/options").text)
    created_response = client.post(
        "/api/games",
        json={"seats": [{"kind": "human"}, {"kind": "human"}, {"kind": "bot", "bot": bot}],
              "creator_name": "Ann", "rules": rules},
    )  # fmt: skip
    texts.append(created_response.text)
    created = created_response.json()
    game_id, ann = created["game"]["id"], created["token"]
    joined = client.post(f"/api/games/{game_id}/join", json={"name": "Bob"})
    texts.append(joined.text)
    bob = joined.json()["token"]
    live = service_of(client).games.live[game_id]
    seed, forms = secret_forms(live.game)
    tokens = {0: ann, 1: bob}
    url = f"/api/games/{game_id}/ws"
    with (
        client.websocket_connect(url) as ws0,
        client.websocket_connect(url) as ws1,
        client.websocket_connect(url) as spy,
    ):
        sockets = {0: ws0, 1: ws1}
        for seat, ws in sockets.items():
            ws.send_json({"type": "hello", "token": tokens[seat]})
            while True:
                message = ws.receive_json()
                texts.append(json.dumps(message))
                if message["type"] == "welcome":
                    break

        def drain(upto: int) -> None:
            """Read every socket up to the state after move ``upto`` (states come in order)."""
            for ws in (ws0, ws1, spy):
                while True:
                    message = ws.receive_json()
                    texts.append(json.dumps(message))
                    if is_state(message) and message["state"]["move_number"] >= upto:
                        break

        while live.status != "finished":
            current = get(f"/api/games/{game_id}")
            seat = current["to_move"]
            if seat is None:
                # the bot's move ended the game after the loop's check (it moves on the server's loop)
                drain(current["move_number"])
                continue
            if seat in sockets:
                mine = get(f"/api/games/{game_id}", tokens[seat])
                action = choose(mine["legal"], mine)
                sockets[seat].send_json({"type": "act", "action": action, "move": mine["move_number"]})
            else:
                wait_until(client, game_id, None, lambda s, n=current["move_number"]: s["move_number"] > n)
            drain(current["move_number"] + 1)
            get("/api/games")
        spy.send_json({"type": "ping"})
        while True:
            message = spy.receive_json()
            texts.append(json.dumps(message))
            if message["type"] == "pong":
                break
    assert live.status == "finished" and len(texts) > 100
    # the order the cards came up in (with starting colours chosen, not the dealt box's order)
    drawn = tuple(c for event in live.game.events() for c in event.revealed if c != LAST_ROUND)
    forms += order_forms(drawn, live.rules.edition)
    for text in texts:
        assert seed not in text
        assert not keys_of(json.loads(text)) & {"deck", "seed", "setup"}
        compact = json.dumps(json.loads(text), separators=(",", ":"))
        for form in forms:
            assert form not in text and form not in compact, form


# ------------------------------------------------------------------- hints


def test_a_hint_values_every_legal_action_for_the_seat_to_move(tmp_path: Path) -> None:
    with make_client(tmp_path, Settings(bot_delay=0.0, hint_budget=0.05, requests_per_minute=0)) as client:
        assert client.get("/api/options").json()["hints"] is True
        created = create(client, ["human", "human"])
        game_id, ann = created["game"]["id"], created["token"]
        bob = client.post(f"/api/games/{game_id}/join", json={"name": "Bob"}).json()["token"]
        current = state(client, game_id, ann)
        mover, waiter = (ann, bob) if current["to_move"] == 0 else (bob, ann)
        legal = state(client, game_id, mover)["legal"]
        response = client.post(f"/api/games/{game_id}/hint", headers=auth(mover))
        assert response.status_code == 200, response.text
        hint = response.json()
        assert hint["move"] == 0 and hint["best"] == hint["actions"][0]["action"]
        assert {a["action"] for a in hint["actions"]} <= set(legal) and hint["best"] in legal
        # the move the search plays first (the most simulated), the others by its objective
        first, *rest = hint["actions"]
        assert first["simulations"] == max(a["simulations"] for a in hint["actions"])
        assert [a["utility"] for a in rest] == sorted((a["utility"] for a in rest), reverse=True)
        assert all(0 <= a["win_probability"] <= 1 and a["simulations"] > 0 for a in hint["actions"])
        assert all(0 <= a["win_share"] <= 1 for a in hint["actions"])
        refused = client.post(f"/api/games/{game_id}/hint", headers=auth(waiter))
        assert refused.status_code == 409 and refused.json()["error"] == "not_your_turn"
        assert client.post(f"/api/games/{game_id}/hint").json()["error"] == "not_seated"
        with client.websocket_connect(f"/api/games/{game_id}/ws") as ws:
            ws.send_json({"type": "hello", "token": mover})
            ws.send_json({"type": "hint"})
            message = receive_until(ws, lambda m: m["type"] in ("hint", "error"))
            assert message["type"] == "hint" and message["best"] in legal


def test_a_hint_never_names_an_action_the_rules_forbid(tmp_path: Path) -> None:
    with make_client(tmp_path, Settings(bot_delay=0.0, hint_budget=0.05, requests_per_minute=0)) as client:
        created = create(client, ["human", "human"], {"starting_colours": "chosen"})
        game_id, ann = created["game"]["id"], created["token"]
        bob = client.post(f"/api/games/{game_id}/join", json={"name": "Bob"}).json()["token"]
        mover = [ann, bob][state(client, game_id)["to_move"]]
        legal = state(client, game_id, mover)["legal"]
        response = client.post(f"/api/games/{game_id}/hint", headers=auth(mover))
        if response.status_code == 200:
            hint = response.json()
            assert hint["best"] in legal and {a["action"] for a in hint["actions"]} <= set(legal)
        else:  # an analysis that cannot value this decision gets a plain refusal
            assert response.status_code == 409 and response.json()["error"] == "no_hint", response.text


# -------------------------------------------------------------- PostgreSQL

POSTGRESQL = os.environ.get("COLORETTO_TEST_POSTGRESQL")


# .ci/run starts a PostgreSQL server and sets the URL: in CI this test must run.
@pytest.mark.skipif(
    not POSTGRESQL and not os.environ.get("CI"),
    reason="set COLORETTO_TEST_POSTGRESQL=postgresql://… to test on PostgreSQL (.ci/run does)",
)
def test_postgresql_plays_stores_and_resumes_a_game() -> None:
    assert POSTGRESQL, "CI must provide COLORETTO_TEST_POSTGRESQL (see .ci/run)"
    with TestClient(create_app(POSTGRESQL, FAST)) as client:
        created = create(client, ["human", "greedy"], {"match_games": 2})
        game_id, token = created["game"]["id"], created["token"]
        current = wait_until(client, game_id, token, lambda s: bool(s["legal"]))
        client.post(
            f"/api/games/{game_id}/actions", json={"action": current["legal"][0]}, headers=auth(token)
        )
        current = wait_until(client, game_id, token, lambda s: bool(s["legal"]))
    with TestClient(create_app(POSTGRESQL, FAST)) as client:
        assert state(client, game_id, token) == current
        final = play_http(client, game_id, token)
        assert final["game"]["status"] == "finished" and len(final["match"]["deals"]) == 2
        record = GameRecord.from_json(client.get(f"/api/games/{game_id}/record?game=2").text)
        assert [s.total for s in record.replay().scores()] == final["match"]["deals"][1]["totals"]


def test_a_bot_that_fails_cannot_stall_a_game(client: TestClient) -> None:
    from coloretto.bots import Bot, register_bot, unregister_bot

    class Broken(Bot):
        def choose(self, observation: Any) -> Any:
            if self.rng.random() < 0.5:
                raise RuntimeError("the bot fell over")
            return "not an action"

    register_bot("broken", lambda _options, seed: Broken(seed), "always wrong")
    try:
        created = create(client, ["human", "broken"])
        final = play_http(client, created["game"]["id"], created["token"])
    finally:
        unregister_bot("broken")
    assert final["game"]["status"] == "finished"
    assert any(entry["seat"] == 1 for entry in final["log"])
