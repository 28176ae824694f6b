"""Bots: one interface, named by strings everywhere (``--bots``, the arena, the web app).

>>> from coloretto.bots import make_bot
>>> bot = make_bot("greedy", seed=7)
>>> action = bot.choose(game.observation(game.to_move))
"""

from coloretto.bots.base import Bot, BotSpecError, available_bots, make_bot, register_bot

__all__ = ["Bot", "BotSpecError", "available_bots", "make_bot", "register_bot"]
