"""What a sweep cell produces. Each artifact kind supplies its system prompt per version and
its sweep defaults; the kinds that parse their output (drawings, sculptures) add a parser and
metrics on top of this interface."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from sweepbench.errors import UserError


@dataclass(frozen=True)
class SweepDefaults:
    """A kind's defaults for the sweep controls (spec sweeps.md §3.2)."""

    axis: str = "effort"
    max_variants: int = 6
    held_max_tokens: int = 4000
    budget_chips: tuple[int, ...] = (1000, 2000, 4000, 8000, 16000)
    prompt_cap: int = 4000
    """Longest prompt accepted, in characters."""


@dataclass(frozen=True)
class ArtifactKind:
    """A kind of thing a cell produces."""

    name: str
    label: str
    prompts: Mapping[str, str | None]
    """System prompt per prompt version (None: no system prompt)."""
    default_version: str = "v1"
    defaults: SweepDefaults = field(default_factory=SweepDefaults)
    response_schema: dict[str, Any] | None = None
    """A JSON schema for structured output, when the kind has one."""

    @property
    def versions(self) -> list[str]:
        """Prompt versions in version order."""
        return sorted(self.prompts, key=_version_key)

    def system_prompt(self, version: str | None) -> str | None:
        """The system prompt of a version (the default version when None)."""
        key = version or self.default_version
        if key not in self.prompts:
            raise UserError(
                f"{self.name} has no prompt version {key!r}; versions: {', '.join(self.versions)}"
            )
        return self.prompts[key]

    def metrics(self, text: str) -> dict[str, float]:
        """Numbers that describe an answer; the text kind counts words and lines."""
        return {"words": float(len(text.split())), "lines": float(text.count("\n") + bool(text))}


def _version_key(version: str) -> tuple[int, str]:
    digits = "".join(ch for ch in version if ch.isdigit())
    return (int(digits) if digits else 0, version)


_KINDS: dict[str, ArtifactKind] = {}


def register(kind: ArtifactKind) -> ArtifactKind:
    """Make a kind available to sweeps by name."""
    _KINDS[kind.name] = kind
    return kind


def artifact_kind(name: str) -> ArtifactKind:
    """The kind registered under ``name``; unknown names are a UserError listing the known."""
    from sweepbench.artifacts import text  # noqa: F401  (registers the built-in kinds)

    try:
        return _KINDS[name]
    except KeyError:
        raise UserError(f"unknown task {name!r}; tasks: {', '.join(sorted(_KINDS))}") from None
