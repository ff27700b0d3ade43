"""What the store keeps, as pydantic models: written by callers, read back by everyone.

These mirror the adapters' vocabulary (stop reasons, usage fields) without importing it: the
store is the lowest layer.
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Any, Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, Field

from sweepbench.roles import Role

StopReason = Literal["end", "max_tokens", "refusal", "error", "cancelled"]
"""Why a call ended, normalised across providers."""

CallRole = Role
"""What a call was for (the shared vocabulary of :mod:`sweepbench.roles`)."""

EventKind = Literal["text", "reasoning", "usage", "finish"]
"""The kinds of stream events the store keeps."""


class _Record(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)


class CallStart(_Record):
    """A call about to be made: written before any traffic, so a crash leaves a trace."""

    model: str
    """The full ``provider/name`` id."""
    provider: str
    """The provider part of the id (``anthropic``, ``openrouter``, ``scripted``, …)."""
    role: CallRole = "generate"
    """What the call is for."""
    run_id: str | None = None
    """The sweep or benchmark run this call belongs to, if any."""
    item_key: str | None = None
    """The benchmark item (or sweep sample) the call was made for."""
    request: dict[str, Any] = Field(default_factory=dict)
    """The messages and settings as sent (JSON-serialisable, scrubbed)."""


class _Outcome(_Record):
    """What a finished call produced and cost (shared by CallEnd and CallRecord)."""

    text: str = ""
    """The answer."""
    reasoning: str = ""
    """Visible reasoning, where the provider streams it."""
    error: str | None = None
    """The error message when ``stop_reason`` is ``error``."""
    error_kind: str | None = None
    """An ``ErrorKind`` value: whether retrying can help."""
    provider_reason: str | None = None
    """The provider's own word for why it stopped (``end_turn``, ``length``, …)."""
    input_tokens: int = Field(default=0, ge=0)
    output_tokens: int = Field(default=0, ge=0)
    """Output tokens including reasoning tokens (that is how they bill)."""
    reasoning_tokens: int = Field(default=0, ge=0)
    cache_read_tokens: int = Field(default=0, ge=0)
    cache_write_tokens: int = Field(default=0, ge=0)
    cost_usd: Decimal | None = None
    """What the call cost in US dollars; None means no price on file."""
    price_source: str | None = None
    """Where the price came from (provider-reported, price table and date, …)."""
    ttft_s: float | None = Field(default=None, ge=0)
    """Seconds to the first text or reasoning token."""
    wall_s: float | None = Field(default=None, ge=0)
    """Seconds from start to finish."""


class CallEnd(_Outcome):
    """How a call ended. Failures are data: an error is ``stop_reason="error"`` plus ``error``."""

    stop_reason: StopReason


class CallRecord(_Outcome):
    """A stored call, as read back (``finished_at`` and ``stop_reason`` are None while running)."""

    id: str
    """32 hex digits (uuid4)."""
    created_at: datetime
    """When the call started (UTC)."""
    finished_at: datetime | None = None
    """When it finished (UTC); None while running, or if the process died mid-call."""
    model: str
    provider: str
    role: CallRole = "generate"
    run_id: str | None = None
    item_key: str | None = None
    attempt: int = 1
    """Which try of the same call this was (retries are calls too)."""
    request: dict[str, Any] = Field(default_factory=dict)
    stop_reason: StopReason | None = None

    @property
    def finished(self) -> bool:
        """True once the call has ended (in any way)."""
        return self.finished_at is not None


class EventRecord(_Record):
    """One event of a call's stream."""

    seq: int = Field(ge=0)
    """Position in the stream, unique per call."""
    kind: EventKind
    data: str | dict[str, Any]
    """A text delta as a string, or a JSON object (usage, finish)."""
    t_s: float = Field(ge=0)
    """Seconds since the call started."""


class CallTiming(NamedTuple):
    """How long one finished call took (what a time estimate learns from)."""

    ttft_s: float
    """Seconds to the first text or reasoning token."""
    wall_s: float
    """Seconds from the stream's start to its end."""
    output_tokens: int
