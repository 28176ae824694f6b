"""A bot worker process: warm up, then answer the pool's jobs (a bot's move, a hint's analysis, a
review's position) until the server is gone. :class:`~coloretto.web.runtime.workers.BotPool` starts
it (``spawn``) and talks to it through a pipe; what a job answers travels as plain values."""

from __future__ import annotations

import os
import pickle
import signal
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from coloretto.actions import Action
from coloretto.web.common.faults import inject
from coloretto.web.common.worker_metrics import WorkerMetrics

if TYPE_CHECKING:
    from multiprocessing.connection import Connection


@dataclass(frozen=True)
class HintValue:
    """One legal action valued for the player to move: the fields of
    :class:`coloretto.analysis.ActionValue`. The worker sends these, not the
    analysis's own class: unpickling that would import :mod:`coloretto.analysis`,
    and the search with it, into the server."""

    action: Action
    expected_score: float  #: the mover's mean final score in the simulated games that began with it
    win_probability: float  #: the mover's calibrated win chance after it (coloretto.bots.calibration)
    simulations: int  #: how many simulated games began with it
    utility: float  #: the search's own objective, in [0, 1]: the hints' order after the first
    win_share: float  #: the mover's raw mean win share in those games


@dataclass(frozen=True)
class PositionOutlook:
    """Every seat's win chance and expected final score in a position: the fields of
    :class:`coloretto.analysis.PositionValue` the web needs, as plain floats."""

    win_probabilities: tuple[float, ...]
    expected_scores: tuple[float, ...]
    simulations: int


def worker_main(connection: Connection, warm: tuple[str, ...], metrics_directory: str | None = None) -> None:
    """A worker process: warm up, then answer jobs until told to stop or the server is gone. With
    ``metrics_directory`` it records its metrics there (:mod:`coloretto.web.common.worker_metrics`)."""
    # Ctrl-C reaches the whole process group: the server stops its workers itself
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    metrics = WorkerMetrics.start(metrics_directory) if metrics_directory else None
    started = time.perf_counter()
    problem = _warm_up(warm)
    if metrics is not None:
        metrics.warmed(time.perf_counter() - started)
    try:
        connection.send_bytes(pickle.dumps(("ready", os.getpid(), problem)))
        while True:
            message = pickle.loads(connection.recv_bytes())
            if message is None:
                return
            if message[0] == "batch":
                reply: tuple[str, Any] = ("ok", [_answer(job, metrics) for job in message[1]])
            else:
                reply = _answer(message, metrics)
            connection.send_bytes(pickle.dumps(reply))
            if metrics is not None:
                metrics.after_jobs()
    except (EOFError, OSError):
        return  # the server is gone


def _warm_up(warm: tuple[str, ...]) -> str | None:
    """Build each bot of ``warm`` and let it choose a move (this imports the search and its
    compiled kernel); what went wrong, or None."""
    if not warm:
        return None
    try:
        from coloretto.actions import DRAW
        from coloretto.bots import make_bot
        from coloretto.game import Game
        from coloretto.rules import Rules

        inject("warmup")
        game = Game.new(Rules(players=3), seed=0)
        game.push(DRAW)  # a card to place: more than one legal action, so a search bot searches
        seat = game.to_move
        assert seat is not None
        for name in warm:
            make_bot(name, seed=0).choose(game.observation(seat))
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"
    return None


def _answer(message: tuple[Any, ...], metrics: WorkerMetrics | None = None) -> tuple[str, Any]:
    started = time.perf_counter()
    iterations = 0
    try:
        inject("worker")
        value, iterations = _execute(message)
        answer: tuple[str, Any] = ("ok", value)
    except Exception as exc:
        answer = ("error", _portable(exc))
    if metrics is not None:
        metrics.job(str(message[0]), time.perf_counter() - started, answer[0] == "ok", iterations)
    return answer


def _execute(message: tuple[Any, ...]) -> tuple[Any, int]:
    """The job's answer, and the search iterations it took (0: no search)."""
    kind = message[0]
    if kind == "choose":
        from coloretto.bots import make_bot

        _, bot, observation, seed = message
        player = make_bot(bot, seed=seed)
        action = player.choose(observation)
        if not isinstance(action, Action):
            raise TypeError(f"the bot {bot!r} answered {action!r}, not an action")
        # plain ints: nothing in the answer may make the server import numpy to read it
        return Action(action.kind, int(action.index)), int(getattr(player, "last_iterations", 0) or 0)
    if kind == "analyze":
        from coloretto.analysis import analyze

        _, observation, budget, seed = message
        values = _hint_values(analyze(observation, budget=budget, seed=seed))
        return values, sum(value.simulations for value in values)
    if kind == "review":
        from coloretto.review import run_task

        result = run_task(message[1])
        return result, int(getattr(result, "simulations", 0) or 0)
    if kind == "whatif":
        from coloretto.analysis import analyze_position

        _, observation, budget, seed = message
        # one search for both answers, the same valuation as a review's positions
        value, actions = analyze_position(observation, budget=budget, seed=seed)
        outlook = PositionOutlook(
            tuple(float(w) for w in value.win_probabilities),
            tuple(float(s) for s in value.expected_scores),
            int(value.simulations),
        )
        return (_hint_values(actions), outlook), int(value.simulations)
    raise ValueError(f"a bot worker cannot do {kind!r}")


def _hint_values(values: Any) -> list[HintValue]:
    """The analysis's action values as plain numbers: the server need not import numpy to read them."""
    return [
        HintValue(
            Action(v.action.kind, int(v.action.index)),
            float(v.expected_score),
            float(v.win_probability),
            int(v.simulations),
            float(v.utility),
            float(v.win_share),
        )
        for v in values
    ]


def _portable(exc: Exception) -> Exception:
    """``exc`` if it survives the trip to the server, else a RuntimeError that says what it was."""
    try:
        pickle.loads(pickle.dumps(exc))
    except Exception:
        return RuntimeError(f"{type(exc).__name__}: {exc}")
    return exc
