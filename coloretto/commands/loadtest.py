"""``coloretto loadtest``: its options, checked before any server starts; the test itself is
:mod:`coloretto.tools.loadtest`.

``coloretto loadtest``: many games at once over real WebSockets, and how the server held up.

Each game has one person seat, played by this tool over the game's WebSocket
as soon as it is that seat's turn (a random legal action, ``move`` set), and
bots that the server moves at its bot delay. The tool measures the time from
sending an ``act`` to receiving the state that holds that move, the moves
accepted per second (every move seen in the states, the bots' included),
every server's ``/api/health`` polled ten times a second and its ``/metrics``
twice a second (time and size), every error (a state
older than one the client already saw among them), and, for the servers it
started itself, each one's CPU time and memory.

The games are spread round robin over one or more servers: several ``--url``
(several processes, or one nginx), or ``--processes N`` servers the tool
starts on one PostgreSQL database and one Redis. ``--watch-elsewhere`` sends
each game's WebSocket to another server than the one that created it, so every
state a client sees crossed processes. ``--kill-after`` SIGKILLs the first
started server mid-run and reports how long its games took to move again,
whether the person clients reconnected by themselves (to another server), and
whether any move a client was shown is missing from the database afterwards.
``--backup FILE`` backs the database up mid-run (``--backup-after``) and reports whether every move
acknowledged to a client before the backup began is in it.
``--rolling-restart SECONDS`` restarts every started server in turn with SIGTERM
(:mod:`coloretto.tools.loadtest.restart`) and reports the same of each restart.

Traffic goes to loopback only, the run lasts ``--duration`` seconds, and the
servers the tool started are stopped and their directory removed at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from dataclasses import fields
from pathlib import Path
from urllib.parse import urlsplit

from coloretto.commands import CommandError
from coloretto.commands.options import bot_delay, check_output_file, finite_number, path_arg, seed_arg
from coloretto.web.table.changes import PROTOCOLS

LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")

MAX_PROCESSES = 16


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "loadtest",
        help="load a game server: N games over real WebSockets, latency and throughput",
        description="Play N games at once against game servers (coloretto serve), one person seat "
        "per game played by this tool over the game's WebSocket, the other seats bots. Prints the "
        "time from action to state broadcast (percentiles), moves per second, /api/health and "
        "/metrics latency, errors, and each server's CPU and memory when the tool started the "
        "servers. Without --url it starts its own server (coloretto serve --port 0) in a temporary "
        "directory, or --processes N of them on one PostgreSQL database and one Redis. Only loopback "
        "addresses are allowed. Exit status 1 when any error was seen.",
    )
    where = parser.add_mutually_exclusive_group()
    where.add_argument(
        "--url",
        action="append",
        default=None,
        help="a running server on this machine, e.g. http://127.0.0.1:8000; repeat it for several "
        "processes (the games are spread over them round robin)",
    )
    where.add_argument(
        "--serve",
        action="store_true",
        help="start the servers for the run (the default without --url), without the limits per "
        "client address (every client of the test is one address), and stop them at the end",
    )
    parser.add_argument(
        "--processes",
        type=int,
        default=None,
        metavar="N",
        help="start N server processes (default 1); 2 or more need --database-url and --redis-url",
    )
    parser.add_argument(
        "--database-url",
        default=None,
        metavar="URL",
        help="the started servers' database, e.g. postgresql://user:pw@127.0.0.1/coloretto (default: "
        "SQLite in the temporary directory), best one of its own: the servers resume every unfinished "
        "game in it; with --url, the given servers' database, for the check that every move a client "
        "was shown is stored",
    )
    parser.add_argument(
        "--redis-url",
        default=None,
        metavar="URL",
        help="the Redis the started servers share, e.g. redis://127.0.0.1:6379/0",
    )
    parser.add_argument(
        "--kill-after",
        type=finite_number,
        default=None,
        metavar="SECONDS",
        help="SIGKILL the first started server this long into the measured time (needs --processes "
        "2 or more) and report how its games went on in the others",
    )
    parser.add_argument(
        "--backup",
        type=path_arg,
        default=None,
        metavar="FILE",
        help="back the servers' database up into FILE during the run (SQLite: coloretto backup's online "
        "backup; PostgreSQL: pg_dump -Fc), then report how many of the moves acknowledged to the "
        "clients before the backup began it lacks (it must be 0)",
    )
    parser.add_argument(
        "--backup-after",
        type=finite_number,
        default=None,
        metavar="SECONDS",
        help="when the --backup begins, from the start of the measured time (default: half --duration)",
    )
    parser.add_argument(
        "--rolling-restart",
        type=finite_number,
        default=None,
        metavar="SECONDS",
        help="restart each started server in turn under load, SECONDS apart: SIGTERM (it drains), "
        "started again on the same port, waited for; reports the errors clients saw, the moves "
        "missing from the database and how soon each restarted server's games moved again (the "
        "measured time lasts until every server was restarted and SECONDS more)",
    )
    parser.add_argument(
        "--watch-elsewhere",
        action="store_true",
        help="each game's WebSocket goes to the next server, not the one that created the game "
        "(needs two or more servers)",
    )
    parser.add_argument(
        "--spectators",
        type=int,
        default=0,
        metavar="N",
        help="connections per game that only watch it (default 0); the report gives the bytes a "
        "spectator was sent per move",
    )
    parser.add_argument(
        "--protocol",
        type=int,
        choices=PROTOCOLS,
        default=PROTOCOLS[-1],
        help="the live protocol the clients speak: 1, the whole table after every move; 2, the "
        "table once, then what changed (default 2, as the browser)",
    )
    parser.add_argument("--games", type=int, default=50, help="games played at once (default 50)")
    parser.add_argument(
        "--bots", type=int, default=3, help="bot seats per game, besides the person's (1-4, default 3)"
    )
    parser.add_argument("--bot", default="easy", help="the bots' name or difficulty (default easy)")
    parser.add_argument(
        "--bot-delay",
        type=bot_delay,
        default=None,
        metavar="SECONDS",
        help="the started servers' bot delay (default 0.8, as coloretto serve); not with --url",
    )
    parser.add_argument(
        "--duration",
        type=finite_number,
        default=30.0,
        metavar="SECONDS",
        help="measured time (default 30)",
    )
    parser.add_argument(
        "--message-rate",
        type=finite_number,
        default=None,
        metavar="N",
        help="the started servers' WebSocket message rate per client (default 1000, so that the "
        "limit does not throttle the test; with --soak the server's own default, 10, as people "
        "meet it); with --url the client keeps to the server's own limit",
    )
    parser.add_argument(
        "--server-arg",
        action="append",
        default=[],
        metavar="ARG",
        help="one more argument for the started servers' coloretto serve (repeatable), "
        "e.g. --server-arg=--hint-budget=0.5",
    )
    soak = parser.add_argument_group(
        "soak test",
        "--soak plays --games whole games to their end instead of measuring for --duration: tables "
        "with one to three people played by this tool and bots, rules drawn from every rule option, "
        "people who act at once, twice on the same move, over HTTP, and drop their connection now "
        "and then; it reports every game that stalled (no move for --stall-after seconds while "
        "unfinished) with its last moves. Exit status 1 when a game stalled or an error was seen.",
    )
    soak.add_argument(
        "--soak", action="store_true", help="play whole games to their end and count the stalls"
    )
    soak.add_argument(
        "--at-once", type=int, default=40, metavar="N", help="tables in play at once (default 40)"
    )
    soak.add_argument(
        "--stall-after",
        type=finite_number,
        default=10.0,
        metavar="SECONDS",
        help="a table with no new move for this long is stalled (default 10)",
    )
    soak.add_argument(
        "--bot-delay-jitter",
        type=bot_delay,
        default=None,
        metavar="SECONDS",
        help="the started servers' bots wait a further random 0 to SECONDS (default 0.2 with "
        "--soak, when the bot delay is 0 unless given; 0 otherwise)",
    )
    parser.add_argument("--seed", type=seed_arg, default=1, help="seed of the person clients' choices")
    parser.add_argument("--json", type=path_arg, default=None, metavar="FILE", help="also write the figures")
    parser.set_defaults(func=run)


def check_url(url: str) -> str:
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        raise CommandError(f"--url {url!r} is not a URL like http://127.0.0.1:8000") from None
    if parts.scheme != "http" or parts.hostname not in LOOPBACK_HOSTS or port is None:
        raise CommandError(
            f"--url must be http://127.0.0.1:PORT (or localhost, [::1]): this tool only loads "
            f"a server on this machine, not {url!r}"
        )
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    return f"http://{host}:{port}"


def check_urls(urls: list[str]) -> list[str]:
    checked: list[str] = []
    for url in urls:
        normal = check_url(url)
        if normal in checked:
            raise CommandError(f"--url {url} is given twice: each server once")
        checked.append(normal)
    return checked


def check_database_url(url: str, shared: bool) -> None:
    """A PostgreSQL (or SQLite) URL on this machine; PostgreSQL when several processes share it."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    try:
        parsed = make_url(url)
    except (ArgumentError, ValueError):
        raise CommandError(
            f"--database-url {url!r} is not a database URL like postgresql://user:pw@127.0.0.1/coloretto"
        ) from None
    backend = parsed.get_backend_name()
    if backend not in ("postgresql", "sqlite"):
        raise CommandError(f"--database-url must be postgresql://… (or sqlite:///…), not {backend}://")
    if shared and backend != "postgresql":
        raise CommandError(
            "--processes 2 or more share one database: --database-url must be postgresql://…, "
            "not an SQLite file"
        )
    if parsed.host not in (None, "", *LOOPBACK_HOSTS):
        raise CommandError(
            f"--database-url must be on this machine (127.0.0.1, localhost or a socket), not {parsed.host}"
        )


