"""Game records: save, load, replay, and every way a record can be wrong."""

from __future__ import annotations

import contextlib
import copy
import json
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coloretto import Game, Rules
from coloretto.cards import Edition
from coloretto.record import GameRecord, RecordError
from coloretto.rules import JokerTiming


def finished_game(rules: Rules, seed: int = 3) -> Game:
    game = Game.new(rules, seed=seed)
    rng = random.Random(seed)
    while not game.is_over:
        game.push(rng.choice(game.legal_actions))
    return game


def record_dict(game: Game, **kwargs) -> dict:  # type: ignore[no-untyped-def,type-arg]
    return json.loads(
        GameRecord.from_game(game, seats=["Ann", "Bob", "Cy", "Di", "Ed"][: game.players], **kwargs).to_json()
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
    deck = data["deck"]  # two different cards swapped: no longer the deck the record's seed deals
    other = next(i for i in range(len(deck) - 2, -1, -1) if deck[i] != deck[-1])
    deck[-1], deck[other] = deck[other], deck[-1]
    with pytest.raises(RecordError, match=f"the deck is not the one seed {data['seed']} deals"):
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


def test_result_must_be_the_replayed_games() -> None:
    game = finished_game(Rules(players=3))
    data = record_dict(game)
    data["result"]["winners"] = [seat for seat in range(3) if seat not in game.winners()][:1]
    with pytest.raises(RecordError, match=r"recorded winners .* differ from the replay's"):
        GameRecord.from_dict(data).replay()
    data = record_dict(game)
    data["result"]["winners"] = list(reversed(game.winners()))  # order does not matter
    assert GameRecord.from_dict(data).replay().winners() == game.winners()


def test_a_result_on_an_unfinished_game_is_refused() -> None:
    data = record_dict(finished_game(Rules(players=3)))
    data["moves"] = data["moves"][:20]
    with pytest.raises(RecordError, match="has a result, but its game is not over after its 20 moves"):
        GameRecord.from_dict(data).replay()
    # Without the result the same moves are a fine unfinished record,
    assert not GameRecord.from_dict({**data, "result": None}).replay().is_over
    # and a partial replay of a finished record does not check its result.
    assert len(GameRecord.from_dict(record_dict(finished_game(Rules(players=3)))).replay(upto=20)) == 20


@pytest.mark.parametrize(
    ("result", "message"),
    [
        ({"totals": 31}, "result.totals must be a list of whole numbers, not 31"),
        ({"totals": None}, "result.totals must be a list of whole numbers, not null"),
        ({"totals": [1, "2", 3]}, "result.totals must be a list of whole numbers"),
        ({"totals": [1, 2]}, "result.totals has 2 total.s., but the rules are for 3 players"),
        ({"winners": 0}, "result.winners must be a list of seat numbers, not 0"),
        ({"winners": [True]}, "result.winners must be a list of seat numbers"),
        ({"winners": [3]}, r"result.winners \[3\] names a seat that does not exist"),
        ([31, 27, 20], "result must be an object"),
    ],
)
def test_a_malformed_result_is_named(result: object, message: str) -> None:
    data = record_dict(finished_game(Rules(players=3)))
    data["result"] = result
    with pytest.raises(RecordError, match=message):
        GameRecord.from_dict(data)


@pytest.mark.parametrize("names", [["Ann", "Bob"], ["Ann", "Bob", "Cy", "Di"]])
def test_seats_must_name_every_player_or_none(names: list[str]) -> None:
    data = record_dict(finished_game(Rules(players=3)))
    data["seats"] = names
    with pytest.raises(RecordError, match=f"seats has {len(names)} name.s., but the rules are for 3 players"):
        GameRecord.from_dict(data)
    data["seats"] = []
    assert GameRecord.from_dict(data).seats == ()


def test_json_nested_too_deep_is_refused_with_a_clear_error() -> None:
    with pytest.raises(RecordError, match="the JSON is nested too deeply"):
        GameRecord.from_json("[" * 100_000 + "]" * 100_000)
    text = GameRecord.from_game(finished_game(Rules(players=3))).to_json()
    deep_tag = text.replace('"tags": {}', '"tags": {"note": ' + "[" * 100_000 + "]" * 100_000 + "}")
    with pytest.raises(RecordError, match="the JSON is nested too deeply"):
        GameRecord.from_json(deep_tag)
    # Shallow enough for the JSON reader, still far deeper than any record: named by its field.
    data = json.loads(text)
    data["tags"] = {"note": json.loads("[" * 500 + "]" * 500)}
    with pytest.raises(RecordError, match="tags is nested too deeply"):
        GameRecord.from_dict(data)
    data = json.loads(text)
    data["rules"]["players"] = json.loads("[" * 50 + "3" + "]" * 50)
    with pytest.raises(RecordError, match="rules is nested too deeply"):
        GameRecord.from_dict(data)


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats() | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=12,
)
FINISHED_RECORD = record_dict(
    finished_game(Rules(players=3, joker_timing=JokerTiming.ON_TAKE, edition=Edition.MODERN))
)


def record_paths(value: object, path: tuple[str | int, ...] = ()) -> list[tuple[str | int, ...]]:
    """Every place in a record's JSON (the first three moves and cards of each list)."""
    found = [path] if path else []
    if isinstance(value, dict):
        for key, item in value.items():
            found += record_paths(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value[:3]):
            found += record_paths(item, (*path, index))
    return found


@settings(max_examples=300, deadline=None)
@given(place=st.sampled_from(record_paths(FINISHED_RECORD)), value=JSON_VALUES)
@pytest.mark.slow
def test_any_field_replaced_by_any_json_reads_or_is_refused_as_a_record_error(
    place: tuple[str | int, ...], value: object
) -> None:
    data = copy.deepcopy(FINISHED_RECORD)
    parent = data
    for key in place[:-1]:
        parent = parent[key]
    parent[place[-1]] = value
    # A RecordError is a clear message; anything else would be a traceback for the user.
    with contextlib.suppress(RecordError):
        GameRecord.from_json(json.dumps(data)).replay()


def test_seat_labels_tell_apart_seats_named_alike() -> None:
    game = Game.new(Rules(players=4), seed=3)
    alike = GameRecord.from_game(game, seats=["greedy", "heuristic", "greedy", "greedy"])
    assert alike.seat_labels == ("greedy (seat 1)", "heuristic", "greedy (seat 3)", "greedy (seat 4)")
    assert GameRecord.from_game(game, seats=["A", "B", "C", "D"]).seat_labels == ("A", "B", "C", "D")
    assert GameRecord.from_game(game).seat_labels == ("seat 1", "seat 2", "seat 3", "seat 4")
