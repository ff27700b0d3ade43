"""sweepbench: what do you give up by turning the knob down?

The public Python API. Models are named ``provider/model``; :func:`generate` asks one prompt
through the engine (priced and held in the ledger first, recorded as a ``calls`` row, scrubbed
of keys, settled), as ``sweepbench generate`` does; :func:`sweep`, :func:`estimate` and
:func:`bench_sweep` run settings side by side. Every call they make goes through the engine's
:class:`Executor`. (``sweepbench.models.resolve`` and ``sweepbench.models.collect`` reach an
adapter directly: unrecorded, no ledger, no limits; they are not part of this namespace.)

Importing the package is cheap: each public name is imported from its module the first time
it is used (PEP 562), so ``import sweepbench.errors`` does not load the store, the SDKs or
numpy. To add a public name: one line in ``_EXPORTS``, one in ``__all__`` and one import
under ``TYPE_CHECKING`` (for type checkers); ``tests/test_imports.py`` checks that the three
agree.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Unpack

    from sweepbench.bench.sweeps.api import abench_sweep, bench_sweep
    from sweepbench.bench.sweeps.result import BenchSweepResult
    from sweepbench.engine import Call, CallSpec, Executor
    from sweepbench.errors import (
        BudgetExceeded,
        DataError,
        ErrorKind,
        ProviderError,
        SweepbenchError,
        UserError,
    )
    from sweepbench.generation import agenerate, generate
    from sweepbench.models import (
        Finish,
        GenerateSettings,
        Message,
        ReasoningDelta,
        Request,
        Result,
        TextDelta,
        Usage,
        UsageEvent,
    )
    from sweepbench.sweeps import asweep, sweep
    from sweepbench.sweeps.plan import SweepSettings
    from sweepbench.sweeps.pricing import SweepEstimate

    __version__: str

    # Spelled out rather than imported: mypy analyses this package before sweepbench.sweeps
    # (each imports the other). tests/test_imports.py checks this against the function. (The
    # sweep pricing module is ``sweeps.pricing``, not ``sweeps.estimate``: imported lazily, a
    # submodule of that name would replace the package's ``estimate`` function.)
    def estimate(
        prompt: str, axis: str, values: Sequence[str | int], **settings: Unpack[SweepSettings]
    ) -> SweepEstimate: ...


_EXPORTS: dict[str, str] = {
    # public name → the module it is imported from on first use
    "BenchSweepResult": "sweepbench.bench.sweeps.result",
    "abench_sweep": "sweepbench.bench.sweeps.api",
    "bench_sweep": "sweepbench.bench.sweeps.api",
    "Call": "sweepbench.engine",
    "CallSpec": "sweepbench.engine",
    "Executor": "sweepbench.engine",
    "BudgetExceeded": "sweepbench.errors",
    "DataError": "sweepbench.errors",
    "ErrorKind": "sweepbench.errors",
    "ProviderError": "sweepbench.errors",
    "SweepbenchError": "sweepbench.errors",
    "UserError": "sweepbench.errors",
    "agenerate": "sweepbench.generation",
    "generate": "sweepbench.generation",
    "Finish": "sweepbench.models",
    "GenerateSettings": "sweepbench.models",
    "Message": "sweepbench.models",
    "ReasoningDelta": "sweepbench.models",
    "Request": "sweepbench.models",
    "Result": "sweepbench.models",
    "TextDelta": "sweepbench.models",
    "Usage": "sweepbench.models",
    "UsageEvent": "sweepbench.models",
    "asweep": "sweepbench.sweeps",
    "estimate": "sweepbench.sweeps",
    "sweep": "sweepbench.sweeps",
}

__all__ = [
    "BenchSweepResult",
    "BudgetExceeded",
    "Call",
    "CallSpec",
    "DataError",
    "ErrorKind",
    "Executor",
    "Finish",
    "GenerateSettings",
    "Message",
    "ProviderError",
    "ReasoningDelta",
    "Request",
    "Result",
    "SweepbenchError",
    "TextDelta",
    "Usage",
    "UsageEvent",
    "UserError",
    "abench_sweep",
    "agenerate",
    "asweep",
    "bench_sweep",
    "estimate",
    "generate",
    "sweep",
]


def _installed_version() -> str:
    """The installed distribution's version; ``0+unknown`` when running from a bare checkout."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("sweepbench")
    except PackageNotFoundError:
        return "0+unknown"


def _load(name: str) -> object:
    """A public name, imported on first use and then kept in the module's namespace."""
    if name == "__version__":
        value: object = _installed_version()
    elif name in _EXPORTS:
        value = getattr(importlib.import_module(_EXPORTS[name]), name)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS, "__version__"})


if not TYPE_CHECKING:
    # Hidden from type checkers, which would otherwise accept any attribute of the package;
    # they see the imports above instead.
    __getattr__ = _load
