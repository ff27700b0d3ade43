"""Concurrency and rate limits for calls, keyed by provider and by (provider, model): at most
``concurrency`` calls in flight to each provider and to each model, and optional requests per
second / minute and tokens per minute per model (OpenRouter's ``:free`` models get 20 a minute
unless told otherwise). One :class:`CallLimits` per executor; safe for many tasks of one loop.
Given the store (a run shared by several workers), the rate limits are counted there, so they
hold for every worker together (:mod:`.ratelimit_shared`); concurrency stays per worker."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import time
from collections import deque
from dataclasses import dataclass

from sqlalchemy.engine import Engine

from sweepbench.engine.ratelimit import Clock, RateLimiter, RateLimits, WindowLimiter
from sweepbench.engine.ratelimit_shared import StoreRateLimiter
from sweepbench.models.base import Model

Limiter = WindowLimiter

FREE_MODEL_RPM = 20
"""OpenRouter's ``:free`` models allow about 20 requests a minute (benchmarks spec §5.3)."""


class CallLimits:
    """Semaphores and rate limiters, made on first use of each provider and model."""

    def __init__(
        self,
        concurrency: int = 8,
        rate_limits: RateLimits | None = None,
        *,
        shared_in: Engine | None = None,
        clock: Clock | None = None,
    ) -> None:
        """``shared_in``: count the rate limits in this store, for every process at once.
        ``clock``: the rate limits' clock (tests); default, the event loop's in this process
        and the wall clock in the store."""
        if not 1 <= concurrency <= 10_000:
            raise ValueError(f"concurrency must be between 1 and 10,000, not {concurrency}")
        self.concurrency = concurrency
        self.rate_limits = rate_limits or RateLimits()
        self.shared_in = shared_in
        self._clock = clock
        self._semaphores: dict[tuple[str, str], Gate] = {}
        self._limiters: dict[str, Limiter | None] = {}
        self._slots: dict[str, Slot] = {}

    def _semaphore(self, key: tuple[str, str]) -> Gate:
        semaphore = self._semaphores.get(key)
        if semaphore is None:
            semaphore = self._semaphores[key] = Gate(self.concurrency)
        return semaphore

    def _limiter(self, model: Model) -> Limiter | None:
        if model.id not in self._limiters:
            limits = self.rate_limits
            if limits.rpm is None and model.id.endswith(":free"):  # the user's value wins
                limits = dataclasses.replace(limits, rpm=FREE_MODEL_RPM)
            limiter: Limiter | None = None
            if limits.any and self.shared_in is not None:
                limiter = StoreRateLimiter(
                    self.shared_in, model.id, limits, clock=self._clock or time.time
                )
            elif limits.any:
                limiter = RateLimiter(limits, clock=self._clock)
            self._limiters[model.id] = limiter
        return self._limiters[model.id]

    def slot(self, model: Model) -> Slot:
        """The limits ``model``'s calls take (made once per model; the executor keeps it)."""
        slot = self._slots.get(model.id)
        if slot is None:
            provider = self._semaphore((model.info.provider, ""))
            own = self._semaphore((model.info.provider, model.id))
            slot = self._slots[model.id] = Slot(self._limiter(model), provider, own)
        return slot

    async def enter(self, model: Model, tokens: int) -> Slot:
        """Take a slot of the model's provider and of the model itself for one attempt, then
        count it against the model's rate limits — last, so the moment counted is the moment
        it is sent (a slot is not held while the window is full); give it back with
        :meth:`Slot.leave`. The caller sends the request at once."""
        slot = self.slot(model)
        await slot.enter(tokens)
        return slot


class Gate:
    """A counting semaphore (first come, first served) whose uncontended take and give-back
    are plain arithmetic, with no coroutine: a benchmark makes tens of thousands of calls, and
    ``asyncio.Semaphore`` cost a dozen Python calls for each one's two slots."""

    __slots__ = ("free", "waiters")

    def __init__(self, value: int) -> None:
        self.free = value
        self.waiters: deque[asyncio.Future[None]] = deque()

    async def acquire(self) -> None:
        """Take a unit, waiting in line for one when none is free."""
        if self.free > 0 and not self.waiters:
            self.free -= 1
            return
        waiter = asyncio.get_running_loop().create_future()
        self.waiters.append(waiter)
        try:
            await waiter  # a unit is handed over by release(), never counted free between
        except BaseException:
            if waiter.done() and not waiter.cancelled():
                self.release()  # handed a unit, then cancelled: it goes to the next in line
            else:
                with contextlib.suppress(ValueError):  # already taken off the line
                    self.waiters.remove(waiter)
            raise

    def release(self) -> None:
        """Give a unit back: to the first caller waiting, else to the free count."""
        waiters = self.waiters
        while waiters:
            waiter = waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return
        self.free += 1


@dataclass(frozen=True)
class Slot:
    """The limits one model's calls take."""

    limiter: Limiter | None
    provider: Gate
    model: Gate

    def take_now(self) -> bool:
        """Take a slot of the provider and of the model if both are free with nobody waiting
        and no rate limit applies; False (nothing taken) otherwise: :meth:`enter`."""
        provider, model = self.provider, self.model
        if (
            self.limiter is None and provider.free > 0 and model.free > 0
            and not provider.waiters and not model.waiters
        ):  # fmt: skip
            provider.free -= 1
            model.free -= 1
            return True
        return False

    async def enter(self, tokens: int) -> None:
        """Take a slot, then count the call against the model's rate limits (``tokens``: its
        prompt bound and output budget); see :meth:`CallLimits.enter`."""
        if self.limiter is None:
            await self.take()
        else:
            await self.limiter.acquire(tokens, take=self.take, give_back=self.leave)

    async def take(self) -> None:
        """Wait for a slot of the provider, then of the model."""
        await self.provider.acquire()
        try:
            await self.model.acquire()
        except BaseException:
            self.provider.release()
            raise

    def leave(self) -> None:
        """Give the slot back."""
        model, provider = self.model, self.provider
        if model.waiters or provider.waiters:
            model.release()
            provider.release()
        else:
            model.free += 1
            provider.free += 1
