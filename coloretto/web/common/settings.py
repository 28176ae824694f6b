"""The game server's settings; the limits are documented in docs/operator/options.md and safety.md."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from coloretto.bots import BotSpec
from coloretto.web.common.errors import ServiceError
from coloretto.web.common.i18n import gettext as _
from coloretto.web.common.i18n import number
from coloretto.web.common.schemas import PASSWORD_MAX, PASSWORD_MIN, Limits

#: the values of ``secure_cookies``
SECURE_COOKIES = ("auto", "always", "never")

#: the environment variables read for the settings that ``coloretto serve`` has no option for
REVIEW_BUDGET_VARIABLE = "COLORETTO_REVIEW_BUDGET"
MAX_RUNNING_REVIEWS_VARIABLE = "COLORETTO_MAX_RUNNING_REVIEWS"


def _environment_int(name: str, minimum: int) -> int | None:
    """A whole number from the environment (unset or empty: None); a bad one is a one-line ValueError."""
    text = os.environ.get(name, "").strip()
    if not text:
        return None
    try:
        value = int(text)
    except ValueError:
        raise ValueError(f"${name} must be a whole number, not {text!r}") from None
    if value < minimum:
        raise ValueError(f"${name} must be at least {minimum}, not {value}")
    return value


def _review_budget() -> int | None:
    return _environment_int(REVIEW_BUDGET_VARIABLE, 1)


def _max_running_reviews() -> int:
    value = _environment_int(MAX_RUNNING_REVIEWS_VARIABLE, 1)
    return 2 if value is None else value


@dataclass(frozen=True)
class Settings:
    """Server settings; the limits are documented in docs/operator/options.md and docs/operator/safety.md."""

    bot_delay: float = 0.8  #: seconds a bot waits before it moves, so people can follow
    #: a bot waits a further 0 to this many seconds (drawn from the game's seed), so that bots do
    #: not all move on the same beat
    bot_delay_jitter: float = 0.0
    #: the watchdog looks at every game this process runs this often (seconds), and reports and
    #: recovers one whose bot or clock is ``stuck_after`` seconds late
    watchdog_every: float = 1.0
    stuck_after: float = 10.0
    #: seconds a worker may take over one job (a bot's move, a hint, a review task) before it is
    #: taken for hung, killed and replaced, and the job failed
    worker_job_timeout: float = 120.0
    hint_budget: float = 1.0  #: seconds of analysis for a hint
    max_message_bytes: int = 4096  #: larger WebSocket messages are refused with an error
    max_frame_bytes: int = 65536  #: larger frames close the connection (code 1009)
    messages_per_second: float = 10.0
    message_burst: int = 20
    flood_disconnect_after: int = 50  #: refused-for-rate messages before the connection is closed
    max_body_bytes: int = 16384  #: HTTP request bodies
    max_connections_per_game: int = 64
    max_waiting_games: int = 500  #: open games waiting for players
    send_queue: int = 256  #: messages queued for a slow client before it is dropped
    #: a bot's budget per move a client may name: its time, or (no time given) its iterations
    max_bot_time: float = 2.0
    max_bot_iterations: int = 20_000
    #: per client (its address): games waiting for players, creations and HTTP requests a minute
    #: (0: no limit); a game with no free seat for a person (against bots only) never waits
    max_waiting_per_client: int = 5
    creations_per_minute: int = 20
    requests_per_minute: int = 600
    #: proxies whose X-Forwarded-For names the client (addresses or networks such as 10.0.0.0/8)
    trusted_proxies: tuple[str, ...] = ()
    #: pages on other sites that may open the game's WebSocket (``https://host[:port]``), besides
    #: the server's own address (the Host header); a browser always sends its page's Origin
    allowed_origins: tuple[str, ...] = ()
    #: seconds a game may wait for players after its creation; then it ends, marked ``expired``
    waiting_expiry: float = 1800.0
    #: who is online is told to a game's watchers at most this often (seconds): a client that
    #: switches seats in a loop makes one message per watcher per interval, not one per switch
    presence_interval: float = 0.5
    #: worker processes for bots and hints (None: one fewer than the cores, at most 4)
    bot_workers: int | None = None
    #: the bot that plays for a person whose clock ran out or who has been gone too long
    takeover_bot: str = "medium"
    #: seconds a person of a timed table may be gone on their turn before a bot plays for them
    away_after: float = 60.0
    #: seconds an untimed game in play may go without a move before it ends as abandoned
    abandon_after: float = 7 * 24 * 3600.0
    #: Redis, for several server processes on one PostgreSQL database (None: one process alone)
    redis_url: str | None = None
    #: how often a process of several looks for games without an owner (a process that died) and
    #: for copies the database moved past (an event from another process lost on the way)
    adopt_interval: float = 0.5
    #: seconds over which a draining process of several tells its clients to reconnect, a slice
    #: at a time, after giving its games to another process: until then it shows them the moves
    #: made there and passes their moves on (0: all at once, as a process alone does)
    reconnect_spread: float = 2.0
    #: search iterations per analysed position of a game review and of a what-if line (None:
    #: ``coloretto.review.DEFAULT_BUDGET``); default from ``$COLORETTO_REVIEW_BUDGET``
    review_budget: int | None = field(default_factory=_review_budget)
    #: reviews this process runs at once; more are refused with ``busy`` (429); default from
    #: ``$COLORETTO_MAX_RUNNING_REVIEWS``, else 2
    max_running_reviews: int = field(default_factory=_max_running_reviews)
    #: the Secure flag of the session and security-token cookies: ``auto`` when the request came
    #: over https (a trusted proxy's ``X-Forwarded-Proto: https`` counts), ``always``, ``never``
    secure_cookies: str = "auto"
    session_days: float = 30.0  #: a login lasts this long (the browser's cookie and the session row)
    #: failed logins for one name (and from one address) counted over ``login_window`` seconds
    #: before further attempts wait: ``login_lock`` seconds, doubling with every failure after
    login_failures: int = 5
    login_address_failures: int = 20
    login_window: float = 900.0
    login_lock: float = 30.0
    signups_per_hour: int = 5  #: accounts one address may make an hour (0: no limit)
    #: passwords hashed or checked at once (each keeps Argon2's lanes, four threads, and 64 MiB busy
    #: for a while; None: one per two cores, 1 to 4), and how many may wait for their turn before
    #: more are refused as busy
    max_hashing: int | None = None
    max_hashing_waiting: int = 64
    #: Argon2id's (time cost, memory in KiB, parallelism); None: argon2-cffi's defaults (RFC 9106's
    #: low-memory profile). Tests make it cheap.
    password_cost: tuple[int, int, int] | None = None
    leaderboard_min_games: int = 3  #: rated games a person plays before being listed
    chat_max_chars: int = 300
    #: chat messages one seat (or logged-in spectator), and one connection, may send in
    #: ``chat_seconds`` seconds
    chat_messages: int = 5
    chat_seconds: float = 10.0
    chat_history: int = 50  #: messages a client gets when it connects
    #: besides this machine (loopback), the addresses or networks that may read ``/metrics``
    #: (``--metrics-allow``); a request that came through a proxy never may
    metrics_from: tuple[str, ...] = ()
    #: how often every process reads the moderation events (seconds): how soon an action made
    #: elsewhere (another process, ``coloretto admin``) reaches the clients of this one
    moderation_poll: float = 1.0
    reports_per_hour: int = 10  #: reports one account may make an hour (0: no limit)

    def __post_init__(self) -> None:
        if self.secure_cookies not in SECURE_COOKIES:
            raise ValueError(
                f"secure_cookies must be one of {', '.join(SECURE_COOKIES)}, not {self.secure_cookies!r}"
            )

    def hashing_slots(self) -> int:
        """:attr:`max_hashing`, or one per two cores (1 to 4): on two cores, two hashes at once
        took the cores from the games (``/api/health``'s p99 100-200 ms during a flood of sign-ups,
        against 60-80 ms with one)."""
        if self.max_hashing is not None:
            return self.max_hashing
        return max(1, min(4, (os.cpu_count() or 2) // 2))

    def review_iterations(self) -> int:
        """:attr:`review_budget`, or the review's default (importing :mod:`coloretto.review`)."""
        if self.review_budget is not None:
            return self.review_budget
        from coloretto.review import DEFAULT_BUDGET

        return int(DEFAULT_BUDGET)

    def limits(self) -> Limits:
        return Limits(
            max_message_bytes=self.max_message_bytes,
            max_frame_bytes=self.max_frame_bytes,
            messages_per_second=self.messages_per_second,
            message_burst=self.message_burst,
            flood_disconnect_after=self.flood_disconnect_after,
            max_body_bytes=self.max_body_bytes,
            max_connections_per_game=self.max_connections_per_game,
            max_waiting_games=self.max_waiting_games,
            max_bot_time=self.max_bot_time,
            max_bot_iterations=self.max_bot_iterations,
            max_waiting_per_client=self.max_waiting_per_client,
            creations_per_minute=self.creations_per_minute,
            requests_per_minute=self.requests_per_minute,
            waiting_expiry=self.waiting_expiry,
            away_after=self.away_after,
            abandon_after=self.abandon_after,
            chat_max_chars=self.chat_max_chars,
            chat_messages=self.chat_messages,
            chat_seconds=self.chat_seconds,
            password_min=PASSWORD_MIN,
            password_max=PASSWORD_MAX,
            leaderboard_min_games=self.leaderboard_min_games,
        )

    def check_bot_budget(self, spec: BotSpec) -> None:
        """Refuse a bot whose budget per move is over the server's cap: a time over
        ``max_bot_time``, or iterations alone over ``max_bot_iterations`` (a bot given both
        stops at whichever comes first, so either one within its cap bounds it)."""
        limit = spec.limit
        if limit is None:  # bots that do not search answer at once
            return
        if limit.time is not None and limit.time <= self.max_bot_time:
            return
        if limit.iterations is not None and limit.iterations <= self.max_bot_iterations:
            return
        raise ServiceError(
            "bot_not_allowed",
            _(
                "bot {bot} thinks for {limit} a move: this server allows at most {seconds} s "
                "(or {iterations} iterations) a move",
                bot=repr(spec.name),
                limit=limit,
                seconds=number(self.max_bot_time),
                iterations=self.max_bot_iterations,
            ),
        )
