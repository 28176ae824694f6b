"""The engine protocol: bots in any language, one JSON object per line.

The arena (the client) starts a program and talks to it over its stdin and
stdout, in the spirit of chess's UCI; ``docs/research/engine-protocol.md`` is the
specification. This module holds the message format shared by both ends:
encoding and decoding lines, an :class:`Observation` to JSON and back, and
:func:`serve`, the engine side that ``coloretto engine BOT`` runs for any of
our own bots.

Cards are the engine's integers (0–6 the colours, 7 joker, 8 golden joker,
9 "+2", 10 last-round card); the ``new_game`` message carries each one's token
for the edition in play. Actions are their notation (``d``, ``p2``, ``t3``,
``j:R``, ``x``, ``s:R``). The rules travel as :meth:`Rules.to_dict` writes
them: every option of :data:`coloretto.rules.RULE_OPTIONS` by name.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from typing import IO, Any

from coloretto.actions import Action, parse_action
from coloretto.cards import CARD_KINDS, COLLECTABLE_KINDS, card_token
from coloretto.game import Observation
from coloretto.rules import Rules, RulesError

PROTOCOL_VERSION = 1
#: longest line either side may send (a 5-player observation is under 2 kB)
MAX_LINE_BYTES = 1 << 16


class ProtocolError(ValueError):
    """A message that breaks the protocol: not JSON, wrong type, missing fields."""


# ----------------------------------------------------------------- lines


def encode(message: Mapping[str, Any]) -> str:
    """One message as one line of compact JSON, newline included."""
    return json.dumps(message, separators=(",", ":"), ensure_ascii=False) + "\n"


def decode(line: str | bytes) -> dict[str, Any]:
    """One line back into a message; a ProtocolError says what is wrong with it."""
    if isinstance(line, bytes):
        try:
            line = line.decode("utf-8")
        except UnicodeDecodeError:
            raise ProtocolError("the line is not UTF-8") from None
    text = line.strip()
    if not text:
        raise ProtocolError("empty line")
    try:
        message = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ProtocolError(f"not JSON ({exc.msg}): {_clip(text)}") from None
    if not isinstance(message, dict):
        raise ProtocolError(f"a message must be a JSON object, not {_clip(text)}")
    if not isinstance(message.get("type"), str):
        raise ProtocolError(f"a message needs a string 'type': {_clip(text)}")
    return message


def _clip(text: str, limit: int = 80) -> str:
    return repr(text if len(text) <= limit else text[:limit] + "…")


# ------------------------------------------------------------- messages


def card_legend(rules: Rules) -> list[str]:
    """Each card integer's token in this edition (index = card)."""
    return [card_token(card, rules.edition) for card in range(CARD_KINDS)]


def hello_message() -> dict[str, Any]:
    return {"type": "hello", "protocol": PROTOCOL_VERSION}


def new_game_message(
    rules: Rules, seat: int, seed: int | None, move_time: float, game_id: str = ""
) -> dict[str, Any]:
    return {
        "type": "new_game",
        "rules": rules.to_dict(),
        "seat": seat,
        "seed": seed,
        "move_time": move_time,
        "cards": card_legend(rules),
        "game_id": game_id,
    }


def observation_message(observation: Observation) -> dict[str, Any]:
    return {"type": "observation", "observation": observation_to_dict(observation)}


def action_message(action: Action, rules: Rules) -> dict[str, Any]:
    return {"type": "action", "action": action.notation(rules.edition)}


def game_over_message(scores: list[int], winners: list[int]) -> dict[str, Any]:
    return {"type": "game_over", "scores": scores, "winners": winners}


# ---------------------------------------------------- observation as JSON


def observation_to_dict(obs: Observation) -> dict[str, Any]:
    """Everything in an Observation as JSON-able data (the rules are sent
    once per game in ``new_game``, not with every observation)."""
    edition = obs.rules.edition
    return {
        "player": obs.player,
        "to_move": obs.to_move,
        "round": obs.round,
        "rows": [list(row) for row in obs.rows],
        "row_capacities": list(obs.row_capacities),
        "rows_taken": list(obs.rows_taken),
        "pending_card": obs.pending_card,
        "jokers_to_name": list(obs.jokers_to_name),
        "collections": [list(c) for c in obs.collections],
        "named_jokers": [[list(pair) for pair in seat] for seat in obs.named_jokers],
        "out_this_round": list(obs.out_this_round),
        "cards_in_deck": obs.cards_in_deck,
        "cards_before_last_round": obs.cards_before_last_round,
        "last_round": obs.last_round,
        "unseen_composition": list(obs.unseen_composition),
        "removed_cards": list(obs.removed_cards),
        "scores": list(obs.scores),
        "legal_actions": [a.notation(edition) for a in obs.legal_actions],
        "is_over": obs.is_over,
        "last_taker": obs.last_taker,
        "first_player": obs.first_player,
        "start_picks_left": obs.start_picks_left,
    }


