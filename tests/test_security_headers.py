"""The security headers on every page and every answer of the API (its errors too): a
Content-Security-Policy with no inline script or style, framing refused, no sniffing, the
referrer kept to the site, no powerful browser feature, and HSTS only over https (to the server
itself, or through a trusted proxy that says so). The pages hold no inline script, no inline
event handler and no style attribute, so that the policy breaks nothing (the browser tests run
them under it: tests/e2e/test_security.py)."""

from __future__ import annotations

import re
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

from fastapi.routing import APIRoute
from starlette.routing import Mount

from coloretto.cli import main
from coloretto.web import Settings, create_app
from coloretto.web.api.headers import content_security_policy
from coloretto.web.pages.routes import STATIC
from tests.test_web_accounts import browser, logged_in, make_client
from tests.test_web_moderation import SETTINGS, admin, database

FAST = Settings(bot_delay=0.0, messages_per_second=1000.0, message_burst=1000)
TEMPLATES = Path(STATIC).parent / "templates"

SAME_EVERYWHERE = {
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    "referrer-policy": "same-origin",
    "cross-origin-opener-policy": "same-origin",
}


def directives(policy: str) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for part in policy.split(";"):
        words = part.split()
        if words:
            assert words[0] not in found, f"{words[0]} twice in {policy!r}"
            found[words[0]] = words[1:]
    return found


def assert_secured(response: Any, *, https: bool = False) -> None:
    where = f"{response.request.method} {response.request.url} ({response.status_code})"
    for name, value in SAME_EVERYWHERE.items():
        assert response.headers.get(name) == value, where
    permissions = response.headers["permissions-policy"]
    for feature in ("camera", "microphone", "geolocation", "payment", "usb"):
        assert f"{feature}=()" in permissions, where
    policy = directives(response.headers["content-security-policy"])
    if response.request.url.path != "/docs":
        host = response.request.headers["host"]
        assert policy["script-src"] == ["'self'"], where
        assert policy["style-src"] == ["'self'"], where
        assert policy["connect-src"] == ["'self'", f"ws://{host}", f"wss://{host}"], where
    for directive, value in {
        "default-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'self'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
    }.items():
        assert policy[directive] == value, where
    assert not any("unsafe" in word for words in policy.values() for word in words), where
    if https:
        assert response.headers["strict-transport-security"] == "max-age=31536000", where
    else:
        assert "strict-transport-security" not in response.headers, where


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    with TestClient(create_app(f"sqlite:///{tmp_path / 'headers.sqlite3'}", FAST)) as c:
        yield c


def finished_game(client: TestClient) -> str:
    created = client.post("/api/games", json={"seats": [{"kind": "bot", "bot": "random"}] * 2}).json()
    game_id = created["game"]["id"]
    deadline = time.monotonic() + 60
    while client.get(f"/api/games/{game_id}").json()["game"]["status"] != "finished":
        assert time.monotonic() < deadline, "a game of two random bots does not end"
        time.sleep(0.02)  # the bots move by themselves: no event to wait on over HTTP
    return str(game_id)


def every_get(client: TestClient) -> list[str]:
    """A path for every GET route of the app (its parameters filled in), and the static files."""
    game_id = finished_game(client)
    values = {"game_id": game_id, "name": "Nobody", "language": "nl", "token": "no-such-link"}
    paths = []
    for route in client.app.routes:  # type: ignore[attr-defined]
        if isinstance(route, Mount):
            paths.extend(
                f"/static/{f.relative_to(STATIC).as_posix()}" for f in STATIC.rglob("*") if f.is_file()
            )
        elif "GET" in getattr(route, "methods", set()):
            paths.append(re.sub(r"{(\w+)}", lambda m: values[m.group(1)], route.path))
    return paths


def test_every_page_file_and_api_answer_has_the_security_headers(client: TestClient) -> None:
    paths = every_get(client)
    assert {"/", "/rules", "/login", "/leaderboard", "/docs", "/openapi.json", "/api/health"} <= set(paths)
    # the operator's and the moderation's pages and answers too
    assert {"/admin", "/account", "/reset/no-such-link", "/metrics", "/api/health/live"} <= set(paths)
    assert {"/api/health/ready", "/api/admin/reports", "/api/admin/audit"} <= set(paths)
    assert any(p.endswith(".js") for p in paths) and any(p.endswith(".css") for p in paths)
    for path in paths:
        assert_secured(client.get(path))
    # pages that are not there, and every kind of refusal, too
    assert_secured(client.get("/games/nothere"))
    assert_secured(client.get("/api/games/nothere"))
    assert_secured(client.get("/no/such/page"))
    assert_secured(client.post("/api/games", json={"seats": "two"}))
    assert_secured(client.post("/api/games", content=b"x" * 20_000))
    assert_secured(client.post("/api/account/logout"))  # no security token: 403 csrf
    assert_secured(client.get("/?lang=xx"))
    # the API's POSTs and DELETEs (the moderation's too), their parameters filled in
    params = {"game_id": "nothere", "name": "Nobody", "number": "1", "report_id": "1"}
    for route in client.app.routes:  # type: ignore[attr-defined]
        methods = (
            sorted(route.methods & {"POST", "DELETE", "PUT", "PATCH"}) if isinstance(route, APIRoute) else []
        )
        for method in methods:
            path = re.sub(r"{(\w+)}", lambda m: params[m.group(1)], route.path)
            assert_secured(client.request(method, path, json={}))


