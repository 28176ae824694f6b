"""Playing one game of a tournament, with time budgets and forfeits.

:func:`play_game` is a pure function of the tournament config and the game
number (timing aside), which is what lets one process, a pool and a Ray
cluster produce the same results.

A bot **forfeits** a game when it raises, returns something that is not a
legal action, or takes longer than its move budget plus the margin (an
external program that does not answer in that time is killed). The reason is
kept in the result. The game goes on with the ``greedy`` bot playing the
forfeited seat, so the other seats' scores come from a whole game; the
forfeiting bot is placed last, cannot win, and its score is left out of its
score statistics.

In-process bots are interrupted with ``SIGALRM`` when the budget runs out (on
the main thread of a Unix process, which is where pool and Ray workers run
games); elsewhere the time is checked after the move.
"""

from __future__ import annotations

import contextlib
import signal
import threading
import time
from collections.abc import Callable
from typing import Any

from coloretto.actions import Action
from coloretto.arena.config import (
    COMMAND_PREFIX,
    FALLBACK_BOT,
    GameTask,
    TournamentConfig,
    derive_seed,
)
from coloretto.arena.external import EngineFailure, ExternalBot
from coloretto.arena.stats import place_seats
from coloretto.bots import Bot, make_bot
from coloretto.game import Game, GameSetup, Observation, deal
from coloretto.match import match_game_seed
from coloretto.record import GameRecord
from coloretto.rules import Rules


class MoveTimeout(BaseException):
    """Raised inside a bot by the alarm: a BaseException, so that a bot's
    ``except Exception`` cannot swallow it."""


class Forfeit(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _on_alarm(signum: int, frame: Any) -> None:
    raise MoveTimeout


def timed_call(fn: Callable[[Observation], Action], obs: Observation, limit: float) -> tuple[Any, float]:
    """``fn(obs)`` and the seconds it took; MoveTimeout if it runs past ``limit``
    (interrupted by an alarm where signals allow, else measured after)."""
    use_alarm = hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
    previous = None
    if use_alarm:
        previous = signal.signal(signal.SIGALRM, _on_alarm)
        signal.setitimer(signal.ITIMER_REAL, limit)
    start = time.perf_counter()
    try:
        result = fn(obs)
    finally:
        if use_alarm:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous if previous is not None else signal.SIG_DFL)
    elapsed = time.perf_counter() - start
    if elapsed > limit:
        raise MoveTimeout
    return result, elapsed


def budget_of(bot: Bot, config: TournamentConfig) -> float:
    """Seconds per move: what the bot declares (its ``time_budget``, the time of
    its :class:`~coloretto.bots.limits.Limit`: ``mcts:0.5s``), else the
    tournament's; never more than the tournament's (a name that declares more
    is refused before the tournament starts, :func:`~coloretto.arena.config.check_budget`)."""
    own = bot.time_budget
    if isinstance(own, int | float) and not isinstance(own, bool) and own > 0:
        return min(float(own), config.move_time)
    return config.move_time


def create_bot(
    spec: str, seed: int, config: TournamentConfig, game: Game, seat: int, copy: int, game_id: str
) -> Bot:
    """A fresh bot for one seat; ``copy`` counts earlier seats with the same spec."""
    if spec.startswith(COMMAND_PREFIX):
        return ExternalBot(
            spec[len(COMMAND_PREFIX) :].strip(),
            seed,
            game.rules,
            seat,
            copy,
            config.move_time,
            config.time_margin,
            config.startup_time,
            game_id,
        )
    return make_bot(spec, seed)


_WARMED: set[tuple[str, Rules]] = set()


def warm_up(config: TournamentConfig) -> None:
    """Let each in-process bot of the lineup choose one move, untimed, once per
    process: a bot that loads tables or a model on first use must not forfeit its first timed move for it."""
    for spec in dict.fromkeys(config.lineup):
        if spec.startswith(COMMAND_PREFIX) or (spec, config.rules) in _WARMED:
            continue
        _WARMED.add((spec, config.rules))
        game = Game.new(config.rules, seed=0)
        with contextlib.suppress(Exception):  # a broken bot forfeits in the game itself, with the reason
            make_bot(spec, seed=0).choose(game.observation(game.to_move or 0))


