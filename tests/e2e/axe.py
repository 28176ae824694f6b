"""axe-core inside the browser tests (axe-playwright-python): the accessibility rules a page breaks.

``assert_accessible(page)`` runs axe on the page as it is now and fails, naming each rule, its help
and the elements that break it, when any violation is serious or critical (axe's own impacts).
"""

from __future__ import annotations

from typing import Any

#: the impacts a page may not have (axe: minor, moderate, serious, critical)
SERIOUS = ("serious", "critical")


def violations(page: Any, impacts: tuple[str, ...] = SERIOUS) -> list[dict[str, Any]]:
    """axe's violations on ``page`` now, of the ``impacts`` given."""
    from axe_playwright_python.sync_playwright import Axe

    found = Axe().run(page).response["violations"]
    return [v for v in found if v.get("impact") in impacts]


def describe(found: list[dict[str, Any]]) -> str:
    lines = []
    for v in found:
        targets = ", ".join(" ".join(map(str, node["target"])) for node in v["nodes"][:5])
        lines.append(f"{v['id']} ({v['impact']}): {v['help']} [{targets}]")
    return "\n".join(lines)


def assert_accessible(page: Any, where: str = "") -> None:
    """No serious or critical axe violation on ``page`` (``where`` names the page in the failure)."""
    found = violations(page)
    assert not found, f"axe on {where or page.url}:\n{describe(found)}"
