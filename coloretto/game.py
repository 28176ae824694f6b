"""The position: push actions onto it, pop them off, ask who acts and what is legal.

Every rule of play lives in this module (scoring lives in
:mod:`coloretto.scoring`, the options in :mod:`coloretto.rules`)::

    >>> from coloretto import Game, Rules, DRAW, place
    >>> game = Game.new(Rules(players=3), seed=7)
    >>> game.push(DRAW)          # turns over the real next card
    >>> game.push(place(0))      # and puts it in row 1
    >>> game.pop()               # undo is cheap: search does it millions of times
    Action('p1')

The state is a handful of small integers and lists of card integers; each
push appends one tuple to an undo stack, each pop restores from it. Draws are
chance events that a search may control: :meth:`Game.chance_outcomes` lists
the possible next cards with their probabilities, ``push(DRAW, reveal=card)``
makes one of them the card turned over, and :meth:`Game.resample_hidden`
re-shuffles the unseen cards consistently with everything public.

Rulings where the sources are silent (docs/rules.md asks for them to be written down):

* If the deck has no card left to draw (only with a house-rule position of
  the last-round card), drawing is illegal; that round is the last. A player
  who can neither draw nor take a row (every open row is empty) *passes*:
  they leave the round with nothing.
* The golden joker's bonus card is not turned over when the deck is empty.
* Jokers named on take (variant) may be named any colour in play.
* Starting colours chosen (variant): before round 1, each seat in turn from
  the first player chooses a colour in play that nobody has chosen (two
  players: two each, in turns: first, second, first, second). The chosen
  cards come out of the box before it is shuffled: the deck is the box in
  the dealt order with the top-most card of each chosen colour removed, and
  the last-round card goes in once every choice is made. Then the first
  player starts round 1.

Every move is also told as a :class:`MoveEvent` (:meth:`Game.events`): who
did what, which cards moved, what was turned over, which joker was named,
which round or game ended. Logs, records and reviews read these events
instead of working out what a move did.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, NamedTuple

from coloretto.actions import (
    CHOOSE_START,
    DRAW,
    NAME_JOKER,
    PASS,
    PLACE,
    TAKE,
    Action,
    ActionKind,
    parse_action,
)
from coloretto.cards import (
    CARD_KINDS,
    COLLECTABLE_KINDS,
    GOLDEN_JOKER,
    JOKER,
    LAST_ROUND,
    Edition,
    card_name,
    card_token,
    full_composition,
    is_colour,
)
from coloretto.errors import ExplainedError
from coloretto.rules import MAX_PLAYERS, JokerTiming, RoundStarter, Rules
from coloretto.scoring import ScoreBreakdown, best_score, winners_of

_DRAW_KIND = ActionKind.DRAW
_PLACE_KIND = ActionKind.PLACE
_TAKE_KIND = ActionKind.TAKE
_NAME_KIND = ActionKind.NAME_JOKER
_PASS_KIND = ActionKind.PASS
_CHOOSE_KIND = ActionKind.CHOOSE_START


class IllegalActionError(ExplainedError):
    """An action the rules forbid here. The message names the rule broken;
    the game is left exactly as it was."""

    code = "illegal"


class SetupError(ValueError):
    """A deck order or starting hand that does not fit the rules."""


# --- lookup tables: legality and turn order without loops in the hot path ---

_ROWS_BITS = 1 << MAX_PLAYERS
#: legal placements for a mask of rows that are open and have room
_PLACE_TABLE: tuple[tuple[Action, ...], ...] = tuple(
    tuple(PLACE[i] for i in range(MAX_PLAYERS) if mask >> i & 1) for mask in range(_ROWS_BITS)
)
#: legal turn actions for (can_draw << 5 | mask of rows that may be taken)
_TURN_TABLE: tuple[tuple[Action, ...], ...] = tuple(
    (((DRAW,) if key >> MAX_PLAYERS else ()) + tuple(TAKE[i] for i in range(MAX_PLAYERS) if key >> i & 1))
    or (PASS,)
    for key in range(2 * _ROWS_BITS)
)


def _next_in_round_table(players: int) -> tuple[tuple[int, ...], ...]:
    """table[out_mask][seat]: the next seat after ``seat`` still in the round.

    A player who is the only one left plays again; -1 when nobody is left.
    """
    table = []
    for out in range(1 << players):
        row = []
        for seat in range(players):
            nxt = -1
            for step in range(1, players + 1):
                candidate = (seat + step) % players
                if not out >> candidate & 1:
                    nxt = candidate
                    break
            row.append(nxt)
        table.append(tuple(row))
    return tuple(table)


_NEXT_IN_ROUND = {n: _next_in_round_table(n) for n in range(2, MAX_PLAYERS + 1)}


def _start_choice_table(colours: int) -> tuple[tuple[Action, ...], ...]:
    """table[mask of colours already chosen]: the starting colours still free."""
    return tuple(
        tuple(CHOOSE_START[c] for c in range(colours) if not chosen >> c & 1)
        for chosen in range(1 << colours)
    )


_START_CHOICES = {colours: _start_choice_table(colours) for colours in (5, 6, 7)}


# --- undo snapshots: what each push overwrote, so that pop restores it exactly ---


class _TurnedOver(NamedTuple):
    """A card turned over (a draw or the golden joker's bonus)."""

    deck_position: int  #: where the deck stood before: the last-round card may lie there
    card: int
    was_last_round: bool
    swapped_from: int  #: -1, or where a card chosen with ``reveal`` was brought from


class _RoundEnd(NamedTuple):
    rows: tuple[tuple[int, ...], ...]  #: the rows as they were (two players: the untaken third row)
    player: int
    over: bool
    round: int
    out: int
    room: int
    nonempty: int
    taken: int


class _Placed(NamedTuple):
    action: Action
    card: int
    player: int
    room: int
    nonempty: int


class _Drew(NamedTuple):
    """A draw, with the card turned over in the fields of :class:`_TurnedOver`
    (one snapshot a draw rather than two: draws are the engine's hottest path)."""

    action: Action
    player: int
    deck_position: int
    card: int
    was_last_round: bool
    swapped_from: int


class _LeftRound(NamedTuple):
    """A take or a pass."""

    action: Action
    row: int  #: -1 for a pass
    cards: tuple[int, ...]  #: the row's cards
    bonus: _TurnedOver | None  #: the golden joker's bonus card
    player: int
    out: int
    room: int
    nonempty: int
    taken: int
    last_taker: int
    naming: tuple[int, ...]
    round_end: _RoundEnd | None


class _NamedJoker(NamedTuple):
    action: Action
    joker: int
    naming: tuple[int, ...]
    player: int
    round_end: _RoundEnd | None


class _ChoseStart(NamedTuple):
    action: Action
    player: int
    taken_from: int  #: where in the box the chosen card lay
    completed_deck: bool  #: whether this choice, the last, put the last-round card in


_Snapshot = _Placed | _Drew | _LeftRound | _NamedJoker | _ChoseStart

#: builds a snapshot from a tuple of its fields: the hot paths of push use it
#: because a NamedTuple's own constructor costs several times as much
_snapshot = tuple.__new__


@dataclass(frozen=True, slots=True)
class MoveEvent:
    """What one move did, told by the game itself (:meth:`Game.events`).

    The terminal's and the web app's logs, records and reviews read these
    instead of working out what a move did from the positions around it.
    """

    number: int  #: 1-based, in this game
    seat: int  #: who moved
    action: Action
    round: int  #: the round the move was made in
    #: cards turned over, the last-round card first if it came up: what records write
    revealed: tuple[int, ...] = ()
    row: int | None = None  #: the row placed in or taken
    #: the cards that moved: the card drawn or placed, the cards of the row taken
    cards: tuple[int, ...] = ()
    bonus_card: int | None = None  #: the card the golden joker brought its taker
    joker: int | None = None  #: naming a joker: its kind (JOKER or GOLDEN_JOKER)
    colour: int | None = None  #: naming a joker or choosing a starting colour: the colour
    #: after a take (variant: jokers named on take): the jokers the taker must now name
    jokers_to_name: tuple[int, ...] = ()
    round_ended: bool = False
    game_over: bool = False
    next_to_move: int | None = None  #: None once the game is over

    @property
    def last_round_began(self) -> bool:
        """Whether the last-round card came up with this move."""
        return LAST_ROUND in self.revealed

    def notation(self, edition: Edition = Edition.CLASSIC) -> str:
        """The move as records write it: the action, then the cards turned over (``"d LR B"``)."""
        return " ".join([self.action.notation(edition), *(card_token(c, edition) for c in self.revealed)])

    def describe(self, names: Sequence[str], edition: Edition = Edition.CLASSIC) -> str:
        """The move in words for a log: ``"Ann took row 3: red, red, +2"``."""
        who = names[self.seat]

        def cards(values: Sequence[int]) -> str:
            return ", ".join(card_name(c, edition) for c in values)

        kind = self.action.kind
        if kind is _DRAW_KIND:
            text = f"{who} drew {cards(self.cards)}"
        elif kind is _PLACE_KIND:
            text = f"{who} put {cards(self.cards)} in row {(self.row or 0) + 1}"
        elif kind is _TAKE_KIND:
            text = f"{who} took row {(self.row or 0) + 1}: {cards(self.cards)}"
            if self.bonus_card is not None:
                text += f"; the golden joker brings them {card_name(self.bonus_card, edition)} from the deck"
        elif kind is _NAME_KIND:
            joker = card_name(self.joker if self.joker is not None else JOKER, edition)
            text = f"{who} named a {joker} {card_name(self.colour or 0, edition)}"
        elif kind is _CHOOSE_KIND:
            text = f"{who} chose {card_name(self.colour or 0, edition)} as a starting colour"
        else:
            text = f"{who} passed: nothing to draw and no row to take"
        if self.last_round_began:
            text = "The last-round card came up: this is the last round! " + text
        return text


@dataclass(frozen=True)
class GameSetup:
    """Everything needed to deal the same game again."""

    rules: Rules
    #: draw order, top card first, the last-round card included. With starting
    #: colours chosen (variant): the whole box in the dealt order, without the
    #: last-round card; the choices leave it, then the last-round card goes in.
    deck: tuple[int, ...]
    starting_cards: tuple[tuple[int, ...], ...]  #: per seat (empty when they are chosen)
    first_player: int
    seed: int | None = None


@dataclass(frozen=True)
class Observation:
    """What one player may know: everything but the order of the deck."""

    player: int
    rules: Rules
    to_move: int | None
    round: int
    rows: tuple[tuple[int, ...], ...]
    row_capacities: tuple[int, ...]
    rows_taken: tuple[bool, ...]
    pending_card: int | None  #: drawn and waiting to be placed
    jokers_to_name: tuple[int, ...]  #: joker kinds the player to move must still name (variant)
    collections: tuple[tuple[int, ...], ...]  #: count vectors, see coloretto.cards
    named_jokers: tuple[tuple[tuple[int, int], ...], ...]  #: per seat: (joker kind, colour)
    out_this_round: tuple[bool, ...]
    cards_in_deck: int  #: face-down cards left, the last-round card included while unseen
    cards_before_last_round: int | None  #: None once it has appeared
    last_round: bool
    unseen_composition: tuple[int, ...]  #: cards not yet seen, by kind (last-round card excluded)
    removed_cards: tuple[int, ...]  #: two players: cards of untaken third rows, by kind
    scores: tuple[int, ...]  #: each seat's best score right now
    legal_actions: tuple[Action, ...]  #: empty unless this player is to move
    is_over: bool
    last_taker: int  #: who left the round last (-1 before anyone has): starts the next round
    first_player: int  #: who starts round 1
    #: starting colours still to be chosen before round 1 (variant; 0 once play
    #: has begun). While they are, ``unseen_composition`` still holds the cards
    #: the remaining choices will take out of the box.
    start_picks_left: int = 0


class Game:
    """A game of Coloretto in progress. See the module docstring."""

    __slots__ = (
        "rules",
        "setup",
        "_players",
        "_caps",
        "_colours",
        "_all_out",
        "_next",
        "_name_actions",
        "_has_golden",
        "_on_take",
        "_rows",
        "_room",
        "_nonempty",
        "_taken",
        "_out",
        "_player",
        "_pending",
        "_naming",
        "_deck",
        "_pos",
        "_lr_index",
        "_drawable",
        "_unseen",
        "_removed",
        "_last_round",
        "_over",
        "_coll",
        "_named",
        "_round",
        "_last_taker",
        "_picks_left",
        "_chosen",
        "_start_choices",
        "_stack",
    )

    # ------------------------------------------------------------------ setup

    def __init__(self, setup: GameSetup) -> None:
        _validate_setup(setup)
        rules = setup.rules
        self.rules = rules
        self.setup = setup
        n = rules.players
        self._players = n
        self._caps = rules.row_capacities
        self._colours = rules.colours
        self._all_out = (1 << n) - 1
        self._next = _NEXT_IN_ROUND[n]
        self._name_actions = NAME_JOKER[: rules.colours]
        self._start_choices = _START_CHOICES[rules.colours]
        self._has_golden = rules.has_golden_joker
        self._on_take = rules.joker_timing is JokerTiming.ON_TAKE
        rows = len(self._caps)
        self._rows: list[list[int]] = [[] for _ in range(rows)]
        self._room = (1 << rows) - 1
        self._nonempty = 0
        self._taken = 0
        self._out = 0
        self._player = setup.first_player
        self._pending = -1
        self._naming: tuple[int, ...] = ()
        self._deck = list(setup.deck)
        self._pos = 0
        self._picks_left = rules.starting_picks
        self._chosen = 0  #: mask of the starting colours chosen so far (variant)
        if self._picks_left:
            # No row has room until the starting colours are chosen and the deck is built.
            self._room = 0
            self._lr_index = -1
            self._drawable = len(self._deck)
        else:
            self._lr_index = self._deck.index(LAST_ROUND)
            self._drawable = len(self._deck) - 1
        self._unseen = [0] * CARD_KINDS
        for card in self._deck:
            if card != LAST_ROUND:
                self._unseen[card] += 1
        self._removed = [0] * CARD_KINDS
        self._last_round = False
        self._over = False
        self._coll = [[0] * COLLECTABLE_KINDS for _ in range(n)]
        for seat, cards in enumerate(setup.starting_cards):
            for card in cards:
                self._coll[seat][card] += 1
        self._named: list[list[tuple[int, int]]] = [[] for _ in range(n)]
        self._round = 1
        self._last_taker = -1
        self._stack: list[_Snapshot] = []

    @classmethod
    def new(
        cls, rules: Rules | None = None, seed: int | None = None, first_player: int | None = None
    ) -> Game:
        """Deal a new game. The same seed deals the same game on any machine.

        Without a seed one is drawn from the operating system and kept in
        ``game.setup.seed``, so every game can be dealt again.
        """
        rules = rules or Rules()
        if seed is None:
            seed = random.SystemRandom().randrange(2**63)
        return cls(deal(rules, seed, first_player))

    @classmethod
    def from_deck(
        cls,
        rules: Rules,
        deck: Sequence[int | str],
        starting_cards: Sequence[Sequence[int | str]],
        first_player: int = 0,
    ) -> Game:
        """A game from a deck order given by hand (top card first, the
        last-round card in its place) and each seat's starting cards.

        Cards may be integers or tokens (``"R"``, ``"J"``, ``"+2"``, ``"LR"`` …).
        """
        from coloretto.cards import parse_card

        def card(value: int | str) -> int:
            if isinstance(value, str):
                return parse_card(value, rules.edition)
            return value

        setup = GameSetup(
            rules=rules,
            deck=tuple(card(c) for c in deck),
            starting_cards=tuple(tuple(card(c) for c in hand) for hand in starting_cards),
            first_player=first_player,
        )
        return cls(setup)

    @classmethod
    def from_observation(cls, obs: Observation, rng: random.Random | None = None) -> Game:
        """A game in the observed position with the unseen cards in a random
        order (consistent with everything public): what a bot searches.

        It has no history to pop, and its ``setup`` is only a stand-in.
        """
        rules = obs.rules
        unseen = [card for card, n in enumerate(obs.unseen_composition) for _ in range(n)]
        (rng or random.Random(0)).shuffle(unseen)
        choosing = obs.start_picks_left > 0
        if obs.cards_before_last_round is not None and not choosing:
            unseen.insert(obs.cards_before_last_round, LAST_ROUND)
        game = object.__new__(cls)
        template = cls(deal(rules, 0))
        for name in cls.__slots__:
            setattr(game, name, getattr(template, name))
        game.setup = GameSetup(rules, tuple(unseen), (), obs.first_player)
        game._rows = [list(r) for r in obs.rows]
        game._taken = sum(1 << i for i, t in enumerate(obs.rows_taken) if t)
        game._room = sum(
            1 << i
            for i, cap in enumerate(obs.row_capacities)
            if not obs.rows_taken[i] and len(obs.rows[i]) < cap
        )
        game._nonempty = sum(1 << i for i, r in enumerate(obs.rows) if r and not obs.rows_taken[i])
        game._out = sum(1 << s for s, o in enumerate(obs.out_this_round) if o)
        game._player = obs.to_move if obs.to_move is not None else 0
        game._pending = -1 if obs.pending_card is None else obs.pending_card
        game._naming = tuple(obs.jokers_to_name)
        game._deck = unseen
        game._pos = 0
        game._picks_left = obs.start_picks_left
        game._chosen = 0
        if choosing:  # every colour card held so far was chosen
            game._chosen = sum(1 << c for c in range(rules.colours) if any(h[c] for h in obs.collections))
            game._room = 0
        if choosing or obs.cards_before_last_round is None:
            game._lr_index = -1
        else:
            game._lr_index = obs.cards_before_last_round
        game._drawable = sum(obs.unseen_composition)
        game._unseen = list(obs.unseen_composition)
        game._removed = list(obs.removed_cards)
        game._last_round = obs.cards_before_last_round is None and not choosing
        game._over = obs.is_over
        game._coll = [list(c) for c in obs.collections]
        game._named = [list(n) for n in obs.named_jokers]
        game._round = obs.round
        game._last_taker = obs.last_taker
        game._stack = []
        return game

    def __deepcopy__(self, memo: dict[int, Any]) -> Game:
        return self.copy()

    def copy(self) -> Game:
        """An independent copy with the same history (undo works on both)."""
        other = object.__new__(Game)
        for name in Game.__slots__:
            setattr(other, name, getattr(self, name))
        other._rows = [list(row) for row in self._rows]
        other._deck = list(self._deck)
        other._unseen = list(self._unseen)
        other._removed = list(self._removed)
        other._coll = [list(c) for c in self._coll]
        other._named = [list(n) for n in self._named]
        other._stack = list(self._stack)
        return other

    # --------------------------------------------------------------- queries

    @property
    def players(self) -> int:
        return self._players

    @property
    def to_move(self) -> int | None:
        """The seat that acts next, or None once the game is over."""
        return None if self._over else self._player

    @property
    def is_over(self) -> bool:
        return self._over

    @property
    def legal_actions(self) -> tuple[Action, ...]:
        """The actions the player to move may play (empty once the game is over)."""
        if self._over:
            return ()
        if self._pending >= 0:
            return _PLACE_TABLE[self._room]
        if self._naming:
            return self._name_actions
        if self._picks_left:
            return self._start_choices[self._chosen]
        return _TURN_TABLE[(32 if self._room and self._drawable else 0) | self._nonempty]

    def is_legal(self, action: Action) -> bool:
        return action in self.legal_actions

    @property
    def rows(self) -> tuple[tuple[int, ...], ...]:
        return tuple(tuple(row) for row in self._rows)

    @property
    def row_capacities(self) -> tuple[int, ...]:
        return self._caps

    def row_is_taken(self, row: int) -> bool:
        return bool(self._taken >> row & 1)

    def is_out(self, seat: int) -> bool:
        """Whether ``seat`` has already left this round."""
        return bool(self._out >> seat & 1)

    @property
    def pending_card(self) -> int | None:
        return None if self._pending < 0 else self._pending

    @property
    def jokers_to_name(self) -> tuple[int, ...]:
        """The joker kinds the player to move must still name, in order (variant: on take)."""
        return self._naming

    @property
    def round(self) -> int:
        return self._round

    @property
    def last_round(self) -> bool:
        """True once the last-round card has appeared (or the deck ran dry)."""
        return self._last_round or not self._drawable

    @property
    def cards_in_deck(self) -> int:
        """Face-down cards left, the last-round card included while unseen
        (while starting colours are chosen: what the deck will hold)."""
        if self._picks_left:
            return self._drawable - self._picks_left + 1
        return len(self._deck) - self._pos

    @property
    def cards_before_last_round(self) -> int | None:
        if self._picks_left:
            return self._drawable - self._picks_left - self.rules.under_last_round
        if self._pos > self._lr_index:
            return None
        return self._lr_index - self._pos

    @property
    def start_picks_left(self) -> int:
        """Starting colours still to be chosen before round 1 (variant; 0 once play has begun)."""
        return self._picks_left

    @property
    def first_player(self) -> int:
        """Who starts round 1."""
        return self.setup.first_player

    def parse_action(self, text: str) -> Action:
        """Read an action in this game's notation (its edition's colour letters,
        its number of rows); raises NotationError. Legality is :meth:`push`'s business."""
        return parse_action(text, self.rules.edition, rows=len(self._caps))

    def collection(self, seat: int) -> tuple[int, ...]:
        """The seat's count vector (colours, jokers, golden jokers, "+2")."""
        return tuple(self._coll[seat])

    def named_jokers(self, seat: int) -> tuple[tuple[int, int], ...]:
        return tuple(self._named[seat])

    def unseen_composition(self) -> tuple[int, ...]:
        """Cards not yet seen by anyone, by kind (the last-round card excluded)."""
        return tuple(self._unseen)

    def best_score(self, seat: int) -> ScoreBreakdown:
        """The seat's best score if the game ended now (jokers and plus colours optimal)."""
        rules = self.rules
        return best_score(self._coll[seat], self._colours, rules.table, rules.plus_colours)

    def scores(self) -> tuple[ScoreBreakdown, ...]:
        return tuple(self.best_score(seat) for seat in range(self._players))

    def winners(self) -> tuple[int, ...]:
        """Seats with the highest total (a tie is a shared win unless a tie-break is chosen)."""
        scores = self.scores()
        return winners_of([s.total for s in scores], [s.minus_points for s in scores], self.rules.tie_break)

    @property
    def move_stack(self) -> list[Action]:
        return [entry.action for entry in self._stack]

    def history(self) -> list[tuple[Action, tuple[int, ...]]]:
        """Every action so far with the cards it turned over, in order."""
        return [(entry.action, self._revealed(entry)) for entry in self._stack]

    def last_revealed(self) -> tuple[int, ...]:
        """The cards the last action turned over (empty if none, or no action yet)."""
        return self._revealed(self._stack[-1]) if self._stack else ()

    def _revealed(self, entry: _Snapshot) -> tuple[int, ...]:
        """The cards a move turned over, the last-round card included."""
        turned: _Drew | _TurnedOver | None
        if isinstance(entry, _Drew):
            turned = entry
        elif isinstance(entry, _LeftRound):
            turned = entry.bonus
        else:
            return ()
        if turned is None:
            return ()
        if turned.deck_position == self._lr_index:
            return (LAST_ROUND, turned.card)
        return (turned.card,)

    def events(self) -> tuple[MoveEvent, ...]:
        """Every move so far as a :class:`MoveEvent`, in order."""
        events = []
        round_no = 1
        last = len(self._stack) - 1
        for number, entry in enumerate(self._stack):
            if number < last:
                after = self._stack[number + 1]
                next_seat: int | None = after.player
            else:
                next_seat = self.to_move
            event = self._event(number + 1, entry, round_no, next_seat, number == last and self._over)
            if event.round_ended:
                round_no += 1
            events.append(event)
        return tuple(events)

    def last_event(self) -> MoveEvent | None:
        """The last move as a :class:`MoveEvent` (None before the first move)."""
        if not self._stack:
            return None
        entry = self._stack[-1]
        ended = isinstance(entry, _LeftRound | _NamedJoker) and entry.round_end is not None
        round_no = self._round - 1 if ended and not self._over else self._round
        return self._event(len(self._stack), entry, round_no, self.to_move, self._over)

    def _event(
        self, number: int, entry: _Snapshot, round_no: int, next_seat: int | None, game_over: bool
    ) -> MoveEvent:
        revealed = self._revealed(entry)
        event = partial(MoveEvent, number, entry.player, entry.action, round_no, next_to_move=next_seat)
        if isinstance(entry, _Placed):
            return event(row=entry.action.index, cards=(entry.card,))
        if isinstance(entry, _Drew):
            return event(revealed=revealed, cards=(entry.card,))
        if isinstance(entry, _ChoseStart):
            return event(colour=entry.action.index)
        ended = entry.round_end is not None
        if isinstance(entry, _NamedJoker):
            return event(
                joker=entry.joker,
                colour=entry.action.index,
                jokers_to_name=entry.naming[1:],
                round_ended=ended,
                game_over=game_over,
            )
        naming: tuple[int, ...] = ()
        if self._on_take:  # the taker must now name the jokers taken, the bonus card's too
            naming = tuple(c for c in (*entry.cards, *revealed[-1:]) if c in (JOKER, GOLDEN_JOKER))
        return event(
            revealed=revealed,
            row=entry.row if entry.row >= 0 else None,
            cards=entry.cards,
            bonus_card=None if entry.bonus is None else entry.bonus.card,
            jokers_to_name=naming,
            round_ended=ended,
            game_over=game_over,
        )

    def __len__(self) -> int:
        return len(self._stack)

    def observation(self, player: int) -> Observation:
        if not 0 <= player < self._players:
            raise ValueError(f"seat {player} does not exist in a {self._players}-player game")
        return Observation(
            player=player,
            rules=self.rules,
            to_move=self.to_move,
            round=self._round,
            rows=self.rows,
            row_capacities=self._caps,
            rows_taken=tuple(bool(self._taken >> i & 1) for i in range(len(self._caps))),
            pending_card=self.pending_card,
            jokers_to_name=self._naming,
            collections=tuple(tuple(c) for c in self._coll),
            named_jokers=tuple(tuple(n) for n in self._named),
            out_this_round=tuple(bool(self._out >> s & 1) for s in range(self._players)),
            cards_in_deck=self.cards_in_deck,
            cards_before_last_round=self.cards_before_last_round,
            last_round=self.last_round,
            unseen_composition=tuple(self._unseen),
            removed_cards=tuple(self._removed),
            scores=tuple(s.total for s in self.scores()),
            legal_actions=self.legal_actions if player == self.to_move else (),
            is_over=self._over,
            last_taker=self._last_taker,
            first_player=self.setup.first_player,
            start_picks_left=self._picks_left,
        )

    def state_key(self) -> tuple[Any, ...]:
        """The whole state as one hashable value (deck order included): two
        games with equal keys behave identically from here on."""
        return (
            tuple(tuple(r) for r in self._rows),
            self._room,
            self._nonempty,
            self._taken,
            self._out,
            self._player,
            self._pending,
            self._naming,
            tuple(self._deck),
            self._pos,
            self._drawable,
            tuple(self._unseen),
            tuple(self._removed),
            self._last_round,
            self._over,
            tuple(tuple(c) for c in self._coll),
            tuple(tuple(n) for n in self._named),
            self._round,
            self._last_taker,
            self._picks_left,
            self._chosen,
            len(self._stack),
        )

    # ----------------------------------------------------------------- chance

    def chance_outcomes(self) -> list[tuple[int, float]]:
        """The cards the next draw may turn over, with their probabilities.

        Every unseen card is equally likely to be next, whatever its place
        relative to the last-round card (whose own place is public).
        """
        total = self._drawable
        if not total:
            return []
        return [(card, n / total) for card, n in enumerate(self._unseen) if n]

    def resample_hidden(self, rng: random.Random) -> None:
        """Shuffle the unseen cards into a new order consistent with all that is
        public: the last-round card stays where it is. Undo does not restore
        the old order of unseen cards (nobody could tell the difference)."""
        hidden = [i for i in range(self._pos, len(self._deck)) if i != self._lr_index]
        cards = [self._deck[i] for i in hidden]
        rng.shuffle(cards)
        for i, card in zip(hidden, cards):
            self._deck[i] = card

    def _bring_to(self, pos: int, card: int) -> int:
        """Swap an unseen ``card`` into deck position ``pos``; return where it came from."""
        deck = self._deck
        if deck[pos] == card:
            return -1
        for j in range(pos + 1, len(deck)):
            if deck[j] == card and j != self._lr_index:
                deck[pos], deck[j] = card, deck[pos]
                return j
        raise IllegalActionError(
            f"{card_token(card, self.rules.edition) if 0 <= card < CARD_KINDS else card!r} "
            "cannot be turned over: no such card is left unseen"
        )

    def _check_reveal(self, reveal: int) -> None:
        if not (isinstance(reveal, int) and 0 <= reveal < CARD_KINDS and reveal != LAST_ROUND):
            raise IllegalActionError(f"{reveal!r} is not a card that a draw can turn over")
        if not self._unseen[reveal]:
            raise IllegalActionError(
                f"{card_token(reveal, self.rules.edition)} cannot be turned over: none is left unseen"
            )

    # ------------------------------------------------------------------- push

    def push(self, action: Action, reveal: int | None = None) -> None:
        """Play ``action`` for the player to move.

        ``reveal`` chooses the card a draw (or the golden joker's bonus) turns
        over, for searches that control chance; by default the real next card
        of the deck comes up. Raises :class:`IllegalActionError`, leaving the
        game unchanged, if the rules forbid the action here.
        """
        kind = action.kind
        if kind is _PLACE_KIND:
            i = action.index
            bit = 1 << i
            card = self._pending
            if card < 0 or not self._room & bit:
                raise self._why_illegal(action)
            row = self._rows[i]
            row.append(card)
            player = self._player
            self._stack.append(_snapshot(_Placed, (action, card, player, self._room, self._nonempty)))
            if len(row) == self._caps[i]:
                self._room &= ~bit
            self._nonempty |= bit
            self._pending = -1
            self._player = self._next[self._out][player]
        elif kind is _DRAW_KIND:
            if self._over or self._pending >= 0 or self._naming or not self._room or not self._drawable:
                raise self._why_illegal(action)
            if reveal is not None:
                self._check_reveal(reveal)
            start, card, was_last_round, swapped_from = self._turn_over(reveal)
            self._pending = card
            snapshot = (action, self._player, start, card, was_last_round, swapped_from)
            self._stack.append(_snapshot(_Drew, snapshot))
        elif kind is _TAKE_KIND:
            i = action.index
            if self._over or self._pending >= 0 or self._naming or not self._nonempty >> i & 1:
                raise self._why_illegal(action)
            if reveal is not None:
                self._check_reveal(reveal)
            self._take(action, i, reveal)
        elif kind is _NAME_KIND:
            colour = action.index
            if self._over or not self._naming or colour >= self._colours:
                raise self._why_illegal(action)
            self._name_joker(action, colour)
        elif kind is _PASS_KIND:
            if self._over or self.legal_actions != (PASS,):
                raise self._why_illegal(action)
            self._leave_round(action, -1, (), None)
        elif kind is _CHOOSE_KIND:
            colour = action.index
            if self._over or not self._picks_left or colour >= self._colours or self._chosen >> colour & 1:
                raise self._why_illegal(action)
            self._choose_start(action, colour)
        else:  # pragma: no cover - Action has no other kinds
            raise IllegalActionError(f"unknown action {action!r}")

    def _take(self, action: Action, i: int, reveal: int | None) -> None:
        cards = self._rows[i]
        self._rows[i] = []
        coll = self._coll[self._player]
        for card in cards:
            coll[card] += 1
        bonus = None
        if self._has_golden and earns_bonus_card(cards, self._drawable):
            bonus = _snapshot(_TurnedOver, self._turn_over(reveal))
            coll[bonus.card] += 1
        self._leave_round(action, i, tuple(cards), bonus)

    def _turn_over(self, reveal: int | None) -> tuple[int, int, bool, int]:
        """Turn over the top card (for a draw or the golden joker's bonus), setting
        the last-round card aside if it comes first. Returns what undo needs, the
        fields of :class:`_TurnedOver`."""
        deck = self._deck
        pos = start = self._pos
        was_last_round = self._last_round
        if deck[pos] == LAST_ROUND:
            self._last_round = True
            pos += 1
        moved = -1 if reveal is None else self._bring_to(pos, reveal)
        card = deck[pos]
        self._pos = pos + 1
        self._drawable -= 1
        self._unseen[card] -= 1
        return (start, card, was_last_round, moved)

    def _leave_round(
        self,
        action: Action,
        row: int,
        cards: tuple[int, ...],
        bonus: _TurnedOver | None,
    ) -> None:
        """A take (or a pass): the player leaves the round, perhaps ending it."""
        player = self._player
        out, room, nonempty, taken, last_taker, naming = (
            self._out,
            self._room,
            self._nonempty,
            self._taken,
            self._last_taker,
            self._naming,
        )
        self._out |= 1 << player
        self._last_taker = player
        if row >= 0:
            bit = 1 << row
            self._room &= ~bit
            self._nonempty &= ~bit
            self._taken |= bit
        if self._on_take:
            jokers = [c for c in cards if c in (JOKER, GOLDEN_JOKER)]
            if bonus is not None and bonus.card in (JOKER, GOLDEN_JOKER):
                jokers.append(bonus.card)
            self._naming = tuple(jokers)
        round_end = None if self._naming else self._pass_turn()
        snapshot = (
            action,
            row,
            cards,
            bonus,
            player,
            out,
            room,
            nonempty,
            taken,
            last_taker,
            naming,
            round_end,
        )
        self._stack.append(_snapshot(_LeftRound, snapshot))

    def _pass_turn(self) -> _RoundEnd | None:
        """After a player has left the round: move on to the next player, or
        end the round. Returns what a round end overwrote, for undo."""
        if self._out != self._all_out:
            self._player = self._next[self._out][self._player]
            return None
        overwritten = _RoundEnd(
            tuple(tuple(r) for r in self._rows),
            self._player,
            self._over,
            self._round,
            self._out,
            self._room,
            self._nonempty,
            self._taken,
        )
        for row in self._rows:
            for card in row:  # two players: the untaken third row leaves the game
                self._removed[card] += 1
        self._rows = [[] for _ in self._caps]
        self._room = (1 << len(self._caps)) - 1
        self._nonempty = 0
        self._taken = 0
        self._out = 0
        if self._last_round or not self._drawable:
            self._over = True
            return overwritten
        self._round += 1
        starter = self._last_taker
        if self.rules.round_starter is RoundStarter.NEXT_PLAYER:
            starter = (starter + 1) % self._players
        self._player = starter
        return overwritten

    def _name_joker(self, action: Action, colour: int) -> None:
        joker = self._naming[0]
        player = self._player
        coll = self._coll[player]
        coll[joker] -= 1
        coll[colour] += 1
        self._named[player].append((joker, colour))
        naming = self._naming
        self._naming = naming[1:]
        round_end = None if self._naming else self._pass_turn()
        self._stack.append(_NamedJoker(action, joker, naming, player, round_end))

    def _choose_start(self, action: Action, colour: int) -> None:
        """A starting colour chosen (variant): the top-most card of that colour
        leaves the box; after the last choice the last-round card goes in with
        its number of cards under it, and the first player starts round 1."""
        player = self._player
        taken_from = self._deck.index(colour)
        del self._deck[taken_from]
        self._coll[player][colour] += 1
        self._chosen |= 1 << colour
        self._unseen[colour] -= 1
        self._drawable -= 1
        self._picks_left -= 1
        if self._picks_left:
            self._player = (player + 1) % self._players
        else:
            self._lr_index = len(self._deck) - self.rules.under_last_round
            self._deck.insert(self._lr_index, LAST_ROUND)
            self._room = (1 << len(self._caps)) - 1
            self._player = self.setup.first_player
        self._stack.append(_ChoseStart(action, player, taken_from, not self._picks_left))

    # -------------------------------------------------------------------- pop

    def pop(self) -> Action:
        """Undo the last action and return it."""
        if not self._stack:
            raise IndexError("pop from a game with no actions")
        entry = self._stack.pop()
        action = entry.action
        if isinstance(entry, _Placed):
            self._rows[action.index].pop()
            self._pending = entry.card
            self._player = entry.player
            self._room = entry.room
            self._nonempty = entry.nonempty
        elif isinstance(entry, _Drew):
            self._pending = -1
            self._put_back(entry.deck_position, entry.card, entry.was_last_round, entry.swapped_from)
        elif isinstance(entry, _NamedJoker):
            _, joker, naming, player, round_end = entry
            if round_end is not None:
                self._undo_round_end(round_end)
            coll = self._coll[player]
            coll[joker] += 1
            coll[action.index] -= 1
            self._named[player].pop()
            self._naming = naming
            self._player = player
        elif isinstance(entry, _ChoseStart):
            player = entry.player
            colour = action.index
            if entry.completed_deck:
                del self._deck[self._lr_index]
                self._lr_index = -1
                self._room = 0
            self._deck.insert(entry.taken_from, colour)
            self._coll[player][colour] -= 1
            self._chosen &= ~(1 << colour)
            self._unseen[colour] += 1
            self._drawable += 1
            self._picks_left += 1
            self._player = player
        else:  # a take or a pass
            if entry.round_end is not None:
                self._undo_round_end(entry.round_end)
            coll = self._coll[entry.player]
            for card in entry.cards:
                coll[card] -= 1
            if entry.row >= 0:
                self._rows[entry.row] = list(entry.cards)
            bonus = entry.bonus
            if bonus is not None:
                coll[bonus.card] -= 1
                self._put_back(*bonus)
            self._player = entry.player
            self._out = entry.out
            self._room = entry.room
            self._nonempty = entry.nonempty
            self._taken = entry.taken
            self._last_taker = entry.last_taker
            self._naming = entry.naming
        return action

    def _put_back(self, start: int, card: int, was_last_round: bool, moved: int) -> None:
        """Undo :meth:`_turn_over`."""
        self._drawable += 1
        self._unseen[card] += 1
        self._pos = start
        self._last_round = was_last_round
        if moved >= 0:
            deck = self._deck
            pos = start + 1 if deck[start] == LAST_ROUND else start
            deck[pos], deck[moved] = deck[moved], deck[pos]

    def _undo_round_end(self, round_end: _RoundEnd) -> None:
        leftover, player, over, round_no, out, room, nonempty, taken = round_end
        self._rows = [list(r) for r in leftover]
        for row in leftover:
            for card in row:
                self._removed[card] -= 1
        self._player = player
        self._over = over
        self._round = round_no
        self._out = out
        self._room = room
        self._nonempty = nonempty
        self._taken = taken

    # ------------------------------------------------------------ diagnostics

    def _why_illegal(self, action: Action) -> IllegalActionError:
        """The rule an illegal action breaks (slow path: only on errors)."""
        said = action.notation(self.rules.edition)
        if self._over:
            return IllegalActionError("{action}: the game is over", action=said)
        kind = action.kind
        if kind is _CHOOSE_KIND:
            if not self._picks_left:
                return IllegalActionError(
                    "{action}: starting colours are chosen only before the first round (variant)", action=said
                )
            if action.index >= self._colours:
                return IllegalActionError("{action}: that colour is not in play", action=said)
            return IllegalActionError(
                "{action}: that colour has already been chosen: each starts with a different colour",
                action=said,
            )
        if self._picks_left:
            return IllegalActionError("{action}: choose a starting colour first", action=said)
        if kind is _NAME_KIND:
            if not self._naming:
                return IllegalActionError("{action}: there is no joker to name", action=said)
            return IllegalActionError("{action}: that colour is not in play", action=said)
        if self._naming:
            return IllegalActionError("{action}: name the colour of the joker just taken first", action=said)
        if kind is _PLACE_KIND:
            if self._pending < 0:
                return IllegalActionError(
                    "{action}: there is no drawn card to place: draw first", action=said
                )
            return self._row_problem(action, said, placing=True)
        if self._pending >= 0:
            return IllegalActionError("{action}: the drawn card must be placed in a row first", action=said)
        if kind is _DRAW_KIND:
            if not self._drawable:
                return IllegalActionError("{action}: the deck is exhausted: take a row", action=said)
            return IllegalActionError("{action}: every open row is full: take a row", action=said)
        if kind is _TAKE_KIND:
            return self._row_problem(action, said, placing=False)
        return IllegalActionError(
            "{action}: passing is allowed only when there is nothing to draw and nothing to take", action=said
        )

    def _row_problem(self, action: Action, said: str, placing: bool) -> IllegalActionError:
        i = action.index
        row = i + 1
        if i >= len(self._caps):
            return IllegalActionError(
                "{action}: there is no row {row}: this game has {rows} rows",
                action=said,
                row=row,
                rows=len(self._caps),
            )
        if self._taken >> i & 1:
            return IllegalActionError(
                "{action}: row {row} was already taken this round", action=said, row=row
            )
        if placing:
            return IllegalActionError(
                "{action}: row {row} is full ({cards} cards)", action=said, row=row, cards=self._caps[i]
            )
        return IllegalActionError(
            "{action}: row {row} is empty: only a row with cards can be taken", action=said, row=row
        )

    def __repr__(self) -> str:
        state = "over" if self._over else f"seat {self._player} to move"
        return f"<Game {self.rules.describe()}; round {self._round}; {state}; {len(self._stack)} actions>"


def earns_bonus_card(row: Sequence[int], cards_left: int) -> bool:
    """The golden joker's bonus (modern edition): whoever takes a row holding it
    also turns over the top card for their own collection, if a card is left.

    The compiled search kernel keeps a C copy of this rule, which
    ``tests/test_kernel_build.py`` checks against this function on every row.
    """
    if cards_left <= 0:
        return False
    return GOLDEN_JOKER in row


def deal(rules: Rules, seed: int, first_player: int | None = None) -> GameSetup:
    """Shuffle and deal from a seed: starting colours, deck order, first player.

    With starting colours chosen (variant) nobody is dealt one: the deck is the
    whole box shuffled, and the game takes the chosen cards out of it.
    """
    rng = random.Random(seed)
    n = rules.players
    if rules.chooses_starting_colours:
        box = [
            card
            for card, count in enumerate(full_composition(n, rules.edition)[:LAST_ROUND])
            for _ in range(count)
        ]
        rng.shuffle(box)
        if first_player is None:
            first_player = rng.randrange(n)
        return GameSetup(rules, tuple(box), ((),) * n, first_player, seed)
    per_player = rules.starting_cards_per_player
    colours = rng.sample(range(rules.colours), n * per_player)
    starting = tuple(tuple(colours[s * per_player : (s + 1) * per_player]) for s in range(n))
    counts = full_composition(n, rules.edition)
    counts[LAST_ROUND] = 0
    for colour in colours:
        counts[colour] -= 1
    rest = [card for card, count in enumerate(counts) for _ in range(count)]
    rng.shuffle(rest)
    cut = len(rest) - rules.under_last_round
    deck = (*rest[:cut], LAST_ROUND, *rest[cut:])
    if first_player is None:
        first_player = rng.randrange(n)
    return GameSetup(rules, deck, starting, first_player, seed)


def stand_in_deck(rules: Rules, starting_cards: Sequence[Sequence[int]]) -> tuple[int, ...]:
    """A deck with the right cards in a fixed order, the last-round card in its
    place: for games whose every draw is chosen with ``reveal`` (a record whose
    deck was secret, an OpenSpiel state whose draws are chance nodes)."""
    counts = full_composition(rules.players, rules.edition)
    counts[LAST_ROUND] = 0
    for hand in starting_cards:
        for card in hand:
            if 0 <= card < CARD_KINDS:
                counts[card] -= 1
    if any(n < 0 for n in counts):
        raise SetupError("the starting cards hold more cards than the game has")
    rest = [card for card, n in enumerate(counts) for _ in range(n)]
    if rules.chooses_starting_colours:
        return tuple(rest)  # the box: the game puts the last-round card in after the choices
    cut = len(rest) - rules.under_last_round
    return (*rest[:cut], LAST_ROUND, *rest[cut:])


def _validate_setup(setup: GameSetup) -> None:
    rules = setup.rules
    n = rules.players
    if not isinstance(setup.first_player, int) or not 0 <= setup.first_player < n:
        raise SetupError(f"first player must be a seat from 0 to {n - 1}, not {setup.first_player!r}")
    if len(setup.starting_cards) != n:
        raise SetupError(f"starting cards are needed for {n} seats, got {len(setup.starting_cards)}")
    per = 0 if rules.chooses_starting_colours else rules.starting_cards_per_player
    seen: list[int] = []
    for seat, hand in enumerate(setup.starting_cards):
        if len(hand) != per:
            raise SetupError(f"seat {seat + 1} must start with {per} card(s), not {len(hand)}")
        for card in hand:
            if not (isinstance(card, int) and is_colour(card) and card < rules.colours):
                raise SetupError(f"seat {seat + 1}'s starting card {card!r} is not a colour in play")
        seen.extend(hand)
    if len(set(seen)) != len(seen):
        raise SetupError("starting cards must all be of different colours")
    counts = full_composition(n, rules.edition)
    for card in seen:
        counts[card] -= 1
    if rules.chooses_starting_colours:
        counts[LAST_ROUND] = 0  # the game puts it in once the starting colours are chosen
    deck_counts = [0] * CARD_KINDS
    for card in setup.deck:
        if not (isinstance(card, int) and 0 <= card < CARD_KINDS):
            raise SetupError(f"{card!r} in the deck is not a card")
        deck_counts[card] += 1
    if deck_counts != counts:
        problems = []
        for card in range(CARD_KINDS):
            if deck_counts[card] != counts[card]:
                token = card_token(card, rules.edition)
                problems.append(f"{token}: {deck_counts[card]} instead of {counts[card]}")
        raise SetupError("the deck does not hold this game's cards (" + "; ".join(problems) + ")")
    if rules.chooses_starting_colours:
        return
    under = len(setup.deck) - 1 - setup.deck.index(LAST_ROUND)
    if under != rules.under_last_round:
        raise SetupError(
            f"the last-round card must have exactly {rules.under_last_round} cards under it, not {under}"
        )
