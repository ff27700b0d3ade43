"""sweepbench: what do you give up by turning the knob down?

The public Python API. Models are named ``provider/model``; a call is a :class:`Request`;
:func:`resolve` gives the adapter, whose ``stream()`` yields typed events.
"""

from sweepbench.calls import Call
from sweepbench.errors import (
    BudgetExceeded,
    DataError,
    ErrorKind,
    ProviderError,
    SweepbenchError,
    UserError,
)
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
    collect,
    resolve,
)
from sweepbench.sweeps import asweep, estimate, sweep

__version__ = "0.1.0"

__all__ = [
    "BudgetExceeded",
    "Call",
    "DataError",
    "ErrorKind",
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
    "asweep",
    "collect",
    "estimate",
    "resolve",
    "sweep",
]
