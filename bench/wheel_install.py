#!/usr/bin/env python3
"""A wheel of coloretto installed where no C compiler can be reached, then served and played.

Issue 33's target: *the wheel installs and plays with no compiler present; ``pip install`` of the
wheel plus ``coloretto serve`` under 60 s on a fresh venv*. The script

1. makes a fresh virtual environment (``python -m venv``) in a new folder;
2. hides every compiler: ``PATH`` holds the environment's ``bin`` and a folder whose one program
   fails (no ``cc``, ``gcc``, ``c++``, ``clang`` on it), ``CC`` and ``CXX`` name that program, and
   ``PYTHONPATH`` is unset, so nothing can be built and nothing comes from a checkout;
3. starts the clock, runs ``pip install WHEEL`` (the dependencies as pip finds them on this
   machine: its index, its cache), starts ``coloretto serve --port 0`` from the environment and
   polls ``/api/health`` until it answers: the clock stops there;
4. checks that the compiled search kernel it runs is the wheel's (imported from the environment's
   ``site-packages``), then creates a game of a ``hard`` bot and a ``random`` one through the HTTP
   API and waits for the ``hard`` bot to place or take (a move with a choice: a search by the
   kernel, in one of the server's bot workers).

It prints the seconds of each step and exits 1 when any step failed. ``--json FILE`` writes the
figures. The script imports nothing from coloretto. ``tests/test_wheel.py`` runs the same steps.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import NoReturn

#: the programs a build looks for: none of them may be on the PATH the install runs with
COMPILERS = ("cc", "gcc", "c++", "g++", "clang", "clang++")
#: hang guards, not targets
PIP_TIMEOUT = 900.0
SERVE_TIMEOUT = 180.0
MOVE_TIMEOUT = 180.0


class Parser(argparse.ArgumentParser):
    """Argument errors as one line, not the usage block and the error."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: {message}\n")


class InstallCheckError(RuntimeError):
    """A step failed: the message says which, with the output that says why."""


@dataclass
class Figures:
    wheel: str
    python: str
    pip_install_s: float = 0.0
    serve_answered_s: float = 0.0  #: from the start of the server to its first answer
    install_and_serve_s: float = 0.0  #: pip install + serve answering: the target's figure
    #: the CPU seconds (user + system) pip install used, and the server until it answered (its bot
    #: workers included; None where /proc cannot tell): on a shared machine, what the wall clock
    #: would approach with the machine to itself
    pip_install_cpu_s: float = 0.0
    serve_answered_cpu_s: float | None = None
    kernel: str = ""  #: the compiled kernel the environment imports
    hard_move_after_s: float | None = None  #: from the game's creation to the hard bot's searched move
    hard_move: str = ""
    compilers_on_path: list[str] = field(default_factory=list)


def no_compiler_env(venv: Path, blocked: Path) -> dict[str, str]:
    """The environment of the install and the server: the venv's bin and a folder holding one
    program that fails, standing in for CC and CXX; no PYTHONPATH or PYTHONHOME."""
    blocked.mkdir(parents=True, exist_ok=True)
    failing = blocked / "no-compiler"
    failing.write_text("#!/bin/sh\necho 'no C compiler on this machine' >&2\nexit 1\n")
    failing.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    env.update(
        PATH=os.pathsep.join([str(venv / "bin"), str(blocked)]),
        CC=str(failing),
        CXX=str(failing),
        VIRTUAL_ENV=str(venv),
    )
    return env


def children_cpu() -> float:
    """The CPU seconds of this process's finished children so far (pip's, once it has ended)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def process_tree_cpu(pid: int) -> float | None:
    """The CPU seconds a running process and its descendants have used (Linux's /proc; else None)."""
    proc = Path("/proc")
    if not (proc / str(pid) / "stat").exists():
        return None
    parents: dict[int, int] = {}
    seconds: dict[int, float] = {}
    tick = os.sysconf("SC_CLK_TCK")
    for stat in proc.glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, ValueError, IndexError):
            fields = stat.read_text().rsplit(")", 1)[1].split()
            parents[int(stat.parent.name)] = int(fields[1])
            seconds[int(stat.parent.name)] = sum(int(v) for v in fields[11:15]) / tick
    tree, grown = {pid}, True
    while grown:
        found = {child for child, parent in parents.items() if parent in tree} - tree
        grown = bool(found)
        tree |= found
    return round(sum(seconds.get(member, 0.0) for member in tree), 2)


