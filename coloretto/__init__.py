"""Coloretto: a rules engine, bots and tools for Michael Schacht's card game.

The core (rules, cards, actions, game, scoring, records) does no I/O; the
terminal, the arena, the bots and the research environments stand on it.
"""

from coloretto.actions import (
    DRAW,
    NUM_ACTIONS,
    PASS,
    Action,
    ActionKind,
    action_from_id,
    name_joker,
    parse_action,
    place,
    take,
)
from coloretto.cards import (
    GOLDEN_JOKER,
    JOKER,
    LAST_ROUND,
    PLUS_TWO,
    Edition,
    card_name,
    card_token,
    parse_card,
)
from coloretto.game import (
    Game,
    GameSetup,
    IllegalActionError,
    Observation,
    SetupError,
    deal,
)
from coloretto.rules import (
    JokerTiming,
    PlusColours,
    RoundStarter,
    Rules,
    RulesError,
    Table,
    TieBreak,
)
from coloretto.scoring import ScoreBreakdown, best_score

__version__ = "0.1.0"

__all__ = [
    "DRAW",
    "GOLDEN_JOKER",
    "JOKER",
    "LAST_ROUND",
    "NUM_ACTIONS",
    "PASS",
    "PLUS_TWO",
    "Action",
    "ActionKind",
    "Edition",
    "Game",
    "GameSetup",
    "IllegalActionError",
    "JokerTiming",
    "Observation",
    "PlusColours",
    "RoundStarter",
    "Rules",
    "RulesError",
    "ScoreBreakdown",
    "SetupError",
    "Table",
    "TieBreak",
    "action_from_id",
    "best_score",
    "card_name",
    "card_token",
    "deal",
    "name_joker",
    "parse_action",
    "parse_card",
    "place",
    "take",
]
