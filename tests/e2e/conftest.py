"""Browser fixtures: Debian's Chromium driven by Playwright, and a live server."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.servers import ServeProcess, Servers

CHROMIUM = os.environ.get("COLORETTO_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]


@pytest.fixture(scope="module")
def server(module_servers: Servers) -> ServeProcess:
    return module_servers.one(bot_delay=0.02)


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    playwright_api = pytest.importorskip("playwright.sync_api")
    if not shutil.which(CHROMIUM) and not Path(CHROMIUM).exists():
        message = f"no Chromium at {CHROMIUM}: apt-get install -y chromium (see .ci/run)"
        if os.environ.get("CI"):
            pytest.fail(message)  # CI installs it: a missing browser there is a failure, not a skip
        pytest.skip(message)
    with playwright_api.sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def screenshots() -> Path | None:
    """Where to save the documentation's screenshots: set COLORETTO_SCREENSHOTS=docs/screenshots."""
    target = os.environ.get("COLORETTO_SCREENSHOTS")
    if not target:
        return None
    path = Path(target)
    path.mkdir(parents=True, exist_ok=True)
    return path
