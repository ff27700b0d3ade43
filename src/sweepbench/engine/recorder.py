"""Recorders: how the engine writes the call log (``calls`` + ``call_events``). The layer that
makes the call logs it, so every call — a generation, a sweep cell, a benchmark answer, a judge's
grade — is a ``calls`` row.

- :class:`ImmediateRecorder` (generate, sweeps): the row is written before any traffic (a crash
  leaves a trace, and a dead worker's reservation can be settled from its stored events), events
  are flushed every :data:`FLUSH_EVERY_S`, the outcome is written when the call ends.
- :class:`BatchedRecorder` (benchmarks): no per-token events; a call's row is one tuple made
  when it ends, and the rows wait in memory until the runner's group commit writes them, in the
  transaction that stores the answers (one statement for the batch, ``Store.insert_calls``).
  What a row needs that is the same for a batch is made once for it: the ids (from one draw of
  random bytes), the clock's offset (from the monotonic clock the executor times calls with).

Every text reaching a recorder has passed the scrubber (the executor sees to it).
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import asdict
from decimal import Decimal
from typing import Any, Protocol

from sqlalchemy.engine import Connection

from sweepbench.models.base import Event, ReasoningDelta, Result, TextDelta, UsageEvent
from sweepbench.store import CallEnd, EventRecord, Store
from sweepbench.store.db import CallRow

FLUSH_EVERY_S = 0.25
IDS_AT_ONCE = 64
"""Call ids a batched recorder draws random bytes for at once."""
CLOCK_EVERY = 256
"""Rows after which a batched recorder reads the wall clock's offset again."""


CallValues = dict[str, Any]
"""A call's start as plain values: ``model``, ``provider``, ``role``, ``run_id``,
``item_key`` and ``request_json`` (the request as JSON text, scrubbed), made once per call by
the executor for every attempt."""


class Recorder(Protocol):
    """Where the engine writes a call's row and events."""

    keeps_events: bool
    """False: the recorder keeps no per-token events (the engine does not hand them over)."""

    def start(self, start: CallValues) -> str:
        """A call is about to be made; return its id."""

    def event(self, call_id: str, seq: int, event: Event, t_s: float) -> None:
        """One event of the stream (``t_s`` since the call started)."""

    def finish(
        self, call_id: str, start: CallValues, result: Result, cost: Decimal | None,
        source: str | None, attempt: int, started: float,
    ) -> None:  # fmt: skip
        """The call ended (in any way): its result (scrubbed), cost and price source;
        ``started`` is the ``time.perf_counter()`` its stream started at."""


def end_values(result: Result, cost: Decimal | None, source: str | None) -> dict[str, Any]:
    """A call's end (``CallEnd``'s fields) from its result."""
    usage = result.usage
    error = result.error
    return {
        "stop_reason": result.stop_reason,
        "text": result.text,
        "reasoning": result.reasoning,
        "error": str(error) if error else None,
        "error_kind": error.kind.value if error else None,
        "provider_reason": result.provider_reason,
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "reasoning_tokens": usage.reasoning_tokens,
        "cache_read_tokens": usage.cache_read_tokens,
        "cache_write_tokens": usage.cache_write_tokens,
        "cost_usd": cost,
        "price_source": source,
        "ttft_s": result.ttft_s,
        "wall_s": result.wall_s,
    }


def event_record(seq: int, event: Event, t_s: float) -> EventRecord:
    """An event as the store keeps it."""
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


class ImmediateRecorder:
    """Writes each call as it happens: row first, events in small batches, outcome last."""

    keeps_events = True

    def __init__(self, store: Store) -> None:
        self.store = store
        self._pending: dict[str, list[EventRecord]] = {}
        self._flushed: dict[str, float] = {}

    def start(self, start: CallValues) -> str:
        """Write the row before any traffic."""
        call_id = self.store.start_call_row(start)
        self._pending[call_id] = []
        self._flushed[call_id] = time.perf_counter()
        return call_id

    def event(self, call_id: str, seq: int, event: Event, t_s: float) -> None:
        """Queue an event; flush the queue every FLUSH_EVERY_S."""
        pending = self._pending.setdefault(call_id, [])
        pending.append(event_record(seq, event, t_s))
        if time.perf_counter() - self._flushed.get(call_id, 0.0) >= FLUSH_EVERY_S:
            self._flush(call_id)

    def _flush(self, call_id: str) -> None:
        pending = self._pending.get(call_id)
        if pending:
            self.store.append_events(call_id, pending)
            self._pending[call_id] = []
        self._flushed[call_id] = time.perf_counter()

    def finish(
        self, call_id: str, start: CallValues, result: Result, cost: Decimal | None,
        source: str | None, attempt: int, started: float,
    ) -> None:  # fmt: skip
        """Flush what is left and write the outcome."""
        self._flush(call_id)
        self._pending.pop(call_id, None)
        self._flushed.pop(call_id, None)
        end = CallEnd(**end_values(result, cost, source))
        self.store.finish_call(call_id, end, attempt=attempt)


class BatchedRecorder:
    """Keeps finished calls in memory, one tuple each, until the runner's group commit writes
    them (no per-token events)."""

    keeps_events = False

    def __init__(self, store: Store) -> None:
        self.store = store
        self._rows: list[CallRow] = []
        self._ids = ""
        self._offset = 0.0
        self._clock_in = 0

    def start(self, start: CallValues) -> str:
        """Nothing is written yet; the id is made here (32 hex digits, as random as a uuid4:
        a slice of one draw of random bytes for :data:`IDS_AT_ONCE` calls)."""
        ids = self._ids
        if not ids:
            ids = os.urandom(16 * IDS_AT_ONCE).hex()
        self._ids = ids[32:]
        return ids[:32]

    def event(self, call_id: str, seq: int, event: Event, t_s: float) -> None:
        """Benchmarks keep no per-token events."""

    def finish(
        self, call_id: str, start: CallValues, result: Result, cost: Decimal | None,
        source: str | None, attempt: int, started: float,
    ) -> None:  # fmt: skip
        """Queue the whole row: its start and end times on the wall clock, from the monotonic
        clock the call was timed with (the offset between them read every
        :data:`CLOCK_EVERY` rows)."""
        if self._clock_in <= 0:
            self._offset = time.time() - time.perf_counter()
            self._clock_in = CLOCK_EVERY
        self._clock_in -= 1
        created = started + self._offset if started else time.time()
        usage = result.usage
        error = result.error
        self._rows.append((
            call_id, created, created + (result.wall_s or 0.0), start["model"],
            start["provider"], start["role"], start["run_id"], start["request_json"],
            result.text, result.reasoning, result.stop_reason,
            None if error is None else str(error), None if error is None else error.kind.value,
            result.provider_reason, usage.input_tokens, usage.output_tokens,
            usage.reasoning_tokens, usage.cache_read_tokens, usage.cache_write_tokens, cost,
            source, result.ttft_s, result.wall_s, attempt, start["item_key"],
        ))  # fmt: skip

    @property
    def pending(self) -> int:
        """Rows waiting to be written."""
        return len(self._rows)

    def write_in(self, conn: Connection) -> int:
        """Write the waiting rows inside the caller's transaction; return how many."""
        rows, self._rows = self._rows, []
        self.store.insert_calls(conn, rows)
        return len(rows)
