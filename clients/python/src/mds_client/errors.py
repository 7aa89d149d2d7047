"""Exceptions raised by the client. Every one carries the service's ``code`` (see docs/errors.md)."""

from __future__ import annotations

from typing import Any, Dict, Optional


class MdsError(Exception):
    """An answer the service refused, or a request that could not be completed.

    Attributes:
        code: the service's error code (e.g. 4001, 4012, 4030); 0 when the service never
            answered (network failure after all retries).
        status: the HTTP status, or 0 without an answer.
        message: the service's message.
        body: the decoded JSON body of the answer, when there was one.
        retry_after: seconds the service asked to wait (``Retry-After``), when it did.
    """

    def __init__(
        self,
        message: str,
        code: int = 0,
        status: int = 0,
        body: Optional[Dict[str, Any]] = None,
        retry_after: Optional[float] = None,
    ) -> None:
        super().__init__("%s (HTTP %s, code %s)" % (message, status, code) if status else message)
        self.message = message
        self.code = code
        self.status = status
        self.body = body or {}
        self.retry_after = retry_after


class BadRequest(MdsError):
    """400: a parameter or a batch the service rejects (code 4001, 4002)."""


class AuthError(MdsError):
    """401: missing (4010) or invalid/revoked (4012) key."""


class RateLimited(MdsError):
    """403 / 4030 (per-minute rate) or 429 / 4290, still refused after waiting as allowed."""


class QuotaExceeded(MdsError):
    """403 / 4031: the key's daily quota is used up (resets at 00:00 UTC)."""


class NotFound(MdsError):
    """404: e.g. a batch id the service does not know (4040)."""


class Conflict(MdsError):
    """409: a batch_id already used for different content (4090)."""


class ServerError(MdsError):
    """5xx after every retry."""


class InvalidRows(MdsError, ValueError):
    """Rows that cannot be pushed, found before anything is sent (as ``mds push`` checks a file):
    unknown columns, a missing required field, a value that is not of its field's type.

    Attributes:
        problems: one message per problem (``row 3: close must be a number (got 'abc')``),
            at most 50; ``message`` says how many there were in all.
    """

    def __init__(self, message: str, problems: "list[str]") -> None:
        super().__init__(message, code=4001)
        self.problems = problems


class MissingFactors(MdsError):
    """An adjusted read (``adjust="qfq"`` or ``"hfq"``) whose answer holds codes without
    adjustment factors: the service returns their rows as traded, so a frame of them mixes
    adjusted and raw prices (a split then shows as a fake jump). Raised by :meth:`Client.get`,
    :meth:`Client.panel` and :meth:`Client.pages` unless ``allow_unadjusted=True`` (then a
    warning names them instead). Raised by the client, not answered by the service: ``code`` 0.

    Attributes:
        codes: the codes returned as traded, in the order the answer first has them.
        method: the ``adjust`` asked (``qfq`` or ``hfq``).
    """

    def __init__(self, message: str, codes: "list[str]", method: str) -> None:
        super().__init__(message)
        self.codes = codes
        self.method = method


class BatchRejected(MdsError):
    """A batch the service answered ``rejected`` (every record refused) or ``partial``.

    Raised by :meth:`Client.push` unless ``raise_on_error=False``. Batches before it were
    applied and are in ``statuses``; none after it was sent.

    Attributes:
        status: the batch status record of the refused batch (``errors`` per record).
        statuses: every status record so far, this one last.
        errors: the refused records' errors (``index``, ``idempotency_key``, ``field``, ``reason``).
    """

    def __init__(self, message: str, status: Dict[str, Any], statuses: "list[Dict[str, Any]]") -> None:
        super().__init__(message, code=int(status.get("code") or 0), body=status)
        self.status = status
        self.statuses = statuses
        self.errors = list(status.get("errors") or [])


def error_for(status: int, body: Dict[str, Any], retry_after: Optional[float]) -> MdsError:
    """The exception for an error answer."""
    code = int(body.get("code") or 0) if isinstance(body.get("code"), (int, float)) else 0
    message = str(body.get("message") or "HTTP %d" % status)
    cls: type = MdsError
    if status == 400 or status == 413 or status == 415 or status == 422:
        cls = BadRequest
    elif status == 401:
        cls = AuthError
    elif status == 403:
        cls = QuotaExceeded if code == 4031 else RateLimited
    elif status == 429:
        cls = RateLimited
    elif status == 404:
        cls = NotFound
    elif status == 409:
        cls = Conflict
    elif status >= 500:
        cls = ServerError
    return cls(message, code=code, status=status, body=body, retry_after=retry_after)
