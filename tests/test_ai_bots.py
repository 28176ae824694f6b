"""The AI bots: legal play in every variant, reproducibility, obvious best moves."""

from __future__ import annotations

from dataclasses import replace

import pytest

from coloretto.actions import DRAW, Action, ActionKind, place, take
from coloretto.bots import BotSpecError, available_bots, make_bot
from coloretto.bots.levels import LEVELS, level_bot
from coloretto.bots.limits import Limit
from coloretto.bots.mcts import MCTSBot
from coloretto.bots.mcts_options import Settings, read_mcts_options
from coloretto.cards import PLUS_TWO
from coloretto.game import Game
from coloretto.rules import Rules
from tests.helpers import RULE_VARIANTS, stacked_game


def play(game: Game, specs: list[str], seed: int) -> list[Action]:
    """Play to the end with one bot per seat; every action is checked for legality."""
    bots = [make_bot(spec, seed=seed * 10 + seat) for seat, spec in enumerate(specs)]
    moves = []
    while not game.is_over:
        seat = game.to_move
        assert seat is not None
        obs = game.observation(seat)
        action = bots[seat].choose(obs)
        assert action in game.legal_actions, f"{specs[seat]} played an illegal {action}"
        game.push(action)
        moves.append(action)
    return moves


@pytest.mark.parametrize("rules", RULE_VARIANTS, ids=lambda r: r.describe())
def test_heuristic_and_mcts_play_only_legal_actions(rules: Rules) -> None:
    specs = ["heuristic", "mcts:60", "mcts:40,rollout=random", "greedy", "heuristic"][: rules.players]
    game = Game.new(rules, seed=11)
    play(game, specs, seed=3)
    assert game.is_over


@pytest.mark.parametrize("rules", RULE_VARIANTS, ids=lambda r: r.describe())
def test_builder_and_heuristic_play_only_legal_actions(rules: Rules) -> None:
    specs = ["builder", "heuristic", "builder", "heuristic", "builder"][: rules.players]
    game = Game.new(rules, seed=12)
    play(game, specs, seed=5)
    assert game.is_over


def test_same_seed_same_moves() -> None:
    rules = Rules(players=3)
    specs = ["mcts:80", "heuristic", "mcts:60,rollout=random"]
    first = play(Game.new(rules, seed=5), specs, seed=9)
    second = play(Game.new(rules, seed=5), specs, seed=9)
    assert first == second


def test_different_seeds_search_differently() -> None:
    rules = Rules(players=4)
    game = stacked_game(rules, ["Y", "O", "R", "P", "B", "G", "N"])
    for _ in range(3):
        game.push(DRAW)
        game.push(place(game.to_move or 0))
    obs = game.observation(game.to_move or 0)
    bots = [MCTSBot(seed, Limit(iterations=300)) for seed in (1, 2)]
    for bot in bots:
        bot.choose(obs)
    stats = [bot.search.root_statistics() for bot in bots if bot.search is not None]
    assert len(stats) == 2
    assert sum(n for _, n, *_ in stats[0]) == sum(n for _, n, *_ in stats[1]) == 300
    assert stats[0] != stats[1]


def _three_yellows() -> Game:
    """Seat 0 (starting with yellow) to move; row 1 holds three yellows, row 2 a blue."""
    rules = Rules(players=4)
    game = stacked_game(rules, ["Y", "Y", "Y", "B"], first_player=0)
    for row in (0, 0, 0, 1):
        game.push(DRAW)
        game.push(place(row))
    assert game.to_move == 0 and game.rows[0] == (0, 0, 0)
    return game


@pytest.mark.parametrize("spec", ["mcts:400", "mcts:400,rollout=random", "heuristic"])
def test_takes_three_cards_of_its_top_colour(spec: str) -> None:
    game = _three_yellows()
    bot = make_bot(spec, seed=1)
    assert bot.choose(game.observation(0)) == take(0)


def find_deciding_last_take(seed_range: range) -> tuple[Game, dict[Action, float]]:
    """A last-round position where the mover's choice of row decides whether they
    win and nothing is left to chance: no draw is possible, and whoever is left
    after the mover has one row to take. Returns it with each take's win share."""
    rules = Rules(players=4)
    for seed in seed_range:
        game = Game.new(rules, seed=seed)
        bots = [make_bot("greedy", seed=seed + s) for s in range(4)]
        while not game.is_over:
            seat = game.to_move
            assert seat is not None
            legal = game.legal_actions
            in_round = sum(not game.is_out(s) for s in range(4))
            takes = [a for a in legal if a.kind is ActionKind.TAKE]
            if game.last_round and DRAW not in legal and len(takes) >= 2 and in_round <= 2:
                shares = {}
                for action in takes:
                    trial = game.copy()
                    trial.push(action)
                    while not trial.is_over:
                        forced = trial.legal_actions
                        assert len(forced) == 1
                        trial.push(forced[0])
                    winners = trial.winners()
                    shares[action] = 1 / len(winners) if seat in winners else 0.0
                if max(shares.values()) == 1.0 and min(shares.values()) == 0.0:
                    return game, shares
            game.push(bots[seat].choose(game.observation(seat)))
    raise AssertionError("no deciding last take found")


