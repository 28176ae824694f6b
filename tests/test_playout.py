"""The tuned playout policy, the ``playout`` bot and ``coloretto tune-playout``."""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coloretto.actions import DRAW, action_from_id, place, take
from coloretto.bots import BotSpecError, check_bot, make_bot
from coloretto.bots import kernel as k
from coloretto.bots.mcts import Search
from coloretto.bots.mcts_options import TAKE_AT, Settings
from coloretto.bots.playout_options import (
    GREEDY_WEIGHTS,
    KERNEL_WEIGHTS,
    PLAYOUT_FILE,
    WEIGHT_RANGES,
    PlayoutFileError,
    PlayoutSettings,
    PlayoutWeights,
    load_weights,
    read_weights_file,
    tuned_ranges,
    tuned_weights,
)
from coloretto.cards import parse_colour
from coloretto.cli import main
from coloretto.game import Game
from coloretto.rules import Rules
from tests.helpers import RULE_VARIANTS, stacked_game
from tests.strategies import rules_strategy
from tests.test_ai_bots import play
from tests.test_ai_kernel import _check_same, _ids

#: weights far from greedy's: every term of the tuned policy at work
BUSY = PlayoutWeights(
    take=3.0,
    explore=0.05,
    take_fill=4.0,
    take_rivals=-1.0,
    draw=0.8,
    row=0.3,
    row_next=0.2,
    own=1.0,
    next=0.9,
    rest=0.5,
    minus=1.5,
    plus_two=2.5,
    joker=1.0,
    prospect=0.2,
    noise=0.7,
    leave=0.6,
)


def _weights() -> st.SearchStrategy[PlayoutWeights]:
    return st.builds(
        PlayoutWeights,
        **{
            r.name: st.floats(r.low, r.high, allow_nan=False).map(lambda v: round(v, 3))
            for r in WEIGHT_RANGES
        },
    )


def _recorded(rules: Rules, cfg: np.ndarray, policy: int, seed: int) -> np.ndarray:
    s = k.state_from_game(Game.new(rules, seed=seed))
    k.k_seed(seed)
    moves = np.zeros((1000, 2), dtype=np.int64)
    n = k.k_playout_recorded(s, cfg, policy, moves)
    return moves[:n].copy()


# ------------------------------------------------------------ the kernel policy


def test_the_existing_playout_policies_play_as_they_did() -> None:
    # the random, greedy and exact playouts of ten variants from three seeds, recorded
    # before the tuned policy came into the kernel: its slots and code change none of them
    h = hashlib.sha256()
    for rules in RULE_VARIANTS:
        for policy in (k.POLICY_RANDOM, k.POLICY_GREEDY, k.POLICY_EXACT):
            for seed, (take_at, explore) in enumerate(((6.0, 0.1), (12.0, 0.0), (3.0, 0.3))):
                moves = _recorded(rules, k.rules_config(rules, take_at, explore), policy, seed)
                h.update(moves.astype("<i8").tobytes())
    assert h.hexdigest() == "299df5744c00a1e5ea71dfa53e1fe90d5520d83e97ae9a3fd6aee3e449542a8e"


def test_the_tuned_policy_plays_as_it_was_tuned() -> None:
    # tuned playouts at weights where every term is at work, recorded when the shipped
    # weights were tuned: a change of the kernel that changes them changes what the
    # shipped weights mean, and the weights must be tuned again. Without the two-player
    # leave weight they play as they did before it came (the earlier recording)
    for weights, recorded in (
        (BUSY, "72f09f834283eef4045f8734854097f8f7a3ad34c7f60f77bdb4c87f7408a0a6"),
        (replace(BUSY, leave=0.0), "f44fee21176e71ded3be1de961ca83ebbf3c51f0785470ade4987162a1a3334d"),
    ):
        h = hashlib.sha256()
        for rules in RULE_VARIANTS:
            for seed in range(3):
                moves = _recorded(rules, k.policy_config(rules, weights), k.POLICY_TUNED, seed)
                h.update(moves.astype("<i8").tobytes())
        assert h.hexdigest() == recorded


@pytest.mark.parametrize("rules", RULE_VARIANTS, ids=lambda r: r.describe())
def test_at_greedys_weights_the_tuned_policy_is_the_greedy_playout(rules: Rules) -> None:
    for seed, (take_at, explore) in enumerate(((6.0, 0.1), (12.0, 0.0), (2.0, 0.4))):
        cfg = k.rules_config(rules, take_at, explore, GREEDY_WEIGHTS)
        assert np.array_equal(
            _recorded(rules, cfg, k.POLICY_TUNED, seed), _recorded(rules, cfg, k.POLICY_GREEDY, seed)
        )


