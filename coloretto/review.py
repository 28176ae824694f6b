"""Game review: win chances, marks, luck and skill for every move of a game.

A review goes over a recorded game the way lichess reviews a chess game and
GNU Backgammon a backgammon match:

- **every position**: each player's win chance and expected final score;
- **every decision** (a move with more than one legal action): the move
  played, the best moves (the top three, as a chess engine's multi-PV), the
  loss in win chance and in expected points against the best move, and a mark;
- **every chance event** (the card a draw turns over, a golden joker's bonus
  card): its **luck**, the change in each player's expected outcome that the
  card caused, measured against the average over every card that could have
  come, weighted by its chance;
- **every player**: accuracy, total skill loss, total luck, and the result
  adjusted for luck.

How the figures are made
------------------------
Every position is valued by one Monte Carlo tree search of ``budget``
iterations (:func:`coloretto.analysis.analyze`'s settings: every action gets
a share of the simulations). A position's win chances and expected scores are
the search's means over its simulated games; the win chances go through the
calibration map of :mod:`coloretto.bots.calibration` and add up to 1.

**Luck** of a chance event: the position before the card comes is worth the
chance-weighted mean of the positions after each card that could come (every
one is searched, with the same settings); the luck of the card that came is
the value of its position minus that mean. The luck of a card averages to zero
over the cards (exactly, by construction); each player gets a luck figure,
in win chance and in points, from every chance event, whoever drew.

**Marks** are on the mover's loss against the best move, in win chance (from
0 to 1, lichess's thresholds) and in expected final points; a move gets the
worse of its two marks, so that a player out of the running who gives away
ten points is told so too:

==============  ================  =============  ======
mark            win-chance loss   points lost    symbol
==============  ================  =============  ======
inaccuracy      ≥ 0.05            ≥ 2            ``?!``
mistake         ≥ 0.10            ≥ 4            ``?``
blunder         ≥ 0.15            ≥ 6            ``??``
==============  ================  =============  ======

A loss inside the noise is no loss: ``noise`` is two standard errors of the
difference between the two moves' win shares (from their simulation counts),
``score_noise`` the same for their mean scores (taking a final score's spread
as :data:`SCORE_SPREAD` points); a smaller loss counts as 0 and is not marked.

**Accuracy** of a move is lichess's formula on the win-chance loss in percent
points, ``103.1668 × exp(−0.04354 × loss) − 3.1669`` clipped to [0, 100] (100
for the best move, about 50 for a 15-point loss); a player's accuracy is the
mean over their decisions.

**Luck-adjusted result**: the player's result (1 for a win, 1/k for a k-way
tie, else 0) minus the sum of their luck in win chance, as GNU Backgammon's;
the same in points, ``luck_adjusted_score``. It says how the game would have
gone for each player with average cards.

The work is a list of independent searches (:func:`plan_review` →
:class:`ReviewTask`, :func:`run_task`, :func:`assemble`), so :func:`review`
runs them on threads (the search releases the interpreter) and a server can
run them in worker processes. The same record, budget and seed give the same
review on any machine and any number of workers.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable, Hashable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from typing import Any

from coloretto.actions import Action, ActionKind, action_from_id
from coloretto.cards import card_token
from coloretto.game import Game, Observation
from coloretto.record import GameRecord, RecordError, play_recorded_move

#: iterations of search per position at the default setting: a four-player game (about 140
#: moves, 600 positions with the cards that could have come) in about 5 s on two cores
DEFAULT_BUDGET = 1200
#: the deeper look (``coloretto analyze --deep``): about five times as long
DEEP_BUDGET = 6000

INACCURACY = 0.05
MISTAKE = 0.10
BLUNDER = 0.15
THRESHOLDS = {"inaccuracy": INACCURACY, "mistake": MISTAKE, "blunder": BLUNDER}
#: the same marks in expected final points given away
POINT_THRESHOLDS = {"inaccuracy": 2.0, "mistake": 4.0, "blunder": 6.0}
#: the standard deviation of a player's final score over the simulated games from one
#: position, taken as this many points for the noise of a difference of mean scores (the
#: search keeps no sums of squares; the spread of final scores in self-play is 6 to 9 points)
SCORE_SPREAD = 9.0
_SEVERITY = ("", "inaccuracy", "mistake", "blunder")
SYMBOLS = {"blunder": "??", "mistake": "?", "inaccuracy": "?!", "": ""}
#: lines listed per decision (besides the move played)
TOP_LINES = 3
FORMAT = "coloretto-review"
VERSION = 1


def mark_for(win_loss: float, score_loss: float = 0.0) -> str:
    """The mark of a loss in win chance and in points ('' for none): the worse of the two."""
    by_win = max((i for i, m in enumerate(_SEVERITY) if not m or win_loss >= THRESHOLDS[m]), default=0)
    by_points = max(
        (i for i, m in enumerate(_SEVERITY) if not m or score_loss >= POINT_THRESHOLDS[m]), default=0
    )
    return _SEVERITY[max(by_win, by_points)]


def move_accuracy(win_loss: float) -> float:
    """Lichess's accuracy of one move, in percent, from its loss in win chance (0 to 1)."""
    loss = 100.0 * max(0.0, win_loss)
    return max(0.0, min(100.0, 103.1668 * math.exp(-0.04354 * loss) - 3.1669))


