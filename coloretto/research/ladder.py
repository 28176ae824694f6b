"""A skill ladder: one family of bots at several budgets, each against the same
field on the same duplicate deals, so the rungs differ by the budget alone.

Each rung is an arena tournament; its **seconds per move** are timed apart
from the tournament, in this process, on the rung's own first games (the
same deals, seats and bot seeds as the arena's, replayed with a clock around
each of the rung's moves), so that every rung is timed the same way whatever
backend played the games and however busy its workers were. Timings are the
only figures that change from run to run.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from coloretto import charts
from coloretto.arena import TournamentConfig
from coloretto.bots import make_bot
from coloretto.game import Game, GameSetup, deal
from coloretto.match import match_game_seed
from coloretto.research.common import (
    LOCAL,
    ResearchError,
    Where,
    checked_bot,
    clean,
    field_lineup,
    fresh_out_dir,
    move_time_for,
    play_field,
    write_csv,
    write_json,
)
from coloretto.rules import Rules

FORMAT = "coloretto-ladder"
PLACEHOLDER = "{n}"
COLUMNS = (
    "budget",
    "bot",
    "games",
    "win_share",
    "win_share_ci",
    "mean_score",
    "score_ci",
    "mean_margin",
    "margin_ci",
    "mean_rank",
    "forfeits",
    "seconds_per_move",
    "timed_moves",
)


def parse_budgets(text: str | Sequence[str]) -> tuple[float, ...]:
    """``"250,1000,4000"`` → (250, 1000, 4000): positive numbers, each once."""
    parts = text.split(",") if isinstance(text, str) else list(text)
    budgets: list[float] = []
    for part in (p.strip() for p in parts):
        try:
            value = float(part)
        except ValueError:
            raise ResearchError(
                f"--budgets: {part!r} is not a number (write them as 250,1000,4000)"
            ) from None
        if not math.isfinite(value) or value <= 0:
            raise ResearchError(f"--budgets: {part!r} is not a positive number")
        if value in budgets:
            raise ResearchError(f"--budgets: {part} is given twice")
        budgets.append(value)
    if not budgets:
        raise ResearchError("--budgets: give at least one budget, e.g. 250,1000,4000")
    return tuple(budgets)


def budget_text(budget: float) -> str:
    return f"{budget:g}"


def rung_names(template: str, budgets: Sequence[float]) -> tuple[str, ...]:
    """The bot name of each rung: the template with ``{n}`` replaced by the budget."""
    if PLACEHOLDER not in template:
        raise ResearchError(
            f"the family {template!r} has no {PLACEHOLDER} for the budget: "
            "write it as, e.g., 'mcts:{n},take=12'"
        )
    if template.count(PLACEHOLDER) > 1:
        raise ResearchError(
            f"the family {template!r} has {PLACEHOLDER} {template.count(PLACEHOLDER)} times: "
            "give it once, for the budget, e.g. 'mcts:{n},take=12'"
        )
    return tuple(checked_bot(template.replace(PLACEHOLDER, budget_text(b)), "rung") for b in budgets)


def seconds_per_move(
    lineup: tuple[str, ...], rules: Rules, games: int, seed: int, timed_games: int
) -> tuple[float, int]:
    """Mean seconds a move of ``lineup[0]`` over the first ``timed_games`` games of
    its tournament, replayed here with the arena's deals, seats and bot seeds;
    and the number of moves timed."""
    config = TournamentConfig(rules, lineup, games=games, seed=seed, move_time=move_time_for(lineup))
    bot = lineup[0]
    make_bot(bot, 0).choose(Game.new(rules, seed=0).observation(0))  # loads what it loads, untimed
    total = 0.0
    moves = 0
    for number in range(min(timed_games, config.total_games)):
        task = config.task(number)
        seats = config.seatings[task.seating]
        game_seed = match_game_seed(config.deal_seed(task.deal), 1)
        setup = deal(rules, game_seed)
        game = Game(GameSetup(rules, setup.deck, setup.starting_cards, setup.first_player, game_seed))
        bots = [make_bot(spec, config.bot_seed(task, seat)) for seat, spec in enumerate(seats)]
        while not game.is_over:
            seat = game.to_move
            assert seat is not None
            obs = game.observation(seat)
            start = time.perf_counter()
            action = bots[seat].choose(obs)
            if seats[seat] == bot:
                total += time.perf_counter() - start
                moves += 1
            game.push(action)
    return (total / moves if moves else math.nan), moves


def ladder(
    template: str,
    budgets: Sequence[float],
    against: Sequence[str],
    rules: Rules,
    out: Path,
    *,
    games: int = 100,
    seed: int = 1,
    timed_games: int = 1,
    where: Where = LOCAL,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Play every rung against the field and write ladder.csv, ladder.json and
    ladder.png to ``out``; return the JSON document."""
    if games < 1:
        raise ResearchError("--games must be at least 1")
    if timed_games < 0:
        raise ResearchError("--timed-games must not be negative")
    budgets = tuple(sorted(budgets))
    names = rung_names(template, budgets)
    lineups = [field_lineup(name, against, rules.players) for name in names]
    out = fresh_out_dir(out, "ladder")
    say = progress or (lambda _text: None)
    rungs = []
    for index, (budget, lineup) in enumerate(zip(budgets, lineups)):
        result = play_field(
            lineup, rules, games, seed, out / "rungs" / f"{index:02d}-{budget_text(budget)}", where
        )
        seconds, timed = (
            seconds_per_move(lineup, rules, games, seed, timed_games) if timed_games else (math.nan, 0)
        )
        rungs.append(
            {
                "budget": budget,
                "bot": lineup[0],
                **result.row(),
                "seconds_per_move": clean(seconds),
                "timed_moves": timed,
            }
        )
        say(f"{lineup[0]}: win share {result.win_share:.3f}, {seconds:.4f} s a move")
    document = {
        "format": FORMAT,
        "version": 1,
        "settings": {
            "family": template,
            "budgets": list(budgets),
            "against": list(lineups[0][1:]),
            "rules": rules.to_dict(),
            "games": games,
            "seed": seed,
            "timed_games": timed_games,
        },
        "parity": clean(1 / rules.players),
        "rungs": rungs,
    }
    write_csv(out / "ladder.csv", COLUMNS, rungs)
    write_json(out / "ladder.json", document)
    if charts.can_draw(out / "ladder.png"):
        ladder_chart(out / "ladder.png", document, rules.players)
    return document


