"""Classification of HTTP failures shared by the adapters of SDK-based providers.

Each adapter still translates its own SDK's exception types (once, in ``translate_error``);
this module only holds the facts common to every HTTP API: what a status code means and how
``retry-after`` is spelled.
"""

from __future__ import annotations

import email.utils
import time
from collections.abc import Mapping

from sweepbench.errors import ErrorKind, ProviderError

#: Words in an error message that reveal a context-window overflow behind a plain 400.
OVERFLOW_HINTS = (
    "context_length_exceeded",
    "context length",
    "context window",
    "prompt is too long",
    "maximum context",
    "too many tokens",
)
#: Error types/codes that mean "try again later" whatever the status (in-band stream errors
#: arrive on an HTTP 200 response).
RETRYABLE_CODES = (
    "overloaded_error",
    "api_error",
    "rate_limit_error",
    "rate_limit_exceeded",
    "server_error",
    "timeout",
)
#: Words that reveal an exhausted balance behind a 400/403/429.
QUOTA_HINTS = ("insufficient_quota", "credit balance", "insufficient credits", "billing", "quota")


def retry_after(headers: Mapping[str, str] | None) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``retry-after`` (seconds or an HTTP date)."""
    if not headers:
        return None
    lowered = {k.lower(): v for k, v in headers.items()}
    millis = lowered.get("retry-after-ms")
    if millis:
        try:
            return max(float(millis) / 1000.0, 0.0)
        except ValueError:
            pass
    value = lowered.get("retry-after")
    if not value:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        parsed = email.utils.parsedate_to_datetime(value) if value else None
        return None if parsed is None else max(parsed.timestamp() - time.time(), 0.0)


def classify(status: int | None, message: str, code: str | None = None) -> ErrorKind:
    """The kind of a failure from its status code and the provider's message or code."""
    text = f"{code or ''} {message}".lower()
    if any(hint in text for hint in OVERFLOW_HINTS) or status == 413:
        return ErrorKind.CONTEXT_OVERFLOW
    if status == 402 or any(hint in text for hint in QUOTA_HINTS):
        return ErrorKind.QUOTA
    if (code or "").lower() in RETRYABLE_CODES:
        return ErrorKind.RETRYABLE
    if status in (401, 403):
        return ErrorKind.AUTH
    if status == 404:
        return ErrorKind.NOT_FOUND
    if status is None or status < 400 or status in (408, 409, 425, 429) or status >= 500:
        return ErrorKind.RETRYABLE
    return ErrorKind.BAD_REQUEST


def transport_error(exc: Exception, provider: str) -> ProviderError | None:
    """A dropped or failed connection (raised by the HTTP layer under every SDK) as a
    retryable ProviderError; None for anything else."""
    import httpx2

    if isinstance(exc, httpx2.TransportError):
        return ProviderError(
            f"connection failed: {exc}", kind=ErrorKind.RETRYABLE, provider=provider
        )
    return None
