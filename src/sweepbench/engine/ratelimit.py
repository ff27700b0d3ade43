"""Sliding-window rate limits for one model: requests per second, requests per minute and
tokens per minute (spec §10.2), acquired before each attempt of a call.

A request's tokens are estimated before it is sent — prompt characters ÷ 4 plus its output
budget — the most it can use, so a tokens-per-minute limit is never exceeded by what was sent.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

Clock = Callable[[], float]
Sleep = Callable[[float], Awaitable[None]]


@dataclass(frozen=True)
class RateLimits:
    """Limits per model; None = no limit."""

    qps: float | None = None
    rpm: int | None = None
    tpm: int | None = None

    @property
    def any(self) -> bool:
        """True when at least one limit is set."""
        return any(v is not None for v in (self.qps, self.rpm, self.tpm))


class RateLimiter:
    """Waits until a request fits every window. One per model; safe for many tasks of one
    event loop. ``clock`` and ``sleep`` are injectable for tests."""

    def __init__(
        self,
        limits: RateLimits,
        *,
        clock: Clock = time.monotonic,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        for name, value in (("qps", limits.qps), ("rpm", limits.rpm), ("tpm", limits.tpm)):
            if value is not None and value <= 0:
                raise ValueError(f"{name} must be positive, not {value}")
        self.limits = limits
        self._clock = clock
        self._sleep = sleep
        self._second: deque[float] = deque()
        self._minute: deque[float] = deque()
        self._tokens: deque[tuple[float, int]] = deque()
        self._lock = asyncio.Lock()

    def _wait_needed(self, now: float, tokens: int) -> float:
        """Seconds until a request of ``tokens`` fits (0 = now); drops expired entries."""
        while self._second and now - self._second[0] >= 1.0:
            self._second.popleft()
        while self._minute and now - self._minute[0] >= 60.0:
            self._minute.popleft()
        while self._tokens and now - self._tokens[0][0] >= 60.0:
            self._tokens.popleft()
        waits = [0.0]
        limits = self.limits
        if limits.qps is not None and len(self._second) >= limits.qps:
            waits.append(self._second[0] + 1.0 - now)
        if limits.rpm is not None and len(self._minute) >= limits.rpm:
            waits.append(self._minute[0] + 60.0 - now)
        if limits.tpm is not None and self._tokens:
            used = sum(n for _, n in self._tokens)
            if used + tokens > limits.tpm:  # wait until enough of the window has expired
                excess = used + tokens - limits.tpm
                freed = 0
                for moment, n in self._tokens:
                    freed += n
                    if freed >= excess:
                        waits.append(moment + 60.0 - now)
                        break
                else:  # larger than the whole limit: wait for an empty window
                    waits.append(self._tokens[-1][0] + 60.0 - now)
        return max(waits)

    async def acquire(self, tokens: int = 0) -> float:
        """Wait until the request fits, record it, and return how long it waited. A request
        larger than the whole tokens-per-minute limit waits for an empty window, then goes."""
        waited = 0.0
        async with self._lock:  # first come, first served
            while True:
                now = self._clock()
                wait = self._wait_needed(now, tokens)
                if wait <= 0:
                    break
                await self._sleep(wait)
                waited += wait
            self._second.append(now)
            self._minute.append(now)
            if self.limits.tpm is not None:
                self._tokens.append((now, tokens))
        return waited
