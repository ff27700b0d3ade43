"""The exception hierarchy. SDK errors are translated once, at the adapter; the CLI and the
web app turn these into messages at their edge only."""

from __future__ import annotations

from enum import StrEnum


class SweepbenchError(Exception):
    """Base of every error sweepbench raises on purpose."""


class UserError(SweepbenchError):
    """The user asked for something that cannot be done (unknown model, bad setting).

    The message is one sentence meant to be shown as it is.
    """


class DataError(SweepbenchError):
    """Input data is malformed; the message says what and where."""


class BudgetExceeded(SweepbenchError):
    """A spending ceiling would be crossed; nothing was spent."""


class ErrorKind(StrEnum):
    """How a provider failure should be handled by whoever retries."""

    RETRYABLE = "retryable"  # rate limit, overload, 5xx, dropped connection
    AUTH = "auth"  # missing or rejected key
    QUOTA = "quota"  # out of credit / billing limit: retrying will not help until topped up
    BAD_REQUEST = "bad_request"  # the request itself is wrong
    CONTEXT_OVERFLOW = "context_overflow"  # prompt + max_tokens exceed the context window
    NOT_FOUND = "not_found"  # the model does not exist at this provider
    BAD_RESPONSE = "bad_response"  # the reply was impossible (negative or absurd usage, cost)


class ProviderError(SweepbenchError):
    """A model provider failed. ``kind`` says whether a retry can help; ``retry_after`` is the
    provider's own hint in seconds when it sent one."""

    def __init__(
        self,
        message: str,
        *,
        kind: ErrorKind,
        provider: str,
        status: int | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.provider = provider
        self.status = status
        self.retry_after = retry_after

    @property
    def retryable(self) -> bool:
        """True when the same call may succeed if tried again later."""
        return self.kind is ErrorKind.RETRYABLE

    def __str__(self) -> str:
        status = f" (HTTP {self.status})" if self.status else ""
        return f"{self.provider}: {self.args[0]}{status}"