def run(command: list[str], env: dict[str, str], cwd: Path, timeout: float, what: str) -> str:
    done = subprocess.run(
        command, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False
    )
    if done.returncode != 0:
        tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-30:])
        raise InstallCheckError(f"{what} failed (exit status {done.returncode}):\n{tail}")
    return done.stdout


def get_json(url: str, timeout: float = 10.0) -> dict:
    with urllib.request.urlopen(url, timeout=timeout) as answer:
        return json.loads(answer.read())


def post_json(url: str, body: dict) -> dict:
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}, method="POST"
    )
    with urllib.request.urlopen(request, timeout=30) as answer:
        return json.loads(answer.read())


def wait_for_address(server: subprocess.Popen, log: Path, deadline: float) -> str:
    """The address the server printed (it listens on port 0), once it does."""
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise InstallCheckError(
                f"coloretto serve exited at start:\n{log.read_text(errors='replace')[-3000:]}"
            )
        found = re.search(r"http://localhost:(\d+)/", log.read_text(errors="replace"))
        if found:
            return f"http://127.0.0.1:{found.group(1)}"
        time.sleep(0.02)  # a starting process: nothing to wait on but its output
    raise InstallCheckError(f"coloretto serve printed no address within {SERVE_TIMEOUT:.0f} s")


def wait_for_answer(url: str, server: subprocess.Popen, deadline: float) -> None:
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise InstallCheckError("coloretto serve exited before it answered")
        with contextlib.suppress(OSError, ValueError):
            get_json(f"{url}/api/health", timeout=2.0)
            return
        time.sleep(0.02)
    raise InstallCheckError(f"coloretto serve did not answer within {SERVE_TIMEOUT:.0f} s")


def wait_for_hard_move(url: str, game_id: str, seat: int, deadline: float) -> str:
    """The first move of ``seat`` that had a choice (a place or a take: the kernel searched it)."""
    while time.monotonic() < deadline:
        state = get_json(f"{url}/api/games/{game_id}")
        for entry in state.get("log", []):
            if int(entry["seat"]) == seat and str(entry["move"])[:1] in ("p", "t"):
                return str(entry["move"])
        if state["game"]["status"] != "playing":
            raise InstallCheckError(
                f"the game ended ({state['game']['status']}) before the hard bot searched"
            )
        time.sleep(0.05)
    raise InstallCheckError(f"the hard bot made no searched move within {MOVE_TIMEOUT:.0f} s")


