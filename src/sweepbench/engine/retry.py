"""When and how long to wait before trying a failed call again (benchmarks spec §10.2). The
engine's executor is the only thing that retries; adapters and runners never do."""

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
    after_output: bool = True
    """Retry a call that had already streamed some of its answer (benchmarks: yes; sweeps and
    generate, whose answer a person is watching, retry only failures before the first token)."""

    def should_retry(self, error: ProviderError, attempt: int, produced: bool) -> bool:
        """Whether attempt ``attempt`` (1-based) that failed with ``error`` is tried again.
        Quota and key errors never are: they stop the run."""
        if not error.retryable or attempt >= self.max_attempts:
            return False
        return self.after_output or not produced

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
        ErrorKind.BAD_RESPONSE: "bad_response",
    }.get(error.kind, error.kind.value)
