"""Recorders: how the engine writes the call log (``calls`` + ``call_events``). The layer that
makes the call logs it, so every call — a generation, a sweep cell, a benchmark answer, a judge's
grade — is a ``calls`` row.

- :class:`ImmediateRecorder` (generate, sweeps): the row is written before any traffic (a crash
  leaves a trace, and a dead worker's reservation can be settled from its stored events), events
  are flushed every :data:`FLUSH_EVERY_S`, the outcome is written when the call ends.
- :class:`BatchedRecorder` (benchmarks): no per-token events; finished rows wait in memory and
  are written by the runner's group commit, in the transaction that stores the answers.

Every text reaching a recorder has passed the scrubber (the executor sees to it).
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import asdict
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

from sqlalchemy.engine import Connection

from sweepbench.models.base import Event, ReasoningDelta, TextDelta, UsageEvent
from sweepbench.store import CallEnd, CallStart, EventRecord, Store

FLUSH_EVERY_S = 0.25


CallValues = dict[str, Any]
"""A call's start (``CallStart``'s fields) or its end (``CallEnd``'s), as plain values: the
executor makes them from typed values, so the batched path skips per-call validation."""


class Recorder(Protocol):
    """Where the engine writes a call's row and events."""

    keeps_events: bool
    """False: the recorder keeps no per-token events (the engine does not hand them over)."""

    def start(self, start: CallValues) -> str:
        """A call is about to be made; return its id."""

    def event(self, call_id: str, seq: int, event: Event, t_s: float) -> None:
        """One event of the stream (``t_s`` since the call started)."""

    def finish(self, call_id: str, start: CallValues, end: CallValues, attempt: int) -> None:
        """The call ended (in any way)."""


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
        call_id = self.store.start_call(CallStart(**start))
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

    def finish(self, call_id: str, start: CallValues, end: CallValues, attempt: int) -> None:
        """Flush what is left and write the outcome."""
        self._flush(call_id)
        self._pending.pop(call_id, None)
        self._flushed.pop(call_id, None)
        self.store.finish_call(call_id, CallEnd(**end), attempt=attempt)


class BatchedRecorder:
    """Keeps finished calls in memory until the runner's group commit writes them (no
    per-token events)."""

    keeps_events = False

    def __init__(self, store: Store) -> None:
        self.store = store
        self._rows: list[dict[str, Any]] = []
        self._started: dict[str, float] = {}

    def start(self, start: CallValues) -> str:
        """Nothing is written yet; the id is made here."""
        call_id = os.urandom(16).hex()  # as unique as a uuid4, without building one
        self._started[call_id] = time.time()
        return call_id

    def event(self, call_id: str, seq: int, event: Event, t_s: float) -> None:
        """Benchmarks keep no per-token events."""

    def finish(self, call_id: str, start: CallValues, end: CallValues, attempt: int) -> None:
        """Queue the whole row."""
        began = self._started.pop(call_id, time.time())
        created = datetime.fromtimestamp(began, UTC)
        finished = created + timedelta(seconds=end["wall_s"] or 0.0)
        row = self.store.start_values(call_id, start, created)
        row.update(end, finished_at=finished, attempt=attempt)
        self._rows.append(row)

    @property
    def pending(self) -> int:
        """Rows waiting to be written."""
        return len(self._rows)

    def write_in(self, conn: Connection) -> int:
        """Write the waiting rows inside the caller's transaction; return how many."""
        rows, self._rows = self._rows, []
        self.store.insert_calls(conn, rows)
        return len(rows)
