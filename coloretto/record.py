"""Game records: a JSON document that deals, replays and checks a whole game.

A record holds the rules, how the game was dealt (a seed, an explicit deck
order, or neither when the deck was kept secret), the starting cards, the
seats, and every move in the text notation of ``docs/research/notation.md`` followed
by the cards that move turned over::

    {"format": "coloretto-record", "version": 1,
     "rules": {"players": 2, ...}, "seed": 7, "deck": ["R", "J", ...],
     "starting_cards": [["Y", "O"], ["R", "P"]], "first_player": 0,
     "seats": ["Ann", "greedy"], "moves": ["d R", "p2", "t2", "d LR B", ...],
     "result": {"totals": [31, 27], "winners": [0]}}

This module only converts between records, strings and games; reading and
writing files is the caller's business.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from coloretto.actions import Action, ActionKind, parse_action
from coloretto.cards import (
    LAST_ROUND,
    card_token,
    parse_card,
)
from coloretto.game import Game, GameSetup, IllegalActionError, SetupError, stand_in_deck
from coloretto.rules import Rules, RulesError

FORMAT = "coloretto-record"
VERSION = 1


class RecordError(ValueError):
    """A record that cannot be read or replayed; says where and why."""

    def __init__(self, message: str, move_number: int | None = None) -> None:
        self.move_number = move_number
        prefix = f"move {move_number}: " if move_number is not None else ""
        super().__init__(prefix + message)


@dataclass(frozen=True)
class RecordedMove:
    action: Action
    revealed: tuple[int, ...] = ()

    def notation(self, edition: Any) -> str:
        return " ".join([self.action.notation(edition), *(card_token(c, edition) for c in self.revealed)])


@dataclass(frozen=True)
class GameRecord:
    rules: Rules
    starting_cards: tuple[tuple[int, ...], ...]
    first_player: int
    moves: tuple[RecordedMove, ...]
    seed: int | None = None
    deck: tuple[int, ...] | None = None  #: None when the deck order was kept secret
    seats: tuple[str, ...] = ()
    tags: dict[str, str] = field(default_factory=dict)
    result: dict[str, Any] | None = None

    @property
    def seat_labels(self) -> tuple[str, ...]:
        """A label per seat that tells the seats apart: the seat's name, or
        "seat N" when the record names none, with "(seat N)" added to a name
        that several seats share (an arena record names seats by their bot)."""
        names = self.seats or tuple(f"seat {i + 1}" for i in range(self.rules.players))
        return tuple(
            name if names.count(name) == 1 else f"{name} (seat {i + 1})" for i, name in enumerate(names)
        )

    # ---------------------------------------------------------------- create

    @classmethod
    def from_game(
        cls,
        game: Game,
        seats: Sequence[str] = (),
        tags: dict[str, str] | None = None,
        include_deck: bool = True,
    ) -> GameRecord:
        """The record of ``game`` so far. ``include_deck=False`` leaves out the
        seed and deck order (for a game whose deck must stay secret)."""
        setup = game.setup
        result = None
        if game.is_over:
            result = {
                "totals": [s.total for s in game.scores()],
                "winners": list(game.winners()),
            }
        return cls(
            rules=game.rules,
            starting_cards=setup.starting_cards,
            first_player=setup.first_player,
            moves=tuple(RecordedMove(e.action, e.revealed) for e in game.events()),
            seed=setup.seed if include_deck else None,
            deck=setup.deck if include_deck else None,
            seats=tuple(seats),
            tags=dict(tags or {}),
            result=result,
        )

    # ------------------------------------------------------------ serialise

    def to_dict(self) -> dict[str, Any]:
        edition = self.rules.edition
        data: dict[str, Any] = {
            "format": FORMAT,
            "version": VERSION,
            "rules": self.rules.to_dict(),
            "seed": self.seed,
            "deck": None if self.deck is None else [card_token(c, edition) for c in self.deck],
            "starting_cards": [[card_token(c, edition) for c in hand] for hand in self.starting_cards],
            "first_player": self.first_player,
            "seats": list(self.seats),
            "tags": dict(self.tags),
            "moves": [m.notation(edition) for m in self.moves],
        }
        if self.result is not None:
            data["result"] = self.result
        return data

    def to_json(self) -> str:
        """Readable JSON: one key a line, the moves a dozen to a line."""
        data = self.to_dict()
        lines = []
        for key, value in data.items():
            if key == "moves" and value:
                chunks = [value[i : i + 12] for i in range(0, len(value), 12)]
                body = ",\n  ".join(", ".join(json.dumps(m) for m in chunk) for chunk in chunks)
                text = "[\n  " + body + "\n ]"
            else:
                text = json.dumps(value, ensure_ascii=False)
            lines.append(f" {json.dumps(key)}: {text}")
        return "{\n" + ",\n".join(lines) + "\n}\n"

    @classmethod
    def from_json(cls, text: str) -> GameRecord:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise RecordError(f"not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})") from None
        except RecursionError:
            raise RecordError(
                f"the JSON is nested too deeply (a record is at most {MAX_NESTING} levels deep)"
            ) from None
        return cls.from_dict(data)

    @classmethod
    def from_dict(cls, data: Any) -> GameRecord:
        if not isinstance(data, dict):
            raise RecordError("a record must be a JSON object")
        _check_nesting(data)
        if data.get("format") != FORMAT:
            raise RecordError(
                f"not a Coloretto record (format is {data.get('format')!r}, expected {FORMAT!r})"
            )
        if data.get("version") != VERSION:
            raise RecordError(
                f"unsupported record version {data.get('version')!r} (this program reads {VERSION})"
            )
        for key in ("rules", "starting_cards", "first_player", "moves"):
            if key not in data:
                raise RecordError(f"the record has no {key!r}")
        try:
            rules = Rules.from_dict(data["rules"])
        except (RulesError, TypeError) as exc:
            raise RecordError(f"bad rules: {exc}") from None
        edition = rules.edition

        def cards(value: Any, what: str) -> tuple[int, ...]:
            if not isinstance(value, list):
                raise RecordError(f"{what} must be a list of cards")
            try:
                return tuple(parse_card(str(c), edition) for c in value)
            except ValueError as exc:
                raise RecordError(f"{what}: {exc}") from None

        hands = data["starting_cards"]
        if not isinstance(hands, list):
            raise RecordError("starting_cards must be a list of lists of cards")
        starting = tuple(cards(h, f"starting cards of seat {i + 1}") for i, h in enumerate(hands))
        deck = None if data.get("deck") is None else cards(data["deck"], "deck")
        seed = data.get("seed")
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
            raise RecordError(f"seed must be a whole number, not {seed!r}")
        first = data["first_player"]
        if isinstance(first, bool) or not isinstance(first, int):
            raise RecordError(f"first_player must be a seat number, not {first!r}")
        raw_moves = data["moves"]
        if not isinstance(raw_moves, list):
            raise RecordError("moves must be a list of strings")
        moves = tuple(_parse_move(m, number, edition) for number, m in enumerate(raw_moves, start=1))
        seats = data.get("seats") or []
        if not isinstance(seats, list) or not all(isinstance(s, str) for s in seats):
            raise RecordError("seats must be a list of names")
        if seats and len(seats) != rules.players:
            # An empty list means the seats are unnamed; a partial one cannot say who is who.
            raise RecordError(
                f"seats has {len(seats)} name(s), but the rules are for {rules.players} players: "
                "name every seat, or leave seats empty"
            )
        tags = data.get("tags") or {}
        if not isinstance(tags, dict):
            raise RecordError("tags must be an object")
        result = data.get("result")
        if result is not None:
            _check_result_shape(result, rules.players)
        return cls(
            rules=rules,
            starting_cards=starting,
            first_player=first,
            moves=moves,
            seed=seed,
            deck=deck,
            seats=tuple(seats),
            tags={str(k): str(v) for k, v in tags.items()},
            result=result,
        )

    # ---------------------------------------------------------------- replay

    def initial_game(self) -> Game:
        """The game as dealt, before any move."""
        rules = self.rules
        deck = self.deck
        dealt = None
        if self.seed is not None:
            from coloretto.game import deal

            dealt = deal(rules, self.seed, self.first_player)
            if dealt.starting_cards != self.starting_cards:
                raise RecordError("the starting cards do not match the ones the seed deals")
            if deck is None:
                deck = dealt.deck
        if deck is None:
            # The order was kept secret: each move's revealed cards will say what came up.
            try:
                deck = stand_in_deck(rules, self.starting_cards)
            except SetupError as exc:
                raise RecordError(f"bad setup: {exc}") from None
        try:
            game = Game(GameSetup(rules, tuple(deck), self.starting_cards, self.first_player, self.seed))
        except SetupError as exc:
            raise RecordError(f"bad setup: {exc}") from None
        if dealt is not None and tuple(deck) != dealt.deck:
            # one of the two was changed: replaying either would not be the game recorded
            raise RecordError(f"the deck is not the one seed {self.seed} deals: the record was changed")
        return game

    def replay(self, upto: int | None = None) -> Game:
        """Play the moves (the first ``upto`` of them), checking every one.

        Raises RecordError naming the move number and the reason when a
        move is illegal or a revealed card differs from the deck.
        """
        game = self.initial_game()
        secret = self.deck is None and self.seed is None
        moves = self.moves if upto is None else self.moves[:upto]
        for number, move in enumerate(moves, start=1):
            play_recorded_move(game, move, number, force_reveals=secret)
        if upto is None and self.result is not None:
            self._check_result(game)
        return game

    def _check_result(self, game: Game) -> None:
        """The recorded result must be the replayed game's: totals and winners."""
        assert self.result is not None
        if not game.is_over:
            raise RecordError(
                f"the record has a result, but its game is not over after its {len(self.moves)} moves"
            )
        totals = [s.total for s in game.scores()]
        if "totals" in self.result and list(self.result["totals"]) != totals:
            raise RecordError(
                f"the recorded totals {self.result['totals']} differ from the replay's {totals}"
            )
        winners = list(game.winners())
        if "winners" in self.result and sorted(self.result["winners"]) != winners:
            raise RecordError(
                f"the recorded winners {self.result['winners']} differ from the replay's {winners} "
                "(0-based seats)"
            )


