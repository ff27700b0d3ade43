"""Rate limits counted in the store, so that the workers of one run keep one limit between them
(issue 18): on SQLite and, when ``SWEEPBENCH_TEST_POSTGRES`` names one, PostgreSQL."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa

from sweepbench.engine.limits import CallLimits
from sweepbench.engine.ratelimit import RateLimits
from sweepbench.engine.ratelimit_shared import StoreRateLimiter
from sweepbench.store import Store
from sweepbench.store.schema import rate_events
from sweepbench.store.workers import forget_workers
from tests.backends import BACKENDS, backend_url


class FakeTime:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def clock(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture(params=BACKENDS)
def url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    yield backend_url(request.param, tmp_path / "rates.db")
    forget_workers()


def test_two_workers_keep_one_requests_per_minute_limit(url: str) -> None:
    fake = FakeTime()
    with Store.open(url) as one, Store.open(url) as other:  # two engines: two processes' view
        first = StoreRateLimiter(one.engine, "m/a", RateLimits(rpm=3), clock=fake.clock,
                                 sleep=fake.sleep)  # fmt: skip
        second = StoreRateLimiter(other.engine, "m/a", RateLimits(rpm=3), clock=fake.clock,
                                  sleep=fake.sleep)  # fmt: skip

        async def go() -> list[float]:
            waits = [await first.acquire()]
            fake.now += 1
            waits.append(await second.acquire())
            fake.now += 1
            waits.append(await first.acquire())
            fake.now += 1
            waits.append(await second.acquire())  # the 4th of the minute: waits for the 1st
            return waits

        waits = asyncio.run(go())
    assert waits[:3] == [0, 0, 0]
    assert waits[3] == pytest.approx(57.0)


def test_tokens_per_minute_are_counted_for_every_worker(url: str) -> None:
    fake = FakeTime()
    with Store.open(url) as one, Store.open(url) as other:
        limits = RateLimits(tpm=1000)
        first = StoreRateLimiter(one.engine, "m/a", limits, clock=fake.clock, sleep=fake.sleep)
        second = StoreRateLimiter(other.engine, "m/a", limits, clock=fake.clock,
                                  sleep=fake.sleep)  # fmt: skip
        elsewhere = StoreRateLimiter(other.engine, "m/b", limits, clock=fake.clock,
                                     sleep=fake.sleep)  # fmt: skip

        async def go() -> tuple[float, float, float]:
            a = await first.acquire(700)
            fake.now += 10
            b = await elsewhere.acquire(700)  # another model has its own window
            c = await second.acquire(700)  # 1,400 > 1,000: waits until the first expires
            return a, b, c

        a, b, c = asyncio.run(go())
    assert (a, b) == (0, 0)
    assert c == pytest.approx(50.0)


def test_expired_requests_leave_the_store(url: str) -> None:
    fake = FakeTime()
    with Store.open(url) as store:
        rate = StoreRateLimiter(store.engine, "m/a", RateLimits(rpm=100), clock=fake.clock,
                                sleep=fake.sleep)  # fmt: skip

        async def go() -> None:
            for _ in range(5):
                await rate.acquire()
            fake.now += 61
            await rate.acquire()

        asyncio.run(go())
        with store.engine.connect() as conn:
            left = conn.scalar(sa.select(sa.func.count()).select_from(rate_events))
    assert left == 1


def test_racing_workers_never_exceed_the_limit(url: str) -> None:
    """Four threads, each with its own engine and event loop (as four processes would be),
    on the real clock: no second of the recorded requests holds more than the limit."""
    qps, each, racers = 4, 4, 4
    errors: list[BaseException] = []

    def worker() -> None:
        try:
            with Store.open(url) as store:
                rate = StoreRateLimiter(store.engine, "m/race", RateLimits(qps=qps))

                async def go() -> None:
                    for _ in range(each):
                        await rate.acquire()

                asyncio.run(go())
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker) for _ in range(racers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not errors, errors
    with Store.open(url) as store, store.engine.connect() as conn:
        moments = sorted(conn.scalars(sa.select(rate_events.c.at)))
    assert len(moments) == each * racers
    for i, start in enumerate(moments):
        in_one_second = [m for m in moments[i:] if m - start < 1.0]
        assert len(in_one_second) <= qps, (start, in_one_second)


def test_call_limits_count_in_the_store_when_given_it(url: str) -> None:
    from sweepbench.models import resolve

    with Store.open(url) as store:
        model = resolve("scripted/echo")
        shared = CallLimits(2, RateLimits(rpm=5), shared_in=store.engine)
        alone = CallLimits(2, RateLimits(rpm=5))
        assert isinstance(shared._limiter(model), StoreRateLimiter)
        assert not isinstance(alone._limiter(model), StoreRateLimiter)
