"""The vectorised environment plays the same games as the Python environments,
step by step, in every variant; its resets, seeds and errors behave as documented."""

from __future__ import annotations

import random
import re
from typing import Any

import numpy as np
import pytest
from gymnasium.spaces import Discrete
from gymnasium.vector import AutoresetMode
from hypothesis import given, settings
from hypothesis import strategies as st

from coloretto.actions import NUM_ACTIONS, action_from_id
from coloretto.bots import _kernel
from coloretto.cards import COLLECTABLE_KINDS, full_composition
from coloretto.envs.encoding import LAYOUT, OBSERVATION_SIZE, OFFSETS, encode_observation, least_max_steps
from coloretto.envs.gymnasium import ColorettoEnv
from coloretto.envs.pettingzoo import raw_env
from coloretto.envs.vector import ColorettoVectorEnv, ColorettoVectorGymEnv, slot_seeds
from coloretto.game import Game
from coloretto.rules import Rules
from tests.strategies import rules_strategy
from tests.test_envs import PLAYERS, VARIANTS, variant_id

SLOTS = 2


def random_legal(masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    return np.argmax(rng.random(masks.shape) * masks, axis=1)


def replay_pettingzoo_games(options: dict[str, Any], seed: int) -> int:
    """Each slot replays a PettingZoo game dealt by the core: the observation of
    the seat to move, its mask, every seat's reward, the termination, the last
    observation and the seat to move agree after every step, over a whole game
    a slot. Returns the steps played."""
    vec = ColorettoVectorEnv(SLOTS, **options)
    vec.reset(seed=seed)
    rng = random.Random(seed)
    envs = [raw_env(**options) for _ in range(SLOTS)]
    deals = iter(range(seed * 100, seed * 100 + 100))

    def deal(slot: int) -> tuple[np.ndarray, dict[str, Any]]:
        envs[slot].reset(seed=next(deals))
        assert envs[slot].game is not None
        return vec.load(slot, envs[slot].game)

    for slot in range(SLOTS):
        obs, info = deal(slot)
    games_left = [1] * SLOTS
    steps = 0
    while any(games_left):
        actions = np.zeros(SLOTS, np.int64)
        for slot, env in enumerate(envs):
            agent = env.agent_selection
            expected = env.observe(agent)
            assert info["current_player"][slot] == env.agent_name_mapping[agent]
            np.testing.assert_array_equal(obs[slot], expected["observation"])
            np.testing.assert_array_equal(info["action_mask"][slot], expected["action_mask"])
            actions[slot] = rng.choice(np.flatnonzero(expected["action_mask"]))
        movers = info["current_player"]
        obs, rewards, terminated, truncated, info = vec.step(actions)
        steps += 1
        assert not truncated.any() and not info["illegal_action"].any()
        for slot, env in enumerate(envs):
            env.step(int(actions[slot]))
            assert terminated[slot] == all(env.terminations.values())
            expected_rewards = [env.rewards[agent] for agent in env.possible_agents]
            np.testing.assert_array_equal(rewards[slot], expected_rewards)
            if terminated[slot]:
                assert env.game is not None
                # the ended game, from the seat that made its last move
                final = env.game.observation(int(movers[slot]))
                np.testing.assert_array_equal(info["final_obs"][slot], encode_observation(final))
                ended = info["final_info"]
                assert info["_final_info"][slot] and ended["_totals"][slot]
                totals = [s.total for s in env.game.scores()]
                np.testing.assert_array_equal(ended["totals"][slot], totals)
                winners = env.game.winners()
                shares = [1 / len(winners) if seat in winners else 0.0 for seat in range(len(totals))]
                np.testing.assert_array_equal(ended["win_shares"][slot], shares)
                games_left[slot] = 0
                obs, info = deal(slot)
    return steps


@pytest.mark.parametrize("players", PLAYERS)
@pytest.mark.parametrize("variant", VARIANTS, ids=variant_id)
def test_multi_agent_plays_the_pettingzoo_games(players: int, variant: dict[str, Any]) -> None:
    reward = "win" if players % 2 else "margin"  # both kinds, with both tie-breaks among the variants
    assert replay_pettingzoo_games({"players": players, "reward": reward, **variant}, seed=players) > 30


@settings(max_examples=15, deadline=None, derandomize=True)
@given(rules=rules_strategy(match_games=1))
def test_multi_agent_plays_the_pettingzoo_games_in_random_rules(rules: Rules) -> None:
    """Any rules at all (every option drawn, the number ones too)."""
    assert replay_pettingzoo_games({**rules.to_dict(), "reward": "win"}, seed=rules.players) > 0


@pytest.mark.parametrize("players", PLAYERS)
@pytest.mark.parametrize(
    "variant", [v for v in VARIANTS if v.get("starting_colours") != "chosen"], ids=variant_id
)
def test_greedy_opponents_are_the_python_greedy_bot(players: int, variant: dict[str, Any]) -> None:
    """The single-agent face against compiled greedy opponents plays the same
    game as ColorettoEnv against GreedyBot (which breaks no tie at random when
    the starting colours are dealt): same observations, masks, rewards."""
    for episode in range(1):
        seat = len(variant) % players
        env = ColorettoEnv(players=players, opponents=["greedy"] * (players - 1), seat=seat, **variant)
        expected_obs, expected_info = env.reset(seed=episode)
        assert env.game is not None
        vec = ColorettoVectorGymEnv(1, players=players, opponent="greedy", seat=seat, **variant)
        vec.reset(seed=0)
        obs, info = vec.load(0, Game(env.game.setup), seat)
        rng = np.random.default_rng(episode)
        done = False
        while not done:
            np.testing.assert_array_equal(obs[0], expected_obs)
            np.testing.assert_array_equal(info["action_mask"][0], expected_info["action_mask"])
            action = int(rng.choice(np.flatnonzero(expected_info["action_mask"])))
            expected_obs, reward, terminated, truncated, expected_info = env.step(action)
            obs, rewards, terms, truncs, info = vec.step(np.array([action]))
            assert rewards[0] == reward and terms[0] == terminated and truncs[0] == truncated
            done = terminated or truncated
        assert terminated
        np.testing.assert_array_equal(info["final_obs"][0], expected_obs)
        np.testing.assert_array_equal(info["final_info"]["totals"][0], expected_info["totals"])
        winners = expected_info["winners"]
        assert info["final_info"]["won"][0] == (1 / len(winners) if seat in winners else 0.0)
        assert info["final_info"]["_won"][0]


@pytest.mark.parametrize("players", PLAYERS)
@pytest.mark.parametrize(
    "variant",
    [{}, {"edition": "modern"}, {"edition": "playing-cards"}, {"starting_colours": "chosen"}],
    ids=variant_id,
)
def test_a_reset_deals_the_cores_cards(players: int, variant: dict[str, Any]) -> None:
    """Every C deal holds the box, as a deal of the core: starting cards of
    distinct colours, the rest unseen, and everything else as in the core's
    deal (the deck and its last-round card, the rows, the scores)."""
    rules = Rules(players=players, **variant)
    vec = ColorettoVectorEnv(64, players=players, **variant)
    obs, info = vec.reset(seed=3)
    core = Game.new(rules, seed=0)
    expected = encode_observation(core.observation(core.first_player))
    dealt = OFFSETS["collections"], OFFSETS["collections"] + 5 * COLLECTABLE_KINDS
    unseen_at = OFFSETS["unseen"], OFFSETS["unseen"] + COLLECTABLE_KINDS
    same = np.ones(OBSERVATION_SIZE, bool)
    same[slice(*dealt)] = same[slice(*unseen_at)] = False
    np.testing.assert_array_equal(obs[:, same], np.broadcast_to(expected[same], (64, same.sum())))
    held = obs[:, slice(*dealt)].reshape(64, 5, COLLECTABLE_KINDS)
    per_player = 0 if rules.chooses_starting_colours else rules.starting_cards_per_player
    assert (held.sum(axis=2)[:, :players] == per_player).all()
    assert held.max() == min(per_player, 1)  # distinct colours
    box = np.array(full_composition(players, rules.edition)[:COLLECTABLE_KINDS], np.float32)
    unseen = obs[:, slice(*unseen_at)]
    np.testing.assert_array_equal(unseen + held.sum(axis=1), np.broadcast_to(box, unseen.shape))
    assert set(info["current_player"].tolist()) == set(range(players))  # every seat starts some games
    if per_player:
        assert len({tuple(row) for row in held.reshape(64, -1)}) > 16  # the starting colours vary


def test_same_seed_same_games_and_slots_do_not_depend_on_num_envs() -> None:
    def trajectory(num_envs: int, seed: int) -> list[np.ndarray]:
        vec = ColorettoVectorEnv(num_envs, players=4, edition="modern")
        obs, info = vec.reset(seed=seed)
        rng = np.random.default_rng(0)
        seen = [obs[:2].copy()]
        for _ in range(400):
            masks = info["action_mask"]
            actions = random_legal(masks, rng)[:num_envs]
            obs, _, _, _, info = vec.step(actions)
            seen.append(obs[:2].copy())
        return seen

    first = trajectory(4, seed=11)
    again = trajectory(4, seed=11)
    for a, b in zip(first, again, strict=True):
        np.testing.assert_array_equal(a, b)
    other = trajectory(4, seed=12)
    assert any((a != b).any() for a, b in zip(first, other, strict=True))
    # slot i's seed depends on the reset seed and i alone
    np.testing.assert_array_equal(slot_seeds(11, 2), slot_seeds(11, 8)[:2])


def test_seeds_are_whole_numbers_from_0_in_both_faces() -> None:
    for seed in (1.5, np.float64(2.0), "abc", True, -5, np.int64(-1)):
        for make in (lambda: ColorettoVectorEnv(2, players=3), lambda: ColorettoVectorGymEnv(2, players=3)):
            with pytest.raises(ValueError, match=r"^a seed must be None or a whole number ≥ 0\b.*, not \S"):
                make().reset(seed=seed)
        with pytest.raises(ValueError, match=r"^a seed must be None or a whole number ≥ 0\b"):
            ColorettoVectorEnv(2, players=3, seed=seed)
    for make in (lambda: ColorettoVectorEnv(2, players=3), lambda: ColorettoVectorGymEnv(2, players=3)):
        np.testing.assert_array_equal(make().reset(seed=np.int64(3))[0], make().reset(seed=3)[0])
        np.testing.assert_array_equal(make().reset(seed=np.uint32(3))[0], make().reset(seed=3)[0])


def test_a_reset_without_a_seed_deals_on_from_the_last_seed() -> None:
    def two_resets() -> list[np.ndarray]:
        vec = ColorettoVectorEnv(4, players=5, seed=9)  # the constructor's seed seeds the first reset
        return [vec.reset()[0] for _ in range(2)]

    first, second = two_resets()
    assert (first != second).any()  # new games
    for a, b in zip((first, second), two_resets(), strict=True):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(ColorettoVectorEnv(4, players=5).reset(seed=9)[0], first)
    gym_env = ColorettoVectorGymEnv(4, players=5, seat=None)
    once, again = gym_env.reset(seed=3)[0], gym_env.reset()[0]
    assert (once != again).any()
    gym_env.reset(seed=3)
    np.testing.assert_array_equal(gym_env.reset()[0], again)


def test_autoreset_deals_a_new_game_in_the_same_step() -> None:
    vec = ColorettoVectorEnv(16, players=2)
    assert vec.autoreset_mode is AutoresetMode.SAME_STEP
    obs, info = vec.reset(seed=1)
    rng = np.random.default_rng(1)
    ended = 0
    for _ in range(600):
        obs, rewards, terminated, truncated, info = vec.step(random_legal(info["action_mask"], rng))
        for slot in np.flatnonzero(terminated):
            ended += 1
            assert rewards[slot, 0] == -rewards[slot, 1]  # each seat's margin over the other
            assert obs[slot, OFFSETS["round"]] == 1  # the next game
            assert info["final_obs"][slot, OFFSETS["to_move"] : OFFSETS["to_move"] + 5].sum() == 0  # over
            assert info["action_mask"][slot].any()
        np.testing.assert_array_equal(info["_final_obs"], terminated | truncated)
        assert (rewards[~terminated] == 0).all()
    assert ended >= 16


def test_an_illegal_action_changes_nothing_and_costs_its_seat() -> None:
    vec = ColorettoVectorEnv(3, players=3, illegal_penalty=0.5)
    limit = 3 * least_max_steps(0.5)  # every seat's actions count against one limit: the bound per seat
    obs, info = vec.reset(seed=2)
    before = obs.copy()
    movers = info["current_player"].copy()
    illegal = np.array([int(np.flatnonzero(m == 0)[0]) for m in info["action_mask"]])
    for step in range(1, limit + 1):
        obs, rewards, terminated, truncated, info = vec.step(illegal)
        assert info["illegal_action"].all()
        expected = np.zeros((3, 3))
        expected[np.arange(3), movers] = -0.5
        np.testing.assert_array_equal(rewards, expected)
        if step < limit:
            np.testing.assert_array_equal(obs, before)
            np.testing.assert_array_equal(info["current_player"], movers)
            assert not truncated.any()
    np.testing.assert_array_equal(info["final_obs"], before)
    assert truncated.all() and not terminated.any()  # max_steps actions: truncated, then a new deal
    assert not (obs == before).all()


@pytest.mark.parametrize("opponent", ["random", "playout", "greedy"])
@pytest.mark.parametrize("players", [2, 5])
def test_single_agent_against_each_opponent(opponent: str, players: int) -> None:
    """The learner's legal moves and the opponents' keep every card of the box
    somewhere (rows, drawn, collections, unseen, out of the game), every game
    ends with a win reward, the same seed plays the same games."""
    WIN_REWARDS = {1 / k for k in range(1, players + 1)} | {-1 / k for k in range(1, players)}
    box = sum(full_composition(players, Rules(players=players).edition)[:COLLECTABLE_KINDS])
    blocks = ("row_cards", "drawn_card", "collections", "unseen", "removed")
    where = np.zeros(OBSERVATION_SIZE, bool)
    for name, size in LAYOUT:
        if name in blocks:
            where[OFFSETS[name] : OFFSETS[name] + size] = True

    def run(seed: int) -> tuple[list[np.ndarray], int, set[int]]:
        vec = ColorettoVectorGymEnv(8, players=players, opponent=opponent, seat=None, reward="win")
        obs, info = vec.reset(seed=seed)
        rng = np.random.default_rng(seed)
        seen, games, seats = [obs.copy()], 0, set(info["seat"].tolist())
        for _ in range(300):
            assert (vec.action_masks() == info["action_mask"].astype(bool)).all()
            obs, rewards, terminated, truncated, info = vec.step(random_legal(info["action_mask"], rng))
            assert not info["illegal_action"].any() and not truncated.any()
            assert info["action_mask"].any(axis=1).all()  # always the learner's turn
            seen.append(obs.copy())
            assert (obs[:, where].sum(axis=1) == box).all()
            assert (info["final_obs"][terminated][:, where].sum(axis=1) == box).all()
            games += int(terminated.sum())
            assert set(np.unique(rewards[terminated])) <= WIN_REWARDS
            seats |= set(info["seat"].tolist())
        return seen, games, seats

    first, games, seats = run(4)
    assert games >= 4 and len(seats) == players
    for a, b in zip(first, run(4)[0], strict=True):
        np.testing.assert_array_equal(a, b)
    to_move = OFFSETS["to_move"]
    assert (first[-1][:, to_move] == 1).all()  # the learner (block 0) is the seat to move


def test_an_illegal_learner_action_changes_nothing_and_costs_the_learner() -> None:
    limit = least_max_steps(2.0) + 5
    vec = ColorettoVectorGymEnv(4, players=4, opponent="greedy", illegal_penalty=2.0, max_steps=limit)
    obs, info = vec.reset(seed=6)
    before = obs.copy()
    illegal = np.array([int(np.flatnonzero(m == 0)[-1]) for m in info["action_mask"]])
    for step in range(1, limit + 1):
        obs, rewards, terminated, truncated, info = vec.step(illegal)
        assert info["illegal_action"].all() and (rewards == -2.0).all() and not terminated.any()
        assert truncated.all() == (step == limit)
        if step < limit:
            np.testing.assert_array_equal(obs, before)
    np.testing.assert_array_equal(info["final_obs"], before)


@pytest.mark.parametrize("players", [2, 3, 5])
def test_the_multi_agent_max_steps_error_names_the_least_for_the_game_and_the_value_given(
    players: int,
) -> None:
    least = players * least_max_steps()  # every seat's actions count against one limit
    for given_steps in (least_max_steps(), least - 1, least - players + 1):
        with pytest.raises(
            ValueError,
            match=rf"^max_steps must be a whole number of at least {least} \({players} seats × 389: .*"
            rf"with illegal_penalty=1.0, not {given_steps}: ",
        ):
            ColorettoVectorEnv(2, players=players, max_steps=given_steps)
    assert ColorettoVectorEnv(2, players=players, max_steps=least) is not None
    with pytest.raises(ValueError, match=rf"at least {players * least_max_steps(0.5)} .* not {least}: "):
        ColorettoVectorEnv(2, players=players, max_steps=least, illegal_penalty=0.5)
    with pytest.raises(
        ValueError, match=r"^max_steps must be a whole number of at least 389 with .*, not 388: "
    ):
        ColorettoVectorGymEnv(2, players=players, max_steps=388)  # one learner seat: the single bound


def test_a_bare_string_of_opponents_is_refused_as_in_the_gymnasium_env() -> None:
    with pytest.raises(
        ValueError, match=r"^opponents must be a list of 2 opponent names, not the string 'greedy'"
    ):
        ColorettoVectorGymEnv(1, players=3, opponents="greedy")
    assert ColorettoVectorGymEnv(1, players=3, opponents=["greedy"] * 2).opponent == "greedy"


@pytest.mark.parametrize(
    "knob, value",
    [
        ("explore", 2.0),
        ("explore", -0.5),
        ("explore", float("nan")),
        ("explore", float("inf")),
        ("explore", True),
        ("explore", "0.1"),
        ("take_at", -1),
        ("take_at", 1e9),
        ("take_at", 100.5),
        ("take_at", float("-inf")),
        ("take_at", "x"),
        ("take_at", None),
    ],
)
def test_the_playout_knobs_are_refused_outside_the_bots_ranges(knob: str, value: Any) -> None:
    high = {"take_at": 100, "explore": 1}[knob]
    with pytest.raises(
        ValueError, match=rf"^{knob} must be a number in \[0, {high}\], .*, not {re.escape(repr(value))}$"
    ):
        ColorettoVectorGymEnv(1, players=3, opponent="playout", **{knob: value})


@settings(max_examples=20, deadline=None)
@given(
    take_at=st.one_of(st.floats(0, 100), st.integers(0, 100), st.integers(0, 100).map(np.int64)),
    explore=st.one_of(st.floats(0, 1), st.sampled_from([0, 1, np.float32(0.5)])),
)
def test_the_playout_knobs_take_any_number_in_the_bots_ranges(take_at: Any, explore: Any) -> None:
    vec = ColorettoVectorGymEnv(1, players=3, opponent="playout", take_at=take_at, explore=explore)
    obs, _ = vec.reset(seed=1)
    assert obs.shape == (1, OBSERVATION_SIZE)


def test_the_illegal_action_rule_is_the_other_environments_one() -> None:
    """Too few steps (truncation could pay) and no cost are refused as in
    PettingZoo and Gymnasium; illegal='raise' plays nothing and names the action."""
    with pytest.raises(ValueError, match="max_steps must be a whole number of at least"):
        ColorettoVectorGymEnv(2, players=4, max_steps=least_max_steps() - 1)
    with pytest.raises(ValueError, match="max_steps must be a whole number of at least"):
        ColorettoVectorEnv(2, players=4, max_steps=4 * least_max_steps() - 4)
    with pytest.raises(ValueError, match="illegal_penalty must be a positive number"):
        ColorettoVectorEnv(2, players=4, illegal_penalty=0)
    with pytest.raises(ValueError, match="illegal must be one of"):
        ColorettoVectorEnv(2, players=4, illegal="ignore")
    vec = ColorettoVectorEnv(3, players=4, illegal="raise")
    obs, info = vec.reset(seed=1)
    legal = np.array([int(np.flatnonzero(m)[0]) for m in info["action_mask"]])
    wrong = legal.copy()
    wrong[1] = int(np.flatnonzero(info["action_mask"][1] == 0)[0])
    with pytest.raises(ValueError, match=rf"illegal action {wrong[1]} in game 1 .*legal actions there: 0"):
        vec.step(wrong)
    again, *_ = vec.step(legal)  # nothing was played: the legal actions still are
    assert not (again == obs).all()
    gym_vec = ColorettoVectorGymEnv(2, players=3, opponents=["playout", "playout"])
    assert gym_vec.opponent == "playout"
    with pytest.raises(ValueError, match="one compiled opponent 2 times"):
        ColorettoVectorGymEnv(2, players=3, opponents=["playout", "greedy"])


def test_gymnasium_vector_api() -> None:
    vec = ColorettoVectorGymEnv(4, players=4, opponent="playout")
    assert vec.metadata["autoreset_mode"] is AutoresetMode.SAME_STEP
    assert vec.single_observation_space.shape == (OBSERVATION_SIZE,)
    assert vec.observation_space.shape == (4, OBSERVATION_SIZE)
    assert vec.single_action_space == Discrete(NUM_ACTIONS)
    obs, info = vec.reset(seed=0)
    assert obs in vec.observation_space and obs.dtype == np.float32
    assert (info["seat"] == 0).all()
    actions = random_legal(info["action_mask"], np.random.default_rng(0))
    assert actions in vec.action_space
    _, rewards, terminated, truncated, _ = vec.step(actions)
    assert rewards.shape == (4,) and terminated.dtype == np.bool_ and truncated.dtype == np.bool_


def test_every_seat_can_be_observed() -> None:
    vec = ColorettoVectorEnv(3, players=4)
    vec.reset(seed=0)
    env = raw_env(players=4)
    env.reset(seed=8)
    assert env.game is not None
    _, info = vec.load(1, env.game)
    for _ in range(40):
        action = int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[0])
        env.step(action)
        actions = random_legal(info["action_mask"], np.random.default_rng(0))
        actions[1] = action
        _, _, _, _, info = vec.step(actions)
    for seat, agent in enumerate(env.possible_agents):
        obs, masks = vec.observe(np.full(3, seat))
        expected = env.observe(agent)
        np.testing.assert_array_equal(obs[1], expected["observation"])
        np.testing.assert_array_equal(masks[1], expected["action_mask"])
    with pytest.raises(ValueError, match="seats"):
        vec.observe(np.full(3, 4))