# ----------------------------------------------------------------------------- the work


@dataclass(frozen=True)
class ReviewTask:
    """One position to search. ``key``: ``("pos", i)`` for the position after move i,
    ``("alt", i, card)`` for the position after move i had it turned over ``card``."""

    key: tuple[Any, ...]
    position: Observation
    iterations: int
    seed: int


@dataclass(frozen=True)
class Line:
    """One action of a searched decision, for its mover."""

    action: str  #: notation
    action_id: int
    win: float  #: calibrated win chance after the action
    score: float  #: expected final score after it
    simulations: int
    win_share: float  #: raw mean win share of its simulated games


@dataclass(frozen=True)
class TaskResult:
    """A searched position: every seat's values, and the mover's lines if it is a decision."""

    key: tuple[Any, ...]
    win: tuple[float, ...]  #: calibrated, adding up to 1
    score: tuple[float, ...]
    win_se: tuple[float, ...]  #: standard error of each raw win share
    simulations: int
    lines: tuple[Line, ...] = ()  #: the search's move first, then by its objective


@dataclass(frozen=True)
class _Chance:
    kind: str  #: "draw" or "bonus"
    card: int  #: the card that came
    outcomes: tuple[tuple[int, float], ...]  #: every card that could have come, with its chance


@dataclass(frozen=True)
class _Step:
    number: int  #: 1-based move number
    seat: int
    action: Action
    choices: int  #: legal actions in the position before it
    chance: _Chance | None


@dataclass(frozen=True)
class ReviewPlan:
    """What a review of one record has to search, and what it needs to put it together."""

    record: GameRecord
    budget: int
    seed: int
    steps: tuple[_Step, ...]
    to_move: tuple[int | None, ...]  #: the seat to move in each position (None: over)
    #: values of the positions that need no search (a finished game: its outcome), by key
    known: Mapping[tuple[Any, ...], TaskResult]
    tasks: list[ReviewTask] = field(default_factory=list)


def _task_seed(seed: int, number: int, card: int) -> int:
    return ((seed * 1_000_003 + number) * 64 + card + 1) % 2**63


def _outcome(game: Game, key: tuple[Any, ...]) -> TaskResult:
    scores = tuple(float(b.total) for b in game.scores())
    winners = game.winners()
    win = tuple(1.0 / len(winners) if seat in winners else 0.0 for seat in range(game.players))
    return TaskResult(key, win, scores, tuple(0.0 for _ in win), 0)


