"""axe-core in the browser tests: a page has no serious or critical accessibility violation.

``assert_accessible(page)`` runs axe-core (``axe-playwright-python``, the ``dev`` extra) on the
page at rest (no card in motion), by the WCAG 2.0, 2.1 and 2.2 A and AA rules and axe's best practices, and
fails with axe's own report of each serious or critical violation (the rule, why it matters, and
every element that breaks it). Minor and moderate findings are returned, not failed on.

    from tests.e2e.axe import assert_accessible

    page.goto(server.url + "/rules")
    assert_accessible(page)
"""

from __future__ import annotations

import os
from typing import Any

import pytest

#: the impacts a test fails on
FAILING = frozenset({"serious", "critical"})
#: the rule sets run: WCAG 2.x A and AA, and axe's best practices (landmarks, headings, …)
TAGS = ("wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa", "best-practice")
#: no card in motion (coloretto/web/pages/static/js/animate.js): while cards fly, their target is
#: lit in a light colour for a quarter second, and axe would judge its text's contrast against that
AT_REST = "!document.querySelector('.ghost, .anim-draw, .anim-place, .anim-take, .anim-removed')"
#: ms, a hang guard for the animations to end (they take a few tenths of a second)
REST_TIMEOUT = 10_000


def violations(page: Any, exclude: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    """axe-core's violations on ``page`` once no card is in motion; ``exclude``: CSS selectors of
    parts to leave out."""
    try:
        from axe_playwright_python import sync_playwright
    except ImportError:
        message = "axe-playwright-python is not installed: pip install -e '.[dev]'"
        if os.environ.get("CI"):
            pytest.fail(message)  # CI installs the dev extra: missing there is a failure, not a skip
        pytest.skip(message)
    context: dict[str, Any] | None = {"exclude": [[selector] for selector in exclude]} if exclude else None
    options = {"runOnly": {"type": "tag", "values": list(TAGS)}, "resultTypes": ["violations"]}
    page.wait_for_function(AT_REST, timeout=REST_TIMEOUT)  # the page at rest, as a person reads it
    results = sync_playwright.Axe().run(page, context=context, options=options)
    return list(results.response["violations"])


def report(found: list[dict[str, Any]]) -> str:
    lines = []
    for violation in found:
        rule = f"{violation['id']} ({violation['impact']})"
        lines.append(f"{rule}: {violation['help']} — {violation['helpUrl']}")
        for node in violation["nodes"][:10]:
            lines.append(f"    {' '.join(map(str, node['target']))}: {node.get('failureSummary', '')}")
            lines.append(f"        {node.get('html', '')[:200]}")
    return "\n".join(lines)


def assert_accessible(page: Any, exclude: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    """Fail on any serious or critical violation on ``page``; the lesser ones are returned."""
    found = violations(page, exclude)
    failing = [v for v in found if v.get("impact") in FAILING]
    assert not failing, f"accessibility violations on {page.url}:\n{report(failing)}"
    return [v for v in found if v.get("impact") not in FAILING]