def test_bad_input_is_refused() -> None:
    vec = ColorettoVectorEnv(2, players=3)
    with pytest.raises(RuntimeError, match="reset"):
        vec.step(np.zeros(2, np.int64))
    with pytest.raises(RuntimeError, match="reset"):
        vec.load(0, Game.new(Rules(players=3), seed=0))
    vec.reset(seed=0)
    with pytest.raises(ValueError, match="shape"):
        vec.step(np.zeros(3, np.int64))
    with pytest.raises(ValueError, match="integer"):
        vec.step(np.zeros(2, np.float32))
    with pytest.raises(ValueError, match="0 to 25"):
        vec.step(np.array([0, 26]))
    with pytest.raises(ValueError, match="0 to 25"):
        vec.step(np.array([-1, 0]))
    with pytest.raises(ValueError, match="match_games"):
        ColorettoVectorEnv(2, match_games=3)
    with pytest.raises(ValueError, match="num_envs"):
        ColorettoVectorEnv(0)
    with pytest.raises(ValueError, match="reward"):
        ColorettoVectorEnv(2, reward="points")
    with pytest.raises(ValueError, match="opponent"):
        ColorettoVectorGymEnv(2, opponent="mcts")
    with pytest.raises(ValueError, match="seat"):
        ColorettoVectorGymEnv(2, players=3, seat=3)
    with pytest.raises(ValueError, match="seed"):
        vec.reset(seed=-1)
    game = Game.new(Rules(players=4), seed=0)
    with pytest.raises(ValueError, match="other rules"):
        vec.load(0, game)
    game = Game.new(Rules(players=3), seed=0)
    game.push(action_from_id(0))
    with pytest.raises(ValueError, match="first action"):
        vec.load(0, game)
    with pytest.raises(ValueError, match="slot"):
        vec.load(5, Game.new(Rules(players=3), seed=0))
    assert _kernel.GAME_SIZE > 0


