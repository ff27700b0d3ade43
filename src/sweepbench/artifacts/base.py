"""What a sweep cell produces. Each artifact kind supplies its system prompt per version and
its sweep defaults; the kinds that parse their output (drawings, sculptures) add a parser and
metrics on top of this interface."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

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


Viewer = Literal["text", "canvas", "model"]
"""How a cell shows its artifact on the Sweep page: the text, an Excalidraw canvas, a 3D
model viewer (a GLB)."""


@dataclass(frozen=True)
class PageFacts:
    """What the Sweep page and the sweep's words say about a kind (issue 28 §3): a kind
    registered with :func:`sweepbench.artifacts.register` brings its own, or these (a text
    kind's), and the page offers it without knowing its name."""

    working: str = "writing…"
    """The badge of a cell while it streams."""
    verb: str = "Writing"
    """The status line while the sweep runs ("Writing… 1/2 variants finished")."""
    kept: str = "What was written is kept"
    """Said of a stopped or cut-off cell."""
    nouns: tuple[str, str] | None = None
    """The parser's items, singular and plural ("element", "elements"), for live counts;
    None: the kind has no items to count."""
    viewer: Viewer = "text"
    demo_model: str = "scripted/lorem"
    """The scripted model that answers in this kind (the keyless demo)."""
    keyless_budget: int = 256
    """The held budget with no provider key: the local model finishes in well under a minute."""
    small_budgets: tuple[int, ...] = (16, 64, 256)
    """Budgets small enough to cut an answer off (the max-tokens cliff), offered for free
    models."""
    models: tuple[str, ...] = ("anthropic/claude-opus-5", "openai/gpt-6-astra")
    """The models the page proposes to compare with a key."""
    budgets: tuple[int, ...] = (1000, 4000)
    """The budgets the page proposes to compare."""
    step: int = 1000
    """The budget box's step."""
    prompt: str = ""
    """A prefilled prompt (empty: the field starts empty, showing :attr:`placeholder`)."""
    placeholder: str = "Explain the difference between a mutex and a semaphore in three sentences."


@dataclass
class ArtifactOutcome:
    """What a cell's answer became (spec artifacts.md §1): never raises, failures are data."""

    ok: bool
    """True only if the artifact is complete and valid."""
    partial: bool = False
    """Content survived a truncation, an error or a Stop."""
    reason: str = ""
    """Why not ok, in words (empty when ok). A cut-off answer says ``stop=max_tokens: …``,
    never "invalid JSON"."""
    notes: list[str] = field(default_factory=list)
    """Every coercion, clamp, drop or rename applied."""
    artifact: dict[str, Any] = field(default_factory=dict)
    """The JSON-serialisable artifact (an Excalidraw scene, a sculpture manifest, or text)."""
    files: dict[str, bytes] = field(default_factory=dict)
    """Binary renderings by extension, e.g. ``{"glb": ..., "svg": ...}``."""
    metrics: dict[str, Any] = field(default_factory=dict)
    """Numbers computed from the artifact itself (counts, triangles, palette, blend…)."""


class StreamParser(Protocol):
    """Fed with text deltas as they arrive; returns the items completed by each delta
    (drawing elements, sculpture parts) so viewers can grow while the model writes."""

    def feed(self, text: str) -> list[dict[str, Any]]:
        """Consume a delta of any size (down to one character)."""
        ...


@dataclass(frozen=True)
class ArtifactKind:
    """A kind of thing a cell produces."""

    name: str
    label: str
    prompts: Mapping[str, str | None]
    """System prompt per prompt version (None: no system prompt)."""
    default_version: str = "v1"
    defaults: SweepDefaults = field(default_factory=SweepDefaults)
    page: PageFacts = field(default_factory=PageFacts)
    """What the Sweep page shows and says for this kind."""
    response_schema: dict[str, Any] | None = None
    """A JSON schema for structured output, when the kind has one."""
    schemas: Mapping[str, dict[str, Any]] = field(default_factory=dict)
    """Per prompt version, when versions need different schemas (sculpture v1 / v2)."""
    schema_providers: tuple[str, ...] | None = None
    """Providers the schema is sent to (None: all). Drawings go free to remote models (the
    parser tolerates prose) but need the grammar on the tiny local model."""
    suffix: str = ".txt"
    """The file suffix of the artifact when a sweep is exported (``.excalidraw``, …)."""
    item_noun: str = ""
    """What the parser's items are called ("elements", "parts"), for live counts."""
    parser: Callable[[], StreamParser] | None = None
    """A fresh incremental parser per call, for kinds whose viewers grow while streaming."""
    stamp: Callable[..., dict[str, Any]] | None = None
    """``stamp(artifact, prompt=, model=, usd=, generated=)``: the artifact with where it came
    from written into it, for kinds whose file format has a place for that (sculptures)."""
    build: Callable[[str, str, str], ArtifactOutcome] | None = None
    """``build(text, stop_reason, prompt_version)``: the final artifact from the whole answer."""

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

    def schema(self, version: str | None, provider: str | None = None) -> dict[str, Any] | None:
        """The structured-output schema for a prompt version and provider (None: free text)."""
        limited = provider is not None and self.schema_providers is not None
        if limited and provider not in (self.schema_providers or ()):
            return None
        return self.schemas.get(version or self.default_version, self.response_schema)

    def outcome(self, text: str, stop_reason: str, version: str | None) -> ArtifactOutcome:
        """The final artifact of an answer; the text kind keeps the text and counts it."""
        if self.build is not None:
            return self.build(text, stop_reason, version or self.default_version)
        ok = stop_reason == "end" and bool(text.strip())  # the text kind
        reason = "" if ok else _stop_words(stop_reason, text)
        return ArtifactOutcome(
            ok=ok,
            partial=not ok and bool(text),
            reason=reason,
            artifact={"text": text},
            metrics={"words": len(text.split()), "lines": text.count("\n") + bool(text)},
        )


def _stop_words(stop_reason: str, text: str) -> str:
    if stop_reason == "end":
        return "the model returned nothing"
    if stop_reason == "max_tokens":
        return "stop=max_tokens: the budget ran out"
    if stop_reason == "cancelled":
        return "stopped"
    return f"stop={stop_reason}"


def _version_key(version: str) -> tuple[int, str]:
    digits = "".join(ch for ch in version if ch.isdigit())
    return (int(digits) if digits else 0, version)
