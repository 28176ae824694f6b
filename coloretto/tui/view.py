"""What the table looks like: rich text for rows, cards, players and scores.

Pure functions of a :class:`~coloretto.tui.session.PlaySession`; the
Textual screens only place them. Every card shows its letter and symbol as
well as its colour, so that colour-blind players read it as easily as
anyone: ``R■`` is red, ``J✱`` a joker, ``GJ✱`` the golden joker, ``+2`` a
"+2" card.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from rich import box
from rich.console import Group, RenderableType
from rich.table import Table as RichTable
from rich.text import Text

from coloretto.actions import Action, ActionKind
from coloretto.cards import (
    EDITION_DECKS,
    GOLDEN_JOKER,
    JOKER,
    LAST_ROUND,
    PLUS_TWO,
    Edition,
    card_name,
    is_colour,
)
from coloretto.game import Observation
from coloretto.rules import JokerTiming
from coloretto.scoring import ScoreBreakdown
from coloretto.tui.session import PlaySession

if TYPE_CHECKING:
    from coloretto.analysis import ActionValue

#: background and text colour of each colour (suit) by index; the letter and
#: symbol carry the meaning, the colour only helps
COLOUR_STYLES = (
    "bold black on #f2d22e",  # yellow / clubs
    "bold black on #f0892a",  # orange / spades
    "bold white on #c62828",  # red / hearts
    "bold black on #f4a6c8",  # pink / diamonds
    "bold white on #2e7d32",  # green / caps
    "bold white on #1f55c8",  # blue / switches
    "bold white on #6d4320",  # brown / planets
)
JOKER_STYLE = "bold black on white"
GOLDEN_STYLE = "bold black on #ffc400"
PLUS_TWO_STYLE = "bold white on #505050"
LAST_ROUND_STYLE = "bold white on #8e24aa"
EMPTY_SLOT = Text(" ·· ", style="dim")


def card_label(card: int, edition: Edition) -> str:
    """The card's short face: letter and symbol (``R■``), ``J✱``, ``GJ✱``, ``+2``."""
    deck = EDITION_DECKS[edition]
    if is_colour(card):
        return deck.colour_letters[card] + deck.colour_symbols[card]
    return {JOKER: "J✱", GOLDEN_JOKER: "GJ✱", PLUS_TWO: "+2", LAST_ROUND: "LR"}[card]


def card_style(card: int) -> str:
    if is_colour(card):
        return COLOUR_STYLES[card]
    return {JOKER: JOKER_STYLE, GOLDEN_JOKER: GOLDEN_STYLE, PLUS_TWO: PLUS_TWO_STYLE}.get(
        card, LAST_ROUND_STYLE
    )


def card_chip(card: int, edition: Edition, pad: bool = True) -> Text:
    """One card as a coloured chip: `` R■ `` (``R■`` without padding)."""
    label = card_label(card, edition)
    return Text(f" {label} " if pad else label, style=card_style(card))


def cards_text(cards: Sequence[int], edition: Edition, slots: int = 0) -> Text:
    """Cards side by side, then empty slots up to ``slots``."""
    text = Text()
    for index, card in enumerate(cards):
        if index:
            text.append(" ")
        text.append_text(card_chip(card, edition))
    for index in range(len(cards), slots):
        if index:
            text.append(" ")
        text.append_text(EMPTY_SLOT)
    return text


def collection_text(counts: Sequence[int], edition: Edition, colours: int) -> Text:
    """A collection grouped by colour: ``Y●×1 R■×3 J✱×1 +2×2``."""
    text = Text()
    kinds = [*range(colours), JOKER, GOLDEN_JOKER, PLUS_TWO]
    for card in kinds:
        if card < len(counts) and counts[card]:
            if text:
                text.append(" ")
            text.append_text(card_chip(card, edition, pad=False))
            text.append(f"×{counts[card]}")
    if not text:
        text.append("no cards", style="dim")
    return text


