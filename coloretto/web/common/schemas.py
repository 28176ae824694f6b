"""The JSON the server speaks: request bodies, lobby answers and the table's state.

Everything a client sees passes through these models; none of them has a
field for the deck order or the seed of a game in progress.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from coloretto.rules import MAX_PLAYERS, MIN_PLAYERS

NAME_MAX = 40
GAME_NAME_MAX = 60
#: a password's length, in characters
PASSWORD_MIN = 8
PASSWORD_MAX = 128
#: the longest seat token or rematch token a request may carry (the server's are 32 characters)
TOKEN_MAX = 128


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


# ------------------------------------------------------------------ requests


class SeatSpec(Strict):
    """One seat of a new game: a person (who joins later) or a bot."""

    kind: Literal["human", "bot"] = "human"
    bot: str | None = Field(None, max_length=64, description="bot name, e.g. 'greedy' or 'medium'")


class ClockSpec(Strict):
    """A table's turn clock, as real-time sites offer: time for each move, a bank for the whole
    match, or both (a move must then fit both). A seat whose time runs out is played by a bot
    until its person comes back."""

    move_seconds: int | None = Field(None, ge=5, le=3600, description="seconds for each move")
    game_seconds: int | None = Field(
        None, ge=30, le=86400, description="seconds each seat has for all its moves of the match"
    )


class CreateGame(Strict):
    name: str = Field("", max_length=GAME_NAME_MAX, description="shown in the lobby")
    rules: dict[str, Any] = Field(
        default_factory=dict, description="options of coloretto.Rules; players = number of seats"
    )
    seats: list[SeatSpec] = Field(min_length=MIN_PLAYERS, max_length=MAX_PLAYERS)
    creator_name: str | None = Field(
        None,
        max_length=NAME_MAX,
        description="when given, the creator takes the first person's seat and gets its token",
    )
    clock: ClockSpec | None = Field(None, description="a turn clock; none: untimed")
    rated: bool = Field(
        False,
        description="a rated table: its people must be logged in, its bots are difficulty levels, and "
        "its result moves everyone's rating",
    )
    private: bool = Field(False, description="never listed: reached by its link only")


class JoinSeat(Strict):
    name: str | None = Field(
        None,
        min_length=1,
        max_length=NAME_MAX,
        description="the name to sit under (a guest's; a logged-in player sits under their account's)",
    )
    seat: int | None = Field(
        None, ge=0, le=MAX_PLAYERS - 1, description="a free seat (0-based), or the first free one"
    )
    rematch_token: str | None = Field(
        None,
        max_length=TOKEN_MAX,
        description="a guest's seat token of the game this one is the rematch of: takes the seat kept "
        "for them",
    )


class ActRequest(Strict):
    action: str = Field(max_length=16, description="the notation: d, p2, t3, j:R, s:R, x")
    move: int | None = Field(
        None, ge=0, description="the number of moves the client has seen; a different number is refused"
    )


# ------------------------------------------------------------------ answers


class CardInfo(BaseModel):
    id: int
    token: str
    name: str
    symbol: str
    kind: Literal["colour", "joker", "golden-joker", "plus-two", "last-round"]


class RuleOptionInfo(BaseModel):
    """One rule option, as :data:`coloretto.rules.RULE_OPTIONS` has it: a choice
    among ``choices``, or a whole number from ``minimum`` to ``maximum``."""

    name: str = Field(description="the key in a create request's rules")
    label: str = Field(description="a short title for forms")
    help: str
    kind: Literal["choice", "number"]
    default: str | int | None
    choices: list[str] | None = Field(None, description="the values allowed (kind choice)")
    choice_labels: list[str] | None = Field(
        None, description="each choice's name as people read it (in the request's language), same order"
    )
    choice_help: list[str] | None = Field(None, description="what each choice means, in the same order")
    minimum: int | None = None
    maximum: int | None = Field(
        None, description="None: no fixed maximum (it depends on the other options; the server checks it)"
    )
    optional: bool = Field(False, description="null (an empty field) is allowed: the rule's own number")
    set_by_seats: bool = Field(False, description="not asked for: the number of seats sets it")


class BotInfo(BaseModel):
    name: str
    description: str
    difficulty: bool = Field(description="one of the named difficulty levels")


class Limits(BaseModel):
    max_message_bytes: int
    max_frame_bytes: int
    messages_per_second: float
    message_burst: int
    flood_disconnect_after: int
    max_body_bytes: int
    max_connections_per_game: int
    max_waiting_games: int
    max_bot_time: float = Field(description="seconds a move a bot named in a seat may think, at most")
    max_bot_iterations: int = Field(description="iterations a move, for a bot given iterations only")
    max_waiting_per_client: int = Field(
        description="games waiting for players one address may have (0: no limit)"
    )
    creations_per_minute: int = Field(description="games one address may create a minute (0: no limit)")
    requests_per_minute: int = Field(description="HTTP requests one address may make a minute (0: no limit)")
    waiting_expiry: float = Field(description="seconds a game may wait for players before it expires")
    away_after: float = Field(
        description="seconds a person of a timed table may be gone on their turn before a bot plays for them"
    )
    abandon_after: float = Field(
        description="seconds an untimed game may go without a move before it ends as abandoned"
    )
    chat_max_chars: int = Field(description="characters a chat message may have, at most")
    chat_messages: int = Field(description="chat messages one seat or connection may send ...")
    chat_seconds: float = Field(description="... in this many seconds")
    password_min: int = Field(description="characters a password has, at least")
    password_max: int = Field(description="characters a password has, at most")
    leaderboard_min_games: int = Field(description="rated games a person plays before being listed")


class Options(BaseModel):
    rules: list[RuleOptionInfo]
    bots: list[BotInfo]
    default_bot: str
    hints: bool
    limits: Limits


class SeatView(BaseModel):
    seat: int
    kind: Literal["human", "bot"]
    bot: str | None
    name: str | None = Field(description="None while a person's seat is free")
    free: bool
    online: bool = Field(description="a person with this seat's token is connected")
    away: bool = Field(
        False, description="a person's seat a bot plays for now (time ran out, or gone too long)"
    )
    resigned: bool = Field(False, description="its person resigned: a bot plays it to the end")
    account: bool = Field(
        False, description="taken by a logged-in person: the name is their account's (a player page)"
    )
    reserved: bool = Field(False, description="a free seat kept for one person (a rematch's player)")
    deleted: bool = Field(
        False, description="its person deleted their account: the name is gone ('deleted player')"
    )


class RulePart(BaseModel):
    """One part of a game's one-line rules summary: an option and its value (``Rules.summary``)."""

    option: str
    value: str | int


