"""Running a sweep: every cell at once, each streaming to the store and to subscribers; one
failing cell never stops the others; Stop all closes every provider stream at once and keeps
what was produced; every call is settled in the spend ledger however it ended.

Cells with several samples (repeats) run each sample as its own call; at most
``2 × max_variants`` calls are in flight, the rest queue (spec §18.1).
"""

from __future__ import annotations

import asyncio
import statistics
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any, Literal

from sweepbench.artifacts import ArtifactOutcome
from sweepbench.calls import Call
from sweepbench.models.base import Event, Finish, Model, Result, TextDelta
from sweepbench.models.registry import resolve
from sweepbench.money.ledger import Charge, Ledger
from sweepbench.store import Store
from sweepbench.sweeps.estimate import SweepEstimate, estimate_plan
from sweepbench.sweeps.plan import Cell, Plan, PlannedCall

Status = Literal["queued", "running", "done", "failed", "stopped"]
MAX_RUN_SECONDS = 3600.0


@dataclass
class Sample:
    """One call of a cell: its state while running and its outcome."""

    cell: Cell
    repeat: int
    status: Status = "queued"
    call_id: str | None = None
    result: Result | None = None
    cost_usd: Decimal | None = None
    started: float | None = None
    ended: float | None = None
    error: str | None = None
    items: int = 0
    """Artifact items (drawing elements, sculpture parts) parsed so far from the stream."""
    outcome: ArtifactOutcome | None = None
    """The finished artifact, built from the whole answer when the call ends."""

    @property
    def seconds(self) -> float:
        """Wall time of this call (0 while queued)."""
        if self.started is None:
            return 0.0
        return (self.ended or time.perf_counter()) - self.started

    @property
    def truncated(self) -> bool:
        """The output budget ran out."""
        return self.result is not None and self.result.stop_reason == "max_tokens"


@dataclass(frozen=True)
class SweepEvent:
    """What subscribers receive: a model event of one sample, or a status change."""

    cell_index: int
    repeat: int
    status: Status
    event: Event | None = None
    items: tuple[dict[str, Any], ...] = ()
    """Artifact items completed by this event (drawing elements, sculpture parts)."""


@dataclass
class Spread:
    """Mean and spread of one number over a cell's samples."""

    mean: float
    stdev: float | None
    low: float
    high: float

    @classmethod
    def of(cls, values: list[float]) -> Spread:
        """Mean, sample standard deviation (k ≥ 3), min and max."""
        stdev = statistics.stdev(values) if len(values) >= 3 else None
        return cls(statistics.fmean(values), stdev, min(values), max(values))

    def text(self, digits: int = 0) -> str:
        """``27 ± 3 (24–31)``; with two samples only the range."""
        fmt = f"{{:,.{digits}f}}"
        span = f"({fmt.format(self.low)}–{fmt.format(self.high)})"
        if self.stdev is None:
            return (
                f"{fmt.format(self.mean)} {span}"
                if self.low != self.high
                else fmt.format(self.mean)
            )
        return f"{fmt.format(self.mean)} ± {fmt.format(self.stdev)} {span}"