def header_text(session: PlaySession) -> Text:
    """The rules; the round, and the deck: cards left and before the last-round card."""
    game = session.game
    text = Text()
    text.append("Coloretto", style="bold")
    text.append(f" · {game.rules.describe()}\n")
    match = session.match
    if match is not None:
        text.append(f"Game {match.game_number} of {game.rules.match_games}", style="bold")
        text.append(" · ")
    if game.start_picks_left:
        text.append("Choosing starting colours", style="bold")
        text.append(f" · {game.start_picks_left} still to choose before round 1")
    else:
        text.append(f"Round {game.round}", style="bold")
        text.append(f" · deck: {game.cards_in_deck} cards left")
        before = game.cards_before_last_round
        if before is not None:
            text.append(f", {before} before the last-round card")
        else:
            text.append(", the last-round card has come up")
    if match is not None and match.game_number > 1:
        earlier = ", ".join(f"{seat.name} {t}" for seat, t in zip(session.seats, session.earlier_totals()))
        text.append(f"\nMatch points from the earlier games: {earlier}")
    return text


def banner_text(session: PlaySession) -> Text:
    """The last-round banner (empty before it)."""
    game = session.game
    if game.is_over:
        return Text(" GAME OVER ", style="bold white on #8e24aa")
    if game.last_round:
        return Text(
            " ★ LAST ROUND ★  the last-round card has come up: this round is the last one ",
            style="bold white on #8e24aa",
        )
    return Text("")


def rows_text(session: PlaySession) -> Text:
    """Each row with its capacity and cards, who took it, then the drawn card."""
    game = session.game
    edition = game.rules.edition
    text = Text()
    text.append("Rows", style="bold underline")
    for index, cards in enumerate(game.rows):
        cap = game.row_capacities[index]
        text.append(f"\n Row {index + 1} ({cap}) ")
        if game.row_is_taken(index):
            taker = session.takers.get(index)
            who = session.name(taker) if taker is not None else "someone"
            text.append(f"taken by {who}", style="dim italic")
            continue
        text.append_text(cards_text(cards, edition, cap))
        if len(cards) >= cap:
            text.append("  full", style="bold")
    text.append("\n")
    pending = game.pending_card
    if pending is not None:
        text.append(" Drawn card, waiting to be placed: ", style="bold")
        text.append_text(card_chip(pending, edition))
        text.append(f" {card_name(pending, edition)}")
    else:
        text.append(" No card drawn", style="dim")
    return text


def players_table(session: PlaySession) -> RichTable:
    """Each player: to move or out, their collection by colour, best score now."""
    game = session.game
    edition = game.rules.edition
    colours = game.rules.colours
    table = RichTable(box=None, padding=(0, 1), show_edge=False, expand=False, title_justify="left")
    table.add_column("", width=1, no_wrap=True)
    table.add_column("Player", no_wrap=True, style="bold")
    table.add_column("Status", no_wrap=True)
    table.add_column("Collection")
    table.add_column("Score", justify="right", no_wrap=True)
    to_move = game.to_move
    for seat, info in enumerate(session.seats):
        marker = "▶" if seat == to_move else ""
        if game.is_over:
            status = Text("")
        elif game.is_out(seat):
            row = next((r for r, s in session.takers.items() if s == seat), None)
            status = Text("out" + (f" (row {row + 1})" if row is not None else ""), style="dim")
        elif seat == to_move:
            status = Text("to move", style="bold reverse")
        else:
            status = Text("in")
        score = game.best_score(seat).total
        table.add_row(
            marker, info.label, status, collection_text(game.collection(seat), edition, colours), str(score)
        )
    return table


def colour_choices(actions: Sequence[Action], edition: Edition) -> str:
    """The colours a joker may be named or a starting colour chosen from, with
    their keys: ``[3] R■ red`` (the colour's number; its letter works too)."""
    return "  ".join(
        f"[{a.index + 1}] {card_label(a.index, edition)} {card_name(a.index, edition)}" for a in actions
    )


