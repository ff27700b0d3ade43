"""Running a sweep: every cell at once, each streaming to the store and to subscribers; one
failing cell never stops the others; Stop all closes every provider stream at once and keeps
what was produced; every call goes through the engine, so it is held and settled in the spend
ledger, recorded, scrubbed, timed out and retried (before its first token) like any other.
A call waits, queued, until its provider has a free slot (``timing.py``: the local model runs
one call at a time, others up to ``calls_at_once``); its time counts from its own start.

The sweep is admitted as a whole before anything starts (each call at its worst case), stored
at once with its worker, and stored again as each sample finishes, so a crash keeps every
finished cell and the sweep shows as interrupted. Cells with several samples (repeats) run each
sample as its own call; at most ``2 × max_variants`` calls are in flight per model, the rest
queue (spec §18.1).
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from sweepbench.engine import AdmittedHolds, Call, CallSpec, Executor, RetryPolicy
from sweepbench.engine.executor import INTERACTIVE_TIMEOUT_S
from sweepbench.models.base import Event, Finish, TextDelta
from sweepbench.money.ledger import Charge, Ledger
from sweepbench.store import Store
from sweepbench.store.workers import this_worker
from sweepbench.sweeps.estimate import estimate_plan
from sweepbench.sweeps.history import save_sweep
from sweepbench.sweeps.plan import Plan, PlannedCall
from sweepbench.sweeps.results import Sample, Spread, Status, SweepEvent, SweepResult
from sweepbench.sweeps.timing import calls_at_once, queue_of, slots

__all__ = [
    "MAX_RUN_SECONDS", "Sample", "Spread", "Status", "Sweep", "SweepEvent", "SweepResult",
]  # fmt: skip

MAX_RUN_SECONDS = INTERACTIVE_TIMEOUT_S


def _key(planned: PlannedCall) -> str:
    return f"{planned.cell.index}:{planned.repeat}"


class Sweep:
    """A sweep ready to run. ``await sweep.run()``; ``sweep.stop_all()`` from anywhere."""

    def __init__(
        self,
        plan: Plan,
        *,
        store: Store,
        ledger: Ledger | None = None,
        run_limit_usd: Decimal | None = None,
        on_event: Callable[[SweepEvent], None] | None = None,
        sweep_id: str | None = None,
    ) -> None:
        self.plan = plan
        self.store = store
        self.ledger = ledger if ledger is not None else Ledger(store)
        self.run_limit_usd = run_limit_usd
        self.on_event = on_event
        self.id = sweep_id or uuid.uuid4().hex
        self.calls: list[PlannedCall] = plan.calls()
        self.samples = [Sample(c.cell, c.repeat) for c in self.calls]
        self.estimate = estimate_plan(plan, store)
        self.result = SweepResult(self.id, plan, self.estimate, self.samples)
        self._live: dict[int, Call] = {}
        self.stopping = False
        """Stop all was asked for (set at once, also from another thread): calls that have not
        started yet never start."""
        self._reservations: dict[str, str | None] | None = None

    def stop_all(self) -> None:
        """Cancel every call now: streams close (billing stops), queued calls never start.
        Call it on the sweep's event loop (``loop.call_soon_threadsafe`` from elsewhere)."""
        self.stopping = True
        for call in list(self._live.values()):
            call.cancel()

    def _emit(
        self, sample: Sample, event: Event | None = None, items: list[dict[str, Any]] | None = None
    ) -> None:
        if self.on_event is not None:
            self.on_event(
                SweepEvent(
                    sample.cell.index, sample.repeat, sample.status, event, tuple(items or ())
                )
            )

    def admit(self) -> None:
        """Check the plan and hold every call's worst case in the ledger, all or nothing.

        Raises UserError for a refused plan and BudgetExceeded when it does not fit the
        ceilings. :meth:`run` admits first if this was not called; surfaces call it directly
        to refuse at once, before the run is handed to a background loop."""
        if self._reservations is not None:
            return
        self.plan.ensure_runnable()
        charges: list[Charge] = []
        for priced in self.estimate.cells:  # cell order = call order (cell, then repeat)
            call = priced.call
            hold = Decimal(0) if call.free else call.hold or Decimal(0)
            charge = Charge(model=priced.cell.model, ceiling_usd=hold, role="sweep", free=hold == 0)
            charges += [charge] * self.plan.repeats
        admitted = self.ledger.admit(self.id, charges, run_limit_usd=self.run_limit_usd)
        self._reservations = {
            _key(planned): rid for planned, rid in zip(self.calls, admitted, strict=True)
        }

    async def run(self) -> SweepResult:
        """Admit the sweep as a whole, run every call concurrently, store each as it ends."""
        self.admit()
        reservations = dict(self._reservations or {})
        started = time.perf_counter()
        result = self.result
        width = self.plan.kind.defaults.max_variants
        result.worker = this_worker(self.store.engine)
        save_sweep(self.store, result)
        executor = Executor(
            self.store,
            ledger=self.ledger,
            holds=AdmittedHolds(self.ledger, reservations),
            retry=RetryPolicy(after_output=False),
            concurrency=calls_at_once(width),
            timeout_s=MAX_RUN_SECONDS,
        )
        gates: dict[str, asyncio.Semaphore] = {}

        async def one(index: int) -> None:
            sample, planned = self.samples[index], self.calls[index]
            model = planned.cell.model
            gate = gates.setdefault(queue_of(model), asyncio.Semaphore(slots(model, width)))
            async with gate:  # queued (and shown so) until its provider has a free slot
                if self.stopping:
                    self._never_started(sample, reservations.pop(_key(planned), None))
                    return
                await self._run_sample(index, planned, executor)
            save_sweep(self.store, result)  # each cell is stored as it finishes

        try:
            await asyncio.gather(*(one(i) for i in range(len(self.calls))))
        finally:
            for rid in reservations.values():  # calls that never started hold nothing more
                if rid is not None:
                    self.ledger.release(rid)
            await executor.aclose()
            result.wall_s = time.perf_counter() - started
            result.stopped = any(s.status == "stopped" for s in self.samples)
            save_sweep(self.store, result)
        return result

    def _never_started(self, sample: Sample, reservation: str | None) -> None:
        sample.status = "stopped"
        if reservation is not None:
            self.ledger.release(reservation)
        self._emit(sample)

    async def _run_sample(self, index: int, planned: PlannedCall, executor: Executor) -> None:
        sample = self.samples[index]
        spec = CallSpec(planned.request, "sweep", run_id=self.id, key=_key(planned))
        call = Call(executor, spec)
        self._live[index] = call
        kind = self.plan.kind
        parser = kind.parser() if kind.parser is not None else None

        def forward(event: Event) -> None:
            if sample.call_id is None:  # the first event: the call has its row
                sample.call_id = call.call_id
            items = parser.feed(event.text) if parser and isinstance(event, TextDelta) else []
            sample.items += len(items)
            self._emit(sample, event, items)

        sample.status = "running"
        sample.started = time.perf_counter()
        self._emit(sample)
        try:
            result = await call.run(forward)
        except Exception as exc:  # a refused retry, a bug: this cell fails, the others go on
            sample.status, sample.error = "failed", str(exc) or type(exc).__name__
            result = call.result
        finally:
            self._live.pop(index, None)
        sample.ended = time.perf_counter()
        sample.call_id = call.call_id
        sample.result = result
        sample.cost_usd = call.cost_usd
        if sample.status != "failed":
            sample.status = _status(result.stop_reason)
            if sample.status == "failed":
                sample.error = str(result.error) if result.error else "error"
        sample.outcome = await asyncio.to_thread(
            kind.outcome, result.text, result.stop_reason, planned.cell.prompt_version
        )
        if kind.stamp is not None and sample.outcome.artifact:
            sample.outcome.artifact = kind.stamp(
                sample.outcome.artifact,
                prompt=self.plan.prompt,
                model=planned.cell.model,
                usd=float(sample.cost_usd or 0),
                generated=datetime.now(UTC).date().isoformat(),
            )
        self._emit(sample, Finish(result.stop_reason, error=result.error))


def _status(stop_reason: str) -> Status:
    if stop_reason == "cancelled":
        return "stopped"
    if stop_reason == "error":
        return "failed"
    return "done"
