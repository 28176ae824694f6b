"""Protocol 2 (coloretto.web.table.changes): the whole view once, then what changed.

The view a client rebuilds from the changes it is sent must be, after every change, the whole
table the server sends a client of protocol 1 at the same moment: for whole matches in every
variant, for every seat and a spectator, with watchers that join late, take another seat, and
miss a message (they ask with ``sync``).
"""

from __future__ import annotations

import dataclasses
import json
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.websockets import WebSocketDisconnect

from coloretto.match import Match
from coloretto.rules import Rules
from coloretto.web.runtime.broadcast import Broadcaster
from coloretto.web.table import views
from coloretto.web.table.changes import NOT_IN_VIEW, SentView, apply_change, change_message, view_changes
from coloretto.web.table.live import LiveGame, SeatState, now_utc
from coloretto.web.table.watchers import Subscriber
from tests.strategies import rules_strategy
from tests.test_web import create, is_state, make_client, receive_until


class Client:
    """A watcher as a page is: protocol 1 keeps the last whole table, protocol 2 rebuilds it from
    the changes (asking for the whole view when one does not follow the version it has)."""

    def __init__(self, broadcaster: Broadcaster, live: LiveGame, seat: int | None, protocol: int) -> None:
        self.sub = Subscriber(10_000, protocol)
        self.sub.seat = seat
        self.broadcaster, self.live = broadcaster, live
        self.table: dict[str, Any] | None = None
        self.version: int | None = None
        self.bytes = {"state": 0, "change": 0}
        self.changes = 0
        self.syncs = 0
        self.missed = False  #: a change never arrived, and none came after it yet to show it
        live.subscribers.add(self.sub)
        assert broadcaster.one(live, self.sub)

    def read(self, lose_one: bool = False) -> None:
        """Every message queued for it, in order; ``lose_one``: the first change never arrives."""
        while not self.sub.queue.empty():
            text = self.sub.queue.get_nowait()
            assert isinstance(text, str)
            message = json.loads(text)
            self.bytes[message["type"]] += len(text.encode())
            if message["type"] == "state":
                self.table, self.version = message["state"], message.get("v")
                assert (self.version is None) == (self.sub.protocol == 1)
                continue
            assert message["type"] == "change" and self.sub.protocol == 2
            self.changes += 1
            if lose_one:
                lose_one, self.missed = False, True
                continue
            self.missed = False
            if self.table is None or message["from"] != self.version:
                self.syncs += 1
                assert self.broadcaster.one(self.live, self.sub)  # what "sync" does
                continue
            self.table = apply_change(self.table, message)
            self.version = message["v"]


def new_live(rules: Rules, seed: int) -> LiveGame:
    seats = [SeatState("bot", "random", None, None) for _ in range(rules.players)]
    now = now_utc()
    return LiveGame(
        id="g", name="g", status="playing", rules=rules, seed=seed, seats=seats,
        created_at=now, updated_at=now, match=Match(rules, seed),
    )  # fmt: skip


