"""A recorded call: events and outcome in the store, Stop keeps what was produced."""

from __future__ import annotations

import asyncio

import pytest

from sweepbench import Call, CallSpec, Executor, Request, TextDelta
from sweepbench.engine import RetryPolicy
from sweepbench.store import Store


@pytest.fixture
def store() -> Store:
    return Store.open()


def make_call(store: Store, model: str, **settings: object) -> Call:
    executor = Executor(store, retry=RetryPolicy(max_attempts=1))
    return Call(executor, CallSpec(Request.simple(model, "hi", **settings), "generate"))


async def test_finished_call_is_stored_with_events(store: Store) -> None:
    call = make_call(store, "scripted/lorem?words=12", max_tokens=100)
    result = await call.run()
    assert result.stop_reason == "end"
    assert call.call_id is not None
    row = store.get_call(call.call_id)
    assert row.text == result.text and row.output_tokens == 12
    assert row.cost_usd == 0 and row.price_source == "scripted model: free"
    events = store.events(call.call_id)
    texts = [e.data for e in events if e.kind == "text"]
    assert "".join(str(t) for t in texts) == result.text
    assert events[-1].kind == "finish"
    assert [e.seq for e in events] == list(range(len(events)))


async def test_cancel_stops_promptly_and_keeps_the_partial_answer(store: Store) -> None:
    call = make_call(store, "scripted/lorem?words=2000&tps=50", max_tokens=5000)
    seen: list[str] = []

    def on_event(event: object) -> None:
        if isinstance(event, TextDelta):
            seen.append(event.text)
            if len(seen) == 5:
                call.cancel()

    result = await call.run(on_event)
    assert result.stop_reason == "cancelled"
    assert len(seen) < 2000  # it ended at the cancel, not after writing every word
    assert result.text == "".join(seen)
    # settled at an upper bound of what was received: its UTF-8 bytes
    assert result.usage.output_tokens == len(result.text.encode("utf-8"))
    assert call.call_id is not None
    row = store.get_call(call.call_id)
    assert row.stop_reason == "cancelled" and row.text == result.text
    assert store.events(call.call_id)[-1].kind == "finish"


async def test_outside_cancellation_is_recorded_then_propagates(store: Store) -> None:
    call = make_call(store, "scripted/lorem?words=2000&tps=100", max_tokens=5000)
    task = asyncio.create_task(call.run())
    await asyncio.sleep(0.1)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert call.call_id is not None
    row = store.get_call(call.call_id)
    assert row.finished and row.stop_reason == "cancelled"


async def test_failed_call_is_an_error_row_not_an_answer(store: Store) -> None:
    call = make_call(store, "scripted/echo?fail=500")
    result = await call.run()
    assert result.stop_reason == "error"
    assert call.call_id is not None
    row = store.get_call(call.call_id)
    assert row.stop_reason == "error" and row.error_kind == "retryable"
    assert row.output_tokens == 0 and row.text == ""