def observation_from_dict(data: Any, rules: Rules) -> Observation:
    """The inverse of :func:`observation_to_dict`, checking every field's shape."""
    if not isinstance(data, dict):
        raise ProtocolError("an observation must be a JSON object")
    players = rules.players
    rows = len(rules.row_capacities)

    def field(name: str) -> Any:
        if name not in data:
            raise ProtocolError(f"the observation has no {name!r}")
        return data[name]

    def integer(name: str, optional: bool = False) -> Any:
        value = field(name)
        if value is None and optional:
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            raise ProtocolError(f"{name} must be a whole number, not {value!r}")
        return value

    def int_list(name: str, value: Any, length: int | None = None) -> tuple[int, ...]:
        if not isinstance(value, list) or any(isinstance(v, bool) or not isinstance(v, int) for v in value):
            raise ProtocolError(f"{name} must be a list of whole numbers")
        if length is not None and len(value) != length:
            raise ProtocolError(f"{name} must have {length} entries, not {len(value)}")
        return tuple(value)

    def bool_list(name: str, length: int) -> tuple[bool, ...]:
        value = field(name)
        if not isinstance(value, list) or not all(isinstance(v, bool) for v in value) or len(value) != length:
            raise ProtocolError(f"{name} must be a list of {length} booleans")
        return tuple(value)

    def per_seat(name: str) -> list[Any]:
        value = field(name)
        if not isinstance(value, list) or len(value) != players:
            raise ProtocolError(f"{name} must have one entry per seat ({players})")
        return value

    first_player = integer("first_player")
    if not 0 <= first_player < players:
        raise ProtocolError(f"first_player must be a seat from 0 to {players - 1}, not {first_player}")
    picks_left = integer("start_picks_left")
    if not 0 <= picks_left <= rules.starting_picks:
        raise ProtocolError(
            f"start_picks_left must be from 0 to {rules.starting_picks} with these rules, not {picks_left}"
        )
    raw_rows = field("rows")
    if not isinstance(raw_rows, list) or len(raw_rows) != rows:
        raise ProtocolError(f"rows must be a list of {rows} rows")
    named: list[tuple[tuple[int, int], ...]] = []
    for seat, pairs in enumerate(per_seat("named_jokers")):
        if not isinstance(pairs, list):
            raise ProtocolError(f"named_jokers of seat {seat} must be a list of [joker, colour] pairs")
        checked = (int_list(f"named_jokers of seat {seat}", p, 2) for p in pairs)
        named.append(tuple((joker, colour) for joker, colour in checked))
    legal = field("legal_actions")
    if not isinstance(legal, list) or not all(isinstance(a, str) for a in legal):
        raise ProtocolError("legal_actions must be a list of action strings")
    try:
        actions = tuple(parse_action(a, rules.edition, rows) for a in legal)
    except ValueError as exc:
        raise ProtocolError(f"legal_actions: {exc}") from None
    for name in ("last_round", "is_over"):
        if not isinstance(field(name), bool):
            raise ProtocolError(f"{name} must be true or false")
    return Observation(
        player=integer("player"),
        rules=rules,
        to_move=integer("to_move", optional=True),
        round=integer("round"),
        rows=tuple(int_list(f"row {i + 1}", r) for i, r in enumerate(raw_rows)),
        row_capacities=int_list("row_capacities", field("row_capacities"), rows),
        rows_taken=bool_list("rows_taken", rows),
        pending_card=integer("pending_card", optional=True),
        jokers_to_name=int_list("jokers_to_name", field("jokers_to_name")),
        collections=tuple(
            int_list(f"collection of seat {s}", c, COLLECTABLE_KINDS)
            for s, c in enumerate(per_seat("collections"))
        ),
        named_jokers=tuple(named),
        out_this_round=bool_list("out_this_round", players),
        cards_in_deck=integer("cards_in_deck"),
        cards_before_last_round=integer("cards_before_last_round", optional=True),
        last_round=data["last_round"],
        unseen_composition=int_list("unseen_composition", field("unseen_composition"), CARD_KINDS),
        removed_cards=int_list("removed_cards", field("removed_cards"), CARD_KINDS),
        scores=int_list("scores", field("scores"), players),
        legal_actions=actions,
        is_over=data["is_over"],
        last_taker=integer("last_taker"),
        first_player=first_player,
        start_picks_left=picks_left,
    )