def ladder_chart(path: Path, document: dict[str, Any], players: int) -> None:
    """Left: win share against the budget (log x) with 95 % Wilson intervals and
    the parity line; right: seconds per move against the budget (log-log)."""
    plt = charts.pyplot()
    from matplotlib.ticker import NullLocator

    rungs = document["rungs"]
    xs = [r["budget"] for r in rungs]
    ys = [r["win_share"] if r["win_share"] is not None else math.nan for r in rungs]
    low = [max(0.0, y - r["win_share_ci"][0]) for r, y in zip(rungs, ys)]
    high = [max(0.0, r["win_share_ci"][1] - y) for r, y in zip(rungs, ys)]
    figure, (left, right) = plt.subplots(1, 2, figsize=(11, 4.5), constrained_layout=True)
    left.errorbar(
        xs, ys, yerr=[low, high], fmt="o-", capsize=4, color="#4c72b0", label="win share (95 % interval)"
    )
    left.axhline(1 / players, color="grey", linestyle="--", label=f"parity (1/{players})")
    left.set_xscale("log")
    left.set_ylim(0, 1)
    left.set_xlabel("budget")
    left.set_ylabel("win share against the field")
    field = ", ".join(dict.fromkeys(document["settings"]["against"]))
    left.set_title(f"{document['settings']['family']} against {field}")
    left.legend(loc="best", fontsize="small")
    seconds = [r["seconds_per_move"] if r["seconds_per_move"] is not None else math.nan for r in rungs]
    right.plot(xs, seconds, "o-", color="#dd8452")
    right.set_xscale("log")
    if any(s > 0 for s in seconds if not math.isnan(s)):
        right.set_yscale("log")
    for ax in (left, right):  # the budgets themselves as ticks, not powers of ten
        ax.set_xticks(xs, [budget_text(x) for x in xs])
        ax.xaxis.set_minor_locator(NullLocator())
    right.set_xlabel("budget")
    right.set_ylabel("seconds per move (this machine)")
    right.set_title(f"{document['settings']['games']} games a rung, the same deals")
    figure.savefig(path, dpi=100)
    plt.close(figure)