def turn_text(session: PlaySession, replay: bool = False) -> Text:
    """Whose turn it is and what they may do, with the keys. A replay shows
    only who is to move: nobody answers there, and no bot thinks."""
    game = session.game
    edition = game.rules.edition
    text = Text()
    if game.is_over:
        text.append("The game is over. ", style="bold")
        text.append_text(winners_text(session))
        text.append("  [Enter] scores")
        return text
    seat = game.to_move
    assert seat is not None
    player = session.seats[seat]
    if replay:
        text.append("To move: ")
        text.append(player.label, style="bold")
        return text
    actions = game.legal_actions
    kind = actions[0].kind
    text.append(f"{player.name}", style="bold reverse")
    if not player.is_human:
        text.append(f" ({player.kind}) is thinking…")
        return text
    text.append(": ")
    if kind is ActionKind.PLACE:
        rows = " ".join(f"[{a.index + 1}]" for a in actions)
        text.append(f"place the drawn {card_name(game.pending_card or 0, edition)} in row {rows}")
    elif kind is ActionKind.NAME_JOKER:
        text.append("name the colour of the joker you took (its number or letter): ")
        text.append(colour_choices(actions, edition))
    elif kind is ActionKind.CHOOSE_START:
        text.append("choose a starting colour (its number or letter): ")
        text.append(colour_choices(actions, edition))
    elif kind is ActionKind.PASS:
        text.append("nothing to draw, no row to take: [x] pass")
    else:
        parts = []
        if actions[0].kind is ActionKind.DRAW:
            parts.append("[d] draw a card")
        takes = [a.index + 1 for a in actions if a.kind is ActionKind.TAKE]
        if takes:
            parts.append("take row " + " ".join(f"[{r}]" for r in takes))
        text.append(" or ".join(parts))
    return text


KEYS_HELP = "[?] help  [h] hint  [:] type a move  [s] save  [ctrl+c] quit"


def log_text(session: PlaySession, lines: int) -> Text:
    """The last ``lines`` lines of the log."""
    entries = session.log[-lines:] if lines > 0 else []
    return Text("\n".join(e.text for e in entries))


def _points(value: int) -> str:
    return f"+{value}" if value > 0 else ("−" + str(-value) if value < 0 else "0")


def final_table(session: PlaySession) -> RichTable:
    """The scoring table: one column per player, one line per colour."""
    game = session.game
    edition = game.rules.edition
    colours = game.rules.colours
    scores = game.scores()
    winners = set(game.winners()) if game.is_over else set()
    title = "Final scores" if game.is_over else "Scores so far"
    table = RichTable(title=title, padding=(0, 1), box=box.SIMPLE_HEAD)
    table.add_column("", no_wrap=True)
    for seat, info in enumerate(session.seats):
        name = info.name + (" ★" if seat in winners else "")
        table.add_column(name, justify="right", no_wrap=True)

    def row(label: str | Text, cells: Sequence[str | Text]) -> None:
        table.add_row(label, *cells)

    named = [game.named_jokers(seat) for seat in range(game.players)]

    def joker_cell(seat: int, breakdown: ScoreBreakdown) -> str:
        colours_named = [card_label(colour, edition) for _, colour in named[seat]]
        chosen = [card_label(colour, edition) for colour in breakdown.joker_colours]
        return " ".join(colours_named + chosen) or "—"

    joker_label = "jokers named" if game.rules.joker_timing is JokerTiming.ON_TAKE else "jokers as"
    row(joker_label, [joker_cell(s, b) for s, b in enumerate(scores)])
    row("plus colours", [" ".join(card_label(c, edition) for c in b.plus_colours) or "—" for b in scores])
    row("minus colours", [" ".join(card_label(c, edition) for c in b.minus_colours) or "—" for b in scores])
    for colour in range(colours):
        label = Text()
        label.append_text(card_chip(colour, edition))
        label.append(f" {card_name(colour, edition)}")
        cells: list[str | Text] = []
        for b in scores:
            n = b.counts[colour]
            cells.append(f"{n} → {_points(b.colour_points[colour])}" if n else "·")
        row(label, cells)
    row('"+2" points', [_points(b.plus_two_points) for b in scores])
    row(Text("total", style="bold"), [Text(str(b.total), style="bold") for b in scores])
    return table