def _replay(rules: Rules, cfg: np.ndarray, seed: int) -> Game:
    """A tuned playout replayed through the engine, checked at every step."""
    game = Game.new(rules, seed=seed)
    moves = _recorded(rules, cfg, k.POLICY_TUNED, seed)
    replay = k.state_from_game(game)
    for a, card in moves:
        assert int(a) in _ids(game)
        game.push(action_from_id(int(a)), reveal=None if card < 0 else int(card))
        k.k_apply(replay, cfg, int(a), int(card))
        _check_same(game, replay, cfg)
    assert game.is_over
    return game


@pytest.mark.parametrize("rules", RULE_VARIANTS, ids=lambda r: r.describe())
def test_tuned_playouts_are_legal_in_every_variant(rules: Rules) -> None:
    _replay(rules, k.policy_config(rules, BUSY), seed=3)
    _replay(rules, k.policy_config(rules, tuned_weights(rules.players)), seed=4)


@settings(max_examples=60, deadline=None)
@given(rules=rules_strategy(), weights=_weights(), seed=st.integers(0, 2**32 - 1))
@pytest.mark.slow
def test_tuned_playouts_at_any_weights_replay_through_the_engine(
    rules: Rules, weights: PlayoutWeights, seed: int
) -> None:
    _replay(rules, k.policy_config(rules, weights), seed)


def test_the_policy_action_is_the_playouts_first_move() -> None:
    rules = Rules(players=4)
    game = Game.new(rules, seed=9)
    for _ in range(3):
        game.push(DRAW)
        game.push(game.legal_actions[0])
    s = k.state_from_game(game)
    for policy, cfg in (
        (k.POLICY_GREEDY, k.rules_config(rules)),
        (k.POLICY_EXACT, k.rules_config(rules)),
        (k.POLICY_RANDOM, k.rules_config(rules)),
        (k.POLICY_TUNED, k.policy_config(rules, BUSY)),
    ):
        for seed in range(20):
            k.k_seed(seed)
            chosen = k.k_policy_action(s, cfg, policy)
            k.k_seed(seed)
            moves = np.zeros((1, 2), dtype=np.int64)
            k.k_playout_recorded(s.copy(), cfg, policy, moves)
            assert chosen == moves[0, 0]


def test_the_policy_action_refuses_a_finished_game_and_an_unknown_policy() -> None:
    rules = Rules(players=3)
    s = k.state_from_game(Game.new(rules, seed=1))
    cfg = k.rules_config(rules)
    with pytest.raises(ValueError, match="unknown playout policy 7"):
        k.k_policy_action(s, cfg, 7)
    k.k_playout(s, cfg, k.POLICY_GREEDY, np.zeros(k.RESULT_SIZE))
    with pytest.raises(ValueError, match="the game is over"):
        k.k_policy_action(s, cfg, k.POLICY_GREEDY)


def _three_yellows_to_take_or_draw() -> Game:
    """Seat 0 (a yellow to start) to move in four players; row 1 holds three yellows, rows 2-4 are empty."""
    game = stacked_game(Rules(players=4), ["Y", "Y", "Y"], first_player=1)
    for _ in range(3):
        game.push(DRAW)
        game.push(game.legal_actions[0])
    assert game.to_move == 0 and game.rows[0] == (0, 0, 0)
    return game


def _tuned_move(game: Game, weights: PlayoutWeights) -> object:
    cfg = k.policy_config(game.rules, replace(weights, explore=0.0, noise=0.0))
    k.k_seed(1)
    return action_from_id(k.k_policy_action(k.state_from_game(game), cfg, k.POLICY_TUNED))


