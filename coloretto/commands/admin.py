"""``coloretto admin``: the site's administrators and moderation from the command line.

Each subcommand opens the web app's database (the default SQLite data directory, ``--data-dir`` or
``--database-url``, as ``coloretto serve``) and runs the same transaction as the admin page
(:mod:`coloretto.web.storage.moderation`): the change, its line of the audit log (actor "command
line") and its moderation event, which every running server process reads within about a second
and acts on (sockets closed, chat taken back, seats handed to bots, games read again). A server
may run on the database meanwhile, or none."""

from __future__ import annotations

import argparse
import getpass
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit

from coloretto.commands import CommandError
from coloretto.commands.options import path_arg

T = TypeVar("T")

#: a chat message as the admin page names it: the game's id, a colon, the message's number
MESSAGE_ID = re.compile(r"^([A-Za-z0-9_-]{1,16}):([1-9][0-9]{0,9})$")


def _database_options(parser: argparse.ArgumentParser, default: Any) -> None:
    parser.add_argument(
        "--data-dir",
        type=path_arg,
        default=default,
        help="the SQLite database's directory (as serve: default $COLORETTO_DATA or "
        "~/.local/share/coloretto)",
    )
    parser.add_argument(
        "--database-url", default=default, metavar="URL", help="a database URL instead (as serve)"
    )


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "admin",
        help="the site's administrators, bans, hidden messages, ended games, reset links",
        description="Moderate the web site from the command line: every action is the admin page's "
        "own, written to the audit log as 'command line'. A running server on the same database "
        "acts on it within about a second.",
    )
    _database_options(parser, None)
    actions = parser.add_subparsers(dest="action", metavar="ACTION")
    actions.required = True
    common = argparse.ArgumentParser(add_help=False)
    _database_options(common, argparse.SUPPRESS)  # after the action too, without undoing one before it

    def action(name: str, help: str, func: Callable[[argparse.Namespace], int]) -> argparse.ArgumentParser:
        sub = actions.add_parser(name, help=help, description=help, parents=[common])
        sub.set_defaults(func=func)
        return sub

    made = action(
        "create-admin", "make an administrator's account (the password asked without echo)", create_admin
    )
    made.add_argument("name")
    made.add_argument(
        "--password-file",
        type=path_arg,
        default=None,
        help="read the password from the first line of FILE ('-': standard input) instead of asking",
    )
    action("promote", "make an account an administrator", promote).add_argument("name")
    action(
        "demote", "make an administrator an ordinary account again (not the last one)", demote
    ).add_argument("name")
    listed = action("reports", "list the players' reports (the open ones, oldest first)", reports)
    listed.add_argument("--status", choices=["open", "resolved"], default="open")
    listed.add_argument("--limit", type=int, default=50, help="at most this many (default 50)")
    resolved = action("resolve-report", "close a report", resolve_report)
    resolved.add_argument("report", type=int, metavar="ID")
    resolved.add_argument("--note", default="", help="what was done about it")
    hidden = action("hide-message", "hide a chat message from everyone (GAME:NUMBER)", hide_message)
    hidden.add_argument("message", metavar="GAME:NUMBER")
    hidden.add_argument("--reason", required=True)
    shown = action("show-message", "show a hidden chat message again (GAME:NUMBER)", show_message)
    shown.add_argument("message", metavar="GAME:NUMBER")
    shown.add_argument("--reason", default="")
    banned = action(
        "ban", "ban an account: logged out at once, no log-in, chat or seat; bots take its games", ban
    )
    banned.add_argument("name")
    banned.add_argument("--reason", required=True)
    lifted = action("unban", "lift a ban", unban)
    lifted.add_argument("name")
    lifted.add_argument("--reason", default="")
    ended = action("end-game", "end a game waiting for players or in play (no rating moves)", end_game)
    ended.add_argument("game", metavar="GAME_ID")
    ended.add_argument("--reason", required=True)
    log = action("audit", "show the audit log of every administrator's action, newest first", audit)
    log.add_argument("--limit", type=int, default=50, help="at most this many (default 50)")
    reset = action(
        "reset-password",
        "print a one-time link that sets an account's password (valid an hour)",
        reset_password,
    )
    reset.add_argument("name")
    reset.add_argument(
        "--base-url",
        default=None,
        metavar="URL",
        help="the site's address, e.g. https://coloretto.example (else the link is printed as a path)",
    )


