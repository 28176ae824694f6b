"""Starting colours chosen by the players (variant of the playing-cards source)."""

from __future__ import annotations

import random

import pytest

from coloretto import DRAW, Game, IllegalActionError, Rules
from coloretto.actions import ActionKind, choose_start, parse_action
from coloretto.cards import LAST_ROUND, full_composition
from coloretto.record import GameRecord

R, B, G = 2, 5, 4


def chosen(players: int, **options: object) -> Rules:
    return Rules(players=players, starting_colours="chosen", **options)  # type: ignore[arg-type]


def test_each_seat_chooses_in_turn_from_the_first_player() -> None:
    game = Game.new(chosen(4), seed=5, first_player=2)
    assert game.collection(0)[:7] == (0,) * 7
    assert game.start_picks_left == 4
    assert set(game.legal_actions) == {choose_start(c) for c in range(7)}
    order = []
    for colour in (R, B, G, 0):
        order.append(game.to_move)
        game.push(choose_start(colour))
    assert order == [2, 3, 0, 1]
    assert game.collection(2)[R] == game.collection(3)[B] == game.collection(0)[G] == 1
    assert game.start_picks_left == 0
    assert game.to_move == 2 and game.round == 1
    assert DRAW in game.legal_actions


def test_two_players_choose_two_colours_each_in_turns() -> None:
    game = Game.new(chosen(2), seed=1, first_player=0)
    movers = []
    for colour in range(4):
        movers.append(game.to_move)
        game.push(choose_start(colour))
    assert movers == [0, 1, 0, 1]
    assert [sum(game.collection(s)[:5]) for s in (0, 1)] == [2, 2]
    assert game.to_move == 0


def test_the_deck_is_built_once_every_colour_is_chosen() -> None:
    rules = chosen(3)
    game = Game.new(rules, seed=4)
    full = full_composition(3, rules.edition)
    assert game.cards_before_last_round == sum(full) - 1 - 3 - rules.under_last_round
    while game.start_picks_left:
        game.push(game.legal_actions[0])
    unseen = game.unseen_composition()
    assert sum(unseen) == sum(full) - 1 - 3
    assert game.cards_in_deck == sum(unseen) + 1
    assert game.cards_before_last_round == sum(unseen) - rules.under_last_round
    # the last-round card has exactly its number of cards under it
    record = GameRecord.from_game(game)
    replayed = record.replay()
    assert replayed.cards_before_last_round == game.cards_before_last_round
    while game.cards_before_last_round is not None:
        game.push(DRAW if DRAW in game.legal_actions else game.legal_actions[0])
        if game.pending_card is not None:
            game.push(game.legal_actions[0])
    assert game.last_round
    assert LAST_ROUND in game.events()[-1].revealed or any(e.last_round_began for e in game.events())


def test_choices_that_break_the_rule_are_refused_with_the_rule() -> None:
    game = Game.new(chosen(3), seed=2)
    with pytest.raises(IllegalActionError, match="choose a starting colour first"):
        game.push(DRAW)
    game.push(choose_start(R))
    with pytest.raises(IllegalActionError, match="already been chosen"):
        game.push(choose_start(R))
    with pytest.raises(IllegalActionError, match="not in play"):
        game.push(choose_start(6))  # three players: six colours
    while game.start_picks_left:
        game.push(game.legal_actions[0])
    with pytest.raises(IllegalActionError, match="only before the first round"):
        game.push(choose_start(0))
    dealt = Game.new(Rules(players=3), seed=2)
    assert not any(a.kind is ActionKind.CHOOSE_START for a in dealt.legal_actions)


def test_notation_and_records_carry_the_choices() -> None:
    assert parse_action("s:R") == choose_start(R)
    assert parse_action("start blue") == choose_start(B)
    assert choose_start(R).notation() == "s:R"
    rules = chosen(2, edition="playing-cards", joker_timing="on-take")
    game = Game.new(rules, seed=9)
    rng = random.Random(9)
    while not game.is_over:
        game.push(rng.choice(game.legal_actions))
    record = GameRecord.from_json(GameRecord.from_game(game).to_json())
    assert record.to_dict()["moves"][0].startswith("s:")
    assert record.starting_cards == ((), ())
    assert record.replay().scores() == game.scores()
    secret = GameRecord.from_game(game, include_deck=False)
    assert secret.replay().scores() == game.scores()


def test_observations_let_a_bot_search_while_colours_are_chosen() -> None:
    game = Game.new(chosen(4, edition="modern"), seed=3)
    game.push(choose_start(G))
    obs = game.observation(game.to_move or 0)
    assert obs.start_picks_left == 3 and obs.first_player == game.first_player
    copy = Game.from_observation(obs, random.Random(1))
    assert copy.legal_actions == game.legal_actions
    assert copy.cards_before_last_round == game.cards_before_last_round
    while copy.start_picks_left:
        copy.push(copy.legal_actions[0])
    assert copy.to_move == game.first_player
    assert sum(copy.unseen_composition()) == copy.cards_in_deck - 1


def test_undo_restores_the_box_exactly() -> None:
    game = Game.new(chosen(5), seed=12)
    keys = [game.state_key()]
    while game.start_picks_left:
        game.push(game.legal_actions[-1])
        keys.append(game.state_key())
    game.push(DRAW)
    game.pop()
    for key in reversed(keys[:-1]):
        game.pop()
        assert game.state_key() == key
