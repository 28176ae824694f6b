"""Watching a real server (issue 33): ``/metrics`` moving while a game is played over the
WebSocket (the bot workers' own metrics included), live against ready (Redis paused, workers not
warm, a schema that is not the code's), request ids in the answers and the JSON log lines, the
example Grafana dashboard against what the server exports, and the new options' errors.

Servers, Redis, PostgreSQL and nginx are real processes on loopback; nothing is mocked.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import sqlite3
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families
from websockets.asyncio.client import connect

from coloretto.cli import main
from coloretto.web.api.monitoring import metrics_networks, metrics_refused
from coloretto.web.common import metrics
from coloretto.web.common.faults import FAULT_VARIABLE
from coloretto.web.common.worker_metrics import PREFIX
from coloretto.web.storage.db import DATABASE_FILE, head_revisions
from tests.servers import REPO, Nginx, ServeProcess, Servers
from tests.test_cluster_serve import choose, database_url

__all__ = ["database_url"]  # a fixture, used by name

DASHBOARD = REPO / "docs" / "operator" / "grafana-dashboard.json"
MONITORING_PAGE = REPO / "docs" / "operator" / "monitoring.md"
GUARD = 90.0  #: the longest anything here may take (a fresh clone, 2 busy cores): a hang guard
UUID_HEX = re.compile(r"[0-9a-f]{32}")

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def wait_for(condition: Callable[[], bool], what: str, guard: float = GUARD) -> None:
    deadline = time.monotonic() + guard
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.05)  # polling a process of its own: there is no event to wait on
    raise AssertionError(f"{what}: not within {guard:g} s")


def scrape(server: ServeProcess) -> str:
    response = httpx.get(f"{server.url}/metrics", timeout=10)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/plain")
    return response.text


def samples(text: str) -> Samples:
    """Every sample of a /metrics answer: (name, its labels) -> value."""
    found: Samples = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            found[sample.name, frozenset(sample.labels.items())] = sample.value
    return found


def value(found: Samples, name: str, **labels: str) -> float:
    return found.get((name, frozenset(labels.items())), 0.0)


def exported_names(text: str) -> set[str]:
    """The metric names a /metrics answer declares (``# TYPE``) and the names of its samples."""
    declared = set(re.findall(r"^# TYPE (\S+) ", text, re.MULTILINE))
    return declared | {name for name, _labels in samples(text)}


def json_lines(server: ServeProcess) -> list[dict[str, Any]]:
    """The server's log: every line must be one JSON object."""
    lines = [line for line in server.output.splitlines() if line.strip()]
    parsed = []
    for line in lines:
        try:
            parsed.append(json.loads(line))
        except ValueError:
            raise AssertionError(f"a log line is not JSON: {line!r}") from None
        assert isinstance(parsed[-1], dict), line
    return parsed


@pytest.fixture(scope="module")
def observed(module_servers: Servers) -> ServeProcess:
    """One server with JSON logs, kept by the module's tests."""
    return module_servers.one(bot_delay=0.02, args=["--log-format", "json"])


def create_game(server: ServeProcess, seats: list[str]) -> dict[str, Any]:
    body = {
        "seats": [{"kind": "human"} if s == "human" else {"kind": "bot", "bot": s} for s in seats],
        "creator_name": "Ann",
    }
    response = httpx.post(f"{server.url}/api/games", json=body, timeout=30)
    assert response.status_code == 201, response.text
    created: dict[str, Any] = response.json()
    return created


async def play(server: ServeProcess, game_id: str, token: str, moves: int, during: Callable[[], None]) -> int:
    """Take the seat over the WebSocket and play ``moves`` moves, asking one hint on the first turn;
    ``during()`` runs while the socket is open. The number of moves played."""
    played, acted_at, hinted = 0, -1, False
    async with connect(f"{server.ws_url}/api/games/{game_id}/ws", max_size=2**22, open_timeout=GUARD) as ws:
        assert UUID_HEX.fullmatch(ws.response.headers["x-request-id"])  # the handshake's request id
        await ws.send(json.dumps({"type": "hello", "token": token}))
        seat = None
        while played < moves:
            message = json.loads(await asyncio.wait_for(ws.recv(), GUARD))
            if message["type"] == "welcome":
                seat = message["seat"]
            elif message["type"] == "hint":
                hinted = True
            if message["type"] != "state" or seat is None or message["state"]["you"] != seat:
                continue
            state = message["state"]
            if not state["legal"] or state["move_number"] == acted_at:
                continue
            if not hinted:
                await ws.send(json.dumps({"type": "hint"}))
                while not hinted:
                    answer = json.loads(await asyncio.wait_for(ws.recv(), GUARD))
                    hinted = answer["type"] == "hint"
            acted_at = state["move_number"]
            await ws.send(json.dumps({"type": "act", "action": choose(state), "move": acted_at}))
            played += 1
        await asyncio.to_thread(during)
    return played


# ------------------------------------------------------------------ /metrics


@pytest.mark.slow
def test_the_metrics_move_while_a_game_is_played(observed: ServeProcess) -> None:
    before = samples(scrape(observed))
    created = create_game(observed, ["human", "mcts:200", "random"])
    game_id = created["game"]["id"]
    open_now: list[Samples] = []
    played = asyncio.run(
        play(observed, game_id, created["token"], 4, lambda: open_now.append(samples(scrape(observed))))
    )
    # the socket's close and the last moves' bookkeeping are done in their own time
    wait_for(lambda: value(samples(scrape(observed)), "coloretto_websocket_connections") == 0, "closed")
    text = scrape(observed)
    after = samples(text)

    def rose(name: str, least: float = 1, **labels: str) -> None:
        gained = value(after, name, **labels) - value(before, name, **labels)
        assert gained >= least, f"{name}{labels} rose by {gained}, not {least} or more"

    # the person's moves, the bots' too, and each action's time until its state was sent
    rose("coloretto_moves_committed_total", played, by="person")
    rose("coloretto_moves_committed_total", by="bot")
    rose("coloretto_action_broadcast_seconds_count", played, via="websocket")
    assert value(after, "coloretto_action_broadcast_seconds_sum", via="websocket") > 0
    # what the socket received and sent, by type
    rose("coloretto_websocket_messages_received_total", 1, type="hello")
    rose("coloretto_websocket_messages_received_total", played, type="act")
    rose("coloretto_websocket_messages_received_total", 1, type="hint")
    rose("coloretto_websocket_messages_sent_total", 1, type="welcome")
    rose("coloretto_websocket_messages_sent_total", played, type="state")
    rose("coloretto_websocket_messages_sent_total", 1, type="hint")
    # the HTTP request that made the game, by its route's template
    rose("coloretto_http_requests_total", 1, route="/api/games", method="POST", status="201")
    rose("coloretto_http_request_duration_seconds_count", 1, route="/api/games", method="POST")
    # the writer's transactions
    rose("coloretto_writer_batch_size_count", 1)
    rose("coloretto_writer_commit_duration_seconds_count", 1)
    # the bot workers: waited for in the server, run and measured in the worker processes
    rose("coloretto_worker_job_wait_seconds_count", 1, kind="bot")
    rose("coloretto_worker_job_wait_seconds_count", 1, kind="hint")
    rose("coloretto_worker_job_duration_seconds_count", 1, kind="bot")
    rose("coloretto_worker_job_duration_seconds_count", 1, kind="hint")
    rose("coloretto_worker_jobs_total", 1, kind="bot", outcome="ok")
    rose("coloretto_worker_search_iterations_total", 200, kind="bot")  # the mcts:200 bot searched
    rose("coloretto_worker_search_iterations_total", 1, kind="hint")
    assert value(after, "coloretto_worker_resident_memory_bytes") > 10 * 2**20
    assert value(after, "coloretto_worker_processes") == value(after, "coloretto_worker_processes_ready") == 1
    # gauges read while the socket was open
    (during,) = open_now
    assert value(during, "coloretto_websocket_connections") >= 1
    assert value(during, "coloretto_games_in_memory", status="playing") >= 1
    assert value(after, "coloretto_build_info", version=__import__("coloretto").__version__) == 1
    # low cardinality: no game id, no raw path anywhere in the answer
    assert game_id not in text and f"/api/games/{game_id}" not in text


def test_the_metrics_are_not_served_through_a_proxy(observed: ServeProcess) -> None:
    for header in ({"X-Forwarded-For": "203.0.113.7"}, {"Forwarded": "for=203.0.113.7"}):
        response = httpx.get(f"{observed.url}/metrics", headers=header, timeout=10)
        assert response.status_code == 403 and response.json()["error"] == "forbidden", response.text
        assert "proxy" in response.json()["message"]
    assert httpx.get(f"{observed.url}/metrics", timeout=10).status_code == 200


def test_the_metrics_are_served_to_this_machine_and_the_allowed_networks_only() -> None:
    networks = metrics_networks(("10.1.0.0/16", "2001:db8::5"))
    allowed = ["127.0.0.1", "127.9.9.9", "::1", "::ffff:127.0.0.1", "10.1.200.3", "2001:db8::5"]
    for address in allowed:
        assert metrics_refused({"client": (address, 5000), "headers": []}, networks) is None, address
    for address in ["10.2.0.1", "203.0.113.7", "2001:db8::6", "testclient"]:
        refused = metrics_refused({"client": (address, 5000), "headers": []}, networks)
        assert refused is not None and address in refused
    forwarded = {"client": ("127.0.0.1", 5000), "headers": [(b"x-forwarded-for", b"127.0.0.1")]}
    assert metrics_refused(forwarded, networks) is not None
    with pytest.raises(ValueError, match="--metrics-allow 'nowhere' is not an IP address or network"):
        metrics_networks(("nowhere",))


def test_a_label_is_never_given_more_values_than_its_cap() -> None:
    from prometheus_client import CollectorRegistry, Counter

    counter = Counter("capped_total", "a test's counter", ["code"], registry=CollectorRegistry())
    children = metrics.Children(counter, limit=3)
    for code in ["a", "b", "c", "d", "e"]:
        children[code].inc()
    assert sorted(children) == ["a", "b", "c"]
    assert counter.labels("other")._value.get() == 2  # d and e


@pytest.mark.slow
def test_nginx_keeps_the_metrics_from_the_public(tmp_path: Path, servers: Servers) -> None:
    """docs/nginx.conf as it is, in front of one server: the game's routes pass, /metrics does not."""
    server = servers.one(tmp_path / "server")
    nginx = Nginx(tmp_path / "nginx", [server.port]).start()
    try:
        assert httpx.get(f"{nginx.url}/api/health/live", timeout=10).status_code == 200
        assert httpx.get(f"{nginx.url}/metrics", timeout=10).status_code == 403
        assert httpx.get(f"{server.url}/metrics", timeout=10).status_code == 200  # Prometheus's way
    finally:
        nginx.stop()


@pytest.mark.slow
def test_a_dead_workers_files_are_cleaned_and_the_directory_goes_with_the_server(
    tmp_path: Path, servers: Servers
) -> None:
    server = servers.one(tmp_path)
    (directory,) = Path(tempfile.gettempdir()).glob(f"{PREFIX}{server.pid}-*")
    live_gauges = list(directory.glob("gauge_livesum_*.db"))
    assert len(live_gauges) == 1  # the one worker's memory gauge
    worker = int(live_gauges[0].stem.rsplit("_", 1)[1])
    os.kill(worker, signal.SIGKILL)  # a worker of the server this test started
    wait_for(lambda: not live_gauges[0].exists(), "the dead worker's live gauge is removed")
    wait_for(lambda: server.health()["workers"]["ready"] == 1, "a new worker is warm")
    found = samples(scrape(server))
    assert value(found, "coloretto_worker_restarts_total", reason="died") == 1
    assert value(found, "coloretto_worker_processes_ready") == 1
    assert [p for p in directory.glob("gauge_livesum_*.db") if p != live_gauges[0]]  # the new worker's
    assert list(directory.glob(f"counter_{worker}.db"))  # a dead worker's counts stay: totals never drop
    server.stop()
    assert not directory.exists()


# ------------------------------------------------------------------ the dashboard and the docs


def dashboard_queries() -> Iterator[str]:
    def walk(node: Any) -> Iterator[str]:
        if isinstance(node, dict):
            for key, item in node.items():
                if key in ("expr", "query") and isinstance(item, str):
                    yield item
                else:
                    yield from walk(item)
        elif isinstance(node, list):
            for item in node:
                yield from walk(item)

    yield from walk(json.loads(DASHBOARD.read_text("utf-8")))


def test_the_dashboard_is_importable_and_has_a_panel_for_each_thing_to_watch() -> None:
    board = json.loads(DASHBOARD.read_text("utf-8"))
    panels = [panel for panel in board["panels"] if panel["type"] != "row"]
    assert len({panel["id"] for panel in board["panels"]}) == len(board["panels"])
    assert all(panel["targets"] and all(t["expr"] for t in panel["targets"]) for panel in panels)
    assert all(panel["datasource"]["uid"] == "${datasource}" for panel in panels)
    assert board["templating"]["list"][0] == {**board["templating"]["list"][0], "type": "datasource"}
    used = " ".join(dashboard_queries())
    for name in [
        "coloretto_http_requests_total", "coloretto_http_request_duration_seconds_bucket",
        "coloretto_action_broadcast_seconds_bucket", "coloretto_moves_committed_total",
        "coloretto_writer_batch_size", "coloretto_writer_commit_duration_seconds_bucket",
        "coloretto_worker_queue_depth", "coloretto_worker_job_duration_seconds_bucket",
        "coloretto_games_in_memory", "coloretto_websocket_connections", "coloretto_leases_gained_total",
        "coloretto_leases_lost_total", "coloretto_errors_total", "coloretto_incidents_total",
    ]:  # fmt: skip
        assert name in used, name


@pytest.mark.slow
def test_every_metric_the_dashboard_asks_for_is_one_the_server_exports(observed: ServeProcess) -> None:
    # a game and a hint first, so that the labelled series of each kind exist
    created = create_game(observed, ["human", "random"])
    asyncio.run(play(observed, created["game"]["id"], created["token"], 1, lambda: None))
    exported = exported_names(scrape(observed))
    suffixes = ("_bucket", "_sum", "_count")
    for query in dashboard_queries():
        for name in re.findall(r"\b(?:coloretto|process|python)_[a-z0-9_]+", query):
            base = next((name.removesuffix(s) for s in suffixes if name.endswith(s)), name)
            assert name in exported or base in exported, f"the dashboard asks for {name}: not exported"


@pytest.mark.slow
def test_the_monitoring_page_lists_every_metric_the_server_exports(observed: ServeProcess) -> None:
    page = MONITORING_PAGE.read_text("utf-8")
    exported = {name for name in exported_names(scrape(observed)) if name.startswith("coloretto_")}
    families = {re.sub(r"_(bucket|sum|count)$", "", name) for name in exported}
    listed = set(re.findall(r"`(coloretto_[a-z0-9_]+)`", page))
    missing = {name for name in families if name not in listed and f"{name}_total" not in listed}
    assert not missing, f"exported, not in docs/operator/monitoring.md: {sorted(missing)}"
    unknown = {name for name in listed if name not in exported and name not in families}
    assert not unknown, f"in docs/operator/monitoring.md, not exported: {sorted(unknown)}"


# ------------------------------------------------------------------ live and ready


def ready(server: ServeProcess) -> httpx.Response:
    return httpx.get(f"{server.url}/api/health/ready", timeout=30)


@pytest.mark.slow
def test_ready_fails_while_redis_is_paused_or_down_and_live_does_not(
    database_url: str, tmp_path: Path, servers: Servers
) -> None:
    cluster = servers.cluster(tmp_path, database_url, size=1)
    (server,) = cluster.servers
    redis = cluster.redis
    assert redis is not None
    answer = ready(server)
    assert answer.status_code == 200, answer.text
    assert answer.json()["ready"] is True and answer.json()["checks"]["redis"]["ok"] is True
    redis.pause()  # SIGSTOP: connections stay open and nothing answers, as a machine gone
    try:
        answer = ready(server)
        assert answer.status_code == 503, answer.text
        body = answer.json()
        assert body["ready"] is False and body["failed"] == ["redis"], body
        assert "Redis did not answer PING" in body["checks"]["redis"]["problem"]
        assert body["checks"]["database"]["ok"] and body["checks"]["workers"]["ok"]
        live = httpx.get(f"{server.url}/api/health/live", timeout=10)
        assert live.status_code == 200 and live.json()["ok"] is True
    finally:
        redis.resume()
    wait_for(lambda: ready(server).status_code == 200, "ready again once Redis answers")
    redis.stop()
    answer = ready(server)
    assert answer.status_code == 503 and answer.json()["failed"] == ["redis"], answer.text


@pytest.mark.slow
def test_ready_fails_until_the_workers_are_warm_and_the_metrics_are_there_meanwhile(
    tmp_path: Path, servers: Servers
) -> None:
    """A worker whose warm-up never ends (an injected fault): the process is alive and answers, not
    ready, and its own metrics are served although no worker ever ran a job."""
    server = ServeProcess(tmp_path, env={FAULT_VARIABLE: "hang:warmup:1"})
    servers.started.append(server)
    server.start(workers=False)
    answer = ready(server)
    assert answer.status_code == 503, answer.text
    body = answer.json()
    assert body["failed"] == ["workers"], body
    assert body["checks"]["workers"] == {**body["checks"]["workers"], "ok": False, "ready": 0, "warm": False}
    assert body["checks"]["database"]["ok"] and body["checks"]["migrations"]["ok"]
    assert httpx.get(f"{server.url}/api/health/live", timeout=10).status_code == 200
    found = samples(scrape(server))
    assert value(found, "coloretto_worker_processes") == 1
    assert value(found, "coloretto_worker_processes_ready") == 0
    assert (
        value(found, "coloretto_http_requests_total", route="/api/health/ready", method="GET", status="503")
        == 1
    )
    assert value(found, "coloretto_worker_jobs_total", kind="bot", outcome="ok") == 0


def test_ready_fails_while_the_schema_is_not_the_codes(observed: ServeProcess) -> None:
    database = sqlite3.connect(observed.directory / DATABASE_FILE)
    (head,) = head_revisions()
    try:
        with database:
            database.execute("UPDATE alembic_version SET version_num = '0001'")
        answer = ready(observed)
        assert answer.status_code == 503, answer.text
        body = answer.json()
        assert body["failed"] == ["migrations"], body
        assert (
            body["checks"]["migrations"]["revision"] == "0001"
            and body["checks"]["migrations"]["head"] == head
        )
        assert "0001" in body["checks"]["migrations"]["problem"]
    finally:
        with database:
            database.execute("UPDATE alembic_version SET version_num = ?", (head,))
        database.close()
    answer = ready(observed)
    assert answer.status_code == 200 and answer.json()["failed"] == [], answer.text


# ------------------------------------------------------------------ logs and request ids


def test_a_sane_request_id_is_kept_and_a_malformed_one_replaced_in_the_answer_and_the_log(
    observed: ServeProcess,
) -> None:
    kept = "trace-7f3a.b2:9_X"
    response = httpx.get(f"{observed.url}/api/health/live", headers={"X-Request-ID": kept}, timeout=10)
    assert response.status_code == 200 and response.headers["x-request-id"] == kept
    malformed = [b"two words", b"x" * 65, b"<script>", "ünï".encode(), b""]
    given: dict[bytes, str] = {}
    for said in malformed:
        response = httpx.get(f"{observed.url}/api/nowhere", headers={"X-Request-ID": said}, timeout=10)
        assert response.status_code == 404 and response.json()["error"] == "not_found"
        given[said] = response.headers["x-request-id"]
        assert UUID_HEX.fullmatch(given[said]), given[said]
    assert len(set(given.values())) == len(malformed)  # each request its own
    response = httpx.get(f"{observed.url}/api/options", timeout=10)  # none sent: one is made
    assert UUID_HEX.fullmatch(response.headers["x-request-id"])

    def logged() -> list[dict[str, Any]]:
        return [line for line in json_lines(observed) if line.get("logger") == "uvicorn.access"]

    wait_for(lambda: any(line.get("request_id") == kept for line in logged()), "the access line")
    (line,) = [line for line in logged() if line.get("request_id") == kept]
    assert line["path"] == "/api/health/live" and line["status"] == 200 and line["method"] == "GET"
    assert {"time", "level", "logger", "message"} <= set(line) and line["level"] == "INFO"
    for made in given.values():
        (line,) = [line for line in logged() if line.get("request_id") == made]
        assert line["status"] == 404
    log = observed.output
    assert "two words" not in log and "<script>" not in log and "x" * 65 not in log


@pytest.mark.slow
def test_an_incident_is_a_json_line_with_its_game_move_and_step(tmp_path: Path, servers: Servers) -> None:
    server = servers.one(
        tmp_path, bot_delay=0.0, args=["--log-format", "json"], env={FAULT_VARIABLE: "raise:bot:2"}
    )
    body = {"seats": [{"kind": "bot", "bot": "random"}] * 2}
    game_id = httpx.post(f"{server.url}/api/games", json=body, timeout=30).json()["game"]["id"]

    def incidents() -> list[dict[str, Any]]:
        return [line for line in json_lines(server) if line.get("step") == "bot"]

    wait_for(lambda: bool(incidents()), "the incident's line")
    (line,) = incidents()
    assert line["level"] == "ERROR" and line["logger"] == "coloretto.web.common.incidents"
    assert line["game"] == game_id and isinstance(line["move"], int) and line["move"] >= 1
    assert f"game {game_id} at move {line['move']}" in line["message"]
    assert "InjectedFault" in line["exception"]
    assert value(samples(scrape(server)), "coloretto_incidents_total", step="bot") == 1


# ------------------------------------------------------------------ the options


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--log-format", "xml"], "--log-format must be text or json, not 'xml'"),
        (["--metrics-allow", "nowhere"], "--metrics-allow 'nowhere' is not an IP address or network"),
    ],
)
def test_a_bad_new_option_is_one_line_and_exit_2(
    args: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["serve", "--data-dir", str(tmp_path), "--port", "0", *args]) == 2
    err = capsys.readouterr().err
    assert err == f"coloretto serve: error: {message}\n"