def check_wheel(wheel: Path, folder: Path, python: str = sys.executable) -> Figures:
    """Every step of the module's docstring in ``folder``; the figures, or an InstallCheckError."""
    wheel = wheel.resolve()
    if not wheel.is_file() or wheel.suffix != ".whl":
        raise InstallCheckError(f"{wheel} is not a wheel file")
    figures = Figures(wheel=wheel.name, python=python)
    folder.mkdir(parents=True, exist_ok=True)
    venv = folder / "venv"
    run([python, "-m", "venv", str(venv)], dict(os.environ), folder, 300, "python -m venv")
    env = no_compiler_env(venv, folder / "no-compiler")
    figures.compilers_on_path = [c for c in COMPILERS if shutil.which(c, path=env["PATH"])]
    if figures.compilers_on_path:
        raise InstallCheckError(f"a compiler is still on PATH: {', '.join(figures.compilers_on_path)}")
    bin_dir = venv / "bin"
    data = folder / "data"
    log = folder / "serve.log"
    started = time.monotonic()
    cpu_before = children_cpu()
    run(
        [str(bin_dir / "python"), "-m", "pip", "install", str(wheel)], env, folder, PIP_TIMEOUT, "pip install"
    )
    figures.pip_install_s = round(time.monotonic() - started, 2)
    figures.pip_install_cpu_s = round(children_cpu() - cpu_before, 2)
    serve_started = time.monotonic()
    with log.open("wb") as output:
        server = subprocess.Popen(
            [str(bin_dir / "coloretto"), "serve", "--port", "0", "--data-dir", str(data),
             "--bot-delay", "0", "--bot-workers", "1"],
            env=env, cwd=folder, stdout=output, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            start_new_session=True,
        )  # fmt: skip
    try:
        deadline = serve_started + SERVE_TIMEOUT
        url = wait_for_address(server, log, deadline)
        wait_for_answer(url, server, deadline)
        answered = time.monotonic()
        figures.serve_answered_s = round(answered - serve_started, 2)
        figures.install_and_serve_s = round(answered - started, 2)
        figures.serve_answered_cpu_s = process_tree_cpu(server.pid)
        figures.kernel = run(
            [str(bin_dir / "python"), "-c", "import coloretto.bots._kernel as k; print(k.__file__)"],
            env, folder, 120, "importing the kernel",
        ).strip()  # fmt: skip
        if not Path(figures.kernel).resolve().is_relative_to(venv.resolve()):
            raise InstallCheckError(f"the kernel came from {figures.kernel}, not from the environment {venv}")
        body = {
            "name": "wheel check",
            "seats": [{"kind": "bot", "bot": "hard"}, {"kind": "bot", "bot": "random"}],
        }
        created_at = time.monotonic()
        game = post_json(f"{url}/api/games", body)["game"]
        figures.hard_move = wait_for_hard_move(url, game["id"], 0, created_at + MOVE_TIMEOUT)
        figures.hard_move_after_s = round(time.monotonic() - created_at, 2)
    finally:
        if server.poll() is None:
            server.terminate()
            try:
                server.wait(timeout=20)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait(timeout=10)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(server.pid, 9)  # a bot worker left behind
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = Parser(
        prog="wheel_install.py",
        description="Install a wheel of coloretto in a fresh virtual environment with no C compiler "
        "reachable, time pip install plus coloretto serve answering (the 60 s target), and play a "
        "hard bot's move from it.",
    )
    parser.add_argument("wheel", type=Path, help="the wheel, e.g. dist/coloretto-0.1.0-cp311-…whl")
    parser.add_argument(
        "--python", default=sys.executable, help="the Python of the environment (default this one)"
    )
    parser.add_argument("--keep", type=Path, default=None, metavar="DIR", help="work in DIR and keep it")
    parser.add_argument("--json", type=Path, default=None, metavar="FILE", help="also write the figures")
    args = parser.parse_args(argv)
    if args.json is not None and not args.json.absolute().parent.is_dir():
        parser.error(f"--json {args.json}: the folder {args.json.absolute().parent} does not exist")
    if not args.wheel.is_file() or args.wheel.suffix != ".whl":
        parser.error(f"{args.wheel} is not a wheel file (build one: python -m build)")
    folder = args.keep or Path(tempfile.mkdtemp(prefix="coloretto-wheel-"))
    folder.mkdir(parents=True, exist_ok=True)
    try:
        figures = check_wheel(args.wheel, folder, args.python)
    except (InstallCheckError, OSError, subprocess.TimeoutExpired) as exc:
        print(f"wheel_install.py: {exc}", file=sys.stderr)
        return 1
    finally:
        if args.keep is None:
            shutil.rmtree(folder, ignore_errors=True)
    print(f"wheel_install.py: {figures.wheel} in a fresh venv ({figures.python}), no compiler reachable")
    print(f"pip install        {figures.pip_install_s:.1f} s (CPU {figures.pip_install_cpu_s:.1f} s)")
    serve_cpu = "" if figures.serve_answered_cpu_s is None else f" (CPU {figures.serve_answered_cpu_s:.1f} s)"
    print(f"serve answering    {figures.serve_answered_s:.1f} s after its start{serve_cpu}")
    print(f"install + serve    {figures.install_and_serve_s:.1f} s (target: under 60 s)")
    print(f"kernel             {figures.kernel}")
    print(f"hard bot's move    {figures.hard_move}, {figures.hard_move_after_s:.1f} s after the game began")
    if args.json is not None:
        args.json.write_text(json.dumps(asdict(figures), indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
