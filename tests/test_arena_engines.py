"""Bots in other processes: a whole tournament through the engine protocol, and
programs that hang, crash or answer garbage forfeiting cleanly."""

from __future__ import annotations

import shlex
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from coloretto.arena import TournamentConfig, run_tournament
from coloretto.arena.external import _ENGINES
from coloretto.rules import Rules

PYTHON = shlex.quote(sys.executable)

#: a tiny engine in plain Python (no coloretto import): its misbehaviour is chosen by argv[1]
BAD_ENGINE = textwrap.dedent(
    """
    import json, sys, time
    mode = sys.argv[1]
    if mode == "mute":
        time.sleep(60)
    def say(message):
        sys.stdout.write(json.dumps(message) + "\\n")
        sys.stdout.flush()
    for line in sys.stdin:
        message = json.loads(line)
        kind = message["type"]
        if kind == "hello":
            say({"type": "hello", "protocol": 1, "name": "bad-" + mode})
        elif kind == "new_game":
            say({"type": "ready"})
        elif kind == "observation":
            legal = message["observation"]["legal_actions"]
            if mode == "hang":
                time.sleep(60)
            elif mode == "crash":
                sys.stderr.write("boom: the bot fell over\\n")
                sys.exit(3)
            elif mode == "garbage":
                sys.stdout.write("hello there\\n")
                sys.stdout.flush()
            elif mode == "illegal":
                say({"type": "action", "action": "t5"})
            else:
                say({"type": "info", "message": "thinking"})
                say({"type": "action", "action": legal[0]})
        elif kind == "quit":
            break
    """
)


def _running(script: str) -> list[str]:
    """Live processes running ``script`` (zombies and this shell's ps excluded)."""
    table = subprocess.run(["ps", "-eo", "stat=,args="], capture_output=True, text=True).stdout
    return [line for line in table.splitlines() if script in line and not line.lstrip().startswith("Z")]


@pytest.fixture
def bad_engine(tmp_path: Path) -> str:
    path = tmp_path / "bad_engine.py"
    path.write_text(BAD_ENGINE)
    return f"cmd:{PYTHON} {shlex.quote(str(path))}"


@pytest.mark.slow
def test_a_whole_tournament_with_a_bot_served_over_the_protocol(tmp_path: Path) -> None:
    served = f"cmd:{PYTHON} -m coloretto engine greedy"
    rules = Rules(players=3)
    remote = TournamentConfig(rules, (served, "random", "random"), games=6, seed=5, startup_time=60)
    local = TournamentConfig(rules, ("greedy", "random", "random"), games=6, seed=5)
    through_protocol = run_tournament(remote, tmp_path / "remote", backend="serial")
    in_process = run_tournament(local, tmp_path / "local", backend="serial")
    assert not _ENGINES  # every program was stopped at the end
    assert len(through_protocol.results) == 6
    assert not through_protocol.document["forfeits"]
    # the served greedy bot gets the same seeds, so it plays exactly as the one in this process
    for a, b in zip(through_protocol.results, in_process.results):
        assert a["scores"] == b["scores"] and a["ranks"] == b["ranks"]
        assert a["bots"] == [served if bot == "greedy" else bot for bot in b["bots"]]
    served_summary = through_protocol.document["bots"][0]
    assert served_summary["bot"] == served
    assert served_summary["win_share"] == in_process.document["bots"][0]["win_share"]


@pytest.mark.parametrize(
    ("mode", "reason"),
    [
        ("hang", "did not answer within 0.3 s"),
        ("crash", "exited with status 3: boom: the bot fell over"),
        ("garbage", "answered garbage: not JSON"),
        ("illegal", "played the illegal action t5"),
        ("mute", "could not start: did not answer within 1 s"),
    ],
)
@pytest.mark.slow
def test_a_program_that_misbehaves_forfeits_cleanly(
    bad_engine: str, tmp_path: Path, mode: str, reason: str
) -> None:
    lineup = (f"{bad_engine} {mode}", "greedy", "random")
    config = TournamentConfig(
        Rules(players=3),
        lineup,
        games=3,
        seed=2,
        seatings_mode="rotations",
        move_time=0.2,
        time_margin=0.1,
        startup_time=1,
    )
    outcome = run_tournament(config, tmp_path / "out", backend="serial")
    assert not _ENGINES
    assert not _running(str(tmp_path / "bad_engine.py"))  # killed, not left behind
    assert len(outcome.results) == 3
    for result in outcome.results:
        seat = result["bots"].index(lineup[0])
        (forfeit,) = result["forfeits"]
        assert forfeit["seat"] == seat
        assert forfeit["reason"].startswith(reason), forfeit["reason"]
        assert result["win_shares"][seat] == 0 and result["ranks"][seat] == 3
        assert result["moves"] > 40  # finished by the stand-in
    assert outcome.document["bots"][0]["forfeits"] == 3


def test_a_well_behaved_program_plays_through_info_lines(bad_engine: str, tmp_path: Path) -> None:
    lineup = (f"{bad_engine} polite", "random", "random")
    config = TournamentConfig(Rules(players=3), lineup, games=3, seed=2, seatings_mode="rotations")
    outcome = run_tournament(config, tmp_path / "out", backend="serial")
    assert not outcome.document["forfeits"]


def test_the_minimal_engine_of_the_protocol_document_plays(tmp_path: Path) -> None:
    document = (Path(__file__).parent.parent / "docs" / "research" / "engine-protocol.md").read_text()
    code = document.split("```python\n")[-1].split("```")[0]
    path = tmp_path / "minimal.py"
    path.write_text(code)
    lineup = (f"cmd:{PYTHON} {shlex.quote(str(path))}", "greedy", "random")
    config = TournamentConfig(Rules(players=3), lineup, games=3, seed=9, seatings_mode="rotations")
    outcome = run_tournament(config, tmp_path / "out", backend="serial")
    assert len(outcome.results) == 3
    assert not outcome.document["forfeits"]