def test_a_rate_limited_answer_has_the_headers_too(tmp_path: Path) -> None:
    settings = Settings(bot_delay=0.0, requests_per_minute=2)
    with TestClient(create_app(f"sqlite:///{tmp_path / 'limited.sqlite3'}", settings)) as client:
        answers = [client.get("/api/options") for _ in range(3)]
        assert [a.status_code for a in answers] == [200, 200, 429]
        for answer in answers:
            assert_secured(answer)


def test_hsts_only_over_https_directly_or_through_a_trusted_proxy(tmp_path: Path) -> None:
    settings = Settings(trusted_proxies=("10.0.0.0/8",))

    def started(name: str, **options: Any) -> TestClient:
        return TestClient(create_app(f"sqlite:///{tmp_path / name}", settings), **options)

    with started("https.sqlite3", base_url="https://games.example") as https:
        assert_secured(https.get("/"), https=True)
        assert_secured(https.get("/api/health"), https=True)
    with started("proxied.sqlite3", client=("10.1.2.3", 4000)) as proxied:
        assert_secured(proxied.get("/", headers={"X-Forwarded-Proto": "https"}), https=True)
        assert_secured(proxied.get("/", headers={"X-Forwarded-Proto": "http"}))
        assert_secured(proxied.get("/"))
    with started("stranger.sqlite3", client=("192.0.2.9", 4000)) as stranger:
        # not a trusted proxy: its word is not believed
        assert_secured(stranger.get("/", headers={"X-Forwarded-Proto": "https"}))


def test_the_policy_names_the_websocket_of_the_host_asked_for_and_nothing_else() -> None:
    assert "connect-src 'self' ws://games.example:8443 wss://games.example:8443;" in content_security_policy(
        "games.example:8443"
    )
    assert "ws://[::1]:8000 wss://[::1]:8000" in content_security_policy("[::1]:8000")
    # a Host header that is not a plain host is not written into the policy: 'self' alone
    for forged in ("evil.example; script-src *", "a b", "x.example/path", "", None):
        policy = content_security_policy(forged)
        assert "connect-src 'self'; " in policy
        assert directives(policy)["script-src"] == ["'self'"]


def test_the_api_documentation_page_loads_swagger_ui_under_a_policy_of_its_own(client: TestClient) -> None:
    page = client.get("/docs")
    assert page.status_code == 200
    policy = directives(page.headers["content-security-policy"])
    assert policy["script-src"] == ["'self'", "https://cdn.jsdelivr.net"]
    assert policy["frame-ancestors"] == ["'none'"]
    assert '<script src="/static/js/swagger.js"></script>' in page.text
    assert 'data-openapi="/openapi.json"' in page.text
    assert client.get("/openapi.json").status_code == 200
    assert client.get("/redoc").status_code == 404


INLINE = [
    (re.compile(r"<script(?![^>]*\bsrc=)(?![^>]*type=\"application/json\")[^>]*>", re.I), "an inline script"),
    (re.compile(r"\son[a-z]+\s*=", re.I), "an inline event handler"),
    (re.compile(r"\sstyle\s*=", re.I), "a style attribute"),
    (re.compile(r"<style", re.I), "a style element"),
    (re.compile(r"javascript:", re.I), "a javascript: address"),
]


@pytest.mark.parametrize("template", sorted(p.name for p in TEMPLATES.glob("*.html")))
def test_no_template_holds_inline_script_or_style(template: str) -> None:
    text = (TEMPLATES / template).read_text("utf-8")
    for pattern, what in INLINE:
        assert not pattern.search(text), f"{template} holds {what}: the policy would block it"


def test_no_page_rendered_holds_inline_script_or_style(client: TestClient) -> None:
    for path in ("/", "/rules", "/login", "/signup", "/leaderboard", "/players/Nobody", "/games/x", "/docs"):
        text = client.get(path).text
        for pattern, what in INLINE:
            assert not pattern.search(text), f"{path} holds {what}"


def test_the_admin_account_reset_and_metrics_answers_have_the_headers_and_nothing_inline(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The pages as their people see them: an administrator's /admin, a person's /account, a
    reset link that works and one that does not, the page that tells a guest and a player /admin is
    not theirs; and /metrics and the health probes as a monitor on this machine reads them."""
    with make_client(database(tmp_path), SETTINGS) as client:
        root = admin(client, tmp_path)
        ann = logged_in(browser(client, "127.0.0.5"), "Ann")
        capsys.readouterr()  # what the promotion said
        assert main(["admin", "reset-password", "Ann", "--data-dir", str(tmp_path)]) == 0
        link = capsys.readouterr().out.strip()
        assert link.startswith("/reset/")
        pages = {
            "/admin of an administrator": (root.get("/admin"), 200, "/static/js/admin.js"),
            "/account of a person": (ann.get("/account"), 200, "/static/js/settings.js"),
            "/admin of a guest": (client.get("/admin"), 401, None),
            "/admin of a player": (ann.get("/admin"), 403, None),
            "a reset link": (client.get(link), 200, "/static/js/reset.js"),
            "a reset link that is no good": (client.get("/reset/no-such-link"), 404, None),
        }
        for what, (page, status, script) in pages.items():
            assert page.status_code == status, what
            assert script is None or script in page.text, what
            assert_secured(page)
            for pattern, inline in INLINE:
                assert not pattern.search(page.text), f"{what} holds {inline}"
        for path in ("/metrics", "/api/health/live", "/api/health/ready"):
            answer = client.get(path)  # from 127.0.0.2: this machine
            # ready: 503 while the bot workers still warm up; its headers are the point here
            assert answer.status_code in ((200,) if path != "/api/health/ready" else (200, 503)), path
            assert_secured(answer)
        assert "coloretto_" in client.get("/metrics").text