def play_recorded_move(game: Game, move: RecordedMove, number: int, force_reveals: bool) -> None:
    """Push one recorded move, checking the cards it turned over."""
    edition = game.rules.edition
    reveal = None
    if force_reveals and move.revealed:
        reveal = move.revealed[-1]
    if game.is_over:
        raise RecordError("the game is already over", number)
    try:
        game.push(move.action, reveal=reveal)
    except IllegalActionError as exc:
        raise RecordError(f"illegal: {exc}", number) from None
    actual = game.last_revealed()
    if actual != move.revealed:
        game.pop()
        shown = " ".join(card_token(c, edition) for c in move.revealed) or "nothing"
        real = " ".join(card_token(c, edition) for c in actual) or "nothing"
        raise RecordError(f"the record says {shown} was turned over, but the deal gives {real}", number)


#: Deeper than any record (its deepest part is a list of lists of cards); checked
#: before reading, so that nesting cannot exhaust the interpreter's recursion.
MAX_NESTING = 16


def _check_nesting(data: Any) -> None:
    """Refuse JSON nested deeper than ``MAX_NESTING`` (walked without recursion)."""
    pending: list[tuple[Any, int, str]] = [(data, 1, "the record")]
    while pending:
        value, depth, where = pending.pop()
        if isinstance(value, dict):
            children = [(v, str(k) if depth == 1 else where) for k, v in value.items()]
        elif isinstance(value, list):
            children = [(v, where) for v in value]
        else:
            continue
        if depth > MAX_NESTING:
            raise RecordError(f"{where} is nested too deeply (a record is at most {MAX_NESTING} levels deep)")
        pending.extend((child, depth + 1, child_where) for child, child_where in children)


