"""``coloretto play`` and ``replay --step``, driven headlessly through the UI.

Whole games are played with key presses for the person's seat against bots,
and what the *screen* shows is compared with what the engine says.
"""

from __future__ import annotations

import asyncio
import html
import json
import os
import random
import re
from collections.abc import Callable, Coroutine
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from rich.cells import cell_len
from textual.app import App
from textual.binding import Binding
from textual.pilot import Pilot

from coloretto.actions import Action, ActionKind, parse_action
from coloretto.bots import available_bots, make_bot
from coloretto.bots.levels import LEVELS
from coloretto.cards import LAST_ROUND, full_composition, parse_card
from coloretto.cli import CommandError, build_parser, main
from coloretto.commands.play import prepare
from coloretto.game import Game
from coloretto.match import Match
from coloretto.record import GameRecord
from coloretto.rules import MAX_MATCH_GAMES, RULE_OPTIONS, Rules
from coloretto.tui.app import ColorettoApp, PlayConfig, PlayResult, ReplayApp
from coloretto.tui.end import EndScreen
from coloretto.tui.overlays import HelpScreen, QuitScreen, TooSmallScreen
from coloretto.tui.replay import ReplayScreen
from coloretto.tui.session import HUMAN, PlaySession, make_seats, seats_from_record
from coloretto.tui.setup import SetupScreen, seat_choices
from coloretto.tui.table import GameScreen
from tests.helpers import argument_error

SIZE = (120, 40)


def run(coro: Coroutine[Any, Any, None]) -> None:
    asyncio.run(coro)


_LINE_CLIP = re.compile(r'<clipPath id="[\w-]+-line-0">\s*<rect x="0" y="[\d.]+" width="([\d.]+)"')
_TEXT = re.compile(r'<text [^>]*\bx="([\d.]+)"[^>]*clip-path="url\(#[\w-]+-line-(\d+)\)">(.*?)</text>')


def screen_text(app: App[Any]) -> str:
    """Everything the active screen shows, as plain text lines (trailing blanks
    dropped), read from Textual's public screenshot: each run of text in the SVG
    names its line and starts at a column given by its x; spaces are written as
    no-break spaces there."""
    svg = app.export_screenshot(simplify=True)
    clip = _LINE_CLIP.search(svg)
    assert clip is not None, "the screenshot has no line geometry"
    cell_width = float(clip.group(1)) / app.size.width
    lines = [""] * app.size.height
    for x, line_number, text in _TEXT.findall(svg):
        y = int(line_number)
        column = round(float(x) / cell_width)
        lines[y] += " " * (column - cell_len(lines[y])) + html.unescape(text).replace("\xa0", " ")
    return "\n".join(line.rstrip() for line in lines)


