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

With a judge (``plan.judge``), each sample is graded as soon as it finishes, while the other
cells go on: one more engine call (role ``judge``), admitted with the sweep at its worst case
(``sweeps/judge.py``). A judge that fails or answers no usable verdict is stored as such, and
the cell's output is kept.
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
from sweepbench.sweeps.history import save_sweep
from sweepbench.sweeps.plan import Plan, PlannedCall
from sweepbench.sweeps.pricing import estimate_plan
from sweepbench.sweeps.results import Sample, Spread, Status, SweepEvent, SweepResult
from sweepbench.sweeps.timing import calls_at_once, queue_of, slots

__all__ = [
    "MAX_RUN_SECONDS", "Sample", "Spread", "Status", "Sweep", "SweepEvent", "SweepResult",
]  # fmt: skip

MAX_RUN_SECONDS = INTERACTIVE_TIMEOUT_S


def _key(planned: PlannedCall) -> str:
    return f"{planned.cell.index}:{planned.repeat}"


def _judge_key(planned: PlannedCall) -> str:
    return f"judge:{planned.cell.index}:{planned.repeat}"


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
        judge_limit_usd: Decimal | None = None,
    ) -> None:
        self.plan = plan
        self.store = store
        self.ledger = ledger if ledger is not None else Ledger(store)
        self.run_limit_usd = run_limit_usd
        self.judge_limit_usd = judge_limit_usd
        """The most the grading may spend (the ledger's ``run:<id>:role:judge`` scope)."""
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
        self._unsaved = False
        self._writer: asyncio.Task[None] | None = None

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
        grading: list[Charge] = []
        for priced in self.estimate.cells:  # cell order = call order (cell, then repeat)
            call = priced.call
            hold = Decimal(0) if call.free else call.hold or Decimal(0)
            charge = Charge(model=priced.cell.model, ceiling_usd=hold, role="sweep", free=hold == 0)
            charges += [charge] * self.plan.repeats
            if priced.judge is not None:  # the grade of each sample, at its worst case
                judged = priced.judge
                worst = Decimal(0) if judged.free else judged.hold or Decimal(0)
                grade = Charge(model=judged.model, ceiling_usd=worst, role="judge", free=worst == 0)
                grading += [grade] * self.plan.repeats
        limits = {"judge": self.judge_limit_usd} if self.judge_limit_usd is not None else None
        admitted = self.ledger.admit(
            self.id, charges + grading, run_limit_usd=self.run_limit_usd, role_limits_usd=limits
        )
        keys = [_key(planned) for planned in self.calls]
        if grading:
            keys += [_judge_key(planned) for planned in self.calls]
        self._reservations = dict(zip(keys, admitted, strict=True))

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
            route=self.plan.route,
        )
        gates: dict[str, asyncio.Semaphore] = {}

        async def one(index: int) -> None:
            sample, planned = self.samples[index], self.calls[index]
            model = planned.cell.model
            gate = gates.setdefault(queue_of(model), asyncio.Semaphore(slots(model, width)))
            async with gate:  # queued (and shown so) until its provider has a free slot
                if self.stopping:
                    self._never_started(sample, reservations.pop(_key(planned), None))
                    self._not_graded(sample, planned, reservations, "stopped before it ran")
                    return
                await self._run_sample(index, planned, executor)
            judge = self.plan.judge
            if judge is not None:  # outside the cell's gate: the next sample may start
                queue = queue_of(judge.model)  # a local judge waits its turn like a cell
                judge_gate = gates.setdefault(queue, asyncio.Semaphore(slots(judge.model, width)))
                async with judge_gate:
                    await self._grade(index, planned, executor, reservations)
            self._save_soon()  # each cell is stored as it finishes

        try:
            await asyncio.gather(*(one(i) for i in range(len(self.calls))))
        finally:
            self._unsaved = False  # the last write below stores every cell
            writer = self._writer
            if writer is not None:  # a failed write is raised once the sweep is closed
                await asyncio.gather(writer, return_exceptions=True)
            for rid in reservations.values():  # calls that never started hold nothing more
                if rid is not None:
                    self.ledger.release(rid)
            await executor.aclose()
            result.wall_s = time.perf_counter() - started
            result.stopped = any(s.status == "stopped" for s in self.samples)
            if self.plan.judge is not None:
                result.comparison = _compared(result)
            save_sweep(self.store, result)
            failed = _failure(writer)
            if failed is not None:
                raise failed
        return result

    def _save_soon(self) -> None:
        """Store the sweep's document within a turn or two of the event loop: the cells that
        finish together (twelve calls of the same length end within milliseconds) are stored
        by one write instead of one each, every write carrying every sample."""
        self._unsaved = True
        writer = self._writer
        if writer is None or (writer.done() and _failure(writer) is None):
            self._writer = asyncio.create_task(self._write())

    async def _write(self) -> None:
        await asyncio.sleep(0)  # let the cells finishing in this turn join the write
        if self._unsaved:
            self._unsaved = False
            save_sweep(self.store, self.result)

    def _not_graded(
        self,
        sample: Sample,
        planned: PlannedCall,
        reservations: dict[str, str | None],
        reason: str,
    ) -> None:
        """The sample is not graded: its grade says why, and its judge hold is released."""
        if self.plan.judge is None:
            return
        from sweepbench.sweeps.judge import Grade

        reservation = reservations.pop(_judge_key(planned), None)
        if reservation is not None:
            self.ledger.release(reservation)
        sample.grade = Grade("not_run", reason=reason)

    async def _grade(
        self,
        index: int,
        planned: PlannedCall,
        executor: Executor,
        reservations: dict[str, str | None],
    ) -> None:
        """Grade one finished sample with the judge (one engine call, role ``judge``)."""
        from sweepbench.sweeps.judge import (
            Grade,
            answer_allowance,
            cut_answer,
            judge_request,
            read_grade,
        )

        judge, sample = self.plan.judge, self.samples[index]
        assert judge is not None
        if self.stopping:
            self._not_graded(sample, planned, reservations, "stopped before the judge ran")
            return
        if sample.status != "done" or sample.result is None:
            self._not_graded(sample, planned, reservations, f"no answer to grade ({sample.status})")
            return
        answer, cut = cut_answer(sample.result.text, answer_allowance(planned.cell))
        request = judge_request(judge, self.plan.kind_name, self.plan.prompt, answer)
        call = Call(executor, CallSpec(request, "judge", run_id=self.id, key=_judge_key(planned)))
        slot = len(self.samples) + index  # Stop all closes the judge's stream too
        self._live[slot] = call
        try:
            reply = await call.run()
        except Exception as exc:  # a refused retry, bad settings: this grade fails, not the cell
            grade = Grade("failed", reason=str(exc) or type(exc).__name__)
        else:
            if reply.stop_reason == "cancelled":
                grade = Grade("not_run", reason="stopped while the judge was grading")
            elif reply.stop_reason == "error" or reply.error is not None:
                grade = Grade("failed", reason=f"the judge failed: {reply.error or 'error'}")
            else:
                grade = read_grade(judge, reply.text)
        finally:
            self._live.pop(slot, None)
        reservation = reservations.pop(_judge_key(planned), None)
        if reservation is not None:  # the call never took its hold (it failed its check)
            self.ledger.release(reservation)
        grade.cost_usd, grade.call_id, grade.cut = call.cost_usd, call.call_id, cut
        if cut:
            grade.reason = (
                f"{grade.reason} (the judge saw the first {answer_allowance(planned.cell):,} "
                "bytes of the answer)"
            ).strip()
        sample.grade = grade
        self._emit(sample)

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


def _failure(task: asyncio.Task[None] | None) -> BaseException | None:
    """What a finished task raised (None: still running, cancelled or no failure)."""
    if task is None or not task.done() or task.cancelled():
        return None
    return task.exception()


def _compared(result: SweepResult) -> dict[str, object] | None:
    """The paired comparison of the cells' grades; a failure to compare is said, never
    raised over the sweep's own ending."""
    from sweepbench.sweeps.judge import compare_cells

    try:
        return compare_cells(result)
    except Exception as exc:  # the sweep's results stand without it
        return {"error": f"the cells could not be compared: {exc}"}


def _status(stop_reason: str) -> Status:
    if stop_reason == "cancelled":
        return "stopped"
    if stop_reason == "error":
        return "failed"
    return "done"
