"""The ppo bot and its training command: a short training run gives a policy that
loads and plays legally; the NumPy policy gives the network's own logits; bad
policy files and arguments are refused with messages that say what is wrong."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from coloretto.bots import BotSpecError, check_bot, make_bot
from coloretto.bots.kernel import ACTION_FEATURES, action_features
from coloretto.bots.ppo import POLICY_FILE, PolicyFileError, PPOPolicy
from coloretto.cli import main
from coloretto.envs.encoding import OBSERVATION_SIZE, encode_observation
from coloretto.game import Game
from coloretto.rules import Rules
from tests.helpers import RULE_VARIANTS


def _train(tmp_path: Path, steps: int = 512, seed: int = 3) -> Path:
    out = tmp_path / f"policy-{seed}.npz"
    code = main(
        [
            "train-ppo",
            "--players",
            "3",
            "--steps",
            str(steps),
            "--envs",
            "8",
            "--seed",
            str(seed),
            "--out",
            str(out),
        ]
    )
    assert code == 0
    return out


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _train(tmp_path_factory.mktemp("ppo"))


def _play(bot_name: str, rules: Rules, seed: int) -> list[str]:
    game = Game.new(rules, seed=seed)
    bot = make_bot(bot_name, seed=seed)
    moves = []
    while not game.is_over:
        observation = game.observation(game.to_move)  # type: ignore[arg-type]
        action = bot.choose(observation)
        assert action in observation.legal_actions
        moves.append(action.notation)
        game.push(action)
    return moves


def test_a_short_training_run_writes_a_policy_the_bot_plays(trained: Path) -> None:
    policy = PPOPolicy.read(trained)
    assert policy.meta["players"] == 3 and policy.meta["steps"] >= 512
    assert policy.scale.shape == (OBSERVATION_SIZE + ACTION_FEATURES,)
    moves = _play(f"ppo:{trained}", Rules(players=3), seed=5)
    assert len(moves) > 30


def test_the_same_seed_and_steps_give_the_same_policy(tmp_path: Path, trained: Path) -> None:
    again = _train(tmp_path)
    first, second = PPOPolicy.read(trained), PPOPolicy.read(again)
    for a, b in zip(first.weights, second.weights):
        np.testing.assert_array_equal(a, b)


def test_training_leaves_nothing_in_the_temporary_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SB3's default logger makes an empty SB3-<time> folder in the temporary folder on every run."""
    import tempfile

    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    _train(tmp_path, steps=256)
    assert list(scratch.iterdir()) == []


def test_the_numpy_policy_gives_the_networks_logits(tmp_path: Path) -> None:
    from sb3_contrib import MaskablePPO

    from coloretto.envs.ppo_training import TrainSettings, export_policy, make_env

    env = make_env(TrainSettings(players=4, envs=2, seed=1))
    model = MaskablePPO("MlpPolicy", env, n_steps=8, batch_size=16, seed=1, device="cpu")
    policy = export_policy(model, env.scale, {"players": 4})
    positions = [Game.new(Rules(players=4), seed=s) for s in range(5)]
    for game in positions[2:]:
        game.push(game.legal_actions[0])  # a drawn card to place: place features
    vectors = np.stack(
        [
            np.concatenate(
                [encode_observation(g.observation(g.to_move)), action_features(g.observation(g.to_move))]
            )  # type: ignore[arg-type]
            for g in positions
        ]
    )
    with torch.no_grad():
        scaled = torch.as_tensor((vectors * env.scale).astype(np.float32))
        latent = model.policy.mlp_extractor.forward_actor(scaled)
        expected = model.policy.action_net(latent).numpy()
    np.testing.assert_allclose(policy.logits(vectors), expected, rtol=1e-5, atol=1e-5)
    path = tmp_path / "p.npz"
    policy.write(path)
    np.testing.assert_array_equal(PPOPolicy.read(path).logits(vectors), policy.logits(vectors))
    env.close()


@pytest.mark.parametrize("rules", RULE_VARIANTS, ids=lambda r: r.describe())
def test_the_shipped_policy_plays_legally_and_alike_in_every_variant(rules: Rules) -> None:
    assert POLICY_FILE.is_file(), "coloretto/bots/ppo.npz ships with the package"
    assert _play("ppo", rules, seed=11) == _play("ppo", rules, seed=11)