def plan_review(record: GameRecord, budget: int = DEFAULT_BUDGET, seed: int = 0) -> ReviewPlan:
    """Replay ``record`` and list the positions to search (raises :class:`RecordError`)."""
    if not isinstance(budget, int) or budget < 1:
        raise ValueError(f"the review budget is iterations per position, a whole number ≥ 1, not {budget!r}")
    record.replay()  # checks every move and every card against the deal
    game = record.initial_game()
    steps: list[_Step] = []
    to_move: list[int | None] = []
    tasks: list[ReviewTask] = []
    known: dict[tuple[Any, ...], TaskResult] = {}

    def value_here(key: tuple[Any, ...], number: int, card: int) -> None:
        if game.is_over:
            known[key] = _outcome(game, key)
        else:
            tasks.append(ReviewTask(key, game.observation(0), budget, _task_seed(seed, number, card)))

    chance_after: set[int] = set()
    for number, move in enumerate(record.moves, start=1):
        if game.is_over:
            raise RecordError("the game is already over", number)
        legal = game.legal_actions
        to_move.append(game.to_move)
        seat = game.to_move if game.to_move is not None else 0
        if len(legal) > 1 or number - 1 in chance_after:
            value_here(("pos", number - 1), number - 1, -1)
        outcomes = tuple(game.chance_outcomes())
        # the record's cards, checked above: trying other cards reorders the unseen ones
        play_recorded_move(game, move, number, force_reveals=True)
        revealed = game.last_revealed()
        chance = None
        if revealed and len(outcomes) > 0:
            card = revealed[-1]
            kind = "draw" if move.action.kind is ActionKind.DRAW else "bonus"
            chance = _Chance(kind, card, outcomes)
            chance_after.add(number)
            if len(outcomes) > 1:
                game.pop()
                for other, _ in outcomes:
                    if other != card:
                        game.push(move.action, reveal=other)
                        value_here(("alt", number, other), number, other)
                        game.pop()
                play_recorded_move(game, move, number, force_reveals=True)
        steps.append(_Step(number, seat, move.action, len(legal), chance))
    final = len(record.moves)
    to_move.append(game.to_move)
    if game.is_over:
        known[("pos", final)] = _outcome(game, ("pos", final))
    else:
        value_here(("pos", final), final, -1)
    return ReviewPlan(record, budget, seed, tuple(steps), tuple(to_move), known, tasks)


def run_task(task: ReviewTask) -> TaskResult:
    """Search one position (pure CPU; the same task gives the same result)."""
    from coloretto.analysis import analyze_position

    value, actions = analyze_position(task.position, task.iterations, task.seed)
    edition = task.position.rules.edition
    shares = value.win_shares
    runs = max(1, value.simulations)
    lines = tuple(
        Line(
            a.action.notation(edition),
            a.action.id,
            a.win_probability,
            a.expected_score,
            a.simulations,
            a.win_share,
        )
        for a in actions
    )
    win_se = tuple(math.sqrt(max(p * (1.0 - p), 0.25 / runs) / runs) for p in shares)
    return TaskResult(
        task.key, value.win_probabilities, value.expected_scores, win_se, value.simulations, lines
    )


def _run_all(
    plan: ReviewPlan, workers: int | None, progress: Callable[[int, int], None] | None
) -> dict[Hashable, TaskResult]:
    total = len(plan.tasks)
    results: dict[Hashable, TaskResult] = {}
    if progress is not None:
        progress(0, total)
    threads = max(1, workers if workers is not None else min(4, os.cpu_count() or 1))
    if threads == 1:
        for task in plan.tasks:
            results[task.key] = run_task(task)
            if progress is not None:
                progress(len(results), total)
        return results
    with ThreadPoolExecutor(max_workers=threads) as pool:
        for result in pool.map(run_task, plan.tasks):
            results[result.key] = result
            if progress is not None:
                progress(len(results), total)
    return results