def test_the_take_bar_moves_with_the_rows_fill_the_rivals_and_a_draws_value() -> None:
    # three yellows on a yellow start are worth 10 - 1 = 9 points to seat 0 (1 -> 4 yellows: 1 -> 10)
    game = _three_yellows_to_take_or_draw()
    assert _tuned_move(game, replace(GREEDY_WEIGHTS, take=9.0)) == take(0)
    assert _tuned_move(game, replace(GREEDY_WEIGHTS, take=9.5)) == DRAW
    # the rows hold 3 cards of 12: a quarter full, so take_fill 4 adds a point to the bar
    assert _tuned_move(game, replace(GREEDY_WEIGHTS, take=8.5, take_fill=4.0)) == DRAW
    assert _tuned_move(game, replace(GREEDY_WEIGHTS, take=9.5, take_fill=-4.0)) == take(0)
    # three rivals still in: half a point each
    assert _tuned_move(game, replace(GREEDY_WEIGHTS, take=8.0, take_rivals=0.5)) == DRAW
    assert _tuned_move(game, replace(GREEDY_WEIGHTS, take=10.0, take_rivals=-0.5)) == take(0)
    # every card drawn leaves the 9 points to take (no open row can beat them with one
    # card), so a draw is expected to bring exactly 9: weighed at 1.05 it beats the
    # row, at 1.0 it ties (and a tie takes), at 0.5 it loses
    assert _tuned_move(game, replace(GREEDY_WEIGHTS, take=0.0, draw=1.05)) == DRAW
    assert _tuned_move(game, replace(GREEDY_WEIGHTS, take=0.0, draw=1.0)) == take(0)
    assert _tuned_move(game, replace(GREEDY_WEIGHTS, take=0.0, draw=0.5)) == take(0)


def _two_players_full_rows() -> Game:
    """Two players, seat 0 (yellow, orange) to take a row of three full ones; seat 1
    (red, pink) still in. To seat 0 the rows are worth 1 (a pink), 5 (two yellows:
    1 -> 3) and 2 (two reds, a green: a third colour and a fourth's minus point);
    to seat 1: 2, 3 and 6 (two reds: 1 -> 3, and a green)."""
    game = stacked_game(Rules(players=2), ["Y", "Y", "R", "R", "G", "P"])
    for row in (1, 1, 2, 2, 2, 0):
        game.push(DRAW)
        game.push(place(row))
    assert game.to_move == 0 and game.legal_actions == (take(0), take(1), take(2))
    return game


def test_two_players_a_take_costs_what_the_opponent_makes_of_the_rows_left() -> None:
    # taking the yellows (5) leaves seat 1 its red row (6), taking that row (2) leaves
    # it the yellows (3): net of the leave weight w, 5 - 6w against 2 - 3w, so the
    # yellows below w = 1 and the reds above it
    game = _two_players_full_rows()
    assert _tuned_move(game, GREEDY_WEIGHTS) == take(1)
    assert _tuned_move(game, replace(GREEDY_WEIGHTS, leave=0.9)) == take(1)
    assert _tuned_move(game, replace(GREEDY_WEIGHTS, leave=1.1)) == take(2)


def test_the_leave_weight_acts_only_with_two_players() -> None:
    rules = Rules(players=3)
    for seed in range(3):
        with_leave = _recorded(rules, k.policy_config(rules, replace(BUSY, leave=2.0)), k.POLICY_TUNED, seed)
        without = _recorded(rules, k.policy_config(rules, replace(BUSY, leave=0.0)), k.POLICY_TUNED, seed)
        assert np.array_equal(with_leave, without)
    # and a tuning run for more players does not vary it
    assert "leave" in [r.name for r in tuned_ranges(2)]
    assert all("leave" not in [r.name for r in tuned_ranges(n)] for n in (3, 4, 5))


def test_a_weights_file_from_before_the_leave_weight_plays_as_it_did(tmp_path: Path) -> None:
    values = {name: value for name, value in vars(BUSY).items() if name != "leave"}
    path = tmp_path / "w.json"
    path.write_text(json.dumps({"format": "coloretto-playout-weights", "players": {"2": values}}))
    assert load_weights(path).weights(2) == replace(BUSY, leave=0.0)


def test_a_placement_weighs_the_next_seats_best_row() -> None:
    # seat 0 draws an orange, the colour seat 1 (next to act) started with. Seat 1's best
    # row is the orange one (2 points to it, the blue 1): an orange there makes it 5
    # (+3), beside the blue 3 (+1), and on an empty row nothing better than it has
    game = stacked_game(Rules(players=4), ["O", "B", "O"], first_player=2)
    for row in (1, 0):
        game.push(DRAW)
        game.push(game.legal_actions[row])
    game.push(DRAW)
    orange, blue = parse_colour("orange"), parse_colour("blue")
    assert game.to_move == 0 and game.rows[:3] == ((blue,), (orange,), ())
    assert game.observation(0).collections[1][orange] == 1
    weights = replace(GREEDY_WEIGHTS, row=0.0, row_next=0.0, own=0.0, next=1.0)
    cfg = k.policy_config(game.rules, replace(weights, explore=0.0, noise=0.01))
    s = k.state_from_game(game)
    placed = set()
    for seed in range(10):
        k.k_seed(seed)
        placed.add(action_from_id(k.k_policy_action(s, cfg, k.POLICY_TUNED)).index)
    assert placed == {2, 3}  # the empty rows, never beside seat 1's cards


