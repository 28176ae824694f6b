"""The browser tests' key scenarios against two processes: real ``coloretto serve`` processes on one
PostgreSQL database and a real redis-server, behind a real nginx running docs/nginx.conf
(tests/servers.py), the pages opening the nginx address as a person's browser would.

Two people play each other live with their pages' WebSockets on different processes (every move
crosses Redis to reach the other page); a person plays bots to the end; a page whose process is
SIGKILLed reconnects by itself through nginx to the other process, which takes the game over; a
page whose process is restarted (SIGTERM, as a deploy does) goes on through the other one without
a word on the screen, its move sent as the signal came played.

Which process a page's WebSocket went through is read from the kernel's table of open TCP
connections: nginx keeps no idle connection to a server, so once a page is connected and idle,
the connections a server holds are its WebSockets. Waits are for what the page shows; the
timeouts are hang guards.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.test_browser import (
    BOT_TIMEOUT,
    TIMEOUT,
    create_game,
    move_number,
    new_page,
    play_one_turn,
    wait_for_move_after,
    wait_for_my_turn_or_end,
)
from tests.servers import Cluster, require_postgresql, stored_moves
from tests.test_cluster_serve import assert_no_tracebacks, established_connections

pytestmark = [pytest.mark.filterwarnings("ignore::DeprecationWarning"), pytest.mark.slow]

#: s, hang guard for the WebSockets of the pages to settle on the servers
SETTLE_TIMEOUT = 30.0
#: ms, hang guard for a page to reconnect after its process died: the page retries after 0.5, 1,
#: 2, 4 ... s, and the other process takes the dead one's game over within seconds
RECONNECT_TIMEOUT = 60_000
#: how often a page is loaded again at most to get its WebSocket onto the process wanted
ATTEMPTS = 12
#: a move of the game's log as it is shown, seen on another page
LOG_HAS_TEXT = "text => [...document.querySelectorAll('#log li')].some(li => li.textContent === text)"
#: records every text the page's connection line shows (a reconnection flashes by)
CONNECTION_SCRIPT = """
window.__connection = [];
new MutationObserver(() => {
  const line = document.getElementById("connection");
  const seen = window.__connection;
  if (line && seen[seen.length - 1] !== line.textContent) seen.push(line.textContent);
}).observe(document, { subtree: true, childList: true, characterData: true });
"""


def two_processes(directory: Path, request: pytest.FixtureRequest) -> Cluster:
    """Two processes and nginx, not started yet (a skip without PostgreSQL; under CI a failure, as
    for a missing redis-server or nginx), bots at the browser tests' delay. The session's first search
    runs in this process first (the ``compiled_search`` fixture)."""
    url = require_postgresql()
    request.getfixturevalue("compiled_search")
    return Cluster(directory, url, size=2, nginx=True, bot_delay=0.02)


@pytest.fixture
def cluster(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Cluster]:
    """A cluster of its own for each test: every cluster empties the one database first, and
    the last test kills a process."""
    with two_processes(tmp_path, request) as started:
        yield started


def front(cluster: Cluster) -> str:
    assert cluster.nginx is not None
    return cluster.nginx.url


def websockets_per_server(cluster: Cluster, total: int) -> list[int]:
    """Connections each server holds once they add up to ``total`` (the pages' WebSockets): more
    are the last requests' connections, still closing."""
    deadline = time.monotonic() + SETTLE_TIMEOUT
    while True:
        counts = [established_connections(s.port) if s.alive else 0 for s in cluster.servers]
        if sum(counts) == total:
            return counts
        assert time.monotonic() < deadline, f"connections to the servers: {counts}, expected {total} in all"
        time.sleep(0.05)  # connections of earlier requests closing: the kernel's table has no event


def wait_connected(page: Any, text: str, timeout: float = TIMEOUT) -> None:
    """Until the page's connection line says ``text`` ("connected · seat 1", "watching")."""
    page.wait_for_function(
        "text => document.getElementById('connection').textContent === text", arg=text, timeout=timeout
    )


def seated_or_refused(page: Any, connected: str) -> str:
    """Wait until the page sits at its seat (its connection line says ``connected``) or shows an
    error; the error's text, or "" when seated."""
    page.wait_for_function(
        "text => document.getElementById('connection').textContent === text"
        " || document.querySelector('#toast.error:not([hidden])') !== null",
        arg=connected,
        timeout=TIMEOUT,
    )
    if page.inner_text("#connection") == connected:
        return ""
    return str(page.inner_text("#toast"))


def reload_until(cluster: Cluster, page: Any, connected: str, wanted: list[int]) -> None:
    """Load ``page`` again until the servers hold the WebSockets as ``wanted`` says (a count per
    server). nginx sends requests round robin; a reload makes the same requests each time, so an
    extra request through nginx every other time moves the page's WebSocket to the other server."""
    with httpx.Client(base_url=front(cluster), timeout=15.0, trust_env=False) as client:
        for attempt in range(ATTEMPTS):
            counts = websockets_per_server(cluster, sum(wanted))
            if counts == wanted:
                return
            if attempt % 2:
                assert client.get("/api/health").status_code == 200
            page.reload()
            wait_connected(page, connected)
    pytest.fail(f"nginx never sent the page's WebSocket where wanted: {counts}, wanted {wanted}")


def next_request_to(cluster: Cluster, wanted: int) -> None:
    """Make nginx send the next request to server ``wanted``: its round robin alternates between
    the two, so the next request after one that the other server answered goes to this one."""
    other = cluster.servers[1 - wanted].process_id
    with httpx.Client(base_url=front(cluster), timeout=15.0, trust_env=False) as client:
        for _ in range(4):
            if client.get("/api/health").json()["process"] == other:
                return
    pytest.fail("nginx answered from one process only")


def served_a_websocket(cluster: Cluster, game_id: str) -> list[bool]:
    """Whether each server's log shows a WebSocket of the game accepted (uvicorn logs each; the
    page asks for the live protocol 2)."""
    line = f'"WebSocket /api/games/{game_id}/ws?protocol=2" [accepted]'
    return [line in server.output for server in cluster.servers]


def test_two_people_on_two_processes_see_each_others_moves_live(cluster: Cluster, browser: Any) -> None:
    base = front(cluster)
    ann = new_page(browser)
    ann.add_init_script(CONNECTION_SCRIPT)
    game_id = create_game(ann, base, "Ann", ["human", "human", "bot:random"])
    assert "Waiting for 1 more player" in ann.inner_text("#turn")
    wait_connected(ann, "connected · seat 1")
    ann_server = websockets_per_server(cluster, 1).index(1)
    # Bob opens the invite link in another browser context; his page's WebSocket must go through
    # the other process than Ann's
    bob = new_page(browser, width=390, height=844)
    bob.add_init_script(CONNECTION_SCRIPT)
    bob.goto(ann.input_value("#invite-link"))
    wait_connected(bob, "watching")
    reload_until(cluster, bob, "watching", [1, 1])
    assert websockets_per_server(cluster, 2) == [1, 1]
    # the process that does not run the game holds a copy of it for the page it serves
    for server in cluster.servers:
        assert server.health()["games_in_memory"] >= 1, server.url
    assert served_a_websocket(cluster, game_id) == [True, True]
    # His seat is taken through the process his WebSocket does not go through: the page's hello
    # with the new token, right after, must find the seat there too.
    bob.fill("#join-name", "Bob")
    next_request_to(cluster, ann_server)
    bob.click("#join button[data-seat='1']")
    for page in (ann, bob):
        page.wait_for_function("document.body.dataset.status === 'playing'", timeout=TIMEOUT)
    refused = seated_or_refused(bob, "connected · seat 2")
    assert not refused, f"Bob's hello right after his join through the other process was refused: {refused}"
    joined = f'"POST /api/games/{game_id}/join HTTP/1.1" 200'
    assert [joined in server.output for server in cluster.servers] == [i == ann_server for i in range(2)]
    moves_by = {"Ann": 0, "Bob": 0}
    for _ in range(500):  # hang guard: a game has far fewer turns
        # Ann's page says whose turn it is (the bot's moves come by themselves)
        ann.wait_for_function(
            "document.body.dataset.status === 'finished' || document.body.dataset.turn === 'mine'"
            " || document.getElementById('turn').textContent === 'Waiting for Bob'",
            timeout=BOT_TIMEOUT,
        )
        if ann.evaluate("document.body.dataset.status") == "finished":
            break
        name, page, other = (
            ("Ann", ann, bob) if ann.evaluate("document.body.dataset.turn") == "mine" else ("Bob", bob, ann)
        )
        assert wait_for_my_turn_or_end(page) == "playing"
        seen = move_number(other)
        play_one_turn(page, use_keys=name == "Bob")
        moves_by[name] += 1
        # the other person sees the move without reloading, through the other process
        wait_for_move_after(other, seen)
        last = page.locator("#log li").last.inner_text()
        other.wait_for_function(LOG_HAS_TEXT, arg=last, timeout=TIMEOUT)
    else:
        pytest.fail("the game does not end")
    bob.wait_for_function("document.body.dataset.status === 'finished'", timeout=TIMEOUT)
    assert min(moves_by.values()) >= 3, moves_by
    # both pages show the whole game as stored, and neither ever lost its WebSocket
    moves = stored_moves(cluster.engine, game_id)
    for page in (ann, bob):
        assert page.locator("#log li").count() == len(moves) == move_number(page)
        shown = page.evaluate("window.__connection")
        assert not [text for text in shown if "reconnecting" in text], shown
    state = httpx.get(f"{base}/api/games/{game_id}", timeout=15.0).json()
    assert [entry["move"] for entry in state["log"]] == moves
    assert websockets_per_server(cluster, 2) == [1, 1]
    log_text = bob.inner_text("#log")
    assert "Ann " in log_text and "Bob " in log_text
    # A reload puts Bob back in his seat, through whichever process nginx picks.
    bob.reload()
    bob.wait_for_selector(".player.me", timeout=TIMEOUT)
    assert "Bob" in bob.locator(".player.me .name").inner_text()
    assert ann.errors == [] and bob.errors == []
    for page in (ann, bob):
        page.context.close()
    assert_no_tracebacks(cluster)


def test_a_person_plays_bots_to_the_end_on_two_processes(cluster: Cluster, browser: Any) -> None:
    base = front(cluster)
    page = new_page(browser)
    game_id = create_game(page, base, "Ann", ["human", "bot:random", "bot:greedy", "bot:random"])
    assert page.locator(".player").count() == 4
    # the page's WebSocket through the process that does not run the game: each of Ann's moves
    # is handed on, and each bot's move comes back over Redis
    wait_connected(page, "connected · seat 1")
    owner = cluster.servers.index(cluster.server_of(str(cluster.lease_holder(game_id))))
    reload_until(cluster, page, "connected · seat 1", [0 if i == owner else 1 for i in range(2)])
    turns = 0
    while wait_for_my_turn_or_end(page) != "finished":
        play_one_turn(page)
        turns += 1
        assert turns < 200, "the game does not end"
    assert turns >= 5
    final = page.locator("#final")
    final.wait_for(timeout=TIMEOUT)
    assert "wins" in final.inner_text() or "Shared win" in final.inner_text()
    rows = final.locator(".scoring tbody tr")
    assert rows.count() == 4
    # the totals on the screen are the engine's, and the log the database's
    record = httpx.get(f"{base}/api/games/{game_id}/record", timeout=15.0).json()
    shown = [int(rows.nth(i).locator("td.total").inner_text()) for i in range(4)]
    assert shown == record["result"]["totals"]
    assert record["seats"][0] == "Ann"
    assert page.locator("#log li").count() == len(stored_moves(cluster.engine, game_id))
    assert websockets_per_server(cluster, 1) == [0 if i == owner else 1 for i in range(2)]
    assert page.errors == []
    page.context.close()
    assert_no_tracebacks(cluster)


def test_the_page_reconnects_through_the_other_process_when_its_own_is_killed(
    cluster: Cluster, browser: Any
) -> None:
    page = new_page(browser)
    game_id = create_game(page, front(cluster), "Ann", ["human", "bot:random"])
    wait_connected(page, "connected · seat 1")
    # the page's WebSocket through the process that runs the game: the kill takes both away
    owner = cluster.servers.index(cluster.server_of(str(cluster.lease_holder(game_id))))
    reload_until(cluster, page, "connected · seat 1", [1 if i == owner else 0 for i in range(2)])
    for _ in range(2):  # a few moves before the kill
        assert wait_for_my_turn_or_end(page) == "playing"
        play_one_turn(page)
    seen = move_number(page)
    cluster.servers[owner].kill()
    page.wait_for_function(
        "document.getElementById('connection').textContent.includes('reconnecting')", timeout=TIMEOUT
    )
    # the page's own retries go through nginx to the other process; its hello takes Ann's seat
    wait_connected(page, "connected · seat 1", timeout=RECONNECT_TIMEOUT)
    assert websockets_per_server(cluster, 1) == [0 if i == owner else 1 for i in range(2)]
    assert move_number(page) >= seen
    # the other process took the game over: its bot moves, and Ann plays on to the end
    turns = 0
    while wait_for_my_turn_or_end(page) != "finished":
        play_one_turn(page)
        turns += 1
        assert turns < 200, "the game does not end"
    assert turns >= 1
    survivor = cluster.servers[1 - owner]
    assert cluster.lease_holder(game_id) in (None, survivor.process_id)
    moves = stored_moves(cluster.engine, game_id)
    assert page.locator("#log li").count() == len(moves) > seen
    state = httpx.get(f"{front(cluster)}/api/games/{game_id}", timeout=15.0).json()
    assert state["game"]["status"] == "finished"
    assert [entry["move"] for entry in state["log"]] == moves
    assert page.errors == []
    page.context.close()
    assert_no_tracebacks(cluster, dead=(owner,))


def test_a_page_whose_process_is_restarted_goes_on_without_a_word(cluster: Cluster, browser: Any) -> None:
    page = new_page(browser)
    page.add_init_script(CONNECTION_SCRIPT)
    game_id = create_game(page, front(cluster), "Ann", ["human", "bot:random"])
    wait_connected(page, "connected · seat 1")
    # the page's WebSocket through the process that runs the game: the restart takes both away
    owner = cluster.servers.index(cluster.server_of(str(cluster.lease_holder(game_id))))
    reload_until(cluster, page, "connected · seat 1", [1 if i == owner else 0 for i in range(2)])
    for _ in range(2):
        assert wait_for_my_turn_or_end(page) == "playing"
        play_one_turn(page)
    assert wait_for_my_turn_or_end(page) == "playing"
    seen = move_number(page)
    # SIGTERM, as systemctl restart sends it, and Ann's move at once: played through whichever
    # process has it (answered before the close, or said again by the page after it)
    restarted = cluster.servers[owner]
    restarted.terminate()
    play_one_turn(page)
    assert move_number(page) > seen
    assert restarted.wait_exit(60) == 0
    assert "drained: 1 clients told to reconnect" in restarted.output
    wait_connected(page, "connected · seat 1")
    assert websockets_per_server(cluster, 1) == [0 if i == owner else 1 for i in range(2)]
    # the other process runs the game now: its bot moves, and Ann plays on to the end
    turns = 0
    while wait_for_my_turn_or_end(page) != "finished":
        play_one_turn(page)
        turns += 1
        assert turns < 200, "the game does not end"
    # nothing was said: the page never showed a lost connection
    shown = page.evaluate("window.__connection")
    assert not [text for text in shown if "disconnected" in text or "reconnecting" in text], shown
    moves = stored_moves(cluster.engine, game_id)
    assert page.locator("#log li").count() == len(moves) > seen
    state = httpx.get(f"{front(cluster)}/api/games/{game_id}", timeout=15.0).json()
    assert [entry["move"] for entry in state["log"]] == moves
    assert page.errors == []
    page.context.close()
    assert_no_tracebacks(cluster)
