"""Artifact kinds: what a sweep cell produces and the numbers that describe it.

Light to import: the interface (:mod:`~sweepbench.artifacts.base`) and the map from a kind's
name to the kind (:mod:`~sweepbench.artifacts.registry`), which imports a kind's module
(parsers, renderers, numpy for sculptures) only when that kind is looked up.
"""

from sweepbench.artifacts.base import (
    ArtifactKind,
    ArtifactOutcome,
    PageFacts,
    StreamParser,
    SweepDefaults,
)
from sweepbench.artifacts.registry import get_kind, kinds, page_facts, register

artifact_kind = get_kind
"""The older name of :func:`get_kind` (``sweeps.plan`` and the web pages use it)."""

__all__ = [
    "ArtifactKind",
    "ArtifactOutcome",
    "PageFacts",
    "StreamParser",
    "SweepDefaults",
    "artifact_kind",
    "get_kind",
    "kinds",
    "page_facts",
    "register",
]