def _check_result_shape(result: Any, players: int) -> None:
    """``result`` as documented: totals per seat and winners as 0-based seats."""
    if not isinstance(result, dict):
        raise RecordError("result must be an object")
    if "totals" in result:
        totals = result["totals"]
        if not isinstance(totals, list) or not all(_is_whole(t) for t in totals):
            raise RecordError(f"result.totals must be a list of whole numbers, not {_short(totals)}")
        if len(totals) != players:
            raise RecordError(
                f"result.totals has {len(totals)} total(s), but the rules are for {players} players"
            )
    if "winners" in result:
        winners = result["winners"]
        if not isinstance(winners, list) or not all(_is_whole(w) for w in winners):
            raise RecordError(f"result.winners must be a list of seat numbers, not {_short(winners)}")
        if not all(0 <= w < players for w in winners):
            raise RecordError(
                f"result.winners {winners} names a seat that does not exist "
                f"(seats are 0 to {players - 1}, 0-based)"
            )


def _is_whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 40 else text[:39] + "…"


def _parse_move(text: Any, number: int, edition: Any) -> RecordedMove:
    if not isinstance(text, str) or not text.strip():
        raise RecordError(f"expected a move as text, got {text!r}", number)
    head, *cards = text.split()
    try:
        action = parse_action(head, edition)
        revealed = tuple(parse_card(c, edition) for c in cards)
    except ValueError as exc:
        raise RecordError(str(exc), number) from None
    if revealed and action.kind not in (ActionKind.DRAW, ActionKind.TAKE):
        raise RecordError(f"{head} turns over no card, but the record lists {' '.join(cards)}", number)
    if action.kind is ActionKind.DRAW and not revealed:
        raise RecordError("a draw must say which card it turned over (for example 'd R')", number)
    if len(revealed) > 2 or (len(revealed) == 2 and revealed[0] != LAST_ROUND):
        raise RecordError(
            f"a move turns over one card, or the last-round card and one more: {text!r}", number
        )
    if revealed and revealed[-1] == LAST_ROUND:
        raise RecordError("the last-round card is always followed by the card drawn after it", number)
    return RecordedMove(action, revealed)
