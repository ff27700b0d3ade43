"""Benchmark calls made in batches (issue 30): a lease's calls share their money, their rows
are written in one statement with the answers, one timer serves their deadlines, their slots
are plain counters — and every promise still holds for each call: the row, the settlement,
the deadline, the cancellation recorded and settled."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa

from sweepbench import CallSpec, Executor, Request
from sweepbench.engine import BatchedRecorder, LeaseHolds, RetryPolicy
from sweepbench.engine.limits import Gate
from sweepbench.models.scripted import gate_path
from sweepbench.money.ledger import Ledger
from sweepbench.store import Store
from sweepbench.store.schema import calls, spend_reservations
from tests.bench.helpers import set_prices


@pytest.fixture
def store(tmp_path: Path, isolated_home: Path) -> Iterator[Store]:
    set_prices(isolated_home, {"scripted.echo": (1, 1)})  # every call held, logged, settled
    with Store.open(f"sqlite:///{tmp_path / 'calls.db'}") as opened:
        yield opened


def batched(store: Store, **options: object) -> tuple[Executor, LeaseHolds, BatchedRecorder]:
    ledger = Ledger(store)
    holds, recorder = LeaseHolds(ledger), BatchedRecorder(store)
    executor = Executor(store, ledger=ledger, holds=holds, recorder=recorder, **options)  # type: ignore[arg-type]
    return executor, holds, recorder


def commit(store: Store, holds: LeaseHolds, recorder: BatchedRecorder) -> int:
    """The runner's group commit: the rows and the settlements in one transaction."""
    with store.begin() as conn:
        written = recorder.write_in(conn)
        holds.settle_in(conn)
    return written


async def wait_for(check: Callable[[], bool]) -> None:
    """Until ``check()`` holds (a fail-safe of minutes, never a measure)."""
    for _ in range(600_000):
        if check():
            return
        await asyncio.sleep(0.0005)
    raise AssertionError("the state never came")


async def test_a_batch_cancelled_midway_has_every_row_written_and_every_lease_settled(
    store: Store,
) -> None:
    # three calls pass the gate and finish; three wait at it (in flight, holding their
    # draws on the lease) and are cancelled: all six are rows, all money is settled
    executor, holds, recorder = batched(store)
    request = Request.simple("scripted/echo?text=42&gate=batch-cancel&gate_after=3", "hi")
    specs = [CallSpec(request, "target", run_id="run-b", key=f"k{i}") for i in range(6)]
    tasks = [asyncio.create_task(executor.execute(spec)) for spec in specs]
    await wait_for(lambda: recorder.pending == 3 and sum(t.done() for t in tasks) == 3)
    for task in tasks:
        task.cancel()
    results = await asyncio.gather(*tasks, return_exceptions=True)
    assert sum(isinstance(r, asyncio.CancelledError) for r in results) == 3
    holds.close_all()
    assert commit(store, holds, recorder) == 6
    with store.engine.connect() as conn:
        rows = conn.execute(sa.select(calls.c.item_key, calls.c.stop_reason)).all()
        states = conn.execute(sa.select(spend_reservations.c.state)).scalars().all()
    assert sorted(r.stop_reason for r in rows) == ["cancelled"] * 3 + ["end"] * 3
    assert sorted(r.item_key for r in rows) == [f"k{i}" for i in range(6)]
    assert states and set(states) == {"settled"}
    assert Ledger(store).summary().open_reservations == 0


async def test_a_deadline_of_a_batched_call_still_ends_that_call_and_the_batch_goes_on(
    store: Store,
) -> None:
    executor, holds, recorder = batched(store, timeout_s=0.2, retry=RetryPolicy(max_attempts=1))
    stuck = Request.simple("scripted/echo?text=42&gate=batch-never", "hi")  # never opened
    answered = Request.simple("scripted/echo?text=42", "hi")
    first = await executor.execute(CallSpec(answered, "target", run_id="run-d", key="a"))
    late = await executor.execute(CallSpec(stuck, "target", run_id="run-d", key="b"))
    after = await executor.execute(CallSpec(answered, "target", run_id="run-d", key="c"))
    assert first.result.error is None and after.result.text == "42"
    error = late.result.error
    assert error is not None and "no complete answer within 0.2 s" in str(error)
    assert not gate_path("batch-never").exists()
    holds.close_all()
    assert commit(store, holds, recorder) == 3
    with store.engine.connect() as conn:
        rows = dict(conn.execute(sa.select(calls.c.item_key, calls.c.stop_reason)).all())
    assert rows == {"a": "end", "b": "error", "c": "end"}
    assert Ledger(store).summary().open_reservations == 0


async def test_batched_rows_keep_what_the_call_log_needs(store: Store) -> None:
    executor, holds, recorder = batched(store)
    request = Request.simple("scripted/echo?text=42", "What is six times seven?", max_tokens=50)
    outcome = await executor.execute(CallSpec(request, "target", run_id="run-r", key="q1"))
    holds.close_all()
    commit(store, holds, recorder)
    (call,) = store.list_calls(run_id="run-r")
    assert call.id == outcome.call_id and len(call.id) == 32
    assert (call.model, call.provider, call.role, call.item_key) == (
        "scripted/echo?text=42", "scripted", "target", "q1"
    )  # fmt: skip
    assert call.request["settings"] == {"max_tokens": 50, "sample": 0}
    assert call.request["messages"] == [{"role": "user", "content": "What is six times seven?"}]
    assert call.finished_at is not None and call.finished_at >= call.created_at
    assert call.cost_usd == outcome.cost_usd and call.cost_usd is not None and call.cost_usd > 0
    assert (call.text, call.stop_reason, call.attempt) == ("42", "end", 1)


async def test_the_slots_gate_serves_in_order_and_a_cancelled_waiter_passes_its_turn() -> None:
    gate = Gate(1)
    await gate.acquire()  # the one unit is taken
    order: list[str] = []

    async def wait(name: str) -> None:
        await gate.acquire()
        order.append(name)

    first = asyncio.create_task(wait("first"))
    second = asyncio.create_task(wait("second"))
    third = asyncio.create_task(wait("third"))
    await wait_for(lambda: len(gate.waiters) == 3)
    second.cancel()
    gate.release()  # to the first in line
    await first
    gate.release()  # the second was cancelled: the third gets it
    await third
    assert order == ["first", "third"] and second.cancelled()
    gate.release()
    assert gate.free == 1 and not gate.waiters
