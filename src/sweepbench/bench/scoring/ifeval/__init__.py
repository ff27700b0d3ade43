"""IFEval instruction-following checks (strict and loose), fully offline.

Public API: :data:`INSTRUCTION_IDS`, :func:`check_instructions` (-> :class:`IFEvalResult`) and
:func:`score_ifeval` (-> :class:`~sweepbench.bench.scoring.base.Score`)."""

from sweepbench.bench.scoring.ifeval.checker import (
    IFEvalResult,
    build_checks,
    check_instructions,
    loose_variants,
    score_ifeval,
)
from sweepbench.bench.scoring.ifeval.instructions import INSTRUCTION_IDS

__all__ = [
    "INSTRUCTION_IDS",
    "IFEvalResult",
    "build_checks",
    "check_instructions",
    "loose_variants",
    "score_ifeval",
]
