"""``coloretto serve``: the multiplayer web app."""

from __future__ import annotations

import argparse
import logging
import logging.config
import socket
from dataclasses import replace
from typing import Any

from coloretto.commands import CommandError
from coloretto.commands.options import (
    HOURS_A_YEAR,
    MINUTES_A_YEAR,
    SECONDS_A_DAY,
    bot_delay,
    finite_number,
    move_seconds,
    number_up_to,
    path_arg,
)


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "serve",
        help="play in the browser: a multiplayer web server",
        description="Start the web app: a lobby, tables for 2-5 people and bots, live updates, "
        "replays. Games are kept in an SQLite database in the data directory unless "
        "--database-url names another (PostgreSQL).",
    )
    parser.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to listen on (default 127.0.0.1; 0.0.0.0 for every interface)",
    )
    parser.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    parser.add_argument(
        "--data-dir",
        type=path_arg,
        default=None,
        help="where the SQLite database lives (default $COLORETTO_DATA or ~/.local/share/coloretto)",
    )
    parser.add_argument(
        "--database-url",
        default=None,
        metavar="URL",
        help="a SQLAlchemy URL instead of SQLite, e.g. postgresql://user:pw@host/coloretto",
    )
    parser.add_argument(
        "--bot-delay",
        type=bot_delay,
        default=0.8,
        metavar="SECONDS",
        help="how long a bot waits before it moves (default 0.8)",
    )
    parser.add_argument(
        "--bot-delay-jitter",
        type=bot_delay,
        default=0.0,
        metavar="SECONDS",
        help="a bot waits a further random 0 to SECONDS (drawn from the game's seed), so that the "
        "bots of a table do not all move on the same beat (default 0)",
    )
    parser.add_argument(
        "--stuck-after",
        type=move_seconds,
        default=10.0,
        metavar="SECONDS",
        help="the watchdog reports and recovers a game whose bot or clock is this late (read again "
        "from the database, its bot set going again; default 10)",
    )
    parser.add_argument(
        "--adopt-interval",
        type=move_seconds,
        default=0.5,
        metavar="SECONDS",
        help="with --redis-url: how often this process looks for games no process runs (one that "
        "died) and for copies here the database moved past (an event from another process lost "
        "on the way); default 0.5",
    )
    parser.add_argument(
        "--worker-timeout",
        type=move_seconds,
        default=120.0,
        metavar="SECONDS",
        help="a bot worker that takes longer than this over one job (a move, a hint, a review "
        "position) is taken for hung: it is killed and replaced, and the job fails (a bot then "
        "plays a random legal move; default 120)",
    )
    parser.add_argument(
        "--hint-budget",
        type=move_seconds,
        default=1.0,
        metavar="SECONDS",
        help="thinking time for a hint (default 1)",
    )
    parser.add_argument(
        "--message-rate",
        type=finite_number,
        default=10.0,
        metavar="N",
        help="WebSocket messages a client may send a second, in bursts of 2N (default 10)",
    )
    parser.add_argument(
        "--max-bot-time",
        type=move_seconds,
        default=2.0,
        metavar="SECONDS",
        help="the longest budget a move a client may give a bot it names, e.g. mcts:2s (default 2)",
    )
    parser.add_argument(
        "--review-budget",
        type=int,
        default=None,
        metavar="N",
        help="search iterations per position of a game review and a what-if line (default "
        "$COLORETTO_REVIEW_BUDGET, else the review's default, 1200)",
    )
    parser.add_argument(
        "--max-running-reviews",
        type=int,
        default=None,
        metavar="N",
        help="reviews one server process works out at once; more are refused as busy "
        "(default $COLORETTO_MAX_RUNNING_REVIEWS, else 2)",
    )
    parser.add_argument(
        "--max-bot-iterations",
        type=int,
        default=20_000,
        metavar="N",
        help="the most iterations a move for a bot named with iterations only, e.g. mcts:20000 "
        "(default 20000)",
    )
    parser.add_argument(
        "--max-waiting-per-client",
        type=int,
        default=5,
        metavar="N",
        help="games waiting for players one client address may have (default 5; 0: no limit)",
    )
    parser.add_argument(
        "--creations-per-minute",
        type=int,
        default=20,
        metavar="N",
        help="games one client address may create a minute (default 20; 0: no limit)",
    )
    parser.add_argument(
        "--requests-per-minute",
        type=int,
        default=600,
        metavar="N",
        help="HTTP requests one client address may make a minute, in bursts of N (default 600; 0: no limit)",
    )
    parser.add_argument(
        "--trusted-proxy",
        action="append",
        default=[],
        metavar="ADDRESS",
        help="a reverse proxy (address or network, repeatable) whose X-Forwarded-For names the client",
    )
    parser.add_argument(
        "--waiting-expiry",
        type=number_up_to(MINUTES_A_YEAR, " minutes"),
        default=30.0,
        metavar="MINUTES",
        help="a game still waiting for players this long after its creation ends, marked expired "
        "(default 30)",
    )
    parser.add_argument(
        "--allowed-origin",
        action="append",
        default=[],
        metavar="ORIGIN",
        help="another site whose pages may open the game WebSocket, e.g. https://games.example "
        "(repeatable; the server's own pages always may)",
    )
    parser.add_argument(
        "--redis-url",
        default=None,
        metavar="URL",
        help="run as one of several processes on one PostgreSQL database: Redis carries their events "
        "and leases, e.g. redis://127.0.0.1:6379/0 (see docs/operator/deploy.md)",
    )
    parser.add_argument(
        "--bot-workers",
        type=int,
        default=None,
        metavar="N",
        help="worker processes that think for bots and hints (default: one fewer than the cores, 1-4)",
    )
    parser.add_argument(
        "--takeover-bot",
        default="medium",
        metavar="BOT",
        help="the bot that plays for a person whose clock ran out or who left (default medium)",
    )
    parser.add_argument(
        "--away-after",
        type=number_up_to(SECONDS_A_DAY, " seconds"),
        default=60.0,
        metavar="SECONDS",
        help="on a timed table, how long a person may be gone on their turn before a bot plays for "
        "them (default 60)",
    )
    parser.add_argument(
        "--abandon-after",
        type=number_up_to(HOURS_A_YEAR, " hours"),
        default=7 * 24.0,
        metavar="HOURS",
        help="an untimed game whose person to move has not moved this long ends as abandoned "
        "(default 168: a week)",
    )
    parser.add_argument(
        "--ws-compression",
        action="store_true",
        help="compress WebSocket messages (permessage-deflate): a state shrinks from ~8 KB to ~1.5 KB "
        "for slow links, at about a seventh of the server's CPU under load (default off)",
    )
    parser.add_argument(
        "--secure-cookies",
        default="auto",
        choices=["auto", "always", "never"],
        help="the Secure flag of the login and security-token cookies: auto sets it when the browser "
        "came over https (to this server, or to a --trusted-proxy that says X-Forwarded-Proto: https); "
        "always for a site served over https only (default auto)",
    )
    parser.add_argument(
        "--signups-per-hour",
        type=int,
        default=5,
        metavar="N",
        help="accounts one client address may make an hour (default 5; 0: no limit)",
    )
    parser.add_argument(
        "--leaderboard-min-games",
        type=int,
        default=3,
        metavar="N",
        help="rated games a person plays before the leaderboard lists them (default 3; the bot levels "
        "are always listed)",
    )
    parser.add_argument(
        "--reconnect-spread",
        type=move_seconds,
        default=2.0,
        metavar="SECONDS",
        help="with --redis-url, a draining process tells its clients to reconnect over this many seconds, "
        "a slice at a time, once another process runs its games; until then they play on through it "
        "(default 2; 0: all at once)",
    )
    parser.add_argument(
        "--drain-timeout",
        type=move_seconds,
        default=10.0,
        metavar="SECONDS",
        help="on SIGTERM the server stops listening, has the other processes read its games ahead while it "
        "runs them on, answers the messages it is handling, stores the moves it accepted, gives its games "
        "to the other processes and tells every table's clients to reconnect: it waits this long at most "
        "for the others' answer, and again for the writes (default 10; see docs/operator/deploy.md)",
    )
    parser.add_argument("--log-level", default="warning", choices=["debug", "info", "warning", "error"])
    parser.add_argument(
        "--log-format",
        default="text",
        metavar="FORMAT",
        help="text (default) or json: one JSON object a line (time, level, logger, message, request_id, "
        "game, move), uvicorn's own lines too (see docs/operator/monitoring.md)",
    )
    parser.add_argument(
        "--metrics-allow",
        action="append",
        default=[],
        metavar="ADDRESS",
        help="an address or network (repeatable) that may read /metrics besides this machine, e.g. the "
        "Prometheus server's; a request through a proxy never may (see docs/operator/monitoring.md)",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from coloretto.web.common.logs import LOG_FORMATS

    if args.log_format not in LOG_FORMATS:
        raise CommandError(f"--log-format must be {' or '.join(LOG_FORMATS)}, not {args.log_format!r}")
    try:
        import uvicorn

        from coloretto.web import create_app
        from coloretto.web.runtime.bus import BusError
        from coloretto.web.runtime.games import Settings
        from coloretto.web.server import DrainingServer
        from coloretto.web.storage.db import DatabaseError, default_data_dir, sqlite_url
    except ImportError as exc:  # pragma: no cover - the dependencies are installed with the package
        raise CommandError(f"the web app needs its dependencies ({exc.name}): pip install -e .") from None
    if not 0 <= args.port <= 65535:
        raise CommandError(f"--port must be 0 to 65535, not {args.port}")
    if args.bot_delay < 0 or args.hint_budget <= 0:
        raise CommandError("--bot-delay must be ≥ 0 and --hint-budget > 0")
    if args.bot_delay_jitter < 0:
        raise CommandError(f"--bot-delay-jitter must be ≥ 0 seconds, not {args.bot_delay_jitter:g}")
    for option, seconds in (
        ("--stuck-after", args.stuck_after),
        ("--worker-timeout", args.worker_timeout),
        ("--drain-timeout", args.drain_timeout),
        ("--adopt-interval", args.adopt_interval),
    ):
        if seconds <= 0:
            raise CommandError(f"{option} must be > 0 seconds, not {seconds:g}")
    if args.database_url:
        url = args.database_url
        where = url.split("@")[-1]
    else:
        data_dir = args.data_dir or default_data_dir()
        try:
            data_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise CommandError(f"cannot create the data directory {data_dir}: {exc}") from None
        url = sqlite_url(data_dir)
        where = str(data_dir.resolve())
    if args.message_rate <= 0:
        raise CommandError("--message-rate must be > 0")
    if args.max_bot_time <= 0 or args.max_bot_iterations < 1:
        raise CommandError("--max-bot-time must be > 0 and --max-bot-iterations ≥ 1")
    for flag in (
        "max_waiting_per_client",
        "creations_per_minute",
        "requests_per_minute",
        "signups_per_hour",
    ):
        if getattr(args, flag) < 0:
            raise CommandError(f"--{flag.replace('_', '-')} must be ≥ 0 (0: no limit)")
    if args.leaderboard_min_games < 0:
        raise CommandError(f"--leaderboard-min-games must be ≥ 0, not {args.leaderboard_min_games}")
    if args.waiting_expiry <= 0:
        raise CommandError("--waiting-expiry must be > 0 minutes")
    if args.bot_workers is not None and not 1 <= args.bot_workers <= 64:
        raise CommandError(f"--bot-workers must be 1 to 64, not {args.bot_workers}")
    if args.away_after <= 0 or args.abandon_after <= 0:
        raise CommandError("--away-after and --abandon-after must be > 0")
    if args.redis_url and not args.database_url:
        raise CommandError(
            "--redis-url joins several server processes: they need one shared database "
            "(--database-url postgresql://…), not each its own SQLite file"
        )
    from coloretto.bots import BotSpecError, check_bot

    try:
        takeover = check_bot(args.takeover_bot.strip())
    except BotSpecError as exc:
        raise CommandError(f"--takeover-bot: {exc}") from None
    if args.review_budget is not None and args.review_budget < 1:
        raise CommandError(f"--review-budget must be at least 1 iteration, not {args.review_budget}")
    if args.max_running_reviews is not None and args.max_running_reviews < 1:
        raise CommandError(f"--max-running-reviews must be at least 1, not {args.max_running_reviews}")
    try:
        base = Settings()  # reads $COLORETTO_REVIEW_BUDGET and $COLORETTO_MAX_RUNNING_REVIEWS
    except ValueError as exc:
        raise CommandError(str(exc)) from None
    settings = replace(
        base,
        review_budget=base.review_budget if args.review_budget is None else args.review_budget,
        max_running_reviews=(
            base.max_running_reviews if args.max_running_reviews is None else args.max_running_reviews
        ),
        waiting_expiry=args.waiting_expiry * 60.0,
        max_waiting_per_client=args.max_waiting_per_client,
        creations_per_minute=args.creations_per_minute,
        requests_per_minute=args.requests_per_minute,
        trusted_proxies=tuple(args.trusted_proxy),
        allowed_origins=tuple(args.allowed_origin),
        max_bot_time=args.max_bot_time,
        max_bot_iterations=args.max_bot_iterations,
        bot_delay=args.bot_delay,
        bot_delay_jitter=args.bot_delay_jitter,
        stuck_after=args.stuck_after,
        adopt_interval=args.adopt_interval,
        reconnect_spread=args.reconnect_spread,
        worker_job_timeout=args.worker_timeout,
        hint_budget=args.hint_budget,
        messages_per_second=args.message_rate,
        message_burst=max(1, round(2 * args.message_rate)),
        redis_url=args.redis_url,
        bot_workers=args.bot_workers,
        takeover_bot=takeover.name,
        away_after=args.away_after,
        abandon_after=args.abandon_after * 3600.0,
        secure_cookies=args.secure_cookies,
        signups_per_hour=args.signups_per_hour,
        leaderboard_min_games=args.leaderboard_min_games,
        metrics_from=tuple(args.metrics_allow),
    )
    if args.redis_url:
        _check_redis(args.redis_url)
    from coloretto.web.api.monitoring import metrics_networks

    try:
        metrics_networks(settings.metrics_from)
    except ValueError as exc:
        raise CommandError(str(exc)) from None
    log_config = _configure_logging(args.log_format, args.log_level)
    try:
        app = create_app(url, settings, close_workers=True)
    except (DatabaseError, BusError, ValueError) as exc:  # ValueError: a --trusted-proxy that is no address
        raise CommandError(str(exc)) from None
    config = uvicorn.Config(
        app,
        host=args.host,
        port=args.port,
        log_level=args.log_level,
        log_config=log_config,
        ws_max_size=settings.max_frame_bytes,
        # the app decides whose X-Forwarded-For to believe (--trusted-proxy); uvicorn's own default
        # believes any local client's, which let one dodge the per-client limits
        proxy_headers=False,
        # compressing every state costs more CPU than anything else a move does; a state is ~8 KB
        ws_per_message_deflate=args.ws_compression,
        timeout_graceful_shutdown=3,
    )
    server = DrainingServer(config, app.state.site, args.drain_timeout)
    try:
        family = socket.AF_INET6 if ":" in args.host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((args.host, args.port))
    except OSError as exc:
        raise CommandError(f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc}") from None
    port = sock.getsockname()[1]
    host = "localhost" if args.host in ("127.0.0.1", "localhost") else args.host
    served = f"Coloretto is being served at http://{host}:{port}/  (games in {where}; Ctrl+C stops)"
    if args.log_format == "json":  # the same line, as every other line is: whatever the log level
        from coloretto.web.common.logs import json_line

        served = json_line("coloretto.serve", served)
    print(served, flush=True)
    server.run(sockets=[sock])
    # SIGTERM: 0 once drained (every accepted write stored), 1 if the writes did not finish in time
    return 1 if server.drained is False else 0


def _configure_logging(log_format: str, level: str) -> dict[str, Any] | str:
    """Set up the server's logging in ``log_format`` (text, as it always was, or JSON lines); the
    ``log_config`` for uvicorn's own loggers."""
    if log_format == "json":
        from coloretto.web.common.logs import json_logging_config

        config = json_logging_config(level)
        logging.config.dictConfig(config)
        logging.captureWarnings(True)  # a library's warning is a JSON line too, not text on stderr
        return config
    from uvicorn.config import LOGGING_CONFIG

    logging.basicConfig(level=level.upper(), format="%(levelname)s %(name)s: %(message)s")
    return LOGGING_CONFIG


def _check_redis(url: str) -> None:
    """A Redis that cannot be reached is a one-line error now, not a traceback at start-up."""
    try:
        import redis
    except ImportError:
        raise CommandError("--redis-url needs redis-py: python3 -m pip install 'redis>=5'") from None
    from coloretto.web.runtime.cluster import redacted

    try:
        client = redis.Redis.from_url(url, socket_connect_timeout=3, socket_timeout=3)
        client.ping()
        client.close()
    except (ValueError, redis.RedisError) as exc:
        raise CommandError(f"cannot reach Redis at {redacted(url)}: {exc}") from None