# ------------------------------------------------------------------ the database


def _sessions(args: argparse.Namespace) -> Any:
    from coloretto.web.storage.db import DatabaseError, default_data_dir, open_database, sqlite_url

    if args.database_url:
        url = args.database_url
    else:
        data_dir = args.data_dir or default_data_dir()
        if not data_dir.is_dir():
            raise CommandError(f"there is no data directory {data_dir}: give --data-dir or --database-url")
        url = sqlite_url(data_dir)
    try:
        return open_database(url)
    except DatabaseError as exc:
        raise CommandError(str(exc)) from None


def _run(args: argparse.Namespace, job: Callable[[Any], T]) -> T:
    """Run ``job`` in one transaction; a refusal is the command's one-line error."""
    from coloretto.web.common.errors import ServiceError

    sessions = _sessions(args)
    try:
        with sessions() as session, session.begin():
            return job(session)
    except ServiceError as exc:
        raise CommandError(exc.message) from None
    finally:
        sessions.kw["bind"].dispose()


def _actor() -> Any:
    from coloretto.web.common.moderation import Actor

    return Actor.command_line()


def _now() -> Any:
    from coloretto.web.table.live import now_utc

    return now_utc()


LIVE = "running servers act on it within about a second"


# ------------------------------------------------------------------ accounts


def _read_password(args: argparse.Namespace) -> str:
    if args.password_file is not None:
        try:
            text = (
                sys.stdin.read() if str(args.password_file) == "-" else Path(args.password_file).read_text()
            )
        except (OSError, UnicodeDecodeError) as exc:
            raise CommandError(f"cannot read the password from {args.password_file}: {exc}") from None
        lines = text.splitlines()
        if not lines or not lines[0]:
            raise CommandError(f"{args.password_file} holds no password on its first line")
        return lines[0]
    if not sys.stdin.isatty():
        raise CommandError("no terminal to ask the password on: give --password-file FILE (or - for stdin)")
    first = getpass.getpass(f"password for {args.name}: ")
    if getpass.getpass("the same password again: ") != first:
        raise CommandError("the two passwords differ")
    return first


def create_admin(args: argparse.Namespace) -> int:
    from coloretto.web.common.errors import ServiceError
    from coloretto.web.common.names import clean_name, name_key
    from coloretto.web.features.accounts import hash_password
    from coloretto.web.storage import accounts as accounts_store
    from coloretto.web.storage import moderation as store

    try:
        name = clean_name(args.name, "an account's name")
    except ServiceError as exc:
        raise CommandError(exc.message) from None
    key = name_key(name)

    def free(session: Any) -> None:
        if accounts_store.name_in_use(session, key):
            raise CommandError(f"the name {name} is taken: promote that account, or choose another name")

    _run(args, free)  # before the password is asked
    password = _read_password(args)
    try:
        password_hash = hash_password(password)
    except ServiceError as exc:
        raise CommandError(exc.message) from None

    def create(session: Any) -> int:
        free(session)
        return store.create_admin(session, _actor(), name, key, password_hash, _now())

    _run(args, create)
    print(f"administrator {name} created: log in at /login, the admin page is /admin")
    return 0


def promote(args: argparse.Namespace) -> int:
    from coloretto.web.storage import moderation as store

    user = _run(args, lambda s: store.set_admin(s, _actor(), args.name, True, _now()))
    print(f"{user.name} is an administrator")
    return 0


def demote(args: argparse.Namespace) -> int:
    from coloretto.web.storage import moderation as store

    user = _run(args, lambda s: store.set_admin(s, _actor(), args.name, False, _now()))
    print(f"{user.name} is no longer an administrator")
    return 0


def ban(args: argparse.Namespace) -> int:
    from coloretto.web.storage import moderation as store

    user = _run(args, lambda s: store.ban(s, _actor(), args.name, args.reason, _now()))
    print(f"{user.name} is banned: logged out, no log-in, chat or seat; bots take the games in play ({LIVE})")
    return 0


def unban(args: argparse.Namespace) -> int:
    from coloretto.web.storage import moderation as store

    user = _run(args, lambda s: store.unban(s, _actor(), args.name, args.reason, _now()))
    print(f"{user.name} is no longer banned")
    return 0


