"""External bots: a program that speaks the engine protocol on stdin/stdout.

``cmd:python my_bot.py`` in a lineup starts ``python my_bot.py`` and plays
its seat through it. A program serves many games (``new_game`` starts each
with a fresh bot); a worker keeps its programs alive between games, one per
command (two when the command sits in two seats of a game, and so on), and
kills one that hangs, crashes or talks nonsense. Its standard error goes to
a temporary file whose last line explains a crash.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import shlex
import subprocess
import tempfile
import time
from typing import Any

from coloretto.actions import Action, parse_action
from coloretto.bots.base import Bot
from coloretto.game import Observation
from coloretto.protocol import (
    MAX_LINE_BYTES,
    PROTOCOL_VERSION,
    ProtocolError,
    decode,
    encode,
    game_over_message,
    hello_message,
    new_game_message,
    observation_message,
)
from coloretto.rules import Rules


class EngineFailure(Exception):
    """The program broke the protocol: no answer in time, exited, or garbage."""


class EngineProcess:
    """One running program and a line reader with deadlines."""

    def __init__(self, command: str, startup_time: float) -> None:
        self.command = command
        try:
            argv = shlex.split(command)
        except ValueError as exc:
            raise EngineFailure(f"cannot read the command {command!r}: {exc}") from None
        if not argv:
            raise EngineFailure("the command is empty")
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 - lives as long as the process
        try:
            self.process = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self._stderr,
                bufsize=0,
                # its own process group: a Ctrl-C at the terminal stops the arena, which
                # then stops its programs, rather than killing them under a game in play
                process_group=0,
            )
        except OSError as exc:
            self._stderr.close()
            raise EngineFailure(f"cannot start {command!r}: {exc.strerror or exc}") from None
        self._buffer = b""
        self._selector = selectors.DefaultSelector()
        assert self.process.stdout is not None
        self._selector.register(self.process.stdout, selectors.EVENT_READ)
        self.name = command
        try:
            reply = self.request(hello_message(), startup_time, expect="hello")
            if reply.get("protocol") != PROTOCOL_VERSION:
                raise EngineFailure(f"speaks protocol {reply.get('protocol')!r}, not {PROTOCOL_VERSION}")
        except EngineFailure:
            self.close(quit_first=False)
            raise
        if isinstance(reply.get("name"), str):
            self.name = reply["name"]

    # -------------------------------------------------------------- I/O

    def send(self, message: dict[str, Any]) -> None:
        stdin = self.process.stdin
        assert stdin is not None
        try:
            stdin.write(encode(message).encode("utf-8"))
            stdin.flush()
        except (BrokenPipeError, OSError):
            raise EngineFailure(self._exit_reason()) from None

    def request(self, message: dict[str, Any], seconds: float, expect: str) -> dict[str, Any]:
        """Send a message and wait for the reply of type ``expect`` (``info``
        lines in between are skipped); EngineFailure if none comes in time."""
        self.send(message)
        deadline = time.monotonic() + seconds
        while True:
            line = self._readline(deadline, seconds)
            try:
                reply = decode(line)
            except ProtocolError as exc:
                raise EngineFailure(f"answered garbage: {exc}") from None
            kind = reply["type"]
            if kind == "info":
                continue
            if kind == "error":
                raise EngineFailure(f"reported an error: {reply.get('message')!r}")
            if kind != expect:
                raise EngineFailure(f"answered {kind!r} where {expect!r} was expected")
            return reply

    def _readline(self, deadline: float, seconds: float) -> bytes:
        stdout = self.process.stdout
        assert stdout is not None
        while b"\n" not in self._buffer:
            if len(self._buffer) > MAX_LINE_BYTES:
                raise EngineFailure(f"sent a line longer than {MAX_LINE_BYTES} bytes")
            left = deadline - time.monotonic()
            if left <= 0 or not self._selector.select(left):
                if self.process.poll() is not None:
                    raise EngineFailure(self._exit_reason())
                raise EngineFailure(f"did not answer within {seconds:g} s")
            chunk = os.read(stdout.fileno(), 65536)
            if not chunk:
                self.process.wait()
                raise EngineFailure(self._exit_reason())
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line

    def _exit_reason(self) -> str:
        code = self.process.poll()
        if code is None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                code = self.process.wait(timeout=1)
        said = ""
        with contextlib.suppress(OSError, ValueError):
            self._stderr.seek(0)
            tail = self._stderr.read()[-4000:].decode("utf-8", "replace").strip().splitlines()
            if tail:
                said = f": {tail[-1].strip()}"
        if code is None:
            return "closed its output"
        return f"exited with status {code}{said}"

    def alive(self) -> bool:
        return self.process.poll() is None

    def close(self, quit_first: bool = True) -> None:
        """Stop the program: ``quit``, then kill it if it lingers."""
        if self.alive() and quit_first:
            with contextlib.suppress(EngineFailure, OSError):
                self.send({"type": "quit"})
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=1)
        if self.alive():
            self.process.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=5)
        self._selector.close()
        for stream in (self.process.stdin, self.process.stdout):
            with contextlib.suppress(OSError):
                if stream is not None:
                    stream.close()
        self._stderr.close()


#: live programs of this process, by (command, copy); see module docstring
_ENGINES: dict[tuple[str, int], EngineProcess] = {}


def close_engines() -> None:
    """Stop every program this process started (end of a tournament)."""
    while _ENGINES:
        _, engine = _ENGINES.popitem()
        engine.close()


class ExternalBot(Bot):
    """A seat played by an external program for one game."""

    def __init__(
        self,
        command: str,
        seed: int | None,
        rules: Rules,
        seat: int,
        copy: int,
        move_time: float,
        time_margin: float,
        startup_time: float,
        game_id: str = "",
    ) -> None:
        super().__init__(seed)
        self.command = command
        self.name = f"cmd:{command}"
        self.key = (command, copy)
        self.rules = rules
        self.answer_within = move_time + time_margin  #: seconds a move may take, margin included
        engine = _ENGINES.get(self.key)
        if engine is not None and not engine.alive():
            engine.close(quit_first=False)
            engine = None
        if engine is None:
            engine = EngineProcess(command, startup_time)
            _ENGINES[self.key] = engine
        self.engine = engine
        try:
            engine.request(
                new_game_message(rules, seat, seed, move_time, game_id), startup_time, expect="ready"
            )
        except EngineFailure:
            self.discard()
            raise

    def choose(self, observation: Observation) -> Action:
        reply = self.engine.request(observation_message(observation), self.answer_within, expect="action")
        text = reply.get("action")
        if not isinstance(text, str):
            raise EngineFailure(f"answered an action that is not a string: {text!r}")
        try:
            return parse_action(text, self.rules.edition)
        except ValueError as exc:
            raise EngineFailure(f"answered an unreadable action: {exc}") from None

    def game_over(self, scores: list[int], winners: list[int]) -> None:
        try:
            self.engine.send(game_over_message(scores, winners))
        except EngineFailure:
            self.discard()

    def discard(self) -> None:
        """Kill the program (it failed); the next game starts a new one."""
        if _ENGINES.get(self.key) is self.engine:
            del _ENGINES[self.key]
        self.engine.close(quit_first=False)
