"""What a sweep produces: each sample's state and outcome, the events subscribers receive, the
spread over repeats and the sweep's result. Plain values, shared by the runner, the stored
history and the surfaces (kept apart from the runner so that history need not import it)."""

from __future__ import annotations

import statistics
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Literal

from sweepbench.artifacts import ArtifactOutcome
from sweepbench.axes.cells import Cell
from sweepbench.models.base import Event, Result
from sweepbench.sweeps.plan import Plan
from sweepbench.sweeps.pricing import SweepEstimate

if TYPE_CHECKING:
    from sweepbench.sweeps.judge import Grade

Status = Literal["queued", "running", "done", "failed", "stopped", "interrupted"]
"""A sample's state; ``interrupted``: its worker died before it finished."""


def cell_status(statuses: Iterable[str]) -> Status:
    """A cell's state from its samples' states: the one rule every surface shows.

    - **queued** while none of its samples has started (every one queued);
    - **running** while any is running, or is still queued after another ended: a cell with
      two samples done (or one failed) and one waiting for a free slot is under way, neither
      waiting to start nor finished, and its cost is not known yet;
    - **interrupted** if any was (its worker died before it finished);
    - **stopped** if any was stopped: only Stop all stops a sample, and a sample still queued
      then never starts (it is marked stopped when its turn comes);
    - else **failed** if any failed, else **done**."""
    states = set(statuses)
    if states == {"queued"}:
        return "queued"
    if "running" in states:
        return "running"
    ended: tuple[Status, ...] = ("interrupted", "stopped")
    for state in ended:
        if state in states:
            return state
    if "queued" in states:
        return "running"
    return "failed" if "failed" in states else "done"


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
    grade: Grade | None = None
    """The judge's grade of the output, when the sweep has a judge (None until graded)."""

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
    worker: str | None = None
    """The process running the sweep (a dead one's sweep is shown as interrupted)."""
    comparison: dict[str, Any] | None = None
    """With a judge and repeats, once the sweep ends: every cell against the best, paired by
    repeat number (``sweeps.judge.compare_cells``)."""
    fixed_document: dict[str, Any] | None = field(default=None, repr=False, compare=False)
    """The parts of the stored document the run does not change (notes, variants, estimate,
    prices used), built at the first write (``history.sweep_document``)."""

    @property
    def serial_s(self) -> float:
        """The serial equivalent: the sum of every call's time."""
        return sum(s.seconds for s in self.samples)

    @property
    def ran_at_once(self) -> bool:
        """Whether any two calls were in flight at the same moment. When none were (one
        sample, or local calls one after the other), the serial equivalent is just the wall
        clock, and saying "if run one at a time" would be wrong."""
        now = time.perf_counter()
        spans = sorted((s.started, s.ended or now) for s in self.samples if s.started is not None)
        latest = float("-inf")
        for start, end in spans:
            if start < latest:
                return True
            latest = max(latest, end)
        return False

    @property
    def cost_usd(self) -> Decimal | None:
        """Σ actual cost, grading included (None if any call had no price)."""
        costs = [s.cost_usd for s in self.samples if s.result is not None]
        costs += [s.grade.cost_usd for s in self.samples if s.grade and s.grade.call_id]
        if any(c is None for c in costs):
            return None
        return sum((c for c in costs if c is not None), Decimal(0))

    @property
    def judge_cost_usd(self) -> Decimal | None:
        """Σ actual cost of the grading (None if any grade had no price, or no judge)."""
        if self.plan.judge is None:
            return None
        costs = [s.grade.cost_usd for s in self.samples if s.grade and s.grade.call_id]
        if any(c is None for c in costs):
            return None
        return sum((c for c in costs if c is not None), Decimal(0))

    def cell_samples(self, index: int) -> list[Sample]:
        """The samples of one cell, in repeat order."""
        return [s for s in self.samples if s.cell.index == index]

    @property
    def ok(self) -> bool:
        """Every call finished normally (no failure, truncation or stop)."""
        return all(s.status == "done" and not s.truncated for s in self.samples)
