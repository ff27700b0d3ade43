"""Classification of HTTP failures and broken streams shared by the adapters of SDK-based
providers.

Each adapter still translates its own SDK's exception types (once, in ``translate_error``);
this module only holds the facts common to every HTTP API: what a status code means, how
``retry-after`` is spelled, what an error object sent inside a stream stands for, and how a
malformed Server-Sent Events stream is reported (always retryable: a broken stream may work
the next time).
"""

from __future__ import annotations

import email.utils
import json
import time
from collections.abc import Mapping
from typing import Any

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
#: The HTTP status an error type or code stands for (OpenAI's and Anthropic's spellings). An
#: error sent inside a stream arrives on a 200, so its type is all there is to classify it by.
STATUS_OF_TYPE = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "invalid_api_key": 401,
    "billing_error": 402,
    "permission_error": 403,
    "not_found_error": 404,
    "model_not_found": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "rate_limit_exceeded": 429,
    "api_error": 500,
    "server_error": 500,
    "timeout_error": 504,
    "overloaded_error": 529,
}
#: Prefix of every message about a stream that does not follow the protocol.
MALFORMED = "malformed stream"
#: The message of an error object sent inside a stream without one.
NO_MESSAGE = "the stream sent an error without a message"


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


def connection_failure(exc: BaseException, provider: str) -> ProviderError:
    """A refused, reset or dropped connection as a retryable ProviderError whose message says
    why: the first cause with words in it, else the failure's kind (a reset connection often
    carries no text at all: "connection failed: " said nothing)."""
    return ProviderError(
        f"connection failed: {connection_reason(exc)}", kind=ErrorKind.RETRYABLE, provider=provider
    )


def connection_reason(exc: BaseException) -> str:
    """What went wrong with a connection, in words, whatever the SDK wrapped it in."""
    seen: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in seen and len(seen) < 8:
        seen.append(current)
        current = current.__cause__ or current.__context__
    for failure in reversed(seen):  # the innermost cause is the most exact
        text = str(failure).strip()
        if text and text != "Connection error.":
            return text
    kinds = [type(f).__name__ for f in seen]
    if any(isinstance(f, ConnectionResetError) for f in seen) or any(
        k in ("ReadError", "RemoteProtocolError", "WriteError") for k in kinds
    ):
        return f"the server closed or reset the connection ({kinds[-1]}, no reason given)"
    return f"{kinds[-1]}, no reason given"


def transport_error(exc: Exception, provider: str) -> ProviderError | None:
    """A dropped or failed connection, or an undecodable body (raised by the HTTP layer under
    every SDK), as a retryable ProviderError; None for anything else."""
    import httpx2

    if isinstance(exc, httpx2.TransportError):
        return connection_failure(exc, provider)
    if isinstance(exc, httpx2.DecodingError):  # a body that its content-encoding does not fit
        return malformed(f"the body could not be decoded ({exc})", provider)
    return None


def malformed(problem: str, provider: str) -> ProviderError:
    """A stream that broke the protocol (``problem`` says how) as a retryable error."""
    return ProviderError(f"{MALFORMED}: {problem}", kind=ErrorKind.RETRYABLE, provider=provider)


def decode_error(exc: Exception, provider: str) -> ProviderError | None:
    """What the SDKs raise for undecodable SSE ``data`` (bad JSON, bad UTF-8) as a malformed
    stream; None for anything else."""
    if isinstance(exc, json.JSONDecodeError):
        return malformed(f"a data line is not JSON: {exc.doc[:40]!r}", provider)
    if isinstance(exc, UnicodeDecodeError):
        return malformed(f"the body is not UTF-8 text ({exc.reason})", provider)
    return None


def stream_error(error: object, provider: str, fallback: str = NO_MESSAGE) -> ProviderError:
    """An error object sent inside a stream (``{"message", "code", "type", "status"}``, maybe
    wrapped once more in ``{"error": …}``, or a bare string) classified like the HTTP error it
    stands for. An explicit numeric status (OpenRouter's ``code``) is kept as ``status``."""
    fields: Mapping[str, Any] = error if isinstance(error, Mapping) else {}
    inner = fields.get("error")
    if isinstance(inner, Mapping):
        fields = inner
    message = fields.get("message")
    if not isinstance(message, str) or not message:
        message = error if isinstance(error, str) and error else fallback
    names = [v for v in (fields.get("code"), fields.get("type")) if isinstance(v, str) and v]
    status = _status(fields.get("status")) or _status(fields.get("code"))
    inferred = status or next((STATUS_OF_TYPE[n] for n in names if n in STATUS_OF_TYPE), None)
    return ProviderError(
        message,
        kind=classify(inferred, message, names[0] if names else None),
        provider=provider,
        status=status,
    )


def _status(value: object) -> int | None:
    """An HTTP status from a number or a numeric string; None for anything else."""
    if isinstance(value, str) and value.isdigit():
        value = int(value)
    if isinstance(value, int) and not isinstance(value, bool) and 100 <= value <= 599:
        return value
    return None


def no_events(content_type: str | None, provider: str) -> ProviderError:
    """A 200 whose body held no event at all: an HTML page, a JSON body, nothing."""
    kind = (content_type or "").split(";")[0].strip().lower()
    if kind and kind != "text/event-stream":
        return malformed(f"the server answered with {kind}, not an event stream", provider)
    if not kind:
        return malformed("the server answered without a content type and sent no events", provider)
    return malformed("the server sent no events", provider)


def token_count(value: object, name: str, provider: str) -> int | None:
    """A usage field as an int, None when absent; anything else (a string, a float, true)
    raises a malformed-stream error: a wrong count must not reach the ledger."""
    if value is None or (isinstance(value, int) and not isinstance(value, bool)):
        return value
    raise malformed(f"usage {name} is not an integer ({value!r:.24})", provider)
