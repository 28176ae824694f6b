"""What clients see: the table state built from an engine Observation, the lobby's summaries and replays.

Only the Observation (everything public, never the deck order) and the log
of public moves go into these views; the setup of a game in progress is
never read here.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from coloretto.cards import (
    COLLECTABLE_KINDS,
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
from coloretto.rules import Rules
from coloretto.scoring import ScoreBreakdown
from coloretto.web.common.schemas import (
    Breakdown,
    CardInfo,
    ClockSpec,
    ClockView,
    ColourScore,
    DealResult,
    GameSummary,
    LogEntry,
    MatchView,
    PlayerView,
    Replay,
    ReplayFrame,
    RowView,
    RulePart,
    SeatView,
    TableState,
)
from coloretto.web.table.changes import NOT_IN_VIEW
from coloretto.web.table.live import LiveGame, SeatState, iso, now_utc, seat_label

_SPECIAL_SYMBOLS = {JOKER: "✦", GOLDEN_JOKER: "✪", PLUS_TWO: "+2", LAST_ROUND: "LR"}
_SPECIAL_KINDS = {
    JOKER: "joker",
    GOLDEN_JOKER: "golden-joker",
    PLUS_TWO: "plus-two",
    LAST_ROUND: "last-round",
}


@functools.cache
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


@functools.cache
def card_legend_json(edition: Edition) -> str:
    return "[" + ",".join(card.model_dump_json() for card in card_legend(edition)) + "]"


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


# ------------------------------------------------------------------ tables


# A state is made for every move: what cannot change is made once (pydantic models are not
# changed once made, so one object serves every state).


@functools.lru_cache(maxsize=1024)
def rules_dict(rules: Rules) -> dict[str, Any]:
    return rules.to_dict()


@functools.lru_cache(maxsize=1024)
def rules_text(rules: Rules) -> str:
    return rules.describe()


@functools.lru_cache(maxsize=1024)
def rules_summary(rules: Rules) -> tuple[RulePart, ...]:
    return tuple(RulePart(option=name, value=value) for name, value in rules.summary())


def finished_deal(live: LiveGame, deal: int) -> DealResult:
    """The scoring of a game of the match that is over: it never changes, so it is worked out once."""
    game = live.games[deal - 1]
    cached = live.deal_results.get(deal)
    if cached is None or cached[0] is not game:
        cached = (game, deal_result(deal, game))
        live.deal_results[deal] = cached
    return cached[1]


def seat_views(seats: list[SeatState], online: set[int]) -> list[SeatView]:
    return [
        SeatView(
            seat=i,
            kind=s.kind,  # type: ignore[arg-type]
            bot=s.bot,
            name=seat_label(i, s) if (s.name or s.kind == "bot") else None,
            free=s.kind == "human" and not s.name,
            online=i in online,
            away=s.away,
            resigned=s.resigned,
            account=s.user_id is not None and bool(s.name) and not s.deleted,
            reserved=s.reserved,
            deleted=s.deleted,
        )
        for i, s in enumerate(seats)
    ]


def clock_spec(move_seconds: int | None, game_seconds: int | None) -> ClockSpec | None:
    if move_seconds is None and game_seconds is None:
        return None
    return ClockSpec(move_seconds=move_seconds, game_seconds=game_seconds)


@dataclass(frozen=True)
class ListedGame:
    """A game as the lobby lists it, read from the database: a game not held in memory here."""

    id: str
    name: str
    status: str
    rules: Rules
    seats: list[SeatState]
    moves: int
    created_at: datetime
    updated_at: datetime
    result: dict[str, Any] | None
    move_seconds: int | None
    game_seconds: int | None
    rated: bool = False
    private: bool = False
    creator_seat: int | None = None
    rematch_id: str | None = None
    rematch_of: str | None = None
    stop_reason: str | None = None


def summary(live: LiveGame) -> GameSummary:
    return _summary(
        live.id, live.name, live.status, live.rules, seat_views(live.seats, live.online()),
        live.move_count, live.created_at, live.updated_at,
        live.match.result() if live.match.is_over else None, live.move_seconds, live.game_seconds,
        **_table_flags(live),
    )  # fmt: skip


def listed_summary(game: ListedGame) -> GameSummary:
    """A game the server does not hold in memory, as the lobby lists it."""
    return _summary(
        game.id, game.name, game.status, game.rules, seat_views(game.seats, set()),
        game.moves, game.created_at, game.updated_at,
        game.result, game.move_seconds, game.game_seconds,
        **_table_flags(game),
    )  # fmt: skip


def _table_flags(game: LiveGame | ListedGame) -> dict[str, Any]:
    return {
        "rated": game.rated,
        "private": game.private,
        "creator_seat": game.creator_seat,
        "rematch": game.rematch_id,
        "rematch_of": game.rematch_of,
        "stop_reason": game.stop_reason,
    }


def _summary(
    game_id: str,
    name: str,
    status: str,
    rules: Rules,
    seats: list[SeatView],
    moves: int,
    created_at: datetime,
    updated_at: datetime,
    result: dict[str, Any] | None,
    move_seconds: int | None,
    game_seconds: int | None,
    **flags: Any,
) -> GameSummary:
    return GameSummary(
        id=game_id,
        name=name,
        status=status,  # type: ignore[arg-type]
        rules=rules_dict(rules),
        rules_text=rules_text(rules),
        rules_summary=list(rules_summary(rules)),
        seats=seats,
        moves=moves,
        created_at=iso(created_at),
        updated_at=iso(updated_at),
        winners=result["winners"] if result else None,
        totals=result["totals"] if result else None,
        clock=clock_spec(move_seconds, game_seconds),
        **flags,
    )


def clock_view(live: LiveGame, now: datetime) -> ClockView | None:
    if not live.timed:
        return None
    deadline = live.turn_deadline()
    banks = None
    if live.game_seconds is not None:
        banks = [round(live.bank_left(i) or 0.0, 1) for i in range(len(live.seats))]
        seat = live.game.to_move
        if deadline is not None and seat is not None:  # the bank of the seat to move is running
            banks[seat] = round(max(0.0, banks[seat] - live.time_spent(now)), 1)
    return ClockView(
        move_seconds=live.move_seconds,
        game_seconds=live.game_seconds,
        deadline=iso(deadline) if deadline is not None else None,
        seconds_left=round(max(0.0, (deadline - now).total_seconds()), 1) if deadline is not None else None,
        banks=banks,
    )


def table_state(live: LiveGame, seat: int | None, bot_delay: float, *, with_log: bool = True) -> TableState:
    """One seat's (or a spectator's, seat None) view of the table; ``with_log=False`` leaves the
    log and the card legend empty, for the live messages, which put them in as JSON written once
    (see :mod:`coloretto.web.runtime.broadcast`)."""
    game = live.game
    obs = game.observation(seat if seat is not None else 0)
    deal_results = [finished_deal(live, i + 1) for i, g in enumerate(live.games) if g.is_over]
    match = MatchView(
        games=live.rules.match_games,
        current=live.deal,
        totals=list(live.match.totals()),
        deals=deal_results,
        winners=live.match.result()["winners"] if live.match.is_over else None,
    )
    playing = live.status == "playing"
    return TableState(
        game=summary(live),
        you=seat,
        move_number=live.move_count,
        deal=live.deal,
        round=obs.round,
        to_move=obs.to_move if playing else None,
        last_round=obs.last_round,
        cards_in_deck=obs.cards_in_deck,
        cards_before_last_round=obs.cards_before_last_round,
        rows=rows_view(obs),
        pending_card=obs.pending_card,
        jokers_to_name=list(obs.jokers_to_name),
        start_picks_left=obs.start_picks_left,
        first_player=obs.first_player,
        players=players_view(obs),
        legal=legal_moves(live, seat),
        log=live.log(live.deal) if with_log else [],
        match=match,
        cards=card_legend(live.rules.edition) if with_log else [],
        colours=live.rules.colours,
        bot_delay=bot_delay,
        thinking=live.thinking if playing else None,
        clock=clock_view(live, now_utc()),
        spectators=live.spectators(),
        removed_cards=list(obs.removed_cards[:COLLECTABLE_KINDS]),
        ratings=live.rating_changes,
    )


def replay_frame(game: Game, entry: LogEntry | None) -> ReplayFrame:
    obs = game.observation(0)
    return ReplayFrame(
        move_number=entry.number if entry else 0,
        entry=entry,
        round=obs.round,
        to_move=obs.to_move,
        start_picks_left=obs.start_picks_left,
        rows=rows_view(obs),
        pending_card=obs.pending_card,
        players=players_view(obs),
        cards_in_deck=obs.cards_in_deck,
        cards_before_last_round=obs.cards_before_last_round,
    )


def replay(live: LiveGame, deal: int) -> Replay:
    """Every position of a finished game: its own moves undone one by one from the end."""
    finished = live.games[deal - 1]
    entries = live.log(deal)
    game = finished.copy()
    frames = []
    for entry in reversed(entries):
        frames.append(replay_frame(game, entry))
        game.pop()
    frames.append(replay_frame(game, None))
    frames.reverse()
    return Replay(
        game=summary(live),
        deal=deal,
        deals=len(live.games),
        frames=frames,
        result=deal_result(deal, finished),
        cards=card_legend(live.rules.edition),
        colours=live.rules.colours,
    )


def legal_moves(live: LiveGame, seat: int | None) -> list[str]:
    """The moves ``seat`` may make now, in notation (none but on its turn in a game in play)."""
    game = live.game
    if seat is None or live.status != "playing" or game.to_move != seat or live.seats[seat].resigned:
        return []
    return [action.notation(live.rules.edition) for action in game.legal_actions]


def live_view(
    live: LiveGame, seat: int | None, bot_delay: float, shared: dict[str, Any] | None = None
) -> dict[str, Any]:
    """:func:`table_state` as the live messages send it: JSON values, without the log and the card
    legend (:data:`~coloretto.web.table.changes.NOT_IN_VIEW`, put in as JSON written once).

    Every seat sees the table the spectators see, but for ``you`` and its ``legal`` moves: the
    spectators' view is made once and kept in ``shared`` (one dict for one moment: a broadcast of
    every seat's view of one move), each seat's a copy with those two set."""
    spectators = shared.get("spectators") if shared is not None else None
    if spectators is None:
        state = table_state(live, None, bot_delay, with_log=False)
        spectators = state.model_dump(mode="json", exclude=set(NOT_IN_VIEW))
        if shared is not None:
            shared["spectators"] = spectators
    if seat is None:
        return spectators
    return {**spectators, "you": seat, "legal": legal_moves(live, seat)}