def broadcaster() -> Broadcaster:
    return Broadcaster(
        lambda live, seat, shared: views.live_view(live, seat, 0.5, shared), presence_interval=0.1
    )


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rules=rules_strategy(max_match_games=2), seed=st.integers(0, 2**32 - 1))
def test_the_table_rebuilt_from_changes_is_the_whole_table_after_every_change(
    rules: Rules, seed: int
) -> None:
    chance = random.Random(seed)
    live = new_live(rules, seed)
    fanout = broadcaster()
    classes: list[int | None] = [None, *range(rules.players)]
    clients = [Client(fanout, live, seat, protocol) for seat in classes for protocol in (1, 2)]
    late: list[Client] = []
    moves = taken_back = 0
    while True:
        game = live.match.game
        if game.is_over:
            if live.match.is_over:
                break
            live.match.next_game()
        else:
            if len(game) and chance.random() < 0.05:  # a move taken back (its commit failed) ...
                live.match.pop()
                taken_back += 1
            live.match.push(chance.choice(game.legal_actions))  # ... and another in its place
            moves += 1
        # what else changes a table between moves: a bot thinking, who is online and watching
        live.thinking = chance.choice([None, *range(rules.players)])
        if chance.random() < 0.1:
            live.remote_online["other"] = (
                frozenset({chance.randrange(rules.players)}),
                chance.randrange(3),
                0.0,
            )
        if chance.random() < 0.05:  # someone joins late: its whole view, then changes from it
            late.append(Client(fanout, live, chance.choice(classes), 2))
        if late and chance.random() < 0.05:  # a watcher takes another seat: its whole view again
            mover = chance.choice(late)
            mover.sub.seat = chance.choice(classes)
            assert fanout.one(live, mover.sub)
        assert fanout.state(live)
        # the log kept from move to move is the one made anew from the game
        assert live.log_texts(live.deal) == dataclasses.replace(live, _told={}).log_texts(live.deal)
        for client in clients + late:
            client.read(lose_one=client.sub.protocol == 2 and chance.random() < 0.02)
        whole = {c.sub.seat: c.table for c in clients if c.sub.protocol == 1}
        for client in clients + late:
            if not client.missed:  # (one that missed a change learns it from the next)
                assert client.table == whole[client.sub.seat], (moves, client.sub.seat, client.sub.protocol)
    assert moves > 0
    for client in clients:
        if client.sub.protocol == 2:
            # every move was a change, not a whole table (a move taken back and made again is none)
            assert client.changes >= moves - taken_back


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rules=rules_strategy(max_match_games=2), seed=st.integers(0, 2**32 - 1))
def test_each_seats_live_view_is_its_whole_table_less_the_log(rules: Rules, seed: int) -> None:
    # the seats' views are made from the spectators' (made once per broadcast): each must be the
    # table that seat is shown on its own, in every variant, at every move, a resigned seat too
    chance = random.Random(seed)
    live = new_live(rules, seed)
    while not live.match.is_over:
        if live.match.game.is_over:
            live.match.next_game()
        else:
            live.match.push(chance.choice(live.match.game.legal_actions))
        if chance.random() < 0.02:
            live.seats[chance.randrange(rules.players)].resigned = True
        live.thinking = chance.choice([None, *range(rules.players)])
        shared: dict[str, Any] = {}
        for seat in chance.sample([None, *range(rules.players)], rules.players + 1):
            whole = views.table_state(live, seat, 0.5).model_dump(mode="json", exclude=set(NOT_IN_VIEW))
            assert views.live_view(live, seat, 0.5, shared) == whole, (len(live.match.game), seat)
            assert list(views.live_view(live, seat, 0.5, shared)) == list(whole)  # the same order


def test_a_change_of_a_four_player_move_is_a_small_part_of_the_table() -> None:
    """What the protocol is for: a spectator of a four-player game is sent a few hundred bytes a
    move, not the table (about 5 to 12 KB as the game goes on)."""
    rules = Rules(players=4)
    live = new_live(rules, 7)
    fanout = broadcaster()
    whole, changes = Client(fanout, live, None, 1), Client(fanout, live, None, 2)
    chance = random.Random(7)
    for _ in range(60):
        live.match.push(chance.choice(live.match.game.legal_actions))
        assert fanout.state(live)
        whole.read()
        changes.read()
    assert changes.table == whole.table
    per_change = changes.bytes["change"] / changes.changes
    per_table = whole.bytes["state"] / 61
    assert per_change < per_table / 8, (per_change, per_table)


def test_an_unchanged_view_is_not_sent_again_to_a_client_of_protocol_2() -> None:
    live = new_live(Rules(players=3), 3)
    fanout = broadcaster()
    old, new = Client(fanout, live, 0, 1), Client(fanout, live, 0, 2)
    old.read()
    new.read()
    assert fanout.state(live)  # nothing changed: protocol 1 is sent the table again, as it always was
    assert old.sub.queue.qsize() == 1 and new.sub.queue.empty()


def test_a_view_that_changes_shape_is_sent_whole_where_it_changed() -> None:
    changed, removed = view_changes(
        {"rows": [{"cards": [1]}, {"cards": []}], "round": 1, "clock": {"banks": [1.0, 2.0]}},
        {"rows": [{"cards": [1, 4]}], "round": 2, "clock": None},
    )
    assert changed == {"rows": [{"cards": [1, 4]}], "round": 2, "clock": None}
    assert removed == []
    view = {"a": {"b": 1, "c": 2}, "log": [0]}
    changed, removed = view_changes({"a": {"b": 1, "c": 2}}, {"a": {"b": 1}})
    assert removed == ["a/c"]
    assert apply_change(view, {"set": changed, "unset": removed}) == {"a": {"b": 1}, "log": [0]}
    assert view == {"a": {"b": 1, "c": 2}, "log": [0]}  # left as it was


# ------------------------------------------------------------- over a WebSocket


