"""The arena: tournaments between bots, with honest statistics.

>>> from coloretto import Rules
>>> from coloretto.arena import TournamentConfig, run_tournament
>>> config = TournamentConfig(Rules(players=4), ("greedy", "random", "random", "random"), games=8, seed=7)
>>> outcome = run_tournament(config, out_dir, backend="serial")
>>> len(outcome.results), [line["bot"] for line in outcome.document["bots"]]
(8, ['greedy', 'random'])

See ``coloretto arena --help`` and docs/research/arena.md.
"""

from coloretto.arena.config import ArenaError, GameTask, Seatings, TournamentConfig, derive_seed, seatings_of
from coloretto.arena.play import play_game
from coloretto.arena.stats import place_seats, summarise, wilson_interval
from coloretto.arena.tournament import TournamentOutcome, run_tournament

__all__ = [
    "ArenaError",
    "GameTask",
    "Seatings",
    "TournamentConfig",
    "TournamentOutcome",
    "derive_seed",
    "place_seats",
    "play_game",
    "run_tournament",
    "seatings_of",
    "summarise",
    "wilson_interval",
]
