"""When and how long to wait before trying a failed call again (spec §10.2)."""

from __future__ import annotations

import random
from dataclasses import dataclass

from sweepbench.errors import ErrorKind, ProviderError


@dataclass(frozen=True)
class RetryPolicy:
    """When to try a failed call again (spec §10.2)."""

    max_attempts: int = 3
    base_delay_s: float = 1.0
    max_delay_s: float = 20.0
    rate_limit_floor_s: float = 60.0
    """The least wait after a 429 that gave no ``retry-after``."""
    jitter: float = 0.2

    def delay(self, attempt: int, error: ProviderError, rng: random.Random) -> float:
        """Seconds to wait before attempt ``attempt + 1``."""
        wait = min(self.base_delay_s * 2.0 ** (attempt - 1), self.max_delay_s)
        if error.retry_after is not None:
            wait = max(wait, error.retry_after)
        elif error.status == 429:
            wait = max(wait, self.rate_limit_floor_s)
        return wait + wait * self.jitter * rng.random()


def error_type(error: ProviderError) -> str:
    """The error type stored with a failed item."""
    if error.status == 429:
        return "rate_limit"
    return {
        ErrorKind.RETRYABLE: "provider_error",
        ErrorKind.BAD_REQUEST: "bad_request",
        ErrorKind.CONTEXT_OVERFLOW: "context_overflow",
        ErrorKind.NOT_FOUND: "model_not_found",
    }.get(error.kind, error.kind.value)