class GameSummary(BaseModel):
    id: str
    name: str
    status: Literal["open", "playing", "finished", "expired", "abandoned", "cancelled", "stopped"] = Field(
        description="expired: it waited for players longer than the server allows, and never began; "
        "abandoned: nobody made a move for longer than the server allows, and it cannot be finished; "
        "cancelled: its creator called it off while it waited for players; "
        "stopped: a moderator ended it (``stop_reason`` says why); no rating moved"
    )
    rules: dict[str, Any]
    rules_text: str = Field(description="the rules in one line, in English")
    rules_summary: list[RulePart] = Field(
        description="what that line says, for a page to word in its language: the players, edition and "
        "table, then every option that is not its default"
    )
    seats: list[SeatView]
    moves: int
    created_at: str
    updated_at: str
    winners: list[int] | None = None
    totals: list[int] | None = None
    clock: ClockSpec | None = None
    rated: bool = False
    private: bool = Field(False, description="never listed: reached by its link only")
    creator_seat: int | None = Field(None, description="the creator's seat: who may cancel it while it waits")
    rematch: str | None = Field(None, description="the game made as this one's rematch")
    rematch_of: str | None = Field(None, description="the game this one is the rematch of")
    stop_reason: str | None = Field(None, description="why a moderator ended it (status stopped)")


class GameList(BaseModel):
    games: list[GameSummary]


class SeatGrant(BaseModel):
    """The answer to taking a seat. Keep the token secret: it is the seat."""

    game: GameSummary
    seat: int
    token: str


