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
* **Placing.** Every player takes one row a round, so a drawn card goes where
  it raises the bot's *best row* most (weighted by the chance that the bot
  gets it) less what it raises each opponent's best row, for the opponents
  still in the round, the next one to act weighing most. A card that helps a
  rival is put where it does not make their best row better (beside a row
  they like more, or in a row of cards they do not want), a card the bot does
  not want goes where it spoils none of its own good rows, and two cards an
  opponent likes are not stacked into one row for them.
* **Two players** (rows of 1, 2 and 3 cards, five colours, the row nobody
  takes thrown away). Whoever takes a row first leaves the other alone with
  the rest: free to draw until they like a row, filling it with the cards
  that help them and the row that will be thrown away with those that do not.
  So a take costs what the opponent can expect to make of the other rows
  alone (the best of them filled with the share of the unseen cards that
  helps them, as far as the other rows have room for the rest), and the bot
  does not leave the round early with one or two cards. Alone in the round
  itself, it keeps its best row clean and puts unwanted cards on the row it
  will leave. Its prospects count on a player collecting 35 % of the cards
  still to come, not half of them: part of every round goes out with the row
  nobody takes (a tuned figure).
* **Time.** The prospects shrink as the last-round card approaches (its
  position is public), and vanish in the last round.
* **Naming jokers** (variant): the colour that maximises the value.

The weights live in :data:`STYLES`, one :class:`Style` per number of players.
It is deterministic except for ties, which the seeded generator breaks.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from coloretto.actions import DRAW, Action, ActionKind
from coloretto.bots.base import Bot
from coloretto.game import Observation
from coloretto.rules import SCORE_TABLES, PlusColours, Rules, Table
from coloretto.scoring import best_score


@dataclass(frozen=True)
class Style:
    """The bot's weights; :data:`STYLES` holds one per number of players."""

    #: share of the cards a player still collects that land in their plus colours
    prospect_share: float = 0.6
    #: share of the cards still to come before the last round that one player collects
    collected_share: float | None = None
    #: chance that an opponent still in the round takes the row the bot is waiting for
    snatch_risk: float = 0.05
    #: how much the bot trusts that it gets the row it improves by placing a card
    own_row_weight: float = 0.5
    #: weights of opponents still in the round, in the order they act after the bot
    rival_weights: tuple[float, ...] = (1.0, 0.7, 0.5, 0.4)
    #: two players: how much of what the opponent, left alone, makes of the other rows a take costs
    leave_cost: float = 0.0


STYLES: dict[int, Style] = {
    2: Style(collected_share=0.35, leave_cost=1.0),
    3: Style(),
    4: Style(),
    5: Style(),
}


