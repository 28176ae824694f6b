"""Browser fixtures: Debian's Chromium driven by Playwright, and a live server.

Every page opened in the browser runs under the site's Content-Security-Policy, and every
violation of it the browser reports (a script, a style or a connection the policy refused, which
would break the page for a person) fails the test that opened the page: the ``browser`` fixture
is a :class:`WatchedBrowser`, whose contexts listen to their pages' console.

The policy allows no ``eval``, and Playwright's own ``wait_for_function`` evaluates its predicate
with ``eval`` inside the page, which the browser then refuses; the tests' pages and frames have
:func:`wait_for_function` in its place, the same call, the predicate compiled through DevTools
as ``evaluate`` compiles it (no policy applies to that) and polled in the page.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.servers import ServeProcess, Servers

CHROMIUM = os.environ.get("COLORETTO_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]


@pytest.fixture(scope="module")
def server(module_servers: Servers) -> ServeProcess:
    return module_servers.one(bot_delay=0.02)


#: Playwright's default timeout, in ms (the tests set no other)
DEFAULT_TIMEOUT = 30_000.0
#: ms: the longest one evaluation polls in the page before Python looks at the deadline again
POLL_SLICE = 1_000
#: the predicate polled in the page: an expression, or a function called with ``arg`` (as
#: Playwright tells them apart); null once ``slice`` ms have passed without its being truthy
POLL_SCRIPT = """async ([arg, polling, slice]) => {
  const predicate = () => {
    const value = (%s);
    return typeof value === "function" ? value(arg) : value;
  };
  const until = performance.now() + slice;
  for (;;) {
    const result = predicate();
    if (result) return result;
    if (performance.now() >= until) return null;
    await new Promise(next => (polling === "raf" ? requestAnimationFrame(next) : setTimeout(next, polling)));
  }
}"""
#: what Playwright says when a navigation replaced the page being evaluated: evaluated again
NAVIGATED = ("Execution context was destroyed", "Cannot find context with specified id")


def wait_for_function(
    self: Any, expression: str, *, arg: Any = None, timeout: float | None = None, polling: Any = None
) -> Any:
    """``Page.wait_for_function`` (and ``Frame``'s) under a policy without ``'unsafe-eval'``: the
    handle of the predicate's first truthy value, polled at every animation frame (or every
    ``polling`` ms); Playwright's TimeoutError after ``timeout`` ms (0: none)."""
    from playwright.sync_api import Error, TimeoutError

    timeout = DEFAULT_TIMEOUT if timeout is None else timeout
    deadline = time.monotonic() + timeout / 1000 if timeout else None
    script = POLL_SCRIPT % expression
    while True:
        left = POLL_SLICE if deadline is None else min(POLL_SLICE, (deadline - time.monotonic()) * 1000)
        try:
            handle = self.evaluate_handle(script, [arg, polling or "raf", max(0.0, left)])
            if handle.evaluate("value => value !== null"):
                return handle
            handle.dispose()
        except Error as exc:
            if not any(words in exc.message for words in NAVIGATED):
                raise
        if deadline is not None and time.monotonic() >= deadline:
            raise TimeoutError(f"wait_for_function: Timeout {timeout:.0f}ms exceeded: {expression}")


@pytest.fixture(scope="session", autouse=True)
def _wait_for_function_without_eval() -> Iterator[None]:
    """The browser tests' pages and frames wait with :func:`wait_for_function`."""
    try:
        from playwright.sync_api import Frame, Page
    except ImportError:  # the browser tests skip themselves (the browser fixture)
        yield
        return
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Page, "wait_for_function", wait_for_function)
        patch.setattr(Frame, "wait_for_function", wait_for_function)
        yield


#: what Chromium's console says of anything the page's Content-Security-Policy refused
CSP_VIOLATION = "Content Security Policy"


class WatchedBrowser:
    """The Playwright browser, each of whose contexts (and so every page) reports to
    ``violations`` what the Content-Security-Policy refused: Chromium says it on the page's
    console ("Refused to execute inline script because it violates the following Content
    Security Policy directive: ..."). Anything else is the browser's own."""

    def __init__(self, chromium: Any) -> None:
        self.chromium = chromium
        self.violations: list[str] = []

    def new_context(self, **options: Any) -> Any:
        context = self.chromium.new_context(**options)
        context.on("console", self.listen)
        return context

    def new_page(self, **options: Any) -> Any:
        return self.new_context(**options).new_page()

    def listen(self, message: Any) -> None:
        if CSP_VIOLATION in message.text:
            where = (message.location or {}).get("url") or (message.page.url if message.page else "")
            self.violations.append(f"{where}: {message.text}")

    def take_violations(self) -> list[str]:
        """The violations reported since the last call (they are then forgotten)."""
        taken, self.violations = self.violations, []
        return taken

    def __getattr__(self, name: str) -> Any:
        return getattr(self.chromium, name)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    """A test that opened pages fails if the browser refused anything of them under the policy
    (a test that failed already keeps its own failure)."""
    watched = getattr(item, "funcargs", {}).get("browser")
    if not isinstance(watched, WatchedBrowser):
        return (yield)
    try:
        result = yield
    except BaseException:
        watched.take_violations()
        raise
    violations = watched.take_violations()
    assert not violations, "the Content-Security-Policy refused part of a page:\n" + "\n".join(violations)
    return result


@pytest.fixture(scope="module")
def browser() -> Iterator[WatchedBrowser]:
    playwright_api = pytest.importorskip("playwright.sync_api")
    if not shutil.which(CHROMIUM) and not Path(CHROMIUM).exists():
        message = f"no Chromium at {CHROMIUM}: apt-get install -y chromium (see .ci/run)"
        if os.environ.get("CI"):
            pytest.fail(message)  # CI installs it: a missing browser there is a failure, not a skip
        pytest.skip(message)
    with playwright_api.sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield WatchedBrowser(chromium)
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