@dataclass
class SweepResult:
    """The outcome of a sweep (also when stopped)."""

    id: str
    plan: Plan
    estimate: SweepEstimate
    samples: list[Sample]
    created_at: datetime = field(default_factory=lambda: datetime.now(UTC))
    wall_s: float = 0.0
    stopped: bool = False

    @property
    def serial_s(self) -> float:
        """The serial equivalent: the sum of every call's time."""
        return sum(s.seconds for s in self.samples)

    @property
    def cost_usd(self) -> Decimal | None:
        """Σ actual cost (None if any call had no price)."""
        costs = [s.cost_usd for s in self.samples if s.result is not None]
        if any(c is None for c in costs):
            return None
        return sum((c for c in costs if c is not None), Decimal(0))

    def cell_samples(self, index: int) -> list[Sample]:
        """The samples of one cell, in repeat order."""
        return [s for s in self.samples if s.cell.index == index]

    def cell_status(self, index: int) -> Status:
        """A cell's status from its samples: any running → running; all queued → queued;
        any stopped → stopped; any failed → failed; else done."""
        states = {s.status for s in self.cell_samples(index)}
        statuses: tuple[Status, ...] = ("running", "stopped", "failed")
        for status in statuses:
            if status in states:
                return status
        return "queued" if states == {"queued"} else "done"

    @property
    def ok(self) -> bool:
        """Every call finished normally (no failure, truncation or stop)."""
        return all(s.status == "done" and not s.truncated for s in self.samples)


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
        self.ledger = ledger
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
        self._reservations: list[str | None] | None = None

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
        """Check the plan and reserve every call's ceiling in the ledger, all or nothing.

        Raises UserError for a refused plan and BudgetExceeded when it does not fit the
        ceilings. :meth:`run` admits first if this was not called; surfaces call it directly
        to refuse at once, before the run is handed to a background loop."""
        if self._reservations is not None:
            return
        self.plan.ensure_runnable()
        reservations: list[str | None] = [None] * len(self.calls)
        if self.ledger is not None:
            charges: list[Charge] = []
            for priced in self.estimate.cells:  # cell order = call order (cell, then repeat)
                charge = Charge(
                    model=priced.cell.model,
                    ceiling_usd=Decimal(0)
                    if priced.call.free
                    else priced.call.ceiling or Decimal(0),
                    role="sweep",
                    free=priced.call.free,
                )
                charges += [charge] * self.plan.repeats
            admitted = self.ledger.admit(self.id, charges, run_limit_usd=self.run_limit_usd)
            reservations = list(admitted)
        self._reservations = reservations

    async def run(self) -> SweepResult:
        """Admit the sweep as a whole, run every call concurrently, settle each as it ends."""
        self.admit()
        reservations = self._reservations or []
        from sweepbench.sweeps.history import save_sweep

        started = time.perf_counter()
        result = self.result
        save_sweep(self.store, result)
        models: dict[str, Model] = {}
        limit = asyncio.Semaphore(2 * max(self.plan.kind.defaults.max_variants, 1))

        async def one(index: int) -> None:
            sample, planned = self.samples[index], self.calls[index]
            async with limit:
                if self.stopping:
                    sample.status = "stopped"
                    self._settle(reservations[index], None, produced=False)
                    self._emit(sample)
                    return
                model = models.setdefault(planned.cell.model, resolve(planned.cell.model))
                await self._run_sample(index, planned, model, reservations[index])

        try:
            await asyncio.gather(*(one(i) for i in range(len(self.calls))))
        finally:
            for model in models.values():
                await model.aclose()
            result.wall_s = time.perf_counter() - started
            result.stopped = any(s.status == "stopped" for s in self.samples)
            save_sweep(self.store, result)
        return result

    async def _run_sample(
        self, index: int, planned: PlannedCall, model: Model, reservation: str | None
    ) -> None:
        sample = self.samples[index]
        call = Call(model, planned.request, self.store, role="sweep", run_id=self.id)
        self._live[index] = call
        sample.status = "running"
        sample.started = time.perf_counter()
        self._emit(sample)

        kind = self.plan.kind
        parser = kind.parser() if kind.parser is not None else None

        def forward(event: Event) -> None:
            if sample.call_id is None and call.call_id is not None:
                sample.call_id = call.call_id
                if reservation is not None and self.ledger is not None:
                    self.ledger.attach(reservation, call.call_id)
            items = parser.feed(event.text) if parser and isinstance(event, TextDelta) else []
            sample.items += len(items)
            self._emit(sample, event, items)

        try:
            result = await asyncio.wait_for(call.run(forward), MAX_RUN_SECONDS)
        except Exception as exc:  # one bad cell never takes down the others
            sample.status, sample.error = "failed", f"{type(exc).__name__}: {exc}"
            result = call.result
        finally:
            self._live.pop(index, None)
        sample.ended = time.perf_counter()
        sample.call_id = call.call_id
        sample.result = result
        sample.cost_usd = getattr(call, "cost_usd", None)
        if sample.status != "failed":
            if result.stop_reason == "cancelled":
                sample.status = "stopped"
            elif result.stop_reason == "error":
                sample.status = "failed"
                sample.error = str(result.error) if result.error else "error"
            else:
                sample.status = "done"
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
        produced = result.deltas > 0 or result.usage.input_tokens > 0
        self._settle(reservation, sample.cost_usd, produced=produced)
        self._emit(sample, Finish(result.stop_reason, error=result.error))

    def _settle(self, reservation: str | None, cost: Decimal | None, *, produced: bool) -> None:
        """Settle at the actual cost; a call that never reached the provider settles at $0."""
        if reservation is None or self.ledger is None:
            return
        self.ledger.settle(reservation, cost if produced else Decimal(0))
