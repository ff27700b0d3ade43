"""A session of a benchmark run in the store: at its start the run's row recorded (a new run, one
continued, or a shared one joined) and its limits set in the ledger; at its end the run's status,
spend, wall time and record, and the session's :class:`~.run_progress.RunOutcome`.

:class:`SessionRecording` is a part of :class:`~sweepbench.bench.run.BenchRunner`, which holds
the state it reads.
"""

from __future__ import annotations

import logging
from datetime import datetime
from decimal import Decimal
from typing import Any

from sweepbench.bench.plan import BenchPlan
from sweepbench.bench.record import dump_record
from sweepbench.bench.record_build import build_record
from sweepbench.bench.report import catalogue_json, session_report
from sweepbench.bench.resume import PreparedRun
from sweepbench.bench.run_liveness import this_worker
from sweepbench.bench.run_progress import Progress, RunOutcome
from sweepbench.bench.storage import BenchStore
from sweepbench.bench.storage_rows import RunRow
from sweepbench.engine import Executor
from sweepbench.money.ledger import Ledger
from sweepbench.roles import BENCH_ROLES
from sweepbench.store import Store

log = logging.getLogger(__name__)


class SessionRecording:
    """How the runner records a session's start and end."""

    plan: BenchPlan
    prepared: PreparedRun
    store: Store
    runs: BenchStore
    ledger: Ledger
    executor: Executor
    run_id: str
    progress: Progress
    concurrency: int
    sweep_id: str | None
    shared: bool
    _joining: bool
    _created: datetime
    _claimed: bool
    _spent: dict[str, Decimal]
    _stop_status: tuple[str, str] | None

    def _record_start(self) -> None:
        plan = self.plan
        settings = {
            "config": plan.config.as_json(),
            "selection": {
                "preset": plan.selection.preset, "scope": plan.selection.scope,
                "areas": list(plan.selection.areas), "tasks": list(plan.selection.tasks),
            },
            "limits": plan.limits.as_json(),
            "concurrency": self.concurrency,
            "benchmark_name": plan.benchmark.name,
            "benchmark_source": plan.benchmark.source,
            "allow_data_outside": plan.benchmark.data_outside,
            "selected": plan.selected,
            "catalogue": catalogue_json(plan.benchmark),
            "worker": this_worker(),
        }  # fmt: skip
        if plan.routes:  # which host answers each OpenRouter model (bench show, the bundle)
            settings["hosts"] = plan.hosts_json()
        request = self.prepared.request
        if request is not None:  # asked again from here: bench.request.request_from_run
            settings["request"] = request.stored()
        if self.sweep_id is not None:
            settings["sweep"] = self.sweep_id
        if self.shared:
            settings["claims"] = True
        if self._joining:
            self.runs.join_run(self.run_id)
        elif self.prepared.previous is None:
            self.run_id = self.runs.start_run(
                RunRow(
                    id=self.run_id,
                    config_hash=plan.config.hash,
                    benchmark=plan.benchmark.id,
                    model=plan.config.model,
                    judge=plan.config.judge,
                    status="running",
                    reason=None,
                    created_at=self._created,
                    updated_at=self._created,
                    items=plan.selected,
                    settings=settings,
                )
            )
        else:
            shared: dict[str, Any] = {"claims": True, "joined": []} if self.shared else {}
            if "request" in settings:  # this session's (a limit may have been raised)
                shared["request"] = settings["request"]
            self.runs.claim_run(
                self.run_id, limits=settings["limits"], concurrency=self.concurrency,
                worker=settings["worker"],
                benchmark_source=settings["benchmark_source"],  # the data may have moved
                **shared,
            )  # fmt: skip
        self._claimed = True
        self.progress.run_id = self.run_id
        # the run's limits live in the ledger, so every process spending for it is held to them
        limits = plan.limits
        roles: dict[str, Decimal] = {
            r: usd for r in BENCH_ROLES if (usd := limits.for_role(r)) is not None
        }
        self.ledger.set_limits(self.run_id, limits.total, roles)

    def _finish(self, wall_s: float) -> RunOutcome:
        if self.shared and not self.runs.leave_run(self.run_id):
            return self._still_shared(wall_s)  # other workers go on: the last one ends the run
        counts = self.runs.counts(self.run_id)  # one grouped count, not every key
        scored = counts.get("scored", 0)
        errors = sum(counts.values()) - scored
        unasked = self.plan.selected - scored - errors
        if self._stop_status is not None:
            status, reason = self._stop_status
        elif unasked > 0:  # --retry-failed retried the errors; these were never asked
            status = "interrupted"
            reason = f"{unasked} item(s) not asked yet: run without --retry-failed to answer them"
        elif errors:
            status, reason = "completed_with_errors", f"{errors} item(s) hit errors"
        else:
            status, reason = "completed", None
        spent = dict(self._spent)
        if self.shared:  # every worker's answers, and what the dead ones held is settled now
            self.ledger.reap_dead()
            spent = {**spent, **self.runs.spent(self.run_id)}
        stored = self.runs.run(self.run_id)
        before = float(stored.settings.get("wall_s", 0.0)) if stored is not None else 0.0
        self.runs.set_status(
            self.run_id, status, reason, spent=_money_json(spent), wall_s=round(before + wall_s, 3)
        )  # the wall time of every session that ended (one killed outright is not counted)
        self._write_record()
        return RunOutcome(
            run_id=self.run_id,
            status=status,
            reason=reason,
            scored=scored,
            errors=errors,
            spent=sum(spent.values(), Decimal(0)),
            spent_by_role=spent,
            session_scored=self.progress.scored,
            session_failed=self.progress.failed,
            wall_s=wall_s,
            resumed=self.prepared.previous is not None,
        )

    def _still_shared(self, wall_s: float) -> RunOutcome:
        """This worker's session of a shared run, ended while other workers go on."""
        counts = self.runs.counts(self.run_id)
        scored = counts.get("scored", 0)
        spent = dict(self._spent)
        return RunOutcome(
            run_id=self.run_id,
            status="running",
            reason="this worker is done; the run goes on in its other workers",
            scored=scored,
            errors=sum(counts.values()) - scored,
            spent=sum(spent.values(), Decimal(0)),
            spent_by_role=spent,
            session_scored=self.progress.scored,
            session_failed=self.progress.failed,
            wall_s=wall_s,
            resumed=self.prepared.previous is not None,
        )

    def _write_record(self) -> None:
        """Store the run's record (scores with intervals, coverage, spend by role, prices), so
        nothing later recomputes every answer's bootstrap to show it. A record that cannot be
        built is logged, never a failed run: the answers are what counts."""
        try:
            prices = self.executor.prices()
            report = session_report(self.store, self.run_id, self.plan.benchmark)
            record = build_record(report, self.plan, prices=prices)
            self.runs.set_record(self.run_id, dump_record(record))
        except Exception:
            log.exception("could not write the record of run %s", self.run_id)


def _money_json(spent: dict[str, Decimal]) -> dict[str, str]:
    return {role: str(usd) for role, usd in spent.items()}
