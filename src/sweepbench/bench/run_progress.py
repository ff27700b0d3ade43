"""What a benchmark run reports: its live counters while a session runs, and how a session
ended (:class:`~sweepbench.bench.run.BenchRunner` makes both)."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal


@dataclass
class Progress:
    """Live counters of a run (read by the CLI's progress bar)."""

    run_id: str
    total: int
    """Items this session will try."""
    scored: int = 0
    failed: int = 0
    spent: Decimal = Decimal(0)
    """Spent by the whole run (earlier sessions included)."""
    limit: Decimal | None = None
    resumed: bool = False

    @property
    def done(self) -> int:
        """Items finished this session, scored or failed."""
        return self.scored + self.failed


@dataclass(frozen=True)
class RunOutcome:
    """How a session of a run ended."""

    run_id: str
    status: str
    """``completed``, ``completed_with_errors``, ``paused_budget`` or ``interrupted``."""
    reason: str | None
    scored: int
    """Items scored in the whole run."""
    errors: int
    """Items whose latest attempt failed (they can be retried)."""
    spent: Decimal
    spent_by_role: dict[str, Decimal]
    session_scored: int
    session_failed: int
    wall_s: float
    resumed: bool
