"""What a game answers about its position: who is to move, what is legal, the rows, the
collections, the scores, the moves so far as events, a player's observation. :class:`GameState`
holds the fields; :class:`~coloretto.game.state.Game` changes them (push, pop, chance)."""

from __future__ import annotations

from typing import Any

from coloretto.actions import Action, parse_action
from coloretto.game.dealing import GameSetup
from coloretto.game.events import MoveEvent, move_event, revealed_by
from coloretto.game.observation import Observation
from coloretto.game.snapshots import _LeftRound, _NamedJoker, _Snapshot
from coloretto.game.tables import _PLACE_TABLE, _TURN_TABLE
from coloretto.rules import Rules
from coloretto.scoring import ScoreBreakdown, best_score, winners_of


class GameState:
    """A game's position: its fields, and every question about them that changes nothing."""

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
        "_scores_seen",
    )

    rules: Rules
    setup: GameSetup
    _players: int
    _caps: tuple[int, ...]
    _colours: int
    _all_out: int
    _next: tuple[tuple[int, ...], ...]
    _name_actions: tuple[Action, ...]
    _has_golden: bool
    _on_take: bool
    _rows: list[list[int]]
    _room: int  #: mask of the rows open and with room
    _nonempty: int  #: mask of the rows open and with cards
    _taken: int  #: mask of the rows taken this round
    _out: int  #: mask of the seats out of the round
    _player: int
    _pending: int  #: the card drawn and not yet placed, or -1
    _naming: tuple[int, ...]  #: joker kinds the player to move must name (variant)
    _deck: list[int]
    _pos: int
    _lr_index: int  #: where the last-round card lies in the deck (-1: none)
    _drawable: int
    _unseen: list[int]
    _removed: list[int]
    _last_round: bool
    _over: bool
    _coll: list[list[int]]
    _named: list[list[tuple[int, int]]]
    _round: int
    _last_taker: int
    _picks_left: int
    _chosen: int  #: mask of the starting colours chosen so far (variant)
    _start_choices: tuple[tuple[Action, ...], ...]
    _stack: list[_Snapshot]
    #: the scores worked out last, with the moves' key they belong to (see :meth:`moves_key`)
    _scores_seen: tuple[tuple[int, object], tuple[ScoreBreakdown, ...]] | None

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
        # asked for every seat's view of every move (a server shows it to every watcher): worked
        # out once per position
        seen = self._scores_seen
        if seen is not None and self.is_at(seen[0]):
            return seen[1]
        scores = tuple(self.best_score(seat) for seat in range(self._players))
        self._scores_seen = (self.moves_key(), scores)
        return scores

    def moves_key(self) -> tuple[int, object]:
        """A key of the moves played, cheap to take: their number and the last one's own record
        (every move pushed makes a new record). See :meth:`is_at` and :meth:`follows`."""
        return len(self._stack), self._stack[-1] if self._stack else None

    def is_at(self, key: tuple[int, object]) -> bool:
        """Whether the moves are those of ``key`` (an earlier :meth:`moves_key` of this game)."""
        count = len(self._stack)
        return count == key[0] and (self._stack[-1] if count else None) is key[1]

    def follows(self, key: tuple[int, object]) -> bool:
        """Whether the moves are those of ``key`` (an earlier :meth:`moves_key` of this game) and
        one more."""
        count = len(self._stack)
        return count == key[0] + 1 and (self._stack[-2] if count > 1 else None) is key[1]

    def winners(self) -> tuple[int, ...]:
        """Seats with the highest total (a tie is a shared win unless a tie-break is chosen)."""
        scores = self.scores()
        return winners_of([s.total for s in scores], [s.minus_points for s in scores], self.rules.tie_break)

    @property
    def move_stack(self) -> list[Action]:
        return [entry.action for entry in self._stack]

    def history(self) -> list[tuple[Action, tuple[int, ...]]]:
        """Every action so far with the cards it turned over, in order."""
        return [(entry.action, revealed_by(entry, self._lr_index)) for entry in self._stack]

    def last_revealed(self) -> tuple[int, ...]:
        """The cards the last action turned over (empty if none, or no action yet)."""
        return revealed_by(self._stack[-1], self._lr_index) if self._stack else ()

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
            event = self._move_event(number + 1, entry, round_no, next_seat, number == last and self._over)
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
        return self._move_event(len(self._stack), entry, round_no, self.to_move, self._over)

    def _move_event(
        self, number: int, entry: _Snapshot, round_no: int, next_seat: int | None, game_over: bool
    ) -> MoveEvent:
        return move_event(entry, number, round_no, next_seat, game_over, self._lr_index, self._on_take)

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
