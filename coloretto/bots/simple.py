"""The baseline bots: ``random`` and ``greedy``."""

from __future__ import annotations

from coloretto.actions import DRAW, Action, ActionKind
from coloretto.bots.base import Bot
from coloretto.game import Observation
from coloretto.scoring import best_score


class RandomBot(Bot):
    """Plays a uniformly random legal action."""

    name = "random"

    def choose(self, observation: Observation) -> Action:
        actions = observation.legal_actions
        return actions[self.rng.randrange(len(actions))]


def score_now(observation: Observation, seat: int, extra: tuple[int, ...] = ()) -> int:
    """Seat's best total if it also had the ``extra`` cards (a row, say)."""
    counts = list(observation.collections[seat])
    for card in extra:
        counts[card] += 1
    rules = observation.rules
    return best_score(counts, rules.colours, rules.table, rules.plus_colours).total


def row_gain(observation: Observation, seat: int, cards: tuple[int, ...]) -> int:
    """How much taking ``cards`` raises the seat's best score."""
    return score_now(observation, seat, cards) - score_now(observation, seat)


class GreedyBot(Bot):
    """Takes the row that most raises its best score if that beats the
    expected value of drawing; otherwise draws, and places the card where it
    helps itself most and the opponents still in the round least."""

    name = "greedy"

    def choose(self, observation: Observation) -> Action:
        actions = observation.legal_actions
        if len(actions) == 1:
            return actions[0]
        me = observation.player
        first = actions[0].kind
        if first is ActionKind.PLACE:
            return self._place(observation, actions)
        if first is ActionKind.NAME_JOKER:
            return max(actions, key=lambda a: score_now(observation, me, (a.index,)))
        if first is ActionKind.CHOOSE_START:
            # Before any card is seen every free colour has as many cards left: any will do.
            return actions[self.rng.randrange(len(actions))]
        return self._turn(observation, actions)

    def _turn(self, obs: Observation, actions: tuple[Action, ...]) -> Action:
        me = obs.player
        takes = [a for a in actions if a.kind is ActionKind.TAKE]
        best_take = max(takes, key=lambda a: row_gain(obs, me, obs.rows[a.index]), default=None)
        if DRAW not in actions:
            assert best_take is not None
            return best_take
        if best_take is None:
            return DRAW
        take_value = row_gain(obs, me, obs.rows[best_take.index])
        return best_take if take_value >= self._draw_value(obs) else DRAW

    def _draw_value(self, obs: Observation) -> float:
        """Expected gain of the best open row after one more card is added."""
        me = obs.player
        total = sum(obs.unseen_composition)
        if not total:
            return float("-inf")
        open_rows = [
            i
            for i, cards in enumerate(obs.rows)
            if not obs.rows_taken[i] and len(cards) < obs.row_capacities[i]
        ]
        expected = 0.0
        for card, count in enumerate(obs.unseen_composition):
            if count:
                best = max(row_gain(obs, me, (*obs.rows[i], card)) for i in open_rows)
                expected += count / total * best
        return expected

    def _place(self, obs: Observation, actions: tuple[Action, ...]) -> Action:
        me = obs.player
        card = obs.pending_card
        assert card is not None
        rivals = [s for s in range(obs.rules.players) if s != me and not obs.out_this_round[s]]

        def merit(action: Action) -> tuple[int, int]:
            row = (*obs.rows[action.index], card)
            mine = row_gain(obs, me, row)
            theirs = max((row_gain(obs, s, row) for s in rivals), default=0)
            return (mine - theirs, -len(row))

        return max(actions, key=merit)
