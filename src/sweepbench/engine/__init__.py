"""The engine: the one way a model call is made (limits → ledger hold → recorded, scrubbed,
timed-out stream → settle → retry), its recorders and money strategies, and the supervisor
that hosts runs in the background."""

from sweepbench.engine.call import Call
from sweepbench.engine.executor import CallOutcome, CallSpec, Executor
from sweepbench.engine.holds import AdmittedHolds, LeaseHolds, PerCallHolds
from sweepbench.engine.ratelimit import RateLimits
from sweepbench.engine.recorder import BatchedRecorder, ImmediateRecorder
from sweepbench.engine.retry import RetryPolicy

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
