"""``heuristic``: expert-style play without search.

The bot values a collection as its best score now *plus its prospects*: each
of the player's (likely) three plus colours is worth the points its next cards
would add (from the scoring table, so under the violet table growing a colour
past three is a loss), times the number of cards the player can still expect
to collect, split over those colours. A row is valued as a package: the change
of that value if the player took it, so a fourth colour costs its minus points
at once and loses nothing of its prospects, a "+2" is worth 2, and a joker goes
where the optimiser puts it.

* **Take or draw.** Drawing is worth the expected value of the best row after
  one more card (over the known unseen cards), discounted for every opponent
  still in the round who may take that row first; the bot takes its best row
  when that is worth more (and always when it cannot draw).
* **Placing.** A drawn card goes where it raises the row's value to the bot
  (weighted by the chance that the bot gets that row) minus what it raises the
  row's value to each opponent still in the round, the next one to act
  weighing most: the bot does not put an opponent's best colour where they can
  take it, and dumps unwanted cards on the rows its opponents want.
* **Time.** The prospects shrink as the last-round card approaches (its
  position is public), and vanish in the last round.
* **Naming jokers** (variant): the colour that maximises the value.

It is deterministic except for ties, which the seeded generator breaks.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache

from coloretto.actions import DRAW, Action, ActionKind
from coloretto.bots.base import Bot
from coloretto.game import Observation
from coloretto.rules import SCORE_TABLES, PlusColours, Rules, Table
from coloretto.scoring import best_score

#: share of the cards a player still collects that land in their plus colours
PROSPECT_SHARE = 0.6
#: chance that an opponent still in the round takes the row the bot is waiting for
SNATCH_RISK = 0.05
#: how much the bot trusts that it gets the row it improves by placing a card
OWN_ROW_WEIGHT = 0.5
#: weights of opponents still in the round, in the order they act after the bot
RIVAL_WEIGHTS = (1.0, 0.7, 0.5, 0.4)


@lru_cache(maxsize=1 << 16)
def _value(
    counts: tuple[int, ...], colours: int, table: Table, plus_rule: PlusColours, expected_cards: float
) -> float:
    """A collection's best score plus its prospects (see the module docstring)."""
    breakdown = best_score(counts, colours, table, plus_rule)
    if expected_cards <= 0:
        return float(breakdown.total)
    points = SCORE_TABLES[table]
    per_colour = PROSPECT_SHARE * expected_cards / 3
    prospects = 0.0
    for colour in breakdown.plus_colours:
        n = breakdown.counts[colour]
        step = points[min(n + 1, 6)] - points[min(n, 6)]
        prospects += step * min(per_colour, 2.0)
    # fewer than three colours: room for a new one that scores plus
    missing = 3 - len(breakdown.plus_colours)
    prospects += missing * points[1] * min(per_colour, 1.0)
    return breakdown.total + prospects


class HeuristicBot(Bot):
    """Expert-style rules of thumb; see the module docstring."""

    name = "heuristic"

    def choose(self, observation: Observation) -> Action:
        actions = observation.legal_actions
        if len(actions) == 1:
            return actions[0]
        first = actions[0].kind
        if first is ActionKind.PLACE:
            return self._place(observation, actions)
        if first in (ActionKind.NAME_JOKER, ActionKind.CHOOSE_START):
            me = observation.player
            return self._best(actions, lambda a: self._collection_value(observation, me, (a.index,)))
        return self._turn(observation, actions)

    # ---------------------------------------------------------------- values

    def _expected_cards(self, obs: Observation, seat: int) -> float:
        """Cards ``seat`` may still collect after this round (roughly)."""
        if obs.cards_before_last_round is None:
            return 0.0
        # every card above the last-round card will be dealt out over the players
        return obs.cards_before_last_round / obs.rules.players

    def _collection_value(self, obs: Observation, seat: int, extra: tuple[int, ...]) -> float:
        counts = list(obs.collections[seat])
        for card in extra:
            counts[card] += 1
        rules: Rules = obs.rules
        return _value(
            tuple(counts), rules.colours, rules.table, rules.plus_colours, self._expected_cards(obs, seat)
        )

    def _row_value(self, obs: Observation, seat: int, cards: tuple[int, ...]) -> float:
        """What taking ``cards`` is worth to ``seat``."""
        return self._collection_value(obs, seat, cards) - self._collection_value(obs, seat, ())

    def _best(self, actions: tuple[Action, ...], merit: Callable[[Action], float]) -> Action:
        scored = [(merit(a), self.rng.random(), a) for a in actions]
        return max(scored, key=lambda t: (t[0], t[1]))[2]

    def _rivals(self, obs: Observation) -> list[int]:
        """Opponents still in the round, in the order they act after the bot."""
        n = obs.rules.players
        me = obs.player
        return [(me + k) % n for k in range(1, n) if not obs.out_this_round[(me + k) % n]]

    # ------------------------------------------------------------- decisions

    def _turn(self, obs: Observation, actions: tuple[Action, ...]) -> Action:
        me = obs.player
        takes = [a for a in actions if a.kind is ActionKind.TAKE]
        values = {a.index: self._row_value(obs, me, obs.rows[a.index]) for a in takes}
        if DRAW not in actions:
            return self._best(tuple(takes), lambda a: values[a.index])
        draw_value = self._draw_value(obs, values)
        best_take = max(takes, key=lambda a: values[a.index], default=None)
        if best_take is not None and values[best_take.index] >= draw_value:
            return self._best(tuple(takes), lambda a: values[a.index])
        return DRAW

    def _draw_value(self, obs: Observation, take_values: dict[int, float]) -> float:
        """Expected value of drawing now and taking the best row later."""
        me = obs.player
        unseen = obs.unseen_composition
        total = sum(unseen)
        if not total:
            return float("-inf")
        open_rows = [
            i
            for i, cards in enumerate(obs.rows)
            if not obs.rows_taken[i] and len(cards) < obs.row_capacities[i]
        ]
        rivals = len(self._rivals(obs))
        keep = (1.0 - SNATCH_RISK) ** rivals
        expected = 0.0
        for card, count in enumerate(unseen):
            if not count:
                continue
            best = max(self._row_value(obs, me, (*obs.rows[i], card)) for i in open_rows)
            others = max(take_values.values(), default=float("-inf"))
            expected += count / total * max(best, others)
        # a row that is not taken now may be taken by a rival; waiting with
        # nothing worth having left is also a risk: the last row may be bad
        return expected * keep if expected > 0 else expected - (1 - keep) * 2

    def _place(self, obs: Observation, actions: tuple[Action, ...]) -> Action:
        me = obs.player
        card = obs.pending_card
        assert card is not None
        rivals = self._rivals(obs)

        def merit(action: Action) -> float:
            row = obs.rows[action.index]
            grown = (*row, card)
            mine = self._row_value(obs, me, grown) - (self._row_value(obs, me, row) if row else 0.0)
            if not rivals:
                return mine
            harm = 0.0
            for weight, seat in zip(RIVAL_WEIGHTS, rivals):
                before = max(0.0, self._row_value(obs, seat, row)) if row else 0.0
                after = max(0.0, self._row_value(obs, seat, grown))
                harm += weight * (after - before)
            return OWN_ROW_WEIGHT * mine - harm

        return self._best(actions, merit)
