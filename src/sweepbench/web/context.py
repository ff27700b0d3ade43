"""What every page's callbacks share: the store, the access gate, the sweep runner, one
background loop on which benchmark runs and benchmark sweeps started from a page are hosted
(they go on when the tab closes; pages read their progress from the store), and what
benchmarks a visitor may run (:class:`~sweepbench.web.offer.BenchmarkOffer`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from sweepbench.engine.supervisor import Supervisor
from sweepbench.store import Store
from sweepbench.sweeps.live import SweepRunner
from sweepbench.web.gate import Gate
from sweepbench.web.offer import BenchmarkOffer


@dataclass(frozen=True)
class WebContext:
    """One app's shared parts (nothing global: tests run several apps side by side)."""

    store: Store
    gate: Gate
    runner: SweepRunner
    """Single-prompt sweeps (the Sweep and History pages)."""
    supervisor: Supervisor
    """The background loop of benchmark runs and benchmark sweeps started from a page."""
    benchmarks: BenchmarkOffer = field(default_factory=BenchmarkOffer)
    """What a visitor may run: the built-in benchmarks and the YAML declarations (and ELBench
    data) in the operator's benchmark folders; every page loads a benchmark through it."""
    closers: list[Callable[[float], None]] = field(default_factory=list)
    """What :meth:`close` calls first, each with the seconds it may take: the hosts of runs
    on :attr:`supervisor` stop them (answers kept) and wait for them to settle."""

    def on_close(self, stop_and_wait: Callable[[float], None]) -> None:
        """Have :meth:`close` call ``stop_and_wait(timeout)`` before the loop ends."""
        self.closers.append(stop_and_wait)

    def close(self, timeout: float = 5.0) -> None:
        """Stop hosting: every run hosted on the benchmark loop is stopped (its finished answers
        kept, its leases settled) and waited for, then the sweep runner and the loop end."""
        for stop_and_wait in list(self.closers):
            stop_and_wait(timeout)
        self.runner.close(timeout)
        self.supervisor.close(timeout)
