"""What every scorer returns."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Score:
    """One graded answer.

    ``score`` is in [0, 1]; ``result`` is the verdict label (``pass``/``fail``, or a task's own
    labels such as ``guide``, ``safe``, ``unsafe``); ``passed`` says whether the label counts as a
    pass. ``metadata`` keeps what the scorer saw (the extracted letters, per-instruction IFEval
    results, …) so a surprising grade can be checked by a person."""

    score: float
    result: str
    passed: bool
    reason: str = ""
    metadata: Mapping[str, Any] = field(default_factory=dict)
    format_valid: bool = True
    """False when the answer did not follow the required format (no extractable answer)."""

    @classmethod
    def binary(cls, ok: bool, reason: str = "", **metadata: Any) -> Score:
        """1/pass or 0/fail."""
        return cls(1.0 if ok else 0.0, "pass" if ok else "fail", ok, reason, metadata)