def check_redis_url(url: str) -> None:
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a bad port
    except ValueError:
        raise CommandError(f"--redis-url {url!r} is not a URL like redis://127.0.0.1:6379/0") from None
    if parts.scheme != "redis" or parts.hostname not in LOOPBACK_HOSTS:
        raise CommandError(
            f"--redis-url must be redis://127.0.0.1:PORT/DB (or localhost, [::1]): a Redis on this "
            f"machine, not {url!r}"
        )


def check_args(args: argparse.Namespace) -> None:
    if args.soak:
        check_soak_args(args)
    elif not 1 <= args.games <= 5000:
        raise CommandError(f"--games must be 1 to 5000, not {args.games}")
    if not 1 <= args.bots <= 4:
        raise CommandError(f"--bots must be 1 to 4 (a game has 2 to 5 seats), not {args.bots}")
    if not 0 <= args.spectators <= 100:
        raise CommandError(f"--spectators must be 0 to 100 per game, not {args.spectators}")
    if not 0 < args.duration <= 3600:
        raise CommandError(f"--duration must be more than 0 and at most 3600 seconds, not {args.duration:g}")
    if args.bot_delay is not None and args.url:
        raise CommandError(
            "--bot-delay sets the server this tool starts; with --url the server's own applies"
        )
    if args.bot_delay is not None and not 0 <= args.bot_delay <= 60:
        raise CommandError(f"--bot-delay must be 0 to 60 seconds, not {args.bot_delay:g}")
    if args.message_rate is not None and not args.message_rate > 0:
        raise CommandError(f"--message-rate must be more than 0, not {args.message_rate:g}")
    if not args.bot.strip():
        raise CommandError("--bot cannot be empty")
    processes = args.processes
    if processes is not None:
        if args.url:
            raise CommandError("--processes starts the servers itself: not with --url")
        if not 1 <= processes <= MAX_PROCESSES:
            raise CommandError(f"--processes must be 1 to {MAX_PROCESSES}, not {processes}")
    if args.redis_url is not None:
        if args.url:
            raise CommandError("--redis-url sets the servers this tool starts; not with --url")
        check_redis_url(args.redis_url)
        if args.database_url is None:
            raise CommandError(
                "--redis-url joins several server processes: give them one --database-url postgresql://…"
            )
    if processes is not None and processes >= 2 and (args.database_url is None or args.redis_url is None):
        raise CommandError(
            f"--processes {processes} runs several servers on one database: give --database-url "
            "postgresql://… and --redis-url redis://…"
        )
    if args.database_url is not None:
        check_database_url(args.database_url, shared=args.redis_url is not None)
    if args.kill_after is not None:
        if processes is None or processes < 2:
            raise CommandError(
                "--kill-after SIGKILLs one of the servers this tool starts: it needs --processes 2 or "
                "more, for the games to go on in the others"
            )
        if not 0 < args.kill_after < args.duration:
            raise CommandError(
                f"--kill-after must be more than 0 and less than --duration ({args.duration:g} s), "
                f"not {args.kill_after:g}"
            )
    if args.rolling_restart is not None:
        if args.url:
            raise CommandError("--rolling-restart restarts the servers this tool starts: not with --url")
        if args.kill_after is not None:
            raise CommandError("--rolling-restart and --kill-after are two different tests: one at a time")
        if not 1 <= args.rolling_restart <= 600:
            raise CommandError(f"--rolling-restart must be 1 to 600 seconds, not {args.rolling_restart:g}")
    if args.json is not None:
        check_output_file(args.json, "--json")  # now, not after the whole run
    check_backup_args(args)
    servers = len(args.url) if args.url else (processes or 1)
    if args.watch_elsewhere and servers < 2:
        raise CommandError(
            "--watch-elsewhere sends each game's WebSocket to another server: it needs two or more "
            "(--url twice, or --processes 2)"
        )