async def wait_until(pilot: Pilot[Any], condition: Callable[[], bool], timeout: float = 20.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        if loop.time() > deadline:
            raise AssertionError(f"timed out; the screen shows:\n{screen_text(pilot.app)}")
        await pilot.pause(0.005)


def key_for(action: Action) -> str:
    """The key a person presses for an action."""
    if action.kind is ActionKind.DRAW:
        return "d"
    if action.kind is ActionKind.PASS:
        return "x"
    return str(action.index + 1)


def shown_scores(text: str, session: PlaySession) -> list[int]:
    """The score at the end of each player's line in the players table."""
    scores = []
    for seat in session.seats:
        row = re.compile(rf"^\s*(▶\s+)?{re.escape(seat.label)}\s")
        line = next(line for line in text.splitlines() if row.match(line))
        scores.append(int(line.split()[-1]))
    return scores


def session_for(kinds: list[str], seed: int, **rules: Any) -> PlaySession:
    return PlaySession.new(Rules(players=len(kinds), **rules), make_seats(kinds), seed=seed, first_player=0)


async def play_out(pilot: Pilot[Any], session: PlaySession, rng: random.Random) -> int:
    """Play the person's seat(s) by key presses until the game is over.

    At every turn of a person, checks that the screen shows the engine's
    scores and offers the legal rows. Returns how many keys were pressed.
    """
    app = pilot.app
    game = session.game
    pressed = 0
    while True:
        await wait_until(
            pilot,
            lambda: game.is_over or (session.seat_to_move() is not None and session.seat_to_move().is_human),
        )
        if game.is_over:
            return pressed
        await wait_until(pilot, lambda: isinstance(app.screen, GameScreen))
        await pilot.pause()
        text = screen_text(app)
        assert shown_scores(text, session) == [game.best_score(s).total for s in range(game.players)]
        legal = game.legal_actions
        turn_line = next(
            line for line in text.splitlines() if line.startswith(session.seat_to_move().name + ":")
        )
        for action in legal:
            if action.kind in (ActionKind.PLACE, ActionKind.TAKE):
                assert f"[{action.index + 1}]" in turn_line
        if legal[0].kind is ActionKind.PLACE:
            full = [i for i, row in enumerate(game.rows) if len(row) == game.row_capacities[i]]
            for i in full:
                assert f"[{i + 1}]" not in turn_line
        action = rng.choice(legal)
        moves = len(game)
        await pilot.press(key_for(action))
        pressed += 1
        await wait_until(pilot, lambda moves=moves: len(game) > moves)
        assert game.history()[moves][0] == action


def final_totals(text: str) -> list[int]:
    line = next(line for line in text.splitlines() if re.search(r"\btotal\b", line))
    return [int(n) for n in re.findall(r"-?\d+", line)]


@pytest.mark.parametrize(
    ("kinds", "seed", "rules"),
    [
        (["human", "greedy"], 11, {}),
        (["greedy", "human", "greedy", "random"], 12, {"table": "violet"}),
    ],
)
@pytest.mark.slow
def test_whole_game_by_keys_against_bots(
    kinds: list[str], seed: int, rules: dict[str, str], tmp_path: Path
) -> None:
    session = session_for(kinds, seed, **rules)
    save = tmp_path / "game.json"
    app = ColorettoApp(session, PlayConfig(save_path=save, bot_delay=0))

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            pressed = await play_out(pilot, session, random.Random(seed))
            assert pressed > 10
            await wait_until(pilot, lambda: isinstance(app.screen, EndScreen))
            await pilot.pause()
            text = screen_text(app)
            game = session.game
            assert final_totals(text) == [s.total for s in game.scores()]
            winners = game.winners()
            names = ", ".join(session.name(s) for s in winners)
            assert (f"★ {names} wins" if len(winners) == 1 else f"Shared win: {names}") in text
            for seat in range(game.players):
                header = next(line for line in text.splitlines() if session.name(0) in line)
                assert (f"{session.name(seat)} ★" in header) == (seat in winners)
            assert f"saved to {save}" in text
            await pilot.press("d")
            await pilot.pause()
            assert "The key 'd' does nothing here" in screen_text(app)
            await pilot.press("q")
        result = app.return_value
        assert isinstance(result, PlayResult) and result.finished and result.saved_to == save

    run(scenario())
    record = GameRecord.from_json(save.read_text(encoding="utf-8"))
    replayed = record.replay()
    assert [s.total for s in replayed.scores()] == [s.total for s in session.game.scores()]
    assert record.tags["seat_kinds"] == ",".join(kinds)
    assert list(record.seats) == [s.name for s in session.seats]
    assert main(["replay", str(save)]) == 0


def hot_seat(players: int = 3, **rules: Any) -> PlaySession:
    return session_for([HUMAN] * players, seed=5, **rules)


@pytest.mark.slow
def test_a_full_row_cannot_be_chosen_and_bad_keys_get_messages() -> None:
    session = hot_seat()
    game = session.game
    app = ColorettoApp(session, PlayConfig(save_path=None, bot_delay=0))

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            for _ in range(3):
                await pilot.press("d", "1")
            await pilot.pause()
            assert game.rows[0] and len(game.rows[0]) == 3
            assert re.search(r"Row 1 \(3\)\s+\S+\s+\S+\s+\S+\s+full", screen_text(app))
            await pilot.press("d")
            await pilot.pause()
            before = game.state_key()
            text = screen_text(app)
            turn = next(line for line in text.splitlines() if "place the drawn" in line)
            assert "[1]" not in turn and "[2]" in turn
            await pilot.press("1")
            await pilot.pause()
            assert game.state_key() == before
            assert "row 1 is full (3 cards)" in screen_text(app)
            await pilot.press("9")
            await pilot.pause()
            assert "there is no row 9" in screen_text(app)
            await pilot.press("z")
            await pilot.pause()
            assert "The key 'z' does nothing here" in screen_text(app)
            await pilot.press("x")
            await pilot.pause()
            assert "Not allowed: x: the drawn card must be placed in a row first" in screen_text(app)
            assert game.state_key() == before
            # the command line: nonsense, then a real move
            await pilot.press("colon", "h", "i", "enter")
            await pilot.pause()
            assert "cannot read action 'hi'" in screen_text(app)
            await pilot.press("colon", "p", "escape")  # Esc leaves the command line unused
            await pilot.pause()
            assert len(game) == 7
            await pilot.press("colon", "p", "2", "enter")
            await pilot.pause()
            assert game.rows[1] and len(game) == 8
            # the next player may not take an empty row
            await pilot.press("3")
            await pilot.pause()
            assert "row 3 is empty" in screen_text(app)
            await pilot.press("1")
            await pilot.pause()
            assert game.row_is_taken(0) and game.is_out(1)
            text = screen_text(app)
            assert "taken by Player 2" in text
            assert re.search(r"Player 2\s+out \(row 1\)", text)
            assert "Player 2 took row 1:" in text

    run(scenario())


def game_with_top(rules: Rules, top: list[str], starting: list[list[str]]) -> Game:
    """A game whose deck starts with ``top``; the rest in a fixed order."""
    counts = full_composition(rules.players, rules.edition)
    for card in [*top, *(c for hand in starting for c in hand)]:
        counts[parse_card(card, rules.edition)] -= 1
    counts[LAST_ROUND] = 0
    rest = [card for card, n in enumerate(counts) for _ in range(n)]
    random.Random(0).shuffle(rest)
    deck: list[int | str] = [*top, *rest]
    under = rules.under_last_round
    deck = [*deck[:-under], "LR", *deck[-under:]]
    return Game.from_deck(rules, deck, starting)


def test_log_names_the_cards_of_a_taken_row() -> None:
    game = game_with_top(Rules(players=4), ["R", "R", "+2", "Y", "O"], [["P"], ["B"], ["N"], ["G"]])
    session = PlaySession(game, make_seats(["human", "greedy", "human", "human"]))
    for move in ("d", "p3", "d", "p3", "d", "p3", "d", "p1", "d", "p2", "t3"):
        session.push(parse_action(move))
    assert session.log[-1].text == "Bot 2 took row 3: red, red, +2"
    assert session.log[1].text == "Player 1 drew red and put it in row 3"
    assert session.takers == {2: 1}


def test_jokers_named_on_take_by_digits() -> None:
    rules = Rules(players=3, joker_timing="on-take")
    game = game_with_top(rules, ["J"], [["Y"], ["O"], ["G"]])
    session = PlaySession(game, make_seats([HUMAN] * 3))
    app = ColorettoApp(session, PlayConfig(bot_delay=0))

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("d", "1", "1")
            await pilot.pause()
            text = screen_text(app)
            assert "name the colour of the joker you took" in text
            assert "[3] R■ red" in text
            await pilot.press("7")
            await pilot.pause()
            assert "choose a colour from 1 to 6" in screen_text(app)
            await pilot.press("3")
            await pilot.pause()
            assert game.collection(1)[2] == 1 and game.named_jokers(1) == ((7, 2),)
            assert "Player 2 named a joker red" in screen_text(app)

    run(scenario())


@pytest.mark.slow
def test_help_screen_shows_the_rules_and_bots_wait_under_it() -> None:
    seats = make_seats(["human", "greedy", "greedy"])
    session = PlaySession.new(Rules(players=3), seats, seed=3, first_player=1)  # a bot starts
    app = ColorettoApp(session, PlayConfig(bot_delay=1.0))

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("question_mark")  # well before the bot's pause is over
            await pilot.pause()
            assert isinstance(app.screen, HelpScreen)
            text = screen_text(app)
            assert "draw the top card" in text and "J✱  joker" in text
            await pilot.press("end")  # the help scrolls
            await pilot.pause()
            assert "score 1, 3, 6, 10, 15, 21" in screen_text(app)
            await pilot.pause(1.3)
            assert len(session.game) == 0  # the bots wait while the help is open
            await pilot.press("escape")
            await wait_until(
                pilot, lambda: session.seat_to_move() is not None and session.seat_to_move().is_human
            )
            assert len(session.game) == 4

    run(scenario())


@pytest.mark.slow
def test_ctrl_c_asks_to_save_and_the_game_resumes(tmp_path: Path) -> None:
    save = tmp_path / "unfinished.json"
    session = session_for(["human", "random", "greedy"], seed=21)
    app = ColorettoApp(session, PlayConfig(save_path=save, bot_delay=0))

    async def first_part() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("d", "2")
            await wait_until(pilot, lambda: session.seat_to_move().is_human and len(session.game) > 2)
            await pilot.press("ctrl+c")
            await pilot.pause()
            assert isinstance(app.screen, QuitScreen)
            assert "save it to" in screen_text(app)
            await pilot.press("escape")
            await pilot.pause()
            assert isinstance(app.screen, GameScreen) and not save.exists()
            await pilot.press("ctrl+c")
            await pilot.press("y")
            await pilot.pause()

    run(first_part())
    result = app.return_value
    assert isinstance(result, PlayResult) and result.saved_to == save and not result.finished
    moves = len(session.game)

    args = build_parser().parse_args(["play", "--resume", str(save), "--bot-delay", "0"])
    resumed, config = prepare(args)
    assert resumed is not None and config.save_path == save
    assert resumed.game.state_key() == session.game.state_key()
    assert [s.kind for s in resumed.seats] == ["human", "random", "greedy"]
    assert [e.text for e in resumed.log] == [e.text for e in session.log]
    app2 = ColorettoApp(resumed, config)

    async def second_part() -> None:
        async with app2.run_test(size=SIZE) as pilot:
            await play_out(pilot, resumed, random.Random(2))
            await wait_until(pilot, lambda: isinstance(app2.screen, EndScreen))

    run(second_part())
    assert len(resumed.game) > moves and resumed.game.is_over
    record = GameRecord.from_json(save.read_text(encoding="utf-8"))
    assert record.result is not None and record.replay().is_over
    assert main(["play", "--resume", str(save)]) == 2  # a finished game cannot be resumed


def test_quit_without_saving_and_q_key(tmp_path: Path) -> None:
    save = tmp_path / "never.json"
    app = ColorettoApp(hot_seat(), PlayConfig(save_path=save, bot_delay=0))

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("q")
            await pilot.pause()
            assert isinstance(app.screen, QuitScreen)
            await pilot.press("z")
            await pilot.pause()
            assert "The key 'z' does nothing here: y, n or Esc" in screen_text(app)
            await pilot.press("n")
            await pilot.pause()

    run(scenario())
    assert isinstance(app.return_value, PlayResult) and app.return_value.saved_to is None
    assert not save.exists()


def test_save_key_and_unwritable_save_path(tmp_path: Path) -> None:
    bad = tmp_path / "no-such-dir" / "game.json"
    app = ColorettoApp(hot_seat(), PlayConfig(save_path=bad, bot_delay=0))

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("s")
            await pilot.pause()
            assert f"Could not save to {bad}" in screen_text(app)
            await pilot.press("ctrl+c", "y")
            await pilot.pause()
            assert isinstance(app.screen, QuitScreen)  # still asking: nothing was saved
            assert "Could not save" in screen_text(app)
            await pilot.press("n")

    run(scenario())


def test_too_small_terminal_gets_a_message_and_keys_wait() -> None:
    session = hot_seat()
    app = ColorettoApp(session, PlayConfig(bot_delay=0))

    async def scenario() -> None:
        async with app.run_test(size=(60, 18)) as pilot:
            await pilot.pause()
            assert isinstance(app.screen, TooSmallScreen)
            assert "too small: 60×18" in screen_text(app)
            await pilot.press("d")
            await pilot.pause()
            assert len(session.game) == 0
            await pilot.resize_terminal(*SIZE)
            await pilot.pause()
            assert isinstance(app.screen, GameScreen)
            await pilot.press("d")
            await pilot.pause()
            assert session.game.pending_card is not None
            # shrunk, then Ctrl+C, then grown again while the question is open
            await pilot.resize_terminal(70, 20)
            await pilot.pause()
            assert isinstance(app.screen, TooSmallScreen)
            await pilot.press("ctrl+c")
            await pilot.pause()
            assert isinstance(app.screen, QuitScreen)
            await pilot.resize_terminal(*SIZE)
            await pilot.pause()
            await pilot.press("escape")
            await wait_until(pilot, lambda: isinstance(app.screen, GameScreen))
            await pilot.press("1")
            await pilot.pause()
            assert len(session.game) == 2

    run(scenario())


def test_setup_screen_chooses_seats_and_rules() -> None:
    app = ColorettoApp(None, PlayConfig(bot_delay=0, seed=4))

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            assert isinstance(app.screen, SetupScreen)
            text = screen_text(app)
            assert "Seat 4" in text and "Seat 5" not in text  # 4 players, as the docs say
            await pilot.press("down", "down", "left")  # seat 2: greedy -> random? (one back)
            await pilot.press("z")
            await pilot.pause()
            assert "does nothing here" in screen_text(app)
            for _ in range(4):
                await pilot.press("down")
            await pilot.press("right")  # scoring table: violet
            await pilot.press("enter")
            await wait_until(pilot, lambda: isinstance(app.screen, GameScreen))
            session = app.session
            assert session is not None
            assert session.game.rules.players == 4 and session.game.rules.table.value == "violet"
            kinds = [s.kind for s in session.seats]
            assert kinds[0] == HUMAN and kinds[2:] == ["greedy", "greedy"] and kinds[1] != "greedy"
            assert session.game.setup.seed == 4
            await pilot.press("ctrl+c", "n")

    run(scenario())


def test_command_line_options_make_the_table() -> None:
    parser = build_parser()
    args = parser.parse_args(
        ["play", "--players", "4", "--bots", "greedy,greedy,random", "--table", "violet"]
    )
    session, config = prepare(args)
    assert session is not None
    assert [s.kind for s in session.seats] == ["human", "greedy", "greedy", "random"]
    assert [s.name for s in session.seats] == ["Player 1", "Bot 2", "Bot 3", "Bot 4"]
    assert session.game.rules.table.value == "violet" and config.bot_delay == 0.8
    args = parser.parse_args(["play", "--seats", "greedy,human", "--names", "Gus,Ann", "--seed", "9"])
    session, _ = prepare(args)
    assert session is not None and session.seats[1].name == "Ann" and session.game.setup.seed == 9
    assert session.game.rules.players == 2
    none, _ = prepare(parser.parse_args(["play"]))
    assert none is None  # no set-up options: the set-up screen


@pytest.mark.parametrize(
    ("argv", "error"),
    [
        (["play", "--bots", "grandmaster"], "unknown bot 'grandmaster'"),
        (["play", "--players", "6"], "2 to 5 players"),
        (["play", "--players", "2", "--bots", "greedy,greedy,random"], "do not fit"),
        (["play", "--seats", "human,greedy", "--players", "3"], "names 2 seats"),
        (["play", "--names", "A,A", "--players", "2"], "--names gives two seats the name 'A'"),
        # checked before the set-up screen, where the refusal would come only at its end
        (["play", "--names", "A,A"], "--names gives two seats the name 'A'"),
        (["play", "--resume", "/nonexistent/game.json"], "no such file"),
        (["play", "--players", "3", "--first-player", "4"], "--first-player"),
    ],
)
def test_bad_options_get_one_clear_line(
    argv: list[str], error: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert error in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


@pytest.mark.slow
def test_replay_step_walks_through_a_record() -> None:
    session = session_for(["greedy", "random", "greedy"], seed=8)
    while not session.game.is_over:
        action = session.bot_choice()
        assert action is not None
        session.push(action)
    record = GameRecord.from_json(session.record().to_json())
    app = ReplayApp(record)
    total = len(record.moves)

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            assert f"Move 0 of {total}" in screen_text(app)
            for _ in range(9):
                await pilot.press("right")
            await pilot.pause()
            text = screen_text(app)
            assert f"Move 9 of {total}" in text
            expected = record.replay(upto=9)
            screen = app.screen
            assert isinstance(screen, ReplayScreen)
            assert screen.session.game.state_key()[:8] == expected.state_key()[:8]
            assert shown_scores(text, screen.session) == [expected.best_score(s).total for s in range(3)]
            await pilot.press("left", "left")
            await pilot.pause()
            assert f"Move 7 of {total}" in screen_text(app)
            await pilot.press("end")
            await pilot.pause()
            text = screen_text(app)
            assert f"Move {total} of {total}" in text and "GAME OVER" in text
            winners = ", ".join(session.name(s) for s in session.game.winners())
            assert winners in text
            await pilot.press("f")
            await pilot.pause()
            assert final_totals(screen_text(app)) == [s.total for s in session.game.scores()]
            await pilot.press("escape", "home")
            await pilot.pause()
            assert f"Move 0 of {total}" in screen_text(app)
            await pilot.press("left")
            await pilot.pause()
            assert "start of the game" in screen_text(app)

    run(scenario())


@pytest.mark.slow
def test_a_match_of_two_games_adds_up_and_resumes_with_the_next_game(tmp_path: Path) -> None:
    base = tmp_path / "match.json"
    session = session_for(["human", "greedy"], seed=31, match_games=2)
    app = ColorettoApp(session, PlayConfig(save_path=base, bot_delay=0))
    played: list[PlaySession] = []

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            for number in (1, 2):
                current = app.session
                assert current is not None and current.match is not None
                assert current.match.game_number == number
                played.append(current)
                await wait_until(pilot, lambda: isinstance(app.screen, GameScreen))
                assert f"Game {number} of 2" in screen_text(app)
                await play_out(pilot, current, random.Random(number))
                await wait_until(pilot, lambda: isinstance(app.screen, EndScreen))
                await pilot.pause()
                text = screen_text(app)
                match_total = next(line for line in text.splitlines() if "match total" in line)
                assert [int(n) for n in re.findall(r"\d+", match_total)] == list(current.match_totals() or ())
                if number == 1:
                    assert "[n] next game of the match" in text
                    await pilot.press("t")  # a look at the table, then back
                    await pilot.pause()
                    assert isinstance(app.screen, GameScreen) and "The game is over." in screen_text(app)
                    await pilot.press("enter")
                    await pilot.pause()
                    assert isinstance(app.screen, EndScreen)
                    await pilot.press("n")
                else:
                    winners = ", ".join(current.name(s) for s in current.match_winners())
                    assert "wins the match" in text or "match is shared" in text
                    assert winners in text
                    await pilot.press("q")

    run(scenario())
    first, second = played
    assert second.game.setup.seed != first.game.setup.seed
    expected = tuple(a.total + b.total for a, b in zip(first.game.scores(), second.game.scores()))
    assert second.match_totals() == expected
    game1, game2 = tmp_path / "match-game1.json", tmp_path / "match-game2.json"
    assert game1.exists() and game2.exists()
    assert isinstance(app.return_value, PlayResult) and app.return_value.finished
    assert "The match is won by" in app.return_value.summary

    # resuming the finished first game goes on with the match's second game, dealt the same way
    resumed, _ = prepare(build_parser().parse_args(["play", "--resume", str(game1)]))
    assert resumed is not None and resumed.match is not None and resumed.match.game_number == 2
    assert resumed.game.setup.deck == second.game.setup.deck
    assert resumed.match.progress().earlier_totals == tuple(s.total for s in first.game.scores())
    assert main(["play", "--resume", str(game2)]) == 2  # the match is over


def test_log_tells_the_golden_jokers_bonus_card_and_the_last_round() -> None:
    rules = Rules(players=3, edition="modern")
    game = game_with_top(rules, ["GJ", "B"], [["Y"], ["O"], ["G"]])
    session = PlaySession(game, make_seats([HUMAN] * 3))
    for move in ("d", "p1", "t1"):
        session.push(parse_action(move))
    assert (
        session.log[-1].text
        == "Player 2 took row 1: golden joker; the golden joker brings them blue from the deck"
    )
    assert game.collection(1)[5] == 1
    session.pop()
    assert session.log[-1].text == "Player 1 drew golden joker and put it in row 1"
    # the last-round card gets a line and the banner
    while not game.last_round:
        session.push(game.legal_actions[0])
    assert any(e.text == "The last-round card came up: this is the last round!" for e in session.log)
    from coloretto.tui.view import banner_text

    assert "LAST ROUND" in banner_text(session).plain


def test_replay_step_of_a_record_with_a_secret_deck() -> None:
    session = session_for(["random", "random"], seed=44)
    while not session.game.is_over:
        action = session.bot_choice()
        assert action is not None
        session.push(action)
    secret = GameRecord.from_game(session.game, seats=["A", "B"], include_deck=False)
    record = GameRecord.from_json(secret.to_json())
    assert record.deck is None and record.seed is None
    app = ReplayApp(record)

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("end")
            await pilot.pause()
            text = screen_text(app)
            assert "GAME OVER" in text
            screen = app.screen
            assert isinstance(screen, ReplayScreen)
            assert screen.session.game.scores() == session.game.scores()

    run(scenario())


def test_the_command_says_where_the_game_went(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import sys

    results = iter(
        [
            PlayResult(Path("g.json"), True, "Final scores: A 3, B 5. Winner(s): B."),
            PlayResult(Path("g.json"), False),
            PlayResult(None, False),
            PlayResult(None, False, started=False),
            PlayResult(Path("g.json"), False, left_unsaved=True),
        ]
    )
    monkeypatch.setattr(sys.stdin, "isatty", lambda: True)
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    monkeypatch.setattr(ColorettoApp, "run", lambda self: next(results))
    expected = [
        "Final scores: A 3, B 5. Winner(s): B.\n"
        "The game is saved to g.json: coloretto replay g.json --step\n",
        "The game is saved to g.json: coloretto play --resume g.json\n",
        "The game was not saved.\n",
        "",
        "The last moves were not saved; g.json holds the game as it was saved before them: "
        "coloretto play --resume g.json\n",
    ]
    for out in expected:
        assert main(["play", "--players", "2", "--bots", "random"]) == 0
        assert capsys.readouterr().out == out


def test_leaving_the_setup_screen_starts_nothing() -> None:
    app = ColorettoApp(None, PlayConfig())

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            assert isinstance(app.screen, SetupScreen)
            await pilot.press("escape")
            await pilot.pause()

    run(scenario())
    assert isinstance(app.return_value, PlayResult) and not app.return_value.started


@pytest.mark.slow
def test_hint_key_shows_the_analysis_of_every_legal_move() -> None:
    seats = make_seats(["human", "greedy", "greedy"])
    session = PlaySession.new(Rules(players=3), seats, seed=5, first_player=0)
    app = ColorettoApp(session, PlayConfig(bot_delay=0.01))

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("d")  # draw: now every open row is a choice
            await pilot.pause()
            legal = session.game.legal_actions
            assert len(legal) == 3
            await pilot.press("h")
            await wait_until(pilot, lambda: "expected final score" in screen_text(app))
            text = screen_text(app)
            for action in legal:
                assert f"{action}  put the" in text
            assert "★" in text
            await pilot.press("escape")
            await pilot.pause()
            assert isinstance(app.screen, GameScreen)
            assert session.game.legal_actions == legal  # a hint plays nothing

    run(scenario())


# ------------------------------------------------- found by a new user, each fixed


def test_quit_typed_on_the_command_line_asks_to_save() -> None:
    app = ColorettoApp(hot_seat(), PlayConfig(save_path=None, bot_delay=0))

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("colon", *"quit", "enter")
            await wait_until(pilot, lambda: isinstance(app.screen, QuitScreen))
            await pilot.press("n")
            await pilot.pause()

    run(scenario())
    assert isinstance(app.return_value, PlayResult) and not app.return_value.finished


@pytest.mark.parametrize("players", [2, 4])
def test_rows_beyond_the_game_are_refused_with_its_own_count(players: int) -> None:
    session = hot_seat(players)
    rows = len(session.game.row_capacities)
    app = ColorettoApp(session, PlayConfig(save_path=None, bot_delay=0))

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("colon", "t", str(rows + 1), "enter")
            await pilot.pause()
            assert f"row {rows + 1} does not exist: rows are numbered 1 to {rows}" in screen_text(app)
            await pilot.press(str(rows + 1))
            await pilot.pause()
            assert f"there is no row {rows + 1}: this game has {rows} rows" in screen_text(app)
            assert len(session.game) == 0

    run(scenario())


def finished_record(kinds: list[str], seed: int, **rules: Any) -> tuple[PlaySession, GameRecord]:
    """A game played out by its bots (people's seats by their first legal move)."""
    session = session_for(kinds, seed, **rules)
    game = session.game
    while not game.is_over:
        session.push(session.bot_choice() or game.legal_actions[0])
    return session, GameRecord.from_json(session.record().to_json())


@pytest.mark.slow
def test_replay_shows_who_is_to_move_but_no_prompt_and_no_thinking() -> None:
    _, record = finished_record(["human", "greedy", "human"], seed=13)
    app = ReplayApp(record)

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            for _ in range(12):
                await pilot.pause()
                text = screen_text(app)
                screen = app.screen
                assert isinstance(screen, ReplayScreen)
                seat = screen.session.seat_to_move()
                assert seat is not None
                assert f"To move: {seat.label}" in text
                assert "thinking" not in text
                assert "[d] draw" not in text and "place the drawn" not in text and "take row [" not in text
                await pilot.press("right")

    run(scenario())


def on_take_game_with_a_named_joker() -> PlaySession:
    """Player 2 takes a joker and names it red; the rest is played out."""
    rules = Rules(players=3, joker_timing="on-take")
    game = game_with_top(rules, ["J"], [["Y"], ["O"], ["G"]])
    session = PlaySession(game, make_seats([HUMAN] * 3))
    for move in ("d", "p1", "t1", "j:R"):
        session.push(game.parse_action(move))
    assert game.named_jokers(1) == ((7, 2),)
    while not game.is_over:
        session.push(game.legal_actions[0])
    return session


def joker_cells(text: str) -> str:
    return next(line for line in text.splitlines() if "jokers named" in line and "edition" not in line)


def test_jokers_named_on_take_show_on_the_end_and_replay_screens() -> None:
    session = on_take_game_with_a_named_joker()
    app = ColorettoApp(session, PlayConfig(save_path=None, bot_delay=0))

    async def end_screen() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("enter")
            await wait_until(pilot, lambda: isinstance(app.screen, EndScreen))
            await pilot.pause()
            assert "R■" in joker_cells(screen_text(app))

    run(end_screen())
    record = GameRecord.from_json(session.record().to_json())
    replay = ReplayApp(record)

    async def replay_screen() -> None:
        async with replay.run_test(size=SIZE) as pilot:
            await pilot.press("end", "f")
            await pilot.pause()
            assert "R■" in joker_cells(screen_text(replay))

    run(replay_screen())


def test_people_see_seats_counted_from_one() -> None:
    args = build_parser().parse_args(["play", "--players", "3", "--bots", "random", "--first-player", "2"])
    session, _ = prepare(args)
    assert session is not None and session.game.first_player == 1
    assert [s.name for s in session.seats] == ["Player 1", "Player 2", "Bot 3"]
    assert session.log[0].text.endswith("Player 2 starts.")
    app = ColorettoApp(None, PlayConfig(bot_delay=0))

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            text = screen_text(app)
            assert "Seat 1" in text and "Seat 0" not in text

    run(scenario())


def test_the_terminal_guide_lists_every_key_of_the_table() -> None:
    guide = (Path(__file__).parent.parent / "docs" / "user" / "terminal.md").read_text(encoding="utf-8")
    listed = set(re.findall(r"^\| `([^`]+)`", guide, flags=re.MULTILINE))
    bound = {
        key
        for binding in GameScreen.BINDINGS
        if isinstance(binding, Binding)
        for key in binding.key.split(",")
    }
    for key in ("d", "x", "colon", "s", "h", "question_mark", "q"):
        assert key in bound
    for shown in ("d", "x", ":", "s", "h", "?"):
        assert shown in listed, f"the terminal guide's key table omits {shown!r}"


# --------------------------------------------------------- the core's rules shown


def setting_index(name: str, players: int) -> int:
    """Where a rule option's setting sits on the set-up screen: players, the seats, the rest."""
    others = [option.name for option in RULE_OPTIONS if option.name != "players"]
    return 1 + players + others.index(name)


@pytest.mark.slow
def test_setup_screen_shows_every_rule_option_and_each_changes_the_rules() -> None:
    app = ColorettoApp(None, PlayConfig(bot_delay=0, seed=4))
    defaults = Rules(players=4)

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            text = screen_text(app)
            for option in RULE_OPTIONS:
                assert option.label in text, f"the set-up screen has no {option.name}"
            assert "15 (the edition's)" in text  # cards under the last-round card
            # one step right on every option but the players
            at = 0
            for option in RULE_OPTIONS:
                if option.name == "players":
                    continue
                target = setting_index(option.name, 4)
                await pilot.press(*(["down"] * (target - at)), "right")
                at = target
                await pilot.pause()
                assert option.help in screen_text(app)  # the line about the selected setting
            await pilot.press("enter")
            await wait_until(pilot, lambda: isinstance(app.screen, GameScreen))

    run(scenario())
    session = app.session
    assert session is not None
    rules = session.game.rules
    for option in RULE_OPTIONS:
        if option.name != "players":
            assert getattr(rules, option.name) != getattr(defaults, option.name), option.name
    assert rules.cards_under_last_round == Rules(edition=rules.edition).under_last_round + 1
    assert rules.match_games == 2
    assert rules.chooses_starting_colours
    assert session.match is not None  # a match of two games, held by the core


@pytest.mark.slow
def test_setup_screen_ranges_come_from_the_option_table() -> None:
    app = ColorettoApp(None, PlayConfig(bot_delay=0))

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            screen = app.screen
            assert isinstance(screen, SetupScreen)
            await pilot.press("right")  # players wrap 4 -> 5 -> 2
            await pilot.press("right")
            await pilot.pause()
            assert screen.players == 2 and "Seat 3" not in screen_text(app)
            await pilot.press(*(["down"] * setting_index("match_games", 2)), "left")
            await pilot.pause()
            assert re.search(rf"Games in the match\s+◀ {MAX_MATCH_GAMES} ▶", screen_text(app))
            await pilot.press("up", "left")  # cards under the last-round card: one below the edition's
            await pilot.pause()
            assert re.search(r"Cards under the last-round card\s+◀ 14 ▶", screen_text(app))
            await pilot.press("enter")
            await wait_until(pilot, lambda: isinstance(app.screen, GameScreen))
            await pilot.press("ctrl+c", "n")

    run(scenario())
    assert app.session is not None
    rules = app.session.game.rules
    assert rules.players == 2 and rules.match_games == MAX_MATCH_GAMES and rules.cards_under_last_round == 14


def test_seat_picker_lists_bots_weakest_first() -> None:
    app = ColorettoApp(None, PlayConfig(bot_delay=0))
    offered = [name for name in available_bots() if name in seat_choices()]

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            screen = app.screen
            assert isinstance(screen, SetupScreen)
            await pilot.press("down", "down")  # seat 2
            shown = []
            for _ in range(len(offered) + 1):
                await pilot.press("right")
                shown.append(screen.seats[1])
            cycle = [HUMAN, *offered]
            start = cycle.index("greedy")
            assert shown == [cycle[(start + 1 + i) % len(cycle)] for i in range(len(shown))]

    run(scenario())
    levels = [name for name in offered if name in LEVELS]
    assert levels == ["easy", "medium", "hard", "expert"]
    assert (
        offered.index("random") < offered.index("greedy") < offered.index("heuristic") < offered.index("mcts")
    )


def test_starting_colours_are_chosen_by_number_letter_and_command() -> None:
    session = hot_seat(3, starting_colours="chosen")
    game = session.game
    app = ColorettoApp(session, PlayConfig(save_path=None, bot_delay=0))

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            text = screen_text(app)
            assert "Player 1: choose a starting colour" in text and "[3] R■ red" in text
            await pilot.press("3")  # red, by its number
            await pilot.pause()
            assert "Player 1 chose red as a starting colour" in screen_text(app)
            await pilot.press("r")  # red again, by its letter: taken
            await pilot.pause()
            assert "Not allowed" in screen_text(app) and game.to_move == 1
            await pilot.press("b")  # blue
            await pilot.pause()
            await pilot.press("colon", *"s:Y", "enter")
            await pilot.pause()
            text = screen_text(app)
            assert "Player 2 chose blue as a starting colour" in text
            assert "Player 3 chose yellow as a starting colour" in text
            assert "[d] draw a card" in text
            await pilot.press("question_mark")
            await pilot.pause()
            assert "Starting colours are chosen" in screen_text(app)

    run(scenario())
    assert game.start_picks_left == 0
    assert [game.collection(s)[c] for s, c in ((0, 2), (1, 5), (2, 0))] == [1, 1, 1]


def test_a_colour_letter_chooses_before_a_key_bound_to_it() -> None:
    # the playing-cards deck's diamonds are D: while a colour is chosen, d is diamonds, not draw
    session = hot_seat(3, starting_colours="chosen", edition="playing-cards")
    app = ColorettoApp(session, PlayConfig(save_path=None, bot_delay=0))

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("d")
            await pilot.pause()

    run(scenario())
    assert session.game.history()[0][0] == parse_action("s:D", session.edition)


def test_bots_choose_their_starting_colours_themselves() -> None:
    session = session_for(["random", "random", "human"], seed=6, starting_colours="chosen")
    app = ColorettoApp(session, PlayConfig(save_path=None, bot_delay=0))

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: session.game.to_move == 2)
            await pilot.pause()
            text = screen_text(app)
            assert "Bot 1 chose" in text and "Bot 2 chose" in text
            assert "Player 3: choose a starting colour" in text
            await pilot.press("ctrl+c", "n")

    run(scenario())


def test_the_log_tells_the_cores_move_events() -> None:
    session, _ = finished_record(["random", "random", "random"], seed=19, joker_timing="on-take")
    names = [s.name for s in session.seats]
    log = "\n".join(e.text for e in session.log)
    for event in session.game.events():
        said = replace(event, revealed=()).describe(names, session.edition)
        if event.action.kind is ActionKind.PLACE:
            said = f" and put it in row {(event.row or 0) + 1}"  # merged with the draw before it
        assert said in log
    assert log.count("The last-round card came up") == 1


@pytest.mark.slow
def test_match_deals_as_the_core_and_its_winner_keeps_the_tie_break() -> None:
    rules = Rules(players=3, match_games=2)
    session = PlaySession.new(rules, make_seats(["random"] * 3), seed=8)
    core = Match(rules, seed=8)
    assert session.game.setup.deck == core.game.setup.deck
    while not session.game.is_over:
        session.push(session.bot_choice() or session.game.legal_actions[0])
    while not core.game.is_over:
        core.push(core.game.legal_actions[0])
    assert session.next_game().game.setup.deck == core.next_game().setup.deck

    # seed 56: two random bots end the match level on points, Bot 1 with fewer minus points
    tied = PlaySession.new(
        Rules(players=2, match_games=2, tie_break="fewer-minus"), make_seats(["random"] * 2), 56
    )
    app = ColorettoApp(tied, PlayConfig(save_path=None, bot_delay=0))

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: isinstance(app.screen, EndScreen))
            await pilot.press("n")  # the second game plays itself out
            await wait_until(
                pilot,
                lambda: (
                    app.session is not None and app.session.match_over() and isinstance(app.screen, EndScreen)
                ),
            )
            await pilot.pause()
            assert app.session is not None
            match = app.session.match
            assert match is not None and len(set(match.totals())) == 1
            assert "★ Bot 1 wins the match" in screen_text(app)
            await pilot.press("q")

    run(scenario())
    assert isinstance(app.return_value, PlayResult)
    assert "The match is won by Bot 1." in app.return_value.summary


def test_resume_reads_old_match_tags_and_checks_moves_with_the_core(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    session, record = finished_record(["human", "random"], seed=23, match_games=3)
    old = json.loads(record.to_json())
    del old["tags"]["match_minus"]  # saved before the match kept minus points
    path = tmp_path / "old-game1.json"
    path.write_text(json.dumps(old), encoding="utf-8")
    resumed, _ = prepare(build_parser().parse_args(["play", "--resume", str(path)]))
    assert resumed is not None and resumed.match is not None
    progress = resumed.match.progress()
    assert progress.game_number == 2
    assert progress.earlier_totals == tuple(s.total for s in session.game.scores())

    unfinished = json.loads(record.to_json())
    unfinished.pop("result", None)
    moves = unfinished["moves"]
    first_draw = next(i for i, move in enumerate(moves) if move.startswith("d "))
    drawn = moves[first_draw].split()[-1]
    moves[first_draw] = "d " + ("P" if drawn != "P" else "R")
    del moves[first_draw + 5 :]
    bad = tmp_path / "tampered.json"
    bad.write_text(json.dumps(unfinished), encoding="utf-8")
    assert main(["play", "--resume", str(bad)]) == 2
    err = capsys.readouterr().err
    assert f"move {first_draw + 1}" in err and "turned over" in err and "Traceback" not in err


def test_replay_step_with_a_review_shows_marks_luck_and_win_chances(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from coloretto.review import review

    session = session_for(["random", "greedy"], seed=5)
    while not session.game.is_over:
        action = session.bot_choice()
        assert action is not None
        session.push(action)
    record = GameRecord.from_json(session.record().to_json())
    result = review(record, budget=60, seed=2)
    marked = [m for m in result.moves if m.decision is not None and m.decision.mark]
    assert marked, "a random player makes marked moves"
    first = marked[0]
    app = ReplayApp(record, result)

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            text = screen_text(app)
            start = result.positions[0].win
            assert f"{session.name(0)} {100 * start[0]:.0f}%" in text
            await pilot.press("m")
            await pilot.pause()
            text = screen_text(app)
            assert f"Move {first.number} of {len(record.moves)}" in text
            assert first.decision is not None and first.decision.mark in text
            assert f"best {first.decision.best}" in text
            draws = [m for m in result.moves if m.luck is not None and m.number > first.number]
            target = draws[0]
            screen = app.screen
            assert isinstance(screen, ReplayScreen)
            while screen.position < target.number:
                await pilot.press("right")
            await pilot.pause()
            assert target.luck is not None and f"luck of {target.luck.card}" in screen_text(app)

    asyncio.run(scenario())
    path = tmp_path / "g.json"
    path.write_text(record.to_json(), encoding="utf-8")
    other = tmp_path / "other.json"
    other.write_text(review(_other_record(), budget=10).to_json(), encoding="utf-8")
    capsys.readouterr()
    assert main(["replay", str(path), "--review", str(other), "--step"]) == 2
    assert "the review of another game" in capsys.readouterr().err
    assert main(["replay", str(path), "--review"]) == 2
    assert "--review goes with --step" in capsys.readouterr().err


def _other_record() -> GameRecord:
    session = session_for(["greedy", "greedy"], seed=6)
    while not session.game.is_over:
        action = session.bot_choice()
        assert action is not None
        session.push(action)
    return GameRecord.from_json(session.record().to_json())


def saved_game(path: Path, seed: int, moves: int = 4, **rules: Any) -> PlaySession:
    """A game of a person and a bot with ``moves`` bot-chosen moves, saved to ``path``."""
    session = session_for(["human", "greedy"], seed=seed, **rules)
    bot = make_seats(["greedy"])[0]
    for _ in range(moves):
        observed = session.game.observation(session.game.to_move or 0)
        session.push(make_bot(bot.kind, seed=1).choose(observed))
    session.save(path)
    return session


def play_args(*argv: str) -> Any:
    return build_parser().parse_args(["play", *argv])


def test_save_refuses_before_the_game_a_file_that_is_not_its_own(tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes\n")
    other = tmp_path / "other.json"
    saved_game(other, seed=3)
    before = other.read_text()
    for target in (notes, other):
        with pytest.raises(CommandError) as refused:
            prepare(play_args("--players", "2", "--bots", "greedy", "--save", str(target)))
        assert str(refused.value).startswith(f"{target} already exists and is not this game's record")
    with pytest.raises(CommandError, match="not this game's record"):
        prepare(play_args("--resume", str(other), "--save", str(notes)))
    assert notes.read_text() == "my notes\n" and other.read_text() == before


def test_resume_saves_to_the_resumed_file_itself(tmp_path: Path) -> None:
    saved = tmp_path / "game.json"
    session = saved_game(saved, seed=4)
    for argv in (["--resume", str(saved)], ["--resume", str(saved), "--save", str(saved)]):
        resumed, config = prepare(play_args(*argv))
        assert resumed is not None and config.save_path == saved
        assert resumed.game.state_key() == session.game.state_key()
    copy = tmp_path / "copy.json"  # a copy of the record is a record of this very game
    copy.write_text(saved.read_text())
    resumed, config = prepare(play_args("--resume", str(saved), "--save", str(copy)))
    assert resumed is not None and config.save_path == copy
    other = tmp_path / "other.json"
    saved_game(other, seed=5)
    with pytest.raises(CommandError, match="not this game's record"):
        prepare(play_args("--resume", str(saved), "--save", str(other)))


def test_a_match_refuses_a_later_games_file_that_exists(tmp_path: Path) -> None:
    base = tmp_path / "match.json"
    later = tmp_path / "match-game2.json"
    later.write_text("someone else's\n")
    argv = ("--players", "2", "--bots", "greedy", "--match-games", "2", "--save", str(base))
    with pytest.raises(CommandError, match=re.escape("match-game2.json already exists")):
        prepare(play_args(*argv))
    later.unlink()
    session, config = prepare(play_args(*argv))
    assert session is not None and config.save_path == base


def test_save_to_a_missing_directory_is_refused_before_the_game(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere" / "x.json"
    for argv in (
        ["--players", "2", "--bots", "greedy", "--save", str(missing)],
        ["--save", str(missing)],  # the set-up screen: checked before it too
        ["--players", "2", "--bots", "greedy", "--save", str(tmp_path)],
    ):
        with pytest.raises(CommandError, match=r"cannot save the game to .*(does not exist|is a directory)"):
            prepare(play_args(*argv))


def test_the_set_up_screen_refuses_to_start_over_a_file_that_is_not_its_own(tmp_path: Path) -> None:
    taken = tmp_path / "taken.json"
    taken.write_text("my notes\n")
    app = ColorettoApp(None, PlayConfig(save_path=taken, bot_delay=0))

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            app.start_game(Rules(players=2), make_seats(["human", "greedy"]))
            await pilot.pause()
            assert app.session is None and isinstance(app.screen, SetupScreen)
            await pilot.press("ctrl+c")

    run(scenario())
    assert taken.read_text() == "my notes\n"


def test_a_record_is_written_whole_or_not_at_all(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    saved = tmp_path / "game.json"
    session = saved_game(saved, seed=6)
    before = saved.read_text()
    session.push(session.game.legal_actions[0])

    def broken_rename(source: Any, target: Any) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", broken_rename)
    with pytest.raises(OSError):
        session.save(saved)
    monkeypatch.undo()
    assert saved.read_text() == before  # the last whole record is still there
    assert [p.name for p in tmp_path.iterdir()] == ["game.json"]  # no temporary file left
    session.save(saved)
    assert GameRecord.from_json(saved.read_text()).moves == session.record().moves


@pytest.mark.parametrize(
    ("argv", "error"),
    [
        (["--bot-delay", "inf"], "argument --bot-delay: must be a finite number, not 'inf'"),
        (["--bot-delay", "nan"], "argument --bot-delay: must be a finite number, not 'nan'"),
        (["--bot-delay", "1e308"], "argument --bot-delay: must be at most 60 seconds, not '1e308'"),
        (["--save", ""], "argument --save: the path is empty"),
        (["--resume", ""], "argument --resume: the path is empty"),
    ],
)
def test_endless_delays_and_empty_paths_are_refused(
    argv: list[str], error: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert argument_error(["play", "--players", "2", *argv], capsys) == f"coloretto play: error: {error}"


def test_names_must_name_every_seat(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["play", "--names", "a,b", "--players", "3"]) == 2
    err = capsys.readouterr().err
    assert err == "coloretto play: error: --names gives 2 names for 3 seats: name every seat\n"
    saved = tmp_path / "game.json"
    saved_game(saved, seed=8)
    assert main(["play", "--resume", str(saved), "--names", "Ann"]) == 2
    assert "--names gives 1 names for 2 seats" in capsys.readouterr().err


@pytest.mark.parametrize("moves_after_saving", [0, 1])
def test_quitting_without_saving_after_a_save_says_what_the_file_holds(
    tmp_path: Path, moves_after_saving: int
) -> None:
    save = tmp_path / "game.json"
    app = ColorettoApp(hot_seat(), PlayConfig(save_path=save, bot_delay=0))

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("s")
            await pilot.pause()
            for _ in range(moves_after_saving):
                await pilot.press("d")
            await pilot.press("q")
            await pilot.pause()
            assert isinstance(app.screen, QuitScreen)
            await pilot.press("n")
            await pilot.pause()

    run(scenario())
    result = app.return_value
    assert isinstance(result, PlayResult) and result.saved_to == save
    # the file keeps the game as it was saved: no move of it was played
    assert GameRecord.from_json(save.read_text(encoding="utf-8")).moves == ()
    assert result.left_unsaved is (moves_after_saving > 0)


def test_bots_with_options_keep_their_commas_from_the_command_line_to_the_record(tmp_path: Path) -> None:
    args = build_parser().parse_args(
        ["play", "--bots", "mcts:200,take=12,greedy", "--players", "3", "--save", str(tmp_path / "g.json")]
    )
    session, _ = prepare(args)
    assert session is not None
    kinds = [HUMAN, "mcts:200,take=12", "greedy"]
    assert [seat.kind for seat in session.seats] == kinds
    assert [seat.kind for seat in seats_from_record(session.record())] == kinds
    args = build_parser().parse_args(["play", "--seats", "greedy, mcts:5000,1s,c=0.5 ,human"])
    session, _ = prepare(args)
    assert session is not None
    assert [seat.kind for seat in session.seats] == ["greedy", "mcts:5000,1s,c=0.5", HUMAN]


def test_resume_with_the_wrong_number_of_seats_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    saved = tmp_path / "game.json"
    saved_game(saved, seed=8)
    assert main(["play", "--resume", str(saved), "--seats", "human,greedy,greedy"]) == 2
    assert capsys.readouterr().err.endswith("--seats names 3 seats for a 2-player game\n")


def test_replay_step_tells_apart_seats_an_arena_named_alike() -> None:
    session = session_for(["greedy", "random", "greedy"], seed=8)
    for _ in range(6):
        action = session.bot_choice()
        assert action is not None
        session.push(action)
    record = replace(session.record(), seats=("greedy", "random", "greedy"), tags={})
    app = ReplayApp(record)

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            text = screen_text(app)
            assert "greedy (seat 1)" in text and "greedy (seat 3)" in text and "random" in text

    run(scenario())


@pytest.mark.slow
def test_the_turn_stays_on_an_80_by_24_screen_with_five_players_in_a_match() -> None:
    names = ["Player 1", "Heuristic Harriet", "Heuristic Henry", "Random Rita", "Heuristic Hugo"]
    seats = make_seats(["human", "greedy", "greedy", "random", "greedy"], names)
    first = PlaySession.new(Rules(players=5, edition="modern", match_games=2), seats, seed=14, first_player=0)
    rng = random.Random(3)
    while not first.game.is_over:
        first.push(first.bot_choice() or rng.choice(first.game.legal_actions))
    session = first.next_game()  # game 2 shows the earlier games' points in its header
    app = ColorettoApp(session, PlayConfig(save_path=None, bot_delay=0))

    async def scenario() -> None:
        async with app.run_test(size=(80, 24)) as pilot:
            # play_out finds the line that asks the person to move at every turn
            assert await play_out(pilot, session, random.Random(4)) > 5

    run(scenario())
