"""Concurrency and rate limits for calls, keyed by provider and by (provider, model): at most
``concurrency`` calls in flight to each provider and to each model, and optional requests per
second / minute and tokens per minute per model (OpenRouter's ``:free`` models get 20 a minute
unless told otherwise). One :class:`CallLimits` per executor; safe for many tasks of one loop.
Given the store (a run shared by several workers), the rate limits are counted there, so they
hold for every worker together (:mod:`.ratelimit_shared`); concurrency stays per worker."""

from __future__ import annotations

import asyncio
import dataclasses
import time
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
        self._semaphores: dict[tuple[str, str], asyncio.Semaphore] = {}
        self._limiters: dict[str, Limiter | None] = {}
        self._slots: dict[str, Slot] = {}

    def _semaphore(self, key: tuple[str, str]) -> asyncio.Semaphore:
        semaphore = self._semaphores.get(key)
        if semaphore is None:
            semaphore = self._semaphores[key] = asyncio.Semaphore(self.concurrency)
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

    async def enter(self, model: Model, tokens: int) -> Slot:
        """Take a slot of the model's provider and of the model itself for one attempt, then
        count it against the model's rate limits — last, so the moment counted is the moment
        it is sent (a slot is not held while the window is full); give it back with
        :meth:`Slot.leave`. The caller sends the request at once."""
        slot = self._slots.get(model.id)
        if slot is None:
            provider = self._semaphore((model.info.provider, ""))
            own = self._semaphore((model.info.provider, model.id))
            slot = self._slots[model.id] = Slot(self._limiter(model), provider, own)
        if slot.limiter is None:
            await slot.take()
        else:
            await slot.limiter.acquire(tokens, take=slot.take, give_back=slot.leave)
        return slot


@dataclass(frozen=True)
class Slot:
    """The limits one model's calls take."""

    limiter: Limiter | None
    provider: asyncio.Semaphore
    model: asyncio.Semaphore

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
        self.model.release()
        self.provider.release()