def check_backup_args(args: argparse.Namespace) -> None:
    """--backup FILE and --backup-after SECONDS: a file that can be written, a database to back up,
    a moment inside the measured time."""
    if args.backup is None:
        if args.backup_after is not None:
            raise CommandError("--backup-after says when the --backup FILE begins: give --backup too")
        return
    if args.url and args.database_url is None:
        raise CommandError("--backup backs up the servers' database: with --url, give it as --database-url")
    check_output_file(args.backup, "--backup")
    if args.json is not None and args.backup.absolute() == args.json.absolute():
        raise CommandError("--backup and --json name the same file")
    if args.backup.is_file() and not _is_backup(args.backup):
        raise CommandError(
            f"--backup {args.backup} exists and is not a backup (an SQLite file or a pg_dump -Fc "
            "dump): choose another name"
        )
    if args.backup_after is not None and not 0 < args.backup_after < args.duration:
        raise CommandError(
            f"--backup-after must be more than 0 and less than --duration ({args.duration:g} s), "
            f"not {args.backup_after:g}"
        )


def _is_backup(file: Path) -> bool:
    """An earlier backup, which --backup may replace: an SQLite file, or a dump of pg_dump -Fc."""
    try:
        with file.open("rb") as opened:
            start = opened.read(16)
    except OSError:
        return False  # the run's own write says why, with the file's name
    return start == b"SQLite format 3\x00" or start.startswith(b"PGDMP")


