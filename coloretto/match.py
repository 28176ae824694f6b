"""Match play: several games with running totals and an overall winner.

Two sources play Coloretto as a match ("the player with the most points after
four games"); ``Rules(match_games=4)`` says how long a match is. Each game of
a match is dealt from a seed derived from the match's seed, so the same seed
gives the same match.
"""

from __future__ import annotations

import random

from coloretto.game import Game
from coloretto.rules import Rules
from coloretto.scoring import winners_of


class MatchError(ValueError):
    """A match used out of order (a new game before the last one ended, …)."""


class Match:
    """A match of ``rules.match_games`` games between the same seats."""

    def __init__(self, rules: Rules, seed: int) -> None:
        self.rules = rules
        self.seed = seed
        rng = random.Random(seed)
        self.game_seeds = tuple(rng.randrange(2**63) for _ in range(rules.match_games))
        self.finished: list[tuple[int, ...]] = []  #: each finished game's totals
        self._minus: list[tuple[int, ...]] = []  #: each finished game's minus points
        self._counted = False  #: whether the current game's totals are in ``finished``
        self.game: Game = Game.new(rules, seed=self.game_seeds[0])

    @property
    def game_number(self) -> int:
        """1-based number of the current game."""
        return len(self.finished) + (0 if self._counted else 1)

    def finish_game(self) -> tuple[int, ...]:
        """Add the current (finished) game's totals to the match."""
        if not self.game.is_over:
            raise MatchError("the current game is not over yet")
        if self._counted:
            raise MatchError("this game's totals are already counted")
        scores = self.game.scores()
        totals = tuple(s.total for s in scores)
        self.finished.append(totals)
        self._minus.append(tuple(s.minus_points for s in scores))
        self._counted = True
        return totals

    def next_game(self) -> Game:
        """Deal the match's next game."""
        if not self._counted:
            raise MatchError("finish the current game first")
        if self.is_over:
            raise MatchError(f"the match of {self.rules.match_games} games is over")
        self.game = Game.new(self.rules, seed=self.game_seeds[len(self.finished)])
        self._counted = False
        return self.game

    @property
    def is_over(self) -> bool:
        return len(self.finished) == self.rules.match_games

    def totals(self) -> tuple[int, ...]:
        """Running totals over the finished games."""
        return tuple(sum(game[seat] for game in self.finished) for seat in range(self.rules.players))

    def winners(self) -> tuple[int, ...]:
        """Seats with the highest running total (a tie is shared unless a tie-break is chosen)."""
        minus = [sum(game[seat] for game in self._minus) for seat in range(self.rules.players)]
        return winners_of(self.totals(), minus, self.rules.tie_break)