def play_game(config: TournamentConfig, task: GameTask) -> dict[str, Any]:
    """Play game ``task.game`` (a match of ``rules.match_games`` deals) to the end.

    Returns the result as plain data: the seats' bots, totals, minus points,
    ranks, win shares, forfeits (with reasons), moves, and the records of its
    games when the config keeps them.
    """
    warm_up(config)
    rules = config.rules
    n = rules.players
    seats = config.seatings[task.seating]
    deal_seed = config.deal_seed(task.deal)
    # the games Match deals for this seed, as the terminal and the web deal them
    game_seeds = [match_game_seed(deal_seed, number) for number in range(1, rules.match_games + 1)]
    forfeits: dict[int, dict[str, Any]] = {}
    totals = [0] * n
    minus = [0] * n
    moves = 0
    records: list[str] = []
    for number, game_seed in enumerate(game_seeds):
        setup = deal(rules, game_seed)
        game = Game(GameSetup(rules, setup.deck, setup.starting_cards, setup.first_player, game_seed))
        game_id = f"{config.seed}/{task.game}" + (f"/{number + 1}" if len(game_seeds) > 1 else "")
        moves += _play_one(config, task, game, seats, number, game_id, forfeits)
        scores = game.scores()
        for seat in range(n):
            totals[seat] += scores[seat].total
            minus[seat] += scores[seat].minus_points
        if config.keep_records:
            tags = {
                "event": "coloretto arena",
                "tournament_seed": str(config.seed),
                "game": str(task.game),
                "deal": str(task.deal),
                "seating": str(task.seating),
            }
            if len(game_seeds) > 1:
                tags["match_game"] = str(number + 1)
            for seat, info in forfeits.items():
                tags[f"forfeit_seat_{seat + 1}"] = info["reason"]
            records.append(GameRecord.from_game(game, seats=seats, tags=tags).to_json())
    forfeited = [seat in forfeits for seat in range(n)]
    placing = place_seats(totals, minus, forfeited, rules)
    result: dict[str, Any] = {
        "game": task.game,
        "deal": task.deal,
        "seating": task.seating,
        "seed": deal_seed,
        "bots": list(seats),
        "scores": totals,
        "minus_points": minus,
        "ranks": list(placing.ranks),
        "winners": list(placing.winners),
        "win_shares": list(placing.win_shares),
        "forfeited": forfeited,
        "forfeits": [forfeits[s] for s in sorted(forfeits)],
        "moves": moves,
    }
    if config.keep_records:
        result["records"] = records
    return result


def _play_one(
    config: TournamentConfig,
    task: GameTask,
    game: Game,
    seats: tuple[str, ...],
    number: int,
    game_id: str,
    forfeits: dict[int, dict[str, Any]],
) -> int:
    """Play one game of the unit; record forfeits; return the number of moves."""
    n = game.rules.players
    fallback = [make_bot(FALLBACK_BOT, config.bot_seed(task, seat) ^ 0x5EED) for seat in range(n)]
    bots: list[Bot | None] = [None] * n
    budgets = [config.move_time] * n

    def forfeit(seat: int, reason: str, move: int) -> None:
        bot = bots[seat]
        if isinstance(bot, ExternalBot):
            bot.discard()
        bots[seat] = None
        forfeits[seat] = {
            "seat": seat,
            "bot": seats[seat],
            "reason": reason,
            "move": move,
            "match_game": number + 1,
        }

    for seat, spec in enumerate(seats):
        if seat in forfeits:
            continue
        seed = config.bot_seed(task, seat)
        if number:  # later games of a match: fresh bots, fresh seeds
            seed = derive_seed(seed, "match game", number)
        try:
            bot = create_bot(spec, seed, config, game, seat, seats[:seat].count(spec), game_id)
        except Exception as exc:
            forfeit(seat, f"could not start: {exc}", 0)
            continue
        bots[seat] = bot
        budgets[seat] = budget_of(bot, config)

    moves = 0
    while not game.is_over:
        mover = game.to_move
        assert mover is not None
        obs = game.observation(mover)
        moves += 1
        playing = bots[mover]
        action = None
        if playing is not None:
            action, reason = _ask(playing, obs, budgets[mover], config.time_margin)
            if reason is not None:
                forfeit(mover, reason, moves)
        if action is None:
            action = fallback[mover].choose(obs)
        game.push(action)
    scores = [s.total for s in game.scores()]
    winners = list(game.winners())
    for seated in bots:
        if isinstance(seated, ExternalBot):
            seated.game_over(scores, winners)
    return moves


def _ask(bot: Bot, obs: Observation, budget: float, margin: float) -> tuple[Action | None, str | None]:
    """The bot's move, or None and the reason it forfeits."""
    edition = obs.rules.edition
    try:
        if isinstance(bot, ExternalBot):  # it keeps its own deadline, and is killed past it
            action = bot.choose(obs)
        else:
            action, _ = timed_call(bot.choose, obs, budget + margin)
    except MoveTimeout:
        return None, f"exceeded its move budget: more than {budget:g} s + {margin:g} s margin"
    except EngineFailure as exc:
        return None, str(exc)
    except Exception as exc:
        return None, f"raised {type(exc).__name__}: {exc}"
    if not isinstance(action, Action):
        return None, f"returned {action!r}, which is not an action"
    if action not in obs.legal_actions:
        legal = " ".join(a.notation(edition) for a in obs.legal_actions)
        return None, f"played the illegal action {action.notation(edition)} (legal: {legal})"
    return action, None
