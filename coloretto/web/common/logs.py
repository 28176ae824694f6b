"""The server's logs: plain text (the default) or one JSON object a line (``coloretto serve
--log-format json``), every line of a request carrying its request id, and lines about a game its
``game`` and ``move``.

Every HTTP request and every WebSocket connection gets a request id (an ``X-Request-ID`` that looks
sane is kept, else a new one is made; the answer echoes it): the API's middleware sets
:data:`request_id` and, for a game's path, :data:`current_game`, and every line logged while the
request is handled (in tasks it starts too: they copy the context) carries them. A line logged
with ``extra={"game": …, "move": …}`` carries those instead (the incidents do), and a line that
begins ``"game %s"`` carries that game.
"""

from __future__ import annotations

import itertools
import json
import logging
import re
import uuid
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import Any

#: the values of ``--log-format``
LOG_FORMATS = ("text", "json")
#: the text format, as ``coloretto serve`` has always written it
TEXT_FORMAT = "%(levelname)s %(name)s: %(message)s"

request_id: ContextVar[str | None] = ContextVar("coloretto_request_id", default=None)
current_game: ContextVar[str | None] = ContextVar("coloretto_game", default=None)

#: an incoming X-Request-ID kept as it is: 1 to 64 letters, digits and ``- _ . :`` (a UUID, nginx's
#: ``$request_id``); anything else is replaced, so that no log line carries what a client made up
SANE_REQUEST_ID = re.compile(r"[A-Za-z0-9_.:-]{1,64}")

#: what uvicorn's access log lines say, in this order (their ``args``)
_ACCESS_FIELDS = ("client", "method", "path", "http_version", "status")


#: request ids: this process's random prefix and a counter. Not ``uuid4()`` for each request: its
#: ``os.urandom`` lets go of the GIL, and under load the event loop then waits for a thread's
#: switch interval to get it back (up to 5 ms a request, a tenth of the loop's time in a profile of
#: a process taking 300 reconnecting clients at once).
_REQUEST_ID_PREFIX = uuid.uuid4().hex[:16]
_request_numbers = itertools.count(1)


def new_request_id() -> str:
    """32 hex digits, unique across processes (the prefix) and within this one (the counter)."""
    return f"{_REQUEST_ID_PREFIX}{next(_request_numbers):016x}"


def request_id_from(header: bytes | str | None) -> str:
    """The request id for a request whose ``X-Request-ID`` header is ``header``: kept when it looks
    sane, else a new one."""
    if header is not None:
        text = header.decode("latin-1") if isinstance(header, bytes) else header
        if SANE_REQUEST_ID.fullmatch(text):
            return text
    return new_request_id()


class JsonFormatter(logging.Formatter):
    """One JSON object a line: ``time`` (UTC, ISO 8601), ``level``, ``logger``, ``message``, the
    ``request_id`` and ``game``/``move`` where known, ``step`` (an incident's), uvicorn's access
    fields (``client``, ``method``, ``path``, ``status``), and ``exception`` (the traceback)."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        said = getattr(record, "request_id", None) or request_id.get()
        if said:
            line["request_id"] = said
        game = getattr(record, "game", None) or _game_said(record) or current_game.get()
        if game:
            line["game"] = game
        for name in ("move", "step"):
            value = getattr(record, name, None)
            if value is not None:
                line[name] = value
        args = record.args
        if record.name == "uvicorn.access" and isinstance(args, tuple) and len(args) == len(_ACCESS_FIELDS):
            line.update(zip(_ACCESS_FIELDS, args))
            line.pop("http_version", None)
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        elif record.exc_text:
            line["exception"] = record.exc_text
        if record.stack_info:
            line["stack"] = self.formatStack(record.stack_info)
        return json.dumps(line, ensure_ascii=False, default=str)


def _game_said(record: logging.LogRecord) -> str | None:
    """The game a line is about, as the server's lines say it: ``"game %s …"`` with its id first."""
    if isinstance(record.msg, str) and record.msg.startswith("game %s") and isinstance(record.args, tuple):
        return str(record.args[0]) if record.args else None
    return None


def json_line(logger: str, message: str, level: str = "INFO") -> str:
    """A line of the JSON format written outside the logging (the server's address, printed
    whatever the log level)."""
    record = logging.LogRecord(logger, getattr(logging, level), "", 0, message, (), None)
    return JsonFormatter().format(record)


def json_logging_config(level: str) -> dict[str, Any]:
    """The ``logging.config.dictConfig`` of ``coloretto serve --log-format json`` (uvicorn's
    ``log_config``): the root logger and uvicorn's own (its errors, its access log) as JSON lines
    on stderr, at ``level``."""
    level = level.upper()
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"json": {"()": JsonFormatter}},
        "handlers": {
            "json": {"class": "logging.StreamHandler", "formatter": "json", "stream": "ext://sys.stderr"}
        },
        "loggers": {
            "uvicorn": {"handlers": ["json"], "level": level, "propagate": False},
            "uvicorn.error": {"level": level},
            "uvicorn.access": {"handlers": ["json"], "level": level, "propagate": False},
        },
        "root": {"handlers": ["json"], "level": level},
    }
