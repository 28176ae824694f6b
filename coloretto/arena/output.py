"""What a tournament leaves behind: JSON, CSV, a PNG chart, and tables on the terminal.

Files in the output directory:

==================  ==========================================================
``tournament.json``  the settings (what ``--resume`` reads)
``games.jsonl``      one line per finished game, appended as games finish
``results.json``     the summary: per bot, head-to-head, forfeits
``bots.csv``         per bot figures, one row each
``head_to_head.csv`` per ordered pair of bots
``games.csv``        per game and seat: bot, score, rank, win share, forfeit
``forfeits.log``     one line per forfeit with its reason
``chart.png``        each bot's score distribution and win share with its interval
==================  ==========================================================

Seats count from 1 where people read them (the terminal tables, ``games.csv``,
``forfeits.log``), and from 0 in the JSON files meant for programs
(``results.json``, ``games.jsonl``), as in records and the engine protocol.
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from coloretto import charts
from coloretto.arena.config import TournamentConfig

SUMMARY_FORMAT = "coloretto-arena-results"
BOT_COLUMNS = (
    "bot",
    "games",
    "wins",
    "win_share",
    "win_share_ci",
    "mean_score",
    "score_ci",
    "mean_margin",
    "margin_ci",
    "mean_rank",
    "openskill_mu",
    "openskill_sigma",
    "openskill_ordinal",
    "forfeits",
    "scored_games",
)
PAIR_COLUMNS = (
    "bot",
    "opponent",
    "pairs",
    "wins",
    "ties",
    "losses",
    "share",
    "share_ci",
    "mean_score_diff",
    "score_diff_ci",
)


def summary_document(
    config: TournamentConfig, results: Sequence[dict[str, Any]], stats: dict[str, Any], interrupted: bool
) -> dict[str, Any]:
    forfeits = [
        {"game": r["game"], **f} for r in sorted(results, key=lambda r: r["game"]) for f in r["forfeits"]
    ]
    return {
        "format": SUMMARY_FORMAT,
        "version": 1,
        "settings": config.to_dict(),
        "rules": config.rules.describe(),
        "seatings": [list(s) for s in config.seatings],
        "deals": config.deals,
        "games_planned": config.total_games,
        "games_played": len(results),
        "complete": len(results) == config.total_games,
        "interrupted": interrupted,
        "bots": stats["bots"],
        "head_to_head": stats["head_to_head"],
        "forfeits": forfeits,
    }


def _csv_value(value: Any) -> Any:
    if isinstance(value, list):
        return " ".join("" if v is None else f"{v:.6g}" for v in value)
    if isinstance(value, float):
        return f"{value:.6g}"
    return "" if value is None else value


def _write_csv(path: Path, columns: Sequence[str], rows: Sequence[dict[str, Any]]) -> None:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        header = []
        for column in columns:
            if column.endswith("_ci"):
                header += [column + "_low", column + "_high"]
            else:
                header.append(column)
        writer.writerow(header)
        for row in rows:
            line = []
            for column in columns:
                value = row[column]
                if column.endswith("_ci"):
                    line += [_csv_value(v) for v in value]
                else:
                    line.append(_csv_value(value))
            writer.writerow(line)


def write_outputs(out_dir: Path, document: dict[str, Any], results: Sequence[dict[str, Any]]) -> list[Path]:
    """Write results.json, the CSV files, forfeits.log and chart.png; return their paths."""
    written = []
    path = out_dir / "results.json"
    path.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    written.append(path)
    _write_csv(out_dir / "bots.csv", BOT_COLUMNS, document["bots"])
    _write_csv(out_dir / "head_to_head.csv", PAIR_COLUMNS, document["head_to_head"])
    written += [out_dir / "bots.csv", out_dir / "head_to_head.csv"]
    with (out_dir / "games.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["game", "deal", "seating", "seat", "bot", "score", "rank", "win_share", "forfeit"])
        for r in sorted(results, key=lambda r: r["game"]):
            for seat, bot in enumerate(r["bots"]):
                writer.writerow(
                    [
                        r["game"],
                        r["deal"],
                        r["seating"],
                        seat + 1,
                        bot,
                        r["scores"][seat],
                        _csv_value(float(r["ranks"][seat])),
                        _csv_value(float(r["win_shares"][seat])),
                        int(r["forfeited"][seat]),
                    ]
                )
    written.append(out_dir / "games.csv")
    with (out_dir / "forfeits.log").open("w", encoding="utf-8") as handle:
        for f in document["forfeits"]:
            handle.write(
                f"game {f['game']} seat {f['seat'] + 1} {f['bot']}: move {f['move']}: {f['reason']}\n"
            )
    written.append(out_dir / "forfeits.log")
    chart = out_dir / "chart.png"
    if charts.can_draw(chart):
        write_chart(chart, document, results)
        written.append(chart)
    return written


def write_chart(path: Path, document: dict[str, Any], results: Sequence[dict[str, Any]]) -> None:
    """Left: each bot's score distribution (box and points); right: win share
    with its 95 % Wilson interval and the share an equal bot would get."""
    plt = charts.pyplot()

    bots = [b["bot"] for b in document["bots"]]
    scores: dict[str, list[float]] = {b: [] for b in bots}
    for r in results:
        for seat, bot in enumerate(r["bots"]):
            if not r["forfeited"][seat]:
                scores[bot].append(r["scores"][seat])
    figure, (left, right) = plt.subplots(1, 2, figsize=(11, 1.2 + 0.7 * len(bots)), constrained_layout=True)
    data = [scores[b] or [math.nan] for b in bots]
    labels = [b if len(b) <= 24 else b[:11] + "…" + b[-12:] for b in bots]
    left.boxplot(data, orientation="horizontal", tick_labels=labels, showmeans=True)
    left.invert_yaxis()  # the lineup's order, top down
    left.set_xlabel("final score")
    left.set_title("score distribution")
    shares = [b["win_share"] or 0.0 for b in document["bots"]]
    low = [s - (b["win_share_ci"][0] or 0.0) for s, b in zip(shares, document["bots"])]
    high = [(b["win_share_ci"][1] or 0.0) - s for s, b in zip(shares, document["bots"])]
    positions = list(range(1, len(bots) + 1))
    right.barh(positions, shares, xerr=[low, high], capsize=4, color="#4c72b0")
    right.set_yticks(positions, labels)
    right.invert_yaxis()
    players = document["settings"]["rules"]["players"]
    right.axvline(1 / players, color="grey", linestyle="--", label=f"equal strength (1/{players})")
    right.set_xlim(0, 1)
    right.set_xlabel("win share (ties split), 95 % Wilson interval")
    right.set_title(f"{document['games_played']} games")
    right.legend(loc="lower right", fontsize="small")
    figure.savefig(path, dpi=100)
    plt.close(figure)


# ------------------------------------------------------------- terminal


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.1f}%"


def _num(value: float | None, digits: int = 2) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def print_summary(console: Console, document: dict[str, Any]) -> None:
    state = "complete" if document["complete"] else "INCOMPLETE"
    console.print(
        f"[bold]{document['games_played']} of {document['games_planned']} games ({state})[/bold]; "
        f"{document['rules']}; {document['deals']} deals × {len(document['seatings'])} seatings; "
        f"seed {document['settings']['seed']}"
    )
    table = Table(title="per bot (95 % intervals in brackets)", title_justify="left")
    table.add_column("bot", overflow="fold")
    for heading in ("games", "win share", "mean score", "margin", "rank", "openskill μ±σ", "forfeits"):
        table.add_column(heading, justify="right", no_wrap=True)
    for b in document["bots"]:
        low, high = b["win_share_ci"]
        table.add_row(
            b["bot"],
            str(b["games"]),
            f"{_pct(b['win_share'])} ({_pct(low)}–{_pct(high)})",
            f"{_num(b['mean_score'], 1)} ({_num(b['score_ci'][0], 1)}–{_num(b['score_ci'][1], 1)})",
            _num(b["mean_margin"], 1),
            _num(b["mean_rank"]),
            f"{_num(b['openskill_mu'], 1)}±{_num(b['openskill_sigma'], 1)}",
            str(b["forfeits"]),
        )
    console.print(table)
    if document["head_to_head"]:
        pairs = Table(title="head to head (who placed higher; ties count half)", title_justify="left")
        pairs.add_column("bot", overflow="fold")
        pairs.add_column("vs", overflow="fold")
        for heading in ("pairs", "won", "tied", "lost", "share", "score diff"):
            pairs.add_column(heading, justify="right", no_wrap=True)
        for p in document["head_to_head"]:
            low, high = p["share_ci"]
            pairs.add_row(
                p["bot"],
                p["opponent"],
                str(p["pairs"]),
                str(p["wins"]),
                str(p["ties"]),
                str(p["losses"]),
                f"{_pct(p['share'])} ({_pct(low)}–{_pct(high)})",
                _num(p["mean_score_diff"], 1),
            )
        console.print(pairs)
    if document["forfeits"]:
        console.print(f"[yellow]{len(document['forfeits'])} forfeit(s):[/yellow]")
        for f in document["forfeits"][:10]:
            console.print(
                f"  game {f['game']} seat {f['seat'] + 1} {f['bot']}: {f['reason']}",
                markup=False,
                soft_wrap=True,
            )
        if len(document["forfeits"]) > 10:
            console.print("  … all of them are in forfeits.log")
