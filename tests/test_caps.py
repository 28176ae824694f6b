"""A caller's cap on a bot's budget: a bot name that declares more than the arena (or
the server) allows is refused up front, with one line naming the bot and the cap."""

from __future__ import annotations

from pathlib import Path

import pytest

from coloretto.actions import Action
from coloretto.arena import ArenaError, TournamentConfig
from coloretto.arena.config import check_budget
from coloretto.arena.play import budget_of
from coloretto.bots import Bot, check_bot, make_bot, register_bot, unregister_bot
from coloretto.cli import main
from coloretto.game import Observation
from coloretto.rules import Rules


@pytest.mark.parametrize(
    ("bot", "move_time", "shown"),
    [("mcts:5s", 1.0, "5 s"), ("mcts:5000,2s", 1.0, "2 s"), ("expert", 0.5, "1 s"), ("hard", 0.2, "0.5 s")],
)
def test_a_tournament_refuses_a_bot_that_declares_more_time_than_its_cap(
    bot: str, move_time: float, shown: str
) -> None:
    with pytest.raises(ArenaError) as caught:
        TournamentConfig(Rules(players=3), (bot, "greedy", "random"), games=3, seed=1, move_time=move_time)
    message = str(caught.value)
    assert "\n" not in message
    assert repr(bot) in message and f"thinks for {shown} a move" in message
    assert f"cap of {move_time:g} s a move (--move-time)" in message


@pytest.mark.parametrize(
    ("bot", "move_time"),
    [
        ("mcts:1s", 1.0),
        ("expert", 1.0),
        ("hard", 1.0),
        ("mcts:0.5s", 2.0),
        ("mcts:20000", 0.1),
        ("heuristic", 0.1),
    ],
)
def test_a_bot_within_the_cap_or_without_a_time_of_its_own_is_accepted(bot: str, move_time: float) -> None:
    config = TournamentConfig(
        Rules(players=3), (bot, "greedy", "random"), games=3, seed=1, move_time=move_time
    )
    assert config.lineup[0] == bot


def test_names_the_arena_cannot_read_are_left_to_forfeit_their_games() -> None:
    check_budget("no-such-bot", 1.0)  # forfeits in the game, with the reason (tests/test_arena.py)
    check_budget("cmd:python my_bot.py", 1.0)  # told the move time by the protocol


def test_the_arena_command_refuses_the_bot_before_playing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    code = main(["arena", "--bot", "mcts:5s", "--against", "greedy", "--move-time", "1",
                 "--games", "4", "--no-progress", "--out", str(out)])  # fmt: skip
    assert code == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("coloretto arena: error: bot 'mcts:5s' thinks for 5 s a move")
    assert "--move-time" in line
    assert not out.exists()  # nothing was played or written


class _Lazy(Bot):
    """A plug-in that declares a long time of its own: its name does not tell it."""

    time_budget = 30.0

    def choose(self, observation: Observation) -> Action:
        return observation.legal_actions[0]


def test_a_plugin_that_declares_more_than_the_cap_is_held_to_the_cap() -> None:
    register_bot("lazy", lambda options, seed: _Lazy(seed), "declares 30 s a move")
    try:
        config = TournamentConfig(
            Rules(players=3), ("lazy", "greedy", "random"), games=3, seed=1, move_time=1.5
        )
        assert budget_of(make_bot("lazy", seed=1), config) == 1.5
        assert budget_of(make_bot("mcts:0.3s", seed=1), config) == 0.3  # less than the cap: its own
    finally:
        unregister_bot("lazy")


def test_the_server_refuses_a_bot_over_its_cap_by_name() -> None:
    from coloretto.web.common.errors import ServiceError
    from coloretto.web.common.settings import Settings

    settings = Settings(max_bot_time=2.0, max_bot_iterations=20_000)
    settings.check_bot_budget(check_bot("mcts:2s"))
    settings.check_bot_budget(check_bot("mcts:20000"))
    with pytest.raises(ServiceError) as caught:
        settings.check_bot_budget(check_bot("mcts:5s"))
    assert "'mcts:5s'" in str(caught.value) and "at most 2 s" in str(caught.value)