def test_sampling_follows_the_seed(trained: Path) -> None:
    name = f"ppo:{trained},sample"
    rules = Rules(players=3)
    assert _play(name, rules, 2) == _play(name, rules, 2)
    assert _play(name, rules, 2) != _play(name, rules, 3) or _play(name, rules, 2) != _play(name, rules, 4)


def test_bad_policy_files_are_refused_with_the_reason(tmp_path: Path, trained: Path) -> None:
    with pytest.raises(BotSpecError, match="no policy file"):
        check_bot(f"ppo:{tmp_path / 'missing.npz'}")
    with pytest.raises(BotSpecError, match=r"FILE\.npz"):
        check_bot("ppo:fast")
    junk = tmp_path / "junk.npz"
    junk.write_bytes(b"not a zip")
    with pytest.raises(BotSpecError, match="not a policy file"):
        make_bot(f"ppo:{junk}", seed=1)
    with np.load(trained) as data:
        arrays = {name: data[name] for name in data.files}
    meta = json.loads(bytes(arrays["meta"]).decode())
    short = dict(arrays, scale=arrays["scale"][:100])
    bad = tmp_path / "short.npz"
    np.savez(bad, **short)
    with pytest.raises(PolicyFileError, match="made for 100 inputs"):
        PPOPolicy.read(bad)
    wrong = dict(arrays, meta=np.frombuffer(json.dumps(meta | {"activation": "sigmoid"}).encode(), np.uint8))
    np.savez(bad, **wrong)
    with pytest.raises(PolicyFileError, match="activation"):
        PPOPolicy.read(bad)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--players", "7"], "--players must be 2 to 5"),
        (["--opponents", "heuristic"], "--opponents must be one of"),
        (["--steps", "3"], "--steps must be at least --envs"),
        (["--minutes", "0"], "--minutes must be positive"),
    ],
)
def test_bad_training_arguments_are_refused(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["train-ppo", *argv]) == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize("rules", RULE_VARIANTS, ids=lambda r: r.describe())
def test_the_action_features_are_greedys_row_gains(rules: Rules) -> None:
    """The kernel's action features are what GreedyBot weighs: each row's gain to
    the seat to move and to its best rival still in the round, taken now or with
    the drawn card, and a draw's expected gain (0 where that is no move)."""
    import random

    from coloretto.actions import DRAW
    from coloretto.bots import kernel as K
    from coloretto.bots.simple import GreedyBot, row_gain

    for seed in range(3):
        game = Game.new(rules, seed=seed)
        rng = random.Random(seed)
        while not game.is_over:
            me = game.to_move
            assert me is not None
            obs = game.observation(me)
            expected = np.zeros(K.ACTION_FEATURES)
            rivals = [p for p in range(rules.players) if p != me and not obs.out_this_round[p]]
            for i, cards in enumerate(obs.rows):
                if obs.rows_taken[i]:
                    continue
                if obs.pending_card is not None:
                    if len(cards) >= obs.row_capacities[i]:
                        continue
                    row, mine, theirs = (*cards, obs.pending_card), K.AF_PLACE_MINE, K.AF_PLACE_RIVAL
                elif cards:
                    row, mine, theirs = tuple(cards), K.AF_TAKE_MINE, K.AF_TAKE_RIVAL
                else:
                    continue
                expected[mine + i] = row_gain(obs, me, row)
                expected[theirs + i] = max((row_gain(obs, p, row) for p in rivals), default=0)
            if obs.pending_card is None and DRAW in obs.legal_actions:
                expected[K.AF_DRAW] = GreedyBot(0)._draw_value(obs)
            np.testing.assert_allclose(K.action_features(obs), expected)
            game.push(rng.choice(game.legal_actions))


def test_a_bad_evaluation_is_refused_before_the_training(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "policy.npz"
    assert main(["train-ppo", "--eval", "-1", "--out", str(out)]) == 2
    assert "--eval must be a number of games, 0 (none) or more, not -1" in capsys.readouterr().err
    assert not out.exists()
