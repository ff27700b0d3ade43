"""The engine: the one way a model call is made (limits → ledger hold → recorded, scrubbed,
timed-out stream → settle → retry), its recorders and money strategies, and the supervisor
that hosts runs in the background.

Each name below is imported from its module on first use (PEP 562): importing a small module
of the engine (``engine.retry``) does not load the executor, the store and the SDKs."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

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


def _load(name: str) -> object:
    """A public name, imported on first use and then kept in the package's namespace."""
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_EXPORTS[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})


if not TYPE_CHECKING:
    __getattr__ = _load
