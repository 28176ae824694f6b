"""Match play: several games with running totals and an overall winner.

Two sources play Coloretto as a match ("the player with the most points after
four games"); ``Rules(match_games=4)`` says how long a match is. This module
owns everything about a match that the faces show: which seed deals each
game, the running totals, when the match is over and who won it (with the
rules' tie-break, over the whole match's minus points)::

    >>> from coloretto import Rules
    >>> match = Match(Rules(players=3, match_games=2), seed=8)
    >>> while not match.is_over:
    ...     if match.game.is_over:
    ...         _ = match.next_game()
    ...     _ = match.push(match.game.legal_actions[0])
    >>> match.game_number, len(match.totals())
    (2, 3)

Game 1 is dealt from the match's seed itself, so a one-game match is exactly
``Game.new(rules, seed)``; every later game from a seed derived from it
(:func:`match_game_seed`), the same on any machine.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from coloretto.actions import Action
from coloretto.game import Game, MoveEvent
from coloretto.rules import Rules
from coloretto.scoring import winners_of

#: the record tags that place a game in its match: which game it is, and the
#: seats' totals and minus points of the games before it (see MatchProgress)
MATCH_GAME_TAG = "match_game"
MATCH_SEED_TAG = "match_seed"
MATCH_TOTALS_TAG = "match_totals"
MATCH_MINUS_TAG = "match_minus"


class MatchError(ValueError):
    """A match used out of order (a new game before the last one ended, …) or
    match tags that do not fit the rules."""


def match_game_seed(match_seed: int, number: int) -> int:
    """The seed that deals game ``number`` (1-based) of a match."""
    if number == 1:
        return match_seed
    return random.Random(f"coloretto match {match_seed} game {number}").randrange(2**63)


@dataclass(frozen=True)
class MatchProgress:
    """Where a game stands in its match: what a saved game of a match must
    remember so that the match can go on from it."""

    seed: int  #: the match's seed
    game_number: int  #: 1-based
    earlier_totals: tuple[int, ...]  #: each seat's points in the games before this one
    earlier_minus: tuple[int, ...]  #: each seat's minus points in those games (for the tie-break)

    def to_tags(self) -> dict[str, str]:
        return {
            MATCH_GAME_TAG: str(self.game_number),
            MATCH_SEED_TAG: str(self.seed),
            MATCH_TOTALS_TAG: ",".join(str(t) for t in self.earlier_totals),
            MATCH_MINUS_TAG: ",".join(str(m) for m in self.earlier_minus),
        }

    @classmethod
    def from_tags(cls, tags: dict[str, str], rules: Rules, seed: int) -> MatchProgress:
        """Read the tags of :meth:`to_tags`; ``seed`` stands in for a missing
        match seed (the record's own seed, as for game 1)."""
        players = rules.players

        def numbers(key: str) -> tuple[int, ...]:
            raw = tags.get(key)
            return tuple(int(v) for v in raw.split(",")) if raw else (0,) * players

        try:
            number = int(tags.get(MATCH_GAME_TAG, "1"))
            match_seed = int(tags.get(MATCH_SEED_TAG, str(seed)))
            totals = numbers(MATCH_TOTALS_TAG)
            minus = numbers(MATCH_MINUS_TAG)
        except ValueError:
            raise MatchError("the record's match tags are not whole numbers") from None
        for key, values in ((MATCH_TOTALS_TAG, totals), (MATCH_MINUS_TAG, minus)):
            if len(values) != players:
                raise MatchError(f"the record's {key} tag has {len(values)} numbers for {players} seats")
        if not 1 <= number <= rules.match_games:
            raise MatchError(f"the record says game {number}, but the match has {rules.match_games} games")
        return cls(match_seed, number, totals, minus)


class Match:
    """A match of ``rules.match_games`` games between the same seats.

    Play goes through :meth:`push` (and :meth:`pop`), which count a game's
    totals the moment it ends; :meth:`next_game` deals the next one when the
    table is ready for it.
    """

    def __init__(self, rules: Rules, seed: int, progress: MatchProgress | None = None) -> None:
        self.rules = rules
        self.seed = seed
        players = rules.players
        start = progress or MatchProgress(seed, 1, (0,) * players, (0,) * players)
        if start.seed != seed:
            raise MatchError(f"the progress belongs to the match of seed {start.seed}, not {seed}")
        self._first_game = start.game_number
        self._earlier_totals = start.earlier_totals
        self._earlier_minus = start.earlier_minus
        #: every game of the match dealt here, the current one last
        self.games: list[Game] = [Game.new(rules, seed=match_game_seed(seed, start.game_number))]
        #: the totals and minus points of each counted (finished) game
        self._counted: list[tuple[tuple[int, ...], tuple[int, ...]]] = []

    @classmethod
    def resume(cls, rules: Rules, progress: MatchProgress, game: Game) -> Match:
        """The match at ``progress``, going on with ``game`` (for example a
        saved game replayed), which must be that game of the match."""
        match = cls(rules, progress.seed, progress)
        if game.setup.seed != match.game.setup.seed:
            raise MatchError(
                f"this game is not game {progress.game_number} of the match of seed {progress.seed}"
            )
        match.games[-1] = game
        if game.is_over:
            match._count(game)
        return match

    # ---------------------------------------------------------------- state

    @property
    def game(self) -> Game:
        """The game being played (or just finished)."""
        return self.games[-1]

    @property
    def game_number(self) -> int:
        """1-based number of the current game."""
        return self._first_game + len(self.games) - 1

    @property
    def is_over(self) -> bool:
        return self.game_number == self.rules.match_games and self.game.is_over

    def progress(self, number: int | None = None) -> MatchProgress:
        """Where game ``number`` (1-based; by default the current one) stands in
        the match: what its record's tags say."""
        number = self.game_number if number is None else number
        index = number - self._first_game
        if not 0 <= index < len(self.games):
            raise MatchError(f"game {number} of this match has not been dealt here")
        earlier = self._counted[:index]
        players = self.rules.players
        totals = tuple(self._earlier_totals[s] + sum(t[s] for t, _ in earlier) for s in range(players))
        minus = tuple(self._earlier_minus[s] + sum(m[s] for _, m in earlier) for s in range(players))
        return MatchProgress(self.seed, number, totals, minus)

    def totals(self) -> tuple[int, ...]:
        """Each seat's points over the finished games."""
        players = self.rules.players
        return tuple(self._earlier_totals[s] + sum(t[s] for t, _ in self._counted) for s in range(players))

    def minus_points(self) -> tuple[int, ...]:
        """Each seat's minus points over the finished games (what the tie-break compares)."""
        players = self.rules.players
        return tuple(self._earlier_minus[s] + sum(m[s] for _, m in self._counted) for s in range(players))

    def running_totals(self) -> tuple[int, ...]:
        """The totals with the current game's scores as they stand now."""
        if self.game.is_over:
            return self.totals()
        scores = self.game.scores()
        return tuple(total + score.total for total, score in zip(self.totals(), scores))

    def winners(self) -> tuple[int, ...]:
        """Seats with the best match total (a tie is shared unless the rules break it)."""
        return winners_of(self.totals(), self.minus_points(), self.rules.tie_break)

    def result(self) -> dict[str, Any]:
        """The match's outcome as records and the web API write it (only once it is over)."""
        if not self.is_over:
            raise MatchError("the match is not over yet")
        return {"totals": list(self.totals()), "winners": list(self.winners())}

    # ----------------------------------------------------------------- play

    def push(self, action: Action, reveal: int | None = None) -> MoveEvent:
        """Play ``action`` in the current game (see :meth:`Game.push`); a game
        that ends is counted at once. Returns what the move did."""
        game = self.game
        game.push(action, reveal=reveal)
        if game.is_over:
            self._count(game)
        event = game.last_event()
        assert event is not None  # a move was just made
        return event

    def pop(self) -> Action:
        """Undo the current game's last move (uncounting the game if it had ended)."""
        game = self.game
        if game.is_over and len(self._counted) == len(self.games):
            self._counted.pop()
        return game.pop()

    def next_game(self) -> Game:
        """Deal the match's next game, once the current one is over."""
        if not self.game.is_over:
            raise MatchError("the current game is not over yet")
        if self.is_over:
            raise MatchError(f"the match of {self.rules.match_games} games is over")
        game = Game.new(self.rules, seed=match_game_seed(self.seed, self.game_number + 1))
        self.games.append(game)
        return game

    def _count(self, game: Game) -> None:
        scores = game.scores()
        self._counted.append((tuple(s.total for s in scores), tuple(s.minus_points for s in scores)))
