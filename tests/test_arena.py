"""The arena: seatings and duplicate deals, reproducibility across backends,
forfeits, resume, and the files it writes."""

from __future__ import annotations

import csv
import json
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from coloretto.actions import DRAW, Action
from coloretto.arena import ArenaError, Seatings, TournamentConfig, play_game, run_tournament, seatings_of
from coloretto.arena.tournament import GAMES_FILE
from coloretto.bots import Bot, register_bot, unregister_bot
from coloretto.game import Observation
from coloretto.record import GameRecord
from coloretto.rules import Rules

GREEDY_VS_RANDOM = ("greedy", "random", "random")


def config(lineup: tuple[str, ...] = GREEDY_VS_RANDOM, games: int = 6, **options: Any) -> TournamentConfig:
    rules = options.pop("rules", Rules(players=len(lineup)))
    return TournamentConfig(rules, lineup, games=games, seed=options.pop("seed", 7), **options)


def comparable(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(results, key=lambda r: r["game"])


# ------------------------------------------------------------ seatings


def test_every_distinct_seating_of_the_lineup() -> None:
    one_against_three = seatings_of(("X", "Y", "Y", "Y"), Seatings.ALL)
    assert one_against_three == (
        ("X", "Y", "Y", "Y"),
        ("Y", "X", "Y", "Y"),
        ("Y", "Y", "X", "Y"),
        ("Y", "Y", "Y", "X"),
    )
    three = seatings_of(("A", "B", "C"), Seatings.ALL)
    assert len(three) == 6 and len(set(three)) == 6
    rotations = seatings_of(("A", "B", "C", "D"), Seatings.ROTATIONS)
    assert rotations == (
        ("A", "B", "C", "D"),
        ("B", "C", "D", "A"),
        ("C", "D", "A", "B"),
        ("D", "A", "B", "C"),
    )
    for seat in range(4):  # each bot sits in each seat once
        assert {s[seat] for s in rotations} == {"A", "B", "C", "D"}
    assert seatings_of(("A", "A", "B"), Seatings.ROTATIONS) == (
        ("A", "A", "B"),
        ("A", "B", "A"),
        ("B", "A", "A"),
    )


def test_games_are_rounded_up_to_whole_deals() -> None:
    c = config(games=7)  # 3 seatings of (greedy, random, random)
    assert (len(c.seatings), c.deals, c.total_games) == (3, 3, 9)
    assert [c.task(g).deal for g in range(9)] == [0, 0, 0, 1, 1, 1, 2, 2, 2]
    assert [c.task(g).seating for g in range(4)] == [0, 1, 2, 0]
    assert len({c.deal_seed(d) for d in range(100)}) == 100
    with pytest.raises(ArenaError, match="needs 3 bots"):
        TournamentConfig(Rules(players=3), ("greedy", "random"), games=5, seed=1)
    with pytest.raises(ArenaError, match="at least 1"):
        config(games=0)


@pytest.mark.slow
def test_each_deal_is_really_played_in_every_seating(tmp_path: Path) -> None:
    c = config(games=9, keep_records=True)
    outcome = run_tournament(c, tmp_path / "out", backend="serial", records_dir=tmp_path / "records")
    assert not outcome.interrupted and len(outcome.results) == 9
    by_deal: dict[int, list[GameRecord]] = defaultdict(list)
    for path in sorted((tmp_path / "records").glob("game-*.json")):
        record = GameRecord.from_json(path.read_text())
        by_deal[int(record.tags["deal"])].append(record)
        game = record.replay()  # every record replays to its saved result
        assert [s.total for s in game.scores()] == outcome.results[int(record.tags["game"])]["scores"]
    assert sorted(by_deal) == [0, 1, 2]
    for deal, records in by_deal.items():
        # the same cards, in the same order, the same starting cards and first player ...
        assert len({(r.deck, r.starting_cards, r.first_player, r.seed) for r in records}) == 1
        assert records[0].seed == c.deal_seed(deal)
        # ... played once by each seating of the lineup
        assert sorted(r.seats for r in records) == sorted(c.seatings)
    # and the deals differ from each other
    assert len({by_deal[d][0].deck for d in by_deal}) == 3


def test_a_game_is_a_pure_function_of_the_config_and_its_number() -> None:
    c = config(lineup=("greedy", "random", "random", "random"), games=12)
    first = [play_game(c, c.task(g)) for g in (5, 0, 11)]
    again = [play_game(c, c.task(g)) for g in (11, 5, 0)]
    assert sorted(first, key=lambda r: r["game"]) == sorted(again, key=lambda r: r["game"])
    other_seed = TournamentConfig(c.rules, c.lineup, games=12, seed=8)
    assert play_game(other_seed, other_seed.task(0))["scores"] != first[1]["scores"]


@pytest.mark.slow
def test_same_results_on_one_process_and_a_pool(tmp_path: Path) -> None:
    c = config(lineup=("greedy", "random", "random", "random"), games=16)
    serial = run_tournament(c, tmp_path / "serial", backend="serial")
    pool = run_tournament(c, tmp_path / "pool", backend="pool", workers=2)
    assert comparable(serial.results) == comparable(pool.results)
    assert serial.document["bots"] == pool.document["bots"]
    assert serial.document["head_to_head"] == pool.document["head_to_head"]


@pytest.mark.slow
def test_same_results_on_ray(tmp_path: Path) -> None:
    pytest.importorskip("ray")
    c = config(lineup=("greedy", "random", "random", "random"), games=8)
    serial = run_tournament(c, tmp_path / "serial", backend="serial")
    ray_run = run_tournament(c, tmp_path / "ray", backend="ray", workers=2)
    assert comparable(serial.results) == comparable(ray_run.results)
    assert serial.document["bots"] == ray_run.document["bots"]


# ------------------------------------------------------------- forfeits


class _Raises(Bot):
    def choose(self, observation: Observation) -> Action:
        if observation.round >= 2:
            raise RuntimeError("lost my marbles")
        return observation.legal_actions[0]


class _Illegal(Bot):
    def choose(self, observation: Observation) -> Action:
        if DRAW in observation.legal_actions:
            return observation.legal_actions[0]
        return DRAW  # drawing while a card waits to be placed


class _Slow(Bot):
    time_budget = 0.05

    def choose(self, observation: Observation) -> Action:
        time.sleep(0.5)
        return observation.legal_actions[0]


class _Gibberish(Bot):
    def choose(self, observation: Observation) -> Action:
        return "t1"  # type: ignore[return-value]


def _factory_of(cls: type[Bot]) -> Callable[[str, int | None], Bot]:
    return lambda _options, seed: cls(seed)


@pytest.fixture
def bad_bots() -> Iterator[None]:
    kinds: list[tuple[str, type[Bot]]] = [
        ("raises", _Raises),
        ("illegal", _Illegal),
        ("slow", _Slow),
        ("gibberish", _Gibberish),
    ]
    for kind, cls in kinds:
        register_bot(kind, _factory_of(cls), "test bot")
    yield
    for kind, _ in kinds:
        unregister_bot(kind)


@pytest.mark.parametrize(
    ("bot", "reason"),
    [
        ("raises", "raised RuntimeError: lost my marbles"),
        ("illegal", "played the illegal action d (legal: p"),
        ("slow", "exceeded its move budget: more than 0.05 s + 0.05 s margin"),
        ("gibberish", "returned 't1', which is not an action"),
    ],
)
@pytest.mark.slow
def test_a_bot_that_misbehaves_forfeits_and_the_tournament_goes_on(
    bad_bots: None, tmp_path: Path, bot: str, reason: str
) -> None:
    c = config(lineup=(bot, "greedy", "random"), games=3 if bot != "slow" else 1, time_margin=0.05)
    outcome = run_tournament(c, tmp_path / "out", backend="serial")
    assert len(outcome.results) == c.total_games
    for result in outcome.results:
        seat = result["bots"].index(bot)
        assert result["forfeited"] == [s == seat for s in range(3)]
        (forfeit,) = result["forfeits"]
        assert forfeit["seat"] == seat and forfeit["bot"] == bot
        assert forfeit["reason"].startswith(reason)
        assert result["ranks"][seat] == 3.0
        assert result["win_shares"][seat] == 0.0
        assert sum(result["win_shares"]) == pytest.approx(1.0)
        assert result["moves"] > 40  # the game was played to its end
    summary = {b["bot"]: b for b in outcome.document["bots"]}
    assert summary[bot]["forfeits"] == c.total_games
    assert summary[bot]["win_share"] == 0.0
    assert summary["greedy"]["forfeits"] == 0
    log = (tmp_path / "out" / "forfeits.log").read_text()
    assert log.count(reason) == c.total_games
    assert len(outcome.document["forfeits"]) == c.total_games


def test_an_unknown_bot_in_a_saved_lineup_forfeits_rather_than_crashing(tmp_path: Path) -> None:
    c = config(lineup=("no-such-bot", "random", "random"), games=3)
    outcome = run_tournament(c, tmp_path / "out", backend="serial")
    assert all("could not start: unknown bot" in r["forfeits"][0]["reason"] for r in outcome.results)


# ------------------------------------------------------- interruption


@pytest.mark.slow
def test_resume_after_an_interruption_gives_the_uninterrupted_results(tmp_path: Path) -> None:
    c = config(lineup=("greedy", "random", "random", "random"), games=12)
    whole = run_tournament(c, tmp_path / "whole", backend="serial")

    def interrupt_after_five(result: dict[str, Any], done: int, total: int) -> None:
        if done == 5:
            raise KeyboardInterrupt

    out = tmp_path / "cut"
    cut = run_tournament(c, out, backend="pool", workers=2, on_result=interrupt_after_five)
    assert cut.interrupted
    assert len(cut.results) == 5
    assert cut.document["complete"] is False and cut.document["games_played"] == 5
    saved = (out / GAMES_FILE).read_text().splitlines()
    assert len(saved) == 5
    # a run killed in the middle of writing a line leaves half a line: resume drops it
    with (out / GAMES_FILE).open("a") as log:
        log.write(saved[0][:40])
    with pytest.raises(ArenaError, match="already holds a tournament"):
        run_tournament(c, out, backend="serial")
    resumed = run_tournament(c, out, backend="serial", resume=True)
    assert not resumed.interrupted and resumed.played_now == 7
    assert resumed.document["complete"] is True
    assert comparable(resumed.results) == comparable(whole.results)
    assert resumed.document["bots"] == whole.document["bots"]
    assert len((out / GAMES_FILE).read_text().splitlines()) == 12


def test_resume_refuses_a_damaged_file(tmp_path: Path) -> None:
    c = config(games=3)
    run_tournament(c, tmp_path / "out", backend="serial")
    path = tmp_path / "out" / GAMES_FILE
    path.write_text("{broken\n" + path.read_text())
    with pytest.raises(ArenaError, match="line 1"):
        run_tournament(c, tmp_path / "out", backend="serial", resume=True)


# --------------------------------------------------------------- files


def test_the_output_files(tmp_path: Path) -> None:
    rules = Rules(players=3, table="violet", edition="modern")
    c = config(rules=rules, games=6)
    out = tmp_path / "out"
    outcome = run_tournament(c, out, backend="serial")
    names = {p.name for p in out.iterdir()}
    assert names == {
        "tournament.json",
        "games.jsonl",
        "results.json",
        "bots.csv",
        "head_to_head.csv",
        "games.csv",
        "forfeits.log",
        "chart.png",
    }
    document = json.loads((out / "results.json").read_text())
    assert document == json.loads(json.dumps(outcome.document))
    assert document["settings"]["rules"]["table"] == "violet"
    assert document["games_played"] == document["games_planned"] == 6
    assert [b["bot"] for b in document["bots"]] == ["greedy", "random"]
    greedy = document["bots"][0]
    assert greedy["games"] == 6 and document["bots"][1]["games"] == 12
    # the per-bot figures agree with the per-game file
    with (out / "games.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 18
    greedy_rows = [r for r in rows if r["bot"] == "greedy"]
    assert sum(int(r["score"]) for r in greedy_rows) / 6 == pytest.approx(greedy["mean_score"])
    assert sum(float(r["win_share"]) for r in greedy_rows) == pytest.approx(greedy["wins"])
    with (out / "bots.csv").open() as handle:
        bots = list(csv.DictReader(handle))
    assert [b["bot"] for b in bots] == ["greedy", "random"]
    assert float(bots[0]["win_share_ci_low"]) == pytest.approx(greedy["win_share_ci"][0])
    assert float(bots[0]["openskill_mu"]) == pytest.approx(greedy["openskill_mu"], rel=1e-5)
    with (out / "head_to_head.csv").open() as handle:
        pairs = list(csv.DictReader(handle))
    assert {(p["bot"], p["opponent"]) for p in pairs} == {("greedy", "random"), ("random", "greedy")}
    assert int(pairs[0]["wins"]) + int(pairs[0]["ties"]) + int(pairs[0]["losses"]) == 12
    assert (out / "chart.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (out / "forfeits.log").read_text() == ""
    settings = json.loads((out / "tournament.json").read_text())
    assert settings["config"]["lineup"] == list(GREEDY_VS_RANDOM)


def test_without_matplotlib_every_file_but_the_chart_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Matplotlib is the optional extra 'plots': without it the results are all there, and one
    line says the chart was left out and what to install."""
    from coloretto import charts

    monkeypatch.setattr(charts, "available", lambda: False)
    out = tmp_path / "out"
    outcome = run_tournament(config(games=2), out, backend="serial")
    assert {p.name for p in out.iterdir()} == {
        "tournament.json", "games.jsonl", "results.json", "bots.csv", "head_to_head.csv",
        "games.csv", "forfeits.log",
    }  # fmt: skip
    assert outcome.document["games_played"] == outcome.document["games_planned"]
    assert out / "chart.png" not in outcome.files
    assert f"{out / 'chart.png'}: not drawn ({charts.MISSING})" in capsys.readouterr().err


def test_a_match_adds_up_its_games(tmp_path: Path) -> None:
    c = config(rules=Rules(players=3, match_games=2), games=3, keep_records=True)
    outcome = run_tournament(c, tmp_path / "out", backend="serial", records_dir=tmp_path / "rec")
    for result in outcome.results:
        parts = [
            GameRecord.from_json((tmp_path / "rec" / f"game-{result['game']:06d}-{k}.json").read_text())
            for k in (1, 2)
        ]
        totals = [sum(p.result["totals"][s] for p in parts) for s in range(3)]
        assert result["scores"] == totals
        assert parts[0].deck != parts[1].deck


@pytest.mark.parametrize("signal_name", ["SIGINT", "SIGTERM"])
def test_a_stop_signal_waits_until_the_game_is_saved(signal_name: str) -> None:
    import os
    import signal

    from coloretto.arena.tournament import StopSignals

    number = getattr(signal, signal_name)
    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    steps = []
    with pytest.raises(KeyboardInterrupt), StopSignals() as stop_signals:
        with stop_signals.deferred():
            os.kill(os.getpid(), number)
            time.sleep(0.01)  # the handler runs here, and must not interrupt the save
            steps.append("saved")
        steps.append("after")  # not reached: the interruption comes when the save is done
    assert steps == ["saved"]
    assert {s: signal.getsignal(s) for s in before} == before
