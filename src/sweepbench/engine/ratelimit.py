"""Sliding-window rate limits for one model: requests per second, requests per minute and
tokens per minute (spec §10.2), acquired before each attempt of a call.

**Counted at send, over any window.** A request is counted at the moment it is sent: after
everything else it waits for (its concurrency slots, :meth:`WindowLimiter.acquire`'s ``take``),
with nothing awaited between the count and the send. It counts for a whole window, both ends
included: a request exactly 60 s old still counts, so no 60 s (or 1 s) window of sends, whatever
its start, holds more than the limit. (Counted when it was *allowed* instead, a request that then
waited for a slot was sent later than counted, and a minute of sends could hold a few more.)

A request's tokens are its prompt's upper bound plus its output budget — the most it can use —
so a tokens-per-minute limit is never exceeded by what was sent.
"""

from __future__ import annotations

import asyncio
import math
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

Clock = Callable[[], float]
Sleep = Callable[[float], Awaitable[None]]
Take = Callable[[], Awaitable[None]]
GiveBack = Callable[[], None]

MINUTE_S = 60.0
"""The window of ``rpm`` and ``tpm``."""
SECOND_S = 1.0
"""The window of ``qps``."""


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


def in_window(moment: float, now: float, span: float = MINUTE_S) -> bool:
    """A request sent at ``moment`` still counts at ``now`` in a window of ``span`` seconds
    (both ends included: exactly ``span`` seconds old, it counts)."""
    return now <= moment + span


def _until_out(moment: float, now: float, span: float) -> float:
    """Seconds from ``now`` until a request sent at ``moment`` no longer counts: just past
    ``moment + span`` (always > 0 for a request that still counts)."""
    return math.nextafter(moment + span, math.inf) - now


def wait_needed(
    limits: RateLimits, events: Sequence[tuple[float, int]], now: float, tokens: int
) -> float:
    """Seconds until a request of ``tokens`` fits ``limits`` (0 = now; > 0 whenever it does
    not), given the requests already sent as ``(moment, tokens)``, oldest first (those older
    than a minute are ignored). One rule for the in-process limiter and the one counted in the
    store."""
    recent = [(moment, n) for moment, n in events if in_window(moment, now)]
    waits = [0.0]
    if limits.qps is not None:
        last_second = [moment for moment, _ in recent if in_window(moment, now, SECOND_S)]
        if len(last_second) >= limits.qps:
            oldest_kept = last_second[len(last_second) - math.ceil(limits.qps)]
            waits.append(_until_out(oldest_kept, now, SECOND_S))
    if limits.rpm is not None and len(recent) >= limits.rpm:
        waits.append(_until_out(recent[len(recent) - limits.rpm][0], now, MINUTE_S))
    if limits.tpm is not None and recent:
        used = sum(n for _, n in recent)
        if used + tokens > limits.tpm:  # wait until enough of the window has expired
            excess = used + tokens - limits.tpm
            freed = 0
            for moment, n in recent:
                freed += n
                if freed >= excess:
                    waits.append(_until_out(moment, now, MINUTE_S))
                    break
            else:  # larger than the whole limit: wait for an empty window
                waits.append(_until_out(recent[-1][0], now, MINUTE_S))
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

    async def acquire(
        self, tokens: int = 0, *, take: Take | None = None, give_back: GiveBack | None = None
    ) -> float:
        """Wait until the request fits, count it as sent now, and return how long it waited
        for the window. A request larger than the whole tokens-per-minute limit waits for an
        empty window, then goes.

        ``take``: what else the request waits for before it is sent (its concurrency slots),
        taken *before* it is counted, so that the moment counted is the moment it is sent;
        while the window is full it is handed back (``give_back``) rather than held idle, and
        taken again. On return the request holds what ``take`` took and must be sent at once."""
        waited = 0.0
        async with self._lock:
            while True:
                if take is not None:
                    await take()
                try:
                    wait = await self._attempt(tokens)
                except BaseException:
                    if give_back is not None:
                        give_back()
                    raise
                if wait <= 0:
                    return waited
                if give_back is not None:
                    give_back()
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
        clock: Clock | None = None,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        """``clock``: default, the running event loop's (the clock its sleeps are timed by)."""
        super().__init__(limits, clock=clock or _loop_time, sleep=sleep)
        self._events: deque[tuple[float, int]] = deque()

    async def _attempt(self, tokens: int) -> float:
        """Check and count in one step (nothing awaited): no other task comes in between."""
        now = self._clock()
        while self._events and not in_window(self._events[0][0], now):
            self._events.popleft()
        wait = wait_needed(self.limits, self._events, now, tokens)
        if wait <= 0:
            self._events.append((now, tokens))
        return wait


def _loop_time() -> float:
    """The running event loop's clock (monotonic)."""
    return asyncio.get_running_loop().time()
