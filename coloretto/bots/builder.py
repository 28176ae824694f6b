"""``builder``: a sparring partner in the style of the simple public Coloretto bots.

It builds its best three colours and looks no further than its own collection:

* **What a row is worth.** A row's *gain* is how much taking it raises the
  bot's best score now (:func:`coloretto.scoring.best_score`, the rules'
  table and plus-colour rule): cards of its best three colours add their
  table steps, a card of a fourth or later colour counts against it as minus
  points, a joker goes where it helps most, a "+2" adds 2.
* **Take or draw.** It takes its best row when the gain reaches a threshold
  that falls as the open rows fill: :data:`TAKE_WHEN_EMPTY` points while the
  open rows are empty, down to :data:`TAKE_WHEN_FULL` when they are full
  (linear in the share of their room already used). With room left and no
  row worth that much it draws; when no row can take a card it takes its
  best row whatever it is worth.
* **Placing.** A drawn card goes on the open row where it adds most to that
  row's gain (what the card is worth to the bot in that row's company, a
  junk card where it spoils least); ties go to the emptiest row, so that a
  row nearly ready to take is left as it is, then to a seeded coin.
* **Naming jokers** (variant): the colour that scores best now. **Starting
  colours** (variant): any free colour, by the seeded coin (before a card is
  seen each has as many cards left).

It never looks at its opponents: it does not wait for cards, guard rows or
dump cards on others. Deterministic except for ties, broken by the seeded
generator.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from coloretto.actions import DRAW, Action, ActionKind
from coloretto.bots.base import Bot
from coloretto.game import Observation
from coloretto.scoring import best_score

#: gain (points) a row must add before the bot takes it while the open rows are empty
TAKE_WHEN_EMPTY = 10.0
#: gain a row must add before the bot takes it once the open rows are full
TAKE_WHEN_FULL = 4.0
#: how much lower the threshold is for each opponent after the first still in the round
PER_RIVAL = 0.5


def gain(observation: Observation, cards: tuple[int, ...]) -> int:
    """How much taking ``cards`` raises the mover's best score now."""
    counts = list(observation.collections[observation.player])
    rules = observation.rules
    before = best_score(counts, rules.colours, rules.table, rules.plus_colours).total
    for card in cards:
        counts[card] += 1
    return best_score(counts, rules.colours, rules.table, rules.plus_colours).total - before


def take_threshold(
    observation: Observation,
    when_empty: float = TAKE_WHEN_EMPTY,
    when_full: float = TAKE_WHEN_FULL,
    per_rival: float = PER_RIVAL,
) -> float:
    """The gain that makes a row worth taking now: ``when_empty`` while the
    open rows are empty (more cards will come), falling linearly to
    ``when_full`` as their room is used."""
    capacity = room = 0
    for cards, size, taken in zip(observation.rows, observation.row_capacities, observation.rows_taken):
        if not taken:
            capacity += size
            room += size - len(cards)
    used = 1.0 - room / capacity if capacity else 1.0
    rivals = sum(not out for out in observation.out_this_round) - 1
    return when_empty + (when_full - when_empty) * used - per_rival * max(rivals - 1, 0)


class BuilderBot(Bot):
    """Builds its best three colours and ignores its opponents; see the module docstring."""

    name = "builder"
    take_when_empty = TAKE_WHEN_EMPTY
    take_when_full = TAKE_WHEN_FULL
    per_rival = PER_RIVAL

    def choose(self, observation: Observation) -> Action:
        actions = observation.legal_actions
        if len(actions) == 1:
            return actions[0]
        first = actions[0].kind
        if first is ActionKind.PLACE:
            return self._place(observation, actions)
        if first is ActionKind.NAME_JOKER:
            return self._best(actions, lambda a: (gain(observation, (a.index,)),))
        if first is ActionKind.CHOOSE_START:
            return actions[self.rng.randrange(len(actions))]
        return self._turn(observation, actions)

    def _best(self, actions: Sequence[Action], merit: Callable[[Action], tuple[int, ...]]) -> Action:
        """The action of highest merit (a tuple compared in order); the seeded coin breaks ties."""
        scored = [(merit(a), self.rng.random(), a) for a in actions]
        return max(scored, key=lambda t: (t[0], t[1]))[2]

    def _turn(self, obs: Observation, actions: tuple[Action, ...]) -> Action:
        takes = [a for a in actions if a.kind is ActionKind.TAKE]
        if not takes:
            return DRAW
        best = self._best(takes, lambda a: (gain(obs, obs.rows[a.index]),))
        if DRAW not in actions or gain(obs, obs.rows[best.index]) >= take_threshold(
            obs, self.take_when_empty, self.take_when_full, self.per_rival
        ):
            return best
        return DRAW

    def _place(self, obs: Observation, actions: tuple[Action, ...]) -> Action:
        card = obs.pending_card
        assert card is not None

        def merit(action: Action) -> tuple[int, int]:
            row = obs.rows[action.index]
            added = gain(obs, (*row, card)) - gain(obs, row)
            return (added, -len(row))

        return self._best(actions, merit)