def review(
    record: GameRecord,
    budget: int = DEFAULT_BUDGET,
    seed: int = 0,
    workers: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> Review:
    """Review a recorded game: ``budget`` iterations of search per position, on
    ``workers`` threads (default: the cores, at most 4); ``progress(done, total)``
    is called as positions are searched."""
    plan = plan_review(record, budget, seed)
    return assemble(plan, _run_all(plan, workers, progress))


# ----------------------------------------------------------------------------- the result


@dataclass(frozen=True)
class PositionReview:
    index: int  #: the position after move ``index`` (0: the deal)
    to_move: int | None
    win: tuple[float, ...]
    score: tuple[float, ...]
    win_se: tuple[float, ...]


@dataclass(frozen=True)
class LineReview:
    action: str
    win: float
    score: float
    simulations: int
    win_share: float


@dataclass(frozen=True)
class DecisionReview:
    best: str
    best_row: int | None  #: the row the best move takes or places into
    lines: tuple[LineReview, ...]
    win_loss: float  #: 0 when inside the noise
    score_loss: float  #: 0 when inside the noise
    noise: float  #: of the win-chance loss
    score_noise: float  #: of the points lost
    mark: str
    accuracy: float


@dataclass(frozen=True)
class OutcomeReview:
    card: str
    probability: float
    win: tuple[float, ...]
    score: tuple[float, ...]


@dataclass(frozen=True)
class LuckReview:
    kind: str  #: "draw" or "bonus"
    card: str
    win: tuple[float, ...]  #: each seat's change in win chance
    score: tuple[float, ...]  #: each seat's change in expected points
    outcomes: tuple[OutcomeReview, ...]


@dataclass(frozen=True)
class MoveReview:
    number: int
    seat: int
    played: str
    decision: DecisionReview | None
    luck: LuckReview | None


@dataclass(frozen=True)
class SeatReview:
    seat: int
    name: str
    decisions: int
    accuracy: float
    inaccuracies: int
    mistakes: int
    blunders: int
    win_loss: float
    score_loss: float
    luck_win: float
    luck_win_se: float
    luck_score: float
    final_score: float
    result: float
    luck_adjusted_result: float
    luck_adjusted_score: float


@dataclass(frozen=True)
class Review:
    budget: int
    seed: int
    players: int
    seats: tuple[str, ...]
    rules: str
    positions: tuple[PositionReview, ...]
    moves: tuple[MoveReview, ...]
    summary: tuple[SeatReview, ...]
    thresholds: Mapping[str, float] = field(default_factory=lambda: dict(THRESHOLDS))
    point_thresholds: Mapping[str, float] = field(default_factory=lambda: dict(POINT_THRESHOLDS))

    def to_dict(self) -> dict[str, Any]:
        data = {"format": FORMAT, "version": VERSION}
        data.update(asdict(self))
        data["thresholds"] = dict(self.thresholds)
        data["point_thresholds"] = dict(self.point_thresholds)
        return _lists(data)

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, allow_nan=False)

    @classmethod
    def from_dict(cls, data: Any) -> Review:
        """Read :meth:`to_dict`'s form back (``ValueError`` naming what is wrong)."""
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise ValueError(f"not a review: the format must be {FORMAT!r}")
        if data.get("version") != VERSION:
            raise ValueError(f"review version {data.get('version')!r} is not {VERSION}")
        try:
            return cls(
                budget=int(data["budget"]),
                seed=int(data["seed"]),
                players=int(data["players"]),
                seats=tuple(str(s) for s in data["seats"]),
                rules=str(data["rules"]),
                positions=tuple(_position(p) for p in data["positions"]),
                moves=tuple(_move(m) for m in data["moves"]),
                summary=tuple(_seat_review(s) for s in data["summary"]),
                thresholds={str(k): float(v) for k, v in data["thresholds"].items()},
                point_thresholds={str(k): float(v) for k, v in data["point_thresholds"].items()},
            )
        except (KeyError, TypeError, AttributeError) as exc:
            raise ValueError(f"the review is malformed: {exc}") from None

    @classmethod
    def from_json(cls, text: str) -> Review:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"the review is not JSON: {exc}") from None
        return cls.from_dict(data)

    def win_graph(self) -> list[tuple[float, ...]]:
        """Every seat's win chance at every position, in order."""
        return [p.win for p in self.positions]