def test_the_benchmark_steps_every_face() -> None:
    from coloretto.envs.benchmark import vector_steps_per_second

    for opponent in (None, "random", "playout", "greedy"):
        assert vector_steps_per_second(Rules(players=3), steps=3, seed=0, num_envs=4, opponent=opponent) > 0


def test_bench_envs_reports_the_vector_env(capsys: pytest.CaptureFixture[str]) -> None:
    from coloretto.cli import main

    assert main(["bench", "--games", "10", "--runs", "1", "--player-counts", "3", "--envs"]) == 0
    out = capsys.readouterr().out
    assert "the vectorised environment, 1024 games at once" in out
    line = next(line for line in out.splitlines() if "every seat" in line)
    assert line.startswith("3 players:") and "vs greedy" in line and line.endswith("steps/s (medians)")


def test_the_threads_kernel_generator_is_left_alone() -> None:
    """The slots draw from their own generators: a search seeded in the same
    thread draws the same numbers whether or not the vector env ran between."""
    from coloretto.bots import kernel

    state = kernel.state_from_game(Game.new(Rules(players=4), seed=1))

    def draws() -> list[int]:
        return [kernel.k_sample_card(state) for _ in range(20)]

    kernel.k_seed(5)
    alone = draws()
    kernel.k_seed(5)
    vec = ColorettoVectorGymEnv(4, players=4, opponent="playout", seat=None)
    _, info = vec.reset(seed=1)
    vec.step(random_legal(info["action_mask"], np.random.default_rng(0)))
    assert draws() == alone