@lru_cache(maxsize=1 << 16)
def _value(
    counts: tuple[int, ...],
    colours: int,
    table: Table,
    plus_rule: PlusColours,
    expected_cards: float,
    prospect_share: float,
) -> float:
    """A collection's best score plus its prospects (see the module docstring)."""
    breakdown = best_score(counts, colours, table, plus_rule)
    if expected_cards <= 0:
        return float(breakdown.total)
    points = SCORE_TABLES[table]
    per_colour = prospect_share * expected_cards / 3
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
    #: the weights per number of players (an experiment may give the bot others)
    styles: dict[int, Style] = STYLES

    def style(self, obs: Observation) -> Style:
        return self.styles[obs.rules.players]

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
        share = self.style(obs).collected_share
        # every card above the last-round card will be dealt out over the players
        if share is None:
            return obs.cards_before_last_round / obs.rules.players
        return obs.cards_before_last_round * share

    def _collection_value(self, obs: Observation, seat: int, extra: tuple[int, ...]) -> float:
        counts = list(obs.collections[seat])
        for card in extra:
            counts[card] += 1
        rules: Rules = obs.rules
        return _value(
            tuple(counts),
            rules.colours,
            rules.table,
            rules.plus_colours,
            self._expected_cards(obs, seat),
            self.style(obs).prospect_share,
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
        cost = self._leave_costs(obs)
        values = {
            a.index: self._row_value(obs, me, obs.rows[a.index]) - cost.get(a.index, 0.0) for a in takes
        }
        if DRAW not in actions:
            return self._best(tuple(takes), lambda a: values[a.index])
        draw_value = self._draw_value(obs, values, cost)
        best_take = max(takes, key=lambda a: values[a.index], default=None)
        if best_take is not None and values[best_take.index] >= draw_value:
            return self._best(tuple(takes), lambda a: values[a.index])
        return DRAW

    def _leave_costs(self, obs: Observation) -> dict[int, float]:
        """Two players: taking a row leaves the opponent alone with the others,
        free to fill one with their colours and the rest with their junk."""
        rivals = self._rivals(obs)
        weight = self.style(obs).leave_cost
        if obs.rules.players != 2 or not rivals or not weight:
            return {}
        open_rows = [i for i in range(len(obs.rows)) if not obs.rows_taken[i]]
        return {
            i: weight * self._solo_value(obs, rivals[0], [j for j in open_rows if j != i]) for i in open_rows
        }

    def _draw_value(self, obs: Observation, take_values: dict[int, float], cost: dict[int, float]) -> float:
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
        keep = (1.0 - self.style(obs).snatch_risk) ** rivals
        expected = 0.0
        for card, count in enumerate(unseen):
            if not count:
                continue
            best = max(self._row_value(obs, me, (*obs.rows[i], card)) - cost.get(i, 0.0) for i in open_rows)
            others = max(take_values.values(), default=float("-inf"))
            expected += count / total * max(best, others)
        # a row that is not taken now may be taken by a rival; waiting with
        # nothing worth having left is also a risk: the last row may be bad
        return expected * keep if expected > 0 else expected - (1 - keep) * 2

    def _place(self, obs: Observation, actions: tuple[Action, ...]) -> Action:
        card = obs.pending_card
        assert card is not None
        rivals = self._rivals(obs)
        return self._best(actions, lambda a: self._place_merit(obs, a.index, card, rivals))

    def _place_merit(self, obs: Observation, row_index: int, card: int, rivals: list[int]) -> float:
        """Each player takes one row a round: a placement is worth what it adds
        to the bot's best row, less what it adds to each rival's best row."""
        style = self.style(obs)
        open_rows = [i for i in range(len(obs.rows)) if not obs.rows_taken[i]]

        def best_row(seat: int, grown: int) -> float:
            """The seat's best row, with the card in row ``grown`` (-1: nowhere)."""
            values = [
                self._row_value(obs, seat, (*obs.rows[i], card) if i == grown else obs.rows[i])
                for i in open_rows
                if obs.rows[i] or i == grown
            ]
            return max(values, default=0.0)

        mine = best_row(obs.player, row_index) - best_row(obs.player, -1)
        harm = 0.0
        for weight, seat in zip(style.rival_weights, rivals):
            # a rival's best row worth less than nothing is a row they need not take
            harm += weight * (max(0.0, best_row(seat, row_index)) - max(0.0, best_row(seat, -1)))
        return style.own_row_weight * mine - harm

    def _solo_value(self, obs: Observation, seat: int, open_rows: list[int]) -> float:
        """What ``seat``, left alone in the round with ``open_rows``, can expect
        to take: the best of those rows filled with the cards that help it,
        the others taking the cards that do not while they have room."""
        unseen = obs.unseen_composition
        total = sum(unseen)
        best = 0.0
        for i in open_rows:
            row = obs.rows[i]
            base = self._row_value(obs, seat, row) if row else 0.0
            value = base if row else float("-inf")
            free = obs.row_capacities[i] - len(row)
            dump = sum(obs.row_capacities[j] - len(obs.rows[j]) for j in open_rows if j != i)
            # no more draws than the deck holds (it may run out with a house-rule last-round card)
            draws = min(free + dump, obs.cards_in_deck)
            if free and total:
                helps = 0.0
                weight = 0.0
                for card, count in enumerate(unseen):
                    if count:
                        step = self._row_value(obs, seat, (*row, card)) - base
                        if step > 0:
                            helps += count * step
                            weight += count
                if weight:
                    chance = weight / total
                    accepted = min(float(free), chance * draws)
                    value = max(value, base + accepted * helps / weight)
            best = max(best, value)
        return best