def reset_password(args: argparse.Namespace) -> int:
    from coloretto.web.features.lifecycle import RESET_VALID, new_reset_token, reset_path
    from coloretto.web.storage import lifecycle as store
    from coloretto.web.storage import moderation as moderation_store

    base = ""
    if args.base_url is not None:
        parts = urlsplit(args.base_url)
        if parts.scheme not in ("http", "https") or not parts.netloc or parts.query or parts.fragment:
            raise CommandError(
                f"--base-url is the site's address (https://host[:port][/path]), not {args.base_url!r}"
            )
        base = args.base_url.rstrip("/")
    token, digest = new_reset_token()
    now = _now()
    expires = now + RESET_VALID

    def make(session: Any) -> str:
        user = moderation_store.account(session, args.name)
        store.add_reset(session, _actor(), user, digest, now, expires)
        return str(user.name)

    name = _run(args, make)
    print(f"{base}{reset_path(token)}")
    where = "" if base else " (on the site's address)"
    print(
        f"the link{where} sets {name}'s password once, until {expires.isoformat(timespec='minutes')}; "
        "an earlier link no longer works",
        file=sys.stderr,
    )
    return 0


# ------------------------------------------------------------------ chat, games, reports


def _message(text: str) -> tuple[str, int]:
    found = MESSAGE_ID.match(text)
    if found is None:
        raise CommandError(
            f"a message is GAME:NUMBER (as the admin page names it, e.g. Ab3xYz:7), not {text!r}"
        )
    return found.group(1), int(found.group(2))


def hide_message(args: argparse.Namespace) -> int:
    from coloretto.web.storage import moderation as store

    game, number = _message(args.message)
    _run(args, lambda s: store.set_hidden(s, _actor(), game, number, True, args.reason, _now()))
    print(f"message {number} of game {game} is hidden ({LIVE})")
    return 0


def show_message(args: argparse.Namespace) -> int:
    from coloretto.web.storage import moderation as store

    game, number = _message(args.message)
    _run(args, lambda s: store.set_hidden(s, _actor(), game, number, False, args.reason, _now()))
    print(f"message {number} of game {game} is shown again")
    return 0


def end_game(args: argparse.Namespace) -> int:
    from coloretto.web.storage import moderation as store

    _run(args, lambda s: store.stop_game(s, _actor(), args.game, args.reason, _now()))
    print(f"game {args.game} is ended ({LIVE})")
    return 0


def reports(args: argparse.Namespace) -> int:
    from coloretto.web.storage import reports as store

    if not 1 <= args.limit <= 500:
        raise CommandError(f"--limit is 1 to 500, not {args.limit}")
    found, open_count = _run(args, lambda s: store.list_reports(s, args.status, args.limit))
    print(f"{open_count} open report{'s' if open_count != 1 else ''}")
    for report in found:
        about = (
            f"message {report.game}:{report.number} by {report.reported}"
            if report.kind == "message"
            else f"player {report.reported}" + (f" (game {report.game})" if report.game else "")
        )
        head = f"#{report.id} {report.created_at} {report.status} {report.reason}"
        print(f"{head}: {about}, reported by {report.reporter}")
        if report.text:
            print(f"    {report.text}")
        for line in report.context:
            if line.reported:
                print(f"    > {line.name}: {line.text}{' [hidden]' if line.hidden else ''}")
        if report.status == "resolved":
            by = report.resolved_by or "command line"
            print(f"    resolved {report.resolved_at} by {by}: {report.resolution or ''}")
    return 0


def resolve_report(args: argparse.Namespace) -> int:
    from coloretto.web.storage import reports as store

    _run(args, lambda s: store.resolve_report(s, _actor(), args.report, args.note, _now()))
    print(f"report {args.report} is resolved")
    return 0


def audit(args: argparse.Namespace) -> int:
    from coloretto.web.storage import moderation as store

    if not 1 <= args.limit <= 500:
        raise CommandError(f"--limit is 1 to 500, not {args.limit}")
    for entry in _run(args, lambda s: store.read_audit(s, args.limit)):
        reason = f": {entry.reason}" if entry.reason else ""
        print(f"{entry.at} {entry.actor} ({entry.via}) {entry.action} {entry.target}{reason}")
    return 0
