"""What clients see: the table state built from an engine Observation.

Only the Observation (everything public, never the deck order) and the log
of public moves go into these views; the setup of a game in progress is
never read here.
"""

from __future__ import annotations

from coloretto.cards import (
    COLOURS,
    EDITION_DECKS,
    GOLDEN_JOKER,
    JOKER,
    LAST_ROUND,
    PLUS_TWO,
    Edition,
    card_name,
    card_token,
)
from coloretto.game import Game, Observation
from coloretto.scoring import ScoreBreakdown
from coloretto.web.schemas import (
    Breakdown,
    CardInfo,
    ColourScore,
    DealResult,
    PlayerView,
    RowView,
)

_SPECIAL_SYMBOLS = {JOKER: "✦", GOLDEN_JOKER: "✪", PLUS_TWO: "+2", LAST_ROUND: "LR"}
_SPECIAL_KINDS = {
    JOKER: "joker",
    GOLDEN_JOKER: "golden-joker",
    PLUS_TWO: "plus-two",
    LAST_ROUND: "last-round",
}


def card_legend(edition: Edition) -> list[CardInfo]:
    """Every card's token, name and symbol (the symbol is what a colour-blind player reads)."""
    deck = EDITION_DECKS[edition]
    legend = [
        CardInfo(
            id=c,
            token=card_token(c, edition),
            name=card_name(c, edition),
            symbol=deck.colour_symbols[c],
            kind="colour",
        )
        for c in range(COLOURS)
    ]
    for card in (JOKER, GOLDEN_JOKER, PLUS_TWO, LAST_ROUND):
        legend.append(
            CardInfo(
                id=card,
                token=card_token(card, edition),
                name=card_name(card, edition),
                symbol=_SPECIAL_SYMBOLS[card],
                kind=_SPECIAL_KINDS[card],  # type: ignore[arg-type]
            )
        )
    return legend


def rows_view(obs: Observation) -> list[RowView]:
    return [
        RowView(cards=list(cards), capacity=cap, taken=taken)
        for cards, cap, taken in zip(obs.rows, obs.row_capacities, obs.rows_taken)
    ]


def players_view(obs: Observation) -> list[PlayerView]:
    return [
        PlayerView(
            seat=seat,
            collection=list(obs.collections[seat]),
            named_jokers=[tuple(p) for p in obs.named_jokers[seat]],  # type: ignore[misc]
            score=obs.scores[seat],
            out=obs.out_this_round[seat],
        )
        for seat in range(obs.rules.players)
    ]


def breakdown_view(seat: int, breakdown: ScoreBreakdown, game: Game) -> Breakdown:
    def colour_scores(colours: tuple[int, ...]) -> list[ColourScore]:
        return [
            ColourScore(colour=c, cards=breakdown.counts[c], points=breakdown.colour_points[c])
            for c in colours
        ]

    return Breakdown(
        seat=seat,
        joker_colours=list(breakdown.joker_colours),
        named_jokers=[tuple(p) for p in game.named_jokers(seat)],  # type: ignore[misc]
        plus_colours=colour_scores(breakdown.plus_colours),
        minus_colours=colour_scores(breakdown.minus_colours),
        plus_twos=game.collection(seat)[PLUS_TWO],
        plus_two_points=breakdown.plus_two_points,
        total=breakdown.total,
    )


def deal_result(deal: int, game: Game) -> DealResult:
    """The scoring of a finished game: every choice the optimiser made, and the winners."""
    scores = game.scores()
    return DealResult(
        deal=deal,
        breakdowns=[breakdown_view(seat, b, game) for seat, b in enumerate(scores)],
        totals=[b.total for b in scores],
        winners=list(game.winners()),
    )