def test_the_weights_are_the_kernels_in_its_order() -> None:
    assert tuple(r.name for r in WEIGHT_RANGES)[2:] == KERNEL_WEIGHTS
    assert len(KERNEL_WEIGHTS) == k.TUNED_WEIGHTS
    cfg = k.rules_config(Rules(players=3), weights=BUSY)
    assert list(cfg[k.C_TUNED : k.C_TUNED + k.TUNED_WEIGHTS]) == [
        round(getattr(BUSY, name) * 1000) for name in KERNEL_WEIGHTS
    ]
    assert cfg[k.C_TAKE_AT] == round(TAKE_AT * 10)  # rules_config's own take, not the weights'
    assert k.policy_config(Rules(players=3), BUSY)[k.C_TAKE_AT] == 30


# ------------------------------------------------------------ the shipped weights


def test_the_shipped_weights_tune_every_player_count() -> None:
    shipped = read_weights_file(PLAYOUT_FILE)
    assert sorted(shipped.players) == [2, 3, 4, 5]
    assert shipped.source["command"].startswith("coloretto tune-playout")
    for n in (2, 3, 4, 5):
        assert tuned_weights(n) == shipped.players[n] != GREEDY_WEIGHTS
        figures = shipped.source["figures"][str(n)]["confirm"]
        # chosen on fresh deals: better against the field than the greedy playout there
        assert figures["difference"]["low"] > 0


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ("not json", "is not JSON"),
        ('{"format": "other"}', "is not a playout weights file"),
        ('{"format": "coloretto-playout-weights", "players": []}', "must map player counts"),
        ('{"format": "coloretto-playout-weights", "players": {"7": {}}}', "player counts 2 to 5"),
        ('{"format": "coloretto-playout-weights", "players": {"4": {"take": 6}}}', "missing"),
    ],
)
def test_a_bad_weights_file_is_refused_with_one_line(tmp_path: Path, document: str, message: str) -> None:
    path = tmp_path / "w.json"
    path.write_text(document)
    with pytest.raises(PlayoutFileError, match=message) as raised:
        read_weights_file(path)
    assert "\n" not in str(raised.value)
    with pytest.raises(BotSpecError, match=message):
        check_bot(f"playout:weights={path}")


def test_a_weight_out_of_its_range_is_refused(tmp_path: Path) -> None:
    values = dict(vars(GREEDY_WEIGHTS)) | {"noise": -1.0}
    path = tmp_path / "w.json"
    path.write_text(json.dumps({"format": "coloretto-playout-weights", "players": {"3": values}}))
    with pytest.raises(PlayoutFileError, match=r"noise = -1.0 lies outside \[0.0, 3.0\]"):
        load_weights(path)


# ------------------------------------------------------------ the bot


@pytest.mark.parametrize(
    "spec", ["playout", "playout:tuned", "playout:exact", "playout:random", "playout:tuned,take=12,explore=0"]
)
def test_the_playout_bot_plays_legally_in_every_variant(spec: str) -> None:
    for i, rules in enumerate(RULE_VARIANTS):
        game = Game.new(rules, seed=20 + i)
        play(game, [spec, "greedy", spec, "heuristic", spec][: rules.players], seed=i)
        assert game.is_over


def test_the_playout_bot_is_seeded() -> None:
    def moves(seed: int) -> list[object]:
        return play(
            Game.new(Rules(players=4), seed=8), ["playout:tuned", "greedy", "playout", "random"], seed
        )

    assert moves(3) == moves(3)
    assert moves(3) != moves(4)


def test_the_playout_bot_plays_its_policys_move() -> None:
    game = _three_yellows_to_take_or_draw()
    obs = game.observation(0)
    assert make_bot("playout:take=9,explore=0", seed=1).choose(obs) == take(0)
    assert make_bot("playout:take=9.5,explore=0", seed=1).choose(obs) == DRAW


