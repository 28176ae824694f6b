"""How the server answers what goes wrong: every error is ``{"error": code, "message": …}`` in the
client's language, whatever raised it (a service's refusal, the framework's own 404 or 405, a body
that is no valid request, a fault of the server's, which is reported)."""

from __future__ import annotations

import math
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from coloretto.web.common import i18n, logs, metrics
from coloretto.web.common.errors import ServiceError
from coloretto.web.common.i18n import N_
from coloretto.web.common.i18n import gettext as _
from coloretto.web.common.incidents import Incidents
from coloretto.web.common.schemas import (
    ErrorBody,
)

ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"model": ErrorBody},
    401: {"model": ErrorBody},
    403: {"model": ErrorBody},
    404: {"model": ErrorBody},
    409: {"model": ErrorBody},
    422: {"model": ErrorBody},
    429: {"model": ErrorBody},
}


#: the error code of HTTP errors raised by the framework itself (an unknown path, a wrong method)
HTTP_CODES = {404: "not_found", 405: "method_not_allowed", 413: "too_large", 415: "bad_request"}
#: the framework's own messages of those errors, for the catalogue
HTTP_MESSAGES = (N_("Not Found"), N_("Method Not Allowed"), N_("Unsupported Media Type"))

#: pydantic's messages of the usual validation errors, by error type, as msgids: pydantic writes
#: them in English, so another language gets these with pydantic's ``ctx`` fields filled in
VALIDATION_MESSAGES = {
    "missing": N_("Field required"),
    "extra_forbidden": N_("Extra inputs are not permitted"),
    "string_type": N_("Input should be a valid string"),
    "int_type": N_("Input should be a valid integer"),
    "int_parsing": N_("Input should be a valid integer, unable to parse string as an integer"),
    "int_from_float": N_("Input should be a valid integer, got a number with a fractional part"),
    "float_type": N_("Input should be a valid number"),
    "float_parsing": N_("Input should be a valid number, unable to parse string as a number"),
    "bool_type": N_("Input should be a valid boolean"),
    "bool_parsing": N_("Input should be a valid boolean, unable to interpret input"),
    "list_type": N_("Input should be a valid list"),
    "dict_type": N_("Input should be a valid dictionary"),
    "model_type": N_("Input should be a valid dictionary or instance of {class_name}"),
    "model_attributes_type": N_("Input should be a valid dictionary or object to extract fields from"),
    "string_too_long": N_("String should have at most {max_length} characters"),
    "string_too_short": N_("String should have at least {min_length} characters"),
    "too_long": N_("List should have at most {max_length} items after validation, not {actual_length}"),
    "too_short": N_("List should have at least {min_length} items after validation, not {actual_length}"),
    "greater_than": N_("Input should be greater than {gt}"),
    "greater_than_equal": N_("Input should be greater than or equal to {ge}"),
    "less_than": N_("Input should be less than {lt}"),
    "less_than_equal": N_("Input should be less than or equal to {le}"),
    "literal_error": N_("Input should be {expected}"),
    "enum": N_("Input should be {expected}"),
}


def validation_text(err: Any) -> str:
    """One validation error's message in the current language: pydantic's own in English, else the
    translation of its type's message (pydantic's English where the type has none)."""
    message = str(err.get("msg", "invalid"))
    template = VALIDATION_MESSAGES.get(str(err.get("type")))
    if template is None or i18n.current_language.get() == i18n.DEFAULT_LANGUAGE:
        return message
    fields = {str(k): v for k, v in (err.get("ctx") or {}).items()}
    if isinstance(fields.get("expected"), str):  # pydantic's list of choices: "'a', 'b' or 'c'"
        # TRANSLATORS: joins the last two choices of a list: 'open', 'playing' or 'finished'
        fields["expected"] = fields["expected"].replace(" or ", " " + _("or") + " ")
    try:
        return _(template, **fields)
    except (KeyError, IndexError, ValueError):  # a field pydantic did not give: its own words
        return message


def error_body(code: str, message: str) -> dict[str, str]:
    """An error told to a client (an HTTP answer's body, a WebSocket message's fields), counted in
    ``/metrics`` by its code."""
    metrics.errors[code].inc()
    return {"error": code, "message": message}


def validation_message(errors: list[Any]) -> str:
    parts = []
    for err in errors[:5]:
        where = ".".join(str(p) for p in err.get("loc", ()) if p != "body")
        if err.get("type") == "json_invalid":
            return _("the request body is not valid JSON")
        parts.append(_("{where}: {problem}", where=where or "body", problem=validation_text(err)))
    return "; ".join(parts)


def add_error_answers(app: FastAPI, incidents: Incidents) -> None:
    """The app's exception handlers."""

    @app.exception_handler(ServiceError)
    async def _service_error(_request: Request, exc: ServiceError) -> JSONResponse:
        headers = {"Retry-After": str(max(1, math.ceil(exc.retry_after)))} if exc.retry_after else None
        return JSONResponse(error_body(exc.code, exc.message), status_code=exc.status, headers=headers)

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(_request: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = HTTP_CODES.get(exc.status_code, "bad_request" if exc.status_code < 500 else "internal")
        message = exc.detail if isinstance(exc.detail, str) else str(exc.detail)
        if message in HTTP_MESSAGES:
            message = _(message)
        if exc.status_code == 400:
            # FastAPI's "error parsing the body": JSON it could not turn into values (a number over
            # Python's 4300 digits); answered as every other unreadable body is
            return JSONResponse(
                error_body("bad_request", _("the request body could not be read as JSON")), status_code=422
            )
        return JSONResponse(error_body(code, message), status_code=exc.status_code, headers=exc.headers)

    @app.exception_handler(Exception)
    async def _internal(request: Request, exc: Exception) -> JSONResponse:
        # reported (logged with its traceback, counted) and answered as every other error is
        incidents.record("message", None, f"{request.method} {request.url.path} failed", exc)
        # answered outside the middleware that echoes the request id: it is put here
        said = logs.request_id.get()
        return JSONResponse(
            error_body("internal", _("the server could not handle this request: try again")),
            status_code=500,
            headers={"X-Request-ID": said} if said else None,
        )

    @app.exception_handler(RequestValidationError)
    async def _bad_request(_request: Request, exc: RequestValidationError) -> JSONResponse:
        return JSONResponse(
            error_body("bad_request", validation_message(list(exc.errors()))), status_code=422
        )
