"""The bot table, checking names without building bots, and the one limit parser."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from coloretto.actions import DRAW, Action
from coloretto.analysis import analyze
from coloretto.arena import TournamentConfig
from coloretto.arena.play import budget_of
from coloretto.bots import (
    Bot,
    BotSpec,
    BotSpecError,
    Limit,
    LimitError,
    available_bots,
    check_bot,
    make_bot,
    register_bot,
    split_bot_list,
    unregister_bot,
)
from coloretto.bots.levels import LEVELS
from coloretto.bots.limits import MAX_ITERATIONS, MAX_TIME, MIN_TIME, as_limit
from coloretto.bots.mcts_options import ROLLOUTS, Settings
from coloretto.bots.registry import BUILTIN_KINDS, bot_kinds
from coloretto.game import Game, Observation
from coloretto.rules import Rules
from tests.helpers import RULE_VARIANTS

# ------------------------------------------------------------------ Limit


@pytest.mark.parametrize(
    ("text", "limit"),
    [
        ("1s", Limit(time=1.0)),
        ("250ms", Limit(time=0.25)),
        ("0.5s", Limit(time=0.5)),
        (".5s", Limit(time=0.5)),
        ("2 S", Limit(time=2.0)),
        ("5000", Limit(iterations=5000)),
        ("5000,1s", Limit(time=1.0, iterations=5000)),
        ("1s, 5000", Limit(time=1.0, iterations=5000)),
    ],
)
def test_limits_are_read_from_text(text: str, limit: Limit) -> None:
    assert Limit.parse(text) == limit
    assert as_limit(text) == limit


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("0s", "must be more than zero"),
        ("0ms", "must be more than zero"),
        ("-1s", "must be more than zero"),
        ("-1", "must be at least 1"),
        ("0", "must be at least 1"),
        ("abc", "cannot read the limit 'abc'"),
        ("1.5", "iterations are a whole number"),
        ("1e3", "iterations are a whole number"),
        ("inf", "cannot read"),
        ("nans", "cannot read"),
        ("10h", "cannot read"),
        ("", "empty"),
        ("1s,", "an empty part"),
        ("1s,2s", "two times"),
        ("5,6", "two iteration counts"),
        ("0.1ms", f"at least {MIN_TIME * 1000:g}ms"),
        ("100000s", "at most 3600s"),
        (str(MAX_ITERATIONS + 1), "at most 100,000,000"),
        ("9" * 5000, "at most 100,000,000"),
    ],
)
def test_bad_limits_are_refused_with_one_line(text: str, message: str) -> None:
    with pytest.raises(LimitError, match=message) as raised:
        Limit.parse(text)
    assert "\n" not in str(raised.value) and len(str(raised.value)) < 160


def test_a_limit_checks_its_own_fields() -> None:
    assert Limit(time=1).time == 1.0 and isinstance(Limit(time=1).time, float)
    for bad in (
        {},
        {"time": 0.0},
        {"time": float("nan")},
        {"time": MAX_TIME * 2},
        {"iterations": 0},
        {"iterations": True},
        {"time": True},
        {"iterations": 2.5},
    ):
        with pytest.raises(LimitError):
            Limit(**bad)  # type: ignore[arg-type]
    assert as_limit(300) == Limit(iterations=300)
    assert as_limit(Limit(time=2.0)) == Limit(time=2.0)
    for bad_value in (True, 1.5, None):
        with pytest.raises(LimitError):
            as_limit(bad_value)  # type: ignore[arg-type]


@given(
    time=st.none() | st.floats(min_value=MIN_TIME, max_value=MAX_TIME),
    iterations=st.none() | st.integers(min_value=1, max_value=MAX_ITERATIONS),
)
def test_a_limit_written_out_reads_back_the_same(time: float | None, iterations: int | None) -> None:
    assume(time is not None or iterations is not None)
    limit = Limit(time=time, iterations=iterations)
    assert Limit.parse(str(limit)) == limit


# ----------------------------------------------------------- the table


def test_bots_are_listed_weakest_first_with_descriptions() -> None:
    bots = available_bots()
    names = list(bots)
    assert names[0] == "random"
    assert set(names) == {kind.name for kind in BUILTIN_KINDS}
    strengths = [kind.strength for kind in bot_kinds()]
    assert strengths == sorted(strengths)
    for weaker, stronger in (("random", "greedy"), ("greedy", "heuristic"), ("heuristic", "mcts")):
        assert names.index(weaker) < names.index(stronger)
    levels = [name for name in names if name in LEVELS]
    assert levels == ["easy", "medium", "hard", "expert"]
    assert all(description and "\n" not in description for description in bots.values())


def _position_with_a_choice(rules: Rules) -> Game:
    """A drawn card waiting to be placed in one of several rows."""
    game = Game.new(rules, seed=3)
    game.push(DRAW)
    assert len(game.legal_actions) > 1
    return game


#: a name for each kind that plays fast (a built-in name keeps its own limit when it is cheap)
_QUICK_NAMES = {"mcts": "mcts:50", "expert": "mcts:50", "openspiel-mcts": "openspiel-mcts:20"}


@pytest.mark.parametrize("kind", [kind.name for kind in BUILTIN_KINDS])
def test_every_kind_builds_and_plays_a_legal_move(kind: str) -> None:
    bot = make_bot(kind, seed=1)
    assert isinstance(bot, Bot) and bot.name == kind
    assert bot.limit == check_bot(kind).limit
    quick = make_bot(_QUICK_NAMES.get(kind, kind), seed=1)
    for rules in RULE_VARIANTS[:3]:
        game = _position_with_a_choice(rules)
        action = quick.choose(game.observation(game.to_move or 0))
        assert action in game.legal_actions


def test_the_levels_are_bots_with_their_limits() -> None:
    assert check_bot("easy") == BotSpec("easy", "greedy")
    assert check_bot("medium") == BotSpec("medium", "heuristic")
    hard, expert = check_bot("hard"), check_bot("expert")
    assert (hard.kind, hard.limit) == ("mcts", Limit(time=0.5, iterations=8000))
    assert hard.settings == Settings(take=12.0, explore=0.02)
    assert (expert.kind, expert.limit) == ("mcts", Limit(time=1.0))
    assert expert.settings == Settings(take=12.0, explore=0.02, threads=2)
    assert LEVELS == {
        "easy": "greedy",
        "medium": "heuristic",
        "hard": "mcts:8000,0.5s,take=12,explore=0.02",
        "expert": "mcts:1s,threads=2,take=12,explore=0.02",
    }
    assert type(make_bot("hard", seed=1)).__name__ == "MCTSBot"
    assert make_bot("hard", seed=1).time_budget == 0.5


# ---------------------------------------------------------- check_bot


@pytest.mark.parametrize(
    ("name", "kind", "limit"),
    [
        ("random", "random", None),
        ("greedy", "greedy", None),
        (" Greedy ", "greedy", None),
        ("greedy:", "greedy", None),
        ("heuristic", "heuristic", None),
        ("mcts", "mcts", Limit(time=1.0)),
        ("mcts:1s", "mcts", Limit(time=1.0)),
        ("mcts:250ms", "mcts", Limit(time=0.25)),
        ("mcts:0.5s", "mcts", Limit(time=0.5)),
        ("mcts:5000", "mcts", Limit(iterations=5000)),
        ("mcts:5000,1s", "mcts", Limit(time=1.0, iterations=5000)),
        ("mcts:rollout=random", "mcts", Limit(time=1.0)),
        ("mcts:5000,rollout=random,c=0.7,win=0.75", "mcts", Limit(iterations=5000)),
        ("mcts:1500,take=6,explore=0.1,rollout=exact", "mcts", Limit(iterations=1500)),
        ("openspiel-mcts", "openspiel-mcts", Limit(iterations=1000)),
        ("openspiel-mcts:2000", "openspiel-mcts", Limit(iterations=2000)),
        ("openspiel-mcts:0.5s", "openspiel-mcts", Limit(time=0.5)),
    ],
)
def test_check_bot_reads_every_documented_form(name: str, kind: str, limit: Limit | None) -> None:
    spec = check_bot(name)
    assert (spec.name, spec.kind, spec.limit) == (name.strip(), kind, limit)
    bot = make_bot(spec, seed=4)
    assert bot.name == name.strip() and bot.limit == limit


def test_check_bot_reads_the_mcts_settings() -> None:
    spec = check_bot("mcts:300,rollout=random,c=0.5,win=0.25,take=4.5,explore=0")
    assert spec.settings == Settings(rollout=ROLLOUTS["random"], c=0.5, win=0.25, take=4.5, explore=0.0)
    assert check_bot("mcts:1s").settings == Settings()


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("", "a bot needs a name"),
        ("   ", "a bot needs a name"),
        ("grandmaster", "unknown bot 'grandmaster': known bots are random, greedy"),
        ("greedy:fast", "bot 'greedy:fast': it takes no options"),
        ("heuristic:deep", "takes no options"),
        ("hard:2s", "the hard level takes no options"),
        ("mcts:0s", "bot 'mcts:0s': a time limit must be more than zero"),
        ("mcts:-1", "must be at least 1"),
        ("mcts:abc", "cannot read the limit 'abc'"),
        ("mcts:1s,2s", "two times"),
        ("mcts:99999s", "at most 3600s"),
        ("mcts:1s,depth=3", "unknown mcts option 'depth'"),
        ("mcts:1s,rollout=smart", "rollout must be one of greedy, exact, random"),
        ("mcts:1s,c=x", "c must be a number"),
        ("mcts:1s,win=2", r"win must lie in \[0, 1\]"),
        ("openspiel-mcts:fast", "bot 'openspiel-mcts:fast'"),
        ("openspiel-mcts:0", "must be at least 1"),
        ("x" * 500, "unknown bot 'xxx"),
    ],
)
def test_check_bot_refuses_bad_names_with_one_line(name: str, message: str) -> None:
    with pytest.raises(BotSpecError, match=message) as raised:
        check_bot(name)
    assert "\n" not in str(raised.value) and len(str(raised.value)) < 200
    with pytest.raises(BotSpecError):
        make_bot(name, seed=1)


@pytest.mark.parametrize("named", ["playout:weights={file}", "playout:tuned,weights={file}", "ppo:{file}"])
def test_a_name_that_names_a_file_is_refused_unopened_when_files_are_not_allowed(
    tmp_path: Path, named: str
) -> None:
    """A server checks its users' bot names with files=False: the answer must be the same whether
    the file exists, is unreadable junk or is missing, so that it tells nothing of the machine."""
    suffix = ".npz" if named.startswith("ppo") else ".json"
    there = tmp_path / f"there{suffix}"
    there.write_text("not a weights or policy file")
    answers = []
    for path in (there, tmp_path / f"missing{suffix}"):
        name = named.format(file=path)
        with pytest.raises(BotSpecError) as raised:
            check_bot(name, files=False)
        answers.append(str(raised.value).replace(str(path), "FILE"))
        assert f"it names a file ({path})" in str(raised.value)
    assert answers[0] == answers[1]
    # where files are allowed, they are looked for
    with pytest.raises(BotSpecError, match=r"no policy file|cannot read"):
        check_bot(named.format(file=tmp_path / f"missing{suffix}"))


@pytest.mark.parametrize(
    "name", ["ppo", "ppo:sample", "playout:tuned", "playout:take=12", "hard", "mcts:500"]
)
def test_names_without_files_are_read_alike_with_files_allowed_or_not(name: str) -> None:
    assert check_bot(name, files=False) == check_bot(name)


def test_check_bot_refuses_what_is_not_text() -> None:
    for bad in (None, 3, ["greedy"]):
        with pytest.raises(BotSpecError, match="a bot needs a name"):
            check_bot(bad)  # type: ignore[arg-type]


def _modules_loaded_after(code: str) -> set[str]:
    script = f"import sys\n{code}\nprint(' '.join(sorted(sys.modules)))"
    output = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    return set(output.stdout.split())


def test_checking_and_listing_bots_loads_neither_the_kernel_nor_openspiel() -> None:
    names = [kind.name for kind in BUILTIN_KINDS] + [
        "mcts:1s",
        "mcts:5000,rollout=random",
        "mcts:5000,rollout=tuned",
        "playout:tuned,take=12",
        "openspiel-mcts:1s",
    ]
    loaded = _modules_loaded_after(
        f"import coloretto.bots as b\nb.available_bots()\nfor name in {names!r}:\n    b.check_bot(name)"
    )
    for heavy in (
        "pyspiel",
        "coloretto.bots._kernel",
        "coloretto.bots.kernel",
        "coloretto.bots.mcts",
        "coloretto.bots.playout",
        "coloretto.envs.openspiel_mcts",
    ):
        assert heavy not in loaded
    # the bot that is built, and only it, is imported
    loaded = _modules_loaded_after("import coloretto.bots as b\nb.make_bot('heuristic', seed=1)")
    assert "coloretto.bots.heuristic" in loaded and "coloretto.bots.simple" not in loaded
    assert "coloretto.bots._kernel" not in loaded


# ------------------------------------------------------------- plug-ins


class _FirstAction(Bot):
    def choose(self, observation: Observation) -> Action:
        return observation.legal_actions[0]


@pytest.fixture
def plugin() -> Iterator[str]:
    register_bot("first", lambda options, seed: _FirstAction(seed), "always the first legal action")
    yield "first"
    unregister_bot("first")


def test_a_plugin_bot_is_a_bot_name_listed_after_the_built_ins(plugin: str) -> None:
    assert list(available_bots())[-1] == plugin
    assert check_bot(f"{plugin}:anything") == BotSpec(f"{plugin}:anything", plugin, options="anything")
    bot = make_bot(plugin, seed=2)
    game = _position_with_a_choice(Rules(players=3))
    assert bot.name == plugin and bot.choose(game.observation(game.to_move or 0)) == game.legal_actions[0]


def test_plugins_cannot_replace_built_ins_and_leave_cleanly(plugin: str) -> None:
    with pytest.raises(ValueError, match="built-in"):
        register_bot("greedy", lambda options, seed: _FirstAction(seed), "not greedy")
    with pytest.raises(ValueError, match="a word"):
        register_bot("bad:name", lambda options, seed: _FirstAction(seed), "no")
    with pytest.raises(ValueError, match="no plug-in"):
        unregister_bot("greedy")
    register_bot("second", lambda options, seed: _FirstAction(seed), "another")
    assert list(available_bots())[-2:] == [plugin, "second"]
    unregister_bot("second")
    with pytest.raises(BotSpecError, match="unknown bot"):
        check_bot("second")
    assert check_bot(plugin).kind == plugin


# ------------------------------------------------- one limit, every user


def test_the_arena_takes_a_bots_time_from_its_limit() -> None:
    config = TournamentConfig(
        Rules(players=3), ("greedy", "random", "random"), games=1, seed=1, move_time=2.0
    )
    assert budget_of(make_bot("mcts:0.3s", seed=1), config) == 0.3
    assert budget_of(make_bot("mcts:50,0.3s", seed=1), config) == 0.3
    assert budget_of(make_bot("mcts:50", seed=1), config) == 2.0  # iterations only: the tournament's time
    assert budget_of(make_bot("greedy", seed=1), config) == 2.0


def test_analysis_takes_iterations_text_or_a_limit() -> None:
    game = _position_with_a_choice(Rules(players=3))
    by_int = analyze(game, budget=120, seed=5)
    assert analyze(game, budget="120", seed=5) == by_int
    assert analyze(game, budget=Limit(iterations=120), seed=5) == by_int
    assert sum(value.simulations for value in by_int) == 120
    assert analyze(game, budget="20ms", seed=5)
    for bad in ("0s", "soon", 0, -3):
        with pytest.raises(ValueError):
            analyze(game, budget=bad, seed=5)


@pytest.mark.parametrize("name", ["random", "greedy", "heuristic", "medium", "mcts:60", "openspiel-mcts:20"])
def test_same_seed_same_moves_for_every_kind(name: str) -> None:
    def moves(seed: int) -> list[Action]:
        game = Game.new(Rules(players=3), seed=8)
        bots = [make_bot(name, seed=seed), make_bot("greedy", seed=1), make_bot("random", seed=2)]
        played: list[Action] = []
        while not game.is_over and len(played) < 30:
            seat = game.to_move or 0
            action = bots[seat].choose(game.observation(seat))
            game.push(action)
            played.append(action)
        return played

    assert moves(4) == moves(4)


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("heuristic,greedy", ["heuristic", "greedy"]),
        ("mcts:500,take=12,greedy, mcts:1s", ["mcts:500,take=12", "greedy", "mcts:1s"]),
        ("mcts:5000,1s,rollout=random", ["mcts:5000,1s,rollout=random"]),
        # options without "=" stay with their bot; a part written kind:… starts a bot, known or not
        ("ppo:p.npz,sample,playout:tuned,take=8", ["ppo:p.npz,sample", "playout:tuned,take=8"]),
        ("greedy,someplugin:3,random", ["greedy", "someplugin:3", "random"]),
        # empty parts stay, for the caller to refuse with the seat's number
        ("greedy,,random", ["greedy", "", "random"]),
        # a bare word after a bot without options is a bot of its own (an unknown one here)
        ("heuristic,grandmaster", ["heuristic", "grandmaster"]),
        ("mcts:500,grandmaster", ["mcts:500,grandmaster"]),
        ("human,mcts:200,c=0.5,h", ["human", "mcts:200,c=0.5", "h"]),
    ],
)
def test_a_list_of_bot_names_keeps_each_bots_options(text: str, names: list[str]) -> None:
    assert split_bot_list(text, words=["human", "h"]) == names