@pytest.mark.slow
def test_mcts_finds_the_last_take_that_wins() -> None:
    game, shares = find_deciding_last_take(range(300))
    winning = [a for a, share in shares.items() if share == 1.0]
    for seed in range(3):
        bot = make_bot("mcts:200", seed=seed)
        assert bot.choose(game.observation(game.to_move or 0)) in winning


def test_budget_parsing() -> None:
    assert read_mcts_options("5000")[0] == Limit(iterations=5000)
    assert read_mcts_options("1s")[0] == Limit(time=1.0)
    assert read_mcts_options("0.2s")[0] == Limit(time=0.2)
    assert read_mcts_options("250ms")[0] == Limit(time=0.25)
    assert read_mcts_options("")[0] == Limit(time=1.0)
    budget, settings = read_mcts_options("300,rollout=random,c=0.5,win=0.25,take=4.5,explore=0")
    assert budget == Limit(iterations=300)
    assert settings == Settings(rollout=0, c=0.5, win=0.25, take=4.5, explore=0.0)
    bad_specs = ("0", "-1s", "fast", "1s,rollout=smart", "1s,c=x", "1s,c=-1", "1s,win=2", "1s,take=-1")
    for bad in (*bad_specs, "1s,explore=1.5", "1s,depth=3"):
        with pytest.raises(BotSpecError):
            read_mcts_options(bad)
    with pytest.raises(BotSpecError):
        make_bot("heuristic:deep")


def test_time_budget_answers_in_time_and_is_declared() -> None:
    import time

    game = _three_yellows()
    bot = make_bot("mcts:0.05s", seed=1)
    assert bot.limit == Limit(time=0.05)
    assert bot.time_budget == 0.05
    start = time.perf_counter()
    action = bot.choose(game.observation(0))
    assert time.perf_counter() - start < 1.0
    assert action in game.legal_actions
    assert bot.last_iterations > 0  # type: ignore[attr-defined]


def test_tree_is_reused_between_moves() -> None:
    game = _three_yellows()
    bot = MCTSBot(1, Limit(iterations=1000))
    action = bot.choose(game.observation(0))
    assert action == take(0)
    search = bot.search
    assert search is not None
    game.push(action)  # a take turns over no card: the search has been here
    bot.choose(game.observation(game.to_move or 0))
    assert search.reused > 0
    assert search.total >= search.reused + 1000


def test_levels_name_bots() -> None:
    names = available_bots()
    for level, spec in LEVELS.items():
        assert level in names
        bot = level_bot(level, seed=1)
        assert bot.name == spec
        assert make_bot(level, seed=1).name == level
    assert set(LEVELS) == {"easy", "medium", "hard", "expert"}
    with pytest.raises(BotSpecError):
        level_bot("grandmaster")
    game = _three_yellows()
    assert make_bot("medium", seed=2).choose(game.observation(0)) in game.legal_actions


# ------------------------------------------------- heuristic, two players

# seat 0 starts with yellow and orange, seat 1 with red and purple (tests.helpers.default_starting)
_Y, _O, _R, _P = range(4)


def test_two_player_heuristic_does_not_leave_the_other_alone_for_one_card() -> None:
    # a joker alone in the one-card row: taking it would leave the opponent two
    # empty rows to fill as they like, with somewhere to put every card they do not want
    game = stacked_game(Rules(players=2), ["J"], first_player=1)
    game.push(DRAW)
    game.push(place(0))
    obs = game.observation(0)
    assert take(0) in obs.legal_actions
    for seed in range(5):
        assert make_bot("heuristic", seed=seed).choose(obs) == DRAW


def test_two_player_heuristic_does_not_stack_the_opponents_colours() -> None:
    # rows: empty | red | +2, and a purple to place: beside the red (or the +2) it
    # makes a row of two of the opponent's cards; alone it makes no row of theirs better
    game = stacked_game(Rules(players=2), ["R", "+2", "P"], first_player=0)
    for row in (1, 2):
        game.push(DRAW)
        game.push(place(row))
    game.push(DRAW)
    obs = game.observation(0)
    assert obs.rows == ((), (_R,), (PLUS_TWO,)) and obs.pending_card == _P
    for seed in range(10):
        assert make_bot("heuristic", seed=seed).choose(obs) == place(0)


def test_alone_in_the_round_the_heuristic_puts_unwanted_cards_on_the_row_it_leaves() -> None:
    base = stacked_game(Rules(players=2), [], first_player=0).observation(0)
    mine = [0] * len(base.collections[0])
    for card in (_Y, _Y, _O, _R):
        mine[card] += 1
    # the opponent has left; a purple, a fourth colour, would spoil the two yellows
    obs = replace(
        base,
        rows=((), (_Y, _Y), ()),
        rows_taken=(True, False, False),
        out_this_round=(False, True),
        pending_card=_P,
        collections=(tuple(mine), base.collections[1]),
        legal_actions=(place(1), place(2)),
    )
    for seed in range(10):
        assert make_bot("heuristic", seed=seed).choose(obs) == place(2)