class CreatedGame(BaseModel):
    game: GameSummary
    seat: int | None = None
    token: str | None = None


class RowView(BaseModel):
    cards: list[int]
    capacity: int
    taken: bool


class PlayerView(BaseModel):
    seat: int
    collection: list[int] = Field(description="count per card kind: colours 0-6, joker, golden joker, +2")
    named_jokers: list[tuple[int, int]]
    score: int = Field(description="best score if the game ended now")
    out: bool = Field(description="has taken a row this round")


class LogEntry(BaseModel):
    """One move, as the game's :class:`coloretto.game.MoveEvent` tells it."""

    number: int = Field(description="counts the moves of the whole match")
    deal: int = Field(description="which game of the match")
    round: int
    seat: int
    move: str = Field(description="the record notation: the action, then the cards turned over")
    cards: list[int] = Field(description="the cards that moved: drawn or placed, or the row taken")
    revealed: list[int] = Field(description="cards turned over, the last-round card first if it came up")
    colour: int | None = Field(description="the colour named for a joker or chosen as a starting colour")
    joker: int | None = Field(None, description="naming a joker: which kind (joker or golden joker)")
    text: str = Field(description="the move in English words (a page tells it in its own language)")


class ColourScore(BaseModel):
    colour: int
    cards: int
    points: int


class Breakdown(BaseModel):
    seat: int
    joker_colours: list[int]
    named_jokers: list[tuple[int, int]]
    plus_colours: list[ColourScore]
    minus_colours: list[ColourScore]
    plus_twos: int
    plus_two_points: int
    total: int


class DealResult(BaseModel):
    deal: int
    breakdowns: list[Breakdown]
    totals: list[int]
    winners: list[int]


class MatchView(BaseModel):
    games: int
    current: int
    totals: list[int]
    deals: list[DealResult]
    winners: list[int] | None = Field(None, description="set when the match is over")


class TableState(BaseModel):
    """One seat's (or a spectator's) view of the table."""

    game: GameSummary
    you: int | None = Field(description="your seat, None for a spectator")
    move_number: int
    deal: int
    round: int
    to_move: int | None
    last_round: bool
    cards_in_deck: int = Field(description="face-down cards, the last-round card included while unseen")
    cards_before_last_round: int | None
    rows: list[RowView]
    pending_card: int | None
    jokers_to_name: list[int]
    start_picks_left: int = Field(
        description="starting colours still to be chosen before round 1 (variant); 0 once play begins"
    )
    first_player: int = Field(description="who starts round 1 (and chooses the first starting colour)")
    players: list[PlayerView]
    legal: list[str] = Field(description="your legal actions, in notation; empty unless it is your turn")
    log: list[LogEntry]
    match: MatchView
    cards: list[CardInfo]
    colours: int = Field(description="colours in play (the first N colour cards)")
    bot_delay: float
    thinking: int | None = Field(None, description="the seat whose bot is thinking now")
    clock: ClockView | None = Field(None, description="the turn clock (a timed table)")
    spectators: int = Field(0, description="connections watching without a seat, on every server process")
    removed_cards: list[int] = Field(
        default_factory=list,
        description="two players: the cards of the rows nobody took, out of this game, count per card kind",
    )
    ratings: list[RatingChange] | None = Field(
        None, description="each seat's rating before and after: a rated game, once it is over"
    )


class ClockView(BaseModel):
    move_seconds: int | None
    game_seconds: int | None
    deadline: str | None = Field(description="when the seat to move runs out of time (ISO, UTC)")
    seconds_left: float | None = Field(description="seconds left for the seat to move, when sent")
    banks: list[float] | None = Field(description="seconds left of each seat's bank (game_seconds)")


class ReplayFrame(BaseModel):
    move_number: int
    entry: LogEntry | None
    round: int
    to_move: int | None
    start_picks_left: int
    rows: list[RowView]
    pending_card: int | None
    players: list[PlayerView]
    cards_in_deck: int
    cards_before_last_round: int | None