def winners_text(session: PlaySession) -> Text:
    game = session.game
    if not game.is_over:
        return Text("")
    winners = game.winners()
    names = ", ".join(session.name(s) for s in winners)
    if len(winners) == 1:
        return Text(f"★ {names} wins with {game.best_score(winners[0]).total} points ★", style="bold")
    return Text(f"★ Shared win: {names} ({game.best_score(winners[0]).total} points each) ★", style="bold")


def match_table(session: PlaySession) -> RichTable | None:
    """Match play: each seat's points before this game, in it, and in all."""
    match = session.match
    totals = session.match_totals()
    if match is None or totals is None:
        return None
    game = session.game
    over = session.match_over()
    winners = set(session.match_winners()) if over else set()
    title = "Match result" if over else f"Match after game {match.game_number} of {game.rules.match_games}"
    table = RichTable(title=title, padding=(0, 1), box=box.SIMPLE_HEAD)
    table.add_column("", no_wrap=True)
    for seat, info in enumerate(session.seats):
        table.add_column(info.name + (" ★" if seat in winners else ""), justify="right", no_wrap=True)
    table.add_row("earlier games", *(str(t) for t in session.earlier_totals()))
    table.add_row(f"game {match.game_number}", *(str(s.total) for s in game.scores()))
    table.add_row(Text("match total", style="bold"), *(Text(str(t), style="bold") for t in totals))
    return table


def match_winners_text(session: PlaySession) -> Text:
    if not session.match_over():
        return Text("")
    winners = session.match_winners()
    totals = session.match_totals() or ()
    names = ", ".join(session.name(s) for s in winners)
    points = totals[winners[0]]
    if len(winners) == 1:
        return Text(f"★ {names} wins the match with {points} points ★", style="bold")
    return Text(f"★ The match is shared: {names} ({points} points each) ★", style="bold")


def final_view(session: PlaySession) -> RenderableType:
    parts: list[RenderableType] = [final_table(session), winners_text(session)]
    match = match_table(session)
    if match is not None and session.game.is_over:
        parts += [Text(""), match, match_winners_text(session)]
    return Group(*parts)


def move_words(action: Action, observation: Observation) -> str:
    """A move as a person says it: 'take row 2: red, +2'."""
    edition = observation.rules.edition
    kind = action.kind
    if kind is ActionKind.DRAW:
        return "draw a card"
    if kind is ActionKind.PLACE:
        card = observation.pending_card
        drawn = card_name(card, edition) if card is not None else "the card"
        return f"put the {drawn} in row {action.index + 1}"
    if kind is ActionKind.TAKE:
        cards = ", ".join(card_name(c, edition) for c in observation.rows[action.index])
        return f"take row {action.index + 1}: {cards}"
    if kind is ActionKind.NAME_JOKER:
        return f"the joker is {card_name(action.index, edition)}"
    if kind is ActionKind.CHOOSE_START:
        return f"start with {card_name(action.index, edition)}"
    return "pass: leave the round with nothing"


def hint_view(lines: Sequence[ActionValue], observation: Observation) -> RenderableType:
    """The analysis of a position: the AI's move first (★), then the others in the
    order the AI ranks them (win chance first, score margin second)."""
    if not lines:
        return Text("Nothing to analyse: the game is over.")
    table = RichTable(title="Hint: the AI's view of your moves", padding=(0, 1), box=box.SIMPLE_HEAD)
    table.add_column("")
    table.add_column("move")
    table.add_column("win chance", justify="right")
    table.add_column("expected final score", justify="right")
    table.add_column("games simulated", justify="right")
    best = lines[0]
    for line in lines:
        mark = "★" if line is best else ""
        table.add_row(
            mark,
            f"{line.action}  {move_words(line.action, observation)}",
            f"{line.win_probability:.0%}",
            f"{line.expected_score:.1f}",
            str(line.simulations),
        )
    return table
