"""Bots: one interface, named by strings everywhere (``--bots``, the arena, the web app).

>>> from coloretto import Game, Rules
>>> from coloretto.bots import check_bot, make_bot
>>> check_bot("mcts:250ms").limit
Limit(time=0.25, iterations=None)
>>> game = Game.new(Rules(players=3), seed=7)
>>> bot = make_bot("greedy", seed=7)
>>> bot.choose(game.observation(game.to_move)) in game.legal_actions
True

Every name is a row of :mod:`coloretto.bots.registry`; a bot's module is
imported only when the bot is built.
"""

from coloretto.bots.base import Bot, BotSpec, BotSpecError
from coloretto.bots.limits import Limit, LimitError
from coloretto.bots.registry import (
    available_bots,
    check_bot,
    make_bot,
    register_bot,
    split_bot_list,
    unregister_bot,
)

__all__ = [
    "Bot",
    "BotSpec",
    "BotSpecError",
    "Limit",
    "LimitError",
    "available_bots",
    "check_bot",
    "make_bot",
    "register_bot",
    "split_bot_list",
    "unregister_bot",
]
