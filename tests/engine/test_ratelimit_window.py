"""Issue 26 §4: a requests-per-minute limit holds over the moments requests are *sent*, in any
60 s window (sliding, any start, both ends included), with racing acquirers whose calls hold
their concurrency slots for different times — in one process, and counted in the store by two
"processes" (two engines) at once, on SQLite and PostgreSQL.

Time is virtual: an event loop whose clock moves only when every task waits (a timer is due
next), so a minute of racing calls takes milliseconds and every schedule is reproducible; a
store transaction in a worker thread is waited for before the clock moves on."""

from __future__ import annotations

import asyncio
import random
import selectors
from collections.abc import Callable, Coroutine, Iterator
from pathlib import Path
from typing import Any

import pytest

from sweepbench.engine.limits import CallLimits
from sweepbench.engine.ratelimit import RateLimits
from sweepbench.models import resolve
from sweepbench.store import Store
from sweepbench.store.workers import forget_workers
from tests.backends import BACKENDS, backend_url

RPM = 12
CONCURRENCY = 3
WINDOW = 60.0


class _VirtualSelector(selectors.DefaultSelector):
    """Never waits for a timer: the loop's clock jumps to it. Waits for real only while a
    worker thread is busy or no timer is set (a thread's result, or the executor's shutdown,
    wakes the loop through its self-pipe)."""

    def __init__(self, loop: VirtualTimeLoop) -> None:
        super().__init__()
        self._loop = loop

    def select(self, timeout: float | None = None) -> list[Any]:
        ready = super().select(0)
        if ready or timeout == 0:
            return ready
        if self._loop.in_flight or timeout is None:  # a thread's answer is on its way
            ready = super().select(30.0)  # a hang guard only: a transaction takes milliseconds
            if not ready and timeout is None:
                raise RuntimeError("every task waits and no timer is set: the test deadlocked")
            return ready
        self._loop.now += timeout
        return []


class VirtualTimeLoop(asyncio.SelectorEventLoop):
    """An event loop on virtual time (``time()``), starting at ``start``. A job handed to a
    worker thread (``asyncio.to_thread``) counts as in flight until the task awaiting it has
    been woken, so the clock never moves while a result is on its way."""

    def __init__(self, start: float = 1_000_000.0) -> None:
        self.now = start
        self.in_flight = 0
        super().__init__(_VirtualSelector(self))

    def time(self) -> float:
        return self.now

    def run_in_executor(self, executor: Any, func: Callable[..., Any], *args: Any) -> Any:
        self.in_flight += 1
        future = super().run_in_executor(executor, func, *args)
        # Done callbacks run in the order added, all in one batch: by the time this one runs,
        # the awaiting task's wake-up (added when it awaited) is queued, so nothing waits.
        future.add_done_callback(self._landed)
        return future

    def _landed(self, _: object) -> None:
        self.in_flight -= 1


def run_virtual(main: Callable[[VirtualTimeLoop], Coroutine[Any, Any, None]]) -> None:
    loop = VirtualTimeLoop()
    try:
        loop.run_until_complete(main(loop))
    finally:
        loop.run_until_complete(loop.shutdown_default_executor())
        loop.close()


async def race(
    loop: VirtualTimeLoop, limits: list[CallLimits], sends: list[float], *, seed: int
) -> None:
    """Twenty callers per ``CallLimits`` (one per "process"), each making four calls to one
    model that hold their slots 0–20 s (virtual), with pauses between; ``sends``: the moment
    each call was sent (when its slots were given to it)."""
    model = resolve("scripted/echo")
    draw = random.Random(seed)

    async def caller(limit: CallLimits, plan: list[tuple[float, float]]) -> None:
        for hold, pause in plan:
            slot = await limit.enter(model, 100)
            sends.append(loop.time())  # the call is sent now: nothing is awaited in between
            await asyncio.sleep(hold)
            slot.leave()
            await asyncio.sleep(pause)

    plans = [
        (limit, [(draw.uniform(0, 20), draw.uniform(0, 5)) for _ in range(4)])
        for limit in limits
        for _ in range(20)
    ]
    await asyncio.gather(*(caller(limit, plan) for limit, plan in plans))


def busiest_window(sends: list[float]) -> tuple[int, float]:
    """The most sends in one 60 s window (both ends included), and where it starts. Checking
    windows that start at a send is enough: any window slides to its first send."""
    moments = sorted(sends)
    best = (0, 0.0)
    for i, start in enumerate(moments):
        count = sum(1 for moment in moments[i:] if moment - start <= WINDOW)
        best = max(best, (count, start))
    return best


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_no_minute_of_sends_holds_more_than_the_limit_in_one_process(seed: int) -> None:
    sends: list[float] = []

    async def main(loop: VirtualTimeLoop) -> None:
        limits = CallLimits(CONCURRENCY, RateLimits(rpm=RPM), clock=loop.time)
        await race(loop, [limits], sends, seed=seed)

    run_virtual(main)
    assert len(sends) == 80
    count, start = busiest_window(sends)
    assert count <= RPM, f"{count} requests sent in the 60 s from {start}"
    assert count == RPM  # the limit is reached, not avoided by sending less


@pytest.fixture(params=BACKENDS)
def url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    yield backend_url(request.param, tmp_path / "rates.db")
    forget_workers()


@pytest.mark.parametrize("seed", [1, 2])
def test_no_minute_of_sends_holds_more_than_the_limit_counted_in_the_store(
    url: str, seed: int
) -> None:
    sends: list[float] = []

    async def main(loop: VirtualTimeLoop) -> None:
        with Store.open(url) as one, Store.open(url) as other:  # two processes' engines
            limits = [
                CallLimits(
                    CONCURRENCY, RateLimits(rpm=RPM), shared_in=store.engine, clock=loop.time
                )
                for store in (one, other)
            ]
            await race(loop, limits, sends, seed=seed)

    run_virtual(main)
    assert len(sends) == 160
    count, start = busiest_window(sends)
    assert count <= RPM, f"{count} requests sent in the 60 s from {start}"
    assert count == RPM


def test_a_request_exactly_a_minute_old_still_counts() -> None:
    """The window's ends are both in it: the request after a full minute waits past it."""
    sends: list[float] = []

    async def main(loop: VirtualTimeLoop) -> None:
        limits = CallLimits(1, RateLimits(rpm=1), clock=loop.time)
        model = resolve("scripted/echo")
        for _ in range(3):
            (await limits.enter(model, 0)).leave()
            sends.append(loop.time())

    run_virtual(main)
    assert sends[1] - sends[0] > WINDOW and sends[2] - sends[1] > WINDOW
    assert sends[1] - sends[0] == pytest.approx(WINDOW)