def _lists(value: Any) -> Any:
    """Tuples as lists, and NaN (an unfinished game's result) as null: JSON has no NaN."""
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, dict):
        return {k: _lists(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_lists(v) for v in value]
    return value


def _seat_review(s: dict[str, Any]) -> SeatReview:
    """A seat's summary, with the null result of an unfinished game back as NaN."""
    unfinished = {key: math.nan for key in ("result", "luck_adjusted_result") if s.get(key, 0.0) is None}
    return SeatReview(**{**s, **unfinished})


def _floats(values: Sequence[Any]) -> tuple[float, ...]:
    return tuple(float(v) for v in values)


def _position(p: dict[str, Any]) -> PositionReview:
    return PositionReview(
        int(p["index"]), p["to_move"], _floats(p["win"]), _floats(p["score"]), _floats(p["win_se"])
    )


def _move(m: dict[str, Any]) -> MoveReview:
    d = m["decision"]
    decision = None
    if d is not None:
        decision = DecisionReview(
            best=str(d["best"]),
            best_row=d["best_row"],
            lines=tuple(LineReview(**line) for line in d["lines"]),
            win_loss=float(d["win_loss"]),
            score_loss=float(d["score_loss"]),
            noise=float(d["noise"]),
            score_noise=float(d["score_noise"]),
            mark=str(d["mark"]),
            accuracy=float(d["accuracy"]),
        )
    luck = None
    if m["luck"] is not None:
        u = m["luck"]
        luck = LuckReview(
            kind=str(u["kind"]),
            card=str(u["card"]),
            win=_floats(u["win"]),
            score=_floats(u["score"]),
            outcomes=tuple(
                OutcomeReview(str(o["card"]), float(o["probability"]), _floats(o["win"]), _floats(o["score"]))
                for o in u["outcomes"]
            ),
        )
    return MoveReview(int(m["number"]), int(m["seat"]), str(m["played"]), decision, luck)


def _row_of(action: Action) -> int | None:
    return action.index if action.kind in (ActionKind.TAKE, ActionKind.PLACE) else None


def _mean(values: Sequence[TaskResult], weights: Sequence[float], attr: str) -> tuple[float, ...]:
    columns = zip(*(getattr(v, attr) for v in values), strict=True)
    return tuple(sum(w * x for w, x in zip(weights, column, strict=True)) for column in columns)


def assemble(plan: ReviewPlan, results: Mapping[Hashable, TaskResult]) -> Review:
    """Put a review together from the searched positions (``results`` by task key)."""
    record = plan.record
    edition = record.rules.edition
    players = record.rules.players
    values: dict[tuple[Any, ...], TaskResult] = dict(plan.known)
    for task in plan.tasks:
        try:
            values[task.key] = results[task.key]
        except KeyError:
            raise ValueError(f"no result for the review task {task.key!r}") from None
    steps = plan.steps
    count = len(steps)

    def chance_values(step: _Step, after: TaskResult) -> list[tuple[int, float, TaskResult]]:
        assert step.chance is not None
        return [
            (card, p, after if card == step.chance.card else values[("alt", step.number, card)])
            for card, p in step.chance.outcomes
        ]

    # every position's value, from the end: a forced move's position is worth what follows it
    position_value: list[TaskResult] = [values[("pos", count)]] * (count + 1)
    for i in range(count - 1, -1, -1):
        own = values.get(("pos", i))
        if own is not None:
            position_value[i] = own
            continue
        step = steps[i]
        after = position_value[i + 1]
        if step.chance is None or len(step.chance.outcomes) < 2:
            position_value[i] = after
        else:
            branch = chance_values(step, after)
            weights = [p for _, p, _ in branch]
            children = [v for _, _, v in branch]
            position_value[i] = TaskResult(
                ("pos", i),
                _mean(children, weights, "win"),
                _mean(children, weights, "score"),
                after.win_se,
                after.simulations,
            )

    positions = tuple(
        PositionReview(i, plan.to_move[i], value.win, value.score, value.win_se)
        for i, value in enumerate(position_value)
    )

    moves = []
    for step in steps:
        before = values.get(("pos", step.number - 1))
        decision = None
        if step.choices > 1 and before is not None and before.lines:
            decision = _decision(before, step, edition)
        luck = None
        if step.chance is not None:
            after = position_value[step.number]
            if len(step.chance.outcomes) > 1:
                branch = chance_values(step, after)
                weights = [p for _, p, _ in branch]
                children = [v for _, _, v in branch]
                mean_win = _mean(children, weights, "win")
                mean_score = _mean(children, weights, "score")
            else:
                branch = [(step.chance.card, 1.0, after)]
                mean_win, mean_score = after.win, after.score
            luck = LuckReview(
                kind=step.chance.kind,
                card=card_token(step.chance.card, edition),
                win=tuple(a - m for a, m in zip(after.win, mean_win, strict=True)),
                score=tuple(a - m for a, m in zip(after.score, mean_score, strict=True)),
                outcomes=tuple(
                    OutcomeReview(card_token(card, edition), p, v.win, v.score) for card, p, v in branch
                ),
            )
        moves.append(MoveReview(step.number, step.seat, step.action.notation(edition), decision, luck))

    seats = record.seat_labels
    summary = _summary(moves, seats, record.replay(), values, steps)
    return Review(
        budget=plan.budget,
        seed=plan.seed,
        players=players,
        seats=seats,
        rules=record.rules.describe(),
        positions=positions,
        moves=tuple(moves),
        summary=summary,
    )


def _decision(before: TaskResult, step: _Step, edition: Any) -> DecisionReview | None:
    lines = before.lines
    played_id = step.action.id
    played = next((line for line in lines if line.action_id == played_id), None)
    if played is None:
        return None
    best = lines[0]
    noise = score_noise = win_loss = score_loss = 0.0
    if played is not best:
        noise = 2.0 * math.sqrt(_variance(best) + _variance(played))
        score_noise = (
            2.0 * SCORE_SPREAD * math.sqrt(1.0 / max(1, best.simulations) + 1.0 / max(1, played.simulations))
        )
        win_loss = max(0.0, best.win - played.win)
        if win_loss <= noise:
            win_loss = 0.0
        score_loss = max(0.0, best.score - played.score)
        if score_loss <= score_noise:
            score_loss = 0.0
    shown = list(lines[:TOP_LINES])
    if played not in shown:
        shown.append(played)
    best_action = action_from_id(best.action_id)
    return DecisionReview(
        best=best.action,
        best_row=_row_of(best_action),
        lines=tuple(LineReview(x.action, x.win, x.score, x.simulations, x.win_share) for x in shown),
        win_loss=win_loss,
        score_loss=score_loss,
        noise=noise,
        score_noise=score_noise,
        mark=mark_for(win_loss, score_loss),
        accuracy=move_accuracy(win_loss),
    )


def _variance(line: Line) -> float:
    """The variance of a line's mean win share (at least that of one win in its games)."""
    n = max(1, line.simulations)
    p = min(max(line.win_share, 1.0 / (n + 1)), 1.0 - 1.0 / (n + 1))
    return p * (1.0 - p) / n


def _summary(
    moves: Sequence[MoveReview],
    seats: Sequence[str],
    final: Game,
    values: Mapping[tuple[Any, ...], TaskResult],
    steps: Sequence[_Step],
) -> tuple[SeatReview, ...]:
    scores = [float(b.total) for b in final.scores()]
    winners = final.winners() if final.is_over else ()
    out = []
    for seat, name in enumerate(seats):
        mine = [m.decision for m in moves if m.seat == seat and m.decision is not None]
        marks = [d.mark for d in mine]
        luck_win = sum(m.luck.win[seat] for m in moves if m.luck is not None)
        luck_score = sum(m.luck.score[seat] for m in moves if m.luck is not None)
        # the luck's noise: that of the value of each position a card led to
        se2 = 0.0
        for step in steps:
            if step.chance is not None and len(step.chance.outcomes) > 1:
                after = values.get(("pos", step.number))
                if after is not None:
                    se2 += after.win_se[seat] ** 2
        result = (1.0 / len(winners) if seat in winners else 0.0) if final.is_over else float("nan")
        out.append(
            SeatReview(
                seat=seat,
                name=name,
                decisions=len(mine),
                accuracy=sum(d.accuracy for d in mine) / len(mine) if mine else 100.0,
                inaccuracies=marks.count("inaccuracy"),
                mistakes=marks.count("mistake"),
                blunders=marks.count("blunder"),
                win_loss=sum(d.win_loss for d in mine),
                score_loss=sum(d.score_loss for d in mine),
                luck_win=luck_win,
                luck_win_se=math.sqrt(se2),
                luck_score=luck_score,
                final_score=scores[seat],
                result=result,
                luck_adjusted_result=result - luck_win,
                luck_adjusted_score=scores[seat] - luck_score,
            )
        )
    return tuple(out)