class Rebuilt:
    """A WebSocket client of protocol 2: the view it rebuilt after each message."""

    def __init__(self, ws: Any) -> None:
        self.ws = ws
        self.view: dict[str, Any] | None = None
        self.version: int | None = None

    def next_view(self) -> dict[str, Any]:
        """The view after the next ``state`` or ``change`` (a change must follow its version)."""
        while True:
            message = self.ws.receive_json()
            if message["type"] == "state":
                self.view, self.version = message["state"], message["v"]
                return self.view
            if message["type"] == "change":
                assert self.view is not None and message["from"] == self.version, message
                self.view, self.version = apply_change(self.view, message), message["v"]
                return self.view


def finished(view: dict[str, Any]) -> bool:
    return bool(view["game"]["status"] == "finished")


def whole_tables_until_finished(ws: Any) -> list[dict[str, Any]]:
    tables: list[dict[str, Any]] = []
    while not tables or not finished(tables[-1]):
        message = ws.receive_json()
        if message["type"] == "state":
            assert "v" not in message  # protocol 1, the default: as before
            tables.append(message["state"])
    return tables


def test_a_whole_game_played_over_protocol_2_shows_what_protocol_1_shows(tmp_path: Path) -> None:
    with make_client(tmp_path) as client:
        created = create(client, ["human", "random", "greedy"])
        game_id, token = created["game"]["id"], created["token"]
        url = f"/api/games/{game_id}/ws"
        with (
            client.websocket_connect(f"{url}?protocol=2") as ann_socket,
            client.websocket_connect(url) as ann_whole,
            client.websocket_connect(f"{url}?protocol=2") as watcher_socket,
            client.websocket_connect(url) as watcher_whole,
        ):
            ann, watcher = Rebuilt(ann_socket), Rebuilt(watcher_socket)
            ann.next_view()
            ann_socket.send_json({"type": "hello", "token": token})
            ann_whole.send_json({"type": "hello", "token": token})
            seen = ann.next_view()
            acted = -1
            while not finished(seen):
                # Ann plays from the view she rebuilt: its legal actions are hers
                if seen["you"] == 0 and seen["to_move"] == 0 and seen["move_number"] > acted:
                    acted = seen["move_number"]
                    ann_socket.send_json({"type": "act", "action": seen["legal"][-1], "move": acted})
                seen = ann.next_view()
            rebuilt = [watcher.next_view()]
            while not finished(rebuilt[-1]):
                rebuilt.append(watcher.next_view())
            # every view rebuilt is a whole table sent to protocol 1, in the same order (once Ann is
            # online: before, the two watchers had not all seen each other connect)
            wholes = whole_tables_until_finished(watcher_whole)
            at = 0
            compared = [v for v in rebuilt if v["game"]["seats"][0]["online"]]
            for view in compared:
                while wholes[at] != view:
                    at += 1
            assert len(compared) > 20
            assert rebuilt[-1] == wholes[-1] and len(wholes[-1]["log"]) > 20
            ann_wholes = [t for t in whole_tables_until_finished(ann_whole) if t["you"] == 0]
            assert ann.view == ann_wholes[-1]
            # "sync": the whole view again, at the version the client has
            watcher_socket.send_json({"type": "sync"})
            again = receive_until(watcher_socket, is_state)
            assert again["state"] == watcher.view and again["v"] == watcher.version


def test_a_protocol_the_server_does_not_speak_is_refused_with_a_clear_error(tmp_path: Path) -> None:
    with make_client(tmp_path) as client:
        game_id = create(client, ["human", "random"])["game"]["id"]
        with client.websocket_connect(f"/api/games/{game_id}/ws?protocol=3") as ws:
            error = ws.receive_json()
            assert error["error"] == "bad_protocol" and "protocols 1, 2" in error["message"]
            with pytest.raises(WebSocketDisconnect) as closed:
                ws.receive_json()
            assert closed.value.code == 1008


def test_a_log_that_went_another_way_is_sent_anew() -> None:
    """A move taken back and another in its place: the client's log is replaced, not extended."""
    view = {"round": 1}
    before = SentView(1, view, 1, ['{"move":"d"}', '{"move":"p1"}'])
    went_on = json.loads(change_message(before, SentView(2, view, 1, [*before.log, '{"move":"t2"}'])))
    assert (went_on["log_from"], went_on["log"]) == (2, [{"move": "t2"}])
    other_way = json.loads(change_message(before, SentView(2, view, 1, ['{"move":"d"}', '{"move":"p2"}'])))
    assert (other_way["log_from"], other_way["log"]) == (0, [{"move": "d"}, {"move": "p2"}])
    next_game = json.loads(change_message(before, SentView(2, view, 2, [])))
    assert (next_game["log_from"], next_game["log"]) == (0, [])
    assert "log" not in json.loads(change_message(before, SentView(2, {"round": 2}, 1, before.log)))