@pytest.mark.parametrize(
    ("name", "settings"),
    [
        ("playout", PlayoutSettings()),
        ("playout:greedy", PlayoutSettings()),
        ("playout:tuned", PlayoutSettings(policy=k.POLICY_TUNED)),
        ("playout:Tuned, take=12", PlayoutSettings(policy=k.POLICY_TUNED, take=12.0)),
        ("playout:take=12,explore=0", PlayoutSettings(take=12.0, explore=0.0)),
        ("playout:random", PlayoutSettings(policy=k.POLICY_RANDOM)),
        ("playout:exact,explore=0.2", PlayoutSettings(policy=k.POLICY_EXACT, explore=0.2)),
    ],
)
def test_check_bot_reads_playout_names(name: str, settings: PlayoutSettings) -> None:
    spec = check_bot(name)
    assert (spec.kind, spec.limit, spec.settings) == ("playout", None, settings)


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("playout:smart", "unknown playout option 'smart'"),
        ("playout:depth=3", "unknown playout option 'depth'"),
        ("playout:take=x", "take must be a number"),
        ("playout:take=-1", r"take must lie in \[0, 100\]"),
        ("playout:explore=2", r"explore must lie in \[0, 1\]"),
        ("playout:greedy,exact", "two playout policies"),
        ("playout:weights=", "weights= needs a file"),
        ("playout:weights=/no/such/file.json", "cannot read the weights file"),
        ("playout:greedy,weights=x.json", "weights= is for the tuned policy"),
        ("playout:1s", "unknown playout option '1s'"),
    ],
)
def test_bad_playout_names_are_refused_with_one_line(name: str, message: str) -> None:
    with pytest.raises(BotSpecError, match=message) as raised:
        check_bot(name)
    assert "\n" not in str(raised.value) and len(str(raised.value)) < 200


def test_the_search_plays_the_tuned_policy_with_its_own_bar_unless_told() -> None:
    rules = Rules(players=4)
    shipped = tuned_weights(4)
    tuned = check_bot("mcts:100,rollout=tuned").settings
    assert isinstance(tuned, Settings) and (tuned.take, tuned.explore) == (None, None)
    cfg = Search(rules, tuned).cfg
    assert cfg[k.C_TAKE_AT] == round(shipped.take * 10) and cfg[k.C_EXPLORE] == round(shipped.explore * 1000)
    assert list(cfg[k.C_TUNED :]) == list(shipped.kernel_weights())
    told = check_bot("mcts:100,rollout=tuned,take=12").settings
    assert isinstance(told, Settings) and told.take == 12.0
    assert Search(rules, told).cfg[k.C_TAKE_AT] == 120
    # the other policies keep their knobs as they were
    assert check_bot("mcts:100").settings == Settings()
    assert np.array_equal(Search(rules, Settings()).cfg, k.rules_config(rules))


def test_a_search_with_tuned_playouts_plays_legally() -> None:
    for rules in RULE_VARIANTS[:4]:
        game = Game.new(rules, seed=2)
        play(
            game,
            ["mcts:40,rollout=tuned", "playout:tuned", "greedy", "mcts:40,rollout=tuned,take=12", "random"][
                : rules.players
            ],
            seed=1,
        )
        assert game.is_over


# ------------------------------------------------------------ tune-playout


@pytest.mark.slow  # importing cmaes imports SciPy: seconds
def test_tune_playout_is_reproducible_and_writes_a_file_the_bots_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("cmaes")

    def tune(name: str, seed: int) -> Path:
        out = tmp_path / name
        argv = ["tune-playout", "--players", "3", "--trials", "8", "--games", "60", "--confirm", "60"]
        assert main([*argv, "--population", "4", "--seed", str(seed), "--out", str(out)]) == 0
        return out

    first, again, other = tune("a.json", 5), tune("b.json", 5), tune("c.json", 6)
    assert first.read_bytes() == again.read_bytes()
    assert first.read_bytes() != other.read_bytes()
    out = capsys.readouterr().out
    assert "3 players: the tuned weights win" in out and "wrote" in out
    read = read_weights_file(first)
    assert list(read.players) == [3]
    assert read.source["command"] == (
        "coloretto tune-playout --players 3 --trials 8 --games 60 --confirm 60 --population 4 --seed 5"
    )
    figures = read.source["figures"]["3"]
    assert figures["trials"] >= 8 and figures["confirm"]["games"] >= 60
    assert read.weights(4) == GREEDY_WEIGHTS  # a count it did not tune plays greedy's
    game = Game.new(Rules(players=3), seed=1)
    play(game, [f"playout:weights={first}", "greedy", "playout"], seed=2)
    assert game.is_over


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--players", "6"], "--players takes player counts from 2 to 5"),
        (["--players", "x"], "--players takes player counts"),
        (["--trials", "0"], "--trials must be at least 1"),
        (["--games", "0"], "--games and --confirm must be at least 1"),
        (["--population", "1"], "--population must be at least 2"),
        (["--seed", str(2**32)], "--seed must lie in"),
    ],
)
def test_tune_playout_refuses_bad_flags(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert main(["tune-playout", *argv, "--out", str(tmp_path / "w.json")]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "w.json").exists()