def rules_from_message(message: Mapping[str, Any]) -> Rules:
    try:
        return Rules.from_dict(message.get("rules"))  # type: ignore[arg-type]
    except (RulesError, TypeError) as exc:
        raise ProtocolError(f"bad rules: {exc}") from None


# ---------------------------------------------------------- engine side


def _seat_of(message: Mapping[str, Any], rules: Rules) -> int | None:
    """``new_game``'s seat: a seat of these rules (0-based), or absent."""
    seat = message.get("seat")
    if seat is None:
        return None
    if isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < rules.players:
        raise ProtocolError(f"seat must be a whole number from 0 to {rules.players - 1}, not {seat!r}")
    return seat


def _check_game_over(message: Mapping[str, Any], rules: Rules) -> None:
    """``game_over``'s scores (a whole number per seat) and winners (seats), or a ProtocolError."""
    scores, winners = message.get("scores"), message.get("winners")
    if not isinstance(scores, list) or len(scores) != rules.players or not all(_whole(v) for v in scores):
        raise ProtocolError(
            f"game_over needs scores, a whole number for each of {rules.players} seats, not {_shown(scores)}"
        )
    seats = range(rules.players)
    if not isinstance(winners, list) or not winners or not all(_whole(w) and w in seats for w in winners):
        raise ProtocolError(
            f"game_over needs winners, a list of seats from 0 to {rules.players - 1}, not {_shown(winners)}"
        )


def _shown(value: Any, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "…"


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def serve(bot_spec: str, stdin: IO[str] | None = None, stdout: IO[str] | None = None) -> int:
    """Serve one of our bots over the protocol until ``quit`` or end of input.

    A fresh bot, seeded from the ``new_game`` message, plays each game. A
    message that cannot be understood is answered with an ``error`` message
    and otherwise ignored. Returns the exit status.
    """
    from coloretto.bots import check_bot, make_bot

    spec = check_bot(bot_spec)  # fail at once (BotSpecError) for a name that means nothing
    read = stdin or sys.stdin
    out = stdout or sys.stdout

    def send(message: Mapping[str, Any]) -> None:
        out.write(encode(message))
        out.flush()

    rules: Rules | None = None
    seat: int | None = None
    bot = None
    for line in read:
        if not line.strip():
            continue
        try:
            if len(line.encode("utf-8", "surrogateescape")) > MAX_LINE_BYTES + 1:  # + its newline
                raise ProtocolError(f"a line longer than {MAX_LINE_BYTES} bytes is not read")
            message = decode(line)
            kind = message["type"]
            if kind == "hello":
                send({"type": "hello", "protocol": PROTOCOL_VERSION, "name": bot_spec, "author": "coloretto"})
            elif kind == "new_game":
                rules, seat, bot = None, None, None  # a refused new game leaves no game to play on
                new_rules = rules_from_message(message)
                seat = _seat_of(message, new_rules)
                rules = new_rules
                seed = message.get("seed")
                if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
                    raise ProtocolError(f"seed must be a whole number or null, not {seed!r}")
                move_time = message.get("move_time")
                if move_time is not None and (
                    isinstance(move_time, bool) or not isinstance(move_time, int | float) or not move_time > 0
                ):
                    raise ProtocolError(f"move_time must be a number of seconds above 0, not {move_time!r}")
                limit = spec.limit
                if (
                    move_time is not None
                    and limit is not None
                    and limit.time is not None
                    and limit.time > move_time
                ):
                    # the caller's cap: refuse to play rather than think past it and forfeit every move
                    raise ProtocolError(
                        f"bot {bot_spec!r} thinks for {limit.time:g} s a move, over this game's "
                        f"move_time of {move_time:g} s"
                    )
                bot = make_bot(spec, seed=seed)
                send({"type": "ready"})
            elif kind == "observation":
                if rules is None or bot is None:
                    raise ProtocolError("an observation before new_game")
                observation = observation_from_dict(message.get("observation"), rules)
                if seat is not None and observation.player != seat:
                    raise ProtocolError(
                        f"the observation is for seat {observation.player}, and this engine plays seat {seat}"
                    )
                if not observation.legal_actions:
                    raise ProtocolError("the observation has no legal actions: it is not this seat's turn")
                try:
                    action = bot.choose(observation)
                except Exception as exc:  # the bot's own failure, reported, not fatal
                    raise ProtocolError(f"the bot failed: {type(exc).__name__}: {exc}") from None
                send(action_message(action, rules))
            elif kind == "game_over":
                bot = None
                if rules is not None:
                    _check_game_over(message, rules)
            elif kind == "quit":
                return 0
            else:
                raise ProtocolError(f"unknown message type {kind!r}")
        except ProtocolError as exc:
            send({"type": "error", "message": str(exc)})
    return 0
