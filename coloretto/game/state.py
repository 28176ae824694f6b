"""The position (:class:`Game`): push actions onto it, pop them off, ask who acts and what is legal
(see :mod:`coloretto.game`)."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from coloretto.actions import (
    NAME_JOKER,
    PASS,
    Action,
)
from coloretto.cards import (
    CARD_KINDS,
    COLLECTABLE_KINDS,
    GOLDEN_JOKER,
    JOKER,
    LAST_ROUND,
    card_token,
)
from coloretto.game.dealing import GameSetup, deal, validate_setup
from coloretto.game.illegal import IllegalActionError, why_illegal
from coloretto.game.observation import Observation
from coloretto.game.position import GameState
from coloretto.game.snapshots import (
    _ChoseStart,
    _Drew,
    _LeftRound,
    _NamedJoker,
    _Placed,
    _RoundEnd,
    _snapshot,
    _TurnedOver,
)
from coloretto.game.tables import (
    _NEXT_IN_ROUND,
    _START_CHOICES,
    CHOOSE_KIND,
    DRAW_KIND,
    NAME_KIND,
    PASS_KIND,
    PLACE_KIND,
    TAKE_KIND,
)
from coloretto.rules import JokerTiming, RoundStarter, Rules


class Game(GameState):
    """A game of Coloretto in progress: push actions onto it, pop them off (see :mod:`coloretto.game`).
    What it answers about the position is in :class:`~coloretto.game.position.GameState`."""

    __slots__ = ()

    # ------------------------------------------------------------------ setup

    def __init__(self, setup: GameSetup) -> None:
        validate_setup(setup)
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
        self._rows = [[] for _ in range(rows)]
        self._room = (1 << rows) - 1
        self._nonempty = 0
        self._taken = 0
        self._out = 0
        self._player = setup.first_player
        self._pending = -1
        self._naming = ()
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
        self._named = [[] for _ in range(n)]
        self._round = 1
        self._last_taker = -1
        self._stack = []
        self._scores_seen = None

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
        for name in GameState.__slots__:
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
        game._scores_seen = None
        return game

    def __deepcopy__(self, memo: dict[int, Any]) -> Game:
        return self.copy()

    def copy(self) -> Game:
        """An independent copy with the same history (undo works on both)."""
        other = object.__new__(Game)
        for name in GameState.__slots__:
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
        if kind is PLACE_KIND:
            i = action.index
            bit = 1 << i
            card = self._pending
            if card < 0 or not self._room & bit:
                raise why_illegal(self, action)
            row = self._rows[i]
            row.append(card)
            player = self._player
            self._stack.append(_snapshot(_Placed, (action, card, player, self._room, self._nonempty)))
            if len(row) == self._caps[i]:
                self._room &= ~bit
            self._nonempty |= bit
            self._pending = -1
            self._player = self._next[self._out][player]
        elif kind is DRAW_KIND:
            if self._over or self._pending >= 0 or self._naming or not self._room or not self._drawable:
                raise why_illegal(self, action)
            if reveal is not None:
                self._check_reveal(reveal)
            start, card, was_last_round, swapped_from = self._turn_over(reveal)
            self._pending = card
            snapshot = (action, self._player, start, card, was_last_round, swapped_from)
            self._stack.append(_snapshot(_Drew, snapshot))
        elif kind is TAKE_KIND:
            i = action.index
            if self._over or self._pending >= 0 or self._naming or not self._nonempty >> i & 1:
                raise why_illegal(self, action)
            if reveal is not None:
                self._check_reveal(reveal)
            self._take(action, i, reveal)
        elif kind is NAME_KIND:
            colour = action.index
            if self._over or not self._naming or colour >= self._colours:
                raise why_illegal(self, action)
            self._name_joker(action, colour)
        elif kind is PASS_KIND:
            if self._over or self.legal_actions != (PASS,):
                raise why_illegal(self, action)
            self._leave_round(action, -1, (), None)
        elif kind is CHOOSE_KIND:
            colour = action.index
            if self._over or not self._picks_left or colour >= self._colours or self._chosen >> colour & 1:
                raise why_illegal(self, action)
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
