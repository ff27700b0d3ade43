"""The engine: the one way a model call is made (limits → ledger hold → recorded, scrubbed,
timed-out stream → settle → retry), its recorders and money strategies, and the supervisor
that hosts runs in the background.

Each name below is imported from its module on first use (PEP 562): importing a small module
of the engine (``engine.retry``) does not load the executor, the store and the SDKs."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sweepbench.lazy import lazy_exports

if TYPE_CHECKING:
    from sweepbench.engine.call import Call
    from sweepbench.engine.executor import CallOutcome, CallSpec, Executor
    from sweepbench.engine.holds import AdmittedHolds, LeaseHolds, PerCallHolds
    from sweepbench.engine.ratelimit import RateLimits
    from sweepbench.engine.recorder import BatchedRecorder, ImmediateRecorder
    from sweepbench.engine.retry import RetryPolicy

_EXPORTS: dict[str, str] = {
    "Call": "sweepbench.engine.call",
    "CallOutcome": "sweepbench.engine.executor",
    "CallSpec": "sweepbench.engine.executor",
    "Executor": "sweepbench.engine.executor",
    "AdmittedHolds": "sweepbench.engine.holds",
    "LeaseHolds": "sweepbench.engine.holds",
    "PerCallHolds": "sweepbench.engine.holds",
    "RateLimits": "sweepbench.engine.ratelimit",
    "BatchedRecorder": "sweepbench.engine.recorder",
    "ImmediateRecorder": "sweepbench.engine.recorder",
    "RetryPolicy": "sweepbench.engine.retry",
}

__all__ = [
    "AdmittedHolds",
    "BatchedRecorder",
    "Call",
    "CallOutcome",
    "CallSpec",
    "Executor",
    "ImmediateRecorder",
    "LeaseHolds",
    "PerCallHolds",
    "RateLimits",
    "RetryPolicy",
]


if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
