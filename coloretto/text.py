"""A plain-text picture of a position, for logs, ``render_mode="ansi"`` and
OpenSpiel's state strings. Pure: it builds a string and prints nothing."""

from __future__ import annotations

from coloretto.cards import COLOURS, GOLDEN_JOKER, JOKER, PLUS_TWO, Edition, card_token
from coloretto.game import Observation


def collection_text(counts: tuple[int, ...], edition: Edition) -> str:
    parts = [f"{card_token(c, edition)}×{counts[c]}" for c in range(COLOURS) if counts[c]]
    for card in (JOKER, GOLDEN_JOKER, PLUS_TWO):
        if counts[card]:
            parts.append(f"{card_token(card)}×{counts[card]}")
    return " ".join(parts) or "-"


def board_text(obs: Observation) -> str:
    """Rows, drawn card, collections with scores, deck counters, whose turn."""
    edition = obs.rules.edition
    lines = [f"round {obs.round}" + (" (last round)" if obs.last_round else "")]
    for i, (cards, cap) in enumerate(zip(obs.rows, obs.row_capacities, strict=True)):
        shown = [card_token(c, edition) for c in cards] + ["."] * (cap - len(cards))
        state = " taken" if obs.rows_taken[i] else ""
        lines.append(f"row {i + 1}: [{' '.join(shown)}]{state}")
    if obs.pending_card is not None:
        lines.append(f"drawn: {card_token(obs.pending_card, edition)}")
    for seat, counts in enumerate(obs.collections):
        marks = []
        if obs.to_move == seat:
            marks.append("to move")
        if obs.out_this_round[seat]:
            marks.append("out")
        mark = f" ({', '.join(marks)})" if marks else ""
        lines.append(f"seat {seat + 1}{mark}: {collection_text(counts, edition)} = {obs.scores[seat]}")
    before = obs.cards_before_last_round
    lines.append(
        f"deck: {obs.cards_in_deck} cards"
        + (f", {before} before the last-round card" if before is not None else "")
    )
    if obs.is_over:
        lines.append("game over")
    return "\n".join(lines)
