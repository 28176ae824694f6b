"""The help screen's text: the keys, and the rules of the game being played."""

from __future__ import annotations

from rich.text import Text

from coloretto.cards import EDITION_DECKS
from coloretto.rules import JokerTiming, PlusColours, RoundStarter, Rules, TieBreak
from coloretto.tui.view import card_chip


def help_text(rules: Rules) -> Text:
    """Keys first, then the rules for exactly these options."""
    deck = EDITION_DECKS[rules.edition]
    rows = len(rules.row_capacities)
    letters = "".join(deck.colour_letters[: rules.colours])
    text = Text()
    text.append("Keys\n", style="bold underline")
    text.append(
        "  d       draw the top card, then choose the row to put it in\n"
        f"  1 … {rows}   with a drawn card: put it in that row; otherwise: take that row\n"
        f"          choosing a colour (naming a joker, a starting colour): the colour's\n"
        f"          number 1 … {rules.colours} or its letter ({letters})\n"
        "  x       pass (only when there is nothing to draw and no row to take)\n"
        "  :       type a move: d, p2 (put in row 2), t3 (take row 3), j:R, s:R, x\n"
        "  s       save the game now (go on later: coloretto play --resume FILE)\n"
        "  h       hint: the AI's win chance and expected final score for each of your moves\n"
        "  ?       this help (Esc or q closes it)\n"
        "  Ctrl+C  quit (you are asked whether to save)\n\n"
    )
    text.append("Cards\n", style="bold underline")
    for colour in range(rules.colours):
        text.append("  ")
        text.append_text(card_chip(colour, rules.edition))
        text.append(f" {deck.colour_names[colour]}\n")
    text.append("  ")
    text.append_text(card_chip(7, rules.edition))
    text.append(f" {deck.joker_name}: counts as any colour you like\n")
    if deck.golden_jokers:
        text.append("  ")
        text.append_text(card_chip(8, rules.edition))
        text.append(" golden joker: a joker; who takes it also gets the deck's top card\n")
    text.append("  ")
    text.append_text(card_chip(9, rules.edition))
    text.append(f" {deck.plus_two_name}: two points at the end, whatever else you hold\n\n")

    row_words = "three rows of 1, 2 and 3 cards" if rules.players == 2 else "one row of 3 cards per player"
    each = "two cards" if rules.starting_cards_per_player == 2 else "one card"
    if rules.chooses_starting_colours and rules.starting_cards_per_player == 2:
        starting = (
            "  Starting colours are chosen: before round 1 each player takes two\n"
            "  cards of colours nobody has chosen yet, one at a time in turns\n"
            "  (first, second, first, second); then the first player starts.\n"
        )
    elif rules.chooses_starting_colours:
        starting = (
            "  Starting colours are chosen: before round 1 each player in turn,\n"
            "  from the first player, takes one card of a colour nobody has\n"
            "  chosen yet; then the first player starts.\n"
        )
    else:
        starting = f"  Each player is dealt {each} to start with, all of different colours.\n"
    starts = (
        "the player after the one who took the last row"
        if rules.round_starter is RoundStarter.NEXT_PLAYER
        else "the player who took the last row"
    )
    table = ", ".join(str(v) for v in rules.score_table[1:])
    text.append("The rules\n", style="bold underline")
    text.append(
        "  Collect few colours, with many cards of each.\n"
        f"  {rules.players} players, {rules.colours} colours, {row_words}.\n"
        + starting
        + "  On your turn, either\n"
        "  • draw the top card and put it in a row that is neither full\n"
        "    nor taken this round, or\n"
        "  • take a row that holds at least one card: its cards join your\n"
        "    collection and you are out for the rest of the round.\n"
        "  When everyone has taken a row the round ends. The next round\n"
        f"  starts with {starts}.\n"
        + ("  With two players the row nobody took leaves the game.\n" if rules.players == 2 else "")
        + f"  The last-round card lies {rules.under_last_round} cards from the bottom of the deck:\n"
        "  when it comes up, the round being played is the last.\n\n"
    )
    text.append("Scoring\n", style="bold underline")
    plus_rule = (
        "the three colours you hold most cards of"
        if rules.plus_colours is PlusColours.MOST_CARDS
        else "the three colours of your choice"
    )
    jokers = (
        "you name a joker's colour as soon as you take it"
        if rules.joker_timing is JokerTiming.ON_TAKE
        else "each joker becomes the colour that scores best"
    )
    text.append(
        f"  {rules.table.value.capitalize()} table: 1, 2, … 6 or more cards of a colour\n"
        f"  score {table}.\n"
        f"  Plus points for {plus_rule};\n"
        "  every other colour you hold scores minus.\n"
        f"  {jokers[0].upper() + jokers[1:]}; each {deck.plus_two_name} card adds 2.\n"
        "  The score next to each player is their best score if the game\n"
        "  ended now.\n"
        + (
            "  Equal totals: fewest minus points wins.\n"
            if rules.tie_break is TieBreak.FEWER_MINUS
            else "  Equal totals share the win.\n"
        )
    )
    return text
