"""Game records: save, load, replay, and every way a record can be wrong."""

from __future__ import annotations

import json
import random

import pytest

from coloretto import Game, Rules
from coloretto.record import GameRecord, RecordError


def finished_game(rules: Rules, seed: int = 3) -> Game:
    game = Game.new(rules, seed=seed)
    rng = random.Random(seed)
    while not game.is_over:
        game.push(rng.choice(game.legal_actions))
    return game


def record_dict(game: Game, **kwargs) -> dict:  # type: ignore[no-untyped-def,type-arg]
    return json.loads(
        GameRecord.from_game(game, seats=["Ann", "Bob", "Cy"][: game.players], **kwargs).to_json()
    )


def test_record_holds_everything_needed() -> None:
    game = finished_game(Rules(players=3, edition="modern", table="violet"))
    data = record_dict(game, tags={"event": "club night"})
    assert data["format"] == "coloretto-record" and data["version"] == 1
    assert data["rules"]["edition"] == "modern" and data["rules"]["table"] == "violet"
    assert data["seed"] == 3
    assert len(data["deck"]) == len(game.setup.deck)
    assert data["seats"] == ["Ann", "Bob", "Cy"]
    assert data["tags"] == {"event": "club night"}
    assert len(data["moves"]) == len(game)
    assert data["moves"][0].startswith("d ")  # every draw names its card
    assert data["result"]["totals"] == [s.total for s in game.scores()]
    assert data["result"]["winners"] == list(game.winners())


def test_partial_replay_stops_where_asked() -> None:
    game = finished_game(Rules(players=2))
    record = GameRecord.from_game(game)
    part = record.replay(upto=10)
    assert len(part) == 10
    assert part.history() == game.history()[:10]


def replay_error(data: dict) -> RecordError:  # type: ignore[type-arg]
    with pytest.raises(RecordError) as info:
        GameRecord.from_json(json.dumps(data)).replay()
    return info.value


def test_illegal_move_is_reported_with_its_number() -> None:
    data = record_dict(finished_game(Rules(players=3)))
    # Move 2 places the first drawn card; make it take an empty row instead.
    data["moves"][1] = "t1"
    error = replay_error(data)
    assert error.move_number == 2
    assert "move 2: illegal" in str(error)


def test_wrong_revealed_card_is_reported() -> None:
    data = record_dict(finished_game(Rules(players=3)))
    first = data["moves"][0].split()
    other = "Y" if first[-1] != "Y" else "O"
    data["moves"][0] = f"d {other}"
    error = replay_error(data)
    assert error.move_number == 1
    assert "the deal gives" in str(error)


def test_truncated_and_corrupt_records() -> None:
    text = GameRecord.from_game(finished_game(Rules(players=3))).to_json()
    with pytest.raises(RecordError, match="not valid JSON"):
        GameRecord.from_json(text[: len(text) // 2])
    with pytest.raises(RecordError, match="not a Coloretto record"):
        GameRecord.from_json('{"format": "chess"}')
    with pytest.raises(RecordError, match="must be a JSON object"):
        GameRecord.from_json("[1, 2]")
    data = json.loads(text)
    data["moves"][4] = "fly away"
    with pytest.raises(RecordError, match="move 5: cannot read action"):
        GameRecord.from_dict(data)
    data = json.loads(text)
    data["moves"][0] = "d"
    with pytest.raises(RecordError, match="move 1: a draw must say which card"):
        GameRecord.from_dict(data)
    data = json.loads(text)
    data["rules"]["players"] = 9
    with pytest.raises(RecordError, match="bad rules"):
        GameRecord.from_dict(data)
    data = json.loads(text)
    data["deck"] = data["deck"][:-3]
    with pytest.raises(RecordError, match="bad setup"):
        GameRecord.from_dict(data).replay()
    data = json.loads(text)
    data["moves"].append("d R")
    with pytest.raises(RecordError, match="already over"):
        GameRecord.from_dict(data).replay()
    data = json.loads(text)
    data["result"]["totals"] = [1, 2, 3]
    with pytest.raises(RecordError, match="recorded totals"):
        GameRecord.from_dict(data).replay()


def test_unfinished_game_record_replays_to_the_same_position() -> None:
    game = Game.new(Rules(players=4), seed=8)
    rng = random.Random(1)
    for _ in range(33):
        game.push(rng.choice(game.legal_actions))
    again = GameRecord.from_json(GameRecord.from_game(game).to_json()).replay()
    assert again.state_key() == game.state_key()
    assert GameRecord.from_game(game).result is None


def test_secret_deck_record_replays_from_revealed_cards() -> None:
    game = finished_game(Rules(players=4, edition="modern"))
    data = record_dict(game, include_deck=False)
    assert data["deck"] is None and data["seed"] is None
    again = GameRecord.from_dict(data).replay()
    assert [s.total for s in again.scores()] == [s.total for s in game.scores()]