class Replay(BaseModel):
    game: GameSummary
    deal: int
    deals: int
    frames: list[ReplayFrame]
    result: DealResult
    cards: list[CardInfo]
    colours: int


class ErrorBody(BaseModel):
    error: str = Field(description="a short code: bad_request, not_found, illegal, not_your_turn …")
    message: str


class HintAction(BaseModel):
    action: str
    expected_score: float = Field(description="mean final score of the simulated games that began so")
    win_probability: float = Field(description="calibrated chance to win after this action")
    simulations: int
    win_share: float = Field(description="the search's raw mean win share after it (not calibrated)")
    utility: float = Field(description="the search's objective (0.75 × win share + 0.25 × margin), the order")


class Hint(BaseModel):
    """The analysis of your position (coloretto.analysis): every legal action, the move
    the search would play first (``best``), then by the search's objective (``utility``)."""

    move: int = Field(description="the move number the hint is for")
    best: str | None
    actions: list[HintAction]


class HintRequest(Strict):
    budget: float | None = Field(
        None,
        ge=0.001,
        le=10,
        description="seconds of thinking, at most the server's hint budget (default: that budget)",
    )


# ------------------------------------------------------------------ reviews

#: the most moves a what-if line may play from its position
MAX_WHATIF_MOVES = 200


class ReviewStatus(BaseModel):
    """A finished game's review (issue 12): worked out in the server's worker processes, stored
    with the game. ``review`` is the review's JSON (``coloretto.review.Review.to_dict()``) once
    ``status`` is ``done``."""

    status: Literal["none", "running", "done", "failed"]
    done: int = Field(description="tasks (analysed positions) finished")
    total: int = Field(description="tasks of the review; 0 before it starts")
    error: str | None = Field(description="why it failed")
    review: dict[str, Any] | None = Field(description="the review (format coloretto-review), when done")


class WhatIfRequest(Strict):
    game: int = Field(1, ge=1, le=100, description="which game of the match (from 1)")
    upto: int = Field(ge=0, description="the replay's position to start from (0: the deal)")
    moves: list[Annotated[str, Field(max_length=16)]] = Field(
        default_factory=list,
        max_length=MAX_WHATIF_MOVES,
        description="moves to play from there, in notation (a draw turns over the deal's real next card)",
    )


class ReviewLine(BaseModel):
    action: str
    win: float = Field(description="the mover's calibrated chance to win after this action")
    score: float = Field(description="the mover's expected final score after it")
    simulations: int
    win_share: float = Field(description="the search's raw mean win share after it")


class Outlook(BaseModel):
    win: list[float] = Field(description="every seat's win chance (the outcome once the game is over)")
    score: list[float] = Field(description="every seat's expected final score (the final scores once over)")


class WhatIf(BaseModel):
    """The position a what-if line reaches, analysed at the review's budget."""

    frame: ReplayFrame
    legal: list[str] = Field(description="the legal moves there, in notation")
    lines: list[ReviewLine] = Field(description="the mover's moves, the one the search plays first")
    position: Outlook


# ------------------------------------------------------------ accounts


class Credentials(Strict):
    name: str = Field(max_length=NAME_MAX * 4, description="the account's name (any case)")
    password: str = Field(
        max_length=PASSWORD_MAX * 4, description=f"{PASSWORD_MIN} to {PASSWORD_MAX} characters"
    )


class RatingValue(BaseModel):
    """An openskill (Plackett-Luce) rating: ``mu`` the estimate, ``sigma`` its uncertainty."""

    mu: float
    sigma: float
    ordinal: float = Field(description="mu - 3 sigma: what the leaderboard sorts by, and what is shown")


class Rating(RatingValue):
    games: int = Field(description="rated games played")


class RatingChange(BaseModel):
    seat: int
    player: str = Field(description="the seat's person (their account's name) or its bot's level")
    rank: float = Field(description="1 is first; tied seats share the mean of their places")
    before: RatingValue
    after: RatingValue


class UserInfo(BaseModel):
    name: str
    created_at: str
    rating: Rating
    admin: bool = Field(False, description="an administrator of the site (the admin page)")


