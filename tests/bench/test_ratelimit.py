"""Sliding-window rate limits, on a fake clock (no real waiting)."""

from __future__ import annotations

import pytest

from sweepbench.engine.ratelimit import RateLimiter, RateLimits


class FakeTime:
    def __init__(self) -> None:
        self.now = 1000.0
        self.slept: list[float] = []

    def clock(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def limiter(limits: RateLimits) -> tuple[RateLimiter, FakeTime]:
    fake = FakeTime()
    return RateLimiter(limits, clock=fake.clock, sleep=fake.sleep), fake


async def test_requests_per_minute() -> None:
    rate, fake = limiter(RateLimits(rpm=3))
    for _ in range(3):
        assert await rate.acquire() == 0
        fake.now += 1
    waited = await rate.acquire()  # the 4th waits until the 1st leaves the window
    assert waited == pytest.approx(57.0)
    assert fake.now == pytest.approx(1060.0)


async def test_requests_per_second() -> None:
    rate, _ = limiter(RateLimits(qps=2))
    assert [await rate.acquire() for _ in range(2)] == [0, 0]
    assert await rate.acquire() == pytest.approx(1.0)


async def test_tokens_per_minute_counts_the_estimate() -> None:
    rate, fake = limiter(RateLimits(tpm=1000))
    assert await rate.acquire(600) == 0
    fake.now += 10
    assert await rate.acquire(300) == 0  # 900 so far
    fake.now += 10
    assert await rate.acquire(300) == pytest.approx(40.0)  # waits for the 600 to expire
    big, fake2 = limiter(RateLimits(tpm=1000))
    assert await big.acquire(5000) == 0  # larger than the limit: goes into an empty window
    fake2.now += 1
    assert await big.acquire(10) == pytest.approx(59.0)


def test_limits_must_be_positive() -> None:
    with pytest.raises(ValueError, match="rpm"):
        RateLimiter(RateLimits(rpm=0))
