"""Sliding-window rate limits for one model: requests per second, requests per minute and
tokens per minute (spec §10.2), acquired before each attempt of a call.

A request's tokens are estimated before it is sent — prompt characters ÷ 4 plus its output
budget — the most it can use, so a tokens-per-minute limit is never exceeded by what was sent.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
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


def wait_needed(
    limits: RateLimits, events: Sequence[tuple[float, int]], now: float, tokens: int
) -> float:
    """Seconds until a request of ``tokens`` fits ``limits`` (0 = now), given the requests
    already sent in the last minute as ``(moment, tokens)``, oldest first. One rule for the
    in-process limiter and the one counted in the store."""
    waits = [0.0]
    if limits.qps is not None:
        last_second = [moment for moment, _ in events if now - moment < 1.0]
        if len(last_second) >= limits.qps:
            waits.append(last_second[0] + 1.0 - now)
    if limits.rpm is not None and len(events) >= limits.rpm:
        waits.append(events[len(events) - limits.rpm][0] + 60.0 - now)
    if limits.tpm is not None and events:
        used = sum(n for _, n in events)
        if used + tokens > limits.tpm:  # wait until enough of the window has expired
            excess = used + tokens - limits.tpm
            freed = 0
            for moment, n in events:
                freed += n
                if freed >= excess:
                    waits.append(moment + 60.0 - now)
                    break
            else:  # larger than the whole limit: wait for an empty window
                waits.append(events[-1][0] + 60.0 - now)
    return max(waits)


def check_limits(limits: RateLimits) -> None:
    """Raise ValueError for a limit that is not positive."""
    for name, value in (("qps", limits.qps), ("rpm", limits.rpm), ("tpm", limits.tpm)):
        if value is not None and value <= 0:
            raise ValueError(f"{name} must be positive, not {value}")


class WindowLimiter:
    """Waits until a request fits every window, first come first served among the tasks of
    one event loop; subclasses say where the window is kept (:meth:`_attempt`). ``clock``
    and ``sleep`` are injectable for tests."""

    def __init__(self, limits: RateLimits, *, clock: Clock, sleep: Sleep) -> None:
        check_limits(limits)
        self.limits = limits
        self._clock = clock
        self._sleep = sleep
        self._lock = asyncio.Lock()

    async def acquire(self, tokens: int = 0) -> float:
        """Wait until the request fits, record it, and return how long it waited. A request
        larger than the whole tokens-per-minute limit waits for an empty window, then goes."""
        waited = 0.0
        async with self._lock:
            while True:
                wait = await self._attempt(tokens)
                if wait <= 0:
                    return waited
                await self._sleep(wait)
                waited += wait

    async def _attempt(self, tokens: int) -> float:
        """Record the request if it fits now (0 returned), else the seconds to wait."""
        raise NotImplementedError


class RateLimiter(WindowLimiter):
    """The window kept in this process: one per model."""

    def __init__(
        self,
        limits: RateLimits,
        *,
        clock: Clock = time.monotonic,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        super().__init__(limits, clock=clock, sleep=sleep)
        self._events: deque[tuple[float, int]] = deque()

    async def _attempt(self, tokens: int) -> float:
        now = self._clock()
        while self._events and now - self._events[0][0] >= 60.0:
            self._events.popleft()
        wait = wait_needed(self.limits, self._events, now, tokens)
        if wait <= 0:
            self._events.append((now, tokens))
        return wait
