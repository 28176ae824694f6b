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

Rulings where the sources are silent (docs/user/rules.md asks for them to be written down):

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

from coloretto.game.dealing import GameSetup, SetupError, deal, stand_in_deck
from coloretto.game.events import MoveEvent
from coloretto.game.illegal import IllegalActionError
from coloretto.game.observation import Observation
from coloretto.game.state import Game, earns_bonus_card

__all__ = [
    "Game",
    "GameSetup",
    "IllegalActionError",
    "MoveEvent",
    "Observation",
    "SetupError",
    "deal",
    "earns_bonus_card",
    "stand_in_deck",
]
