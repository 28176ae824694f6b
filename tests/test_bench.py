"""The scripts under bench/: their command lines. What they measure is run by hand (bench/README.md);
nothing here starts a server or times anything."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

COLD_START = Path(__file__).resolve().parent.parent / "bench" / "cold_start.py"


def run_cold_start(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(COLD_START), *args], capture_output=True, text=True, timeout=60, check=False
    )


def load_cold_start() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_cold_start", COLD_START)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while building the class
    spec.loader.exec_module(module)
    return module


def test_help_names_every_option() -> None:
    done = run_cold_start("--help")
    assert done.returncode == 0, done.stderr
    text = " ".join(done.stdout.split())  # argparse wraps lines to the terminal's width
    for word in ("--bot", "hard", "expert", "--json", "--timeout", "100 ms"):
        assert word in text
    assert done.stderr == ""


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--bot", "medium"], ["--bot", "'medium'", "hard", "expert"]),
        (["--timeout", "0"], ["--timeout", "> 0"]),
        (["--timeout", "soon"], ["--timeout", "'soon'"]),
        (["--json", "/nonexistent-folder-of-the-test/out.json"], ["--json", "does not exist"]),
        (["--players", "4"], ["unrecognized", "--players"]),
    ],
)
def test_bad_arguments_are_one_line_errors(args: list[str], words: list[str]) -> None:
    done = run_cold_start(*args)
    assert done.returncode == 2
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("cold_start.py: ")
    for word in words:
        assert word in lines[0]


def test_percentile_is_the_nearest_rank() -> None:
    percentile = load_cold_start().percentile
    values = [float(v) for v in range(1, 101)]
    assert percentile(values, 0.50) == 50.0
    assert percentile(values, 0.99) == 99.0
    assert percentile(values, 1.0) == 100.0
    assert percentile([7.0], 0.99) == 7.0
    assert percentile([1.0, 2.0, 3.0], 0.5) == 2.0


WHEEL_INSTALL = COLD_START.parent / "wheel_install.py"


def run_wheel_install(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(WHEEL_INSTALL), *args], capture_output=True, text=True, timeout=60, check=False
    )


def test_wheel_install_help_says_what_it_measures() -> None:
    done = run_wheel_install("--help")
    assert done.returncode == 0, done.stderr
    text = " ".join(done.stdout.split())
    for word in ("wheel", "no C compiler", "60 s", "hard bot", "--python", "--keep", "--json"):
        assert word in text
    assert done.stderr == ""


@pytest.mark.parametrize(
    ("args", "words"),
    [
        ([], ["the following arguments are required: wheel"]),
        (["/nonexistent-folder-of-the-test/coloretto.whl"], ["is not a wheel file", "python -m build"]),
        (["README.md"], ["README.md is not a wheel file"]),
        (
            ["README.md", "--json", "/nonexistent-folder-of-the-test/out.json"],
            ["--json", "/nonexistent-folder-of-the-test does not exist"],
        ),
    ],
)
def test_wheel_install_refuses_bad_arguments_in_one_line_before_any_work(
    args: list[str], words: list[str]
) -> None:
    done = run_wheel_install(*args)
    assert done.returncode == 2
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("wheel_install.py: ")
    for word in words:
        assert word in lines[0]


MODERATION_REACH = COLD_START.with_name("moderation_reach.py")


def run_moderation_reach(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(MODERATION_REACH), *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_moderation_reach_names_its_options() -> None:
    done = run_moderation_reach("--help")
    assert done.returncode == 0, done.stderr
    text = " ".join(done.stdout.split())
    for word in ("--runs", "--json", "coloretto admin", "WebSocket"):
        assert word in text


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--runs", "0"], ["--runs", "at least 1"]),
        (["--runs", "many"], ["--runs", "'many'"]),
        (["--json", "/nonexistent-folder-of-the-test/out.json"], ["--json", "does not exist"]),
    ],
)
def test_moderation_reach_refuses_bad_arguments_in_one_line(args: list[str], words: list[str]) -> None:
    done = run_moderation_reach(*args)
    assert done.returncode == 2 and done.stdout == ""
    (line,) = done.stderr.splitlines()
    assert line.startswith("moderation_reach.py: ")
    for word in words:
        assert word in line
