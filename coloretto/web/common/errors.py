"""The one error type of the game server's layers: a refused request."""

from __future__ import annotations


class ServiceError(Exception):
    """A refused request: ``code`` for programs, ``message`` for people, ``status`` for HTTP."""

    def __init__(self, code: str, message: str, status: int = 400, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.status = status
        self.retry_after = retry_after  #: seconds, for 429 answers (the Retry-After header)
