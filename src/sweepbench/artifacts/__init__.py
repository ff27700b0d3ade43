"""Artifact kinds: what a sweep cell produces and the numbers that describe it."""

from sweepbench.artifacts.base import (
    ArtifactKind,
    ArtifactOutcome,
    StreamParser,
    SweepDefaults,
    artifact_kind,
    register,
)

__all__ = [
    "ArtifactKind",
    "ArtifactOutcome",
    "StreamParser",
    "SweepDefaults",
    "artifact_kind",
    "register",
]
