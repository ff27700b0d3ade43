"""What every page's callbacks share: the store, the access gate, the sweep runner and one
background loop on which benchmark runs and benchmark sweeps started from a page are hosted
(they go on when the tab closes; pages read their progress from the store)."""

from __future__ import annotations

from dataclasses import dataclass

from sweepbench.engine.supervisor import Supervisor
from sweepbench.store import Store
from sweepbench.sweeps.live import SweepRunner
from sweepbench.web.gate import Gate


@dataclass(frozen=True)
class WebContext:
    """One app's shared parts (nothing global: tests run several apps side by side)."""

    store: Store
    gate: Gate
    runner: SweepRunner
    """Single-prompt sweeps (the Sweep and History pages)."""
    supervisor: Supervisor
    """The background loop of benchmark runs and benchmark sweeps started from a page."""

    def close(self, timeout: float = 5.0) -> None:
        """Stop hosting: the sweep runner and the benchmark loop."""
        self.runner.close(timeout)
        self.supervisor.close(timeout)