def check_soak_args(args: argparse.Namespace) -> None:
    """The options of --soak, and those it does not take."""
    if not 1 <= args.games <= 100_000:
        raise CommandError(f"--games (whole games, with --soak) must be 1 to 100000, not {args.games}")
    if not 1 <= args.at_once <= 5000:
        raise CommandError(f"--at-once must be 1 to 5000, not {args.at_once}")
    if not 0 < args.stall_after <= 3600:
        raise CommandError(
            f"--stall-after must be more than 0 and at most 3600 seconds, not {args.stall_after:g}"
        )
    if args.kill_after is not None:
        raise CommandError("--kill-after is for the timed load test, not --soak")
    if args.backup is not None or args.backup_after is not None:
        raise CommandError("--backup is for the timed load test, not --soak")
    if args.rolling_restart is not None:
        raise CommandError("--rolling-restart is for the timed load test, not --soak")
    if args.spectators:
        raise CommandError("--spectators is for the timed load test, not --soak (it has spectators)")
    if args.bot_delay_jitter is not None and args.url:
        raise CommandError("--bot-delay-jitter sets the servers this tool starts; not with --url")


def run(args: argparse.Namespace) -> int:
    check_args(args)
    urls = check_urls(args.url) if args.url else None
    try:
        import httpx  # noqa: F401
        import websockets  # noqa: F401
    except ImportError as exc:
        raise CommandError(f"the load test needs {exc.name}: pip install -e '.[dev]'") from None
    from coloretto.tools.loadtest import LoadTestError
    from coloretto.tools.loadtest.report import print_report, print_soak_report
    from coloretto.tools.loadtest.run import LoadOptions, SoakOptions, run_load, run_soak

    options = SoakOptions if args.soak else LoadOptions
    given = {f.name: getattr(args, f.name) for f in fields(options)}
    given["server_arg"] = tuple(args.server_arg)
    try:
        if args.soak:
            report = asyncio.run(run_soak(SoakOptions(**given), urls))
        else:
            report = asyncio.run(run_load(LoadOptions(**given), urls))
    except LoadTestError as exc:
        raise CommandError(str(exc)) from None
    (print_soak_report if args.soak else print_report)(report)
    if args.json is not None:
        try:
            args.json.write_text(json.dumps(report, indent=2) + "\n")
        except OSError as exc:
            raise CommandError(f"cannot write {args.json}: {exc.strerror or exc}") from None
    failed = report["errors"] or (args.soak and report["stalled"])
    return 1 if failed else 0
