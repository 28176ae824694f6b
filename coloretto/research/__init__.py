"""Research tools over the arena: tune a bot, ladder a family of bots, explore a rule option."""