class Account(BaseModel):
    """Who is logged in (``user``: None for a guest) and the page's security token: sent back as
    the ``X-CSRF-Token`` header of every state-changing request that carries a cookie."""

    user: UserInfo | None
    csrf_token: str


class LeaderboardEntry(BaseModel):
    rank: int = Field(description="1 is first")
    kind: Literal["person", "bot"]
    name: str = Field(description="the person's name, or the bot's difficulty level")
    rating: Rating


class Leaderboard(BaseModel):
    players: list[LeaderboardEntry] = Field(description="by ordinal, best first")
    min_games: int = Field(description="rated games a person plays before being listed (bots always are)")


class Opponent(BaseModel):
    seat: int
    name: str
    kind: Literal["human", "bot"]
    bot: str | None
    account: bool = Field(description="a logged-in person: the name has a player page")
    deleted: bool = Field(False, description="the account was deleted: the name shown is 'deleted player'")


class PlayerResult(BaseModel):
    game: str | None = Field(description="the game's id; None for another person's private table")
    name: str
    date: str = Field(description="when it ended (ISO, UTC)")
    rules_text: str
    rules_summary: list[RulePart] = Field(
        description="what rules_text says, for a page to word (GameSummary)"
    )
    seat: int
    opponents: list[Opponent]
    rank: float = Field(description="1 is first; tied seats share the mean of their places")
    score: int = Field(description="the seat's total (of the match)")
    won: bool
    resigned: bool
    rated: bool
    rating_change: float | None = Field(description="ordinal after minus before (a rated game)")
    accuracy: float | None = Field(
        description="percent, from the game's review (the mean over a match's games)"
    )


class RatingPoint(BaseModel):
    game: str | None = Field(description="the game's id; None for another person's private table")
    at: str
    rating: RatingValue


class PlayerPage(BaseModel):
    name: str
    created_at: str = Field(description="when the account was made")
    rating: Rating
    games: int = Field(description="finished games played")
    wins: int = Field(description="of them, won (a shared win counts)")
    results: list[PlayerResult] = Field(description="the latest finished games, newest first")
    history: list[RatingPoint] = Field(description="the rating after each rated game, oldest first")
    accuracy: float | None = Field(description="the mean accuracy of the listed games that have a review")


class ChatEntry(BaseModel):
    """One chat message: ``text`` is what the person typed, to be shown as text (never markup)."""

    number: int = Field(description="counts the table's messages from 1")
    seat: int | None = Field(description="the speaker's seat; None for a spectator")
    name: str
    user: str | None = Field(description="the speaker's account (logged in): what muting a person keys on")
    text: str
    at: str


class ChatLog(BaseModel):
    messages: list[ChatEntry] = Field(description="oldest first")


class RematchGrant(BaseModel):
    """The rematch of a finished game. ``token`` is your seat's when it was taken for you now; None
    when you hold the seat already (keep the token you were given)."""

    game: GameSummary
    seat: int | None
    token: str | None


# ------------------------------------------------------------ websocket in


class HelloMessage(Strict):
    type: Literal["hello"]
    token: str | None = Field(None, max_length=128)


class ActMessage(Strict):
    type: Literal["act"]
    action: str = Field(max_length=16)
    move: int | None = Field(None, ge=0)


class HintMessage(Strict):
    type: Literal["hint"]


class PingMessage(Strict):
    type: Literal["ping"]


class SyncMessage(Strict):
    """Send me my whole view again (protocol 2: a change did not follow the version I have)."""

    type: Literal["sync"]


class ReclaimMessage(Strict):
    """Take your seat back from the bot that plays for you (your clock ran out, or you were gone)."""

    type: Literal["reclaim"]


class ResignMessage(Strict):
    """Give the game up: a bot plays your seat to the end, and you rank last."""

    type: Literal["resign"]


class ChatMessage(Strict):
    """Say something at the table (players, and spectators who are logged in)."""

    type: Literal["chat"]
    text: str = Field(max_length=4000)


CLIENT_MESSAGE_TYPES = ("hello", "act", "hint", "reclaim", "resign", "chat", "ping", "sync")

TableState.model_rebuild()
