"""The documentation's Python examples run as written, each ```python block on its own; the
README's links lead somewhere; and CI runs the README's test command as written."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = ROOT / "docs"
_PYTHON_BLOCK = re.compile(r"^```python\n(.*?)^```$", re.MULTILINE | re.DOTALL)
_LINK = re.compile(r"\]\(([^)\s]+)\)|src=\"([^\"]+)\"")


def python_blocks(markdown: str) -> list[tuple[int, str]]:
    """Each ```python block of a Markdown text with the line it starts on."""
    return [
        (markdown.count("\n", 0, match.start()) + 1, match.group(1))
        for match in _PYTHON_BLOCK.finditer(markdown)
    ]


def documented_blocks() -> list[tuple[str, int, str]]:
    pages = [README, *sorted(DOCS.rglob("*.md"))]
    return [
        (str(page.relative_to(ROOT)), line, source)
        for page in pages
        for line, source in python_blocks(page.read_text("utf-8"))
    ]


def test_the_readme_has_python_examples() -> None:
    assert len(python_blocks(README.read_text("utf-8"))) >= 2


def test_the_readme_is_a_front_door_not_a_manual() -> None:
    # the manual is docs/; the README says what this is, how to set it up, and where to read on
    assert len(README.read_text("utf-8").splitlines()) <= 250


@pytest.mark.parametrize(
    "page, line, source",
    [pytest.param(page, line, source, id=f"{page}:{line}") for page, line, source in documented_blocks()],
)
def test_documented_example_runs(
    page: str, line: int, source: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Each block stands alone: a fresh namespace, nothing from the blocks before it. An engine
    # (a program that reads its messages from stdin) meets the end of its input at once; the
    # engine tests speak the protocol to it.
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    code = compile(source, f"{page}, the block at line {line}", "exec")
    exec(code, {"__name__": f"docs_block_{line}"})
    if page == "README.md":
        assert capsys.readouterr().out, "an example that prints nothing shows the reader nothing"


def test_every_link_of_the_readme_leads_to_a_file() -> None:
    # mkdocs build --strict checks the links inside docs/; the README is outside the site
    links = _LINK.findall(README.read_text("utf-8"))
    targets = [markdown or html for markdown, html in links if "://" not in (markdown or html)]
    assert targets
    for target in targets:
        path = target.split("#", 1)[0]
        assert (ROOT / path).exists(), f"the README links to {target}, which is not there"


def test_ci_runs_the_readme_test_command_byte_for_byte() -> None:
    shell_lines = [
        line
        for block in re.findall(r"^```sh\n(.*?)^```$", README.read_text("utf-8"), re.MULTILINE | re.DOTALL)
        for line in block.splitlines()
    ]
    test_commands = [line for line in shell_lines if "pytest" in line]
    assert len(test_commands) == 1, test_commands
    ci_lines = (ROOT / ".ci" / "run").read_text("utf-8").splitlines()
    assert test_commands[0] in ci_lines


def test_ci_builds_the_documentation_strictly_and_checks_the_layers() -> None:
    ci = (ROOT / ".ci" / "run").read_text("utf-8")
    assert "mkdocs build --strict" in ci
    assert "lint-imports" in ci
