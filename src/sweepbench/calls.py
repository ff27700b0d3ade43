"""One recorded call: stream it, keep every event in the store, cost it, allow stopping.

This is the smallest run there is (``sweepbench generate``); sweeps and benchmarks run many of
these. The call row is written before any traffic, events are flushed in small batches while the
model writes, and the outcome — finished, failed or stopped — is always written at the end.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from dataclasses import asdict
from decimal import Decimal
from typing import Any

from sweepbench.errors import ErrorKind, ProviderError
from sweepbench.models.base import (
    Event,
    Finish,
    Model,
    ReasoningDelta,
    Request,
    Result,
    TextDelta,
    UsageEvent,
)
from sweepbench.money.prices import call_cost
from sweepbench.store import CallEnd, CallRole, CallStart, EventRecord, Store

EventCallback = Callable[[Event], None]
FLUSH_EVERY_S = 0.25


def request_json(request: Request) -> dict[str, Any]:
    """The request as stored (messages and settings; never a key)."""
    return {
        "messages": [{"role": m.role, "content": m.content} for m in request.messages],
        "settings": {k: v for k, v in asdict(request.settings).items() if v is not None},
    }


def _event_record(seq: int, event: Event, t_s: float) -> EventRecord:
    data: str | dict[str, Any]
    if isinstance(event, TextDelta | ReasoningDelta):
        data = event.text
    elif isinstance(event, UsageEvent):
        data = json.loads(json.dumps(asdict(event.usage), default=str))
    else:
        data = {
            "stop_reason": event.stop_reason,
            "provider_reason": event.provider_reason,
            "error": str(event.error) if event.error else None,
        }
    return EventRecord(seq=seq, kind=event.kind, data=data, t_s=max(t_s, 0.0))


class Call:
    """A call in progress. ``await call.run()`` streams it to the end; ``call.cancel()``
    (from a signal handler, a Stop button, another task) closes the provider stream and the
    call ends with ``stop_reason="cancelled"`` and whatever was produced."""

    def __init__(
        self,
        model: Model,
        request: Request,
        store: Store | None,
        *,
        role: CallRole = "generate",
        run_id: str | None = None,
    ) -> None:
        self.model = model
        self.request = request
        self.store = store
        self.role = role
        self.run_id = run_id
        self.cost_usd: Decimal | None = None
        self.price_source: str | None = None
        self.call_id: str | None = None
        self.result = Result(model.id)
        self._task: asyncio.Task[None] | None = None
        self._cancelled = False

    def cancel(self) -> None:
        """Stop the call now; safe to call at any time, more than once."""
        self._cancelled = True
        if self._task is not None:
            self._task.cancel()

    async def run(self, on_event: EventCallback | None = None) -> Result:
        """Stream the call to its end and return the result (also when stopped or failed)."""
        self.model.check(self.request)  # bad settings fail here, before the row or traffic
        if self.store is not None:
            self.call_id = self.store.start_call(
                CallStart(
                    model=self.model.id,
                    provider=self.model.info.provider,
                    role=self.role,
                    run_id=self.run_id,
                    request=request_json(self.request),
                )
            )
        started = time.perf_counter()
        pending: list[EventRecord] = []
        seq = 0
        last_flush = started

        def flush() -> None:
            nonlocal last_flush
            if self.store is not None and self.call_id is not None and pending:
                self.store.append_events(self.call_id, pending)
            pending.clear()
            last_flush = time.perf_counter()

        async def consume() -> None:
            nonlocal seq
            stream = self.model.stream(self.request)
            try:
                async for event in stream:
                    self.result.add(event, started)
                    pending.append(_event_record(seq, event, time.perf_counter() - started))
                    seq += 1
                    if on_event is not None:
                        on_event(event)
                    if time.perf_counter() - last_flush >= FLUSH_EVERY_S:
                        flush()
            finally:
                await stream.aclose()  # closes the provider connection

        self._task = asyncio.create_task(consume())
        if self._cancelled:
            self._task.cancel()
        try:
            await self._task
        except Exception as exc:  # a bug or an untranslated failure: record it, then raise
            self.result.stop_reason = "error"
            self.result.error = ProviderError(
                f"{type(exc).__name__}: {exc}",
                kind=ErrorKind.BAD_REQUEST,
                provider=self.model.provider,
            )
            self._finish(started, flush)
            raise
        except asyncio.CancelledError:
            self.result.stop_reason = "cancelled"
            stopped = Finish("cancelled")
            pending.append(_event_record(seq, stopped, time.perf_counter() - started))
            if on_event is not None:
                on_event(stopped)
            if not self._cancelled:  # cancelled from outside: record, then let it propagate
                self._finish(started, flush)
                raise
        self._finish(started, flush)
        return self.result

    def _finish(self, started: float, flush: Callable[[], None]) -> None:
        result = self.result
        result.wall_s = time.perf_counter() - started
        if result.stop_reason in ("cancelled", "error"):
            result.estimate_missing_usage(self.request)
        flush()
        cost = call_cost(self.model.info, result.usage)
        self.cost_usd = cost.usd
        self.price_source = cost.source
        if self.store is None or self.call_id is None:
            return
        usage = result.usage
        self.store.finish_call(
            self.call_id,
            CallEnd(
                stop_reason=result.stop_reason,
                text=result.text,
                reasoning=result.reasoning,
                error=str(result.error) if result.error else None,
                error_kind=result.error.kind.value if result.error else None,
                provider_reason=result.provider_reason,
                input_tokens=usage.input_tokens,
                output_tokens=usage.output_tokens,
                reasoning_tokens=usage.reasoning_tokens,
                cache_read_tokens=usage.cache_read_tokens,
                cache_write_tokens=usage.cache_write_tokens,
                cost_usd=cost.usd,
                price_source=cost.source,
                ttft_s=result.ttft_s,
                wall_s=result.wall_s,
            ),
        )
