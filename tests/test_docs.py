"""The README's Python examples run as written, each ```python block on its own,
and CI runs the README's test command as written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
_PYTHON_BLOCK = re.compile(r"^```python\n(.*?)^```$", re.MULTILINE | re.DOTALL)


def python_blocks(markdown: str) -> list[tuple[int, str]]:
    """Each ```python block of a Markdown text with the line it starts on."""
    return [
        (markdown.count("\n", 0, match.start()) + 1, match.group(1))
        for match in _PYTHON_BLOCK.finditer(markdown)
    ]


def test_the_readme_has_python_examples() -> None:
    assert len(python_blocks(README.read_text("utf-8"))) >= 2


@pytest.mark.parametrize(
    "line, source",
    [
        pytest.param(line, source, id=f"README.md:{line}")
        for line, source in python_blocks(README.read_text("utf-8"))
    ],
)
def test_readme_example_runs(line: int, source: str, capsys: pytest.CaptureFixture[str]) -> None:
    # Each block stands alone: a fresh namespace, nothing from the blocks before it.
    code = compile(source, f"README.md, the block at line {line}", "exec")
    exec(code, {"__name__": f"readme_block_{line}"})
    assert capsys.readouterr().out, "an example that prints nothing shows the reader nothing"


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


RESEARCH = ROOT / "docs" / "research.md"


@pytest.mark.parametrize(
    "line, source",
    [
        pytest.param(line, source, id=f"docs/research.md:{line}")
        for line, source in python_blocks(RESEARCH.read_text("utf-8"))
    ],
)
def test_research_guide_example_runs(line: int, source: str) -> None:
    # the research guide's examples are what a researcher copies first: each runs on its own
    exec(
        compile(source, f"docs/research.md, the block at line {line}", "exec"),
        {"__name__": f"research_{line}"},
    )
