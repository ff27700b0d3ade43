"""Run a planned benchmark sweep: every setting's run at once, under shared limits.

Each setting is an ordinary :class:`~sweepbench.bench.run.BenchRunner` (its answers stored as
they finish, resumable on its own). The runners share one set of per-provider and per-model
concurrency and rate limits (:class:`~sweepbench.engine.limits.CallLimits`), so ten settings
on one provider make no more calls at once than one run would. ``stop()`` stops them all,
keeping every finished answer; running the same sweep again continues every setting.
:func:`request_sweep_stop` does the same from any process that reaches the store (``sweepbench
bench sweeps stop``): each setting's runner sees the stop request recorded for its run.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from sweepbench.bench.run import BenchRunner
from sweepbench.bench.run_progress import Progress as RunProgress
from sweepbench.bench.run_progress import RunOutcome
from sweepbench.bench.storage import STOP_VIA_CLI, BenchStore
from sweepbench.bench.storage_rows import RunRow
from sweepbench.bench.sweeps.plan import BenchSweepPlan
from sweepbench.bench.sweeps.store import SweepRow, SweepSettingRow, SweepStore
from sweepbench.engine.limits import CallLimits
from sweepbench.engine.ratelimit import RateLimits
from sweepbench.engine.retry import RetryPolicy
from sweepbench.errors import UserError
from sweepbench.models.routes import DEFAULT_ROUTE
from sweepbench.store import Store


@dataclass(frozen=True)
class SweepOutcome:
    """How a session of a sweep ended, setting by setting."""

    sweep_id: str
    outcomes: tuple[RunOutcome | None, ...]
    """Each setting's session (None: it had nothing left to run)."""

    @property
    def status(self) -> str:
        """``completed`` when every setting's run completed, else the first other status
        (``paused_budget``, ``interrupted``, ``completed_with_errors``)."""
        for outcome in self.outcomes:
            if outcome is not None and outcome.status != "completed":
                return outcome.status
        return "completed"


def new_sweep_id(plan: BenchSweepPlan, started: datetime) -> str:
    """``sweep-<benchmark>-<YYYYMMDD-HHMMSS>-<first 8 hex of the sweep hash>``."""
    slug = "".join(c if c.isalnum() or c in "._-" else "_" for c in plan.benchmark.id)[:60]
    return f"sweep-{slug}-{started.strftime('%Y%m%d-%H%M%S')}-{plan.sweep_hash[:8]}"


class BenchSweepRunner:
    """Runs one session of a planned sweep. ``await runner.run()`` returns the outcome;
    ``runner.stop()`` ends every setting early, keeping their answers."""

    def __init__(
        self,
        plan: BenchSweepPlan,
        store: Store,
        *,
        concurrency: int = 8,
        accept_unpriced: bool = False,
        rate_limits: RateLimits | None = None,
        retry: RetryPolicy | None = None,
        seed: int | None = None,
    ) -> None:
        if not plan.ok:
            raise UserError(
                "This sweep can't start yet: "
                + "; ".join((*plan.errors, *plan.blocked, *plan.limit_problems))
            )
        self.plan = plan
        self.store = store
        self.sweeps = SweepStore(store)
        started = datetime.now(UTC)
        previous = plan.previous
        self.sweep_id = previous.id if previous is not None else new_sweep_id(plan, started)
        self._created = previous.created_at if previous is not None else started
        self.limits = CallLimits(concurrency, rate_limits)
        self.runners: list[BenchRunner | None] = []
        for setting in plan.settings:
            if not setting.prepared.plan.items:
                self.runners.append(None)  # its run scored every item already
                continue
            asked = setting.prepared.request
            self.runners.append(
                BenchRunner(
                    setting.prepared, store, concurrency=concurrency, retry=retry,
                    accept_unpriced=accept_unpriced, seed=seed, call_limits=self.limits,
                    sweep_id=self.sweep_id,
                    route=asked.route if asked is not None else DEFAULT_ROUTE,
                )
            )  # fmt: skip
        self._stopped = False

    @property
    def progress(self) -> list[RunProgress | None]:
        """Each setting's live counters (None: nothing left to run)."""
        return [None if r is None else r.progress for r in self.runners]

    def on_progress(self, callback: Callable[[int, RunProgress], None]) -> None:
        """Call ``callback(setting index, progress)`` whenever a setting's counters move."""
        for index, runner in enumerate(self.runners):
            if runner is not None:
                runner.on_progress = lambda p, i=index: callback(i, p)

    def stop(self, reason: str = "stopped early by you") -> None:
        """Stop every setting: no new calls, calls in flight cancelled, answers kept."""
        self._stopped = True
        for runner in self.runners:
            if runner is not None:
                runner.stop(reason)

    def row(self) -> SweepRow:
        """The sweep as stored: its settings and the run of each (as far as known)."""
        plan = self.plan
        settings = []
        for setting, runner in zip(plan.settings, self.runners, strict=True):
            previous = setting.prepared.previous
            run_id = runner.run_id if runner is not None else previous.id if previous else None
            config = setting.prepared.plan.config
            settings.append(
                SweepSettingRow(
                    label=setting.label, value=setting.value, config_hash=config.hash,
                    run_id=run_id, model=config.model, effort=config.effort,
                    max_tokens=config.max_tokens,
                    prompt_version=setting.request.prompt_version or plan.benchmark.prompt_version,
                )
            )  # fmt: skip
        request = plan.request.model_dump(mode="json", exclude={"confirmed"})
        return SweepRow(
            id=self.sweep_id, sweep_hash=plan.sweep_hash, benchmark=plan.benchmark.id,
            axis=plan.axis, created_at=self._created, updated_at=datetime.now(UTC),
            held=dict(plan.held), settings=tuple(settings), request=request,
        )  # fmt: skip

    async def run(self) -> SweepOutcome:
        """Run every setting with items left, at once; store the sweep before the first call
        and again at the end (with the run ids the settings ended with)."""
        self.sweeps.save(self.row())
        active = [r for r in self.runners if r is not None]
        results = await asyncio.gather(*(r.run() for r in active), return_exceptions=True)
        self.sweeps.save(self.row())
        errors = [r for r in results if isinstance(r, BaseException)]
        if errors:
            raise errors[0]
        finished = iter(results)
        outcomes = tuple(None if r is None else next(finished) for r in self.runners)
        return SweepOutcome(self.sweep_id, outcomes)  # type: ignore[arg-type]


def request_sweep_stop(
    store: Store, sweep_id: str, *, via: str = STOP_VIA_CLI
) -> list[tuple[RunRow, bool]] | None:
    """Record a stop request for every setting's run of a sweep (see
    :meth:`BenchStore.request_stop`), wherever it runs. Returns each started setting's run with
    whether the request was recorded (False: that run is not running); None for an unknown
    sweep id."""
    sweeps = SweepStore(store)
    sweep = sweeps.get(sweep_id)
    if sweep is None:
        return None
    runs = BenchStore(store)
    asked: list[tuple[RunRow, bool]] = []
    for run in sweeps.runs(sweep):
        if run is not None and (result := runs.request_stop(run.id, via=via)) is not None:
            asked.append(result)
    return asked
